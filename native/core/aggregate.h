// Aggregation of ranks into everything the base metrics need, in one fused pass over memory: compensated sums of
// w r, w / r, w log r (unweighted: through exact mantissa/exponent products, no log per rank), hit counts for the
// requested k, the centred sum of squares (per-chunk mean, chunks merged with Chan's formula), and, when asked,
// exact medians and MADs (unweighted: radix selection on the values' top bits, from a histogram the same pass builds;
// weighted: sorting).
// Determinism: the input is cut into fixed chunks of kAggregateChunk ranks whatever the thread count, and chunk
// results are merged in chunk order: the same input gives the same bits on 1 or 64 threads (and, unweighted, at every
// SIMD level).
#pragma once
#include <cstddef>

#include "simd.h"

namespace kgrank {

constexpr size_t kAggregateChunk = size_t{1} << 13;

// Layout of the output of aggregate_ranks(). Mirrored by src/contract/kernels.ts AGGREGATE_SLOTS (test/enums.test.ts
// compares the two).
enum AggregateSlot : size_t {
  kSumWeights = 0,           // sum w_i (n when unweighted)
  kSumRanks = 1,             // sum w_i r_i
  kSumLogRanks = 2,          // sum w_i log r_i
  kSumInverseRanks = 3,      // sum w_i / r_i
  kSumSquaredDev = 4,        // sum (r_i - mean)^2, unweighted (0 unless requested)
  kMedian = 5,               // (weighted) median (NaN unless requested)
  kMad = 6,                  // scaled median absolute deviation (NaN unless requested)
  kInvalidRanks = 7,         // number of ranks that are not finite or < 1 (then medians are not computed)
  kAggregateFixedSlots = 8,  // followed by the hit slots, sum of w_i [r_i <= k_j] for each requested k_j, then the
                             // truncated slots, sum of w_i / r_i [r_i <= t_j] (MRR@k's truncated reciprocal sum) for
                             // each AggregateRequest::truncated_ks t_j: out[kAggregateFixedSlots + num_k + j]
};

struct AggregateRequest {
  bool variance = false;
  bool median = false;
  bool mad = false;
  SimdLevel simd = SimdLevel::Scalar;  // kernels of the unweighted pass (simd.h dispatch; unsupported -> scalar)
  // Cut-offs of MRR@k (positive), one truncated slot each after the hit slots; null/0: none.
  const double* truncated_ks = nullptr;
  size_t num_truncated = 0;
};

// weights may be null (all 1). out must hold kAggregateFixedSlots + num_k + request.num_truncated doubles.
void aggregate_ranks(const double* ranks, const double* weights, size_t n, const double* ks, size_t num_k,
                     const AggregateRequest& request, double* out, unsigned threads);

// Conventional median: for an even count, the mean of the two middle values. With weights: the smallest value
// whose cumulative weight reaches half the total, averaged with the next value when the cumulative weight equals
// half exactly (so equal weights give the unweighted median). n >= 1.
double median(const double* values, const double* weights, size_t n);

// Median absolute deviation scaled to estimate the standard deviation of a normal distribution:
// median(|r - median(r)|) / Phi^-1(3/4), the same constant with and without weights.
double median_absolute_deviation(const double* values, const double* weights, size_t n);

constexpr double kNormalQuartile = 0.6744897501960817;  // Phi^-1(3/4)

}  // namespace kgrank
