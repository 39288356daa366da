/** zToPValue against 80-digit mpmath values of erfc(z/sqrt 2)/2 (test/fixtures/metrics-reference.json), within 4e-15 relative. */
import { readFileSync } from "node:fs";
import { join } from "node:path";

import { describe, expect, it } from "vitest";

import { KgrankInputError } from "../src/index";
import { zToPValue } from "../src/metrics/index";
import { relErr } from "./helpers/metrics-reference";

const fixtures = JSON.parse(readFileSync(join(__dirname, "fixtures", "metrics-reference.json"), "utf8"));

describe("zToPValue", () => {
  for (const row of fixtures.pvalue) {
    it(`P(Z >= ${row.z}) within 4e-15 relative`, () => {
      expect(relErr(zToPValue(row.z), Number(row.p))).toBeLessThanOrEqual(4e-15);
    });
  }

  it("is exact at the ends and rejects NaN", () => {
    expect(zToPValue(Infinity)).toBe(0);
    expect(zToPValue(-Infinity)).toBe(1);
    expect(zToPValue(0)).toBe(0.5);
    expect(() => zToPValue(NaN)).toThrow(KgrankInputError);
  });
});
