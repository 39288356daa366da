/**
 * Sharded runs through the CLI: `kgrank evaluate --shard I/N --save-state FILE` per shard, then `kgrank merge` must
 * print exactly what the unsharded `kgrank evaluate` prints (JSON byte for byte; the text table up to its
 * "done in N ms" line), and refuse every way a set of shard files can be wrong, with one line naming the file.
 * In-process through `main(argv, out)` on this project's backend; `--workers` starts its own shard processes.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

import { backendInfo, FrequencyBaseline, loadDataset, RankEvaluator, writeNpy } from "../src/index";
import { backendLabel } from "./helpers/backend";
import { kgrank as runIn, type Run } from "./helpers/cli";
import { SHARED_DATASETS, sharedDataset } from "./helpers/datasets";
import { tempDir } from "./helpers/temp";

const dir = tempDir("shard");
const p = (name: string) => path.join(dir, name);
const kgrank = (args: string[], env: Record<string, string> = {}): Promise<Run> => runIn(args, dir, env);

function ok(r: Run): string {
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

function userError(r: Run, pattern: RegExp): void {
  expect(r.status, r.stderr).toBe(1);
  const lines = r.stderr.trim().split("\n");
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
}

const withoutTiming = (text: string) => text.replace(/\ndone in \d+ ms\n?$/, "");

/** Shard states of `args` (I/N for I in order), merged in a shuffled order; returns [merged, unsharded] output. */
async function shardedAndWhole(
  args: string[],
  shards: number,
  tag: string,
  format: "json" | "table" = "json",
): Promise<[string, string]> {
  const files: string[] = [];
  for (let i = 0; i < shards; i++) {
    const file = p(`${tag}-${i}.state`);
    const r = await kgrank(["evaluate", ...args, "--shard", `${i}/${shards}`, "--save-state", file, "--quiet"]);
    expect(r.stdout, "a shard prints no results").toBe("");
    ok(r);
    files.push(file);
  }
  const order = files.map((_, i) => files[(i * 7 + 3) % shards]!);
  expect(new Set(order).size).toBe(shards);
  return [
    ok(await kgrank(["merge", ...order, "--format", format])),
    ok(await kgrank(["evaluate", ...args, "--format", format])),
  ];
}

const nations = loadDataset("nations");
const rows = nations.splits.test.length / 3;
const n = nations.numEntities;

beforeAll(() => {
  const b = new FrequencyBaseline(nations.splits.train, n, nations.numRelations);
  writeNpy(p("tail.npy"), b.scoreBatch(nations.splits.test, "tail"), [rows, n]);
  writeNpy(p("head.npy"), b.scoreBatch(nations.splits.test, "head"), [rows, n]);
  writeNpy(
    p("pos.npy"),
    Float32Array.from({ length: rows }, (_, i) => (i % 7) / 2),
  );
  writeNpy(
    p("neg.npy"),
    Float32Array.from({ length: rows * 5 }, (_, i) => (i * 13) % 5),
    [rows, 5],
  );
});

