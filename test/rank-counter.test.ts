import fc from "fast-check";
import { describe, expect, it } from "vitest";

import { computeRanksSync, KgrankInputError, KgrankStateError, RankCounter, type Ranks } from "../src/index";
import { rng } from "./helpers/reference";
import { backendLabel } from "./helpers/backend";

const label = backendLabel;

const plain = (r: Ranks) => ({
  optimistic: Array.from(r.optimistic),
  pessimistic: Array.from(r.pessimistic),
  realistic: Array.from(r.realistic),
  numCandidates: Array.from(r.numCandidates),
});

/** Columns [start, end) of a row-major matrix. */
function slice<T extends Float32Array | Float64Array>(m: T, rows: number, cols: number, start: number, end: number): T {
  const w = end - start;
  const out = new (m.constructor as new (n: number) => T)(rows * w);
  for (let r = 0; r < rows; r++) out.set(m.subarray(r * cols + start, r * cols + end), r * w);
  return out;
}

/** Random cut points splitting [0, cols) into chunks, then shuffled order. */
function chunking(cols: number, cuts: number[], order: number[]): [number, number][] {
  const points = [...new Set(cuts.map((c) => 1 + (c % Math.max(1, cols - 1))))]
    .filter((c) => c < cols)
    .sort((a, b) => a - b);
  const bounds = [0, ...points, cols];
  const chunks: [number, number][] = [];
  for (let i = 0; i + 1 < bounds.length; i++) chunks.push([bounds[i]!, bounds[i + 1]!]);
  return chunks
    .map((c, i) => [c, order[i % order.length]! + i] as const)
    .sort((a, b) => a[1] - b[1])
    .map(([c]) => c);
}

function matrix(seed: number, rows: number, cols: number, single: boolean) {
  const next = rng(seed);
  const m = single ? new Float32Array(rows * cols) : new Float64Array(rows * cols);
  for (let i = 0; i < m.length; i++) m[i] = next() < 0.05 ? NaN : Math.floor(next() * 10) / 2;
  const idx = Array.from({ length: rows }, () => Math.floor(next() * cols));
  for (let r = 0; r < rows; r++) if (Number.isNaN(m[r * cols + idx[r]!]!)) m[r * cols + idx[r]!] = 1;
  return { m, idx, trueScores: idx.map((j, r) => m[r * cols + j]!) };
}

