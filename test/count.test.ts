import fc from "fast-check";
import { describe, expect, it } from "vitest";

import { backendInfo, countScores, countScoresSync, KgrankInputError } from "../src/index";
import { referenceCounts, rng, SPECIAL_F32, SPECIAL_F64 } from "./helpers/reference";
import { backendLabel } from "./helpers/backend";

const info = backendInfo();
const label = backendLabel;

function expectCounts(
  got: { greater: Float64Array; equal: Float64Array; nan: Float64Array },
  want: { greater: number[]; equal: number[]; nan: number[] },
) {
  expect(Array.from(got.greater)).toEqual(want.greater);
  expect(Array.from(got.equal)).toEqual(want.equal);
  expect(Array.from(got.nan)).toEqual(want.nan);
}

describe(`countScores on ${label}`, () => {
  it("runs on the backend the environment asked for", () => {
    expect(info.backend).toBe(process.env.KGRANK_BACKEND);
    if (info.backend === "native") expect(info.simd).toBe(process.env.KGRANK_SIMD);
  });

  it("counts greater, equal and NaN per row (hand-checked)", () => {
    const scores = new Float32Array([
      3,
      1,
      2,
      2,
      NaN, // t = 2: greater 1 (3), equal 2, NaN 1
      -0,
      0,
      1,
      -1,
      Infinity, // t = 0: greater 2 (1, Inf), equal 2 (-0, 0)
    ]);
    const got = countScoresSync({ scores, numColumns: 5, thresholds: [2, 0] });
    expectCounts(got, { greater: [1, 2], equal: [2, 2], nan: [1, 0] });
  });

  it("treats -0 and +0 as equal thresholds and scores", () => {
    const got = countScoresSync({ scores: new Float64Array([0, -0, 0, -0]), numColumns: 2, thresholds: [-0, 0] });
    expectCounts(got, { greater: [0, 0], equal: [2, 2], nan: [0, 0] });
  });

  it("counts nothing greater or equal for a NaN threshold, but still counts NaN scores", () => {
    const got = countScoresSync({ scores: new Float32Array([1, NaN, -Infinity]), numColumns: 3, thresholds: [NaN] });
    expectCounts(got, { greater: [0], equal: [0], nan: [1] });
  });

  it("treats infinities as ordinary scores", () => {
    const scores = new Float64Array([Infinity, Infinity, -Infinity, 5]);
    expectCounts(countScoresSync({ scores, numColumns: 4, thresholds: [Infinity] }), {
      greater: [0],
      equal: [2],
      nan: [0],
    });
    expectCounts(countScoresSync({ scores, numColumns: 4, thresholds: [-Infinity] }), {
      greater: [3],
      equal: [1],
      nan: [0],
    });
  });

  for (const [name, Ctor, specials] of [
    ["Float32Array", Float32Array, SPECIAL_F32],
    ["Float64Array", Float64Array, SPECIAL_F64],
  ] as const) {
    it(`matches the sorting reference on special values (${name}), every tail length`, () => {
      const next = rng(7);
      for (const cols of [1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 1000]) {
        const rows = specials.length;
        const scores = new Ctor(rows * cols);
        for (let i = 0; i < scores.length; i++) scores[i] = specials[Math.floor(next() * specials.length)]!;
        const thresholds = Array.from(specials);
        const got = countScoresSync({ scores, numColumns: cols, thresholds });
        expectCounts(got, referenceCounts(scores, cols, thresholds));
      }
    });
  }

  it("compares float64 thresholds exactly against float32 scores", () => {
    // 1 + 2^-30 is between two float32 values: nothing equals it, 1 is below it, 1 + 2^-23 above it.
    const scores = new Float32Array([1, 1 + 2 ** -23, 1, 2, -0, 0]);
    const t = [1 + 2 ** -30, -1e-50, 1e39, -1e39];
    const cols = 6;
    const matrix = new Float32Array(cols * t.length);
    for (let r = 0; r < t.length; r++) matrix.set(scores, r * cols);
    const got = countScoresSync({ scores: matrix, numColumns: cols, thresholds: t });
    // Reference in float64: every float32 is exact in float64.
    expectCounts(got, referenceCounts(Float64Array.from(matrix), cols, t));
    expect(Array.from(got.greater)).toEqual([2, 6, 0, 6]);
    expect(Array.from(got.equal)).toEqual([0, 0, 0, 0]);
  });

  it("splits long rows across column pieces and reassembles them exactly", () => {
    const next = rng(11);
    const cols = 1_100_003; // > 1 MiB per row: the native backend cuts rows into pieces
    const rows = 3;
    const scores = new Float32Array(rows * cols);
    for (let i = 0; i < scores.length; i++) scores[i] = Math.floor(next() * 64) / 8 - 4;
    for (let i = 0; i < scores.length; i += 1001) scores[i] = NaN;
    const thresholds = [0, 0.125, -4];
    const got = countScoresSync({ scores, numColumns: cols, thresholds });
    const want = { greater: [0, 0, 0], equal: [0, 0, 0], nan: [0, 0, 0] };
    for (let r = 0; r < rows; r++) {
      for (let j = 0; j < cols; j++) {
        const v = scores[r * cols + j]!;
        if (v > thresholds[r]!) want.greater[r]!++;
        if (v === thresholds[r]) want.equal[r]!++;
        if (Number.isNaN(v)) want.nan[r]!++;
      }
    }
    expectCounts(got, want);
  });

  it("gives the same counts async and sync, for any thread count", async () => {
    const next = rng(3);
    const cols = 4099;
    const rows = 257;
    const scores = new Float64Array(rows * cols);
    for (let i = 0; i < scores.length; i++) scores[i] = Math.round(next() * 20) - 10;
    const thresholds = Array.from({ length: rows }, (_, r) => (r % 21) - 10);
    const sync = countScoresSync({ scores, numColumns: cols, thresholds });
    for (const threads of [1, 2, 3, 8]) {
      const asyncResult = await countScores({ scores, numColumns: cols, thresholds, threads });
      expect(asyncResult).toEqual(sync);
    }
  });

  it("works on SharedArrayBuffer-backed and offset views", () => {
    const shared = new Float32Array(new SharedArrayBuffer(4 * 12));
    shared.set([5, 1, 2, 3, 4, 5, NaN, 0, 0, 1, 2, 3]);
    const view = shared.subarray(2, 10); // [2,3,4,5,NaN,0,0,1]
    expectCounts(countScoresSync({ scores: view, numColumns: 4, thresholds: [3, 0] }), {
      greater: [2, 1],
      equal: [1, 2],
      nan: [0, 1],
    });
  });

  it("matches a brute-force reference on random matrices (property)", () => {
    const value = fc.oneof(
      fc.constantFrom(...SPECIAL_F64),
      fc.integer({ min: -4, max: 4 }),
      fc.double({ noNaN: false }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 70 }),
        fc.integer({ min: 1, max: 6 }),
        fc.boolean(),
        fc.array(value, { minLength: 420, maxLength: 420 }),
        fc.array(value, { minLength: 6, maxLength: 6 }),
        (cols, rows, single, pool, ts) => {
          const scores = single ? new Float32Array(rows * cols) : new Float64Array(rows * cols);
          for (let i = 0; i < scores.length; i++) scores[i] = pool[i % pool.length]!;
          // Thresholds drawn from the row itself half the time, so ties are common.
          const thresholds = ts.slice(0, rows).map((t, r) => (r % 2 === 0 ? scores[r * cols]! : t));
          const got = countScoresSync({ scores, numColumns: cols, thresholds });
          const ref = referenceCounts(single ? Float64Array.from(scores) : scores, cols, thresholds);
          expectCounts(got, ref);
        },
      ),
      { numRuns: 300, seed: 42 },
    );
  });
});

