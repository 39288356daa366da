/**
 * --constrain-candidates: the typed candidates (seen in train, or a candidate file), checked against the evaluated
 * relations, and the second evaluator that ranks the same rows against them.
 */
import * as path from "node:path";

import { KgrankInputError } from "../../checks/errors";
import { RankEvaluator } from "../../evaluation/evaluator";
import { readCandidateFile } from "../../io/candidate-file";
import type { Dataset } from "../../io/datasets";
import { CandidateSets } from "../../ranking/candidate-sets";
import type { TaskSide } from "../datasets";
import { evaluatorMetrics } from "../render";
import type { EvaluateOptions } from "./options";

/**
 * Every evaluated relation's set on every ranked side, before anything is ranked: an empty one is an error naming the
 * relation's label and the fix (the evaluator would find it only at the batch that holds it).
 */
function checkCandidateSets(sets: CandidateSets, evaluated: Int32Array, sides: TaskSide[], ds: Dataset): void {
  for (let i = 0; i < evaluated.length; i += 3) {
    const r = evaluated[i + 1]!;
    for (const side of sides) {
      if (sets.size(side, r) > 0) continue;
      const label = JSON.stringify(ds.relationLabels[r] ?? String(r));
      throw new KgrankInputError(
        "--constrain-candidates",
        `relation ${label} allows no ${side} in ${sets.source === "train" ? "train (it has no training triple)" : sets.source}, ` +
          `and the split has its ${side} tasks: ${sets.source === "train" ? "give a candidate FILE" : `give it ${side === "head" ? "head or domain" : "tail or range"} lines`}, or evaluate without --constrain-candidates`,
      );
    }
  }
}

/** The typed candidates of --constrain-candidates: "train" (seen in the training split), or a candidate file. */
function candidateSetsFlag(value: string, ds: Dataset): CandidateSets {
  if (value === "train")
    return CandidateSets.fromTriples(ds.splits.train, { numEntities: ds.numEntities, numRelations: ds.numRelations });
  return readCandidateFile(value, {
    entityLabels: ds.entityLabels,
    relationLabels: ds.relationLabels,
    argument: "--constrain-candidates",
  });
}

/**
 * --constrain-candidates: a second evaluator that ranks the same rows against the typed candidates, with the main
 * evaluator's filter, sides, cut-offs and metrics; null without the flag. One for every score source (files, the
 * frequency baseline, a model's embeddings), so that the two protocols are configured alike.
 */
export function typedCandidatesEvaluator(
  opts: EvaluateOptions,
  ds: Dataset,
  filterTriples: Int32Array[] | undefined,
  sides: TaskSide[],
  rows: Int32Array,
): RankEvaluator | null {
  if (!opts.constrainCandidates) return null;
  const sets = candidateSetsFlag(opts.constrainCandidates, ds);
  checkCandidateSets(sets, rows, sides, ds);
  return new RankEvaluator({
    numEntities: ds.numEntities,
    numRelations: ds.numRelations,
    filterTriples,
    sides: sides.length === 2 ? "both" : sides[0],
    ks: opts.ks,
    metrics: evaluatorMetrics(opts.metrics),
    candidates: sets,
  });
}

/** The path of the constrained state beside --save-state FILE: FILE with ".constrained" before its extension. */
export function constrainedStatePath(file: string): string {
  const ext = path.extname(file);
  return `${file.slice(0, file.length - ext.length)}.constrained${ext}`;
}
