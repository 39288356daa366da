/**
 * The sum forms compare's replicates are finished with (src/metrics/sum-form.ts): a metric's value from one total,
 * and for the bases whose value is a mean (MR, MRR, Hits@k) the difference of two values from the difference of
 * their totals. The difference must equal value(b) - value(a) under the same coefficients, and be NaN where a
 * coefficient is undefined (a z-score over zero variance), as the two values are.
 */
import { describe, expect, it } from "vitest";

import { getMetric, prepareCandidates } from "../src/index";
import { sumForm } from "../src/metrics/sum-form";

describe("sumForm", () => {
  const candidates = prepareCandidates(Float64Array.from({ length: 50 }, (_, i) => 10 + i));
  const keys = [
    "arithmetic_mean_rank",
    "adjusted_arithmetic_mean_rank_index",
    "inverse_harmonic_mean_rank",
    "adjusted_inverse_harmonic_mean_rank",
    "z_inverse_harmonic_mean_rank",
    "hits_at_10",
    "adjusted_hits_at_10",
  ];
  it.each(keys)("%s: difference(total b - total a) equals value(b) - value(a) to rounding", (key) => {
    const f = sumForm(getMetric(key))!;
    expect(f.difference, key).not.toBeNull();
    const c = f.coefficients(candidates);
    const [ta, tb] = f.quantity === "inverseRank" ? [7.25, 9.5] : f.quantity === "hits" ? [12, 31] : [1234, 987];
    const want = f.value(tb, 50, c) - f.value(ta, 50, c);
    expect(f.difference!(tb - ta, 50, c)).toBeCloseTo(want, 12);
  });

  it("has no difference for bases that are not means (GMR, HMR, the median)", () => {
    for (const key of ["geometric_mean_rank", "harmonic_mean_rank", "median_rank"]) {
      expect(sumForm(getMetric(key))!.difference, key).toBeNull();
    }
  });

  it("is NaN where a coefficient is undefined, as both values are", () => {
    const f = sumForm(getMetric("z_inverse_harmonic_mean_rank"))!;
    const undefinedStep = [{ scale: Infinity, offset: -Infinity }];
    expect(f.value(9.5, 50, undefinedStep) - f.value(7.25, 50, undefinedStep)).toBeNaN();
    expect(f.difference!(2.25, 50, undefinedStep)).toBeNaN();
  });
});
