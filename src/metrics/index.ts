/** The metric catalogue, derived-metric algebra, Monte-Carlo helpers and the z -> p-value helper. */
export { type CandidateSet, prepareCandidates } from "./candidates";
export { DEFAULT_KS, getMetric, listMetrics, type MetricKey, metricSelection, parseMetricKey } from "./catalogue";
export { affine, expectationNormalized, reindexed, zScored } from "./derived";
export { generateNumCandidatesAndRanks, generateRanks } from "./generate";
export { zToPValue } from "./pvalue";
export { metricValues } from "./values";
export type {
  AffineCoefficients, Candidates, DerivedRankMetric, Estimate, EstimateOptions, Interval, RankMetric, RankType, ResultSide, ValueRange,
} from "./types";
