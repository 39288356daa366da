/**
 * From recorded tasks to a results table: every metric per side and rank type, expectations under random ranking,
 * the mean rank width, and (optionally) bootstrap percentile intervals over tasks. Shared by finalize() and by the
 * breakdowns (per relation, relation category, degree bucket), which tabulate subsets of the same tasks.
 */
import { KgrankInputError, NoClosedFormError } from "../checks/errors";
import { quantile } from "../numeric/quantile";
// From its module, not the barrel: tsc's CommonJS re-exports are getters, and one call per draw keeps V8 from inlining.
import { streamKey, uniform01Keyed } from "../numeric/random";
import { type CandidateSet, metricValues, prepareCandidates } from "../metrics/index";
import type { Interval, RankMetric } from "../metrics/types";
import { confidenceLevelArg, describe, optionKeys, options, seedArg } from "../checks/validate";
import { RESULT_RANK_TYPES, RESULT_SIDES, type ResultRankType, type ResultSide, type ResultTable } from "./results";
import type { BootstrapOptions, IntervalTable, SidePart, SideParts } from "./types";

export type { BootstrapOptions, IntervalTable, SidePart } from "./types";
import { TaskBuffer, type TaskColumns } from "./task-buffer";

export interface Tabulated {
  values: ResultTable;
  expected: Record<ResultSide, Record<string, number>>;
  meanRankWidth: Record<ResultSide, number>;
  intervals: IntervalTable | null;
  tasks: Record<ResultSide, number>;
}

export function checkBootstrap(value: unknown): Required<BootstrapOptions> | null {
  if (value === undefined) return null;
  const o = options("bootstrap", value, optionKeys<BootstrapOptions>({ samples: 1, seed: 1, confidenceLevel: 1 }));
  const samples = o.samples ?? 1000;
  const seed = o.seed ?? 0;
  const confidenceLevel = o.confidenceLevel ?? 0.95;
  if (typeof samples !== "number" || !Number.isInteger(samples) || samples < 2 || samples > 1e6) {
    throw new KgrankInputError("bootstrap.samples", `must be an integer from 2 to 1e6, got ${describe(samples)}`);
  }
  return {
    samples,
    seed: seedArg("bootstrap.seed", seed),
    confidenceLevel: confidenceLevelArg("bootstrap.confidenceLevel", confidenceLevel),
  };
}

/** The union of the head and tail tasks (head first), with weights when either side has them. */
function bothSides(head: SidePart, tail: SidePart): SidePart {
  const buffer = new TaskBuffer();
  buffer.append(head.cols);
  buffer.append(tail.cols);
  const cols = buffer.columns();
  if (!head.weights && !tail.weights) return { cols, weights: null };
  const weights = new Float64Array(cols.optimistic.length).fill(1);
  if (head.weights) weights.set(head.weights, 0);
  if (tail.weights) weights.set(tail.weights, head.cols.optimistic.length);
  return { cols, weights };
}

/** The tasks of a part at `indices` (ascending), in that order. */
export function subsetPart(part: SidePart, indices: Uint32Array): SidePart {
  const gather = <T extends Float64Array | Int32Array>(values: T): T => {
    const out = new (values.constructor as new (n: number) => T)(indices.length);
    for (let k = 0; k < indices.length; k++) out[k] = values[indices[k]!]!;
    return out;
  };
  const c = part.cols;
  const cols: TaskColumns = {
    optimistic: gather(c.optimistic),
    pessimistic: gather(c.pessimistic),
    realistic: gather(c.realistic),
    numCandidates: gather(c.numCandidates),
    relation: gather(c.relation),
    anchor: gather(c.anchor),
    truth: gather(c.truth),
    weight: gather(c.weight),
  };
  return { cols, weights: part.weights ? gather(part.weights) : null };
}

/**
 * Metric values in one fused pass; when a metric is undefined for these tasks (e.g. Hits@k re-indexed while every
 * task has at most k candidates) it is NaN and the reason goes to `notes`, instead of failing the whole result.
 */
function valuesOrNaN(
  metrics: RankMetric[],
  ranks: Float64Array,
  candidates: CandidateSet,
  notes: string[] | null,
  where: string,
): Record<string, number> {
  try {
    return metricValues(metrics, ranks, candidates);
  } catch (e) {
    if (!(e instanceof KgrankInputError)) throw e;
  }
  const out: Record<string, number> = {};
  for (const m of metrics) {
    try {
      out[m.key] = metricValues([m], ranks, candidates)[m.key]!;
    } catch (e) {
      if (!(e instanceof KgrankInputError)) throw e;
      out[m.key] = NaN;
      notes?.push(`${where}.${m.key} is NaN: ${e.message.replace(/^[a-zA-Z]+: /, "")}`);
    }
  }
  return out;
}

