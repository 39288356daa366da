/**
 * Metric names as types, so editors complete them: PyKEEN's keys, the synonyms, and full keys
 * ("both.realistic.hits_at_10"). At run time getMetric() accepts more (any case, class-style names such as
 * "MeanReciprocalRank", separators dropped); `MetricQuery` keeps `string` open for those. test/metrics.test.ts
 * checks these lists against the catalogue.
 */
import type { RankType, ResultSide } from "./types";

/** Keys of the metrics without a cut-off (Hits@k, MRR@k), in catalogue order. */
export const FIXED_METRIC_KEYS = [
  "arithmetic_mean_rank",
  "geometric_mean_rank",
  "harmonic_mean_rank",
  "median_rank",
  "standard_deviation",
  "variance",
  "median_absolute_deviation",
  "count",
  "inverse_arithmetic_mean_rank",
  "inverse_geometric_mean_rank",
  "inverse_harmonic_mean_rank",
  "inverse_median_rank",
  "adjusted_arithmetic_mean_rank",
  "adjusted_arithmetic_mean_rank_index",
  "adjusted_geometric_mean_rank_index",
  "adjusted_inverse_harmonic_mean_rank",
  "z_arithmetic_mean_rank",
  "z_geometric_mean_rank",
  "z_inverse_harmonic_mean_rank",
] as const;

/** Their synonyms (PyKEEN's, and the usual abbreviations). */
export const METRIC_SYNONYMS = [
  "mean_rank",
  "mr",
  "gmr",
  "hmr",
  "median",
  "mdr",
  "rank_std",
  "std",
  "rank_var",
  "var",
  "rank_mad",
  "mad",
  "rank_count",
  "iamr",
  "igmr",
  "mean_reciprocal_rank",
  "mrr",
  "ihmr",
  "imr",
  "inverse_median",
  "adjusted_mean_rank",
  "amr",
  "aamr",
  "adjusted_mean_rank_index",
  "amri",
  "aamri",
  "gmri",
  "agmri",
  "amrr",
  "aihmr",
  "adjusted_mrr",
  "adjusted_mean_reciprocal_rank",
  "zamr",
  "zmr",
  "zgmr",
  "zmrr",
  "zihmr",
] as const;

/** A metric's canonical key (PyKEEN's), e.g. "inverse_harmonic_mean_rank", "hits_at_10". */
export type MetricKey =
  | (typeof FIXED_METRIC_KEYS)[number]
  | `hits_at_${number}`
  | `adjusted_hits_at_${number}`
  | `z_hits_at_${number}`
  | `inverse_harmonic_mean_rank_at_${number}`
  | `adjusted_inverse_harmonic_mean_rank_at_${number}`
  | `z_inverse_harmonic_mean_rank_at_${number}`;

/** A key or a synonym: "mrr", "hits@10", "amri", ... */
export type MetricName =
  MetricKey | (typeof METRIC_SYNONYMS)[number] | `hits@${number}` | `h@${number}` | `mrr@${number}` | `amrr@${number}`;

/**
 * What getMetric(), RankResults.get() and the evaluator's `metrics` option take: a name, optionally with side and
 * rank type ("tail.mrr", "both.realistic.hits_at_10"); other spellings are accepted at run time.
 */
export type MetricQuery =
  MetricName | `${ResultSide}.${MetricName}` | `${ResultSide}.${RankType}.${MetricName}` | (string & {});
