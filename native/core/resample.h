// Paired resampling of two runs over the same n tasks: the replicates of compare's randomization test and paired
// bootstrap (src/compare/paired.ts), as sums of per-task columns and the two runs' medians per replicate.
// Twin: src/fallback/resample.ts (the same draws, the same sums in the same order: bit-identical).
//
// Replicate s uses the stream stream_key(key, s) (sampling.h):
//  - randomization: task i swaps its two ranks when its uniform is below 1/2; column c sums x[c][i] over the swapped
//    tasks (the caller passes each task's change when swapped, e.g. b_i - a_i, and adds the unswapped total);
//  - bootstrap: n tasks drawn with replacement, task floor(u_i * n) for the uniforms u_i of indices 0..n-1; column c
//    sums x[c][i] times the number of times task i was drawn.
// Each sum runs in kResampleLanes (32) interleaved lanes (task i into lane i mod 32, in task order), then the lanes
// are folded in halves: lane j += lane j + 16 for j < 16, then j + 8, 4, 2, 1. A fixed order that every ISA keeps
// (sampling.h masked_lane_sums_body, weighted_lane_sums_body) and the twin repeats.
// Medians, when asked for, of the replicate's two rank vectors - randomization: run a's ranks with the swapped tasks'
// taken from b, and the other way round; bootstrap: both runs' ranks of the drawn tasks - each lo + (hi - lo) / 2 of
// its two middle values (one value when n is odd), as the aggregate kernel computes a median. The randomization
// counts them by value (index_a / index_b: each task's rank as an index into `values`, the runs' distinct ranks
// ascending), the bootstrap walks each run's tasks in rank order (order_*: task ids by ascending rank, sorted_*:
// those ranks) adding up the draw counts.
#pragma once
#include <cstddef>
#include <cstdint>

#include "simd.h"
#include "thread_pool.h"

namespace kgrank {

struct PairedColumns {
  size_t n = 0;                       // tasks, 1 to 2^31 - 1
  size_t cols = 0;                    // summed columns (0 allowed)
  const double* x = nullptr;          // cols x n
  bool medians = false;               // with the arrays below
  const uint32_t* index_a = nullptr;  // n; randomization
  const uint32_t* index_b = nullptr;  // n
  const double* values = nullptr;     // num_values distinct ranks, ascending
  size_t num_values = 0;
  const uint32_t* order_a = nullptr;  // n; bootstrap
  const uint32_t* order_b = nullptr;  // n
  const double* sorted_a = nullptr;   // n
  const double* sorted_b = nullptr;   // n
  // Standard deviations of a median's position on each side of the middle that the medians' windows span; a
  // replicate whose median falls outside counts in full (the same result; tests shrink it to exercise that path).
  double window = 8.0;
};

// Mirrored by src/contract/kernels.ts ResamplingKind (test/enums.test.ts compares the two).
enum class Resampling : int { Randomization = 0, Bootstrap = 1 };

// Values per replicate in `out`: the column sums, then the two medians when index_a is given.
inline size_t paired_width(const PairedColumns& c) { return c.cols + (c.medians ? 2 : 0); }

// Replicates first .. first + count - 1 into out (count x paired_width). Replicates run in parallel on `threads`
// threads, each sequentially, so the result does not depend on the thread count or the SIMD level. Stops with
// Cancelled (thread_pool.h) when `control` is cancelled; advances it by one per replicate.
void paired_resample(Resampling kind, const PairedColumns& columns, uint32_t key, uint32_t first, size_t count,
                     double* out, unsigned threads, SimdLevel simd, JobControl* control = nullptr);

}  // namespace kgrank
