/**
 * A batch of triples ranked from a model's embeddings (RankEvaluator.addModel / addModelSync): the triples' keys
 * (through the evaluator's task selection, so restriction and the filter apply as for score batches), the filter's
 * other known answers as an exclusion list per row, one kernel call per side (rankEmbeddings: scores computed and
 * counted in the same pass, never materialised), then the counts become task columns as in ./score-batch.
 * With `negatives` (OGB protocol) the K given entities per triple are the candidates, unfiltered, as addSampled.
 * With typed candidates (RankEvaluatorOptions.candidates) each row is ranked against its relation's set, the kernel
 * gathering the set from the table (constrainedSide), as ./constrained-batch ranks a score row.
 */
import { kernels } from "../backend/backend";
import { KgrankInputError } from "../checks/errors";
import type { CallControl } from "../backend/call-control";
import { type EmbeddingRankInput, type ScreenModeName } from "../contract/kernels";
import { ranksFromCounts } from "../ranking/ranks";
import { EmbeddingModel, scoreOverflow, screenMode } from "../scoring/embedding-model";
import { describe, isArrayLike, optionKeys, threadCount, tripleArray, type Unchecked } from "../checks/validate";
import { type CandidateConstraint, checkSetsAllowSome } from "./constrained-batch";
import { partialColumns } from "./entity-shards";
import type { BatchContext } from "./selection";
import type { StreamPlan } from "../scoring/entity-chunks";
import type { TaskColumns } from "./task-buffer";
import type { EvaluationSide } from "./types";

export interface ModelBatch {
  /** The model to rank (numEntities must equal the evaluator's). */
  model: EmbeddingModel;
  /** The evaluated triples, b x 3 (head, relation, tail). */
  triples: Int32Array | ArrayLike<number>;
  /**
   * One entity side, "relation" (every relation scored by the model for (h, ?, t), ranked as addRelationScores
   * ranks them), or (default) every side the evaluator evaluates, the relation side included.
   */
  side?: EvaluationSide | "both" | "relation";
  /**
   * OGB protocol: b x K entity ids, the candidates of each triple (its true answer is scored apart and is not one
   * of them); no filter applies. For both sides give { head, tail }.
   */
  negatives?:
    Int32Array | ArrayLike<number> | { head: Int32Array | ArrayLike<number>; tail: Int32Array | ArrayLike<number> };
  threads?: number;
  /**
   * A model whose entity table is read in chunks (openEntityTable): bytes the call may hold for the filter index,
   * the query rows and the table's chunks together, with `screen` also the screen's quantised copy of a chunk (at
   * least one query row and one table row; more means fewer, larger reads). Default: a quarter of the machine's
   * memory. Ignored for a table held in memory (whose screened copy, under "auto" or "int8", is about half the
   * table again).
   */
  memoryBudget?: number;
  /**
   * A model whose entity table is read in chunks: called once, before the table is read, with how memoryBudget lets
   * it be read (StreamPlan: read whole, or the passes over the table and their chunks).
   */
  onPlan?: (plan: StreamPlan) => void;
  /**
   * The int8 screen (docs/screen.md) of the native backend for DistMult, ComplEx, TransE-L2 and RotatE-L2 at float32,
   * ranking against every entity: "auto" (default: where the CPU has a screen kernel that pays, AMX, AVX-512 VNNI,
   * AVX-VNNI or NEON's sdot, and the table is already quantised or the model's batches under auto, this one included,
   * have rows x width >= 2^17 to quantise it for,
   * giving up where it does not pay; for a table read in chunks, where memoryBudget holds the copy too), "off" (the
   * float32 path alone, and no int8 copy of the table: use it where memory is tighter than speed) or
   * "int8" (wherever it applies). Ranks are the float32 path's bit for bit in every mode; only the time and the
   * memory differ (the quantised copy: about half the float table). The model's screenStats say what it did.
   */
  screen?: ScreenModeName;
}

export const MODEL_BATCH_KEYS = optionKeys<ModelBatch>({
  screen: 1,
  model: 1,
  triples: 1,
  side: 1,
  negatives: 1,
  threads: 1,
  memoryBudget: 1,
  onPlan: 1,
});

