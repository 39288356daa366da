/**
 * The view model of a run's printed results: from RankResults (with the run's ReportInfo, a sample's estimates, the
 * sampled negatives' full-ranking estimates and the typed-candidate results) to a plain object that says what is
 * shown, in the form its format's writer in run/render.ts takes: the JSON document, the CSV rows, or for table and
 * markdown the blocks (lines of text and tables, in order). Only this module reads RankResults to print them; the
 * writers lay out what the view says and branch on nothing else.
 */
import * as path from "node:path";

import { backendInfo, type ScreenKernel } from "../backend/backend";
import type { CandidateProtocol } from "../ranking/candidate-sets";
import type { TemporalSetting } from "../evaluation/types";
import type { RankResults } from "../evaluation/results";
import type { SampledRankEstimates } from "../evaluation/sampled-negatives";
import type { FullEstimates } from "../evaluation/task-sample";
import { metricSelection } from "../metrics/index";

import { type Format, fmt } from "./format";
import { type ConstrainedResults, evaluatorMetrics, type ReportInfo } from "./report-info";

/** A table before it is laid out: its header and rows of formatted cells. */
interface TableView {
  header: string[];
  rows: string[][];
}

/** One block of a table / markdown view: a line of text, or a table. */
type Block = string | TableView;

/** What is shown, in the form its format's writer takes. */
export type View =
  | { kind: "document"; document: unknown }
  | { kind: "rows"; header: string[]; rows: (string | number | undefined)[][] }
  | { kind: "blocks"; blocks: Block[] };

/** What a run's results view is made of. */
/** What the int8 screen did in a run ranked from embeddings (EmbeddingModel.screenStats and the mode asked for). */
export interface ScreenSummary {
  mode: "auto" | "int8" | "off";
  /** The screen's kernel (BackendInfo.screenKernel) where it ran, else null. */
  kernel: ScreenKernel | null;
  calls: number;
  pairs: number;
  rescored: number;
}

export interface EvaluationParts {
  results: RankResults;
  report: ReportInfo;
  /** When the run started (performance.now()), for the closing "done in" line. */
  t0: number;
  /** Ranked from embeddings: the screen's summary (JSON backend.screen). */
  screen?: ScreenSummary | null;
  estimates?: FullEstimates | null;
  fromNegatives?: Partial<Record<"head" | "tail" | "both", SampledRankEstimates>> | null;
  constrained?: ConstrainedResults | null;
}

