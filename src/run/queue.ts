/**
 * One evaluation over many machines on BullMQ (Redis): `kgrank submit --redis URL --shards N --state-dir DIR
 * <evaluate options>` enqueues the N shard jobs of the run and waits; `kgrank worker --redis URL --state-dir DIR` (as
 * many as you like, anywhere that sees the same files) takes them, checks each job's data (parseShardJobData: job
 * data is untrusted), runs the evaluation `kgrank evaluate <options> --shard I/N --save-state FILE` would run, in
 * process (evaluateRun, the options parsed by evaluate's own flag definitions), with FILE in its own --state-dir, and
 * returns the file's path and SHA-256, never the state itself. The submitter reads only a state of its run in its
 * own --state-dir, checks each file's digest, then merges exactly one state per shard as `kgrank merge` does, prints
 * what `kgrank evaluate` prints, and removes the run's jobs and (unless kept) its states.
 *
 * Fault tolerance is BullMQ's: a worker that dies (SIGKILL) stops renewing its job's lock, the job is found stalled
 * and retried by another worker. Exactness is kgrank's: each attempt writes its own file (a late write of a dead
 * attempt cannot replace the state a job returned), the merge takes the one file each completed job names, checks
 * its digest and the run fingerprint inside it. If Redis loses the jobs (restarted without persistence) the
 * submitter stops with an error naming the shard; it never merges states it did not get from a completed job.
 *
 * BullMQ is an optional peer dependency (the user installs it), loaded only here.
 */
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import * as path from "node:path";

import type { Job, Queue, Worker } from "bullmq";

import { KgrankError, KgrankInputError, KgrankMissingPackageError } from "../checks/errors";
import { removePendingFiles } from "../io/atomic";
import { implicitDatasetDir } from "../io/datasets";
import { modelDirDataset } from "../io/model-dir";

import { evaluateRun } from "./evaluate-run";
import { insideRoots, parseShardJobData, readRoots, realLocation, type ShardJobData, stateRoot } from "./job-data";
import { errorLine, internalErrorLine } from "./flag-parsers";
import { parseEvaluateArgs, pathFlags } from "./flags/evaluate";
import type { Format } from "./format";
import { type MergedRun, mergeShards, printMerged } from "./merge";
import { MAX_SHARDS } from "./shard";
import { Progress } from "./progress";
import { childArgs } from "./workers";
import type { Out } from "./out";

export const DEFAULT_QUEUE = "kgrank";

export type { ShardJobData } from "./job-data";

/** What a completed shard job returns. */
export interface ShardJobResult {
  file: string;
  sha256: string;
  bytes: number;
}

/**
 * BullMQ, an optional peer dependency: installed by those who run the queue (`npm install bullmq`), so that every other
 * install stays without it and its Redis client (and msgpackr's install script). Missing: KgrankMissingPackageError.
 */
function bullmq(): typeof import("bullmq") {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require("bullmq") as typeof import("bullmq");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND") throw e;
    throw new KgrankMissingPackageError("bullmq", "the job queue (kgrank submit, kgrank worker; a Redis server too)");
  }
}

/**
 * BullMQ connection options from a redis:// or rediss:// (TLS; the certificate is checked against the host name) URL:
 * host, port, user, password, database.
 */
export function redisConnection(url: string): {
  host: string;
  port: number;
  password?: string;
  username?: string;
  db?: number;
  tls?: { servername: string };
  maxRetriesPerRequest: null;
} {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new KgrankInputError("--redis", `"${url.slice(0, 80)}" is not a URL; give redis://HOST:PORT`);
  }
  if (u.protocol !== "redis:" && u.protocol !== "rediss:")
    throw new KgrankInputError("--redis", `must be a redis:// or rediss:// (TLS) URL, got ${u.protocol}`);
  const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : undefined;
  if (db !== undefined && !Number.isInteger(db))
    throw new KgrankInputError("--redis", `database "${u.pathname.slice(1)}" is not a number`);
  // URL keeps the brackets of an IPv6 host; the socket and the TLS server name take it without.
  const host = u.hostname.replace(/^\[(.*)\]$/, "$1") || "127.0.0.1";
  return {
    host,
    port: u.port ? Number(u.port) : 6379,
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(db !== undefined ? { db } : {}),
    ...(u.protocol === "rediss:" ? { tls: { servername: host } } : {}),
    maxRetriesPerRequest: null,
  };
}

