/**
 * One evaluation run, from typed options: what `kgrank evaluate` runs (the CLI parses the flags) and what a queue
 * worker runs for a shard job (run/flags.ts parseEvaluateArgs). Checks the options that do not mix, ranks a split
 * from one of its score sources (the frequency baseline, score files, sampled negatives' scores, a model's
 * embeddings, or dataset-free sampled scores), names rows of the user's files in errors, then saves the state
 * (--save-state; a shard stops there), finalizes, writes --ranks-out and prints through run/render.ts.
 */
import { readdirSync, statSync } from "node:fs";
import * as path from "node:path";

import { KgrankInputError } from "../checks/errors";
import { quoted } from "../text/suggest";
import { RankEvaluator } from "../evaluation/evaluator";
import { writeFileAtomic } from "../io/atomic";
import { type Dataset, type Split } from "../io/datasets";
import { loadEmbeddingModel, type LoadEmbeddingModelOptions, modelDirDataset } from "../io/model-dir";
import { turn } from "../contract/event-loop";
import { FrequencyBaseline } from "../scoring/baseline";
import { CandidateSets } from "../ranking/candidate-sets";
import { readCandidateFile } from "../io/candidate-file";
import { estimateFull, sampleTasks, type TaskSample } from "../evaluation/task-sample";
import { sampledNegativeCandidates } from "../evaluation/candidate-counts";
import type { RankResults } from "../evaluation/results";
import {
  estimateFromSampledRanks,
  estimatorsWithinLimits,
  type SampledRankEstimates,
  type SampledRankEstimator,
} from "../evaluation/sampled-negatives";
import {
  type ComplexLayout,
  type EmbeddingModel,
  INTERACTIONS,
  type InteractionName,
} from "../scoring/embedding-model";

import { readArray } from "../io/array-file";
import { expectShape, floatScores, readIdTriples } from "./arrays";
import { datasetFromAsync, filterSplits, type RunSide, SIDES, type TaskSide } from "./datasets";
import type { Format } from "./format";
import { emit, type Out } from "./out";
import { formatBytes, type StreamPlan } from "../scoring/entity-chunks";
import { Progress } from "./progress";
import { evaluatorMetrics, type ReportInfo, renderEvaluation, type RunMeta } from "./render";
import { fileFingerprint, resolveShard, runFingerprint, type ShardSpec, shardRows } from "./shard";
import { randomRankingWarning } from "./random-warning";
import { writeRanksOut } from "./ranks-out";
import { evaluateWithWorkers } from "./workers";
import { checkTemporalFlags, evaluateTemporal } from "./temporal-run";

// ---- evaluate ----------------------------------------------------------------------------------------------------

/**
 * --memory's notice when the budget reads the entity table more than once (each pass serves one block of queries), with
 * the budget that reads it once; nothing with --quiet or one pass.
 */
export function memoryNotice(out: Out, quiet: boolean | undefined): ((plan: StreamPlan) => void) | undefined {
  if (quiet) return undefined;
  return (plan) => {
    if (plan.passes <= 1) return;
    const size = (n: number, up = false) => formatBytes(n, up).replace(" ", "");
    out.stderr(
      `kgrank: --memory ${size(plan.budget)} reads the entity table ${plan.passes} times (${plan.blockRows} queries ` +
        `per pass, ${plan.chunks} reads of ${plan.chunkRows} rows each); --memory ${size(plan.onePassBudget, true)} ` +
        `reads it once\n`,
    );
  };
}

/** The model flags (modelFlags in ./flags.ts) as parsed: evaluate's and predict's. */
export interface ModelFlagOptions {
  modelDir?: string;
  interaction?: string;
  entityEmbeddings?: string;
  relationEmbeddings?: string;
  entityIds?: string;
  relationIds?: string;
  complexLayout?: string;
  precision?: string;
}

export interface EvaluateOptions extends ModelFlagOptions {
  dataset?: string;
  datasetDir?: string;
  split: Split;
  scoresHead?: string;
  scoresTail?: string;
  /** --scores-relation: rows x numRelations relation scores (the relation side, from a file). */
  scoresRelation?: string;
  triples?: string;
  negativesHead?: string;
  negativesTail?: string;
  filter: string[];
  metrics?: string[];
  ks?: number[];
  format: Format;
  output?: string;
  /**
   * --sides: the sides to rank (default head and tail, or with score files the sides whose files are given);
   * "relation" ranks (h, ?, t) among the relations (the frequency baseline's relation scores).
   */
  sides?: RunSide[];
  /** --sample-tasks: rank a seeded sample of this many tasks (or this fraction of them) and estimate the full values. */
  sampleTasks?: number;
  /** --stratify relation: the sample stratified by relation. */
  stratify?: "relation";
  byRelation?: boolean;
  bootstrap?: number;
  seed: number;
  quiet?: boolean;
  shard?: ShardSpec;
  /** --entity-shard I/N. */
  entityShard?: { index: number; count: number };
  saveState?: string;
  workers?: number;
  ranksOut?: string;
  /** The command line as given (main() fills it): `--workers` hands it to its child processes. */
  argv?: string[];
  negativesIds?: string;
  /**
   * --estimate-full [list]: with --negatives-ids, estimate the full-ranking MRR and Hits@k from the sampled ranks
   * (true: the estimators within the work limits).
   */
  estimateFull?: true | string[];
  /** --negatives-from: what the negatives were drawn from, every entity (default) or the filtered candidates. */
  negativesFrom?: "all" | "filtered";
  /** --replacement: the negatives were drawn with replacement. */
  replacement?: boolean;
  /** --memory: bytes; the entity table is then read from disk in chunks. */
  memory?: number;
  /**
   * --constrain-candidates train|FILE: also rank every entity-side task against its relation's typed candidates
   * (seen in training, or a candidate file) and report those results beside the unconstrained ones.
   */
  constrainCandidates?: string;
  /**
   * --quadruples DIR: a temporal KG (train.txt, valid.txt, test.txt of head, relation, tail, timestamp lines)
   * evaluated in the raw, static and time-aware filter settings side by side.
   */
  quadruples?: string;
  /** Dataset-free sampled ranking (OGB's y_pred_pos, shape (n,), and y_pred_neg, (n, K)). */
  positiveScores?: string;
  negativeScores?: string;
  /** Option keys set on the command line (main() fills it from commander), to refuse flags that do not apply. */
  given?: string[];
  /** Files named inside inputs (a model directory's config.json) are read only where this allows (a queue worker's --allow-read). */
  mayRead?: (file: string) => boolean;
}

/** Rows per addModel call: a progress step that keeps the query vectors small (rows x dim). */
const MODEL_ROWS = 512;

// Between batches the loops below `await turn()` (src/contract/event-loop.ts), so signal handlers and the progress bar
// run (the fallback's promises resolve without giving them a turn).

const ROWS_PER_BATCH = (n: number) => Math.max(1, Math.min(4096, Math.floor((16 << 20) / n)));