/**
 * The rows of one side ranked against an entity table read in chunks (./streamed-model.ts): the keys, in the
 * caller's ids, and the filter's other known answers of each row (global ids).
 */
export interface StreamRows {
  side: EvaluationSide;
  anchor: Int32Array;
  relation: Int32Array;
  truth: Int32Array;
  excludeOffsets: Uint32Array | null;
  excludeIds: Int32Array | null;
  /** OGB protocol: rows x negativesPerRow candidate ids (unfiltered), else null. */
  negatives: Int32Array | null;
  negativesPerRow: number;
  /** ModelBatch.screen, checked. */
  screen: ScreenModeName;
}

/** One side's kernel call, prepared: its input, its output, and how to turn the output into task columns. */
export interface ModelSideWork {
  side: EvaluationSide;
  /** The kernel's input; null when every row was skipped, or when the table is read in chunks (stream). */
  input: EmbeddingRankInput | null;
  /** The model's entity table is read in chunks: what the streamed run ranks into `out`; else null. */
  stream: StreamRows | null;
  /**
   * An entity shard's task columns (./entity-shards.ts encodes the partial counts in them) after the streamed run;
   * null when every row was skipped.
   */
  partial?: () => TaskColumns | null;
  /** Rows (tasks) the kernel ranks: 0 when every row was skipped. */
  rows: number;
  out: Float64Array;
  threads: number | undefined;
  skipped: number;
  finish(): TaskColumns | null;
}

function negativeIds(name: string, value: unknown, rows: number, numEntities: number): { ids: Int32Array; k: number } {
  if (!isArrayLike(value))
    throw new KgrankInputError(name, `must be an Int32Array of b x K entity ids, got ${describe(value)}`);
  const arr = value as ArrayLike<number>;
  const k = arr.length / rows;
  if (arr.length === 0 || !Number.isInteger(k)) {
    throw new KgrankInputError(
      name,
      `has ${arr.length} ids, not a positive multiple of the ${rows} triples (K ids per triple, row-major)`,
    );
  }
  const ids = new Int32Array(arr.length);
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i]!;
    if (!Number.isInteger(v) || v < 0 || v >= numEntities) {
      throw new KgrankInputError(
        name,
        `row ${Math.floor(i / k)}, column ${i % k}: ${describe(v)} is not an entity id in [0, ${numEntities})`,
      );
    }
    ids[i] = v;
  }
  return { ids, k };
}

/** The batch's model, checked against the evaluator (an EmbeddingModel over its entities and relations). */
export function batchModel(batch: Unchecked<ModelBatch>, ctx: BatchContext): EmbeddingModel {
  if (!(batch.model instanceof EmbeddingModel)) {
    throw new KgrankInputError(
      "model",
      `must be an EmbeddingModel (new EmbeddingModel({...}) or loadEmbeddingModel()), got ${describe(batch.model)}`,
    );
  }
  const model = batch.model;
  if (model.numEntities !== ctx.numEntities) {
    throw new KgrankInputError(
      "model",
      `has ${model.numEntities} entity rows but the evaluator has numEntities ${ctx.numEntities}: map the rows to the dataset's ids (entityIds) or use the model's own dataset`,
    );
  }
  if (ctx.numRelations !== null && model.numRelations < ctx.numRelations) {
    throw new KgrankInputError(
      "model",
      `has ${model.numRelations} relation rows but the evaluator has numRelations ${ctx.numRelations}`,
    );
  }
  return model;
}

/**
 * Checks a model batch of entity sides (its keys already checked) and prepares one kernel call per side; with
 * typed candidates (`constraint`, RankEvaluatorOptions.candidates) each row is ranked against its relation's set.
 */