/** The view of a run's results in `format`. */
export function evaluationView(parts: EvaluationParts, format: Format): View {
  const { results, report: r, t0 } = parts;
  const fromNegatives = parts.fromNegatives ?? null;
  const constrained = parts.constrained ?? null;
  // A --metrics list keeps the sample's estimates of those metrics (every rank type), as the evaluator computes them.
  const listed = listedMetrics(r);
  const estimates = parts.estimates && listed ? selectEstimates(parts.estimates, listed) : (parts.estimates ?? null);
  // Listed metrics a sample does not estimate (the median, z-scores, ...): named under the estimates.
  const unestimated = estimates && listed ? [...listed].filter((k) => !estimated(estimates, k)) : [];
  const relations = r.byRelation ? results.byRelation() : null;
  const relLabel = (id: number) => r.relationLabels?.[id] ?? String(id);
  const ms = (performance.now() - t0).toFixed(0);
  // The relation side ((h, ?, t) ranked among the relations) where the run evaluated it; never part of "both".
  const sides = ["head", "tail", "both", ...(results.info.sides.includes("relation") ? ["relation"] : [])];
  const info = backendInfo();
  if (format === "json") {
    return {
      kind: "document",
      document: {
        dataset: r.dataset,
        split: r.split,
        numEntities: r.numEntities,
        triples: r.triples,
        dropped: r.dropped,
        setting: r.setting,
        scorer: r.scorer,
        backend: {
          backend: info.backend,
          simd: info.simd,
          threads: info.threads,
          version: info.version,
          ...(parts.screen
            ? {
                screen: {
                  ...parts.screen,
                  rescoredFraction: parts.screen.pairs > 0 ? parts.screen.rescored / parts.screen.pairs : null,
                },
              }
            : {}),
        },
        results: results.toJSON(),
        expected: Object.fromEntries(sides.map((s) => [s, expectedTable(results, s)])),
        meanRankWidth: {
          head: nanIfMissing(() => results.meanRankWidth("head")),
          tail: nanIfMissing(() => results.meanRankWidth("tail")),
          both: results.meanRankWidth("both"),
          ...(sides.includes("relation") ? { relation: results.meanRankWidth("relation") } : {}),
        },
        intervals: results.intervals(),
        ...(estimates ? { estimates } : {}),
        ...(fromNegatives ? { fullRankingEstimates: fromNegatives } : {}),
        ...(constrained
          ? {
              constrained: {
                candidates: constrained.candidates,
                results: constrained.results.toJSON(),
                expected: Object.fromEntries(
                  ["head", "tail", "both"].map((s) => [s, expectedTable(constrained.results, s)]),
                ),
                intervals: constrained.results.intervals(),
              },
            }
          : {}),
        info: results.info,
        byRelation: relations?.map((g) => ({
          relation: relLabel(g.relation),
          relationId: g.relation,
          count: g.count,
          tasks: g.tasks,
          results: g.results.toJSON(),
        })),
      },
    };
  }
  if (format === "csv") {
    const header = ["relation", "side", "rank_type", "metric", "value", "expected", "lower", "upper"];
    const rowsOut: (string | number | undefined)[][] = [];
    const add = (rel: string, res: RankResults) => {
      const intervals = res.intervals();
      for (const [side, byType] of Object.entries(res.toJSON())) {
        for (const [rt, values] of Object.entries(byType)) {
          for (const [k, v] of Object.entries(values as Record<string, number>)) {
            const iv = intervals?.[side as "both"][rt as "realistic"][k];
            rowsOut.push([rel, side, rt, k, v, safeExpected(res, `${side}.${k}`), iv?.lower, iv?.upper]);
          }
        }
      }
    };
    add("all", results);
    for (const g of relations ?? []) add(relLabel(g.relation), g.results);
    // Ranked against typed candidates (--constrain-candidates): relation "typed candidates".
    if (constrained) add("typed candidates", constrained.results);
    // Estimates of the whole split's values from a sample: relation "full estimate", the interval as lower / upper.
    for (const [key, v] of Object.entries(estimates?.values ?? {})) {
      const [side, rt, metric] = key.split(".");
      rowsOut.push(["full estimate", side, rt, metric, v.estimate, undefined, v.lower, v.upper]);
    }
    // Full-ranking estimates from the sampled negatives: relation "full estimate (ESTIMATOR)", realistic ranks.
    for (const [side, est] of Object.entries(fromNegatives ?? {})) {
      for (const row of sampledRows(est))
        rowsOut.push([
          `full estimate (${row.estimator})`,
          side,
          "realistic",
          row.metric,
          row.estimate,
          undefined,
          row.lower,
          row.upper,
        ]);
    }
    return { kind: "rows", header, rows: rowsOut };
  }
  const blocks: Block[] = [
    `kgrank-native ${info.version}: backend ${info.backend}${info.backend !== "ts" ? `, SIMD ${info.simd}, threads ${info.threads}` : ""}`,
    "",
    r.title,
    "",
    // A typed-candidate state merged on its own (kgrank merge of the .constrained states): say so above its table.
    ...(results.info.candidates ? [constrainedTitle(results.info.candidates), ""] : []),
    // A temporal setting's results: which filter.
    ...(results.info.temporal ? [TEMPORAL_TITLES[results.info.temporal.setting], ""] : []),
    ...resultsTable(results, r),
  ];
  if (constrained)
    blocks.push("", constrainedTitle(constrained.candidates), "", ...resultsTable(constrained.results, r));
  if (relations) {
    blocks.push("", "Per relation (both sides, realistic ranks):", "");
    // The metrics asked for with --metrics, else a short default; MRR's random expectation beside MRR.
    const columns = r.metrics
      ? metricSelection(evaluatorMetrics(r.metrics), r.ks ?? undefined, "--metrics").map((m) => [m.key, m.key])
      : RELATION_COLUMNS;
    const header = [
      "relation",
      "tasks",
      ...columns.flatMap(([key, title]) => (key === MRR ? [title!, `${title} random E`] : [title!])),
    ];
    const rows = relations.map((g) => [
      relLabel(g.relation),
      String(g.count),
      ...columns.flatMap(([key]) =>
        key === MRR
          ? [fmt(safeGet(g.results, key!)), fmt(safeExpected(g.results, key!))]
          : [fmt(safeGet(g.results, key!))],
      ),
    ]);
    blocks.push({ header, rows });
  }
  if (estimates) blocks.push("", ...estimateBlocks(estimates, r.metrics ? null : (r.ks ?? undefined)));
  if (unestimated.length > 0)
    blocks.push(
      "",
      `Not estimated from a sample: ${unestimated.join(", ")} (the estimates are of MR, MRR, Hits@k and their adjusted forms).`,
    );
  for (const [side, est] of Object.entries(fromNegatives ?? {})) {
    blocks.push(
      "",
      `Full-ranking estimates from the sampled negatives (${side === "both" ? "both sides" : `${side} side`}, realistic ranks):`,
    );
    blocks.push("", ...sampledBlocks(est, r.bootstrap !== null));
  }
  if (fromNegatives) blocks.push("", SAMPLED_NOTE);
  blocks.push("", `done in ${ms} ms`);
  return { kind: "blocks", blocks };
}

