/**
 * Full-ranking MRR and Hits@k estimated from sampled-negative ranks (Krichene & Rendle, "On Sampled Metrics for Item
 * Recommendation", KDD 2020). Under the sampled protocol each task's true entity is ranked against K negatives drawn
 * uniformly from the N - 1 other candidates, so its sampled rank r = j + 1 (j the negatives above it) is a random
 * function of its full rank R: j ~ Hypergeometric(N - 1, R - 1, K) without replacement, Binomial(K, (R - 1) / (N - 1))
 * with it. A[R][j] = P(j | R). The plain mean of f(r) ("sampled") estimates E f(r), not the full metric's f(R).
 * A correction f~ on j = 0..K with the uniform prior p(R) = 1/N minimises
 * sum_R p(R) [(E[f~ | R] - f(R))^2 + gamma Var(f~ | R)], whose normal equations are
 * ((1 - gamma) A^T P A + gamma D) f~ = A^T P f, D = diag(sum_R p(R) A[R][j]). gamma = 1 ("minimum-mse": the expected
 * squared error) has the closed form f~_j = sum_R A[R][j] f(R) / sum_R A[R][j]; a small gamma ("minimum-bias", 0.01 by
 * default) trades a little variance for much less bias and is solved by Cholesky. The estimate is the mean over tasks
 * of f~(r_i - 1). docs/evaluate.md, "Sampled negatives, corrected".
 */
import { KgrankInputError } from "../checks/errors";
import { cutoffs, describe, integer, isArrayLike, optionKeys, options } from "../checks/validate";
import { quantile } from "../numeric/quantile";
// From its module, not the barrel: tsc's CommonJS re-exports are getters, and one call per draw keeps V8 from inlining.
import { streamKey, uniform01Keyed } from "../numeric/random";
import { checkBootstrap } from "./tabulate";
import type { BootstrapOptions } from "./types";

export type SampledRankEstimator = "sampled" | "minimum-mse" | "minimum-bias";

/** Every estimator, in the order results list them. */
export const ESTIMATORS: readonly SampledRankEstimator[] = ["sampled", "minimum-mse", "minimum-bias"];

export interface SampledRanksOptions {
  /**
   * Each task's rank among its true entity and K sampled negatives, 1 to K + 1. Half-integers (realistic ranks with
   * ties) are taken as the average of the two neighbouring integer ranks' corrected values; other fractions are refused.
   */
  ranks: ArrayLike<number>;
  /** K, the negatives per task: an integer >= 1 (at most numCandidates - 1 without replacement). */
  numNegatives: number;
  /**
   * N, the full candidate count of a task including the true one: one number for every task, or one per task (e.g.
   * each task's filtered count, when the negatives were drawn from the filtered candidates). Tasks are grouped by
   * their N, each group estimated with its own tables.
   */
  numCandidates: number | ArrayLike<number>;
  /** Whether the negatives were drawn with replacement (default false). */
  replacement?: boolean;
  /** Cut-offs of Hits@k (default [1, 3, 10]). */
  ks?: number[];
  /** The estimators to compute (default all three). */
  estimators?: SampledRankEstimator[];
  /** gamma of "minimum-bias", in (0, 1] (default 0.01; 1 is "minimum-mse"). */
  gamma?: number;
  /** Percentile intervals over tasks resampled with replacement. */
  bootstrap?: BootstrapOptions;
}

export interface SampledRankValue {
  estimate: number;
  /** Bootstrap percentile interval, when `bootstrap` was asked for. */
  lower?: number;
  upper?: number;
}

export interface SampledRankEstimates {
  /** The N given; per task: their smallest, largest and how many distinct values (tables computed). */
  numCandidates: number | { min: number; max: number; distinct: number };
  numNegatives: number;
  tasks: number;
  replacement: boolean;
  /** gamma of "minimum-bias" (reported whatever the estimators). */
  gamma: number;
  /** values[estimator][metric key]: keys "inverse_harmonic_mean_rank" and "hits_at_<k>". */
  values: Partial<Record<SampledRankEstimator, Record<string, SampledRankValue>>>;
}

/**
 * Work limits (a few seconds each): "minimum-mse" computes about N x band probabilities, "minimum-bias" also about
 * N x band^2 / 2 products for A^T A and (K + 1)^3 / 6 for its Cholesky factor (band: rowBand).
 */
const MSE_LIMIT = 2e9;
const BIAS_LIMIT = 6e9;

/**
 * Estimates of the full-ranking MRR and Hits@k from sampled-negative ranks, by the plain sampled mean and by the
 * corrected estimators of Krichene & Rendle (see the module comment).
 */