/** A failed job's reason: the one line `kgrank evaluate` would print for the error (after "kgrank: "). */
const failureLine = (e: unknown) => (e instanceof KgrankError ? errorLine(e) : internalErrorLine(e));

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** A state file's SHA-256 in hex: what a job returns and what the submitter checks. */
const sha256Hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

export interface WorkerOptions {
  redis: string;
  /**
   * The folder shard states are written to (made if missing), and the only one: a job names no path. Give it the
   * folder `submit --state-dir` names, seen by both.
   */
  stateDir: string;
  /**
   * Folders the files a job names must lie in, symbolic links resolved (`kgrank worker --allow-read`); a job naming
   * another file fails without saying whether it exists. When omitted, any file this process can read.
   */
  allowRead?: string[];
  queue?: string;
  concurrency?: number;
  /** How long a job's lock lasts without renewal before it counts as stalled (BullMQ lockDuration), ms. */
  lockMs?: number;
}

/**
 * A BullMQ worker that runs shard jobs in this process (library API: a Node service can host it). Resolves to the
 * Worker; close() it to stop.
 */
export async function startShardWorker(
  opts: WorkerOptions,
  log: (line: string) => void = () => undefined,
): Promise<Worker<ShardJobData, ShardJobResult>> {
  const { UnrecoverableError, Worker } = bullmq();
  const lockDuration = opts.lockMs ?? 30_000;
  const root = stateRoot(opts.stateDir);
  const roots = opts.allowRead ? readRoots(opts.allowRead) : undefined;
  // A job removed from Redis while it runs (obliterated, Redis restarted without persistence), or whose lock expired,
  // refuses every update and BullMQ reports each refusal: said once per job, and the shard runs to its end. Nothing
  // such a job does can fail the process.
  const lostJobs = new Set<string>();
  const lostJob = (id: string, message: string) => {
    if (lostJobs.has(id)) return;
    lostJobs.add(id);
    log(
      `job ${id} is lost to this worker (removed from Redis, or its lock expired): ${message}; its shard runs to its end unreported`,
    );
  };
  const worker = new Worker<ShardJobData, ShardJobResult>(
    opts.queue ?? DEFAULT_QUEUE,
    async (job: Job<ShardJobData, ShardJobResult>) => {
      let data: ShardJobData;
      try {
        data = parseShardJobData(job.data, roots);
      } catch (e) {
        // Refused data is refused again on any retry: the job fails at once.
        log(`job ${job.id} refused: ${failureLine(e)}`);
        throw new UnrecoverableError(failureLine(e));
      }
      const { run, args, shard, shards, entityShard } = data;
      // One file per attempt: a dead attempt's orphaned write can never replace the state a job returned.
      const attempt = Number.isSafeInteger(job.attemptsStarted) ? job.attemptsStarted : 0;
      const file = path.join(
        root,
        `${run}-shard-${jobShardName(shard, shards, entityShard)}-${attempt}-${randomBytes(4).toString("hex")}.state`,
      );
      let last = 0;
      try {
        const entity = entityShard ? ["--entity-shard", `${entityShard.index}/${entityShard.count}`] : [];
        const options = parseEvaluateArgs([
          ...args,
          "--shard",
          `${shard}/${shards}`,
          ...entity,
          "--save-state",
          file,
          "--quiet",
        ]);
        if (roots) options.mayRead = (f) => insideRoots(f, roots);
        await evaluateRun(options, {
          stdout: () => undefined,
          stderr: () => undefined,
          progress: (done, total) => {
            const now = Date.now();
            if (now - last < 250 && done < total) return;
            last = now;
            job.updateProgress({ done, total }).catch((e: unknown) => lostJob(String(job.id), messageOf(e)));
          },
        });
      } catch (e) {
        throw new Error(failureLine(e), { cause: e });
      }
      log(
        `shard ${shard}/${shards}${entityShard ? ` entity shard ${entityShard.index}/${entityShard.count}` : ""} of run ${run} -> ${file}`,
      );
      const written = readFileSync(file);
      return { file, sha256: sha256Hex(written), bytes: written.length };
    },
    {
      connection: redisConnection(opts.redis),
      concurrency: opts.concurrency ?? 1,
      lockDuration,
      stalledInterval: Math.max(500, Math.floor(lockDuration / 2)),
      maxStalledCount: 2,
    },
  );
  // Redis down: BullMQ reports every reconnection attempt; say each distinct error once until it changes. An error
  // about one job ("Missing key for job ID. moveToFinished", "could not renew lock for job ID") is that job lost.
  let lastError = "";
  worker.on("error", (e) => {
    const id = /\bfor job (\S+?)\.?(?:\s|$)/.exec(e.message)?.[1];
    if (id !== undefined) return lostJob(id, e.message);
    if (e.message !== lastError) log(`worker error: ${e.message}`);
    lastError = e.message;
  });
  worker.on("ready", () => (lastError = ""));
  await worker.waitUntilReady();
  return worker;
}

