import fc from "fast-check";
import { describe, expect, it } from "vitest";

import {
  computeRanks,
  computeRanksSync,
  computeSampledRanks,
  computeSampledRanksSync,
  KgrankInputError,
  type Ranks,
} from "../src/index";
import { referenceRanks, rng, SPECIAL_F64, type RefRanks } from "./helpers/reference";
import { backendLabel } from "./helpers/backend";
import { expectInputError } from "./helpers/errors";

const label = backendLabel;

function plain(r: Ranks): RefRanks {
  return {
    optimistic: Array.from(r.optimistic),
    pessimistic: Array.from(r.pessimistic),
    realistic: Array.from(r.realistic),
    numCandidates: Array.from(r.numCandidates),
  };
}

describe(`computeRanks on ${label}`, () => {
  it("gives optimistic, pessimistic and realistic ranks with ties (hand-checked)", () => {
    // Row 0: true column 1 scores 5; one candidate above (7), two others tie with it (5, 5).
    // Row 1: true column 0 scores 1; a NaN (not a candidate) and nothing above.
    const scores = new Float32Array([7, 5, 5, 5, 1, 1, NaN, 0, -Infinity, 0]);
    const r = computeRanksSync({ scores, numColumns: 5, trueIndices: [1, 0] });
    expect(plain(r)).toEqual({
      optimistic: [2, 1],
      pessimistic: [4, 1],
      realistic: [3, 1],
      numCandidates: [5, 4],
    });
  });

  it("counts +-Infinity as ordinary candidates and -0 as equal to +0", () => {
    const scores = new Float64Array([Infinity, 0, -0, -Infinity]);
    const r = computeRanksSync({ scores, numColumns: 4, trueIndices: [1] });
    expect(plain(r)).toEqual({ optimistic: [2], pessimistic: [3], realistic: [2.5], numCandidates: [4] });
    const inf = computeRanksSync({ scores, numColumns: 4, trueIndices: [0] });
    expect(plain(inf)).toEqual({ optimistic: [1], pessimistic: [1], realistic: [1], numCandidates: [4] });
  });

  it("adds the true candidate once when it is given by score instead of column", () => {
    const scores = new Float32Array([7, 5, 5, NaN]);
    const r = computeRanksSync({ scores, numColumns: 4, trueScores: [5] });
    expect(plain(r)).toEqual({ optimistic: [2], pessimistic: [4], realistic: [3], numCandidates: [4] });
  });

  it("gives the same ranks by column as by score with that column left out", () => {
    const next = rng(5);
    const cols = 33;
    const rows = 40;
    const scores = new Float64Array(rows * cols).map(() => Math.floor(next() * 8));
    const idx = Array.from({ length: rows }, (_, r) => (r * 7) % cols);
    const byIndex = computeRanksSync({ scores, numColumns: cols, trueIndices: idx });
    const without = new Float64Array(rows * (cols - 1));
    for (let r = 0; r < rows; r++) {
      let k = 0;
      for (let j = 0; j < cols; j++) if (j !== idx[r]) without[r * (cols - 1) + k++] = scores[r * cols + j]!;
    }
    const trueScores = idx.map((j, r) => scores[r * cols + j]!);
    const byScore = computeRanksSync({ scores: without, numColumns: cols - 1, trueScores });
    expect(plain(byScore)).toEqual(plain(byIndex));
  });

  it("compares float64 true scores exactly against float32 candidates", () => {
    const scores = new Float32Array([1, 1 + 2 ** -23, 1, 0.5]);
    const r = computeRanksSync({ scores, numColumns: 4, trueScores: [1 + 2 ** -30] });
    // Only 1 + 2^-23 is above 1 + 2^-30; nothing equals it.
    expect(plain(r)).toEqual({ optimistic: [2], pessimistic: [2], realistic: [2], numCandidates: [5] });
    const ref = referenceRanks(Float64Array.from(scores), 4, { trueScores: [1 + 2 ** -30] });
    expect(plain(r)).toEqual(ref);
  });

  it("matches a sorting reference on random rows (property; both ways of giving the truth)", () => {
    const value = fc.oneof(fc.constantFrom(...SPECIAL_F64), fc.integer({ min: -3, max: 3 }), fc.double());
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 5 }),
        fc.boolean(),
        fc.boolean(),
        fc.array(value, { minLength: 200, maxLength: 200 }),
        fc.array(fc.nat(), { minLength: 5, maxLength: 5 }),
        (cols, rows, single, byIndex, pool, picks) => {
          const scores = single ? new Float32Array(rows * cols) : new Float64Array(rows * cols);
          for (let i = 0; i < scores.length; i++) scores[i] = pool[i % pool.length]!;
          const idx = picks.slice(0, rows).map((p) => p % cols);
          // The true score must not be NaN: replace it where it is.
          for (let r = 0; r < rows; r++) if (Number.isNaN(scores[r * cols + idx[r]!]!)) scores[r * cols + idx[r]!] = 0;
          const asF64 = Float64Array.from(scores);
          if (byIndex) {
            const got = computeRanksSync({ scores, numColumns: cols, trueIndices: idx });
            expect(plain(got)).toEqual(referenceRanks(asF64, cols, { trueIndices: idx }));
          } else {
            const ts = idx
              .map((j, r) => (r % 2 ? pool[(r * 13) % pool.length]! : asF64[r * cols + j]!))
              .map((v) => (Number.isNaN(v) ? 1 : v));
            const got = computeRanksSync({ scores, numColumns: cols, trueScores: ts });
            expect(plain(got)).toEqual(referenceRanks(asF64, cols, { trueScores: ts }));
          }
        },
      ),
      { numRuns: 300, seed: 7 },
    );
  });

  it("gives the same ranks async and sync, whatever the thread count", async () => {
    const next = rng(9);
    const cols = 5003;
    const rows = 211;
    const scores = new Float32Array(rows * cols).map(() => Math.floor(next() * 100) / 10);
    const idx = Int32Array.from({ length: rows }, (_, r) => (r * 31) % cols);
    const sync = plain(computeRanksSync({ scores, numColumns: cols, trueIndices: idx }));
    for (const threads of [1, 2, 4]) {
      expect(plain(await computeRanks({ scores, numColumns: cols, trueIndices: idx, threads }))).toEqual(sync);
    }
  });
});

