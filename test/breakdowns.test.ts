/**
 * RankResults breakdowns (per relation, relation category, degree bucket) and bootstrap intervals, on UMLS with
 * seeded scores. References: the same evaluator fed only the group's triples (a group's results must equal an
 * evaluation of just those tasks), categories and degrees counted here by plain loops, and a bootstrap written
 * here with its own resampling (a different PRNG, so only statistical agreement is expected).
 */
import { describe, expect, it } from "vitest";

import { KgrankInputError, KgrankStateError, RankEvaluator, RankResults } from "../src/index";
import { rng } from "./helpers/reference";
import { backendLabel } from "./helpers/backend";
import { umls } from "./helpers/umls";

const label = backendLabel;
const { N, train, valid, test } = umls();
const filter = [train, valid, test];
type Side = "head" | "tail";

function scoresFor(triples: Int32Array, side: Side, seed: number): Float32Array {
  const next = rng(seed);
  const rows = triples.length / 3;
  const s = new Float32Array(rows * N);
  for (let i = 0; i < s.length; i++) s[i] = Math.floor(next() * 32);
  // Make the model decent: lift the true answer.
  for (let i = 0; i < rows; i++)
    s[i * N + (side === "tail" ? triples[3 * i + 2]! : triples[3 * i]!)] = 24 + Math.floor(next() * 8);
  return s;
}
const scores = { head: scoresFor(test, "head", 3), tail: scoresFor(test, "tail", 4) };

function evaluate(rows: number[], opts: { weighting?: "micro" | "macro" } = {}): RankResults {
  const ev = new RankEvaluator({ numEntities: N, filterTriples: filter, ...opts });
  const triples = Int32Array.from(rows.flatMap((i) => [test[3 * i]!, test[3 * i + 1]!, test[3 * i + 2]!]));
  for (const side of ["head", "tail"] as Side[]) {
    const s = new Float32Array(rows.length * N);
    rows.forEach((i, k) => s.set(scores[side].subarray(i * N, (i + 1) * N), k * N));
    ev.addSync({ triples, side, scores: s });
  }
  return ev.finalize();
}
const allRows = Array.from({ length: test.length / 3 }, (_, i) => i);

function expectSameValues(a: RankResults, b: RankResults) {
  const fa = a.toFlatObject();
  const fb = b.toFlatObject();
  expect(Object.keys(fa).sort()).toEqual(Object.keys(fb).sort());
  for (const [k, v] of Object.entries(fb)) {
    if (Number.isNaN(v)) expect(fa[k]).toBeNaN();
    else expect(Math.abs(fa[k]! - v)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(v)));
  }
}

