/**
 * Estimates of full-ranking metrics from a sample of tasks (src/evaluation/task-sample.ts): the draw (seeded, without
 * replacement, proportional by relation with its minimums), the estimator checked where the answer is known (the
 * whole population as the "sample": the library's own values, zero width; a brute-force enumeration of every sample
 * of a tiny population: unbiased, and its variance formula equal to the true variance of the estimator). The normal
 * quantile against scipy's. The intervals' coverage on FB15k-237: test/task-sample-coverage.test.ts.
 */
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";

import { normalQuantile } from "../src/numeric/normal";
import {
  estimateFull,
  FrequencyBaseline,
  KgrankInputError,
  loadDataset,
  RankEvaluator,
  sampleTasks,
  type TaskSample,
} from "../src/index";
import { expectInputError } from "./helpers/errors";

const umls = loadDataset("umls");
const { train, valid, test } = umls.splits;
const filterTriples = [train, valid, test];
const baseline = new FrequencyBaseline(train, umls.numEntities, umls.numRelations);

/** The sample's tasks ranked by the baseline (filtered), as a user would. */
function rankSample(
  s: TaskSample,
  ds: { numEntities: number; numRelations: number } = umls,
  model = baseline,
  filter = filterTriples,
) {
  const ev = new RankEvaluator({
    numEntities: ds.numEntities,
    numRelations: ds.numRelations,
    filterTriples: filter,
    sides: s.sides,
  });
  for (const side of ["head", "tail"] as const) {
    if (s[side].length > 0) ev.addSync({ triples: s[side], side, scores: model.scoreBatch(s[side], side) });
  }
  return ev.finalize();
}

describe("sampleTasks", () => {
  it("draws the asked number of distinct tasks, the same for a seed, another for another seed", () => {
    const a = sampleTasks({ triples: test, size: 300, seed: 4 });
    expect(a.sampled).toBe(300);
    expect(a.population).toBe(2 * (test.length / 3));
    expect(a.head.length / 3 + a.tail.length / 3).toBe(300);
    for (const side of ["head", "tail"] as const) {
      const rows = Array.from(a.rows[side]);
      expect(new Set(rows).size).toBe(rows.length);
      expect(rows).toEqual([...rows].sort((x, y) => x - y));
      rows.forEach((r, i) =>
        expect(Array.from(a[side].subarray(3 * i, 3 * i + 3))).toEqual(Array.from(test.subarray(3 * r, 3 * r + 3))),
      );
    }
    expect(sampleTasks({ triples: test, size: 300, seed: 4 })).toEqual(a);
    expect(sampleTasks({ triples: test, size: 300, seed: 5 }).rows).not.toEqual(a.rows);
    expect(sampleTasks({ triples: test, size: 0.1 }).sampled).toBe(Math.ceil(0.1 * a.population));
    // A fraction whose product is whole up to rounding (0.07 x 100 = 7.000000000000001) is that whole number.
    expect(sampleTasks({ triples: test.subarray(0, 150), size: 0.07 }).sampled).toBe(7);
    expect(sampleTasks({ triples: test, size: 50, sides: "tail" })).toMatchObject({
      sides: "tail",
      population: test.length / 3,
    });
  });

  it("stratified by relation: proportional, at least 2 per relation that has 2, all of one that has 1", () => {
    const s = sampleTasks({ triples: test, size: 400, seed: 1, stratify: "relation" });
    const total = s.population;
    for (const st of s.strata) {
      expect(st.sampled).toBeLessThanOrEqual(st.population);
      expect(st.sampled).toBeGreaterThanOrEqual(Math.min(2, st.population));
      expect(Math.abs(st.sampled - (400 * st.population) / total)).toBeLessThanOrEqual(2);
    }
    expect(s.sampled).toBe(s.strata.reduce((a, st) => a + st.sampled, 0));
    expect(s.sampled).toBeGreaterThanOrEqual(400);
  });

  it("refuses bad options with the argument named", () => {
    expectInputError(() => sampleTasks({ triples: test, size: 1 }), "size");
    expectInputError(() => sampleTasks({ triples: test, size: 1e9 }), "size");
    expectInputError(() => sampleTasks({ triples: test, size: 1.5 }), "size");
    expectInputError(() => sampleTasks({ triples: test, size: 10, stratify: "side" as never }), "stratify");
    expectInputError(() => sampleTasks({ triples: test, size: 10, sides: "left" as never }), "sides");
    expectInputError(() => sampleTasks({ triples: test, size: 10, seed: -1 }), "seed");
    expectInputError(() => sampleTasks({ triples: [1, 2] as never, size: 10 }), "triples");
    expectInputError(() => sampleTasks({ triples: test, size: 10, extra: 1 } as never), "options");
  });
});

