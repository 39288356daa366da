/** Public types of the metric catalogue (README.md lists the public surface). */
import type { CandidateSet } from "./candidates";

/** Candidate counts N_i, raw or prepared once with prepareCandidates() (which also holds the weights). */
export type Candidates = ArrayLike<number> | CandidateSet;

export type RankType = "optimistic" | "realistic" | "pessimistic";

export const RANK_TYPES: readonly RankType[] = ["optimistic", "realistic", "pessimistic"];

/**
 * Which tasks a value is over: head (left) tasks, tail (right) tasks, both together (head and tail only), or
 * relation tasks (h, ?, t), a protocol of its own that "both" never includes.
 */
export type ResultSide = "head" | "tail" | "both" | "relation";

export const RESULT_SIDES: readonly ResultSide[] = ["head", "tail", "both", "relation"];

export interface ValueRange {
  lower: number | null;
  lowerInclusive: boolean;
  upper: number | null;
  upperInclusive: boolean;
}

/** A Monte-Carlo estimate with a bootstrap percentile confidence interval. */
export interface Interval {
  value: number;
  lower: number;
  upper: number;
  confidenceLevel: number;
}

export interface EstimateOptions {
  numCandidates: ArrayLike<number>;
  weights?: ArrayLike<number>;
  /** Number of random rank vectors (>= 2). */
  numSamples: number;
  /** Integer seed from 0 to 2^32-1 (default 0). */
  seed?: number;
  /** Of the bootstrap intervals, in (0, 1) (default 0.95). */
  confidenceLevel?: number;
  /** Bootstrap resamples (default 1000). */
  numBootstrap?: number;
}

export interface Estimate {
  expectedValue: Interval;
  variance: Interval;
  numSamples: number;
}

export interface RankMetric {
  readonly key: string;
  readonly name: string;
  readonly synonyms: readonly string[];
  readonly increasing: boolean;
  readonly valueRange: ValueRange;
  readonly needsCandidates: boolean;
  readonly supportsWeights: boolean;
  readonly supportedRankTypes: readonly RankType[];
  readonly closedExpectation: boolean;
  readonly closedVariance: boolean;
  value(ranks: ArrayLike<number>, numCandidates?: ArrayLike<number>, weights?: ArrayLike<number>): number;
  expectedValue(numCandidates: Candidates, weights?: ArrayLike<number>): number;
  variance(numCandidates: Candidates, weights?: ArrayLike<number>): number;
  std(numCandidates: Candidates, weights?: ArrayLike<number>): number;
  estimate(options: EstimateOptions): Estimate;
}

export interface AffineCoefficients {
  scale: number;
  offset: number;
}

export interface DerivedRankMetric extends RankMetric {
  readonly base: RankMetric;
  /** Which construction made it: z-score, expectation normalisation, re-indexing, or a constant affine map. */
  readonly derivation: "z" | "expectation" | "reindex" | "affine";
  coefficients(numCandidates: Candidates, weights?: ArrayLike<number>): AffineCoefficients;
  adjust(baseValue: number, numCandidates: Candidates, weights?: ArrayLike<number>): number;
}

export function range(
  lower: number | null,
  lowerInclusive: boolean,
  upper: number | null,
  upperInclusive: boolean,
): ValueRange {
  return Object.freeze({ lower, lowerInclusive, upper, upperInclusive });
}
