/**
 * Paired comparison of runs over the same tasks: for each metric, each run's value, the difference to
 * the first run, a paired bootstrap interval of the difference, and p-values:
 *  - a paired randomization test (each task's two ranks swapped with probability 1/2, the metric recomputed): valid
 *    for every metric, the median and GMR included; p = (1 + #{|D*| >= |D|}) / (1 + samples);
 *  - where the metric is a mean of per-task values up to an affine map fixed by the candidates (MR, MRR, Hits@k,
 *    MRR@k and their adjusted and z-scored forms; the base metric's descriptor says which): the paired t-test and the Wilcoxon signed-rank test on the per-task differences (SciPy's
 *    conventions: zeros dropped, average ranks for ties, exact null distribution for n <= 50 without ties, else the
 *    normal approximation with the tie correction and no continuity correction), and Cohen's d_z;
 *  - p-values adjusted over all (metric, run) pairs by Holm–Bonferroni (default) or Benjamini–Hochberg.
 * Runs must hold the same tasks in the same order (side, triple and candidate count): the first difference is named,
 * in the runs' labels where given. The tasks compared are the head and tail tasks (default), or with
 * `side: "relation"` the relation tasks (h, ?, t): the two protocols are never pooled. The tasks and their checks are
 * in tasks.ts, the tests and adjustments on finished numbers in statistics.ts; this file draws the replicates.
 */
import { KgrankInputError } from "../checks/errors";
import { type RankResults, type TaskTable } from "../evaluation/results";
import { getMetric, metricValues, prepareCandidates } from "../metrics/index";
import { DerivedMetric } from "../metrics/derived";
import type { RankMetric } from "../metrics/types";
import { quantile } from "../numeric";
// Straight from the module: calls through the index's re-export getters are not inlined in the hot loops.
import { lowerHalfKeyed, streamKey, uniform01Keyed } from "../numeric/random";
import { confidenceLevelArg, describe, optionKeys, options, seedArg } from "../checks/validate";
import { runSteps, runStepsAsync, type Steps } from "../io/steps";
import { kernels } from "../backend/backend";
import { type PairedColumns, type PairedMedians, ResamplingKind } from "../contract/kernels";
import { type SumForm, sumForm } from "../metrics/sum-form";
import { adjust, pairedTests, sortedNumbers } from "./statistics";
import { type NamedRun, sameCandidates, sameTasks, sideTasks } from "./tasks";

export { pairedTests, sortedNumbers } from "./statistics";
export type { NamedRun, TaskLabels } from "./tasks";

export interface CompareOptions {
  /** Metrics to compare (names or synonyms); default MRR, Hits@1/3/10, MR, AMRI, median rank. */
  metrics?: string[];
  /** Randomization and bootstrap replicates (default 10,000). */
  samples?: number;
  seed?: number;
  /** Of the bootstrap interval of each difference (default 0.95). */
  confidenceLevel?: number;
  /** Multiple-comparison adjustment over every (metric, run) p-value: "holm" (default), "bh" or "none". */
  correction?: "holm" | "bh" | "none";
  /** The tasks compared: "both" (default: the head and tail tasks) or "relation" (the relation tasks). */
  side?: "both" | "relation";
}

export interface ComparisonRow {
  metric: string;
  /** Run whose difference to the first run this row is (index into the runs). */
  run: number;
  valueA: number;
  valueB: number;
  /** valueB - valueA. */
  difference: number;
  lower: number;
  upper: number;
  pRandomization: number;
  /** The randomization p-value after the correction. */
  pAdjusted: number;
  /** Only for means of per-task values (else null). */
  pTTest: number | null;
  pWilcoxon: number | null;
  /**
   * Cohen's d_z of the per-task differences (mean / standard deviation with ddof 1); 0 for identical runs, +-inf when
   * every task differs by the same amount, NaN for a single task; null where there is no t-test.
   */
  effectSize: number | null;
}