export async function evaluateRun(opts: EvaluateOptions, out: Out): Promise<void> {
  const modelGiven = Boolean(opts.modelDir || opts.interaction || opts.entityEmbeddings);
  const scoresOnly = opts.positiveScores !== undefined || opts.negativeScores !== undefined;
  // A model directory's config.json may name the dataset (runDataset reads it).
  const configNamesDataset = opts.modelDir !== undefined && modelDirDataset(opts.modelDir) !== null;
  if (modelGiven && !scoresOnly && !opts.dataset && !opts.datasetDir && !configNamesDataset) {
    // Without either, `kgrank evaluate` ranks the bundled Nations (its demo): a model is never taken for a Nations one.
    throw new KgrankInputError(
      "--dataset",
      "is required with a model: no dataset was named, and a model's embeddings belong to the dataset it was " +
        "trained on; give --dataset NAME (bundled, or under --dataset-dir DIR) or --dataset-dir DIR (its own folder), " +
        "or a --model-dir whose config.json names its dataset",
    );
  }
  if (opts.entityShard && opts.workers !== undefined && opts.workers > 1) {
    throw new KgrankInputError(
      "--workers",
      "runs task shards of the whole entity set: give --entity-shard to separate processes (or kgrank submit --entity-shards)",
    );
  }
  checkEstimateFull(opts);
  checkRelationSide(opts);
  checkConstrainCandidates(opts);
  if (opts.quadruples !== undefined) checkTemporalFlags(opts as EvaluateOptions & Record<string, unknown>);
  if (opts.sampleTasks !== undefined) checkSampleTasks(opts);
  else if (opts.stratify !== undefined)
    throw new KgrankInputError("--stratify", "stratifies the sample of --sample-tasks N: give that too, or drop it");
  if (opts.workers !== undefined && opts.workers > 1)
    return evaluateWithWorkers(opts.argv ?? [], opts.workers, opts, out);
  const t0 = performance.now();
  if (opts.shard && !opts.saveState) {
    throw new KgrankInputError(
      "--shard",
      "needs --save-state FILE: a shard's tasks are only meaningful merged (kgrank merge FILE...)",
    );
  }
  if (opts.entityShard && opts.negativesIds) {
    throw new KgrankInputError(
      "--entity-shard",
      "does not apply to --negatives-ids (the OGB protocol ranks the given candidates, not the entity table): drop one",
    );
  }
  if (opts.entityShard && !opts.saveState) {
    throw new KgrankInputError(
      "--entity-shard",
      "needs --save-state FILE: an entity shard's counts become ranks only merged with the other entity shards (kgrank merge FILE...)",
    );
  }
  // A shard stops at its state: the results and ranks exist only for the merged run.
  for (const [given, flag] of [
    [opts.output, "--output"],
    [opts.ranksOut, "--ranks-out"],
  ] as const) {
    if ((opts.shard || opts.entityShard) && given !== undefined)
      throw new KgrankInputError(
        flag,
        `is not written by a shard (${opts.shard ? "--shard" : "--entity-shard"}), which saves only its --save-state: give ${flag} to kgrank merge of the shards' state files`,
      );
  }
  if (opts.quadruples !== undefined)
    return evaluateTemporal(opts as EvaluateOptions & Record<string, unknown>, out, t0);
  if (opts.positiveScores !== undefined || opts.negativeScores !== undefined) return evaluateScoresOnly(opts, out, t0);
  const run = await openRun(opts, out, t0);
  if (checkScoreSources(opts) === "model") return evaluateModel(run);
  if (opts.entityShard) {
    throw new KgrankInputError(
      "--entity-shard",
      "ranks a model's embeddings (--model-dir or --interaction with the embedding files); score matrices are sharded by --shard",
    );
  }
  return evaluateScores(run);
}

/**
 * What --constrain-candidates does not go with: the constrained ranks come from whole score rows (score files or
 * the frequency baseline) or a model's embeddings held in memory, ranked in this process; a sample, sampled
 * negatives, a table read in chunks (--memory), an entity shard and --workers' merge of one state per process have
 * no room for a second protocol.
 */
function checkConstrainCandidates(opts: EvaluateOptions): void {
  if (opts.constrainCandidates === undefined) return;
  const model = Boolean(opts.modelDir || opts.interaction || opts.entityEmbeddings);
  for (const [given, flag, why] of [
    [
      model && opts.memory !== undefined,
      "--memory",
      "a model's typed candidates are gathered per relation from its entity table in memory; drop --memory",
    ],
    [
      opts.negativesHead ?? opts.negativesTail ?? opts.negativesIds,
      opts.negativesHead ? "--negatives-head" : opts.negativesTail ? "--negatives-tail" : "--negatives-ids",
      "sampled negatives are a candidate set of their own",
    ],
    [opts.sampleTasks !== undefined, "--sample-tasks", "the sample's estimates are of the unconstrained protocol"],
    [opts.entityShard, "--entity-shard", "an entity shard ranks a model against a slice of the entities"],
    [
      opts.workers !== undefined && opts.workers > 1,
      "--workers",
      "the workers' states hold one protocol each; shard with --shard and merge each protocol's states",
    ],
    [opts.positiveScores ?? opts.negativeScores, "--positive-scores", "dataset-free sampled ranking has no relations"],
  ] as const) {
    if (given) throw new KgrankInputError("--constrain-candidates", `does not go with ${flag}: ${why}`);
  }
  const fromFiles = Boolean(opts.scoresHead || opts.scoresTail || opts.scoresRelation);
  const entity = fromFiles ? Boolean(opts.scoresHead || opts.scoresTail) : entitySides(opts).length > 0;
  if (!entity) {
    throw new KgrankInputError(
      "--constrain-candidates",
      "constrains head and tail tasks, and this run ranks none: add head or tail to --sides (or their score files)",
    );
  }
}

/**
 * Every evaluated relation's set on every ranked side, before anything is ranked: an empty one is an error naming the
 * relation's label and the fix (the evaluator would find it only at the batch that holds it).
 */
function checkCandidateSets(sets: CandidateSets, evaluated: Int32Array, sides: TaskSide[], ds: Dataset): void {
  for (let i = 0; i < evaluated.length; i += 3) {
    const r = evaluated[i + 1]!;
    for (const side of sides) {
      if (sets.size(side, r) > 0) continue;
      const label = JSON.stringify(ds.relationLabels[r] ?? String(r));
      throw new KgrankInputError(
        "--constrain-candidates",
        `relation ${label} allows no ${side} in ${sets.source === "train" ? "train (it has no training triple)" : sets.source}, ` +
          `and the split has its ${side} tasks: ${sets.source === "train" ? "give a candidate FILE" : `give it ${side === "head" ? "head or domain" : "tail or range"} lines`}, or evaluate without --constrain-candidates`,
      );
    }
  }
}

/** The typed candidates of --constrain-candidates: "train" (seen in the training split), or a candidate file. */
function candidateSetsFlag(value: string, ds: Dataset): CandidateSets {
  if (value === "train")
    return CandidateSets.fromTriples(ds.splits.train, { numEntities: ds.numEntities, numRelations: ds.numRelations });
  return readCandidateFile(value, {
    entityLabels: ds.entityLabels,
    relationLabels: ds.relationLabels,
    argument: "--constrain-candidates",
  });
}

/**
 * --constrain-candidates: a second evaluator that ranks the same rows against the typed candidates, with the main
 * evaluator's filter, sides, cut-offs and metrics; null without the flag. One for every score source (files, the
 * frequency baseline, a model's embeddings), so that the two protocols are configured alike.
 */
function typedCandidatesEvaluator(
  opts: EvaluateOptions,
  ds: Dataset,
  filterTriples: Int32Array[] | undefined,
  sides: TaskSide[],
  rows: Int32Array,
): RankEvaluator | null {
  if (!opts.constrainCandidates) return null;
  const sets = candidateSetsFlag(opts.constrainCandidates, ds);
  checkCandidateSets(sets, rows, sides, ds);
  return new RankEvaluator({
    numEntities: ds.numEntities,
    numRelations: ds.numRelations,
    filterTriples,
    sides: sides.length === 2 ? "both" : sides[0],
    ks: opts.ks,
    metrics: evaluatorMetrics(opts.metrics),
    candidates: sets,
  });
}

