import { describe, expect, it } from "vitest";

import {
  backendInfo,
  KgrankInputError,
  KgrankStateError,
  RankEvaluator,
  RankResults,
  UnknownMetricError,
} from "../src/index";
import { loadBundled } from "./helpers/datasets";
import { referenceRanks, rng } from "./helpers/reference";
import { backendLabel } from "./helpers/backend";

const info = backendInfo();
const label = backendLabel;
const nations = loadBundled("nations");
const N = nations.entities.length;
const { train, valid, test } = nations.splits;
const filter = [train, valid, test];
const rows = test.length / 3;

/** Scores with many ties, NaN-free at the true answer. */
function scoresFor(seed: number): Float32Array {
  const next = rng(seed);
  const s = new Float32Array(rows * N).map(() => Math.floor(next() * 6));
  return s;
}
const scores = { head: scoresFor(1), tail: scoresFor(2) };

/** Independent reference: brute-force filtered ranks, then plain-loop means. */
function referenceMetrics(side: "head" | "tail") {
  const known = new Map<string, Set<number>>();
  for (const t of filter) {
    for (let i = 0; i < t.length; i += 3) {
      const key = side === "tail" ? `${t[i]},${t[i + 1]}` : `${t[i + 2]},${t[i + 1]}`;
      if (!known.has(key)) known.set(key, new Set());
      known.get(key)!.add(side === "tail" ? t[i + 2]! : t[i]!);
    }
  }
  const masked = Float64Array.from(scores[side]);
  const truths: number[] = [];
  for (let i = 0; i < rows; i++) {
    const [h, r, t] = [test[3 * i]!, test[3 * i + 1]!, test[3 * i + 2]!];
    const truth = side === "tail" ? t : h;
    for (const k of known.get(side === "tail" ? `${h},${r}` : `${t},${r}`)!) if (k !== truth) masked[i * N + k] = NaN;
    truths.push(truth);
  }
  return referenceRanks(masked, N, { trueIndices: truths });
}

