/**
 * Filtered evaluation of one batch whose scores arrive in entity slices (LibKGE's chunk_size, PyKEEN's slicing):
 * the greater / equal / candidate counts of every slice accumulate per row (RankCounter). Filtered, each slice is
 * counted by the filter index's column-range count (FilteredRankCounter -> FilterIndexHandle.countFilteredRange:
 * native/core/count.cpp count_rows_filtered_range, src/fallback/filter-index.ts), which takes the known answers that
 * fall in the slice out in the kernel; nothing of the filter is kept or subtracted here. Memory O(rows); the batch
 * never needs all rows x numEntities scores at once. The true scores must be known up front (score the true triples
 * first), because every slice is counted against them.
 */
import { KgrankInputError, KgrankStateError } from "../checks/errors";
import type { FilterIndexHandle, FloatArray } from "../contract/kernels";
import { FilteredRankCounter, RankCounter } from "../ranking/rank-counter";
import type { Ranks } from "../ranking/ranks";
import { type AsyncOptions, callOptions } from "../backend/call-control";
import { describe, integer, isArrayLike, optionKeys, options, threadCount, tripleArray } from "../checks/validate";
import { sideArg } from "./inputs";
import type { BatchContext } from "./selection";
import type { TaskColumns } from "./task-buffer";
import { CHUNKED_KEYS, type ChunkedBatchOptions, type EvaluationSide } from "./types";

export type { ChunkedBatchOptions } from "./types";

export interface EntitySlice {
  /** Scores of every row of the batch for entities [entityStart, entityStart + width): row-major b x width. */
  scores: Float32Array | Float64Array;
  /** First entity id of the slice. */
  entityStart: number;
  threads?: number;
}

const SLICE_KEYS = optionKeys<EntitySlice>({ scores: 1, entityStart: 1, threads: 1 });

/** What the evaluator hands a chunked batch: the kept rows' keys and where the ranks go when it finishes. */
export interface ChunkedContext {
  rows: number;
  kept: number;
  keep: Uint8Array | null;
  numEntities: number;
  /** Sorted kept entity ids under entity restriction (compact id = position), or null. */
  keptEntities: Int32Array | null;
  anchor: Int32Array;
  relation: Int32Array;
  truth: Int32Array;
  index: FilterIndexHandle | null;
  threads: number | undefined;
  /**
   * An entity shard's batch (RankEvaluatorOptions.entityShard): the slices cover its entities [begin, end) only, and
   * finish() records the partial counts (./entity-shards.ts) instead of ranks. Null: every entity.
   */
  partial: [number, number] | null;
  record(ranks: Ranks): void;
  recordPartial(columns: Omit<TaskColumns, "relation" | "anchor" | "truth">): void;
  release(): void;
}

