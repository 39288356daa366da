/**
 * Typed candidates (RankEvaluatorOptions.candidates, CandidateSets) against references written here from the
 * definition: on Nations, brute force over every task (candidates = the relation's allowed set and the true answer,
 * less the other known answers when filtered, less NaN scores), the metrics through addRanks of those ranks, the
 * state and merge, and every refusal. On FB15k-237 and WN18RR against NumPy: test/typed-candidates-numpy.test.ts.
 */
import { describe, expect, it } from "vitest";

import { expectError, expectInputError, thrownBy } from "./helpers/errors";
import { CandidateSets, KgrankStateError, RankEvaluator } from "../src/index";
import { backendLabel } from "./helpers/backend";
import { loadBundled } from "./helpers/datasets";
import { rng } from "./helpers/reference";

type Side = "head" | "tail";

/** The definition, task by task: allowed(r) on the side, plus the truth, less the other known answers, less NaN. */
function bruteForce(
  triples: Int32Array,
  scores: Float32Array | Float64Array,
  E: number,
  side: Side,
  allowed: (relation: number) => Set<number>,
  known: Set<string> | null,
) {
  const rows = triples.length / 3;
  const out = { optimistic: [] as number[], pessimistic: [] as number[], numCandidates: [] as number[] };
  for (let i = 0; i < rows; i++) {
    const [h, r, t] = [triples[3 * i]!, triples[3 * i + 1]!, triples[3 * i + 2]!];
    const own = side === "tail" ? t : h;
    const truthScore = scores[i * E + own]!;
    const set = allowed(r);
    let greater = 0;
    let equal = 0;
    let n = 1;
    for (let e = 0; e < E; e++) {
      if (e === own || !set.has(e)) continue;
      if (known?.has(side === "tail" ? `${h},${r},${e}` : `${e},${r},${t}`)) continue;
      const v = scores[i * E + e]!;
      if (Number.isNaN(v)) continue;
      n++;
      if (v > truthScore) greater++;
      else if (v === truthScore) equal++;
    }
    out.optimistic.push(1 + greater);
    out.pessimistic.push(1 + greater + equal);
    out.numCandidates.push(n);
  }
  return out;
}

