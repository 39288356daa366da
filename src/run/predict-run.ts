/**
 * `kgrank predict`: top-k predictions of a model's embeddings (predictTopK) for a split's triples or for queries
 * without an answer, written as an .npz (per side int64 ids and float scores, (n, k)) or in OGB-LSC WikiKG90Mv2's
 * submission layout (t_pred_top10, int64, (n, 10)); `kgrank combine`: entity shards' files merged exactly
 * (mergeTopK); and `kgrank grade`: WikiKG90Mv2's MRR of such a file (evaluateWikiKG90Mv2).
 */
import { accessSync, constants, statSync } from "node:fs";
import * as path from "node:path";

import { isPbgCheckpoint } from "../io/pbg/checkpoint";
import { KgrankInputError } from "../checks/errors";
import { readArray } from "../io/array-file";
import { writeFileAtomic } from "../io/atomic";
import { encodeNpy, type NpyData } from "../io/npy";
import { modelDirDataset } from "../io/model-dir";
import { readNpz } from "../io/npz";
import { writeNpz } from "../io/npz-write";
import type { Split } from "../io/datasets";
import { mergeTopK, type TopKPredictions } from "../ranking/top-k";
import { evaluateWikiKG90Mv2 } from "../ranking/wikikg90mv2";
import type { ScreenModeName } from "../contract/kernels";
import { saveScreenTable } from "../io/screen-table";
import { formatBytes } from "../scoring/entity-chunks";
import { predictTopKAsync } from "../scoring/top-k";

import { expectShape, readIdTriples } from "./arrays";
import { datasetFromAsync, filterSplits } from "./datasets";
import {
  cliModelError,
  loadModelWithin,
  memoryNotice,
  type ModelFlagOptions,
  screenLine,
  copyOfFlags,
  screenWithin,
  useQuantized,
} from "./model-flags";
import { fmt, json } from "./format";
import { emit, type Out } from "./out";
import { Progress } from "./progress";

export interface PredictOptions extends ModelFlagOptions {
  dataset?: string;
  datasetDir?: string;
  split: Split;
  filter: string[];
  topK?: number;
  raw?: boolean;
  sides?: string[];
  triples?: string;
  queries?: string;
  entityRange?: [number, number];
  /** --memory: bytes; the entity table is then read from disk in chunks. */
  memory?: number;
  format: "npz" | "wikikg90mv2" | "tsv";
  output: string;
  quiet?: boolean;
  /** --screen: the int8 screen's mode (default auto; the lists are the same in every mode). */
  screen?: ScreenModeName;
  /** --quantized: the screen's table as `kgrank quantize` wrote it. */
  quantized?: string;
  /** --verbose: also print what the screen did (stderr). */
  verbose?: boolean;
}

export interface QuantizeOptions extends ModelFlagOptions {
  dataset?: string;
  datasetDir?: string;
  output: string;
  quiet?: boolean;
}

/** `kgrank quantize`: the model's entity table quantised for the screen, written for --quantized (saveScreenTable). */
export async function quantizeRun(opts: QuantizeOptions, out: Out): Promise<void> {
  if (!opts.modelDir && !opts.interaction && !opts.entityEmbeddings) {
    throw new KgrankInputError(
      "--model-dir",
      "or --interaction with --entity-embeddings and --relation-embeddings is required: the model whose table to quantise",
    );
  }
  // A data file kgrank reads (the model's own table, say) is never overwritten by mistake.
  if (/\.(npy|npz|safetensors|pt|pth|json|tsv|txt|h5)$/i.test(opts.output)) {
    throw new KgrankInputError(
      "--output",
      `(-o) ${opts.output} names a data file kgrank reads, not a quantised table: name it e.g. ${opts.output.replace(/\.[^.]+$/, "")}.kgq`,
    );
  }
  const ds = await datasetFromAsync(opts);
  const model = loadModelWithin(opts, ds, undefined);
  try {
    saveScreenTable(model, opts.output);
  } catch (e) {
    if (e instanceof KgrankInputError && e.argument === "path") {
      throw new KgrankInputError("--output", e.message.slice(e.argument.length + 2));
    }
    if (e instanceof KgrankInputError && e.argument === "model") throw cliModelError(e, opts);
    throw e;
  }
  if (!opts.quiet) {
    out.stderr(
      `kgrank: wrote ${opts.output}: the int8 screen's table of ${model.numEntities} entities x ${model.entityWidth} ` +
        `(${formatBytes(statSync(opts.output).size)}); give it to evaluate or predict as --quantized ${opts.output}\n`,
    );
  }
}

