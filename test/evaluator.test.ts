import { describe, expect, it } from "vitest";

import { CompactIds } from "../src/evaluation/selection";
import { RankEvaluator } from "../src/evaluation/evaluator";
import { getMetric, prepareCandidates } from "../src/index";
import { knownAnswers, referenceRanks, rng } from "./helpers/reference";
import { backendLabel } from "./helpers/backend";
import { relErr } from "./helpers/metrics-reference";
import { umls } from "./helpers/umls";
import { expectInputError } from "./helpers/errors";

const label = backendLabel;
const { N, train, valid, test } = umls();
const allTriples = [train, valid, test];

type Side = "head" | "tail";

/** Brute force: mask every other known answer (and non-kept entities) with NaN, then rank by sorting. */
function reference(
  scores: Float32Array,
  triples: Int32Array,
  side: Side,
  filter: Int32Array[] | null,
  keptEntities: Set<number> | null,
) {
  const known = knownAnswers(filter ?? [], side);
  const rows = triples.length / 3;
  const masked = new Float64Array(scores);
  const truths: number[] = [];
  for (let i = 0; i < rows; i++) {
    const [h, r, t] = [triples[3 * i]!, triples[3 * i + 1]!, triples[3 * i + 2]!];
    const truth = side === "tail" ? t : h;
    const key = side === "tail" ? `${h},${r}` : `${t},${r}`;
    for (const k of known.get(key) ?? []) if (k !== truth) masked[i * N + k] = NaN;
    if (keptEntities) for (let e = 0; e < N; e++) if (!keptEntities.has(e)) masked[i * N + e] = NaN;
    truths.push(truth);
  }
  return referenceRanks(masked, N, { trueIndices: truths });
}

function randomScores(rows: number, seed: number): Float32Array {
  const next = rng(seed);
  return new Float32Array(rows * N).map(() => (next() < 0.01 ? NaN : Math.floor(next() * 40) / 8));
}

function fixTrue(scores: Float32Array, triples: Int32Array, side: Side) {
  for (let i = 0; i < triples.length / 3; i++) {
    const truth = side === "tail" ? triples[3 * i + 2]! : triples[3 * i]!;
    if (Number.isNaN(scores[i * N + truth]!)) scores[i * N + truth] = 1;
  }
}

