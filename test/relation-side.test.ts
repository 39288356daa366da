/**
 * The relation side of RankEvaluator (sides including "relation"): (h, ?, t) tasks ranked among the relations,
 * against a brute-force count written here from the definition on Nations, RelationRanker, and exact expectations;
 * "both" stays head and tail; its state round trip, shards and merge; the refusals.
 */
import { describe, expect, it } from "vitest";

import {
  compareRuns,
  EmbeddingModel,
  KgrankInputError,
  RankEvaluator,
  RelationRanker,
  type RankEvaluatorOptions,
} from "../src/index";
import { backendLabel } from "./helpers/backend";
import { loadBundled } from "./helpers/datasets";
import { expectError, thrownBy } from "./helpers/errors";
import { rng } from "./helpers/reference";
import { decodeState, encodeState } from "../src/evaluation/state";

const nations = loadBundled("nations");
const R = nations.relations.length;
const E = nations.entities.length;
const { train, valid, test } = nations.splits;
const rows = test.length / 3;
const known = new Set<string>();
for (const split of [train, valid, test])
  for (let i = 0; i < split.length; i += 3) known.add(`${split[i]},${split[i + 1]},${split[i + 2]}`);

/** The definition: candidates are the relations with a non-NaN score, less every other known (h, r', t). */
function bruteForce(triples: Int32Array, scores: Float32Array, filtered: boolean) {
  const n = triples.length / 3;
  const out = { optimistic: [] as number[], pessimistic: [] as number[], numCandidates: [] as number[] };
  for (let i = 0; i < n; i++) {
    const [h, r, t] = [triples[3 * i]!, triples[3 * i + 1]!, triples[3 * i + 2]!];
    const own = scores[i * R + r]!;
    let greater = 0;
    let equal = 0;
    let candidates = 0;
    for (let c = 0; c < R; c++) {
      const v = scores[i * R + c]!;
      if (Number.isNaN(v) || (c !== r && filtered && known.has(`${h},${c},${t}`))) continue;
      candidates++;
      if (c === r) continue;
      if (v > own) greater++;
      else if (v === own) equal++;
    }
    out.optimistic.push(1 + greater);
    out.pessimistic.push(1 + greater + equal);
    out.numCandidates.push(candidates);
  }
  return out;
}

/** Scores with eight levels (many ties) and 3 % NaN, never on the true relation. */
function relationScores(triples: Int32Array, seed: number): Float32Array {
  const next = rng(seed);
  const n = triples.length / 3;
  const s = new Float32Array(n * R);
  for (let k = 0; k < s.length; k++) s[k] = next() < 0.03 ? NaN : Math.floor(next() * 8) / 8;
  for (let i = 0; i < n; i++) s[i * R + triples[3 * i + 1]!] = Math.floor(next() * 8) / 8;
  return s;
}

/** Entity scores for one side of the test triples (seeded; the true entity is never NaN). */
function entityScores(seed: number): Float32Array {
  const next = rng(seed);
  const s = new Float32Array(rows * E);
  for (let k = 0; k < s.length; k++) s[k] = Math.floor(next() * 16) / 16;
  return s;
}

const filtered = { numEntities: E, filterTriples: [train, valid, test] } satisfies RankEvaluatorOptions;
const relationScoresTest = relationScores(test, 27);
const mean = (xs: ArrayLike<number>, f: (x: number, i: number) => number) =>
  Array.from(xs, f).reduce((a, b) => a + b, 0) / xs.length;