/** Milliseconds `kgrank worker` waits on SIGTERM for a running shard and the queue connection to close. */
export const DEFAULT_CLOSE_TIMEOUT_MS = 5000;

/** Milliseconds Redis may take to answer (INFO) before it counts as unreachable on SIGTERM. */
const ANSWER_TIMEOUT_MS = 2000;

/**
 * True when the worker's Redis answers a command (INFO) within ANSWER_TIMEOUT_MS, asked without waiting on a connection
 * that is not there. The client's "ready" status alone is not enough: right after Redis goes away the client still reads
 * "ready" until it has processed the closed socket, and closing then waits on a Redis that will not answer.
 */
async function redisReady(worker: Worker): Promise<boolean> {
  const timeout = <T>(ms: number, value: T) => new Promise<T>((r) => setTimeout(r, ms, value).unref());
  const client = await Promise.race([worker.client, timeout(200, null)]);
  if (client === null || (client as { status?: string }).status !== "ready") return false;
  const pong = client.info().then(
    () => true,
    () => false,
  );
  return Promise.race([pong, timeout(ANSWER_TIMEOUT_MS, false)]);
}

/**
 * `kgrank worker`: runs until SIGTERM (or SIGINT, which the CLI turns into exit 130 at once), then takes no new job
 * and closes, letting a running shard finish, for at most `closeTimeout` ms. If Redis is unreachable (closing
 * would wait for it forever) or the bound passes, it exits 143 (128 + SIGTERM) with one line: a shard it did not
 * finish is retried by another worker once its lock expires (BullMQ's stalled-job recovery), so nothing is lost.
 */
export async function workerCommand(
  opts: WorkerOptions & { quiet?: boolean; closeTimeout?: number },
  out: Out,
): Promise<void> {
  const worker = await startShardWorker(
    opts,
    opts.quiet ? undefined : (line) => out.stderr(`kgrank worker: ${line}\n`),
  );
  if (!opts.quiet)
    out.stderr(`kgrank worker: waiting for shard jobs on queue "${opts.queue ?? DEFAULT_QUEUE}" at ${opts.redis}\n`);
  // The listeners stay while the worker closes: a second SIGTERM then changes nothing (with none left, Node's default
  // action would end the process by the signal, without the line below).
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
  });
  const bound = opts.closeTimeout ?? DEFAULT_CLOSE_TIMEOUT_MS;
  let why: string | null = null;
  if (!(await redisReady(worker))) {
    why = `Redis at ${opts.redis} is unreachable`;
  } else {
    let timer: NodeJS.Timeout | undefined;
    const closed = await Promise.race([
      worker.close().then(() => true),
      new Promise<boolean>((r) => (timer = setTimeout(r, bound, false))),
    ]);
    clearTimeout(timer);
    if (!closed) why = `closing took longer than --close-timeout ${bound} ms`;
  }
  if (why) {
    // The connection's reconnect timers would keep the process alive: exit here, as the CLI's SIGINT handler does.
    removePendingFiles();
    out.stderr(
      `kgrank worker: ${why}; stopped without closing (a shard left unfinished is retried by another worker when its lock expires)\n`,
    );
    process.exit(143);
  }
}

