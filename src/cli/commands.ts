/** `kgrank metrics`, `adjust`, `expectations` and `info`. */
import { backendInfo } from "../backend/backend";
import { KgrankInputError } from "../checks/errors";
import { BUNDLED_DATASETS, type Dataset, EXTERNAL_DATASETS, loadDataset, type Split } from "../io/datasets";
import {
  expectationNormalized,
  listMetrics,
  metricSelection,
  metricValues,
  parseMetricKey,
  prepareCandidates,
  reindexed,
  zScored,
  zToPValue,
} from "../metrics/index";
import type { RankMetric } from "../metrics/types";
import { quoted } from "../text/suggest";

import { csv, type Format, fmt, fmtP, json, table } from "../run/format";
import { readNumbers } from "../run/arrays";
import { estimateFromSampledRanks, type SampledRankEstimator } from "../evaluation/sampled-negatives";
import { candidateCounts, datasetFrom } from "../run/datasets";
import { emit, type Out } from "../run/out";
import { renderSampledEstimates } from "../run/render";

export async function metricsCommand(
  opts: {
    ranks: string;
    numCandidates?: string;
    weights?: string;
    metrics?: string[];
    ks?: number[];
    format: Format;
    output?: string;
    quiet?: boolean;
  },
  out: Out,
): Promise<void> {
  const ranks = readNumbers(opts.ranks, "--ranks", true);
  const nc = opts.numCandidates ? readNumbers(opts.numCandidates, "--num-candidates", true) : undefined;
  const w = opts.weights ? readNumbers(opts.weights, "--weights") : undefined;
  if (nc && nc.length !== ranks.length)
    throw new KgrankInputError(
      "--num-candidates",
      `has ${nc.length} numbers but --ranks has ${ranks.length}: one per task`,
    );
  if (w && w.length !== ranks.length)
    throw new KgrankInputError("--weights", `has ${w.length} numbers but --ranks has ${ranks.length}: one per task`);
  let metrics = metricSelection(opts.metrics, opts.ks, "--metrics");
  const skipped: string[] = [];
  if (!opts.metrics) {
    metrics = metrics.filter((m) => {
      const keep = nc || !m.needsCandidates;
      if (!keep) skipped.push(m.key);
      return keep;
    });
  }
  const needy = nc ? [] : metrics.filter((m) => m.needsCandidates);
  if (needy.length) {
    throw new KgrankInputError(
      "--num-candidates",
      `${needy.map((m) => m.key).join(", ")} need${needy.length === 1 ? "s" : ""} the number of candidates of each task: give --num-candidates FILE`,
    );
  }
  const candidates = nc ? prepareCandidates(nc, w) : undefined;
  const values = metricValues(metrics, ranks, candidates, candidates ? undefined : w);
  const rows = metrics.map((m) => {
    let e: number | undefined;
    let sd: number | undefined;
    if (candidates && m.closedExpectation) e = m.expectedValue(candidates as never);
    if (candidates && m.closedVariance) sd = Math.sqrt(m.variance(candidates as never));
    return { metric: m.key, value: values[m.key]!, expected: e, std: sd };
  });
  let text: string;
  if (opts.format === "json") text = json({ tasks: ranks.length, weighted: Boolean(w), metrics: rows, skipped });
  else if (opts.format === "csv")
    text = csv(
      ["metric", "value", "expected", "std"],
      rows.map((r) => [r.metric, r.value, r.expected, r.std]),
    );
  else {
    text =
      `${ranks.length} ranks${nc ? " with candidate counts" : ""}${w ? ", weighted" : ""}\n\n` +
      table(
        opts.format,
        ["metric", "value", "random E", "random SD"],
        rows.map((r) => [r.metric, fmt(r.value), fmt(r.expected), fmt(r.std)]),
      ) +
      (skipped.length ? `\n\nnot computed (need --num-candidates): ${skipped.join(", ")}` : "");
  }
  emit(out, text, opts.output, opts.quiet);
}

