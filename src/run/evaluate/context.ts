/**
 * The run skeleton every dataset score source shares: the dataset, the evaluated rows (the split or --triples, a
 * shard of them, or a sample of tasks) and the filter.
 */
import { KgrankInputError } from "../../checks/errors";
import type { Dataset, Split } from "../../io/datasets";
import { RankEvaluator } from "../../evaluation/evaluator";
import { sampleTasks, type TaskSample } from "../../evaluation/task-sample";
import { readIdTriples } from "../arrays";
import { datasetFromAsync, filterSplits, type TaskSide } from "../datasets";
import type { Out } from "../out";
import { evaluatorMetrics } from "../render";
import { resolveShard, shardRows } from "../shard";
import { entitySides, type EvaluateOptions } from "./options";
import type { ScreenSummary } from "../evaluation-view";

export interface RunContext {
  opts: EvaluateOptions;
  out: Out;
  t0: number;
  ds: Dataset;
  evaluated: Int32Array;
  rows: number;
  /** The rows [lo, hi) this process evaluates (all without --shard). */
  lo: number;
  hi: number;
  shard: { index: number; count: number } | null;
  /** --sample-tasks: the tasks ranked instead of rows [lo, hi) on every side. */
  sample: TaskSample | null;
  /** Ranked from embeddings: what the int8 screen did (the JSON's backend.screen), set before finish. */
  screen?: ScreenSummary | null;
}

/**
 * The dataset (read from the dataset flags, unless the score source read its own: a PyTorch-BigGraph graph), the
 * evaluated triples (the split or --triples) and this process's rows of them (its shard).
 */
export async function openRun(opts: EvaluateOptions, out: Out, t0: number, dataset?: Dataset): Promise<RunContext> {
  const ds = dataset ?? (await datasetFromAsync(opts));
  const evaluated = opts.triples ? readIdTriples(opts.triples, "--triples", ds) : ds.splits[opts.split];
  const rows = evaluated.length / 3;
  if (rows === 0) {
    const lost = opts.triples ? 0 : ds.dropped[opts.split];
    throw new KgrankInputError(
      opts.triples ? "--triples" : "--split",
      `${opts.triples ?? `the ${opts.split} split of ${ds.name}`} has no triple to evaluate` +
        (lost ? `: all ${lost} have an entity or relation unseen in train and were dropped (as PyKEEN does)` : ""),
    );
  }
  const shard = opts.shard ? resolveShard(opts.shard, process.env) : null;
  const [lo, hi] = shard ? shardRows(shard.index, shard.count, rows) : [0, rows];
  const sides = entitySides(opts);
  const sample =
    opts.sampleTasks === undefined
      ? null
      : sampleFlag(() =>
          sampleTasks({
            triples: evaluated,
            size: opts.sampleTasks!,
            sides: sides.length === 2 ? "both" : sides[0]!,
            seed: opts.seed,
            ...(opts.stratify ? { stratify: opts.stratify } : {}),
          }),
        );
  return { opts, out, t0, ds, evaluated, rows, lo, hi, shard, sample };
}

/** sampleTasks' errors as the flags that gave its options. */
function sampleFlag<T>(draw: () => T): T {
  try {
    return draw();
  } catch (e) {
    if (!(e instanceof KgrankInputError)) throw e;
    const flag = { size: "--sample-tasks", stratify: "--stratify", seed: "--seed" }[e.argument] ?? "--sample-tasks";
    throw new KgrankInputError(flag, e.message.slice(e.argument.length + 2));
  }
}

/**
 * The filter of a run (none when `raw`: sampled negatives are ranked unfiltered): its splits, the triples the
 * evaluator filters by, and the setting as the results' title states it.
 */
export function runFilter(run: RunContext, raw: boolean): { splits: Split[]; triples?: Int32Array[]; setting: string } {
  const splits = raw ? [] : filterSplits(run.opts.filter, run.opts.split);
  if (splits.length === 0) return { splits, setting: "unfiltered" };
  return {
    splits,
    // The evaluated triples always filter (PyKEEN); with --triples they are those rows, not the split's file.
    triples: [...splits.map((s) => run.ds.splits[s]), ...(run.opts.triples ? [run.evaluated] : [])],
    setting: `filtered by ${splits.join("+")}`,
  };
}

/**
 * The run's evaluator: the dataset's ids, the filter's triples, the entity sides (and the relation side), the run's
 * cut-offs and metrics, and, for a model, its entity shard.
 */
export function runEvaluator(
  run: RunContext,
  filterTriples: Int32Array[] | undefined,
  sides: TaskSide[],
  relation: boolean,
  entityShard?: { index: number; count: number },
): RankEvaluator {
  const { ds, opts } = run;
  return new RankEvaluator({
    numEntities: ds.numEntities,
    numRelations: ds.numRelations,
    filterTriples,
    sides: relation ? [...sides, "relation"] : sides.length === 2 ? "both" : sides[0],
    ks: opts.ks,
    metrics: evaluatorMetrics(opts.metrics),
    ...(entityShard ? { entityShard } : {}),
  });
}
