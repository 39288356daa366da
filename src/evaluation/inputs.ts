/**
 * Checks of the evaluator's inputs: id arrays, triples, sides. Each throws a KgrankInputError naming the argument
 * and what is accepted; each returns the value in the form the kernels take.
 */
import { KgrankInputError } from "../errors";
import type { FloatArray } from "../kernels";
import { describe } from "../validate";
import type { TaskColumns } from "./task-buffer";
import type { EvaluationSide } from "./types";

export function idSet(name: string, value: unknown, bound: number | null): Int32Array {
  const arr = value as ArrayLike<unknown>;
  if (!(Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView)))) {
    throw new KgrankInputError(name, `must be an array of ids, got ${describe(value)}`);
  }
  const out = new Int32Array(arr.length);
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i];
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || (bound !== null && v >= bound)) {
      throw new KgrankInputError(name, `${name}[${i}] = ${describe(v)} is not an id in [0, ${bound ?? "2^31"})`);
    }
    out[i] = v;
  }
  if (out.length === 0) throw new KgrankInputError(name, "is empty: nothing would be evaluated");
  return out;
}

/**
 * The common case of tripleArray, on a monomorphic Int32Array (values are integers already): true when every id is in
 * range. Otherwise the general loop below finds the first bad value and names it.
 */
function int32TriplesInRange(t: Int32Array, numEntities: number, numRelations: number | null): boolean {
  // Unsigned compares (x >>> 0): a negative id becomes >= 2^31 and fails the bound too.
  const relBound = numRelations ?? 2147483647;
  for (let i = 0; i + 2 < t.length; i += 3) {
    if (t[i]! >>> 0 >= numEntities || t[i + 1]! >>> 0 >= relBound || t[i + 2]! >>> 0 >= numEntities) return false;
  }
  return true;
}

/** The error for a batch whose task `task` has a NaN true score (a NaN score is not a candidate). */
export function nanTrueScore(task: number): KgrankInputError {
  return new KgrankInputError(
    "scores",
    `the true score of task ${task} of the batch is NaN: a NaN score marks a non-candidate, so the true answer has no rank`,
  );
}

export function tripleArray(name: string, value: unknown, numEntities: number, numRelations: number | null): Int32Array {
  const isView = ArrayBuffer.isView(value) && !(value instanceof DataView);
  if (!isView && !Array.isArray(value)) {
    throw new KgrankInputError(name, `must be an Int32Array of (head, relation, tail) rows, got ${describe(value)}`);
  }
  const arr = value as ArrayLike<unknown>;
  if (arr.length % 3 !== 0) throw new KgrankInputError(name, `has ${arr.length} elements, not a multiple of 3 (rows of head, relation, tail)`);
  if (value instanceof Int32Array && int32TriplesInRange(value, numEntities, numRelations)) return value;
  const out = value instanceof Int32Array ? value : new Int32Array(arr.length);
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i];
    const isRel = i % 3 === 1;
    const bound = isRel ? numRelations : numEntities;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || (bound !== null && v >= bound) || v > 2147483647) {
      const what = isRel ? "relation" : i % 3 === 0 ? "head" : "tail";
      throw new KgrankInputError(
        name,
        `row ${Math.floor(i / 3)}: ${what} ${describe(v)} is not an id in [0, ${bound ?? "2^31"})`,
      );
    }
    if (out !== value) out[i] = v;
  }
  return out;
}

export function sideArg(value: unknown, allowed: EvaluationSide[]): EvaluationSide {
  if (value !== "head" && value !== "tail") {
    throw new KgrankInputError("side", `must be "head" or "tail", got ${describe(value)}`);
  }
  if (!allowed.includes(value)) {
    throw new KgrankInputError("side", `"${value}" is not evaluated by this RankEvaluator (sides: ${allowed.join(", ")})`);
  }
  return value;
}

/**
 * The task columns of an addRanks() batch: ranks (integers or halves in [1, N_i]; a rank type not given is NaN),
 * candidate counts, weights (NaN when not given) and relations; anchor and answer unknown (-1).
 */