export function estimateFromSampledRanks(opts: SampledRanksOptions): SampledRankEstimates {
  const o = options(
    "options",
    opts,
    optionKeys<SampledRanksOptions>({
      ranks: 1,
      numNegatives: 1,
      numCandidates: 1,
      replacement: 1,
      ks: 1,
      estimators: 1,
      gamma: 1,
      bootstrap: 1,
    }),
  );
  const replacement = o.replacement ?? false;
  if (typeof replacement !== "boolean")
    throw new KgrankInputError("replacement", `must be true or false, got ${describe(replacement)}`);
  const K = integer("numNegatives", o.numNegatives, 1);
  const ks = o.ks === undefined ? [1, 3, 10] : cutoffs("ks", o.ks);
  const estimators = o.estimators === undefined ? [...ESTIMATORS] : checkEstimators(o.estimators);
  const gamma = o.gamma === undefined ? 0.01 : o.gamma;
  if (typeof gamma !== "number" || !(gamma > 0 && gamma <= 1))
    throw new KgrankInputError("gamma", `must be a number in (0, 1] such as 0.01, got ${describe(gamma)}`);
  const bootstrap = checkBootstrap(o.bootstrap);
  const rankBin = rankBins(o.ranks, K);
  const { groups, groupOf } = candidateGroups(o.numCandidates, rankBin.length, K, replacement);
  checkWork(groups, K, estimators, o.estimators === undefined);
  // Task i's bin in the groups' concatenated tables: its group's 2K + 1 bins, then its rank's.
  const width = 2 * K + 1;
  const bins = groupOf ? rankBin.map((b, i) => groupOf[i]! * width + b) : rankBin;

  // Each metric's value table over the 2K + 1 rank bins (bin b is rank 1 + b / 2), per estimator.
  const metrics: [string, (R: number) => number][] = [
    ["inverse_harmonic_mean_rank", (R) => 1 / R],
    ...ks.map((k) => [`hits_at_${k}`, (R: number) => (R <= k ? 1 : 0)] as [string, (R: number) => number]),
  ];
  const fs = metrics.map(([, f]) => f);
  const tables: [SampledRankEstimator, string, Float64Array][] = [];
  for (const est of estimators) {
    const ts = metrics.map(() => new Float64Array(groups.length * width));
    groups.forEach((N, g) => {
      const corrected =
        est === "sampled" ? null : correctionTables(N, K, replacement, fs, est === "minimum-mse" ? 1 : gamma);
      metrics.forEach(([, f], m) => {
        const t = ts[m]!.subarray(g * width, (g + 1) * width);
        for (let b = 0; b <= 2 * K; b++) {
          if (!corrected) t[b] = f(1 + b / 2);
          else if (b % 2 === 0) t[b] = corrected[m]![b / 2]!;
          else t[b] = (corrected[m]![(b - 1) / 2]! + corrected[m]![(b + 1) / 2]!) / 2;
        }
      });
    });
    metrics.forEach(([key], m) => tables.push([est, key, ts[m]!]));
  }

  const n = bins.length;
  const counts = new Float64Array(groups.length * width);
  for (let i = 0; i < n; i++) counts[bins[i]!]!++;
  const mean = (c: Float64Array, t: Float64Array) => {
    let s = 0;
    for (let b = 0; b < c.length; b++) if (c[b]! > 0) s += c[b]! * t[b]!;
    return s / n;
  };
  const values: SampledRankEstimates["values"] = {};
  for (const [est, key, t] of tables) (values[est] ??= {})[key] = { estimate: mean(counts, t) };

  if (bootstrap) {
    const draws = tables.map(() => new Float64Array(bootstrap.samples));
    for (let s = 0; s < bootstrap.samples; s++) {
      const key = streamKey(bootstrap.seed, s);
      counts.fill(0);
      for (let i = 0; i < n; i++) counts[bins[Math.floor(uniform01Keyed(key, i) * n)]!]!++;
      tables.forEach(([, , t], at) => (draws[at]![s] = mean(counts, t)));
    }
    const alpha = (1 - bootstrap.confidenceLevel) / 2;
    tables.forEach(([est, key], at) => {
      const sorted = draws[at]!.sort();
      Object.assign(values[est]![key]!, { lower: quantile(sorted, alpha), upper: quantile(sorted, 1 - alpha) });
    });
  }
  const numCandidates = groupOf
    ? { min: groups[0]!, max: groups[groups.length - 1]!, distinct: groups.length }
    : groups[0]!;
  return { numCandidates, numNegatives: K, tasks: n, replacement, gamma, values };
}

