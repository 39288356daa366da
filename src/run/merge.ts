/**
 * `kgrank merge FILE...`: the results of a sharded run (`kgrank evaluate --shard I/N --save-state FILE`), printed
 * exactly as the unsharded `kgrank evaluate` prints them. Refuses, one line each: a file that is not a state (or is
 * damaged: the SHA-256 digest and every field are checked), a state not written by `--save-state`, shards of
 * different runs (their fingerprints differ), a shard given twice, a missing shard.
 */
import * as path from "node:path";

import { KgrankInputError } from "../checks/errors";
import { RankEvaluator } from "../evaluation/evaluator";
import type { RankResults } from "../evaluation/results";
import { decodeState, encodeState, stateMeta } from "../evaluation/state";
import { readRegularFile } from "../io/files";
import { entityShardOf } from "../checks/validate";
import { MAX_SHARDS } from "./shard";
import { metricSelection } from "../metrics/index";

import { type Format } from "./format";
import { evaluatorMetrics, renderEvaluation, type ReportInfo, type RunMeta } from "./render";
import { writeRanksOut } from "./ranks-out";
import { emit, type Out } from "./out";

export interface MergeOptions {
  /** The metrics reported, as evaluate's --metrics (default: those the shards were evaluated with). */
  metrics?: string[];
  format: Format;
  output?: string;
  quiet?: boolean;
  ranksOut?: string;
}

function runMeta(file: string, bytes: Uint8Array): RunMeta {
  let meta: Record<string, unknown> | null;
  try {
    meta = stateMeta(bytes);
  } catch (e) {
    if (e instanceof KgrankInputError) throw new KgrankInputError(file, e.message.replace(/^state: /, ""));
    throw e;
  }
  const m = meta as Partial<RunMeta> | null;
  const shardOk =
    m &&
    Number.isInteger(m.shards) &&
    m.shards! >= 1 &&
    m.shards! <= MAX_SHARDS &&
    Number.isInteger(m.shard) &&
    m.shard! >= 0 &&
    m.shard! < m.shards! &&
    (m.entityShard === undefined || entityShardOf(m.entityShard, MAX_SHARDS) !== null);
  if (
    !m ||
    m.kgrank !== "evaluate" ||
    typeof m.fingerprint !== "string" ||
    !shardOk ||
    typeof m.report !== "object" ||
    m.report === null
  ) {
    throw new KgrankInputError(
      file,
      "is an evaluator state, but not one written by kgrank evaluate --save-state (no run fingerprint or shard)",
    );
  }
  return m as RunMeta;
}

/**
 * The merged evaluator and report info of one run's shard states (every check of `kgrank merge`). `metrics` (merge's
 * --metrics) replaces the metrics the shards were evaluated with: a state holds every task's ranks and candidate
 * count, so the merged run reports them as `kgrank evaluate --metrics` of the whole run does.
 */
