/**
 * RankEvaluator: filtered link-prediction evaluation. Feed score batches (or sampled scores, or ranks computed
 * elsewhere) per side; ranks of the three types, candidate counts and task keys accumulate per side; finalize()
 * turns them into every metric. State is O(tasks) and serialisable, so shards merge exactly.
 *
 * The evaluator only keeps the books: inputs are checked in ./inputs, tasks selected in ./selection, score batches
 * ranked in ./score-batch, weights in ./weighting, results in ./finalize + ./tabulate (ARCHITECTURE.md: one batch).
 *
 * Why one file of ~790 lines: what is left here is the one public class, and its methods (add, addModel,
 * addSampled, addRanks, addRelationScores and their sync forms, chunked, serialize / merge, finalize) share its
 * private books: the tickets that record concurrent batches in call order, the per-side task buffers, the filter
 * index handles and the restored state's header. Each method is short and hands its work to the modules above;
 * moving methods to other files would mean exposing those books to them, which is what keeps them consistent.
 */
import { backendInfo, kernels } from "../backend/backend";
import { KgrankInputError, KgrankStateError, watchDetach } from "../checks/errors";
import type { FilterIndexHandle } from "../contract/kernels";
import { metricSelection } from "../metrics/index";
import { type AsyncOptions, callOptions, nestedCall, withCallControl } from "../backend/call-control";
import { computeSampledRanks, computeSampledRanksSync } from "../ranking/ranks";
import { isArrayLike, options, signalOption, tripleArray, type Unchecked } from "../checks/validate";
import { turn } from "../contract/event-loop";
import { memoryBudget, planOption } from "../scoring/entity-chunks";
import { type ChunkedBatch, openChunkedBatch } from "./chunked";
import { finalizeRun, type FinalizeRun, finishAsync } from "./finalize";
import { evaluatorSettings, rankedTasks, sampledArgs, sampledTasks, sideArg } from "./inputs";
import { RelationRanker } from "./relation-ranks";
import {
  batchModel,
  MODEL_BATCH_KEYS,
  type ModelBatch,
  prepareModelBatch,
  runModelAsync,
  runModelSync,
} from "./model-batch";
import { combineEntityShards, type EntityShard, entityShardHeader, entityShardOption } from "./entity-shards";
import { runStreamed } from "./streamed-model";
import type { EmbeddingModel } from "../scoring/embedding-model";
import type { RankResults } from "./results";
import { ColumnArena } from "./column-arena";
import { countAsync, countSync, finishBatch, prepareScoreBatch, rankFilteredBatch } from "./score-batch";
import { type CandidateConstraint, candidateConstraint, rankConstrainedBatch } from "./constrained-batch";
import type { CandidateProtocol, CandidateSets } from "../ranking/candidate-sets";
import { type BatchContext, TaskSelection } from "./selection";
import { decodeShards, encodeState, evaluatorOptions, STATE_FORMAT_VERSION, type StateHeader, withMeta } from "./state";
import { checkBootstrap } from "./tabulate";
import { copyColumns, TaskBuffer, type TaskColumns } from "./task-buffer";
import {
  type ChunkedBatchOptions,
  type EvaluationInfo,
  type EvaluationSide,
  EVALUATOR_KEYS,
  FINALIZE_ASYNC_KEYS,
  FINALIZE_KEYS,
  type FinalizeOptions,
  RANKS_BATCH_KEYS,
  type RankEvaluatorOptions,
  type RanksBatch,
  RELATION_SCORE_KEYS,
  type RelationScoreBatch,
  SAMPLED_BATCH_KEYS,
  type SampledBatch,
  SCORE_BATCH_KEYS,
  type ScoreBatch,
  type SideCounts,
  type TaskSide,
  type TemporalProtocol,
  type Weighting,
} from "./types";
import { taskWeights } from "./weighting";

export type {
  EvaluationInfo,
  EvaluationSide,
  FinalizeOptions,
  RankEvaluatorOptions,
  RanksBatch,
  RelationScoreBatch,
  SampledBatch,
  ScoreBatch,
  SideCounts,
  TaskSide,
  TemporalProtocol,
  Weighting,
} from "./types";