/**
 * The distinct candidate counts N (ascending) and each task's index among them (null for one N given as a number),
 * checked: integers >= 2, and without replacement at least K + 1 (K negatives drawn from the other N - 1).
 */
function candidateGroups(
  value: unknown,
  tasks: number,
  K: number,
  replacement: boolean,
): { groups: number[]; groupOf: Uint32Array | null } {
  const fewest = replacement ? 2 : K + 1;
  const tooFew = (N: number, where: string) =>
    new KgrankInputError(
      replacement ? "numCandidates" : "numNegatives",
      replacement
        ? `${where}is ${N}: a task needs its true entity and at least one other candidate`
        : `is ${K}, but without replacement at most numCandidates - 1 = ${N - 1} negatives can be drawn` +
            `${where ? ` (${where.trim()})` : ""}; pass replacement: true if they were drawn with replacement`,
    );
  if (typeof value === "number") {
    const N = integer("numCandidates", value, 2);
    if (N < fewest) throw tooFew(N, "");
    return { groups: [N], groupOf: null };
  }
  if (!isArrayLike(value) || value.length !== tasks) {
    throw new KgrankInputError(
      "numCandidates",
      `must be an integer >= 2 or an array of one per rank (${tasks}), got ${describe(value)}`,
    );
  }
  const seen = new Map<number, number>();
  for (let i = 0; i < tasks; i++) {
    const N = value[i];
    if (typeof N !== "number" || !Number.isSafeInteger(N) || N < 2) {
      throw new KgrankInputError(
        "numCandidates",
        `element ${i} is ${describe(N)}: a candidate count is an integer >= 2 (the true entity and the others)`,
        i,
      );
    }
    if (N < fewest) throw tooFew(N, `numCandidates[${i}] `);
    seen.set(N, 0);
  }
  const groups = [...seen.keys()].sort((a, b) => a - b);
  groups.forEach((N, g) => seen.set(N, g));
  const groupOf = new Uint32Array(tasks);
  for (let i = 0; i < tasks; i++) groupOf[i] = seen.get(value[i] as number)!;
  return { groups, groupOf };
}

function checkEstimators(value: unknown): SampledRankEstimator[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new KgrankInputError(
      "estimators",
      `must be a non-empty array of ${ESTIMATORS.map((e) => `"${e}"`).join(", ")}, got ${describe(value)}`,
    );
  }
  for (const e of value) {
    if (!(ESTIMATORS as readonly unknown[]).includes(e)) {
      throw new KgrankInputError(
        "estimators",
        `has ${describe(e)}, not an estimator: use ${ESTIMATORS.map((x) => `"${x}"`).join(", ")}`,
      );
    }
  }
  return [...new Set(value as SampledRankEstimator[])];
}

/** Each rank's bin 2r - 2 (0..2K), ranks checked: 1 <= r <= K + 1, an integer or half-integer. */
function rankBins(value: unknown, K: number): Uint32Array {
  if (!isArrayLike(value) || value.length === 0)
    throw new KgrankInputError("ranks", `must be a non-empty array of sampled ranks, got ${describe(value)}`);
  const out = new Uint32Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const r = value[i];
    if (typeof r !== "number" || !(r >= 1 && r <= K + 1) || !Number.isInteger(2 * r)) {
      throw new KgrankInputError(
        "ranks",
        `element ${i} (0-based) is ${describe(r)}: a rank among the true entity and numNegatives = ${K} negatives is an integer ` +
          `(or half-integer, for ties) from 1 to ${K + 1}`,
        i,
      );
    }
    out[i] = 2 * r - 2;
  }
  return out;
}

/**
 * The estimators whose tables fit the work limits for these candidate counts (one table set per distinct N) and K:
 * sum over N of N x b <= 2e9 for minimum-mse, of N x b^2 / 2 + (K + 1)^3 / 6 <= 6e9 for minimum-bias.
 */
export function estimatorsWithinLimits(groups: readonly number[], K: number): SampledRankEstimator[] {
  const b = rowBand(K);
  let mse = 0;
  let bias = 0;
  for (const N of groups) {
    mse += N * b;
    bias += (N * b * b) / 2 + (K + 1) ** 3 / 6;
  }
  return ESTIMATORS.filter((e) => e === "sampled" || (e === "minimum-mse" ? mse <= MSE_LIMIT : bias <= BIAS_LIMIT));
}