/** The path of the constrained state beside --save-state FILE: FILE with ".constrained" before its extension. */
function constrainedStatePath(file: string): string {
  const ext = path.extname(file);
  return `${file.slice(0, file.length - ext.length)}.constrained${ext}`;
}

/** --estimate-full and the flags that say how its negatives were drawn: with --negatives-ids, in one process. */
function checkEstimateFull(opts: EvaluateOptions): void {
  if (!opts.estimateFull) {
    for (const [given, flag] of [
      [opts.negativesFrom, "--negatives-from"],
      [opts.replacement, "--replacement"],
    ] as const) {
      if (given)
        throw new KgrankInputError(
          flag,
          "says how the negatives of --estimate-full were drawn: give that too, or drop it",
        );
    }
    return;
  }
  if (!opts.negativesIds) {
    throw new KgrankInputError(
      "--estimate-full",
      "needs --negatives-ids (the negatives' ids are what its assumptions are checked against); for sampled ranks " +
        "from elsewhere use kgrank estimate-full --ranks FILE",
    );
  }
  for (const [given, flag, why] of [
    [
      opts.workers !== undefined && opts.workers > 1,
      "--workers",
      "the estimates need every task's rank in one process",
    ],
    [opts.shard, "--shard", "the estimates need every task's rank in one process"],
    [opts.saveState, "--save-state", "a state does not record how the negatives were drawn"],
    [opts.triples, "--triples", "its rows are not the split's, whose known answers the negatives are checked against"],
  ] as const) {
    if (given) throw new KgrankInputError("--estimate-full", `does not go with ${flag}: ${why}`);
  }
}

/** The entity sides of --sides (default head and tail). */
function entitySides(opts: EvaluateOptions): TaskSide[] {
  return opts.sides ? SIDES.filter((s) => opts.sides!.includes(s)) : [...SIDES];
}

/** Whether the run ranks relations: --sides lists relation, or --scores-relation gives their scores. */
function relationSide(opts: EvaluateOptions): boolean {
  return Boolean(opts.scoresRelation) || Boolean(opts.sides?.includes("relation"));
}

/**
 * What the relation side does not go with: relation ranks come from --scores-relation, the frequency baseline's
 * relation scores or a model's (EmbeddingModel.scoreRelations, the table in memory), over the rows this process
 * evaluates (whole, a --shard, or --workers' shards); nothing here samples relation tasks or shards relations.
 */
function checkRelationSide(opts: EvaluateOptions): void {
  if (!relationSide(opts)) return;

  const alone = opts.sides
    ? opts.sides.length === 1
    : Boolean(opts.scoresRelation) && !opts.scoresHead && !opts.scoresTail;
  const flag = opts.scoresRelation && !opts.sides?.includes("relation") ? "--scores-relation" : "--sides";
  for (const [given, other, why] of [
    [opts.negativesIds, "--negatives-ids", "given negatives are entities: rank relations in a run of their own"],
    [
      opts.memory,
      "--memory",
      "relation scores from embeddings need the entity table in memory: rank relations in a run of their own",
    ],
    [
      opts.entityShard,
      "--entity-shard",
      "a relation's score needs whole entity rows, not a slice of the table: rank relations in a run of their own",
    ],
    [
      opts.scoresRelation ? undefined : (opts.scoresHead ?? opts.scoresTail),
      opts.scoresHead ? "--scores-head" : "--scores-tail",
      "score files hold entity scores only: give the relation scores too (--scores-relation FILE, rows x relations), or leave relation out of --sides",
    ],
    [
      opts.negativesHead ?? opts.negativesTail,
      opts.negativesHead ? "--negatives-head" : "--negatives-tail",
      "sampled negatives are entities: rank relations in a run of their own",
    ],
    [
      opts.sampleTasks,
      "--sample-tasks",
      "a sample is drawn from head and tail tasks: rank relations in a run without --sample-tasks",
    ],
    [
      opts.byRelation && alone,
      "--by-relation",
      "its breakdown is of head and tail tasks, and relation tasks alone have none: add head and tail, or drop --by-relation",
    ],
  ] as const) {
    if (given !== undefined && given !== false)
      throw new KgrankInputError(flag, `${flag === "--sides" ? "relation " : ""}does not go with ${other}: ${why}`);
  }
}

/** What --sample-tasks does not go with: the sample is drawn, ranked and estimated in one process. */
function checkSampleTasks(opts: EvaluateOptions): void {
  for (const [given, flag, why] of [
    [opts.workers !== undefined && opts.workers > 1, "--workers", "a sample is ranked in one process"],
    [opts.shard, "--shard", "a sample is ranked in one process"],
    [opts.entityShard, "--entity-shard", "a sample is ranked in one process"],
    [
      opts.saveState,
      "--save-state",
      "a state does not record the sample's design, so merged states could not be estimated",
    ],
    [opts.negativesIds, "--negatives-ids", "sampled tasks are ranked against every entity"],
    [
      opts.bootstrap,
      "--bootstrap",
      "the estimates carry their own intervals (a bootstrap of the sample would not see the rest of the split)",
    ],
    [
      opts.scoresHead ?? opts.scoresTail,
      opts.scoresHead ? "--scores-head" : "--scores-tail",
      "score files already hold every task's scores: evaluate them whole",
    ],
  ] as const) {
    if (given) throw new KgrankInputError("--sample-tasks", `does not go with ${flag}: ${why}`);
  }
}

/** The dataset, the evaluated triples (the split or --triples) and this process's rows of them (its shard). */
async function openRun(opts: EvaluateOptions, out: Out, t0: number): Promise<RunContext> {
  const ds = await datasetFromAsync(opts);
  const evaluated = opts.triples ? readIdTriples(opts.triples, "--triples", ds) : ds.splits[opts.split];
  const rows = evaluated.length / 3;
  if (rows === 0) {
    const lost = opts.triples ? 0 : ds.dropped[opts.split];
    throw new KgrankInputError(
      opts.triples ? "--triples" : "--split",
      `${opts.triples ?? `the ${opts.split} split of ${ds.name}`} has no triple to evaluate` +
        (lost ? `: all ${lost} have an entity or relation unseen in train and were dropped (as PyKEEN does)` : ""),
    );
  }
  const shard = opts.shard ? resolveShard(opts.shard, process.env) : null;
  const [lo, hi] = shard ? shardRows(shard.index, shard.count, rows) : [0, rows];
  const sides = entitySides(opts);
  const sample =
    opts.sampleTasks === undefined
      ? null
      : sampleFlag(() =>
          sampleTasks({
            triples: evaluated,
            size: opts.sampleTasks!,
            sides: sides.length === 2 ? "both" : sides[0]!,
            seed: opts.seed,
            ...(opts.stratify ? { stratify: opts.stratify } : {}),
          }),
        );
  return { opts, out, t0, ds, evaluated, rows, lo, hi, shard, sample };
}

/** sampleTasks' errors as the flags that gave its options. */
function sampleFlag<T>(draw: () => T): T {
  try {
    return draw();
  } catch (e) {
    if (!(e instanceof KgrankInputError)) throw e;
    const flag = { size: "--sample-tasks", stratify: "--stratify", seed: "--seed" }[e.argument] ?? "--sample-tasks";
    throw new KgrankInputError(flag, e.message.slice(e.argument.length + 2));
  }
}

/** Interactions of complex vectors, whose layout is never guessed. */
const COMPLEX: readonly InteractionName[] = ["complex", "rotate", "rotate-l2"];

