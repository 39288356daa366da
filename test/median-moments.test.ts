/**
 * E and Var of the median rank (Kernels.medianMoments: native/core/median_moments.cpp and its twin
 * src/fallback/median-moments.ts), on the backend of this vitest project: against brute-force enumeration of every rank
 * vector with BigInt rationals (odd and even n), an independent float64 DP over the full distribution
 * (helpers/median-dp.ts, its values in a fixture: n = 1,000 / 1,001 / 5,001, mixed N; even n through the joint law of
 * the two middle order statistics), exact
 * rationals for small odd n with N up to 2^31-1 (scripts/median-fixtures.py -> test/fixtures/median-reference.json),
 * closed forms (n = 1, 2, 3 equal N), the cost bound for huge N (even n: an evaluation count that must not grow with
 * max N beyond a small factor). parity.test.ts checks native = fallback within 1e-12 relative.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

import { describe, expect, it } from "vitest";

import { kernels } from "../src/backend/backend";
import { getMetric, NoClosedFormError } from "../src";
import { medianMoments } from "../src/metrics/median";
import { costRatio } from "./helpers/cost";
import { lcg, medianDpCases, readMedianDpFixture } from "./helpers/median-dp";
import { relErr } from "./helpers/metrics-reference";

const fixtures = JSON.parse(readFileSync(join(__dirname, "fixtures", "median-reference.json"), "utf8")) as {
  cases: { N: number[]; expectation: string; variance: string }[];
};

/** Exact E and Var of the conventional median over all prod N_i rank vectors, as BigInt rationals. */
function bruteForceMedian(N: number[]): { e: number; v: number } {
  const n = N.length;
  let total = 0n;
  let s1 = 0n; // sum of 2 * median
  let s2 = 0n; // sum of (2 * median)^2
  const r = new Array<number>(n).fill(1);
  for (;;) {
    const s = [...r].sort((a, b) => a - b);
    const twice = n % 2 ? 2 * s[(n - 1) / 2]! : s[n / 2 - 1]! + s[n / 2]!;
    total++;
    s1 += BigInt(twice);
    s2 += BigInt(twice * twice);
    let i = 0;
    while (i < n && r[i] === N[i]) r[i++] = 1;
    if (i === n) break;
    r[i]!++;
  }
  return { e: Number(s1) / Number(2n * total), v: Number(s2 * total - s1 * s1) / Number(4n * total * total) };
}

const kernelMoments = (N: ArrayLike<number>) => {
  const m = kernels().medianMoments(Float64Array.from(N));
  return { e: m[0]!, v: m[1]! };
};

const TINY: number[][] = [
  [1],
  [2],
  [7],
  [3, 5],
  [2, 2],
  [1, 1],
  [1, 2, 3],
  [4, 4, 4],
  [2, 3, 5, 7],
  [6, 1, 3, 2],
  [3, 3, 3, 3, 3],
  [2, 5, 3, 4, 2, 6],
  [1, 9, 1, 9],
  [8, 8, 1, 2, 3],
  [5, 4, 3, 2, 1, 6, 2],
  [1, 1, 1, 5],
  [9, 9, 9, 9, 9, 9],
];

describe("median E and Var equal brute-force enumeration (BigInt), 1e-12 relative", () => {
  for (const N of TINY) {
    it(`N = [${N.join(",")}]`, () => {
      const m = kernelMoments(N);
      const ref = bruteForceMedian(N);
      expect(relErr(m.e, ref.e)).toBeLessThanOrEqual(1e-12);
      if (ref.v === 0) expect(Math.abs(m.v)).toBeLessThanOrEqual(1e-13);
      else expect(relErr(m.v, ref.v)).toBeLessThanOrEqual(1e-12);
      // through the metric API
      expect(relErr(getMetric("median_rank").expectedValue(N), ref.e)).toBeLessThanOrEqual(1e-12);
    });
  }
});

describe("median E and Var equal an independent full-distribution DP (n in the thousands, mixed N)", () => {
  // The DP's values from test/fixtures/median-dp-reference.json (references.test.ts recomputes and checks them).
  // Measured: E within 1e-14, Var within 5e-12 relative (the DP itself sums ~1e5 float64 terms).
  const reference = readMedianDpFixture();
  const cases = medianDpCases();
  it("the fixture holds every case", () => {
    expect(reference.map((r) => r.name)).toEqual(cases.map((c) => c.name));
  });
  for (const [i, c] of cases.entries()) {
    it(c.name, () => {
      const m = kernelMoments(c.N);
      const ref = reference[i]!;
      expect(relErr(m.e, ref.e)).toBeLessThanOrEqual(1e-12);
      if (ref.v > 1e-12) expect(relErr(m.v, ref.v)).toBeLessThanOrEqual(c.varTolerance);
      else expect(Math.abs(m.v - ref.v)).toBeLessThanOrEqual(1e-12);
    });
  }
});

