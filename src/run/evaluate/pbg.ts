/**
 * `kgrank evaluate --model-dir CHECKPOINT` of a PyTorch-BigGraph checkpoint: the graph from --dataset-dir (PBG edge
 * folders or TSV of PBG's names), every task ranked by src/evaluation/pbg.ts (PbgRanker: PBG's scores, each task
 * against the entities of its relation's type on that side) within --memory, filtered, sharded and sampled as any
 * run, and finished as any run; --entity-shard I/M ranks against the shard's partitions only (partial counts);
 * --pbg-sampled ranks by PBG's own sampled protocol instead (PbgRanker.rankSampled).
 */
import { KgrankInputError } from "../../checks/errors";
import { RankEvaluator } from "../../evaluation/evaluator";
import {
  PBG_DEFAULT_BUDGET,
  PbgRanker,
  pbgCandidateSets,
  pbgSampledEntities,
  pbgShardRanges,
} from "../../evaluation/pbg";
import type { Dataset } from "../../io/datasets";
import { openPbgCheckpoint, type PbgCheckpoint } from "../../io/pbg/checkpoint";
import { pbgDataset, pbgEntityNamesOf, pbgEntityFolders, pbgFileOrder } from "../../io/pbg/graph";
import type { Out } from "../out";
import { Progress } from "../progress";
import { evaluatorMetrics } from "../render";
import { openRun, runFilter } from "./context";
import { directoryFingerprints, finish } from "./finish";
import { entitySides, relationSide, type EvaluateOptions } from "./options";

export { isPbgCheckpoint } from "../../io/pbg/checkpoint";

/** --dataset-dir is missing: a checkpoint holds no edges. */
export function pbgNeedsEdges(): KgrankInputError {
  return new KgrankInputError(
    "--dataset-dir",
    "is required with a PyTorch-BigGraph checkpoint: give the folder of its edges (train/, valid/, test/ edge folders of edges_L_R.h5, or one of them) or TSV splits of PBG's entity names",
  );
}

/** `kgrank evaluate` of a PyTorch-BigGraph checkpoint. */
export async function evaluatePbg(opts: EvaluateOptions, out: Out, t0: number): Promise<void> {
  for (const [given, flag] of [
    [opts.interaction, "--interaction"],
    [opts.entityEmbeddings, "--entity-embeddings"],
    [opts.relationEmbeddings, "--relation-embeddings"],
    [opts.negativesIds, "--negatives-ids"],
    [opts.constrainCandidates, "--constrain-candidates"],
    [opts.entityIds, "--entity-ids"],
    [opts.relationIds, "--relation-ids"],
    [opts.complexLayout, "--complex-layout"],
    [opts.precision, "--precision"],
    [opts.scoresHead, "--scores-head"],
    [opts.scoresTail, "--scores-tail"],
  ] as const) {
    if (given !== undefined && given !== null)
      throw new KgrankInputError(
        flag,
        `does not apply to a PyTorch-BigGraph checkpoint (--model-dir ${opts.modelDir}): its config gives the scoring and its entity types the candidates; drop ${flag}`,
      );
  }
  if (relationSide(opts))
    throw new KgrankInputError(
      "--sides",
      "relation is not ranked for a PyTorch-BigGraph checkpoint: rank head and tail",
    );
  if (!opts.datasetDir) throw pbgNeedsEdges();
  const ckpt = await openPbgCheckpoint(opts.modelDir!, { entityDirs: pbgEntityFolders(opts.datasetDir) });
  const ds = await pbgDataset(ckpt, opts.datasetDir, opts.split);
  // The entity names are read on first use; a run that prints them or keeps their digest reads them before it ranks,
  // so that a bad names file fails it at the start instead of after the ranking.
  if (opts.ranksOut || opts.saveState) pbgEntityNamesOf(ds)?.check();
  if (opts.pbgSampled) return evaluatePbgSampled(opts, out, t0, ckpt, ds);
  const run = await openRun(opts, out, t0, ds);
  const { evaluated, lo, hi, shard } = run;
  const filter = runFilter(run, false);
  const sides = entitySides(opts);
  // --entity-shard I/M: this process ranks against its part of the entity space only (pbgShardRanges: whole
  // partitions while M allows), and saves partial counts that kgrank merge adds up with the other entity shards'.
  const entity = opts.entityShard ?? null;
  if (entity && entity.count > ckpt.numEntities) {
    throw new KgrankInputError(
      "--entity-shard",
      `${entity.index}/${entity.count} splits the checkpoint's ${ckpt.numEntities} entities into ${entity.count} shards: ` +
        `N must be at most ${ckpt.numEntities}, each entity shard ranking against at least one entity`,
    );
  }
  const range = entity ? pbgShardRanges(ckpt, entity.count)[entity.index]! : null;
  const ranker = await PbgRanker.open(ckpt, opts.memory ?? PBG_DEFAULT_BUDGET, range);
  // Typed candidates: an entity shard scores other types' columns NaN, as a streamed run does, and labels its state
  // with the sets an unsharded run of the same budget ranks against, so the merged run reports what that run does.
  const sets = ranker.streamed ? null : pbgCandidateSets(ckpt);
  let evaluator: RankEvaluator;
  try {
    evaluator = new RankEvaluator({
      numEntities: ds.numEntities,
      numRelations: ds.numRelations,
      filterTriples: filter.triples,
      sides: sides.length === 2 ? "both" : sides[0],
      ks: opts.ks,
      metrics: evaluatorMetrics(opts.metrics),
      ...(sets && !range ? { candidates: sets } : {}),
      ...(entity && range ? { entityShard: { ...entity, begin: range[0], end: range[1] } } : {}),
    });
    if (sets && range) evaluator.labelCandidates(sets.describe());
  } catch (e) {
    ranker.close();
    throw e;
  }
  const label =
    `scoring ${ds.name} ${opts.split}${shard ? ` shard ${shard.index}/${shard.count}` : ""}` +
    `${entity && range ? ` entity shard ${entity.index}/${entity.count} (entities ${range[0]}..${range[1] - 1})` : ""} from a PyTorch-BigGraph checkpoint`;
  const total = run.sample ? run.sample.sampled : (hi - lo) * sides.length;
  const progress = new Progress(label, total, { quiet: opts.quiet, report: run.out.progress });
  try {
    for (const side of sides)
      await ranker.rank(evaluator, side, run.sample ? run.sample[side] : evaluated.subarray(3 * lo, 3 * hi), (n) =>
        progress.tick(n),
      );
  } finally {
    progress.stop();
    ranker.close();
  }
  const scorerName =
    `${scorerOf(ckpt)} (${ckpt.dimension} columns, float64; ` +
    `${ckpt.types.length} entity type${ckpt.types.length > 1 ? "s as typed candidates" : ""})`;
  const dirFiles = opts.saveState ? await directoryFingerprints(opts.modelDir!) : null;
  await finish(run, evaluator, scorerName, filter.setting, filter.splits, [dirFiles, ckpt.version]);
}

