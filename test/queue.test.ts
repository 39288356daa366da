/**
 * `kgrank submit` / `kgrank worker` on a real Redis (Debian's redis-server, started here on a free localhost port
 * and stopped at the end) through BullMQ: queue runs print exactly what a single `kgrank evaluate` prints; a worker
 * killed with SIGKILL mid-shard has its job retried elsewhere and the results are still identical; a Redis restart
 * mid-run ends in the right results or one clear error. Skipped, with the reason in the test name, where
 * redis-server or the bullmq package (a devDependency; users install it) is missing (CI installs both and fails on
 * the skip).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { pathFlags } from "../src/run/flags/evaluate";
import { parseShardJobData, readRoots } from "../src/run/job-data";
import { redisConnection, runArgs, submitRun } from "../src/run/queue";
import { KgrankInputError } from "../src/index";
import { loadDataset, writeNpy } from "../src/index";
import { randomValues } from "./helpers/embedding-reference";
import { SHARED_DATASETS, sharedDataset } from "./helpers/datasets";
import { bullmq, freePort, killAndWait, redisServer, startRedisServer } from "./helpers/redis";
import { tempDir } from "./helpers/temp";
import { waitFor } from "./helpers/wait";

const root = path.resolve(__dirname, "..");
const bin = path.join(root, "bin", "kgrank.js");
const dir = tempDir("queue");
const p = (name: string) => path.join(dir, name);

const redis = redisServer;
const bull = bullmq;
const missing = redis.missing || bull.missing;
const fb = sharedDataset("fb15k-237");

let port = 0;
let server: ChildProcess | null = null;
const children: ChildProcess[] = [];
const url = () => `redis://127.0.0.1:${port}`;

async function startRedis(): Promise<void> {
  server = await startRedisServer(port);
}

async function stopRedis(): Promise<void> {
  const s = server;
  server = null;
  await killAndWait(s);
}

/**
 * A `kgrank worker` process on one thread, stopped after the tests. A short lock (2 s) lets the kill test see a lost
 * worker's job retried quickly. Quiet with its output ignored, unless `output` asks for its stderr (piped).
 */
function worker(
  opts: {
    queue?: string;
    stateDir?: string;
    lockMs?: number;
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    args?: string[];
    output?: boolean;
  } = {},
): ChildProcess {
  const args = [bin, "worker", "--redis", url(), "--state-dir", opts.stateDir ?? p("states")];
  if (opts.queue !== undefined) args.push("--queue", opts.queue);
  args.push("--lock-ms", String(opts.lockMs ?? 2000), ...(opts.args ?? []));
  if (!opts.output) args.push("--quiet");
  const child = spawn(process.execPath, args, {
    cwd: opts.cwd ?? dir,
    env: opts.env ?? { ...process.env, KGRANK_THREADS: "1" },
    ...(opts.output ? {} : { stdio: "ignore" as const }),
  });
  child.on("exit", () => undefined);
  children.push(child);
  return child;
}

function run(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: dir, env });
    children.push(child);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b) => (stdout += b));
    child.stderr.on("data", (b) => (stderr += b));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

/** `kgrank submit` of `args` in `shards` shards prints exactly what one `kgrank evaluate` process prints. */
async function expectSubmitEqualsEvaluate(args: string[], shards: number, stateDir: string): Promise<void> {
  const q = await run([
    "submit",
    "--redis",
    url(),
    "--shards",
    String(shards),
    "--state-dir",
    p(stateDir),
    ...args,
    "--format",
    "json",
    "--quiet",
  ]);
  expect(q.status, q.stderr).toBe(0);
  const single = await run(["evaluate", ...args, "--format", "json"]);
  expect(q.stdout).toBe(single.stdout);
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.on("exit", r));
  child.kill("SIGKILL");
  await gone;
}

/**
 * A synthetic graph whose shards run long enough for a worker to be killed mid-shard: `entities` entities (6,000 by
 * default), entities + 40,000 training and 72,000 test triples. The whole run took 0.34 s at 3,000 entities on a
 * 2-core EPYC whose bus reads 70 GB/s; a test that must stop a worker more than 200 ms into its shard takes 100,000.
 */
function bigDataset(entities = 6000): string {
  const d = p(`big-${entities}`);
  if (existsSync(path.join(d, "test.tsv"))) return d;
  mkdirSync(d, { recursive: true });
  let seed = 7;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const E = entities;
  const t = () => `e${next(E)}\tr${next(20)}\te${next(E)}`;
  const train = Array.from({ length: E }, (_, i) => `e${i}\tr${i % 20}\te${(i * 7 + 1) % E}`);
  for (let i = 0; i < 40000; i++) train.push(t());
  writeFileSync(path.join(d, "train.tsv"), train.join("\n") + "\n");
  writeFileSync(path.join(d, "valid.tsv"), Array.from({ length: 100 }, t).join("\n") + "\n");
  writeFileSync(path.join(d, "test.tsv"), Array.from({ length: 72000 }, t).join("\n") + "\n");
  return d;
}

/**
 * A random DistMult model of Nations under dir/model, as a user's files: entity rows in reverse label order (with an
 * --entity-ids file naming each row), relations with a --relation-ids file, an OGB model directory with the same
 * embeddings, and OGB-protocol negatives (--negatives-ids). Returns the evaluate flags of each run, with paths
 * relative to dir.
 */
