/**
 * `kgrank evaluate --quadruples DIR`: a temporal KG (train.txt, valid.txt, test.txt of `h r t τ` lines, docs/
 * formats.md) evaluated in the three filter settings side by side (raw, static, time-aware; TemporalEvaluator), from
 * score files or the frequency baseline of the static training triples. Shards write one state per setting beside
 * --save-state (FILE.raw.EXT, FILE.static.EXT, FILE.time-aware.EXT), which `kgrank merge` merges per setting.
 */
import * as path from "node:path";

import { KgrankInputError } from "../checks/errors";
import { TemporalEvaluator, TEMPORAL_SETTINGS, type TemporalSetting } from "../evaluation/temporal";
import type { RankResults } from "../evaluation/results";
import { writeFileAtomic } from "../io/atomic";
import { readArray } from "../io/array-file";
import { readQuadruples } from "../io/quadruples";
import { turn } from "../contract/event-loop";
import { FrequencyBaseline } from "../scoring/baseline";
import { expectShape, floatScores } from "./arrays";
import { SIDES } from "./datasets";
import type { Format } from "./format";
import type { ShardSpec } from "./shard";
import { json } from "./format";
import { emit, type Out } from "./out";
import { Progress } from "./progress";
import { evaluatorMetrics, renderEvaluation, type ReportInfo, type RunMeta } from "./render";
import { fileFingerprint, resolveShard, runFingerprint, shardRows } from "./shard";
import type { RunSide } from "./datasets";

/** The evaluate flags a temporal run reads (the rest of EvaluateOptions is refused, NOT_TEMPORAL). */
export interface TemporalRunOptions {
  quadruples?: string;
  split: "train" | "valid" | "test";
  scoresHead?: string;
  scoresTail?: string;
  sides?: RunSide[];
  metrics?: string[];
  ks?: number[];
  format: Format;
  output?: string;
  quiet?: boolean;
  shard?: ShardSpec;
  saveState?: string;
  bootstrap?: number;
  seed: number;
}

/** The file-name part of each setting's state beside --save-state. */
const STATE_NAMES: Record<TemporalSetting, string> = { raw: "raw", static: "static", timeAware: "time-aware" };

const SPLIT_INDEX = { train: 0, valid: 1, test: 2 } as const;

/** Flags that do not apply to a temporal evaluation, with the reason. */
const NOT_TEMPORAL: [string, string, string][] = [
  ["dataset", "--dataset", "the quadruples are the dataset"],
  ["datasetDir", "--dataset-dir", "the quadruples are the dataset"],
  ["triples", "--triples", "the evaluated rows are the split's quadruples"],
  ["scoresRelation", "--scores-relation", "relation prediction is not evaluated over time"],
  ["negativesHead", "--negatives-head", "sampled negatives are not evaluated over time"],
  ["negativesTail", "--negatives-tail", "sampled negatives are not evaluated over time"],
  ["modelDir", "--model-dir", "write the model's scores (--scores-head / --scores-tail)"],
  ["interaction", "--interaction", "write the model's scores (--scores-head / --scores-tail)"],
  ["entityEmbeddings", "--entity-embeddings", "write the model's scores (--scores-head / --scores-tail)"],
  ["relationEmbeddings", "--relation-embeddings", "write the model's scores (--scores-head / --scores-tail)"],
  ["entityIds", "--entity-ids", "the quadruples' labels are the ids"],
  ["relationIds", "--relation-ids", "the quadruples' labels are the ids"],
  ["complexLayout", "--complex-layout", "write the model's scores (--scores-head / --scores-tail)"],
  ["precision", "--precision", "write the model's scores (--scores-head / --scores-tail)"],
  ["negativesIds", "--negatives-ids", "sampled negatives are not evaluated over time"],
  ["estimateFull", "--estimate-full", "sampled negatives are not evaluated over time"],
  ["negativesFrom", "--negatives-from", "sampled negatives are not evaluated over time"],
  ["replacement", "--replacement", "sampled negatives are not evaluated over time"],
  ["memory", "--memory", "scores come whole from files or the baseline"],
  ["sampleTasks", "--sample-tasks", "a sample's estimates are of one setting"],
  ["stratify", "--stratify", "a sample's estimates are of one setting"],
  ["byRelation", "--by-relation", "the time-aware setting's relations are relation x timestamp"],
  ["constrainCandidates", "--constrain-candidates", "typed candidates are not evaluated over time"],
  ["entityShard", "--entity-shard", "an entity shard ranks a model"],
  ["workers", "--workers", "shard with --shard and merge each setting's states"],
  ["ranksOut", "--ranks-out", "each setting has its own ranks; use the states"],
  ["positiveScores", "--positive-scores", "the quadruples are the dataset"],
  ["negativeScores", "--negative-scores", "the quadruples are the dataset"],
];

