/**
 * RankEvaluator: filtered link-prediction evaluation. Feed score batches (or sampled scores, or ranks computed
 * elsewhere) per side; ranks of the three types, candidate counts and task keys accumulate per side; finalize()
 * turns them into every metric. State is O(tasks) and serialisable, so shards merge exactly.
 */
import { backendInfo, kernels } from "../backend";
import { KgrankInputError, KgrankStateError, watchDetach } from "../errors";
import type { FilteredCountBuffers, FilterIndexHandle, FloatArray, Side } from "../kernels";
import { DEFAULT_KS, metricSelection } from "../metrics/index";
import type { RankMetric } from "../metrics/types";
import { computeSampledRanks, computeSampledRanksSync, ranksFromCounts } from "../ranking/ranks";
import { type BreakdownSource, RankResults } from "./results";
import { type BootstrapOptions, checkBootstrap, type SidePart, subsetPart, tabulate } from "./tabulate";
import { describe, floatMatrix, integer, optionKeys, options, threadCount } from "../validate";
import { decodeState, encodeState, type StateHeader } from "./state";
import { TaskBuffer, type TaskColumns } from "./task-buffer";
import { ChunkedBatch, type ChunkedBatchOptions } from "./chunked";

export type EvaluationSide = Side;
export type Weighting = "micro" | "macro";

export interface RankEvaluatorOptions {
  /** Number of entities: score rows have this many columns (entity ids 0 .. numEntities-1). */
  numEntities: number;
  /** Number of relations (default: 1 + the largest relation id in filterTriples, or unbounded when unfiltered). */
  numRelations?: number;
  /**
   * Known triples for the filtered setting (t x 3 Int32Array: head, relation, tail), one array or several
   * (train, valid, test). Include the evaluated split: like PyKEEN, the evaluation triples always filter; add()
   * checks that every evaluated triple is in this set. Omit for the unfiltered (raw) setting.
   */
  filterTriples?: Int32Array | Int32Array[];
  /** Sides to evaluate: "both" (default), "head" or "tail". */
  sides?: "both" | EvaluationSide;
  /** Cut-offs of Hits@k and its derived metrics (default [1, 3, 5, 10]). */
  ks?: number[];
  /** Metric keys or synonyms to report (default: every metric that applies). */
  metrics?: string[];
  /** Only tasks whose head and tail are in this set are evaluated, and only these entities are candidates. */
  restrictEntities?: ArrayLike<number>;
  /** Only tasks whose relation is in this set are evaluated. */
  restrictRelations?: ArrayLike<number>;
  /** "micro" (default: every task weighs 1) or "macro" (PyKEEN's MacroRankBasedEvaluator). */
  weighting?: Weighting;
  /** Threads for native kernels. */
  threads?: number;
}

export interface FinalizeOptions {
  /** Bootstrap percentile intervals over tasks for every metric (RankResults.interval(key)). */
  bootstrap?: BootstrapOptions;
}

export interface ScoreBatch {
  /** The evaluated triples of the batch: b x 3 (head, relation, tail). */
  triples: Int32Array | ArrayLike<number>;
  /** Which side the scores predict: "tail" scores (h, r, e) for every e, "head" scores (e, r, t). */
  side: EvaluationSide;
  /** Row-major b x numEntities scores. NaN marks a non-candidate. */
  scores: Float32Array | Float64Array;
  threads?: number;
}

export interface SampledBatch {
  /** The evaluated triples (b x 3), used for relations and keys; optional. */
  triples?: Int32Array | ArrayLike<number>;
  side: EvaluationSide;
  /** Score of each true triple (length b). */
  positiveScores: ArrayLike<number>;
  /** b x K negatives' scores. */
  negativeScores: Float32Array | Float64Array;
  threads?: number;
}

export interface RanksBatch {
  side: EvaluationSide;
  /** Ranks by type; give at least one. A missing type is unknown for these tasks (its metrics become NaN). */
  optimistic?: ArrayLike<number>;
  pessimistic?: ArrayLike<number>;
  realistic?: ArrayLike<number>;
  /** Candidates per task (the true one included). */
  numCandidates: ArrayLike<number>;
  /** Explicit per-task weights (finite, >= 0; a zero weight makes the task count for nothing, as in PyKEEN). */
  weights?: ArrayLike<number>;
  /** Relation of each task, for per-relation breakdowns. */
  relations?: ArrayLike<number>;
}

const EVALUATOR_KEYS = optionKeys<RankEvaluatorOptions>({
  numEntities: 1, numRelations: 1, filterTriples: 1, sides: 1, ks: 1, metrics: 1, restrictEntities: 1, restrictRelations: 1,
  weighting: 1, threads: 1,
});
const SCORE_BATCH_KEYS = optionKeys<ScoreBatch>({ triples: 1, side: 1, scores: 1, threads: 1 });
const SAMPLED_BATCH_KEYS = optionKeys<SampledBatch>({ triples: 1, side: 1, positiveScores: 1, negativeScores: 1, threads: 1 });
const RANKS_BATCH_KEYS = optionKeys<RanksBatch>({
  side: 1, optimistic: 1, pessimistic: 1, realistic: 1, numCandidates: 1, weights: 1, relations: 1,
});
const CHUNKED_KEYS = optionKeys<ChunkedBatchOptions>({ triples: 1, side: 1, trueScores: 1, threads: 1 });

