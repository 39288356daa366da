/**
 * `kgrank report STATE... --output report.html` (one self-contained HTML file) and `kgrank plot NAME STATE
 * --output plot.svg` (one figure for a paper), from runs saved by `kgrank evaluate --save-state`.
 */
import * as path from "node:path";

import { KgrankInputError } from "../errors";
import { RankEvaluator } from "../evaluation/evaluator";
import { stateMeta } from "../evaluation/state";
import { readRegularFile } from "../io/files";
import { buildReport, type ReportRun } from "../report/html";
import { PLOT_NAMES, type PlotName, plotSpec, renderSvg } from "../report/plots";

import { emit, type Out } from "./shared";

function loadRun(file: string, bootstrap?: number, seed = 0): ReportRun {
  const bytes = new Uint8Array(readRegularFile(file, file));
  let ev: RankEvaluator;
  let meta: Record<string, unknown> | null;
  try {
    ev = RankEvaluator.deserialize(bytes);
    meta = stateMeta(bytes);
  } catch (e) {
    if (e instanceof KgrankInputError) throw new KgrankInputError(file, e.message.replace(/^states\[0\]: /, ""));
    throw e;
  }
  const report = (meta?.report ?? null) as { relationLabels?: string[] | null } | null;
  return {
    name: path.basename(file),
    results: ev.finalize(bootstrap ? { bootstrap: { samples: bootstrap, seed } } : {}),
    relationLabels: report?.relationLabels ?? null,
  };
}

export async function reportCommand(
  files: string[], opts: { output?: string; samples: number; seed: number; bootstrap?: number; quiet?: boolean }, out: Out,
): Promise<void> {
  if (files.length === 0) throw new KgrankInputError("FILE", "give one or more saved runs (kgrank evaluate ... --save-state FILE)");
  const runs = files.map((f) => loadRun(f, opts.bootstrap, opts.seed));
  const html = await buildReport(runs, { samples: opts.samples, seed: opts.seed });
  emit(out, html, opts.output, opts.quiet);
}

export async function plotCommand(name: string, file: string, opts: { output?: string; quiet?: boolean }, out: Out): Promise<void> {
  if (!(PLOT_NAMES as readonly string[]).includes(name)) {
    throw new KgrankInputError("NAME", `"${name.slice(0, 40)}" is not a plot; choose ${PLOT_NAMES.join(", ")}`);
  }
  const run = loadRun(file);
  emit(out, await renderSvg(plotSpec(name as PlotName, run.results, run.relationLabels ?? undefined)), opts.output, opts.quiet);
}