export class RankEvaluator {
  readonly numEntities: number;
  readonly numRelations: number | null;
  /** The evaluated sides, in the order head, tail, relation. */
  readonly sides: TaskSide[];
  readonly ks: number[];
  readonly metricKeys: string[] | null;
  readonly weighting: Weighting;
  private readonly threads: number | undefined;
  private readonly filter: Partial<Record<EvaluationSide, FilterIndexHandle>> | null = null;
  private readonly filterSizes: number[];
  /** What score batches need of this evaluator: settings, task selection, filter index. */
  private readonly context: BatchContext;
  private readonly selection: TaskSelection;
  private readonly tasks: Record<TaskSide, TaskBuffer> = {
    head: new TaskBuffer(),
    tail: new TaskBuffer(),
    relation: new TaskBuffer(),
  };
  private readonly skippedTasks: Record<TaskSide, number> = { head: 0, tail: 0, relation: 0 };
  /** Ranks the relation side's tasks (sides including "relation"), filtered as the entity sides are. */
  private readonly relationRanker: RelationRanker | null = null;
  private explicitWeights = false;
  /** Calls not yet recorded (running, or finished and waiting for an earlier call) plus open chunked batches. */
  private pending = 0;
  /**
   * Call order: each add call takes the next ticket when called; its tasks are recorded only after every earlier
   * ticket was released (recorded, or released empty by a failed or aborted call), so the task order (and with it
   * a seeded bootstrap) is the call order whatever the timing.
   */
  private nextTicket = 0;
  private firstOpenTicket = 0;
  private readonly released = new Map<number, { record: (() => void) | null; done: () => void }>();
  private finished = false;
  /** Provenance of the shards this evaluator was restored or merged from; it then takes no more batches. */
  private restored: StateHeader | null = null;
  /** RankEvaluatorOptions.entityShard: this evaluator keeps partial counts over that entity range (addModel only). */
  private readonly entityShard: EntityShard | null;
  /** RankEvaluatorOptions.temporal: the temporal setting recorded in the state, or null. */
  private readonly temporal: TemporalProtocol | null;
  /** RankEvaluatorOptions.candidates with the indexes its kernel call reads, or null. */
  private readonly constraint: CandidateConstraint | null;
  /** The typed candidates an entity shard's slices were scored against (labelCandidates), or null. */
  private shardCandidates: CandidateProtocol | null = null;

  constructor(args: RankEvaluatorOptions) {
    const fields = options("RankEvaluator options", args, EVALUATOR_KEYS);
    const { numEntities, numRelations, checked, sides, ks, metricKeys, weighting, threads, candidates, temporal } =
      evaluatorSettings(fields);
    this.temporal = temporal;
    this.numEntities = numEntities;
    this.numRelations = numRelations;
    this.sides = sides;
    const entitySides = sides.filter((s): s is EvaluationSide => s !== "relation");
    this.ks = ks;
    this.metricKeys = metricKeys;
    this.weighting = weighting;
    this.threads = threads;
    this.filterSizes = checked.map((t) => t.length / 3);
    this.selection = new TaskSelection(
      this.numEntities,
      this.numRelations,
      fields.restrictRelations,
      fields.restrictEntities,
    );
    if (checked.length > 0) {
      const triples = checked.map((t) => this.selection.indexTriples(t));
      this.filter = {};
      for (const side of entitySides) {
        this.filter[side] = kernels().buildFilterIndex(
          triples,
          this.selection.numCandidates,
          this.numRelations!,
          side,
          this.threads,
        );
      }
    }
    if (sides.includes("relation")) {
      this.relationRanker = new RelationRanker({
        numEntities,
        numRelations: numRelations!,
        ...(checked.length > 0 ? { filterTriples: checked } : {}),
      });
    }
    this.entityShard = entityShardOption(fields.entityShard, numEntities);
    if (this.entityShard && fields.restrictEntities !== undefined) {
      throw new KgrankInputError(
        "entityShard",
        "cannot be combined with restrictEntities: shard the entities or restrict them",
      );
    }
    this.context = {
      numEntities,
      numRelations,
      sides: entitySides,
      selection: this.selection,
      filter: this.filter,
      threads,
      entityRange: this.entityShard ? [this.entityShard.begin, this.entityShard.end] : null,
      arena: new ColumnArena(),
    };
    this.constraint = candidates ? candidateConstraint(candidates, this.context) : null;
  }

