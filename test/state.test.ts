import { describe, expect, it } from "vitest";

import { RankEvaluator } from "../src/evaluation/evaluator";
import { KgrankInputError, KgrankStateError } from "../src/index";
import { loadBundled } from "./helpers/datasets";
import { rng } from "./helpers/reference";
import { backendLabel } from "./helpers/backend";

const label = backendLabel;
const umls = loadBundled("umls");
const N = umls.entities.length;
const { train, valid, test } = umls.splits;
const rows = test.length / 3;
const next = rng(77);
const scores = {
  head: new Float32Array(rows * N).map(() => Math.floor(next() * 30) / 4),
  tail: new Float32Array(rows * N).map(() => Math.floor(next() * 30) / 4),
};
const options = { numEntities: N, filterTriples: [train, valid, test], weighting: "macro" as const, restrictRelations: Array.from({ length: 40 }, (_, i) => i) };

function feed(ev: RankEvaluator, from: number, to: number) {
  for (const side of ["head", "tail"] as const) {
    ev.addSync({ triples: test.subarray(3 * from, 3 * to), side, scores: scores[side].subarray(from * N, to * N) });
  }
}

describe(`evaluator state on ${label}`, () => {
  const single = new RankEvaluator(options);
  feed(single, 0, rows);

  for (const shards of [2, 3, 7]) {
    it(`merges ${shards} serialized shards into exactly the single-process tasks, weights and provenance`, () => {
      const states: Uint8Array[] = [];
      for (let s = 0; s < shards; s++) {
        const ev = new RankEvaluator(options);
        feed(ev, Math.floor((s * rows) / shards), Math.floor(((s + 1) * rows) / shards));
        states.push(ev.serialize());
      }
      const merged = RankEvaluator.merge(states);
      for (const side of ["head", "tail"] as const) {
        expect(merged.taskColumns(side)).toEqual(single.taskColumns(side));
        expect(merged.taskWeights(side)).toEqual(single.taskWeights(side));
      }
      expect(merged.info()).toEqual(single.info());
    });
  }

  it("round-trips through serialize / deserialize", () => {
    const restored = RankEvaluator.deserialize(single.serialize());
    expect(restored.taskColumns("tail")).toEqual(single.taskColumns("tail"));
    expect(restored.info()).toEqual(single.info());
    // A restored evaluator can be serialized again, identically.
    expect(restored.serialize()).toEqual(single.serialize());
  });

  it("refuses damaged, truncated, foreign or mismatched states with errors naming the state", () => {
    const good = single.serialize();
    const flipped = good.slice();
    flipped[flipped.length - 5]! ^= 1;
    const versioned = good.slice();
    versioned[4] = 9;
    const cases: [Uint8Array | unknown, RegExp][] = [
      [flipped, /checksum mismatch/],
      [good.slice(0, good.length - 8), /checksum mismatch|truncated/],
      [new TextEncoder().encode("PK\u0003\u0004 not a state at all"), /wrong magic/],
      [versioned, /format version 9/],
      ["a string", /must be a Uint8Array/],
    ];
    for (const [bytes, pattern] of cases) {
      let caught: unknown;
      try {
        RankEvaluator.merge([good, bytes as Uint8Array]);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(KgrankInputError);
      expect((caught as KgrankInputError).argument).toBe("states[1]");
      expect((caught as Error).message).toMatch(pattern);
    }
    const other = new RankEvaluator({ ...options, ks: [1, 10] });
    expect(() => RankEvaluator.merge([good, other.serialize()])).toThrow(/other settings/);
    expect(() => RankEvaluator.merge([])).toThrow(KgrankInputError);
  });

  it("keeps restored evaluators closed to new batches", () => {
    const restored = RankEvaluator.deserialize(single.serialize());
    expect(() => restored.addSync({ triples: test.subarray(0, 3), side: "tail", scores: scores.tail.subarray(0, N) })).toThrow(KgrankStateError);
    expect(() => restored.addRanks({ side: "tail", realistic: [1], numCandidates: [2] })).toThrow(/restored from serialized state/);
  });
});