export interface SubmitOptions {
  redis: string;
  queue?: string;
  shards: number;
  /**
   * Entity shards per task shard (`--entity-shards M`): the run is a grid of shards x M jobs, each ranking its
   * triples against 1/M of the entities (from a model's embeddings); default 1.
   */
  entityShards?: number;
  stateDir: string;
  /** Attempts per shard before the run fails (a stalled job counts against BullMQ's maxStalledCount instead). */
  attempts?: number;
  /** Of the returned `text` (and of what is printed): table (default), markdown, csv or json, as `kgrank evaluate --format`. */
  format?: Format;
  /** Also write the text to this file (atomically). */
  output?: string;
  /** No progress bar and no notes on stderr. */
  quiet?: boolean;
  /**
   * Keep the run's state files after the merge (`--keep-states`), e.g. for `kgrank compare` or `report`. By default
   * a merged run's files are deleted, as are its jobs in Redis; a failed run keeps both for inspection.
   */
  keepStates?: boolean;
  /**
   * The evaluate flags of the run, as on `kgrank evaluate`'s command line (e.g. ["--dataset", "nations",
   * "--scores-tail", "tail.npy"]); a leading "submit" or "evaluate", submit's own flags and output flags are
   * dropped, and file flags are made absolute against the working directory (workers run elsewhere).
   */
  args: string[];
}

/** What submitRun resolves to: the merged results, the run's report info, the text `kgrank evaluate` prints. */
export interface SubmitResult extends MergedRun {
  /** The state file, SHA-256 and size each shard's job returned, in shard order. */
  shards: ShardJobResult[];
}

/**
 * Milliseconds submitRun waits for Redis to answer - connecting, and each command while it waits for the jobs -
 * before it stops with one line naming --redis, the URL and the connection's last error. ioredis reconnects with
 * growing delays of at most 2 s, so a Redis restarted in place is back well within it.
 */
const REDIS_TIMEOUT_MS = 5000;

/** Closes a BullMQ queue or event stream within 1 s; one whose Redis is gone is disconnected (its reconnect timers stop). */
async function closeWithin(c: { close(): Promise<void>; disconnect(): Promise<void> }): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([
    c.close().then(
      () => true,
      () => false,
    ),
    new Promise<boolean>((r) => (timer = setTimeout(r, 1000, false))),
  ]);
  clearTimeout(timer);
  if (!closed) void c.disconnect().catch(() => undefined);
}

/** Prints nothing: the default `out` of submitRun for a service that uses the returned results. */
const SILENT: Out = { stdout: () => undefined, stderr: () => undefined };

/**
 * evaluate's flags that queue jobs do not run (submitRun refuses them, saying why), with the flags that only modify
 * them: `kgrank submit --help` leaves them out.
 */
export const NOT_QUEUED_FLAGS: readonly string[] = [
  "--sample-tasks",
  "--stratify",
  "--estimate-full",
  "--negatives-from",
  "--replacement",
  "--quadruples",
  "--constrain-candidates",
];

/**
 * Enqueues a run's shard jobs, waits for all, checks and merges their states, and resolves to the merged results
 * (library API of `kgrank submit`; `out` receives the printed text, nothing when omitted).
 */