// Odd and even n; the even cases (N far above n, the joint law of the two middle ranks over long gaps) hold Var to
// 1e-12 relative where an uncut joint sum is off by 1e-6.
describe("median E and Var equal exact rationals for small n (odd and even) with N up to 2^31-1", () => {
  for (const c of fixtures.cases) {
    it(`N = [${c.N.join(",")}]`, () => {
      const m = kernelMoments(c.N);
      expect(relErr(m.e, Number(c.expectation))).toBeLessThanOrEqual(1e-12);
      const v = Number(c.variance);
      if (v === 0) expect(Math.abs(m.v)).toBeLessThanOrEqual(1e-12);
      else expect(relErr(m.v, v)).toBeLessThanOrEqual(1e-12);
    });
  }
});

describe("median E and Var: closed forms and cost", () => {
  it("n = 1: E = (N+1)/2, Var = (N^2-1)/12", () => {
    for (const N of [1, 2, 10, 1e8, 2147483647]) {
      const m = kernelMoments([N]);
      expect(relErr(m.e, (N + 1) / 2)).toBeLessThanOrEqual(1e-12);
      expect(relErr(m.v, (N * N - 1) / 12)).toBeLessThanOrEqual(1e-12);
    }
  });
  it("n = 2 is the mean of the two ranks: E = (E r1 + E r2)/2, Var = (Var r1 + Var r2)/4", () => {
    for (const [a, b] of [
      [10000, 10000],
      [3, 2147483647],
      [1, 7],
    ] as const) {
      const m = kernelMoments([a, b]);
      expect(relErr(m.e, ((a + 1) / 2 + (b + 1) / 2) / 2)).toBeLessThanOrEqual(1e-15);
      expect(relErr(m.v, ((a * a - 1) / 12 + (b * b - 1) / 12) / 4)).toBeLessThanOrEqual(1e-15);
    }
  });
  it("all N equal (n = 3): E and Var by the closed-form CDF 1 - 3u^2 + 2u^3 summed exactly (BigInt)", () => {
    for (const N of [5, 1000, 1e8, 2147483647]) {
      // sum_{x<N} P(M > x) with P = 1 - 3 x^2/N^2 + 2 x^3/N^3: exact with BigInt power sums, scaled by N^3.
      const n = BigInt(N);
      const m1 = n - 1n;
      const s = [
        n,
        (m1 * n) / 2n,
        (m1 * n * (2n * m1 + 1n)) / 6n,
        ((m1 * n) / 2n) ** 2n,
        (m1 * n * (2n * m1 + 1n) * (3n * m1 * m1 + 3n * m1 - 1n)) / 30n,
      ];
      const n3 = n ** 3n;
      const eNum = s[0]! * n3 - 3n * s[2]! * n + 2n * s[3]!; // E * N^3
      const e2Num = 2n * (s[1]! * n3 - 3n * s[3]! * n + 2n * s[4]!) + eNum; // E[M^2] * N^3
      const vNum = e2Num * n3 - eNum * eNum; // Var * N^6
      const e = Number(eNum) / Number(n3);
      const v = Number(vNum) / Number(n3 * n3);
      const m = kernelMoments([N, N, N]);
      expect(relErr(m.e, e)).toBeLessThanOrEqual(1e-12);
      expect(relErr(m.v, v)).toBeLessThanOrEqual(1e-12);
    }
  });
  it("the cost does not grow with N: N = 1e8 and 2^31-1 cost about what N = 1e5 does (an O(N) method takes 47 s and 1.6 GB at 1e8)", () => {
    // CPU-time ratios to N = 1e5 (test/helpers/cost.ts): measured 0.5-4 (odd n: ~1; even n: log-like growth of the
    // joint sum); an O(N) method gives >= 1000 at 1e8. 20 calls per run keep each measurement well above the clock.
    for (const n of [3, 4]) {
      const base = new Array<number>(n).fill(1e5);
      for (const N of [1e8, 2147483647]) {
        const ratio = costRatio(
          () => kernelMoments(base),
          () => kernelMoments(new Array<number>(n).fill(N)),
          5,
          n === 3 ? 20 : 2,
        );
        expect(ratio, `n = ${n}, N = ${N}`).toBeLessThan(20);
      }
    }
  });
});