describe("estimateFull", () => {
  it("with every task sampled: the library's values (1e-12 relative) and intervals of zero width", () => {
    const all = sampleTasks({ triples: test, size: 2 * (test.length / 3), stratify: "relation" });
    const results = rankSample(all);
    const est = estimateFull(results, all);
    const flat = results.toFlatObject();
    let compared = 0;
    for (const [key, v] of Object.entries(est.values)) {
      const want = flat[key];
      expect(want, key).toBeDefined();
      expect(Math.abs(v.estimate - want!), key).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(want!)));
      expect(v.standardError, key).toBe(0);
      compared++;
    }
    expect(compared).toBe(3 * 6 + 1 + 1 + 1 + 4); // MR, MRR, 4 hits per rank type; AMR, AMRI, adjusted MRR, 4 adjusted hits
  });

  it("over every sample of a tiny population: unbiased, and the variance formula is the estimator's true variance", () => {
    // 6 triples, both sides: 12 tasks; every sample of 4 (495 of them) enumerated through sampleTasks' own design by
    // building the TaskSample directly, so the check is of the estimator, not of the draw.
    const small = test.subarray(0, 18);
    const population = rankSample(sampleTasks({ triples: small, size: 12 }));
    const full = population.toFlatObject();
    const pop = population.tasks();
    const key = "both.realistic.inverse_harmonic_mean_rank";
    const estimates: number[] = [];
    const variances: number[] = [];
    const choose = (k: number, from: number, acc: number[]): void => {
      if (acc.length === k) {
        const rows = { head: [] as number[], tail: [] as number[] };
        for (const t of acc) (t < 6 ? rows.head : rows.tail).push(t % 6);
        const gather = (r: number[]) => Int32Array.from(r.flatMap((i) => Array.from(small.subarray(3 * i, 3 * i + 3))));
        const s: TaskSample = {
          head: gather(rows.head),
          tail: gather(rows.tail),
          rows: { head: Int32Array.from(rows.head), tail: Int32Array.from(rows.tail) },
          sides: "both",
          population: 12,
          sampled: k,
          stratify: null,
          strata: [{ key: -1, population: 12, sampled: k }],
        };
        const e = estimateFull(rankSample(s), s).values[key]!;
        estimates.push(e.estimate);
        variances.push(e.standardError ** 2);
        return;
      }
      for (let t = from; t < 12; t++) choose(k, t + 1, [...acc, t]);
    };
    choose(4, 0, []);
    expect(estimates).toHaveLength(495);
    const mean = estimates.reduce((a, b) => a + b, 0) / estimates.length;
    expect(Math.abs(mean - full[key]!)).toBeLessThanOrEqual(1e-12);
    const trueVariance = estimates.reduce((a, b) => a + (b - mean) ** 2, 0) / estimates.length;
    const meanFormula = variances.reduce((a, b) => a + b, 0) / variances.length;
    // The finite-population corrected s^2 / n is unbiased for the estimator's variance under simple random sampling.
    expect(Math.abs(meanFormula - trueVariance)).toBeLessThanOrEqual(1e-12);
    expect(pop.side).toHaveLength(12);
  });

  it("refuses results of other tasks, or weighted, with the argument named", () => {
    const s = sampleTasks({ triples: test, size: 100, seed: 2, stratify: "relation" });
    const other = sampleTasks({ triples: test, size: 100, seed: 3, stratify: "relation" });
    expectInputError(() => estimateFull(rankSample(other), s), "results");
    const fewer = sampleTasks({ triples: test, size: 60, seed: 2 });
    expectInputError(() => estimateFull(rankSample(fewer), s), "results");
    expectInputError(() => estimateFull(rankSample(s), s, { confidenceLevel: 1.5 }), "confidenceLevel");
    expectInputError(() => estimateFull(rankSample(s), s, { ks: [0] }), "ks[0]");
    const err = (() => {
      try {
        estimateFull(rankSample(other), s);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(KgrankInputError);
  });
});

describe("sampleTasks and estimateFull under random inputs (property)", () => {
  it("any split, size, seed and design: a KgrankInputError or a valid sample whose estimates bracket themselves", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(5), fc.nat(3), fc.nat(5)), { maxLength: 30 }),
        fc.oneof(fc.integer({ min: -2, max: 70 }), fc.double({ min: -0.5, max: 1.5, noNaN: true })),
        fc.nat(1000),
        fc.constantFrom(undefined, "relation" as const),
        fc.constantFrom("both" as const, "head" as const, "tail" as const),
        (rows, size, seed, stratify, sides) => {
          const triples = Int32Array.from(rows.flat());
          let s: TaskSample;
          try {
            s = sampleTasks({ triples, size, seed, sides, ...(stratify ? { stratify } : {}) });
          } catch (e) {
            expect(e).toBeInstanceOf(KgrankInputError);
            return;
          }
          for (const side of ["head", "tail"] as const) expect(new Set(s.rows[side]).size).toBe(s.rows[side].length);
          expect(s.sampled).toBe(s.rows.head.length + s.rows.tail.length);
          const ev = new RankEvaluator({ numEntities: 6, sides });
          for (const side of ["head", "tail"] as const) {
            const k = s[side].length / 3;
            if (k === 0) continue;
            const ranks = Float64Array.from({ length: k }, (_, i) => 1 + ((i * 7 + seed) % 6));
            ev.addRanks({
              side,
              realistic: ranks,
              optimistic: ranks,
              pessimistic: ranks,
              numCandidates: new Float64Array(k).fill(6),
              triples: s[side],
            });
          }
          const results = ev.finalize();
          const flat = results.toFlatObject();
          for (const [key, v] of Object.entries(estimateFull(results, s).values)) {
            // Undefined where the library's value is (an adjusted Hits@k with k >= every candidate count: 0 / 0).
            if (Number.isNaN(flat[key])) continue;
            expect(Number.isFinite(v.estimate), key).toBe(true);
            expect(v.lower <= v.estimate && v.estimate <= v.upper, key).toBe(true);
          }
        },
      ),
      { numRuns: 300, seed: 28 },
    );
  });
});

describe("normalQuantile", () => {
  it("equals scipy.stats.norm.ppf to 2 ulp at the levels intervals use and in both tails", () => {
    const want: [number, number][] = [
      [0.975, 1.959963984540054],
      [0.995, 2.5758293035489004],
      [0.95, 1.6448536269514722],
      [0.5, 0],
      [0.025, -1.9599639845400545],
      [1e-10, -6.361340902404056],
      [0.9999999, 5.199337582290661],
    ];
    for (const [p, z] of want)
      expect(Math.abs(normalQuantile(p) - z)).toBeLessThanOrEqual(2 * Number.EPSILON * Math.max(1, Math.abs(z)));
    expect([normalQuantile(0), normalQuantile(1), normalQuantile(-0.1)]).toEqual([-Infinity, Infinity, NaN]);
  });
});