/** `kgrank estimate-full`: the full-ranking MRR and Hits@k from ranks among K sampled negatives (estimateFromSampledRanks). */
export function estimateFullCommand(
  opts: {
    ranks: string;
    negatives: number;
    numCandidates: number;
    replacement?: boolean;
    estimators?: string[];
    gamma?: number;
    ks?: number[];
    bootstrap?: number;
    seed: number;
    format: Format;
    output?: string;
    quiet?: boolean;
  },
  out: Out,
): void {
  const ranks = readNumbers(opts.ranks, "--ranks", true);
  const est = asFlags(() =>
    estimateFromSampledRanks({
      ranks,
      numNegatives: opts.negatives,
      numCandidates: opts.numCandidates,
      replacement: Boolean(opts.replacement),
      ...(opts.estimators ? { estimators: opts.estimators as SampledRankEstimator[] } : {}),
      ...(opts.gamma !== undefined ? { gamma: opts.gamma } : {}),
      ...(opts.ks ? { ks: opts.ks } : {}),
      ...(opts.bootstrap ? { bootstrap: { samples: opts.bootstrap, seed: opts.seed, confidenceLevel: 0.95 } } : {}),
    }),
  );
  const text = renderSampledEstimates(est, opts.format, Boolean(opts.bootstrap));
  emit(out, text, opts.output, opts.quiet);
}

/** estimateFromSampledRanks' errors in the words of estimate-full's flags (errorLine maps the argument itself). */
function asFlags<T>(run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (!(e instanceof KgrankInputError)) throw e;
    const message = e.message
      .slice(e.argument.length + 2)
      .replace(/numNegatives = /g, "--negatives ")
      .replace(/numCandidates - 1/g, "--num-candidates - 1")
      .replace(/pass estimators: \[(.*)\]/, (_m, list: string) => `give --estimators ${list.replace(/[" ]/g, "")}`)
      .replace(/pass replacement: true/, "give --replacement");
    throw new KgrankInputError(e.argument, message, e.index);
  }
}

export function adjustCommand(
  opts: {
    dataset?: string;
    datasetDir?: string;
    split: Split;
    metric: string[];
    side: "head" | "tail" | "both";
    filter: string[];
    format: Format;
    output?: string;
    quiet?: boolean;
  },
  out: Out,
): void {
  if (!opts.metric?.length)
    throw new KgrankInputError(
      "--metric",
      "give at least one NAME=VALUE, e.g. --metric mrr=0.35 --metric hits@10=0.54",
    );
  const parsed = opts.metric.map((s) => {
    const m = /^\s*([^=]+?)\s*=\s*(\S+)\s*$/.exec(s);
    const v = m ? Number(m[2]) : NaN;
    if (!m || !Number.isFinite(v))
      throw new KgrankInputError("--metric", `${quoted(s)} is not NAME=VALUE with a number, e.g. mrr=0.35`);
    const key = parseMetricKey(m[1]!, "--metric");
    const metric = key.metric;
    if (key.side === "relation")
      throw new KgrankInputError(
        "--metric",
        `${quoted(s)} names side relation; this command adjusts entity-ranking values: name head, tail or both`,
      );
    if ("base" in metric)
      throw new KgrankInputError(
        "--metric",
        `${metric.key} is already adjusted; give the published base metric (e.g. mrr, hits@10, mr)`,
      );
    if (!metric.closedExpectation) {
      throw new KgrankInputError(
        "--metric",
        `${metric.key} has no closed-form expectation, so it cannot be adjusted; metrics that can: ${listMetrics()
          .filter((x) => x.closedExpectation && !("base" in x))
          .map((x) => x.key)
          .join(", ")}`,
      );
    }
    checkPublishedValue(metric, v, s);
    return { metric, value: v, side: (key.side as "head" | "tail" | "both" | null) ?? opts.side };
  });
  const ds = datasetFrom(opts);
  const c = candidateCounts(ds, opts.split, opts.filter);
  const rows = parsed.map(({ metric, value, side }) => {
    const nc = prepareCandidates(c[side]);
    const e = metric.expectedValue(nc as never);
    const sd = metric.closedVariance ? Math.sqrt(metric.variance(nc as never)) : NaN;
    const idx = reindexed(metric).adjust(value, nc as never);
    const ratio = expectationNormalized(metric).adjust(value, nc as never);
    const z = metric.closedVariance ? zScored(metric).adjust(value, nc as never) : NaN;
    return {
      metric: metric.key,
      side,
      value,
      expected: e,
      std: sd,
      adjustedIndex: idx,
      expectationRatio: ratio,
      z,
      pValue: Number.isFinite(z) ? zToPValue(z) : NaN,
    };
  });
  const tasks = c[opts.side].length;
  const sides = new Set(rows.map((r) => r.side));
  let text: string;
  if (opts.format === "json")
    text = json({ dataset: ds.name, split: opts.split, side: opts.side, setting: c.setting, tasks, metrics: rows });
  else if (opts.format === "csv") {
    text = csv(
      ["metric", "side", "value", "expected", "std", "adjusted_index", "expectation_ratio", "z", "p_value"],
      rows.map((r) => [
        r.metric,
        r.side,
        r.value,
        r.expected,
        r.std,
        r.adjustedIndex,
        r.expectationRatio,
        r.z,
        r.pValue,
      ]),
    );
  } else {
    text =
      `${ds.name} ${opts.split}, ${opts.side} side${opts.side === "both" ? "s" : ""} (${tasks} tasks), ${c.setting}\n\n` +
      table(
        opts.format,
        [
          "metric",
          ...(sides.size > 1 || !sides.has(opts.side) ? ["side"] : []),
          "value",
          "random E",
          "random SD",
          "adjusted index",
          "value / E",
          "z",
          "p (one-sided)",
        ],
        rows.map((r) => [
          r.metric,
          ...(sides.size > 1 || !sides.has(opts.side) ? [`${r.side} (${c[r.side].length})`] : []),
          fmt(r.value),
          fmt(r.expected),
          fmt(r.std),
          fmt(r.adjustedIndex),
          fmt(r.expectationRatio),
          fmt(r.z, 2),
          fmtP(r.pValue),
        ]),
      ) +
      `\n\nadjusted index = (value - E) / (best - E): 0 at random, 1 when perfect; z = (value - E) / SD, as if every rank were uniform over its candidates.`;
  }
  emit(out, text, opts.output, opts.quiet);
}

