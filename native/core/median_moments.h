// E and Var of the conventional median rank (numpy/PyKEEN MedianRank: the mean of the two middle order statistics
// for even n) when every rank r_i ~ Uniform{1..N_i} independently. TypeScript twin: src/fallback/median-moments.ts
// (same algorithm, same constants, same order of operations). Method and error bound: the header of
// median_moments.cpp; times: BENCHMARKS.md, "Notes moved from the kernel sources", median_moments.cpp.
#pragma once
#include <cstddef>

namespace kgrank {

struct MedianMomentsResult {
  double expectation;
  double variance;
  // Cost: how many times the generating function was evaluated (for tests: bounded independently of max N).
  double evaluations = 0;
};

// num_candidates: count >= 1 validated integers >= 1 (any order). Deterministic and single-threaded.
// want_variance false skips the joint law of the two middle order statistics (even n), the costly part: the
// variance is then NaN (for odd n it costs nothing more and is computed anyway).
MedianMomentsResult median_moments(const double* num_candidates, size_t count, bool want_variance = true);

}  // namespace kgrank
