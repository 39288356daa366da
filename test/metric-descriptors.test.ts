/**
 * Every catalogue metric's descriptor is complete (a per-task quantity or an explicit "none", as compare and the sum
 * forms read it: no list keyed by metric name exists elsewhere), and for every metric whose value is a mean of its
 * per-task quantity up to a map fixed by the candidates (MR, MRR, Hits@k, MRR@k and their adjusted and z-scored forms)
 * compare's two ways to a randomization replicate agree: the per-task path (the sign-flipped sum of the per-task
 * differences, times the observed slope) and the replicate path (each run's total with the swapped tasks' values
 * exchanged, finished by the sum form). Values come from the metric kernels, so this runs on each backend.
 */
import { describe, expect, it } from "vitest";

import { compareRuns, listMetrics, metricValues, prepareCandidates, RankEvaluator } from "../src/index";
import { BaseRankMetric } from "../src/metrics/base";
import { DerivedMetric } from "../src/metrics/derived";
import { sumForm } from "../src/metrics/sum-form";
import type { RankMetric } from "../src/metrics/types";
import { backendLabel } from "./helpers/backend";

function baseOf(m: RankMetric): BaseRankMetric {
  let x = m;
  while (x instanceof DerivedMetric) x = x.base;
  expect(x).toBeInstanceOf(BaseRankMetric);
  return x as BaseRankMetric;
}

/** A small deterministic generator (no shared code with src/). */
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 4294967296;
}

const QUANTITIES = ["rank", "logRank", "inverseRank", "hits", "truncatedInverseRank", "median"];
const means = listMetrics().filter((m) => baseOf(m).perTask?.mean === true);

describe(`metric descriptors on ${backendLabel}`, () => {
  it("lists metrics whose value is a mean of a per-task quantity, MRR@10 among them", () => {
    expect(means.map((m) => m.key)).toEqual(
      expect.arrayContaining([
        "arithmetic_mean_rank",
        "adjusted_arithmetic_mean_rank_index",
        "inverse_harmonic_mean_rank",
        "z_inverse_harmonic_mean_rank",
        "hits_at_3",
        "inverse_harmonic_mean_rank_at_10",
        "adjusted_inverse_harmonic_mean_rank_at_10",
        "z_inverse_harmonic_mean_rank_at_10",
      ]),
    );
  });

  const n = 60;
  const next = lcg(7);
  const numCandidates = Array.from({ length: n }, (_, i) => 5 + (i % 13));
  // Ranks with ties (half-integers), some above every cut-off.
  const a = numCandidates.map((c) => 1 + Math.floor(next() * (2 * c - 1)) / 2);
  const b = numCandidates.map((c) => 1 + Math.floor(next() * (2 * c - 1)) / 2);
  const candidates = prepareCandidates(numCandidates);

  it.each(listMetrics().map((m) => [m.key, m] as const))("%s: its descriptor is complete", (_key, m) => {
    const base = baseOf(m);
    expect(base.perTask, "perTask is declared: a form or null").not.toBeUndefined();
    const f = sumForm(m);
    if (base.perTask === null) {
      expect(f).toBeNull();
      return;
    }
    expect(QUANTITIES).toContain(base.perTask.quantity);
    expect(f).not.toBeNull();
    // The value from the total of the per-task quantity equals the kernels' value (the median: from the median).
    const values = metricValues([m], a, candidates);
    const q = a.map(base.perTask.of);
    // The median's "total" is the median rank.
    const total = base.perTask.quantity === "median" ? metricValues(["median_rank"], a)["median_rank"]! : sum(q);
    const want = values[m.key]!;
    const got = f!.value(total, n, f!.coefficients(candidates));
    expect(Math.abs(got - want)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(want)));
    // Bases that are means say so; their differences follow from the difference of the totals.
    expect(f!.difference !== null).toBe(base.perTask.mean);
  });

  it.each(means.map((m) => [m.key, m] as const))(
    "%s: compare's per-task replicate equals its sum-form replicate",
    (_key, m) => {
      const f = sumForm(m)!;
      const c = f.coefficients(candidates);
      const observed = metricValues([m], b, candidates)[m.key]! - metricValues([m], a, candidates)[m.key]!;
      const qa = a.map(f.perTask);
      const qb = b.map(f.perTask);
      const d = qb.map((x, i) => x - qa[i]!);
      const slope = observed / (sum(d) / n);
      const swaps = lcg(11);
      for (let s = 0; s < 20; s++) {
        const swapped = d.map(() => swaps() < 0.5);
        const moved = sum(d.filter((_, i) => swapped[i]));
        const perTask = ((sum(d) - 2 * moved) / n) * slope;
        const bySumForm = f.value(sum(qb) - moved, n, c) - f.value(sum(qa) + moved, n, c);
        expect(Math.abs(perTask - bySumForm)).toBeLessThanOrEqual(1e-10 * Math.max(1, Math.abs(observed)));
        expect(Math.abs(f.difference!(sum(qb) - sum(qa) - 2 * moved, n, c) - bySumForm)).toBeLessThanOrEqual(
          1e-10 * Math.max(1, Math.abs(observed)),
        );
      }
    },
  );

  it("compareRuns takes the per-task path (t-test, Wilcoxon) for every mean metric, MRR@10 included", () => {
    const run = (ranks: number[]) => {
      const ev = new RankEvaluator({ numEntities: 40, numRelations: 1 });
      ev.addRanks({ side: "tail", realistic: ranks, numCandidates });
      return ev.finalize();
    };
    const keys = means.map((m) => m.key);
    const cmp = compareRuns([run(a), run(b)], { samples: 200, seed: 3, metrics: keys });
    expect(cmp.rows.map((r) => r.metric)).toEqual(keys);
    for (const r of cmp.rows) {
      expect(r.pTTest, r.metric).not.toBeNull();
      expect(r.difference).toBeCloseTo(r.valueB - r.valueA, 14);
      expect(r.lower, r.metric).toBeLessThanOrEqual(r.upper);
    }
    // The plain mean's bootstrap (the drawn tasks' d) and its adjusted form's (sum form, moments of the drawn tasks)
    // bracket the observed difference.
    const mrr10 = cmp.rows.find((r) => r.metric === "inverse_harmonic_mean_rank_at_10")!;
    expect(mrr10.lower).toBeLessThanOrEqual(mrr10.difference);
    expect(mrr10.upper).toBeGreaterThanOrEqual(mrr10.difference);
  });
});

function sum(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return s;
}
