/**
 * The `kgrank` command: evaluate, metrics, adjust, expectations, info. Parsing by commander; every user error is
 * a KgrankError (or a commander usage error) printed as one line on stderr with exit code 1; SIGINT removes any
 * half-written output file and exits 130. bin/kgrank.js calls `main()`.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";

import { Command, CommanderError, InvalidArgumentError, Option } from "commander";

import { backendInfo } from "../backend";
import { KgrankError, KgrankInputError } from "../errors";
import { RankEvaluator } from "../evaluation/evaluator";
import type { RankResults } from "../evaluation/results";
import { removePendingFiles, writeFileAtomic } from "../io/atomic";
import { BUNDLED_DATASETS, type Dataset, EXTERNAL_DATASETS, loadDataset, type Split, SPLITS } from "../io/datasets";
import { fileError, type NpyData, readNpy } from "../io/npy";
import { readNpz } from "../io/npz";
import { readSafetensors } from "../io/safetensors";
import { expectationNormalized, getMetric, listMetrics, metricValues, prepareCandidates, reindexed, zScored, zToPValue } from "../metrics/index";
import type { RankMetric } from "../metrics/types";
import { FrequencyBaseline } from "../scoring/baseline";
import { filteredCandidateCounts } from "./candidates";
import { csv, type Format, FORMATS, fmt, fmtP, json, table } from "./format";
import { Progress } from "./progress";

interface Out {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
}

const SIDES = ["head", "tail"] as const;
type TaskSide = (typeof SIDES)[number];

// ---- option parsers ----------------------------------------------------------------------------------------------

function intArg(name: string, min: number) {
  return (v: string) => {
    const n = Number(v);
    if (!/^\s*\d+\s*$/.test(v) || !Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be an integer >= ${min}, got "${v}"`);
    return n;
  };
}

function listArg(v: string): string[] {
  return v.split(",").map((s) => s.trim()).filter(Boolean);
}

function ksArg(v: string): number[] {
  return listArg(v).map((s) => {
    const n = Number(s);
    if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`--ks takes positive integers separated by commas, got "${s}"`);
    return n;
  });
}

function collect(v: string, prev: string[] = []): string[] {
  return [...prev, v];
}

const formatOption = () => new Option("--format <format>", "output format").choices(FORMATS as string[]).default("table");
const outputOption = () => new Option("-o, --output <file>", "write the output to FILE (atomically: temporary name, then rename)");
const quietOption = () => new Option("-q, --quiet", "no progress bar and no notes on stderr");

// ---- shared helpers ----------------------------------------------------------------------------------------------

function emit(out: Out, text: string, output: string | undefined, quiet: boolean | undefined): void {
  const body = text.endsWith("\n") ? text : text + "\n";
  if (output) {
    writeFileAtomic(output, body, "--output");
    if (!quiet) out.stderr(`wrote ${output}\n`);
  } else {
    out.stdout(body);
  }
}

function datasetFrom(opts: { dataset?: string; datasetDir?: string }): Dataset {
  return loadDataset(opts.dataset, { datasetDir: opts.datasetDir });
}

function splitArg(v: string): Split {
  if (v !== "valid" && v !== "test" && v !== "train") throw new InvalidArgumentError(`--split must be valid or test, got "${v}"`);
  return v;
}

/** The splits that filter: a comma list of train, valid, test, or "none". The evaluated split is always added. */
function filterSplits(list: string[], evaluated: Split): Split[] {
  if (list.length === 1 && list[0] === "none") return [];
  const out = new Set<Split>();
  for (const s of list) {
    if (!(SPLITS as readonly string[]).includes(s)) {
      throw new KgrankInputError("--filter", `"${s}" is not a split; use a comma list of train, valid, test (or "none" for raw ranks)`);
    }
    out.add(s as Split);
  }
  out.add(evaluated);
  return SPLITS.filter((s) => out.has(s));
}

/** One float array from a .npy, .npz or .safetensors file (the latter two must hold exactly one array). */
function readArray(file: string, argument: string): NpyData {
  const ext = path.extname(file).toLowerCase();
  if (ext === ".npz" || ext === ".safetensors") {
    const all = ext === ".npz" ? readNpz(file, argument) : readSafetensors(file, argument);
    const names = Object.keys(all);
    if (names.length !== 1) throw new KgrankInputError(argument, `${file} holds ${names.length} arrays (${names.join(", ")}); save exactly one`);
    return all[names[0]!]!;
  }
  return readNpy(file, argument);
}

