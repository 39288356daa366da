/**
 * Ranks from score matrices. The O(rows x columns) work is the backend's counting kernel; turning counts into
 * ranks is O(rows) and shared by both backends.
 *
 * Semantics (identical to PyKEEN's and OGB's): for the true candidate's score t,
 *   optimistic  = 1 + #{candidates scoring > t}
 *   pessimistic = #{candidates scoring >= t}, the true candidate counted once
 *   realistic   = (optimistic + pessimistic) / 2
 * NaN scores are not candidates. numCandidates = non-NaN candidates, the true one included.
 */
import { kernels } from "../backend/backend";
import { KgrankInputError, nanTrueScore, watchDetach } from "../checks/errors";
import { thresholdsFor } from "./float32";
import type { CountBuffers, FloatArray } from "../contract/kernels";
import { type AsyncArgs, type AsyncOptions, callOptions, withCallControl } from "../backend/call-control";
import {
  describe,
  floatMatrix,
  integer,
  isArrayLike,
  optionKeys,
  rowCount,
  threadCount,
  type Unchecked,
} from "../checks/validate";

/** Ranks of the true candidates, one per row; all exact (realistic ranks are multiples of 0.5). */
export interface Ranks {
  optimistic: Float64Array;
  pessimistic: Float64Array;
  realistic: Float64Array;
  /** Candidates per row after removing NaN scores, the true candidate included. */
  numCandidates: Float64Array;
}

export interface ComputeRanksOptions {
  /** Row-major scores (b x numColumns). Larger is better. NaN marks "not a candidate". */
  scores: Float32Array | Float64Array;
  /** Number of candidate columns per row. */
  numColumns: number;
  /** Column of the true candidate in each row (the true candidate is one of the columns). */
  trueIndices?: ArrayLike<number>;
  /** Score of the true candidate in each row, when it is not among the columns (sampled or chunked scoring). */
  trueScores?: ArrayLike<number>;
  /** Threads for the native kernel (default: backendInfo().threads). */
  threads?: number;
}

export interface ComputeSampledRanksOptions {
  /** Score of each positive (true) triple, length n. */
  positiveScores: ArrayLike<number>;
  /** Scores of K negatives per positive, row-major n x K. NaN negatives are not candidates. */
  negativeScores: Float32Array | Float64Array;
  threads?: number;
}

/** True-candidate scores gathered (or taken) per row, in the element type of the scores. */
interface RankInput {
  scores: FloatArray;
  numColumns: number;
  rows: number;
  thresholds: FloatArray;
  /** Rows whose float64 true score no float32 equals: their equal count is 0 by definition. */
  inexactRows: number[];
  /** True when the true candidate is one of the columns (it is then counted in `equal`). */
  trueInColumns: boolean;
  /** Column of the true candidate per row; the kernel then gathers `thresholds` itself. */
  trueIndex?: Int32Array;
  threads: number | undefined;
}

/** An array-like of integers in [0, bound), e.g. true column indices. */
export function indexArray(name: string, value: unknown, length: number, bound: number): ArrayLike<number> {
  if (!isArrayLike(value)) {
    throw new KgrankInputError(name, `must be an Int32Array, Uint32Array or array of integers, got ${describe(value)}`);
  }
  if (value instanceof BigInt64Array || value instanceof BigUint64Array) {
    throw new KgrankInputError(name, "must hold numbers, not BigInts: convert with Int32Array.from(arr, Number)");
  }
  const arr = value as ArrayLike<unknown>;
  if (arr.length !== length)
    throw new KgrankInputError(name, `must have ${length} elements (one per row), got ${arr.length}`);
  for (let i = 0; i < length; i++) {
    const v = arr[i];
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v >= bound) {
      throw new KgrankInputError(name, `${name}[${i}] = ${describe(v)} is not an integer in [0, ${bound})`);
    }
  }
  return arr as ArrayLike<number>;
}

/** True scores given explicitly: numbers, no NaN (a NaN true score has no rank). */
function trueScoreArray(name: string, value: unknown, length: number): ArrayLike<number> {
  if (value instanceof Float32Array || value instanceof Float64Array) {
    if (value.length !== length)
      throw new KgrankInputError(name, `must have ${length} elements (one per row), got ${value.length}`);
    for (let i = 0; i < length; i++) {
      if (value[i] !== value[i]) throw nanTrueScore(`${name}[${i}]`, name);
    }
    return value;
  }
  if (!isArrayLike(value) || value instanceof BigInt64Array || value instanceof BigUint64Array) {
    throw new KgrankInputError(
      name,
      `must be a Float32Array, Float64Array or array of numbers, got ${describe(value)}`,
    );
  }
  const arr = value as ArrayLike<unknown>;
  if (arr.length !== length)
    throw new KgrankInputError(name, `must have ${length} elements (one per row), got ${arr.length}`);
  for (let i = 0; i < length; i++) {
    const v = arr[i];
    if (typeof v !== "number") throw new KgrankInputError(name, `${name}[${i}] is ${describe(v)}, not a number`);
    if (v !== v) throw nanTrueScore(`${name}[${i}]`, name);
  }
  return arr as ArrayLike<number>;
}