  /**
   * Records that this entity shard's chunked slices scored the columns outside each task's typed candidates as NaN
   * (no candidate), so that its state carries the sets' protocol as an evaluator of those candidate sets would: the
   * merged entity shards then report what one evaluator with `candidates` reports (a PyTorch-BigGraph checkpoint's
   * entity types). Entity shards only; before any batch. @internal
   */
  labelCandidates(protocol: CandidateProtocol): void {
    if (!this.entityShard || this.tasks.head.length + this.tasks.tail.length > 0)
      throw new KgrankStateError("labelCandidates: only an entity shard's evaluator, before its first batch");
    this.shardCandidates = { ...protocol };
  }

  /** The typed candidates this evaluator ranks against (RankEvaluatorOptions.candidates), or null. */
  get candidates(): CandidateSets | null {
    return this.constraint?.sets ?? null;
  }

  /**
   * Typed candidates take whole score rows (add / addSync) or a model's embeddings (addModel / addModelSync): the
   * other entry points are refused.
   */
  private checkUnconstrained(what: string, instead: string): void {
    if (this.constraint) {
      throw new KgrankStateError(
        `RankEvaluator.${what}: this evaluator ranks against typed candidates (options.candidates), which need whole ` +
          `score rows: ${instead}`,
      );
    }
  }

  /** Entity shards rank from embeddings or chunked slices of their entities: their tasks are partial counts, not ranks. */
  private checkWhole(what: string): void {
    if (this.entityShard) {
      const { index, count } = this.entityShard;
      throw new KgrankStateError(
        `RankEvaluator.${what}: this evaluator is entity shard ${index}/${count}, which ranks a model's embeddings ` +
          `(addModel) or chunked slices of its own entities; scores and ranks go to an evaluator without entityShard`,
      );
    }
  }

  private checkOpen(what: string): void {
    if (this.finished)
      throw new KgrankStateError(`RankEvaluator.${what}: finalize() was already called; create a new evaluator`);
    if (this.restored) {
      throw new KgrankStateError(
        `RankEvaluator.${what}: this evaluator was restored from serialized state; it can be finalized or merged, ` +
          `not fed more tasks (feed the shards, then merge them)`,
      );
    }
  }

  /** The next ticket in call order; the call counts as pending until its ticket is released and flushed. */
  private ticket(): number {
    this.pending++;
    return this.nextTicket++;
  }

  /**
   * Releases a ticket with its recording (null: nothing to record) and records every released ticket whose
   * predecessors are all released, in ticket order. Resolves once this ticket was flushed: at once for a call
   * that records nothing or has no earlier ticket open, else when the earlier calls settle.
   */
  private release(ticket: number, record: (() => void) | null): Promise<void> {
    return new Promise((done) => {
      this.released.set(ticket, { record, done });
      for (let next = this.released.get(this.firstOpenTicket); next; next = this.released.get(this.firstOpenTicket)) {
        this.released.delete(this.firstOpenTicket++);
        this.pending--;
        next.record?.();
        next.done();
      }
      if (record === null && this.released.has(ticket)) {
        // Nothing to record: the call need not wait; its ticket stays released until the earlier ones are.
        this.released.set(ticket, { record: null, done: () => undefined });
        done();
      }
    });
  }

  /**
   * Records in call order: now, or after the earlier add calls still running. `record` only stores checked
   * columns (it cannot throw): every check of the batch runs before.
   */
  private inOrder(record: () => void): void {
    void this.release(this.ticket(), record);
  }

  /** Records a batch's task columns (none when every row was skipped) and the rows restriction skipped. */
  private record(side: TaskSide, columns: TaskColumns | null, skipped = 0): void {
    if (columns) this.tasks[side].adopt(columns);
    this.skippedTasks[side] += skipped;
  }

  /** Adds a batch of scores for one side, on the calling thread. */
  addSync(batch: ScoreBatch): void {
    this.checkOpen("add");
    this.checkWhole("add");
    const fields = options("batch", batch, SCORE_BATCH_KEYS); // the one-call path below checks no key
    this.inOrder(this.countedNow(fields));
  }

  /** A batch counted on the calling thread (every check first), as the recording of its columns. */
  private countedNow(fields: Unchecked<ScoreBatch>): () => void {
    if (this.constraint) {
      const constrained = rankConstrainedBatch(fields, this.context, this.constraint);
      return () => this.record(constrained.side, constrained.columns);
    }
    const one = rankFilteredBatch(fields as ScoreBatch, this.context);
    if (one) return () => this.record(one.side, one.columns);
    const prepared = prepareScoreBatch(fields, this.context);
    const { side, rows, kept } = prepared.keys;
    const columns = kept > 0 ? finishBatch(prepared, countSync(prepared)) : null; // checked before it is queued
    return () => this.record(side, columns, rows - kept);
  }