/** Evaluated triples as ids (rows x 3, integer .npy), e.g. PyKEEN's `mapped_triples` in the order of its score rows. */
function readIdTriples(file: string, argument: string, ds: Dataset): Int32Array {
  const a = readArray(file, argument);
  if (!/^[iub]/.test(a.dtype)) throw new KgrankInputError(argument, `dtype ${a.dtype} is not an integer type: save id triples as int32 or int64`);
  expectShape(a, [-1, 3], argument, "one (head, relation, tail) id row per score row");
  const out = new Int32Array(a.data.length);
  for (let i = 0; i < out.length; i++) {
    const v = a.data[i]!;
    const bound = i % 3 === 1 ? ds.numRelations : ds.numEntities;
    if (v < 0 || v >= bound) {
      throw new KgrankInputError(argument, `row ${Math.floor(i / 3)}: ${i % 3 === 1 ? "relation" : "entity"} id ${v} is outside [0, ${bound}) of ${ds.name}'s training ids`);
    }
    out[i] = v;
  }
  return out;
}

function floatScores(a: NpyData, argument: string): Float32Array | Float64Array {
  if (a.data instanceof Float32Array || a.data instanceof Float64Array) {
    if (a.dtype === "f2" || a.dtype === "f4" || a.dtype === "f8") return a.data;
  }
  throw new KgrankInputError(argument, `dtype ${a.dtype} is not a float type: save scores as float32 or float64 (numpy: scores.astype("float32"))`);
}

function expectShape(a: NpyData, want: number[], argument: string, what: string): void {
  const ok = a.shape.length === want.length && a.shape.every((d, i) => want[i] === -1 || d === want[i]);
  if (!ok) {
    throw new KgrankInputError(
      argument,
      `shape (${a.shape.join(", ")}) does not match (${want.map((d) => (d === -1 ? "K" : d)).join(", ")}): ${what}`,
    );
  }
}

// ---- evaluate ----------------------------------------------------------------------------------------------------

interface EvaluateOptions {
  dataset?: string;
  datasetDir?: string;
  split: Split;
  scoresHead?: string;
  scoresTail?: string;
  triples?: string;
  negativesHead?: string;
  negativesTail?: string;
  filter: string[];
  metrics?: string[];
  ks?: number[];
  format: Format;
  output?: string;
  byRelation?: boolean;
  bootstrap?: number;
  seed: number;
  quiet?: boolean;
}

/** Lets signal handlers and the progress bar run between batches (the fallback's promises resolve without it). */
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

const ROWS_PER_BATCH = (n: number) => Math.max(1, Math.min(4096, Math.floor((16 << 20) / n)));

