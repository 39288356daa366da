/**
 * The end every score source shares: --save-state (a shard stops there), finalize, --ranks-out and the results
 * printed through run/render.ts, with the fingerprints of the run's inputs.
 */
import { readdirSync, statSync } from "node:fs";
import * as path from "node:path";

import type { RankEvaluator } from "../../evaluation/evaluator";
import { estimateFull, type TaskSample } from "../../evaluation/task-sample";
import { writeFileAtomic } from "../../io/atomic";
import type { Split } from "../../io/datasets";
import { emit } from "../out";
import { randomRankingWarning } from "../random-warning";
import { writeRanksOut } from "../ranks-out";
import { type ReportInfo, renderEvaluation, type RunMeta } from "../render";
import { fileFingerprint, runFingerprint } from "../shard";
import type { RunContext } from "./context";
import { type SampledEstimatePlan, sampledEstimates } from "./estimate-full";
import type { EvaluateOptions } from "./options";
import { constrainedStatePath } from "./typed-candidates";

/**
 * Fingerprints of a run's input files (null where not given) for its saved state; none without --save-state, as
 * each reads the whole file.
 */
export async function inputFingerprints(
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
export async function directoryFingerprints(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    const file = path.join(dir, name);
    if (statSync(file).isFile()) out[name] = await fileFingerprint(file, "--model-dir");
  }
  return out;
}

/** Saves the state (--save-state; a shard stops there), finalizes, writes --ranks-out and prints the results. */
export async function finish(
  run: RunContext & {
    /** --estimate-full: how the sampled ranks become full-ranking estimates. */
    estimating?: SampledEstimatePlan | null;
  },
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
type RunSlice = Pick<RunContext, "opts" | "out" | "t0" | "lo" | "hi" | "shard" | "screen"> & {
  sample?: TaskSample | null;
  estimating?: SampledEstimatePlan | null;
};

/** --save-state (with the run's fingerprint of `decisive`), finalize, --ranks-out and the printed results. */
export async function finishRun(
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
    renderEvaluation(results, report, opts.format, t0, estimates, fromNegatives, typed, run.screen ?? null),
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