/**
 * Refuses, before any work, an --output whose folder does not exist or cannot be written, and a `.npy` name for
 * --format npz (its several arrays go into one .npz; --format wikikg90mv2's one array is written as the .npy asked for).
 */
function checkWritable(file: string, format: "npz" | "wikikg90mv2" | "tsv"): void {
  if (format === "npz" && path.extname(file).toLowerCase() === ".npy") {
    throw new KgrankInputError(
      "--output",
      `(-o) ${file} ends in .npy, but --format npz writes several arrays (ids and scores per side, entity_range, ` +
        `filtered) into one .npz: name it ${file.slice(0, -4)}.npz, or give --format wikikg90mv2 for t_pred_top10 alone as a .npy`,
    );
  }
  const dir = path.dirname(path.resolve(file));
  try {
    if (!statSync(dir).isDirectory()) throw new Error("not a folder");
    accessSync(dir, constants.W_OK);
  } catch {
    throw new KgrankInputError(
      "--output",
      `cannot write ${file}: its folder ${dir} does not exist or is not writable; create it or choose another path`,
    );
  }
}

/** `begin:end` of --entity-range, integers 0 <= begin < end (the table's bound is checked against the model). */
export function entityRangeArg(v: string): [number, number] {
  const m = /^(\d+):(\d+)$/.exec(v.trim());
  if (!m || Number(m[1]) >= Number(m[2])) {
    throw new KgrankInputError("--entity-range", `takes BEGIN:END with integers 0 <= BEGIN < END, got "${v}"`);
  }
  return [Number(m[1]), Number(m[2])];
}

/**
 * --sides of predict: head, tail or both, each named once (as evaluate's --sides); "head,head" would write the head
 * lists under both names' place, so it is refused.
 */
export function predictSidesArg(v: string): ("head" | "tail")[] {
  const listed = v.split(",").map((s) => s.trim());
  for (const s of listed) {
    if (s !== "head" && s !== "tail")
      throw new KgrankInputError("--sides", `takes head, tail or head,tail, got "${v}"`);
  }
  if (new Set(listed).size !== listed.length)
    throw new KgrankInputError("--sides", `lists a side twice ("${v}"): name each of head and tail once`);
  return (["head", "tail"] as const).filter((s) => listed.includes(s));
}

function integerIds(a: NpyData, argument: string): ArrayLike<number> {
  if (!/^[iu]/.test(a.dtype)) {
    throw new KgrankInputError(argument, `dtype ${a.dtype} is not an integer type: save entity ids as int32 or int64`);
  }
  return a.data as ArrayLike<number>;
}

