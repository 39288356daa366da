/**
 * RankEvaluator: filtered link-prediction evaluation. Feed score batches (or sampled scores, or ranks computed
 * elsewhere) per side; ranks of the three types, candidate counts and task keys accumulate per side; finalize()
 * turns them into every metric. State is O(tasks) and serialisable, so shards merge exactly.
 *
 * The evaluator only keeps the books: inputs are checked in ./inputs, tasks selected in ./selection, score batches
 * ranked in ./score-batch, weights in ./weighting, results tabulated in ./tabulate (ARCHITECTURE.md: one batch).
 */
import { backendInfo, kernels } from "../backend";
import { KgrankInputError, KgrankStateError, watchDetach } from "../errors";
import type { FilterIndexHandle } from "../kernels";
import { DEFAULT_KS, metricSelection } from "../metrics/index";
import { computeSampledRanks, computeSampledRanksSync } from "../ranking/ranks";
import { describe, integer, options, threadCount, tripleArray } from "../validate";
import { ChunkedBatch } from "./chunked";
import { rankedTasks, sampledArgs, sampledTasks, sideArg } from "./inputs";
import { type BreakdownSource, RankResults } from "./results";
import {
  type BatchContext, countAsync, countSync, finishBatch, prepareScoreBatch, type PreparedBatch, rankFilteredBatch,
} from "./score-batch";
import { type ModelBatch, prepareModelBatch, runModelAsync, runModelSync } from "./model-batch";
import { TaskSelection } from "./selection";
import { decodeState, encodeState, type StateHeader } from "./state";
import { checkBootstrap, subsetPart, tabulate } from "./tabulate";
import { TaskBuffer, type TaskColumns } from "./task-buffer";
import {
  CHUNKED_KEYS, type ChunkedBatchOptions, type EvaluationInfo, type EvaluationSide, EVALUATOR_KEYS, FINALIZE_KEYS,
  type FinalizeOptions, RANKS_BATCH_KEYS, type RankEvaluatorOptions, type RanksBatch, SAMPLED_BATCH_KEYS,
  type SampledBatch, type ScoreBatch, type SidePart, type Weighting,
} from "./types";
import { taskWeights } from "./weighting";

export type {
  EvaluationInfo, EvaluationSide, FinalizeOptions, RankEvaluatorOptions, RanksBatch, SampledBatch, ScoreBatch, Weighting,
} from "./types";

export class RankEvaluator {
  readonly numEntities: number;
  readonly numRelations: number | null;
  readonly sides: EvaluationSide[];
  readonly ks: number[];
  readonly metricKeys: string[] | null;
  readonly weighting: Weighting;
  private readonly threads: number | undefined;
  private readonly filter: Partial<Record<EvaluationSide, FilterIndexHandle>> | null = null;
  private readonly filterSizes: number[];
  /** What score batches need of this evaluator: settings, task selection, filter index. */
  private readonly context: BatchContext;
  private readonly selection: TaskSelection;
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
    this.selection = new TaskSelection(this.numEntities, this.numRelations, o.restrictRelations, o.restrictEntities);
    if (checked.length > 0) {
      const triples = checked.map((t) => this.selection.indexTriples(t));
      this.filter = {};
      for (const side of this.sides) {
        this.filter[side] = kernels().buildFilterIndex(triples, this.selection.numCandidates, this.numRelations!, side, this.threads);
      }
    }
    const { numEntities, sides: evaluated, selection, filter, threads } = this;
    this.context = { numEntities, numRelations, sides: evaluated, selection, filter, threads };
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

  /** Records a batch's task columns (and the rows restriction skipped). */
  private record(side: EvaluationSide, columns: TaskColumns, skipped = 0): void {
    this.tasks[side].adopt(columns);
    this.skippedTasks[side] += skipped;
  }

  private recordBatch(p: PreparedBatch, counted: Parameters<typeof finishBatch>[1] | null): void {
    const { side, rows, kept } = p.keys;
    if (counted) this.record(side, finishBatch(p, counted), rows - kept);
    else this.skippedTasks[side] += rows;
  }

