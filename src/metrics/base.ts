/**
 * Base metrics: functions of the ranks (and weights). Each one says what it means and which kernel statistic it is
 * a function of; the numbers come from the kernels (src/contract/kernels.ts), never from formulas re-derived here.
 */
import { kernels } from "../backend/backend";
import { NoClosedFormError } from "../checks/errors";
import { AGGREGATE_FLAGS, AGGREGATE_SLOTS, ClosedMetricCode, StatisticCode } from "../contract/kernels";
import { type CandidateSet, candidatesArg } from "./candidates";
import { bootstrap, checkEstimateOptions } from "./estimate";
import { numCandidatesArg, ranksArg, ranksShape, weightsArg } from "./input";
import {
  type Candidates,
  type Estimate,
  type EstimateOptions,
  RANK_TYPES,
  type RankMetric,
  type RankType,
  range,
  type ValueRange,
} from "./types";

/** The per-task quantities a metric's value can be a function of the total of (the median: of the median rank). */
export type TaskQuantity = "rank" | "logRank" | "inverseRank" | "hits" | "truncatedInverseRank" | "median";

/** What compare and the sum forms need of a base metric: its per-task quantity. */
export interface PerTaskForm {
  quantity: TaskQuantity;
  /** The quantity of one task's rank (the rank itself for "median"). */
  of: (rank: number) => number;
  /**
   * Whether the value is the (weighted) mean of the quantity (MR, MRR, Hits@k, MRR@k): then its expectation and
   * variance over tasks are the mean of the per-task ones, a difference of two values follows from the difference of
   * the totals, and compare runs per-task tests (t-test, Wilcoxon) on it.
   */
  mean: boolean;
}

/** Which sums of the fused pass a value needs. */
export interface Sums {
  /** Total weight (the count when unweighted). */
  weight: number;
  sumRanks: number;
  sumLogRanks: number;
  sumInverseRanks: number;
  /** Sum of squared deviations from the unweighted mean (only when AGGREGATE_FLAGS.variance is asked). */
  squaredDeviations: number;
  median: number;
  mad: number;
  count: number;
  /** Weighted hit counts by k (the fused pass's hit slots). */
  hits: Map<number, number>;
  /** MRR@k's weighted truncated reciprocal sums (w / r over r <= k) by k (the fused pass's truncated slots). */
  truncatedInverse: Map<number, number>;
}

/**
 * A per-k entry of the fused pass a metric reads: the hit count at k (Hits@k, a slot of `ks`) or the truncated
 * reciprocal sum at k (MRR@k, a slot of `truncatedKs`). The same k is the closed form's and Monte Carlo's.
 */
export interface KernelCut {
  kind: "hits" | "truncatedInverse";
  k: number;
}

/** The fused pass's `ks` and `truncatedKs` for a set of cuts (each k once per kind). */
export function cutArrays(cuts: Iterable<KernelCut>): { ks: Float64Array; truncatedKs: Float64Array } {
  const hits = new Set<number>();
  const truncated = new Set<number>();
  for (const c of cuts) (c.kind === "hits" ? hits : truncated).add(c.k);
  return { ks: Float64Array.from(hits), truncatedKs: Float64Array.from(truncated) };
}

interface Spec {
  key: string;
  name: string;
  synonyms: readonly string[];
  increasing: boolean;
  valueRange: ValueRange;
  supportsWeights: boolean;
  /**
   * The Monte-Carlo statistic and the map from it to the metric's value; null: Monte Carlo regenerates each sample's
   * ranks (the seeded stream of generateRanks) and takes the value pass over them (a metric without a kernel
   * statistic needs no change to the sampling kernels).
   */
  statistic: StatisticCode | null;
  fromStatistic: (x: number) => number;
  /** Closed-form [E, Var] of the metric, if any. */
  closed?: ClosedMetricCode;
  closedVariance?: boolean;
  /** E and Var of the unweighted median (src/metrics/median.ts) instead of a kernel closed form. */
  closedMedian?: boolean;
  /** The value from the fused pass, which must compute `flags` (AGGREGATE_FLAGS) besides the sums. */
  fromSums: (s: Sums) => number;
  flags?: number;
  /**
   * The per-task quantity whose total the value is a function of (what compare's replicates and src/metrics/sum-form.ts
   * read), or null for a value that needs more than one total (the spread metrics, the count). Required, so that a
   * new metric says which it is.
   */
  perTask: PerTaskForm | null;
  /** The cut-off of Hits@k and MRR@k. */
  k?: number;
  /** The per-k entry of the fused pass this metric reads (Hits@k: a hit count, MRR@k: a truncated reciprocal sum). */
  cut?: KernelCut;
}