async function evaluate(opts: EvaluateOptions, out: Out): Promise<void> {
  const t0 = performance.now();
  const ds = datasetFrom(opts);
  const evaluated = opts.triples ? readIdTriples(opts.triples, "--triples", ds) : ds.splits[opts.split];
  const rows = evaluated.length / 3;
  const n = ds.numEntities;
  const given = { head: opts.scoresHead, tail: opts.scoresTail };
  const negatives = { head: opts.negativesHead, tail: opts.negativesTail };
  for (const side of SIDES) {
    if (negatives[side] && !given[side]) {
      throw new KgrankInputError(`--negatives-${side}`, `needs --scores-${side} with the true triples' scores (one per row of the ${opts.split} split)`);
    }
  }
  const fromFiles = Boolean(given.head || given.tail);
  const sides: TaskSide[] = fromFiles ? SIDES.filter((s) => given[s]) : [...SIDES];
  const sampled = sides.some((s) => negatives[s]);
  if (sampled && sides.some((s) => !negatives[s])) {
    throw new KgrankInputError("--negatives-head", "give negatives for every side with scores, or for none (sampled and full ranking do not mix)");
  }
  const filterSet = sampled ? [] : filterSplits(opts.filter, opts.split);
  const evaluator = new RankEvaluator({
    numEntities: n,
    numRelations: ds.numRelations,
    // The evaluated triples always filter (PyKEEN); with --triples they are those rows, not the split's file.
    filterTriples: filterSet.length ? [...filterSet.map((s) => ds.splits[s]), ...(opts.triples ? [evaluated] : [])] : undefined,
    sides: sides.length === 2 ? "both" : sides[0],
    ks: opts.ks,
    metrics: opts.metrics,
  });
  const scorer = fromFiles ? null : new FrequencyBaseline(ds.splits.train, n, ds.numRelations);
  const batch = ROWS_PER_BATCH(n);
  const progress = new Progress(`evaluating ${ds.name} ${opts.split}`, rows * sides.length, { quiet: opts.quiet });
  try {
    for (const side of sides) {
      if (scorer) {
        for (let start = 0; start < rows; start += batch) {
          const triples = evaluated.subarray(3 * start, 3 * Math.min(rows, start + batch));
          await evaluator.add({ triples, side, scores: scorer.scoreBatch(triples, side) });
          progress.tick(triples.length / 3);
          await yieldToEventLoop();
        }
        continue;
      }
      const arg = `--scores-${side}`;
      const a = readArray(given[side]!, arg);
      const scores = floatScores(a, arg);
      if (negatives[side]) {
        if (!(a.shape.length === 1 || (a.shape.length === 2 && a.shape[1] === 1))) expectShape(a, [rows], arg, `one true score per ${opts.split} triple`);
        if (a.shape[0] !== rows) expectShape(a, [rows], arg, `one true score per ${opts.split} triple (${rows} after dropping unseen labels)`);
        const negArg = `--negatives-${side}`;
        const neg = readArray(negatives[side]!, negArg);
        expectShape(neg, [rows, -1], negArg, `one row of K negative scores per ${opts.split} triple`);
        await evaluator.addSampled({ side, triples: evaluated, positiveScores: scores, negativeScores: floatScores(neg, negArg) });
        progress.tick(rows);
        continue;
      }
      expectShape(a, [rows, n], arg, `rows in the order of the ${opts.split} split's ${rows} triples, columns in entity id order (${n} entities)`);
      for (let start = 0; start < rows; start += batch) {
        const end = Math.min(rows, start + batch);
        await evaluator.add({ triples: evaluated.subarray(3 * start, 3 * end), side, scores: scores.subarray(start * n, end * n) });
        progress.tick(end - start);
        await yieldToEventLoop();
      }
    }
  } finally {
    progress.stop();
  }
  const results = evaluator.finalize(opts.bootstrap ? { bootstrap: { samples: opts.bootstrap, seed: opts.seed, confidenceLevel: 0.95 } } : {});
  const info = backendInfo();
  const scorerName = fromFiles ? (sampled ? "sampled scores from files" : "scores from files") : "frequency baseline";
  const setting = sampled ? "sampled negatives (unfiltered)" : filterSet.length ? `filtered by ${filterSet.join("+")}` : "unfiltered";
  const dropped = opts.triples ? 0 : ds.dropped[opts.split];
  const title =
    `${ds.name} ${opts.triples ? `triples from ${path.basename(opts.triples)}` : opts.split} (${rows} triples x ${n} entities${dropped ? `; ${dropped} with labels unseen in train dropped` : ""}), ` +
    `${setting}, ${scorerName}`;
  const relations = opts.byRelation ? results.byRelation() : null;
  const relLabel = (r: number) => ds.relationLabels[r] ?? String(r);
  const ms = (performance.now() - t0).toFixed(0);
  let text: string;
  if (opts.format === "json") {
    text = json({
      dataset: ds.name, split: opts.split, numEntities: n, triples: rows, dropped, setting, scorer: scorerName,
      backend: { backend: info.backend, simd: info.simd, threads: info.threads, version: info.version },
      results: results.toJSON(),
      expected: Object.fromEntries(["head", "tail", "both"].map((s) => [s, expectedTable(results, s)])),
      meanRankWidth: { head: nanIfMissing(() => results.meanRankWidth("head")), tail: nanIfMissing(() => results.meanRankWidth("tail")), both: results.meanRankWidth("both") },
      intervals: results.intervals(),
      info: results.info,
      byRelation: relations?.map((g) => ({ relation: relLabel(g.relation), relationId: g.relation, count: g.count, tasks: g.tasks, results: g.results.toJSON() })),
    });
  } else if (opts.format === "csv") {
    const header = ["relation", "side", "rank_type", "metric", "value", "expected", "lower", "upper"];
    const rowsOut: (string | number | undefined)[][] = [];
    const add = (rel: string, r: RankResults) => {
      const intervals = r.intervals();
      for (const [side, byType] of Object.entries(r.toJSON())) {
        for (const [rt, values] of Object.entries(byType)) {
          for (const [k, v] of Object.entries(values as Record<string, number>)) {
            const iv = intervals?.[side as "both"][rt as "realistic"][k];
            rowsOut.push([rel, side, rt, k, v, safeExpected(r, `${side}.${k}`), iv?.lower, iv?.upper]);
          }
        }
      }
    };
    add("all", results);
    for (const g of relations ?? []) add(relLabel(g.relation), g.results);
    text = csv(header, rowsOut);
  } else {
    const parts = [
      `kgrank-native ${info.version}: backend ${info.backend}${info.backend === "native" ? `, SIMD ${info.simd}, threads ${info.threads}` : ""}`,
      "",
      title,
      "",
      opts.format === "markdown" ? results.toMarkdown() : resultsTable(results),
    ];
    if (relations) {
      parts.push("", "Per relation (both sides, realistic ranks):", "");
      const header = ["relation", "tasks", "MRR", "MRR random E", "Hits@1", "Hits@10", "AMRI", "z-MRR"];
      const rowsOut = relations.map((g) => [
        relLabel(g.relation), String(g.count), fmt(safeGet(g.results, "mrr")), fmt(safeExpected(g.results, "mrr")), fmt(safeGet(g.results, "hits@1")),
        fmt(safeGet(g.results, "hits@10")), fmt(safeGet(g.results, "amri")), fmt(safeGet(g.results, "zmrr")),
      ]);
      parts.push(table(opts.format, header, rowsOut));
    }
    parts.push("", `done in ${ms} ms`);
    text = parts.join("\n");
  }
  emit(out, text, opts.output, opts.quiet);
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

/** The plain-text version of RankResults.toMarkdown(): a row per metric, a column per side and rank type. */
function resultsTable(r: RankResults): string {
  const data = r.toJSON();
  const keys: string[] = [];
  for (const side of ["both", "head", "tail"] as const) {
    for (const rt of ["realistic", "optimistic", "pessimistic"] as const) {
      for (const k of Object.keys(data[side]?.[rt] ?? {})) if (!keys.includes(k)) keys.push(k);
    }
  }
  const cols: [string, string][] = [];
  for (const side of ["head", "tail", "both"]) for (const rt of ["optimistic", "realistic", "pessimistic"]) cols.push([side, rt]);
  const present = cols.filter(([s]) => Object.keys((data as Record<string, Record<string, object>>)[s]?.realistic ?? {}).length > 0);
  const header = ["metric", ...present.map(([s, rt]) => `${s} ${rt.slice(0, 4)}.`), "random E"];
  const intervals = r.intervals();
  const rows = keys.map((k) => [
    k,
    ...present.map(([s, rt]) => {
      const v = (data as Record<string, Record<string, Record<string, number>>>)[s]?.[rt]?.[k];
      const iv = intervals?.[s as "both"][rt as "realistic"][k];
      return iv && v !== undefined ? `${fmt(v)} [${fmt(iv.lower)}, ${fmt(iv.upper)}]` : fmt(v);
    }),
    fmt(safeExpected(r, `both.${k}`)),
  ]);
  const widths = present.map(([s]) => fmt(nanIfMissing(() => r.meanRankWidth(s as "both"))));
  rows.push(["mean_rank_width (pess. - opt.)", ...present.map(([, rt], i) => (rt === "optimistic" ? widths[i]! : "")), ""]);
  const i = r.info;
  return (
    table("table", header, rows) +
    `\n\n${i.tasks.head} head and ${i.tasks.tail} tail tasks; ${i.filtered ? `filtered by ${i.filterTriples.reduce((a, b) => a + b, 0)} known triples` : "unfiltered"}; ` +
    `${i.weighting} weighting. "random E": expectation under uniformly random ranking (both sides); empty where no closed form.` +
    (intervals ? " Brackets: 95% bootstrap percentile intervals over tasks." : "")
  );
}

// ---- metrics -----------------------------------------------------------------------------------------------------

/** Numbers from .npy, .txt (one per line) or .json (an array). */
function readNumbers(file: string, argument: string): Float64Array {
  const ext = path.extname(file).toLowerCase();
  if (ext === ".npy" || ext === ".npz" || ext === ".safetensors") {
    const a = readArray(file, argument);
    if (a.shape.length > 2 || (a.shape.length === 2 && a.shape[1] !== 1)) {
      throw new KgrankInputError(argument, `shape (${a.shape.join(", ")}) is not a vector: save one number per task (shape (n,))`);
    }
    return Float64Array.from(a.data);
  }
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw fileError(argument, file, e);
  }
  if (ext === ".json") {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      throw new KgrankInputError(argument, `${file} is not valid JSON (${(e as Error).message})`);
    }
    if (!Array.isArray(v) || v.some((x) => typeof x !== "number")) throw new KgrankInputError(argument, `${file} must hold a JSON array of numbers`);
    return Float64Array.from(v as number[]);
  }
  const outN: number[] = [];
  text.replace(/^\uFEFF/, "").split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (line === "") return;
    const v = Number(line);
    if (!Number.isFinite(v)) throw new KgrankInputError(argument, `${file} line ${i + 1}: "${line.slice(0, 40)}" is not a number (one rank per line)`);
    outN.push(v);
  });
  if (outN.length === 0) throw new KgrankInputError(argument, `${file} holds no numbers`);
  return Float64Array.from(outN);
}