describe(`RankResults breakdowns on ${label}`, () => {
  const results = evaluate(allRows);

  it("byRelation(): every relation with tasks, each equal to evaluating just its triples", () => {
    const groups = results.byRelation();
    const relations = [...new Set(allRows.map((i) => test[3 * i + 1]!))].sort((a, b) => a - b);
    expect(groups.map((g) => g.relation)).toEqual(relations);
    expect(groups.reduce((a, g) => a + g.count, 0)).toBe(2 * allRows.length);
    // Check a handful of relations exactly against separate evaluations.
    for (const g of groups.filter((_, j) => j % 9 === 0)) {
      const rows = allRows.filter((i) => test[3 * i + 1] === g.relation);
      expect(g.tasks).toEqual({ head: rows.length, tail: rows.length });
      expectSameValues(g.results, evaluate(rows));
      expect(g.results.info.group).toBe(String(g.relation));
    }
  });

  it("byRelationCategory(): Bordes et al.'s 1-1 / 1-N / N-1 / N-N from the training triples", () => {
    // Reference categories by plain counting.
    const tph = new Map<number, Map<number, Set<number>>>();
    const hpt = new Map<number, Map<number, Set<number>>>();
    for (let i = 0; i < train.length; i += 3) {
      const [h, r, t] = [train[i]!, train[i + 1]!, train[i + 2]!];
      if (!tph.has(r)) tph.set(r, new Map());
      if (!hpt.has(r)) hpt.set(r, new Map());
      if (!tph.get(r)!.has(h)) tph.get(r)!.set(h, new Set());
      if (!hpt.get(r)!.has(t)) hpt.get(r)!.set(t, new Set());
      tph.get(r)!.get(h)!.add(t);
      hpt.get(r)!.get(t)!.add(h);
    }
    const avg = (m: Map<number, Set<number>>) => [...m.values()].reduce((a, s) => a + s.size, 0) / m.size;
    const category = (r: number) =>
      !tph.has(r) ? "unseen" : `${avg(hpt.get(r)!) >= 1.5 ? "N" : "1"}-${avg(tph.get(r)!) >= 1.5 ? "N" : "1"}`;
    const groups = results.byRelationCategory(train);
    expect(groups.length).toBeGreaterThanOrEqual(2);
    let total = 0;
    for (const g of groups) {
      const rows = allRows.filter((i) => category(test[3 * i + 1]!) === g.category);
      expect(rows.length, g.category).toBeGreaterThan(0);
      expect(g.count).toBe(2 * rows.length);
      expect(g.relations).toEqual([...new Set(rows.map((i) => test[3 * i + 1]!))].sort((a, b) => a - b));
      expectSameValues(g.results, evaluate(rows));
      total += g.count;
    }
    expect(total).toBe(2 * allRows.length);
  });

  it("byDegree(): buckets 0, 1, 2-3, 4-7, ... of the answer's (or anchor's) training degree", () => {
    const degree = new Map<number, number>();
    for (let i = 0; i < train.length; i += 3) {
      degree.set(train[i]!, (degree.get(train[i]!) ?? 0) + 1);
      degree.set(train[i + 2]!, (degree.get(train[i + 2]!) ?? 0) + 1);
    }
    const groups = results.byDegree(train);
    for (let j = 1; j < groups.length; j++) expect(groups[j]!.low).toBeGreaterThan(groups[j - 1]!.high);
    expect(groups.reduce((a, g) => a + g.count, 0)).toBe(2 * allRows.length);
    const g = groups[groups.length - 1]!;
    // Tasks whose answer degree falls in the bucket: head tasks answer with the head, tail tasks with the tail.
    const inBucket = (e: number) => (degree.get(e) ?? 0) >= g.low && (degree.get(e) ?? 0) <= g.high;
    const headRows = allRows.filter((i) => inBucket(test[3 * i]!));
    const tailRows = allRows.filter((i) => inBucket(test[3 * i + 2]!));
    expect(g.tasks).toEqual({ head: headRows.length, tail: tailRows.length });
    const custom = results.byDegree(train, { of: "anchor", bounds: [0, 50, 200] });
    expect(custom.map((c) => c.label).every((l) => ["0-49", "50-199", "200+"].includes(l))).toBe(true);
    expect(() => results.byDegree(train, { bounds: [1, 2] })).toThrow(KgrankInputError);
    expect(() => results.byDegree(train, { of: "head" as never })).toThrow(KgrankInputError);
    expect(() => results.byRelationCategory(Int32Array.of(0, 0) as never)).toThrow(/not a multiple of 3/);
    expect(() => results.byRelationCategory(Int32Array.of(0, 0, 1e6))).toThrow(/tail 1000000 is not an id in \[0, /);
    expect(() => results.byRelationCategory("0 0 1" as never)).toThrow(KgrankInputError);
  });

  it("breakdowns keep macro weights of the whole evaluation", () => {
    const macro = evaluate(allRows, { weighting: "macro" });
    const g = macro.byRelation()[0]!;
    expect(g.results.info.weighting).toBe("macro");
    expect(Number.isFinite(g.results.get("mrr"))).toBe(true);
  });

  it("results made without tasks refuse breakdowns with a KgrankStateError", () => {
    const bare = new RankResults({
      values: {
        head: { optimistic: {}, realistic: {}, pessimistic: {} },
        tail: { optimistic: {}, realistic: {}, pessimistic: {} },
        both: { optimistic: {}, realistic: {}, pessimistic: {} },
      },
      expected: { head: {}, tail: {}, both: {} },
      meanRankWidth: { head: NaN, tail: NaN, both: NaN },
      keys: [],
      info: results.info,
    });
    expect(() => bare.byRelation()).toThrow(KgrankStateError);
  });
});

describe(`RankEvaluator bootstrap intervals on ${label}`, () => {
  it("adds seeded percentile intervals that bracket the value and match an independent bootstrap's width", () => {
    const ev = new RankEvaluator({
      numEntities: N,
      filterTriples: filter,
      metrics: ["mrr", "mr", "hits@10", "amri", "median_rank"],
    });
    for (const side of ["head", "tail"] as Side[]) ev.addSync({ triples: test, side, scores: scores[side] });
    const cols = ev.taskColumns("tail");
    const tailRanks = Array.from(cols.realistic);
    const r = ev.finalize({ bootstrap: { samples: 400, seed: 7, confidenceLevel: 0.9 } });
    const iv = r.interval("tail.mrr")!;
    expect(iv.confidenceLevel).toBe(0.9);
    expect(iv.value).toBe(r.get("tail.mrr"));
    expect(iv.lower).toBeLessThan(iv.value);
    expect(iv.upper).toBeGreaterThan(iv.value);
    // Independent bootstrap (its own PRNG): the 90% interval of MRR should have about the same width.
    const next = rng(99);
    const n = tailRanks.length;
    const reps: number[] = [];
    for (let b = 0; b < 400; b++) {
      let s = 0;
      for (let i = 0; i < n; i++) s += 1 / tailRanks[Math.floor(next() * n)]!;
      reps.push(s / n);
    }
    reps.sort((a, b) => a - b);
    const refWidth = reps[Math.round(0.95 * 399)]! - reps[Math.round(0.05 * 399)]!;
    const width = iv.upper - iv.lower;
    expect(width / refWidth).toBeGreaterThan(0.75);
    expect(width / refWidth).toBeLessThan(1.33);
    // Every reported metric has an interval, for every side and rank type it is reported for.
    const flat = r.toFlatObject();
    for (const key of Object.keys(flat)) expect(r.interval(key), key).toBeDefined();
    expect(r.toMarkdown()).toContain("bootstrap percentile intervals");
  });

  it("is deterministic for a seed and differs across seeds", () => {
    const run = (seed: number) => {
      const ev = new RankEvaluator({ numEntities: N, filterTriples: filter, metrics: ["mrr", "hits@3"] });
      ev.addSync({ triples: test, side: "tail", scores: scores.tail });
      ev.addSync({ triples: test, side: "head", scores: scores.head });
      return ev.finalize({ bootstrap: { samples: 50, seed } }).intervals();
    };
    expect(run(1)).toEqual(run(1));
    expect(run(1)).not.toEqual(run(2));
  });

  it("finalizeAsync gives finalize's results, lets the event loop turn, and stops at an abort signal", async () => {
    const fed = () => {
      const ev = new RankEvaluator({
        numEntities: N,
        filterTriples: filter,
        metrics: ["mrr", "hits@3", "median_rank"],
      });
      ev.addSync({ triples: test, side: "tail", scores: scores.tail });
      ev.addSync({ triples: test, side: "head", scores: scores.head });
      return ev;
    };
    const bootstrap = { samples: 300, seed: 5 };
    const sync = fed().finalize({ bootstrap });
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const asyncResults = await fed().finalizeAsync({ bootstrap });
    clearInterval(ticker);
    expect(asyncResults.toJSON()).toEqual(sync.toJSON());
    expect(asyncResults.intervals()).toEqual(sync.intervals());
    expect(turns, "timers ran while the bootstrap was computed").toBeGreaterThan(0);
    // Aborted: rejects with the signal's reason, and the evaluator can be finalized again with the same result.
    const ev = fed();
    const controller = new AbortController();
    setImmediate(() => controller.abort());
    await expect(ev.finalizeAsync({ bootstrap: { samples: 1e6, seed: 5 }, signal: controller.signal })).rejects.toThrow(
      /abort/i,
    );
    expect(ev.finalize({ bootstrap }).intervals()).toEqual(sync.intervals());
    // An already-aborted signal rejects before any work; a signal that is not an AbortSignal is an input error.
    await expect(fed().finalizeAsync({ signal: AbortSignal.abort() })).rejects.toThrow(/abort/i);
    await expect(fed().finalizeAsync({ signal: "stop" as never })).rejects.toThrow(KgrankInputError);
    expect(() => fed().finalize({ signal: controller.signal } as never)).toThrow(/did you mean|unknown/);
  });

  it("rejects bad bootstrap options with a KgrankInputError naming the option", () => {
    for (const [bootstrap, arg] of [
      [{ samples: 1 }, "bootstrap.samples"],
      [{ samples: 2.5 }, "bootstrap.samples"],
      [{ seed: -1 }, "bootstrap.seed"],
      [{ confidenceLevel: 1 }, "bootstrap.confidenceLevel"],
      [{ confidenceLevel: Number.NaN }, "bootstrap.confidenceLevel"],
      ["yes", "bootstrap"],
    ] as const) {
      const ev = new RankEvaluator({ numEntities: N, filterTriples: filter });
      ev.addSync({ triples: test.subarray(0, 30), side: "tail", scores: scores.tail.subarray(0, 10 * N) });
      try {
        ev.finalize({ bootstrap: bootstrap as never });
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(KgrankInputError);
        expect((e as KgrankInputError).argument).toBe(arg);
      }
    }
  });
});

describe(`RankResults.tasks() on ${label}`, () => {
  it("gives every task's side, triple, ranks and candidates as columns; a group's results hold the group's tasks", () => {
    const ev = new RankEvaluator({ numEntities: N, filterTriples: filter });
    ev.addSync({ triples: test, side: "head", scores: scores.head });
    ev.addSync({ triples: test, side: "tail", scores: scores.tail });
    const r = ev.finalize();
    const t = r.tasks();
    const rows = test.length / 3;
    expect(t.side.length).toBe(2 * rows);
    for (let i = 0; i < 2 * rows; i++) {
      const row = i % rows;
      expect(t.side[i]).toBe(i < rows ? "head" : "tail");
      expect([t.head[i], t.relation[i], t.tail[i]]).toEqual([test[3 * row], test[3 * row + 1], test[3 * row + 2]]);
      expect(t.optimistic[i]).toBeLessThanOrEqual(t.realistic[i]!);
      expect(t.realistic[i]).toBeLessThanOrEqual(t.pessimistic[i]!);
    }
    const cols = ev.taskColumns("tail");
    expect(Array.from(t.realistic.subarray(rows))).toEqual(Array.from(cols.realistic));
    expect(Array.from(t.numCandidates.subarray(rows))).toEqual(Array.from(cols.numCandidates));
    expect(Number.isNaN(t.weight[0])).toBe(true);
    // Copies: changing them changes nothing behind the results.
    t.realistic.fill(1);
    expect(r.tasks().realistic).toEqual(Float64Array.from([...ev.taskColumns("head").realistic, ...cols.realistic]));
    // Each relation group's results hold exactly that relation's tasks, and their MRR is theirs.
    for (const g of r.byRelation().slice(0, 5)) {
      const gt = g.results.tasks();
      expect(gt.side.length).toBe(g.count);
      expect(new Set(gt.relation)).toEqual(new Set([g.relation]));
      const mrr = gt.realistic.reduce((a, x) => a + 1 / x, 0) / gt.realistic.length;
      expect(g.results.get("both.realistic.inverse_harmonic_mean_rank")).toBeCloseTo(mrr, 12);
      // A group's own breakdown stays inside the group.
      expect(g.results.byRelation().map((x) => x.relation)).toEqual([g.relation]);
    }
  });
});