export interface Comparison {
  names: string[];
  tasks: number;
  samples: number;
  seed: number;
  confidenceLevel: number;
  correction: "holm" | "bh" | "none";
  rows: ComparisonRow[];
}

const KEYS = optionKeys<CompareOptions>({
  metrics: 1,
  samples: 1,
  seed: 1,
  confidenceLevel: 1,
  correction: 1,
  side: 1,
});
const DEFAULT_METRICS = ["mrr", "hits@1", "hits@3", "hits@10", "mr", "amri", "median_rank"];

/**
 * Per-task value whose mean is the metric up to an affine map that depends only on the candidate counts (any derived
 * chain over a base whose value is a mean: MR, MRR, Hits@k, MRR@k and their adjusted and z-scored forms), read from the
 * base metric's descriptor (BaseRankMetric.perTask); null for the others.
 */
function perTask(form: SumForm | null): ((rank: number) => number) | null {
  return form?.difference ? form.perTask : null;
}

/**
 * Compares runs over the same tasks: each later run against the first. `runs` are RankResults (finalize()) or
 * { name, results, labels? }.
 */
export function compareRuns(runs: (RankResults | NamedRun)[], opts: CompareOptions = {}): Comparison {
  return runSteps(comparison(runs, opts));
}

/**
 * compareRuns() between event-loop turns (about SLICE_MS of replicates each), stopping at `signal`: the same
 * numbers, bit for bit, while timers and signal handlers keep running. `onProgress` hears of every replicate done
 * (randomization and bootstrap, of every run against the first).
 */
export function compareRunsAsync(
  runs: (RankResults | NamedRun)[],
  opts: CompareOptions = {},
  signal?: AbortSignal,
  onProgress?: (progress: { done: number; total: number }) => void,
): Promise<Comparison> {
  return runStepsAsync(comparison(runs, opts, onProgress), signal);
}

/** Named per-task columns for pairedResample, each built once (metrics that share a column share its sums). */
class ColumnSet {
  readonly #n: number;
  readonly #index = new Map<string, number>();
  readonly #x: Float64Array[] = [];

  constructor(n: number) {
    this.#n = n;
  }

  get size(): number {
    return this.#x.length;
  }

  /** The column's index; x built when it is new. */
  add(name: string, x: () => Float64Array): number {
    let at = this.#index.get(name);
    if (at === undefined) {
      at = this.#x.length;
      this.#index.set(name, at);
      this.#x.push(x());
    }
    return at;
  }

  columns(medians: PairedMedians | null): PairedColumns {
    const x = new Float64Array(this.#x.length * this.#n);
    this.#x.forEach((p, i) => x.set(p, i * this.#n));
    return { n: this.#n, x, medians };
  }
}

/** Both runs' ranks arranged for the replicates' medians (PairedMedians). */
function rankIndex(a: Float64Array, b: Float64Array): PairedMedians {
  const all = new Float64Array(a.length + b.length);
  all.set(a);
  all.set(b, a.length);
  all.sort();
  let m = 0;
  for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[m - 1]) all[m++] = all[i]!;
  const values = all.slice(0, m);
  const indexOf = (v: number) => {
    let lo = 0;
    let hi = m - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (values[mid]! < v) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const indexA = Uint32Array.from(a, indexOf);
  const indexB = Uint32Array.from(b, indexOf);
  // Tasks in ascending order of rank: a counting sort of the value indices (ties in task order).
  const order = (index: Uint32Array) => {
    const start = new Uint32Array(m + 1);
    for (let i = 0; i < index.length; i++) start[index[i]! + 1]!++;
    for (let v = 0; v < m; v++) start[v + 1]! += start[v]!;
    const out = new Uint32Array(index.length);
    for (let i = 0; i < index.length; i++) out[start[index[i]!]!++] = i;
    return out;
  };
  const orderA = order(indexA);
  const orderB = order(indexB);
  return {
    indexA,
    indexB,
    values,
    orderA,
    orderB,
    sortedA: Float64Array.from(orderA, (i) => a[i]!),
    sortedB: Float64Array.from(orderB, (i) => b[i]!),
  };
}

/** Sum in index order (the unswapped totals the randomization's swapped sums are added to). */
function sumOf(x: Float64Array): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i]!;
  return s;
}

