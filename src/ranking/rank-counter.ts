/**
 * Chunked rank computation: a model that scores candidates in column slices (LibKGE's chunk_size, PyKEEN's
 * slicing) feeds each slice of the same rows here; greater / equal / non-NaN counts accumulate per row and the
 * ranks come out at the end. Memory: O(rows), never rows x all candidates. FilteredRankCounter (the evaluator's
 * chunked batches) counts each chunk with the filter index's column-range count instead, so the filter's known
 * answers are taken out in the kernel.
 */
import { kernels } from "../backend/backend";
import { KgrankInputError, KgrankStateError, watchDetach } from "../checks/errors";
import { thresholdsFor } from "./float32";
import type {
  CountBuffers,
  FilteredCountBuffers,
  FilterIndexHandle,
  FloatArray,
  KernelControl,
} from "../contract/kernels";
import { type AsyncArgs, type AsyncOptions, callOptions, withCallControl } from "../backend/call-control";
import { describe, integer, isArrayLike, optionKeys, options, threadCount } from "../checks/validate";
import { indexArray, type Ranks, ranksFromCounts } from "./ranks";

export interface RankCounterOptions {
  /** Score of the true candidate of each row (defines the number of rows). No NaN. */
  trueScores: ArrayLike<number>;
  /**
   * Global column of the true candidate in each row, when the true candidate is among the scored columns (it is
   * then counted once, where its chunk arrives, and its score there must equal trueScores). Omit it when the
   * chunks hold only the other candidates.
   */
  trueIndices?: ArrayLike<number>;
  /** Total number of candidate columns; when given, ranks() checks that the chunks covered all of them. */
  numColumns?: number;
  /** Default threads for the native kernel. */
  threads?: number;
}

export interface RankChunk {
  /** Scores of every row for the chunk's columns: row-major numRows x width. */
  scores: Float32Array | Float64Array;
  /** Global index of the chunk's first column. */
  columnStart: number;
  threads?: number;
}

const CHUNK_KEYS = optionKeys<RankChunk>({ scores: 1, columnStart: 1, threads: 1 });

/** A checked chunk: its scores, first column and width, the thresholds in its element type. */
export interface PreparedChunk {
  scores: FloatArray;
  start: number;
  width: number;
  thresholds: FloatArray;
  inexactRows: number[];
  threads: number | undefined;
}

export class RankCounter {
  /** Number of rows (tasks). */
  readonly numRows: number;
  private readonly trueScores: Float64Array;
  protected readonly trueIndices: Int32Array | null;
  private readonly numColumns: number | null;
  private readonly threads: number | undefined;
  private readonly totals: CountBuffers;
  /** Known answers the filter took out of the chunks (FilteredRankCounter; counted in `totals.nan` too). */
  private readonly removed: Float64Array;
  private readonly seenTrue: Uint8Array | null;
  private readonly ranges: [number, number][] = [];
  private columns = 0;
  private pending = 0;
  private finished = false;
  /** The ranks, once ranks() turned the totals into them. */
  private result: Ranks | null = null;
  private thresholdCache = new Map<string, { thresholds: FloatArray; inexactRows: number[] }>();