describe(`countScores input checks on ${label}`, () => {
  const cases: [string, unknown, string][] = [
    ["options not an object", 5, "countScores options"],
    ["scores missing", { numColumns: 1, thresholds: [0] }, "scores"],
    ["scores an Int32Array", { scores: new Int32Array(2), numColumns: 1, thresholds: [0, 0] }, "scores"],
    ["scores a plain array", { scores: [1, 2], numColumns: 1, thresholds: [0, 0] }, "scores"],
    ["scores empty", { scores: new Float32Array(0), numColumns: 1, thresholds: [] }, "scores"],
    ["numColumns zero", { scores: new Float32Array(2), numColumns: 0, thresholds: [0] }, "numColumns"],
    ["numColumns fractional", { scores: new Float32Array(2), numColumns: 1.5, thresholds: [0] }, "numColumns"],
    ["numColumns NaN", { scores: new Float32Array(2), numColumns: NaN, thresholds: [0] }, "numColumns"],
    ["numColumns not dividing", { scores: new Float32Array(5), numColumns: 2, thresholds: [0, 0] }, "numColumns"],
    ["thresholds too short", { scores: new Float32Array(4), numColumns: 2, thresholds: [0] }, "thresholds"],
    ["thresholds of strings", { scores: new Float32Array(2), numColumns: 2, thresholds: ["a"] }, "thresholds"],
    [
      "thresholds a BigInt64Array",
      { scores: new Float32Array(2), numColumns: 2, thresholds: new BigInt64Array(1) },
      "thresholds",
    ],
    ["threads zero", { scores: new Float32Array(2), numColumns: 2, thresholds: [0], threads: 0 }, "threads"],
    ["threads huge", { scores: new Float32Array(2), numColumns: 2, thresholds: [0], threads: 1e6 }, "threads"],
  ];
  for (const [what, args, argument] of cases) {
    it(`rejects ${what} with a KgrankInputError naming ${argument}`, async () => {
      let caught: unknown;
      try {
        countScoresSync(args as never);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(KgrankInputError);
      expect((caught as KgrankInputError).argument).toBe(argument);
      expect((caught as Error).message.startsWith(`${argument}:`)).toBe(true);
      await expect(countScores(args as never)).rejects.toBeInstanceOf(KgrankInputError);
    });
  }

  it("rejects a detached buffer as empty", () => {
    const scores = new Float32Array(8);
    structuredClone(scores.buffer, { transfer: [scores.buffer] });
    expect(() => countScoresSync({ scores, numColumns: 8, thresholds: [0] })).toThrow(KgrankInputError);
  });
});