/** Per-task expectation and variance columns of a base (memoised per distinct candidate count). */
function taskMoments(
  numCandidates: Float64Array,
  moments: (numCandidates: number) => [number, number],
): [Float64Array, Float64Array] {
  const memo = new Map<number, [number, number]>();
  const e = new Float64Array(numCandidates.length);
  const v = new Float64Array(numCandidates.length);
  numCandidates.forEach((c, i) => {
    let m = memo.get(c);
    if (!m) memo.set(c, (m = moments(c)));
    e[i] = m[0];
    v[i] = m[1];
  });
  return [e, v];
}

const EMPTY = new Float64Array(0);

/** Milliseconds of work one pairedResample call aims at (steps stay near the event loop's slice). */
const BLOCK_MS = 5;

/** Calls work(first, count) over [0, samples) in blocks sized from the previous block's time, yielding between. */
function* inBlocks(samples: number, work: (first: number, count: number) => void): Steps<void> {
  let block = 2;
  for (let first = 0; first < samples;) {
    const count = Math.min(block, samples - first);
    const t0 = performance.now();
    work(first, count);
    const ms = performance.now() - t0;
    block = Math.max(1, Math.min(4096, Math.round((count * BLOCK_MS) / Math.max(ms, 0.01))));
    first += count;
    yield;
  }
}

/** Replicate `key` of the randomization, recomputed: both runs' values with the swapped tasks' ranks exchanged. */
function recount(
  metrics: RankMetric[],
  A: TaskTable,
  B: TaskTable,
  candidates: ReturnType<typeof prepareCandidates>,
  key: number,
): [Record<string, number>, Record<string, number>] {
  const n = A.realistic.length;
  const ra = new Float64Array(n);
  const rb = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const swap = lowerHalfKeyed(key, i);
    ra[i] = swap ? B.realistic[i]! : A.realistic[i]!;
    rb[i] = swap ? A.realistic[i]! : B.realistic[i]!;
  }
  return [metricValues(metrics, ra, candidates), metricValues(metrics, rb, candidates)];
}

/** Replicate `key` of the bootstrap, recomputed: both runs' values over the drawn tasks and their candidates. */
function resample(
  metrics: RankMetric[],
  A: TaskTable,
  B: TaskTable,
  key: number,
): [Record<string, number>, Record<string, number>] {
  const n = A.realistic.length;
  const ra = new Float64Array(n);
  const rb = new Float64Array(n);
  const nc = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const k = Math.floor(uniform01Keyed(key, i) * n);
    ra[i] = A.realistic[k]!;
    rb[i] = B.realistic[k]!;
    nc[i] = A.numCandidates[k]!;
  }
  const c = prepareCandidates(nc);
  return [metricValues(metrics, ra, c), metricValues(metrics, rb, c)];
}