/** Provenance of an evaluation: what was filtered, skipped and how tasks were weighted. */
export interface EvaluationInfo {
  numEntities: number;
  numRelations: number | null;
  filtered: boolean;
  /** Rows of each filterTriples array, as given. */
  filterTriples: number[];
  /** Distinct known triples over all filterTriples arrays (null when unfiltered, or restored from an older state). */
  knownTriples: number | null;
  sides: EvaluationSide[];
  tasks: Record<EvaluationSide, number>;
  skipped: Record<EvaluationSide, number>;
  restrictEntities: number | null;
  restrictRelations: number | null;
  weighting: Weighting | "explicit";
  ks: number[];
  metrics: string[] | null;
}

function idSet(name: string, value: unknown, bound: number | null): Int32Array {
  const arr = value as ArrayLike<unknown>;
  if (!(Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView)))) {
    throw new KgrankInputError(name, `must be an array of ids, got ${describe(value)}`);
  }
  const out = new Int32Array(arr.length);
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i];
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || (bound !== null && v >= bound)) {
      throw new KgrankInputError(name, `${name}[${i}] = ${describe(v)} is not an id in [0, ${bound ?? "2^31"})`);
    }
    out[i] = v;
  }
  if (out.length === 0) throw new KgrankInputError(name, "is empty: nothing would be evaluated");
  return out;
}

/**
 * The common case of tripleArray, on a monomorphic Int32Array (values are integers already): true when every id is in
 * range. Otherwise the general loop below finds the first bad value and names it.
 */
function int32TriplesInRange(t: Int32Array, numEntities: number, numRelations: number | null): boolean {
  // Unsigned compares (x >>> 0): a negative id becomes >= 2^31 and fails the bound too.
  const relBound = numRelations ?? 2147483647;
  for (let i = 0; i + 2 < t.length; i += 3) {
    if (t[i]! >>> 0 >= numEntities || t[i + 1]! >>> 0 >= relBound || t[i + 2]! >>> 0 >= numEntities) return false;
  }
  return true;
}

/** The error for a batch whose task `task` has a NaN true score (a NaN score is not a candidate). */
function nanTrueScore(task: number): KgrankInputError {
  return new KgrankInputError(
    "scores",
    `the true score of task ${task} of the batch is NaN: a NaN score marks a non-candidate, so the true answer has no rank`,
  );
}

/** Count columns of a batch, plus room for the rank columns record() derives from them. */
interface BatchCounts extends FilteredCountBuffers {
  realistic: Float64Array;
  weight: Float64Array;
}

function tripleArray(name: string, value: unknown, numEntities: number, numRelations: number | null): Int32Array {
  const isView = ArrayBuffer.isView(value) && !(value instanceof DataView);
  if (!isView && !Array.isArray(value)) {
    throw new KgrankInputError(name, `must be an Int32Array of (head, relation, tail) rows, got ${describe(value)}`);
  }
  const arr = value as ArrayLike<unknown>;
  if (arr.length % 3 !== 0) throw new KgrankInputError(name, `has ${arr.length} elements, not a multiple of 3 (rows of head, relation, tail)`);
  if (value instanceof Int32Array && int32TriplesInRange(value, numEntities, numRelations)) return value;
  const out = value instanceof Int32Array ? value : new Int32Array(arr.length);
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i];
    const isRel = i % 3 === 1;
    const bound = isRel ? numRelations : numEntities;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || (bound !== null && v >= bound) || v > 2147483647) {
      const what = isRel ? "relation" : i % 3 === 0 ? "head" : "tail";
      throw new KgrankInputError(
        name,
        `row ${Math.floor(i / 3)}: ${what} ${describe(v)} is not an id in [0, ${bound ?? "2^31"})`,
      );
    }
    if (out !== value) out[i] = v;
  }
  return out;
}

function sideArg(value: unknown, allowed: EvaluationSide[]): EvaluationSide {
  if (value !== "head" && value !== "tail") {
    throw new KgrankInputError("side", `must be "head" or "tail", got ${describe(value)}`);
  }
  if (!allowed.includes(value)) {
    throw new KgrankInputError("side", `"${value}" is not evaluated by this RankEvaluator (sides: ${allowed.join(", ")})`);
  }
  return value;
}

export class RankEvaluator {
  readonly numEntities: number;
  readonly numRelations: number | null;
  readonly sides: EvaluationSide[];
  readonly ks: number[];
  readonly metricKeys: string[] | null;
  readonly weighting: Weighting;
  private readonly threads: number | undefined;
  private readonly filterSizes: number[];
  private readonly filter: Partial<Record<EvaluationSide, FilterIndexHandle>> | null;
  private readonly restrictRelations: Uint8Array | null;
  /** Entity id -> compact candidate id under entity restriction (-1: excluded); null without restriction. */
  private readonly compact: Int32Array | null;
  private readonly keptEntities: Int32Array | null;
  private readonly tasks: Record<EvaluationSide, TaskBuffer> = { head: new TaskBuffer(), tail: new TaskBuffer() };
  private readonly skippedTasks: Record<EvaluationSide, number> = { head: 0, tail: 0 };
  private explicitWeights = false;
  private pending = 0;
  private finished = false;
  /** Provenance of the shards this evaluator was restored or merged from; it then takes no more batches. */
  private restored: StateHeader | null = null;