export async function submitRun(opts: SubmitOptions, out: Out = SILENT): Promise<SubmitResult> {
  const t0 = performance.now();
  const args = runArgs(opts.args);
  // Checked before anything connects: a refused run leaves no connection open.
  const M = opts.entityShards ?? 1;
  const jobs = opts.shards * M;
  if (!Number.isSafeInteger(M) || M < 1 || jobs > MAX_SHARDS) {
    throw new KgrankInputError(
      "--entity-shards",
      `must be an integer >= 1 with --shards x --entity-shards at most ${MAX_SHARDS} jobs, got ${M} x ${opts.shards}`,
    );
  }
  const o = parseEvaluateArgs(args.slice(1));
  for (const [given, flag, why] of [
    [o.sampleTasks !== undefined, "--sample-tasks", "a sample is drawn, ranked and estimated in one process"],
    [o.estimateFull, "--estimate-full", "its estimates need every task's rank in one process"],
    [
      o.quadruples !== undefined,
      "--quadruples",
      "a job's worker keeps one state, and a temporal run keeps one per filter setting; shard with --shard and merge each setting's states",
    ],
    [
      o.constrainCandidates !== undefined,
      "--constrain-candidates",
      "a job's worker keeps one state, and typed candidates are a second protocol; shard with --shard and merge each protocol's states",
    ],
  ] as const) {
    if (given) throw new KgrankInputError(flag, `is not run by queue jobs (${why}): run it with kgrank evaluate`);
  }
  if (M > 1) {
    if (!(o.modelDir || o.interaction || o.entityEmbeddings) || o.negativesIds) {
      throw new KgrankInputError(
        "--entity-shards",
        o.negativesIds
          ? "does not apply to --negatives-ids (the OGB protocol ranks given candidates, not the entity table)"
          : "splits a model's entity table: give --model-dir or --interaction with the embedding files",
      );
    }
  }
  // Job k is task shard floor(k / M), entity shard k % M (none when M is 1).
  const entityOf = (k: number) => (M > 1 ? { index: k % M, count: M } : undefined);
  const label = (k: number) => `shard ${jobShardName(Math.floor(k / M), opts.shards, entityOf(k), true)}`;
  const format = opts.format ?? "table";
  const { Queue, QueueEvents } = bullmq();
  const name = opts.queue ?? DEFAULT_QUEUE;
  const connection = redisConnection(opts.redis);
  const run = `${Date.now().toString(36)}-${randomBytes(6).toString("hex")}`;
  const stateDir = path.resolve(opts.stateDir);
  const realStateDir = stateRoot(stateDir);
  const queue: Queue<ShardJobData, ShardJobResult> = new Queue(name, { connection });
  // The event stream is opened once the queue has connected: closing one that never connected waits forever.
  let events: InstanceType<typeof QueueEvents> | undefined;
  let redisError = "";
  const noteError = (e: Error) => (redisError = e.message);
  queue.on("error", noteError);
  /** `p`, or a KgrankInputError naming --redis once Redis has not answered for REDIS_TIMEOUT_MS. */
  const answered = <T>(p: Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const why = redisError ? `: ${redisError}` : "";
        reject(
          new KgrankInputError(
            "--redis",
            `no answer from Redis at ${opts.redis} within ${REDIS_TIMEOUT_MS / 1000} s${why}; check the URL and that Redis is running`,
          ),
        );
      }, REDIS_TIMEOUT_MS);
    });
    return Promise.race([p, late]).finally(() => clearTimeout(timer));
  };
  const progress = new Progress(`evaluating ${jobs} shard jobs on queue "${name}"`, 1000, { quiet: opts.quiet });
  const done = new Array<number>(jobs).fill(0);
  const total = new Array<number>(jobs).fill(0);
  try {
    await answered(queue.waitUntilReady());
    events = new QueueEvents(name, { connection });
    events.on("error", noteError);
    await answered(events.waitUntilReady());
    const ids = Array.from({ length: jobs }, (_, i) => `${run}-${i}`);
    let shown = 0; // the bar counts thousandths of the run's tasks
    events.on("progress", ({ jobId, data }) => {
      const i = ids.indexOf(jobId);
      const d = data as { done?: number; total?: number };
      if (i < 0 || typeof d?.done !== "number" || typeof d?.total !== "number") return;
      done[i] = d.done;
      total[i] = d.total;
      const all = total.reduce((a, b) => a + b, 0);
      const now = all > 0 ? Math.round((1000 * done.reduce((a, b) => a + b, 0)) / all) : 0;
      if (now > shown) progress.tick(now - shown);
      shown = Math.max(shown, now);
    });
    await answered(
      queue.addBulk(
        ids.map((jobId, k) => ({
          name: "shard",
          data: {
            run,
            args,
            shard: Math.floor(k / M),
            shards: opts.shards,
            ...(M > 1 ? { entityShard: entityOf(k) } : {}),
          },
          opts: { jobId, attempts: opts.attempts ?? 3, removeOnComplete: false, removeOnFail: false },
        })),
      ),
    );
    const results = new Map<number, ShardJobResult>();
    while (results.size < jobs) {
      for (let shard = 0; shard < jobs; shard++) {
        if (results.has(shard)) continue;
        // State first, then the job's data: read the other way round, a job completing in between looks
        // completed with no return value yet.
        const state = await answered(queue.getJobState(ids[shard]!));
        const job = await answered(queue.getJob(ids[shard]!));
        if (!job || state === "unknown") {
          throw new KgrankError(
            `${label(shard)} (job ${ids[shard]}) vanished from the queue: was Redis restarted without persistence? Submit the run again`,
          );
        }
        if (state === "failed")
          throw new KgrankError(`${label(shard)} failed after ${job.attemptsMade} attempt(s): ${job.failedReason}`);
        if (state === "completed") {
          const r = job.returnvalue as Partial<ShardJobResult> | null;
          if (!r || typeof r.file !== "string" || typeof r.sha256 !== "string" || typeof r.bytes !== "number") {
            throw new KgrankError(
              `${label(shard)} completed without naming its state file: was it run by kgrank worker?`,
            );
          }
          results.set(shard, r as ShardJobResult);
        }
      }
      if (results.size < jobs) await new Promise((r) => setTimeout(r, 200));
    }
    progress.stop();
    const inOrder = [...results.entries()].sort((a, b) => a[0] - b[0]);
    const loaded = inOrder.map(([shard, r]) => {
      // The job's result comes from Redis: read nothing but a state of this run in this run's --state-dir.
      const prefix = `${run}-shard-${jobShardName(Math.floor(shard / M), opts.shards, entityOf(shard))}-`;
      const real = realLocation(r.file);
      if (real === null || path.dirname(real) !== realStateDir || !path.basename(real).startsWith(prefix)) {
        throw new KgrankError(
          `${label(shard)}: its job names ${r.file}, not a state of this run in --state-dir ${stateDir}: give every worker the same --state-dir as submit`,
        );
      }
      const bytes = new Uint8Array(readFileSync(real));
      const digest = sha256Hex(bytes);
      if (digest !== r.sha256 || bytes.length !== r.bytes) {
        throw new KgrankError(
          `${label(shard)}: ${r.file} is not the file its job wrote (SHA-256 differs): changed or replaced on the shared storage`,
        );
      }
      return { file: real, bytes };
    });
    const merged = await printMerged(mergeShards(loaded), { format, output: opts.output, quiet: opts.quiet }, out, t0);
    // Merged: the run's jobs leave Redis and, unless kept, its states leave the folder. A failed run keeps both.
    try {
      await answered(Promise.all(ids.map((id) => queue.remove(id))));
    } catch (e) {
      if (!opts.quiet) out.stderr(`kgrank: note: the run's jobs stay in Redis: ${messageOf(e)}\n`);
    }
    if (!opts.keepStates) removeRunStates(realStateDir, run);
    return { ...merged, shards: inOrder.map(([, r]) => r) };
  } finally {
    progress.stop();
    if (events) await closeWithin(events);
    await closeWithin(queue);
  }
}

