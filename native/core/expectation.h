// Closed-form expectation and variance of base metrics when every rank r_i ~ Uniform{1..N_i} independently.
// Weights are scaling factors: E = sum w_i E_i / W, Var = sum w_i^2 V_i / W^2 (W = sum w_i); for the geometric
// mean the exponents are w_i / W. Every function first groups the tasks by distinct N_i (a histogram), so the
// closed forms cost O(number of distinct N_i) (plus, for the geometric mean, one sweep up to max N_i).
#pragma once
#include <cstddef>
#include <new>
#include <utility>
#include <vector>

namespace kgrank {

// std::allocator that leaves elements default-initialised (no zero fill) on resize(): a large result is first touched
// where its parts are written, in parallel, instead of in a serial memset (what fresh pages cost: BENCHMARKS.md, "Notes
// moved from the kernel sources", expectation.h UninitialisedAllocator).
template <typename T>
struct UninitialisedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitialisedAllocator<U>;
  };
  UninitialisedAllocator() = default;
  template <typename U>
  UninitialisedAllocator(const UninitialisedAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

using HistogramColumn = std::vector<double, UninitialisedAllocator<double>>;

// Tasks grouped by distinct number of candidates, sorted by n. w1 = sum of weights (counts when unweighted),
// w2 = sum of squared weights (left empty when there are no weights: then it equals w1).
struct CandidateHistogram {
  HistogramColumn n, w1, w2;
  double total_weight = 0.0;
};

// threads: parallelism of the dense (unweighted) counting (0 = hardware threads); the result does not depend on it.
CandidateHistogram candidate_histogram(const double* num_candidates, const double* weights, size_t count,
                                       unsigned threads = 0);

struct Moments {
  double expectation;
  double variance;
};

// Mirrored by src/contract/kernels.ts ClosedMetricCode (test/enums.test.ts compares the two).
enum class ClosedMetric : int {
  ArithmeticMean = 0,       // MR
  InverseHarmonicMean = 1,  // MRR = mean of 1/r
  Hits = 2,                 // Hits@k
  GeometricMean = 3,        // GMR
  TruncatedInverse = 4,     // MRR@k: the mean of 1/r for r <= k, else 0
};
// The number of codes: what a binding checks a code against (0 .. kClosedMetricCount - 1), so a new code needs no
// second edit there.
constexpr int kClosedMetricCount = 5;

// [E, Var] of a closed form from a histogram: sorted distinct n with weight sums w1 and squared-weight sums w2
// (unweighted: w2 = w1 = multiplicities), total weight, task count. For the geometric mean the histogram must be
// unweighted (exponent 1/count): G = exp(sum_i a_i log r_i), E[G] = prod_i E[r_i^a_i],
// Var[G] = E[G]^2 * expm1(sum_i log1p(Var[r_i^a_i] / E[r_i^a_i]^2)), each moment of r^a from the centred power sums
// (power_sums.h), so no difference of nearly equal products is ever formed. Parallel over fixed blocks of bins
// merged in block order, so the result does not depend on the thread count.
Moments histogram_moments(ClosedMetric metric, const double* n, const double* w1, const double* w2, size_t bins,
                          double total_weight, double count, double k, unsigned threads);

// The same from the tasks: their histogram, then histogram_moments; the weighted geometric mean (exponents
// a_i = w_i / W) groups the tasks by (a, n) and runs the same per-exponent routine once per distinct exponent.
Moments closed_moments(ClosedMetric metric, const double* num_candidates, const double* weights, size_t count, double k,
                       unsigned threads = 0);

}  // namespace kgrank