  constructor(args: RankCounterOptions) {
    const o = options(
      "RankCounter options",
      args,
      optionKeys<RankCounterOptions>({ trueScores: 1, trueIndices: 1, numColumns: 1, threads: 1 }),
    );
    const ts = o.trueScores as ArrayLike<unknown> | undefined;
    if (!isArrayLike(ts) || ts instanceof BigInt64Array || ts instanceof BigUint64Array) {
      throw new KgrankInputError(
        "trueScores",
        `must be a Float32Array, Float64Array or array of numbers, got ${describe(ts)}`,
      );
    }
    const rows = (ts as ArrayLike<unknown>).length;
    if (rows === 0) throw new KgrankInputError("trueScores", "is empty: a RankCounter needs at least one row");
    this.trueScores = new Float64Array(rows);
    for (let i = 0; i < rows; i++) {
      const v = (ts as ArrayLike<unknown>)[i];
      if (typeof v !== "number")
        throw new KgrankInputError("trueScores", `trueScores[${i}] is ${describe(v)}, not a number`);
      if (v !== v)
        throw new KgrankInputError("trueScores", `trueScores[${i}] is NaN: the true candidate of row ${i} has no rank`);
      this.trueScores[i] = v;
    }
    this.numRows = rows;
    this.numColumns = o.numColumns === undefined ? null : integer("numColumns", o.numColumns, 1);
    if (o.trueIndices !== undefined) {
      const bound = this.numColumns ?? Number.MAX_SAFE_INTEGER;
      this.trueIndices = Int32Array.from(indexArray("trueIndices", o.trueIndices, rows, Math.min(bound, 2 ** 31 - 1)));
      this.seenTrue = new Uint8Array(rows);
    } else {
      this.trueIndices = null;
      this.seenTrue = null;
    }
    this.threads = threadCount(o.threads);
    this.totals = { greater: new Float64Array(rows), equal: new Float64Array(rows), nan: new Float64Array(rows) };
    this.removed = new Float64Array(rows);
  }

  /** Counts one chunk on the calling thread. */
  addSync(chunk: RankChunk): void {
    const prepared = this.prepare(chunk);
    const counts = this.newCounts();
    this.countChunk(prepared, counts);
    this.accumulate(prepared, counts);
  }

  /**
   * Counts one chunk off the JavaScript thread. Chunks may be added concurrently. `signal` stops it and
   * `onProgress` reports rows counted ({@link AsyncOptions}); a chunk that was aborted (or failed) is not
   * counted and its columns may be added again.
   */
  async add(chunk: RankChunk & AsyncOptions): Promise<void> {
    const prepared = this.prepare(chunk, true);
    const counts = this.newCounts();
    const watch = watchDetach({ scores: prepared.scores });
    this.pending++;
    try {
      await withCallControl(prepared.call, this.numRows, async (call) => {
        await this.countChunkAsync(prepared, counts, call);
        watch.check();
        call?.finish();
      });
    } catch (e) {
      // Nothing is counted from a chunk given away mid-call, aborted or failed; its columns may be added again.
      const i = this.ranges.findIndex(([x, y]) => x === prepared.start && y === prepared.start + prepared.width);
      if (i >= 0) this.ranges.splice(i, 1);
      throw e;
    } finally {
      this.pending--;
    }
    this.accumulate(prepared, counts);
  }

  /** Number of candidate columns counted so far. */
  get columnsSeen(): number {
    return this.columns;
  }

  /**
   * Finishes counting and returns the ranks. Further chunks are refused; a later call returns the same ranks again
   * (as new arrays: the counts are turned into ranks in place once, so they are never converted twice).
   */
  ranks(): Ranks {
    if (this.result) return copyRanks(this.result);
    if (this.pending > 0) {
      throw new KgrankStateError(
        `RankCounter.ranks(): ${this.pending} add() call(s) are still running; await them first`,
      );
    }
    if (this.columns === 0) throw new KgrankStateError("RankCounter.ranks(): no chunk was added");
    if (this.numColumns !== null && this.columns !== this.numColumns) {
      throw new KgrankStateError(
        `RankCounter.ranks(): chunks covered ${this.columns} of numColumns ${this.numColumns} columns; add the missing ones`,
      );
    }
    if (this.seenTrue) {
      const missing = this.seenTrue.indexOf(0);
      if (missing >= 0) {
        throw new KgrankStateError(
          `RankCounter.ranks(): the true column ${this.trueIndices![missing]} of row ${missing} was in no chunk`,
        );
      }
    }
    this.finished = true;
    this.result = ranksFromCounts(this.totals, this.columns, this.trueIndices !== null);
    return this.result;
  }