  constructor(args: RankEvaluatorOptions) {
    const o = options("RankEvaluator options", args, EVALUATOR_KEYS);
    this.numEntities = integer("numEntities", o.numEntities, 1, 2 ** 31 - 1);
    const filterList = o.filterTriples === undefined ? [] : Array.isArray(o.filterTriples) ? o.filterTriples : [o.filterTriples];
    let numRelations: number | null = o.numRelations === undefined ? null : integer("numRelations", o.numRelations, 1, 2 ** 31 - 1);
    const checked = filterList.map((t, i) => tripleArray(`filterTriples[${i}]`, t, this.numEntities, numRelations));
    if (numRelations === null && checked.length > 0) {
      let max = -1;
      for (const t of checked) for (let i = 1; i < t.length; i += 3) if (t[i]! > max) max = t[i]!;
      numRelations = max + 1;
    }
    this.numRelations = numRelations;
    const sides = o.sides ?? "both";
    if (sides !== "both" && sides !== "head" && sides !== "tail") {
      throw new KgrankInputError("sides", `must be "both", "head" or "tail", got ${describe(sides)}`);
    }
    this.sides = sides === "both" ? ["head", "tail"] : [sides];
    const ks = o.ks ?? [...DEFAULT_KS];
    if (!Array.isArray(ks) || ks.length === 0) throw new KgrankInputError("ks", `must be a non-empty array of integers >= 1, got ${describe(ks)}`);
    this.ks = [...new Set(ks.map((k, i) => integer(`ks[${i}]`, k, 1)))].sort((a, b) => a - b);
    if (o.metrics !== undefined && (!Array.isArray(o.metrics) || o.metrics.some((m) => typeof m !== "string"))) {
      throw new KgrankInputError("metrics", `must be an array of metric names, got ${describe(o.metrics)}`);
    }
    this.metricKeys = (o.metrics as string[] | undefined) ?? null;
    // Resolve the names now: a misspelt metric must fail here, not in finalize() after an hour-long run.
    metricSelection(this.metricKeys, this.ks);
    const weighting = o.weighting ?? "micro";
    if (weighting !== "micro" && weighting !== "macro") {
      throw new KgrankInputError("weighting", `must be "micro" or "macro", got ${describe(weighting)}`);
    }
    this.weighting = weighting;
    this.threads = threadCount(o.threads);
    this.filterSizes = checked.map((t) => t.length / 3);

    this.restrictRelations = null;
    if (o.restrictRelations !== undefined) {
      const ids = idSet("restrictRelations", o.restrictRelations, this.numRelations);
      let max = 0;
      for (const r of ids) max = Math.max(max, r);
      this.restrictRelations = new Uint8Array(max + 1);
      for (const r of ids) this.restrictRelations[r] = 1;
    }
    this.compact = null;
    this.keptEntities = null;
    if (o.restrictEntities !== undefined) {
      const ids = idSet("restrictEntities", o.restrictEntities, this.numEntities);
      const kept = Int32Array.from(new Set(ids)).sort();
      this.compact = new Int32Array(this.numEntities).fill(-1);
      kept.forEach((e, i) => (this.compact![e] = i));
      this.keptEntities = kept;
    }

    if (checked.length === 0) {
      this.filter = null;
    } else {
      // Under entity restriction the index lives in compact ids; triples touching excluded entities cannot matter
      // (an excluded anchor's task is skipped, an excluded answer is no candidate).
      const triples = this.compact ? checked.map((t) => this.toCompact(t)) : checked;
      const n = this.keptEntities ? this.keptEntities.length : this.numEntities;
      this.filter = {};
      for (const side of this.sides) {
        this.filter[side] = kernels().buildFilterIndex(triples, n, this.numRelations!, side, this.threads);
      }
    }
  }

  /** Triples with both entities kept, in compact ids. */
  private toCompact(t: Int32Array): Int32Array {
    const c = this.compact!;
    const out: number[] = [];
    for (let i = 0; i < t.length; i += 3) {
      const h = c[t[i]!]!;
      const tail = c[t[i + 2]!]!;
      if (h >= 0 && tail >= 0) out.push(h, t[i + 1]!, tail);
    }
    return Int32Array.from(out);
  }

  private checkOpen(what: string): void {
    if (this.finished) throw new KgrankStateError(`RankEvaluator.${what}: finalize() was already called; create a new evaluator`);
    if (this.restored) {
      throw new KgrankStateError(
        `RankEvaluator.${what}: this evaluator was restored from serialized state; it can be finalized or merged, ` +
          `not fed more tasks (feed the shards, then merge them)`,
      );
    }
  }

  /** Which tasks of a batch are evaluated (restriction), or null when all are. */
  private keepMask(triples: Int32Array): Uint8Array | null {
    if (!this.restrictRelations && !this.compact) return null;
    const rows = triples.length / 3;
    const keep = new Uint8Array(rows);
    for (let i = 0; i < rows; i++) {
      const r = triples[3 * i + 1]!;
      const relOk = !this.restrictRelations || (r < this.restrictRelations.length && this.restrictRelations[r] === 1);
      const entOk = !this.compact || (this.compact[triples[3 * i]!]! >= 0 && this.compact[triples[3 * i + 2]!]! >= 0);
      keep[i] = relOk && entOk ? 1 : 0;
    }
    return keep;
  }

