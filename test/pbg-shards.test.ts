/**
 * PyTorch-BigGraph checkpoints in entity shards (`kgrank evaluate --model-dir CHECKPOINT --entity-shard I/M
 * --save-state FILE`, then `kgrank merge`; `kgrank submit --entity-shards M` on a real Redis): each shard ranks against
 * its partitions only, and the merged states print, byte for byte, what the one-process run prints (typed candidates,
 * adjusted and z-scored metrics included) for partitions of unequal size and two entity types, M = 1, 2, 3 and more
 * shards than partitions, whole score rows and slices under --memory. Bad shard flags are one-line errors naming them.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { parseNpz } from "../src/index";
import { openPbgCheckpoint } from "../src/io/pbg/checkpoint";
import { pbgEntityFolders } from "../src/io/pbg/graph";
import { PbgEmbeddings } from "../src/io/pbg/tables";
import { pbgShardRanges } from "../src/evaluation/pbg";
import { backendLabel } from "./helpers/backend";
import { expectUserError, kgrank as runIn, type Run } from "./helpers/cli";
import { bullmq, freePort, killAndWait, redisServer, startRedisServer } from "./helpers/redis";
import { KGRANK_BIN, runKgrankProcess } from "./helpers/process";
import { tempDir } from "./helpers/temp";

const FIX = path.resolve(__dirname, "fixtures", "pbg");
const dir = tempDir("pbg-shards");
const kgrank = (args: string[]): Promise<Run> => runIn(args, dir);
const expected = JSON.parse(readFileSync(path.join(FIX, "expected-ranks.json"), "utf8")) as Record<
  string,
  [string, number, number, number, number, number, number][]
>;

/** The flags of a fixture checkpoint ("typed/cos-bias") with its edges. */
const model = (name: string) => {
  const [graph, ckpt] = name.split("/") as [string, string];
  return ["--model-dir", path.join(FIX, graph, "checkpoints", ckpt), "--dataset-dir", path.join(FIX, graph, "edges")];
};

/** --ranks-out as the reference's rows (side, head, relation, tail, optimistic, pessimistic, candidates), sorted. */
function ranksOf(file: string): (string | number)[][] {
  const a = parseNpz(readFileSync(file));
  const side = a.side!.data as Int8Array;
  const col = (k: string) => a[k]!.data as ArrayLike<number>;
  return Array.from({ length: side.length }, (_, i) => [
    side[i] === 0 ? "head" : "tail",
    col("head")[i]!,
    col("relation")[i]!,
    col("tail")[i]!,
    col("optimistic")[i]!,
    col("pessimistic")[i]!,
    col("num_candidates")[i]!,
  ]).sort((x, y) => (String(x) < String(y) ? -1 : 1));
}

/** M entity shards of `args` saved, then merged: the merge's run (JSON) and its --ranks-out file. */
async function shardsMerged(args: string[], count: number, label: string): Promise<{ merged: Run; ranks: string }> {
  const files: string[] = [];
  for (let i = 0; i < count; i++) {
    const file = `${label}-${i}-of-${count}.state`;
    const r = await kgrank(["evaluate", "--quiet", ...args, "--entity-shard", `${i}/${count}`, "--save-state", file]);
    expect(r.status, r.stderr).toBe(0);
    files.push(file);
  }
  const ranks = path.join(dir, `${label}-${count}.npz`);
  // The states in reverse order: kgrank merge orders them by shard.
  const merged = await kgrank(["merge", ...files.reverse(), "--format", "json", "--ranks-out", ranks]);
  expect(merged.status, merged.stderr).toBe(0);
  return { merged, ranks };
}