describe(`RankEvaluator feeding on ${label}`, () => {
  for (const filtered of [true, false]) {
    it(`records the brute-force ${filtered ? "filtered" : "unfiltered"} ranks of UMLS test, both sides, in batches`, async () => {
      const ev = new RankEvaluator({ numEntities: N, filterTriples: filtered ? allTriples : undefined });
      const rows = test.length / 3;
      for (const side of ["head", "tail"] as const) {
        const scores = randomScores(rows, side === "head" ? 1 : 2);
        fixTrue(scores, test, side);
        const want = reference(scores, test, side, filtered ? allTriples : null, null);
        // Batches of 100 rows, alternating sync and async.
        for (let start = 0, b = 0; start < rows; start += 100, b++) {
          const end = Math.min(rows, start + 100);
          const batch = {
            triples: test.subarray(3 * start, 3 * end),
            side,
            scores: scores.subarray(start * N, end * N),
          };
          if (b % 2) await ev.add(batch);
          else ev.addSync(batch);
        }
        const got = ev.taskColumns(side);
        expect(Array.from(got.optimistic)).toEqual(want.optimistic);
        expect(Array.from(got.pessimistic)).toEqual(want.pessimistic);
        expect(Array.from(got.realistic)).toEqual(want.realistic);
        expect(Array.from(got.numCandidates)).toEqual(want.numCandidates);
        expect(Array.from(got.relation)).toEqual(Array.from({ length: rows }, (_, i) => test[3 * i + 1]));
      }
      expect(ev.taskCounts).toEqual({ head: rows, tail: rows });
      expect(ev.info()).toMatchObject({
        filtered,
        filterTriples: filtered ? [train.length / 3, valid.length / 3, test.length / 3] : [],
      });
    });
  }

  it("add() calls in flight together, with and without onProgress (two count paths), give the sync results", async () => {
    const rows = test.length / 3;
    const scores = randomScores(rows, 3);
    fixTrue(scores, test, "tail");
    const want = new RankEvaluator({ numEntities: N, filterTriples: allTriples, sides: "tail" });
    want.addSync({ triples: test, side: "tail", scores });
    const ev = new RankEvaluator({ numEntities: N, filterTriples: allTriples, sides: "tail" });
    const pending: Promise<void>[] = [];
    for (let start = 0, b = 0; start < rows; start += 50, b++) {
      const end = Math.min(rows, start + 50);
      const batch = {
        triples: test.subarray(3 * start, 3 * end),
        side: "tail" as const,
        scores: scores.subarray(start * N, end * N),
      };
      pending.push(ev.add(b % 3 ? batch : { ...batch, onProgress: () => undefined }));
    }
    await Promise.all(pending);
    expect(ev.taskColumns("tail")).toEqual(want.taskColumns("tail"));
  });

  it("restricts tasks to relations and entities, and candidates to the kept entities", () => {
    const keptRel = [0, 1, 2, 3, 5, 8, 13, 21];
    const keptEnt = Array.from({ length: N }, (_, e) => e).filter((e) => e % 3 !== 0 || e < 20);
    const ev = new RankEvaluator({
      numEntities: N,
      filterTriples: allTriples,
      restrictRelations: keptRel,
      restrictEntities: keptEnt,
    });
    const rows = test.length / 3;
    const scores = randomScores(rows, 5);
    fixTrue(scores, test, "tail");
    ev.addSync({ triples: test, side: "tail", scores });
    const keptSet = new Set(keptEnt);
    const keptRows: number[] = [];
    for (let i = 0; i < rows; i++) {
      if (keptRel.includes(test[3 * i + 1]!) && keptSet.has(test[3 * i]!) && keptSet.has(test[3 * i + 2]!))
        keptRows.push(i);
    }
    const sub = Int32Array.from(keptRows.flatMap((i) => [test[3 * i]!, test[3 * i + 1]!, test[3 * i + 2]!]));
    const subScores = new Float32Array(keptRows.length * N);
    keptRows.forEach((i, k) => subScores.set(scores.subarray(i * N, (i + 1) * N), k * N));
    const want = reference(subScores, sub, "tail", allTriples, keptSet);
    const got = ev.taskColumns("tail");
    expect(Array.from(got.realistic)).toEqual(want.realistic);
    expect(Array.from(got.optimistic)).toEqual(want.optimistic);
    expect(Array.from(got.numCandidates)).toEqual(want.numCandidates);
    expect(ev.info().skipped.tail).toBe(rows - keptRows.length);
    expect(keptRows.length).toBeGreaterThan(10);
    expect(rows - keptRows.length).toBeGreaterThan(10);
  });

  it("computes PyKEEN's macro weights: 1 / distinct answers of the task's key among evaluated tasks", () => {
    const ev = new RankEvaluator({ numEntities: N, filterTriples: allTriples, weighting: "macro" });
    const rows = test.length / 3;
    const scores = randomScores(rows, 9);
    fixTrue(scores, test, "tail");
    ev.addSync({ triples: test, side: "tail", scores });
    const w = ev.taskWeights("tail")!;
    for (let i = 0; i < rows; i++) {
      const [h, r] = [test[3 * i]!, test[3 * i + 1]!];
      let distinct = 0;
      const seen = new Set<number>();
      for (let j = 0; j < rows; j++) {
        if (test[3 * j] === h && test[3 * j + 1] === r && !seen.has(test[3 * j + 2]!)) {
          seen.add(test[3 * j + 2]!);
          distinct++;
        }
      }
      expect(w[i]).toBe(1 / distinct);
    }
    expect(new RankEvaluator({ numEntities: N }).taskWeights("head")).toBeNull();
  });

  it("takes sampled scores and ranks computed elsewhere", () => {
    const ev = new RankEvaluator({ numEntities: N, sides: "tail" });
    ev.addSampledSync({
      side: "tail",
      positiveScores: [1, 2],
      negativeScores: new Float32Array([3, 1, 0, 2, 2, 2]),
      triples: test.subarray(0, 6),
    });
    ev.addRanks({ side: "tail", realistic: [1.5, 3], numCandidates: [4, 10], weights: [2, 1] });
    const c = ev.taskColumns("tail");
    expect(Array.from(c.realistic)).toEqual([2.5, 2.5, 1.5, 3]); // pos 1 vs [3, 1, 0]: 2..3; pos 2 vs [2, 2, 2]: 1..4
    expect(Array.from(c.optimistic.subarray(0, 2))).toEqual([2, 1]);
    expect(Number.isNaN(c.optimistic[2]!)).toBe(true);
    expect(Array.from(c.numCandidates)).toEqual([4, 4, 4, 10]);
    expect(Array.from(ev.taskWeights("tail")!)).toEqual([1, 1, 2, 1]);
    expect(ev.info().weighting).toBe("explicit");
  });

  it("reports the median's random expectation on access (exact here), and none for weighted runs", async () => {
    const { getMetric } = await import("../src/index");
    const ev = new RankEvaluator({ numEntities: N, sides: "tail" });
    ev.addRanks({ side: "tail", realistic: [1.5, 3, 2], numCandidates: [4, 10, 7] });
    const r = ev.finalize();
    const want = getMetric("median_rank").expectedValue([4, 10, 7]);
    expect(r.expected("tail.median_rank")).toBeCloseTo(want, 12);
    expect(r.expected("both.median_rank")).toBeCloseTo(want, 12);
    expect(r.toMarkdown()).toContain("median_rank");
    const w = new RankEvaluator({ numEntities: N, sides: "tail" });
    w.addRanks({ side: "tail", realistic: [1.5, 3], numCandidates: [4, 10], weights: [2, 1] });
    expect(w.finalize().expected("tail.median_rank")).toBeUndefined();
  });

  it("a side declared but never fed makes 'both' NaN with the reason in notes, not the other side's numbers", () => {
    const ev = new RankEvaluator({ numEntities: N });
    ev.addRanks({ side: "tail", realistic: [1, 2, 4], numCandidates: [5, 5, 5] });
    const r = ev.finalize();
    expect(r.get("tail.mrr")).toBeCloseTo((1 + 1 / 2 + 1 / 4) / 3, 14);
    expect(r.get("mrr")).toBeNaN();
    expect(r.get("both.realistic.hits@10")).toBeNaN();
    expect(r.info.notes.join("\n")).toMatch(/no head task was added/);
    // A declared single side is not affected.
    const one = new RankEvaluator({ numEntities: N, sides: "tail" });
    one.addRanks({ side: "tail", realistic: [1, 2, 4], numCandidates: [5, 5, 5] });
    expect(one.finalize().get("mrr")).toBeCloseTo((1 + 1 / 2 + 1 / 4) / 3, 14);
  });

  it("zero weights count for nothing (PyKEEN): equal to leaving those tasks out of every weighted metric", () => {
    const realistic = [1, 2.5, 7, 3, 1, 9];
    const numCandidates = [5, 10, 9, 4, 2, 30];
    const weights = [1, 0, 2, 0.5, 0, 3];
    const keep = weights.map((w) => w > 0);
    const all = new RankEvaluator({ numEntities: N, sides: "tail" });
    all.addRanks({ side: "tail", realistic, numCandidates, weights });
    const kept = new RankEvaluator({ numEntities: N, sides: "tail" });
    kept.addRanks({
      side: "tail",
      realistic: realistic.filter((_, i) => keep[i]),
      numCandidates: numCandidates.filter((_, i) => keep[i]),
      weights: weights.filter((w) => w > 0),
    });
    const a = all.finalize();
    const b = kept.finalize();
    for (const key of [
      "mr",
      "mrr",
      "gmr",
      "hmr",
      "hits@1",
      "hits@3",
      "hits@10",
      "median_rank",
      "mad",
      "amri",
      "zmrr",
      "adjusted_hits_at_3",
    ]) {
      expect(a.get(`tail.${key}`), key).toBeCloseTo(b.get(`tail.${key}`), 12);
    }
    expect(a.expected("tail.mrr")).toBeCloseTo(b.expected("tail.mrr")!, 14);
    // Variance, standard deviation and count ignore weights (PyKEEN), so they are over all six tasks.
    expect(a.get("tail.count")).toBe(6);
    const mean = realistic.reduce((x, y) => x + y) / 6;
    expect(a.get("tail.variance")).toBeCloseTo(realistic.reduce((x, y) => x + (y - mean) ** 2, 0) / 6, 12);
  });

  it("weights are scale-invariant: x 5e-324, x 1e-160 and x 5e307 (sum past the largest double) give the results of the unscaled weights", () => {
    const run = (scale: number) => {
      const ev = new RankEvaluator({ numEntities: N, sides: "tail" });
      ev.addRanks({
        side: "tail",
        realistic: [1, 3, 2],
        numCandidates: [4, 10, 7],
        weights: [1, 2, 3].map((w) => w * scale),
      });
      return ev.finalize();
    };
    const base = run(1);
    // The closed-form Var (and std) of each metric under random ranking with the same weights (before the weights
    // were normalised, x 1e-160 shifted Var[MRR] by 4e-4): relative agreement, since Var[MR] is ~2 and Var[MRR] ~0.03.
    const candidates = [4, 10, 7];
    const moments = (scale: number) =>
      ["mr", "mrr", "gmr", "hits@3", "amri", "zmrr", "adjusted_hits_at_3"].map((key) => {
        const c = prepareCandidates(
          candidates,
          [1, 2, 3].map((w) => w * scale),
        );
        const m = getMetric(key);
        return { key, e: m.expectedValue(c), v: m.variance(c), std: m.std(c) };
      });
    const baseMoments = moments(1);
    for (const scale of [5e-324, 1e-160, 5e307]) {
      const r = run(scale);
      for (const key of ["mr", "mrr", "gmr", "hits@3", "median_rank", "amri", "zmrr"]) {
        expect(r.get(`tail.${key}`), `${key} x ${scale}`).toBeCloseTo(base.get(`tail.${key}`), 13);
      }
      expect(r.expected("tail.mrr")).toBeCloseTo(base.expected("tail.mrr")!, 14);
      // The rank variance and std of the results ignore weights (PyKEEN) but must not turn NaN at extreme scales.
      expect(r.get("tail.variance"), `variance x ${scale}`).toBe(base.get("tail.variance"));
      expect(r.get("tail.std"), `std x ${scale}`).toBe(base.get("tail.std"));
      moments(scale).forEach(({ key, e, v, std }, i) => {
        const want = baseMoments[i]!;
        expect(relErr(e, want.e), `E[${key}] x ${scale}`).toBeLessThanOrEqual(1e-13);
        expect(relErr(v, want.v), `Var[${key}] x ${scale}`).toBeLessThanOrEqual(1e-13);
        expect(relErr(std, want.std), `std[${key}] x ${scale}`).toBeLessThanOrEqual(1e-13);
        expect(std).toBeCloseTo(Math.sqrt(v), 14);
      });
    }
  });

  it("macro weighting reports variance, standard deviation and count as PyKEEN does (unweighted)", () => {
    const ev = new RankEvaluator({ numEntities: N, filterTriples: allTriples, weighting: "macro", sides: "tail" });
    const rows = test.length / 3;
    const scores = randomScores(rows, 5);
    fixTrue(scores, test, "tail");
    ev.addSync({ triples: test, side: "tail", scores });
    const r = ev.finalize();
    const ranks = Array.from(ev.taskColumns("tail").realistic);
    const mean = ranks.reduce((x, y) => x + y) / ranks.length;
    const v = ranks.reduce((x, y) => x + (y - mean) ** 2, 0) / ranks.length;
    expect(r.get("tail.variance")).toBeCloseTo(v, 10);
    expect(r.get("tail.std")).toBeCloseTo(Math.sqrt(v), 10);
    expect(r.get("tail.count")).toBe(rows);
  });

  it("checks metric names when it is constructed, not in finalize(); full PyKEEN keys name their metric", () => {
    expect(() => new RankEvaluator({ numEntities: N, metrics: ["mrr", "hitz@10"] })).toThrow(
      /unknown metric "hitz@10"/,
    );
    const ev = new RankEvaluator({
      numEntities: N,
      sides: "tail",
      metrics: ["tail.realistic.hits_at_10", "mrr", "MRR", "inverse_harmonic_mean_rank"],
    });
    ev.addRanks({ side: "tail", realistic: [1, 20], numCandidates: [30, 30] });
    const r = ev.finalize();
    expect(Object.keys(r.toJSON().tail.realistic)).toEqual(["hits_at_10", "inverse_harmonic_mean_rank"]);
  });

  it("console.log shows the tasks and headline metrics, not RankResults {}", async () => {
    const { inspect } = await import("node:util");
    const ev = new RankEvaluator({ numEntities: N, sides: "tail" });
    ev.addRanks({ side: "tail", realistic: [1, 2], numCandidates: [4, 4] });
    const text = inspect(ev.finalize());
    expect(text).toMatch(/^RankResults \{ tasks: \{ head: 0, tail: 2 \}/);
    expect(text).toContain("inverse_harmonic_mean_rank: 0.75");
  });

  const bad: [string, () => unknown, string, RegExp?][] = [
    [
      "an evaluated triple missing from the filter",
      () =>
        new RankEvaluator({ numEntities: N, filterTriples: [train] }).addSync({
          triples: test.subarray(0, 3),
          side: "tail",
          scores: new Float32Array(N),
        }),
      "triples",
      /not in filterTriples/,
    ],
    // The filtered synchronous batch takes one native call on the native backend: its problems must read the same.
    [
      "an evaluated triple missing from the filter, among others that are in it",
      () =>
        new RankEvaluator({ numEntities: N, filterTriples: [train, test.subarray(0, 3)] }).addSync({
          triples: test.subarray(0, 6),
          side: "head",
          scores: new Float32Array(2 * N),
        }),
      "triples",
      /triple \(\d+, \d+, \d+\) is not in filterTriples/,
    ],
    [
      "a NaN true score in a filtered batch",
      () =>
        new RankEvaluator({ numEntities: N, filterTriples: [train, test] }).addSync({
          triples: test.subarray(0, 6),
          side: "tail",
          scores: new Float64Array(2 * N).fill(NaN),
        }),
      "scores",
      /true score of row 0 of the batch \(triple \(\d+, \d+, \d+\), tail side\) is NaN/,
    ],
    [
      "a NaN true score on the one-call path, row 1",
      () =>
        new RankEvaluator({ numEntities: N, filterTriples: [train, test] }).addSync({
          triples: test.subarray(0, 6),
          side: "head",
          scores: new Float32Array(2 * N).fill(NaN, N),
        }),
      "scores",
      /true score of row 1 of the batch \(triple \(\d+, \d+, \d+\), head side\)/,
    ],
    [
      "a NaN true score under restriction names the batch row, not the kept task",
      () =>
        new RankEvaluator({ numEntities: N, filterTriples: [train, test], restrictRelations: [test[4]!] }).addSync({
          triples: test.subarray(0, 6),
          side: "tail",
          scores: new Float64Array(2 * N).fill(NaN),
        }),
      "scores",
      /row 1 of the batch/,
    ],
    [
      "an entity id out of range in a filtered batch",
      () =>
        new RankEvaluator({ numEntities: N, filterTriples: [train, test] }).addSync({
          triples: new Int32Array([0, 0, 1, 0, 0, N]),
          side: "tail",
          scores: new Float32Array(2 * N),
        }),
      "triples",
      /row 1: tail/,
    ],
    [
      "a relation id out of range in a filtered batch",
      () =>
        new RankEvaluator({
          numEntities: N,
          numRelations: 3,
          filterTriples: [train.filter((_, i) => train[i - (i % 3) + 1]! < 3)],
        }).addSync({ triples: new Int32Array([0, 7, 1]), side: "head", scores: new Float32Array(N) }),
      "triples",
      /relation 7/,
    ],
    [
      "a side the evaluator does not evaluate",
      () =>
        new RankEvaluator({ numEntities: N, sides: "tail" }).addSync({
          triples: test.subarray(0, 3),
          side: "head",
          scores: new Float32Array(N),
        }),
      "side",
    ],
    [
      "an unknown side",
      () =>
        new RankEvaluator({ numEntities: N }).addSync({
          triples: test.subarray(0, 3),
          side: "both" as never,
          scores: new Float32Array(N),
        }),
      "side",
    ],
    [
      "scores of the wrong length",
      () =>
        new RankEvaluator({ numEntities: N }).addSync({
          triples: test.subarray(0, 3),
          side: "tail",
          scores: new Float32Array(N - 1),
        }),
      "scores",
      /needs 1 x numEntities/,
    ],
    [
      "an entity id out of range",
      () =>
        new RankEvaluator({ numEntities: N }).addSync({
          triples: [0, 0, N],
          side: "tail",
          scores: new Float32Array(N),
        }),
      "triples",
      /tail/,
    ],
    [
      "triples not in rows of 3",
      () =>
        new RankEvaluator({ numEntities: N }).addSync({ triples: [0, 0], side: "tail", scores: new Float32Array(N) }),
      "triples",
    ],
    ["numEntities zero", () => new RankEvaluator({ numEntities: 0 }), "numEntities"],
    [
      "a bad filter array",
      () => new RankEvaluator({ numEntities: N, filterTriples: [new Int32Array([0, 0, N])] }),
      "filterTriples[0]",
    ],
    ["an unknown weighting", () => new RankEvaluator({ numEntities: N, weighting: "mega" as never }), "weighting"],
    ["ks with zero", () => new RankEvaluator({ numEntities: N, ks: [0] }), "ks[0]"],
    ["an empty restriction", () => new RankEvaluator({ numEntities: N, restrictRelations: [] }), "restrictRelations"],
    [
      "a rank above its candidates",
      () => new RankEvaluator({ numEntities: N }).addRanks({ side: "tail", realistic: [5], numCandidates: [4] }),
      "realistic",
    ],
    [
      "a rank of 1.25",
      () => new RankEvaluator({ numEntities: N }).addRanks({ side: "tail", realistic: [1.25], numCandidates: [4] }),
      "realistic",
    ],
    [
      "a negative weight",
      () =>
        new RankEvaluator({ numEntities: N }).addRanks({
          side: "tail",
          realistic: [1],
          numCandidates: [4],
          weights: [-0.5],
        }),
      "weights",
    ],
    [
      "no ranks at all",
      () => new RankEvaluator({ numEntities: N }).addRanks({ side: "tail", numCandidates: [4] }),
      "ranks",
    ],
  ];
  for (const [what, call, argument, pattern] of bad) {
    it(`rejects ${what} with a KgrankInputError naming ${argument}`, () => {
      expectInputError(call, argument, pattern);
    });
  }
});

describe(`entity restriction's id map on ${label}`, () => {
  it("maps ids by table or by search identically; a few kept entities of 2^31 - 1 need no 8 GiB table", () => {
    const next = rng(5);
    for (const [numEntities, keptCount] of [
      [1000, 30],
      [2 ** 24 + 10, 3],
      [2 ** 31 - 1, 50],
    ] as const) {
      const kept = Int32Array.from(
        new Set(Array.from({ length: keptCount }, () => Math.floor(next() * numEntities))),
      ).sort();
      const map = new CompactIds(kept, numEntities);
      const reference = new Map(Array.from(kept, (e, i) => [e, i]));
      const probes = [
        ...kept,
        0,
        numEntities - 1,
        ...Array.from({ length: 200 }, () => Math.floor(next() * numEntities)),
      ];
      for (const e of probes) expect(map.id(e)).toBe(reference.get(e) ?? -1);
    }
    const ev = new RankEvaluator({ numEntities: 2 ** 31 - 1, numRelations: 2, restrictEntities: [1, 2] });
    ev.addSampledSync({
      side: "tail",
      triples: new Int32Array([1, 0, 2, 1, 1, 5, 2, 0, 1]),
      positiveScores: [1, 1, 1],
      negativeScores: new Float32Array([0, 2, 0, 0, 0, 0]),
    });
    expect(ev.info().skipped.tail).toBe(1);
    expect(Array.from(ev.taskColumns("tail").realistic)).toEqual([2, 1]); // row 0: one negative (2) above 1; row 2: none
    expect(() =>
      ev.addSampledSync({ side: "tail", positiveScores: [1], negativeScores: new Float32Array([0]) }),
    ).toThrow(/triples: are required under restrict/);
  });
});