function nationsModel(): string[][] {
  const ds = loadDataset("nations");
  const d = p("model");
  mkdirSync(path.join(d, "ogb"), { recursive: true });
  const n = ds.numEntities;
  const nr = ds.numRelations;
  const dim = 8;
  const ent = randomValues(n * dim, 11, 0.5);
  const rel = randomValues(nr * dim, 12, 0.5);
  const reversed = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) reversed.set(ent.subarray(i * dim, (i + 1) * dim), (n - 1 - i) * dim);
  writeNpy(path.join(d, "entity.npy"), reversed, [n, dim]);
  writeNpy(path.join(d, "relation.npy"), rel, [nr, dim]);
  writeFileSync(path.join(d, "entities.txt"), [...ds.entityLabels].reverse().join("\n") + "\n");
  writeFileSync(path.join(d, "relations.txt"), ds.relationLabels.join("\n") + "\n");
  writeNpy(path.join(d, "ogb", "entity_embedding.npy"), ent, [n, dim]);
  writeNpy(path.join(d, "ogb", "relation_embedding.npy"), rel, [nr, dim]);
  writeFileSync(
    path.join(d, "ogb", "config.json"),
    JSON.stringify({
      model: "DistMult",
      hidden_dim: dim,
      gamma: 12,
      double_entity_embedding: false,
      double_relation_embedding: false,
    }),
  );
  const rows = ds.splits.test.length / 3;
  writeNpy(
    path.join(d, "negatives.npy"),
    Int32Array.from({ length: rows * 6 }, (_, i) => (i * 7 + 3) % n),
    [rows, 6],
  );
  return [
    [
      "--dataset",
      "nations",
      "--interaction",
      "distmult",
      "--entity-embeddings",
      "model/entity.npy",
      "--relation-embeddings",
      "model/relation.npy",
      "--entity-ids",
      "model/entities.txt",
      "--relation-ids=model/relations.txt",
      "--by-relation",
    ],
    ["--dataset", "nations", "--model-dir", "model/ogb", "--metrics", "mrr,hits@10,median_rank"],
    ["--dataset", "nations", "--model-dir=model/ogb", "--negatives-ids", "model/negatives.npy"],
  ];
}

describe("the evaluate flags a shard job carries (no Redis needed)", () => {
  it("every file and folder flag of evaluate is made absolute, read off its option definitions", () => {
    const flags = pathFlags();
    for (const f of [
      "--dataset-dir",
      "--scores-head",
      "--scores-tail",
      "--triples",
      "--negatives-head",
      "--negatives-tail",
      "--model-dir",
      "--entity-embeddings",
      "--relation-embeddings",
      "--entity-ids",
      "--relation-ids",
      "--negatives-ids",
      "--positive-scores",
      "--negative-scores",
    ]) {
      expect(flags, f).toContain(f);
    }
    expect(flags).not.toContain("--dataset"); // a name, not a path
    const argv = [
      "submit",
      "--redis",
      "redis://h:1",
      "--shards",
      "4",
      "--state-dir",
      "s",
      "-o",
      "out.txt",
      "-q",
      "--format",
      "json",
      ...flags.flatMap((f, i) => (i % 2 ? [`${f}=rel/${i}`] : [f, `rel/${i}`])),
      "--metrics",
      "mrr",
    ];
    const args = runArgs(argv, "/work/here");
    expect(args[0]).toBe("evaluate");
    flags.forEach((f, i) => {
      if (f === "--output") return; // the submitter's own: dropped
      expect(args.includes(`${f}=/work/here/rel/${i}`) || args[args.indexOf(f) + 1] === `/work/here/rel/${i}`, f).toBe(
        true,
      );
    });
    for (const own of ["--redis", "--shards", "--state-dir", "-o", "--output", "-q", "--format"])
      expect(args, own).not.toContain(own);
    expect(args.slice(-2)).toEqual(["--metrics", "mrr"]);
    // Idempotent: a library caller's args, already absolute or starting with "evaluate", come out the same.
    expect(runArgs(args, "/elsewhere")).toEqual(args);
  });

  it("a --model-dir whose config.json names the dataset: workers are told the submitter's folder for it", () => {
    mkdirSync(p("cfg-model"), { recursive: true });
    writeFileSync(p("cfg-model/config.json"), JSON.stringify({ model: "DistMult", dataset: "FB15k-237" }));
    const datasets = process.env.KGRANK_DATASETS;
    process.env.KGRANK_DATASETS = "rel-datasets";
    try {
      expect(runArgs(["--model-dir", "cfg-model"], dir)).toEqual([
        "evaluate",
        "--model-dir",
        p("cfg-model"),
        "--dataset-dir",
        p("rel-datasets"),
      ]);
      // a bundled dataset's config: read from the package, no folder
      writeFileSync(p("cfg-model/config.json"), JSON.stringify({ model: "DistMult", dataset: "Nations" }));
      expect(runArgs(["--model-dir", "cfg-model"], dir)).not.toContain("--dataset-dir");
    } finally {
      if (datasets === undefined) delete process.env.KGRANK_DATASETS;
      else process.env.KGRANK_DATASETS = datasets;
    }
  });
});

