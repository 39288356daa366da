/** kgrank's --ranks-out of a PyTorch-BigGraph run as the NumPy reference's rows (test/fixtures/pbg/reference.py). */
import { readFileSync } from "node:fs";

import { parseNpz } from "../../src/index";

/** side, head, relation, tail, optimistic, pessimistic, candidates. */
export type PbgTask = [string, number, number, number, number, number, number];

/** Rows in the reference's order (sorted as strings). */
export const sortedTasks = <T extends unknown[]>(t: T[]): T[] =>
  [...t].sort((x, y) => (String(x) < String(y) ? -1 : 1));

/** A --ranks-out .npz file's tasks, sorted. */
export function ranksOf(file: string): PbgTask[] {
  const a = parseNpz(readFileSync(file));
  const side = a.side!.data as Int8Array;
  const out: PbgTask[] = [];
  for (let i = 0; i < side.length; i++) {
    out.push([
      side[i] === 0 ? "head" : "tail",
      (a.head!.data as Int32Array)[i]!,
      (a.relation!.data as Int32Array)[i]!,
      (a.tail!.data as Int32Array)[i]!,
      (a.optimistic!.data as Float64Array)[i]!,
      (a.pessimistic!.data as Float64Array)[i]!,
      (a.num_candidates!.data as Float64Array)[i]!,
    ]);
  }
  return sortedTasks(out);
}