export class BaseRankMetric implements RankMetric {
  readonly key: string;
  readonly name: string;
  readonly synonyms: readonly string[];
  readonly increasing: boolean;
  readonly valueRange: ValueRange;
  readonly needsCandidates = false;
  readonly supportsWeights: boolean;
  readonly supportedRankTypes: readonly RankType[] = RANK_TYPES;
  readonly closedExpectation: boolean;
  readonly closedVariance: boolean;
  /** k of Hits@k and MRR@k (undefined for other metrics). */
  readonly k?: number;
  /** The per-k entry of the fused pass this metric reads (Spec.cut), undefined when it reads none. */
  readonly cut?: KernelCut;
  /** The per-task quantity of the value (Spec.perTask), null when there is none. */
  readonly perTask: PerTaskForm | null;
  readonly #spec: Spec;

  constructor(spec: Spec) {
    this.key = spec.key;
    this.name = spec.name;
    this.synonyms = Object.freeze([...spec.synonyms]);
    this.increasing = spec.increasing;
    this.valueRange = spec.valueRange;
    this.supportsWeights = spec.supportsWeights;
    this.closedExpectation = spec.closed !== undefined || spec.closedMedian === true;
    this.closedVariance = (spec.closed !== undefined && spec.closedVariance !== false) || spec.closedMedian === true;
    if (spec.k !== undefined) this.k = spec.k;
    if (spec.cut !== undefined) this.cut = spec.cut;
    this.perTask = spec.perTask;
    this.#spec = spec;
  }

  value(ranks: ArrayLike<number>, numCandidates?: ArrayLike<number>, weights?: ArrayLike<number>): number {
    const n =
      numCandidates === undefined ? undefined : numCandidatesArg(numCandidates, (ranks as ArrayLike<number>)?.length);
    const r = n ? ranksArg(ranks, n) : ranksShape(ranks);
    const w = weightsArg(weights, r.length, this.supportsWeights, this.key);
    const { ks, truncatedKs } = cutArrays(this.cuts);
    return this.fromSums(aggregate(r, w, ks, truncatedKs, this.flags));
  }

  /** The per-k entries of the fused pass this metric reads (none or its cut). */
  get cuts(): KernelCut[] {
    return this.cut === undefined ? [] : [this.cut];
  }

  /** What the fused pass must compute for this metric. */
  get flags(): number {
    return this.#spec.flags ?? 0;
  }

  /** The value from the sums of a fused pass that computed at least `flags` and this metric's k. */
  fromSums(sums: Sums): number {
    return this.#spec.fromSums(sums);
  }

  /** [E, Var] in closed form, or NoClosedFormError. */
  moments(numCandidates: Candidates, weights?: ArrayLike<number>, needVariance = false): [number, number] {
    const spec = this.#spec;
    if (spec.closedMedian) {
      const c = candidatesArg(numCandidates, weights, this.supportsWeights, this.key);
      if (c.weights) {
        throw new NoClosedFormError(
          this.key,
          "the weighted median has no closed-form expectation or variance (only the unweighted median has); use estimate({ numCandidates, weights, numSamples }) for a Monte-Carlo value",
        );
      }
      const m = c.medianMoments(needVariance);
      return [m.expectation, m.variance];
    }
    if (spec.closed === undefined || (needVariance && !this.closedVariance)) {
      throw new NoClosedFormError(
        this.key,
        `has no closed-form ${needVariance ? "variance" : "expectation"}; use estimate({ numCandidates, numSamples }) for a Monte-Carlo value`,
      );
    }
    const m = candidatesArg(numCandidates, weights, this.supportsWeights, this.key).moments(spec.closed, spec.k ?? 0);
    return [m[0]!, m[1]!];
  }