/**
 * Deletes the state files of `run` in `dir`: each attempt's `RUN-shard-I-of-N-ATTEMPT-HEX.state` (the merged ones
 * and those of attempts that lost their job) and the hidden temporary files of writes that never finished.
 */
function removeRunStates(dir: string, run: string): void {
  const ours = new RegExp(
    `^\\.?${run}-shard-\\d+-of-\\d+(-entity-\\d+-of-\\d+)?-\\d+-[0-9a-f]{8}\\.state(\\.\\d+\\.[0-9a-z]+\\.tmp)?$`,
  );
  for (const name of readdirSync(dir)) {
    if (ours.test(name)) rmSync(path.join(dir, name), { force: true });
  }
}

/**
 * A shard job's name in its state file's name ("3-of-8", "3-of-8-entity-1-of-4"), or for messages ("3/8",
 * "3/8 entity shard 1/4").
 */
function jobShardName(
  shard: number,
  shards: number,
  entity: { index: number; count: number } | undefined,
  message = false,
): string {
  if (message) return `${shard}/${shards}${entity ? ` entity shard ${entity.index}/${entity.count}` : ""}`;
  return `${shard}-of-${shards}${entity ? `-entity-${entity.index}-of-${entity.count}` : ""}`;
}

/** Flags of `kgrank submit` that are its own; the rest are the run's evaluate flags. */
const SUBMIT_WITH_VALUE = ["--redis", "--queue", "--shards", "--entity-shards", "--state-dir", "--attempts"];
const SUBMIT_ALONE = ["--keep-states"];

