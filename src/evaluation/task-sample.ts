/**
 * Full-ranking metrics of a whole split from a sample of its tasks: `sampleTasks` draws a seeded simple random sample
 * of the split's tasks (a triple on one side), stratified by relation if asked; the sample is ranked against every
 * entity as usual; `estimateFull` turns its RankResults into an estimate of each mean-type metric over all tasks, with
 * a confidence interval. The estimator is the (stratified) sample mean, unbiased for a task mean; its variance is
 * the finite-population corrected one, sum_h W_h^2 (1 - n_h / T_h) s_h^2 / n_h (W_h = T_h / T, s_h^2 the stratum's
 * sample variance). A metric that is a function of two task means - the adjusted forms, m and its random expectation
 * E - is estimated by plugging in both means, its variance by the same formula applied to the linearized per-task
 * values (delta method). The interval is the normal one, estimate +- z SE. docs/evaluate.md, "Estimates from a
 * sample of tasks".
 */
import { KgrankInputError } from "../checks/errors";
import { confidenceLevelArg, cutoffs, describe, optionKeys, options, seedArg, tripleArray } from "../checks/validate";
import { normalQuantile } from "../numeric/normal";
import { streamKey, uniform01Keyed } from "../numeric/random";
import { BaseRankMetric } from "../metrics/base";
import { DEFAULT_KS, metricSelection } from "../metrics/catalogue";
import { DerivedMetric } from "../metrics/derived";
import type { RankMetric } from "../metrics/types";
import type { RankResults } from "./results";

export interface SampleTasksOptions {
  /** The evaluated split (t x 3 ids: head, relation, tail): the population is its tasks on `sides`. */
  triples: Int32Array;
  /** Tasks to draw: an integer from 2 to the population, or a fraction in (0, 1) of it (rounded up, at least 2). */
  size: number;
  /** The sides whose tasks make the population: "both" (default), "head" or "tail". */
  sides?: "both" | "head" | "tail";
  /** Seed of the draw (default 0): the same seed, triples and options give the same sample. */
  seed?: number;
  /**
   * "relation": a stratified sample, the tasks of each relation a stratum, allocated in proportion to its size (at
   * least 2 tasks from a relation that has 2, so its variance can be estimated; all of a relation that has 1).
   */
  stratify?: "relation";
}

/** One stratum of a sample: its key (the relation id, or -1 for the whole population unstratified). */
export interface SampleStratum {
  key: number;
  population: number;
  sampled: number;
}

export interface TaskSample {
  /** The sampled tasks' triples of each side (rows of `triples` in their order): rank them as usual. */
  head: Int32Array;
  tail: Int32Array;
  /** The rows of `triples` sampled on each side, ascending. */
  rows: { head: Int32Array; tail: Int32Array };
  sides: "both" | "head" | "tail";
  /** Tasks in the population and in the sample. */
  population: number;
  sampled: number;
  stratify: "relation" | null;
  strata: SampleStratum[];
}

