/**
 * PyTorch-BigGraph's own sampled evaluation (`kgrank evaluate --pbg-sampled`, evaluatePbgCheckpoint's protocol
 * "pbg-sampled"): each test edge ranked against its chunk's other edges and uniform draws from its partition, as
 * torchbiggraph_eval does, for comparing kgrank's exact ranks with the numbers PBG prints. The per-task pessimistic
 * ranks and candidate counts must be those of the independent NumPy implementation of the protocol
 * (test/fixtures/pbg/reference.py --pbg-sampled, which also implements kgrank's counter-based draw from its
 * definition): against its committed output (expected-sampled.json) always, and against a live run where Python with
 * h5py and NumPy is installed (CI requires it). Cases: batch and uniform negatives, uniform ones alone, dynamic
 * relations, partitions of unequal size.
 */
import { spawnSync } from "node:child_process";
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

import { evaluatePbgCheckpoint } from "../src/index";
import { openPbgCheckpoint } from "../src/io/pbg/checkpoint";
import { pbgDataset } from "../src/io/pbg/graph";
import { backendLabel } from "./helpers/backend";
import { expectUserError, kgrank as runIn, type Run } from "./helpers/cli";
import { external, pythonWith } from "./helpers/external";
import { ranksOf, sortedTasks } from "./helpers/pbg-ranks";
import { tempDir } from "./helpers/temp";

const FIX = path.resolve(__dirname, "fixtures", "pbg");
const dir = tempDir("pbg-sampled");
const kgrank = (args: string[]): Promise<Run> => runIn(args, dir);

interface Case {
  checkpoint: string;
  config: { batch_size: number; num_batch_negs: number; num_uniform_negs: number };
  seed: number;
}
const expected = JSON.parse(readFileSync(path.join(FIX, "expected-sampled.json"), "utf8")) as {
  cases: Case[];
  ranks: Record<string, [string, number, number, number, number, number][]>;
};
type Row = [string, number, number, number, number, number];

/** A copy of the case's checkpoint whose config.json carries the case's sizes. */
function checkpointOf(c: Case): string {
  const [graph, name] = c.checkpoint.split("/") as [string, string];
  const ckpt = path.join(dir, "ckpt", graph, name);
  rmSync(ckpt, { recursive: true, force: true });
  cpSync(path.join(FIX, graph, "checkpoints", name), ckpt, { recursive: true });
  const file = path.join(ckpt, "config.json");
  writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), ...c.config }));
  return ckpt;
}
const edgesOf = (c: Case) => path.join(FIX, c.checkpoint.split("/")[0]!, "edges");

/** `kgrank evaluate --pbg-sampled` of a case: its --ranks-out as [side, head, relation, tail, pessimistic, candidates]. */
async function sampled(c: Case, extra: string[] = []): Promise<{ run: Run; rows: Row[] }> {
  const out = path.join(dir, `${c.checkpoint.replace("/", "-")}-${c.seed}-${extra.join("").replace(/\W/g, "")}.npz`);
  const run = await kgrank([
    "evaluate",
    "--quiet",
    "--model-dir",
    checkpointOf(c),
    "--dataset-dir",
    edgesOf(c),
    "--pbg-sampled",
    "--seed",
    String(c.seed),
    "--ranks-out",
    out,
    ...extra,
  ]);
  expect(run.status, run.stderr).toBe(0);
  const rows = ranksOf(out).map(([side, h, r, t, , pess, cands]): Row => [side, h, r, t, pess, cands]);
  return { run, rows: sortedTasks(rows) };
}