/** Refuses score-source flags that do not go together; says whether the scores come from a model or from files. */
function checkScoreSources(opts: EvaluateOptions): "model" | "files" {
  const given = { head: opts.scoresHead, tail: opts.scoresTail };
  const negatives = { head: opts.negativesHead, tail: opts.negativesTail };
  for (const side of SIDES) {
    if (negatives[side] && !given[side]) {
      throw new KgrankInputError(
        `--negatives-${side}`,
        `needs --scores-${side} with the true triples' scores (one per row of the ${opts.split} split)`,
      );
    }
  }
  const fromModel = Boolean(opts.modelDir || opts.interaction || opts.entityEmbeddings);
  if (fromModel && (given.head || given.tail)) {
    throw new KgrankInputError(
      "--scores-head",
      "scores files and a model's embeddings do not mix: give one or the other",
    );
  }
  if (opts.negativesIds && !fromModel) {
    throw new KgrankInputError(
      "--negatives-ids",
      "needs a model (--model-dir or --interaction with the embedding files); for negatives' scores use --negatives-head / --negatives-tail",
    );
  }
  if (opts.complexLayout !== undefined && opts.complexLayout !== "halves" && opts.complexLayout !== "interleaved") {
    throw new KgrankInputError("--complex-layout", `must be halves or interleaved, got ${opts.complexLayout}`);
  }
  if (opts.precision !== undefined && opts.precision !== "float32" && opts.precision !== "float64") {
    throw new KgrankInputError("--precision", `must be float32 or float64, got ${opts.precision}`);
  }
  if (fromModel && !opts.modelDir) {
    const interaction = opts.interaction as InteractionName | undefined;
    if (interaction === undefined || !INTERACTIONS.includes(interaction)) {
      throw new KgrankInputError(
        "--interaction",
        `${interaction === undefined ? "is required with the embedding files" : `${quoted(interaction)} is not known`}: ` +
          `one of ${INTERACTIONS.join(", ")} (or give --model-dir DIR, a directory with config.json)`,
      );
    }
    if (COMPLEX.includes(interaction) && opts.complexLayout === undefined) {
      throw new KgrankInputError(
        "--complex-layout",
        `is required with --interaction ${interaction}: halves (real parts then imaginary parts, as OGB's ` +
          "KnowledgeGraphEmbedding code stores them) or interleaved (re, im pairs, as torch.view_as_real)",
      );
    }
  }
  return fromModel ? "model" : "files";
}

/**
 * `kgrank evaluate` from score files (full rows, or sampled negatives' scores) or, without any, the frequency
 * baseline: batches of rows for the progress bar; errors name rows of the user's files.
 */
async function evaluateScores(run: RunContext): Promise<void> {
  const { opts, out, ds, evaluated, rows, lo, hi, shard } = run;
  const n = ds.numEntities;
  const given = { head: opts.scoresHead, tail: opts.scoresTail, relation: opts.scoresRelation };
  const negatives = { head: opts.negativesHead, tail: opts.negativesTail };
  const fromFiles = Boolean(given.head || given.tail || given.relation);
  const sides: TaskSide[] = fromFiles ? SIDES.filter((s) => given[s]) : entitySides(opts);
  const relation = fromFiles ? Boolean(given.relation) : relationSide(opts);
  if (fromFiles && opts.sides) {
    const unmatched = (["head", "tail", "relation"] as const).find(
      (s) => opts.sides!.includes(s) !== Boolean(given[s]),
    );
    if (unmatched) {
      throw new KgrankInputError(
        "--sides",
        given[unmatched]
          ? `${opts.sides.join(",")} leaves out ${unmatched}, but --scores-${unmatched} is given: list ${unmatched} in --sides, or drop the file`
          : `${unmatched} is listed but --scores-${unmatched} is not given: give its scores, or leave ${unmatched} out of --sides`,
      );
    }
  }
  const sampled = sides.some((s) => negatives[s]);
  if (sampled && sides.some((s) => !negatives[s])) {
    throw new KgrankInputError(
      "--negatives-head",
      "give negatives for every side with scores, or for none (sampled and full ranking do not mix)",
    );
  }
  const filter = runFilter(run, sampled);
  const evaluator = new RankEvaluator({
    numEntities: n,
    numRelations: ds.numRelations,
    filterTriples: filter.triples,
    sides: relation ? [...sides, "relation"] : sides.length === 2 ? "both" : sides[0],
    ks: opts.ks,
    metrics: evaluatorMetrics(opts.metrics),
  });
  const constrained = typedCandidatesEvaluator(opts, ds, filter.triples, sides, evaluated.subarray(3 * lo, 3 * hi));
  const scorer = fromFiles ? null : new FrequencyBaseline(ds.splits.train, n, ds.numRelations);
  const batch = ROWS_PER_BATCH(n);
  const progress = new Progress(
    `evaluating ${ds.name} ${opts.split}${shard ? ` shard ${shard.index}/${shard.count}` : ""}`,
    run.sample ? run.sample.sampled : (hi - lo) * (sides.length + (relation ? 1 : 0)),
    { quiet: opts.quiet, report: out.progress },
  );
  // One score buffer for every batch: fresh pages per batch cost more than the baseline's copying.
  const most = run.sample ? Math.max(run.sample.head.length, run.sample.tail.length) / 3 : hi - lo;
  const buffer = scorer ? new Float32Array(Math.min(batch, Math.max(0, most)) * n) : null;
  try {
    for (const side of sides) {
      if (scorer) {
        const own = run.sample ? run.sample[side] : evaluated.subarray(3 * lo, 3 * hi);
        for (let start = 0; start < own.length / 3; start += batch) {
          const triples = own.subarray(3 * start, 3 * Math.min(own.length / 3, start + batch));
          const scores = scorer.scoreBatch(triples, side, buffer!);
          await evaluator.add({ triples, side, scores });
          if (constrained) await constrained.add({ triples, side, scores });
          progress.tick(triples.length / 3);
          await turn();
        }
        continue;
      }
      const arg = `--scores-${side}`;
      const a = readArray(given[side]!, arg);
      const scores = floatScores(a, arg);
      if (negatives[side]) {
        if (!(a.shape.length === 1 || (a.shape.length === 2 && a.shape[1] === 1)))
          expectShape(a, [rows], arg, `one true score per ${opts.split} triple`);
        if (a.shape[0] !== rows)
          expectShape(a, [rows], arg, `one true score per ${opts.split} triple (${rows} after dropping unseen labels)`);
        const negArg = `--negatives-${side}`;
        const neg = readArray(negatives[side]!, negArg);
        expectShape(neg, [rows, -1], negArg, `one row of K negative scores per ${opts.split} triple`);
        const k = neg.shape[1]!;
        const negScores = floatScores(neg, negArg);
        if (hi > lo) {
          await evaluator.addSampled({
            side,
            triples: evaluated.subarray(3 * lo, 3 * hi),
            positiveScores: scores.subarray(lo, hi),
            negativeScores: negScores.subarray(lo * k, hi * k),
          });
        }
        progress.tick(hi - lo);
        continue;
      }
      expectShape(
        a,
        [rows, n],
        arg,
        `rows in the order of the ${opts.split} split's ${rows} triples, columns in entity id order (${n} entities)`,
      );
      for (let start = lo; start < hi; start += batch) {
        const end = Math.min(hi, start + batch);
        try {
          const part = {
            triples: evaluated.subarray(3 * start, 3 * end),
            side,
            scores: scores.subarray(start * n, end * n),
          };
          await evaluator.add(part);
          if (constrained) await constrained.add(part);
        } catch (e) {
          // The library names the row of the batch; the user knows rows of the file.
          if (!(e instanceof KgrankInputError) || e.argument !== "scores" || e.index === undefined) throw e;
          throw new KgrankInputError(
            arg,
            e.message
              .replace(/^scores: /, "")
              .replace(/row \d+ of the batch/, `row ${start + e.index} of ${path.basename(given[side]!)}`),
            start + e.index,
          );
        }
        progress.tick(end - start);
        await turn();
      }
    }
    // The relation side: rows [lo, hi) of --scores-relation, or the baseline's relation scores of them.
    const numRelations = ds.numRelations;
    const relationArray = given.relation ? readArray(given.relation, "--scores-relation") : null;
    if (relationArray) {
      expectShape(
        relationArray,
        [rows, numRelations],
        "--scores-relation",
        `rows in the order of the ${opts.split} split's ${rows} triples, columns in relation id order (${numRelations} relations)`,
      );
    }
    const relationFile = relationArray ? floatScores(relationArray, "--scores-relation") : null;
    const relationBatch = ROWS_PER_BATCH(numRelations);
    for (let start = lo; relation && start < hi; start += relationBatch) {
      const end = Math.min(hi, start + relationBatch);
      const triples = evaluated.subarray(3 * start, 3 * end);
      try {
        evaluator.addRelationScores({
          triples,
          scores: relationFile
            ? relationFile.subarray(start * numRelations, end * numRelations)
            : scorer!.scoreRelations(triples),
        });
      } catch (e) {
        // The library names the row of the batch; the user knows rows of the file.
        const at = e instanceof KgrankInputError && e.argument === "scores" ? /row (\d+)/.exec(e.message) : null;
        if (!relationFile || !at) throw e;
        const row = start + Number(at[1]);
        throw new KgrankInputError(
          "--scores-relation",
          (e as KgrankInputError).message
            .replace(/^scores: /, "")
            .replace(/row \d+/, `row ${row} of ${path.basename(given.relation!)}`),
          row,
        );
      }
      progress.tick(end - start);
      await turn();
    }
  } finally {
    progress.stop();
  }
  const scorerName = fromFiles ? (sampled ? "sampled scores from files" : "scores from files") : "frequency baseline";
  const setting = sampled ? "sampled negatives (unfiltered)" : filter.setting;
  const files = await inputFingerprints(
    opts,
    // --scores-relation last and only when given, so runs without it keep their fingerprints.
    [opts.triples, given.head, given.tail, negatives.head, negatives.tail, ...(given.relation ? [given.relation] : [])],
    FILE_FLAGS,
  );
  await finish(run, evaluator, scorerName, setting, filter.splits, files, constrained);
}