// Even n with distinct N spread widely: each joint row crosses many single-task kinks. Its runs between kinks are
// chained (Gauss-Legendre panels through the kinks, the jump of h' at each: one evaluation per kink) instead of
// closing each run with endpoint differences, geometrically shrinking panels and a point-by-point tail next to the kink.
// `evaluations` (the kernel's third output) counts evaluations of the generating function: measured 220 k at
// N up to 1.1e6 and 431 k at N up to 2^31-1 (before the chains: 1.5 M and 5.3 M, growing 3.6x over the range).
describe("median Var, even n with distinct N spread widely: cost bounded by the kinks, not by max N", () => {
  const shape = [
    1000003, 37000011, 90000049, 150000001, 260000003, 400000009, 555000001, 700000001, 866000003, 1000000007,
    1300000003, 1600000009, 1900000043, 2147483647,
  ];
  it("n = 14: evaluations at N up to 2^31-1 within 2.5x of those at N up to 1.1e6, and under 600 k", () => {
    const small = kernels().medianMoments(Float64Array.from(shape, (v) => Math.round(v * 0.0005)));
    const big = kernels().medianMoments(Float64Array.from(shape));
    expect(small[2]!).toBeGreaterThan(0);
    expect(big[2]! / small[2]!).toBeLessThanOrEqual(2.5);
    expect(big[2]!).toBeLessThanOrEqual(600_000);
    // and exact (scripts/median-fixtures.py, also in the fixtures above)
    expect(relErr(big[1]!, 7294937021160454.1)).toBeLessThanOrEqual(1e-12);
  });
});

describe("median E alone (the evaluator's random-E column) skips the even-n joint sum", () => {
  const k = kernels();
  const rnd = lcg(23);
  for (const [name, N, compareFull] of [
    // 40 distinct N up to 40,000: WN18RR's scale, where the joint sum is slow (the cost of E grows with the distinct
    // N), so E alone is compared with the full computation only on the two smaller sets.
    [
      "even n = 1,000, 40 distinct N up to 40,000",
      Float64Array.from({ length: 1000 }, () => 1000 * (1 + Math.floor(rnd() * 40))),
      false,
    ],
    ["even n = 400, N up to 300", Float64Array.from({ length: 400 }, () => 1 + Math.floor(rnd() * 300)), true],
    ["odd n = 401, N up to 300", Float64Array.from({ length: 401 }, () => 1 + Math.floor(rnd() * 300)), true],
  ] as const) {
    const what = compareFull ? "E equals the full computation's E bit for bit" : "E is finite and positive";
    it(`${name}: ${what}; Var NaN only for even n`, () => {
      const eOnly = k.medianMoments(N, false);
      if (compareFull) expect(eOnly[0]).toBe(k.medianMoments(N, true)[0]);
      else expect(eOnly[0]).toBeGreaterThan(0);
      expect(Number.isNaN(eOnly[1]!)).toBe(N.length % 2 === 0);
      // Through the catalogue: expectedValue asks for E only; variance() for both.
      const m = getMetric("median_rank");
      expect(m.expectedValue(N)).toBe(eOnly[0]);
    });
  }
});

describe("median E and Var through the metric catalogue", () => {
  it("median_rank has closed E and Var; weighted median and inverse median rank throw NoClosedFormError", () => {
    const m = getMetric("median_rank");
    expect(m.closedExpectation && m.closedVariance).toBe(true);
    expect(() => m.expectedValue([3, 4], [1, 2])).toThrow(NoClosedFormError);
    expect(() => m.expectedValue([3, 4], [1, 2])).toThrow(/weighted median/);
    expect(() => getMetric("inverse_median_rank").expectedValue([3, 4])).toThrow(NoClosedFormError);
    expect(() => medianMoments(new Float64Array(0))).toThrow(/empty/);
  });

  it("agrees with a Monte-Carlo estimate at n = 2001 (within 4 standard errors)", () => {
    const N = Float64Array.from({ length: 2001 }, (_, i) => 1 + ((i * 7919) % 3000));
    const m = getMetric("median_rank");
    const e = m.expectedValue(N);
    const v = m.variance(N);
    const est = m.estimate({ numCandidates: N, numSamples: 400, seed: 5 });
    expect(Math.abs(est.expectedValue.value - e)).toBeLessThanOrEqual(4 * Math.sqrt(v / 400));
  });
});