export async function predictRun(opts: PredictOptions, out: Out): Promise<void> {
  if (opts.modelDir !== undefined && isPbgCheckpoint(opts.modelDir))
    throw new KgrankInputError(
      "--model-dir",
      `${opts.modelDir} is a PyTorch-BigGraph checkpoint, which kgrank evaluate ranks; predict reads OGB and DGL-KE model directories or the embedding flags`,
    );
  const wiki = opts.format === "wikikg90mv2";
  const k = opts.topK ?? (wiki ? 10 : undefined);
  if (k === undefined) throw new KgrankInputError("--top-k", "is required: the number of candidates to list per query");
  const sides = opts.sides ? predictSidesArg(opts.sides.join(",")) : wiki || opts.queries ? ["tail"] : ["head", "tail"];
  if (wiki && (k !== 10 || sides.join() !== "tail")) {
    throw new KgrankInputError(
      wiki && k !== 10 ? "--top-k" : "--sides",
      "--format wikikg90mv2 writes t_pred_top10: 10 tails per query; leave --top-k and --sides out (or give 10 and tail)",
    );
  }
  if (opts.queries && sides.length > 1) {
    throw new KgrankInputError("--sides", "with --queries give one side: each query row has one anchor (default tail)");
  }
  if (opts.queries && opts.triples) {
    throw new KgrankInputError("--queries", "and --triples do not mix: give triples (answer known) or queries (none)");
  }
  if (!opts.dataset && !opts.datasetDir && !(opts.modelDir && modelDirDataset(opts.modelDir))) {
    throw new KgrankInputError(
      "--dataset",
      "is required: a model's embeddings belong to the dataset it was trained on; give --dataset NAME or --dataset-dir DIR " +
        "(or a --model-dir whose config.json names its dataset)",
    );
  }
  if (!opts.modelDir && !opts.interaction && !opts.entityEmbeddings) {
    throw new KgrankInputError(
      "--model-dir",
      "or --interaction with --entity-embeddings and --relation-embeddings is required: the model to predict with",
    );
  }
  checkWritable(opts.output, opts.format);
  const ds = await datasetFromAsync(opts);
  const model = loadModelWithin(opts, ds, opts.memory, {}, copyOfFlags(opts));
  const asked = useQuantized(model, opts.quantized, opts.screen);
  let rows: { triples: Int32Array } | { queries: ArrayLike<number> };
  if (opts.queries) {
    const q = readArray(opts.queries, "--queries");
    expectShape(q, [-1, 2], "--queries", "one (anchor, relation) id pair per row, e.g. WikiKG90Mv2's test hr");
    rows = { queries: integerIds(q, "--queries") }; // range-checked as stored, before any int32 conversion
  } else {
    rows = { triples: opts.triples ? readIdTriples(opts.triples, "--triples", ds) : ds.splits[opts.split] };
  }
  const queryRows = "queries" in rows ? rows.queries.length / 2 : (rows.triples.length / 3) * sides.length;
  const screen = screenWithin(model, opts.memory, asked, opts.quantized, queryRows);
  const splits = opts.raw ? [] : filterSplits(opts.filter, opts.split);
  const filter =
    splits.length === 0
      ? undefined
      : [...splits.map((s) => ds.splits[s]), ...("triples" in rows && opts.triples ? [rows.triples] : [])];
  if (opts.entityRange && opts.entityRange[1] > model.numEntities) {
    throw new KgrankInputError(
      "--entity-range",
      `${opts.entityRange.join(":")} ends past the model's ${model.numEntities} entities: give BEGIN:END with END <= ${model.numEntities}`,
    );
  }
  let result: TopKPredictions;
  const plan = model.entitySource ? memoryNotice(out, opts.quiet) : undefined;
  let progress: Progress | null = null;
  let seen = 0;
  try {
    result = await predictTopKAsync(model, {
      ...rows,
      k,
      side: sides.length === 2 ? "both" : (sides[0] as "head" | "tail"),
      ...(filter ? { filter } : {}),
      ...(opts.entityRange ? { entityRange: opts.entityRange } : {}),
      ...(model.entitySource ? { memoryBudget: opts.memory, onPlan: plan } : {}),
      screen,
      onProgress: ({ done, total }) => {
        progress ??= new Progress(`top-${k} of ${ds.name} from embeddings`, total, {
          quiet: opts.quiet,
          report: out.progress,
        });
        progress.tick(done - seen);
        seen = done;
      },
    });
  } catch (e) {
    if (e instanceof KgrankInputError && e.argument === "k")
      throw new KgrankInputError("--top-k", e.message.slice(e.argument.length + 2));
    if (e instanceof KgrankInputError && e.argument === "queries")
      throw new KgrankInputError("--queries", e.message.slice(e.argument.length + 2));
    if (e instanceof KgrankInputError && e.argument === "model") throw cliModelError(e, opts);
    throw e;
  } finally {
    (progress as Progress | null)?.stop();
  }
  if (opts.verbose && !opts.quiet) out.stderr(screenLine(asked, model));
  if (opts.format === "tsv") writePredictionsTsv(opts.output, result, rows, ds, model.precision === "float32");
  else writePredictions(opts.output, result, wiki ? "wikikg90mv2" : "npz", model.precision === "float32");
  if (!opts.quiet) {
    out.stderr(
      `kgrank: wrote ${opts.output}: top ${k} of ${result.rows} ${"queries" in rows ? "queries" : "triples"} (${sides.join(", ")}), ` +
        `entities [${result.entityRange.join(", ")}), ${result.filtered ? `filtered by ${splits.join("+")}` : "raw"}\n`,
    );
  }
}

