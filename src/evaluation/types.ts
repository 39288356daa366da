/**
 * The evaluator's public types: its options, the batches it takes and the provenance it reports. In their own file
 * so results, tabulation and the CLI can name them without importing the evaluator (no import circle).
 */
import type { Side } from "../contract/kernels";
import type { MetricQuery } from "../metrics/names";
import type { Interval, RankType, ResultSide } from "../metrics/types";
import type { TaskColumns } from "./task-buffer";
import type { CandidateProtocol, CandidateSets } from "../ranking/candidate-sets";
import type { AsyncOptions } from "../backend/call-control";
import { optionKeys } from "../checks/validate";

/** An entity side: which entity of (h, r, t) a task predicts. */
export type EvaluationSide = Side;
/**
 * A side of the evaluation: an entity side, or "relation": (h, ?, t) tasks whose candidates are the relations. The
 * relation side is its own protocol: its results are side "relation", never pooled into "both" (head and tail).
 */
export type TaskSide = EvaluationSide | "relation";
/** Tasks (or skipped tasks) per side; `relation` is present when the relation side is evaluated. */
export type SideCounts = Record<EvaluationSide, number> & { relation?: number };
export type Weighting = "micro" | "macro";

/** One batch of a chunked evaluation (RankEvaluator.chunked): its triples and true scores; the slices follow. */
export interface ChunkedBatchOptions {
  /** The evaluated triples of the batch: b x 3 (head, relation, tail). */
  triples: Int32Array | ArrayLike<number>;
  side: "head" | "tail";
  /** Score of each true triple (length b); every slice is compared with it. No NaN. */
  trueScores: ArrayLike<number>;
  threads?: number;
}

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
  /**
   * Sides to evaluate: "both" (default: head and tail), "head", "tail", or a list of sides such as
   * ["head", "tail", "relation"]. "relation" ranks the relations of (h, ?, t) (addRelationScores); it needs
   * numRelations (given, or from filterTriples) and no restriction or entity shard.
   */
  sides?: "both" | EvaluationSide | TaskSide[];
  /** Cut-offs of Hits@k and its derived metrics (default [1, 3, 5, 10]). */
  ks?: number[];
  /** Metric keys or synonyms to report (default: every metric that applies). */
  metrics?: MetricQuery[];
  /** Only tasks whose head and tail are in this set are evaluated, and only these entities are candidates. */
  restrictEntities?: ArrayLike<number>;
  /** Only tasks whose relation is in this set are evaluated. */
  restrictRelations?: ArrayLike<number>;
  /** "micro" (default: every task weighs 1) or "macro" (PyKEEN's MacroRankBasedEvaluator). */
  weighting?: Weighting;
  /** Threads for native kernels. */
  threads?: number;
  /**
   * Rank against entity shard `index` of `count` only: entities [floor(index x E / count), floor((index + 1) x E /
   * count)), or [begin, end) when given (the shards' ranges must then tile the entities in index order). Such an
   * evaluator ranks from embeddings (addModel) or chunked slices of its own entities (chunked) and keeps each task's
   * partial counts; its state is merged with the other entity shards' (RankEvaluator.merge, kgrank merge) into exact
   * ranks.
   */
  entityShard?: { index: number; count: number; begin?: number; end?: number };
  /**
   * Typed candidates: each entity-side task is ranked against the candidates its relation allows on that side
   * (CandidateSets.fromTriples(train) or readCandidateFile), plus its true answer; candidate counts, expectations and
   * the adjusted metrics follow. Score batches only (add / addSync): no chunks, samples, ranks or models; no
   * relation side, restriction or entity shard. The state records the sets' fingerprint; only equal sets merge.
   */
  candidates?: CandidateSets;
  /**
   * The temporal filter setting this evaluator ranks for (TemporalEvaluator sets it on its three evaluators):
   * recorded in the state, so only states of the same setting and timestamps merge or compare.
   */
  temporal?: TemporalProtocol;
}

/** The three filter settings of a temporal evaluation (TemporalEvaluator). */
export type TemporalSetting = "raw" | "static" | "timeAware";