interface RunContext {
  opts: EvaluateOptions;
  out: Out;
  t0: number;
  ds: Dataset;
  evaluated: Int32Array;
  rows: number;
  /** The rows [lo, hi) this process evaluates (all without --shard). */
  lo: number;
  hi: number;
  shard: { index: number; count: number } | null;
  /** --sample-tasks: the tasks ranked instead of rows [lo, hi) on every side. */
  sample: TaskSample | null;
  /** --estimate-full: how the sampled ranks become full-ranking estimates. */
  estimating?: SampledEstimatePlan | null;
}

/**
 * The filter of a run (none when `raw`: sampled negatives are ranked unfiltered): its splits, the triples the
 * evaluator filters by, and the setting as the results' title states it.
 */
function runFilter(run: RunContext, raw: boolean): { splits: Split[]; triples?: Int32Array[]; setting: string } {
  const splits = raw ? [] : filterSplits(run.opts.filter, run.opts.split);
  if (splits.length === 0) return { splits, setting: "unfiltered" };
  return {
    splits,
    // The evaluated triples always filter (PyKEEN); with --triples they are those rows, not the split's file.
    triples: [...splits.map((s) => run.ds.splits[s]), ...(run.opts.triples ? [run.evaluated] : [])],
    setting: `filtered by ${splits.join("+")}`,
  };
}

/** `kgrank evaluate` from a model's embeddings: the kernel scores and counts; batches of rows for the progress bar. */
async function evaluateModel(run: RunContext): Promise<void> {
  const { opts, ds, evaluated, rows, lo, hi, shard } = run;
  const n = ds.numEntities;
  const model = loadModelWithin(opts, ds, opts.memory, opts.mayRead ? { mayRead: opts.mayRead } : {});
  // --memory with a table too large to read whole: the table is read in chunks, every row in one call.
  const chunked = model.entitySource !== null;
  let negatives: Int32Array | null = null;
  let k = 0;
  if (opts.negativesIds) {
    const neg = readArray(opts.negativesIds, "--negatives-ids");
    if (!/^[iu]/.test(neg.dtype))
      throw new KgrankInputError(
        "--negatives-ids",
        `dtype ${neg.dtype} is not an integer type: save entity ids as int32 or int64`,
      );
    expectShape(neg, [rows, -1], "--negatives-ids", `one row of K entity ids per ${opts.split} triple`);
    k = neg.shape[1]!;
    if (k === 0)
      throw new KgrankInputError(
        "--negatives-ids",
        `has shape (${rows}, 0): give at least one entity id per ${opts.split} triple`,
      );
    // The range check reads the stored value (int64 and uint64 arrive as exact numbers up to 2^53), before Int32Array
    // would wrap it modulo 2^32.
    const ids = neg.data as ArrayLike<number>;
    negatives = new Int32Array(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const v = ids[i]!;
      if (!(v >= 0 && v < n))
        throw new KgrankInputError(
          "--negatives-ids",
          `row ${Math.floor(i / k)}, column ${i % k}: entity id ${v} is outside [0, ${n}) of ${ds.name}'s entity ids`,
        );
      negatives[i] = v;
    }
  }
  const filter = runFilter(run, negatives !== null);
  const sides: TaskSide[] = entitySides(opts);
  const relation = relationSide(opts);
  const estimating = negatives && opts.estimateFull ? sampledEstimatePlan(run, negatives, k, sides) : null;
  if (opts.entityShard && opts.entityShard.count > n) {
    const { index, count } = opts.entityShard;
    throw new KgrankInputError(
      "--entity-shard",
      `${index}/${count} splits ${ds.name}'s ${n} entities into ${count} shards: N must be at most ${n}, each entity shard ranking against at least one entity`,
    );
  }
  const evaluator = new RankEvaluator({
    numEntities: n,
    numRelations: ds.numRelations,
    filterTriples: filter.triples,
    sides: relation ? [...sides, "relation"] : sides.length === 2 ? "both" : sides[0],
    ks: opts.ks,
    metrics: evaluatorMetrics(opts.metrics),
    ...(opts.entityShard ? { entityShard: opts.entityShard } : {}),
  });
  const constrained = typedCandidatesEvaluator(opts, ds, filter.triples, sides, evaluated.subarray(3 * lo, 3 * hi));
  const label =
    `scoring ${ds.name} ${opts.split}${shard ? ` shard ${shard.index}/${shard.count}` : ""}` +
    `${opts.entityShard ? ` entity shard ${opts.entityShard.index}/${opts.entityShard.count}` : ""} from embeddings`;
  const total = run.sample ? run.sample.sampled : (hi - lo) * (sides.length + (relation ? 1 : 0));
  const progress = new Progress(label, total, { quiet: opts.quiet, report: run.out.progress });
  const plan = chunked ? memoryNotice(run.out, opts.quiet) : undefined;
  try {
    if (run.sample && chunked) {
      // A sample's sides hold other triples: one call per side, each reading the table once per query block.
      for (const side of sides) {
        if (run.sample[side].length === 0) continue; // a small sample may draw no task of a side
        let ticked = 0;
        await evaluator
          .addModel({
            model,
            triples: run.sample[side],
            side,
            memoryBudget: opts.memory,
            ...(plan ? { onPlan: plan } : {}),
            onProgress: ({ done }) => {
              progress.tick(done - ticked);
              ticked = done;
            },
          })
          .catch((e: unknown) => {
            throw cliModelError(e, opts);
          });
      }
    } else if ((chunked || opts.entityShard) && hi > lo) {
      // One call for every row and every side ranked: the table is read once per query block that --memory allows.
      let ticked = 0;
      await evaluator
        .addModel({
          model,
          triples: evaluated.subarray(3 * lo, 3 * hi),
          ...(chunked ? { memoryBudget: opts.memory } : {}),
          ...(plan ? { onPlan: plan } : {}),
          ...(negatives
            ? { negatives: { head: negatives.subarray(lo * k, hi * k), tail: negatives.subarray(lo * k, hi * k) } }
            : {}),
          onProgress: ({ done }) => {
            progress.tick(done - ticked);
            ticked = done;
          },
        })
        .catch((e: unknown) => {
          throw cliModelError(e, opts);
        });
    }
    const ranked: TaskSide[] = chunked || opts.entityShard ? [] : sides;
    for (const side of relation ? [...ranked, "relation" as const] : ranked) {
      const own =
        side === "relation"
          ? evaluated.subarray(3 * lo, 3 * hi)
          : run.sample
            ? run.sample[side]
            : evaluated.subarray(3 * lo, 3 * hi);
      for (let start = 0; start < own.length / 3; start += MODEL_ROWS) {
        const end = Math.min(own.length / 3, start + MODEL_ROWS);
        const triples = own.subarray(3 * start, 3 * end);
        await evaluator
          .addModel({
            model,
            triples,
            side,
            ...(negatives ? { negatives: negatives.subarray((lo + start) * k, (lo + end) * k) } : {}),
          })
          .catch((e: unknown) => {
            throw cliModelError(e, opts);
          });
        if (constrained && side !== "relation")
          await constrained.addModel({ model, triples, side }).catch((e: unknown) => {
            throw cliModelError(e, opts);
          });
        progress.tick(end - start);
        await turn();
      }
    }
  } finally {
    progress.stop();
  }
  const setting = negatives ? `OGB protocol: ${k} given negatives per triple (unfiltered)` : filter.setting;
  const scorerName = `${model.interaction} from embeddings (${model.entityWidth} columns, ${model.precision})`;
  const modelFiles = await inputFingerprints(
    opts,
    [opts.triples, opts.entityEmbeddings, opts.relationEmbeddings, opts.entityIds, opts.relationIds, opts.negativesIds],
    ["--triples", "--entity-embeddings", "--relation-embeddings", "--entity-ids", "--relation-ids", "--negatives-ids"],
  );
  const dirFiles = opts.modelDir && opts.saveState ? await directoryFingerprints(opts.modelDir) : null;
  await finish(
    { ...run, estimating },
    evaluator,
    scorerName,
    setting,
    filter.splits,
    [...modelFiles, dirFiles],
    constrained,
  );
}

