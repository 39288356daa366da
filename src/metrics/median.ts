/**
 * Expectation and variance of the median rank when every rank r_i ~ Uniform{1..N_i} independently (N_i may
 * differ). The median is the conventional one (numpy, PyKEEN MedianRank): r_(k) with k = (n+1)/2 for odd n,
 * (r_(k) + r_(k+1))/2 with k = n/2 for even n (r_(1) <= ... <= r_(n) the order statistics).
 *
 * The numerics are a kernel (Kernels.medianMoments: native/core/median_moments.cpp, its TypeScript twin
 * src/fallback/median-moments.ts): exact to about 1e-12 relative at every n (the method and its error bound are in
 * the C++ file's header), in well under a second at 1.2 M tasks, with a cost that does not grow with max N.
 */
import { kernels } from "../backend/backend";
import { KgrankInputError } from "../checks/errors";

export interface MedianMoments {
  expectation: number;
  variance: number;
}

/** E and Var of the (conventional, unweighted) median rank for validated candidate counts (integers >= 1). */
export function medianMoments(numCandidates: Float64Array, wantVariance = true): MedianMoments {
  if (numCandidates.length === 0) {
    throw new KgrankInputError("numCandidates", "is empty: a metric needs at least one ranking task");
  }
  const m = kernels().medianMoments(numCandidates, wantVariance);
  return { expectation: m[0]!, variance: m[1]! };
}