/** A seeded simple random sample (or stratified by relation) of the tasks of `triples`, without replacement. */
export function sampleTasks(opts: SampleTasksOptions): TaskSample {
  const o = options(
    "options",
    opts,
    optionKeys<SampleTasksOptions>({ triples: 1, size: 1, sides: 1, seed: 1, stratify: 1 }),
  );
  const triples = tripleArray("triples", o.triples, 2147483647, null);
  const sides = o.sides ?? "both";
  if (sides !== "both" && sides !== "head" && sides !== "tail")
    throw new KgrankInputError("sides", `must be "both", "head" or "tail", got ${describe(sides)}`);
  const stratify = o.stratify ?? null;
  if (stratify !== null && stratify !== "relation")
    throw new KgrankInputError(
      "stratify",
      `must be "relation" (or omitted for a simple random sample), got ${describe(stratify)}`,
    );
  const seed = o.seed === undefined ? 0 : seedArg("seed", o.seed);
  const rows = triples.length / 3;
  const sideList: ("head" | "tail")[] = sides === "both" ? ["head", "tail"] : [sides];
  const population = rows * sideList.length;
  if (population < 2) throw new KgrankInputError("triples", `has ${population} task(s): a sample needs at least 2`);
  const size = sampleSize(o.size, population);

  // Task t: side sideList[floor(t / rows)], row t % rows. Strata: tasks grouped by relation, or one group.
  const keyOf = (t: number) => (stratify ? triples[3 * (t % rows) + 1]! : -1);
  const members = new Map<number, number[]>();
  for (let t = 0; t < population; t++) {
    const k = keyOf(t);
    let m = members.get(k);
    if (!m) members.set(k, (m = []));
    m.push(t);
  }
  const keys = [...members.keys()].sort((a, b) => a - b);
  const allocation = allocate(
    keys.map((k) => members.get(k)!.length),
    size,
  );
  const key = streamKey(seed, 0x5a3b1e);
  const chosen: number[] = [];
  let drawn = 0;
  const strata: SampleStratum[] = keys.map((k, h) => {
    const m = members.get(k)!;
    const n = allocation[h]!;
    // A partial Fisher-Yates shuffle of the stratum's tasks: the first n are the sample.
    for (let i = 0; i < n; i++) {
      const j = i + Math.floor(uniform01Keyed(key, drawn++) * (m.length - i));
      const tmp = m[i]!;
      m[i] = m[j]!;
      m[j] = tmp;
      chosen.push(m[i]!);
    }
    return { key: k, population: m.length, sampled: n };
  });
  chosen.sort((a, b) => a - b);
  const bySide = { head: [] as number[], tail: [] as number[] };
  for (const t of chosen) bySide[sideList[Math.floor(t / rows)]!].push(t % rows);
  const gather = (r: number[]) => {
    const out = new Int32Array(3 * r.length);
    r.forEach((row, i) => out.set(triples.subarray(3 * row, 3 * row + 3), 3 * i));
    return out;
  };
  return {
    head: gather(bySide.head),
    tail: gather(bySide.tail),
    rows: { head: Int32Array.from(bySide.head), tail: Int32Array.from(bySide.tail) },
    sides,
    population,
    sampled: chosen.length,
    stratify,
    strata,
  };
}

/** The number of tasks a `size` asks for: an integer count, or a fraction of the population (rounded up). */
function sampleSize(value: unknown, population: number): number {
  // A fraction's product is rounded up unless it is a whole number to within rounding (0.07 x 100 is 7.000000000000001).
  if (typeof value === "number" && value > 0 && value < 1)
    return Math.min(population, Math.max(2, Math.ceil(value * population * (1 - 4 * Number.EPSILON))));
  if (typeof value !== "number" || !Number.isInteger(value) || value < 2 || value > population) {
    throw new KgrankInputError(
      "size",
      `must be an integer from 2 to the ${population} tasks, or a fraction in (0, 1) of them, got ${describe(value)}`,
    );
  }
  return value;
}

/**
 * Proportional allocation of `size` over strata of the given sizes by largest remainders, then raised to 2 in a
 * stratum of 2 or more (all of a stratum of 1): the total can exceed `size` by what those minimums add.
 */
