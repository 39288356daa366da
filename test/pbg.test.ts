/**
 * PyTorch-BigGraph checkpoints (`kgrank evaluate --model-dir CHECKPOINT --dataset-dir EDGES`): the small checkpoints
 * of test/fixtures/pbg (written by make_checkpoint.py with h5py in PBG's layout: two entity types, one in two
 * partitions of unequal size, one relation per operator, every comparator with and without bias, global embeddings,
 * dynamic relations) ranked on this project's backend. Their ranks must be those of the independent NumPy
 * implementation of PBG's scoring (reference.py): against its committed output (expected-ranks.json) always, and
 * against a live run of it where Python with h5py and NumPy is installed (CI requires it). Reading in chunks under
 * --memory, TSV splits of PBG's names and the edge folders give the same ranks; bad checkpoints are one-line errors
 * naming the file and the fix.
 */
import { spawnSync } from "node:child_process";
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

import { evaluatePbgCheckpoint, KgrankInputError, type RankResults } from "../src/index";
import { backendLabel } from "./helpers/backend";
import { expectUserError, kgrank as runIn, type Run } from "./helpers/cli";
import { external, pythonWith } from "./helpers/external";
import { ranksOf, sortedTasks, type PbgTask } from "./helpers/pbg-ranks";
import { runKgrankProcess } from "./helpers/process";
import { tempDir } from "./helpers/temp";

const FIX = path.resolve(__dirname, "fixtures", "pbg");
const dir = tempDir("pbg");
const kgrank = (args: string[]): Promise<Run> => runIn(args, dir);
const expected = JSON.parse(readFileSync(path.join(FIX, "expected-ranks.json"), "utf8")) as Record<
  string,
  [string, number, number, number, number, number, number][]
>;
const CHECKPOINTS = Object.keys(expected);

async function evaluate(name: string, extra: string[] = [], edges?: string): Promise<{ run: Run; ranks: PbgTask[] }> {
  const graph = path.join(FIX, name.split("/")[0]!);
  const out = path.join(dir, `${name.replace("/", "-")}-${extra.join("").replace(/\W/g, "")}.npz`);
  const run = await kgrank([
    "evaluate",
    "--quiet",
    "--model-dir",
    path.join(graph, "checkpoints", name.split("/")[1]!),
    "--dataset-dir",
    edges ?? path.join(graph, "edges"),
    "--ranks-out",
    out,
    ...extra,
  ]);
  expect(run.status, run.stderr).toBe(0);
  return { run, ranks: ranksOf(out) };
}

