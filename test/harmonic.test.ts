/**
 * Generalised harmonic numbers H_p(n) = sum_{j<=n} j^-p for real p (native/core/harmonic.cpp harmonic_real and its
 * TypeScript twin): against 22-digit mpmath references (scripts/harmonic-fixtures.py: direct mpmath sums up to
 * n = 65536, zeta(p) - zeta(p, n+1) above, harmonic(n) for p = 1), at 1e-14 relative, across the direct-sum /
 * Euler-Maclaurin seam at 256 and up to n = 1e9, p from -0.3 to 7.25 including p = 1 - 1e-6.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

import { describe, expect, it } from "vitest";

import { kernels } from "../src/backend/backend";
import { relErr } from "./helpers/metrics-reference";

const fixtures: [number, number, string][] = JSON.parse(
  readFileSync(join(__dirname, "fixtures", "generalized-harmonic.json"), "utf8"),
);

describe("generalised harmonic numbers H_p(n) match mpmath (1e-14 relative)", () => {
  it(`${fixtures.length} (n, p) pairs`, () => {
    for (const [n, p, ref] of fixtures) {
      const got = kernels().generalizedHarmonic(n, p);
      expect(relErr(got, Number(ref)), `n=${n} p=${p}`).toBeLessThanOrEqual(1e-14);
    }
  });

  it("agrees with H_1 and H_2 of the closed forms", () => {
    for (const n of [1, 7, 300, 70000, 2_500_000]) {
      expect(relErr(kernels().generalizedHarmonic(n, 1), kernels().harmonic(n, 1))).toBeLessThanOrEqual(1e-15);
      expect(relErr(kernels().generalizedHarmonic(n, 2), kernels().harmonic(n, 2))).toBeLessThanOrEqual(1e-15);
    }
  });
});