const SIDE_STREAM: Record<ResultSide, number> = {
  head: 0x68656164,
  tail: 0x7461696c,
  both: 0x626f7468,
  relation: 0x72656c61,
};

function hasNaN(a: Float64Array): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== a[i]) return true;
  return false;
}

/**
 * Metrics computable for a rank type. Under weighting every metric is reported, as PyKEEN's macro evaluator does:
 * those without weight support (variance, standard deviation, count) are over the unweighted ranks.
 */
function metricsFor(metrics: RankMetric[], rt: ResultRankType): RankMetric[] {
  return metrics.filter((m) => m.supportedRankTypes.includes(rt));
}

/** A bootstrap in progress: step() draws replicates until the clock passes `until` and says whether all are done. */
export interface BootstrapRun {
  side: ResultSide;
  step(until: number): boolean;
  result(): Record<ResultRankType, Record<string, Interval>>;
}

/**
 * Bootstrap over tasks: `samples` replicates, each drawing n tasks with replacement (a seeded stream per side and
 * replicate, so results do not depend on the backend, on other sides or on how the work is sliced in time), every
 * metric recomputed on each replicate (derived metrics with the replicate's own candidate counts); percentile
 * intervals. Resumable, so finalizeAsync() can run it in slices between turns of the event loop.
 */
function bootstrapSide(
  side: ResultSide,
  part: SidePart,
  metrics: RankMetric[],
  rankTypes: ResultRankType[],
  values: ResultTable,
  opts: Required<BootstrapOptions>,
): BootstrapRun {
  const n = part.cols.optimistic.length;
  const B = opts.samples;
  const weighted = part.weights !== null;
  const draws: Record<string, Record<string, Float64Array>> = {};
  for (const rt of rankTypes) {
    draws[rt] = {};
    for (const m of metricsFor(metrics, rt)) draws[rt]![m.key] = new Float64Array(B);
  }
  const pick = new Uint32Array(n);
  const ranks = new Float64Array(n);
  const numCandidates = new Float64Array(n);
  const weights = weighted ? new Float64Array(n) : null;
  const stream = (opts.seed ^ SIDE_STREAM[side]) >>> 0;
  let b = 0;
  const replicate = () => {
    const key = streamKey(stream, b);
    for (let i = 0; i < n; i++) pick[i] = Math.floor(uniform01Keyed(key, i) * n);
    for (let i = 0; i < n; i++) numCandidates[i] = part.cols.numCandidates[pick[i]!]!;
    if (weights) for (let i = 0; i < n; i++) weights[i] = part.weights![pick[i]!]!;
    const candidates = prepareCandidates(numCandidates, weights ?? undefined);
    for (const rt of rankTypes) {
      const src = part.cols[rt];
      for (let i = 0; i < n; i++) ranks[i] = src[pick[i]!]!;
      const ms = metricsFor(metrics, rt);
      if (ms.length === 0) continue;
      const v = valuesOrNaN(ms, ranks, candidates, null, "");
      for (const m of ms) draws[rt]![m.key]![b] = v[m.key]!;
    }
    b++;
  };
  const result = () => {
    const alpha = (1 - opts.confidenceLevel) / 2;
    const out = { optimistic: {}, realistic: {}, pessimistic: {} } as Record<ResultRankType, Record<string, Interval>>;
    for (const rt of rankTypes) {
      for (const [key, arr] of Object.entries(draws[rt]!)) {
        const finite = arr.filter((x) => x === x).sort();
        const value = values[side][rt][key]!;
        out[rt][key] =
          finite.length === 0
            ? { value, lower: NaN, upper: NaN, confidenceLevel: opts.confidenceLevel }
            : {
                value,
                lower: quantile(finite, alpha),
                upper: quantile(finite, 1 - alpha),
                confidenceLevel: opts.confidenceLevel,
              };
      }
    }
    return out;
  };
  return {
    side,
    step(until) {
      while (b < B) {
        replicate();
        if (performance.now() >= until) break;
      }
      return b === B;
    },
    result,
  };
}

/**
 * Expectations that cost far more than the rest of finalize: the median's takes about half a second at 1.2 M tasks
 * (exact order-statistic law, native/core/median_moments.cpp), against tens of milliseconds for everything else. They are computed
 * on first access (results.expected(key), toMarkdown) and cached, so a finalize that never asks for them does not
 * pay for them.
 */
const LAZY_EXPECTATIONS = new Set(["median_rank"]);