/** A count input whose true candidates are given by score (not among the columns). */
function byScoreInput(
  scores: FloatArray,
  numColumns: number,
  trueScores: ArrayLike<number>,
  threads: number | undefined,
): RankInput {
  const { thresholds, inexactRows } = thresholdsFor(scores, trueScores);
  return { scores, numColumns, rows: trueScores.length, thresholds, inexactRows, trueInColumns: false, threads };
}

const DENSE_KEYS = optionKeys<ComputeRanksOptions>({
  scores: 1,
  numColumns: 1,
  trueIndices: 1,
  trueScores: 1,
  threads: 1,
});
const SAMPLED_KEYS = optionKeys<ComputeSampledRanksOptions>({ positiveScores: 1, negativeScores: 1, threads: 1 });

/** The checked options of computeRanks(Sync): the count input, and the async form's signal and onProgress. */
function prepareDense(args: unknown, isAsync = false): [RankInput, AsyncArgs] {
  const { options, asyncArgs } = callOptions("computeRanks options", args, DENSE_KEYS, isAsync);
  return [denseInput(options), asyncArgs];
}

function denseInput(options: Unchecked<ComputeRanksOptions>): RankInput {
  const scores = floatMatrix("scores", options.scores);
  const numColumns = integer("numColumns", options.numColumns, 1);
  const rows = rowCount("scores", scores, numColumns);
  const threads = threadCount(options.threads);
  const hasIdx = options.trueIndices !== undefined;
  const hasScores = options.trueScores !== undefined;
  if (hasIdx === hasScores) {
    throw new KgrankInputError(
      hasIdx ? "trueScores" : "trueIndices",
      hasIdx
        ? "give either trueIndices (the true candidate is a column) or trueScores (it is not), not both"
        : "is required: give trueIndices (column of the true candidate per row) or trueScores (its score per row)",
    );
  }
  if (hasIdx) {
    const idx = indexArray("trueIndices", options.trueIndices, rows, numColumns);
    // The kernel reads each row's true score where it streams the row (no pass over the matrix here).
    const trueIndex = idx instanceof Int32Array ? idx : Int32Array.from(idx);
    const thresholds = scores instanceof Float32Array ? new Float32Array(rows) : new Float64Array(rows);
    return { scores, numColumns, rows, thresholds, inexactRows: [], trueInColumns: true, trueIndex, threads };
  }
  return byScoreInput(scores, numColumns, trueScoreArray("trueScores", options.trueScores, rows), threads);
}

/** The checked options of computeSampledRanks(Sync), as prepareDense. */
function prepareSampled(args: unknown, isAsync = false): [RankInput, AsyncArgs] {
  const { options, asyncArgs } = callOptions("computeSampledRanks options", args, SAMPLED_KEYS, isAsync);
  return [sampledInput(options), asyncArgs];
}

function sampledInput(options: Unchecked<ComputeSampledRanksOptions>): RankInput {
  const negativeScores = options.negativeScores;
  if (!(negativeScores instanceof Float32Array) && !(negativeScores instanceof Float64Array)) {
    throw new KgrankInputError(
      "negativeScores",
      `must be a Float32Array or Float64Array (row-major n x K), got ${describe(negativeScores)}`,
    );
  }
  const pos = options.positiveScores as ArrayLike<unknown> | undefined;
  if (!isArrayLike(pos)) {
    throw new KgrankInputError(
      "positiveScores",
      `must be a Float32Array, Float64Array or array of numbers, got ${describe(pos)}`,
    );
  }
  const n = (pos as ArrayLike<unknown>).length;
  if (n === 0) throw new KgrankInputError("positiveScores", "is empty: pass at least one positive score");
  if (negativeScores.length === 0) {
    throw new KgrankInputError("negativeScores", "is empty (K = 0): pass at least one negative score per positive");
  }
  if (negativeScores.length % n !== 0) {
    throw new KgrankInputError(
      "negativeScores",
      `has ${negativeScores.length} elements, not a multiple of positiveScores.length ${n}: it must be n x K, row-major`,
    );
  }
  const positives = trueScoreArray("positiveScores", pos, n);
  return byScoreInput(negativeScores, negativeScores.length / n, positives, threadCount(options.threads));
}