  /**
   * Adds a batch of scores for one side, counting off the JavaScript thread. Batches may be added concurrently;
   * they are recorded in call order (a call that finished first resolves once the earlier calls are recorded).
   * `signal` stops the count at its next task boundary: the call rejects with the signal's reason and records
   * nothing (the evaluator is as before the call); `onProgress` reports tasks counted
   * ({@link AsyncOptions}). With typed candidates (options.candidates) the batch is counted on the JavaScript thread on the
   * next event-loop turn, `signal` checked before it starts, no progress reported.
   */
  async add(batch: ScoreBatch & AsyncOptions): Promise<void> {
    this.checkOpen("add");
    this.checkWhole("add");
    const { options: fields, asyncArgs } = callOptions("batch", batch, SCORE_BATCH_KEYS, true);
    if (this.constraint || (!asyncArgs.signal && !asyncArgs.onProgress && oneSlice(fields))) {
      // What the addon's job runner would do with a batch of one slice (native/addon/async.h): count it on the
      // JavaScript thread, with the pool, on the next turn of the event loop; here by the one-call path of addSync,
      // without the job's own bookkeeping (about 0.1 ms a call, 8 % of FB15k-237's 512-row batches).
      const ticket = this.ticket();
      let recording: (() => void) | null = null;
      try {
        const watch = watchDetach([
          ["scores", fields.scores as ArrayBufferView],
          ["triples", fields.triples as ArrayBufferView],
        ]);
        await turn();
        watch.check(); // inputs given away meanwhile are reported as the job runner reports them
        // Typed candidates: one kernel call on this thread (a constrained row reads only its allowed columns).
        if (asyncArgs.signal?.aborted) throw asyncArgs.signal.reason;
        recording = this.countedNow(fields);
      } finally {
        await this.release(ticket, recording);
      }
      return;
    }
    const prepared = prepareScoreBatch(fields, this.context);
    const ticket = this.ticket();
    let recording: (() => void) | null = null;
    try {
      await withCallControl(asyncArgs, prepared.keys.kept, async (call) => {
        if (prepared.keys.kept === 0) {
          call?.finish();
          recording = () => this.record(prepared.keys.side, null, prepared.keys.rows);
          return;
        }
        const { scores, keys } = prepared;
        const watch = watchDetach({ scores, anchor: keys.anchor, relation: keys.relation, truth: keys.truth });
        const counted = await countAsync(prepared, call);
        watch.check(); // nothing is recorded from a batch whose inputs were given away mid-call
        const columns = finishBatch(prepared, counted);
        call?.finish(); // nor from one aborted meanwhile
        recording = () => this.record(keys.side, columns, keys.rows - keys.kept);
      });
    } finally {
      await this.release(ticket, recording);
    }
  }

  /**
   * Starts a batch whose scores arrive in entity slices ([start, end) column ranges of the same rows); each slice
   * is counted and the filter applied as it arrives, so rows x numEntities scores never need to exist at once.
   * Give the true triples' scores up front; call finish() after the last slice to record the ranks. An entity
   * shard's evaluator (options.entityShard) takes the slices of its own entities only and records their partial
   * counts, which merge with the other entity shards' into the ranks.
   */
  chunked(batch: ChunkedBatchOptions): ChunkedBatch {
    this.checkOpen("chunked");
    this.checkUnconstrained("chunked", "add the batch's whole rows");
    const result = openChunkedBatch(
      batch,
      this.context,
      (side, columns, skipped) => this.inOrder(() => this.record(side, columns, skipped)),
      () => this.pending--,
    );
    this.pending++;
    return result;
  }