describe(`PyTorch-BigGraph checkpoints [${backendLabel}]`, () => {
  it("the fixtures cover every operator, comparator, bias, global embeddings, dynamic relations and ties", () => {
    const configs = CHECKPOINTS.map(
      (c) =>
        JSON.parse(
          readFileSync(path.join(FIX, c.split("/")[0]!, "checkpoints", c.split("/")[1]!, "config.json"), "utf8"),
        ) as {
          comparator: string;
          bias: boolean;
          global_emb: boolean;
          dynamic_relations: boolean;
          relations: { operator: string }[];
        },
    );
    const ops = new Set(configs.flatMap((c) => c.relations.map((r) => r.operator)));
    expect([...ops].sort()).toEqual(["affine", "complex_diagonal", "diagonal", "linear", "none", "translation"]);
    for (const comparator of ["dot", "cos", "l2", "squared_l2"])
      for (const bias of [false, true])
        expect(configs.some((c) => c.comparator === comparator && c.bias === bias && !c.dynamic_relations)).toBe(true);
    expect(configs.some((c) => c.global_emb)).toBe(true);
    expect(configs.filter((c) => c.dynamic_relations).length).toBeGreaterThan(1);
    // Realistic ties: some task's pessimistic rank exceeds its optimistic one.
    expect(Object.values(expected).some((ts) => ts.some((t) => t[5] > t[4]))).toBe(true);
  });

  for (const name of CHECKPOINTS) {
    it(`${name}: every test task's ranks and typed candidate count are the NumPy reference's`, async () => {
      const { run, ranks } = await evaluate(name);
      expect(ranks).toEqual(sortedTasks(expected[name]!));
      expect(run.stdout).toMatch(/PyTorch-BigGraph/);
    });
  }

  /** RankResults.tasks() as the reference's rows. */
  const tasksOf = (r: RankResults): PbgTask[] => {
    const t = r.tasks();
    return sortedTasks(
      t.side.map((s, i) => [
        s,
        t.head[i]!,
        t.relation[i]!,
        t.tail[i]!,
        t.optimistic[i]!,
        t.pessimistic[i]!,
        t.numCandidates[i]!,
      ]),
    );
  };

  it("evaluatePbgCheckpoint (the library call) ranks as the CLI and the reference, typed and dynamic", async () => {
    for (const name of ["typed/cos-bias", "dynamic/complex_diagonal-cos-bias"]) {
      const [graph, ckpt] = name.split("/") as [string, string];
      const results = await evaluatePbgCheckpoint({
        checkpoint: path.join(FIX, graph, "checkpoints", ckpt),
        dataset: path.join(FIX, graph, "edges"),
        memoryBudget: 4096,
      });
      expect(tasksOf(results)).toEqual(sortedTasks(expected[name]!));
    }
    const heads = await evaluatePbgCheckpoint({
      checkpoint: path.join(FIX, "typed", "checkpoints", "dot"),
      dataset: path.join(FIX, "typed", "edges"),
      sides: "head",
    });
    expect(tasksOf(heads)).toEqual(sortedTasks(expected["typed/dot"]!.filter((t) => t[0] === "head")));
    await expect(
      evaluatePbgCheckpoint({
        checkpoint: path.join(FIX, "typed", "checkpoints", "dot"),
        dataset: path.join(FIX, "typed", "edges"),
        split: "tests" as "test",
      }),
    ).rejects.toThrow(KgrankInputError);
  });

  it("typed candidates: a task's candidates are its relation's type, and E / Var follow the typed sets", async () => {
    const { run, ranks } = await evaluate("typed/dot", ["--format", "json"]);
    // 21 entities: user 7 + 5, item 9; the tail of rel_none (user -> item) is an item: at most 9 candidates.
    const tailNone = ranks.filter((t) => t[0] === "tail" && t[2] === 0);
    expect(tailNone.length).toBeGreaterThan(0);
    for (const t of tailNone) expect(t[6]).toBeLessThanOrEqual(9);
    expect(run.stdout).toMatch(/entity types/);
  });

  it("--memory too small for whole score rows ranks partition by partition in slices: the same ranks and metrics", async () => {
    for (const name of ["typed/l2-bias", "typed/linear".replace("linear", "cos"), "dynamic/affine-l2"]) {
      const whole = await evaluate(name);
      // 2000 bytes: chunks of 5 rows (the partitions of 7, 5, 9, 6, 8, 5 rows each split), slices of a few rows.
      const sliced = await evaluate(name, ["--memory", "2000"]);
      expect(sliced.ranks).toEqual(whole.ranks);
      expect(sliced.ranks).toEqual(sortedTasks(expected[name]!));
    }
    // The library: whole rows with typed candidate sets, and slices, give equal results.
    const opts = {
      checkpoint: path.join(FIX, "typed", "checkpoints", "squared_l2-bias"),
      dataset: path.join(FIX, "typed", "edges"),
    };
    const whole = await evaluatePbgCheckpoint(opts);
    const sliced = await evaluatePbgCheckpoint({ ...opts, memoryBudget: 2000 });
    expect(whole.info.candidates).toBeDefined();
    expect(sliced.info.candidates).toBeUndefined();
    expect(tasksOf(sliced)).toEqual(tasksOf(whole));
    for (const key of ["both.realistic.mrr", "tail.amri", "both.z_mrr"] as const) {
      expect(sliced.get(key)).toBe(whole.get(key));
    }
    expect(sliced.expected("mrr")).toBe(whole.expected("mrr"));
  });

  it("task shards (--shard i/2 --save-state, then kgrank merge) give the whole run's numbers", async () => {
    const graph = path.join(FIX, "typed");
    const args = [
      "--model-dir",
      path.join(graph, "checkpoints", "linear".replace("linear", "cos-bias")),
      "--dataset-dir",
      path.join(graph, "edges"),
    ];
    const whole = await kgrank(["evaluate", "--quiet", "--format", "json", ...args]);
    expect(whole.status, whole.stderr).toBe(0);
    for (const i of [0, 1]) {
      const r = await kgrank(["evaluate", "--quiet", "--shard", `${i}/2`, "--save-state", `shard${i}.state`, ...args]);
      expect(r.status, r.stderr).toBe(0);
    }
    const merged = await kgrank(["merge", "shard0.state", "shard1.state", "--format", "json"]);
    expect(merged.status, merged.stderr).toBe(0);
    const values = (r: Run) => (JSON.parse(r.stdout) as { results: unknown }).results;
    expect(values(merged)).toEqual(values(whole));
  });

  it("TSV splits of PBG's entity names rank as the edge folders", async () => {
    const graph = path.join(FIX, "typed");
    const tsv = path.join(dir, "typed-tsv");
    cpSync(path.join(graph, "entities"), path.join(tsv, "entities"), { recursive: true });
    const names: string[] = [];
    for (const [t, parts] of [
      ["user", 2],
      ["item", 1],
    ] as const)
      for (let p = 0; p < parts; p++)
        names.push(
          ...(JSON.parse(
            readFileSync(path.join(graph, "entities", `entity_names_${t}_${p}.json`), "utf8"),
          ) as string[]),
        );
    const config = JSON.parse(readFileSync(path.join(graph, "checkpoints", "dot", "config.json"), "utf8")) as {
      relations: { name: string }[];
    };
    const edges = await evaluate("typed/dot");
    // The edge folders' triples, back to names (global ids are the names' order), as train / valid / test TSV.
    for (const split of ["train", "valid", "test"]) {
      const r = await kgrank([
        "evaluate",
        "--quiet",
        "--model-dir",
        path.join(graph, "checkpoints", "dot"),
        "--dataset-dir",
        path.join(graph, "edges"),
        "--split",
        split,
        "--ranks-out",
        path.join(dir, `split-${split}.npz`),
      ]);
      expect(r.status, r.stderr).toBe(0);
      const lines = new Set(
        ranksOf(path.join(dir, `split-${split}.npz`)).map(
          (t) => `${names[t[1]]}\t${config.relations[t[2]]!.name}\t${names[t[3]]}`,
        ),
      );
      writeFileSync(path.join(tsv, `${split}.tsv`), [...lines].join("\n") + "\n");
    }
    const viaTsv = await evaluate("typed/dot", [], tsv);
    expect(viaTsv.ranks).toEqual(edges.ranks);
  });
});

