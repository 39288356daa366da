/**
 * A shard job's data as a queue worker takes it from Redis. It is untrusted: anyone who can write to the Redis can
 * add a job. parseShardJobData checks every field and the evaluate arguments, and confines the files they name to
 * the worker's --allow-read folders; what it returns is all a worker uses of a job. It reads no Redis (a pure check
 * of a value, apart from resolving the named paths on the file system).
 */
import { mkdirSync, realpathSync, statSync } from "node:fs";
import * as path from "node:path";

import { KgrankInputError } from "../checks/errors";
import { entityShardOf } from "../checks/validate";
import { implicitDatasetDir } from "../io/datasets";
import { quoted } from "../text/suggest";

import { parseEvaluateArgs, pathFlags } from "./flags/evaluate";
import { MAX_SHARDS } from "./shard";

/** What a shard job carries: the evaluate flags of the run, its id and its shard. */
export interface ShardJobData {
  /** The run's id: 1 to 64 letters, digits, "-" or "_" (submitRun makes base-36 time, "-", 12 hex digits). */
  run: string;
  /** The run's evaluate flags (runArgs), without the flags a worker sets itself (--shard, --save-state, ...). */
  args: string[];
  shard: number;
  shards: number;
  /** The job's entity shard (`kgrank submit --entity-shards M`): index and count; absent for every entity. */
  entityShard?: { index: number; count: number };
}

const RUN_ID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_ARGS = 1000;
const MAX_ARG_LENGTH = 4096;

/** Evaluate flags a job may not set: the worker chooses its shard and its one state file, and writes nothing else. */
const WORKER_FLAGS: Record<string, string> = {
  shard: "--shard",
  entityShard: "--entity-shard",
  saveState: "--save-state",
  output: "--output",
  ranksOut: "--ranks-out",
  workers: "--workers",
};

/** A JSON value for an error message, without calling anything on it (a job's data may be any JSON). */
function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === "number" || typeof value === "boolean" || value === null) return String(value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  return typeof value === "object" ? "an object" : typeof value;
}

function fail(field: string, message: string): never {
  throw new KgrankInputError(field ? `job data "${field}"` : "job data", message);
}

/**
 * The real paths of a worker's --allow-read folders (symbolic links resolved, so a path is compared with where it
 * really is). Each must be an existing folder.
 */
export function readRoots(dirs: readonly string[]): string[] {
  return dirs.map((dir) => {
    try {
      if (statSync(dir).isDirectory()) return realpathSync(dir);
    } catch {
      // refused below
    }
    throw new KgrankInputError("--allow-read", `${dir} is not a folder; give folders the worker may read from`);
  });
}

/** The real path of the worker's --state-dir (made if missing): states are written there and nowhere else. */
export function stateRoot(dir: string): string {
  try {
    mkdirSync(dir, { recursive: true });
    return realpathSync(dir);
  } catch (e) {
    throw new KgrankInputError(
      "--state-dir",
      `cannot use ${dir} for the shard states (${(e as Error).message}); give a folder this worker can write`,
    );
  }
}

/**
 * Where `p` really is: realpath of the path, or, for a path that does not exist, realpath of its deepest existing
 * folder with the rest appended. Null for a path with a ".." segment (lexical and real ".." differ after a link).
 */
export function realLocation(p: string): string | null {
  if (p.split(/[\\/]/).includes("..")) return null;
  let head = path.resolve(p);
  const tail: string[] = [];
  for (;;) {
    try {
      return path.join(realpathSync(head), ...tail.reverse());
    } catch {
      const up = path.dirname(head);
      if (up === head) return null;
      tail.push(path.basename(head));
      head = up;
    }
  }
}

/** True when `p` lies in (or is) one of `roots` (real paths). */
export function insideRoots(p: string, roots: readonly string[]): boolean {
  const real = realLocation(p);
  if (real === null) return false;
  return roots.some((root) => {
    const rel = path.relative(root, real);
    return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
  });
}

/** Option keys (camelCase, as commander names them) of evaluate's file and folder flags, with the flag. */
let pathKeys: [string, string][] | null = null;
const PATH_KEYS = () =>
  (pathKeys ??= pathFlags().map((f) => [f.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()), f]));

