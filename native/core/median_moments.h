// E and Var of the conventional median rank (numpy/PyKEEN MedianRank: the mean of the two middle order statistics
// for even n) when every rank r_i ~ Uniform{1..N_i} independently. TypeScript twin: src/fallback/median-moments.ts
// (same algorithm, same constants, same order of operations). Method, error bound and measurements: the header of
// median_moments.cpp.
#pragma once
#include <cstddef>

namespace kgrank {

struct MedianMomentsResult {
  double expectation;
  double variance;
};

// num_candidates: count >= 1 validated integers >= 1 (any order). Deterministic and single-threaded.
MedianMomentsResult median_moments(const double* num_candidates, size_t count);

}  // namespace kgrank
