/**
 * The results of a run as `kgrank evaluate` prints them (table / markdown / csv / json): one renderer for evaluate,
 * merge, `--workers` and the queue's submitter, from the run's ReportInfo (saved in shard states so a merged run
 * prints the same).
 */
import * as path from "node:path";

import { backendInfo } from "../backend/backend";
import type { CandidateProtocol } from "../ranking/candidate-sets";
import type { TemporalProtocol, TemporalSetting } from "../evaluation/types";
import type { RankResults } from "../evaluation/results";
import type { SampledRankEstimates } from "../evaluation/sampled-negatives";
import type { FullEstimates } from "../evaluation/task-sample";
import { metricSelection } from "../metrics/index";

import { csv, type Format, fmt, json, table } from "./format";

/** What the printed results say about the run besides the numbers; saved in shard states so merge prints the same. */
export interface ReportInfo {
  title: string;
  /** Null for dataset-free sampled ranking (--positive-scores / --negative-scores). */
  dataset: string | null;
  split: string | null;
  numEntities: number | null;
  triples: number;
  dropped: number;
  setting: string;
  scorer: string;
  metrics: string[] | null;
  ks: number[] | null;
  byRelation: boolean;
  bootstrap: number | null;
  seed: number;
  relationLabels: string[] | null;
}

/** The provenance `--save-state` writes into the state (RankEvaluator.serialize({ meta })). */
export interface RunMeta {
  kgrank: "evaluate";
  fingerprint: string;
  shard: number;
  shards: number;
  rows: [number, number];
  report: ReportInfo;
  /** --entity-shard I/N: the state holds partial counts over that entity shard. */
  entityShard?: { index: number; count: number };
  /** --constrain-candidates: this state holds the typed-candidate protocol's tasks (the state beside the run's). */
  candidates?: CandidateProtocol;
  /** --quadruples: this state holds one temporal setting's tasks (one of three beside --save-state). */
  temporal?: TemporalProtocol;
}

/** The results as `kgrank evaluate` prints them (table / markdown / csv / json); `kgrank merge` prints the same. */
export function renderEvaluation(
  results: RankResults,
  r: ReportInfo,
  format: Format,
  t0: number,
  estimates: FullEstimates | null = null,
  fromNegatives: Partial<Record<"head" | "tail" | "both", SampledRankEstimates>> | null = null,
  constrained: ConstrainedResults | null = null,
): string {
  const info = backendInfo();
  // A --metrics list keeps the sample's estimates of those metrics (every rank type), as the evaluator computes them.
  const listed = listedMetrics(r);
  estimates = estimates && listed ? selectEstimates(estimates, listed) : estimates;
  // Listed metrics a sample does not estimate (the median, z-scores, ...): named under the estimates.
  const unestimated = estimates && listed ? [...listed].filter((k) => !estimated(estimates!, k)) : [];
  const relations = r.byRelation ? results.byRelation() : null;
  const relLabel = (id: number) => r.relationLabels?.[id] ?? String(id);
  const ms = (performance.now() - t0).toFixed(0);
  // The relation side ((h, ?, t) ranked among the relations) where the run evaluated it; never part of "both".
  const sides = ["head", "tail", "both", ...(results.info.sides.includes("relation") ? ["relation"] : [])];
  if (format === "json") {
    return json({
      dataset: r.dataset,
      split: r.split,
      numEntities: r.numEntities,
      triples: r.triples,
      dropped: r.dropped,
      setting: r.setting,
      scorer: r.scorer,
      backend: { backend: info.backend, simd: info.simd, threads: info.threads, version: info.version },
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
    });
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
      for (const r of sampledRows(est))
        rowsOut.push([
          `full estimate (${r.estimator})`,
          side,
          "realistic",
          r.metric,
          r.estimate,
          undefined,
          r.lower,
          r.upper,
        ]);
    }
    return csv(header, rowsOut);
  }
  const parts = [
    `kgrank-native ${info.version}: backend ${info.backend}${info.backend !== "ts" ? `, SIMD ${info.simd}, threads ${info.threads}` : ""}`,
    "",
    r.title,
    "",
    // A typed-candidate state merged on its own (kgrank merge of the .constrained states): say so above its table.
    ...(results.info.candidates ? [constrainedTitle(results.info.candidates), ""] : []),
    // A temporal setting's results: which filter.
    ...(results.info.temporal ? [TEMPORAL_TITLES[results.info.temporal.setting], ""] : []),
    resultsTable(results, r, format),
  ];
  if (constrained)
    parts.push("", constrainedTitle(constrained.candidates), "", resultsTable(constrained.results, r, format));
  if (relations) {
    parts.push("", "Per relation (both sides, realistic ranks):", "");
    // The metrics asked for with --metrics, else a short default; MRR's random expectation beside MRR.
    const columns = r.metrics
      ? metricSelection(evaluatorMetrics(r.metrics), r.ks ?? undefined, "--metrics").map((m) => [m.key, m.key])
      : RELATION_COLUMNS;
    const header = [
      "relation",
      "tasks",
      ...columns.flatMap(([key, title]) => (key === MRR ? [title!, `${title} random E`] : [title!])),
    ];
    const rowsOut = relations.map((g) => [
      relLabel(g.relation),
      String(g.count),
      ...columns.flatMap(([key]) =>
        key === MRR
          ? [fmt(safeGet(g.results, key!)), fmt(safeExpected(g.results, key!))]
          : [fmt(safeGet(g.results, key!))],
      ),
    ]);
    parts.push(table(format, header, rowsOut));
  }
  if (estimates) parts.push("", ...estimateLines(estimates, format, r.metrics ? null : (r.ks ?? undefined)));
  if (unestimated.length > 0)
    parts.push(
      "",
      `Not estimated from a sample: ${unestimated.join(", ")} (the estimates are of MR, MRR, Hits@k and their adjusted forms).`,
    );
  for (const [side, est] of Object.entries(fromNegatives ?? {})) {
    parts.push(
      "",
      `Full-ranking estimates from the sampled negatives (${side === "both" ? "both sides" : `${side} side`}, realistic ranks):`,
    );
    parts.push("", ...sampledLines(est, format, r.bootstrap !== null));
  }
  if (fromNegatives) parts.push("", SAMPLED_NOTE);
  parts.push("", `done in ${ms} ms`);
  return parts.join("\n");
}

