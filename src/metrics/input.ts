/** Validation of metric inputs: ranks, candidate counts, weights. Returns Float64Arrays the kernels accept. */
import { KgrankInputError } from "../errors";
import { describe, numberArray } from "../validate";

function toFloat64(value: ArrayLike<number>): Float64Array {
  return value instanceof Float64Array ? value : Float64Array.from(value);
}

function list(name: string, value: unknown, length?: number): Float64Array {
  if (value === undefined || value === null) {
    throw new KgrankInputError(name, `is required, got ${describe(value)}; pass one number per ranking task`);
  }
  const len = (value as ArrayLike<unknown>).length;
  const arr = toFloat64(numberArray(name, value, length ?? (typeof len === "number" ? len : -1)));
  if (arr.length === 0) {
    throw new KgrankInputError(name, "is empty: a metric needs at least one ranking task");
  }
  return arr;
}

/**
 * Ranks as an array only (shape checked): the fused aggregate pass counts invalid ranks, and callers run ranksArg()
 * for the precise message when it finds any, so large inputs are not scanned twice.
 */
export function ranksShape(value: unknown): Float64Array {
  return list("ranks", value);
}

/** Ranks: finite numbers >= 1 (half-integers allowed, as realistic ranks are), at most N_i when given. */
export function ranksArg(value: unknown, numCandidates?: Float64Array): Float64Array {
  const r = list("ranks", value);
  for (let i = 0; i < r.length; i++) {
    const x = r[i]!;
    if (!Number.isFinite(x) || x < 1) {
      throw new KgrankInputError("ranks", `element ${i} is ${x}; ranks must be finite numbers >= 1 (1 = best)`);
    }
    if (numCandidates && x > numCandidates[i]!) {
      throw new KgrankInputError(
        "ranks",
        `element ${i} is ${x} but numCandidates[${i}] is ${numCandidates[i]}; a rank cannot exceed its number of candidates`,
      );
    }
  }
  return r;
}

/** Candidate counts: integers >= 1 (and <= 2^53), one per task. */
export function numCandidatesArg(value: unknown, length?: number): Float64Array {
  const n = list("numCandidates", value, length);
  for (let i = 0; i < n.length; i++) {
    const x = n[i]!;
    // Written so that NaN fails too; Math.floor is cheaper than Number.isInteger on large inputs.
    if (!(x >= 1 && x <= Number.MAX_SAFE_INTEGER && Math.floor(x) === x)) {
      throw new KgrankInputError(
        "numCandidates",
        `element ${i} is ${x}; the number of candidates must be an integer >= 1 (the true candidate included)`,
      );
    }
  }
  return n;
}

/**
 * Weights: optional, one per task, finite and > 0. Weights scale tasks; a task that should not count must be
 * removed rather than weighted 0 (so a weighted median is never decided by a weightless task).
 */
export function weightsArg(value: unknown, length: number, supported: boolean, metric: string): Float64Array | null {
  if (value === undefined || value === null) return null;
  if (!supported) {
    throw new KgrankInputError("weights", `${metric} does not support weights; omit them (or pick a metric that does)`);
  }
  const w = list("weights", value, length);
  for (let i = 0; i < w.length; i++) {
    const x = w[i]!;
    if (!Number.isFinite(x) || x <= 0) {
      throw new KgrankInputError(
        "weights",
        `element ${i} is ${x}; weights must be finite and > 0 (remove a task instead of weighting it 0)`,
      );
    }
  }
  return w;
}
