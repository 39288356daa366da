// PyTorch-BigGraph's scores (pbg.h): the adjustments of rows and the comparisons of adjusted rows, in float64, each
// value the fallback's (src/fallback/pbg.ts) bit for bit.
#include "pbg.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "pbg_kernel.h"
#include "thread_pool.h"

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define KGRANK_PBG_SSE2 1
#elif defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#define KGRANK_PBG_NEON 1
#endif

namespace kgrank {
namespace {

// The scalar level's vectors: the baseline ISA's two doubles (SSE2 on x86-64, NEON on AArch64), else one double.
#if defined(KGRANK_PBG_SSE2)
struct BaselineOps {
  using V = __m128d;
  static constexpr size_t N = 2;
  static V zero() { return _mm_setzero_pd(); }
  static V set1(double x) { return _mm_set1_pd(x); }
  static V load(const double* p) { return _mm_loadu_pd(p); }
  static void store(double* p, V v) { _mm_storeu_pd(p, v); }
  static V add(V a, V b) { return _mm_add_pd(a, b); }
  static V sub(V a, V b) { return _mm_sub_pd(a, b); }
  static V mul(V a, V b) { return _mm_mul_pd(a, b); }
};
#elif defined(KGRANK_PBG_NEON)
struct BaselineOps {
  using V = float64x2_t;
  static constexpr size_t N = 2;
  static V zero() { return vdupq_n_f64(0.0); }
  static V set1(double x) { return vdupq_n_f64(x); }
  static V load(const double* p) { return vld1q_f64(p); }
  static void store(double* p, V v) { vst1q_f64(p, v); }
  static V add(V a, V b) { return vaddq_f64(a, b); }
  static V sub(V a, V b) { return vsubq_f64(a, b); }
  static V mul(V a, V b) { return vmulq_f64(a, b); }
};
#else
using BaselineOps = pbg_detail::ScalarOps;
#endif
static_assert(kPbgLanesScalar % BaselineOps::N == 0, "the scalar level's panel width");

}  // namespace

namespace isa {

void pbg_panel_scalar(const PbgCompareJob& job, const double* panel, const double* bias, size_t first, size_t lanes,
                      double* out) {
  pbg_detail::panel<BaselineOps, kPbgLanesScalar / BaselineOps::N>(job, panel, bias, first, lanes, out);
}

}  // namespace isa

namespace {

constexpr size_t kAdjustRows = 256;   // rows per task of pbg_adjust
constexpr size_t kCompareRows = 512;  // candidates per task of pbg_compare (a multiple of every panel width)

template <class T>
void adjust_rows(const PbgAdjustJob& job, const T* rows, const std::vector<double>& transposed, size_t begin,
                 size_t end, double* out) {
  const size_t d = job.comparison.dimension;
  const size_t h = d / 2;
  std::vector<double> v(d), acc(d);
  for (size_t i = begin; i < end; ++i) {
    const T* row = rows + i * d;
    double* o = out + i * d;
    for (size_t k = 0; k < d; ++k) v[k] = job.global ? static_cast<double>(row[k]) + job.global[k] : row[k];
    switch (job.op) {
      case PbgOperator::None:
        for (size_t k = 0; k < d; ++k) o[k] = v[k];
        break;
      case PbgOperator::Translation:
        for (size_t k = 0; k < d; ++k) o[k] = v[k] + job.translation[k];
        break;
      case PbgOperator::Diagonal:
        for (size_t k = 0; k < d; ++k) o[k] = job.diagonal[k] * v[k];
        break;
      case PbgOperator::Linear:
      case PbgOperator::Affine:
        // out[r] = sum over k ascending of M[r][k] v[k]: the rows of M side by side (M transposed), each r's sum in
        // the fallback's order.
        std::fill(acc.begin(), acc.end(), 0.0);
        for (size_t k = 0; k < d; ++k) {
          const double x = v[k];
          const double* m = transposed.data() + k * d;
          for (size_t r = 0; r < d; ++r) acc[r] = acc[r] + m[r] * x;
        }
        if (job.op == PbgOperator::Affine) {
          for (size_t r = 0; r < d; ++r) o[r] = acc[r] + job.translation[r];
        } else {
          for (size_t r = 0; r < d; ++r) o[r] = acc[r];
        }
        break;
      case PbgOperator::ComplexDiagonal:
        for (size_t k = 0; k < h; ++k) {
          const double re = v[k], im = v[k + h];
          o[k] = re * job.real[k] - im * job.imag[k];
          o[k + h] = re * job.imag[k] + im * job.real[k];
        }
        if (d % 2 == 1) o[d - 1] = 0;
        break;
    }
    if (job.comparison.comparator == PbgComparator::Cos) {
      const size_t from = job.comparison.bias ? 1 : 0;
      double sq = 0;
      for (size_t k = from; k < d; ++k) sq = sq + o[k] * o[k];
      const double inv = 1 / std::sqrt(sq);
      for (size_t k = from; k < d; ++k) o[k] = o[k] * inv;
    }
  }
}

}  // namespace

Status pbg_adjust(const PbgAdjustJob& job, double* out, unsigned threads) {
  const size_t d = job.comparison.dimension;
  if (d == 0) return Status::invalid("pbg_adjust needs a positive dimension");
  if (job.count == 0) return Status::success();
  if ((job.rows_f32 == nullptr) == (job.rows_f64 == nullptr)) return Status::invalid("pbg_adjust needs one row array");
  const bool linear = job.op == PbgOperator::Linear || job.op == PbgOperator::Affine;
  if ((linear && job.linear == nullptr) ||
      ((job.op == PbgOperator::Translation || job.op == PbgOperator::Affine) && job.translation == nullptr) ||
      (job.op == PbgOperator::Diagonal && job.diagonal == nullptr) ||
      (job.op == PbgOperator::ComplexDiagonal && d >= 2 && (job.real == nullptr || job.imag == nullptr)))
    return Status::invalid("pbg_adjust: the operator's parameters are missing");
  std::vector<double> transposed;
  if (linear) {
    transposed.resize(d * d);
    for (size_t r = 0; r < d; ++r)
      for (size_t k = 0; k < d; ++k) transposed[k * d + r] = job.linear[r * d + k];
  }
  const size_t tasks = (job.count + kAdjustRows - 1) / kAdjustRows;
  parallel_for(tasks, threads, [&](size_t t) {
    const size_t begin = t * kAdjustRows, end = std::min(job.count, begin + kAdjustRows);
    if (job.rows_f32 != nullptr) {
      adjust_rows(job, job.rows_f32, transposed, begin, end, out);
    } else {
      adjust_rows(job, job.rows_f64, transposed, begin, end, out);
    }
  });
  return Status::success();
}

Status pbg_compare(const PbgCompareJob& job, double* out, SimdLevel simd, unsigned threads) {
  const PbgComparison& s = job.comparison;
  const size_t d = s.dimension;
  if (d == 0) return Status::invalid("pbg_compare needs a positive dimension");
  if (job.num_queries == 0 || job.num_candidates == 0) return Status::success();
  if ((job.candidates == nullptr) == (job.candidates_f32 == nullptr))
    return Status::invalid("pbg_compare needs one candidate array");
  isa::PbgPanelFn kernel = isa::pbg_panel_scalar;
  size_t w = kPbgLanesScalar;
#ifdef KGRANK_HAVE_AVX512
  if (simd == SimdLevel::AVX512 && simd_supported(simd)) kernel = isa::pbg_panel_avx512, w = kPbgLanesAvx512;
#endif
#ifdef KGRANK_HAVE_AVX2
  if (simd == SimdLevel::AVX2 && simd_supported(simd)) kernel = isa::pbg_panel_avx2, w = kPbgLanesAvx2;
#endif
  const size_t from = s.bias ? 1 : 0;
  const size_t width = d - from;
  const size_t tasks = (job.num_candidates + kCompareRows - 1) / kCompareRows;
  parallel_for(tasks, threads, [&](size_t t) {
    std::vector<double> panel(std::max<size_t>(width, 1) * w), bias(w);
    const size_t begin = t * kCompareRows, end = std::min(job.num_candidates, begin + kCompareRows);
    for (size_t first = begin; first < end; first += w) {
      const size_t lanes = std::min(w, end - first);
      // Lane-major: value k of candidate first + l at panel[k * w + l]; lanes past the last candidate are 0.
      std::fill(panel.begin(), panel.end(), 0.0);
      std::fill(bias.begin(), bias.end(), 0.0);
      const auto transpose = [&](const auto* rows) {
        for (size_t l = 0; l < lanes; ++l) {
          const auto* c = rows + (first + l) * d;
          bias[l] = c[0];
          for (size_t k = 0; k < width; ++k) panel[k * w + l] = c[from + k];
        }
      };
      if (job.candidates_f32 != nullptr) {
        transpose(job.candidates_f32);
      } else {
        transpose(job.candidates);
      }
      kernel(job, panel.data(), bias.data(), first, lanes, out);
    }
  });
  return Status::success();
}

}  // namespace kgrank