  /**
   * Ranks triples from a model's embeddings (EmbeddingModel), scored and counted in the kernel (no score matrix),
   * filtered, restricted and weighted as score batches; both sides by default; `negatives`: the OGB protocol. */
  addModelSync(batch: ModelBatch): void {
    this.checkOpen("addModel");
    if (this.entityShard) {
      throw new KgrankStateError(
        "RankEvaluator.addModelSync: an entity shard's evaluator ranks with addModel (async), reading its entity range in chunks",
      );
    }
    const fields = options("batch", batch, MODEL_BATCH_KEYS);
    const sides = prepareModelBatch(fields, this.context, this.constraint);
    const relation = this.relationModelColumns(fields);
    runModelSync(sides);
    const columns = sides.map((w) => w.finish());
    this.inOrder(() => {
      sides.forEach((w, k) => this.record(w.side, columns[k]!, w.skipped));
      if (relation) this.record("relation", relation, 0);
    });
  }

  /**
   * The relation side of a model batch, when it has one (side "relation", or the default with an evaluator of the
   * relation side): every relation of each triple scored by the model (EmbeddingModel.scoreRelations, on the calling
   * thread) and ranked as addRelationScores ranks them; null otherwise.
   */
  private relationModelColumns(fields: Unchecked<ModelBatch>): TaskColumns | null {
    const side = fields.side ?? "both";
    if (side === "relation") this.relationSide("addModel");
    else if (side !== "both" || !this.sides.includes("relation")) return null;
    if (fields.negatives !== undefined) {
      throw new KgrankInputError(
        "negatives",
        'are entity candidates (the OGB protocol), which the relation side has none of: rank side "head" / "tail" with negatives and the relation side in a batch of its own',
      );
    }
    const model = batchModel(fields, this.context);
    const threads = (fields.threads as number | undefined) ?? this.threads;
    const triples = fields.triples as ModelBatch["triples"];
    return this.relationColumns(triples, model.scoreRelations(triples, { threads }), threads);
  }

  /**
   * addModelSync off the JavaScript thread (the native kernel runs on the thread pool; the event loop stays free).
   * `signal` stops it at the kernel's next task boundary (a chunk of 512 candidates): the call rejects with the
   * signal's reason and records nothing of the batch, neither side (the evaluator is as before the call);
   * `onProgress` reports tasks (rows x sides) ranked ({@link AsyncOptions}).
   */
  async addModel(batch: ModelBatch & AsyncOptions): Promise<void> {
    this.checkOpen("addModel");
    const { options: fields, asyncArgs } = callOptions("batch", batch, MODEL_BATCH_KEYS, true);
    const budget = memoryBudget(fields.memoryBudget);
    const onPlan = planOption(fields.onPlan);
    const sides = prepareModelBatch(fields, this.context, this.constraint);
    const relation = this.relationModelColumns(fields);
    const streamed = sides.some((w) => w.stream);
    const model = sides.find((w) => w.input)?.input;
    const watch = watchDetach([
      ["model", model?.entityEmbeddings],
      ["model", model?.relationEmbeddings],
      ["model", model?.entityScale],
    ]);
    const ticket = this.ticket();
    let recording: (() => void) | null = null;
    try {
      await withCallControl(
        asyncArgs,
        sides.reduce((n, w) => n + w.rows, 0),
        async (call) => {
          if (streamed) {
            const filter = this.context.filter;
            const fixedBytes = sides.reduce((n, w) => n + (filter?.[w.side]?.stats().bytes ?? 0), 0);
            await runStreamed(fields.model as EmbeddingModel, sides, {
              budget,
              fixedBytes,
              threads: sides[0]?.threads,
              call,
              range: this.context.entityRange,
              onPlan,
            });
          } else {
            await runModelAsync(sides, call, watch);
          }
          watch.check(); // nothing is recorded from a model whose embeddings were given away mid-call
          // Every side checked before any is recorded; an entity shard records its partial counts.
          const columns = sides.map((w) => (this.entityShard ? (w.partial?.() ?? null) : w.finish()));
          call?.finish();
          recording = () => {
            sides.forEach((w, k) => this.record(w.side, columns[k]!, w.skipped));
            if (relation) this.record("relation", relation, 0);
          };
        },
      );
    } finally {
      await this.release(ticket, recording);
    }
  }

