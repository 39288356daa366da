/** Monte-Carlo estimate() and the seeded rank generators: determinism, agreement with closed forms, validation. */
import { describe, expect, it } from "vitest";

import { generateNumCandidatesAndRanks, generateRanks, getMetric, KgrankInputError } from "../src/index";

const N = [10, 20, 50, 100, 3, 7, 1000, 2];

describe("generateRanks", () => {
  it("is reproducible for a seed, differs across seeds, and stays in 1..N_i as integers", () => {
    const a = generateRanks(N, { seed: 5 });
    expect(Array.from(generateRanks(N, { seed: 5 }))).toEqual(Array.from(a));
    expect(Array.from(generateRanks(N, { seed: 6 }))).not.toEqual(Array.from(a));
    a.forEach((x, i) => {
      expect(Number.isInteger(x)).toBe(true);
      expect(x).toBeGreaterThanOrEqual(1);
      expect(x).toBeLessThanOrEqual(N[i]!);
    });
  });

  it("is uniform: the mean rank over many tasks is close to (N+1)/2 (5 sigma)", () => {
    const many = new Float64Array(200_000).fill(1000);
    const r = generateRanks(many, { seed: 1 });
    const mean = r.reduce((a, b) => a + b, 0) / r.length;
    const sigma = Math.sqrt((1000 * 1000 - 1) / 12 / r.length);
    expect(Math.abs(mean - 500.5)).toBeLessThan(5 * sigma);
  });

  it("generateNumCandidatesAndRanks returns N_i in 1..maxN and ranks within them", () => {
    const { numCandidates, ranks } = generateNumCandidatesAndRanks(1000, 50, { seed: 2 });
    expect(numCandidates.length).toBe(1000);
    numCandidates.forEach((n, i) => {
      expect(n).toBeGreaterThanOrEqual(1);
      expect(n).toBeLessThanOrEqual(50);
      expect(ranks[i]).toBeLessThanOrEqual(n);
    });
    expect(Math.max(...numCandidates)).toBe(50);
  });

  it("validates its arguments", () => {
    expect(() => generateRanks(N, { seed: -1 })).toThrow(/options.seed/);
    expect(() => generateRanks([0])).toThrow(/numCandidates/);
    expect(() => generateNumCandidatesAndRanks(0, 5)).toThrow(/^n: /);
    expect(() => generateNumCandidatesAndRanks(5, 1.5)).toThrow(/maxNumCandidates/);
  });
});

describe("estimate()", () => {
  it("agrees with the closed forms within its 99.9% bootstrap intervals (mr, mrr, gmr, hits@3, amri, zmrr)", () => {
    for (const q of ["mr", "mrr", "gmr", "hits@3", "amri", "zmrr"]) {
      const m = getMetric(q);
      const est = m.estimate({ numCandidates: N, numSamples: 4000, seed: 11, confidenceLevel: 0.999 });
      const e = m.expectedValue(N);
      const v = m.variance(N);
      expect(est.expectedValue.lower).toBeLessThanOrEqual(e);
      expect(est.expectedValue.upper).toBeGreaterThanOrEqual(e);
      expect(est.variance.lower).toBeLessThanOrEqual(v);
      expect(est.variance.upper).toBeGreaterThanOrEqual(v);
    }
  });

  it("works for metrics without closed forms (hmr, median, mad, weighted median) and is reproducible", () => {
    for (const q of ["hmr", "median_rank", "mad", "std", "igmr", "iamr"]) {
      const a = getMetric(q).estimate({ numCandidates: N, numSamples: 200, seed: 3 });
      const b = getMetric(q).estimate({ numCandidates: N, numSamples: 200, seed: 3 });
      expect(a).toEqual(b);
      expect(a.expectedValue.lower).toBeLessThanOrEqual(a.expectedValue.value);
      expect(a.expectedValue.upper).toBeGreaterThanOrEqual(a.expectedValue.value);
    }
    const wm = getMetric("median_rank").estimate({ numCandidates: N, weights: N.map((x) => x), numSamples: 200 });
    expect(wm.expectedValue.value).toBeGreaterThan(1);
  });

  it("validates its options", () => {
    const m = getMetric("mrr");
    expect(() => m.estimate({ numCandidates: N, numSamples: 1 })).toThrow(/numSamples/);
    expect(() => m.estimate({ numCandidates: N, numSamples: 10, seed: 1.5 })).toThrow(/seed/);
    expect(() => m.estimate({ numCandidates: N, numSamples: 10, confidenceLevel: 1 })).toThrow(/confidenceLevel/);
    expect(() => m.estimate({ numCandidates: [], numSamples: 10 })).toThrow(KgrankInputError);
  });
});