function checkWork(groups: number[], K: number, estimators: SampledRankEstimator[], byDefault: boolean): void {
  const ok = estimatorsWithinLimits(groups, K);
  const over = estimators.find((e) => !ok.includes(e));
  if (!over) return;
  const N = groups.length === 1 ? `${groups[0]}` : `with ${groups.length} distinct counts (one table set each)`;
  throw new KgrankInputError(
    "numCandidates",
    `${N} with numNegatives = ${K} is too large for "${over}" (work limits, with b = ${rowBand(K)} the width of a ` +
      `row of probabilities, summed over the distinct N: N x b <= 2e9 for minimum-mse, N x b^2 / 2 + (K + 1)^3 / 6 ` +
      `<= 6e9 for minimum-bias); ${ok.map((e) => `"${e}"`).join(" and ")} fit` +
      (byDefault ? `: pass estimators: [${ok.map((e) => `"${e}"`).join(", ")}]` : ""),
  );
}

/** ln n!: summed logs below 2^16, Stirling's series above (its truncation error is below 1e-25 there). */
const LOG_FACTORIAL_TABLE = 65536;
let logFactorials: Float64Array | null = null;
function logFactorial(n: number): number {
  if (n < LOG_FACTORIAL_TABLE) {
    if (!logFactorials) {
      logFactorials = new Float64Array(LOG_FACTORIAL_TABLE);
      for (let i = 2; i < LOG_FACTORIAL_TABLE; i++) logFactorials[i] = logFactorials[i - 1]! + Math.log(i);
    }
    return logFactorials[n]!;
  }
  const inv = 1 / n;
  return n * Math.log(n) - n + 0.5 * Math.log(2 * Math.PI * n) + inv / 12 - (inv * inv * inv) / 360;
}

/** Probabilities below this fraction of their row's largest (the mode's) are dropped. */
const CUTOFF = 1e-18;

/**
 * The widest a row of A is out to CUTOFF, for the work limits: a pmf near its normal shape falls below 1e-18 of its
 * mode within sqrt(2 ln 1e18) = 9.1 standard deviations, and the standard deviation is at most sqrt(K) / 2 (a skewed
 * row, near R = 1 or N, has a longer tail in standard deviations but is narrower than this).
 */
function rowBand(K: number): number {
  return Math.min(K + 1, Math.ceil(9.1 * Math.sqrt(K)) + 1);
}

/**
 * The rows of A, R = 1..N: `row(R, lo, p)` with p[j - lo] = P(j | R) for j in lo..lo + p.length - 1 (the row's
 * support less what is below 1e-18 of its mode: a relative error below 1e-17 in any sum of a row). Each row is the pmf at its mode (from log-factorials) times the
 * ratios of neighbouring probabilities, out to the cut-off: O(band) per row. `p` is a view of a reused buffer.
 */
function forEachRow(
  N: number,
  K: number,
  replacement: boolean,
  row: (R: number, lo: number, p: Float64Array) => void,
): void {
  const buf = new Float64Array(K + 1);
  const logTotal = replacement ? 0 : logFactorial(N - 1) - logFactorial(K) - logFactorial(N - 1 - K);
  const lfK = logFactorial(K);
  for (let R = 1; R <= N; R++) {
    const a = R - 1; // candidates above the truth
    const b = N - R; // below it
    let first: number;
    let last: number;
    let mode: number;
    let logMode: number;
    // up(j) = P(j + 1) / P(j), down(j) = P(j - 1) / P(j).
    let up: (j: number) => number;
    let down: (j: number) => number;
    if (replacement) {
      if (a === 0 || b === 0) {
        buf[0] = 1;
        row(R, a === 0 ? 0 : K, buf.subarray(0, 1));
        continue;
      }
      const q = a / (N - 1);
      const odds = q / (1 - q);
      first = 0;
      last = K;
      mode = Math.min(K, Math.floor((K + 1) * q));
      logMode = lfK - logFactorial(mode) - logFactorial(K - mode) + mode * Math.log(q) + (K - mode) * Math.log1p(-q);
      up = (j) => ((K - j) / (j + 1)) * odds;
      down = (j) => j / ((K - j + 1) * odds);
    } else {
      first = Math.max(0, K - b);
      last = Math.min(K, a);
      mode = Math.min(last, Math.max(first, Math.floor(((K + 1) * R) / (N + 1))));
      logMode =
        logFactorial(a) -
        logFactorial(mode) -
        logFactorial(a - mode) +
        logFactorial(b) -
        logFactorial(K - mode) -
        logFactorial(b - K + mode) -
        logTotal;
      up = (j) => ((a - j) * (K - j)) / ((j + 1) * (b - K + j + 1));
      down = (j) => (j * (b - K + j)) / ((a - j + 1) * (K - j + 1));
    }
    const top = Math.exp(logMode);
    const floor = top * CUTOFF;
    buf[mode] = top;
    let lo = mode;
    while (lo > first) {
      const v = buf[lo]! * down(lo);
      if (v < floor) break;
      buf[--lo] = v;
    }
    let hi = mode;
    while (hi < last) {
      const v = buf[hi]! * up(hi);
      if (v < floor) break;
      buf[++hi] = v;
    }
    row(R, lo, buf.subarray(lo, hi + 1));
  }
}

