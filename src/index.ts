/**
 * kgrank-native: rank-based evaluation of knowledge-graph link prediction.
 * The public surface; see README.md.
 */
export { backendInfo } from "./backend";
export type { BackendInfo } from "./backend";
export { countScores, countScoresSync } from "./count";
export type { CountScoresOptions, CountScoresResult } from "./count";
export { KgrankBackendError, KgrankError, KgrankInputError } from "./errors";
export type { BackendName, FloatArray, SimdLevel } from "./kernels";
export { NoClosedFormError, UnknownMetricError } from "./errors";
export {
  affine, expectationNormalized, generateNumCandidatesAndRanks, generateRanks, getMetric, listMetrics, metricValues,
  prepareCandidates, reindexed, zScored, zToPValue,
} from "./metrics/index";
export type {
  AffineCoefficients, CandidateSet, Candidates, DerivedRankMetric, Estimate, EstimateOptions, Interval, RankMetric, RankType, ValueRange,
} from "./metrics/index";
