/**
 * Filtered candidate counts of a split without scores: for the tail task of (h, r, t) every entity is a candidate
 * except the other known tails t' of (h, r, ·) in the filter triples; the same for heads. These are the N_i the
 * expectations of `kgrank adjust` and `kgrank expectations` are computed over (PyKEEN's filtered setting, with the
 * evaluated split always part of the filter). The known answers come from the evaluator's own filter index (one
 * per side, native or its TypeScript twin), not from a map of their own; one answerCounts call per side counts them
 * for every row.
 */
import { kernels } from "../backend/backend";
import { KgrankInputError } from "../checks/errors";
import { tripleArray } from "../checks/validate";

export function filteredCandidateCounts(
  evaluated: Int32Array,
  filter: Int32Array[],
  numEntities: number,
  numRelations: number,
): { head: Float64Array; tail: Float64Array } {
  tripleArray("evaluated", evaluated, numEntities, numRelations);
  filter.forEach((t, i) => tripleArray(`filter[${i}]`, t, numEntities, numRelations));
  const n = evaluated.length / 3;
  const counts = { head: new Float64Array(n), tail: new Float64Array(n) };
  for (const side of ["head", "tail"] as const) {
    const index = kernels().buildFilterIndex([...filter, evaluated], numEntities, numRelations, side);
    const out = counts[side];
    const problem = index.answerCounts(evaluated, out);
    if (problem) {
      // The ids passed the check above, so the array changed since (memory another thread writes).
      throw new KgrankInputError(
        "evaluated",
        `element ${problem.index} was out of range during the call, after the ids had been checked: the array ` +
          `changed meanwhile (memory another thread writes?); pass an array that stays unchanged, e.g. a copy`,
      );
    }
    // The true answer is among the known ones (the evaluated split filters), and stays a candidate.
    for (let i = 0; i < n; i++) out[i] = numEntities - (out[i]! - 1);
  }
  return counts;
}
