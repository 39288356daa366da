/**
 * E and Var of the median rank (src/metrics/median.ts): the exact method against brute-force enumeration of every
 * rank vector with BigInt rationals (odd and even n, the even-n variance through the covariance of the two middle
 * order statistics), the normal approximation against the exact method, and the metric API around it.
 */
import { describe, expect, it } from "vitest";

import { getMetric, NoClosedFormError } from "../src/index";
import { medianMoments } from "../src/metrics/median";
import { relErr } from "./helpers/metricsReference";

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

const TINY: number[][] = [
  [1], [2], [7], [3, 5], [2, 2], [1, 1], [1, 2, 3], [4, 4, 4], [2, 3, 5, 7], [6, 1, 3, 2], [3, 3, 3, 3, 3],
  [2, 5, 3, 4, 2, 6], [1, 9, 1, 9], [8, 8, 1, 2, 3], [5, 4, 3, 2, 1, 6, 2],
];

describe("median E and Var: exact method equals brute-force enumeration (BigInt), 1e-12 relative", () => {
  for (const N of TINY) {
    it(`N = [${N.join(",")}]`, () => {
      const m = medianMoments(Float64Array.from(N));
      expect(m.method).toBe("exact");
      const ref = bruteForceMedian(N);
      expect(relErr(m.expectation, ref.e)).toBeLessThanOrEqual(1e-12);
      if (ref.v === 0) expect(Math.abs(m.variance)).toBeLessThanOrEqual(1e-14);
      else expect(relErr(m.variance, ref.v)).toBeLessThanOrEqual(1e-12);
      // through the metric API (prepared or raw candidates)
      expect(relErr(getMetric("median_rank").expectedValue(N), ref.e)).toBeLessThanOrEqual(1e-12);
    });
  }
});

describe("median E and Var: normal approximation against the exact method", () => {
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  // Measured bounds (documented in src/metrics/median.ts and the README): E within 2e-4 relative from n = 51 on;
  // Var within 2e-2 for odd n, 6e-2 for even n (the approximation drops Var(B - A)/4; small discrete N_i are the
  // worst case).
  for (const n of [51, 201, 1001, 200, 400]) {
    it(`n = ${n}, N_i uniform on 1..50`, () => {
      const N = Float64Array.from({ length: n }, () => 1 + Math.floor(rnd() * 50));
      const exact = medianMoments(N, "exact");
      const normal = medianMoments(N, "normal");
      expect(relErr(normal.expectation, exact.expectation)).toBeLessThanOrEqual(2e-4);
      expect(relErr(normal.variance, exact.variance)).toBeLessThanOrEqual(n % 2 ? 2e-2 : 6e-2);
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
