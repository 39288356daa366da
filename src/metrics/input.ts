/** Validation of metric inputs: ranks, candidate counts, weights. Returns Float64Arrays the kernels accept. */
import { KgrankInputError } from "../checks/errors";
import { describe, numberArray } from "../checks/validate";

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
      const zeroBased = x === 0 ? "; if these are 0-based positions (as argsort gives), add 1 to every rank" : "";
      throw new KgrankInputError(
        "ranks",
        `element ${i} is ${x}; ranks must be finite numbers >= 1 (1 = best)${zeroBased}`,
      );
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
 * Per-task weights as PyKEEN takes them: finite and >= 0 (a zero weight makes a task count for nothing), at least one
 * > 0. Metrics without weight support (variance, standard deviation, count) ignore them, as PyKEEN's do: null.
 * The weights are scaled by a power of two so the largest is in [1, 2): exact, so every result is unchanged, and
 * sums of huge weights (1e308 each) do not overflow nor tiny ones (5e-324) lose their ratios. `metric` names the
 * caller in messages.
 */
export function weightsArg(value: unknown, length: number, supported: boolean, metric: string): Float64Array | null {
  if (value === undefined || value === null) return null;
  const w = list("weights", value, length);
  let max = 0;
  for (let i = 0; i < w.length; i++) {
    const x = w[i]!;
    if (!Number.isFinite(x) || x < 0) {
      throw new KgrankInputError(
        "weights",
        `element ${i} is ${x}; weights must be finite and >= 0 (0: the task counts for nothing)`,
      );
    }
    if (x > max) max = x;
  }
  if (max === 0)
    throw new KgrankInputError(
      "weights",
      `every weight is 0, so ${metric || "the metric"} would weigh no task; give at least one weight > 0`,
    );
  if (!supported) return null;
  const scale = powerOfTwoBelow(max);
  if (scale === 1) return w;
  const out = w === value ? new Float64Array(w.length) : w;
  for (let i = 0; i < w.length; i++) out[i] = w[i]! / scale;
  return out;
}

/** 2^floor(log2(x)) for a finite x > 0 (subnormals included), exactly. */
function powerOfTwoBelow(x: number): number {
  let e = Math.floor(Math.log2(x));
  // log2 rounds: step to the exact exponent.
  while (2 ** e > x) e--;
  while (2 ** (e + 1) <= x) e++;
  return 2 ** e;
}