/**
 * Predictions to an .npz: per side `<side>_ids` (int64, (n, k)) and `<side>_scores` (float32 when `float32`, else
 * float64), with `entity_range` (int64, [begin, end]) and `filtered` (uint8, 0 or 1) so that entity shards' files can
 * be combined; or WikiKG90Mv2's `t_pred_top10` (int64, (n, 10), tails) alone.
 */
function writePredictions(file: string, p: TopKPredictions, format: "npz" | "wikikg90mv2", float32: boolean): void {
  const { rows: n, k } = p;
  const int64 = (ids: Int32Array) => BigInt64Array.from(ids, (v) => BigInt(v));
  const arrays: Record<string, { data: BigInt64Array | Float32Array | Float64Array | Uint8Array; shape: number[] }> =
    {};
  if (format === "wikikg90mv2") {
    if (k !== 10 || !p.tail) {
      throw new KgrankInputError(
        "--format",
        `wikikg90mv2 needs 10 tails per query; these predictions hold ${k} per query${p.tail ? "" : " and no tail side"}`,
      );
    }
    arrays.t_pred_top10 = { data: int64(p.tail.ids), shape: [n, 10] };
  } else {
    for (const s of ["head", "tail"] as const) {
      const list = p[s];
      if (!list) continue;
      arrays[`${s}_ids`] = { data: int64(list.ids), shape: [n, k] };
      arrays[`${s}_scores`] = { data: float32 ? Float32Array.from(list.scores) : list.scores, shape: [n, k] };
    }
    arrays.entity_range = { data: BigInt64Array.from(p.entityRange, (v) => BigInt(v)), shape: [2] };
    arrays.filtered = { data: Uint8Array.of(p.filtered ? 1 : 0), shape: [1] };
  }
  // t_pred_top10 alone may be a .npy (kgrank grade and OGB's evaluator read either): the file is what its name says.
  if (format === "wikikg90mv2" && path.extname(file).toLowerCase() === ".npy")
    writeFileAtomic(file, encodeNpy(arrays.t_pred_top10!.data, arrays.t_pred_top10!.shape), "--output");
  else writeNpz(file, arrays, "--output");
}

/** The columns of `kgrank predict --format tsv`, one line per query and listed candidate. */
const PREDICT_TSV_COLUMNS = [
  "row",
  "side",
  "head",
  "relation",
  "tail",
  "position",
  "candidate",
  "score",
  "head_id",
  "relation_id",
  "tail_id",
  "candidate_id",
] as const;

/**
 * Predictions as TSV (`--format tsv`): a header, then for each query row and side its listed candidates best first,
 * one line each: the row (0-based, in the order of the split, --triples or --queries), the side predicted, the
 * query's head, relation and tail labels (the predicted side holds the true answer, empty for --queries), the
 * position (1 = best), the candidate's label and score, then the same as ids. Padding (fewer than k candidates) is
 * not written. Scores: float32 ones with 9 significant digits (enough to read back the same float32), float64 ones
 * in full.
 */