  expectedValue(numCandidates: Candidates, weights?: ArrayLike<number>): number {
    return this.moments(numCandidates, weights)[0];
  }

  variance(numCandidates: Candidates, weights?: ArrayLike<number>): number {
    return this.moments(numCandidates, weights, true)[1];
  }

  std(numCandidates: Candidates, weights?: ArrayLike<number>): number {
    return Math.sqrt(this.variance(numCandidates, weights));
  }

  /** Monte-Carlo values of the metric for seeded random rank vectors (validated inputs). */
  sampleValues(c: CandidateSet, numSamples: number, seed: number): Float64Array {
    const spec = this.#spec;
    if (spec.statistic === null) {
      const { ks, truncatedKs } = cutArrays(this.cuts);
      const values = new Float64Array(numSamples);
      for (let s = 0; s < numSamples; s++) {
        const ranks = kernels().generateRanks(c.numCandidates, seed, s);
        values[s] = spec.fromSums(aggregate(ranks, c.weights, ks, truncatedKs, this.flags));
      }
      return values;
    }
    const values = kernels().sampleStatistic(c.numCandidates, c.weights, numSamples, seed, spec.statistic, spec.k ?? 0);
    for (let i = 0; i < values.length; i++) values[i] = spec.fromStatistic(values[i]!);
    return values;
  }

  estimate(options: EstimateOptions): Estimate {
    return estimateWith(this, options, (c, s, seed) => this.sampleValues(c, s, seed));
  }
}

export function estimateWith(
  metric: RankMetric,
  options: EstimateOptions,
  sample: (candidates: CandidateSet, numSamples: number, seed: number) => Float64Array,
): Estimate {
  const opts = checkEstimateOptions(options);
  const candidates = candidatesArg(options.numCandidates, options.weights, metric.supportsWeights, metric.key);
  const values = sample(candidates, opts.numSamples, opts.seed);
  return bootstrap(values, opts.seed, opts.confidenceLevel, opts.numBootstrap);
}

/** The fused pass over shape-checked ranks; throws the precise input error if it found invalid ranks. */
export function aggregate(
  r: Float64Array,
  w: Float64Array | null,
  ks: Float64Array,
  truncatedKs: Float64Array,
  flags: number,
): Sums {
  const out = kernels().aggregateRanks(r, w, ks, truncatedKs, flags);
  if (out[AGGREGATE_SLOTS.invalid]! > 0) ranksArg(r);
  return sumsOf(out, r.length, ks, truncatedKs);
}

function sumsOf(out: Float64Array, count: number, ks: Float64Array, truncatedKs: Float64Array): Sums {
  const hits = new Map<number, number>();
  for (let j = 0; j < ks.length; j++) hits.set(ks[j]!, out[AGGREGATE_SLOTS.fixed + j]!);
  // The truncated slots follow the hit slots (AGGREGATE_SLOTS).
  const truncatedInverse = new Map<number, number>();
  const first = AGGREGATE_SLOTS.fixed + ks.length;
  for (let j = 0; j < truncatedKs.length; j++) truncatedInverse.set(truncatedKs[j]!, out[first + j]!);
  return {
    weight: out[AGGREGATE_SLOTS.sumWeights]!,
    sumRanks: out[AGGREGATE_SLOTS.sumRanks]!,
    sumLogRanks: out[AGGREGATE_SLOTS.sumLogRanks]!,
    sumInverseRanks: out[AGGREGATE_SLOTS.sumInverseRanks]!,
    squaredDeviations: out[AGGREGATE_SLOTS.sumSquaredDeviations]!,
    median: out[AGGREGATE_SLOTS.median]!,
    mad: out[AGGREGATE_SLOTS.mad]!,
    count,
    hits,
    truncatedInverse,
  };
}

// ---- the base metrics ------------------------------------------------------------------------------------------
const RANK_RANGE = range(1, true, null, false);
const INVERSE_RANGE = range(0, false, 1, true);
const NON_NEGATIVE = range(0, true, null, false);
const identity = (x: number) => x;
const inverse = (x: number) => 1 / x;
const mean = (s: Sums) => s.sumRanks / s.weight;
const geometric = (s: Sums) => Math.exp(s.sumLogRanks / s.weight);
const reciprocal = (s: Sums) => s.sumInverseRanks / s.weight;
const MEDIAN = AGGREGATE_FLAGS.median;
const RANK: PerTaskForm = { quantity: "rank", of: identity, mean: true };
const LOG_RANK: PerTaskForm = { quantity: "logRank", of: Math.log, mean: false };
const INVERSE_RANK: PerTaskForm = { quantity: "inverseRank", of: inverse, mean: false };
const MEDIAN_RANK: PerTaskForm = { quantity: "median", of: identity, mean: false };