  /** Adds a batch of scores for one side, on the calling thread. */
  addSync(batch: ScoreBatch): void {
    this.checkOpen("add");
    const one = rankFilteredBatch(batch, this.context);
    if (one) return this.record(one.side, one.columns);
    const p = prepareScoreBatch(batch, this.context);
    this.recordBatch(p, p.keys.kept > 0 ? countSync(p) : null);
  }

  /** Adds a batch of scores for one side, counting off the JavaScript thread. Batches may be added concurrently. */
  async add(batch: ScoreBatch): Promise<void> {
    this.checkOpen("add");
    const p = prepareScoreBatch(batch, this.context);
    if (p.keys.kept === 0) return this.recordBatch(p, null);
    const { scores, keys } = p;
    const watch = watchDetach({ scores, anchor: keys.anchor, relation: keys.relation, truth: keys.truth });
    this.pending++;
    let counted;
    try {
      counted = await countAsync(p);
    } finally {
      this.pending--;
    }
    watch.check(); // nothing is recorded from a batch whose inputs were given away mid-call
    this.recordBatch(p, counted);
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
    if (triples.length === 0) throw new KgrankInputError("triples", "is empty: pass at least one triple");
    const keys = this.selection.keys(side, triples, this.filter?.[side] ?? null, true);
    const result = new ChunkedBatch({
      rows: keys.rows, kept: keys.kept, keep: keys.keep, numEntities: this.numEntities, keptEntities: this.selection.keptEntities,
      anchor: keys.anchor, relation: keys.relation, truth: keys.truth, index: keys.index,
      threads: threadCount(o.threads) ?? this.threads,
      record: (ranks) => this.record(side, {
        ...ranks, relation: keys.relation, anchor: keys.origAnchor, truth: keys.origTruth, weight: new Float64Array(keys.kept).fill(NaN),
      }, keys.rows - keys.kept),
      release: () => this.pending--,
    }, o.trueScores as ArrayLike<number>);
    this.pending++;
    return result;
  }

  /**
   * Ranks triples from a model's embeddings (EmbeddingModel): every candidate scored in the kernel and compared
   * with the true score at once, no score matrix; filtered, restricted and weighted as score batches are. Both
   * sides by default. With `negatives`, the OGB protocol (the given K entities per triple are the candidates).
   */
  addModelSync(batch: ModelBatch): void {
    this.checkOpen("addModel");
    const jobs = prepareModelBatch(batch, this.context);
    runModelSync(jobs);
    for (const j of jobs) this.recordModelSide(j.side, j.finish(), j.skipped);
  }

  /** addModelSync off the JavaScript thread (the native kernel runs on the thread pool; the event loop stays free). */
  async addModel(batch: ModelBatch): Promise<void> {
    this.checkOpen("addModel");
    const jobs = prepareModelBatch(batch, this.context);
    this.pending++;
    try {
      await runModelAsync(jobs);
    } finally {
      this.pending--;
    }
    for (const j of jobs) this.recordModelSide(j.side, j.finish(), j.skipped);
  }

  private recordModelSide(side: EvaluationSide, columns: TaskColumns | null, skipped: number): void {
    if (columns) this.record(side, columns, skipped);
    else this.skippedTasks[side] += skipped;
  }

  /** Adds OGB-style sampled scores (no filtering: the negatives are the candidates). */
  async addSampled(batch: SampledBatch): Promise<void> {
    this.checkOpen("addSampled");
    const o = options("batch", batch, SAMPLED_BATCH_KEYS);
    const side = sideArg(o.side, this.sides);
    this.pending++;
    let ranks;
    try {
      ranks = await computeSampledRanks(sampledArgs(o, this.threads));
    } finally {
      this.pending--;
    }
    this.record(side, sampledTasks(o, side, ranks, this.numEntities, this.numRelations));
  }