function metricSet(ks: number[] | undefined, names: string[] | undefined): RankMetric[] {
  if (names?.length) return names.map((m) => getMetric(m));
  const all = listMetrics().filter((m) => !("k" in m && (m as { k?: number }).k !== undefined) || !ks);
  if (ks) {
    for (const k of ks) for (const q of [`hits@${k}`, `adjusted_hits_at_${k}`, `z_hits_at_${k}`]) all.push(getMetric(q));
  }
  return all;
}

async function metricsCommand(
  opts: { ranks: string; numCandidates?: string; weights?: string; metrics?: string[]; ks?: number[]; format: Format; output?: string; quiet?: boolean },
  out: Out,
): Promise<void> {
  const ranks = readNumbers(opts.ranks, "--ranks");
  const nc = opts.numCandidates ? readNumbers(opts.numCandidates, "--num-candidates") : undefined;
  const w = opts.weights ? readNumbers(opts.weights, "--weights") : undefined;
  if (nc && nc.length !== ranks.length) throw new KgrankInputError("--num-candidates", `has ${nc.length} numbers but --ranks has ${ranks.length}: one per task`);
  if (w && w.length !== ranks.length) throw new KgrankInputError("--weights", `has ${w.length} numbers but --ranks has ${ranks.length}: one per task`);
  let metrics = metricSet(opts.ks, opts.metrics);
  const skipped: string[] = [];
  if (!opts.metrics) {
    metrics = metrics.filter((m) => {
      const keep = (nc || !m.needsCandidates) && (!w || m.supportsWeights);
      if (!keep) skipped.push(m.key);
      return keep;
    });
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
  else if (opts.format === "csv") text = csv(["metric", "value", "expected", "std"], rows.map((r) => [r.metric, r.value, r.expected, r.std]));
  else {
    text =
      `${ranks.length} ranks${nc ? " with candidate counts" : ""}${w ? ", weighted" : ""}\n\n` +
      table(opts.format, ["metric", "value", "random E", "random SD"], rows.map((r) => [r.metric, fmt(r.value), fmt(r.expected), fmt(r.std)])) +
      (skipped.length ? `\n\nnot computed (${nc ? "no weight support" : "need --num-candidates"}): ${skipped.join(", ")}` : "");
  }
  emit(out, text, opts.output, opts.quiet);
}

// ---- adjust and expectations -------------------------------------------------------------------------------------

function candidateCounts(ds: Dataset, split: Split, filter: string[]): { head: Float64Array; tail: Float64Array; both: Float64Array; setting: string } {
  const evaluated = ds.splits[split];
  const fs = filterSplits(filter, split);
  const c = fs.length
    ? filteredCandidateCounts(evaluated, fs.map((s) => ds.splits[s]), ds.numEntities, ds.numRelations)
    : { head: new Float64Array(evaluated.length / 3).fill(ds.numEntities), tail: new Float64Array(evaluated.length / 3).fill(ds.numEntities) };
  const both = new Float64Array(c.head.length * 2);
  both.set(c.head, 0);
  both.set(c.tail, c.head.length);
  return { ...c, both, setting: fs.length ? `filtered by ${fs.join("+")}` : "unfiltered" };
}

function adjustCommand(
  opts: { dataset?: string; datasetDir?: string; split: Split; metric: string[]; side: "head" | "tail" | "both"; filter: string[]; format: Format; output?: string; quiet?: boolean },
  out: Out,
): void {
  if (!opts.metric?.length) throw new KgrankInputError("--metric", "give at least one NAME=VALUE, e.g. --metric mrr=0.35 --metric hits@10=0.54");
  const parsed = opts.metric.map((s) => {
    const m = /^\s*([^=]+?)\s*=\s*(\S+)\s*$/.exec(s);
    const v = m ? Number(m[2]) : NaN;
    if (!m || !Number.isFinite(v)) throw new KgrankInputError("--metric", `"${s}" is not NAME=VALUE with a number, e.g. mrr=0.35`);
    const metric = getMetric(m[1]!);
    if ("base" in metric) throw new KgrankInputError("--metric", `${metric.key} is already adjusted; give the published base metric (e.g. mrr, hits@10, mr)`);
    if (!metric.closedExpectation) {
      throw new KgrankInputError("--metric", `${metric.key} has no closed-form expectation, so it cannot be adjusted; metrics that can: ${listMetrics().filter((x) => x.closedExpectation && !("base" in x)).map((x) => x.key).join(", ")}`);
    }
    return { metric, value: v };
  });
  const ds = datasetFrom(opts);
  const c = candidateCounts(ds, opts.split, opts.filter);
  const nc = prepareCandidates(c[opts.side]);
  const rows = parsed.map(({ metric, value }) => {
    const e = metric.expectedValue(nc as never);
    const sd = metric.closedVariance ? Math.sqrt(metric.variance(nc as never)) : NaN;
    const idx = reindexed(metric).adjust(value, nc as never);
    const ratio = expectationNormalized(metric).adjust(value, nc as never);
    const z = metric.closedVariance ? zScored(metric).adjust(value, nc as never) : NaN;
    return { metric: metric.key, value, expected: e, std: sd, adjustedIndex: idx, expectationRatio: ratio, z, pValue: Number.isFinite(z) ? zToPValue(z) : NaN };
  });
  const tasks = c[opts.side].length;
  let text: string;
  if (opts.format === "json") text = json({ dataset: ds.name, split: opts.split, side: opts.side, setting: c.setting, tasks, metrics: rows });
  else if (opts.format === "csv") {
    text = csv(["metric", "value", "expected", "std", "adjusted_index", "expectation_ratio", "z", "p_value"], rows.map((r) => [r.metric, r.value, r.expected, r.std, r.adjustedIndex, r.expectationRatio, r.z, r.pValue]));
  } else {
    text =
      `${ds.name} ${opts.split}, ${opts.side} side${opts.side === "both" ? "s" : ""} (${tasks} tasks), ${c.setting}\n\n` +
      table(opts.format, ["metric", "value", "random E", "random SD", "adjusted index", "value / E", "z", "p (one-sided)"], rows.map((r) => [
        r.metric, fmt(r.value), fmt(r.expected), fmt(r.std), fmt(r.adjustedIndex), fmt(r.expectationRatio), fmt(r.z, 2), fmtP(r.pValue),
      ])) +
      `\n\nadjusted index = (value - E) / (best - E): 0 at random, 1 when perfect; z = (value - E) / SD, as if every rank were uniform over its candidates.`;
  }
  emit(out, text, opts.output, opts.quiet);
}

interface ExpectationRow {
  dataset: string;
  metric: string;
  side: string;
  setting: "filtered" | "unfiltered";
  expected: number;
  variance: number | undefined;
}

function expectationRows(ds: Dataset, split: Split, filter: string[], metrics: RankMetric[]): { rows: ExpectationRow[]; tasks: number; setting: string } {
  const filtered = candidateCounts(ds, split, filter);
  const raw = candidateCounts(ds, split, ["none"]);
  const rows: ExpectationRow[] = [];
  for (const m of metrics) {
    for (const side of ["head", "tail", "both"] as const) {
      for (const [setting, c] of [["filtered", filtered], ["unfiltered", raw]] as const) {
        const nc = prepareCandidates(c[side]);
        rows.push({ dataset: ds.name, metric: m.key, side, setting, expected: m.expectedValue(nc as never), variance: m.closedVariance ? m.variance(nc as never) : undefined });
      }
    }
  }
  return { rows, tasks: filtered.head.length, setting: filtered.setting };
}

function expectationsCommand(
  opts: { dataset?: string; datasetDir?: string; split: Split; filter: string[]; ks?: number[]; format: Format; output?: string; quiet?: boolean },
  out: Out,
): void {
  const metrics = metricSet(opts.ks, undefined).filter((m) => m.closedExpectation && !("base" in m));
  // --dataset all: every bundled dataset and every external one found under --dataset-dir (PyKEEN's Zenodo table).
  const all = opts.dataset?.trim().toLowerCase() === "all";
  const datasets: Dataset[] = [];
  const missing: string[] = [];
  if (all) {
    for (const name of [...BUNDLED_DATASETS, ...EXTERNAL_DATASETS]) {
      try {
        datasets.push(loadDataset(name, { datasetDir: (BUNDLED_DATASETS as readonly string[]).includes(name) ? undefined : opts.datasetDir }));
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
    const one = (p: (typeof parts)[number]) => ({ dataset: p.ds.name, split: opts.split, numEntities: p.ds.numEntities, tasks: p.tasks, filter: p.setting, rows: p.rows });
    text = json(all ? { datasets: parts.map(one), missing } : one(parts[0]!));
  } else if (opts.format === "csv") {
    text = csv(["dataset", "metric", "side", "setting", "expected", "variance"], rows.map((r) => [r.dataset, r.metric, r.side, r.setting, r.expected, r.variance]));
  } else {
    const sections = parts.map(({ ds, rows: dsRows, tasks, setting }) => {
      const get = (m: string, side: string, s: string) => dsRows.find((r) => r.metric === m && r.side === side && r.setting === s)!;
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
        table(opts.format as "table" | "markdown", ["metric", "side", "filtered E", "filtered Var", "unfiltered E", "unfiltered Var"], body, 2)
      );
    });
    text = sections.join("\n\n") + (missing.length ? `\n\nnot found under the dataset directory: ${missing.join(", ")}` : "");
  }
  emit(out, text, opts.output, opts.quiet);
}

// ---- info --------------------------------------------------------------------------------------------------------

function infoCommand(opts: { format: "table" | "json" }, out: Out): void {
  const info = backendInfo() as unknown as Record<string, unknown>;
  const all = { ...info, node: process.version, platform: `${process.platform}-${process.arch}` };
  if (opts.format === "json") out.stdout(json(all));
  else out.stdout(Object.entries(all).map(([k, v]) => `${k.padEnd(16)} ${Array.isArray(v) ? v.join(",") : String(v).split("\n")[0]}`).join("\n") + "\n");
}

// ---- program -----------------------------------------------------------------------------------------------------

function datasetOptions(cmd: Command, splitDefault = "test"): Command {
  return cmd
    .option("--dataset <name>", "nations, kinships, umls (bundled); fb15k-237, wn18rr, codex-s, codex-m (from --dataset-dir)")
    .option("--dataset-dir <dir>", "folder with NAME/{train,valid,test}.tsv, or one dataset's own folder (default: $KGRANK_DATASETS or ./datasets)")
    .addOption(new Option("--split <split>", "split to evaluate").argParser(splitArg).default(splitDefault))
    .option("--filter <splits>", "comma list of splits whose triples are filtered out of the candidates, or none", listArg, ["train", "valid", "test"]);
}

export function buildProgram(out: Out): Command {
  const program = new Command("kgrank")
    .description("Rank-based evaluation of knowledge-graph link prediction (PyKEEN semantics)")
    .version(backendInfoVersion(), "-V, --version")
    .showHelpAfterError(false)
    .exitOverride()
    .configureOutput({ writeOut: (s) => out.stdout(s), writeErr: (s) => out.stderr(s) });

  datasetOptions(
    program
      .command("evaluate")
      .description("rank the split's triples (both sides) and print every metric, rank type and random expectation; default: bundled Nations test with a frequency baseline"),
  )
    .option("--scores-head <file>", "head scores (.npy/.npz/.safetensors, float): rows in split order, columns in entity id order")
    .option("--scores-tail <file>", "tail scores, same layout; with --negatives-*: the true triples' scores, one per row")
    .option("--triples <file>", "the evaluated triples as ids (rows x 3 integer .npy) in the order of the score rows, e.g. PyKEEN's mapped_triples (default: the split's TSV order)")
    .option("--negatives-head <file>", "sampled head negatives' scores (rows x K) for sampled ranking (OGB protocol)")
    .option("--negatives-tail <file>", "sampled tail negatives' scores (rows x K)")
    .option("--metrics <list>", "comma list of metrics to report (names or synonyms: mrr, hits@10, amri, ...)", listArg)
    .option("--ks <list>", "cut-offs of Hits@k (default 1,3,5,10)", ksArg)
    .addOption(formatOption())
    .addOption(outputOption())
    .option("--by-relation", "also break the results down per relation")
    .option("--bootstrap <n>", "bootstrap percentile intervals (95%) with N replicates", intArg("--bootstrap", 1))
    .option("--seed <n>", "seed of the bootstrap", intArg("--seed", 0), 0)
    .addOption(quietOption())
    .action(async (o: EvaluateOptions) => evaluate(o, out));

  program
    .command("metrics")
    .description("every metric from ranks computed elsewhere (.npy, .txt one per line, .json array)")
    .requiredOption("--ranks <file>", "realistic (or any) ranks, one per task")
    .option("--num-candidates <file>", "candidates per task (enables expectations and adjusted / z-scored metrics)")
    .option("--weights <file>", "positive weight per task")
    .option("--metrics <list>", "comma list of metrics (default: all that apply)", listArg)
    .option("--ks <list>", "cut-offs of Hits@k (default 1,3,5,10)", ksArg)
    .addOption(formatOption())
    .addOption(outputOption())
    .addOption(quietOption())
    .action(async (o) => metricsCommand(o, out));

  datasetOptions(program.command("adjust").description("adjusted index and z-score of published numbers, from the dataset's filtered candidate counts"))
    .option("--metric <name=value>", "a published value, e.g. mrr=0.35 (repeat for more)", collect, [])
    .addOption(new Option("--side <side>", "which tasks the number covers").choices(["both", "head", "tail"]).default("both"))
    .addOption(formatOption())
    .addOption(outputOption())
    .addOption(quietOption())
    .action((o) => adjustCommand(o, out));

  datasetOptions(
    program
      .command("expectations")
      .description("expected value and variance of every metric with a closed form, per side, filtered and unfiltered (--dataset all: every dataset found)"),
  )
    .option("--ks <list>", "cut-offs of Hits@k (default 1,3,5,10)", ksArg)
    .addOption(formatOption())
    .addOption(outputOption())
    .addOption(quietOption())
    .action((o) => expectationsCommand(o, out));

  program
    .command("info")
    .description("backend, SIMD level, threads, version")
    .addOption(new Option("--format <format>", "output format").choices(["table", "json"]).default("table"))
    .action((o) => infoCommand(o, out));
  return program;
}

function backendInfoVersion(): string {
  try {
    return (JSON.parse(readFileSync(path.resolve(__dirname, "..", "..", "..", "package.json"), "utf8")) as { version: string }).version;
  } catch {
    return backendInfo().version;
  }
}

/** Runs the CLI; resolves to the exit code. */
export async function main(argv: string[] = process.argv.slice(2), out: Out = defaultOut): Promise<number> {
  const program = buildProgram(out);
  if (argv.length === 0) argv = ["--help"];
  try {
    await program.parseAsync(argv, { from: "user" });
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and version exit with 0; usage errors were already printed by commander as one line.
      return e.exitCode === 0 || e.code === "commander.helpDisplayed" || e.code === "commander.version" ? 0 : 1;
    }
    if (e instanceof KgrankError) {
      // Library argument names become the flags a CLI user typed.
      const argument = e instanceof KgrankInputError ? e.argument : "";
      const flag = FLAG_OF[argument];
      const message = flag ? `${flag}${e.message.slice(argument.length)}` : e.message;
      out.stderr(`kgrank: ${message.split("\n")[0]}\n`);
      return 1;
    }
    out.stderr(`kgrank: internal error: ${(e as Error)?.message ?? String(e)} (please report it; KGRANK_DEBUG=1 shows the stack)\n`);
    if (process.env.KGRANK_DEBUG) out.stderr(`${(e as Error)?.stack}\n`);
    return 70;
  }
}

const FLAG_OF: Record<string, string> = { triples: "--triples", dataset: "--dataset", "dataset-dir": "--dataset-dir", datasetDir: "--dataset-dir", metrics: "--metrics", ks: "--ks" };

const defaultOut: Out = {
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
};

/** Entry point of bin/kgrank.js: SIGINT removes half-written files; the exit code waits for stdout to drain. */
export function runCli(): void {
  process.on("SIGINT", () => {
    removePendingFiles();
    process.stderr.write("kgrank: interrupted\n");
    process.exit(130);
  });
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(0);
  });
  void main().then((code) => {
    process.exitCode = code;
  });
}