export function prepareModelBatch(
  batch: Unchecked<ModelBatch>,
  ctx: BatchContext,
  constraint: CandidateConstraint | null = null,
): ModelSideWork[] {
  const model = batchModel(batch, ctx);
  const triples = tripleArray(
    "triples",
    batch.triples,
    ctx.numEntities,
    Math.min(model.numRelations, ctx.numRelations ?? Infinity),
  );
  const rows = triples.length / 3;
  if (rows === 0) throw new KgrankInputError("triples", "is empty: pass at least one triple");
  const side = batch.side ?? "both";
  if (side !== "both" && side !== "head" && side !== "tail" && side !== "relation") {
    throw new KgrankInputError("side", `must be "head", "tail", "relation" or "both", got ${describe(side)}`);
  }
  // The relation side is the evaluator's (relationModelColumns): no entity work for it.
  if (side === "relation") return [];
  const sides: EvaluationSide[] = side === "both" ? ctx.sides : [side as EvaluationSide];
  for (const s of sides) {
    if (!ctx.sides.includes(s))
      throw new KgrankInputError(
        "side",
        `"${s}" is not evaluated by this RankEvaluator (sides: ${ctx.sides.join(", ")})`,
      );
  }
  const threads = threadCount(batch.threads) ?? ctx.threads;
  const screen = screenMode(batch.screen);
  if (constraint) {
    if (batch.negatives !== undefined) {
      throw new KgrankInputError(
        "negatives",
        "are a candidate set of their own (the OGB protocol), and this evaluator ranks against typed candidates " +
          "(options.candidates): rank the negatives in an evaluator without candidates",
      );
    }
    if (model.entitySource !== null) {
      throw new KgrankInputError(
        "model",
        `reads its entity table from ${model.entitySource.name} in chunks, and typed candidates (options.candidates) ` +
          "gather each relation's set from the whole table: build the model from the table in memory (no " +
          "memoryBudget / --memory)",
      );
    }
    return sides.map((s) => constrainedSide(model, triples, s, ctx, constraint, threads));
  }
  return sides.map((s) => {
    if (batch.negatives !== undefined) {
      if (ctx.entityRange) {
        throw new KgrankInputError(
          "negatives",
          "are the candidates of the OGB protocol, which has no entity shards: rank them with an evaluator without entityShard",
        );
      }
      const raw = batch.negatives as Record<string, unknown>;
      const perSide = !isArrayLike(raw) && raw !== null && typeof raw === "object" && ("head" in raw || "tail" in raw);
      if (!perSide && sides.length > 1) {
        throw new KgrankInputError("negatives", "with both sides, give { head, tail } (each b x K ids), or pass side");
      }
      const name = perSide ? `negatives.${s}` : "negatives";
      const neg = negativeIds(name, perSide ? raw[s] : raw, rows, ctx.numEntities);
      return sampledSide(model, triples, s, neg.ids, neg.k, threads);
    }
    return fullSide(model, triples, s, ctx, threads, screen);
  });
}

function sampledSide(
  model: EmbeddingModel,
  triples: Int32Array,
  side: EvaluationSide,
  negatives: Int32Array,
  k: number,
  threads: number | undefined,
): ModelSideWork {
  const rows = triples.length / 3;
  const relation = new Int32Array(rows);
  const anchor = new Int32Array(rows);
  const truth = new Int32Array(rows);
  for (let i = 0; i < rows; i++) {
    relation[i] = triples[3 * i + 1]!;
    anchor[i] = side === "tail" ? triples[3 * i]! : triples[3 * i + 2]!;
    truth[i] = side === "tail" ? triples[3 * i + 2]! : triples[3 * i]!;
  }
  const out = new Float64Array(5 * rows + 2);
  const streamed = model.entitySource !== null;
  return {
    side,
    out,
    threads,
    skipped: 0,
    rows,
    input: streamed ? null : model.job(side, anchor, relation, truth, { negatives, negativesPerRow: k }),
    stream: streamed
      ? {
          side,
          anchor,
          relation,
          truth,
          excludeOffsets: null,
          excludeIds: null,
          negatives,
          negativesPerRow: k,
          screen: "off",
        }
      : null,
    finish() {
      checkStatus(out, rows, model, side, anchor, relation, truth);
      const c = counts(out, rows);
      const ranks = ranksFromCounts(c, k, false);
      return { ...ranks, relation, anchor, truth, weight: new Float64Array(rows).fill(NaN) };
    },
  };
}