describe(`RankEvaluator side "relation" on ${backendLabel}`, () => {
  it("ranks every Nations test triple's relation like brute force and RelationRanker, filtered and raw", () => {
    for (const filter of [true, false]) {
      const options: RankEvaluatorOptions = filter
        ? { ...filtered, sides: ["relation"] }
        : { numEntities: E, numRelations: R, sides: ["relation"] };
      const ev = new RankEvaluator(options);
      // Two batches: the order of tasks is the call order.
      const half = 3 * Math.floor(rows / 2);
      ev.addRelationScores({ triples: test.subarray(0, half), scores: relationScoresTest.subarray(0, (half / 3) * R) });
      ev.addRelationScores({ triples: test.subarray(half), scores: relationScoresTest.subarray((half / 3) * R) });
      const res = ev.finalize();
      const want = bruteForce(test, relationScoresTest, filter);
      const t = res.tasks();
      expect(t.side.every((s) => s === "relation")).toBe(true);
      expect(Array.from(t.optimistic)).toEqual(want.optimistic);
      expect(Array.from(t.pessimistic)).toEqual(want.pessimistic);
      expect(Array.from(t.numCandidates)).toEqual(want.numCandidates);
      expect(Array.from(t.head)).toEqual(Array.from(test.filter((_, k) => k % 3 === 0)));
      expect(Array.from(t.relation)).toEqual(Array.from(test.filter((_, k) => k % 3 === 1)));
      expect(Array.from(t.tail)).toEqual(Array.from(test.filter((_, k) => k % 3 === 2)));
      const ranker = new RelationRanker({
        numEntities: E,
        numRelations: R,
        ...(filter ? { filterTriples: [train, valid, test] } : {}),
      });
      const direct = ranker.rank({ triples: test, scores: relationScoresTest });
      expect(Array.from(t.realistic)).toEqual(Array.from(direct.realistic));
      // Metrics and exact expectations from the relation candidate counts (E[rank] = (n + 1) / 2, E[1/rank] = H_n / n).
      const real = want.optimistic.map((o, i) => (o + want.pessimistic[i]!) / 2);
      expect(res.get("relation.realistic.mrr")).toBeCloseTo(
        mean(real, (r) => 1 / r),
        14,
      );
      expect(res.get("relation.pessimistic.mr")).toBeCloseTo(
        mean(want.pessimistic, (r) => r),
        12,
      );
      expect(res.get("relation.optimistic.hits@10")).toBeCloseTo(
        mean(want.optimistic, (r) => (r <= 10 ? 1 : 0)),
        14,
      );
      expect(res.expected("relation.mr")).toBeCloseTo(
        mean(want.numCandidates, (n) => (n + 1) / 2),
        12,
      );
      const harmonic = (n: number) => Array.from({ length: n }, (_, k) => 1 / (k + 1)).reduce((a, b) => a + b, 0);
      expect(res.expected("relation.mrr")).toBeCloseTo(
        mean(want.numCandidates, (n) => harmonic(n) / n),
        12,
      );
      // The filter removes candidates on Nations (pairs linked by several relations are common).
      if (filter) expect(want.numCandidates).not.toEqual(bruteForce(test, relationScoresTest, false).numCandidates);
      expect(res.info.tasks).toEqual({ head: 0, tail: 0, relation: rows });
      expect(Object.keys(res.toJSON())).toEqual(["head", "tail", "both", "relation"]);
      expect(res.toTable()).toMatch(/relation real\./);
      expect(res.toTable()).toMatch(/relation random E/);
    }
  });

  it('keeps "both" to head and tail: adding the relation side changes no entity value', () => {
    const headScores = entityScores(1);
    const tailScores = entityScores(2);
    const feed = (ev: RankEvaluator) => {
      ev.addSync({ triples: test, side: "head", scores: headScores });
      ev.addSync({ triples: test, side: "tail", scores: tailScores });
    };
    const plain = new RankEvaluator(filtered);
    feed(plain);
    const three = new RankEvaluator({ ...filtered, sides: ["head", "tail", "relation"] });
    feed(three);
    three.addRelationScores({ triples: test, scores: relationScoresTest });
    const a = plain.finalize();
    const b = three.finalize();
    const json = b.toJSON();
    const { relation, ...entity } = json;
    expect(entity).toEqual(a.toJSON());
    expect(relation.realistic.inverse_harmonic_mean_rank).toBe(b.get("relation.mrr"));
    expect(b.get("both.mrr")).toBe(a.get("both.mrr"));
    expect(b.get("relation.mrr")).not.toBe(b.get("both.mrr"));
    // Without the relation side, the results have no relation entry (outputs as before).
    expect(Object.keys(a.toJSON())).toEqual(["head", "tail", "both"]);
    expect(a.info.tasks).toEqual({ head: rows, tail: rows });
    expect(b.info.sides).toEqual(["head", "tail", "relation"]);
    expect(b.info.tasks).toEqual({ head: rows, tail: rows, relation: rows });
    const t = b.tasks();
    expect(t.side.slice(2 * rows)).toEqual(new Array(rows).fill("relation"));
  });

  it('explains "both" in the footer by the entity sides alone', () => {
    const tail = new RankEvaluator({ ...filtered, sides: ["tail", "relation"] });
    tail.addSync({ triples: test, side: "tail", scores: entityScores(2) });
    tail.addRelationScores({ triples: test, scores: relationScoresTest });
    const text = tail.finalize().toTable();
    expect(text).toContain(`0 head and ${rows} tail tasks, ${rows} relation tasks;`);
    expect(text).toContain('"both" is the tail side alone (the only side evaluated).');
    const alone = new RankEvaluator({ ...filtered, sides: ["relation"] });
    alone.addRelationScores({ triples: test, scores: relationScoresTest });
    const footer = alone.finalize().toTable();
    expect(footer).not.toMatch(/"both" is/);
    expect(footer).not.toMatch(/both real\./);
    // Its expectation column is the relation side's alone.
    expect(
      footer
        .split("\n")[0]!
        .trim()
        .split(/\s{2,}/),
    ).toEqual(["metric", "relation opti.", "relation real.", "relation pess.", "relation random E"]);
  });

  it("takes relation ranks through addRanks, bounded by numRelations, equal to addRelationScores", () => {
    const direct = new RelationRanker({ numEntities: E, numRelations: R, filterTriples: [train, valid, test] }).rank({
      triples: test,
      scores: relationScoresTest,
    });
    const a = new RankEvaluator({ ...filtered, sides: ["relation"] });
    a.addRanks({ side: "relation", ...direct, triples: test });
    const b = new RankEvaluator({ ...filtered, sides: ["relation"] });
    b.addRelationScores({ triples: test, scores: relationScoresTest });
    expect(a.finalize().toJSON()).toEqual(b.finalize().toJSON());
    const c = new RankEvaluator({ ...filtered, sides: ["relation"] });
    expectError(
      thrownBy(() => c.addRanks({ side: "relation", realistic: [1], numCandidates: [R + 1] })),
      KgrankInputError,
      "numCandidates",
      /numRelations = 55/,
    );
  });

  it("weights relation tasks by their (head, tail) query under macro weighting", () => {
    const ev = new RankEvaluator({ ...filtered, sides: ["relation"], weighting: "macro" });
    ev.addRelationScores({ triples: test, scores: relationScoresTest });
    const weights = ev.taskWeights("relation")!;
    const count = new Map<string, number>();
    for (let i = 0; i < rows; i++) {
      const key = `${test[3 * i]},${test[3 * i + 2]}`;
      count.set(key, (count.get(key) ?? 0) + 1);
    }
    expect(Array.from(weights)).toEqual(
      Array.from({ length: rows }, (_, i) => 1 / count.get(`${test[3 * i]},${test[3 * i + 2]}`)!),
    );
    expect([...count.values()].some((c) => c > 1)).toBe(true);
  });

  it("refuses relation input it cannot rank, with typed errors naming the argument and the fix", () => {
    const entityOnly = new RankEvaluator(filtered);
    expectError(
      thrownBy(() => entityOnly.addRelationScores({ triples: test, scores: relationScoresTest })),
      KgrankInputError,
      "sides",
      /sides including "relation"/,
    );
    expectError(
      thrownBy(() => entityOnly.addRanks({ side: "relation", realistic: [1], numCandidates: [1] })),
      KgrankInputError,
      "side",
      /sides including "relation"/,
    );
    const ev = new RankEvaluator({ ...filtered, sides: ["head", "relation"] });
    expectError(
      thrownBy(() => ev.addSync({ triples: test, side: "relation" as never, scores: relationScoresTest })),
      KgrankInputError,
      "side",
      /addRelationScores/,
    );
    expectError(
      thrownBy(() => ev.addRelationScores({ triples: test, scores: relationScoresTest.subarray(1) })),
      KgrankInputError,
      "scores",
      /numRelations 55/,
    );
    expectError(
      thrownBy(() => new RankEvaluator({ numEntities: E, sides: ["relation"] })),
      KgrankInputError,
      "numRelations",
      /give numRelations or filterTriples/,
    );
    expectError(
      thrownBy(() => new RankEvaluator({ ...filtered, sides: ["relation"], restrictRelations: [0] })),
      KgrankInputError,
      "restrictRelations",
      /relation/,
    );
    expectError(
      thrownBy(() => new RankEvaluator({ ...filtered, sides: ["relation", "relation"] as never })),
      KgrankInputError,
      "sides",
      /distinct sides/,
    );
  });
});