  /**
   * Which rows of a batch are evaluated (restriction) and their keys: anchor, relation and answer, in the
   * index's (compact) ids and in original ids. Checks that every evaluated triple is in the filter.
   */
  private taskKeys(side: EvaluationSide, triples: Int32Array, checkFilter = true) {
    const rows = triples.length / 3;
    const keep = this.keepMask(triples);
    let kept = rows;
    if (keep) kept = keep.reduce((a, b) => a + b, 0);
    // One allocation for the key columns; without entity restriction the index ids are the original ids and the
    // columns are shared (they are only read from here on).
    const c = this.compact;
    const cols = new Int32Array((c ? 5 : 3) * kept);
    const origAnchor = cols.subarray(0, kept);
    const origTruth = cols.subarray(kept, 2 * kept);
    const relation = cols.subarray(2 * kept, 3 * kept);
    const anchor = c ? cols.subarray(3 * kept, 4 * kept) : origAnchor;
    const truth = c ? cols.subarray(4 * kept, 5 * kept) : origTruth;
    const a = side === "tail" ? 0 : 2;
    const b = 2 - a;
    let k = 0;
    for (let i = 0; i < rows; i++) {
      if (keep && !keep[i]) continue;
      origAnchor[k] = triples[3 * i + a]!;
      origTruth[k] = triples[3 * i + b]!;
      relation[k] = triples[3 * i + 1]!;
      k++;
    }
    if (c) {
      for (let i = 0; i < kept; i++) {
        anchor[i] = c[origAnchor[i]!]!;
        truth[i] = c[origTruth[i]!]!;
      }
    }
    const index = this.filter ? this.filter[side]! : null;
    const keys = { keep, kept, anchor, relation, truth, origAnchor, origTruth, index, side };
    if (index && kept > 0 && checkFilter) {
      const missing = index.missing(anchor, relation, truth);
      if (missing >= 0) this.notInFilter(keys, missing);
    }
    return keys;
  }

  private notInFilter(
    k: { side: EvaluationSide; origAnchor: Int32Array; origTruth: Int32Array; relation: Int32Array }, row: number,
  ): never {
    const [h, t] = k.side === "tail" ? [k.origAnchor[row], k.origTruth[row]] : [k.origTruth[row], k.origAnchor[row]];
    throw new KgrankInputError(
      "triples",
      `the evaluated triple (${h}, ${k.relation[row]}, ${t}) is not in filterTriples: include the evaluation ` +
        `split in filterTriples (the evaluated triples always filter, as in PyKEEN)`,
    );
  }

  private prepareBatch(args: unknown) {
    this.checkOpen("add");
    const o = options("batch", args, SCORE_BATCH_KEYS);
    const side = sideArg(o.side, this.sides);
    const scores = floatMatrix("scores", o.scores);
    const triples = tripleArray("triples", o.triples, this.numEntities, this.numRelations);
    const rows = triples.length / 3;
    if (rows === 0) throw new KgrankInputError("triples", "is empty: pass at least one triple");
    if (scores.length !== rows * this.numEntities) {
      throw new KgrankInputError(
        "scores",
        `has ${scores.length} elements; a batch of ${rows} triples needs ${rows} x numEntities ${this.numEntities} = ` +
          `${rows * this.numEntities} (row-major, one row per triple)`,
      );
    }
    // The filtered count itself checks that each evaluated triple is in the filter (removed = -1 otherwise).
    const keys = this.taskKeys(side, triples, false);
    const { keep, kept } = keys;
    // Gather what is evaluated: kept rows, and under entity restriction only the kept candidate columns.
    const n = this.keptEntities ? this.keptEntities.length : this.numEntities;
    let rowsScores: FloatArray = scores;
    if (this.keptEntities || kept < rows) {
      rowsScores = scores instanceof Float32Array ? new Float32Array(kept * n) : new Float64Array(kept * n);
      let k = 0;
      for (let i = 0; i < rows; i++) {
        if (keep && !keep[i]) continue;
        const row = scores.subarray(i * this.numEntities, (i + 1) * this.numEntities);
        if (this.keptEntities) {
          const dst = k * n;
          for (let j = 0; j < n; j++) rowsScores[dst + j] = row[this.keptEntities[j]!]!;
        } else {
          rowsScores.set(row, k * n);
        }
        k++;
      }
    }
    const { anchor, relation, truth, origAnchor, origTruth, index } = keys;
    return {
      side, scores: rowsScores, n, rows, kept, anchor, relation, truth, origAnchor, origTruth, index,
      threads: threadCount(o.threads) ?? this.threads,
    };
  }