describe(`PyTorch-BigGraph's sampled protocol [${backendLabel}]`, () => {
  it("the cases cover batch and uniform negatives, uniform ones alone, dynamic relations and ties", () => {
    const cs = expected.cases;
    expect(cs.some((c) => c.config.num_batch_negs > 0 && c.config.num_uniform_negs > 0)).toBe(true);
    expect(cs.some((c) => c.config.num_batch_negs === 0)).toBe(true);
    expect(cs.some((c) => c.checkpoint.startsWith("dynamic/"))).toBe(true);
    // A batch shorter than a chunk's multiple leaves a shorter last chunk: fewer candidates for its rows.
    for (const c of cs.filter((x) => x.config.num_batch_negs > 0)) {
      const counts = new Set(expected.ranks[c.checkpoint]!.map((r) => r[5]));
      expect(counts.size, c.checkpoint).toBeGreaterThan(1);
    }
  });

  for (const c of expected.cases) {
    it(`${c.checkpoint} (${JSON.stringify(c.config)}, seed ${c.seed}): every task's pessimistic rank and candidates are the reference's`, async () => {
      const { run, rows } = await sampled(c);
      expect(rows).toEqual(sortedTasks(expected.ranks[c.checkpoint]!));
      expect(run.stdout).toMatch(/unfiltered \(PyTorch-BigGraph's sampled protocol\)/);
      expect(run.stdout).toContain(
        `batches of ${c.config.batch_size}, ${c.config.num_batch_negs} batch and ${c.config.num_uniform_negs} uniform negatives, seed ${c.seed}`,
      );
    });
  }

  it("evaluatePbgCheckpoint with protocol pbg-sampled gives the CLI's ranks; another seed draws other negatives", async () => {
    const c = expected.cases[0]!;
    const ckpt = checkpointOf(c);
    const lib = await evaluatePbgCheckpoint({
      checkpoint: ckpt,
      dataset: edgesOf(c),
      protocol: "pbg-sampled",
      seed: c.seed,
    });
    const t = lib.tasks();
    const rows = sortedTasks(
      t.side.map((s, i): Row => [s, t.head[i]!, t.relation[i]!, t.tail[i]!, t.pessimistic[i]!, t.numCandidates[i]!]),
    );
    expect(rows).toEqual(sortedTasks(expected.ranks[c.checkpoint]!));
    const other = await evaluatePbgCheckpoint({
      checkpoint: ckpt,
      dataset: edgesOf(c),
      protocol: "pbg-sampled",
      seed: c.seed + 1,
    });
    const o = other.tasks();
    expect(o.numCandidates).toEqual(t.numCandidates);
    expect(Array.from(o.pessimistic)).not.toEqual(Array.from(t.pessimistic));
  });

  it("bad input: a protocol that does not exist, a filter with it, --pbg-sampled on another model or with shards, no negatives", async () => {
    const c = expected.cases[0]!;
    const ckpt = checkpointOf(c);
    await expect(
      evaluatePbgCheckpoint({ checkpoint: ckpt, dataset: edgesOf(c), protocol: "ogb" as "exact" }),
    ).rejects.toThrow(/protocol: must be "exact" or "pbg-sampled"/);
    await expect(
      evaluatePbgCheckpoint({ checkpoint: ckpt, dataset: edgesOf(c), protocol: "pbg-sampled", filter: ["train"] }),
    ).rejects.toThrow(/filter: does not apply to the pbg-sampled protocol/);
    expectUserError(
      await kgrank(["evaluate", "--quiet", "--dataset", "nations", "--pbg-sampled"]),
      /--pbg-sampled: ranks a PyTorch-BigGraph checkpoint/,
    );
    expectUserError(
      await kgrank([
        "evaluate",
        "--quiet",
        "--model-dir",
        ckpt,
        "--dataset-dir",
        edgesOf(c),
        "--pbg-sampled",
        "--shard",
        "0/2",
        "--save-state",
        path.join(dir, "s.json"),
      ]),
      /--shard: does not apply to --pbg-sampled/,
    );
    const none = checkpointOf({ ...c, config: { batch_size: 4, num_batch_negs: 0, num_uniform_negs: 0 } });
    expectUserError(
      await kgrank(["evaluate", "--quiet", "--model-dir", none, "--dataset-dir", edgesOf(c), "--pbg-sampled"]),
      /config\.json: "num_batch_negs" and "num_uniform_negs" are both 0/,
    );
    const bad = checkpointOf({ ...c, config: { batch_size: 0, num_batch_negs: 3, num_uniform_negs: 5 } });
    expectUserError(
      await kgrank(["evaluate", "--quiet", "--model-dir", bad, "--dataset-dir", edgesOf(c), "--pbg-sampled"]),
      /config\.json: "batch_size" is 0: an integer of at least 1 is expected/,
    );
  });
});

describe(`PyTorch-BigGraph's sampled protocol, random sizes [${backendLabel}]`, () => {
  it("every task's candidates are 1 + its chunk's other edges + the draws, its rank within them, the same for a seed", async () => {
    const ckptDir = path.join(FIX, "typed", "checkpoints", "dot");
    const edges = path.join(FIX, "typed", "edges");
    const ckpt = await openPbgCheckpoint(ckptDir, { entityDirs: [path.join(FIX, "typed", "entities")] });
    const ds = await pbgDataset(ckpt, edges, "test");
    const test = ds.splits.test;
    // The chunk lengths the protocol gives, from the groups of (lhs partition, rhs partition, relation) alone.
    const partOf = (e: number, type: string) => {
      const t = ckpt.types.find((x) => x.name === type)!;
      return t.partitionOffsets.filter((o) => o <= e).length - 1;
    };
    const groups = new Map<string, number>();
    for (let i = 0; i < test.length / 3; i++) {
      const rel = ckpt.relations[test[3 * i + 1]!]!;
      const key = `${partOf(test[3 * i]!, rel.lhs)},${partOf(test[3 * i + 2]!, rel.rhs)},${test[3 * i + 1]}`;
      groups.set(key, (groups.get(key) ?? 0) + 1);
    }
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 7 }),
        fc.integer({ min: 0, max: 2 ** 32 - 1 }),
        async (batch, negs, uniform, seed) => {
          fc.pre(negs + uniform > 0);
          const c: Case = {
            checkpoint: "typed/dot",
            config: { batch_size: batch, num_batch_negs: negs, num_uniform_negs: uniform },
            seed,
          };
          const dirOf = checkpointOf(c);
          const r = await evaluatePbgCheckpoint({ checkpoint: dirOf, dataset: edges, protocol: "pbg-sampled", seed });
          const t = r.tasks();
          const want: number[] = [];
          const size = negs > 0 ? negs : uniform;
          for (const n of groups.values())
            for (let b = 0; b < n; b += batch) {
              const len = Math.min(batch, n - b);
              const chunk = Math.min(size, len);
              for (let at = 0; at < len; at += chunk) {
                const cl = Math.min(chunk, len - at);
                for (let j = 0; j < cl; j++) want.push(1 + (negs > 0 ? cl - 1 : 0) + uniform);
              }
            }
          for (const side of ["head", "tail"]) {
            const got = Array.from(t.numCandidates.filter((_, i) => t.side[i] === side)).sort((x, y) => x - y);
            expect(got).toEqual([...want].sort((x, y) => x - y));
          }
          for (let i = 0; i < t.side.length; i++) {
            expect(t.pessimistic[i]).toBeGreaterThanOrEqual(t.optimistic[i]!);
            expect(t.optimistic[i]).toBeGreaterThanOrEqual(1);
            expect(t.pessimistic[i]).toBeLessThanOrEqual(t.numCandidates[i]!);
          }
          const again = await evaluatePbgCheckpoint({
            checkpoint: dirOf,
            dataset: edges,
            protocol: "pbg-sampled",
            seed,
          });
          expect(Array.from(again.tasks().pessimistic)).toEqual(Array.from(t.pessimistic));
        },
      ),
      { numRuns: 25, seed: 5 },
    );
  });
});

const py = pythonWith("h5py", "numpy");
const numpy = external(
  "Python with h5py and NumPy",
  py !== null,
  "apt-get install python3-h5py python3-numpy (Debian's /usr/bin/python3 has them)",
);

describe(`PyTorch-BigGraph's sampled protocol against a live NumPy implementation [${backendLabel}]`, () => {
  it.skipIf(numpy.missing)(numpy.name("every case: no task's rank or candidate count differs"), async () => {
    for (const c of expected.cases) {
      const { rows } = await sampled(c);
      const cfg = c.config;
      const ref = spawnSync(
        py!,
        [
          path.join(FIX, "reference.py"),
          "--pbg-sampled",
          path.join(FIX, c.checkpoint.split("/")[0]!, "checkpoints", c.checkpoint.split("/")[1]!),
          edgesOf(c),
          "test",
          String(cfg.batch_size),
          String(cfg.num_batch_negs),
          String(cfg.num_uniform_negs),
          String(c.seed),
        ],
        { encoding: "utf8" },
      );
      expect(ref.status, ref.stderr).toBe(0);
      expect(rows, c.checkpoint).toEqual(sortedTasks(JSON.parse(ref.stdout) as Row[]));
    }
  });
});