function writePredictionsTsv(
  file: string,
  p: TopKPredictions,
  rows: { triples: Int32Array } | { queries: ArrayLike<number> },
  labels: { entityLabels: readonly string[]; relationLabels: readonly string[] },
  float32: boolean,
): void {
  const entity = (id: number) => (id < 0 ? "" : (labels.entityLabels[id] ?? String(id)));
  const relation = (id: number) => labels.relationLabels[id] ?? String(id);
  const score = (v: number) => (float32 ? String(Number(v.toPrecision(9))) : String(v));
  const lines: string[] = [PREDICT_TSV_COLUMNS.join("\t")];
  for (let i = 0; i < p.rows; i++) {
    for (const side of ["head", "tail"] as const) {
      const list = p[side];
      if (!list) continue;
      let h: number;
      let r: number;
      let t: number;
      if ("triples" in rows) [h, r, t] = [rows.triples[3 * i]!, rows.triples[3 * i + 1]!, rows.triples[3 * i + 2]!];
      else {
        const [anchor, rel] = [Number(rows.queries[2 * i]), Number(rows.queries[2 * i + 1])];
        [h, r, t] = side === "tail" ? [anchor, rel, -1] : [-1, rel, anchor];
      }
      for (let j = 0; j < p.k; j++) {
        const id = list.ids[i * p.k + j]!;
        if (id < 0) break;
        lines.push(
          [
            i,
            side,
            entity(h),
            relation(r),
            entity(t),
            j + 1,
            entity(id),
            score(list.scores[i * p.k + j]!),
            h < 0 ? "" : h,
            r,
            t < 0 ? "" : t,
            id,
          ].join("\t"),
        );
      }
    }
  }
  writeFileAtomic(file, lines.join("\n") + "\n", "--output");
}

export interface CombineOptions {
  format: "npz" | "wikikg90mv2";
  output: string;
  quiet?: boolean;
}

/** One file of `kgrank predict --format npz` read back as the predictions it holds. */
function readPredictionFile(file: string): { p: TopKPredictions; float32: boolean } {
  const z = readNpz(file, file);
  const range = z.entity_range;
  const filtered = z.filtered;
  if (!range || range.shape.join() !== "2" || !filtered) {
    throw new KgrankInputError(
      file,
      "holds no entity_range / filtered arrays: combine the files kgrank predict --format npz wrote (with --entity-range)",
    );
  }
  let float32 = true;
  let rows = -1;
  let k = -1;
  const p: Partial<TopKPredictions> = {
    entityRange: [Number(range.data[0]), Number(range.data[1])],
    filtered: filtered.data[0] === 1,
  };
  for (const side of ["head", "tail"] as const) {
    const ids = z[`${side}_ids`];
    const scores = z[`${side}_scores`];
    if (!ids !== !scores) throw new KgrankInputError(file, `holds ${side}_ids or ${side}_scores without the other`);
    if (!ids || !scores) continue;
    if (ids.shape.length !== 2 || scores.shape.join() !== ids.shape.join() || !/^i/.test(ids.dtype)) {
      throw new KgrankInputError(
        file,
        `${side}_ids / ${side}_scores must be int64 and float arrays of one shape (n, k)`,
      );
    }
    if (rows >= 0 && (ids.shape[0] !== rows || ids.shape[1] !== k)) {
      throw new KgrankInputError(file, "its sides hold different shapes");
    }
    [rows, k] = ids.shape as [number, number];
    float32 = float32 && scores.dtype === "f4";
    p[side] = { ids: Int32Array.from(ids.data as ArrayLike<number>), scores: Float64Array.from(scores.data) };
  }
  if (rows < 0) throw new KgrankInputError(file, "holds no head_ids / tail_ids: it is not a kgrank predict file");
  return { p: { ...p, rows, k } as TopKPredictions, float32 };
}