describe(`computeSampledRanks on ${label}`, () => {
  /** OGB's link-prediction evaluator, written from its definition: rank = 0.5 (#neg > pos + #neg >= pos) + 1. */
  function ogbReference(pos: ArrayLike<number>, neg: ArrayLike<number>, k: number) {
    const ranks: number[] = [];
    for (let i = 0; i < pos.length; i++) {
      let gt = 0;
      let ge = 0;
      for (let j = 0; j < k; j++) {
        const v = neg[i * k + j]!;
        if (v > pos[i]!) gt++;
        if (v >= pos[i]!) ge++;
      }
      ranks.push(0.5 * (gt + ge) + 1);
    }
    const list = (f: (r: number) => number) => ranks.map(f);
    return {
      ranks,
      mrrList: list((r) => 1 / r),
      hits1: list((r) => (r <= 1 ? 1 : 0)),
      hits3: list((r) => (r <= 3 ? 1 : 0)),
      hits10: list((r) => (r <= 10 ? 1 : 0)),
    };
  }

  for (const [name, Ctor] of [
    ["float32", Float32Array],
    ["float64", Float64Array],
  ] as const) {
    it(`equals OGB's evaluator on ranks, MRR and Hits@1/3/10 lists (${name}, ties and NaN negatives)`, async () => {
      const next = rng(21);
      const n = 500;
      const k = 50;
      const pos = new Ctor(n).map(() => Math.floor(next() * 12) / 4);
      const neg = new Ctor(n * k).map(() => (next() < 0.02 ? NaN : Math.floor(next() * 12) / 4));
      const ref = ogbReference(pos, neg, k);
      for (const r of [
        computeSampledRanksSync({ positiveScores: pos, negativeScores: neg }),
        await computeSampledRanks({ positiveScores: pos, negativeScores: neg }),
      ]) {
        expect(Array.from(r.realistic)).toEqual(ref.ranks);
        expect(Array.from(r.realistic, (x) => 1 / x)).toEqual(ref.mrrList);
        expect(Array.from(r.realistic, (x) => (x <= 1 ? 1 : 0))).toEqual(ref.hits1);
        expect(Array.from(r.realistic, (x) => (x <= 3 ? 1 : 0))).toEqual(ref.hits3);
        expect(Array.from(r.realistic, (x) => (x <= 10 ? 1 : 0))).toEqual(ref.hits10);
        for (let i = 0; i < n; i++) {
          let nans = 0;
          for (let j = 0; j < k; j++) if (Number.isNaN(neg[i * k + j]!)) nans++;
          expect(r.numCandidates[i]).toBe(k + 1 - nans);
        }
      }
    });
  }
});

