/**
 * `kgrank evaluate --positive-scores --negative-scores`: sampled ranking without a dataset (OGB's y_pred_pos and
 * y_pred_neg).
 */
import * as path from "node:path";

import { KgrankInputError } from "../../checks/errors";
import { RankEvaluator } from "../../evaluation/evaluator";
import { readArray } from "../../io/array-file";
import { expectShape, floatScores } from "../arrays";
import type { Out } from "../out";
import { evaluatorMetrics, type ReportInfo } from "../render";
import { resolveShard, shardRows } from "../shard";
import { finishRun, inputFingerprints } from "./finish";
import type { EvaluateOptions } from "./options";

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
export async function evaluateScoresOnly(opts: EvaluateOptions, out: Out, t0: number): Promise<void> {
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