  /**
   * Adds OGB-style sampled scores (no filtering: the negatives are the candidates). `signal` and `onProgress` as
   * add(): an aborted batch is not recorded.
   */
  async addSampled(batch: SampledBatch & AsyncOptions): Promise<void> {
    this.checkOpen("addSampled");
    this.checkWhole("addSampled");
    this.checkUnconstrained(
      "addSampled",
      "sampled negatives are a candidate set of their own; use an evaluator without candidates",
    );
    const { options: fields, asyncArgs } = callOptions("batch", batch, SAMPLED_BATCH_KEYS, true);
    const side = sideArg(fields.side, this.context.sides);
    const rows = isArrayLike(fields.positiveScores) ? fields.positiveScores.length : 0;
    const ticket = this.ticket();
    let recording: (() => void) | null = null;
    try {
      await withCallControl(asyncArgs, rows, async (call) => {
        const ranks = await computeSampledRanks({ ...sampledArgs(fields, this.threads), ...nestedCall(call) });
        const [columns, skipped] = sampledTasks(fields, side, ranks, this.context);
        call?.finish();
        recording = () => this.record(side, columns, skipped);
      });
    } finally {
      await this.release(ticket, recording);
    }
  }

  /** addSampled on the calling thread. */
  addSampledSync(batch: SampledBatch): void {
    this.checkOpen("addSampled");
    this.checkWhole("addSampled");
    this.checkUnconstrained(
      "addSampled",
      "sampled negatives are a candidate set of their own; use an evaluator without candidates",
    );
    const fields = options("batch", batch, SAMPLED_BATCH_KEYS);
    const side = sideArg(fields.side, this.context.sides);
    const [columns, skipped] = sampledTasks(
      fields,
      side,
      computeSampledRanksSync(sampledArgs(fields, this.threads)),
      this.context,
    );
    this.inOrder(() => this.record(side, columns, skipped));
  }

  /** Adds ranks computed elsewhere (e.g. exported from PyTorch). */
  addRanks(batch: RanksBatch): void {
    this.checkOpen("addRanks");
    this.checkWhole("addRanks");
    this.checkUnconstrained("addRanks", "ranks computed elsewhere were not ranked against these sets; add scores");
    const fields = options("batch", batch, RANKS_BATCH_KEYS);
    const side = fields.side === "relation" ? this.relationSide("addRanks") : sideArg(fields.side, this.context.sides);
    const columns = rankedTasks(fields, side, this.numEntities, this.numRelations);
    this.inOrder(() => {
      if (fields.weights !== undefined) this.explicitWeights = true;
      this.tasks[side].append(columns);
    });
  }

  /**
   * Ranks the true relation of each triple (h, r, t) among the relations: row i of `scores` scores (h_i, r, t_i) for
   * every relation r (rows x numRelations, NaN: no candidate). Filtered by the known triples (h, r', t) when the
   * evaluator is filtered; every metric and its expectation follow from the relation candidate counts, under side
   * "relation" (never pooled into "both"). Needs sides including "relation".
   */
  addRelationScores(batch: RelationScoreBatch): void {
    this.checkOpen("addRelationScores");
    this.relationSide("addRelationScores");
    const fields = options("batch", batch, RELATION_SCORE_KEYS);
    const columns = this.relationColumns(
      fields.triples as RelationScoreBatch["triples"],
      fields.scores as RelationScoreBatch["scores"],
      (fields.threads as number | undefined) ?? this.threads,
    );
    this.inOrder(() => this.record("relation", columns, 0));
  }

  /** Relation ranks of triples from their rows x numRelations scores, as task columns of the relation side. */
  private relationColumns(
    given: RelationScoreBatch["triples"],
    scores: RelationScoreBatch["scores"],
    threads: number | undefined,
  ): TaskColumns {
    const ranks = this.relationRanker!.rank({ triples: given, scores, threads });
    const triples = tripleArray("triples", given, this.numEntities, this.numRelations);
    const n = ranks.numCandidates.length;
    const columns: TaskColumns = {
      ...ranks,
      relation: new Int32Array(n),
      anchor: new Int32Array(n),
      truth: new Int32Array(n),
      weight: new Float64Array(n).fill(NaN),
    };
    for (let i = 0; i < n; i++) {
      columns.anchor[i] = triples[3 * i]!;
      columns.relation[i] = triples[3 * i + 1]!;
      columns.truth[i] = triples[3 * i + 2]!;
    }
    return columns;
  }

  /** The relation side, or a typed error naming the fix when this evaluator does not evaluate it. */
  private relationSide(what: string): "relation" {
    if (!this.sides.includes("relation")) {
      throw new KgrankInputError(
        what === "addRanks" ? "side" : "sides",
        `${what}: "relation" is not evaluated by this RankEvaluator (sides: ${this.sides.join(", ")}); create it with sides including "relation", e.g. ["head", "tail", "relation"]`,
      );
    }
    return "relation";
  }