export function rankedTasks(o: Record<string, unknown>, numRelations: number | null): TaskColumns {
  const nc = o.numCandidates as ArrayLike<unknown>;
  if (!(Array.isArray(nc) || (ArrayBuffer.isView(nc) && !(nc instanceof DataView)))) {
    throw new KgrankInputError("numCandidates", `must be an array of numbers, got ${describe(nc)}`);
  }
  const n = nc.length;
  if (n === 0) throw new KgrankInputError("numCandidates", "is empty: pass at least one task");
  const numCandidates = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const v = nc[i];
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
      throw new KgrankInputError("numCandidates", `numCandidates[${i}] = ${describe(v)} is not an integer >= 1`);
    }
    numCandidates[i] = v;
  }
  const given = (["optimistic", "pessimistic", "realistic"] as const).filter((k) => o[k] !== undefined);
  if (given.length === 0) {
    throw new KgrankInputError("ranks", "give at least one of optimistic, pessimistic, realistic (arrays of ranks)");
  }
  const cols: Record<"optimistic" | "pessimistic" | "realistic", Float64Array> = {
    optimistic: new Float64Array(n).fill(NaN),
    pessimistic: new Float64Array(n).fill(NaN),
    realistic: new Float64Array(n).fill(NaN),
  };
  for (const k of given) {
    const arr = o[k] as ArrayLike<unknown>;
    if (!(Array.isArray(arr) || ArrayBuffer.isView(arr)) || arr.length !== n) {
      throw new KgrankInputError(k, `must be an array with one rank per task (${n}), got ${describe(arr)}`);
    }
    for (let i = 0; i < n; i++) {
      const v = arr[i];
      const twice = typeof v === "number" ? 2 * v : NaN;
      if (typeof v !== "number" || !Number.isInteger(twice) || v < 1 || v > numCandidates[i]!) {
        throw new KgrankInputError(
          k,
          `${k}[${i}] = ${describe(v)} is not a rank in [1, numCandidates[${i}] = ${numCandidates[i]}] (integers or halves)`,
        );
      }
      cols[k][i] = v;
    }
  }
  const weight = new Float64Array(n).fill(NaN);
  if (o.weights !== undefined) {
    const w = o.weights as ArrayLike<unknown>;
    if (!(Array.isArray(w) || ArrayBuffer.isView(w)) || w.length !== n) {
      throw new KgrankInputError("weights", `must be an array with one weight per task (${n}), got ${describe(w)}`);
    }
    for (let i = 0; i < n; i++) {
      const v = w[i];
      if (typeof v !== "number" || !(v >= 0) || !Number.isFinite(v)) {
        throw new KgrankInputError("weights", `weights[${i}] = ${describe(v)} is not a finite number >= 0 (0: the task counts for nothing)`);
      }
      weight[i] = v;
    }
  }
  const relation = new Int32Array(n).fill(-1);
  if (o.relations !== undefined) relation.set(idSet("relations", o.relations, numRelations));
  const minusOne = new Int32Array(n).fill(-1);
  return { ...cols, numCandidates, weight, relation, anchor: minusOne, truth: minusOne };
}

/** Keys of sampled tasks: from the batch's optional triples, else unknown (-1). */
function sampledKeys(o: Record<string, unknown>, side: EvaluationSide, n: number, numEntities: number, numRelations: number | null) {
  const relation = new Int32Array(n).fill(-1);
  const anchor = new Int32Array(n).fill(-1);
  const truth = new Int32Array(n).fill(-1);
  if (o.triples !== undefined) {
    const t = tripleArray("triples", o.triples, numEntities, numRelations);
    if (t.length !== 3 * n) throw new KgrankInputError("triples", `must have ${n} rows (one per positive), got ${t.length / 3}`);
    for (let i = 0; i < n; i++) {
      relation[i] = t[3 * i + 1]!;
      anchor[i] = side === "tail" ? t[3 * i]! : t[3 * i + 2]!;
      truth[i] = side === "tail" ? t[3 * i + 2]! : t[3 * i]!;
    }
  }
  return { relation, anchor, truth };
}

/** computeSampledRanks options from a sampled batch. */
export function sampledArgs(o: Record<string, unknown>, threads: number | undefined) {
  return {
    positiveScores: o.positiveScores as ArrayLike<number>,
    negativeScores: o.negativeScores as FloatArray,
    threads: (o.threads as number | undefined) ?? threads,
  };
}

/** The task columns of sampled ranks: keys from the batch's triples (or unknown), no weight. */
export function sampledTasks(
  o: Record<string, unknown>, side: EvaluationSide, ranks: Omit<TaskColumns, "relation" | "anchor" | "truth" | "weight">,
  numEntities: number, numRelations: number | null,
): TaskColumns {
  const n = ranks.optimistic.length;
  return { ...ranks, ...sampledKeys(o, side, n, numEntities, numRelations), weight: new Float64Array(n).fill(NaN) };
}
