/**
 * Sharded runs: `kgrank evaluate --shard I/N --save-state FILE` evaluates a deterministic part of the split and
 * saves the evaluator's state; `kgrank merge FILE...` checks that the shards are one run's, all there once, and
 * prints exactly what the unsharded run prints. Shard I of N is the contiguous rows [floor(I·rows/N),
 * floor((I+1)·rows/N)) of the evaluated triples: it depends on nothing but I, N and the split, and merging the
 * shards in index order restores the single run's task order, hence its numbers bit for bit.
 */
import { createHash } from "node:crypto";
import { closeSync, createReadStream, fstatSync } from "node:fs";

import { KgrankInputError } from "../checks/errors";
import { fileError, openRegularFile } from "../io/files";
import { quoted } from "../text/suggest";

/** The most shards of one run, as `kgrank submit --shards` allows (with --entity-shards: shards x entity shards). */
export const MAX_SHARDS = 100_000;

export interface ShardSpec {
  index: number | "auto";
  count: number;
}

/** commander parser of `--shard I/N` or `auto/N` (I taken from a job array's environment). */
export function shardArg(v: string): ShardSpec {
  const m = /^(\d{1,9}|auto)\/(\d{1,9})$/.exec(v.trim());
  if (!m) throw new KgrankInputError("--shard", `must be I/N (0-based, e.g. 0/8) or auto/N, got ${quoted(v)}`);
  const count = Number(m[2]);
  if (count < 1) throw new KgrankInputError("--shard", `N must be at least 1, got ${count}`);
  if (m[1] === "auto") return { index: "auto", count };
  const index = Number(m[1]);
  if (index >= count) throw new KgrankInputError("--shard", `I must be in [0, ${count - 1}] (0-based), got ${index}`);
  return { index, count };
}

/** commander parser of `--entity-shard I/N`: entities [floor(I E / N), floor((I + 1) E / N)). */
export function entityShardArg(v: string): { index: number; count: number } {
  const m = /^(\d{1,9})\/(\d{1,9})$/.exec(v.trim());
  if (!m) throw new KgrankInputError("--entity-shard", `must be I/N (0-based, e.g. 0/4), got ${quoted(v)}`);
  const [index, count] = [Number(m[1]), Number(m[2])];
  if (count < 1) throw new KgrankInputError("--entity-shard", `N must be at least 1, got ${count}`);
  if (index >= count)
    throw new KgrankInputError("--entity-shard", `I must be in [0, ${count - 1}] (0-based), got ${index}`);
  return { index, count };
}

/**
 * The shard index: given, or from SLURM job arrays (SLURM_ARRAY_TASK_ID minus SLURM_ARRAY_TASK_MIN, so `--array=1-8`
 * works too) or Kubernetes Indexed Jobs (JOB_COMPLETION_INDEX).
 */
export function resolveShard(spec: ShardSpec, env: NodeJS.ProcessEnv): { index: number; count: number } {
  if (spec.index !== "auto") return { index: spec.index, count: spec.count };
  const slurm = env.SLURM_ARRAY_TASK_ID;
  const k8s = env.JOB_COMPLETION_INDEX;
  const int = (name: string, v: string) => {
    if (!/^\d{1,9}$/.test(v.trim()))
      throw new KgrankInputError("--shard", `auto: ${name} = "${v.slice(0, 40)}" is not a non-negative integer`);
    return Number(v);
  };
  let index: number;
  let from: string;
  if (slurm !== undefined && slurm !== "") {
    index =
      int("SLURM_ARRAY_TASK_ID", slurm) -
      (env.SLURM_ARRAY_TASK_MIN ? int("SLURM_ARRAY_TASK_MIN", env.SLURM_ARRAY_TASK_MIN) : 0);
    from = "SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN";
  } else if (k8s !== undefined && k8s !== "") {
    index = int("JOB_COMPLETION_INDEX", k8s);
    from = "JOB_COMPLETION_INDEX";
  } else {
    throw new KgrankInputError(
      "--shard",
      "auto needs SLURM_ARRAY_TASK_ID (a SLURM job array) or JOB_COMPLETION_INDEX (a Kubernetes Indexed Job); give I/N otherwise",
    );
  }
  if (index < 0 || index >= spec.count) {
    throw new KgrankInputError(
      "--shard",
      `auto: ${from} = ${index} is outside [0, ${spec.count - 1}] for N = ${spec.count}`,
    );
  }
  return { index, count: spec.count };
}

/** Rows [lo, hi) of shard `index` of `count` over `rows` rows. */
export function shardRows(index: number, count: number, rows: number): [number, number] {
  return [Math.floor((index * rows) / count), Math.floor(((index + 1) * rows) / count)];
}

/**
 * Identity of a file's content for the run fingerprint: the SHA-256 of its size and of every byte, streamed in 1 MiB
 * pieces (read ahead by libuv while the previous piece is hashed; the event loop turns between pieces), so a score
 * file that differs anywhere, the middle of a retrained model's matrix included, gives another fingerprint.
 */
export async function fileFingerprint(file: string, argument: string): Promise<string> {
  const fd = openRegularFile(file, argument);
  let size: number;
  try {
    size = fstatSync(fd).size;
  } catch (e) {
    closeSync(fd);
    throw fileError(argument, file, e);
  }
  const hash = createHash("sha256").update(`${size}:`);
  if (size === 0) {
    closeSync(fd);
    return hash.digest("hex");
  }
  try {
    for await (const piece of createReadStream("", { fd, start: 0, end: size - 1, highWaterMark: 1 << 20 }))
      hash.update(piece as Buffer);
  } catch (e) {
    throw fileError(argument, file, e);
  }
  return hash.digest("hex");
}

/** SHA-256 over a run's defining parts (JSON values and typed arrays), in order. */
export function runFingerprint(parts: unknown[]): string {
  const hash = createHash("sha256");
  for (const p of parts) {
    if (ArrayBuffer.isView(p)) hash.update(new Uint8Array(p.buffer, p.byteOffset, p.byteLength));
    else hash.update(JSON.stringify(p) ?? "undefined");
    hash.update("\u0000");
  }
  return hash.digest("hex");
}