  /** Tasks recorded so far per side (relation only when the relation side is evaluated). */
  get taskCounts(): SideCounts {
    return this.perSide((side) => this.tasks[side].length);
  }

  /** head and tail counts, and relation when the relation side is evaluated. */
  private perSide(count: (side: TaskSide) => number): SideCounts {
    const sides = this.restored?.sides ?? this.sides;
    return {
      head: count("head"),
      tail: count("tail"),
      ...(sides.includes("relation") ? { relation: count("relation") } : {}),
    };
  }

  /**
   * The recorded tasks of a side: a copy (one fresh ArrayBuffer per call, 52 bytes a task), which the caller may
   * change or transfer (postMessage to a Worker) without touching the evaluator's tasks.
   * @internal
   */
  taskColumns(side: TaskSide): TaskColumns {
    return copyColumns(this.tasks[side].columns());
  }

  /** Per-task weights of a side: explicit, macro (1 / distinct answers of the task's key), or null (micro). @internal */
  taskWeights(side: TaskSide): Float64Array | null {
    return taskWeights(
      this.tasks[side].columns(),
      this.restored?.weighting ?? this.weighting,
      this.explicitWeights,
      side === "relation",
    );
  }

  /** Provenance of the evaluation so far. */
  info(): EvaluationInfo {
    const h = this.restored ?? this.header();
    return {
      numEntities: h.numEntities,
      numRelations: h.numRelations,
      filtered: h.filtered,
      filterTriples: [...h.filterTriples],
      knownTriples: h.knownTriples ?? null,
      sides: [...h.sides],
      tasks: this.taskCounts,
      skipped: this.perSide((side) => this.skippedTasks[side]),
      restrictEntities: h.restrictEntities,
      restrictRelations: h.restrictRelations,
      weighting: this.explicitWeights ? "explicit" : h.weighting,
      ks: [...h.ks],
      metrics: h.metrics ? [...h.metrics] : null,
      ...(h.candidates ? { candidates: { ...h.candidates } } : {}),
      ...(h.temporal ? { temporal: { ...h.temporal } } : {}),
    };
  }

  /** Distinct known triples of the filter: an entity side's filter index, or the relation ranker's. */
  private knownTriples(): number {
    const index = Object.values(this.filter ?? {})[0];
    return index ? index.stats().answers : this.relationRanker!.knownTriples;
  }

  /** This evaluator's settings and counts as a state header. */
  private header(): StateHeader {
    if (this.restored)
      return {
        ...this.restored,
        explicitWeights: this.explicitWeights,
        skipped: this.perSide((side) => this.skippedTasks[side]),
        tasks: this.taskCounts,
      };
    return {
      format: STATE_FORMAT_VERSION,
      numEntities: this.numEntities,
      numRelations: this.numRelations,
      sides: [...this.sides],
      ks: [...this.ks],
      metrics: this.metricKeys ? [...this.metricKeys] : null,
      weighting: this.weighting,
      explicitWeights: this.explicitWeights,
      filtered: this.filter !== null,
      filterTriples: [...this.filterSizes],
      knownTriples: this.filter ? this.knownTriples() : null,
      restrictEntities: this.selection.keptEntities?.length ?? null,
      restrictRelations: this.selection.keptRelations,
      skipped: this.perSide((side) => this.skippedTasks[side]),
      tasks: this.taskCounts,
      ...(this.entityShard ? { entityShard: entityShardHeader(this.entityShard) } : {}),
      ...(this.constraint
        ? { candidates: this.constraint.sets.describe() }
        : this.shardCandidates
          ? { candidates: { ...this.shardCandidates } }
          : {}),
      ...(this.temporal ? { temporal: { ...this.temporal } } : {}),
    };
  }

