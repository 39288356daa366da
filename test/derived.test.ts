/** The derived-metric algebra: coefficients, post-hoc adjustment, inherited E/Var, composition and its limits. */
import { describe, expect, it } from "vitest";

import {
  affine,
  expectationNormalized,
  getMetric,
  KgrankInputError,
  NoClosedFormError,
  reindexed,
  zScored,
  type DerivedRankMetric,
} from "../src/index";
import { exactMoments, relErr } from "./helpers/metrics-reference";

const N = [5, 17, 300, 2, 40];
const r = [1, 3.5, 120, 2, 7];
const w = [1, 2, 0.5, 1, 3];

describe("catalogue derived metrics are the affine maps of their definitions (1e-12 relative, exact references)", () => {
  for (const weights of [undefined, w]) {
    const [e, v] = exactMoments("mr", N, weights);
    const E = e.toNumber();
    const V = v.toNumber();
    const mr = getMetric("mr").value(r, N, weights);
    const tag = weights ? "weighted" : "unweighted";
    it(`AMR = MR / E[MR], ${tag}`, () =>
      expect(relErr(getMetric("amr").value(r, N, weights), mr / E)).toBeLessThanOrEqual(1e-12));
    it(`AMRI = (E - MR) / (E - 1), ${tag}`, () =>
      expect(relErr(getMetric("amri").value(r, N, weights), (E - mr) / (E - 1))).toBeLessThanOrEqual(1e-12));
    it(`z-MR = (E - MR) / sqrt(Var), sign-flipped as MR is decreasing, ${tag}`, () =>
      expect(relErr(getMetric("zmr").value(r, N, weights), (E - mr) / Math.sqrt(V))).toBeLessThanOrEqual(1e-12));
    it(`AMRR = (MRR - E) / (1 - E), ${tag}`, () => {
      const [em] = exactMoments("mrr", N, weights);
      const mrr = getMetric("mrr").value(r, N, weights);
      const x = em.toNumber();
      expect(relErr(getMetric("amrr").value(r, N, weights), (mrr - x) / (1 - x))).toBeLessThanOrEqual(1e-12);
    });
    it(`z-Hits@3 and adjusted Hits@3, ${tag}`, () => {
      const [eh, vh] = exactMoments("hits", N, weights, 3);
      const h = getMetric("hits@3").value(r, N, weights);
      expect(
        relErr(getMetric("z_hits_at_3").value(r, N, weights), (h - eh.toNumber()) / Math.sqrt(vh.toNumber())),
      ).toBeLessThanOrEqual(1e-12);
      expect(
        relErr(getMetric("ah@3").value(r, N, weights), (h - eh.toNumber()) / (1 - eh.toNumber())),
      ).toBeLessThanOrEqual(1e-12);
    });
  }

  it("E and Var are inherited through the affine rule; z-metrics have E = 0 and Var = 1 exactly", () => {
    const amr = getMetric("amr");
    expect(amr.expectedValue(N)).toBe(1);
    const mr = getMetric("mr");
    expect(relErr(amr.variance(N), mr.variance(N) / mr.expectedValue(N) ** 2)).toBeLessThanOrEqual(1e-15);
    expect(getMetric("zgmr").expectedValue(N, w)).toBe(0);
    expect(getMetric("zgmr").variance(N, w)).toBe(1);
    expect(getMetric("agmri").expectedValue(N)).toBe(0);
  });
});

describe("coefficients() and adjust() adjust published numbers from candidate counts alone", () => {
  it("adjust(base) equals value() computed from the ranks", () => {
    for (const q of ["amr", "amri", "agmri", "amrr", "ah@10", "zmr", "zgmr", "zmrr", "z_hits_at_1"]) {
      const m = getMetric(q) as DerivedRankMetric;
      const baseValue = m.base.value(r, N, w);
      expect(relErr(m.adjust(baseValue, N, w), m.value(r, N, w))).toBeLessThanOrEqual(1e-15);
      const c = m.coefficients(N, w);
      expect(relErr(c.scale * baseValue + c.offset, m.value(r, N, w))).toBeLessThanOrEqual(1e-15);
    }
  });

  it("adjust rejects a non-finite published value", () => {
    expect(() => (getMetric("amri") as DerivedRankMetric).adjust(NaN, N)).toThrow(/baseValue/);
  });
});

