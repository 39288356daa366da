/**
 * Every metric of the catalogue, tested by being listed: for small candidate counts, every rank vector is
 * enumerated (the uniform random ranking is then exact), and for each metric in listMetrics()
 *   - every value lies in the metric's declared value range;
 *   - a closed-form expectation equals the mean over the enumeration, a closed-form variance its variance
 *     (1e-12 relative, or 1e-14 absolute near 0), unweighted and, where the metric takes weights, weighted.
 * A new metric added to the catalogue is covered here without a line of test code.
 */
import { describe, expect, it } from "vitest";

import { listMetrics } from "../src/index";
import type { RankMetric } from "../src/metrics/types";
import { backendLabel } from "./helpers/backend";

/** Every rank vector r with r_i in 1..N_i, each once. */
function* rankVectors(numCandidates: number[]): Generator<number[]> {
  const r = numCandidates.map(() => 1);
  for (;;) {
    yield [...r];
    let i = 0;
    while (i < r.length && r[i] === numCandidates[i]) r[i++] = 1;
    if (i === r.length) return;
    r[i]!++;
  }
}

/**
 * In the declared range, up to rounding at a bound: a derived value is scale * base + offset, so a base value at
 * its own bound can land 1 ulp past the derived one (AMRI of the worst ranks -1.0000000000000002, AGMRI of perfect
 * ranks 1.0000000000000002, as PyKEEN's affine form gives too). 4 ulps of slack, no more.
 */
function inRange(m: RankMetric, v: number): boolean {
  const { lower, lowerInclusive, upper, upperInclusive } = m.valueRange;
  const slack = (b: number) => 4 * Number.EPSILON * Math.max(1, Math.abs(b));
  const aboveLower = lower === null || v > lower || (lowerInclusive && v >= lower - slack(lower));
  const belowUpper = upper === null || v < upper || (upperInclusive && v <= upper + slack(upper));
  return aboveLower && belowUpper;
}

function close(actual: number, expected: number, what: string): void {
  const err = Math.abs(actual - expected);
  expect(err <= 1e-14 || err <= 1e-12 * Math.abs(expected), `${what}: ${actual} vs enumerated ${expected}`).toBe(true);
}

// Odd and even task counts (the median's two cases), a task with one candidate, N above and below every k.
const CASES: { numCandidates: number[]; weights?: number[] }[] = [
  { numCandidates: [3, 4, 2] },
  { numCandidates: [5, 1, 4, 12] },
  { numCandidates: [3, 4, 2], weights: [1, 2.5, 0.5] },
  { numCandidates: [6, 11, 2, 3], weights: [0.25, 1, 3, 0] },
];

describe(`every listed metric against exact enumeration on ${backendLabel}`, () => {
  for (const m of listMetrics()) {
    for (const { numCandidates, weights } of CASES) {
      const weighted = weights !== undefined;
      const where = `N = [${numCandidates}]${weighted ? `, w = [${weights}]` : ""}`;
      it(`${m.key}: values in range; closed E${m.closedVariance ? " and Var" : ""} equal the enumeration (${where})`, () => {
        const values: number[] = [];
        for (const r of rankVectors(numCandidates)) {
          let v: number;
          try {
            v = m.value(r, m.needsCandidates ? numCandidates : undefined, weights);
          } catch {
            return; // undefined for these candidate counts (e.g. Hits@10 re-indexed when every N_i <= 10): no values
          }
          expect(inRange(m, v), `${m.key}(${r}) = ${v} outside its range`).toBe(true);
          values.push(v);
        }
        const mean = values.reduce((a, b) => a + b, 0) / values.length;
        const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length;
        // Weighted closed forms exist where the metric takes weights (the weighted median has none).
        const closed = (f: () => number) => {
          try {
            return f();
          } catch {
            return undefined;
          }
        };
        if (m.closedExpectation) {
          const e = closed(() => m.expectedValue(numCandidates, weights));
          if (e !== undefined) close(e, mean, `${m.key} E`);
          else expect(weighted, `${m.key} has a closed expectation but gave none for ${where}`).toBe(true);
        }
        if (m.closedVariance) {
          const v = closed(() => m.variance(numCandidates, weights));
          if (v !== undefined) close(v, variance, `${m.key} Var`);
          else expect(weighted, `${m.key} has a closed variance but gave none for ${where}`).toBe(true);
        }
      });
    }
  }
});