describe(`typed candidates on ${backendLabel}`, () => {
  const nations = loadBundled("nations");
  const E = nations.entities.length;
  const R = nations.relations.length;
  const { train, valid, test } = nations.splits;
  const known = new Set<string>();
  for (const split of [train, valid, test])
    for (let i = 0; i < split.length; i += 3) known.add(`${split[i]},${split[i + 1]},${split[i + 2]}`);
  const sets = CandidateSets.fromTriples(train, { numEntities: E, numRelations: R });
  const seen = (side: Side) => (relation: number) => {
    const out = new Set<number>();
    for (let i = 0; i < train.length; i += 3)
      if (train[i + 1] === relation) out.add(train[i + (side === "head" ? 0 : 2)]!);
    return out;
  };

  function randomScores(rows: number, seed: number, wide = false): Float32Array | Float64Array {
    const next = rng(seed);
    const s = wide ? new Float64Array(rows * E) : new Float32Array(rows * E);
    // Eight levels: many ties; 3 % NaN, never on the true answer (fixed by the caller).
    for (let k = 0; k < s.length; k++) s[k] = next() < 0.03 ? NaN : Math.floor(next() * 8) / 8;
    return s;
  }

  function scoresFor(side: Side, seed: number, wide = false) {
    const rows = test.length / 3;
    const scores = randomScores(rows, seed, wide);
    for (let i = 0; i < rows; i++) {
      const own = test[3 * i + (side === "tail" ? 2 : 0)]!;
      if (Number.isNaN(scores[i * E + own])) scores[i * E + own] = 0.5;
    }
    return scores;
  }

  it("builds each relation's sets from the training triples: ascending, unique, 4 bytes a pair", () => {
    for (const side of ["head", "tail"] as const) {
      for (let r = 0; r < R; r++) {
        const want = [...seen(side)(r)].sort((a, b) => a - b);
        expect(Array.from(sets.allowed(side, r)), `${side} ${r}`).toEqual(want);
        expect(sets.size(side, r)).toBe(want.length);
      }
    }
    expect(sets.bytes).toBe(4 * sets.pairs + 2 * 4 * (R + 1));
    expect(sets.source).toBe("train");
    expect(sets.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    // The same sets from pairs: the same fingerprint; one pair fewer: another.
    const pairs = (side: Side) => {
      const out: number[] = [];
      for (let i = 0; i < train.length; i += 3) out.push(train[i + 1]!, train[i + (side === "head" ? 0 : 2)]!);
      return out;
    };
    const again = CandidateSets.fromPairs({
      numEntities: E,
      numRelations: R,
      head: pairs("head"),
      tail: pairs("tail"),
    });
    expect(again.fingerprint).toBe(sets.fingerprint);
    const outside = [...Array(E).keys()].find((e) => !seen("tail")(0).has(e))!;
    const more = CandidateSets.fromPairs({
      numEntities: E,
      numRelations: R,
      head: pairs("head"),
      tail: pairs("tail").concat([0, outside]),
    });
    expect(more.size("tail", 0)).toBe(sets.size("tail", 0) + 1);
    expect(more.fingerprint).not.toBe(sets.fingerprint);
  });

  for (const filtered of [true, false]) {
    for (const wide of [false, true]) {
      it(`ranks every Nations test task like brute force (${filtered ? "filtered" : "raw"}, float${wide ? 64 : 32})`, () => {
        const ev = new RankEvaluator({
          numEntities: E,
          numRelations: R,
          candidates: sets,
          ...(filtered ? { filterTriples: [train, valid, test] } : {}),
        });
        const want: Record<Side, ReturnType<typeof bruteForce>> = {} as never;
        const pending: Promise<void>[] = [];
        for (const side of ["head", "tail"] as const) {
          const scores = scoresFor(side, side === "head" ? 11 : 12, wide);
          // Two batches: the second through the async path.
          const cut = 3 * 100;
          ev.addSync({ triples: test.subarray(0, cut), side, scores: scores.subarray(0, 100 * E) });
          want[side] = bruteForce(test, scores, E, side, seen(side), filtered ? known : null);
          pending.push(ev.add({ triples: test.subarray(cut), side, scores: scores.subarray(100 * E) }));
        }
        return (async () => {
          await Promise.all(pending);
          const res = await ev.finalizeAsync();
          const tasks = res.tasks();
          const reference = new RankEvaluator({ numEntities: E, numRelations: R });
          for (const side of ["head", "tail"] as const) {
            const at = tasks.side.map((s, i) => (s === side ? i : -1)).filter((i) => i >= 0);
            expect(at.map((i) => tasks.optimistic[i])).toEqual(want[side].optimistic);
            expect(at.map((i) => tasks.pessimistic[i])).toEqual(want[side].pessimistic);
            expect(at.map((i) => tasks.realistic[i])).toEqual(
              want[side].optimistic.map((o, k) => (o + want[side].pessimistic[k]!) / 2),
            );
            expect(at.map((i) => tasks.numCandidates[i])).toEqual(want[side].numCandidates);
            reference.addRanks({
              side,
              optimistic: want[side].optimistic,
              pessimistic: want[side].pessimistic,
              realistic: want[side].optimistic.map((o, k) => (o + want[side].pessimistic[k]!) / 2),
              numCandidates: want[side].numCandidates,
              triples: test,
            });
          }
          // The sets cut the candidates: far fewer than the 14 entities on average.
          const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
          expect(mean(want.tail.numCandidates)).toBeLessThan(E - 1);
          // Every metric (expectations, adjusted and z-scored ones included) equals the brute-force ranks' metrics.
          const ours = res.toFlatObject();
          const theirs = reference.finalize().toFlatObject();
          expect(Object.keys(ours).sort()).toEqual(Object.keys(theirs).sort());
          for (const k of Object.keys(theirs)) {
            if (Number.isNaN(theirs[k])) expect(ours[k], k).toBeNaN();
            else expect(ours[k], k).toBeCloseTo(theirs[k]!, 12);
          }
        })();
      });
    }
  }

  it("keeps the true answer a candidate when its relation's set leaves it out", () => {
    // Relation 0 allows tails {1, 2} only; the task (0, 0, 3) still ranks 3 among {1, 2, 3}.
    const c = CandidateSets.fromPairs({ numEntities: 5, numRelations: 1, head: [0, 0], tail: [0, 1, 0, 2] });
    const ev = new RankEvaluator({ numEntities: 5, candidates: c, sides: "tail" });
    ev.addSync({ triples: Int32Array.from([0, 0, 3]), side: "tail", scores: Float32Array.from([9, 0.5, 0.2, 0.3, 9]) });
    const t = ev.finalize().tasks();
    expect([t.optimistic[0], t.pessimistic[0], t.numCandidates[0]]).toEqual([2, 2, 3]);
  });

  it("records the sets in the state: round trip, merge of shards, and no merge across protocols", () => {
    const make = (withSets: boolean) =>
      new RankEvaluator({
        numEntities: E,
        numRelations: R,
        filterTriples: [train, valid, test],
        ...(withSets ? { candidates: sets } : {}),
      });
    const scores = scoresFor("tail", 5);
    const rows = test.length / 3;
    const whole = make(true);
    whole.addSync({ triples: test, side: "tail", scores });
    const half = Math.floor(rows / 2);
    const a = make(true);
    a.addSync({ triples: test.subarray(0, 3 * half), side: "tail", scores: scores.subarray(0, half * E) });
    const b = make(true);
    b.addSync({ triples: test.subarray(3 * half), side: "tail", scores: scores.subarray(half * E) });
    const merged = RankEvaluator.merge([a.serialize(), b.serialize()]);
    expect(merged.finalize().toFlatObject()).toEqual(whole.finalize().toFlatObject());
    const restored = RankEvaluator.deserialize(merged.serialize());
    expect(restored.finalize().info).toBeDefined();
    const plain = make(false);
    plain.addSync({ triples: test, side: "tail", scores });
    expectInputError(() => RankEvaluator.merge([a.serialize(), plain.serialize()]), "states[1]", /candidates/);
    const other = CandidateSets.fromTriples([train, valid], { numEntities: E, numRelations: R });
    const c = new RankEvaluator({
      numEntities: E,
      numRelations: R,
      filterTriples: [train, valid, test],
      candidates: other,
    });
    c.addSync({ triples: test, side: "tail", scores });
    expectInputError(() => RankEvaluator.merge([a.serialize(), c.serialize()]), "states[1]", /fingerprint/);
  });

  it("refuses what it does not go with, naming the option and the fix", () => {
    const base = { numEntities: E, numRelations: R, candidates: sets };
    expectInputError(() => new RankEvaluator({ ...base, numEntities: E + 1 }), "candidates", /entities/);
    expectInputError(() => new RankEvaluator({ ...base, numRelations: R + 1 }), "candidates", /relations/);
    expectInputError(
      () => new RankEvaluator({ ...base, sides: ["head", "tail", "relation"] }),
      "candidates",
      /relation/,
    );
    expectInputError(() => new RankEvaluator({ ...base, restrictEntities: [0, 1] }), "candidates", /restrict/);
    expectInputError(() => new RankEvaluator({ ...base, entityShard: { index: 0, count: 2 } }), "candidates", /shard/);
    expectInputError(
      () => new RankEvaluator({ ...base, candidates: { numEntities: E } as never }),
      "candidates",
      /CandidateSets/,
    );
    const ev = new RankEvaluator({ ...base, filterTriples: [train, valid, test] });
    const refused = (call: () => unknown) =>
      expectError(thrownBy(call), KgrankStateError, undefined, /typed candidates .*need whole score rows/);
    refused(() => ev.addRanks({ side: "tail", optimistic: [1], numCandidates: [2] }));
    refused(() => ev.addSampledSync({ side: "tail", positiveScores: [1], negativeScores: Float32Array.from([0]) }));
    refused(() => ev.chunked({ triples: test.subarray(0, 3), side: "tail", trueScores: [1] } as never));
    // A NaN true score and a triple outside the filter: the usual messages.
    const nan = new Float32Array(E).fill(0);
    nan[test[2]!] = NaN;
    expectInputError(() => ev.addSync({ triples: test.subarray(0, 3), side: "tail", scores: nan }), "scores", /NaN/);
    const unknown = Int32Array.from([0, 0, 0]);
    expect(known.has("0,0,0")).toBe(false);
    expectInputError(
      () => ev.addSync({ triples: unknown, side: "tail", scores: new Float32Array(E) }),
      "triples",
      /filter/,
    );
    // A relation whose set is empty: a typed error naming the relation and the fix.
    const sparse = CandidateSets.fromPairs({ numEntities: E, numRelations: R, head: [0, 1], tail: [0, 1] });
    const ev2 = new RankEvaluator({ numEntities: E, numRelations: R, candidates: sparse });
    expectInputError(
      () => ev2.addSync({ triples: Int32Array.from([0, 3, 1]), side: "tail", scores: new Float32Array(E) }),
      "candidates",
      /relation 3 .*allows no tail/,
    );
    expectInputError(
      () => CandidateSets.fromPairs({ numEntities: E, numRelations: R, head: [0, E], tail: [] }),
      "head",
      /entity/,
    );
    expectInputError(
      () => CandidateSets.fromPairs({ numEntities: E, numRelations: R, head: [R, 0], tail: [] }),
      "head",
      /relation/,
    );
    expectInputError(
      () => CandidateSets.fromPairs({ numEntities: E, numRelations: R, head: [0], tail: [] }),
      "head",
      /pairs/,
    );
    expectInputError(
      () => CandidateSets.fromTriples(Int32Array.from([0, 0, E]), { numEntities: E }),
      "triples",
      /tail/,
    );
  });
});