/** The checkpoint's scoring as the results name it: comparator, bias, dynamic relations. */
function scorerOf(ckpt: PbgCheckpoint): string {
  return `PyTorch-BigGraph ${ckpt.comparator}${ckpt.bias ? " with bias" : ""}${ckpt.dynamic ? ", dynamic relations" : ""}`;
}

/**
 * `kgrank evaluate --pbg-sampled`: PBG's own sampled protocol (PbgRanker.rankSampled) over the whole split, one
 * process, unfiltered, the config's batch_size, num_batch_negs and num_uniform_negs, --seed for the uniform draw.
 */
async function evaluatePbgSampled(
  opts: EvaluateOptions,
  out: Out,
  t0: number,
  ckpt: PbgCheckpoint,
  ds: Dataset,
): Promise<void> {
  for (const [given, flag, why] of [
    [opts.shard, "--shard", "a chunk's negatives are its neighbours in the whole split"],
    [opts.entityShard, "--entity-shard", "the negatives are sampled, not the entity table"],
    [opts.workers !== undefined && opts.workers > 1 ? opts.workers : undefined, "--workers", "one process runs it"],
    [opts.sampleTasks, "--sample-tasks", "PBG's protocol samples negatives, not tasks"],
    [opts.estimateFull, "--estimate-full", "it estimates from given negatives' ranks; run it without --pbg-sampled"],
  ] as const) {
    if (given !== undefined) throw new KgrankInputError(flag, `does not apply to --pbg-sampled (${why}): drop one`);
  }
  const run = await openRun(opts, out, t0, ds);
  const { evaluated, lo, hi } = run;
  const sides = entitySides(opts);
  const ranker = await PbgRanker.open(ckpt, opts.memory ?? PBG_DEFAULT_BUDGET);
  const evaluator = new RankEvaluator({
    numEntities: pbgSampledEntities(ds.numEntities, ckpt.sampling),
    numRelations: ds.numRelations,
    sides: sides.length === 2 ? "both" : sides[0],
    ks: opts.ks,
    metrics: evaluatorMetrics(opts.metrics),
  });
  const s = ckpt.sampling;
  const label = `scoring ${ds.name} ${opts.split} by PyTorch-BigGraph's sampled protocol`;
  const progress = new Progress(label, (hi - lo) * sides.length, { quiet: opts.quiet, report: run.out.progress });
  try {
    for (const side of sides)
      await ranker.rankSampled(
        evaluator,
        side,
        evaluated.subarray(3 * lo, 3 * hi),
        { ...s, seed: opts.seed, fileOrder: opts.triples ? undefined : pbgFileOrder(ds, opts.split)?.subarray(lo, hi) },
        (n) => progress.tick(n),
      );
  } finally {
    progress.stop();
    ranker.close();
  }
  const scorerName =
    `${scorerOf(ckpt)} (${ckpt.dimension} columns, float64), PBG's sampled protocol: batches of ${s.batchSize}, ` +
    `${s.batchNegatives} batch and ${s.uniformNegatives} uniform negatives, seed ${opts.seed}; PBG reports the pessimistic rank`;
  const dirFiles = opts.saveState ? await directoryFingerprints(opts.modelDir!) : null;
  await finish(
    run,
    evaluator,
    scorerName,
    "unfiltered (PyTorch-BigGraph's sampled protocol)",
    [],
    [dirFiles, ckpt.version, s, opts.seed],
  );
}