function newCounts(rows: number): CountBuffers {
  return { greater: new Float64Array(rows), equal: new Float64Array(rows), nan: new Float64Array(rows) };
}

/**
 * Ranks from accumulated counts over `columns` candidate columns. When the true candidate is one of the columns
 * it is already in `equal` and in the non-NaN count; otherwise it is added once. Consumes `counts`: its arrays
 * are reused for the ranks.
 */
export function ranksFromCounts(
  counts: CountBuffers,
  columns: number,
  trueInColumns: boolean,
  realistic: Float64Array = new Float64Array(counts.greater.length),
): Ranks {
  // The count buffers are the callers' own scratch: they become the rank columns in place (fresh large arrays cost
  // page faults that outweigh this loop), so only the realistic ranks are allocated (unless the caller gives room).
  const rows = counts.greater.length;
  const extra = trueInColumns ? 0 : 1;
  const { greater, equal, nan } = counts;
  for (let i = 0; i < rows; i++) {
    const g = greater[i]!;
    const opt = 1 + g;
    const pess = g + equal[i]! + extra;
    greater[i] = opt;
    equal[i] = pess;
    realistic[i] = 0.5 * (opt + pess);
    nan[i] = columns - nan[i]! + extra;
  }
  return { optimistic: greater, pessimistic: equal, realistic, numCandidates: nan };
}

function finish(input: RankInput, counts: CountBuffers): Ranks {
  if (input.trueIndex) {
    // Gathered by the kernel: a NaN true score means the true candidate is not a candidate.
    const t = input.thresholds;
    for (let i = 0; i < input.rows; i++) {
      if (t[i] !== t[i]) {
        throw nanTrueScore(`row ${i} (column ${input.trueIndex[i]})`);
      }
    }
  }
  for (const r of input.inexactRows) counts.equal[r] = 0;
  return ranksFromCounts(counts, input.numColumns, input.trueInColumns);
}

function runSync(input: RankInput): Ranks {
  const counts = newCounts(input.rows);
  const k = kernels();
  if (input.trueIndex) {
    k.countScoresByIndex(input.scores, input.numColumns, input.trueIndex, input.thresholds, counts, input.threads);
  } else {
    k.countScores(input.scores, input.numColumns, input.thresholds, counts, input.threads);
  }
  return finish(input, counts);
}

async function runAsync(input: RankInput, asyncArgs: AsyncArgs): Promise<Ranks> {
  return withCallControl(asyncArgs, input.rows, async (control) => {
    const counts = newCounts(input.rows);
    const k = kernels();
    const watch = watchDetach({ scores: input.scores, trueIndices: input.trueIndex, thresholds: input.thresholds });
    if (input.trueIndex) {
      await k.countScoresByIndexAsync(
        input.scores,
        input.numColumns,
        input.trueIndex,
        input.thresholds,
        counts,
        input.threads,
        control,
      );
    } else {
      await k.countScoresAsync(input.scores, input.numColumns, input.thresholds, counts, input.threads, control);
    }
    watch.check();
    const ranks = finish(input, counts);
    control?.finish();
    return ranks;
  });
}

/** Ranks of the true candidates from a dense score matrix, on the calling thread (small inputs). */
export function computeRanksSync(args: ComputeRanksOptions): Ranks {
  return runSync(prepareDense(args)[0]);
}

/**
 * Ranks of the true candidates from a dense score matrix, off the JavaScript thread. `signal` stops it (rejecting
 * with the signal's reason); `onProgress` reports rows ranked ({@link AsyncOptions}).
 */
export async function computeRanks(args: ComputeRanksOptions & AsyncOptions): Promise<Ranks> {
  return runAsync(...prepareDense(args, true));
}

/**
 * Ranks of positives among K sampled negatives each (OGB's link-prediction protocol): numCandidates is K + 1 minus
 * the NaN negatives; realistic ranks equal OGB's 0.5 * (#neg > pos + #neg >= pos) + 1.
 */
export function computeSampledRanksSync(args: ComputeSampledRanksOptions): Ranks {
  return runSync(prepareSampled(args)[0]);
}

/** As computeSampledRanksSync, off the JavaScript thread; `signal` and `onProgress` as computeRanks. */
export async function computeSampledRanks(args: ComputeSampledRanksOptions & AsyncOptions): Promise<Ranks> {
  return runAsync(...prepareSampled(args, true));
}