/** A as N dense rows of K + 1 (for small N: tests and inspection). */
export function sampledRankMatrix(N: number, K: number, replacement: boolean): Float64Array[] {
  const rows: Float64Array[] = [];
  forEachRow(N, K, replacement, (_R, lo, p) => {
    const r = new Float64Array(K + 1);
    r.set(p, lo);
    rows.push(r);
  });
  return rows;
}

/**
 * The corrections f~ on j = 0..K of each metric `fs[m]` (f(R) of a full rank R): the minimiser of the
 * gamma-weighted loss under the uniform prior (gamma = 1: the closed form, the posterior mean of f(R) given j).
 */
export function correctionTables(
  N: number,
  K: number,
  replacement: boolean,
  fs: ((R: number) => number)[],
  gamma: number,
): Float64Array[] {
  const J = K + 1;
  // The prior's 1/N multiplies both sides of the normal equations: left out.
  const rhs = fs.map(() => new Float64Array(J));
  const diag = new Float64Array(J);
  const gram = gamma < 1 ? new Float64Array(J * J) : null;
  const fR = new Float64Array(fs.length);
  forEachRow(N, K, replacement, (R, lo, p) => {
    for (let m = 0; m < fs.length; m++) fR[m] = fs[m]!(R);
    for (let a = 0; a < p.length; a++) diag[lo + a]! += p[a]!;
    for (let m = 0; m < fs.length; m++) {
      const v = fR[m]!;
      if (v === 0) continue; // Hits@k beyond k: most rows
      const b = rhs[m]!;
      for (let a = 0; a < p.length; a++) b[lo + a]! += p[a]! * v;
    }
    if (!gram) return;
    for (let a = 0; a < p.length; a++) {
      // The lower triangle of A^T A: row lo + a, columns lo..lo + a.
      const pa = p[a]!;
      const base = (lo + a) * J + lo;
      for (let c = 0; c <= a; c++) gram[base + c]! += pa * p[c]!;
    }
  });
  if (!gram) return rhs.map((b) => b.map((v, j) => (diag[j]! > 0 ? v / diag[j]! : 0)));
  for (let i = 0; i < J; i++) {
    for (let c = 0; c <= i; c++) gram[i * J + c]! *= 1 - gamma;
    // A j no full rank can give (e.g. 0 < j < K with replacement and N = 2) has a zero row and column: f~_j = 0.
    gram[i * J + i]! += diag[i]! > 0 ? gamma * diag[i]! : 1;
  }
  choleskyInPlace(gram, J);
  return rhs.map((b) => choleskySolve(gram, J, b));
}

/** The lower Cholesky factor L of the symmetric positive definite M (its lower triangle, row-major, J x J) in place. */
function choleskyInPlace(M: Float64Array, J: number): void {
  for (let i = 0; i < J; i++) {
    for (let c = 0; c <= i; c++) {
      let s = M[i * J + c]!;
      for (let k = 0; k < c; k++) s -= M[i * J + k]! * M[c * J + k]!;
      if (c < i) M[i * J + c] = s / M[c * J + c]!;
      else {
        if (!(s > 0)) {
          throw new KgrankInputError(
            "gamma",
            "is too small: the minimum-bias system is not positive definite in float64; use a larger gamma (0.01)",
          );
        }
        M[i * J + i] = Math.sqrt(s);
      }
    }
  }
}

/** x with L L^T x = b. */
function choleskySolve(L: Float64Array, J: number, b: Float64Array): Float64Array {
  const x = Float64Array.from(b);
  for (let i = 0; i < J; i++) {
    let s = x[i]!;
    for (let k = 0; k < i; k++) s -= L[i * J + k]! * x[k]!;
    x[i] = s / L[i * J + i]!;
  }
  for (let i = J - 1; i >= 0; i--) {
    let s = x[i]!;
    for (let k = i + 1; k < J; k++) s -= L[k * J + i]! * x[k]!;
    x[i] = s / L[i * J + i]!;
  }
  return x;
}
