/**
 * `kgrank report STATE... --output report.html` (one self-contained HTML file) and `kgrank plot NAME STATE
 * --output plot.svg` (one figure for a paper), from runs saved by `kgrank evaluate --save-state`.
 *
 * The relation-category and degree breakdowns are defined by the training triples, which a state does not hold: they
 * come from `--dataset` / `--dataset-dir`, or from the dataset name `kgrank evaluate` records in the state (bundled
 * datasets load by name; others need `--dataset-dir`). The dataset must be the run's: its entity count is checked.
 */
import * as path from "node:path";

import { KgrankInputError } from "../checks/errors";
import { RankEvaluator } from "../evaluation/evaluator";
import type { RankResults } from "../evaluation/results";
import { decodeState, encodeState, stateMeta } from "../evaluation/state";
import { type Dataset, datasetDirHoldsSplits, loadDataset } from "../io/datasets";
import { readRegularFile } from "../io/files";
import { buildReport, type ReportRun } from "../report/html";
import { PLOT_NAMES, type PlotName, plotSpec, renderSvg, TRAIN_PLOTS } from "../report/plots";

import { emit, type Out } from "../run/out";
import { Progress } from "../run/progress";

export interface ReportDatasetOptions {
  dataset?: string;
  datasetDir?: string;
}

/** A saved run's results; its bootstrap runs between event-loop turns (SIGINT is handled at once). */
async function loadState(
  file: string,
  bootstrap?: number,
  seed = 0,
): Promise<{ results: RankResults; meta: Record<string, unknown> | null }> {
  const bytes = new Uint8Array(readRegularFile(file, file));
  try {
    // Every metric, whatever --metrics the run was evaluated with: every run of a report shows the same ones (the
    // state holds the ranks, so they are computed here).
    const { header, sides } = decodeState(bytes);
    const ev = RankEvaluator.deserialize(
      header.metrics === null ? bytes : encodeState({ ...header, metrics: null }, sides),
    );
    return {
      results: await ev.finalizeAsync(bootstrap ? { bootstrap: { samples: bootstrap, seed } } : {}),
      meta: stateMeta(bytes),
    };
  } catch (e) {
    if (e instanceof KgrankInputError) throw new KgrankInputError(file, e.message.replace(/^states\[0\]: /, ""));
    throw e;
  }
}

/**
 * The training triples for a run's breakdowns, or why there are none. A dataset asked for (--dataset /
 * --dataset-dir) that cannot be loaded or does not fit the run is an error; the one recorded in the state that
 * cannot be found is a note (the report is still written).
 */
function trainingTriples(
  file: string,
  results: RankResults,
  meta: Record<string, unknown> | null,
  opts: ReportDatasetOptions,
  cache: Map<string, Dataset>,
): { train: Int32Array; dataset: string; relationLabels: readonly string[] } | { note: string } {
  const report = (meta?.report ?? null) as { dataset?: unknown } | null;
  const recorded = typeof report?.dataset === "string" ? report.dataset : null;
  const asked = opts.dataset !== undefined || opts.datasetDir !== undefined;
  // --dataset-dir without --dataset names the dataset folder itself when it holds the splits (as `kgrank evaluate
  // --dataset-dir DIR` read it: the state then records the folder's name), else the folder of the recorded dataset.
  const ownFolder =
    opts.dataset === undefined && opts.datasetDir !== undefined && datasetDirHoldsSplits(opts.datasetDir);
  const name = ownFolder ? undefined : (opts.dataset ?? recorded ?? undefined);
  if (!asked && name === undefined) {
    return {
      note:
        report && report.dataset === null
          ? "this run has no dataset (sampled scores only)"
          : "the state names no dataset: give --dataset NAME (and --dataset-dir DIR) for the training triples",
    };
  }
  const key = `${name ?? ""}\u0000${opts.datasetDir ?? ""}`;
  let ds = cache.get(key);
  if (!ds) {
    try {
      ds = loadDataset(name, { datasetDir: opts.datasetDir });
    } catch (e) {
      if (asked || !(e instanceof KgrankInputError)) throw e;
      return {
        note: `the run's dataset ${name} was not found (${e.message.replace(/^\w+: /, "")}); give --dataset-dir DIR`,
      };
    }
    cache.set(key, ds);
  }
  const info = results.info;
  const flag = opts.dataset !== undefined || recorded === null ? "--dataset" : "--dataset-dir";
  if (ds.numEntities !== info.numEntities || (info.numRelations !== null && info.numRelations > ds.numRelations)) {
    throw new KgrankInputError(
      flag,
      `${ds.name} has ${ds.numEntities} entities and ${ds.numRelations} relations, but ${path.basename(file)} was evaluated over ` +
        `${info.numEntities} entities${info.numRelations !== null ? ` and ${info.numRelations} relations` : ""}: give the dataset the run was evaluated on`,
    );
  }
  const t = results.tasks();
  if (!t.relation.some((r) => r >= 0)) return { note: "the run recorded no triples (ranks added without them)" };
  return { train: ds.splits.train, dataset: ds.name, relationLabels: ds.relationLabels };
}