function fullSide(
  model: EmbeddingModel,
  triples: Int32Array,
  side: EvaluationSide,
  ctx: BatchContext,
  threads: number | undefined,
  screen: ScreenModeName,
): ModelSideWork {
  const index = ctx.filter?.[side] ?? null;
  const keys = ctx.selection.keys(side, triples, index, true);
  const rows = keys.kept;
  const out = new Float64Array(5 * rows + 2);
  if (rows === 0)
    return { side, out, threads, skipped: keys.rows, rows: 0, input: null, stream: null, finish: () => null };
  const kept = ctx.selection.keptEntities;
  const streamed = model.entitySource !== null || ctx.entityRange !== null;
  if (streamed && kept) {
    throw new KgrankInputError(
      "model",
      ctx.entityRange
        ? "is ranked against an entity shard's range, which an entity restriction (restrictEntities) cannot be combined with"
        : `reads its entity table from ${model.entitySource!.name} in chunks, which ranks against every entity: an ` +
            `entity restriction (restrictEntities) needs the table in memory`,
    );
  }
  // Filtered: the kernel takes the rows in (relation, anchor) order (stable), so that the rows that share a query
  // and its known answers (FB15k-237's (?, gender, male) for every such test triple) sit together and the kernel
  // scores their list once, within whatever slice of rows an async call works on. Position k is row order[k]; the
  // counts are put back in the batch's order before anything reads them (settle).
  const order = index ? queryOrder(keys.relation, keys.anchor) : null;
  const pick = (column: Int32Array) => (order ? Int32Array.from(order, (i) => column[i]!) : column);
  const [kAnchor, kRelation, kTruth] = [pick(keys.origAnchor), pick(keys.relation), pick(keys.origTruth)];
  let excludeOffsets: Uint32Array | null = null;
  let excludeIds: Int32Array | null = null;
  if (index) {
    // The filter's other known answers of each task, in the caller's entity ids: scored one by one by the kernel.
    const lists: Int32Array[] = [];
    excludeOffsets = new Uint32Array(rows + 1);
    for (let k = 0; k < rows; k++) {
      const i = order![k]!;
      const ans = index.answers(keys.anchor[i]!, keys.relation[i]!);
      lists.push(ans);
      excludeOffsets[k + 1] = excludeOffsets[k]! + ans.length - 1; // the true answer is among them (keys() checked)
    }
    excludeIds = new Int32Array(excludeOffsets[rows]!);
    for (let k = 0, w = 0; k < rows; k++) {
      const own = keys.truth[order![k]!]!;
      for (const a of lists[k]!) if (a !== own) excludeIds[w++] = kept ? kept[a]! : a;
    }
  }
  const n = ctx.selection.numCandidates;
  const input = streamed
    ? null
    : model.job(side, kAnchor, kRelation, kTruth, {
        candidates: kept,
        excludeOffsets,
        excludeIds,
      });
  // The screen ranks against every entity: not under an entity restriction.
  if (input && !kept) input.screen = model.screenFor(screen, input, threads, true);
  let settled = order === null;
  const settle = () => {
    if (settled) return;
    settled = true;
    unpermuteCounts(out, rows, order!);
  };
  return {
    side,
    out,
    threads,
    skipped: keys.rows - rows,
    rows,
    input,
    stream: streamed
      ? {
          side,
          anchor: kAnchor,
          relation: kRelation,
          truth: kTruth,
          excludeOffsets,
          excludeIds,
          negatives: null,
          negativesPerRow: 0,
          screen,
        }
      : null,
    partial() {
      settle();
      checkStatus(out, rows, model, side, keys.origAnchor, keys.relation, keys.origTruth);
      return partialColumns(out, rows, keys.relation, keys.origAnchor, keys.origTruth);
    },
    finish() {
      settle();
      checkStatus(out, rows, model, side, keys.origAnchor, keys.relation, keys.origTruth);
      const c = counts(out, rows);
      const ranks = ranksFromCounts(c, n, true);
      if (index) for (let i = 0; i < rows; i++) ranks.numCandidates[i] = ranks.numCandidates[i]! - out[3 * rows + i]!;
      return {
        ...ranks,
        relation: keys.relation,
        anchor: keys.origAnchor,
        truth: keys.origTruth,
        weight: new Float64Array(rows).fill(NaN),
      };
    },
  };
}

