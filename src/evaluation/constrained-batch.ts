/**
 * A score batch ranked against typed candidates (RankEvaluatorOptions.candidates): the batch is checked as every
 * score batch is, then one kernel call per batch (FilterIndexHandle.rankTriplesConstrained, native or its TypeScript
 * twin) counts each row over its relation's allowed set, takes the other known answers out where the set allowed them
 * (filtered), and returns the ranks and candidate counts; no per-row JavaScript.
 */
import { kernels } from "../backend/backend";
import { KgrankInputError } from "../checks/errors";
import { type FilterIndexHandle, StatusCode } from "../contract/kernels";
import type { CandidateSets } from "../ranking/candidate-sets";
import { threadCount, type Unchecked } from "../checks/validate";
import { batchTasks, checkScoreBatch, rankColumns } from "./score-batch";
import { type BatchContext, nanTrueTask, notInFilter } from "./selection";
import type { TaskColumns } from "./task-buffer";
import type { EvaluationSide, ScoreBatch } from "./types";

/** What an evaluator with candidates ranks against: the sets, and per side the filter index (empty when raw). */
export interface CandidateConstraint {
  sets: CandidateSets;
  index: Partial<Record<EvaluationSide, FilterIndexHandle>>;
  filtered: boolean;
}

/** The constraint of an evaluator: its own filter indexes, or empty ones for the unfiltered setting. */
export function candidateConstraint(sets: CandidateSets, ctx: BatchContext): CandidateConstraint {
  const index: Partial<Record<EvaluationSide, FilterIndexHandle>> = {};
  for (const side of ctx.sides) {
    index[side] = ctx.filter?.[side] ?? kernels().buildFilterIndex([], ctx.numEntities, sets.numRelations, side);
  }
  return { sets, index, filtered: ctx.filter !== null };
}

/**
 * Refuses a batch with a row whose relation allows nothing on `side` (its task would rank the true answer alone):
 * score batches and a model's embeddings alike (./model-batch.ts).
 */
export function checkSetsAllowSome(
  sets: CandidateSets,
  side: EvaluationSide,
  rows: number,
  relationOf: (row: number) => number,
): void {
  for (let r = 0; r < rows; r++) {
    const relation = relationOf(r);
    if (sets.size(side, relation) === 0) {
      throw new KgrankInputError(
        "candidates",
        `relation ${relation} (row ${r}) allows no ${side} in its candidate set (${sets.source}): each of its ` +
          `${side} tasks would rank its true answer alone; give the relation ${side}s (in training triples, or ` +
          `${side === "head" ? "head or domain" : "tail or range"} lines in a candidate file), or evaluate it without candidates`,
      );
    }
  }
}

export function rankConstrainedBatch(
  batch: Unchecked<ScoreBatch>,
  ctx: BatchContext,
  c: CandidateConstraint,
): { side: EvaluationSide; columns: TaskColumns } {
  const { side, scores, triples, rows } = checkScoreBatch(batch, ctx, c.sets.numRelations);
  checkSetsAllowSome(c.sets, side, rows, (r) => triples[3 * r + 1]!);
  const threads = batch.threads === undefined ? ctx.threads : threadCount(batch.threads);
  const arrays = c.sets.arrays(side);
  const { room, problem } = ctx.arena.rankInto(rows, scores instanceof Float32Array, ({ out, keys }, th) =>
    c.index[side]!.rankTriplesConstrained(scores, triples, c.filtered, arrays, keys, th, out, threads),
  );
  if (problem) {
    const tasks = batchTasks(side, room.keys, rows);
    if (problem.status === StatusCode.NanTrueScore) throw nanTrueTask(tasks, problem.index);
    if (problem.status === StatusCode.NotInIndex) throw notInFilter(tasks, problem.index);
    // The ids were checked above and the sets are the evaluator's own: memory another thread writes.
    throw new KgrankInputError(
      problem.status === StatusCode.InvalidInput ? "candidates" : "triples",
      `${problem.message ?? "an id was out of range during the call"}, after the inputs had been checked: pass ` +
        "arrays that stay unchanged during the call",
    );
  }
  return { side, columns: rankColumns(room.out, room.keys, rows) };
}