/** What --estimate-full estimates with: each side's candidate counts, K, the estimators. */
interface SampledEstimatePlan {
  numCandidates: Partial<Record<TaskSide, Float64Array>>;
  k: number;
  replacement: boolean;
  estimators: SampledRankEstimator[];
}

/**
 * --estimate-full, checked before any scoring: the negatives of rows [lo, hi) against what the estimators assume
 * (none is the task's own answer, no repeat without --replacement, with --negatives-from filtered no other known
 * answer), each task's candidate count, and the estimators that fit the work limits.
 */
function sampledEstimatePlan(
  run: RunContext,
  negatives: Int32Array,
  k: number,
  sides: readonly TaskSide[],
): SampledEstimatePlan {
  const { opts, ds, evaluated, lo, hi } = run;
  const filtered = opts.negativesFrom === "filtered";
  const filter = filtered ? runFilter(run, false) : null;
  if (filtered && !filter!.triples) {
    throw new KgrankInputError(
      "--negatives-from",
      "filtered needs known answers to filter by, but --filter is none: give the splits the negatives avoided",
    );
  }
  const replacement = Boolean(opts.replacement);
  const numCandidates: Partial<Record<TaskSide, Float64Array>> = {};
  const groups = new Set<number>();
  for (const side of sides) {
    const counts = sampledNegativeCandidates(
      evaluated.subarray(3 * lo, 3 * hi),
      negatives.subarray(lo * k, hi * k),
      side,
      ds.numEntities,
      ds.numRelations,
      filter?.triples ?? null,
      replacement,
      "--negatives-ids",
    );
    numCandidates[side] = counts;
    for (let i = 0; i < counts.length; i++) {
      groups.add(counts[i]!);
      if (!replacement && k > counts[i]! - 1) {
        throw new KgrankInputError(
          "--negatives-ids",
          `row ${lo + i} has ${k} negatives, but its ${side} task has only ${counts[i]! - 1} other candidates ` +
            `${filtered ? "after filtering" : ""}: without --replacement a row draws at most that many`,
        );
      }
    }
  }
  const fit = estimatorsWithinLimits([...groups], k);
  let estimators: SampledRankEstimator[];
  if (opts.estimateFull === true) estimators = fit;
  else {
    estimators = opts.estimateFull as SampledRankEstimator[];
    const over = estimators.find((e) => !fit.includes(e));
    if (over) {
      throw new KgrankInputError(
        "--estimate-full",
        `${over} is beyond the work limits for K = ${k} and ${groups.size === 1 ? `N = ${[...groups][0]}` : `${groups.size} distinct candidate counts (one table set each)`} ` +
          `(docs/evaluate.md, "Sampled negatives, corrected"): give --estimate-full ${fit.join(",")}`,
      );
    }
  }
  return { numCandidates, k, replacement, estimators };
}

/** The full-ranking estimates of each side ranked and of both together, from the run's realistic sampled ranks. */
function sampledEstimates(
  results: RankResults,
  plan: SampledEstimatePlan,
  opts: EvaluateOptions,
): Partial<Record<"head" | "tail" | "both", SampledRankEstimates>> {
  const tasks = results.tasks();
  const ranks: Partial<Record<TaskSide, Float64Array>> = {};
  let at = 0;
  for (const side of SIDES) {
    const counts = plan.numCandidates[side];
    if (!counts) continue;
    ranks[side] = tasks.realistic.subarray(at, at + counts.length);
    at += counts.length;
  }
  if (at !== tasks.realistic.length)
    throw new Error(`--estimate-full: ${tasks.realistic.length} tasks ranked, ${at} planned`);
  const estimate = (r: Float64Array, numCandidates: Float64Array) =>
    estimateFromSampledRanks({
      ranks: r,
      numNegatives: plan.k,
      numCandidates: opts.negativesFrom === "filtered" ? numCandidates : numCandidates[0]!,
      replacement: plan.replacement,
      estimators: plan.estimators,
      ...(opts.ks ? { ks: opts.ks } : {}),
      ...(opts.bootstrap ? { bootstrap: { samples: opts.bootstrap, seed: opts.seed, confidenceLevel: 0.95 } } : {}),
    });
  const out: Partial<Record<"head" | "tail" | "both", SampledRankEstimates>> = {};
  const sides = SIDES.filter((s) => ranks[s]);
  for (const side of sides) out[side] = estimate(ranks[side]!, plan.numCandidates[side]!);
  if (sides.length === 2) {
    const both = new Float64Array(at);
    both.set(plan.numCandidates.head!);
    both.set(plan.numCandidates.tail!, plan.numCandidates.head!.length);
    out.both = estimate(tasks.realistic, both);
  }
  return out;
}