/** The view of `kgrank estimate-full`'s output (estimateFromSampledRanks' estimates). */
export function sampledEstimatesView(est: SampledRankEstimates, format: Format, bootstrap: boolean): View {
  if (format === "json") return { kind: "document", document: est };
  if (format === "csv")
    return {
      kind: "rows",
      header: ["estimator", "metric", "estimate", "lower", "upper"],
      rows: sampledRows(est).map((r) => [r.estimator, r.metric, r.estimate, r.lower, r.upper]),
    };
  return { kind: "blocks", blocks: [...sampledBlocks(est, bootstrap), "", SAMPLED_NOTE] };
}

/**
 * The results table: with --metrics (a list or `all`) RankResults' full table (every rank type, PyKEEN's keys) and
 * its footer; without, the compact one (compactTable).
 */
function resultsTable(results: RankResults, r: ReportInfo): Block[] {
  if (!r.metrics) return compactTable(results, r.ks);
  const { header, rows, footer } = results.tableView(4);
  return [{ header, rows }, "", footer];
}

/**
 * The table `kgrank evaluate` prints without --metrics, read at a glance: realistic ranks only, one column per side,
 * the random expectation last; rows named as papers name them (MRR, Hits@k, MR, AMRI, z(MRR)), the keys they stand
 * for in the footer. `ks` (--ks) gives the Hits@k rows (default 1, 3, 10).
 */
