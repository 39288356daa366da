/**
 * Inputs past 2^31 elements, on the native backend at its best SIMD level with the machine's threads. Runs once
 * (vitest's "once" project): the 64-bit sizes are one code path above the SIMD kernels, and an 8 GiB sparse array
 * costs ~30 s of page faults on a quiet 2-vCPU machine.
 */
import { describe, expect, it } from "vitest";

import { backendInfo, countScoresSync } from "../src/index";

describe("inputs past 2^31 elements on the native backend", () => {
  it("runs on the native backend", () => {
    expect(backendInfo().backend).toBe("native");
  });

  it("countScores handles more than 2^31 elements (64-bit sizes)", () => {
    const n = 2 ** 31 + 64;
    const scores = new Float32Array(n); // untouched pages cost no memory until written
    scores[2 ** 31 + 5] = 3;
    scores[2 ** 31 + 63] = NaN;
    scores[7] = 1;
    const got = countScoresSync({ scores, numColumns: n / 2, thresholds: [0.5, 0] });
    expect(Array.from(got.greater)).toEqual([1, 1]);
    expect(Array.from(got.equal)).toEqual([0, n / 2 - 2]);
    expect(Array.from(got.nan)).toEqual([0, 1]);
  }, 300_000); // 2^21 zero-page faults: ~30 s on a quiet 2-vCPU VM, 130 s under load 13
});