describe(`the relation side from embeddings on ${backendLabel}`, () => {
  // Random embeddings: DistMult and TransE-L1, d = 8 (ties are rare, so the brute force and the kernel see the same
  // order only if the scores are the same).
  const modelOf = (interaction: "distmult" | "transe-l1", seed: number) => {
    const next = rng(seed);
    const table = (rows: number) => Float32Array.from({ length: rows * 8 }, () => next() * 2 - 1);
    return new EmbeddingModel({
      interaction,
      entityEmbeddings: { data: table(E), shape: [E, 8] },
      relationEmbeddings: { data: table(R), shape: [R, 8] },
    });
  };

  for (const interaction of ["distmult", "transe-l1"] as const) {
    it(`${interaction}: addModel ranks the relation side as addRelationScores of the model's relation scores, and as the definition`, async () => {
      const model = modelOf(interaction, interaction === "distmult" ? 5 : 6);
      const scores = model.scoreRelations(test) as Float32Array;
      const want = new RankEvaluator({ ...filtered, sides: ["relation"] });
      want.addRelationScores({ triples: test, scores });
      const wantResults = want.finalize();
      const wantJson = wantResults.toJSON() as Record<string, unknown>;
      const wantTasks = wantResults.tasks();
      const ref = bruteForce(test, scores, true);
      expect(Array.from(wantTasks.optimistic)).toEqual(ref.optimistic);
      expect(Array.from(wantTasks.pessimistic)).toEqual(ref.pessimistic);
      expect(Array.from(wantTasks.numCandidates)).toEqual(ref.numCandidates);
      // Relation only (the default side of a relation-only evaluator, and side "relation"), sync and async.
      for (const add of [
        (ev: RankEvaluator) => ev.addModelSync({ model, triples: test }),
        (ev: RankEvaluator) => ev.addModelSync({ model, triples: test, side: "relation" }),
        (ev: RankEvaluator) => ev.addModel({ model, triples: test }),
      ]) {
        const ev = new RankEvaluator({ ...filtered, sides: ["relation"] });
        await add(ev);
        expect(ev.finalize().toJSON()).toEqual(wantJson);
      }
      // All three sides in one call: the entity sides as without the relation side, the relation side as above.
      const all = new RankEvaluator({ ...filtered, sides: ["head", "tail", "relation"] });
      await all.addModel({ model, triples: test });
      const entity = new RankEvaluator({ ...filtered });
      entity.addModelSync({ model, triples: test });
      const got = all.finalize().toJSON() as Record<string, unknown>;
      const wantEntity = entity.finalize().toJSON() as Record<string, unknown>;
      for (const side of ["head", "tail", "both"]) expect(got[side], side).toEqual(wantEntity[side]);
      expect(got.relation).toEqual(wantJson.relation);
    });
  }

  it("refuses entity negatives with the relation side, naming them", () => {
    const model = modelOf("distmult", 7);
    const ev = new RankEvaluator({ ...filtered, sides: ["tail", "relation"] });
    expectError(
      thrownBy(() => ev.addModelSync({ model, triples: test.subarray(0, 3), negatives: Int32Array.of(0, 1) })),
      KgrankInputError,
      "negatives",
      /relation side/,
    );
    expectError(
      thrownBy(() =>
        new RankEvaluator({ ...filtered, sides: ["tail"] }).addModelSync({ model, triples: test, side: "relation" }),
      ),
      KgrankInputError,
      "sides",
      /relation/,
    );
  });
});

