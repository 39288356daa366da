/**
 * Derived metrics: scale * base + offset, with coefficients that depend only on the candidate counts (and
 * weights). E and Var follow from the base's by E[aM+b] = aE[M]+b and Var[aM+b] = a^2 Var[M].
 *
 * Composition: the base may itself be derived (zScored(affine(m, -1, 0)) works; so does reindexed(affine(...))
 * when the affine image has a finite optimum). Rejected, with typed errors: z-scoring a base without closed
 * expectation and variance, normalising or re-indexing a base without closed expectation (NoClosedFormError),
 * expectation-normalising a metric whose expectation is identically 0 (a z-score or re-indexed metric),
 * re-indexing a metric without a finite optimum (z-scores). Degenerate candidate sets (zero variance, E = optimum,
 * E = 0) throw KgrankInputError naming numCandidates instead of returning Infinity or NaN.
 */
import { KgrankInputError, NoClosedFormError } from "../checks/errors";
import { describe } from "../checks/validate";
import { BaseRankMetric, estimateWith } from "./base";
import { type CandidateSet, candidatesArg } from "./candidates";
import {
  type AffineCoefficients,
  type Candidates,
  type DerivedRankMetric,
  type Estimate,
  type EstimateOptions,
  type RankMetric,
  type RankType,
  range,
  type ValueRange,
} from "./types";

type Derivation = DerivedRankMetric["derivation"];

export interface DerivedNames {
  key?: string;
  name?: string;
  synonyms?: readonly string[];
  valueRange?: ValueRange;
}

/** The best value a metric can take: its upper bound if increasing, else its lower bound. */
function optimum(metric: RankMetric): number | null {
  return metric.increasing ? metric.valueRange.upper : metric.valueRange.lower;
}

function degenerate(what: string): never {
  throw new KgrankInputError("numCandidates", what);
}

export class DerivedMetric implements DerivedRankMetric {
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
  readonly base: RankMetric;
  readonly derivation: Derivation;
  readonly #scale: number;
  readonly #offset: number;

  constructor(base: RankMetric, derivation: Derivation, names: DerivedNames = {}, scale = 1, offset = 0) {
    this.base = base;
    this.derivation = derivation;
    this.#scale = scale;
    this.#offset = offset;
    const needE = derivation !== "affine";
    if (needE && !base.closedExpectation) {
      throw new NoClosedFormError(
        base.key,
        `has no closed-form expectation, so it cannot be ${derivation === "z" ? "z-scored" : derivation === "reindex" ? "re-indexed" : "expectation-normalised"}`,
      );
    }
    if (derivation === "z" && !base.closedVariance) {
      throw new NoClosedFormError(base.key, "has no closed-form variance, so it cannot be z-scored");
    }
    if (derivation === "expectation" && isCentred(base)) {
      throw new KgrankInputError(
        "metric",
        `${base.key} has expectation 0 for every candidate set; normalising it by its expectation is undefined`,
      );
    }
    if (derivation === "reindex" && !Number.isFinite(optimum(base) ?? NaN)) {
      throw new KgrankInputError(
        "metric",
        `${base.key} has no finite optimum (its value range is unbounded on the good side), so it cannot be re-indexed`,
      );
    }
    const prefix = { z: "z_", expectation: "adjusted_", reindex: "adjusted_", affine: "" }[derivation];
    this.key =
      names.key ??
      (derivation === "affine"
        ? `affine_${base.key}_${scale}_${offset}`
        : derivation === "reindex" && !base.increasing
          ? `${prefix}${base.key}_index`
          : `${prefix}${base.key}`);
    this.name =
      names.name ??
      {
        z: `z-Scored ${base.name}`,
        expectation: `Expectation-Normalized ${base.name}`,
        reindex: `Re-indexed ${base.name}`,
        affine: `${scale} * ${base.name} + ${offset}`,
      }[derivation];
    this.synonyms = Object.freeze([...(names.synonyms ?? [])]);
    this.increasing =
      derivation === "z" || derivation === "reindex"
        ? true
        : derivation === "expectation"
          ? base.increasing
          : base.increasing === scale > 0;
    this.valueRange = names.valueRange ?? defaultRange(base, derivation, scale, offset);
    this.needsCandidates = derivation === "affine" ? base.needsCandidates : true;
    this.supportsWeights = base.supportsWeights;
    this.supportedRankTypes = derivation === "affine" ? base.supportedRankTypes : ["realistic"];
    this.closedExpectation = base.closedExpectation;
    this.closedVariance = base.closedVariance;
  }