/**
 * Flags naming files or folders: made absolute, since workers run elsewhere (they must see the same paths). Read
 * off evaluate's option definitions (every <file> / <dir> flag), so a new file flag is covered without a list here.
 */
let pathFlagList: string[] | null = null;
const PATH_FLAGS = () => (pathFlagList ??= pathFlags());

/**
 * The evaluate flags of a `kgrank submit ...` command line (or of evaluate flags alone): submit's own flags and
 * output flags removed, paths made absolute against this process's working directory, and the dataset folder a run
 * without --dataset-dir would read here added (implicitDatasetDir). Idempotent.
 */
export function runArgs(argv: string[], cwd = process.cwd()): string[] {
  const rest: string[] = [];
  for (let i = argv[0] === "submit" || argv[0] === "evaluate" ? 1 : 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (SUBMIT_ALONE.includes(a)) continue;
    if (SUBMIT_WITH_VALUE.includes(a)) {
      i++;
      continue;
    }
    if (SUBMIT_WITH_VALUE.some((f) => a.startsWith(`${f}=`))) continue;
    const eq = a.indexOf("=");
    if (eq > 0 && PATH_FLAGS().includes(a.slice(0, eq))) {
      rest.push(`${a.slice(0, eq)}=${path.resolve(cwd, a.slice(eq + 1))}`);
    } else if (PATH_FLAGS().includes(a) && i + 1 < argv.length) {
      rest.push(a, path.resolve(cwd, argv[++i]!));
    } else {
      rest.push(a);
    }
  }
  // Without --dataset-dir a run reads its dataset from $KGRANK_DATASETS or ./datasets of this process (or the
  // bundled copy): workers elsewhere are told that folder, absolute, so they read what evaluate here would.
  const value = (flag: string) => {
    const i = rest.findIndex((a) => a === flag || a.startsWith(`${flag}=`));
    return i < 0 ? undefined : rest[i] === flag ? (rest[i + 1] ?? "") : rest[i]!.slice(flag.length + 1);
  };
  const scoresOnly = value("--positive-scores") !== undefined || value("--negative-scores") !== undefined;
  if (!scoresOnly && value("--dataset-dir") === undefined) {
    // Without --dataset, the dataset a model directory's config.json names (as evaluate reads it).
    const modelDir = value("--model-dir");
    const named = value("--dataset") ?? (modelDir ? modelDirDataset(modelDir)?.dataset : undefined);
    const implicit = implicitDatasetDir(named, cwd);
    if (implicit !== undefined) rest.push("--dataset-dir", implicit);
  }
  return ["evaluate", ...childArgs(rest)];
}
