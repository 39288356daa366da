import { describe, expect, it } from "vitest";

import { createHash } from "node:crypto";

import { RankEvaluator } from "../src/evaluation/evaluator";
import { decodeState, encodeState, type StateHeader } from "../src/evaluation/state";
import type { TaskColumns } from "../src/evaluation/task-buffer";
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
const options = {
  numEntities: N,
  filterTriples: [train, valid, test],
  weighting: "macro" as const,
  restrictRelations: Array.from({ length: 40 }, (_, i) => i),
};

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

  it("refuses a state given twice (equal digests), naming the repeat and the state it repeats", () => {
    const half = new RankEvaluator(options);
    feed(half, 0, Math.floor(rows / 2));
    const s = half.serialize();
    for (const states of [
      [s, s],
      [s, single.serialize(), s.slice()],
      [half, half],
    ]) {
      let caught: unknown;
      try {
        RankEvaluator.merge(states);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(KgrankInputError);
      expect((caught as KgrankInputError).argument).toBe(`states[${states.length - 1}]`);
      expect((caught as Error).message).toMatch(/repeats states\[0\]/);
    }
    // The same tasks with other provenance are another state.
    expect(() => RankEvaluator.merge([s, half.serialize({ meta: { shard: 1 } })])).not.toThrow();
  });

  it("records concurrent add calls in call order, not in the order they finish", async () => {
    // A big first batch and a one-row second one: the second finishes first (with a signal the fallback ranks in
    // slices between event-loop turns, so there too).
    const n = 20_000;
    const big = 300;
    const next = rng(5);
    const bigScores = new Float32Array(big * n).map(() => next());
    const bigTriples = Int32Array.from({ length: 3 * big }, (_, i) => (i % 3 === 1 ? 0 : (i * 7919) % n));
    const small = { triples: Int32Array.of(1, 0, 2), side: "tail" as const, scores: new Float32Array(n).fill(0.5) };
    const batches = [{ triples: bigTriples, side: "tail" as const, scores: bigScores }, small];
    const reference = new RankEvaluator({ numEntities: n });
    for (const b of batches) reference.addSync(b);
    const ranks = { side: "tail" as const, realistic: [3], numCandidates: [n] };
    reference.addRanks(ranks);

    const ev = new RankEvaluator({ numEntities: n });
    const finished: number[] = [];
    const signal = new AbortController().signal;
    const calls = batches.map((b, i) => ev.add({ ...b, signal }).then(() => void finished.push(i)));
    ev.addRanks(ranks); // called last: recorded last, after both
    await Promise.all(calls);
    expect(ev.serialize()).toEqual(reference.serialize());

    // An aborted earlier call releases its place: the later one is recorded alone.
    const aborted = new RankEvaluator({ numEntities: n });
    const controller = new AbortController();
    const first = aborted.add({ ...batches[0]!, signal: controller.signal });
    const second = aborted.add(small);
    controller.abort();
    await expect(first).rejects.toThrow();
    await second;
    const alone = new RankEvaluator({ numEntities: n });
    alone.addSync(small);
    expect(aborted.serialize()).toEqual(alone.serialize());
  });

  it("keeps restored evaluators closed to new batches", () => {
    const restored = RankEvaluator.deserialize(single.serialize());
    expect(() =>
      restored.addSync({ triples: test.subarray(0, 3), side: "tail", scores: scores.tail.subarray(0, N) }),
    ).toThrow(KgrankStateError);
    expect(() => restored.addRanks({ side: "tail", realistic: [1], numCandidates: [2] })).toThrow(
      /restored from serialized state/,
    );
  });
});

/**
 * Crafted states: the header and columns of a real state changed, then written with a correct digest (encodeState),
 * as an attacker or a buggy producer would. Each must be refused with a typed error naming what is wrong.
 */