describe(`rank input checks on ${label}`, () => {
  const s = new Float32Array([1, 2, 3, 4]);
  const cases: [string, () => unknown, string, RegExp?][] = [
    [
      "neither trueIndices nor trueScores",
      () => computeRanksSync({ scores: s, numColumns: 2 } as never),
      "trueIndices",
    ],
    [
      "both trueIndices and trueScores",
      () => computeRanksSync({ scores: s, numColumns: 2, trueIndices: [0, 0], trueScores: [1, 1] }),
      "trueScores",
    ],
    [
      "a true index out of range",
      () => computeRanksSync({ scores: s, numColumns: 2, trueIndices: [0, 2] }),
      "trueIndices",
      /trueIndices\[1\] = 2 is not an integer in \[0, 2\)/,
    ],
    [
      "a negative true index",
      () => computeRanksSync({ scores: s, numColumns: 2, trueIndices: [-1, 0] }),
      "trueIndices",
    ],
    [
      "a fractional true index",
      () => computeRanksSync({ scores: s, numColumns: 2, trueIndices: [0.5, 0] }),
      "trueIndices",
    ],
    ["too few true indices", () => computeRanksSync({ scores: s, numColumns: 2, trueIndices: [0] }), "trueIndices"],
    [
      "BigInt true indices",
      () => computeRanksSync({ scores: s, numColumns: 2, trueIndices: new BigInt64Array(2) as never }),
      "trueIndices",
    ],
    [
      "a NaN true score given",
      () => computeRanksSync({ scores: s, numColumns: 2, trueScores: [1, NaN] }),
      "trueScores",
      /trueScores\[1\] is NaN/,
    ],
    [
      "a NaN true score in the matrix",
      () => computeRanksSync({ scores: new Float32Array([1, NaN]), numColumns: 2, trueIndices: [1] }),
      "scores",
      /row 0 \(column 1\) is NaN/,
    ],
    [
      "empty scores (b = 0)",
      () => computeRanksSync({ scores: new Float32Array(0), numColumns: 2, trueIndices: [] }),
      "scores",
    ],
    ["numColumns not dividing", () => computeRanksSync({ scores: s, numColumns: 3, trueIndices: [0] }), "numColumns"],
    [
      "an Int32Array of scores",
      () => computeRanksSync({ scores: new Int32Array(4) as never, numColumns: 2, trueIndices: [0, 0] }),
      "scores",
    ],
    [
      "K = 0 negatives",
      () => computeSampledRanksSync({ positiveScores: [1], negativeScores: new Float32Array(0) }),
      "negativeScores",
      /K = 0/,
    ],
    ["no positives", () => computeSampledRanksSync({ positiveScores: [], negativeScores: s }), "positiveScores"],
    [
      "negatives not n x K",
      () => computeSampledRanksSync({ positiveScores: [1, 2, 3], negativeScores: s }),
      "negativeScores",
    ],
    [
      "a NaN positive",
      () => computeSampledRanksSync({ positiveScores: [1, NaN], negativeScores: s }),
      "positiveScores",
      /positiveScores\[1\] is NaN/,
    ],
    [
      "negatives as a plain array",
      () => computeSampledRanksSync({ positiveScores: [1], negativeScores: [1, 2] as never }),
      "negativeScores",
    ],
  ];
  for (const [what, call, argument, pattern] of cases) {
    it(`rejects ${what} with a KgrankInputError naming ${argument}`, () => {
      expectInputError(call, argument, pattern);
    });
  }

  it("rejects bad input asynchronously too (a rejected promise, not a throw)", async () => {
    const p = computeRanks({ scores: s, numColumns: 2, trueIndices: [0, 9] });
    await expect(p).rejects.toBeInstanceOf(KgrankInputError);
    await expect(computeSampledRanks({ positiveScores: [NaN], negativeScores: s })).rejects.toBeInstanceOf(
      KgrankInputError,
    );
  });
});