  coefficients(numCandidates: Candidates, weights?: ArrayLike<number>): AffineCoefficients {
    if (this.derivation === "affine") return { scale: this.#scale, offset: this.#offset };
    // validate once, share one histogram and memo between E and Var of the base
    const prepared = candidatesArg(numCandidates, weights, this.supportsWeights, this.key);
    const mean = this.base.expectedValue(prepared);
    return this.fromMoments(mean, this.derivation === "z" ? this.base.std(prepared) : NaN);
  }

  /**
   * The coefficients of a non-affine derivation given the base's expectation over the tasks (and, for a z-score, its
   * standard deviation): what coefficients() computes from a candidate set, for callers that sum the moments
   * themselves (compare's bootstrap, over resampled tasks).
   */
  fromMoments(mean: number, std: number): AffineCoefficients {
    const base = this.base;
    switch (this.derivation) {
      case "affine":
        return { scale: this.#scale, offset: this.#offset };
      case "z": {
        if (!(std > 0)) {
          degenerate(
            `${base.key} has variance 0 under random ranks for these candidate counts (e.g. every N_i = 1, or k >= every N_i), so its z-score is undefined; remove tasks with a single candidate`,
          );
        }
        const scale = base.increasing ? 1 / std : -1 / std;
        return { scale, offset: -scale * mean };
      }
      case "expectation": {
        if (mean === 0 || !Number.isFinite(mean))
          degenerate(`${base.key} has expectation ${mean} here; cannot normalise by it`);
        return { scale: 1 / mean, offset: 0 };
      }
      case "reindex": {
        const best = optimum(base)!;
        if (best === mean) {
          degenerate(
            `${base.key} has expectation equal to its optimum ${best} (e.g. every N_i = 1, or k >= every N_i), so it cannot be re-indexed`,
          );
        }
        const scale = 1 / (best - mean);
        return { scale, offset: -scale * mean };
      }
    }
  }

  adjust(baseValue: number, numCandidates: Candidates, weights?: ArrayLike<number>): number {
    if (typeof baseValue !== "number" || !Number.isFinite(baseValue)) {
      throw new KgrankInputError(
        "baseValue",
        `must be a finite number (a published ${this.base.key}), got ${describe(baseValue)}`,
      );
    }
    const c = this.coefficients(numCandidates, weights);
    return c.scale * baseValue + c.offset;
  }

  value(ranks: ArrayLike<number>, numCandidates?: ArrayLike<number>, weights?: ArrayLike<number>): number {
    if (numCandidates === undefined && this.needsCandidates) {
      throw new KgrankInputError(
        "numCandidates",
        `${this.key} needs the number of candidates of every task; pass numCandidates`,
      );
    }
    return this.adjust(this.base.value(ranks, numCandidates, weights), numCandidates ?? [], weights);
  }

  expectedValue(numCandidates: Candidates, weights?: ArrayLike<number>): number {
    numCandidates = candidatesArg(numCandidates, weights, this.supportsWeights, this.key);
    weights = undefined;
    const c = this.coefficients(numCandidates, weights);
    // Exact by construction (checked to be defined by coefficients() above).
    if (this.derivation === "z" || this.derivation === "reindex") return 0;
    if (this.derivation === "expectation") return 1;
    return c.scale * this.base.expectedValue(numCandidates, weights) + c.offset;
  }

  variance(numCandidates: Candidates, weights?: ArrayLike<number>): number {
    numCandidates = candidatesArg(numCandidates, weights, this.supportsWeights, this.key);
    weights = undefined;
    const c = this.coefficients(numCandidates, weights);
    if (this.derivation === "z") return 1;
    return c.scale * c.scale * this.base.variance(numCandidates, weights);
  }

  std(numCandidates: Candidates, weights?: ArrayLike<number>): number {
    return Math.sqrt(this.variance(numCandidates, weights));
  }

  /** Monte-Carlo values: the base's sample values mapped through the coefficients. */
  sampleValues(candidates: CandidateSet, numSamples: number, seed: number): Float64Array {
    const base = this.base as BaseRankMetric | DerivedMetric;
    const values = base.sampleValues(candidates, numSamples, seed);
    const c = this.coefficients(candidates);
    for (let i = 0; i < values.length; i++) values[i] = c.scale * values[i]! + c.offset;
    return values;
  }

  estimate(options: EstimateOptions): Estimate {
    return estimateWith(this, options, (c, s, seed) => this.sampleValues(c, s, seed));
  }
}

function isCentred(metric: RankMetric): boolean {
  return metric instanceof DerivedMetric && (metric.derivation === "z" || metric.derivation === "reindex");
}

function defaultRange(base: RankMetric, derivation: Derivation, scale: number, offset: number): ValueRange {
  const r = base.valueRange;
  switch (derivation) {
    case "z":
      return range(null, false, null, false);
    case "reindex":
      return range(null, false, 1, true);
    case "expectation":
      return range(r.lower !== null && r.lower >= 0 ? 0 : null, r.lower !== null && r.lower >= 0, null, false);
    case "affine": {
      const map = (x: number | null) => (x === null ? null : scale * x + offset);
      return scale > 0
        ? range(map(r.lower), r.lowerInclusive, map(r.upper), r.upperInclusive)
        : range(map(r.upper), r.upperInclusive, map(r.lower), r.lowerInclusive);
    }
  }
}

function metricArg(metric: unknown): RankMetric {
  if (!(metric instanceof BaseRankMetric) && !(metric instanceof DerivedMetric)) {
    throw new KgrankInputError(
      "metric",
      `must be a metric from getMetric() or a derived metric, got ${describe(metric)}`,
    );
  }
  return metric;
}

/** (M - E[M]) / std[M], sign-flipped for decreasing metrics so larger is always better. */
export function zScored(metric: RankMetric, names?: DerivedNames): DerivedRankMetric {
  return new DerivedMetric(metricArg(metric), "z", names);
}

/** M / E[M]. */
export function expectationNormalized(metric: RankMetric, names?: DerivedNames): DerivedRankMetric {
  return new DerivedMetric(metricArg(metric), "expectation", names);
}

/** (M - E[M]) / (optimum - E[M]): 0 in expectation, 1 at the optimum, increasing. */
export function reindexed(metric: RankMetric, names?: DerivedNames): DerivedRankMetric {
  return new DerivedMetric(metricArg(metric), "reindex", names);
}

/** scale * M + offset with constant coefficients (scale != 0). */
export function affine(metric: RankMetric, scale: number, offset = 0, names?: DerivedNames): DerivedRankMetric {
  if (typeof scale !== "number" || !Number.isFinite(scale) || scale === 0) {
    throw new KgrankInputError("scale", `must be a finite non-zero number, got ${describe(scale)}`);
  }
  if (typeof offset !== "number" || !Number.isFinite(offset)) {
    throw new KgrankInputError("offset", `must be a finite number, got ${describe(offset)}`);
  }
  return new DerivedMetric(metricArg(metric), "affine", names, scale, offset);
}
