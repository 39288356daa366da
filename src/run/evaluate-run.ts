/**
 * One evaluation run, from typed options: what `kgrank evaluate` runs (the CLI parses the flags) and what a queue
 * worker runs for a shard job (run/flags/evaluate.ts parseEvaluateArgs). Checks the options that do not mix
 * (evaluate/checks.ts), then hands the run to its score source: the frequency baseline or score files
 * (evaluate/score-files.ts), a model's embeddings (evaluate/model.ts), dataset-free sampled scores
 * (evaluate/scores-only.ts), a temporal KG (temporal-run.ts) or --workers' shard processes (workers.ts). Each opens
 * the run (evaluate/context.ts) and ends it alike (evaluate/finish.ts: --save-state, finalize, --ranks-out, the
 * results printed through run/render.ts).
 */
import { KgrankInputError } from "../checks/errors";
import { modelDirDataset } from "../io/model-dir";
import type { Out } from "./out";
import { evaluateWithWorkers } from "./workers";
import { checkTemporalFlags, evaluateTemporal } from "./temporal-run";
import {
  checkConstrainCandidates,
  checkEstimateFull,
  checkRelationSide,
  checkSampleTasks,
  checkScoreSources,
} from "./evaluate/checks";
import { openRun } from "./evaluate/context";
import { evaluateModel } from "./evaluate/model";
import { evaluatePbg, isPbgCheckpoint, pbgNeedsEdges } from "./evaluate/pbg";
import type { EvaluateOptions } from "./evaluate/options";
import { evaluateScores } from "./evaluate/score-files";
import { evaluateScoresOnly } from "./evaluate/scores-only";

export async function evaluateRun(opts: EvaluateOptions, out: Out): Promise<void> {
  // A PyTorch-BigGraph checkpoint brings its own scoring, and its graph comes from --dataset-dir (evaluate/pbg.ts).
  const pbg = opts.modelDir !== undefined && isPbgCheckpoint(opts.modelDir);
  if (pbg && !opts.datasetDir) throw pbgNeedsEdges();
  if (opts.pbgSampled && !pbg)
    throw new KgrankInputError(
      "--pbg-sampled",
      "ranks a PyTorch-BigGraph checkpoint by PBG's sampled protocol: give --model-dir a checkpoint folder (config.json and checkpoint_version.txt), or drop it",
    );
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
  if (pbg) return evaluatePbg(opts, out, t0);
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