/**
 * A published value must lie in its metric's range: "hits@10=48" is a percentage as papers print it, and adjusting
 * it as a fraction would print nonsense. Where value / 100 fits, say so.
 */
function checkPublishedValue(metric: RankMetric, value: number, given: string): void {
  const r = metric.valueRange;
  const inRange = (v: number) =>
    (r.lower === null || v > r.lower || (r.lowerInclusive && v === r.lower)) &&
    (r.upper === null || v < r.upper || (r.upperInclusive && v === r.upper));
  if (inRange(value)) return;
  const span = `${r.lowerInclusive ? "[" : "("}${r.lower ?? "-inf"}, ${r.upper ?? "inf"}${r.upperInclusive ? "]" : ")"}`;
  const hint = value > 1 && inRange(value / 100) ? `; if it is a percentage, give ${metric.key}=${value / 100}` : "";
  throw new KgrankInputError(
    "--metric",
    `${quoted(given)}: ${value} is outside the range of ${metric.key}, ${span}${hint}`,
  );
}

interface ExpectationRow {
  dataset: string;
  metric: string;
  side: string;
  setting: "filtered" | "unfiltered";
  expected: number;
  variance: number | undefined;
}

function expectationRows(
  ds: Dataset,
  split: Split,
  filter: string[],
  metrics: RankMetric[],
): { rows: ExpectationRow[]; tasks: number; setting: string } {
  const filtered = candidateCounts(ds, split, filter);
  const raw = candidateCounts(ds, split, ["none"]);
  const rows: ExpectationRow[] = [];
  for (const m of metrics) {
    for (const side of ["head", "tail", "both"] as const) {
      for (const [setting, c] of [
        ["filtered", filtered],
        ["unfiltered", raw],
      ] as const) {
        const nc = prepareCandidates(c[side]);
        rows.push({
          dataset: ds.name,
          metric: m.key,
          side,
          setting,
          expected: m.expectedValue(nc as never),
          variance: m.closedVariance ? m.variance(nc as never) : undefined,
        });
      }
    }
  }
  return { rows, tasks: filtered.head.length, setting: filtered.setting };
}

