/**
 * One batch of scores, from `add()` / `addSync()` to task columns: prepare (check, select the evaluated rows, gather
 * their scores), count (on the calling thread or off it), finish (NaN and filter checks, counts turned into ranks).
 * The sync and async twins share prepare and finish, as src/ranking/ranks.ts does.
 *
 * A filtered batch without restriction takes one kernel call instead (`rankTriples`, on both backends): id checks,
 * keys, the filtered count and the ranks with no per-row JavaScript. Its problems come back as codes and are raised
 * with the same messages as the general path's.
 */
import { kernels } from "../backend/backend";
import { KgrankInputError } from "../checks/errors";
import { type FilteredCountBuffers, type FloatArray, type KernelControl, StatusCode } from "../contract/kernels";
import { ranksFromCounts } from "../ranking/ranks";
import { floatMatrix, threadCount, tripleArray, type Unchecked } from "../checks/validate";
import { sideArg } from "./inputs";
import { type BatchContext, nanTrueTask, notInFilter, type TaskKeys } from "./selection";
import type { TaskColumns } from "./task-buffer";
import type { EvaluationSide, ScoreBatch } from "./types";

/** A checked batch: its kept tasks' keys and their gathered score rows. */
export interface PreparedBatch {
  keys: TaskKeys;
  scores: FloatArray;
  /** Candidate columns of `scores`. */
  n: number;
  threads: number | undefined;
}

/** The kernel's count columns and room for the rank columns they become: one allocation (six arrays per batch). */
interface Counted extends FilteredCountBuffers {
  realistic: Float64Array;
  weight: Float64Array;
  thresholds: FloatArray;
}

/**
 * A score batch's side, scores and triples checked (ids against numEntities and `numRelations`), with one row of
 * numEntities scores per triple; errors name the argument and the fix.
 */
export function checkScoreBatch(
  batch: Unchecked<ScoreBatch>,
  ctx: BatchContext,
  numRelations: number | null,
): { side: EvaluationSide; scores: FloatArray; triples: Int32Array; rows: number } {
  const side = sideArg(batch.side, ctx.sides);
  const scores = floatMatrix("scores", batch.scores);
  const triples = tripleArray("triples", batch.triples, ctx.numEntities, numRelations);
  const rows = triples.length / 3;
  if (rows === 0) throw new KgrankInputError("triples", "is empty: pass at least one triple");
  if (scores.length !== rows * ctx.numEntities) {
    throw new KgrankInputError(
      "scores",
      `has ${scores.length} elements; a batch of ${rows} triples needs ${rows} x numEntities ${ctx.numEntities} = ` +
        `${rows * ctx.numEntities} (row-major, one row per triple)`,
    );
  }
  return { side, scores, triples, rows };
}

/** Checks a score batch (its keys already checked) and selects its tasks. */
export function prepareScoreBatch(batch: Unchecked<ScoreBatch>, ctx: BatchContext): PreparedBatch {
  const { side, scores, triples } = checkScoreBatch(batch, ctx, ctx.numRelations);
  // The filtered count itself checks that each evaluated triple is in the filter (removed = -1 otherwise).
  const keys = ctx.selection.keys(side, triples, ctx.filter?.[side] ?? null, false);
  return {
    keys,
    scores: ctx.selection.gatherRows(scores, keys),
    n: ctx.selection.numCandidates,
    threads: threadCount(batch.threads) ?? ctx.threads,
  };
}

function newCounts(batch: PreparedBatch): Counted {
  const rows = batch.keys.kept;
  const b = new Float64Array(6 * rows);
  return {
    greater: b.subarray(0, rows),
    equal: b.subarray(rows, 2 * rows),
    nan: b.subarray(2 * rows, 3 * rows),
    removed: b.subarray(3 * rows, 4 * rows),
    realistic: b.subarray(4 * rows, 5 * rows),
    weight: b.subarray(5 * rows, 6 * rows),
    thresholds: batch.scores instanceof Float32Array ? new Float32Array(rows) : new Float64Array(rows),
  };
}

export function countSync(batch: PreparedBatch): Counted {
  const counts = newCounts(batch);
  const { anchor, relation, truth, index } = batch.keys;
  if (index) index.countFiltered(batch.scores, anchor, relation, truth, counts.thresholds, counts, batch.threads);
  else kernels().countScoresByIndex(batch.scores, batch.n, truth, counts.thresholds, counts, batch.threads);
  return counts;
}