describe(`PyTorch-BigGraph entity names, read only by what prints or keeps them [${backendLabel}]`, () => {
  it("a plain run never reads them; --ranks-out .tsv prints them; a bad names file fails such a run before it ranks", async () => {
    const graph = path.join(dir, "names");
    rmSync(graph, { recursive: true, force: true });
    cpSync(path.join(FIX, "typed", "edges"), path.join(graph, "edges"), { recursive: true });
    cpSync(path.join(FIX, "typed", "entities"), path.join(graph, "entities"), { recursive: true });
    const ckpt = path.join(FIX, "typed", "checkpoints", "dot");
    const args = ["evaluate", "--quiet", "--model-dir", ckpt, "--dataset-dir", path.join(graph, "edges")];
    const tsv = path.join(graph, "ranks.tsv");
    const good = await kgrank([...args, "--ranks-out", tsv]);
    expect(good.status, good.stderr).toBe(0);
    const names = new Set<string>();
    for (const [t, parts] of [
      ["user", 2],
      ["item", 1],
    ] as const)
      for (let p = 0; p < parts; p++)
        for (const n of JSON.parse(
          readFileSync(path.join(graph, "entities", `entity_names_${t}_${p}.json`), "utf8"),
        ) as string[])
          names.add(n);
    const rows = readFileSync(tsv, "utf8").trim().split("\n").slice(1);
    expect(rows.length).toBeGreaterThan(10);
    for (const row of rows) {
      const [, head, , tail] = row.split("\t");
      expect(names.has(head!) && names.has(tail!), row).toBe(true);
    }
    writeFileSync(path.join(graph, "entities", "entity_names_user_1.json"), "[not json");
    const plain = await kgrank(args);
    expect(plain.status, plain.stderr).toBe(0);
    rmSync(tsv);
    expectUserError(
      await kgrank([...args, "--ranks-out", tsv]),
      /entity_names_user_1\.json is not valid JSON: PBG writes a JSON list of names there/,
    );
    expect(() => readFileSync(tsv)).toThrow();
  });
});

const py = pythonWith("h5py", "numpy");
const numpy = external(
  "Python with h5py and NumPy",
  py !== null,
  "apt-get install python3-h5py python3-numpy (Debian's /usr/bin/python3 has them)",
);

describe(`PyTorch-BigGraph checkpoints against a live NumPy implementation of PBG's scoring [${backendLabel}]`, () => {
  it.skipIf(numpy.missing)(numpy.name("every checkpoint: no task's ranks differ, none is missing"), async () => {
    for (const name of CHECKPOINTS) {
      const [graph, ckpt] = name.split("/") as [string, string];
      const out = path.join(dir, `live-${graph}-${ckpt}.npz`);
      const r = await kgrank([
        "evaluate",
        "--quiet",
        "--model-dir",
        path.join(FIX, graph, "checkpoints", ckpt),
        "--dataset-dir",
        path.join(FIX, graph, "edges"),
        "--ranks-out",
        out,
      ]);
      expect(r.status, r.stderr).toBe(0);
      const ref = spawnSync(
        py!,
        [
          path.join(FIX, "reference.py"),
          path.join(FIX, graph, "checkpoints", ckpt),
          path.join(FIX, graph, "edges"),
          "test",
          out,
        ],
        { encoding: "utf8" },
      );
      expect(ref.status, ref.stderr).toBe(0);
      const report = JSON.parse(ref.stdout) as { compared: number; mismatchCount: number; missingCount: number };
      expect(report, name).toMatchObject({ mismatchCount: 0, missingCount: 0 });
      expect(report.compared).toBe(expected[name]!.length);
    }
  });
});