/** The comparison as steps: one randomization or bootstrap replicate each (a pass over the tasks). */
function* comparison(
  runs: (RankResults | NamedRun)[],
  opts: CompareOptions,
  onProgress?: (progress: { done: number; total: number }) => void,
): Steps<Comparison> {
  const o = options("compare options", opts, KEYS) as CompareOptions;
  if (!Array.isArray(runs) || runs.length < 2)
    throw new KgrankInputError("runs", `needs at least two runs to compare, got ${describe(runs)}`);
  const named: NamedRun[] = runs.map((r, i) =>
    "results" in r && "name" in r ? r : { name: `run ${i}`, results: r as RankResults },
  );
  const samples = o.samples ?? 10_000;
  if (typeof samples !== "number" || !Number.isInteger(samples) || samples < 10 || samples > 1e7) {
    throw new KgrankInputError("samples", `must be an integer from 10 to 1e7, got ${describe(samples)}`);
  }
  const seed = seedArg("seed", o.seed ?? 0);
  const level = confidenceLevelArg("confidenceLevel", o.confidenceLevel ?? 0.95);
  const correction = o.correction ?? "holm";
  if (!["holm", "bh", "none"].includes(correction as string))
    throw new KgrankInputError("correction", `must be "holm", "bh" or "none", got ${describe(correction)}`);
  if (o.metrics !== undefined && !Array.isArray(o.metrics))
    throw new KgrankInputError("metrics", `must be a list of metric names, got ${describe(o.metrics)}`);
  const metrics = (o.metrics ?? DEFAULT_METRICS).map((q) => getMetric(q));
  const side = o.side ?? "both";
  if (side !== "both" && side !== "relation")
    throw new KgrankInputError("side", `must be "both" or "relation", got ${describe(side)}`);
  const tables = named.map((r) => sideTasks(r.results.tasks(), side, r.name));
  if (side === "both") sameCandidates(named);
  for (let j = 1; j < tables.length; j++) {
    sameTasks(
      tables[0]!,
      tables[j]!,
      [named[0]!.name, named[j]!.name],
      [named[0]!.labels ?? undefined, named[j]!.labels ?? undefined],
    );
  }
  const A = tables[0]!;
  const n = A.side.length;
  const candidates = prepareCandidates(A.numCandidates);
  const rows: ComparisonRow[] = [];
  const alpha = (1 - level) / 2;
  const total = 2 * samples * (tables.length - 1);
  let done = 0;
  const advance = (count: number) => {
    done += count;
    onProgress?.({ done, total });
  };
  for (let j = 1; j < tables.length; j++) {
    const B = tables[j]!;
    const valuesA = metricValues(metrics, A.realistic, candidates);
    const valuesB = metricValues(metrics, B.realistic, candidates);
    // Per metric: the observed difference, and where the metric is a mean of per-task values, those differences d
    // and the affine map's slope (the randomization keeps each task's candidates, so the map is fixed there).
    const plans = metrics.map((m) => {
      const observed = valuesB[m.key]! - valuesA[m.key]!;
      const form = sumForm(m);
      const fn = perTask(form);
      const d = fn ? Float64Array.from({ length: n }, (_, i) => fn(B.realistic[i]!) - fn(A.realistic[i]!)) : null;
      const scale = d ? observed / (d.reduce((x, y) => x + y, 0) / n || 1) : 1;
      const flips = d !== null && Number.isFinite(scale) && d.some((x) => x !== 0);
      // A plain mean (MRR, MR, Hits@k: no expectation in it) is also resampled as a mean of d; adjusted forms are not,
      // as their map moves with the resampled tasks' candidates.
      const plain = d !== null && !(m instanceof DerivedMetric);
      return {
        m,
        observed,
        d,
        scale,
        flips,
        plain,
        form,
        // Where each replicate's value comes from: the core's sums (and medians), or the metric recomputed in
        // JavaScript (the spread metrics, and bootstraps whose coefficients are not sums over the tasks).
        swapColumns: [] as number[],
        drawColumns: [] as number[],
        recount: !flips && form === null,
        resample: !plain && (form === null || (!form.fixed && form.taskMoments === null)),
        extreme: 0,
        tol: 1e-12 * Math.max(1, Math.abs(observed)),
        diffs: new Float64Array(samples),
      };
    });
    const swapSet = new ColumnSet(n);
    const drawSet = new ColumnSet(n);
    // Per quantity: both runs' per-task values, their totals, and the change of a task's value when swapped.
    const quantities = new Map<string, { a: Float64Array; b: Float64Array; totalA: number; totalB: number }>();
    const quantity = (f: SumForm) => {
      const name = `${f.quantity}:${f.k}`;
      let q = quantities.get(name);
      if (!q) {
        const a = Float64Array.from(A.realistic, f.perTask);
        const b = Float64Array.from(B.realistic, f.perTask);
        quantities.set(name, (q = { a, b, totalA: sumOf(a), totalB: sumOf(b) }));
      }
      return { name, ...q };
    };
    let swapMedians = false;
    let drawMedians = false;
    const totals = plans.map(() => [0, 0]);
    plans.forEach((q, p) => {
      const f = q.form;
      if (q.flips) {
        // The sign-flipped sum of d is sum(d) - 2 x (the swapped tasks' d).
        q.swapColumns = [swapSet.add(`d:${f!.quantity}:${f!.k}`, () => q.d!)];
        totals[p] = [sumOf(q.d!), 0];
      } else if (!q.recount) {
        if (f!.quantity === "median") swapMedians = true;
        else {
          // Run a's total with the swapped tasks' values taken from b: total(a) + sum over them of b - a; b's: total(b) minus that.
          const v = quantity(f!);
          q.swapColumns = [swapSet.add(`swap:${v.name}`, () => v.b.map((x, i) => x - v.a[i]!))];
          totals[p] = [v.totalA, v.totalB];
        }
      }
      if (q.plain) {
        q.drawColumns = [drawSet.add(`d:${f!.quantity}:${f!.k}`, () => q.d!)];
      } else if (!q.resample) {
        if (f!.quantity === "median") drawMedians = true;
        else if (f!.difference) {
          // Affine in the total (an adjusted or z-scored MR, MRR, Hits@k): the drawn tasks' total of b - a, the
          // column a plain mean of the same quantity sums too.
          const v = quantity(f!);
          q.drawColumns = [drawSet.add(`d:${v.name}`, () => v.b.map((x, i) => x - v.a[i]!))];
        } else {
          const v = quantity(f!);
          q.drawColumns = [drawSet.add(`a:${v.name}`, () => v.a), drawSet.add(`b:${v.name}`, () => v.b)];
        }
        if (!f!.fixed) {
          const moments = taskMoments(A.numCandidates, f!.taskMoments!);
          const name = q.m.key;
          q.drawColumns.push(drawSet.add(`e:${name}`, () => moments[0]));
          if (!Number.isNaN(moments[1][0])) q.drawColumns.push(drawSet.add(`v:${name}`, () => moments[1]));
        }
      }
    });
    const fixedCoefficients = plans.map((q) => (q.form && !q.recount ? q.form.coefficients(candidates) : []));
    const medians = swapMedians || drawMedians ? rankIndex(A.realistic, B.realistic) : null;
    const byRecount = plans.filter((q) => q.recount).map((q) => q.m);
    const byResample = plans.filter((q) => q.resample).map((q) => q.m);

    // Randomization: replicate s swaps task i's ranks when its keyed uniform is below 1/2, the same tasks for every
    // metric. A mean of per-task values needs only the sign-flipped sum of d (times the affine map); a metric with a
    // sum form, each run's total with the swapped tasks' values exchanged (or the two medians).
    const key0 = streamKey(seed, 0x5a17 + j);
    const swapColumns = swapSet.columns(swapMedians ? medians : null);
    const swapWidth = swapSet.size + (swapMedians ? 2 : 0);
    const finishSwaps = (out: Float64Array, first: number, count: number) => {
      for (let r = 0; r < count; r++) {
        const at = r * swapWidth;
        const recomputed = byRecount.length ? recount(byRecount, A, B, candidates, streamKey(key0, first + r)) : null;
        plans.forEach((q, p) => {
          let stat: number;
          const [ta, tb] = totals[p]!;
          if (q.flips) stat = ((ta! - 2 * out[at + q.swapColumns[0]!]!) / n) * q.scale;
          else if (q.recount) stat = recomputed![1][q.m.key]! - recomputed![0][q.m.key]!;
          else {
            const f = q.form!;
            const c = fixedCoefficients[p]!;
            if (f.quantity === "median") {
              stat = f.value(out[at + swapSet.size + 1]!, n, c) - f.value(out[at + swapSet.size]!, n, c);
            } else {
              const moved = out[at + q.swapColumns[0]!]!;
              stat = f.value(tb! - moved, n, c) - f.value(ta! + moved, n, c);
            }
          }
          if (Math.abs(stat) >= Math.abs(q.observed) - q.tol) q.extreme++;
        });
      }
    };
    yield* inBlocks(samples, (first, count) => {
      const out = swapWidth
        ? kernels().pairedResample(ResamplingKind.Randomization, swapColumns, key0, first, count)
        : EMPTY;
      finishSwaps(out, first, count);
      advance(count);
    });

    // Paired bootstrap of the difference: the same resampled tasks for both runs and every metric.
    const bootKey = streamKey(seed, 0xb007 + j);
    const drawColumns = drawSet.columns(drawMedians ? medians : null);
    const drawWidth = drawSet.size + (drawMedians ? 2 : 0);
    const finishDraws = (out: Float64Array, first: number, count: number) => {
      for (let r = 0; r < count; r++) {
        const s = first + r;
        const at = r * drawWidth;
        const resampled = byResample.length ? resample(byResample, A, B, streamKey(bootKey, s)) : null;
        plans.forEach((q, p) => {
          if (q.plain) {
            q.diffs[s] = out[at + q.drawColumns[0]!]! / n;
            return;
          }
          if (q.resample) {
            q.diffs[s] = resampled![1][q.m.key]! - resampled![0][q.m.key]!;
            return;
          }
          const f = q.form!;
          const cols = q.drawColumns;
          // Columns: the total of b - a (a form affine in it), else a's and b's totals (none for the median), then
          // the expectations and variances when the coefficients move with the drawn tasks' candidates.
          const m0 = f.quantity === "median" ? 0 : f.difference ? 1 : 2;
          const c = f.fixed
            ? fixedCoefficients[p]!
            : f.fromMoments(out[at + cols[m0]!]! / n, cols.length > m0 + 1 ? out[at + cols[m0 + 1]!]! / (n * n) : NaN);
          q.diffs[s] =
            f.quantity === "median"
              ? f.value(out[at + drawSet.size + 1]!, n, c) - f.value(out[at + drawSet.size]!, n, c)
              : f.difference
                ? f.difference(out[at + cols[0]!]!, n, c)
                : f.value(out[at + cols[1]!]!, n, c) - f.value(out[at + cols[0]!]!, n, c);
        });
      }
    };
    yield* inBlocks(samples, (first, count) => {
      const out = drawWidth
        ? kernels().pairedResample(ResamplingKind.Bootstrap, drawColumns, bootKey, first, count)
        : EMPTY;
      finishDraws(out, first, count);
      advance(count);
    });
    for (const q of plans) {
      const finite = yield* sortedNumbers(q.diffs);
      const tests = q.d ? pairedTests(q.d) : null;
      rows.push({
        metric: q.m.key,
        run: j,
        valueA: valuesA[q.m.key]!,
        valueB: valuesB[q.m.key]!,
        difference: q.observed,
        lower: finite.length ? quantile(finite, alpha) : NaN,
        upper: finite.length ? quantile(finite, 1 - alpha) : NaN,
        pRandomization: (1 + q.extreme) / (1 + samples),
        pAdjusted: NaN,
        pTTest: tests ? tests.pT : null,
        pWilcoxon: tests ? tests.pW : null,
        // d is of the per-task values; an affine map with a negative slope (e.g. AMRI of ranks) flips the sign.
        effectSize: tests ? (q.scale < 0 && tests.dz !== 0 ? -tests.dz : tests.dz) : null,
      });
    }
  }
  const adjusted = adjust(
    rows.map((r) => r.pRandomization),
    correction,
  );
  rows.forEach((r, i) => (r.pAdjusted = adjusted[i]!));
  return { names: named.map((r) => r.name), tasks: n, samples, seed, confidenceLevel: level, correction, rows };
}