describe(`RankCounter on ${label}`, () => {
  it("gives the unchunked ranks for any chunking and order (true column among the chunks; property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 6 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.array(fc.nat({ max: 20 }), { minLength: 1, maxLength: 8 }),
        fc.integer(),
        (cols, rows, single, cuts, order, seed) => {
          const { m, idx, trueScores } = matrix(seed, rows, cols, single);
          const want = plain(computeRanksSync({ scores: m, numColumns: cols, trueIndices: idx }));
          const counter = new RankCounter({ trueScores, trueIndices: idx, numColumns: cols });
          for (const [a, b] of chunking(cols, cuts, order))
            counter.addSync({ scores: slice(m, rows, cols, a, b), columnStart: a });
          expect(plain(counter.ranks())).toEqual(want);
        },
      ),
      { numRuns: 200, seed: 3 },
    );
  });

  it("gives the trueScores ranks when the chunks hold only the other candidates (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.integer(),
        (cols, rows, cuts, seed) => {
          const { m } = matrix(seed, rows, cols, true);
          const trueScores = Array.from({ length: rows }, (_, r) => (r % 3) + 0.5 + 2 ** -30); // float64, inexact in f32
          const want = plain(computeRanksSync({ scores: m, numColumns: cols, trueScores }));
          const counter = new RankCounter({ trueScores });
          for (const [a, b] of chunking(cols, cuts, [0]))
            counter.addSync({ scores: slice(m, rows, cols, a, b), columnStart: a });
          expect(plain(counter.ranks())).toEqual(want);
        },
      ),
      { numRuns: 150, seed: 5 },
    );
  });

  it("ranks() called twice gives the same ranks and leaves the first result as it was", () => {
    const c = new RankCounter({ trueScores: [0.5, 0.25], numColumns: 3 });
    c.addSync({ scores: Float32Array.of(0.875, 0.5, 0.125, 0.25, 0.25, 0.75), columnStart: 0 });
    const first = c.ranks();
    const copy = structuredClone(first);
    const second = c.ranks();
    expect(second).toEqual(copy);
    expect(first).toEqual(copy);
    expect(Array.from(first.optimistic)).toEqual([2, 2]);
  });

  it("accepts chunks added concurrently (async) and of mixed float types", async () => {
    const rows = 17;
    const cols = 20_000;
    const { m, idx, trueScores } = matrix(11, rows, cols, false);
    const want = plain(computeRanksSync({ scores: m, numColumns: cols, trueIndices: idx }));
    const counter = new RankCounter({ trueScores, trueIndices: idx, numColumns: cols });
    const bounds = [0, 1000, 7000, 7001, 15000, 20000];
    await Promise.all(
      bounds
        .slice(0, -1)
        .map((a, i) => counter.add({ scores: slice(m, rows, cols, a, bounds[i + 1]!), columnStart: a })),
    );
    expect(plain(counter.ranks())).toEqual(want);
  });

  it("counts columns seen and refuses overlapping, out-of-range or incomplete chunkings", () => {
    const { m, idx, trueScores } = matrix(2, 2, 10, true);
    const c = new RankCounter({ trueScores, trueIndices: idx, numColumns: 10 });
    c.addSync({ scores: slice(m, 2, 10, 0, 4), columnStart: 0 });
    expect(c.columnsSeen).toBe(4);
    expect(() => c.addSync({ scores: slice(m, 2, 10, 3, 5), columnStart: 3 })).toThrow(/overlap columns \[0, 4\)/);
    expect(() => c.addSync({ scores: slice(m, 2, 10, 6, 10), columnStart: 7 })).toThrow(/run past numColumns 10/);
    expect(() => c.ranks()).toThrow(KgrankStateError);
    expect(() => c.ranks()).toThrow(/covered 4 of numColumns 10/);
  });

  it("requires every row's true column to be in some chunk", () => {
    const c = new RankCounter({ trueScores: [1], trueIndices: [5] });
    c.addSync({ scores: new Float32Array([0, 2, 1]), columnStart: 0 });
    expect(() => c.ranks()).toThrow(/true column 5 of row 0 was in no chunk/);
  });

  it("checks that the score at the true column is the given true score", () => {
    const c = new RankCounter({ trueScores: [1, 2], trueIndices: [0, 1] });
    let caught: unknown;
    try {
      c.addSync({ scores: new Float32Array([1, 0, 0, 3]), columnStart: 0 });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(KgrankInputError);
    expect((caught as Error).message).toMatch(/row 1: the score at its true column 1 is 3, but trueScores\[1\] is 2/);
  });

  it("refuses chunks after ranks() and ranks() while an add is running", async () => {
    const c = new RankCounter({ trueScores: [0.5] });
    const pending = c.add({ scores: new Float64Array([1, 0]), columnStart: 0 });
    expect(() => c.ranks()).toThrow(/still running/);
    await pending;
    expect(plain(c.ranks())).toEqual({ optimistic: [2], pessimistic: [2], realistic: [2], numCandidates: [3] });
    expect(() => c.addSync({ scores: new Float64Array([1]), columnStart: 2 })).toThrow(KgrankStateError);
    expect(() => new RankCounter({ trueScores: [0.5] }).ranks()).toThrow(/no chunk was added/);
  });

  it("rejects bad construction and chunk arguments with errors naming them", () => {
    const bad: [() => unknown, string][] = [
      [() => new RankCounter({ trueScores: [] }), "trueScores"],
      [() => new RankCounter({ trueScores: [NaN] }), "trueScores"],
      [() => new RankCounter({ trueScores: "x" as never }), "trueScores"],
      [() => new RankCounter({ trueScores: [1], trueIndices: [3], numColumns: 3 }), "trueIndices"],
      [() => new RankCounter({ trueScores: [1], numColumns: 0 }), "numColumns"],
      [
        () => new RankCounter({ trueScores: [1, 2] }).addSync({ scores: new Float32Array(3), columnStart: 0 }),
        "scores",
      ],
      [
        () => new RankCounter({ trueScores: [1] }).addSync({ scores: new Float32Array(3), columnStart: -1 }),
        "columnStart",
      ],
      [() => new RankCounter({ trueScores: [1] }).addSync({ scores: [1, 2] as never, columnStart: 0 }), "scores"],
    ];
    for (const [call, argument] of bad) {
      let caught: unknown;
      try {
        call();
      } catch (e) {
        caught = e;
      }
      expect(caught, argument).toBeInstanceOf(KgrankInputError);
      expect((caught as KgrankInputError).argument).toBe(argument);
    }
  });
});