describe(`kgrank evaluate --shard / kgrank merge on ${backendLabel}`, () => {
  it("merged shards print the unsharded run exactly: every bundled dataset, JSON byte for byte", async () => {
    for (const dataset of ["nations", "kinships", "umls"]) {
      const [merged, whole] = await shardedAndWhole(["--dataset", dataset], 3, dataset);
      expect(merged, dataset).toBe(whole);
    }
  });

  it("with --by-relation, --bootstrap (seeded intervals), --metrics and --ks: JSON and the table", async () => {
    const args = [
      "--by-relation",
      "--bootstrap",
      "40",
      "--seed",
      "3",
      "--metrics",
      "mrr,hits@k,median_rank",
      "--ks",
      "1,5",
    ];
    const [merged, whole] = await shardedAndWhole(args, 4, "opts");
    expect(merged).toBe(whole);
    expect(JSON.parse(merged).intervals).not.toBeNull();
    const [mergedText, wholeText] = await shardedAndWhole(args, 4, "opts-text", "table");
    expect(withoutTiming(mergedText)).toBe(withoutTiming(wholeText));
    expect(mergedText).toContain("Per relation");
  });

  it("merge --metrics reports what evaluate --metrics reports, whatever metrics the shards were evaluated with", async () => {
    for (const [tag, shardArgs] of [
      ["m-all", []],
      ["m-mrr", ["--metrics", "mrr"]],
    ] as const) {
      const files = [0, 1].map((i) => p(`${tag}-${i}.state`));
      for (const [i, file] of files.entries())
        ok(await kgrank(["evaluate", ...shardArgs, "--by-relation", "--shard", `${i}/2`, "--save-state", file, "-q"]));
      for (const format of ["json", "table"]) {
        const asked = ["--metrics", "hits@3,amri", "--format", format];
        expect(withoutTiming(ok(await kgrank(["merge", ...files, ...asked]))), `${tag} ${format}`).toBe(
          withoutTiming(ok(await kgrank(["evaluate", "--by-relation", ...asked]))),
        );
      }
    }
  });

  it("score files, one side, sampled negatives, and more shards than rows (empty shards)", async () => {
    const [a, b] = await shardedAndWhole(["--scores-head", "head.npy", "--scores-tail", "tail.npy"], 5, "files");
    expect(a).toBe(b);
    const [c, d] = await shardedAndWhole(["--scores-tail", "tail.npy"], 2, "one-side");
    expect(c).toBe(d);
    const [e, f] = await shardedAndWhole(["--scores-tail", "pos.npy", "--negatives-tail", "neg.npy"], 3, "sampled");
    expect(e).toBe(f);
    // Two triples in four shards: shards 0 and 2 hold none.
    writeNpy(p("two.npy"), nations.splits.test.slice(0, 6), [2, 3]);
    const [g, h] = await shardedAndWhole(["--triples", "two.npy", "--metrics", "mrr"], 4, "empty");
    expect(g).toBe(h);
  });

  it("--shard auto/N takes I from SLURM job arrays (minus SLURM_ARRAY_TASK_MIN) or Kubernetes Indexed Jobs", async () => {
    const env: Record<string, string>[] = [
      { SLURM_ARRAY_TASK_ID: "4", SLURM_ARRAY_TASK_MIN: "4" },
      { SLURM_ARRAY_TASK_ID: "5", SLURM_ARRAY_TASK_MIN: "4" },
      { JOB_COMPLETION_INDEX: "2" },
    ];
    for (const [i, e] of env.entries())
      ok(await kgrank(["evaluate", "--shard", "auto/3", "--save-state", p(`auto-${i}.state`), "--quiet"], e));
    expect(
      ok(await kgrank(["merge", p("auto-2.state"), p("auto-1.state"), p("auto-0.state"), "--format", "json"])),
    ).toBe(ok(await kgrank(["evaluate", "--format", "json"])));
    userError(
      await kgrank(["evaluate", "--shard", "auto/3", "--save-state", p("x.state")], {
        SLURM_ARRAY_TASK_ID: "",
        JOB_COMPLETION_INDEX: "",
      }),
      /--shard: auto needs SLURM_ARRAY_TASK_ID .* or JOB_COMPLETION_INDEX/,
    );
    userError(
      await kgrank(["evaluate", "--shard", "auto/3", "--save-state", p("x.state")], { JOB_COMPLETION_INDEX: "3" }),
      /JOB_COMPLETION_INDEX = 3 is outside \[0, 2\]/,
    );
    userError(
      await kgrank(["evaluate", "--shard", "auto/3", "--save-state", p("x.state")], { SLURM_ARRAY_TASK_ID: "x1" }),
      /SLURM_ARRAY_TASK_ID = "x1" is not a non-negative integer/,
    );
  });

  it("--shard refuses --output and --ranks-out (a shard writes only its state; kgrank merge writes them), --workers still writes both", async () => {
    for (const flag of ["--output", "--ranks-out"]) {
      userError(
        await kgrank(["evaluate", "--shard", "0/2", "--save-state", p("out.state"), flag, p("shard-out.tsv")]),
        new RegExp(
          `^kgrank: ${flag}: is not written by a shard .*give ${flag} to kgrank merge of the shards' state files$`,
        ),
      );
    }
    expect(readdirSync(dir)).not.toContain("shard-out.tsv");
    const env = { TMPDIR: p("tmp-workers-out") };
    mkdirSync(env.TMPDIR, { recursive: true });
    ok(
      await kgrank(
        [
          "evaluate",
          "--workers",
          "2",
          "--output",
          p("w-out.json"),
          "--ranks-out",
          p("w-ranks.tsv"),
          "--format",
          "json",
        ],
        env,
      ),
    );
    expect(JSON.parse(readFileSync(p("w-out.json"), "utf8")).results).toBeDefined();
    expect(readFileSync(p("w-ranks.tsv"), "utf8").split("\n").length).toBeGreaterThan(400);
  });

  it("--workers K runs the shards as K local processes and prints the single run; their temporary states are removed", async () => {
    const tmp = p("tmp-workers");
    mkdirSync(tmp, { recursive: true });
    const env = { TMPDIR: tmp };
    for (const args of [
      ["--dataset", "umls"],
      ["--by-relation", "--bootstrap", "30", "--metrics", "mrr,median_rank"],
    ]) {
      expect(ok(await kgrank(["evaluate", ...args, "--workers", "2", "--format", "json"], env))).toBe(
        ok(await kgrank(["evaluate", ...args, "--format", "json"])),
      );
    }
    ok(
      await kgrank(
        ["evaluate", "--workers", "3", "--save-state", p("workers.state"), "--output", p("workers.txt"), "--quiet"],
        env,
      ),
    );
    expect(ok(await kgrank(["merge", p("workers.state"), "--format", "json"]))).toBe(
      ok(await kgrank(["evaluate", "--format", "json"])),
    );
    expect(readFileSync(p("workers.txt"), "utf8")).toContain("nations test (201 triples x 14 entities)");
    userError(
      await kgrank(["evaluate", "--workers", "2", "--scores-tail", "no-such.npy"], env),
      /^kgrank: worker [01]\/2: --scores-tail: cannot read no-such\.npy: no such file$/,
    );
    userError(
      await kgrank(["evaluate", "--workers", "2", "--shard", "0/2", "--save-state", p("x.state")]),
      /--workers: runs its own shards/,
    );
    userError(await kgrank(["evaluate", "--workers", "0"]), /^kgrank: --workers: must be an integer from 1 to 256/);
    expect(readdirSync(tmp)).toEqual([]);
  }, 300_000);

  it("shards of two score files that differ only in the middle (a retrained model of the same shape) do not merge", async () => {
    // 201 x 6000 float64 negatives: 9.6 MB, so the middle byte lies past the first and the last 4 MiB. The second
    // model is written over the first (same name, same size), as a retrained model is.
    const k = 6000;
    const neg = Float64Array.from({ length: rows * k }, (_, i) => ((i * 7919) % 1000) / 100);
    const shard = (i: number) =>
      kgrank([
        "evaluate",
        "--positive-scores",
        "pos.npy",
        "--negative-scores",
        "mid.npy",
        "--shard",
        `${i}/2`,
        "--save-state",
        p(`mid-${i}.state`),
        "--quiet",
      ]);
    writeNpy(p("mid.npy"), neg, [rows, k]);
    ok(await shard(0));
    neg[neg.length >> 1] = -1;
    writeNpy(p("mid.npy"), neg, [rows, k]);
    ok(await shard(1));
    userError(
      await kgrank(["merge", p("mid-0.state"), p("mid-1.state")]),
      /mid-1\.state: is a shard of another run than .*mid-0\.state \(.*scores/,
    );
  });

  it("refuses bad flags and every wrong set of shard files with one line naming the file", async () => {
    userError(await kgrank(["evaluate", "--shard", "0/2"]), /--shard: needs --save-state FILE/);
    userError(await kgrank(["evaluate", "--shard", "2/2", "--save-state", p("x.state")]), /I must be in \[0, 1\]/);
    userError(await kgrank(["evaluate", "--shard", "1/0", "--save-state", p("x.state")]), /N must be at least 1/);
    userError(
      await kgrank(["evaluate", "--shard", "half", "--save-state", p("x.state")]),
      /^kgrank: --shard: must be I\/N/,
    );
    for (let i = 0; i < 3; i++)
      ok(await kgrank(["evaluate", "--shard", `${i}/3`, "--save-state", p(`r-${i}.state`), "--quiet"]));
    ok(await kgrank(["evaluate", "--ks", "1,3", "--shard", "2/3", "--save-state", p("other-run.state"), "--quiet"]));
    ok(await kgrank(["evaluate", "--shard", "1/4", "--save-state", p("other-count.state"), "--quiet"]));
    const good = readFileSync(p("r-2.state"));
    writeFileSync(p("truncated.state"), good.subarray(0, good.length - 100));
    const flipped = Buffer.from(good);
    flipped[flipped.length - 9]! ^= 0x10;
    writeFileSync(p("flipped.state"), flipped);
    const future = Buffer.from(good);
    future[4] = 9;
    writeFileSync(p("future.state"), future);
    writeFileSync(p("text.state"), "shard 2 of 3, trust me\n");
    const lib = new RankEvaluator({ numEntities: n });
    lib.addRanks({ side: "tail", realistic: [1], numCandidates: [3] });
    writeFileSync(p("library.state"), lib.serialize());
    const [r0, r1, r2] = [p("r-0.state"), p("r-1.state"), p("r-2.state")];
    userError(await kgrank(["merge", r0, r1]), /shard 2\/3 of this run is missing/);
    userError(await kgrank(["merge", r0]), /shards 1\/3, 2\/3 of this run are missing/);
    userError(await kgrank(["merge", r0, r1, r2, r1]), /r-1\.state: is shard 1\/3 again \(also .*r-1\.state\)/);
    userError(
      await kgrank(["merge", r0, r1, p("other-run.state")]),
      /other-run\.state: is a shard of another run than .*r-0\.state/,
    );
    userError(
      await kgrank(["merge", r0, r1, r2, p("other-count.state")]),
      /other-count\.state: is a shard of another run/,
    );
    userError(
      await kgrank(["merge", r0, r1, p("truncated.state")]),
      /truncated\.state: is not a valid kgrank evaluator state: (checksum mismatch|truncated)/,
    );
    userError(
      await kgrank(["merge", r0, r1, p("flipped.state")]),
      /flipped\.state: is not a valid kgrank evaluator state: checksum mismatch/,
    );
    userError(await kgrank(["merge", r0, r1, p("future.state")]), /future\.state: .*format version 9/);
    userError(await kgrank(["merge", r0, r1, p("text.state")]), /text\.state: .*wrong magic bytes/);
    userError(
      await kgrank(["merge", p("library.state")]),
      /library\.state: is an evaluator state, but not one written by kgrank evaluate --save-state/,
    );
    userError(await kgrank(["merge", p("no-such.state")]), /no-such\.state: cannot read .*no such file/);
    expect((await kgrank(["merge"])).status).toBe(1);
  });
});

const fb = sharedDataset("fb15k-237");
// Native only: sharding is the same code on both backends (checked on the bundled datasets above); FB15k-237 adds
// scale, which the fallback's evaluator-fb15k tests cover without shards.
const native = backendInfo().backend === "native";
describe.skipIf(fb.missing || !native)(fb.name("sharded FB15k-237 (native backend only)"), () => {
  it("two shards of FB15k-237's filtered test evaluation merge into the unsharded JSON", async () => {
    const args = [
      "--dataset",
      "fb15k-237",
      "--dataset-dir",
      SHARED_DATASETS,
      "--metrics",
      "mrr,hits@10,median_rank,amri",
    ];
    const [merged, whole] = await shardedAndWhole(args, 2, "fb");
    expect(merged).toBe(whole);
  }, 600_000);
});