async function reportRun(
  file: string,
  opts: ReportDatasetOptions & { bootstrap?: number; seed?: number },
  cache: Map<string, Dataset>,
): Promise<ReportRun> {
  const { results, meta } = await loadState(file, opts.bootstrap, opts.seed);
  const report = (meta?.report ?? null) as { relationLabels?: string[] | null } | null;
  const train = trainingTriples(file, results, meta, opts, cache);
  const fromDataset = "train" in train;
  return {
    name: path.basename(file),
    results,
    // The state holds relation labels only from --by-relation runs; the dataset has them all.
    relationLabels: report?.relationLabels ?? (fromDataset ? train.relationLabels : null),
    ...(fromDataset ? { trainTriples: train.train, dataset: train.dataset } : { breakdownNote: train.note }),
  };
}

export async function reportCommand(
  files: string[],
  opts: ReportDatasetOptions & { output?: string; samples: number; seed: number; bootstrap?: number; quiet?: boolean },
  out: Out,
): Promise<void> {
  if (files.length === 0)
    throw new KgrankInputError("FILE", "give one or more saved runs (kgrank evaluate ... --save-state FILE)");
  const cache = new Map<string, Dataset>();
  const runs: ReportRun[] = [];
  for (const f of files) runs.push(await reportRun(f, opts, cache));
  for (const r of runs) {
    if (r.breakdownNote && !opts.quiet)
      out.stderr(`kgrank report: ${r.name}: no relation-category and degree breakdowns: ${r.breakdownNote}\n`);
  }
  // A progress bar per stage on a terminal; piped, one line per stage as it ends.
  const stages = new Map<string, Progress>();
  const labels = {
    sections: `report: tables, plots and breakdowns of ${runs.length} run${runs.length > 1 ? "s" : ""}`,
    comparison: `report: comparison of ${runs.length - 1} run${runs.length > 2 ? "s" : ""} with ${runs[0]?.name}`,
  };
  let html: string;
  try {
    html = await buildReport(runs, {
      samples: opts.samples,
      seed: opts.seed,
      onProgress: (stage, done, total) => {
        let p = stages.get(stage);
        if (!p) {
          p = new Progress(labels[stage], total, { quiet: opts.quiet, line: (t) => out.stderr(t) });
          stages.set(stage, p);
        }
        p.tick();
        if (done === total) p.done();
      },
    });
  } finally {
    for (const p of stages.values()) p.stop();
  }
  emit(out, html, opts.output, opts.quiet);
}

export async function plotCommand(
  name: string,
  file: string,
  opts: ReportDatasetOptions & { output?: string; quiet?: boolean },
  out: Out,
): Promise<void> {
  if (!(PLOT_NAMES as readonly string[]).includes(name)) {
    throw new KgrankInputError("NAME", `"${name.slice(0, 40)}" is not a plot; choose ${PLOT_NAMES.join(", ")}`);
  }
  // The breakdown plots need the training triples; the per-relation one takes its labels from the dataset.
  const run = await reportRun(
    file,
    TRAIN_PLOTS.includes(name as PlotName) || name === "relations" ? opts : {},
    new Map(),
  );
  const { head, tail } = run.results.info.tasks;
  if (head + tail === 0) {
    throw new KgrankInputError(
      "NAME",
      `every plot is of head and tail tasks, and ${file} holds relation tasks only: kgrank report shows their metrics`,
    );
  }
  if (TRAIN_PLOTS.includes(name as PlotName) && !run.trainTriples) {
    throw new KgrankInputError(
      "--dataset",
      `the ${name} plot needs the run's training triples, but ${run.breakdownNote}`,
    );
  }
  emit(
    out,
    await renderSvg(
      plotSpec(name as PlotName, run.results, { relationLabels: run.relationLabels, trainTriples: run.trainTriples }),
    ),
    opts.output,
    opts.quiet,
  );
}