export function expectationsCommand(
  opts: {
    dataset?: string;
    datasetDir?: string;
    split: Split;
    filter: string[];
    ks?: number[];
    format: Format;
    output?: string;
    quiet?: boolean;
  },
  out: Out,
): void {
  const metrics = metricSelection(null, opts.ks).filter((m) => m.closedExpectation && !("base" in m));
  // --dataset all: every bundled dataset and every external one found under --dataset-dir (PyKEEN's Zenodo table).
  const all = opts.dataset?.trim().toLowerCase() === "all";
  const datasets: Dataset[] = [];
  const missing: string[] = [];
  if (all) {
    for (const name of [...BUNDLED_DATASETS, ...EXTERNAL_DATASETS]) {
      try {
        datasets.push(
          loadDataset(name, {
            datasetDir: (BUNDLED_DATASETS as readonly string[]).includes(name) ? undefined : opts.datasetDir,
          }),
        );
      } catch (e) {
        if (!(e instanceof KgrankInputError) || e.argument !== "datasetDir") throw e;
        missing.push(name);
      }
    }
  } else {
    datasets.push(datasetFrom(opts));
  }
  const parts = datasets.map((ds) => ({ ds, ...expectationRows(ds, opts.split, opts.filter, metrics) }));
  const rows = parts.flatMap((p) => p.rows);
  let text: string;
  if (opts.format === "json") {
    const one = (p: (typeof parts)[number]) => ({
      dataset: p.ds.name,
      split: opts.split,
      numEntities: p.ds.numEntities,
      tasks: p.tasks,
      filter: p.setting,
      rows: p.rows,
    });
    text = json(all ? { datasets: parts.map(one), missing } : one(parts[0]!));
  } else if (opts.format === "csv") {
    text = csv(
      ["dataset", "metric", "side", "setting", "expected", "variance"],
      rows.map((r) => [r.dataset, r.metric, r.side, r.setting, r.expected, r.variance]),
    );
  } else {
    const sections = parts.map(({ ds, rows: dsRows, tasks, setting }) => {
      const get = (m: string, side: string, s: string) =>
        dsRows.find((r) => r.metric === m && r.side === side && r.setting === s)!;
      const body: string[][] = [];
      for (const m of metrics) {
        for (const side of ["head", "tail", "both"]) {
          const f = get(m.key, side, "filtered");
          const u = get(m.key, side, "unfiltered");
          body.push([m.key, side, fmt(f.expected, 6), fmt(f.variance, 6), fmt(u.expected, 6), fmt(u.variance, 6)]);
        }
      }
      return (
        `${ds.name} ${opts.split}: ${tasks} triples, ${ds.numEntities} entities; filtered = ${setting}\n` +
        `Expectation and variance of each metric when every rank is uniform over its candidates (closed forms).\n\n` +
        table(
          opts.format as "table" | "markdown",
          ["metric", "side", "filtered E", "filtered Var", "unfiltered E", "unfiltered Var"],
          body,
          2,
        )
      );
    });
    text =
      sections.join("\n\n") +
      (missing.length ? `\n\nnot found under the dataset directory: ${missing.join(", ")}` : "");
  }
  emit(out, text, opts.output, opts.quiet);
}

// ---- info --------------------------------------------------------------------------------------------------------

export function infoCommand(opts: { format: "table" | "json" }, out: Out): void {
  const info = backendInfo() as unknown as Record<string, unknown>;
  const all = { ...info, node: process.version, platform: `${process.platform}-${process.arch}` };
  if (opts.format === "json") out.stdout(json(all));
  // Multi-line values (a fallback reason with the loader's error, the places skipped, one per line) keep every
  // line, indented under their key.
  else
    out.stdout(
      Object.entries(all)
        .map(
          ([k, v]) =>
            `${k.padEnd(16)} ${(Array.isArray(v)
              ? v.length === 0
                ? "none"
                : v.join(v.some((x) => String(x).includes(" ")) ? "\n" : ",")
              : String(v)
            )
              .split("\n")
              .join(`\n${" ".repeat(17)}`)}`,
        )
        .join("\n") + "\n",
    );
}