describe("algebra over any base metric", () => {
  it("zScored(getMetric('mr')) equals the catalogue's z_arithmetic_mean_rank, key included", () => {
    const z = zScored(getMetric("mr"));
    expect(z.key).toBe("z_arithmetic_mean_rank");
    expect(z.value(r, N)).toBe(getMetric("zmr").value(r, N));
    expect(reindexed(getMetric("mr")).key).toBe("adjusted_arithmetic_mean_rank_index");
    expect(reindexed(getMetric("mrr")).key).toBe("adjusted_inverse_harmonic_mean_rank");
    expect(expectationNormalized(getMetric("mr")).key).toBe("adjusted_arithmetic_mean_rank");
  });

  it("affine maps compose with z-scores: zScored(affine(mr, -1, 0)) = -zScored(mr) ... as increasing metrics both", () => {
    const negMr = affine(getMetric("mr"), -1, 0);
    expect(negMr.increasing).toBe(true);
    expect(relErr(negMr.expectedValue(N), -getMetric("mr").expectedValue(N))).toBeLessThanOrEqual(1e-15);
    const z = zScored(negMr);
    expect(relErr(z.value(r, N), getMetric("zmr").value(r, N))).toBeLessThanOrEqual(1e-14);
  });

  it("affine over a metric without closed forms still has a value and an estimate", () => {
    const m = affine(getMetric("hmr"), 2, 1);
    expect(m.value([1, 2])).toBe(2 * (2 / 1.5) + 1);
    expect(() => m.expectedValue([3, 4])).toThrow(NoClosedFormError);
    const e = m.estimate({ numCandidates: [3, 4], numSamples: 50, seed: 1 });
    expect(Number.isFinite(e.expectedValue.value)).toBe(true);
  });

  it("rejects bases without the needed closed forms (NoClosedFormError)", () => {
    expect(() => zScored(getMetric("hmr"))).toThrow(NoClosedFormError);
    expect(() => reindexed(getMetric("inverse_median_rank"))).toThrow(NoClosedFormError);
    expect(() => expectationNormalized(getMetric("std"))).toThrow(NoClosedFormError);
  });

  it("rejects compositions that are undefined", () => {
    expect(() => expectationNormalized(zScored(getMetric("mr")))).toThrow(/expectation 0/);
    expect(() => reindexed(zScored(getMetric("mr")))).toThrow(/finite optimum/);
    expect(() => affine(getMetric("mr"), 0)).toThrow(/scale/);
    expect(() => zScored({} as never)).toThrow(KgrankInputError);
  });

  it("zScored(zScored(m)) is m's z-score again", () => {
    const zz = zScored(zScored(getMetric("mrr")));
    expect(relErr(zz.value(r, N), getMetric("zmrr").value(r, N))).toBeLessThanOrEqual(1e-12);
  });
});

describe("degenerate candidate sets give typed errors, never Infinity or NaN", () => {
  it("z-scores with every N_i = 1 (variance 0) throw naming numCandidates", () => {
    for (const q of ["zmr", "zmrr", "zgmr", "z_hits_at_1"]) {
      expect(() => getMetric(q).value([1, 1], [1, 1])).toThrow(/numCandidates: .* variance 0/);
    }
  });

  it("re-indexed metrics with E = optimum (every N_i = 1, or k >= every N_i) throw", () => {
    expect(() => getMetric("amri").value([1, 1], [1, 1])).toThrow(/optimum/);
    expect(() => getMetric("ah@10").value([1, 2], [3, 4])).toThrow(/optimum/);
  });

  it("a single task with N_i = 1 among others is fine", () => {
    expect(Number.isFinite(getMetric("zmrr").value([1, 2], [1, 5]))).toBe(true);
  });
});