describe(`PyTorch-BigGraph checkpoints: bad input [${backendLabel}]`, () => {
  /** A copy of the typed dot checkpoint with `change` applied. */
  function broken(label: string, change: (ckpt: string) => void): string {
    const ckpt = path.join(dir, "broken", label);
    rmSync(ckpt, { recursive: true, force: true });
    cpSync(path.join(FIX, "typed", "checkpoints", "dot"), ckpt, { recursive: true });
    change(ckpt);
    return ckpt;
  }
  const edges = path.join(FIX, "typed", "edges");
  const run = (ckpt: string, extra: string[] = ["--dataset-dir", edges]) =>
    kgrank(["evaluate", "--quiet", "--model-dir", ckpt, ...extra]);
  const config = (ckpt: string, edit: (c: Record<string, unknown>) => void) => {
    const file = path.join(ckpt, "config.json");
    const c = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    edit(c);
    writeFileSync(file, JSON.stringify(c));
  };

  it("a missing partition names its file and says to copy the whole checkpoint", async () => {
    const ckpt = broken("missing-partition", (c) => rmSync(path.join(c, "embeddings_user_1.v3.h5")));
    expectUserError(
      await run(ckpt),
      /--model-dir: .*embeddings_user_1\.v3\.h5: is missing: .*copy the whole checkpoint/,
    );
  });

  it("checkpoint_version.txt that the files do not match names both versions", async () => {
    const ckpt = broken("version", (c) => writeFileSync(path.join(c, "checkpoint_version.txt"), "4\n"));
    expectUserError(
      await run(ckpt),
      /checkpoint_version\.txt: says version 4, but the folder's files are of version 3/,
    );
  });

  it("an unknown operator or comparator names config.json and lists PBG's", async () => {
    const op = broken("operator", (c) =>
      config(c, (cfg) => ((cfg.relations as { operator: string }[])[2]!.operator = "rotate")),
    );
    expectUserError(
      await run(op),
      /config\.json: "relations\[2\]\.operator" is "rotate".*none, translation, diagonal, linear, affine, complex_diagonal/,
    );
    const cmp = broken("comparator", (c) => config(c, (cfg) => (cfg.comparator = "manhattan")));
    expectUserError(await run(cmp), /config\.json: "comparator" is "manhattan".*dot, cos, l2, squared_l2/);
  });

  it("an HDF5 file that is not PBG's, and a file that is not HDF5, name the file", async () => {
    const other = broken("not-pbg", (c) =>
      cpSync(path.join(edges, "train", "edges_0_0.h5"), path.join(c, "embeddings_item_0.v3.h5")),
    );
    expectUserError(
      await run(other),
      /embeddings_item_0\.v3\.h5 has no dataset "embeddings".*not the file PyTorch-BigGraph writes/,
    );
    const text = broken("not-hdf5", (c) => writeFileSync(path.join(c, "model.v3.h5"), "not an HDF5 file\n"));
    expectUserError(await run(text), /model\.v3\.h5 is not an HDF5 file/);
  });

  it("a truncated HDF5 file, in a process of its own: one line on stderr, HDF5's own diagnostics held back", () => {
    const ckpt = broken("truncated", (c) => {
      const file = path.join(c, "model.v3.h5");
      writeFileSync(file, readFileSync(file).subarray(0, 3000));
    });
    const r = runKgrankProcess(["evaluate", "--quiet", "--model-dir", ckpt, "--dataset-dir", edges], { cwd: dir });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr.trim().split("\n"), r.stderr).toHaveLength(1);
    expect(r.stderr).toMatch(/model\.v3\.h5 could not be read as HDF5 .*truncated; copy it again/);
  });

  it("kgrank predict with a PBG checkpoint says that evaluate ranks it", async () => {
    const r = await kgrank([
      "predict",
      "--model-dir",
      path.join(FIX, "typed", "checkpoints", "dot"),
      "--dataset-dir",
      edges,
      "--top-k",
      "3",
      "-o",
      "top.npz",
    ]);
    expectUserError(r, /--model-dir: .* is a PyTorch-BigGraph checkpoint, which kgrank evaluate ranks/);
  });

  it("a parameter of the wrong shape, and no --dataset-dir, say what is expected", async () => {
    const ckpt = broken("dimension", (c) => config(c, (cfg) => (cfg.dimension = 8)));
    expectUserError(await run(ckpt), /embeddings_user_0\.v3\.h5: "embeddings" has shape \(7, 6\).*\(entities, 8\)/);
    expectUserError(
      await run(path.join(FIX, "typed", "checkpoints", "dot"), []),
      /--dataset-dir: is required with a PyTorch-BigGraph checkpoint/,
    );
  });
});
