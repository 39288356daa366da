/**
 * How a metric's value follows from one total over the tasks: the sum of a per-task quantity (the rank, its log,
 * its inverse, a hit at k, the inverse truncated at k) or the median rank, mapped by the base metric and then by its
 * derived chain. Which quantity, and whether the value is its mean, each base metric says (BaseRankMetric.perTask), so
 * a new metric needs nothing here. Compare's replicates (src/compare/paired.ts) sum those quantities in the core
 * (pairedResample) and finish each replicate's value here, with the same base maps (fromSums) and the same
 * coefficient formulas (DerivedMetric.fromMoments) as metricValues. Metrics of the spread (variance, standard
 * deviation, MAD) and the count have no such form.
 */
import { BaseRankMetric, type Sums, type TaskQuantity } from "./base";
import type { CandidateSet } from "./candidates";
import { DerivedMetric } from "./derived";
import type { AffineCoefficients, RankMetric } from "./types";

export interface SumForm {
  quantity: TaskQuantity;
  /** The cut-off of a hit ("hits") or of MRR@k ("truncatedInverseRank"), else 0. */
  k: number;
  /** The quantity of one task's rank (the rank itself for "median"). */
  perTask(rank: number): number;
  /** The chain's coefficients over a fixed candidate set, base first. */
  coefficients(candidates: CandidateSet): AffineCoefficients[];
  /**
   * Per-task expectation and variance of the base under uniform ranks with `numCandidates` candidates, when the
   * chain's coefficients follow from their sums over the tasks (every step affine but a first expectation, re-index
   * or z step over a base whose moments are means: MR, MRR, Hits@k); null when they do not.
   */
  taskMoments: ((numCandidates: number) => [number, number]) | null;
  /** Whether every step of the chain is affine (its coefficients do not depend on the candidates). */
  fixed: boolean;
  /** The chain's coefficients from the base's expectation and variance over the tasks (with taskMoments). */
  fromMoments(mean: number, variance: number): AffineCoefficients[];
  /** The metric's value from the quantity's total over `count` tasks (the median for "median"). */
  value(total: number, count: number, coefficients: readonly AffineCoefficients[]): number;
  /**
   * Where the base's value is its total over the count (MR, MRR, Hits@k), so the metric is affine in the total: the
   * difference of two values under the same coefficients, from the difference of their totals (one column of
   * per-task differences serves it, not two of totals). Null for the other bases.
   */
  difference: ((totalDifference: number, count: number, coefficients: readonly AffineCoefficients[]) => number) | null;
}

/** The sum form of `metric`, or null when its value needs more than one total (spread metrics, the count). */
export function sumForm(metric: RankMetric): SumForm | null {
  const chain: DerivedMetric[] = [];
  let x: RankMetric = metric;
  while (x instanceof DerivedMetric) {
    chain.unshift(x);
    x = x.base;
  }
  if (!(x instanceof BaseRankMetric)) return null;
  const base = x;
  const form = base.perTask;
  if (!form) return null;
  const quantity = form.quantity;
  const k = base.k ?? 0;
  const perTask = form.of;
  const fixed = chain.every((d) => d.derivation === "affine");
  const byMoments =
    !fixed && chain[0]!.derivation !== "affine" && chain.slice(1).every((d) => d.derivation === "affine");
  const taskMoments =
    byMoments && form.mean
      ? (n: number): [number, number] => {
          const c = [n];
          return [base.expectedValue(c), chain[0]!.derivation === "z" ? base.variance(c) : NaN];
        }
      : null;
  return {
    quantity,
    k,
    perTask,
    fixed,
    taskMoments,
    coefficients: (candidates) =>
      chain.map((d) => (d.derivation === "affine" ? d.coefficients([]) : d.coefficients(candidates))),
    fromMoments: (mean, variance) =>
      chain.map((d, i) => (i === 0 ? d.fromMoments(mean, Math.sqrt(variance)) : d.coefficients([]))),
    value(total, count, coefficients) {
      const sums: Sums = {
        weight: count,
        count,
        sumRanks: total,
        sumLogRanks: total,
        sumInverseRanks: total,
        squaredDeviations: NaN,
        median: total,
        mad: NaN,
        hits: new Map(base.cut?.kind === "hits" ? [[k, total]] : []),
        truncatedInverse: new Map(base.cut?.kind === "truncatedInverse" ? [[k, total]] : []),
      };
      let v = base.fromSums(sums);
      for (const c of coefficients) v = c.scale * v + c.offset;
      return v;
    },
    difference: form.mean
      ? (totalDifference, count, coefficients) => {
          // A chain with an undefined step (a z-score over zero variance: infinite scale) has no value, nor a
          // difference of two.
          let d = totalDifference / count;
          for (const c of coefficients) {
            if (!Number.isFinite(c.scale) || !Number.isFinite(c.offset)) return NaN;
            d *= c.scale;
          }
          return d;
        }
      : null,
  };
}