export function mergeShards(
  loaded: { file: string; bytes: Uint8Array }[],
  metrics?: string[],
): {
  evaluator: RankEvaluator;
  report: RunMeta["report"];
  meta: RunMeta;
} {
  if (loaded.length === 0)
    throw new KgrankInputError(
      "FILE",
      "give the state files of every shard (kgrank evaluate --shard I/N --save-state FILE)",
    );
  const states = loaded.map((s) => ({ ...s, meta: runMeta(s.file, s.bytes) }));
  const first = states[0]!;
  // Entity shards (--entity-shard I/M): each task shard's states are its M entity shards, merged into its ranks.
  const entityShards = first.meta.entityShard?.count ?? 1;
  const shardName = (s: (typeof states)[number]) =>
    `shard ${s.meta.shard}/${s.meta.shards}${s.meta.entityShard ? ` entity shard ${s.meta.entityShard.index}/${entityShards}` : ""}`;
  const byShard = new Map<number, (typeof states)[number]>();
  // The protocol the run's meta records: typed candidates (by their fingerprint) and the temporal setting.
  const protocol = (s: (typeof states)[number]) => {
    const { candidates: c, temporal: t } = s.meta;
    return (
      (c ? `typed candidates ${c.source} (fingerprint ${c.fingerprint})` : "every entity") +
      (t ? ` in the ${t.setting} temporal setting` : "")
    );
  };
  const protocolKey = (s: (typeof states)[number]) =>
    `${s.meta.candidates?.fingerprint ?? ""}|${s.meta.temporal?.setting ?? ""}`;
  for (const s of states) {
    if (protocolKey(s) !== protocolKey(first)) {
      throw new KgrankInputError(
        s.file,
        `was ranked against ${protocol(s)}, ${first.file} against ${protocol(first)}: merge the shards of each ` +
          "protocol separately (the .constrained states of --constrain-candidates with each other, each temporal " +
          "setting's states with each other)",
      );
    }
    if (
      s.meta.fingerprint !== first.meta.fingerprint ||
      s.meta.shards !== first.meta.shards ||
      (s.meta.entityShard?.count ?? 1) !== entityShards
    ) {
      throw new KgrankInputError(
        s.file,
        `is a shard of another run than ${first.file} (dataset, split, filter, options, scores, shard or entity shard count differ)`,
      );
    }
    const key = s.meta.shard * entityShards + (s.meta.entityShard?.index ?? 0);
    const twin = byShard.get(key);
    if (twin) throw new KgrankInputError(s.file, `is ${shardName(s)} again (also ${twin.file}); give each shard once`);
    byShard.set(key, s);
  }
  const count = first.meta.shards * entityShards;
  const name = (i: number) =>
    entityShards === 1
      ? `${i}/${first.meta.shards}`
      : `${Math.floor(i / entityShards)}/${first.meta.shards} entity shard ${i % entityShards}/${entityShards}`;
  const missing = Array.from({ length: count }, (_, i) => i).filter((i) => !byShard.has(i));
  if (missing.length > 0) {
    const list =
      missing.slice(0, 10).map(name).join(", ") + (missing.length > 10 ? `, ... (${missing.length} in all)` : "");
    throw new KgrankInputError(
      "FILE",
      `shard${missing.length > 1 ? "s" : ""} ${list} of this run ${missing.length > 1 ? "are" : "is"} missing (${path.basename(first.file)} and ${states.length - 1} other file(s) given)`,
    );
  }
  // Shard order restores the unsharded run's task order, so every sum, the median and the bootstrap are bit-identical.
  const ordered = Array.from({ length: count }, (_, i) => byShard.get(i)!.bytes);
  if (!metrics) return { evaluator: RankEvaluator.merge(ordered), report: first.meta.report, meta: first.meta };
  // --metrics all: every metric (a state's metrics null), printed as the full table.
  const computed = evaluatorMetrics(metrics) ?? null;
  if (computed) metricSelection(computed, first.meta.report.ks ?? undefined, "--metrics");
  const evaluator = RankEvaluator.merge(
    ordered.map((bytes) => {
      const { header, sides } = decodeState(bytes);
      return encodeState({ ...header, metrics: computed }, sides);
    }),
  );
  return { evaluator, report: { ...first.meta.report, metrics }, meta: first.meta };
}

/** A merged run's results, its report info and the text `kgrank evaluate` prints for it (in the asked format). */
export interface MergedRun {
  results: RankResults;
  report: ReportInfo;
  text: string;
}

/** Finalizes a merged run (with its bootstrap), prints it as `kgrank evaluate` would, and returns it. */
export async function printMerged(
  merged: ReturnType<typeof mergeShards>,
  opts: MergeOptions,
  out: Out,
  t0: number,
): Promise<MergedRun> {
  const { evaluator, report } = merged;
  const results = await evaluator.finalizeAsync(
    report.bootstrap ? { bootstrap: { samples: report.bootstrap, seed: report.seed, confidenceLevel: 0.95 } } : {},
  );
  // Entity labels are not in the states (they can be millions): a merged .tsv names entities by id.
  if (opts.ranksOut) writeRanksOut(opts.ranksOut, results, { relations: report.relationLabels });
  const text = renderEvaluation(results, report, opts.format, t0);
  emit(out, text, opts.output, opts.quiet);
  return { results, report, text };
}

export async function mergeCommand(files: string[], opts: MergeOptions, out: Out): Promise<void> {
  const t0 = performance.now();
  const merged = mergeShards(
    files.map((file) => ({ file, bytes: new Uint8Array(readRegularFile(file, file)) })),
    opts.metrics,
  );
  await printMerged(merged, opts, out, t0);
}
