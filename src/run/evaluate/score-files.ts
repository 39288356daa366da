/**
 * `kgrank evaluate` from score files (full rows, or sampled negatives' scores) or, without any, the frequency
 * baseline.
 */
import * as path from "node:path";

import { KgrankInputError } from "../../checks/errors";
import { turn } from "../../contract/event-loop";
import { readArray } from "../../io/array-file";
import { FrequencyBaseline } from "../../scoring/baseline";
import { expectShape, floatScores } from "../arrays";
import { SIDES, type TaskSide } from "../datasets";
import { Progress } from "../progress";
import { type RunContext, runEvaluator, runFilter } from "./context";
import { finish, inputFingerprints } from "./finish";
import { entitySides, relationSide } from "./options";
import { typedCandidatesEvaluator } from "./typed-candidates";

// Between batches the loops below `await turn()` (src/contract/event-loop.ts), so signal handlers and the progress bar
// run (the fallback's promises resolve without giving them a turn).

const ROWS_PER_BATCH = (n: number) => Math.max(1, Math.min(4096, Math.floor((16 << 20) / n)));

/**
 * `kgrank evaluate` from score files (full rows, or sampled negatives' scores) or, without any, the frequency
 * baseline: batches of rows for the progress bar; errors name rows of the user's files.
 */
export async function evaluateScores(run: RunContext): Promise<void> {
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
  const evaluator = runEvaluator(run, filter.triples, sides, relation);
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

const FILE_FLAGS = [
  "--triples",
  "--scores-head",
  "--scores-tail",
  "--negatives-head",
  "--negatives-tail",
  "--scores-relation",
];