/**
 * What --quadruples does not go with, checked before anything runs (the --workers dispatch and the dataset-free
 * branch included): every setting is always reported, filtered by train + valid + test, from score files or the
 * baseline.
 */
export function checkTemporalFlags(opts: TemporalRunOptions & Record<string, unknown>): void {
  for (const [key, flag, why] of NOT_TEMPORAL) {
    const v = opts[key];
    if (v !== undefined && v !== false && !(key === "workers" && v === 1))
      throw new KgrankInputError(flag, `does not go with --quadruples: ${why}`);
  }
  const given = (opts.given as string[] | undefined) ?? [];
  if (given.includes("filter"))
    throw new KgrankInputError(
      "--filter",
      "does not go with --quadruples: its three settings are raw, static and time-aware, filtered by train+valid+test",
    );
  if (opts.sides?.includes("relation"))
    throw new KgrankInputError(
      "--sides",
      "relation does not go with --quadruples: relation prediction is not evaluated over time",
    );
  const files = SIDES.filter((s) => (s === "head" ? opts.scoresHead : opts.scoresTail));
  if (opts.sides && files.length > 0 && SIDES.some((s) => opts.sides!.includes(s) !== files.includes(s))) {
    throw new KgrankInputError(
      "--sides",
      `${opts.sides.join(",")} does not match the score files given (${files.map((s) => `--scores-${s}`).join(", ")}): list exactly their sides, or drop --sides`,
    );
  }
}