/** A temporal evaluator's setting and its number of timestamps, as states record them. */
export interface TemporalProtocol {
  setting: TemporalSetting;
  numTimestamps: number;
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
  /** The side of the tasks; "relation": ranks among relations (numCandidates at most numRelations). */
  side: TaskSide;
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
  /**
   * The task's triple (b x 3: head, relation, tail ids), instead of `relations`: keeps each task's identity (its anchor
   * and answer on `side`) for tasks(), breakdowns and compareRuns' check that runs cover the same tasks.
   */
  triples?: Int32Array | ArrayLike<number>;
}

export interface RelationScoreBatch {
  /** The evaluated triples: b x 3 (head, relation, tail); each row's true relation is ranked. */
  triples: Int32Array | ArrayLike<number>;
  /** Row-major b x numRelations scores: row i scores (h_i, r, t_i) for every relation r. NaN marks a non-candidate. */
  scores: Float32Array | Float64Array;
  threads?: number;
}

export const RELATION_SCORE_KEYS = optionKeys<RelationScoreBatch>({ triples: 1, scores: 1, threads: 1 });

export const EVALUATOR_KEYS = optionKeys<RankEvaluatorOptions>({
  candidates: 1,
  temporal: 1,
  numEntities: 1,
  numRelations: 1,
  filterTriples: 1,
  sides: 1,
  ks: 1,
  metrics: 1,
  restrictEntities: 1,
  restrictRelations: 1,
  weighting: 1,
  threads: 1,
  entityShard: 1,
});
export const SCORE_BATCH_KEYS = optionKeys<ScoreBatch>({ triples: 1, side: 1, scores: 1, threads: 1 });
export const SAMPLED_BATCH_KEYS = optionKeys<SampledBatch>({
  triples: 1,
  side: 1,
  positiveScores: 1,
  negativeScores: 1,
  threads: 1,
});
export const RANKS_BATCH_KEYS = optionKeys<RanksBatch>({
  side: 1,
  optimistic: 1,
  pessimistic: 1,
  realistic: 1,
  numCandidates: 1,
  weights: 1,
  relations: 1,
  triples: 1,
});
export const CHUNKED_KEYS = optionKeys<ChunkedBatchOptions>({ triples: 1, side: 1, trueScores: 1, threads: 1 });

/** Provenance of an evaluation: what was filtered, skipped and how tasks were weighted. */
export interface EvaluationInfo {
  numEntities: number;
  numRelations: number | null;
  filtered: boolean;
  /** Rows of each filterTriples array, as given. */
  filterTriples: number[];
  /** Distinct known triples over all filterTriples arrays (null when unfiltered, or restored from an older state). */
  knownTriples: number | null;
  sides: TaskSide[];
  tasks: SideCounts;
  skipped: SideCounts;
  restrictEntities: number | null;
  restrictRelations: number | null;
  weighting: Weighting | "explicit";
  ks: number[];
  metrics: string[] | null;
  /** The typed candidates the entity tasks were ranked against (RankEvaluatorOptions.candidates); absent: all. */
  candidates?: CandidateProtocol;
  /** The temporal filter setting (RankEvaluatorOptions.temporal); absent: not a temporal evaluation. */
  temporal?: TemporalProtocol;
}

export const FINALIZE_KEYS = optionKeys<FinalizeOptions>({ bootstrap: 1 });
export const FINALIZE_ASYNC_KEYS = optionKeys<FinalizeOptions & Pick<AsyncOptions, "signal">>({
  bootstrap: 1,
  signal: 1,
});

/** The tasks of one side and their weights (null: every task weighs 1). */
export interface SidePart {
  cols: TaskColumns;
  weights: Float64Array | null;
}

/** The tasks of every side (a side not evaluated has none). */
export interface SideParts {
  head: SidePart;
  tail: SidePart;
  relation: SidePart;
}

export interface BootstrapOptions {
  /** Number of bootstrap replicates (default 1000). */
  samples?: number;
  /** Seed of the resampling stream (default 0): the same seed gives the same intervals. */
  seed?: number;
  /** Two-sided confidence level of the percentile intervals (default 0.95). */
  confidenceLevel?: number;
}

/** side -> rank type -> metric key -> percentile interval. */
export type IntervalTable = Record<ResultSide, Record<RankType, Record<string, Interval>>>;