/**
 * The library's errors about a model as the CLI names them: `model` (a score that overflowed) becomes the flags that
 * gave the model, `negatives` --negatives-ids, and the precision option its flag (errorLine maps the other argument
 * names: entityEmbeddings, interaction, ...).
 */
export function cliModelError(e: unknown, opts: Pick<EvaluateOptions, "modelDir">): unknown {
  if (!(e instanceof KgrankInputError)) return e;
  const argument =
    e.argument === "model"
      ? opts.modelDir
        ? "--model-dir"
        : "--entity-embeddings / --relation-embeddings"
      : e.argument === "negatives"
        ? "--negatives-ids"
        : e.argument;
  const text = e.message.slice(e.argument.length + 2);
  const cli = text
    .replaceAll('precision: "float64"', "--precision float64")
    .replace(/or read it into memory$/, "or leave --memory out to read it into memory");
  return argument === e.argument && cli === text ? e : new KgrankInputError(argument, cli);
}

/** The model the model flags (modelFlags in ./flags.ts) name, for the dataset's labels; errors name the flags. */
function loadModelFlags(
  opts: ModelFlagOptions,
  ds: { entityLabels: readonly string[]; relationLabels: readonly string[] },
  extra: Partial<Pick<LoadEmbeddingModelOptions, "mayRead" | "streamEntities">> = {},
): EmbeddingModel {
  return withModelFlags(opts, () =>
    loadEmbeddingModel({
      modelDir: opts.modelDir,
      interaction: opts.interaction as InteractionName | undefined,
      entityEmbeddings: opts.entityEmbeddings,
      relationEmbeddings: opts.relationEmbeddings,
      entityIds: opts.entityIds,
      relationIds: opts.relationIds,
      complexLayout: opts.complexLayout as ComplexLayout | undefined,
      precision: opts.precision as "float32" | "float64" | undefined,
      entityLabels: ds.entityLabels,
      relationLabels: ds.relationLabels,
      ...extra,
    }),
  );
}

/**
 * The model of the flags with --memory: its entity table opened to be read in chunks (checked as such), then read
 * into memory when it takes at most half the budget (the rest left to the filter index and the query rows), so a
 * budget the table fits never costs more memory than no budget; without --memory, in memory.
 */
export function loadModelWithin(
  opts: ModelFlagOptions,
  ds: { entityLabels: readonly string[]; relationLabels: readonly string[] },
  memory: number | undefined,
  extra: Partial<Pick<LoadEmbeddingModelOptions, "mayRead">> = {},
): EmbeddingModel {
  if (memory === undefined) return loadModelFlags(opts, ds, extra);
  const streamed = loadModelFlags(opts, ds, { ...extra, streamEntities: true });
  const source = streamed.entitySource!;
  const bytes = source.rows * source.cols * (streamed.precision === "float64" ? 8 : 4);
  return bytes <= memory / 2 ? loadModelFlags(opts, ds, extra) : streamed;
}

function withModelFlags<T>(opts: Pick<EvaluateOptions, "modelDir">, load: () => T): T {
  try {
    return load();
  } catch (e) {
    throw cliModelError(e, opts);
  }
}

/**
 * Fingerprints of a run's input files (null where not given) for its saved state; none without --save-state, as
 * each reads the whole file.
 */
async function inputFingerprints(
  opts: EvaluateOptions,
  files: (string | undefined)[],
  flags: string | string[],
): Promise<(string | null)[]> {
  const out: (string | null)[] = [];
  for (const [i, f] of files.entries())
    out.push(f && opts.saveState ? await fileFingerprint(f, typeof flags === "string" ? flags : flags[i]!) : null);
  return out;
}

/** Fingerprints of a model directory's regular files, by name. */
async function directoryFingerprints(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    const file = path.join(dir, name);
    if (statSync(file).isFile()) out[name] = await fileFingerprint(file, "--model-dir");
  }
  return out;
}

/** Saves the state (--save-state; a shard stops there), finalizes, writes --ranks-out and prints the results. */
async function finish(
  run: RunContext,
  evaluator: RankEvaluator,
  scorerName: string,
  setting: string,
  filterSet: string[],
  inputs: unknown[],
  constrained: RankEvaluator | null = null,
): Promise<void> {
  const { opts, ds, evaluated, rows } = run;
  const n = ds.numEntities;
  const dropped = opts.triples ? 0 : ds.dropped[opts.split];
  const report: ReportInfo = {
    title:
      `${ds.name} ${opts.triples ? `triples from ${path.basename(opts.triples)}` : opts.split} (${rows} triples x ${n} entities${dropped ? `; ${dropped} with labels unseen in train dropped` : ""}), ` +
      `${setting}, ${scorerName}` +
      (run.sample
        ? `; a sample of ${run.sample.sampled} of its ${run.sample.population} tasks (seed ${opts.seed}${run.sample.stratify ? ", stratified by relation" : ""})`
        : ""),
    dataset: ds.name,
    split: opts.split,
    numEntities: n,
    triples: rows,
    dropped,
    setting,
    scorer: scorerName,
    metrics: opts.metrics ?? null,
    ks: opts.ks ?? null,
    byRelation: Boolean(opts.byRelation),
    bootstrap: opts.bootstrap ?? null,
    seed: opts.seed,
    relationLabels: opts.byRelation ? ds.relationLabels : null,
  };
  // Everything that decides the numbers; the shard index is not part of it (it differs between shards).
  const decisive = [
    report,
    evaluated,
    ...filterSet.map((s) => ds.splits[s as Split]),
    ds.entityLabels,
    ds.relationLabels,
    inputs,
    opts.filter,
    ...(constrained ? [constrained.candidates!.fingerprint] : []),
  ];
  await finishRun(
    run,
    evaluator,
    report,
    decisive,
    { entities: ds.entityLabels, relations: ds.relationLabels },
    constrained,
  );
}

/** The rows and shard of a run, for finishRun. */
type RunSlice = Pick<RunContext, "opts" | "out" | "t0" | "lo" | "hi" | "shard"> & {
  sample?: TaskSample | null;
  estimating?: SampledEstimatePlan | null;
};

