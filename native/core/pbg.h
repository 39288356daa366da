// PyTorch-BigGraph's scores (docs/source/scoring.rst of facebookresearch/PyTorch-BigGraph) in float64: the twin of
// src/fallback/pbg.ts, bit for bit. f_r(x, y) = c(adjust(x), adjust_r(y)); adjust(v) = prepare(op(v + g)): the
// type's global embedding g added, the relation's operator applied, then the comparator's preparation (cos: divided
// by its norm). With bias the first coordinate is left out of the preparation and the comparison, and both sides'
// first coordinates are added after it. Every (row, coordinate) value and every (query, candidate) score is one fixed
// sequence of IEEE double operations (a multiply, then an add: the core is built with -ffp-contract=off), the
// sequence the fallback's loops run, so equal rows score equal wherever they sit and the backends agree exactly.
#pragma once
#include <cstddef>
#include <cstdint>

#include "simd.h"
#include "status.h"

namespace kgrank {

// PBG's comparators: dot and cos compare by a . b (cos on rows its preparation made unit), l2 by
// -sqrt(max(||a - b||^2, 1e-30)), squared_l2 by -||a - b||^2.
enum class PbgComparator : int { Dot = 0, Cos = 1, L2 = 2, SquaredL2 = 3 };

// PBG's operators on a row v (width d; h = d / 2): none v; translation v + t; diagonal s * v (elementwise);
// linear M v; affine M v + t; complex_diagonal (re, im) = (v[:h] * a - v[h:2h] * b, v[:h] * b + v[h:2h] * a), with
// a = real, b = imag (an odd width's last coordinate is 0).
enum class PbgOperator : int { None = 0, Translation = 1, Diagonal = 2, Linear = 3, Affine = 4, ComplexDiagonal = 5 };

// The comparator's settings, shared by both calls.
struct PbgComparison {
  PbgComparator comparator = PbgComparator::Dot;
  bool bias = false;  // coordinate 0 is a bias: left out of the comparison, added after it
  size_t dimension = 0;
};

// pbg_adjust's input: `count` rows of width dimension (float or double), row-major.
struct PbgAdjustJob {
  PbgComparison comparison;
  PbgOperator op = PbgOperator::None;
  size_t count = 0;
  const float* rows_f32 = nullptr;  // one of the two
  const double* rows_f64 = nullptr;
  const double* global = nullptr;       // dimension values, or null (no global embedding)
  const double* translation = nullptr;  // translation, affine: dimension values
  const double* diagonal = nullptr;     // diagonal: dimension values
  const double* linear = nullptr;  // linear, affine: dimension x dimension, row-major (out[r] = sum_k M[r][k] v[k])
  const double* real = nullptr;    // complex_diagonal: dimension / 2 values each
  const double* imag = nullptr;
};

// adjust() of every row into out (count x dimension). The caller checks the lengths.
Status pbg_adjust(const PbgAdjustJob& job, double* out, unsigned threads);

// pbg_compare's input: each of `num_queries` adjusted query rows against each of `num_candidates` adjusted candidate
// rows; query j's score of candidate c goes to out[j * out_stride + out_offset + c]. query_first: the query is the
// comparator's first argument (its bias added first, as for a standard relation's tail task); otherwise each
// candidate is.
struct PbgCompareJob {
  PbgComparison comparison;
  const double* queries = nullptr;
  size_t num_queries = 0;
  const double* candidates = nullptr;     // adjusted candidate rows; or
  const float* candidates_f32 = nullptr;  // rows no adjustment changes (operator none, no global embedding, not cos),
                                          // as stored: each value converted to double exactly, as adjust would
  size_t num_candidates = 0;
  bool query_first = true;
  size_t out_stride = 0;
  size_t out_offset = 0;
};

// Scores of every (query, candidate) pair, candidates in the vector lanes (panels of the level's width, transposed
// once per call and kept in L1 over every query). The caller checks the lengths.
Status pbg_compare(const PbgCompareJob& job, double* out, SimdLevel simd, unsigned threads);

namespace isa {
// One panel of candidates (lane-major: value k of lane l at panel[(k - from) * W + l], W the kernel's width) against
// rows [0, num_queries) of the queries; lanes at and past `lanes` are not written.
using PbgPanelFn = void (*)(const PbgCompareJob& job, const double* panel, const double* bias, size_t first,
                            size_t lanes, double* out);
void pbg_panel_scalar(const PbgCompareJob& job, const double* panel, const double* bias, size_t first, size_t lanes,
                      double* out);
#ifdef KGRANK_HAVE_AVX2
void pbg_panel_avx2(const PbgCompareJob& job, const double* panel, const double* bias, size_t first, size_t lanes,
                    double* out);
#endif
#ifdef KGRANK_HAVE_AVX512
void pbg_panel_avx512(const PbgCompareJob& job, const double* panel, const double* bias, size_t first, size_t lanes,
                      double* out);
#endif
}  // namespace isa

// The lanes of each level's panel (a multiple of the level's vector width of doubles, four accumulators deep).
constexpr size_t kPbgLanesScalar = 8;
constexpr size_t kPbgLanesAvx2 = 16;
constexpr size_t kPbgLanesAvx512 = 32;

}  // namespace kgrank