/** `--metrics all`: every metric of the catalogue, at every rank type (the full table). */
const ALL_METRICS = "all";

/** Whether a --metrics list asks for every metric (`--metrics all`). */
function allMetrics(metrics: readonly string[] | null | undefined): boolean {
  return metrics?.length === 1 && metrics[0]!.trim().toLowerCase() === ALL_METRICS;
}

/** The metrics an evaluator computes for a --metrics list: every one for none or `all` (undefined), else the list. */
export function evaluatorMetrics(metrics: readonly string[] | null | undefined): string[] | undefined {
  return !metrics || allMetrics(metrics) ? undefined : [...metrics];
}

/**
 * The results table: with --metrics (a list or `all`) RankResults' full table (every rank type, PyKEEN's keys);
 * without, the compact one (compactTable).
 */
function resultsTable(results: RankResults, r: ReportInfo, format: "table" | "markdown"): string {
  return r.metrics ? results.toTable({ format }) : compactTable(results, r.ks, format);
}

/**
 * The table `kgrank evaluate` prints without --metrics, read at a glance: realistic ranks only, one column per side,
 * the random expectation last; rows named as papers name them (MRR, Hits@k, MR, AMRI, z(MRR)), the keys they stand
 * for in the footer. `ks` (--ks) gives the Hits@k rows (default 1, 3, 10).
 */
function compactTable(results: RankResults, ks: number[] | null, format: "table" | "markdown"): string {
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
  // RankResults' footer (tasks, filter, weighting, "random E"): the text after its table.
  const full = results.toTable({ format });
  const footer = full.slice(full.indexOf("\n\n") + 2);
  return (
    `${table(format, header, rows)}\n\n${footer}\n` +
    `Realistic ranks (ties share the mean position). ${used.join(", ")} (PyKEEN's keys, as in --format json); ` +
    "--metrics all: every metric at every rank type (optimistic, realistic, pessimistic)."
  );
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

/** Results ranked against typed candidates (kgrank evaluate --constrain-candidates), and where the sets came from. */
export interface ConstrainedResults {
  results: RankResults;
  candidates: CandidateProtocol;
}

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
function estimateLines(e: FullEstimates, format: "table" | "markdown", compact: number[] | null | undefined): string[] {
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
    table(format, ["metric", "estimate", "lower", "upper", "std. error"], rows),
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

/** `kgrank estimate-full`'s output (estimateFromSampledRanks' estimates as table / markdown / csv / json). */
export function renderSampledEstimates(est: SampledRankEstimates, format: Format, bootstrap: boolean): string {
  const rows = sampledRows(est);
  if (format === "json") return json(est);
  if (format === "csv")
    return csv(
      ["estimator", "metric", "estimate", "lower", "upper"],
      rows.map((r) => [r.estimator, r.metric, r.estimate, r.lower, r.upper]),
    );
  return [...sampledLines(est, format, bootstrap), "", SAMPLED_NOTE].join("\n");
}

function sampledLines(est: SampledRankEstimates, format: "table" | "markdown", bootstrap: boolean): string[] {
  return [
    sampledSetting(est),
    "",
    table(
      format,
      ["estimator", "metric", "estimate", ...(bootstrap ? ["lower (95%)", "upper (95%)"] : [])],
      sampledRows(est).map((r) => [
        r.estimator,
        r.metric,
        fmt(r.estimate),
        ...(bootstrap ? [fmt(r.lower), fmt(r.upper)] : []),
      ]),
    ),
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