  private record(
    p: ReturnType<RankEvaluator["prepareBatch"]>, counts: BatchCounts, thresholds: FloatArray,
  ): void {
    const kept = p.kept;
    for (let i = 0; i < kept; i++) if (thresholds[i] !== thresholds[i]) throw nanTrueScore(i);
    const { nan, removed, realistic, weight } = counts;
    if (p.index) {
      for (let i = 0; i < kept; i++) if (removed[i]! < 0) this.notInFilter(p, i);
    }
    // The count columns become the rank columns in place (the true candidate is one of the columns); candidates then
    // lose the other known answers the filter removed.
    const ranks = ranksFromCounts(counts, p.n, true, realistic);
    for (let i = 0; i < kept; i++) nan[i] = nan[i]! - removed[i]!;
    weight.fill(NaN);
    this.skippedTasks[p.side] += p.rows - kept;
    this.tasks[p.side].adopt({
      ...ranks, relation: p.relation, anchor: p.origAnchor, truth: p.origTruth, weight,
    });
  }

  private newCounts(rows: number): BatchCounts {
    // One allocation for the kernel's count columns and the rank columns they turn into: each typed array costs
    // about a microsecond to create, and a batch needs six.
    const b = new Float64Array(6 * rows);
    return {
      greater: b.subarray(0, rows), equal: b.subarray(rows, 2 * rows), nan: b.subarray(2 * rows, 3 * rows),
      removed: b.subarray(3 * rows, 4 * rows), realistic: b.subarray(4 * rows, 5 * rows),
      weight: b.subarray(5 * rows, 6 * rows),
    };
  }

  /**
   * Starts a batch whose scores arrive in entity slices ([start, end) column ranges of the same rows); each slice
   * is counted and the filter applied as it arrives, so rows x numEntities scores never need to exist at once.
   * Give the true triples' scores up front; call finish() after the last slice to record the ranks.
   */
  chunked(batch: ChunkedBatchOptions): ChunkedBatch {
    this.checkOpen("chunked");
    const o = options("batch", batch, CHUNKED_KEYS);
    const side = sideArg(o.side, this.sides);
    const triples = tripleArray("triples", o.triples, this.numEntities, this.numRelations);
    const rows = triples.length / 3;
    if (rows === 0) throw new KgrankInputError("triples", "is empty: pass at least one triple");
    const keys = this.taskKeys(side, triples);
    const threads = threadCount(o.threads) ?? this.threads;
    const result = new ChunkedBatch({
      rows, kept: keys.kept, keep: keys.keep, numEntities: this.numEntities, keptEntities: this.keptEntities,
      anchor: keys.anchor, relation: keys.relation, truth: keys.truth, index: keys.index, threads,
      record: (ranks) => {
        this.tasks[side].append({
          ...ranks, relation: keys.relation, anchor: keys.origAnchor, truth: keys.origTruth,
          weight: new Float64Array(keys.kept).fill(NaN),
        });
        this.skippedTasks[side] += rows - keys.kept;
      },
      release: () => this.pending--,
    }, o.trueScores as ArrayLike<number>);
    this.pending++;
    return result;
  }

  /**
   * The common filtered batch in one native call (native backend, no restriction, Int32Array triples, one score row
   * per triple): id checks, keys, the filtered count and the ranks, with no per-row JavaScript. Returns false when the
   * batch does not qualify (the general path then handles it, and raises any input error with its usual message).
   */
  private addSyncNative(batch: ScoreBatch): boolean {
    if (this.restrictRelations || this.compact || this.finished || this.restored) return false;
    if (batch === null || typeof batch !== "object") return false;
    const { triples, scores, side } = batch;
    if (side !== "head" && side !== "tail") return false;
    const index = this.filter?.[side];
    if (!index?.rankTriples || !this.sides.includes(side)) return false;
    if (!(triples instanceof Int32Array) || !(scores instanceof Float32Array || scores instanceof Float64Array)) return false;
    const rows = triples.length / 3;
    if (rows === 0 || !Number.isInteger(rows) || scores.length !== rows * this.numEntities) return false;
    const threads = batch.threads === undefined ? this.threads : threadCount(batch.threads);
    const keys = new Int32Array(3 * rows);
    const th = scores instanceof Float32Array ? new Float32Array(rows) : new Float64Array(rows);
    const out = new Float64Array(6 * rows);
    const code = index.rankTriples(scores, triples, keys, th, out, threads);
    if (code !== -1) {
      const kind = Math.floor(code / 4294967296);
      const row = code - kind * 4294967296;
      // An id out of the index's range: nothing was recorded, so the general path reports it with its usual message.
      if (kind === 1) return false;
      if (kind === 2) throw nanTrueScore(row);
      this.notInFilter({ side, relation: keys.subarray(0, rows), origAnchor: keys.subarray(rows, 2 * rows), origTruth: keys.subarray(2 * rows) }, row);
    }
    this.tasks[side].adopt({
      optimistic: out.subarray(0, rows), pessimistic: out.subarray(rows, 2 * rows), realistic: out.subarray(2 * rows, 3 * rows),
      numCandidates: out.subarray(3 * rows, 4 * rows), weight: out.subarray(4 * rows, 5 * rows),
      relation: keys.subarray(0, rows), anchor: keys.subarray(rows, 2 * rows), truth: keys.subarray(2 * rows),
    });
    return true;
  }