export const arithmeticMeanRank = () =>
  new BaseRankMetric({
    key: "arithmetic_mean_rank",
    name: "Mean Rank (MR)",
    synonyms: ["mean_rank", "mr"],
    increasing: false,
    valueRange: RANK_RANGE,
    supportsWeights: true,
    statistic: StatisticCode.Mean,
    fromStatistic: identity,
    closed: ClosedMetricCode.ArithmeticMean,
    fromSums: mean,
    perTask: RANK,
  });
export const inverseArithmeticMeanRank = () =>
  new BaseRankMetric({
    key: "inverse_arithmetic_mean_rank",
    name: "Inverse Arithmetic Mean Rank (IAMR)",
    synonyms: ["iamr"],
    increasing: true,
    valueRange: INVERSE_RANGE,
    supportsWeights: true,
    statistic: StatisticCode.Mean,
    fromStatistic: inverse,
    fromSums: (s) => 1 / mean(s),
    perTask: { ...RANK, mean: false },
  });
export const geometricMeanRank = () =>
  new BaseRankMetric({
    key: "geometric_mean_rank",
    name: "Geometric Mean Rank (GMR)",
    synonyms: ["gmr"],
    increasing: false,
    valueRange: RANK_RANGE,
    supportsWeights: true,
    statistic: StatisticCode.GeometricMean,
    fromStatistic: identity,
    closed: ClosedMetricCode.GeometricMean,
    fromSums: geometric,
    perTask: LOG_RANK,
  });
export const inverseGeometricMeanRank = () =>
  new BaseRankMetric({
    key: "inverse_geometric_mean_rank",
    name: "Inverse Geometric Mean Rank (IGMR)",
    synonyms: ["igmr"],
    increasing: true,
    valueRange: INVERSE_RANGE,
    supportsWeights: true,
    statistic: StatisticCode.GeometricMean,
    fromStatistic: inverse,
    fromSums: (s) => Math.exp(-s.sumLogRanks / s.weight),
    perTask: LOG_RANK,
  });
export const harmonicMeanRank = () =>
  new BaseRankMetric({
    key: "harmonic_mean_rank",
    name: "Harmonic Mean Rank (HMR)",
    synonyms: ["hmr"],
    increasing: false,
    valueRange: RANK_RANGE,
    supportsWeights: true,
    statistic: StatisticCode.InverseHarmonic,
    fromStatistic: inverse,
    fromSums: (s) => s.weight / s.sumInverseRanks,
    perTask: INVERSE_RANK,
  });
export const inverseHarmonicMeanRank = () =>
  new BaseRankMetric({
    key: "inverse_harmonic_mean_rank",
    name: "Mean Reciprocal Rank (MRR)",
    synonyms: ["mean_reciprocal_rank", "mrr", "ihmr"],
    increasing: true,
    valueRange: INVERSE_RANGE,
    supportsWeights: true,
    statistic: StatisticCode.InverseHarmonic,
    fromStatistic: identity,
    closed: ClosedMetricCode.InverseHarmonicMean,
    fromSums: reciprocal,
    perTask: { ...INVERSE_RANK, mean: true },
  });
export const medianRank = () =>
  new BaseRankMetric({
    key: "median_rank",
    name: "Median Rank",
    synonyms: ["median", "mdr"],
    increasing: false,
    valueRange: RANK_RANGE,
    supportsWeights: true,
    statistic: StatisticCode.Median,
    fromStatistic: identity,
    flags: MEDIAN,
    fromSums: (s) => s.median,
    closedMedian: true,
    perTask: MEDIAN_RANK,
  });