export async function evaluateTemporal(
  opts: TemporalRunOptions & Record<string, unknown>,
  out: Out,
  t0: number,
): Promise<void> {
  checkTemporalFlags(opts);
  const dir = opts.quadruples!;
  const file = (s: string) => path.join(dir, `${s}.txt`);
  const d = readQuadruples({ train: file("train"), valid: file("valid"), test: file("test") });
  const evaluated = d[opts.split];
  const rows = evaluated.length / 4;
  if (rows === 0) {
    throw new KgrankInputError(
      "--quadruples",
      `${file(opts.split)} has no quadruple to evaluate${d.dropped[SPLIT_INDEX[opts.split]] ? " (all had labels unseen in train)" : ""}`,
    );
  }
  const shard = opts.shard ? resolveShard(opts.shard, process.env) : null;
  const [lo, hi] = shard ? shardRows(shard.index, shard.count, rows) : [0, rows];
  const n = d.entityLabels.length;
  const numRelations = d.relationLabels.length;
  const sides = opts.sides ? SIDES.filter((s) => opts.sides!.includes(s)) : [...SIDES];
  const given = { head: opts.scoresHead, tail: opts.scoresTail };
  const fromFiles = Boolean(given.head || given.tail);
  const ranked = fromFiles ? SIDES.filter((s) => given[s]) : sides;
  const ev = new TemporalEvaluator({
    numEntities: n,
    numRelations,
    numTimestamps: d.timestamps.length,
    filterQuadruples: [d.train, d.valid, d.test],
    sides: ranked.length === 2 ? "both" : ranked[0]!,
    ...(opts.ks ? { ks: opts.ks } : {}),
    ...(evaluatorMetrics(opts.metrics) ? { metrics: evaluatorMetrics(opts.metrics) } : {}),
  });
  const staticTrain = new Int32Array((d.train.length / 4) * 3);
  for (let i = 0; i < d.train.length / 4; i++) staticTrain.set(d.train.subarray(4 * i, 4 * i + 3), 3 * i);
  const baseline = fromFiles ? null : new FrequencyBaseline(staticTrain, n, numRelations);
  const batch = Math.max(1, Math.min(4096, Math.floor((16 << 20) / n)));
  const progress = new Progress(
    `evaluating ${path.basename(dir)} ${opts.split} in three filter settings${shard ? ` shard ${shard.index}/${shard.count}` : ""}`,
    (hi - lo) * ranked.length,
    { quiet: opts.quiet, report: out.progress },
  );
  try {
    for (const side of ranked) {
      const fromFile = given[side] ? readArray(given[side]!, `--scores-${side}`) : null;
      if (fromFile) {
        expectShape(
          fromFile,
          [rows, n],
          `--scores-${side}`,
          `rows in the order of the ${opts.split} split's ${rows} quadruples, columns in entity id order (${n} entities)`,
        );
      }
      const scores = fromFile ? floatScores(fromFile, `--scores-${side}`) : null;
      for (let start = lo; start < hi; start += batch) {
        const end = Math.min(hi, start + batch);
        const quadruples = evaluated.subarray(4 * start, 4 * end);
        let rowScores: Float32Array | Float64Array;
        if (scores) {
          rowScores = scores.subarray(start * n, end * n);
        } else {
          const triples = new Int32Array((end - start) * 3);
          for (let i = 0; i < end - start; i++) triples.set(quadruples.subarray(4 * i, 4 * i + 3), 3 * i);
          rowScores = baseline!.scoreBatch(triples, side);
        }
        await ev.add({ quadruples, side, scores: rowScores });
        progress.tick(end - start);
        await turn();
      }
    }
  } finally {
    progress.stop();
  }
  const scorer = fromFiles ? "scores from files" : "frequency baseline (static, over the training triples)";
  const report: ReportInfo = {
    title:
      `${path.basename(dir)} ${opts.split} (${rows} quadruples x ${n} entities, ${d.timestamps.length} timestamps), ` +
      `raw / static / time-aware filter by train+valid+test, ${scorer}`,
    dataset: path.basename(dir),
    split: opts.split,
    numEntities: n,
    triples: rows,
    dropped: d.dropped[SPLIT_INDEX[opts.split]],
    setting: "temporal: raw, static, time-aware",
    scorer,
    metrics: opts.metrics ?? null,
    ks: opts.ks ?? null,
    byRelation: false,
    bootstrap: opts.bootstrap ?? null,
    seed: opts.seed,
    relationLabels: null,
  };
  if (opts.saveState) {
    const meta: RunMeta = {
      kgrank: "evaluate",
      // The score files by content, as the triple path's fingerprints are.
      fingerprint: runFingerprint([
        report,
        evaluated,
        d.train,
        d.valid,
        d.test,
        d.entityLabels,
        d.timestamps,
        given.head ? await fileFingerprint(given.head, "--scores-head") : null,
        given.tail ? await fileFingerprint(given.tail, "--scores-tail") : null,
      ]),
      shard: shard?.index ?? 0,
      shards: shard?.count ?? 1,
      rows: [lo, hi],
      report,
    };
    const ext = path.extname(opts.saveState);
    const stem = opts.saveState.slice(0, opts.saveState.length - ext.length);
    for (const s of TEMPORAL_SETTINGS) {
      // Each setting's meta names it, so kgrank merge tells settings apart before it reads the states.
      const own: RunMeta = { ...meta, temporal: { setting: s, numTimestamps: d.timestamps.length } };
      const bytes = ev.evaluators[s].serialize({ meta: own as unknown as Record<string, unknown> });
      writeFileAtomic(`${stem}.${STATE_NAMES[s]}${ext}`, bytes, "--save-state");
    }
    if (shard) {
      if (!opts.quiet)
        out.stderr(
          `shard ${shard.index}/${shard.count}: rows ${lo}..${hi - 1} of ${rows} -> ${stem}.{raw,static,time-aware}${ext}\n`,
        );
      return;
    }
  }
  const results = ev.finalize(
    opts.bootstrap ? { bootstrap: { samples: opts.bootstrap, seed: opts.seed, confidenceLevel: 0.95 } } : {},
  );
  emit(out, renderTemporal(results, report, opts, t0), opts.output, opts.quiet);
}

/** The three settings' results: one table each (text), or one document with a key per setting (JSON, CSV). */
function renderTemporal(
  results: Record<TemporalSetting, RankResults>,
  report: ReportInfo,
  opts: TemporalRunOptions,
  t0: number,
): string {
  if (opts.format === "json") {
    return json(
      Object.fromEntries(
        TEMPORAL_SETTINGS.map((s) => [s, JSON.parse(renderEvaluation(results[s], report, "json", t0))]),
      ),
    );
  }
  if (opts.format === "csv") {
    const parts = TEMPORAL_SETTINGS.map((s) => renderEvaluation(results[s], report, "csv", t0).trimEnd().split("\n"));
    return [
      `setting,${parts[0]![0]}`,
      ...TEMPORAL_SETTINGS.flatMap((s, k) => parts[k]!.slice(1).map((l) => `${s},${l}`)),
    ].join("\n");
  }
  // Each setting's table under its heading (renderEvaluation names the setting); the version line and the title
  // once, above the first; the timing once, at the end.
  const parts = TEMPORAL_SETTINGS.map((s) => renderEvaluation(results[s], report, opts.format, t0).split("\n"));
  const bodies = parts.map((lines) => lines.slice(4, -2).join("\n").trimEnd());
  return [...parts[0]!.slice(0, 4), bodies.join("\n\n"), "", `done in ${(performance.now() - t0).toFixed(0)} ms`].join(
    "\n",
  );
}