  /**
   * The counts so far, not turned into ranks (an entity shard's partial counts: src/evaluation/entity-shards.ts):
   * per row the candidates scoring above the true score, equal to it (the true column among them when a chunk held
   * it), NaN (no candidate), and the known answers the filter took out. Further chunks are refused. @internal
   */
  partialCounts(): { greater: Float64Array; equal: Float64Array; nan: Float64Array; removed: Float64Array } {
    if (this.pending > 0) {
      throw new KgrankStateError(
        `RankCounter.partialCounts(): ${this.pending} add() call(s) are still running; await them first`,
      );
    }
    if (this.result) throw new KgrankStateError("RankCounter.partialCounts(): ranks() was already called");
    this.finished = true;
    const { greater, equal, nan } = this.totals;
    const removed = this.removed.slice();
    const ownNan = nan.slice();
    for (let i = 0; i < this.numRows; i++) ownNan[i] = ownNan[i]! - removed[i]!;
    return { greater: greater.slice(), equal: equal.slice(), nan: ownNan, removed };
  }

  /** Counts one chunk's columns into `counts` (greater / equal / NaN per row). @internal */
  protected countChunk(prepared: PreparedChunk, counts: CountBuffers): void {
    kernels().countScores(prepared.scores, prepared.width, prepared.thresholds, counts, prepared.threads);
  }

  /** countChunk off the JavaScript thread, under the call's control (signal / onProgress) if it has one. @internal */
  protected countChunkAsync(prepared: PreparedChunk, counts: CountBuffers, control?: KernelControl): Promise<void> {
    return kernels().countScoresAsync(
      prepared.scores,
      prepared.width,
      prepared.thresholds,
      counts,
      prepared.threads,
      control,
    );
  }

  private newCounts(): FilteredCountBuffers {
    const n = this.numRows;
    return {
      greater: new Float64Array(n),
      equal: new Float64Array(n),
      nan: new Float64Array(n),
      removed: new Float64Array(n),
    };
  }

  /** The chunk checked (with the async form's signal and onProgress: `call`). */
  private prepare(chunk: RankChunk, isAsync = false): PreparedChunk & { call: AsyncArgs } {
    if (this.finished) throw new KgrankStateError("RankCounter: ranks() was already called; create a new RankCounter");
    const { options: chunkFields, asyncArgs } = callOptions("chunk", chunk, CHUNK_KEYS, isAsync);
    const scores = chunkFields.scores;
    if (!(scores instanceof Float32Array) && !(scores instanceof Float64Array)) {
      throw new KgrankInputError(
        "scores",
        `must be a Float32Array or Float64Array (numRows x width), got ${describe(scores)}`,
      );
    }
    if (scores.length === 0 || scores.length % this.numRows !== 0) {
      throw new KgrankInputError(
        "scores",
        `has ${scores.length} elements: a chunk holds every one of the ${this.numRows} rows for at least one column`,
      );
    }
    const width = scores.length / this.numRows;
    const start = integer("columnStart", chunkFields.columnStart, 0);
    const end = start + width;
    if (this.numColumns !== null && end > this.numColumns) {
      throw new KgrankInputError(
        "columnStart",
        `chunk columns [${start}, ${end}) run past numColumns ${this.numColumns}`,
      );
    }
    for (const [a, b] of this.ranges) {
      if (start < b && a < end) {
        throw new KgrankInputError(
          "columnStart",
          `chunk columns [${start}, ${end}) overlap columns [${a}, ${b}) added before`,
        );
      }
    }
    const key = scores instanceof Float32Array ? "f32" : "f64";
    let th = this.thresholdCache.get(key);
    if (!th) {
      th = thresholdsFor(scores, this.trueScores);
      this.thresholdCache.set(key, th);
    }
    // The true candidate's own score, where this chunk holds it, must be the given true score.
    if (this.trueIndices) {
      for (let i = 0; i < this.numRows; i++) {
        const j = this.trueIndices[i]!;
        if (j >= start && j < end) {
          const s = scores[i * width + (j - start)]!;
          if (s !== this.trueScores[i]) {
            throw new KgrankInputError(
              "scores",
              `row ${i}: the score at its true column ${j} is ${s}, but trueScores[${i}] is ${this.trueScores[i]}; ` +
                `they must be the same score`,
            );
          }
        }
      }
    }
    this.ranges.push([start, end]);
    return {
      scores,
      start,
      width,
      thresholds: th.thresholds,
      inexactRows: th.inexactRows,
      threads: threadCount(chunkFields.threads) ?? this.threads,
      call: asyncArgs,
    };
  }