describe(`the relation side's state on ${backendLabel}`, () => {
  const headScores = entityScores(3);
  const tailScores = entityScores(4);
  const three = { ...filtered, sides: ["head", "tail", "relation"] } satisfies RankEvaluatorOptions;
  /** Feeds rows [lo, hi) of the test split on every side. */
  const feed = (ev: RankEvaluator, lo: number, hi: number) => {
    const triples = test.subarray(3 * lo, 3 * hi);
    ev.addSync({ triples, side: "head", scores: headScores.subarray(lo * E, hi * E) });
    ev.addSync({ triples, side: "tail", scores: tailScores.subarray(lo * E, hi * E) });
    ev.addRelationScores({ triples, scores: relationScoresTest.subarray(lo * R, hi * R) });
    return ev;
  };

  it("round-trips through serialize, and shards merge into exactly the single run", () => {
    const whole = feed(new RankEvaluator(three), 0, rows).finalize({ bootstrap: { samples: 20 } });
    const single = feed(new RankEvaluator(three), 0, rows);
    const restored = RankEvaluator.deserialize(single.serialize());
    expect(restored.sides).toEqual(["head", "tail", "relation"]);
    const back = restored.finalize({ bootstrap: { samples: 20 } });
    expect(back.toJSON()).toEqual(whole.toJSON());
    expect(back.intervals()).toEqual(whole.intervals());
    expect(back.tasks()).toEqual(whole.tasks());
    const cut = Math.floor(rows / 3);
    const states = [feed(new RankEvaluator(three), 0, cut), feed(new RankEvaluator(three), cut, rows)].map((e) =>
      e.serialize(),
    );
    const merged = RankEvaluator.merge(states).finalize({ bootstrap: { samples: 20 } });
    expect(merged.toJSON()).toEqual(whole.toJSON());
    expect(merged.intervals()).toEqual(whole.intervals());
    expect(merged.tasks()).toEqual(whole.tasks());
    expect(merged.info.tasks).toEqual({ head: rows, tail: rows, relation: rows });
    expect(merged.get("relation.mrr")).toBe(whole.get("relation.mrr"));
    expect(merged.expected("relation.mr")).toBe(whole.expected("relation.mr"));
  });

  it("writes entity-only states as before (no relation field), which restore as head and tail", () => {
    const { header } = decodeState(entityState());
    expect(header.sides).toEqual(["head", "tail"]);
    expect(header.tasks).toEqual({ head: 10, tail: 10 });
    expect(header.skipped).toEqual({ head: 0, tail: 0 });
    const restored = RankEvaluator.deserialize(entityState());
    expect(restored.sides).toEqual(["head", "tail"]);
    expect(restored.finalize().info.tasks).toEqual({ head: 10, tail: 10 });
    // A relation state's header lists the side and its counts.
    const relation = new RankEvaluator(three);
    relation.addRelationScores({ triples: test.subarray(0, 30), scores: relationScoresTest.subarray(0, 10 * R) });
    const h = decodeState(relation.serialize()).header;
    expect(h.sides).toEqual(["head", "tail", "relation"]);
    expect(h.tasks).toEqual({ head: 0, tail: 0, relation: 10 });
    // A crafted relation task is checked against numRelations, as addRanks checks it.
    const decoded = decodeState(relation.serialize());
    const cols = decoded.sides.relation!;
    const bad = { ...cols, numCandidates: Float64Array.from(cols.numCandidates, () => R + 1) };
    expectError(
      thrownBy(() => decodeState(encodeState(decoded.header, { ...decoded.sides, relation: bad }))),
      KgrankInputError,
      "state",
      /relation task 0: numCandidates = 56 is not an integer in \[1, numRelations = 55\]/,
    );
  });

  it("refuses to merge states of different protocols, naming both", () => {
    const relation = feed(new RankEvaluator(three), 10, 20);
    const err = expectError(
      thrownBy(() => RankEvaluator.merge([entityState(), relation.serialize()])),
      KgrankInputError,
      "states[1]",
      /sides head,tail,relation, states\[0\] for sides head,tail/,
    );
    expect(err.message).toMatch(/different protocols/);
    // Either order: the error names the sides of each.
    expectError(
      thrownBy(() => RankEvaluator.merge([relation.serialize(), entityState()])),
      KgrankInputError,
      "states[1]",
      /sides head,tail, states\[0\] for sides head,tail,relation/,
    );
  });

  /** An entity-only state (head and tail) of the first ten test triples. */
  function entityState(): Uint8Array {
    const ev = new RankEvaluator(filtered);
    ev.addSync({ triples: test.subarray(0, 30), side: "head", scores: headScores.subarray(0, 10 * E) });
    ev.addSync({ triples: test.subarray(0, 30), side: "tail", scores: tailScores.subarray(0, 10 * E) });
    return ev.serialize();
  }
});