/** --save-state (with the run's fingerprint of `decisive`), finalize, --ranks-out and the printed results. */
async function finishRun(
  run: RunSlice,
  evaluator: RankEvaluator,
  report: ReportInfo,
  decisive: unknown[],
  labels: { entities?: readonly string[] | null; relations?: readonly string[] | null },
  constrained: RankEvaluator | null = null,
): Promise<void> {
  const { opts, out, t0, lo, hi, shard } = run;
  const rows = report.triples;
  if (opts.saveState) {
    const fingerprint = runFingerprint(decisive);
    const meta: RunMeta = {
      kgrank: "evaluate",
      fingerprint,
      shard: shard?.index ?? 0,
      shards: shard?.count ?? 1,
      rows: [lo, hi],
      report,
      ...(opts.entityShard ? { entityShard: opts.entityShard } : {}),
    };
    writeFileAtomic(
      opts.saveState,
      evaluator.serialize({ meta: meta as unknown as Record<string, unknown> }),
      "--save-state",
    );
    // The typed-candidate protocol's state beside it: its shards merge among themselves (kgrank merge).
    if (constrained)
      writeFileAtomic(
        constrainedStatePath(opts.saveState),
        constrained.serialize({
          meta: { ...meta, candidates: constrained.candidates!.describe() } as unknown as Record<string, unknown>,
        }),
        "--save-state",
      );
    if (shard || opts.entityShard) {
      const e = opts.entityShard;
      if (!opts.quiet)
        out.stderr(
          `${shard ? `shard ${shard.index}/${shard.count}: ` : ""}${e ? `entity shard ${e.index}/${e.count}: ` : ""}` +
            `rows ${lo}..${hi - 1} of ${rows} (${evaluator.taskCounts.head + evaluator.taskCounts.tail} tasks) -> ${opts.saveState}\n`,
        );
      return;
    }
  }
  // Async, so Ctrl-C during a long bootstrap is handled at once (main.ts exits 130 and writes nothing).
  const finalizeOptions = opts.bootstrap
    ? { bootstrap: { samples: opts.bootstrap, seed: opts.seed, confidenceLevel: 0.95 } }
    : {};
  const results = await evaluator.finalizeAsync(finalizeOptions);
  const typed = constrained
    ? { results: await constrained.finalizeAsync(finalizeOptions), candidates: constrained.candidates!.describe() }
    : null;
  if (opts.ranksOut) writeRanksOut(opts.ranksOut, results, labels);
  const estimates = run.sample ? estimateFull(results, run.sample, opts.ks ? { ks: opts.ks } : {}) : null;
  const fromNegatives = run.estimating ? sampledEstimates(results, run.estimating, opts) : null;
  emit(
    out,
    renderEvaluation(results, report, opts.format, t0, estimates, fromNegatives, typed),
    opts.output,
    opts.quiet,
  );
  // Ranks no better than chance: a note on stderr, apart from the results.
  if (!opts.quiet) {
    const fromModel = Boolean(opts.modelDir || opts.interaction || opts.entityEmbeddings);
    const warning = randomRankingWarning(evaluator, fromModel);
    if (warning) out.stderr(warning);
  }
}

/** Flags that name a dataset, triples or another source of scores: none applies to dataset-free sampled ranking. */
const NOT_WITH_SCORES_ONLY: [keyof EvaluateOptions, string][] = [
  ["dataset", "--dataset"],
  ["datasetDir", "--dataset-dir"],
  ["split", "--split"],
  ["filter", "--filter"],
  ["triples", "--triples"],
  ["scoresHead", "--scores-head"],
  ["scoresTail", "--scores-tail"],
  ["scoresRelation", "--scores-relation"],
  ["negativesHead", "--negatives-head"],
  ["negativesTail", "--negatives-tail"],
  ["modelDir", "--model-dir"],
  ["interaction", "--interaction"],
  ["entityEmbeddings", "--entity-embeddings"],
  ["relationEmbeddings", "--relation-embeddings"],
  ["entityIds", "--entity-ids"],
  ["relationIds", "--relation-ids"],
  ["negativesIds", "--negatives-ids"],
  ["complexLayout", "--complex-layout"],
  ["precision", "--precision"],
  ["memory", "--memory"],
  ["sides", "--sides"],
  ["sampleTasks", "--sample-tasks"],
  ["stratify", "--stratify"],
  ["byRelation", "--by-relation"],
];

/**
 * `kgrank evaluate --positive-scores p.npy --negative-scores n.npy`: OGB's sampled protocol without a dataset (as
 * WikiKG2's evaluator: y_pred_pos of shape (n,), y_pred_neg of shape (n, K), no labels). Each row is one task with
 * K + 1 candidates (a NaN negative is no candidate), ranked by the same kernel as ogbEvaluate(): the realistic rank
 * is OGB's. The tasks are reported as the tail side (and both); every metric and its random expectation apply.
 */
async function evaluateScoresOnly(opts: EvaluateOptions, out: Out, t0: number): Promise<void> {
  if (!opts.positiveScores)
    throw new KgrankInputError(
      "--negative-scores",
      "needs --positive-scores FILE: the positive (true) score of each row, shape (n,)",
    );
  if (!opts.negativeScores)
    throw new KgrankInputError(
      "--positive-scores",
      "needs --negative-scores FILE: K negatives' scores per positive, shape (n, K)",
    );
  for (const [key, flag] of NOT_WITH_SCORES_ONLY) {
    const set = opts.given
      ? opts.given.includes(key)
      : key !== "split" && key !== "filter" && opts[key] !== undefined && opts[key] !== false;
    if (set) {
      throw new KgrankInputError(
        flag,
        "does not apply to --positive-scores / --negative-scores (sampled ranking without a dataset): drop it, " +
          "or rank a dataset's triples with --scores-tail and --negatives-tail",
      );
    }
  }
  const posFile = opts.positiveScores;
  const negFile = opts.negativeScores;
  const p = readArray(posFile, "--positive-scores");
  const positives = floatScores(p, "--positive-scores");
  if (!(p.shape.length === 1 || (p.shape.length === 2 && p.shape[1] === 1)) || p.shape[0] === 0) {
    throw new KgrankInputError(
      "--positive-scores",
      `shape (${p.shape.join(", ")}) is not (n,) with n >= 1: one positive score per row, as OGB's y_pred_pos`,
    );
  }
  const rows = p.shape[0]!;
  const neg = readArray(negFile, "--negative-scores");
  expectShape(
    neg,
    [rows, -1],
    "--negative-scores",
    `one row of K negative scores per positive (${rows} in ${path.basename(posFile)}), as OGB's y_pred_neg`,
  );
  const k = neg.shape[1]!;
  if (k === 0)
    throw new KgrankInputError(
      "--negative-scores",
      `shape (${neg.shape.join(", ")}) has no negative: give K >= 1 per row`,
    );
  const negatives = floatScores(neg, "--negative-scores");
  const shard = opts.shard ? resolveShard(opts.shard, process.env) : null;
  const [lo, hi] = shard ? shardRows(shard.index, shard.count, rows) : [0, rows];
  const evaluator = new RankEvaluator({
    numEntities: k + 1,
    sides: "tail",
    ks: opts.ks,
    metrics: evaluatorMetrics(opts.metrics),
  });
  if (hi > lo) {
    try {
      await evaluator.addSampled({
        side: "tail",
        positiveScores: positives.subarray(lo, hi),
        negativeScores: negatives.subarray(lo * k, hi * k),
      });
    } catch (e) {
      if (!(e instanceof KgrankInputError) || e.argument !== "positiveScores") throw e;
      // Rows of the file, not of the shard.
      const message = e.message
        .replace(/^positiveScores: /, "")
        .replace(/positiveScores\[(\d+)\]/, (_m, i: string) => `row ${lo + Number(i)} of ${path.basename(posFile)}`);
      throw new KgrankInputError("--positive-scores", message);
    }
  }
  const setting = `sampled negatives (unfiltered): ${k} per task, realistic rank = OGB's`;
  const scorer = "sampled scores from files";
  const report: ReportInfo = {
    title: `${path.basename(posFile)} and ${path.basename(negFile)} (${rows} tasks x ${k} negatives, no dataset), ${setting}, ${scorer}`,
    dataset: null,
    split: null,
    numEntities: null,
    triples: rows,
    dropped: 0,
    setting,
    scorer,
    metrics: opts.metrics ?? null,
    ks: opts.ks ?? null,
    byRelation: false,
    bootstrap: opts.bootstrap ?? null,
    seed: opts.seed,
    relationLabels: null,
  };
  const inputs = await inputFingerprints(opts, [posFile, negFile], ["--positive-scores", "--negative-scores"]);
  await finishRun({ opts, out, t0, lo, hi, shard }, evaluator, report, [report, inputs], {});
}

const FILE_FLAGS = [
  "--triples",
  "--scores-head",
  "--scores-tail",
  "--negatives-head",
  "--negatives-tail",
  "--scores-relation",
];
