// The panel kernel of pbg_compare (pbg.h), one body for every level: W = N x U candidates side by side (U vectors of
// the level's N doubles), one lane each, each lane running the operations the fallback's loop runs for its pair
// (src/fallback/pbg.ts pbgCompare), in its order: a multiply, then an add, from coordinate `from` up. `Ops` is the
// level's vector of doubles (pbg_{avx2,avx512}.cpp: intrinsics; here: one double, for the scalar level and NEON);
// its add, sub and mul are lane-wise IEEE operations, never fused (-ffp-contract=off), so each lane rounds as the
// fallback's scalar code does. The square root, the sign and the bias are applied lane by lane after the sums.
#pragma once
#include <cmath>
#include <cstddef>

#include "pbg.h"

namespace kgrank {
namespace pbg_detail {

struct ScalarOps {
  using V = double;
  static constexpr size_t N = 1;
  static V zero() { return 0.0; }
  static V set1(double x) { return x; }
  static V load(const double* p) { return *p; }
  static void store(double* p, V v) { *p = v; }
  static V add(V a, V b) { return a + b; }
  static V sub(V a, V b) { return a - b; }
  static V mul(V a, V b) { return a * b; }
};

// The finish of one query's W lane sums: l2's root, the sign, the biases, written to its row of out.
inline void finish(const PbgCompareJob& job, const double* q, double* sums, const double* cand_bias, size_t first,
                   size_t lanes, double* o) {
  const PbgComparison& s = job.comparison;
  if (s.comparator == PbgComparator::L2) {
    // -sqrt(max(sum, 1e-30)), with JavaScript's Math.max: a NaN stays NaN.
    for (size_t l = 0; l < lanes; ++l) {
      const double a = sums[l];
      sums[l] = -std::sqrt(a > 1e-30 || a != a ? a : 1e-30);
    }
  } else if (s.comparator == PbgComparator::SquaredL2) {
    for (size_t l = 0; l < lanes; ++l) sums[l] = -sums[l];
  }
  if (s.bias) {
    const double q0 = q[0];
    if (job.query_first) {
      for (size_t l = 0; l < lanes; ++l) sums[l] = (sums[l] + q0) + cand_bias[l];
    } else {
      for (size_t l = 0; l < lanes; ++l) sums[l] = (sums[l] + cand_bias[l]) + q0;
    }
  }
  o += first;
  for (size_t l = 0; l < lanes; ++l) o[l] = sums[l];
}

// Q queries (rows j .. j + Q - 1) against the panel: Q x U independent accumulators, so that the adds' latency is
// hidden (each accumulator is one lane group's running sum in coordinate order, as the fallback adds).
template <class Ops, size_t U, size_t Q>
inline void queries(const PbgCompareJob& job, size_t j, const double* p, const double* cand_bias, size_t first,
                    size_t lanes, double* out) {
  using V = typename Ops::V;
  constexpr size_t N = Ops::N;
  constexpr size_t W = N * U;
  const PbgComparison& s = job.comparison;
  const size_t d = s.dimension;
  const size_t from = s.bias ? 1 : 0;
  const size_t width = d - from;
  const double* q = job.queries + j * d;
  V acc[Q][U];
  for (size_t i = 0; i < Q; ++i)
    for (size_t u = 0; u < U; ++u) acc[i][u] = Ops::zero();
  if (s.comparator == PbgComparator::Dot || s.comparator == PbgComparator::Cos) {
    for (size_t k = 0; k < width; ++k) {
      const double* c = p + k * W;
      for (size_t i = 0; i < Q; ++i) {
        const V x = Ops::set1(q[i * d + from + k]);
        for (size_t u = 0; u < U; ++u) acc[i][u] = Ops::add(acc[i][u], Ops::mul(x, Ops::load(c + u * N)));
      }
    }
  } else {
    for (size_t k = 0; k < width; ++k) {
      const double* c = p + k * W;
      for (size_t i = 0; i < Q; ++i) {
        const V x = Ops::set1(q[i * d + from + k]);
        for (size_t u = 0; u < U; ++u) {
          const V e = Ops::sub(x, Ops::load(c + u * N));
          acc[i][u] = Ops::add(acc[i][u], Ops::mul(e, e));
        }
      }
    }
  }
  for (size_t i = 0; i < Q; ++i) {
    double sums[W];
    for (size_t u = 0; u < U; ++u) Ops::store(sums + u * N, acc[i][u]);
    finish(job, q + i * d, sums, cand_bias, first, lanes, out + (j + i) * job.out_stride + job.out_offset);
  }
}

template <class Ops, size_t U>
inline void panel(const PbgCompareJob& job, const double* p, const double* cand_bias, size_t first, size_t lanes,
                  double* out) {
  size_t j = 0;
  for (; j + 2 <= job.num_queries; j += 2) queries<Ops, U, 2>(job, j, p, cand_bias, first, lanes, out);
  if (j < job.num_queries) queries<Ops, U, 1>(job, j, p, cand_bias, first, lanes, out);
}

}  // namespace pbg_detail
}  // namespace kgrank