export const inverseMedianRank = () =>
  new BaseRankMetric({
    key: "inverse_median_rank",
    name: "Inverse Median Rank",
    synonyms: ["imr", "inverse_median"],
    increasing: true,
    valueRange: INVERSE_RANGE,
    supportsWeights: true,
    statistic: StatisticCode.Median,
    fromStatistic: inverse,
    flags: MEDIAN,
    fromSums: (s) => 1 / s.median,
    perTask: MEDIAN_RANK,
  });
export const hitsAtK = (k: number) =>
  new BaseRankMetric({
    key: `hits_at_${k}`,
    name: `Hits @ ${k}`,
    synonyms: [`hits@${k}`, `h@${k}`, `h_at_${k}`],
    increasing: true,
    valueRange: range(0, true, 1, true),
    supportsWeights: true,
    statistic: StatisticCode.Hits,
    fromStatistic: identity,
    closed: ClosedMetricCode.Hits,
    fromSums: (s) => s.hits.get(k)! / s.weight,
    k,
    cut: { kind: "hits", k },
    perTask: { quantity: "hits", of: (r) => (r <= k ? 1 : 0), mean: true },
  });
export const standardDeviation = () =>
  new BaseRankMetric({
    key: "standard_deviation",
    name: "Standard Deviation (std)",
    synonyms: ["rank_std", "std"],
    increasing: false,
    valueRange: NON_NEGATIVE,
    supportsWeights: false,
    statistic: StatisticCode.Variance,
    fromStatistic: Math.sqrt,
    flags: AGGREGATE_FLAGS.variance,
    fromSums: (s) => Math.sqrt(s.squaredDeviations / s.count),
    perTask: null,
  });
export const variance = () =>
  new BaseRankMetric({
    key: "variance",
    name: "Variance",
    synonyms: ["rank_var", "var"],
    increasing: false,
    valueRange: NON_NEGATIVE,
    supportsWeights: false,
    statistic: StatisticCode.Variance,
    fromStatistic: identity,
    flags: AGGREGATE_FLAGS.variance,
    fromSums: (s) => s.squaredDeviations / s.count,
    perTask: null,
  });
export const medianAbsoluteDeviation = () =>
  new BaseRankMetric({
    key: "median_absolute_deviation",
    name: "Median Absolute Deviation (MAD)",
    synonyms: ["rank_mad", "mad"],
    increasing: false,
    valueRange: NON_NEGATIVE,
    supportsWeights: true,
    statistic: StatisticCode.Mad,
    fromStatistic: identity,
    flags: AGGREGATE_FLAGS.mad,
    fromSums: (s) => s.mad,
    perTask: null,
  });
export const count = () =>
  new BaseRankMetric({
    key: "count",
    name: "Count",
    synonyms: ["rank_count"],
    increasing: true,
    valueRange: NON_NEGATIVE,
    supportsWeights: false,
    statistic: StatisticCode.Count,
    fromStatistic: identity,
    fromSums: (s) => s.count,
    perTask: null,
  });

/**
 * MRR@k, the truncated mean reciprocal rank of OGB-LSC WikiKG90Mv2 and many leaderboards: the mean over tasks of 1/r
 * where r <= k, 0 where r > k. A fractional (realistic) rank is compared with k as it is, as Hits@k compares it: a
 * tie that straddles k (realistic rank 10.5 at k = 10) counts 0. Its closed forms (uniform integer ranks 1..N):
 * E = H_1(min(k, N)) / N, E[X^2] = H_2(min(k, N)) / N.
 */
export const truncatedInverseHarmonicMeanRank = (k: number) =>
  new BaseRankMetric({
    key: `inverse_harmonic_mean_rank_at_${k}`,
    name: `Mean Reciprocal Rank at ${k} (MRR@${k})`,
    synonyms: [`mrr@${k}`, `mrr_at_${k}`, `mean_reciprocal_rank_at_${k}`],
    increasing: true,
    valueRange: range(0, true, 1, true),
    supportsWeights: true,
    statistic: null,
    fromStatistic: identity,
    closed: ClosedMetricCode.TruncatedInverse,
    fromSums: (s) => s.truncatedInverse.get(k)! / s.weight,
    perTask: { quantity: "truncatedInverseRank", of: (r) => (r <= k ? 1 / r : 0), mean: true },
    k,
    cut: { kind: "truncatedInverse", k },
  });
