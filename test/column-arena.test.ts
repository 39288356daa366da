/**
 * The one-call batches' columns share blocks (src/evaluation/column-arena.ts): no batch may write into another's
 * columns, whatever the batch sizes, block boundaries, failed batches and score types in between.
 */
import { describe, expect, it } from "vitest";

import { ColumnArena } from "../src/evaluation/column-arena";
import { RankEvaluator } from "../src/evaluation/evaluator";
import { CandidateSets } from "../src/index";
import type { TaskColumns } from "../src/evaluation/task-buffer";
import { backendLabel } from "./helpers/backend";
import { rng } from "./helpers/reference";
import { umls } from "./helpers/umls";

const { N, R, all, valid, test } = umls();
const triples = new Int32Array([...valid, ...test]);
const rows = triples.length / 3;

/** Scores of row r: a fixed pseudo-random row per triple, so any split into batches gives the same ranks. */
function scoresOf(first: number, count: number, float64: boolean): Float32Array | Float64Array {
  const out = float64 ? new Float64Array(count * N) : new Float32Array(count * N);
  for (let r = 0; r < count; r++) {
    const next = rng(1000 + first + r);
    // Few distinct values: ties on both sides of the true score.
    for (let c = 0; c < N; c++) out[r * N + c] = Math.floor(next() * 40) / 8;
  }
  return out;
}

function columns(ev: RankEvaluator, side: "head" | "tail"): Record<string, number[]> {
  const c: TaskColumns = ev.taskColumns(side);
  const keys = ["optimistic", "pessimistic", "realistic", "numCandidates", "relation", "anchor", "truth"] as const;
  return Object.fromEntries(keys.map((k) => [k, Array.from(c[k])]));
}

describe(`ColumnArena (${backendLabel})`, () => {
  it("hands out 8-byte aligned, disjoint views, in blocks that grow, and takes back a failed batch", () => {
    const arena = new ColumnArena();
    const seen: { buffer: ArrayBufferLike; from: number; to: number }[] = [];
    for (let k = 0; k < 400; k++) {
      const r = 1 + ((k * 37) % 300);
      const { out, keys } = arena.take(r);
      expect(out.length).toBe(6 * r);
      expect(keys.length).toBe(3 * r);
      expect(out.byteOffset % 8).toBe(0);
      expect(keys.buffer).toBe(out.buffer);
      expect(keys.byteOffset).toBe(out.byteOffset + out.byteLength);
      const from = out.byteOffset;
      const to = keys.byteOffset + keys.byteLength;
      for (const s of seen) if (s.buffer === out.buffer) expect(to <= s.from || from >= s.to).toBe(true);
      seen.push({ buffer: out.buffer, from, to });
    }
    const blocks = [...new Set(seen.map((s) => s.buffer))];
    expect(blocks.length).toBeGreaterThan(2);
    expect(blocks[1]!.byteLength).toBeGreaterThan(blocks[0]!.byteLength);
    // A batch larger than any block gets a buffer of its own; the block goes on where it was.
    const before = arena.take(1);
    const big = arena.take(200_000);
    expect(big.out.buffer.byteLength).toBeGreaterThanOrEqual(60 * 200_000);
    const after = arena.take(1);
    expect(after.out.buffer).toBe(before.out.buffer);
    expect(after.out.byteOffset).toBeGreaterThan(before.out.byteOffset);
    arena.giveBack(big); // its own buffer: nothing to give back
    expect(arena.take(1).out.byteOffset).toBeGreaterThan(after.out.byteOffset);
    // giveBack: the next take starts where the failed one did.
    const a = arena.take(10);
    arena.giveBack(a);
    const b = arena.take(10);
    expect(b.out.buffer).toBe(a.out.buffer);
    expect(b.out.byteOffset).toBe(a.out.byteOffset);
    // Only the last take is given back: an earlier one stays (a later batch may sit after it).
    const c = arena.take(10);
    arena.giveBack(b);
    expect(arena.take(10).out.byteOffset).toBeGreaterThan(c.out.byteOffset);
    // Across a block switch: the failed batch opened a new block, and the next one starts at its beginning.
    let prev = arena.take(1000);
    let opened = arena.take(1000);
    while (opened.out.buffer === prev.out.buffer) {
      prev = opened;
      opened = arena.take(1000);
    }
    expect(opened.out.byteOffset).toBe(0);
    arena.giveBack(opened);
    const reused = arena.take(5);
    expect(reused.out.buffer).toBe(opened.out.buffer);
    expect(reused.out.byteOffset).toBe(0);
    // A block whose buffer was transferred away (a caller's taskColumns() views): the next take opens another.
    const block = reused.out.buffer as ArrayBuffer;
    structuredClone(block, { transfer: [block] });
    expect(reused.out.length).toBe(0);
    const fresh = arena.take(5);
    expect(fresh.out.buffer.byteLength).toBeGreaterThan(0);
    fresh.out.fill(1);
    // The thresholds scratch has the scores' type and the batch's length; large batches get their own.
    expect(arena.thresholds(7, true)).toBeInstanceOf(Float32Array);
    expect(arena.thresholds(7, false)).toBeInstanceOf(Float64Array);
    expect(arena.thresholds(900, true).length).toBe(900);
    expect(arena.thresholds(3, false).length).toBe(3);
    expect(arena.thresholds(900, true).buffer).toBe(arena.thresholds(5, true).buffer);
    expect(arena.thresholds(100_000, true).buffer).not.toBe(arena.thresholds(100_000, true).buffer);
    // After release() the arena starts again; views handed out before stay as they were.
    fresh.out[0] = 7;
    arena.release();
    expect(arena.take(5).out.buffer).not.toBe(fresh.out.buffer);
    expect(fresh.out[0]).toBe(7);
  });

  for (const typed of [false, true]) {
    it(`many small batches, a failed one and float64 ones among them, rank as one batch does${typed ? " (typed candidates)" : ""}`, () => {
      const candidates = typed
        ? { candidates: CandidateSets.fromTriples(all, { numEntities: N, numRelations: R }) }
        : {};
      const whole = new RankEvaluator({ numEntities: N, filterTriples: all, ...candidates });
      for (const side of ["head", "tail"] as const) whole.addSync({ side, triples, scores: scoresOf(0, rows, false) });
      const pieces = new RankEvaluator({ numEntities: N, filterTriples: all, ...candidates });
      // Batches of 1-23 rows: the first 64 KiB block fills (about 60 bytes a task) and later ones begin mid-batch list.
      for (const side of ["head", "tail"] as const) {
        let at = 0;
        let k = 0;
        while (at < rows) {
          const r = Math.min(rows - at, 1 + ((k * 7) % 23));
          if (k === 5 || k === 91) {
            // A NaN true score: refused, its room given back, nothing recorded (batch 91: where the first block fills).
            const bad = scoresOf(at, r, false).fill(NaN);
            expect(() =>
              pieces.addSync({ side, triples: triples.subarray(3 * at, 3 * (at + r)), scores: bad }),
            ).toThrow(/is NaN/);
          }
          // Every fourth batch as float64 (same values: the scores are multiples of 1/8).
          const scores = scoresOf(at, r, k % 4 === 3);
          pieces.addSync({ side, triples: triples.subarray(3 * at, 3 * (at + r)), scores });
          at += r;
          k++;
        }
      }
      for (const side of ["head", "tail"] as const) expect(columns(pieces, side)).toEqual(columns(whole, side));
      const flat = pieces.finalize().toFlatObject();
      expect(Object.keys(flat).length).toBeGreaterThan(20);
      expect(flat).toEqual(whole.finalize().toFlatObject());
    });
  }
});
