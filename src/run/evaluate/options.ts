/**
 * The options of one evaluation run (`kgrank evaluate`'s flags as parsed, or a queue worker's shard job) and the
 * sides they ask for.
 */
import type { Split } from "../../io/datasets";
import { type RunSide, SIDES, type TaskSide } from "../datasets";
import type { Format } from "../format";
import type { ModelFlagOptions } from "../model-flags";
import type { ShardSpec } from "../shard";

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
  /** --pbg-sampled: a PyTorch-BigGraph checkpoint ranked by PBG's own sampled protocol instead of exactly. */
  pbgSampled?: boolean;
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
  /** --quantized: the screen's table as `kgrank quantize` wrote it, read instead of quantising the table. */
  quantized?: string;
  /** --verbose: also print what the int8 screen did (stderr). */
  verbose?: boolean;
  /** --screen: the int8 screen of ranking from embeddings (docs/screen.md); default auto. */
  screen?: "auto" | "int8" | "off";
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

/** The entity sides of --sides (default head and tail). */
export function entitySides(opts: EvaluateOptions): TaskSide[] {
  return opts.sides ? SIDES.filter((s) => opts.sides!.includes(s)) : [...SIDES];
}

/** Whether the run ranks relations: --sides lists relation, or --scores-relation gives their scores. */
export function relationSide(opts: EvaluateOptions): boolean {
  return Boolean(opts.scoresRelation) || Boolean(opts.sides?.includes("relation"));
}