  /** Adds a batch of scores for one side, on the calling thread. */
  addSync(batch: ScoreBatch): void {
    if (this.addSyncNative(batch)) return;
    const p = this.prepareBatch(batch);
    if (p.kept === 0) {
      this.skippedTasks[p.side] += p.rows;
      return;
    }
    const counts = this.newCounts(p.kept);
    const th = p.scores instanceof Float32Array ? new Float32Array(p.kept) : new Float64Array(p.kept);
    if (p.index) p.index.countFiltered(p.scores, p.anchor, p.relation, p.truth, th, counts, p.threads);
    else kernels().countScoresByIndex(p.scores, p.n, p.truth, th, counts, p.threads);
    this.record(p, counts, th);
  }

  /** Adds a batch of scores for one side, counting off the JavaScript thread. Batches may be added concurrently. */
  async add(batch: ScoreBatch): Promise<void> {
    const p = this.prepareBatch(batch);
    if (p.kept === 0) {
      this.skippedTasks[p.side] += p.rows;
      return;
    }
    const counts = this.newCounts(p.kept);
    const th = p.scores instanceof Float32Array ? new Float32Array(p.kept) : new Float64Array(p.kept);
    const watch = watchDetach({ scores: p.scores, anchor: p.anchor, relation: p.relation, truth: p.truth });
    this.pending++;
    try {
      if (p.index) await p.index.countFilteredAsync(p.scores, p.anchor, p.relation, p.truth, th, counts, p.threads);
      else await kernels().countScoresByIndexAsync(p.scores, p.n, p.truth, th, counts, p.threads);
    } finally {
      this.pending--;
    }
    watch.check();  // nothing is recorded from a batch whose inputs were given away mid-call
    this.record(p, counts, th);
  }

  private sampledKeys(o: Record<string, unknown>, side: EvaluationSide, n: number) {
    const relation = new Int32Array(n).fill(-1);
    const anchor = new Int32Array(n).fill(-1);
    const truth = new Int32Array(n).fill(-1);
    if (o.triples !== undefined) {
      const t = tripleArray("triples", o.triples, this.numEntities, this.numRelations);
      if (t.length !== 3 * n) throw new KgrankInputError("triples", `must have ${n} rows (one per positive), got ${t.length / 3}`);
      for (let i = 0; i < n; i++) {
        relation[i] = t[3 * i + 1]!;
        anchor[i] = side === "tail" ? t[3 * i]! : t[3 * i + 2]!;
        truth[i] = side === "tail" ? t[3 * i + 2]! : t[3 * i]!;
      }
    }
    return { relation, anchor, truth };
  }

  /** Adds OGB-style sampled scores (no filtering: the negatives are the candidates). */
  async addSampled(batch: SampledBatch): Promise<void> {
    this.checkOpen("addSampled");
    const o = options("batch", batch, SAMPLED_BATCH_KEYS);
    const side = sideArg(o.side, this.sides);
    this.pending++;
    let ranks;
    try {
      ranks = await computeSampledRanks({
        positiveScores: o.positiveScores as ArrayLike<number>,
        negativeScores: o.negativeScores as FloatArray,
        threads: (o.threads as number | undefined) ?? this.threads,
      });
    } finally {
      this.pending--;
    }
    const keys = this.sampledKeys(o, side, ranks.optimistic.length);
    this.tasks[side].append({ ...ranks, ...keys, weight: new Float64Array(ranks.optimistic.length).fill(NaN) });
  }

  /** addSampled on the calling thread. */
  addSampledSync(batch: SampledBatch): void {
    this.checkOpen("addSampled");
    const o = options("batch", batch, SAMPLED_BATCH_KEYS);
    const side = sideArg(o.side, this.sides);
    const ranks = computeSampledRanksSync({
      positiveScores: o.positiveScores as ArrayLike<number>,
      negativeScores: o.negativeScores as FloatArray,
      threads: (o.threads as number | undefined) ?? this.threads,
    });
    const keys = this.sampledKeys(o, side, ranks.optimistic.length);
    this.tasks[side].append({ ...ranks, ...keys, weight: new Float64Array(ranks.optimistic.length).fill(NaN) });
  }