const ref = { head: referenceMetrics("head"), tail: referenceMetrics("tail") };
const both = {
  realistic: [...ref.head.realistic, ...ref.tail.realistic],
  optimistic: [...ref.head.optimistic, ...ref.tail.optimistic],
  pessimistic: [...ref.head.pessimistic, ...ref.tail.pessimistic],
  numCandidates: [...ref.head.numCandidates, ...ref.tail.numCandidates],
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const close = (a: number, b: number, rel = 1e-12) =>
  expect(Math.abs(a - b)).toBeLessThanOrEqual(rel * Math.max(1, Math.abs(b)));

function evaluate(extra: Partial<ConstructorParameters<typeof RankEvaluator>[0]> = {}): RankResults {
  const ev = new RankEvaluator({ numEntities: N, filterTriples: filter, ...extra });
  for (const side of ["head", "tail"] as const) ev.addSync({ triples: test, side, scores: scores[side] });
  return ev.finalize();
}

describe(`RankEvaluator.finalize on ${label}`, () => {
  const results = evaluate();

  it("reports MR, MRR and Hits@k per side and rank type equal to plain loops over brute-force ranks (1e-12)", () => {
    for (const [side, r] of [
      ["head", ref.head],
      ["tail", ref.tail],
      ["both", both],
    ] as const) {
      for (const rt of ["optimistic", "realistic", "pessimistic"] as const) {
        close(results.get(`${side}.${rt}.arithmetic_mean_rank`), mean(r[rt]));
        close(results.get(`${side}.${rt}.inverse_harmonic_mean_rank`), mean(r[rt].map((x) => 1 / x)));
        for (const k of [1, 3, 5, 10])
          close(results.get(`${side}.${rt}.hits_at_${k}`), mean(r[rt].map((x) => (x <= k ? 1 : 0))));
        close(results.get(`${side}.${rt}.count`), r[rt].length);
      }
      // Expected MR under random ranking: mean of (N_i + 1) / 2.
      close(results.expected(`${side}.arithmetic_mean_rank`)!, mean(r.numCandidates.map((n) => (n + 1) / 2)));
      close(results.meanRankWidth(side), mean(r.pessimistic.map((p, i) => p - r.optimistic[i]!)));
    }
    expect(results.meanRankWidth("both")).toBeGreaterThan(0.5); // the scores tie a lot
  });

  it("resolves keys with parts in any order, synonyms, and defaults both.realistic", () => {
    const mrr = results.get("both.realistic.inverse_harmonic_mean_rank");
    expect(results.get("mrr")).toBe(mrr);
    expect(results.get("realistic.MRR.both")).toBe(mrr);
    expect(results.get("tail.hits@10")).toBe(results.get("tail.realistic.hits_at_10"));
    expect(results.get("head.amri")).toBe(results.get("realistic.head.adjusted_arithmetic_mean_rank_index"));
    // As in PyKEEN, z-scored, re-indexed and expectation-normalised metrics exist for realistic ranks only.
    expect(() => results.get("head.pessimistic.amri")).toThrow(/reported for rank types realistic/);
    expect(results.get("left.mr")).toBe(results.get("head.arithmetic_mean_rank"));
    expect(() => results.get("both.sideways.mrr")).toThrow(/neither a side .* nor a rank type .*: "sideways", "mrr"/);
    expect(() => results.get("both.realistic.mrx")).toThrow(UnknownMetricError);
    expect(() => results.get("head.tail.mrr")).toThrow(KgrankInputError);
    expect(() => results.get("both.realistic")).toThrow(/names no metric/);
    expect(() => results.get("hits@7")).toThrow(/was not computed/);
  });

  it("keeps adjusted and z-scored Hits@k apart for every k (PyKEEN overwrites them)", () => {
    const keys = Object.keys(results.toJSON().both.realistic);
    for (const k of [1, 3, 5, 10]) {
      expect(keys).toContain(`adjusted_hits_at_${k}`);
      expect(keys).toContain(`z_hits_at_${k}`);
    }
    expect(results.get("ah@1")).not.toBe(results.get("ah@10"));
  });

  it("offers JSON, flat and markdown views of the same numbers", () => {
    const json = results.toJSON();
    const flat = results.toFlatObject();
    expect(flat["tail.optimistic.hits_at_3"]).toBe(json.tail.optimistic.hits_at_3);
    expect(Object.keys(flat).length).toBeGreaterThan(3 * 3 * 20);
    const md = results.toMarkdown();
    expect(md).toMatch(/\| inverse_harmonic_mean_rank \|/);
    expect(md).toMatch(/201 head and 201 tail tasks/);
    expect(results.info).toMatchObject({ filtered: true, tasks: { head: rows, tail: rows }, backend: info.backend });
  });

  it("reports only the metrics asked for, with the ks asked for", () => {
    const r = evaluate({ metrics: ["mrr", "hits@2"], ks: [2] });
    expect(Object.keys(r.toJSON().tail.realistic).sort()).toEqual(["hits_at_2", "inverse_harmonic_mean_rank"]);
  });

  it("gives merged shards exactly the single-process results, median included", () => {
    const states = [0, 1, 2].map((s) => {
      const ev = new RankEvaluator({ numEntities: N, filterTriples: filter });
      const a = Math.floor((s * rows) / 3);
      const b = Math.floor(((s + 1) * rows) / 3);
      for (const side of ["head", "tail"] as const) {
        ev.addSync({ triples: test.subarray(3 * a, 3 * b), side, scores: scores[side].subarray(a * N, b * N) });
      }
      return ev.serialize();
    });
    const merged = RankEvaluator.merge(states).finalize();
    expect(merged.toJSON()).toEqual(results.toJSON());
    expect(merged.get("median_rank")).toBe(results.get("median_rank"));
  });

  it("weights tasks under macro weighting and leaves out metrics without weight support", () => {
    const macro = evaluate({ weighting: "macro" });
    expect(macro.info.weighting).toBe("macro");
    expect(macro.get("mrr")).not.toBe(results.get("mrr"));
  });

  it('the table\'s footer says what "both" is when the tasks are of one side: NaN under sides "both", else that side', () => {
    const ranks = { side: "tail" as const, realistic: [1, 2], numCandidates: [5, 5] };
    const declaredBoth = new RankEvaluator({ numEntities: 5 });
    declaredBoth.addRanks(ranks);
    const nan = declaredBoth.finalize();
    expect(nan.get("both.realistic.mrr")).toBeNaN();
    expect(nan.toTable()).toContain('"both" is NaN: both sides were declared and no head task was added.');
    const tailOnly = new RankEvaluator({ numEntities: 5, sides: "tail" });
    tailOnly.addRanks(ranks);
    const one = tailOnly.finalize();
    expect(one.get("both.realistic.mrr")).toBe(one.get("tail.realistic.mrr"));
    expect(one.toTable()).toContain('"both" is the tail side alone (the only side evaluated).');
    const two = new RankEvaluator({ numEntities: 5 });
    two.addRanks(ranks);
    two.addRanks({ ...ranks, side: "head" });
    expect(two.finalize().toTable()).not.toContain('"both" is');
  });

  it("refuses a second finalize and an empty evaluator", () => {
    const ev = new RankEvaluator({ numEntities: N });
    expect(() => ev.finalize()).toThrow(/no task was added/);
    ev.addRanks({ side: "tail", realistic: [1, 2], numCandidates: [3, 3] });
    const r = ev.finalize();
    expect(r.get("tail.mr")).toBe(1.5);
    // Hits@3 re-indexed is undefined when no task has more than 3 candidates: NaN, with the reason in the notes.
    expect(r.get("tail.adjusted_hits_at_3")).toBeNaN();
    expect(r.info.notes.join("\n")).toMatch(/tail\.realistic\.adjusted_hits_at_3 is NaN/);
    expect(r.get("tail.hits_at_1")).toBe(0.5);
    expect(() => r.get("tail.optimistic.mr")).toThrow(/was not computed/);
    expect(() => ev.finalize()).toThrow(KgrankStateError);
  });
});
