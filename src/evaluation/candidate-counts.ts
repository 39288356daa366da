/**
 * Filtered candidate counts of a split without scores: for the tail task of (h, r, t) every entity is a candidate
 * except the other known tails t' of (h, r, ·) in the filter triples; the same for heads. These are the N_i the
 * expectations of `kgrank adjust` and `kgrank expectations` are computed over (PyKEEN's filtered setting, with the
 * evaluated split always part of the filter). The known answers come from the evaluator's own filter index (one
 * per side, native or its TypeScript twin), not from a map of their own.
 */
import { kernels } from "../backend/backend";

export function filteredCandidateCounts(
  evaluated: Int32Array,
  filter: Int32Array[],
  numEntities: number,
  numRelations: number,
): { head: Float64Array; tail: Float64Array } {
  const n = evaluated.length / 3;
  const counts = { head: new Float64Array(n), tail: new Float64Array(n) };
  for (const side of ["head", "tail"] as const) {
    const index = kernels().buildFilterIndex([...filter, evaluated], numEntities, numRelations, side);
    const out = counts[side];
    for (let i = 0; i < n; i++) {
      const anchor = evaluated[3 * i + (side === "tail" ? 0 : 2)]!;
      // The true answer is among the known ones (the evaluated split filters), and stays a candidate.
      out[i] = numEntities - (index.answers(anchor, evaluated[3 * i + 1]!).length - 1);
    }
  }
  return counts;
}