describe("a shard job's data as a worker takes it (untrusted; no Redis needed)", () => {
  const roots = () => {
    mkdirSync(p("allowed/model"), { recursive: true });
    writeFileSync(p("allowed/model/tail.npy"), "not an npy");
    writeFileSync(p("secret.npy"), "secret");
    if (!existsSync(p("allowed/link"))) symlinkSync(p("secret.npy"), p("allowed/link"));
    if (!existsSync(p("allowed/dirlink"))) symlinkSync(dir, p("allowed/dirlink"));
    return readRoots([p("allowed")]);
  };
  const good = { run: "mh8k2x1c-0a1b2c3d4e5f", args: ["evaluate", "--dataset", "nations"], shard: 1, shards: 3 };
  const refused = (data: unknown, allow?: string[]) => {
    try {
      parseShardJobData(data, allow);
    } catch (e) {
      expect(e).toBeInstanceOf(KgrankInputError);
      return (e as Error).message;
    }
    throw new Error(`accepted ${JSON.stringify(data)}`);
  };

  it("accepts what submitRun sends and refuses each malformed field by name", () => {
    expect(parseShardJobData(good)).toEqual(good);
    expect(parseShardJobData({ ...good, stateDir: "/anywhere" })).toEqual(good); // an older submitter's field: unused
    expect(refused({ ...good, run: "../../escape" })).toMatch(/^job data "run": must be 1 to 64 letters/);
    expect(refused({ ...good, run: "a/b" })).toMatch(/^job data "run"/);
    expect(refused({ ...good, shard: "x" })).toBe(
      'job data "shard": must be an integer in [0, shards) = [0, 3), got "x"',
    );
    expect(refused({ ...good, shard: 3 })).toMatch(/^job data "shard"/);
    expect(refused({ ...good, shards: 0 })).toMatch(/^job data "shards"/);
    expect(refused({ ...good, args: "--dataset nations" })).toMatch(/^job data "args": must be an array/);
    expect(refused({ ...good, args: [1] })).toMatch(/^job data "args": element 0 must be a string/);
    expect(refused({ ...good, args: ["--bogus"] })).toMatch(/^job data "args": not evaluate arguments: unknown option/);
    expect(parseShardJobData({ ...good, entityShard: { index: 1, count: 4 } })).toEqual({
      ...good,
      entityShard: { index: 1, count: 4 },
    });
    for (const bad of [{ index: 4, count: 4 }, { index: 0 }, "1/4", { index: 0, count: 4, more: 1 }]) {
      expect(refused({ ...good, entityShard: bad })).toMatch(/^job data "entityShard": must be \{ index, count \}/);
    }
    for (const flag of ["--save-state", "--output", "--ranks-out", "--shard", "--entity-shard", "--workers"]) {
      const value = flag.includes("shard") ? "0/2" : flag === "--workers" ? "2" : "/tmp/x";
      expect(refused({ ...good, args: [...good.args, flag, value] }), flag).toContain(`must not set ${flag}`);
      expect(refused({ ...good, args: [...good.args, `${flag}=${value}`] }), flag).toContain(`must not set ${flag}`);
    }
    for (const [flag, value] of [
      ["--constrain-candidates", "train"],
      ["--quadruples", "/tmp/kg"],
    ]) {
      expect(refused({ ...good, args: [...good.args, flag!, value!] }), flag).toContain(
        `must not set ${flag}: its run keeps more than one state`,
      );
    }
    expect(refused(null)).toMatch(/^job data: must be an object/);
  });

  it("--allow-read: a file outside the folders is refused alike whether or not it exists; links are resolved", () => {
    const allow = roots();
    const args = (flag: string, file: string) => ({ ...good, args: [...good.args, flag, file] });
    expect(parseShardJobData(args("--scores-tail", p("allowed/model/tail.npy")), allow).args).toContain(
      p("allowed/model/tail.npy"),
    );
    expect(parseShardJobData(args("--model-dir", p("allowed/model")), allow).run).toBe(good.run);
    expect(parseShardJobData(args("--scores-tail", p("allowed/model/missing.npy")), allow).run).toBe(good.run);
    const outside = (file: string) =>
      refused(args("--scores-tail", file), allow).replace(
        /--scores-tail ".*" is outside/,
        "--scores-tail FILE is outside",
      );
    const message =
      'job data "args": --scores-tail FILE is outside the folders this worker may read (its --allow-read)';
    for (const file of [
      p("secret.npy"), // exists
      p("no-such.npy"), // does not
      p("no-such-dir/x.npy"),
      "/etc/hostname",
      p("allowed/link"), // a link to the secret
      p("allowed/dirlink/secret.npy"), // a folder link out of the root
      p("allowed/dirlink/no-such.npy"),
      p("allowed/../secret.npy"),
      p("allowed/model/../../secret.npy"),
      "secret.npy", // relative: against the worker's working directory
    ])
      expect(outside(file), file).toBe(message);
    expect(refused(args("--dataset-dir", "/"), allow)).toContain("--dataset-dir");
    // A non-bundled dataset without --dataset-dir would be read from the worker's own default folder.
    const external = { ...good, args: ["evaluate", "--dataset", "fb15k237"] };
    expect(refused(external, allow)).toMatch(
      /^job data "args": --dataset "fb15k237" without --dataset-dir reads this worker's .*, outside the folders it may read \(its --allow-read\); give --dataset-dir/,
    );
    expect(parseShardJobData({ ...external, args: [...external.args, "--dataset-dir", p("allowed")] }, allow).run).toBe(
      good.run,
    );
    expect(parseShardJobData(external).run, "no --allow-read: no confinement").toBe(good.run);
    expect(() => readRoots([p("no-such-root")])).toThrow(/^--allow-read: .* is not a folder/);
  });

  it("arbitrary JSON as job data: accepted whole, or a KgrankInputError naming a field of it (fast-check)", () => {
    const allow = roots();
    const flags = [...pathFlags(), "--dataset", "--metrics", "--shard", "--save-state", "--output", "--bootstrap"];
    const value = fc.oneof(
      fc.constantFrom("nations", "mrr,hits@10", "0/2", "7", p("allowed/model/tail.npy"), p("allowed/model")),
      fc.constantFrom("/etc/hostname", p("secret.npy"), p("allowed/link"), "..", "--", "-q", ""),
      fc.string({ maxLength: 12 }),
    );
    // Mostly an evaluate argument list with a flag or two added (so that many jobs pass), sometimes any strings.
    const args = fc.oneof(
      fc
        .tuple(
          fc.constantFrom(["evaluate", "--dataset", "nations"], ["--metrics", "mrr"], []),
          fc.array(
            fc.oneof(
              fc.tuple(fc.constantFrom(...flags), value).map(([f, v]) => [f, v]),
              fc.tuple(fc.constantFrom(...flags), value).map(([f, v]) => [`${f}=${v}`]),
            ),
            { maxLength: 2 },
          ),
        )
        .map(([base, more]) => [...base, ...more.flat()]),
      fc.array(fc.oneof(fc.constantFrom(...flags), value), { maxLength: 6 }),
    );
    const field = <T>(good: fc.Arbitrary<T>) => fc.oneof({ weight: 6, arbitrary: good }, fc.jsonValue({ maxDepth: 2 }));
    const fields = {
      run: field(fc.oneof({ weight: 4, arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/) }, fc.string())),
      args: field(args),
      shard: field(fc.integer({ min: -1, max: 4 })),
      shards: field(fc.integer({ min: 0, max: 5 })),
    };
    const data = fc.oneof(
      fc.jsonValue(),
      { weight: 4, arbitrary: fc.record(fields) },
      fc.record(fields, { requiredKeys: [] }),
    );
    fc.assert(
      fc.property(data, fc.boolean(), (d, confined) => {
        let job: ReturnType<typeof parseShardJobData>;
        try {
          job = parseShardJobData(d, confined ? allow : undefined);
        } catch (e) {
          expect(e).toBeInstanceOf(KgrankInputError);
          expect((e as KgrankInputError).argument).toMatch(/^job data( "(run|args|shard|shards)")?$/);
          expect((e as Error).message).not.toContain("\n");
          return;
        }
        expect(job.run).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
        expect(Number.isInteger(job.shard) && job.shard >= 0 && job.shard < job.shards).toBe(true);
        expect(job.args.every((a) => typeof a === "string")).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("rediss:// is TLS with the host as server name; redis:// is not", () => {
    expect(redisConnection("rediss://user:p%40ss@cache.example.com:6380/2")).toEqual({
      host: "cache.example.com",
      port: 6380,
      username: "user",
      password: "p@ss",
      db: 2,
      tls: { servername: "cache.example.com" },
      maxRetriesPerRequest: null,
    });
    expect(redisConnection("redis://:secret@10.0.0.5")).toEqual({
      host: "10.0.0.5",
      port: 6379,
      password: "secret",
      maxRetriesPerRequest: null,
    });
    expect(redisConnection("rediss://[::1]:6390").tls).toEqual({ servername: "::1" });
    expect(() => redisConnection("http://x")).toThrow(/^--redis: must be a redis:\/\/ or rediss:\/\//);
  });
});

/** A working directory for workers other than the submitter's (dir): relative paths resolve differently there. */
function elsewhere(): string {
  mkdirSync(p("elsewhere"), { recursive: true });
  return p("elsewhere");
}

describe.skipIf(missing)(
  (redis.missing ? redis : bull).name("kgrank submit / worker on BullMQ and a real Redis"),
  () => {
    beforeAll(async () => {
      port = await freePort();
      await startRedis();
    });
    afterAll(async () => {
      for (const c of children) await kill(c);
      await stopRedis();
    });

    it("a queue run with two workers prints exactly the single-process evaluate (bundled datasets, breakdowns, bootstrap)", async () => {
      const workers = [worker(), worker()];
      for (const args of [
        ["--dataset", "umls"],
        ["--dataset", "kinships", "--metrics", "mrr,hits@10,median_rank,amri"],
        ["--dataset", "nations", "--by-relation", "--bootstrap", "30", "--metrics", "mrr,median_rank"],
      ]) {
        await expectSubmitEqualsEvaluate(args, 5, "states");
      }
      for (const w of workers) await kill(w);
    }, 240_000);

    it.skipIf(fb.missing)(
      fb.name("a queue run of FB15k-237's filtered test evaluation with two workers equals the single process"),
      async () => {
        // FB15k-237's filter-index build (synchronous; the dataset loads asynchronously) holds a worker's event loop for
        // a second or more on a loaded machine, longer than the kill tests' 2 s lock: the default 30 s lock here.
        const workers = [worker({ lockMs: 30_000 }), worker({ lockMs: 30_000 })];
        const args = [
          "--dataset",
          "fb15k-237",
          "--dataset-dir",
          SHARED_DATASETS,
          "--metrics",
          "mrr,hits@10,median_rank,amri",
        ];
        await expectSubmitEqualsEvaluate(args, 4, "states");
        for (const w of workers) await kill(w);
      },
      600_000,
    );

    it("a worker killed with SIGKILL mid-shard: its job is retried by another worker, the results are identical", async () => {
      const { Queue } = await import("bullmq");
      const queue = new Queue("kgrank", { connection: { host: "127.0.0.1", port, maxRetriesPerRequest: null } });
      const args = ["--dataset-dir", bigDataset(), "--metrics", "mrr,hits@10,median_rank"];
      const first = worker();
      const submitted = run([
        "submit",
        "--redis",
        url(),
        "--shards",
        "2",
        "--state-dir",
        p("states"),
        "--keep-states",
        ...args,
        "--format",
        "json",
        "--quiet",
      ]);
      // Wait until the first worker is inside a shard (active, some progress reported), then kill it.
      let killedJob: string | null = null;
      await waitFor("the first worker to report progress inside a shard", async () => {
        const active = await queue.getActive();
        const inside = active.find(
          (j) => typeof j.progress === "object" && (j.progress as { done?: number }).done! > 0,
        );
        killedJob = inside?.id ?? null;
        return killedJob !== null;
      });
      await kill(first);
      const second = worker();
      const q = await submitted;
      expect(q.status, q.stderr).toBe(0);
      // The merged jobs are gone from Redis; the kept state of the killed shard names its attempt.
      const [, runId, shard] = /^(.*)-(\d+)$/.exec(killedJob!)!;
      const kept = readdirSync(p("states")).filter((f) => f.startsWith(`${runId}-shard-${shard}-of-2-`));
      expect(kept, "the killed shard's state").toHaveLength(1);
      const attempt = Number(kept[0]!.split("-of-2-")[1]!.split("-")[0]);
      expect(attempt, "the killed shard's job ran again").toBeGreaterThanOrEqual(2);
      const single = await run(["evaluate", ...args, "--format", "json"]);
      expect(q.stdout).toBe(single.stdout);
      await kill(second);
      await queue.close();
    }, 300_000);

    it("a Redis restart mid-run ends in one clear error (the jobs are gone), never in other numbers", async () => {
      const args = ["--dataset-dir", bigDataset(), "--metrics", "mrr"];
      const w = worker();
      const submitted = run([
        "submit",
        "--redis",
        url(),
        "--shards",
        "3",
        "--state-dir",
        p("states"),
        ...args,
        "--format",
        "json",
        "--quiet",
      ]);
      await new Promise((r) => setTimeout(r, 1500));
      await stopRedis();
      await startRedis();
      const q = await submitted;
      if (q.status === 0) {
        const single = await run(["evaluate", ...args, "--format", "json"]);
        expect(q.stdout).toBe(single.stdout);
      } else {
        expect(q.status).toBe(1);
        expect(q.stderr.trim().split("\n")).toHaveLength(1);
        expect(q.stderr).toMatch(
          /^kgrank: shard \d+\/3 \(job .*\) vanished from the queue: was Redis restarted without persistence\?/,
        );
      }
      await kill(w);
    }, 300_000);

    it("a model run with relative paths, workers in another directory: exactly `kgrank evaluate`'s output", async () => {
      const workers = [worker({ cwd: elsewhere() }), worker({ cwd: elsewhere() })];
      for (const args of nationsModel()) {
        const single = await run(["evaluate", ...args, "--format", "json"]);
        expect(single.status, single.stderr).toBe(0);
        // Task shards alone, and a grid of 2 task shards x 3 entity shards (each job ranks 1/3 of the entities).
        const ogb = args.includes("--negatives-ids"); // the OGB protocol has no entity shards
        for (const grid of [["--shards", "3"], ...(ogb ? [] : [["--shards", "2", "--entity-shards", "3"]])]) {
          const q = await run([
            "submit",
            "--redis",
            url(),
            ...grid,
            "--state-dir",
            "states",
            ...args,
            "--format",
            "json",
            "--quiet",
          ]);
          expect(q.status, q.stderr).toBe(0);
          expect(q.stdout, grid.join(" ")).toBe(single.stdout);
        }
      }
      for (const w of workers) await kill(w);
    }, 240_000);

    it("submitRun (library) resolves to the merged RankResults and the text evaluate prints", async () => {
      const w = worker({ cwd: elsewhere() });
      const args = nationsModel()[1]!.map((a) => (a.startsWith("model/") ? path.relative(process.cwd(), p(a)) : a));
      const got = await submitRun({
        redis: url(),
        shards: 2,
        stateDir: p("states"),
        args,
        format: "json",
        quiet: true,
      });
      const single = await run(["evaluate", ...nationsModel()[1]!, "--format", "json"]);
      expect(got.text.trimEnd()).toBe(single.stdout.trimEnd());
      const want = JSON.parse(single.stdout);
      expect(
        JSON.parse(
          JSON.stringify(got.results.toJSON(), (_k, v) => (typeof v === "number" && !Number.isFinite(v) ? null : v)),
        ),
      ).toEqual(want.results);
      expect(got.results.get("mrr")).toBe(want.results.both.realistic.inverse_harmonic_mean_rank);
      expect(got.report.dataset).toBe("nations");
      expect(got.shards).toHaveLength(2);
      for (const s of got.shards) expect(s.sha256).toMatch(/^[0-9a-f]{64}$/);
      // Without `out` nothing is printed; the default format is evaluate's table.
      const table = await submitRun({
        redis: url(),
        shards: 1,
        stateDir: p("states"),
        args: ["--dataset", "umls", "--metrics", "mrr"],
        quiet: true,
      });
      expect(table.text).toMatch(/^kgrank-native .*\n\numls test/);
      expect(table.text).toContain(table.results.toTable());
      await kill(w);
    }, 240_000);

    it("kgrank worker on SIGTERM: closes and exits 0 when idle; exits 143 with one line past --close-timeout or with Redis gone", async () => {
      const start = (extra: string[]) => {
        const child = worker({ queue: "sigterm", args: extra, output: true });
        let stderr = "";
        child.stderr!.on("data", (b) => (stderr += b));
        const exit = new Promise<{ code: number | null; stderr: string }>((resolve) =>
          child.on("close", (code, signal) => resolve({ code, stderr: `${stderr}(exit ${code}, signal ${signal})` })),
        );
        const ready = () =>
          waitFor("the worker's line 'waiting for shard jobs'", () => stderr.includes("waiting for shard jobs"));
        return { child, exit, ready };
      };
      // The last line of the worker's stderr (before the test's own exit note).
      const lastLine = (text: string) =>
        text
          .replace(/\(exit [^)]*\)$/, "")
          .trim()
          .split("\n")
          .at(-1)!;
      // Idle, Redis up: a clean close.
      const idle = start([]);
      await idle.ready();
      idle.child.kill("SIGTERM");
      expect((await idle.exit).code).toBe(0);
      // Inside a long shard: it does not wait past --close-timeout; the shard is left to another worker.
      const { Queue } = await import("bullmq");
      const queue = new Queue("sigterm", { connection: { host: "127.0.0.1", port, maxRetriesPerRequest: null } });
      const busy = start(["--close-timeout", "200"]);
      await busy.ready();
      const submitted = run([
        "submit",
        "--redis",
        url(),
        "--queue",
        "sigterm",
        "--shards",
        "1",
        "--state-dir",
        p("states"),
        "--dataset-dir",
        bigDataset(100000),
        "--quiet",
      ]);
      await waitFor("the busy worker to take its job", async () => (await queue.getActiveCount()) > 0);
      busy.child.kill("SIGTERM");
      const b = await busy.exit;
      expect(b.code, b.stderr).toBe(143);
      expect(lastLine(b.stderr)).toMatch(
        /^kgrank worker: closing took longer than --close-timeout 200 ms; stopped without closing \(a shard left unfinished is retried by another worker when its lock expires\)$/,
      );
      const submitter = children.at(-1)!;
      await kill(submitter);
      await submitted;
      await queue.obliterate({ force: true });
      await queue.close();
      // Redis gone: closing would wait for it forever.
      const orphan = start([]);
      await orphan.ready();
      await stopRedis();
      orphan.child.kill("SIGTERM");
      const o = await orphan.exit;
      expect(o.code, o.stderr).toBe(143);
      expect(lastLine(o.stderr)).toMatch(
        /^kgrank worker: Redis at redis:\/\/127\.0\.0\.1:\d+ is unreachable; stopped without closing/,
      );
      await startRedis();
    }, 300_000);

    it("a job removed from Redis while a worker runs it: the worker says so in one line and serves the next job", async () => {
      const { Queue } = await import("bullmq");
      const queue = new Queue("vanish", { connection: { host: "127.0.0.1", port, maxRetriesPerRequest: null } });
      const child = worker({ queue: "vanish", output: true });
      let stderr = "";
      child.stderr!.on("data", (b) => (stderr += b));
      let exit: number | null = null;
      child.on("exit", (code) => (exit = code));
      const data = (run: string, args: string[]) => ({ run, args, shard: 0, shards: 2 });
      await queue.add("shard", data("gone", ["evaluate", "--dataset-dir", bigDataset(), "--metrics", "mrr"]), {
        jobId: "gone-0",
      });
      for (let i = 0; i < 600; i++) {
        const job = (await queue.getActive())[0];
        if (job && typeof job.progress === "object" && (job.progress as { done?: number }).done! > 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await queue.obliterate({ force: true });
      await queue.add("shard", data("next", ["evaluate", "--dataset", "nations", "--metrics", "mrr"]), {
        jobId: "next-0",
      });
      await waitFor(
        `job next-0 to complete (worker stderr: ${stderr})`,
        async () => (await queue.getJobState("next-0")) === "completed",
      );
      expect(exit, stderr).toBeNull();
      const gone = stderr.split("\n").filter((l) => l.includes("gone-0"));
      expect(gone, stderr).toHaveLength(1);
      expect(gone[0]).toMatch(
        /^kgrank worker: job gone-0 is lost to this worker \(removed from Redis, or its lock expired\): /,
      );
      await kill(child);
      await queue.obliterate({ force: true });
      await queue.close();
    }, 120_000);

    it("submit against a Redis that is not there or dies while it waits: one line naming --redis, exit 1", async () => {
      const own = await freePort();
      const dying = spawn("redis-server", ["--port", String(own), "--bind", "127.0.0.1", "--save", ""], {
        stdio: "ignore",
      });
      children.push(dying);
      await waitFor(
        `the second redis-server on port ${own} to answer PING`,
        () => spawnSync("redis-cli", ["-p", String(own), "ping"], { encoding: "utf8" }).stdout?.trim() === "PONG",
      );
      // That each ends is bounded by this test's timeout, not by a wall-time assertion (the suite runs on loaded
      // machines); the 5 s the message names is kgrank's own bound on each attempt.
      const submit = (redisUrl: string) =>
        run(["submit", "--redis", redisUrl, "--shards", "2", "--state-dir", p("states"), "--quiet"]);
      const closed = await freePort();
      const waiting = submit(`redis://127.0.0.1:${own}`);
      await new Promise((r) => setTimeout(r, 1500)); // the jobs are queued; no worker takes them
      await kill(dying);
      const results = await Promise.all([
        submit(`redis://127.0.0.1:${closed}`),
        submit("redis://no-such-host.invalid:6379"),
        waiting,
      ]);
      for (const [r, url, why] of [
        [results[0], `redis://127.0.0.1:${closed}`, "ECONNREFUSED"],
        [results[1], "redis://no-such-host.invalid:6379", "ENOTFOUND|EAI_AGAIN"],
        [results[2], `redis://127.0.0.1:${own}`, "ECONNREFUSED|Connection is closed"],
      ] as const) {
        expect(r.status, r.stderr).toBe(1);
        expect(r.stderr.trim().split("\n"), r.stderr).toHaveLength(1);
        expect(r.stderr).toContain(`kgrank: --redis: no answer from Redis at ${url} within 5 s: `);
        expect(r.stderr).toMatch(new RegExp(why));
      }
    }, 60_000);

    it("a forged job writes nothing outside the worker's --state-dir and learns nothing of files outside --allow-read", async () => {
      const { Queue } = await import("bullmq");
      const queue = new Queue("forged", { connection: { host: "127.0.0.1", port, maxRetriesPerRequest: null } });
      mkdirSync(p("allowed"), { recursive: true });
      writeFileSync(p("secret.npy"), "secret");
      const child = worker({ queue: "forged", lockMs: 30_000, args: ["--allow-read", p("allowed")] });
      const nations = ["evaluate", "--dataset", "nations", "--metrics", "mrr"];
      // A DGL-KE model directory inside the allowed folder whose config.json names id maps outside it (data_path).
      writeFileSync(p("secret.dict"), "0\tsecret\n");
      for (const [model, map] of [
        ["maps-exist", "secret.dict"],
        ["maps-missing", "no-such.dict"],
      ]) {
        const m = p(`allowed/${model}`);
        mkdirSync(m, { recursive: true });
        writeNpy(path.join(m, "Nations_DistMult_entity.npy"), new Float32Array(14 * 4), [14, 4]);
        writeNpy(path.join(m, "Nations_DistMult_relation.npy"), new Float32Array(55 * 4), [55, 4]);
        writeFileSync(
          path.join(m, "config.json"),
          JSON.stringify({ model_name: "DistMult", dataset: "Nations", data_path: dir, emp_file: map, hidden_dim: 4 }),
        );
      }
      const jobs: [string, Record<string, unknown>][] = [
        ["maps-exist", { run: "r3", args: [...nations, "--model-dir", p("allowed/maps-exist")], shard: 0, shards: 1 }],
        [
          "maps-missing",
          { run: "r3", args: [...nations, "--model-dir", p("allowed/maps-missing")], shard: 0, shards: 1 },
        ],
        ["escape", { run: "../escape", args: nations, shard: 0, shards: 1, stateDir: p("evil") }],
        ["exists", { run: "r1", args: [...nations, "--scores-tail", p("secret.npy")], shard: 0, shards: 1 }],
        ["missing", { run: "r1", args: [...nations, "--scores-tail", p("no-such.npy")], shard: 0, shards: 1 }],
        ["good", { run: "r2", args: nations, shard: 0, shards: 1, stateDir: p("evil") }],
      ];
      for (const [id, data] of jobs) await queue.add("shard", data as never, { jobId: id, attempts: 3 });
      const settled = async (id: string) => {
        for (let i = 0; i < 600; i++) {
          const state = await queue.getJobState(id);
          if (state === "completed" || state === "failed") return (await queue.getJob(id))!;
          await new Promise((r) => setTimeout(r, 50));
        }
        throw new Error(`job ${id} never settled`);
      };
      const escape = await settled("escape");
      expect(escape.failedReason).toMatch(/^job data "run": must be 1 to 64 letters/);
      expect(escape.attemptsMade, "refused data is not retried").toBe(1);
      const reason = async (id: string, file: string) =>
        (await settled(id)).failedReason.replace(JSON.stringify(file), "FILE");
      expect(await reason("exists", p("secret.npy"))).toBe(
        'job data "args": --scores-tail FILE is outside the folders this worker may read (its --allow-read)',
      );
      expect(await reason("missing", p("no-such.npy"))).toBe(await reason("exists", p("secret.npy")));
      // config.json's maps outside --allow-read count as absent, alike whether they exist or not.
      const maps = async (id: string) =>
        (await settled(id)).failedReason.replaceAll(id, "MODEL").replace(/(secret|no-such)\.dict/g, "MAP");
      expect(await maps("maps-exist")).toMatch(
        /--model-dir: .*config\.json: emp_file "MAP" is not found under its data_path/,
      );
      expect(await maps("maps-exist")).toBe(await maps("maps-missing"));
      const good = await settled("good");
      expect(path.dirname(good.returnvalue.file)).toBe(realpathSync(p("states")));
      expect(existsSync(p("evil")), "a folder the job named").toBe(false);
      expect(readdirSync(dir).filter((f) => f.startsWith("escape"))).toEqual([]);
      await kill(child);
      // A submitter reads only states of its run in its own --state-dir: workers writing elsewhere are named.
      const other = worker({ queue: "forged", stateDir: p("other-states"), lockMs: 30_000 });
      const q = await run([
        "submit",
        "--redis",
        url(),
        "--queue",
        "forged",
        "--shards",
        "1",
        "--state-dir",
        p("states"),
        "--quiet",
      ]);
      expect(q.status).toBe(1);
      expect(q.stderr).toMatch(
        /^kgrank: shard 0\/1: its job names .*other-states.*, not a state of this run in --state-dir .*: give every worker the same --state-dir as submit\n$/,
      );
      await kill(other);
      await queue.obliterate({ force: true });
      await queue.close();
    }, 60_000);

    it("the submitter's default dataset folder (./datasets, KGRANK_DATASETS) reaches workers in another directory", async () => {
      // The submitter's ./datasets/codex-s is a shortened copy of Nations: a worker that looks in its own working
      // directory finds none.
      const copy = p("datasets/codex-s");
      mkdirSync(copy, { recursive: true });
      for (const split of ["train", "valid", "test"]) {
        const lines = readFileSync(path.join(root, "data", "nations", `${split}.tsv`), "utf8").split("\n");
        writeFileSync(path.join(copy, `${split}.tsv`), (split === "test" ? lines.slice(0, 60) : lines).join("\n"));
      }
      const env: NodeJS.ProcessEnv = { ...process.env, KGRANK_THREADS: "1" };
      delete env.KGRANK_DATASETS;
      const datasets = process.env.KGRANK_DATASETS;
      expect(runArgs(["--dataset", "codex-s"], dir)).toEqual([
        "evaluate",
        "--dataset",
        "codex-s",
        "--dataset-dir",
        datasets ?? p("datasets"),
      ]);
      process.env.KGRANK_DATASETS = "rel";
      expect(runArgs(["--dataset=codex-s"], dir)).toEqual(["evaluate", "--dataset=codex-s", "--dataset-dir", p("rel")]);
      if (datasets === undefined) delete process.env.KGRANK_DATASETS;
      else process.env.KGRANK_DATASETS = datasets;
      expect(runArgs(["--dataset", "umls"], dir)).toEqual(["evaluate", "--dataset", "umls"]); // bundled: from the package
      expect(runArgs(["--positive-scores", "p.npy", "--negative-scores", "n.npy"], dir)).not.toContain("--dataset-dir");
      const w = worker({ cwd: elsewhere(), env, lockMs: 30_000 });
      const args = ["--dataset", "codex-s", "--metrics", "mrr", "--format", "json"];
      const q = await run(
        ["submit", "--redis", url(), "--shards", "2", "--state-dir", "states", "--quiet", ...args],
        env,
      );
      expect(q.status, q.stderr).toBe(0);
      const single = await run(["evaluate", ...args], env);
      expect(JSON.parse(single.stdout).triples, "the submitter's copy").toBe(60);
      expect(q.stdout).toBe(single.stdout);
      await kill(w);
    }, 60_000);

    it("a merged run leaves no job in Redis and, without --keep-states, no state file", async () => {
      const { Queue } = await import("bullmq");
      const queue = new Queue("retention", { connection: { host: "127.0.0.1", port, maxRetriesPerRequest: null } });
      const states = p("retention-states");
      const w = worker({ queue: "retention", stateDir: states, lockMs: 30_000 });
      const args = ["--dataset", "nations", "--metrics", "mrr"];
      const got = await submitRun({ redis: url(), queue: "retention", shards: 2, stateDir: states, args, quiet: true });
      expect(got.shards).toHaveLength(2);
      expect(await queue.getJobCounts()).toEqual(expect.objectContaining({ completed: 0, failed: 0, waiting: 0 }));
      expect(readdirSync(states)).toEqual([]);
      const kept = await run([
        "submit",
        "--redis",
        url(),
        "--queue",
        "retention",
        "--shards",
        "2",
        "--state-dir",
        states,
        "--keep-states",
        "--quiet",
        ...args,
      ]);
      expect(kept.status, kept.stderr).toBe(0);
      expect(readdirSync(states).filter((f) => f.endsWith(".state"))).toHaveLength(2);
      expect(await queue.getJobCounts()).toEqual(expect.objectContaining({ completed: 0, failed: 0, waiting: 0 }));
      await kill(w);
      await queue.close();
    }, 60_000);

    it("refuses bad queue flags with one line", async () => {
      const bad = await run(["submit", "--redis", "http://x", "--shards", "2", "--state-dir", p("s")]);
      expect(bad.stderr).toMatch(/^kgrank: --redis: must be a redis:\/\/ or rediss:\/\/ \(TLS\) URL, got http:\n$/);
      const shard = await run(["submit", "--redis", url(), "--shards", "2", "--state-dir", p("s"), "--shard", "0/2"]);
      expect(shard.stderr).toMatch(/unknown option '--shard'/); // submit makes its own shards
      for (const flag of [
        ["--sample-tasks", "20"],
        ["--estimate-full"],
        ["--constrain-candidates", "train"],
        ["--quadruples", "kg"],
      ]) {
        const one = await run(["submit", "--redis", url(), "--shards", "2", "--state-dir", p("s"), ...flag]);
        expect(one.stderr).toMatch(new RegExp(`^kgrank: ${flag[0]}: is not run by queue jobs .*kgrank evaluate\n$`));
      }
      const base = ["submit", "--redis", url(), "--shards", "2", "--state-dir", p("s"), "--entity-shards", "2"];
      const noModel = await run([...base, "--dataset", "nations"]);
      expect(noModel.stderr).toMatch(/^kgrank: --entity-shards: splits a model's entity table: give --model-dir/);
      const tooMany = await run([...base.slice(0, -1), "100000", "--dataset", "nations"]);
      expect(tooMany.stderr).toMatch(
        /^kgrank: --entity-shards: must be an integer >= 1 with --shards x --entity-shards at most 100000 jobs/,
      );
    });
  },
);
