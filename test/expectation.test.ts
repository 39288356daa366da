/**
 * Closed-form expectations and variances (native/core/expectation.cpp, src/fallback/expectation.ts) against exact
 * BigInt rationals, brute-force enumeration of every rank vector, and 80-digit mpmath fixtures
 * (scripts/metrics-fixtures.py -> test/fixtures/metrics-reference.json).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

import fc from "fast-check";
import { describe, expect, it } from "vitest";

import { kernels, nativeAddon } from "../src/backend/backend";
import { type CandidateHistogram, ClosedMetricCode } from "../src/contract/kernels";
import { getMetric, NoClosedFormError } from "../src/index";
import { bruteForceMoments, exactMoments, refValue, relErr } from "./helpers/metrics-reference";

const fixtures = JSON.parse(readFileSync(join(__dirname, "fixtures", "metrics-reference.json"), "utf8"));

describe("closed forms match exact rationals (BigInt) within 1e-12 relative", () => {
  const cases: { N: number[]; w?: number[] }[] = [
    { N: [1] },
    { N: [2] },
    { N: [1, 1, 1] },
    { N: [5, 17, 17, 300, 2] },
    { N: [5, 17, 17, 300, 2], w: [1, 0.5, 3, 2.5, 7] },
    { N: [1000, 999, 1, 64], w: [2, 1, 1, 4] },
  ];
  for (const { N, w } of cases) {
    for (const [query, kind, k] of [
      ["mr", "mr", 0],
      ["mrr", "mrr", 0],
      ["hits@1", "hits", 1],
      ["hits@10", "hits", 10],
    ] as const) {
      it(`${query} on N=[${N}]${w ? ` w=[${w}]` : ""}`, () => {
        const m = getMetric(query);
        const [e, v] = exactMoments(kind, N, w, k);
        expect(relErr(m.expectedValue(N, w), e.toNumber())).toBeLessThanOrEqual(1e-12);
        expect(relErr(m.variance(N, w), v.toNumber())).toBeLessThanOrEqual(1e-12);
      });
    }
  }

  it("mr for N up to 1e8 (exact rational reference), weighted", () => {
    const N = [1e8, 99999999, 3, 12345678];
    const w = [1, 2, 3, 0.5];
    const [e, v] = exactMoments("mr", N, w);
    const m = getMetric("mr");
    expect(relErr(m.expectedValue(N, w), e.toNumber())).toBeLessThanOrEqual(1e-12);
    expect(relErr(m.variance(N, w), v.toNumber())).toBeLessThanOrEqual(1e-12);
  });

  it("property: random small candidate sets and integer weights, mr/mrr/hits@3 (1e-12 relative)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 9 })), {
          minLength: 1,
          maxLength: 12,
        }),
        (tasks) => {
          const N = tasks.map((t) => t[0]);
          const w = tasks.map((t) => t[1]);
          for (const [query, kind, k] of [
            ["mr", "mr", 0],
            ["mrr", "mrr", 0],
            ["hits@3", "hits", 3],
          ] as const) {
            const [e, v] = exactMoments(kind, N, w, k);
            const m = getMetric(query);
            expect(relErr(m.expectedValue(N, w), e.toNumber())).toBeLessThanOrEqual(1e-12);
            const vv = v.toNumber();
            if (vv === 0) expect(m.variance(N, w)).toBe(0);
            else expect(relErr(m.variance(N, w), vv)).toBeLessThanOrEqual(1e-12);
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe("closed forms match brute-force enumeration of all rank vectors (1e-12 relative)", () => {
  const sets: { N: number[]; w?: number[] }[] = [
    { N: [3, 4, 5] },
    { N: [2, 7, 1, 6] },
    { N: [3, 4, 5], w: [1, 2, 0.5] },
    { N: [9, 2, 5, 4], w: [3, 1, 1, 2] },
  ];
  for (const { N, w } of sets) {
    for (const query of ["mr", "mrr", "gmr", "hits@2", "amri", "agmri", "amrr", "amr", "ah@2"]) {
      it(`${query} on N=[${N}]${w ? ` w=[${w}]` : ""}`, () => {
        const m = getMetric(query);
        const [e, v] = bruteForceMoments((r) => m.value(r, N, w), N);
        const tol = (x: number, ref: number) =>
          Math.abs(ref) < 1e-14 ? Math.abs(x - ref) < 1e-13 : relErr(x, ref) <= 1e-12;
        expect(tol(m.expectedValue(N, w), e)).toBe(true);
        expect(tol(m.variance(N, w), v)).toBe(true);
      });
    }
  }

  it("geometric mean with weights uses normalised weights as exponents", () => {
    const N = [4, 6];
    const w = [1, 3];
    const [e] = bruteForceMoments((r) => Math.exp((1 * Math.log(r[0]!) + 3 * Math.log(r[1]!)) / 4), N);
    expect(relErr(getMetric("gmr").expectedValue(N, w), e)).toBeLessThanOrEqual(1e-12);
    // the reference value function agrees with the metric's value on one vector
    expect(
      relErr(getMetric("gmr").value([2, 5], N, w), refValue("geometric_mean_rank", [2, 5], w)),
    ).toBeLessThanOrEqual(1e-15);
  });
});

describe("large candidate counts against 80-digit references", () => {
  it("harmonic numbers H_1, H_2 from tables and asymptotics (1e-15 relative, n up to 1e12)", () => {
    for (const row of fixtures.harmonic) {
      expect(relErr(kernels().harmonic(row.n, 1), Number(row.h1))).toBeLessThanOrEqual(1e-15);
      expect(relErr(kernels().harmonic(row.n, 2), Number(row.h2))).toBeLessThanOrEqual(1e-15);
    }
  });

  it("mrr E and Var for N up to 1e8, weighted and unweighted (1e-12 relative)", () => {
    for (const c of fixtures.mrr) {
      const m = getMetric("mrr");
      expect(relErr(m.expectedValue(c.numCandidates, c.weights), Number(c.expectation))).toBeLessThanOrEqual(1e-12);
      expect(relErr(m.variance(c.numCandidates, c.weights), Number(c.variance))).toBeLessThanOrEqual(1e-12);
    }
  });

  it("gmr E and Var, including m = 1e6 ranks and N up to 1e6 (1e-12 relative)", () => {
    for (const c of fixtures.gmr) {
      const N: number[] = [];
      const w: number[] = [];
      c.groups.forEach(([n, count]: [number, number], g: number) => {
        for (let i = 0; i < count; i++) {
          N.push(n);
          w.push(c.weights ? c.weights[g] : 1);
        }
      });
      const m = getMetric("gmr");
      const weights = c.weights ? w : undefined;
      expect(relErr(m.expectedValue(N, weights), Number(c.expectation))).toBeLessThanOrEqual(1e-12);
      expect(relErr(m.variance(N, weights), Number(c.variance))).toBeLessThanOrEqual(1e-12);
    }
  });
});

describe("edge cases of the closed forms", () => {
  it("N_i = 1 everywhere: variance exactly 0 and expectation 1 for mr, mrr, gmr, hits", () => {
    const N = [1, 1, 1, 1];
    for (const q of ["mr", "mrr", "gmr", "hits@1", "hits@10"]) {
      expect(getMetric(q).variance(N)).toBe(0);
      expect(getMetric(q).expectedValue(N)).toBe(1);
    }
  });

  it("k larger than every N_i: hits has E = 1 and Var = 0", () => {
    expect(getMetric("hits@100").expectedValue([3, 50])).toBe(1);
    expect(getMetric("hits@100").variance([3, 50])).toBe(0);
  });

  it("metrics without closed forms throw NoClosedFormError naming estimate()", () => {
    for (const q of ["hmr", "igmr", "iamr", "std", "var", "mad", "inverse_median_rank", "count"]) {
      expect(() => getMetric(q).expectedValue([3, 4])).toThrow(NoClosedFormError);
      expect(() => getMetric(q).variance([3, 4])).toThrow(/estimate/);
    }
  });

  it("invalid candidate counts and weights throw KgrankInputError naming the argument", () => {
    const m = getMetric("mrr");
    expect(() => m.expectedValue([])).toThrow(/numCandidates: is empty/);
    expect(() => m.expectedValue([3, 2.5])).toThrow(/numCandidates: element 1 is 2.5/);
    expect(() => m.expectedValue([3, 0])).toThrow(/numCandidates: element 1 is 0/);
    expect(() => m.expectedValue([3, NaN])).toThrow(/numCandidates: element 1 is NaN/);
    expect(() => m.expectedValue([3, 4], [0, 0])).toThrow(/weights: every weight is 0/);
    expect(() => m.expectedValue([3, 4], [1, -1])).toThrow(/weights: element 1 is -1/);
    expect(() => m.expectedValue([3, 4], [1, NaN])).toThrow(/weights: element 1 is NaN/);
    expect(() => m.expectedValue([3, 4], [1])).toThrow(/weights: must have 2 elements/);
  });
});

describe("tiny candidate sets skip the addon's histogram (src/backend/native-metrics.ts: <= 64 tasks, every N <= 256, unweighted)", () => {
  const addon = nativeAddon();
  it.skipIf(addon === null)(
    "counted at the binding: tiny sets never call it, one task or candidate more does; the values are the same",
    () => {
      const a = addon as unknown as Record<string, (...args: unknown[]) => unknown>;
      const original = a.candidateHistogram!;
      let calls = 0;
      a.candidateHistogram = (...args: unknown[]) => {
        calls++;
        return original(...args);
      };
      try {
        const mrr = getMetric("mrr");
        const cases: [string, number[], number[] | undefined, number][] = [
          ["10 tasks, N <= 11", Array.from({ length: 10 }, (_, i) => 5 + (i % 7)), undefined, 0],
          ["64 tasks, N = 256", new Array<number>(64).fill(256), undefined, 0],
          ["65 tasks", new Array<number>(65).fill(3), undefined, 1],
          ["one N = 257", [3, 257], undefined, 1],
          ["weighted", [3, 4], [1, 2], 1],
        ];
        for (const [name, N, w, want] of cases) {
          calls = 0;
          const e = mrr.expectedValue(N, w);
          expect(calls, name).toBe(want);
          // The fallback's histogram holds the same exact counts as the addon's, so the value is the same to the bit.
          const h = original({
            numCandidates: Float64Array.from(N),
            weights: w ? Float64Array.from(w) : undefined,
            threads: 1,
          }) as CandidateHistogram;
          expect(e, name).toBe(kernels().histogramMoments(ClosedMetricCode.InverseHarmonicMean, h, N.length, 0)[0]);
        }
      } finally {
        a.candidateHistogram = original;
      }
    },
  );
});