/** Rows in (relation, anchor) order, ties in row order: position k holds row order[k]. */
function queryOrder(relation: Int32Array, anchor: Int32Array): Int32Array {
  return Int32Array.from({ length: relation.length }, (_, i) => i).sort(
    (x, y) => relation[x]! - relation[y]! || anchor[x]! - anchor[y]! || x - y,
  );
}

/**
 * A kernel's output (5 columns of `rows` and 2 status slots) written in row order `order` (kernel row k is the
 * batch's row order[k]), put back in the batch's order in place; the status slot's row index too.
 */
function unpermuteCounts(out: Float64Array, rows: number, order: Int32Array): void {
  const column = new Float64Array(rows);
  for (let c = 0; c < 5; c++) {
    column.set(out.subarray(c * rows, (c + 1) * rows));
    for (let k = 0; k < rows; k++) out[c * rows + order[k]!] = column[k]!;
  }
  const at = out[5 * rows + 1]!;
  if (out[5 * rows] !== 0 && Number.isInteger(at) && at >= 0 && at < rows) out[5 * rows + 1] = order[at]!;
}

/**
 * One side ranked against typed candidates: each row's candidates are its relation's set on that side (the kernel
 * gathers them per relation: EmbeddingRankInput.candidateSets) and the true answer, which stays a candidate when the
 * set leaves it out, less the other known answers the set holds (filtered), as rankConstrainedBatch ranks a score
 * row. The exclusion list of a row is those known answers and, where the set holds it, the true answer itself, so
 * the kernel's counts are over the other candidates: optimistic = 1 + greater, pessimistic = optimistic + equal,
 * numCandidates = 1 + the set's size - the excluded answers scored (the kernel's removed count).
 */
function constrainedSide(
  model: EmbeddingModel,
  triples: Int32Array,
  side: EvaluationSide,
  ctx: BatchContext,
  c: CandidateConstraint,
  threads: number | undefined,
): ModelSideWork {
  const index = c.filtered ? (ctx.filter?.[side] ?? null) : null;
  const keys = ctx.selection.keys(side, triples, index, true);
  const rows = keys.kept; // no restriction beside candidates: every row
  const { sets } = c;
  checkSetsAllowSome(sets, side, rows, (r) => keys.relation[r]!);
  const { anchor, relation, truth } = { anchor: keys.origAnchor, relation: keys.relation, truth: keys.origTruth };
  // The kernel's rows in relation order (stable): the kernel shares each relation's passes over its set among that
  // relation's rows, and an async call cut into slices of rows keeps them together. Position k is row order[k].
  const order = Int32Array.from({ length: rows }, (_, i) => i).sort((x, y) => relation[x]! - relation[y]! || x - y);
  const pick = (column: Int32Array) => Int32Array.from(order, (i) => column[i]!);
  const [kAnchor, kRelation, kTruth] = [pick(anchor), pick(relation), pick(truth)];
  const excludeOffsets = new Uint32Array(rows + 1);
  const lists: Int32Array[] = [];
  for (let k = 0; k < rows; k++) {
    const i = order[k]!;
    const rel = relation[i]!;
    const known = index ? index.answers(keys.anchor[i]!, rel) : Int32Array.of(truth[i]!);
    const kept = known.filter((a) => sets.has(side, rel, a));
    lists.push(kept);
    excludeOffsets[k + 1] = excludeOffsets[k]! + kept.length;
  }
  const excludeIds = new Int32Array(excludeOffsets[rows]!);
  for (let k = 0; k < rows; k++) excludeIds.set(lists[k]!, excludeOffsets[k]!);
  const out = new Float64Array(5 * rows + 2);
  return {
    side,
    out,
    threads,
    skipped: 0,
    rows,
    input: model.job(side, kAnchor, kRelation, kTruth, {
      candidateSets: sets.lists(side),
      excludeOffsets,
      excludeIds,
    }),
    stream: null,
    finish() {
      checkStatus(out, rows, model, side, kAnchor, kRelation, kTruth, order);
      const optimistic = new Float64Array(rows);
      const pessimistic = new Float64Array(rows);
      const realistic = new Float64Array(rows);
      const numCandidates = new Float64Array(rows);
      for (let k = 0; k < rows; k++) {
        const i = order[k]!;
        const opt = 1 + out[k]!;
        const pess = opt + out[rows + k]!;
        optimistic[i] = opt;
        pessimistic[i] = pess;
        realistic[i] = 0.5 * (opt + pess);
        numCandidates[i] = 1 + sets.size(side, relation[i]!) - out[3 * rows + k]!;
      }
      return {
        optimistic,
        pessimistic,
        realistic,
        numCandidates,
        relation,
        anchor,
        truth,
        weight: new Float64Array(rows).fill(NaN),
      };
    },
  };
}

