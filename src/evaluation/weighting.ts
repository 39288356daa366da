/**
 * Per-task weights of recorded tasks: explicit (addRanks({ weights }); tasks without one weigh 1), PyKEEN's macro
 * weighting (1 / distinct answers of the task's (anchor, relation) key among the evaluated tasks; for relation
 * tasks, of its (head, tail) pair), or none (micro).
 */
import { KgrankStateError } from "../checks/errors";
import type { TaskColumns } from "./task-buffer";
import type { Weighting } from "./types";

export function taskWeights(
  cols: TaskColumns,
  weighting: Weighting,
  explicit: boolean,
  relationSide = false,
): Float64Array | null {
  if (explicit) return Float64Array.from(cols.weight, (w) => (w === w ? w : 1));
  if (weighting === "micro") return null;
  // A relation task's query is (head, tail) and its answer the relation: the same count with the columns swapped.
  return macroWeights(relationSide ? { ...cols, relation: cols.truth, truth: cols.relation } : cols);
}

/** 1 / (number of distinct answers of each task's key): every (anchor, relation) query weighs 1 in all. */
function macroWeights(cols: TaskColumns): Float64Array {
  const n = cols.optimistic.length;
  const answers = new Map<string, Set<number>>();
  for (let i = 0; i < n; i++) {
    if (cols.anchor[i]! < 0) {
      throw new KgrankStateError(
        "macro weighting needs the triples of every task; ranks added without triples have none",
      );
    }
    const key = `${cols.anchor[i]},${cols.relation[i]}`;
    let s = answers.get(key);
    if (!s) answers.set(key, (s = new Set()));
    s.add(cols.truth[i]!);
  }
  const w = new Float64Array(n);
  for (let i = 0; i < n; i++) w[i] = 1 / answers.get(`${cols.anchor[i]},${cols.relation[i]}`)!.size;
  return w;
}
