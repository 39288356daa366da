/** The metric catalogue, derived-metric algebra, Monte-Carlo helpers and the z -> p-value helper. */
export { type CandidateSet, prepareCandidates } from "./candidates";
export { DEFAULT_KS, getMetric, listMetrics, metricSelection, parseMetricKey } from "./catalogue";
export { FIXED_METRIC_KEYS, METRIC_SYNONYMS, type MetricKey, type MetricName, type MetricQuery } from "./names";
export { affine, expectationNormalized, reindexed, zScored } from "./derived";
export { generateNumCandidatesAndRanks, generateRanks } from "./generate";
export { zToPValue } from "./pvalue";
export { metricValues } from "./values";
export type {
  AffineCoefficients,
  Candidates,
  DerivedRankMetric,
  Estimate,
  EstimateOptions,
  Interval,
  RankMetric,
  RankType,
  ValueRange,
} from "./types";