function lazyExpectation(table: Record<string, number>, metric: RankMetric, candidates: CandidateSet): void {
  let cached: number | undefined;
  Object.defineProperty(table, metric.key, {
    enumerable: true,
    configurable: true,
    get() {
      if (cached === undefined) {
        try {
          cached = metric.expectedValue(candidates);
        } catch (e) {
          if (!(e instanceof KgrankInputError) && !(e instanceof NoClosedFormError)) throw e;
          cached = NaN;
        }
      }
      return cached;
    },
  });
}

/**
 * Every metric for head, tail, both (head and tail pooled) and relation, each rank type, with expectations; notes
 * collect undefined metrics. `deferBootstrap`: return the bootstrap as resumable runs (finishRun) instead of running
 * it here. `declared`: the sides the evaluator was asked for. When head and tail were declared but only one has
 * tasks, "both" would silently equal that one side; its values are NaN instead, with the reason in `notes`.
 */
export function tabulate(
  metrics: RankMetric[],
  sides: SideParts,
  notes: string[] | null,
  bootstrap: Required<BootstrapOptions> | null = null,
  declared: readonly string[] = [],
  deferBootstrap = false,
): Tabulated & { runs: BootstrapRun[] } {
  const { head, tail } = sides;
  const parts: Record<ResultSide, SidePart> = { head, tail, both: bothSides(head, tail), relation: sides.relation };
  const entityDeclared = declared.filter((d): d is "head" | "tail" => d === "head" || d === "tail");
  const values = {} as ResultTable;
  const expected = {} as Record<ResultSide, Record<string, number>>;
  const meanRankWidth = {} as Record<ResultSide, number>;
  const tasks = {} as Record<ResultSide, number>;
  const intervals = bootstrap ? ({} as IntervalTable) : null;
  const runs: BootstrapRun[] = [];
  for (const side of RESULT_SIDES) {
    values[side] = { optimistic: {}, realistic: {}, pessimistic: {} };
    expected[side] = {};
    meanRankWidth[side] = NaN;
    if (intervals) intervals[side] = { optimistic: {}, realistic: {}, pessimistic: {} };
    const { cols, weights } = parts[side];
    tasks[side] = cols.optimistic.length;
    if (cols.optimistic.length === 0) continue;
    const missing =
      side === "both" && entityDeclared.length === 2
        ? entityDeclared.find((d) => parts[d].cols.optimistic.length === 0)
        : undefined;
    if (missing) {
      for (const rt of RESULT_RANK_TYPES) {
        if (hasNaN(cols[rt])) continue;
        for (const m of metricsFor(metrics, rt)) values.both[rt][m.key] = NaN;
      }
      notes?.push(
        `both.* is NaN: sides "both" was declared but no ${missing} task was added, so "both" would be the other side alone`,
      );
      continue;
    }
    const candidates = prepareCandidates(cols.numCandidates, weights ?? undefined);
    const rankTypes: ResultRankType[] = [];
    for (const rt of RESULT_RANK_TYPES) {
      const ranks = cols[rt];
      if (hasNaN(ranks)) continue;
      const forType = metricsFor(metrics, rt);
      if (forType.length === 0) continue;
      rankTypes.push(rt);
      values[side][rt] = valuesOrNaN(forType, ranks, candidates, notes, `${side}.${rt}`);
    }
    for (const m of metrics) {
      if (!m.closedExpectation || (weights && !m.supportsWeights)) continue;
      if (LAZY_EXPECTATIONS.has(m.key) && !weights) {
        lazyExpectation(expected[side], m, candidates);
        continue;
      }
      try {
        expected[side][m.key] = m.expectedValue(candidates);
      } catch (e) {
        if (e instanceof NoClosedFormError) continue; // e.g. the weighted median: no closed form, no entry
        if (!(e instanceof KgrankInputError)) throw e;
        expected[side][m.key] = NaN;
      }
    }
    let width = 0;
    let known = 0;
    for (let i = 0; i < cols.optimistic.length; i++) {
      const d = cols.pessimistic[i]! - cols.optimistic[i]!;
      if (d === d) {
        width += d;
        known++;
      }
    }
    meanRankWidth[side] = known ? width / known : NaN;
    if (intervals && bootstrap) runs.push(bootstrapSide(side, parts[side], metrics, rankTypes, values, bootstrap));
  }
  const tabulated = { values, expected, meanRankWidth, intervals, tasks };
  if (!deferBootstrap) for (const run of runs) finishRun(tabulated, run, Infinity);
  return { ...tabulated, runs };
}

/** Runs a bootstrap slice until `until`; when the run is complete, its intervals go into the table. */
export function finishRun(t: Tabulated, run: BootstrapRun, until: number): boolean {
  if (!run.step(until)) return false;
  t.intervals![run.side] = run.result();
  return true;
}