  /** Adds ranks computed elsewhere (e.g. exported from PyTorch). */
  addRanks(batch: RanksBatch): void {
    this.checkOpen("addRanks");
    const o = options("batch", batch, RANKS_BATCH_KEYS);
    const side = sideArg(o.side, this.sides);
    const nc = o.numCandidates as ArrayLike<unknown>;
    if (!(Array.isArray(nc) || (ArrayBuffer.isView(nc) && !(nc instanceof DataView)))) {
      throw new KgrankInputError("numCandidates", `must be an array of numbers, got ${describe(nc)}`);
    }
    const n = nc.length;
    if (n === 0) throw new KgrankInputError("numCandidates", "is empty: pass at least one task");
    const numCandidates = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const v = nc[i];
      if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
        throw new KgrankInputError("numCandidates", `numCandidates[${i}] = ${describe(v)} is not an integer >= 1`);
      }
      numCandidates[i] = v;
    }
    const given = (["optimistic", "pessimistic", "realistic"] as const).filter((k) => o[k] !== undefined);
    if (given.length === 0) {
      throw new KgrankInputError("ranks", "give at least one of optimistic, pessimistic, realistic (arrays of ranks)");
    }
    const cols: Record<"optimistic" | "pessimistic" | "realistic", Float64Array> = {
      optimistic: new Float64Array(n).fill(NaN),
      pessimistic: new Float64Array(n).fill(NaN),
      realistic: new Float64Array(n).fill(NaN),
    };
    for (const k of given) {
      const arr = o[k] as ArrayLike<unknown>;
      if (!(Array.isArray(arr) || ArrayBuffer.isView(arr)) || arr.length !== n) {
        throw new KgrankInputError(k, `must be an array with one rank per task (${n}), got ${describe(arr)}`);
      }
      for (let i = 0; i < n; i++) {
        const v = arr[i];
        const twice = typeof v === "number" ? 2 * v : NaN;
        if (typeof v !== "number" || !Number.isInteger(twice) || v < 1 || v > numCandidates[i]!) {
          throw new KgrankInputError(
            k,
            `${k}[${i}] = ${describe(v)} is not a rank in [1, numCandidates[${i}] = ${numCandidates[i]}] (integers or halves)`,
          );
        }
        cols[k][i] = v;
      }
    }
    const weight = new Float64Array(n).fill(NaN);
    if (o.weights !== undefined) {
      const w = o.weights as ArrayLike<unknown>;
      if (!(Array.isArray(w) || ArrayBuffer.isView(w)) || w.length !== n) {
        throw new KgrankInputError("weights", `must be an array with one weight per task (${n}), got ${describe(w)}`);
      }
      for (let i = 0; i < n; i++) {
        const v = w[i];
        if (typeof v !== "number" || !(v >= 0) || !Number.isFinite(v)) {
          throw new KgrankInputError("weights", `weights[${i}] = ${describe(v)} is not a finite number >= 0 (0: the task counts for nothing)`);
        }
        weight[i] = v;
      }
      this.explicitWeights = true;
    }
    const relation = new Int32Array(n).fill(-1);
    if (o.relations !== undefined) relation.set(idSet("relations", o.relations, this.numRelations));
    const minusOne = new Int32Array(n).fill(-1);
    this.tasks[side].append({ ...cols, numCandidates, weight, relation, anchor: minusOne, truth: minusOne });
  }

  /** Tasks recorded so far per side. */
  get taskCounts(): Record<EvaluationSide, number> {
    return { head: this.tasks.head.length, tail: this.tasks.tail.length };
  }

  /** The recorded tasks of a side (views; do not modify). */
  taskColumns(side: EvaluationSide): TaskColumns {
    return this.tasks[side].columns();
  }

  /** Provenance of the evaluation so far. */
  info(): EvaluationInfo {
    if (this.restored) {
      const h = this.restored;
      return {
        numEntities: h.numEntities, numRelations: h.numRelations, filtered: h.filtered, filterTriples: [...h.filterTriples],
        knownTriples: h.knownTriples ?? null,
        sides: [...h.sides], tasks: this.taskCounts, skipped: { ...this.skippedTasks },
        restrictEntities: h.restrictEntities, restrictRelations: h.restrictRelations,
        weighting: this.explicitWeights ? "explicit" : h.weighting, ks: [...h.ks], metrics: h.metrics ? [...h.metrics] : null,
      };
    }
    return {
      numEntities: this.numEntities,
      numRelations: this.numRelations,
      filtered: this.filter !== null,
      filterTriples: [...this.filterSizes],
      knownTriples: this.filter ? Object.values(this.filter)[0]!.stats().answers : null,
      sides: [...this.sides],
      tasks: this.taskCounts,
      skipped: { ...this.skippedTasks },
      restrictEntities: this.keptEntities ? this.keptEntities.length : null,
      restrictRelations: this.restrictRelations ? this.restrictRelations.reduce((a, b) => a + b, 0) : null,
      weighting: this.explicitWeights ? "explicit" : this.weighting,
      ks: [...this.ks],
      metrics: this.metricKeys ? [...this.metricKeys] : null,
    };
  }

  /** Per-task weights of a side: explicit, macro (1 / distinct answers of the task's key), or null (micro). */
  taskWeights(side: EvaluationSide): Float64Array | null {
    const cols = this.tasks[side].columns();
    const n = cols.optimistic.length;
    if (this.explicitWeights) {
      return Float64Array.from(cols.weight, (w) => (w === w ? w : 1));
    }
    if (this.weighting === "micro") return null;
    const answers = new Map<string, Set<number>>();
    for (let i = 0; i < n; i++) {
      if (cols.anchor[i]! < 0) {
        throw new KgrankStateError("macro weighting needs the triples of every task; ranks added without triples have none");
      }
      const key = `${cols.anchor[i]},${cols.relation[i]}`;
      let s = answers.get(key);
      if (!s) answers.set(key, (s = new Set()));
      s.add(cols.truth[i]!);
    }
    const w = new Float64Array(n);
    for (let i = 0; i < n; i++) w[i] = 1 / answers.get(`${cols.anchor[i]},${cols.relation[i]}`)!.size;
    return w;
  }

  private header(): StateHeader {
    const i = this.info();
    return {
      format: 1, numEntities: i.numEntities, numRelations: i.numRelations, sides: i.sides, ks: i.ks, metrics: i.metrics,
      weighting: this.restored ? this.restored.weighting : this.weighting, explicitWeights: this.explicitWeights,
      filtered: i.filtered, filterTriples: i.filterTriples, knownTriples: i.knownTriples, restrictEntities: i.restrictEntities,
      restrictRelations: i.restrictRelations, skipped: i.skipped, tasks: i.tasks,
    };
  }

  /**
   * The evaluator's state (tasks and provenance) as bytes: versioned and checksummed. RankEvaluator.merge() of the
   * states of shards gives exactly the results of one evaluator fed every batch (median included).
   */
  serialize(): Uint8Array {
    if (this.pending > 0) throw new KgrankStateError(`serialize(): ${this.pending} add call(s) are still running; await them first`);
    return encodeState(this.header(), { head: this.tasks.head.columns(), tail: this.tasks.tail.columns() });
  }

  /** An evaluator restored from serialize() bytes (finalize or merge it). */
  static deserialize(state: Uint8Array): RankEvaluator {
    return RankEvaluator.merge([state]);
  }

  /**
   * Combines shards (serialized states or evaluators) into one evaluator holding all their tasks, in the given
   * order. The shards must share numEntities, sides, ks, metrics, weighting, filter and restriction settings.
   */
  static merge(states: (Uint8Array | RankEvaluator)[]): RankEvaluator {
    if (!Array.isArray(states) || states.length === 0) {
      throw new KgrankInputError("states", "must be a non-empty array of serialized states or RankEvaluators");
    }
    const decoded = states.map((s, i) => {
      try {
        return s instanceof RankEvaluator ? decodeState(s.serialize()) : decodeState(s);
      } catch (e) {
        if (e instanceof KgrankInputError) throw new KgrankInputError(`states[${i}]`, e.message.replace(/^state: /, ""));
        throw e;
      }
    });
    const first = decoded[0]!.header;
    const same = (h: StateHeader) =>
      JSON.stringify([h.numEntities, h.numRelations, h.sides, h.ks, h.metrics, h.weighting, h.filtered, h.filterTriples,
        h.restrictEntities, h.restrictRelations]);
    decoded.forEach((d, i) => {
      if (same(d.header) !== same(first)) {
        throw new KgrankInputError(
          `states[${i}]`,
          "was evaluated with other settings (numEntities, sides, ks, metrics, weighting, filter or restriction) than states[0]",
        );
      }
    });
    const ev = new RankEvaluator({
      numEntities: first.numEntities,
      numRelations: first.numRelations ?? undefined,
      sides: first.sides.length === 2 ? "both" : first.sides[0],
      ks: first.ks,
      metrics: first.metrics ?? undefined,
      weighting: first.weighting,
    });
    for (const d of decoded) {
      for (const side of ["head", "tail"] as const) ev.tasks[side].append(d.sides[side]);
      ev.skippedTasks.head += d.header.skipped.head;
      ev.skippedTasks.tail += d.header.skipped.tail;
      ev.explicitWeights ||= d.header.explicitWeights;
    }
    ev.restored = first;
    return ev;
  }

  /** The metrics to report: the `metrics` option resolved, or every metric with Hits-style ones at every k. */
  private reportedMetrics(): RankMetric[] {
    return metricSelection(this.metricKeys, this.ks);
  }

  /**
   * Every metric for sides head, tail and both and each rank type, with expectations under random ranking.
   * Metrics that support only some rank types appear only under those; under weighting, metrics without weight
   * support are left out; a rank type some tasks lack (addRanks without it) is left out for that side.
   */
  finalize(opts: FinalizeOptions = {}): RankResults {
    const o = options("finalize options", opts, optionKeys<FinalizeOptions>({ bootstrap: 1 }));
    const bootstrap = checkBootstrap(o.bootstrap);
    if (this.pending > 0) throw new KgrankStateError(`finalize(): ${this.pending} add call(s) or chunked batch(es) are still running; await / finish them first`);
    if (this.finished) throw new KgrankStateError("finalize(): already called; the RankResults it returned hold the results");
    if (this.tasks.head.length + this.tasks.tail.length === 0) {
      throw new KgrankStateError("finalize(): no task was added; add score batches, sampled scores or ranks first");
    }
    const metrics = this.reportedMetrics();
    const info = { ...this.info(), backend: backendInfo().backend };
    const make = (head: SidePart, tail: SidePart, notes: string[], boot: typeof bootstrap, group?: string): RankResults => {
      const t = tabulate(metrics, head, tail, notes, boot, group ? [] : this.info().sides);
      return new RankResults(
        {
          values: t.values, expected: t.expected, meanRankWidth: t.meanRankWidth, keys: metrics.map((m) => m.key),
          info: { ...structuredClone(info), tasks: { head: t.tasks.head, tail: t.tasks.tail }, notes, ...(group ? { group } : {}) },
          intervals: t.intervals, bootstrap: boot,
        },
        source,
      );
    };
    const source: BreakdownSource = {
      head: { cols: this.tasks.head.columns(), weights: this.taskWeights("head") },
      tail: { cols: this.tasks.tail.columns(), weights: this.taskWeights("tail") },
      tabulate: (head, tail, label) => make(head, tail, [], null, label),
      subset: subsetPart,
    };
    this.finished = true;
    return make(source.head, source.tail, [], bootstrap);
  }
}