describe(`PyTorch-BigGraph checkpoints in entity shards [${backendLabel}]`, () => {
  it("shards follow partitions while M allows (two types, partitions of 7, 5 and 9), else split evenly", async () => {
    const name = path.join(FIX, "typed", "checkpoints", "cos-bias");
    const ckpt = await openPbgCheckpoint(name, { entityDirs: pbgEntityFolders(path.join(FIX, "typed", "edges")) });
    expect(ckpt.numEntities).toBe(21);
    expect(pbgShardRanges(ckpt, 1)).toEqual([[0, 21]]);
    // M = 2: the cut nearest to 10.5 among the partition boundaries 7 and 12.
    expect(pbgShardRanges(ckpt, 2)).toEqual([
      [0, 12],
      [12, 21],
    ]);
    expect(pbgShardRanges(ckpt, 3)).toEqual([
      [0, 7],
      [7, 12],
      [12, 21],
    ]);
    // More shards than partitions: the even split of any model's entity shards.
    expect(pbgShardRanges(ckpt, 4)).toEqual([
      [0, 5],
      [5, 10],
      [10, 15],
      [15, 21],
    ]);
    // A shard's tables hand out its rows only, and keep no other shard's partition whole.
    const tables = await PbgEmbeddings.open(ckpt, 1 << 20, [7, 12]);
    try {
      const user = ckpt.types.find((t) => t.name === "user")!;
      const seen = [...tables.chunks(user, [7, 12])].map(([start, , n]) => [start, n]);
      expect(seen).toEqual([[7, 5]]);
      expect([
        ...tables.chunks(
          ckpt.types.find((t) => t.name === "item")!,
          [7, 12],
        ),
      ]).toEqual([]);
      tables.rowsOf([0, 1, 8]);
      const kept = (tables as unknown as { kept: Map<{ index: number; type: { name: string } }, unknown> }).kept;
      expect([...kept.keys()].map((p) => `${p.type.name}/${p.index}`)).toEqual(["user/1"]);
    } finally {
      tables.close();
    }
  });

  // Whole partitions (M = 1, 2, 3 of 3 partitions) and more shards than partitions (M = 4: an even split); typed
  // candidate sets (two types, whole score rows) or none (slices under --memory; one entity type).
  const cases: { name: string; extra: string[]; counts: number[]; sets: boolean; sides: string[] }[] = [
    { name: "typed/cos-bias", extra: [], counts: [1, 2, 3, 4], sets: true, sides: ["head", "tail"] },
    { name: "typed/squared_l2-bias", extra: ["--memory", "2000"], counts: [3], sets: false, sides: ["head", "tail"] },
    {
      name: "dynamic/translation-dot-bias",
      extra: ["--sides", "tail", "--metrics", "mrr,amri,z_hits@3"],
      counts: [4],
      sets: false,
      sides: ["tail"],
    },
  ];
  for (const { name, extra, counts, sets, sides } of cases) {
    it(`${name}${extra.length ? ` ${extra.join(" ")}` : ""}: M entity shards merged print the one-process run byte for byte`, async () => {
      const args = [...model(name), ...extra];
      const whole = await kgrank(["evaluate", "--quiet", "--format", "json", ...args]);
      expect(whole.status, whole.stderr).toBe(0);
      // With typed candidate sets, the merged run reports the same sets (and the adjusted metrics they give).
      expect(whole.stdout.includes('"source": "PyTorch-BigGraph entity types"')).toBe(sets);
      for (const count of counts) {
        const { merged, ranks } = await shardsMerged(args, count, name.replace("/", "-"));
        expect(merged.stdout, `${count} entity shards`).toBe(whole.stdout);
        // The reference's ranks (NumPy, backend-independent): every backend's merged shards agree with it.
        const reference = expected[name]!.filter((t) => sides.includes(t[0]));
        expect(ranksOf(ranks)).toEqual(reference.map((t) => [...t]).sort((x, y) => (String(x) < String(y) ? -1 : 1)));
      }
    });
  }

  it("task shards x entity shards merge into the one-process run", async () => {
    const args = model("typed/dot");
    const whole = await kgrank(["evaluate", "--quiet", "--format", "json", ...args]);
    const files: string[] = [];
    for (const s of [0, 1])
      for (const e of [0, 1, 2]) {
        const file = `grid-${s}-${e}.state`;
        const r = await kgrank([
          "evaluate",
          "--quiet",
          ...args,
          "--shard",
          `${s}/2`,
          "--entity-shard",
          `${e}/3`,
          "--save-state",
          file,
        ]);
        expect(r.status, r.stderr).toBe(0);
        files.push(file);
      }
    const merged = await kgrank(["merge", ...files, "--format", "json"]);
    expect(merged.status, merged.stderr).toBe(0);
    expect(merged.stdout).toBe(whole.stdout);
    // A missing entity shard is named, and nothing is printed.
    expectUserError(await kgrank(["merge", ...files.slice(1)]), /shard 0\/2 entity shard 0\/3 of this run is missing/);
  });

  it("bad shard flags: I out of range, M above the entities, no --save-state: one line naming --entity-shard", async () => {
    const args = ["evaluate", "--quiet", ...model("dynamic/affine-l2"), "--save-state", "x.state"];
    expectUserError(await kgrank([...args, "--entity-shard", "2/2"]), /^kgrank: --entity-shard: I must be in \[0, 1\]/);
    expectUserError(
      await kgrank([...args, "--entity-shard", "0/20"]),
      /^kgrank: --entity-shard: 0\/20 splits the checkpoint's 19 entities into 20 shards: N must be at most 19/,
    );
    expectUserError(
      await kgrank(["evaluate", "--quiet", ...model("dynamic/affine-l2"), "--entity-shard", "0/2"]),
      /^kgrank: --entity-shard: needs --save-state FILE/,
    );
    expectUserError(
      await kgrank([...args, "--entity-shard", "0/2", "--workers", "2"]),
      /^kgrank: --workers: runs task shards of the whole entity set/,
    );
  });
});

// ---- kgrank submit --entity-shards M on a real Redis --------------------------------------------------------------

const redis = redisServer;
const bull = bullmq;

describe.skipIf(redis.missing || bull.missing)(
  (redis.missing ? redis : bull).name(
    `kgrank submit --entity-shards of a PyTorch-BigGraph checkpoint [${backendLabel}]`,
  ),
  () => {
    let port = 0;
    let server: ChildProcess | null = null;
    const workers: ChildProcess[] = [];
    beforeAll(async () => {
      port = await freePort();
      server = await startRedisServer(port);
    });
    afterAll(async () => {
      for (const w of workers) await killAndWait(w);
      await killAndWait(server);
    });

    it("workers rank a checkpoint's partitions as entity shards: the merged run prints the one-process run", async () => {
      const url = `redis://127.0.0.1:${port}`;
      const queue = `pbg-${process.pid}`;
      for (let i = 0; i < 2; i++) {
        const w = spawn(
          process.execPath,
          [KGRANK_BIN, "worker", "--redis", url, "--queue", queue, "--state-dir", "states", "--quiet"],
          { cwd: dir, env: { ...process.env, KGRANK_THREADS: "1" }, stdio: "ignore" },
        );
        workers.push(w);
      }
      const args = model("typed/cos-bias");
      const single = runKgrankProcess(["evaluate", ...args, "--format", "json", "--quiet"], { cwd: dir });
      expect(single.status, single.stderr).toBe(0);
      const q = runKgrankProcess(
        [
          "submit",
          "--redis",
          url,
          "--queue",
          queue,
          "--shards",
          "1",
          "--entity-shards",
          "3",
          "--state-dir",
          "states",
          ...args,
          "--format",
          "json",
          "--quiet",
        ],
        { cwd: dir },
      );
      expect(q.status, q.stderr).toBe(0);
      expect(q.stdout).toBe(single.stdout);
    }, 120_000);
  },
);
