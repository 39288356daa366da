/**
 * E and Var of the median rank (Kernels.medianMoments: native/core/median_moments.cpp and its twin
 * src/fallback/median-moments.ts), on the backend of this vitest project: against brute-force enumeration of every rank
 * vector with BigInt rationals (odd and even n), an independent float64 DP over the full distribution written here
 * (n = 1,000 / 1,001 / 5,001, mixed N; even n through the joint law of the two middle order statistics), exact
 * rationals for small odd n with N up to 2^31-1 (scripts/median-fixtures.py -> test/fixtures/median-reference.json),
 * closed forms (n = 1, 2, 3 equal N), the cost bound for huge N (even n: an evaluation count that must not grow with
 * max N beyond a small factor). parity.test.ts checks native = fallback within 1e-12 relative.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

import { describe, expect, it } from "vitest";

import { kernels } from "../src/backend";
import { getMetric, NoClosedFormError } from "../src/index";
import { medianMoments } from "../src/metrics/median";
import { costRatio } from "./helpers/cost";
import { relErr } from "./helpers/metricsReference";

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

/**
 * Independent reference: the full Poisson-binomial distribution of C_x by DP for every x (O(max N * n^2)), and for
 * even n the joint P(C_x = k, C_y = k) = [z^k] prod_i (p_i(x) z + 1 - p_i(y)) for every x < y; raw moment sums.
 */
function dpReference(N: number[]): { e: number; v: number } {
  const n = N.length;
  const k = n % 2 ? (n + 1) / 2 : n / 2;
  const maxN = Math.max(...N);
  const q = new Float64Array(n + 1);
  const pb = (x: number, y: number) => {
    q.fill(0);
    q[0] = 1;
    for (let i = 0; i < n; i++) {
      const a = Math.min(x, N[i]!) / N[i]!;
      const b = 1 - Math.min(y, N[i]!) / N[i]!;
      for (let c = i + 1; c >= 1; c--) q[c] = q[c]! * b + q[c - 1]! * a;
      q[0] = q[0]! * b;
    }
  };
  let ea = 0;
  let ea2 = 0;
  let eb = 0;
  let eb2 = 0;
  let eab = 0;
  for (let x = 0; x < maxN; x++) {
    pb(x, x);
    let fa = 0;
    for (let c = 0; c < k; c++) fa += q[c]!;
    const fb = fa + q[k]!;
    ea += fa;
    ea2 += (2 * x + 1) * fa;
    eb += fb;
    eb2 += (2 * x + 1) * fb;
    eab += (x + 1) * fa + x * fb;
  }
  if (n % 2) return { e: ea, v: ea2 - ea * ea };
  for (let x = 0; x < maxN; x++) {
    for (let y = x + 1; y < maxN; y++) {
      pb(x, y);
      eab -= q[k]!;
    }
  }
  return { e: (ea + eb) / 2, v: (ea2 + eb2 + 2 * eab - (ea + eb) ** 2) / 4 };
}

function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
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
  // Measured: E within 1e-14, Var within 5e-12 relative (the DP itself sums ~1e5 float64 terms).
  const cases: [number, number, number][] = [
    [1001, 60, 1],
    [1000, 30, 2],
    [5001, 20, 3],
    [400, 200, 4],
    [200, 80, 5],
  ];
  for (const [n, maxN, seed] of cases) {
    it(`n = ${n}, N_i uniform on 1..${maxN}`, () => {
      const rnd = lcg(seed);
      const N = Array.from({ length: n }, () => 1 + Math.floor(rnd() * maxN));
      const m = kernelMoments(N);
      const ref = dpReference(N);
      expect(relErr(m.e, ref.e)).toBeLessThanOrEqual(1e-12);
      expect(relErr(m.v, ref.v)).toBeLessThanOrEqual(1e-10);
    });
  }
  // Even n with N far above n: the band of x and each row's sum over y are long and cut by the distinct N.
  for (const [n, maxN, seed, distinct] of [
    [8, 1500, 31, 0],
    [12, 1200, 32, 3],
    [6, 2500, 33, 0],
  ] as const) {
    it(`even n = ${n}, N_i ${distinct ? `${distinct} distinct values` : "uniform"} up to ${maxN} (N >> n)`, () => {
      const rnd = lcg(seed);
      const pool = Array.from({ length: distinct }, () => 1 + Math.floor(rnd() * maxN));
      const N = Array.from({ length: n }, () =>
        distinct ? pool[Math.floor(rnd() * distinct)]! : 1 + Math.floor(rnd() * maxN),
      );
      const m = kernelMoments(N);
      const ref = dpReference(N);
      expect(relErr(m.e, ref.e)).toBeLessThanOrEqual(1e-12);
      expect(relErr(m.v, ref.v)).toBeLessThanOrEqual(1e-9);
    });
  }
  it("N_i = 1 mixtures (saturated tasks shift the count)", () => {
    const rnd = lcg(9);
    for (const frac of [0.3, 0.5, 0.7]) {
      const N = Array.from({ length: 301 }, () => (rnd() < frac ? 1 : 1 + Math.floor(rnd() * 50)));
      const m = kernelMoments(N);
      const ref = dpReference(N);
      expect(relErr(m.e, ref.e)).toBeLessThanOrEqual(1e-12);
      if (ref.v > 1e-12) expect(relErr(m.v, ref.v)).toBeLessThanOrEqual(1e-10);
      else expect(Math.abs(m.v - ref.v)).toBeLessThanOrEqual(1e-12);
    }
  });
});

// Odd and even n; the even cases (N far above n, the joint law of the two middle ranks over long gaps) were off by
// 3.2e-6 (n = 6) and 1.3e-6 (n = 20, 3 distinct N) relative in Var before the joint term cut its sums at the distinct
// N, and took over 30 s at N = 1e8 (n = 4).
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