/** The count off the JavaScript thread; `control` (src/contract/kernels.ts) stops it and takes its progress. */
export async function countAsync(batch: PreparedBatch, control?: KernelControl): Promise<Counted> {
  const counts = newCounts(batch);
  const { anchor, relation, truth, index } = batch.keys;
  if (index)
    await index.countFilteredAsync(
      batch.scores,
      anchor,
      relation,
      truth,
      counts.thresholds,
      counts,
      batch.threads,
      control,
    );
  else
    await kernels().countScoresByIndexAsync(
      batch.scores,
      batch.n,
      truth,
      counts.thresholds,
      counts,
      batch.threads,
      control,
    );
  return counts;
}

/** The batch's task columns: ranks from the counts, minus the known answers the filter removed, and the keys. */
export function finishBatch(batch: PreparedBatch, counts: Counted): TaskColumns {
  const { keys } = batch;
  for (let i = 0; i < keys.kept; i++) if (counts.thresholds[i] !== counts.thresholds[i]) throw nanTrueTask(keys, i);
  if (keys.index) {
    for (let i = 0; i < keys.kept; i++) if (counts.removed[i]! < 0) throw notInFilter(keys, i);
  }
  // The count columns become the rank columns in place (the true candidate is one of the columns); candidates then
  // lose the other known answers the filter removed.
  const ranks = ranksFromCounts(counts, batch.n, true, counts.realistic);
  for (let i = 0; i < keys.kept; i++) ranks.numCandidates[i] = ranks.numCandidates[i]! - counts.removed[i]!;
  counts.weight.fill(NaN);
  return { ...ranks, relation: keys.relation, anchor: keys.origAnchor, truth: keys.origTruth, weight: counts.weight };
}

/**
 * The one-call path for a filtered batch without restriction (Int32Array triples, one score row each); null when the
 * batch does not qualify or holds an id out of range, and the general path then handles it with its usual messages.
 */
export function rankFilteredBatch(
  batch: ScoreBatch,
  ctx: BatchContext,
): { side: EvaluationSide; columns: TaskColumns } | null {
  if (ctx.selection.restricted || batch === null || typeof batch !== "object") return null;
  const { triples, scores, side } = batch;
  if ((side !== "head" && side !== "tail") || !ctx.sides.includes(side)) return null;
  const index = ctx.filter?.[side];
  if (!index || !(triples instanceof Int32Array) || !(scores instanceof Float32Array || scores instanceof Float64Array))
    return null;
  const rows = triples.length / 3;
  if (rows === 0 || !Number.isInteger(rows) || scores.length !== rows * ctx.numEntities) return null;
  const threads = batch.threads === undefined ? ctx.threads : threadCount(batch.threads);
  const { room, problem } = ctx.arena.rankInto(rows, scores instanceof Float32Array, ({ out, keys }, th) =>
    index.rankTriples(scores, triples, keys, th, out, threads),
  );
  if (problem) {
    // An id out of range: the general path checks the triples and reports it.
    if (problem.status === StatusCode.IdOutOfRange) return null;
    const tasks = batchTasks(side, room.keys, rows);
    if (problem.status === StatusCode.NanTrueScore) throw nanTrueTask(tasks, problem.index);
    throw notInFilter(tasks, problem.index);
  }
  return { side, columns: rankColumns(room.out, room.keys, rows) };
}

/** A one-call batch's keys (relation | anchor | truth, `rows` each) as the tasks its problems are reported for. */
export function batchTasks(
  side: EvaluationSide,
  keys: Int32Array,
  rows: number,
): { side: EvaluationSide; relation: Int32Array; origAnchor: Int32Array; origTruth: Int32Array } {
  return {
    side,
    relation: keys.subarray(0, rows),
    origAnchor: keys.subarray(rows, 2 * rows),
    origTruth: keys.subarray(2 * rows, 3 * rows),
  };
}

/**
 * The task columns of a one-call batch: out = optimistic | pessimistic | realistic | numCandidates | weight |
 * scratch and keys = relation | anchor | truth, each `rows` long (rankTriples' and rankTriplesConstrained's layout).
 */
export function rankColumns(out: Float64Array, keys: Int32Array, rows: number): TaskColumns {
  const column = (k: number) => out.subarray(k * rows, (k + 1) * rows);
  return {
    optimistic: column(0),
    pessimistic: column(1),
    realistic: column(2),
    numCandidates: column(3),
    weight: column(4),
    relation: keys.subarray(0, rows),
    anchor: keys.subarray(rows, 2 * rows),
    truth: keys.subarray(2 * rows, 3 * rows),
  };
}