function compactTable(results: RankResults, ks: number[] | null): Block[] {
  const values = results.toJSON();
  const intervals = results.intervals();
  const sides = (["head", "tail", "both", "relation"] as const).filter(
    (s) => values[s] && Object.keys(values[s].realistic).length > 0,
  );
  const relation = sides.includes("relation");
  const entity = sides.some((s) => s !== "relation");
  const rows: string[][] = [];
  const used: string[] = [];
  for (const [key, title] of compactRows(ks)) {
    if (!sides.some((s) => key in values[s]!.realistic)) continue;
    used.push(`${title} = ${key}`);
    rows.push([
      title,
      ...sides.map((s) => {
        const v = values[s]!.realistic[key];
        const iv = intervals?.[s]?.realistic[key];
        return iv && v !== undefined ? `${fmt(v)} [${fmt(iv.lower)}, ${fmt(iv.upper)}]` : fmt(v);
      }),
      ...(entity ? [fmt(safeExpected(results, `both.${key}`))] : []),
      ...(relation ? [fmt(safeExpected(results, `relation.${key}`))] : []),
    ]);
  }
  rows.push([
    "rank width (pess. - opt.)",
    ...sides.map((s) => fmt(nanIfMissing(() => results.meanRankWidth(s)))),
    ...(entity ? [""] : []),
    ...(relation ? [""] : []),
  ]);
  const header = ["metric", ...sides, ...(entity ? ["random E"] : []), ...(relation ? ["relation random E"] : [])];
  return [
    { header, rows },
    "",
    // RankResults' footer (tasks, filter, weighting, "random E").
    results.tableView(4).footer,
    `Realistic ranks (ties share the mean position). ${used.join(", ")} (PyKEEN's keys, as in --format json); ` +
      "--metrics all: every metric at every rank type (optimistic, realistic, pessimistic).",
  ];
}

/** The compact table's rows: metric key and the name users give it. */
function compactRows(ks: number[] | null): [string, string][] {
  return [
    [MRR, "MRR"],
    ...(ks ?? [1, 3, 10]).map((k): [string, string] => [`hits_at_${k}`, `Hits@${k}`]),
    ["arithmetic_mean_rank", "MR"],
    ["adjusted_arithmetic_mean_rank_index", "AMRI"],
    ["z_inverse_harmonic_mean_rank", "z(MRR)"],
  ];
}

/** How each temporal filter setting is introduced above its table. */
const TEMPORAL_TITLES: Record<TemporalSetting, string> = {
  raw: "Raw (no known fact removed):",
  static: "Static filter (every known (h, r, t) removed, whatever its time):",
  timeAware: "Time-aware filter (only the facts known at the task's own timestamp removed):",
};

/** The heading of typed-candidate results: the source in words, and the size of the sets. */
function constrainedTitle(c: CandidateProtocol): string {
  const source = c.source === "train" ? "the heads and tails each relation has in train" : path.basename(c.source);
  return (
    `Typed candidates (${source}; ${c.pairs} allowed relation-entity pairs): each head or tail task ranked against ` +
    "its relation's allowed entities and its true answer:"
  );
}

/** The metric keys of an explicit --metrics list (not `all`), or null. */
function listedMetrics(r: ReportInfo): Set<string> | null {
  const list = evaluatorMetrics(r.metrics);
  return list ? new Set(metricSelection(list, r.ks ?? undefined, "--metrics").map((m) => m.key)) : null;
}

/** Whether the estimates hold metric `key` (at some side and rank type). */
function estimated(e: FullEstimates, key: string): boolean {
  return Object.keys(e.values).some((k) => k.split(".")[2] === key);
}

/** The estimates of the listed metrics only (keys `side.rank_type.metric`). */
function selectEstimates(e: FullEstimates, keys: Set<string>): FullEstimates {
  return {
    ...e,
    values: Object.fromEntries(Object.entries(e.values).filter(([key]) => keys.has(key.split(".")[2]!))),
  };
}

/**
 * The table of full-split estimates from a sample of tasks (--sample-tasks): every estimate the run asked for
 * (`compact` null), or without --metrics the compact table's metrics at realistic ranks, named as there (`compact`:
 * the --ks cut-offs, undefined for the default).
 */
