/**
 * A validated candidate set (N_i and optional weights) with its histogram and closed-form moments memoised, so
 * several metrics (and derived metrics, which need their base's E and Var) share one histogram. Every metric
 * method accepts either raw arrays or a CandidateSet from prepareCandidates().
 */
import { kernels } from "../backend/backend";
import { KgrankInputError } from "../checks/errors";
import { ClosedMetricCode, type CandidateHistogram } from "../contract/kernels";
import { numCandidatesArg, weightsArg } from "./input";
import { type MedianMoments, medianMoments } from "./median";

export class CandidateSet {
  readonly numCandidates: Float64Array;
  readonly weights: Float64Array | null;
  #histogram: CandidateHistogram | null = null;
  readonly #moments = new Map<string, Float64Array>();

  /** Use prepareCandidates(); the arrays are copied, so later changes by the caller cannot make the memo stale. */
  constructor(numCandidates: Float64Array, weights: Float64Array | null) {
    this.numCandidates = numCandidates;
    this.weights = weights;
  }

  get length(): number {
    return this.numCandidates.length;
  }

  #median: MedianMoments | null = null;
  #medianExpectation: MedianMoments | null = null;

  /**
   * E and Var of the (unweighted, conventional) median rank, computed once (src/metrics/median.ts). Without
   * `wantVariance` only E is needed: for even n that skips the joint sum, the costly part (Var may then be NaN).
   * @internal
   */
  medianMoments(wantVariance = true): MedianMoments {
    if (wantVariance || this.#median) {
      this.#median ??= medianMoments(this.numCandidates, true);
      return this.#median;
    }
    this.#medianExpectation ??= medianMoments(this.numCandidates, false);
    return this.#medianExpectation;
  }

  /** [E, Var] of a closed form, computed once per (metric, k). @internal */
  moments(code: ClosedMetricCode, k: number): Float64Array {
    const key = `${code}:${k}`;
    let m = this.#moments.get(key);
    if (!m) {
      if (code === ClosedMetricCode.GeometricMean && this.weights) {
        m = kernels().closedMoments(code, this.numCandidates, this.weights, k);
      } else {
        this.#histogram ??= kernels().candidateHistogram(this.numCandidates, this.weights);
        m = kernels().histogramMoments(code, this.#histogram, this.numCandidates.length, k);
      }
      this.#moments.set(key, m);
    }
    return m;
  }
}

/** Validates numCandidates (and weights) once; pass the result to expectedValue/variance/coefficients/... */
export function prepareCandidates(numCandidates: ArrayLike<number>, weights?: ArrayLike<number>): CandidateSet {
  const n = Float64Array.from(numCandidatesArg(numCandidates));
  const w = weightsArg(weights, n.length, true, "prepareCandidates");
  return new CandidateSet(n, w ? Float64Array.from(w) : null);
}

/** A CandidateSet from either form; for a metric without weight support (`supportsWeights` false) weights are ignored, as in PyKEEN. */
export function candidatesArg(
  numCandidates: ArrayLike<number> | CandidateSet,
  weights: ArrayLike<number> | undefined,
  supportsWeights: boolean,
  metric: string,
): CandidateSet {
  if (numCandidates instanceof CandidateSet) {
    if (weights !== undefined && weights !== null) {
      throw new KgrankInputError(
        "weights",
        "must be given to prepareCandidates(), not next to a prepared candidate set",
      );
    }
    return numCandidates.weights && !supportsWeights
      ? new CandidateSet(numCandidates.numCandidates, null)
      : numCandidates;
  }
  const n = numCandidatesArg(numCandidates);
  return new CandidateSet(n, weightsArg(weights, n.length, supportsWeights, metric));
}