  /** addSampled on the calling thread. */
  addSampledSync(batch: SampledBatch): void {
    this.checkOpen("addSampled");
    const o = options("batch", batch, SAMPLED_BATCH_KEYS);
    const side = sideArg(o.side, this.sides);
    this.record(side, sampledTasks(o, side, computeSampledRanksSync(sampledArgs(o, this.threads)), this.numEntities, this.numRelations));
  }

  /** Adds ranks computed elsewhere (e.g. exported from PyTorch). */
  addRanks(batch: RanksBatch): void {
    this.checkOpen("addRanks");
    const o = options("batch", batch, RANKS_BATCH_KEYS);
    const side = sideArg(o.side, this.sides);
    const columns = rankedTasks(o, this.numRelations);
    if (o.weights !== undefined) this.explicitWeights = true;
    this.tasks[side].append(columns);
  }

  /** Tasks recorded so far per side. */
  get taskCounts(): Record<EvaluationSide, number> {
    return { head: this.tasks.head.length, tail: this.tasks.tail.length };
  }

  /** The recorded tasks of a side (views; do not modify). */
  taskColumns(side: EvaluationSide): TaskColumns {
    return this.tasks[side].columns();
  }

  /** Per-task weights of a side: explicit, macro (1 / distinct answers of the task's key), or null (micro). */
  taskWeights(side: EvaluationSide): Float64Array | null {
    return taskWeights(this.tasks[side].columns(), this.restored?.weighting ?? this.weighting, this.explicitWeights);
  }

  /** Provenance of the evaluation so far. */
  info(): EvaluationInfo {
    const h = this.restored ?? this.header();
    return {
      numEntities: h.numEntities, numRelations: h.numRelations, filtered: h.filtered, filterTriples: [...h.filterTriples],
      knownTriples: h.knownTriples ?? null, sides: [...h.sides], tasks: this.taskCounts, skipped: { ...this.skippedTasks },
      restrictEntities: h.restrictEntities, restrictRelations: h.restrictRelations,
      weighting: this.explicitWeights ? "explicit" : h.weighting, ks: [...h.ks], metrics: h.metrics ? [...h.metrics] : null,
    };
  }

  /** This evaluator's settings and counts as a state header. */
  private header(): StateHeader {
    if (this.restored) return { ...this.restored, explicitWeights: this.explicitWeights, skipped: { ...this.skippedTasks }, tasks: this.taskCounts };
    return {
      format: 1, numEntities: this.numEntities, numRelations: this.numRelations, sides: [...this.sides], ks: [...this.ks],
      metrics: this.metricKeys ? [...this.metricKeys] : null, weighting: this.weighting, explicitWeights: this.explicitWeights,
      filtered: this.filter !== null, filterTriples: [...this.filterSizes],
      knownTriples: this.filter ? Object.values(this.filter)[0]!.stats().answers : null,
      restrictEntities: this.selection.keptEntities?.length ?? null, restrictRelations: this.selection.keptRelations,
      skipped: { ...this.skippedTasks }, tasks: this.taskCounts,
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

  /**
   * Every metric for sides head, tail and both and each rank type, with expectations under random ranking.
   * Metrics that support only some rank types appear only under those; a rank type some tasks lack (addRanks
   * without it) is left out for that side.
   */
  finalize(opts: FinalizeOptions = {}): RankResults {
    const o = options("finalize options", opts, FINALIZE_KEYS);
    const bootstrap = checkBootstrap(o.bootstrap);
    if (this.pending > 0) throw new KgrankStateError(`finalize(): ${this.pending} add call(s) or chunked batch(es) are still running; await / finish them first`);
    if (this.finished) throw new KgrankStateError("finalize(): already called; the RankResults it returned hold the results");
    if (this.tasks.head.length + this.tasks.tail.length === 0) {
      throw new KgrankStateError("finalize(): no task was added; add score batches, sampled scores or ranks first");
    }
    const metrics = metricSelection(this.metricKeys, this.ks);
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

