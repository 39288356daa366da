/**
 * MRR@k (inverse_harmonic_mean_rank_at_k): the mean over tasks of 1/r where r <= k, else 0, OGB-LSC WikiKG90Mv2's
 * top-10 MRR. Its values, closed expectation and variance under uniform ranks (rank uniform on 1..N_i), and the
 * adjusted index and z-score, against an exact reference in BigInt rationals written here (nothing shared with src/),
 * weighted and not; its names; the evaluator and the CLI's --metrics select it; its Monte-Carlo estimate centres on
 * the closed expectation. Runs on each backend (the kernels' values, the reference's rationals).
 */
import { describe, expect, it } from "vitest";

import { kernels } from "../src/backend/backend";
import { AGGREGATE_SLOTS, ClosedMetricCode } from "../src/contract/kernels";
import { getMetric, metricValues, prepareCandidates, RankEvaluator } from "../src/index";
import { metricSelection } from "../src/metrics/index";
import { backendLabel } from "./helpers/backend";
import { kgrank as runIn } from "./helpers/cli";
import { tempDir } from "./helpers/temp";

/** An exact rational p/q, q > 0, in lowest terms. */
class Q {
  readonly p: bigint;
  readonly q: bigint;
  constructor(p: bigint, q = 1n) {
    if (q < 0n) [p, q] = [-p, -q];
    const g = gcd(p < 0n ? -p : p, q);
    this.p = g === 0n ? 0n : p / g;
    this.q = g === 0n ? 1n : q / g;
  }
  static of(x: number): Q {
    // Exact for the integers, halves and quarters these tests use.
    return new Q(BigInt(Math.round(x * 1024)), 1024n);
  }
  add(o: Q): Q {
    return new Q(this.p * o.q + o.p * this.q, this.q * o.q);
  }
  sub(o: Q): Q {
    return new Q(this.p * o.q - o.p * this.q, this.q * o.q);
  }
  mul(o: Q): Q {
    return new Q(this.p * o.p, this.q * o.q);
  }
  div(o: Q): Q {
    return new Q(this.p * o.q, this.q * o.p);
  }
  number(): number {
    // Scaled so the quotient keeps 60 significant bits before the conversion.
    const scale = 10n ** 30n;
    return Number((this.p * scale) / this.q) / 1e30;
  }
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

const ZERO = new Q(0n);
const ONE = new Q(1n);

/** X = 1/r if r <= k else 0, for a rank r (an integer or a half). */
function truncated(r: Q, k: number): Q {
  return r.p <= BigInt(k) * r.q ? ONE.div(r) : ZERO;
}

/** [E, Var] of one task's X with r uniform on 1..n, by enumerating every rank. */
function taskMoments(n: number, k: number): [Q, Q] {
  let s1 = ZERO;
  let s2 = ZERO;
  for (let r = 1; r <= n; r++) {
    const x = truncated(new Q(BigInt(r)), k);
    s1 = s1.add(x);
    s2 = s2.add(x.mul(x));
  }
  const N = new Q(BigInt(n));
  const mean = s1.div(N);
  return [mean, s2.div(N).sub(mean.mul(mean))];
}

/** The metric's E and Var over independent tasks: sum w E_i / W and sum w^2 Var_i / W^2. */
function moments(ns: number[], k: number, ws?: number[]): [Q, Q] {
  let W = ZERO;
  let e = ZERO;
  let v = ZERO;
  ns.forEach((n, i) => {
    const w = Q.of(ws ? ws[i]! : 1);
    const [mi, vi] = taskMoments(n, k);
    W = W.add(w);
    e = e.add(w.mul(mi));
    v = v.add(w.mul(w).mul(vi));
  });
  return [e.div(W), v.div(W.mul(W))];
}

function value(ranks: number[], k: number, ws?: number[]): Q {
  let W = ZERO;
  let s = ZERO;
  ranks.forEach((r, i) => {
    const w = Q.of(ws ? ws[i]! : 1);
    W = W.add(w);
    s = s.add(w.mul(truncated(Q.of(r), k)));
  });
  return s.div(W);
}

function close(actual: number, expected: number, what: string, rel = 1e-13): void {
  const err = Math.abs(actual - expected);
  expect(err <= 1e-15 || err <= rel * Math.abs(expected), `${what}: ${actual} vs exact ${expected}`).toBe(true);
}

const CASES: { ns: number[]; k: number; ws?: number[] }[] = [
  { ns: [1], k: 10 },
  { ns: [3, 4, 2], k: 1 },
  { ns: [5, 1, 4, 12], k: 3 },
  { ns: [9, 10, 11, 40, 2], k: 10 },
  { ns: [3, 4, 20], k: 10, ws: [1, 2.5, 0.5] },
  { ns: [6, 11, 2, 300], k: 5, ws: [0.25, 1, 3, 0] },
];

describe(`MRR@k on ${backendLabel}`, () => {
  it.each(CASES)("closed E and Var equal the exact rationals (N = $ns, k = $k, w = $ws)", ({ ns, k, ws }) => {
    const m = getMetric(`mrr@${k}`);
    const [e, v] = moments(ns, k, ws);
    close(m.expectedValue(ns, ws), e.number(), "E");
    close(m.variance(ns, ws), v.number(), "Var", 1e-12);
    // Through a prepared candidate set (the histogram path) too.
    const c = prepareCandidates(ns, ws);
    close(m.expectedValue(c), e.number(), "E (prepared)");
    close(m.variance(c), v.number(), "Var (prepared)", 1e-12);
  });

  it("E = H(min(k, N)) / N for large N, where the enumeration would be long (N = 10^6, 2^40)", () => {
    for (const n of [1e6, 2 ** 40]) {
      let h = ZERO;
      let h2 = ZERO;
      for (let r = 1; r <= 10; r++) {
        h = h.add(new Q(1n, BigInt(r)));
        h2 = h2.add(new Q(1n, BigInt(r * r)));
      }
      const N = new Q(BigInt(n));
      const e = h.div(N);
      const m = getMetric("mrr@10");
      close(m.expectedValue([n]), e.number(), `E at N = ${n}`);
      close(m.variance([n]), h2.div(N).sub(e.mul(e)).number(), `Var at N = ${n}`, 1e-12);
    }
  });

  const ranks = [1, 2.5, 3, 10, 10.5, 11, 1.5, 4];
  const ns = [5, 12, 3, 10, 11, 30, 2, 8];
  const ws = [1, 0.5, 2, 1, 0.25, 3, 1, 0];
  it.each([
    [1, undefined],
    [3, undefined],
    [10, undefined],
    [10, ws],
    [4, ws],
  ] as [number, number[] | undefined][])(
    "value at k = %s (w = %s): 1/r up to k, 0 above, halves as they are",
    (k, w) => {
      const m = getMetric(`mrr@${k}`);
      close(m.value(ranks, ns, w), value(ranks, k, w).number(), "value");
      // The adjusted index (v - E) / (1 - E) and the z-score (v - E) / sd, from the same rationals.
      const v = value(ranks, k, w);
      const [e, variance] = moments(ns, k, w);
      close(getMetric(`amrr@${k}`).value(ranks, ns, w), v.sub(e).div(ONE.sub(e)).number(), "adjusted");
      close(getMetric(`zmrr@${k}`).value(ranks, ns, w), v.sub(e).number() / Math.sqrt(variance.number()), "z", 1e-12);
    },
  );

  it("the kernels: truncatedKs' slots follow the hit slots of ks; its closed code is its own, k positive", () => {
    const r = Float64Array.from(ranks);
    for (const w of [undefined, ws]) {
      const out = kernels().aggregateRanks(
        r,
        w ? Float64Array.from(w) : null,
        Float64Array.of(3, 10),
        Float64Array.of(10, 4),
        0,
      );
      expect(out.length).toBe(AGGREGATE_SLOTS.fixed + 4);
      const weight = w ? w.reduce((a, b) => a + b, 0) : ranks.length;
      const hits = (k: number) => ranks.reduce((a, x, i) => a + (x <= k ? (w ? w[i]! : 1) : 0), 0);
      expect(out[AGGREGATE_SLOTS.fixed]).toBe(hits(3));
      expect(out[AGGREGATE_SLOTS.fixed + 1]).toBe(hits(10));
      close(out[AGGREGATE_SLOTS.fixed + 2]!, value(ranks, 10, w).mul(Q.of(weight)).number(), "truncated slot, k = 10");
      close(out[AGGREGATE_SLOTS.fixed + 3]!, value(ranks, 4, w).mul(Q.of(weight)).number(), "truncated slot, k = 4");
      // No hit k: the truncated slots start at the fixed ones' end.
      const alone = kernels().aggregateRanks(
        r,
        w ? Float64Array.from(w) : null,
        new Float64Array(0),
        Float64Array.of(4),
        0,
      );
      expect(alone.length).toBe(AGGREGATE_SLOTS.fixed + 1);
      expect(alone[AGGREGATE_SLOTS.fixed]).toBe(out[AGGREGATE_SLOTS.fixed + 3]);
    }
    const N = Float64Array.of(5, 1, 4, 12);
    const [e, v] = moments([...N], 3);
    const m = kernels().closedMoments(ClosedMetricCode.TruncatedInverse, N, null, 3);
    close(m[0]!, e.number(), "E");
    close(m[1]!, v.number(), "Var", 1e-12);
    // The Hits code at the same k is still Hits@3's: the mean of min(3, N) / N.
    close(kernels().closedMoments(ClosedMetricCode.Hits, N, null, 3)[0]!, (3 / 5 + 1 + 3 / 4 + 3 / 12) / 4, "Hits E");
  });

  it("Hits@k and MRR@k at the same k read their own slots of one fused pass", () => {
    const v = metricValues(["hits@10", "mrr@10", "hits@3", "mrr@3"], ranks, ns, ws);
    close(v["inverse_harmonic_mean_rank_at_10"]!, value(ranks, 10, ws).number(), "MRR@10");
    close(v["inverse_harmonic_mean_rank_at_3"]!, value(ranks, 3, ws).number(), "MRR@3");
    expect(v["hits_at_10"]).toBe(getMetric("hits@10").value(ranks, ns, ws));
    expect(v["hits_at_3"]).toBe(getMetric("hits@3").value(ranks, ns, ws));
  });

  it("equals MRR where every rank is at most k, and Hits@k's count of hits is where the terms are non-zero", () => {
    const r = [1, 2, 3, 2.5, 7];
    expect(getMetric("mrr@7").value(r)).toBe(getMetric("mrr").value(r));
    expect(getMetric("mrr@1").value(r)).toBe(getMetric("hits@1").value(r));
    expect(getMetric("mrr@2").value([3, 4, 5])).toBe(0);
  });

  it("is named as Hits@k is: mrr@k, mrr_at_k, the PyKEEN-style key, its adjusted and z forms", () => {
    const names: [string, string][] = [
      ["mrr@10", "inverse_harmonic_mean_rank_at_10"],
      ["MRR_at_5", "inverse_harmonic_mean_rank_at_5"],
      ["mean_reciprocal_rank_at_3", "inverse_harmonic_mean_rank_at_3"],
      ["inverse_harmonic_mean_rank_at_20", "inverse_harmonic_mean_rank_at_20"],
      ["amrr@10", "adjusted_inverse_harmonic_mean_rank_at_10"],
      ["adjusted_mrr@4", "adjusted_inverse_harmonic_mean_rank_at_4"],
      ["z_inverse_harmonic_mean_rank_at_10", "z_inverse_harmonic_mean_rank_at_10"],
      ["zmrr@2", "z_inverse_harmonic_mean_rank_at_2"],
      ["mrr", "inverse_harmonic_mean_rank"],
      ["ah@3", "adjusted_hits_at_3"],
      ["zahits@3", "z_hits_at_3"],
    ];
    for (const [q, key] of names) expect(getMetric(q).key, q).toBe(key);
    expect(() => getMetric("mrr@0")).toThrow(/MRR@k needs an integer k >= 1/);
    expect(() => getMetric("mrr@-2")).toThrow(/not a negative one/);
    expect(getMetric("mrr@10").name).toBe("Mean Reciprocal Rank at 10 (MRR@10)");
  });

  it("the evaluator reports it when asked (metricSelection, as every CLI command), not by default", () => {
    expect(metricSelection(["mrr@10", "both.realistic.amrr@10"]).map((m) => m.key)).toEqual([
      "inverse_harmonic_mean_rank_at_10",
      "adjusted_inverse_harmonic_mean_rank_at_10",
    ]);
    expect(metricSelection().some((m) => m.key.startsWith("inverse_harmonic_mean_rank_at_"))).toBe(false);
    const ev = new RankEvaluator({ numEntities: 40, metrics: ["mrr@3", "mrr"] });
    ev.addRanks({ side: "tail", realistic: [1, 2, 5, 3.5], numCandidates: [10, 10, 10, 10] });
    ev.addRanks({ side: "head", realistic: [4, 1], numCandidates: [10, 10] });
    const res = ev.finalize();
    close(res.get("tail.realistic.mrr@3"), value([1, 2, 5, 3.5], 3).number(), "tail");
    close(res.get("both.realistic.mrr@3"), value([1, 2, 5, 3.5, 4, 1], 3).number(), "both");
    close(res.expected("mrr@3")!, moments([10, 10, 10, 10, 10, 10], 3)[0].number(), "expected");
  });

  it("its Monte-Carlo estimate (seeded rank vectors through the value pass) brackets the closed expectation", () => {
    const m = getMetric("mrr@10");
    const numCandidates = [5, 20, 100, 7, 13];
    const est = m.estimate({ numCandidates, numSamples: 4000, seed: 3 });
    const e = m.expectedValue(numCandidates);
    expect(est.expectedValue.lower).toBeLessThan(e);
    expect(est.expectedValue.upper).toBeGreaterThan(e);
    expect(est.variance.lower).toBeLessThan(m.variance(numCandidates));
    expect(est.variance.upper).toBeGreaterThan(m.variance(numCandidates));
  });

  const dir = tempDir("mrr-at-k");
  it("kgrank evaluate --metrics mrr@10,amrr@10 (Nations, the frequency baseline) reports them", async () => {
    const r = await runIn(["evaluate", "--metrics", "mrr@10,amrr@10", "--format", "json"], dir);
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { results: { both: { realistic: Record<string, number> } } };
    const both = out.results.both.realistic;
    expect(Object.keys(both)).toEqual([
      "inverse_harmonic_mean_rank_at_10",
      "adjusted_inverse_harmonic_mean_rank_at_10",
    ]);
    expect(both.inverse_harmonic_mean_rank_at_10).toBeGreaterThan(0);
    expect(both.inverse_harmonic_mean_rank_at_10).toBeLessThanOrEqual(1);
  });
});