/** `kgrank combine`: the predictions of entity shards (kgrank predict --entity-range) merged exactly (mergeTopK). */
export function combineRun(files: string[], opts: CombineOptions, out: Out): void {
  checkWritable(opts.output, opts.format);
  const parts = files.map(readPredictionFile);
  let merged: TopKPredictions;
  try {
    merged = mergeTopK(parts.map((x) => x.p));
  } catch (e) {
    if (e instanceof KgrankInputError && e.argument.startsWith("parts")) {
      const m = /^parts\[(\d+)\]$/.exec(e.argument);
      throw new KgrankInputError(m ? files[Number(m[1])]! : "<files>", e.message.slice(e.argument.length + 2));
    }
    throw e;
  }
  writePredictions(
    opts.output,
    merged,
    opts.format,
    parts.every((x) => x.float32),
  );
  if (!opts.quiet) {
    out.stderr(
      `kgrank: wrote ${opts.output}: top ${merged.k} of ${merged.rows} queries over entities [${merged.entityRange.join(", ")}) from ${files.length} files\n`,
    );
  }
}

export interface GradeOptions {
  truth?: string;
  dataset?: string;
  datasetDir?: string;
  split: Split;
  triples?: string;
  format: "table" | "json";
  output?: string;
  quiet?: boolean;
}

/** The t_pred_top10 array of a file: that member of an .npz (or its only array), or an .npy. */
function readPredictions(file: string): NpyData {
  if (path.extname(file).toLowerCase() === ".npz") {
    const all = readNpz(file, file);
    const a = all.t_pred_top10 ?? (Object.keys(all).length === 1 ? Object.values(all)[0]! : undefined);
    if (!a) {
      throw new KgrankInputError(
        file,
        `holds no t_pred_top10 array (it has ${Object.keys(all).join(", ")}): write it with kgrank predict --format wikikg90mv2`,
      );
    }
    return a;
  }
  return readArray(file, file);
}

export async function gradeRun(file: string, opts: GradeOptions, out: Out): Promise<void> {
  const pred = readPredictions(file);
  if (!/^[iu]/.test(pred.dtype)) {
    throw new KgrankInputError(file, `t_pred_top10 has dtype ${pred.dtype}: save entity ids as int64 (or int32)`);
  }
  let t: ArrayLike<number>;
  let argument: string;
  if (opts.truth) {
    argument = "--truth";
    const a = readArray(opts.truth, "--truth");
    if (a.shape.length !== 1) {
      throw new KgrankInputError(
        "--truth",
        `has shape (${a.shape.join(", ")}): give one true tail id per row, shape (n,)`,
      );
    }
    t = integerIds(a, "--truth");
    // A negative id (an -1 "unknown" marker) would be graded as a tail no prediction can name: a silent 0.
    for (let i = 0; i < t.length; i++) {
      const v = t[i]!;
      if (!(v >= 0 && v <= 2147483646)) {
        throw new KgrankInputError(
          "--truth",
          `${opts.truth} row ${i} holds ${v}, not an entity id (whole numbers from 0 to 2^31 - 2): give every row's true tail id, or leave out the rows without one`,
        );
      }
    }
  } else {
    if (!opts.dataset && !opts.datasetDir) {
      throw new KgrankInputError("--truth", "or --dataset is required: the true tails of the predicted rows");
    }
    const ds = await datasetFromAsync(opts);
    const triples = opts.triples ? readIdTriples(opts.triples, "--triples", ds) : ds.splits[opts.split];
    argument = opts.triples ? "--triples" : "--split";
    t = Int32Array.from({ length: triples.length / 3 }, (_, i) => triples[3 * i + 2]!);
  }
  expectShape(
    pred,
    [t.length, 10],
    file,
    `t_pred_top10 must hold 10 tail ids per row of ${argument} (${t.length} rows)`,
  );
  const r = evaluateWikiKG90Mv2({ tPredTop10: pred.data as ArrayLike<number>, t });
  const text =
    opts.format === "json"
      ? json({ mrr: r.mrr, rows: t.length, duplicateRows: r.duplicateRows })
      : `WikiKG90Mv2 MRR of ${file}: ${fmt(r.mrr, 6)} (${t.length} rows${r.duplicateRows > 0 ? `; ${r.duplicateRows} row(s) list an entity twice, so the MRR is 0 as OGB's evaluator sets it` : ""})\n`;
  emit(out, text, opts.output, opts.quiet);
}