function lowerBound(a: Int32Array, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class ChunkedBatch {
  readonly #ctx: ChunkedContext;
  readonly #counter: RankCounter | null;
  /** The kept rows' true scores (an entity shard's partial state records them). */
  readonly #trueScores: Float64Array;
  readonly #ranges: [number, number][] = [];
  #covered = 0;
  #pending = 0;
  #done = false;

  /** @internal Made by `RankEvaluator.chunked`, never by users. */
  constructor(ctx: ChunkedContext, trueScores: ArrayLike<number>) {
    this.#ctx = ctx;
    const ts = trueScores as ArrayLike<unknown>;
    if (!isArrayLike(ts) || ts.length !== ctx.rows) {
      throw new KgrankInputError(
        "trueScores",
        `must be an array with one score per triple (${ctx.rows}), got ${describe(ts)}`,
      );
    }
    const kept = new Float64Array(ctx.kept);
    for (let i = 0, k = 0; i < ctx.rows; i++) {
      const v = ts[i];
      if (typeof v !== "number" || v !== v) {
        throw new KgrankInputError(
          "trueScores",
          `trueScores[${i}] is ${describe(v)}: the true triple needs a (non-NaN) score`,
        );
      }
      if (!ctx.keep || ctx.keep[i]) kept[k++] = v;
    }
    this.#trueScores = kept;
    const n = ctx.keptEntities ? ctx.keptEntities.length : ctx.numEntities;
    const args = { trueScores: kept, trueIndices: ctx.truth, numColumns: n, threads: ctx.threads };
    this.#counter =
      ctx.kept === 0
        ? null
        : ctx.index
          ? new FilteredRankCounter(args, { index: ctx.index, anchor: ctx.anchor, relation: ctx.relation })
          : new RankCounter(args);
  }

  /** Entity columns covered by the slices added so far. */
  get entitiesSeen(): number {
    return this.#covered;
  }

  private prepare(slice: EntitySlice, async = false) {
    if (this.#done)
      throw new KgrankStateError("ChunkedBatch: finish() or abort() was already called; start a new chunked batch");
    const {
      options: sliceFields,
      asyncArgs: { signal, onProgress },
    } = callOptions("slice", slice, SLICE_KEYS, async);
    const scores = sliceFields.scores;
    const ctx = this.#ctx;
    if (!(scores instanceof Float32Array) && !(scores instanceof Float64Array)) {
      throw new KgrankInputError(
        "scores",
        `must be a Float32Array or Float64Array (rows x slice width), got ${describe(scores)}`,
      );
    }
    if (scores.length === 0 || scores.length % ctx.rows !== 0) {
      throw new KgrankInputError(
        "scores",
        `has ${scores.length} elements: a slice holds all ${ctx.rows} rows of the batch for at least one entity`,
      );
    }
    const width = scores.length / ctx.rows;
    const start = integer("entityStart", sliceFields.entityStart, 0);
    const end = start + width;
    if (end > ctx.numEntities) {
      throw new KgrankInputError(
        "entityStart",
        `slice entities [${start}, ${end}) run past numEntities ${ctx.numEntities}`,
      );
    }
    if (ctx.partial && (start < ctx.partial[0] || end > ctx.partial[1])) {
      throw new KgrankInputError(
        "entityStart",
        `slice entities [${start}, ${end}) leave this entity shard's entities [${ctx.partial[0]}, ${ctx.partial[1]}): ` +
          `give each entity shard's evaluator the slices of its own entities`,
      );
    }
    for (const [a, b] of this.#ranges) {
      if (start < b && a < end)
        throw new KgrankInputError(
          "entityStart",
          `slice entities [${start}, ${end}) overlap [${a}, ${b}) added before`,
        );
    }
    // The kept rows and, under entity restriction, the kept entities of the slice (contiguous in compact ids).
    let cStart = start;
    let cEnd = end;
    let chunk: FloatArray = scores;
    if (ctx.keptEntities || ctx.kept < ctx.rows) {
      const cols: number[] = [];
      if (ctx.keptEntities) {
        cStart = lowerBound(ctx.keptEntities, start);
        cEnd = lowerBound(ctx.keptEntities, end);
        for (let c = cStart; c < cEnd; c++) cols.push(ctx.keptEntities[c]! - start);
      } else {
        for (let j = 0; j < width; j++) cols.push(j);
      }
      const w = cols.length;
      chunk = scores instanceof Float32Array ? new Float32Array(ctx.kept * w) : new Float64Array(ctx.kept * w);
      for (let i = 0, k = 0; i < ctx.rows; i++) {
        if (ctx.keep && !ctx.keep[i]) continue;
        for (let j = 0; j < w; j++) chunk[k * w + j] = scores[i * width + cols[j]!]!;
        k++;
      }
    }
    return { chunk, start, end, cStart, cEnd, threads: threadCount(sliceFields.threads), signal, onProgress };
  }

  /** Counts a slice on the calling thread. */
  addSync(slice: EntitySlice): void {
    const p = this.prepare(slice);
    this.#ranges.push([p.start, p.end]);
    this.#covered += p.end - p.start;
    if (!this.#counter || p.cEnd === p.cStart) return;
    this.#counter.addSync({ scores: p.chunk, columnStart: p.cStart, threads: p.threads });
  }

  /**
   * Counts a slice off the JavaScript thread. Slices may be added concurrently. `signal` stops it and `onProgress`
   * reports rows counted ({@link AsyncOptions}); an aborted slice is not counted and may be added again.
   */
  async add(slice: EntitySlice & AsyncOptions): Promise<void> {
    const p = this.prepare(slice, true);
    this.#ranges.push([p.start, p.end]);
    this.#covered += p.end - p.start;
    if (!this.#counter || p.cEnd === p.cStart) {
      p.onProgress?.({ done: this.#ctx.kept, total: this.#ctx.kept }); // nothing to count in this slice
      return;
    }
    this.#pending++;
    try {
      await this.#counter.add({
        scores: p.chunk,
        columnStart: p.cStart,
        threads: p.threads,
        signal: p.signal,
        onProgress: p.onProgress,
      });
    } catch (e) {
      // Not counted (KgrankDetachedError: the slice was transferred mid-call; the signal's reason: aborted): its
      // entities are not covered, so finish() cannot succeed without them, and the slice may be added again.
      const i = this.#ranges.findIndex(([a, b]) => a === p.start && b === p.end);
      if (i >= 0) this.#ranges.splice(i, 1);
      this.#covered -= p.end - p.start;
      throw e;
    } finally {
      this.#pending--;
    }
  }

  /**
   * Gives the batch up: nothing of it is recorded, and the evaluator no longer waits for it (finalize() and
   * serialize() refuse to run while a chunked batch is open). Slices still being counted are discarded when they
   * settle. Calling it after finish() or abort() does nothing.
   */
  abort(): void {
    if (this.#done) return;
    this.#done = true;
    this.#ctx.release();
  }

  /** Records the batch's ranks in the evaluator; every entity must have been covered by a slice. */
  finish(): void {
    if (this.#done) throw new KgrankStateError("ChunkedBatch.finish(): finish() or abort() was already called");
    if (this.#pending > 0)
      throw new KgrankStateError(
        `ChunkedBatch.finish(): ${this.#pending} add() call(s) are still running; await them first`,
      );
    const partial = this.#ctx.partial;
    const due = partial ? partial[1] - partial[0] : this.#ctx.numEntities;
    if (this.#covered !== due) {
      throw new KgrankStateError(
        `ChunkedBatch.finish(): slices covered ${this.#covered} of ${due} entities` +
          `${partial ? ` of this entity shard [${partial[0]}, ${partial[1]})` : ""}; add the missing ones`,
      );
    }
    this.#done = true;
    this.#ctx.release();
    if (!this.#counter) return;
    if (!partial) {
      this.#ctx.record(this.#counter.ranks());
      return;
    }
    const c = this.#counter.partialCounts();
    this.#ctx.recordPartial({
      optimistic: c.greater,
      realistic: c.equal,
      pessimistic: c.nan,
      numCandidates: c.removed,
      weight: this.#trueScores,
    });
  }
}

/**
 * A RankEvaluator's chunked(batch): the batch checked and its tasks selected as a score batch's (restriction,
 * filter keys); `record` receives its task columns when it finishes, `release` is called when it finishes or aborts.
 */
export function openChunkedBatch(
  batch: ChunkedBatchOptions,
  context: BatchContext,
  record: (side: EvaluationSide, columns: TaskColumns, skipped: number) => void,
  release: () => void,
): ChunkedBatch {
  const o = options("batch", batch, CHUNKED_KEYS);
  const side = sideArg(o.side, context.sides);
  const triples = tripleArray("triples", o.triples, context.numEntities, context.numRelations);
  if (triples.length === 0) throw new KgrankInputError("triples", "is empty: pass at least one triple");
  const { selection } = context;
  const keys = selection.keys(side, triples, context.filter?.[side] ?? null, true);
  return new ChunkedBatch(
    {
      rows: keys.rows,
      kept: keys.kept,
      keep: keys.keep,
      numEntities: context.numEntities,
      keptEntities: selection.keptEntities,
      anchor: keys.anchor,
      relation: keys.relation,
      truth: keys.truth,
      index: keys.index,
      threads: threadCount(o.threads) ?? context.threads,
      partial: context.entityRange,
      recordPartial: (columns) =>
        record(
          side,
          { ...columns, relation: keys.relation, anchor: keys.origAnchor, truth: keys.origTruth },
          keys.rows - keys.kept,
        ),
      record: (ranks) =>
        record(
          side,
          {
            ...ranks,
            relation: keys.relation,
            anchor: keys.origAnchor,
            truth: keys.origTruth,
            weight: new Float64Array(keys.kept).fill(NaN),
          },
          keys.rows - keys.kept,
        ),
      release,
    },
    o.trueScores as ArrayLike<number>,
  );
}