  /**
   * The evaluator's state (tasks, provenance, your `meta`: read it back with stateMeta()) as SHA-256-checked bytes.
   * merge() of shards' states gives exactly the results of one evaluator fed every batch (median included). */
  serialize(opts: { meta?: Record<string, unknown> } = {}): Uint8Array {
    const { meta } = options("serialize options", opts, ["meta"]);
    if (this.pending > 0)
      throw new KgrankStateError(`serialize(): ${this.pending} add call(s) are still running; await them first`);
    return encodeState(withMeta(this.header(), meta), {
      head: this.tasks.head.columns(),
      tail: this.tasks.tail.columns(),
      relation: this.tasks.relation.columns(),
    });
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
    const decoded = combineEntityShards(
      decodeShards(states.map((s) => (s instanceof RankEvaluator ? s.serialize() : s))),
    );
    const first = decoded[0]!.header;
    const ev = new RankEvaluator(evaluatorOptions(first));
    for (const d of decoded) {
      for (const side of ["head", "tail", "relation"] as const) {
        if (d.sides[side]) ev.tasks[side].append(d.sides[side]);
        ev.skippedTasks[side] += d.header.skipped[side] ?? 0;
      }
      ev.explicitWeights ||= d.header.explicitWeights;
    }
    ev.restored = first;
    return ev;
  }

  /**
   * Every metric for sides head, tail, both (head and tail) and relation (when evaluated) and each rank type, with expectations under random ranking.
   * Metrics that support only some rank types appear only under those; a rank type some tasks lack (addRanks
   * without it) is left out for that side.
   */
  finalize(opts: FinalizeOptions = {}): RankResults {
    const run = this.startFinalize(opts, FINALIZE_KEYS);
    return run.results(run.table(false));
  }

  /**
   * finalize() that keeps the event loop turning while the bootstrap runs (slices of about 10 ms between
   * setImmediate turns) and stops at `signal`: it then rejects with the signal's reason and leaves the evaluator
   * as it was, so finalize can be called again. Without a bootstrap it equals finalize().
   */
  async finalizeAsync(opts: FinalizeOptions & { signal?: AbortSignal } = {}): Promise<RankResults> {
    const run = this.startFinalize(opts, FINALIZE_ASYNC_KEYS);
    try {
      return await finishAsync(run, opts.signal);
    } catch (e) {
      this.finished = false;
      throw e;
    }
  }

  /** Checks and closes the evaluator for finalize. */
  private startFinalize(opts: unknown, keys: readonly string[]): FinalizeRun {
    const fields = options("finalize options", opts, keys) as FinalizeOptions & { signal?: unknown };
    const bootstrap = checkBootstrap(fields.bootstrap);
    signalOption(fields.signal);
    if (this.pending > 0)
      throw new KgrankStateError(
        `finalize(): ${this.pending} add call(s) or chunked batch(es) are still running; await / finish them first`,
      );
    if (this.finished)
      throw new KgrankStateError(
        "finalize(): already called (or running); the RankResults it returned hold the results",
      );
    if (this.tasks.head.length + this.tasks.tail.length + this.tasks.relation.length === 0) {
      throw new KgrankStateError("finalize(): no task was added; add score batches, sampled scores or ranks first");
    }
    const shard = this.entityShard ?? this.restored?.entityShard;
    if (shard) {
      throw new KgrankStateError(
        `finalize(): this is entity shard ${shard.index}/${shard.count}, whose tasks hold partial counts: serialize() ` +
          `it and merge every entity shard's state (RankEvaluator.merge, kgrank merge) to get the ranks`,
      );
    }
    const part = (side: TaskSide) => ({ cols: this.tasks[side].columns(), weights: this.taskWeights(side) });
    const run = finalizeRun(
      metricSelection(this.metricKeys, this.ks),
      { ...this.info(), backend: backendInfo().backend },
      { head: part("head"), tail: part("tail"), relation: part("relation") },
      bootstrap,
    );
    this.finished = true;
    this.context.arena.release(); // no batch comes after finalize
    return run;
  }
}

/**
 * Whether add() counts a batch in one piece on the next event-loop turn: on the native backend (whose async count
 * runs a batch of at most ONE_SLICE_BYTES of scores as one synchronous slice on the JavaScript thread anyway), for
 * typed scores and triples of at most that size. Other batches, and calls with `signal` or `onProgress`, take the
 * sliced job.
 */
function oneSlice(fields: Unchecked<ScoreBatch>): boolean {
  const { scores, triples } = fields;
  return (
    backendInfo().backend === "native" &&
    (scores instanceof Float32Array || scores instanceof Float64Array) &&
    scores.byteLength <= ONE_SLICE_BYTES &&
    triples instanceof Int32Array
  );
}

/** The addon's async slice (native/addon/async.h kSliceBytes). */
const ONE_SLICE_BYTES = 64 << 20;