/**
 * A job's data checked field by field (see ShardJobData), or a KgrankInputError whose argument names the field
 * (`job data "shard"`) and whose message says what is accepted. `allowRead` (real paths, readRoots): when given,
 * every file or folder the arguments name must lie in one of them, symbolic links resolved; one outside is refused
 * with the same message whether or not it exists, so the error tells a job's author nothing about other files.
 */
export function parseShardJobData(data: unknown, allowRead?: readonly string[]): ShardJobData {
  if (typeof data !== "object" || data === null || Array.isArray(data))
    fail("", `must be an object with run, args, shard and shards, got ${shown(data)}`);
  const d = data as Record<string, unknown>;
  const run = d.run;
  if (typeof run !== "string" || !RUN_ID.test(run))
    fail("run", `must be 1 to 64 letters, digits, "-" or "_" (submitRun's run id), got ${shown(run)}`);
  const shards = d.shards;
  if (typeof shards !== "number" || !Number.isInteger(shards) || shards < 1 || shards > MAX_SHARDS)
    fail("shards", `must be an integer in [1, ${MAX_SHARDS}], got ${shown(shards)}`);
  const shard = d.shard;
  if (typeof shard !== "number" || !Number.isInteger(shard) || shard < 0 || shard >= (shards as number))
    fail("shard", `must be an integer in [0, shards) = [0, ${shards as number}), got ${shown(shard)}`);
  let entityShard: { index: number; count: number } | undefined;
  if (d.entityShard !== undefined) {
    const e = entityShardOf(d.entityShard, MAX_SHARDS);
    if (!e)
      fail(
        "entityShard",
        `must be { index, count } with 0 <= index < count <= ${MAX_SHARDS}, got ${shown(d.entityShard)}`,
      );
    entityShard = e;
  }
  const args = d.args;
  if (!Array.isArray(args) || args.length > MAX_ARGS)
    fail("args", `must be an array of at most ${MAX_ARGS} evaluate arguments (strings), got ${shown(args)}`);
  (args as unknown[]).forEach((a, i) => {
    if (typeof a !== "string" || a.length > MAX_ARG_LENGTH || a.includes("\0"))
      fail(
        "args",
        `element ${i} must be a string of at most ${MAX_ARG_LENGTH} characters without NUL, got ${shown(a)}`,
      );
  });
  const list = args as string[];
  let options: Record<string, unknown>;
  try {
    options = parseEvaluateArgs(list) as unknown as Record<string, unknown>;
  } catch (e) {
    fail("args", `not evaluate arguments: ${e instanceof Error ? e.message : String(e)}`);
  }
  const given = options.given as string[];
  for (const [key, flag] of Object.entries(WORKER_FLAGS)) {
    if (given.includes(key)) fail("args", `must not set ${flag}: the worker sets its shard and state file itself`);
  }
  // A run whose states are more than one file (a protocol beside the run's, one per temporal setting): a worker
  // writes and hands back exactly one.
  for (const [key, flag] of [
    ["constrainCandidates", "--constrain-candidates"],
    ["quadruples", "--quadruples"],
  ] as const) {
    if (given.includes(key))
      fail("args", `must not set ${flag}: its run keeps more than one state, and a worker hands back one`);
  }
  if (allowRead) {
    for (const [key, flag] of PATH_KEYS()) {
      const value = options[key];
      // --constrain-candidates train names the dataset's own split, not a file.
      if (key === "constrainCandidates" && value === "train") continue;
      if (typeof value === "string" && !insideRoots(value, allowRead))
        fail("args", `${flag} ${quoted(value)} is outside the folders this worker may read (its --allow-read)`);
    }
    // A non-bundled --dataset without --dataset-dir reads the worker's own default folder: confined the same way.
    const implicit =
      options.datasetDir === undefined ? implicitDatasetDir(options.dataset as string | undefined) : undefined;
    if (implicit !== undefined && !insideRoots(implicit, allowRead))
      fail(
        "args",
        `--dataset ${quoted(String(options.dataset))} without --dataset-dir reads this worker's ${implicit}, outside the ` +
          `folders it may read (its --allow-read); give --dataset-dir (kgrank submit sends its own)`,
      );
  }
  return {
    run: run as string,
    args: list,
    shard: shard as number,
    shards: shards as number,
    ...(entityShard ? { entityShard } : {}),
  };
}