function estimateBlocks(e: FullEstimates, compact: number[] | null | undefined): Block[] {
  const level = `${+(100 * e.confidenceLevel).toFixed(6)}%`;
  const scope = Object.keys(e.values)[0]?.split(".")[0] ?? "both";
  const named: [string, string][] =
    compact === null
      ? Object.keys(e.values).map((key) => [key, key])
      : compactRows(compact ?? null)
          .map(([key, title]): [string, string] => [`${scope}.realistic.${key}`, title])
          .filter(([key]) => key in e.values);
  const rows = named.map(([key, title]) => {
    const v = e.values[key]!;
    return [title, fmt(v.estimate), fmt(v.lower), fmt(v.upper), fmt(v.standardError)];
  });
  const sides = scope === "both" ? "both sides" : `${scope} side`;
  return [
    `Estimates of the whole split's values from ${e.sampled} of its ${e.population} tasks (${e.stratify ? "stratified by relation" : "simple random sample"}), ${level} intervals (normal, finite-population corrected):`,
    "",
    { header: ["metric", "estimate", "lower", "upper", "std. error"], rows },
    ...(compact === null
      ? []
      : [
          "",
          `${sides}, realistic ranks; --metrics all: every estimate (MR, MRR, Hits@k and their adjusted forms at every rank type).`,
        ]),
  ];
}

/** The rows of sampled-negative estimates: estimator, metric, estimate and interval. */
function sampledRows(est: SampledRankEstimates) {
  return Object.entries(est.values).flatMap(([estimator, byMetric]) =>
    Object.entries(byMetric!).map(([metric, v]) => ({ estimator, metric, ...v })),
  );
}

/** What the sampled ranks were drawn from, in words: K, replacement, and N (one for all, or per task). */
function sampledSetting(est: SampledRankEstimates): string {
  const N = est.numCandidates;
  const from =
    typeof N === "number"
      ? `N - 1 = ${N - 1} other candidates`
      : `each task's N - 1 other candidates (N from ${N.min} to ${N.max}, ${N.distinct} distinct)`;
  return (
    `${est.tasks} ranks among K = ${est.numNegatives} negatives drawn ${est.replacement ? "with" : "without"} ` +
    `replacement from ${from}; minimum-bias gamma ${est.gamma}`
  );
}

/** Sampled-negative estimates as shown: what they were drawn from, then the table (intervals with a bootstrap). */
function sampledBlocks(est: SampledRankEstimates, bootstrap: boolean): Block[] {
  return [
    sampledSetting(est),
    "",
    {
      header: ["estimator", "metric", "estimate", ...(bootstrap ? ["lower (95%)", "upper (95%)"] : [])],
      rows: sampledRows(est).map((r) => [
        r.estimator,
        r.metric,
        fmt(r.estimate),
        ...(bootstrap ? [fmt(r.lower), fmt(r.upper)] : []),
      ]),
    },
  ];
}

const SAMPLED_NOTE =
  "sampled: the plain mean over the sampled ranks; minimum-mse and minimum-bias: Krichene & Rendle's " +
  'corrections under a uniform prior on the full rank (docs/evaluate.md, "Sampled negatives, corrected")';

const MRR = "inverse_harmonic_mean_rank";
/** The per-relation table's columns without --metrics: metric key and column title. */
const RELATION_COLUMNS = [
  [MRR, "MRR"],
  ["hits_at_1", "Hits@1"],
  ["hits_at_10", "Hits@10"],
  ["adjusted_arithmetic_mean_rank_index", "AMRI"],
  ["z_inverse_harmonic_mean_rank", "z-MRR"],
];

function expectedTable(r: RankResults, side: string): Record<string, number> {
  const outT: Record<string, number> = {};
  const table = r.toJSON()[side as "both"];
  if (!table) return outT;
  for (const k of Object.keys(table.realistic)) {
    const e = safeExpected(r, `${side}.${k}`);
    if (e !== undefined) outT[k] = e;
  }
  return outT;
}

function nanIfMissing(f: () => number): number {
  try {
    return f();
  } catch {
    return NaN;
  }
}

function safeGet(r: RankResults, key: string): number | undefined {
  try {
    return r.get(key);
  } catch {
    return undefined;
  }
}

function safeExpected(r: RankResults, key: string): number | undefined {
  try {
    return r.expected(key);
  } catch {
    return undefined;
  }
}