describe(`comparing runs with a relation side on ${backendLabel}`, () => {
  const headScores = entityScores(5);
  const tailScores = entityScores(6);
  /** A run: entity scores (noisy for run 1) on head and tail when `entity`, relation scores of `seed`. */
  const run = (seed: number, entity: boolean, relation: boolean, noise = 0) => {
    const sides = [...(entity ? (["head", "tail"] as const) : []), ...(relation ? (["relation"] as const) : [])];
    const ev = new RankEvaluator({ ...filtered, sides });
    if (entity) {
      ev.addSync({ triples: test, side: "head", scores: headScores.map((x, i) => x + noise * ((i * 7919) % 3)) });
      ev.addSync({ triples: test, side: "tail", scores: tailScores });
    }
    // The same NaN (non-candidates) in every run: other values per seed.
    if (relation)
      ev.addRelationScores({
        triples: test,
        scores: relationScoresTest.map((x, i) => x + (seed - 27) * ((i * 31) % 4) * 0.1),
      });
    return ev.finalize();
  };

  it("compares head and tail tasks by default and relation tasks with side relation, never pooled", () => {
    const opts = { samples: 200, seed: 3 };
    const [a, b] = [run(27, true, true), run(28, true, true, 0.25)];
    const entity = compareRuns([a, b], opts);
    const relation = compareRuns([a, b], { ...opts, side: "relation" });
    // Each equals the comparison of runs that hold that protocol's tasks alone.
    expect(entity).toEqual(compareRuns([run(27, true, false), run(28, true, false, 0.25)], opts));
    expect(relation).toEqual(compareRuns([run(27, false, true), run(28, false, true)], { ...opts, side: "relation" }));
    expect(entity.tasks).toBe(2 * rows);
    expect(relation.tasks).toBe(rows);
    const mrr = relation.rows.find((r) => r.metric === "inverse_harmonic_mean_rank")!;
    expect(mrr.valueA).toBe(a.get("relation.mrr"));
    expect(mrr.valueB).toBe(b.get("relation.mrr"));
    expectError(
      thrownBy(() => compareRuns([run(27, true, false), b], { ...opts, side: "relation" })),
      KgrankInputError,
      "runs",
      /run 0 has no relation task/,
    );
    expectError(
      thrownBy(() => compareRuns([run(27, false, true), run(28, false, true)], opts)),
      KgrankInputError,
      "runs",
      /run 0 has no head or tail task: compare its relation tasks with side "relation"/,
    );
  });
});