function counts(out: Float64Array, rows: number) {
  // Copies: ranksFromCounts rewrites its buffers in place.
  return { greater: out.slice(0, rows), equal: out.slice(rows, 2 * rows), nan: out.slice(2 * rows, 3 * rows) };
}

/**
 * Refuses the kernel's output when a score was not finite: a NaN true score (status 3; the kernel stops there), an
 * infinite true score, or a candidate scored NaN (counted apart, it would silently leave the candidates). The
 * embeddings are finite, so each is an overflow of the accumulation (scoreOverflow). A candidate scored
 * +-Infinity under a finite true score is counted above or below it and is not seen here: the kernel's counts do not
 * tell it apart.
 */
function checkStatus(
  out: Float64Array,
  rows: number,
  model: EmbeddingModel,
  side: EvaluationSide,
  anchor: Int32Array,
  relation: Int32Array,
  truth: Int32Array,
  order: Int32Array | null = null,
): void {
  const status = out[5 * rows]!;
  // Kernel row i is the batch's task order[i] when the kernel took the rows in another order.
  const triple = (i: number) =>
    `the ${side} side's task ${order ? order[i] : i} of the batch (triple (${side === "tail" ? anchor[i] : truth[i]}, ` +
    `${relation[i]}, ${side === "tail" ? truth[i] : anchor[i]}))`;
  if (status === 3) {
    const row = out[5 * rows + 1]!;
    throw scoreOverflow(model, "model", `${triple(row)}, its true triple`, NaN);
  }
  if (status !== 0) {
    throw new KgrankInputError(
      "model",
      `could not be ranked (status ${status}): out of memory; pass fewer triples per call or fewer threads`,
    );
  }
  for (let i = 0; i < rows; i++) {
    const t = out[4 * rows + i]!;
    if (!Number.isFinite(t)) throw scoreOverflow(model, "model", `${triple(i)}, its true triple`, t);
    const nan = out[2 * rows + i]!;
    if (nan > 0) throw scoreOverflow(model, "model", `${nan} candidate(s) of ${triple(i)}`, NaN);
  }
}

export function runModelSync(sides: ModelSideWork[]): void {
  const streamed = sides.find((w) => w.stream);
  if (streamed) {
    throw new KgrankInputError(
      "model",
      `reads its entity table from disk in chunks: rank it with addModel() (async), which reads the next chunk while ` +
        `it ranks this one, or build the model from the table in memory`,
    );
  }
  for (const w of sides) if (w.input) kernels().rankEmbeddings(w.input, w.out, w.threads);
}

/**
 * The sides' kernel calls one after the other, off the JavaScript thread; `call` stops them and takes their progress
 * (rows); `watch` (src/checks/errors.ts watchDetach of the model's arrays) is checked before each: a model given away during
 * the first side is not handed to the second side's kernel call.
 */
export async function runModelAsync(
  sides: ModelSideWork[],
  call?: CallControl,
  watch?: { check(): void },
): Promise<void> {
  let offset = 0;
  for (const w of sides) {
    call?.check();
    watch?.check();
    if (w.input) await kernels().rankEmbeddingsAsync(w.input, w.out, w.threads, call?.part(offset));
    offset += w.rows;
  }
}
