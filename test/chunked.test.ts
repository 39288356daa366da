/**
 * RankEvaluator.chunked(): a batch fed in entity slices must record exactly the ranks of the same batch fed whole
 * (addSync), for random slicings, filtered and unfiltered, under restriction, with NaN scores and ties. Filtered, the
 * slices are counted by the filter index's column-range count (FilterIndexHandle.countFilteredRange); the property
 * test holds it to the one-call filtered ranks (addSync -> rankTriples) on random graphs whose tasks have known
 * answers in several slices.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";

import { KgrankInputError, KgrankStateError, RankEvaluator } from "../src/index";
import { rng } from "./helpers/reference";
import { backendLabel } from "./helpers/backend";
import { umls } from "./helpers/umls";

const label = backendLabel;
const { N, train, valid, test } = umls();
const filter = [train, valid, test];
type Side = "head" | "tail";
const rows = test.length / 3;

function scoresFor(side: Side, seed: number, Ctor: Float32ArrayConstructor | Float64ArrayConstructor) {
  const next = rng(seed);
  const s = new Ctor(rows * N);
  for (let i = 0; i < s.length; i++) s[i] = next() < 0.02 ? NaN : Math.floor(next() * 24) / 4;
  const trueScores = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    const j = i * N + (side === "tail" ? test[3 * i + 2]! : test[3 * i]!);
    if (Number.isNaN(s[j]!)) s[j] = 3;
    trueScores[i] = s[j]!;
  }
  return { scores: s, trueScores };
}

/** Random cut points of [0, N). */
function slicing(seed: number): [number, number][] {
  const next = rng(seed);
  const cuts = new Set<number>([0, N]);
  const k = 1 + Math.floor(next() * 8);
  for (let i = 0; i < k; i++) cuts.add(Math.floor(next() * N));
  const c = [...cuts].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (let i = 0; i + 1 < c.length; i++) if (c[i]! < c[i + 1]!) out.push([c[i]!, c[i + 1]!]);
  // Shuffle: slices may arrive in any order.
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Cut points (from fast-check) splitting [0, cols) into slices, in an order drawn from `order`. */
function chunking(cols: number, cuts: number[], order: number[]): [number, number][] {
  const points = [...new Set(cuts.map((c) => 1 + (c % Math.max(1, cols - 1))))]
    .filter((c) => c < cols)
    .sort((a, b) => a - b);
  const bounds = [0, ...points, cols];
  const out: [number, number][] = [];
  for (let i = 0; i + 1 < bounds.length; i++) out.push([bounds[i]!, bounds[i + 1]!]);
  return out
    .map((c, i) => [c, order[i % order.length]! + i] as const)
    .sort((a, b) => a[1] - b[1])
    .map(([c]) => c);
}

function slice(scores: Float32Array | Float64Array, a: number, b: number) {
  const w = b - a;
  const out = new (scores.constructor as Float32ArrayConstructor)(rows * w);
  for (let i = 0; i < rows; i++) out.set(scores.subarray(i * N + a, i * N + b), i * w);
  return out;
}

describe(`RankEvaluator.chunked on ${label}`, () => {
  const settings = [
    { name: "filtered", opts: { filterTriples: filter } },
    { name: "unfiltered", opts: {} },
    {
      name: "filtered with entity and relation restriction",
      opts: {
        filterTriples: filter,
        restrictEntities: Array.from({ length: N }, (_, e) => e).filter((e) => e % 4 !== 1),
        restrictRelations: Array.from({ length: 30 }, (_, r) => r).filter((r) => r % 3 !== 2),
      },
    },
  ];
  for (const { name, opts } of settings) {
    for (const Ctor of [Float32Array, Float64Array]) {
      it(`${name}, ${Ctor.name}: random slicings record the ranks of the whole batch`, async () => {
        for (let trial = 0; trial < 4; trial++) {
          const whole = new RankEvaluator({ numEntities: N, ...opts });
          const sliced = new RankEvaluator({ numEntities: N, ...opts });
          for (const side of ["head", "tail"] as Side[]) {
            const { scores, trueScores } = scoresFor(side, 10 * trial + (side === "head" ? 1 : 2), Ctor);
            whole.addSync({ triples: test, side, scores });
            const batch = sliced.chunked({ triples: test, side, trueScores });
            let k = 0;
            for (const [a, b] of slicing(100 * trial + k)) {
              const s = { scores: slice(scores, a, b), entityStart: a };
              if (k++ % 2) await batch.add(s);
              else batch.addSync(s);
            }
            batch.finish();
            const want = whole.taskColumns(side);
            const got = sliced.taskColumns(side);
            for (const col of [
              "optimistic",
              "pessimistic",
              "realistic",
              "numCandidates",
              "relation",
              "anchor",
              "truth",
            ] as const) {
              expect(Array.from(got[col]), col).toEqual(Array.from(want[col]));
            }
          }
          expect(sliced.info().skipped).toEqual(whole.info().skipped);
          expect(sliced.finalize().toFlatObject()).toEqual(whole.finalize().toFlatObject());
        }
      });
    }
  }

  it("filtered: random chunkings of random graphs record the one-call filtered ranks (property, sync and async)", async () => {
    let spread = 0; // tasks whose other known answers fall in two or more slices
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 48 }),
        fc.integer({ min: 1, max: 3 }),
        fc.boolean(),
        fc.constantFrom<Side>("head", "tail"),
        fc.array(fc.nat(), { maxLength: 7 }),
        fc.array(fc.nat({ max: 20 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
        fc.integer(),
        async (E, R, single, side, cuts, order, asyncs, seed) => {
          const next = rng(seed);
          const pick = (n: number) => Math.floor(next() * n);
          // One end among few entities, the other anywhere: keys with many known answers spread over the axis.
          const filterTriples: number[] = [];
          for (let i = 0; i < 3 * E; i++) {
            const few = pick(Math.min(E, 3));
            const any = pick(E);
            if (i % 2) filterTriples.push(few, pick(R), any);
            else filterTriples.push(any, pick(R), few);
          }
          const rowsHere = 1 + pick(8);
          const triples = new Int32Array(3 * rowsHere);
          for (let i = 0; i < rowsHere; i++)
            triples.set(filterTriples.slice(3 * ((i * 5) % (3 * E)), 3 * ((i * 5) % (3 * E)) + 3), 3 * i);
          const scores = single ? new Float32Array(rowsHere * E) : new Float64Array(rowsHere * E);
          for (let j = 0; j < scores.length; j++) scores[j] = next() < 0.05 ? NaN : pick(6) / 2;
          const trueScores = new Float64Array(rowsHere);
          for (let i = 0; i < rowsHere; i++) {
            const j = i * E + triples[3 * i + (side === "tail" ? 2 : 0)]!;
            if (Number.isNaN(scores[j]!)) scores[j] = 1;
            trueScores[i] = scores[j]!;
          }
          const opts = {
            numEntities: E,
            numRelations: R,
            filterTriples: [Int32Array.from(filterTriples)],
            sides: side,
          };
          const whole = new RankEvaluator(opts);
          whole.addSync({ triples, side, scores }); // filtered, unrestricted: one rankTriples call
          const sliced = new RankEvaluator(opts);
          const batch = sliced.chunked({ triples, side, trueScores });
          const slices = chunking(E, cuts, order);
          let k = 0;
          for (const [a, b] of slices) {
            const w = b - a;
            const part = new (scores.constructor as Float32ArrayConstructor)(rowsHere * w);
            for (let i = 0; i < rowsHere; i++) part.set(scores.subarray(i * E + a, i * E + b), i * w);
            if (asyncs[k++ % asyncs.length]) await batch.add({ scores: part, entityStart: a });
            else batch.addSync({ scores: part, entityStart: a });
          }
          batch.finish();
          const want = whole.taskColumns(side);
          const got = sliced.taskColumns(side);
          for (const col of [
            "optimistic",
            "pessimistic",
            "realistic",
            "numCandidates",
            "relation",
            "anchor",
            "truth",
          ] as const) {
            expect(Array.from(got[col]), col).toEqual(Array.from(want[col]));
          }
          // How many tasks had other known answers in two or more slices.
          for (let i = 0; i < rowsHere; i++) {
            const [h, r, t] = [triples[3 * i]!, triples[3 * i + 1]!, triples[3 * i + 2]!];
            const hit = new Set<number>();
            for (let f = 0; f < filterTriples.length; f += 3) {
              const [fh, fr, ft] = [filterTriples[f]!, filterTriples[f + 1]!, filterTriples[f + 2]!];
              const other = side === "tail" ? fh === h && fr === r && ft !== t : ft === t && fr === r && fh !== h;
              if (other)
                hit.add(
                  slices.findIndex(([a, b]) => (side === "tail" ? ft : fh) >= a && (side === "tail" ? ft : fh) < b),
                );
            }
            if (hit.size >= 2) spread++;
          }
        },
      ),
      { numRuns: 150, seed: 11 },
    );
    expect(spread).toBeGreaterThan(100);
  });

  it("checks that the true column of a slice holds the given true score", () => {
    const ev = new RankEvaluator({ numEntities: N, filterTriples: filter });
    const scores = new Float32Array(N).fill(1);
    // 1 + 1e-12 is no float32: the true column (1.0f) cannot hold it, so the slice contradicts trueScores.
    const batch = ev.chunked({ triples: test.subarray(0, 3), side: "tail", trueScores: [1 + 1e-12] });
    expect(() => batch.addSync({ scores, entityStart: 0 })).toThrow(/true column/);
  });

  it("an abandoned chunked batch can be aborted: nothing recorded, finalize() no longer blocked", () => {
    const ev = new RankEvaluator({ numEntities: N, filterTriples: filter, sides: "tail" });
    const b = ev.chunked({ triples: test.subarray(0, 6), side: "tail", trueScores: [0.5, 0.5] });
    b.addSync({ scores: new Float32Array(2 * 10).fill(0.25), entityStart: 0 });
    expect(() => ev.serialize()).toThrow(KgrankStateError);
    b.abort();
    b.abort();
    expect(() => b.finish()).toThrow(/finish\(\) or abort\(\) was already called/);
    expect(() => b.addSync({ scores: new Float32Array(2), entityStart: 10 })).toThrow(KgrankStateError);
    ev.addRanks({ side: "tail", realistic: [1], numCandidates: [3] });
    expect(ev.taskCounts.tail).toBe(1);
    expect(ev.finalize().get("tail.count")).toBe(1);
  });

  it("rejects bad slices and misuse with typed errors", () => {
    const ev = new RankEvaluator({ numEntities: N, filterTriples: filter });
    const triples = test.subarray(0, 6);
    expect(() => ev.chunked({ triples, side: "tail", trueScores: [1] })).toThrow(KgrankInputError);
    expect(() => ev.chunked({ triples, side: "tail", trueScores: [1, NaN] })).toThrow(/trueScores\[1\]/);
    const { scores } = scoresFor("tail", 3, Float32Array);
    const trueScores = [scores[test[2]!]!, scores[N + test[5]!]!];
    const batch = ev.chunked({ triples, side: "tail", trueScores });
    const first = new Float32Array(2 * 10);
    for (let i = 0; i < 2; i++) first.set(scores.subarray(i * N, i * N + 10), i * 10);
    expect(() => batch.addSync({ scores: new Float32Array(3), entityStart: 0 })).toThrow(KgrankInputError);
    expect(() => batch.addSync({ scores: first, entityStart: N - 5 })).toThrow(/entityStart/);
    batch.addSync({ scores: first, entityStart: 0 });
    expect(() => batch.addSync({ scores: first, entityStart: 5 })).toThrow(/overlap/);
    expect(() => batch.finish()).toThrow(KgrankStateError);
    expect(() => ev.finalize()).toThrow(/chunked/);
  });
});
