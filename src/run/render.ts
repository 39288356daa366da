/**
 * The results of a run as `kgrank evaluate` prints them (table / markdown / csv / json): one renderer for evaluate,
 * merge, `--workers` and the queue's submitter, from the run's ReportInfo (saved in shard states so a merged run
 * prints the same). What is shown is decided by the view model (evaluation-view.ts); the writers here lay it out.
 */
import { csv, type Format, json, table } from "./format";
import { type EvaluationParts, evaluationView, sampledEstimatesView, type View } from "./evaluation-view";
import type { ConstrainedResults, ReportInfo } from "./report-info";
import type { RankResults } from "../evaluation/results";
import type { SampledRankEstimates } from "../evaluation/sampled-negatives";
import type { FullEstimates } from "../evaluation/task-sample";

export { evaluatorMetrics, type ReportInfo, type RunMeta } from "./report-info";

/** The results as `kgrank evaluate` prints them (table / markdown / csv / json); `kgrank merge` prints the same. */
export function renderEvaluation(
  results: RankResults,
  report: ReportInfo,
  format: Format,
  t0: number,
  estimates: FullEstimates | null = null,
  fromNegatives: EvaluationParts["fromNegatives"] = null,
  constrained: ConstrainedResults | null = null,
  screen: EvaluationParts["screen"] = null,
): string {
  return writeView(
    evaluationView({ results, report, t0, estimates, fromNegatives, constrained, screen }, format),
    format,
  );
}

/** `kgrank estimate-full`'s output (estimateFromSampledRanks' estimates as table / markdown / csv / json). */
export function renderSampledEstimates(est: SampledRankEstimates, format: Format, bootstrap: boolean): string {
  return writeView(sampledEstimatesView(est, format, bootstrap), format);
}

/** A view laid out: the JSON document, the CSV rows, or the blocks as lines with tables aligned or in markdown. */
function writeView(view: View, format: Format): string {
  if (view.kind === "document") return json(view.document);
  if (view.kind === "rows") return csv(view.header, view.rows);
  const layout = format === "markdown" ? "markdown" : "table";
  return view.blocks.map((b) => (typeof b === "string" ? b : table(layout, b.header, b.rows))).join("\n");
}