describe(`crafted states on ${label}`, () => {
  const ev = new RankEvaluator({ numEntities: 20, numRelations: 3, sides: "both", weighting: "micro" });
  ev.addRanks({
    side: "tail",
    optimistic: [1, 2],
    pessimistic: [3, 2],
    realistic: [2, 2],
    numCandidates: [5, 20],
    relations: [0, 2],
  });
  ev.addRanks({ side: "head", realistic: [1.5], numCandidates: [4] });
  const good = decodeState(ev.serialize());
  const craft = (
    edit: (h: Record<string, unknown>, c: { head: TaskColumns; tail: TaskColumns }) => void,
  ): Uint8Array => {
    const header = structuredClone(good.header) as unknown as Record<string, unknown>;
    const cols = {
      head: Object.fromEntries(
        Object.entries(good.sides.head).map(([k, v]) => [k, v.slice()]),
      ) as unknown as TaskColumns,
      tail: Object.fromEntries(
        Object.entries(good.sides.tail).map(([k, v]) => [k, v.slice()]),
      ) as unknown as TaskColumns,
    };
    edit(header, cols);
    return encodeState(header as unknown as StateHeader, cols);
  };
  const cases: [string, Uint8Array, RegExp][] = [
    ["rank 0", craft((_, c) => void (c.tail.optimistic[0] = 0)), /tail task 0: optimistic rank = 0/],
    ["rank 1.3", craft((_, c) => void (c.tail.realistic[1] = 1.3)), /tail task 1: realistic rank = 1.3/],
    ["rank above its candidate count", craft((_, c) => void (c.head.realistic[0] = 4.5)), /head task 0: realistic/],
    [
      "candidate count above numEntities",
      craft((_, c) => void (c.tail.numCandidates[1] = 21)),
      /numCandidates = 21 is not an integer in \[1, numEntities = 20\]/,
    ],
    ["fractional candidate count", craft((_, c) => void (c.tail.numCandidates[0] = 4.5)), /numCandidates/],
    [
      "optimistic > pessimistic",
      craft((_, c) => {
        c.tail.optimistic[0] = 3;
        c.tail.pessimistic[0] = 1;
      }),
      /out of order/,
    ],
    ["no rank at all", craft((_, c) => void (c.head.realistic[0] = NaN)), /all missing/],
    ["bogus side", craft((h) => void (h.sides = ["tail", "sideways"])), /header field sides/],
    ["duplicate side", craft((h) => void (h.sides = ["tail", "tail"])), /header field sides/],
    [
      "tasks on a side not evaluated",
      craft((h) => void (h.sides = ["tail"])),
      /has head tasks, but sides is \["tail"\]/,
    ],
    [
      "relation id out of range",
      craft((_, c) => void (c.tail.relation[1] = 3)),
      /relation = 3 is not -1 \(unknown\) or an id in \[0, 3\)/,
    ],
    ["negative anchor", craft((_, c) => void (c.tail.anchor[0] = -7)), /anchor = -7/],
    ["answer beyond numEntities", craft((_, c) => void (c.tail.truth[0] = 20)), /truth = 20/],
    ["non-numeric skipped", craft((h) => void (h.skipped = { head: "3", tail: 0 })), /header field skipped/],
    ["negative skipped", craft((h) => void (h.skipped = { head: -1, tail: 0 })), /header field skipped/],
    ["numEntities 0", craft((h) => void (h.numEntities = 0)), /header field numEntities/],
    ["weighting bogus", craft((h) => void (h.weighting = "sideways")), /header field weighting/],
    [
      "unknown header field",
      craft((h) => void (h.__proto__x = 1)),
      /header field "__proto__x" is not one kgrank writes/,
    ],
    ["weight without explicitWeights", craft((_, c) => void (c.tail.weight[0] = 2)), /explicitWeights: false/],
    [
      "negative weight",
      craft((h, c) => {
        h.explicitWeights = true;
        c.tail.weight[0] = -2;
      }),
      /weight = -2/,
    ],
    ["restriction above numEntities", craft((h) => void (h.restrictEntities = 21)), /header field restrictEntities/],
    ["filterTriples without filtered", craft((h) => void (h.filterTriples = [5])), /header field filterTriples/],
  ];
  for (const [what, bytes, pattern] of cases) {
    it(`refuses a re-checksummed state with ${what}`, () => {
      let caught: unknown;
      try {
        RankEvaluator.merge([ev.serialize(), bytes]);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(KgrankInputError);
      expect((caught as KgrankInputError).argument).toBe("states[1]");
      expect((caught as Error).message).toMatch(pattern);
    });
  }

  it("refuses a header that is JSON null, a number or a list", () => {
    for (const json of ["null", "7", "[1]"]) {
      const bytes = ev.serialize();
      const headerLength = new DataView(bytes.buffer).getUint32(8, true);
      const padded = new TextEncoder().encode(json.padEnd(headerLength, " "));
      const forged = new Uint8Array(48 + headerLength);
      forged.set(bytes.subarray(0, 48));
      forged.set(padded, 48);
      forged.set(createHash("sha256").update(forged.subarray(48)).digest(), 12);
      expect(() => RankEvaluator.deserialize(forged)).toThrow(/the header is not a JSON object/);
    }
  });

  it("accepts the untouched state, and a crafted one that stays within what the evaluator writes", () => {
    expect(craft(() => undefined)).toEqual(ev.serialize());
    expect(() => RankEvaluator.deserialize(craft(() => undefined))).not.toThrow();
    const raised = craft((_, c) => void (c.tail.realistic[0] = 2.5));
    expect(RankEvaluator.deserialize(raised).taskColumns("tail").realistic[0]).toBe(2.5);
  });

  it("uses SHA-256: a digest of the body, not a 32-bit word; any single flipped bit is caught", () => {
    const bytes = ev.serialize();
    expect(Buffer.from(bytes.subarray(12, 44))).toEqual(createHash("sha256").update(bytes.subarray(48)).digest());
    for (let bit = 0; bit < (bytes.length - 48) * 8; bit += 37) {
      const flipped = bytes.slice();
      flipped[48 + (bit >> 3)]! ^= 1 << (bit & 7);
      expect(() => RankEvaluator.deserialize(flipped)).toThrow(KgrankInputError);
    }
  });

  it("still reads format 1 (an FNV-1a word where the digest now is), with the same field checks", () => {
    const v2 = ev.serialize();
    const headerLength = new DataView(v2.buffer).getUint32(8, true);
    const toV1 = (source: Uint8Array): Uint8Array => {
      const header = JSON.parse(new TextDecoder().decode(source.subarray(48, 48 + headerLength)));
      let json = JSON.stringify({ ...header, format: 1 });
      json += " ".repeat((8 - (json.length % 8)) % 8);
      const body = Buffer.concat([Buffer.from(json), source.subarray(48 + headerLength)]);
      const out = new Uint8Array(16 + body.length);
      out.set(source.subarray(0, 12));
      new DataView(out.buffer).setUint32(4, 1, true);
      new DataView(out.buffer).setUint32(8, json.length, true);
      let h = 0x811c9dc5;
      for (const b of body) h = Math.imul(h ^ b, 0x01000193) >>> 0;
      new DataView(out.buffer).setUint32(12, h, true);
      out.set(body, 16);
      return out;
    };
    const restored = RankEvaluator.deserialize(toV1(v2));
    expect(restored.taskColumns("tail")).toEqual(ev.taskColumns("tail"));
    expect(() => RankEvaluator.deserialize(toV1(craft((_, c) => void (c.tail.optimistic[0] = 0))))).toThrow(
      /optimistic rank = 0/,
    );
  });
});

describe(`addRanks and sampled batches refuse what a state could not hold, on ${label}`, () => {
  it("refuses numCandidates above numEntities", () => {
    const ev = new RankEvaluator({ numEntities: 10 });
    expect(() => ev.addRanks({ side: "tail", realistic: [1], numCandidates: [11] })).toThrow(
      /numCandidates\[0\] = 11 is not an integer in \[1, numEntities = 10\]/,
    );
  });
  it("refuses optimistic > pessimistic and a realistic rank outside them", () => {
    const ev = new RankEvaluator({ numEntities: 10 });
    expect(() => ev.addRanks({ side: "tail", optimistic: [3], pessimistic: [2], numCandidates: [5] })).toThrow(
      /out of order/,
    );
    expect(() =>
      ev.addRanks({ side: "tail", optimistic: [2], pessimistic: [3], realistic: [4], numCandidates: [5] }),
    ).toThrow(/out of order/);
  });
  it("refuses more sampled negatives than the graph has other entities", () => {
    const ev = new RankEvaluator({ numEntities: 3 });
    expect(() =>
      ev.addSampledSync({ side: "tail", positiveScores: [1], negativeScores: new Float32Array([0, 0, 0]) }),
    ).toThrow(/3 negatives besides the positive, more than numEntities = 3/);
    expect(() =>
      ev.addSampledSync({ side: "tail", positiveScores: [1], negativeScores: new Float32Array([0, 0]) }),
    ).not.toThrow();
  });
});