function allocate(sizes: number[], size: number): number[] {
  const total = sizes.reduce((a, b) => a + b, 0);
  if (sizes.length === 1) return [size];
  const exact = sizes.map((s) => (s * size) / total);
  const out = exact.map(Math.floor);
  let left = size - out.reduce((a, b) => a + b, 0);
  const order = exact.map((e, h) => [e - Math.floor(e), h] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (const [, h] of order) {
    if (left <= 0) break;
    out[h]!++;
    left--;
  }
  return out.map((n, h) => Math.min(sizes[h]!, Math.max(n, 2)));
}

export interface FullEstimate {
  /** The estimate of the metric over every task of the population. */
  estimate: number;
  /** Its standard error (finite-population corrected; 0 when every task was ranked). */
  standardError: number;
  lower: number;
  upper: number;
}

export interface FullEstimates {
  confidenceLevel: number;
  population: number;
  sampled: number;
  stratify: "relation" | null;
  /** Keyed `side.rank_type.metric` as RankResults.toFlatObject(); side "both" for a sample of both sides. */
  values: Record<string, FullEstimate>;
}

export interface EstimateFullOptions {
  /** Two-sided confidence level of the intervals (default 0.95). */
  confidenceLevel?: number;
  /** Cut-offs of the Hits@k estimates (default: the evaluator's, 1, 3, 5, 10). */
  ks?: number[];
}

const RANK_TYPES = ["optimistic", "realistic", "pessimistic"] as const;

/**
 * Estimates of the mean-type metrics over the whole population of `sample` from `results`, the sample's tasks ranked
 * (every task of the sample, micro weighting, nothing skipped): each metric of the default selection at `ks` whose
 * descriptor says its value is a task mean (MR, MRR and Hits@k) for each rank type, and, from realistic ranks, the
 * forms derived from it by its expectation: the adjusted indices ((m - E) / (1 - E)) and the adjusted MR (MR / E[MR]).
 */
export function estimateFull(results: RankResults, sample: TaskSample, opts: EstimateFullOptions = {}): FullEstimates {
  const o = options("options", opts, optionKeys<EstimateFullOptions>({ confidenceLevel: 1, ks: 1 }));
  const level = o.confidenceLevel === undefined ? 0.95 : confidenceLevelArg("confidenceLevel", o.confidenceLevel);
  const ks = o.ks === undefined ? [...DEFAULT_KS] : cutoffs("ks", o.ks);
  const tasks = results.tasks();
  const n = tasks.side.length;
  if (n !== sample.sampled || sample.strata.reduce((a, s) => a + s.sampled, 0) !== n) {
    throw new KgrankInputError(
      "results",
      `hold ${n} tasks, the sample ${sample.sampled}: rank every task of the sample (sample.head and sample.tail), none skipped`,
    );
  }
  if (tasks.weight.some((w) => !Number.isNaN(w)) || results.info.weighting !== "micro") {
    throw new KgrankInputError(
      "results",
      "must weigh every task alike (micro weighting, no explicit weights): the estimates are task means",
    );
  }
  // The results' tasks are the sample's, side by side (any order): a multiset of triples per side.
  for (const side of ["head", "tail"] as const) {
    const want = new Map<string, number>();
    const t = sample[side];
    for (let i = 0; i < t.length; i += 3) {
      const k = `${t[i]},${t[i + 1]},${t[i + 2]}`;
      want.set(k, (want.get(k) ?? 0) + 1);
    }
    for (let i = 0; i < n; i++) {
      if (tasks.side[i] !== side) continue;
      const k = `${tasks.head[i]},${tasks.relation[i]},${tasks.tail[i]}`;
      const left = want.get(k);
      if (!left) {
        throw new KgrankInputError(
          "results",
          `task ${i} (${side} of ${k}) is not in the sample: rank exactly sample.head and sample.tail`,
        );
      }
      want.set(k, left - 1);
    }
  }
  // Each task's stratum, checked against the sample's counts.
  const stratumOf = new Map(sample.strata.map((s, h) => [s.key, h]));
  const h = new Int32Array(n);
  const seen = new Float64Array(sample.strata.length);
  for (let i = 0; i < n; i++) {
    const k = sample.stratify ? tasks.relation[i]! : -1;
    const at = stratumOf.get(k);
    if (at === undefined)
      throw new KgrankInputError("results", `task ${i} (relation ${k}) is in no stratum of the sample`);
    h[i] = at;
    seen[at]!++;
  }
  sample.strata.forEach((s, at) => {
    if (seen[at] !== s.sampled)
      throw new KgrankInputError(
        "results",
        `hold ${seen[at]} tasks of relation ${s.key}, the sample ${s.sampled}: not this sample's ranks`,
      );
  });
  const design = new Design(sample.strata, h);
  const z = normalQuantile(1 - (1 - level) / 2);
  const scope = sample.sides;
  const values: Record<string, FullEstimate> = {};
  const put = (key: string, est: number, variance: number, range: [number, number]) => {
    const se = Math.sqrt(Math.max(0, variance));
    values[key] = {
      estimate: est,
      standardError: se,
      // Cut to the metric's range, never past the estimate (a mean of values in [0, 1] may round just above 1).
      lower: Math.min(est, Math.max(range[0], est - z * se)),
      upper: Math.max(est, Math.min(range[1], est + z * se)),
    };
  };
  const N = tasks.numCandidates;
  // The mean-type metrics of the run's default selection at these ks (a metric's descriptor says whether its value
  // is the mean of a per-task quantity), each with the forms derived from it by its expectation.
  const selection = metricSelection(null, ks);
  const means = selection.filter(
    (m): m is BaseRankMetric => m instanceof BaseRankMetric && m.perTask?.mean === true && m.closedExpectation,
  );
  const derivedFrom = (m: RankMetric) =>
    selection
      .filter((d): d is DerivedMetric => d instanceof DerivedMetric && d.base.key === m.key)
      .filter((d) => d.derivation === "reindex" || d.derivation === "expectation")
      // The adjusted index before the expectation ratio (the order the estimates have always been listed in).
      .sort((a, b) => Number(a.derivation === "expectation") - Number(b.derivation === "expectation"));
  const expectations = new Map(means.map((m) => [m.key, perTaskExpectations(m, N)]));
  for (const type of RANK_TYPES) {
    const r = tasks[type];
    for (const m of means) {
      const g = r.map(m.perTask!.of);
      const a = design.mean(g);
      put(`${scope}.${type}.${m.key}`, a, design.variance(g), bounds(m));
      if (type !== "realistic") continue;
      const e = expectations.get(m.key)!;
      const b = design.mean(e);
      for (const d of derivedFrom(m)) {
        if (d.derivation === "reindex") {
          // (a - b) / (best - b), the adjusted index; its variance by the delta method in (a, b).
          const best = (m.increasing ? m.valueRange.upper : m.valueRange.lower)!;
          const fa = 1 / (best - b);
          const fb = (a - best) / ((best - b) * (best - b));
          put(
            `${scope}.realistic.${d.key}`,
            (a - b) / (best - b),
            design.variance(g.map((x, i) => fa * x + fb * e[i]!)),
            bounds(d),
          );
        } else {
          // a / b, the expectation-normalised value (the adjusted mean rank).
          put(
            `${scope}.realistic.${d.key}`,
            a / b,
            design.variance(g.map((x, i) => x / b - (a * e[i]!) / (b * b))),
            bounds(d),
          );
        }
      }
    }
  }
  return {
    confidenceLevel: level,
    population: sample.population,
    sampled: sample.sampled,
    stratify: sample.stratify,
    values,
  };
}

/** Each task's expected value of the metric's per-task quantity under uniform ranks (its closed form, once per c). */
function perTaskExpectations(m: BaseRankMetric, numCandidates: Float64Array): Float64Array {
  const byCount = new Map<number, number>();
  return numCandidates.map((c) => {
    let v = byCount.get(c);
    if (v === undefined) byCount.set(c, (v = m.expectedValue([c])));
    return v;
  });
}

/** A metric's value range as the interval's cut ([-Infinity, Infinity] where it is unbounded). */
function bounds(m: RankMetric): [number, number] {
  return [m.valueRange.lower ?? -Infinity, m.valueRange.upper ?? Infinity];
}

/** The strata of a sample with each task's stratum: weighted means and finite-population corrected variances. */
class Design {
  private readonly weights: number[];
  constructor(
    private readonly strata: SampleStratum[],
    private readonly stratumOf: Int32Array,
  ) {
    const total = strata.reduce((a, s) => a + s.population, 0);
    this.weights = strata.map((s) => s.population / total);
  }

  private sums(v: Float64Array): { sum: Float64Array; sq: Float64Array } {
    const sum = new Float64Array(this.strata.length);
    for (let i = 0; i < v.length; i++) sum[this.stratumOf[i]!]! += v[i]!;
    const sq = new Float64Array(this.strata.length);
    for (let i = 0; i < v.length; i++) {
      const at = this.stratumOf[i]!;
      const d = v[i]! - sum[at]! / this.strata[at]!.sampled;
      sq[at]! += d * d;
    }
    return { sum, sq };
  }

  /** sum_h W_h mean_h(v). */
  mean(v: Float64Array): number {
    const { sum } = this.sums(v);
    return this.strata.reduce((a, s, at) => a + (this.weights[at]! * sum[at]!) / s.sampled, 0);
  }

  /** sum_h W_h^2 (1 - n_h / T_h) s_h^2 / n_h. */
  variance(v: Float64Array): number {
    const { sq } = this.sums(v);
    let out = 0;
    this.strata.forEach((s, at) => {
      if (s.sampled >= s.population) return;
      const w = this.weights[at]!;
      out += (w * w * (1 - s.sampled / s.population) * (sq[at]! / (s.sampled - 1))) / s.sampled;
    });
    return out;
  }
}
