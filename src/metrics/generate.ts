/** Seeded random rank vectors: r_i ~ Uniform{1..N_i}, the same stream as Monte-Carlo sample 0 of estimate(). */
import { kernels } from "../backend/backend";
import { KgrankInputError } from "../checks/errors";
import { uniform01 } from "../numeric";
import { describe, options as optionsArg } from "../checks/validate";
import { numCandidatesArg } from "./input";

const CANDIDATE_STREAM = 0xffffffff;

function seedOf(opts: unknown): number {
  if (opts === undefined) return 0;
  const seed = optionsArg("options", opts, ["seed"]).seed ?? 0;
  if (typeof seed !== "number" || !Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new KgrankInputError("options.seed", `must be an integer from 0 to 2^32-1, got ${describe(seed)}`);
  }
  return seed;
}

/** One rank per task, uniform on 1..numCandidates[i]; identical on every backend for a given seed. */
export function generateRanks(numCandidates: ArrayLike<number>, options?: { seed?: number }): Float64Array {
  const seed = seedOf(options);
  const n = numCandidatesArg(numCandidates);
  if (n.length > 0xffffffff) throw new KgrankInputError("numCandidates", "must have fewer than 2^32 elements");
  return kernels().generateRanks(n, seed, 0);
}

/**
 * n tasks with N_i uniform on 1..maxNumCandidates and ranks uniform on 1..N_i, seeded.
 */
export function generateNumCandidatesAndRanks(
  n: number,
  maxNumCandidates: number,
  options?: { seed?: number },
): { numCandidates: Float64Array; ranks: Float64Array } {
  const seed = seedOf(options);
  if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > 0xffffffff) {
    throw new KgrankInputError("n", `must be an integer from 1 to 2^32-1, got ${describe(n)}`);
  }
  if (
    typeof maxNumCandidates !== "number" ||
    !Number.isInteger(maxNumCandidates) ||
    maxNumCandidates < 1 ||
    maxNumCandidates > Number.MAX_SAFE_INTEGER
  ) {
    throw new KgrankInputError("maxNumCandidates", `must be an integer >= 1, got ${describe(maxNumCandidates)}`);
  }
  const numCandidates = new Float64Array(n);
  for (let i = 0; i < n; i++)
    numCandidates[i] = 1 + Math.floor(uniform01(seed, CANDIDATE_STREAM, i) * maxNumCandidates);
  return { numCandidates, ranks: kernels().generateRanks(numCandidates, seed, 0) };
}