  private accumulate(prepared: PreparedChunk, counts: FilteredCountBuffers): void {
    for (const r of prepared.inexactRows) counts.equal[r] = 0;
    const { greater, equal, nan } = this.totals;
    for (let i = 0; i < this.numRows; i++) {
      greater[i]! += counts.greater[i]!;
      equal[i]! += counts.equal[i]!;
      nan[i]! += counts.nan[i]!;
      this.removed[i]! += counts.removed[i]!;
    }
    this.columns += prepared.width;
    if (this.seenTrue && this.trueIndices) {
      const end = prepared.start + prepared.width;
      for (let i = 0; i < this.numRows; i++) {
        const j = this.trueIndices[i]!;
        if (j >= prepared.start && j < end) this.seenTrue[i] = 1;
      }
    }
  }
}

/** The filtered tasks of a FilteredRankCounter's rows: keys in the index's ids (the true answers are trueIndices). */
export interface RankFilter {
  index: FilterIndexHandle;
  anchor: Int32Array;
  relation: Int32Array;
}

/**
 * A RankCounter whose rows are filtered tasks (the evaluator's chunked batches; the columns are the index's entity
 * ids). Each chunk is counted by the index's column-range count (FilterIndexHandle.countFilteredRange), which takes
 * every other known answer of the row's task inside the chunk out of its greater / equal counts in the kernel; the
 * candidates it removes are added to the chunk's non-candidate (NaN) count, so ranks() gives the filtered ranks and
 * candidate counts. Every row's own triple must be in the index (the evaluator checks it before the first chunk).
 */
export class FilteredRankCounter extends RankCounter {
  readonly #filter: RankFilter;

  constructor(args: RankCounterOptions & { trueIndices: ArrayLike<number>; numColumns: number }, filter: RankFilter) {
    super(args);
    this.#filter = filter;
  }

  protected override countChunk(prepared: PreparedChunk, counts: CountBuffers): void {
    const out = this.filteredCounts(counts);
    const f = this.#filter;
    f.index.countFilteredRange(
      prepared.scores,
      prepared.start,
      prepared.width,
      f.anchor,
      f.relation,
      this.trueIndices!,
      prepared.thresholds,
      out,
      prepared.threads,
    );
    this.fold(out);
  }

  protected override async countChunkAsync(
    prepared: PreparedChunk,
    counts: CountBuffers,
    control?: KernelControl,
  ): Promise<void> {
    const out = this.filteredCounts(counts);
    const f = this.#filter;
    await f.index.countFilteredRangeAsync(
      prepared.scores,
      prepared.start,
      prepared.width,
      f.anchor,
      f.relation,
      this.trueIndices!,
      prepared.thresholds,
      out,
      prepared.threads,
      control,
    );
    this.fold(out);
  }

  /** The chunk's buffers with their `removed` column (newCounts makes it; RankCounter leaves it 0). */
  private filteredCounts(counts: CountBuffers): FilteredCountBuffers {
    return counts as FilteredCountBuffers;
  }

  /** The removed known answers are no candidates: counted with the NaN scores. */
  private fold(out: FilteredCountBuffers): void {
    for (let i = 0; i < this.numRows; i++) {
      const removed = out.removed[i]!;
      if (removed < 0) {
        throw new KgrankInputError(
          "triples",
          `row ${i}: the evaluated triple is not in the filter index (include it in filterTriples)`,
        );
      }
      out.nan[i]! += removed;
    }
  }
}

function copyRanks(r: Ranks): Ranks {
  return {
    optimistic: r.optimistic.slice(),
    pessimistic: r.pessimistic.slice(),
    realistic: r.realistic.slice(),
    numCandidates: r.numCandidates.slice(),
  };
}
