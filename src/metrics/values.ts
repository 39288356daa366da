/**
 * Values of many metrics over the same ranks in one fused native pass: the union of what every metric needs
 * (hit counts for each k, variance, median, MAD) is computed once, and derived metrics share one candidate set.
 */
import { KgrankInputError } from "../checks/errors";
import { describe } from "../checks/validate";
import { aggregate, BaseRankMetric, cutArrays } from "./base";
import { CandidateSet, candidatesArg } from "./candidates";
import { getMetric } from "./catalogue";
import { DerivedMetric } from "./derived";
import { numCandidatesArg, ranksArg, ranksShape, weightsArg } from "./input";
import type { RankMetric } from "./types";

/** The root base metric and the chain of derived metrics above it. */
function unwrap(m: RankMetric): BaseRankMetric {
  let x: RankMetric = m;
  while (x instanceof DerivedMetric) x = x.base;
  if (!(x instanceof BaseRankMetric)) throw new KgrankInputError("metrics", `${describe(m)} is not a kgrank metric`);
  return x;
}

/**
 * { key: value } for every metric (names or metric objects), from one pass over the ranks. `numCandidates` may be a
 * CandidateSet from prepareCandidates() (weights included), so several calls over the same tasks (e.g. each rank
 * type) share its memoised expectations and variances.
 */
export function metricValues(
  metrics: readonly (string | RankMetric)[],
  ranks: ArrayLike<number>,
  numCandidates?: ArrayLike<number> | CandidateSet,
  weights?: ArrayLike<number>,
): Record<string, number> {
  if (!Array.isArray(metrics) || metrics.length === 0) {
    throw new KgrankInputError(
      "metrics",
      `must be a non-empty array of metric names or metrics, got ${describe(metrics)}`,
    );
  }
  const resolved = metrics.map((m) => (typeof m === "string" ? getMetric(m) : m));
  let prepared: CandidateSet | null = null;
  if (numCandidates instanceof CandidateSet) {
    prepared = candidatesArg(numCandidates, weights, true, "metricValues");
    if ((ranks as ArrayLike<number>)?.length !== prepared.length) {
      throw new KgrankInputError(
        "numCandidates",
        `the candidate set has ${prepared.length} tasks but there are ${(ranks as ArrayLike<number>)?.length} ranks`,
      );
    }
    weights = prepared.weights ?? undefined;
  }
  const n =
    numCandidates === undefined
      ? undefined
      : prepared
        ? prepared.numCandidates
        : numCandidatesArg(numCandidates, (ranks as ArrayLike<number>)?.length);
  const r = n ? ranksArg(ranks, n) : ranksShape(ranks);
  // Metrics without weight support (variance, std, count) read unweighted sums of the same pass, as PyKEEN's ignore weights.
  const w = weightsArg(weights, r.length, true, "metricValues");
  const bases = resolved.map(unwrap);
  let flags = 0;
  for (const b of bases) flags |= b.flags;
  const { ks, truncatedKs } = cutArrays(bases.flatMap((b) => b.cuts));
  const sums = aggregate(r, w, ks, truncatedKs, flags);
  const needCandidates = resolved.some((m) => m.needsCandidates);
  if (needCandidates && !n) {
    throw new KgrankInputError(
      "numCandidates",
      `${resolved.find((m) => m.needsCandidates)!.key} needs the number of candidates; pass numCandidates`,
    );
  }
  const candidates = prepared ?? (n ? candidatesArg(n, w ?? undefined, true, "metricValues") : null);
  const out: Record<string, number> = {};
  resolved.forEach((m, i) => {
    // Apply the derived chain from the base up.
    const chain: DerivedMetric[] = [];
    for (let x: RankMetric = m; x instanceof DerivedMetric; x = x.base) chain.unshift(x);
    let value = bases[i]!.fromSums(sums);
    for (const d of chain) {
      const c = d.derivation === "affine" ? d.coefficients([]) : d.coefficients(candidates!);
      value = c.scale * value + c.offset;
    }
    out[m.key] = value;
  });
  return out;
}
