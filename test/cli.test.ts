/**
 * The `kgrank` commands' flags, usage, output and user errors, in-process through `main(argv, out)` on this project's
 * backend (helpers/cli.ts). What only a process shows (signals, a terminal, the bin shim, the environment the
 * backend is chosen from) is in cli-process.test.ts.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

import { backendInfo } from "../src/backend/backend";
import { zipSync } from "fflate";

import {
  compareRuns,
  encodeNpy,
  estimateFromSampledRanks,
  estimateFull,
  FrequencyBaseline,
  getMetric,
  loadDataset,
  parseNpz,
  prepareCandidates,
  RankEvaluator,
  sampleTasks,
  writeNpy,
} from "../src/index";
import { writeNpz } from "../src/io/npz-write";
import type { KgrankError } from "../src/checks/errors";
import { errorLine } from "../src/run/flag-parsers";
import { parseEvaluateArgs } from "../src/run/flags/evaluate";
import { expectUserError, kgrank as runIn, type Run } from "./helpers/cli";
import { SHARED_DATASETS, sharedDataset } from "./helpers/datasets";
import { tempDir } from "./helpers/temp";

const root = path.resolve(__dirname, "..");
const dir = tempDir("cli");
const kgrank = (args: string[]): Promise<Run> => runIn(args, dir);

const p = (name: string) => path.join(dir, name);

const nations = loadDataset("nations");
const rows = nations.splits.test.length / 3;
const n = nations.numEntities;

/** The reference: the same evaluation in-process through the library. */
async function reference(): Promise<ReturnType<RankEvaluator["finalize"]>> {
  const b = new FrequencyBaseline(nations.splits.train, n, nations.numRelations);
  const ev = new RankEvaluator({
    numEntities: n,
    filterTriples: [nations.splits.train, nations.splits.valid, nations.splits.test],
  });
  for (const side of ["head", "tail"] as const)
    await ev.add({ triples: nations.splits.test, side, scores: b.scoreBatch(nations.splits.test, side) });
  return ev.finalize();
}

beforeAll(() => {
  const b = new FrequencyBaseline(nations.splits.train, n, nations.numRelations);
  writeNpy(p("head.npy"), b.scoreBatch(nations.splits.test, "head"), [rows, n]);
  writeNpy(p("tail.npy"), b.scoreBatch(nations.splits.test, "tail"), [rows, n]);
  writeNpy(p("tail64.npy"), Float64Array.from(b.scoreBatch(nations.splits.test, "tail")), [rows, n]);
  // The same scores and triples in reverse order (as another tool might order its rows), as ids.
  const rev = (m: Float32Array, width: number) => {
    const out = new Float32Array(m.length);
    for (let i = 0; i < m.length / width; i++)
      out.set(m.subarray(i * width, (i + 1) * width), m.length - (i + 1) * width);
    return out;
  };
  const t = nations.splits.test;
  writeNpy(p("rev-triples.npy"), Int32Array.from(rev(Float32Array.from(t), 3)), [rows, 3]);
  writeNpy(p("rev-tail.npy"), rev(b.scoreBatch(t, "tail"), n), [rows, n]);
  writeNpy(p("bad-triples.npy"), Int32Array.from([0, 0, 0, 1, 99, 1]), [2, 3]);
  writeNpy(p("unknown-triples.npy"), BigInt64Array.from([0n, 0n, 0n]), [1, 3]);
  writeNpy(p("narrow.npy"), new Float32Array(rows * (n - 1)), [rows, n - 1]);
  writeNpy(p("short.npy"), new Float32Array((rows - 1) * n), [rows - 1, n]);
  writeNpy(p("int.npy"), new Int32Array(rows * n), [rows, n]);
  writeFileSync(p("garbage.npy"), "this is not numpy");
  // Sampled: positives 1, negatives 0..4 -> rank from K = 5 negatives.
  writeNpy(p("pos.npy"), new Float32Array(rows).fill(2.5));
  writeNpy(
    p("neg.npy"),
    Float32Array.from({ length: rows * 5 }, (_, i) => i % 5),
    [rows, 5],
  );
  writeFileSync(p("ranks.txt"), "1\n2\n\n3.5\n10\n");
  writeFileSync(p("ranks.json"), "[1, 2, 3.5, 10]");
  writeNpy(p("ranks.npy"), Float64Array.from([1, 2, 3.5, 10]));
  writeFileSync(p("nc.txt"), "10\n10\n10\n14\n");
  writeFileSync(p("nc-short.txt"), "10\n10\n");
  writeFileSync(p("ranks-bad.txt"), "1\ntwo\n");
  writeFileSync(p("ranks-big.txt"), "1\n20\n3\n4\n");
});

describe(`kgrank on ${backendInfo().backend}`, () => {
  it("a queue job's evaluate arguments are refused with the line kgrank evaluate prints for them", async () => {
    const cases = [["--format", "xml"], ["--nope"], ["--shard", "x/2"], ["--workers", "0"], ["--scores-tail"]];
    for (const args of cases) {
      const cli = await kgrank(["evaluate", ...args]);
      expectUserError(cli, /./);
      let line = "";
      try {
        parseEvaluateArgs(args);
      } catch (e) {
        line = errorLine(e as KgrankError);
      }
      expect(`kgrank: ${line}\n`, args.join(" ")).toBe(cli.stderr);
    }
  });

  it("info reports this project's backend", async () => {
    const r = await kgrank(["info", "--format", "json"]);
    expect(r.status, r.stderr).toBe(0);
    const info = JSON.parse(r.stdout);
    expect(info.backend).toBe(backendInfo().backend);
    expect(info.simd).toBe(backendInfo().simd);
    expect(info.version).toBe(JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).version);
    expect((await kgrank(["info"])).stdout).toMatch(/^backend\s+\w+/m);
  });

  it("--help works for the program and every command; no command prints the help", async () => {
    for (const args of [
      ["--help"],
      ["evaluate", "--help"],
      ["metrics", "--help"],
      ["adjust", "--help"],
      ["expectations", "--help"],
      ["info", "--help"],
      ["build-native", "--help"],
      [],
    ]) {
      const r = await kgrank(args);
      expect(r.status, args.join(" ")).toBe(0);
      expect(r.stdout, args.join(" ")).toMatch(/Usage: kgrank/);
    }
    expect((await kgrank(["evaluate", "--help"])).stdout).toMatch(/--scores-head/);
  });

  it("submit --help lists only flags a queue job runs; the others are refused with the reason", async () => {
    const help = (await kgrank(["submit", "--help"])).stdout;
    const listed = [...help.matchAll(/^ {2}(?:-\w, )?(--[a-z0-9-]+)/gm)].map((m) => m[1]);
    expect(listed).toContain("--redis");
    expect(listed).toContain("--metrics");
    for (const flag of ["--sample-tasks", "--stratify", "--estimate-full", "--quadruples", "--constrain-candidates"]) {
      expect(listed, flag).not.toContain(flag);
    }
    const submit = ["submit", "--redis", "redis://127.0.0.1:1", "--shards", "2", "--state-dir", dir];
    expectUserError(
      await kgrank([...submit, "--sample-tasks", "10"]),
      /^kgrank: --sample-tasks: is not run by queue jobs \(a sample is drawn, ranked and estimated in one process\)/,
    );
    expectUserError(
      await kgrank([...submit, "--constrain-candidates", "train"]),
      /^kgrank: --constrain-candidates: is not run by queue jobs/,
    );
    // --save-state says which commands read the state.
    const evaluateHelp = (await kgrank(["evaluate", "--help"])).stdout.replace(/\s+/g, " ");
    expect(evaluateHelp).toMatch(/--save-state <file> .*kgrank merge \(shards\), compare, report and plot read/);
  });

  it("evaluate (no options): the bundled Nations table, equal to the library's results", async () => {
    const r = await kgrank(["evaluate"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe(""); // piped: no progress bar, no notes
    expect(r.stdout).toMatch(
      /nations test \(201 triples x 14 entities\), filtered by train\+valid\+test, frequency baseline/,
    );
    const ref = await reference();
    // The compact table: a row per metric as papers name it, realistic ranks per side, random E; ~100 columns.
    const lines = r.stdout.split("\n");
    const header = lines.find((l) => l.startsWith("metric "))!;
    expect(header.trim().split(/\s{2,}/)).toEqual(["metric", "head", "tail", "both", "random E"]);
    const body = lines.slice(lines.indexOf(header) + 2, lines.indexOf("", lines.indexOf(header)));
    expect(body.map((l) => l.split(/\s{2,}/)[0])).toEqual([
      "MRR",
      "Hits@1",
      "Hits@3",
      "Hits@10",
      "MR",
      "AMRI",
      "z(MRR)",
      "rank width (pess. - opt.)",
    ]);
    for (const l of [header, ...body]) expect(l.length, l).toBeLessThanOrEqual(100);
    const cells = (title: string) =>
      body
        .find((l) => l.startsWith(`${title} `))!
        .slice(title.length)
        .trim()
        .split(/\s+/)
        .map(Number);
    const round = (v: number) => Number(v.toFixed(4));
    for (const [title, key] of [
      ["MRR", "mrr"],
      ["Hits@10", "hits@10"],
      ["MR", "mr"],
      ["AMRI", "amri"],
      ["z(MRR)", "z_inverse_harmonic_mean_rank"],
    ] as [string, string][]) {
      expect(cells(title), title).toEqual(
        [ref.get(`head.${key}`), ref.get(`tail.${key}`), ref.get(`both.${key}`), ref.expected(key)!].map(round),
      );
    }
    expect(cells("rank width (pess. - opt.)")).toEqual(
      (["head", "tail", "both"] as const).map((s) => round(ref.meanRankWidth(s))),
    );
    // The footer names PyKEEN's key behind each row and how to see the rest.
    expect(r.stdout).toContain("MRR = inverse_harmonic_mean_rank");
    expect(r.stdout).toContain("AMRI = adjusted_arithmetic_mean_rank_index");
    expect(r.stdout).toContain("--metrics all");
  });

  it("evaluate --metrics all: every metric at every rank type, PyKEEN's keys", async () => {
    const r = await kgrank(["evaluate", "--metrics", "all"]);
    expect(r.status, r.stderr).toBe(0);
    const ref = await reference();
    const line = r.stdout.split("\n").find((l) => l.startsWith("inverse_harmonic_mean_rank "))!;
    const cells = line.trim().split(/\s+/);
    // head opt/real/pess, tail opt/real/pess, both opt/real/pess, random E
    expect(cells.slice(1).map(Number)).toEqual(
      [
        ref.get("head.optimistic.mrr"),
        ref.get("head.realistic.mrr"),
        ref.get("head.pessimistic.mrr"),
        ref.get("tail.optimistic.mrr"),
        ref.get("tail.realistic.mrr"),
        ref.get("tail.pessimistic.mrr"),
        ref.get("both.optimistic.mrr"),
        ref.get("both.realistic.mrr"),
        ref.get("both.pessimistic.mrr"),
        ref.expected("mrr")!,
      ].map((v) => Number(v.toFixed(4))),
    );
    const lines = r.stdout.split("\n");
    const first = lines.findIndex((l) => l.startsWith("metric ")) + 2;
    const keys = lines
      .slice(first, lines.indexOf("", first))
      .map((l) => l.split(" ")[0])
      .filter((k) => k !== "mean_rank_width");
    expect(keys).toEqual(Object.keys(ref.toJSON().both.realistic));
    expect(r.stdout).toContain("mean_rank_width");
    // The same as the default's JSON: --format json is unchanged by --metrics all.
    const all = JSON.parse((await kgrank(["evaluate", "--metrics", "all", "--format", "json"])).stdout);
    const plain = JSON.parse((await kgrank(["evaluate", "--format", "json"])).stdout);
    expect(all.results).toEqual(plain.results);
    expect(all.results).toEqual(JSON.parse(JSON.stringify(ref.toJSON())));
    // merge --metrics all: every metric of states evaluated with a list, as the unsharded --metrics all run prints.
    for (const i of [0, 1]) {
      const shard = ["evaluate", "--metrics", "mrr", "--shard", `${i}/2`, "--save-state", `all-${i}.state`, "-q"];
      expect((await kgrank(shard)).status).toBe(0);
    }
    const merged = await kgrank(["merge", "all-0.state", "all-1.state", "--metrics", "all"]);
    expect(merged.status, merged.stderr).toBe(0);
    const body = (t: string) => t.split("\n").filter((l) => !/^done in /.test(l));
    expect(body(merged.stdout)).toEqual(body(r.stdout));
  });

  it("the mistakes a new user makes are caught with the flag and the fix named", async () => {
    const json = async (args: string[]) => {
      const r = await kgrank([...args, "--format", "json"]);
      expect(r.status, r.stderr).toBe(0);
      return JSON.parse(r.stdout);
    };
    // --ks: one default set, each metric once, only the asked-for cut-offs.
    const ks = (
      await json(["metrics", "--ranks", "ranks.txt", "--num-candidates", "nc.txt", "--ks", "1,10"])
    ).metrics.map((m: { metric: string }) => m.metric);
    expect(new Set(ks).size).toBe(ks.length);
    expect(ks.filter((k: string) => /hits_at/.test(k))).toEqual([
      "hits_at_1",
      "adjusted_hits_at_1",
      "z_hits_at_1",
      "hits_at_10",
      "adjusted_hits_at_10",
      "z_hits_at_10",
    ]);
    // A metric that needs candidate counts names the flag, not the library argument.
    expectUserError(
      await kgrank(["metrics", "--ranks", "ranks.txt", "--metrics", "amri"]),
      /^kgrank: --num-candidates: adjusted_arithmetic_mean_rank_index needs/,
    );
    // 0-based ranks get the hint to add 1.
    writeFileSync(p("ranks0.txt"), "0\n1\n4\n");
    expectUserError(
      await kgrank(["metrics", "--ranks", "ranks0.txt"]),
      /--ranks: element 0 is 0; .*add 1 to every rank/,
    );
    // A percentage where a fraction belongs.
    expectUserError(
      await kgrank(["adjust", "--dataset", "nations", "--metric", "hits@10=48"]),
      /--metric: "hits@10=48": 48 is outside the range of hits_at_10, \[0, 1\]; if it is a percentage, give hits_at_10=0.48/,
    );
    // PyKEEN's full keys in --metrics and --metric; a side in the key picks that side's candidates.
    expect(
      (await json(["metrics", "--ranks", "ranks.txt", "--metrics", "both.realistic.hits_at_10,mrr"])).metrics.map(
        (m: { metric: string }) => m.metric,
      ),
    ).toEqual(["hits_at_10", "inverse_harmonic_mean_rank"]);
    const adj = await json([
      "adjust",
      "--dataset",
      "nations",
      "--metric",
      "tail.realistic.hits_at_10=0.48",
      "--metric",
      "mrr=0.3",
    ]);
    expect(adj.metrics.map((m: { side: string }) => m.side)).toEqual(["tail", "both"]);
    const tailOnly = await json(["adjust", "--dataset", "nations", "--side", "tail", "--metric", "hits@10=0.48"]);
    expect(adj.metrics[0].expected).toBe(tailOnly.metrics[0].expected);
    // --by-relation follows --metrics: a column per asked metric, each filled.
    const rel = await kgrank(["evaluate", "--by-relation", "--metrics", "mrr,hits@10", "--format", "csv"]);
    expect(rel.status, rel.stderr).toBe(0);
    const table = (await kgrank(["evaluate", "--by-relation", "--metrics", "mrr,hits@10"])).stdout;
    const perRelation = table.slice(table.indexOf("Per relation"));
    expect(perRelation).toMatch(
      /relation\s+tasks\s+inverse_harmonic_mean_rank\s+inverse_harmonic_mean_rank random E\s+hits_at_10/,
    );
    const firstRow = perRelation.split("\n")[4]!;
    expect(firstRow.trim().split(/\s{2,}/).length, firstRow).toBe(5);
    // --triples: the footer counts distinct known triples, the evaluated split once.
    const footer = async (args: string[]) =>
      /filtered by (\d+) known triples/.exec(
        (await kgrank(["evaluate", "--scores-tail", "tail.npy", ...args])).stdout,
      )![1];
    expect(await footer(["--triples", "rev-triples.npy"])).toBe(await footer([]));
  });

  it("evaluate --format json equals the library's results exactly; score files give the baseline's numbers", async () => {
    const ref = await reference();
    const base = JSON.parse((await kgrank(["evaluate", "--format", "json"])).stdout);
    expect(base.results).toEqual(JSON.parse(JSON.stringify(ref.toJSON())));
    expect(base.expected.both.inverse_harmonic_mean_rank).toBeCloseTo(ref.expected("mrr")!, 12);
    const files = await kgrank([
      "evaluate",
      "--scores-head",
      "head.npy",
      "--scores-tail",
      "tail64.npy",
      "--format",
      "json",
    ]);
    expect(files.status, files.stderr).toBe(0);
    expect(JSON.parse(files.stdout).results).toEqual(base.results);
    expect(JSON.parse(files.stdout).scorer).toBe("scores from files");
  });

  it("evaluate's table and markdown are the library's RankResults.toTable(), one renderer", async () => {
    const ref = await reference();
    for (const format of ["table", "markdown"] as const) {
      const r = await kgrank(["evaluate", "--metrics", "all", "--format", format]);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain(ref.toTable({ format }));
    }
    expect(ref.toMarkdown()).toBe(ref.toTable({ format: "markdown" }));
  });

  it("evaluate --triples: score rows in another order line up through their id triples", async () => {
    const json = async (args: string[]) => {
      const r = await kgrank([...args, "--format", "json"]);
      expect(r.status, r.stderr).toBe(0);
      return JSON.parse(r.stdout);
    };
    const straight = await json(["evaluate", "--scores-tail", "tail.npy"]);
    const reordered = await json(["evaluate", "--scores-tail", "rev-tail.npy", "--triples", "rev-triples.npy"]);
    // The same tasks in another order: equal ranks, so equal metrics up to the rounding of sums taken in another
    // order (the variance's compensated sum of squares can move by an ulp or two).
    const sameUpToOrder = (a: unknown, b: unknown, path: string): void => {
      if (typeof a === "number" && typeof b === "number") {
        if (Number.isNaN(b)) expect(a, path).toBeNaN();
        else expect(Math.abs(a - b), path).toBeLessThanOrEqual(1e-13 * Math.max(1, Math.abs(b)));
        return;
      }
      expect(typeof a, path).toBe(typeof b);
      if (a && typeof a === "object") {
        expect(Object.keys(a as object).sort(), path).toEqual(Object.keys(b as object).sort());
        for (const k of Object.keys(a as object))
          sameUpToOrder((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`);
      } else {
        expect(a, path).toEqual(b);
      }
    };
    sameUpToOrder(reordered.results, straight.results, "results");
    // Without --triples the reversed rows are scored against the wrong triples: the results change.
    const misaligned = await json(["evaluate", "--scores-tail", "rev-tail.npy"]);
    expect(misaligned.results.tail.realistic.inverse_harmonic_mean_rank).not.toBeCloseTo(
      straight.results.tail.realistic.inverse_harmonic_mean_rank,
      3,
    );
    expectUserError(
      await kgrank(["evaluate", "--scores-tail", "tail.npy", "--triples", "bad-triples.npy"]),
      /--triples: row 1: relation id 99 is outside \[0, 55\)/,
    );
    expectUserError(
      await kgrank(["evaluate", "--scores-tail", "tail.npy", "--triples", "tail.npy"]),
      /--triples: dtype f4 is not an integer type/,
    );
    expectUserError(
      await kgrank(["evaluate", "--scores-tail", "tail.npy", "--triples", "unknown-triples.npy"]),
      /--scores-tail: shape \(201, 14\) does not match \(1, 14\)/,
    );
  });

  it('evaluate with one side\'s scores evaluates that side only: the library\'s sides "tail" results, "both" being that side, as the footer says', async () => {
    const r = await kgrank(["evaluate", "--scores-tail", "tail.npy", "--format", "json"]);
    expect(r.status, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.info.tasks).toEqual({ head: 0, tail: rows });
    const { train, valid, test } = nations.splits;
    const b = new FrequencyBaseline(train, n, nations.numRelations);
    const one = new RankEvaluator({ numEntities: n, filterTriples: [train, valid, test], sides: "tail" });
    one.addSync({ triples: test, side: "tail", scores: b.scoreBatch(test, "tail") });
    const lib = one.finalize();
    expect(j.results).toEqual(JSON.parse(JSON.stringify(lib.toJSON())));
    expect(j.results.both.realistic).toEqual(j.results.tail.realistic);
    const table = (await kgrank(["evaluate", "--scores-tail", "tail.npy"])).stdout;
    expect(table).toContain('"both" is the tail side alone (the only side evaluated).');
    expect(lib.toTable()).toContain('"both" is the tail side alone (the only side evaluated).');
  });

  it("evaluate --sides head | tail: the baseline ranks that side only, the library's one-side results exactly", async () => {
    const { train, valid, test } = nations.splits;
    const b = new FrequencyBaseline(train, n, nations.numRelations);
    for (const side of ["head", "tail"] as const) {
      const r = await kgrank(["evaluate", "--sides", side, "--format", "json"]);
      expect(r.status, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout);
      expect(j.info.tasks).toEqual(side === "head" ? { head: rows, tail: 0 } : { head: 0, tail: rows });
      const one = new RankEvaluator({ numEntities: n, filterTriples: [train, valid, test], sides: side });
      one.addSync({ triples: test, side, scores: b.scoreBatch(test, side) });
      expect(j.results).toEqual(JSON.parse(JSON.stringify(one.finalize().toJSON())));
      expect(j.results.both.realistic).toEqual(j.results[side].realistic);
    }
    // head,tail in either order is the default run, to the last digit.
    const both = (await kgrank(["evaluate", "--format", "json"])).stdout;
    const listed = await kgrank(["evaluate", "--sides", " tail,head", "--format", "json"]);
    expect(JSON.parse(listed.stdout).results).toEqual(JSON.parse(both).results);
  });

  it("evaluate --sides: bad lists, and lists that contradict the score files given, name --sides and the fix", async () => {
    for (const [args, pattern] of [
      [["--sides", "left"], /^kgrank: --sides: "left" is not a side; use a comma list of head, tail and relation/],
      [["--sides", "tail,tail"], /^kgrank: --sides: lists a side twice/],
      [["--sides", ""], /^kgrank: --sides: "" is not a side/],
      [
        ["--sides", "head", "--scores-tail", "tail.npy"],
        /^kgrank: --sides: head is listed but --scores-head is not given/,
      ],
      [
        ["--sides", "tail", "--scores-head", "head.npy", "--scores-tail", "tail.npy"],
        /^kgrank: --sides: tail leaves out head, but --scores-head is given: list head in --sides, or drop the file/,
      ],
      [
        ["--sides", "tail", "--positive-scores", "pos.npy", "--negative-scores", "neg.npy"],
        /^kgrank: --sides: does not apply to --positive-scores/,
      ],
      // What cannot give or sample relation ranks is refused.
      [
        ["--sides", "head,tail,relation", "--dataset", "nations", "--model-dir", "model", "--entity-shard", "1/2"],
        /^kgrank: --sides: relation does not go with --entity-shard: a relation's score needs whole entity rows/,
      ],
      [
        ["--sides", "tail,relation", "--scores-tail", "tail.npy"],
        /^kgrank: --sides: relation does not go with --scores-tail: score files hold entity scores only/,
      ],
      [
        ["--sides", "head,tail,relation", "--sample-tasks", "10"],
        /^kgrank: --sides: relation does not go with --sample-tasks: a sample is drawn from head and tail tasks/,
      ],
      [
        ["--sides", "relation", "--by-relation"],
        /^kgrank: --sides: relation does not go with --by-relation: its breakdown is of head and tail tasks/,
      ],
      [
        ["--sides", "relation", "--negatives-tail", "neg.npy"],
        /^kgrank: --sides: relation does not go with --negatives-tail: sampled negatives are entities/,
      ],
      [
        ["--sides", "relation", "--entity-shard", "0/2", "--save-state", "x.state"],
        /^kgrank: --sides: relation does not go with --entity-shard/,
      ],
    ] as [string[], RegExp][]) {
      expectUserError(await kgrank(["evaluate", ...args]), pattern);
    }
    // Files for exactly the listed sides: accepted, the same run as without --sides.
    const listed = await kgrank(["evaluate", "--sides", "tail", "--scores-tail", "tail.npy", "--format", "json"]);
    const plain = await kgrank(["evaluate", "--scores-tail", "tail.npy", "--format", "json"]);
    expect(JSON.parse(listed.stdout).results).toEqual(JSON.parse(plain.stdout).results);
  });

  it("evaluate --sides tail in shards merges into the one-process run; a state of other sides is refused", async () => {
    for (const i of [0, 1]) {
      const r = await kgrank([
        "evaluate",
        "--sides",
        "tail",
        "--shard",
        `${i}/2`,
        "--save-state",
        `sides-${i}.state`,
        "-q",
      ]);
      expect(r.status, r.stderr).toBe(0);
    }
    const merged = await kgrank(["merge", "sides-0.state", "sides-1.state", "--format", "json"]);
    expect(merged.status, merged.stderr).toBe(0);
    const one = await kgrank(["evaluate", "--sides", "tail", "--format", "json"]);
    expect(JSON.parse(merged.stdout).results).toEqual(JSON.parse(one.stdout).results);
    expect((await kgrank(["evaluate", "--shard", "1/2", "--save-state", "sides-both.state", "-q"])).status).toBe(0);
    expectUserError(
      await kgrank(["merge", "sides-0.state", "sides-both.state"]),
      /^kgrank: states\[1\]: was evaluated for sides head,tail, states\[0\] for sides tail: states of different protocols do not merge/,
    );
  });

  it("evaluate --sides head,tail,relation: the baseline's relation ranks, the library's results exactly (JSON, CSV, table, shards)", async () => {
    const { train, valid, test } = nations.splits;
    const b = new FrequencyBaseline(train, n, nations.numRelations);
    const library = (sides: ("head" | "tail" | "relation")[]) => {
      const ev = new RankEvaluator({ numEntities: n, filterTriples: [train, valid, test], sides });
      for (const side of ["head", "tail"] as const)
        if (sides.includes(side)) ev.addSync({ triples: test, side, scores: b.scoreBatch(test, side) });
      ev.addRelationScores({ triples: test, scores: b.scoreRelations(test) });
      return ev.finalize();
    };
    const want = library(["head", "tail", "relation"]);
    const r = await kgrank(["evaluate", "--sides", "relation,head,tail", "--format", "json"]);
    expect(r.status, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.results).toEqual(JSON.parse(JSON.stringify(want.toJSON())));
    expect(Object.keys(j.results)).toEqual(["head", "tail", "both", "relation"]);
    expect(j.expected.relation.inverse_harmonic_mean_rank).toBe(want.expected("relation.mrr"));
    expect(j.meanRankWidth.relation).toBe(want.meanRankWidth("relation"));
    expect(j.info.sides).toEqual(["head", "tail", "relation"]);
    expect(j.info.tasks).toEqual({ head: rows, tail: rows, relation: rows });
    // "both" is head and tail only: the default run's numbers.
    const plain = JSON.parse((await kgrank(["evaluate", "--format", "json"])).stdout);
    expect(j.results.both).toEqual(plain.results.both);
    expect(plain.results.relation).toBeUndefined();
    // The relation side alone.
    const alone = JSON.parse((await kgrank(["evaluate", "--sides", "relation", "--format", "json"])).stdout);
    expect(alone.results).toEqual(JSON.parse(JSON.stringify(library(["relation"]).toJSON())));
    const csvOut = (await kgrank(["evaluate", "--sides", "head,tail,relation", "--format", "csv"])).stdout;
    expect(csvOut).toContain(`all,relation,realistic,inverse_harmonic_mean_rank,${want.get("relation.mrr")},`);
    const text = (await kgrank(["evaluate", "--sides", "head,tail,relation", "--metrics", "all"])).stdout;
    expect(text).toContain(want.toTable());
    // The compact table: a column for the relation side and its own random expectation.
    const compact = (await kgrank(["evaluate", "--sides", "head,tail,relation"])).stdout;
    const header = compact.split("\n").find((l) => l.startsWith("metric "))!;
    expect(header.trim().split(/\s{2,}/)).toEqual([
      "metric",
      "head",
      "tail",
      "both",
      "relation",
      "random E",
      "relation random E",
    ]);
    const mrr = compact.split("\n").find((l) => l.startsWith("MRR "))!;
    expect(mrr.trim().split(/\s+/).slice(1).map(Number)).toEqual(
      [
        want.get("head.mrr"),
        want.get("tail.mrr"),
        want.get("both.mrr"),
        want.get("relation.mrr"),
        want.expected("mrr")!,
        want.expected("relation.mrr")!,
      ].map((v) => Number(v.toFixed(4))),
    );
    // Row shards with their states merge into the one-process run; a head,tail state is refused, naming both.
    for (const i of [0, 1]) {
      const s = await kgrank([
        "evaluate",
        "--sides",
        "head,tail,relation",
        "--shard",
        `${i}/2`,
        "--save-state",
        `rel-${i}.state`,
        "-q",
      ]);
      expect(s.status, s.stderr).toBe(0);
    }
    const merged = await kgrank(["merge", "rel-0.state", "rel-1.state", "--format", "json"]);
    expect(merged.status, merged.stderr).toBe(0);
    expect(JSON.parse(merged.stdout).results).toEqual(j.results);
    expect((await kgrank(["evaluate", "--shard", "1/2", "--save-state", "rel-entity.state", "-q"])).status).toBe(0);
    expectUserError(
      await kgrank(["merge", "rel-0.state", "rel-entity.state"]),
      /^kgrank: states\[1\]: was evaluated for sides head,tail, states\[0\] for sides head,tail,relation/,
    );
    // compare: the head and tail tasks as before, the relation tasks apart (JSON "relation", CSV relation.METRIC).
    expect(
      (await kgrank(["evaluate", "--sides", "head,tail,relation", "--save-state", "rel-a.state", "-q"])).status,
    ).toBe(0);
    const other = new RankEvaluator({
      numEntities: n,
      filterTriples: [train, valid, test],
      sides: ["head", "tail", "relation"],
    });
    for (const side of ["head", "tail"] as const)
      other.addSync({ triples: test, side, scores: b.scoreBatch(test, side) });
    other.addRelationScores({
      triples: test,
      scores: b.scoreRelations(test).map((x, i) => x + ((i * 7919) % 5) * 0.5),
    });
    writeFileSync(p("rel-b.state"), other.serialize());
    const cmp = await kgrank(["compare", "rel-a.state", "rel-b.state", "--samples", "100", "--format", "json"]);
    expect(cmp.status, cmp.stderr).toBe(0);
    const runsOf = ["rel-a.state", "rel-b.state"].map((f) => ({
      name: f,
      results: RankEvaluator.deserialize(new Uint8Array(readFileSync(p(f)))).finalize(),
    }));
    const cj = JSON.parse(cmp.stdout);
    expect(cj.relation).toEqual(JSON.parse(JSON.stringify(compareRuns(runsOf, { samples: 100, side: "relation" }))));
    const { relation: _, ...entityPart } = cj;
    expect(entityPart).toEqual(JSON.parse(JSON.stringify(compareRuns(runsOf, { samples: 100 }))));
    const cmpCsv = (await kgrank(["compare", "rel-a.state", "rel-b.state", "--samples", "100", "--format", "csv"]))
      .stdout;
    expect(cmpCsv).toMatch(/^relation\.inverse_harmonic_mean_rank,rel-b\.state,/m);
    expect(cmpCsv).toMatch(/^inverse_harmonic_mean_rank,rel-b\.state,/m);
    // --ranks-out holds the relation tasks (side 2 / "relation") and reads back as the same run.
    for (const file of ["rel.npz", "rel.tsv"]) {
      const w = await kgrank(["evaluate", "--sides", "head,tail,relation", "--ranks-out", file, "-q"]);
      expect(w.status, w.stderr).toBe(0);
    }
    const npz = parseNpz(new Uint8Array(readFileSync(p("rel.npz"))));
    expect(Array.from(npz.side!.data as Int8Array).filter((s) => s === 2).length).toBe(rows);
    expect(
      readFileSync(p("rel.tsv"), "utf8")
        .split("\n")
        .filter((l) => l.startsWith("relation\t")).length,
    ).toBe(rows);
    const again = await kgrank(["compare", "rel-a.state", "rel.npz", "--samples", "100", "--format", "json"]);
    expect(again.status, again.stderr).toBe(0);
    const aj = JSON.parse(again.stdout);
    expect(aj.relation.tasks).toBe(rows);
    expect(aj.relation.rows.every((r: { difference: number }) => r.difference === 0)).toBe(true);
  });

  it("evaluate --scores-relation: relation scores from a file, the same numbers as the baseline's; its errors name the flag and the row", async () => {
    const { train, test } = nations.splits;
    const R = nations.numRelations;
    const relScores = new FrequencyBaseline(train, n, R).scoreRelations(test);
    writeNpy(p("rel.npy"), relScores, [rows, R]);
    const fromFiles = await kgrank([
      "evaluate",
      "--scores-head",
      "head.npy",
      "--scores-tail",
      "tail.npy",
      "--scores-relation",
      "rel.npy",
      "--format",
      "json",
    ]);
    expect(fromFiles.status, fromFiles.stderr).toBe(0);
    const baseline = await kgrank(["evaluate", "--sides", "head,tail,relation", "--format", "json"]);
    expect(JSON.parse(fromFiles.stdout).results).toEqual(JSON.parse(baseline.stdout).results);
    expect(JSON.parse(fromFiles.stdout).scorer).toBe("scores from files");
    const alone = await kgrank(["evaluate", "--scores-relation", "rel.npy", "--format", "json"]);
    expect(alone.status, alone.stderr).toBe(0);
    const aj = JSON.parse(alone.stdout);
    expect(aj.info.sides).toEqual(["relation"]);
    expect(aj.results.relation).toEqual(JSON.parse(baseline.stdout).results.relation);
    const nan = Float32Array.from(relScores);
    nan[7 * R + test[3 * 7 + 1]!] = NaN;
    writeNpy(p("rel-nan.npy"), nan, [rows, R]);
    writeNpy(p("rel-wide.npy"), new Float32Array(rows * (R + 1)), [rows, R + 1]);
    for (const [args, pattern] of [
      [
        ["--scores-relation", "rel-wide.npy"],
        /^kgrank: --scores-relation: .*columns in relation id order \(55 relations\)/,
      ],
      [["--scores-relation", "rel-nan.npy"], /^kgrank: --scores-relation: .*row 7 of rel-nan\.npy/],
      [
        [
          "--sides",
          "head,tail",
          "--scores-head",
          "head.npy",
          "--scores-tail",
          "tail.npy",
          "--scores-relation",
          "rel.npy",
        ],
        /^kgrank: --sides: head,tail leaves out relation, but --scores-relation is given: list relation in --sides, or drop the file/,
      ],
      [
        ["--sides", "tail,relation", "--scores-tail", "tail.npy"],
        /^kgrank: --sides: relation does not go with --scores-tail: score files hold entity scores only: give the relation scores too \(--scores-relation FILE/,
      ],
      [
        ["--scores-relation", "rel.npy", "--sample-tasks", "10"],
        /^kgrank: --scores-relation: does not go with --sample-tasks/,
      ],
      [["--scores-relation", "rel.npy", "--by-relation"], /^kgrank: --scores-relation: does not go with --by-relation/],
    ] as [string[], RegExp][]) {
      expectUserError(await kgrank(["evaluate", ...args]), pattern);
    }
  });

  it("evaluate --sample-tasks: the library's sample and estimates, exactly; every task sampled gives the full values", async () => {
    const umls = loadDataset("umls");
    const { train, valid, test } = umls.splits;
    const b = new FrequencyBaseline(train, umls.numEntities, umls.numRelations);
    const run = await kgrank([
      "evaluate",
      "--dataset",
      "umls",
      "--sample-tasks",
      "300",
      "--stratify",
      "relation",
      "--seed",
      "7",
      "--format",
      "json",
    ]);
    expect(run.status, run.stderr).toBe(0);
    const j = JSON.parse(run.stdout);
    const s = sampleTasks({ triples: test, size: 300, seed: 7, stratify: "relation" });
    const ev = new RankEvaluator({ numEntities: umls.numEntities, filterTriples: [train, valid, test] });
    for (const side of ["head", "tail"] as const)
      ev.addSync({ triples: s[side], side, scores: b.scoreBatch(s[side], side) });
    const lib = ev.finalize();
    expect(j.results).toEqual(JSON.parse(JSON.stringify(lib.toJSON())));
    expect(j.estimates).toEqual(JSON.parse(JSON.stringify(estimateFull(lib, s))));
    expect(j.estimates).toMatchObject({ sampled: s.sampled, population: 2 * (test.length / 3), stratify: "relation" });
    // Every task: the estimates are the full run's values, with no width.
    const all = await kgrank([
      "evaluate",
      "--dataset",
      "umls",
      "--sample-tasks",
      String(2 * (test.length / 3)),
      "--format",
      "json",
    ]);
    const whole = JSON.parse((await kgrank(["evaluate", "--dataset", "umls", "--format", "json"])).stdout);
    const est = JSON.parse(all.stdout).estimates.values as Record<
      string,
      { estimate: number; lower: number; upper: number }
    >;
    for (const [key, v] of Object.entries(est)) {
      const [side, rt, m] = key.split(".");
      const want = whole.results[side!][rt!][m!] as number;
      expect(Math.abs(v.estimate - want), key).toBeLessThanOrEqual(1e-12 * Math.max(1, want));
      expect(v.upper - v.lower, key).toBe(0);
    }
    const table = await kgrank(["evaluate", "--dataset", "umls", "--sample-tasks", "0.25", "--sides", "tail"]);
    expect(table.stdout).toMatch(/a sample of 166 of its 661 tasks \(seed 0\)/);
    expect(table.stdout).toContain(
      "Estimates of the whole split's values from 166 of its 661 tasks (simple random sample)",
    );
    const estimates = table.stdout.slice(table.stdout.indexOf("Estimates of the whole split"));
    expect(estimates).toMatch(/^MRR +0\.\d{4}/m);
    expect(estimates).toContain("tail side, realistic ranks");
    const csv = await kgrank(["evaluate", "--dataset", "umls", "--sample-tasks", "100", "--format", "csv"]);
    expect(csv.stdout).toMatch(/^full estimate,both,realistic,inverse_harmonic_mean_rank,0\.\d+,,0\.\d+,0\.\d+$/m);
  });

  it("evaluate --sample-tasks honours --metrics: the compact rows by default, the listed metrics, all with all", async () => {
    const estimateRows = (text: string) => {
      const lines = text.split("\n");
      const at = lines.findIndex((l) => l.startsWith("Estimates of the whole split's values")) + 2;
      return lines.slice(at + 2, lines.indexOf("", at + 2)).map((l) => l.split(/\s{2,}/));
    };
    const json = JSON.parse((await kgrank(["evaluate", "--sample-tasks", "100", "--format", "json"])).stdout);
    const values = json.estimates.values as Record<string, { estimate: number }>;
    const plain = await kgrank(["evaluate", "--sample-tasks", "100"]);
    expect(plain.status, plain.stderr).toBe(0);
    const compact = estimateRows(plain.stdout);
    expect(compact.map((r) => r[0])).toEqual(["MRR", "Hits@1", "Hits@3", "Hits@10", "MR", "AMRI"]);
    expect(Number(compact[0]![1])).toBe(
      Number(values["both.realistic.inverse_harmonic_mean_rank"]!.estimate.toFixed(4)),
    );
    expect(Number(compact[5]![1])).toBe(
      Number(values["both.realistic.adjusted_arithmetic_mean_rank_index"]!.estimate.toFixed(4)),
    );
    const listed = await kgrank(["evaluate", "--sample-tasks", "100", "--metrics", "mrr,hits@10,median_rank"]);
    expect(estimateRows(listed.stdout).map((r) => r[0])).toEqual(
      ["optimistic", "realistic", "pessimistic"].flatMap((rt) => [
        `both.${rt}.inverse_harmonic_mean_rank`,
        `both.${rt}.hits_at_10`,
      ]),
    );
    expect(listed.stdout).toContain("Not estimated from a sample: median_rank");
    const listedJson = JSON.parse(
      (await kgrank(["evaluate", "--sample-tasks", "100", "--metrics", "mrr", "--format", "json"])).stdout,
    );
    expect(Object.keys(listedJson.estimates.values)).toEqual(
      ["optimistic", "realistic", "pessimistic"].map((rt) => `both.${rt}.inverse_harmonic_mean_rank`),
    );
    const all = await kgrank(["evaluate", "--sample-tasks", "100", "--metrics", "all"]);
    expect(estimateRows(all.stdout).map((r) => r[0])).toEqual(Object.keys(values));
  });

  it("evaluate --sample-tasks / --stratify: bad values and flags it does not go with name the flag and the fix", async () => {
    for (const [args, pattern] of [
      [["--sample-tasks", "0"], /^kgrank: --sample-tasks: must be a number of tasks \(e\.g\. 2000\) or a fraction/],
      [["--sample-tasks", "1.5"], /^kgrank: --sample-tasks: must be a number of tasks/],
      [["--sample-tasks", "lots"], /^kgrank: --sample-tasks: must be a number of tasks/],
      [["--sample-tasks", "1"], /^kgrank: --sample-tasks: must be an integer from 2 to the 402 tasks/],
      [["--sample-tasks", "99999"], /^kgrank: --sample-tasks: must be an integer from 2 to the 402 tasks/],
      [["--sample-tasks", "10", "--stratify", "side"], /^kgrank: --stratify: "side" is not a stratification/],
      [["--stratify", "relation"], /^kgrank: --stratify: stratifies the sample of --sample-tasks N/],
      [["--sample-tasks", "10", "--save-state", "x.state"], /^kgrank: --sample-tasks: does not go with --save-state/],
      [["--sample-tasks", "10", "--bootstrap", "100"], /^kgrank: --sample-tasks: does not go with --bootstrap/],
      [
        ["--sample-tasks", "10", "--shard", "0/2", "--save-state", "x.state"],
        /^kgrank: --sample-tasks: does not go with --shard/,
      ],
      [
        ["--sample-tasks", "10", "--scores-tail", "tail.npy"],
        /^kgrank: --sample-tasks: does not go with --scores-tail/,
      ],
      [
        ["--sample-tasks", "10", "--positive-scores", "pos.npy", "--negative-scores", "neg.npy"],
        /^kgrank: --sample-tasks: does not apply to --positive-scores/,
      ],
    ] as [string[], RegExp][]) {
      expectUserError(await kgrank(["evaluate", ...args]), pattern);
    }
  });

  it("estimate-full: the library's estimates from a ranks file, as JSON, CSV and a table; errors name the flag and the fix", async () => {
    writeFileSync(p("sampled-ranks.txt"), "1\n1\n2\n1\n4\n3\n1\n9\n1\n2\n17\n1\n5\n2.5\n");
    const args = ["estimate-full", "--ranks", "sampled-ranks.txt", "--negatives", "50", "--num-candidates", "14541"];
    const j = await kgrank([...args, "--bootstrap", "100", "--seed", "3", "--ks", "1,10", "--format", "json"]);
    expect(j.status, j.stderr).toBe(0);
    const lib = estimateFromSampledRanks({
      ranks: [1, 1, 2, 1, 4, 3, 1, 9, 1, 2, 17, 1, 5, 2.5],
      numNegatives: 50,
      numCandidates: 14541,
      ks: [1, 10],
      bootstrap: { samples: 100, seed: 3, confidenceLevel: 0.95 },
    });
    expect(JSON.parse(j.stdout)).toEqual(JSON.parse(JSON.stringify(lib)));
    const table = await kgrank([...args, "--estimators", "sampled,minimum-bias", "--gamma", "0.1"]);
    expect(table.stdout).toMatch(/^minimum-bias +inverse_harmonic_mean_rank +0\.\d{4}$/m);
    expect(table.stdout).not.toMatch(/^minimum-mse /m);
    expect(table.stdout).toContain("minimum-bias gamma 0.1");
    const csvOut = await kgrank([...args, "--replacement", "--format", "csv"]);
    expect(csvOut.stdout.split("\n")[0]).toBe("estimator,metric,estimate,lower,upper");
    for (const [extra, pattern] of [
      [
        ["--negatives", "5"],
        /^kgrank: --ranks: element 7 \(0-based\) is 9: a rank among the true entity and --negatives 5 negatives/,
      ],
      [["--num-candidates", "20"], /^kgrank: --negatives: is 50, but .* give --replacement if/],
      [["--gamma", "0"], /^kgrank: --gamma: must be a number in \(0, 1\]/],
      [["--estimators", "best"], /^kgrank: --estimators: has "best", not an estimator/],
      [
        ["--num-candidates", "25000000", "--negatives", "500"],
        /^kgrank: --num-candidates: .* give --estimators sampled$/m,
      ],
    ] as [string[], RegExp][]) {
      const argv = [...args];
      for (let i = 0; i < extra.length; i += 2) {
        const at = argv.indexOf(extra[i]!);
        if (at >= 0) argv[at + 1] = extra[i + 1]!;
        else argv.push(extra[i]!, extra[i + 1]!);
      }
      expectUserError(await kgrank(argv), pattern);
    }
    expectUserError(await kgrank(["estimate-full", "--ranks", "sampled-ranks.txt"]), /--negatives/);
  });

  it("user errors name the file and its row: empty train.tsv, every test triple unseen, a NaN true score", async () => {
    const make = (name: string, train: string, test: string) => {
      const d = p(name);
      mkdirSync(d, { recursive: true });
      writeFileSync(path.join(d, "train.tsv"), train);
      writeFileSync(path.join(d, "valid.tsv"), test);
      writeFileSync(path.join(d, "test.tsv"), test);
      return d;
    };
    // The dataset's flag and file are named, not the library's argument ("numEntities") or finalize().
    expectUserError(
      await kgrank(["evaluate", "--dataset-dir", make("empty-train", "", "a\tr\tb\n")]),
      /--dataset-dir: .*train\.tsv holds no triple: entity and relation ids come from the training triples/,
    );
    expectUserError(
      await kgrank(["evaluate", "--dataset-dir", make("unseen", "a\tr\tb\n", "x\tr\ty\nz\tq\tw\n")]),
      /--split: the test split of unseen has no triple to evaluate: all 2 have an entity or relation unseen in train/,
    );
    // The file, the side and the row of the file are named, not a task of a batch.
    const scores = new Float32Array(rows * n);
    scores.fill(NaN, 50 * n, 51 * n);
    writeNpy(p("nan-row.npy"), scores, [rows, n]);
    expectUserError(
      await kgrank(["evaluate", "--scores-tail", "nan-row.npy"]),
      /--scores-tail: the true score of row 50 of nan-row\.npy \(triple \(\d+, \d+, \d+\), tail side\) is NaN/,
    );
  });

  it("compare, evaluate, merge, metrics: --metrics and --seed errors name the flag in the command line's words", async () => {
    expect((await kgrank(["evaluate", "--save-state", "msg.state", "--quiet"])).status).toBe(0);
    const library = /listMetrics|getMetric|parseMetricKey|RankResults|^kgrank: (query|seed|metrics|bootstrap)/;
    for (const [args, pattern] of [
      [
        ["compare", "msg.state", "msg.state", "--metrics", "fooo"],
        /^kgrank: --metrics: unknown metric "fooo"; closest known names: .* \(every metric: docs\/metrics\.md\)\n$/,
      ],
      [
        ["compare", "msg.state", "msg.state", "--metrics", "mrr,both.realistic.mrr"],
        /^kgrank: --metrics: "both\.realistic\.mrr" is a full key \(side\.rank_type\.metric\); this command takes metric names such as "mrr"\n$/,
      ],
      [["compare", "msg.state", "msg.state", "--metrics", "all"], /^kgrank: --metrics: unknown metric "all"/],
      [
        ["compare", "msg.state", "msg.state", "--seed", "4294967296"],
        /^kgrank: --seed: must be an integer from 0 to 4294967295/,
      ],
      [
        ["evaluate", "--bootstrap", "10", "--seed", "4294967296"],
        /^kgrank: --seed: must be an integer from 0 to 4294967295/,
      ],
      [["evaluate", "--metrics", "mrr,fooo"], /^kgrank: --metrics: unknown metric "fooo"; .*; all for every one\)\n$/],
      [["evaluate", "--metrics", "hits@-1"], /^kgrank: --metrics: "hits@-1": Hits@k needs an integer k >= 1/],
      [["merge", "msg.state", "--metrics", "fooo"], /^kgrank: --metrics: unknown metric "fooo"/],
      [["metrics", "--ranks", "ranks.txt", "--metrics", "fooo"], /^kgrank: --metrics: unknown metric "fooo"/],
    ] as [string[], RegExp][]) {
      const r = await kgrank(args);
      expectUserError(r, pattern);
      expect(r.stderr, args.join(" ")).not.toMatch(library);
    }
  });

  it("compare: saved runs' paired comparison equals compareRuns on the same states; other tasks are refused", async () => {
    expect((await kgrank(["evaluate", "--save-state", "cmp-a.state", "--quiet"])).status).toBe(0);
    const noisy = (side: "head" | "tail") =>
      new FrequencyBaseline(nations.splits.train, n, nations.numRelations)
        .scoreBatch(nations.splits.test, side)
        .map((x, i) => x + ((i * 7919) % 5) * 0.5);
    writeNpy(p("cmp-head.npy"), noisy("head"), [rows, n]);
    writeNpy(p("cmp-tail.npy"), noisy("tail"), [rows, n]);
    expect(
      (
        await kgrank([
          "evaluate",
          "--scores-head",
          "cmp-head.npy",
          "--scores-tail",
          "cmp-tail.npy",
          "--save-state",
          "cmp-b.state",
          "--quiet",
        ])
      ).status,
    ).toBe(0);
    const r = await kgrank([
      "compare",
      "cmp-a.state",
      "cmp-b.state",
      "--samples",
      "500",
      "--seed",
      "2",
      "--metrics",
      "mrr,hits@1,median_rank",
      "--format",
      "json",
    ]);
    expect(r.status, r.stderr).toBe(0);
    const runs = ["cmp-a.state", "cmp-b.state"].map((f) => ({
      name: f,
      results: RankEvaluator.deserialize(new Uint8Array(readFileSync(p(f)))).finalize(),
    }));
    expect(JSON.parse(r.stdout)).toEqual(
      JSON.parse(
        JSON.stringify(
          compareRuns(runs, { samples: 500, seed: 2, metrics: ["mrr", "hits@1", "median_rank"] }),
          (_k, v) => (typeof v === "number" && !Number.isFinite(v) ? null : v),
        ),
      ),
    );
    const piped = await kgrank(["compare", "cmp-a.state", "cmp-b.state", "--samples", "200"]);
    expect(piped.stdout).toMatch(/p adjusted over all 7 rows: Holm-Bonferroni/);
    // Off a terminal the comparison reports itself in one line when it ends; --quiet has none.
    expect(piped.stderr).toMatch(/^kgrank: comparing 1 run with cmp-a\.state \(200 samples\): \d+\.\d s\n$/);
    expect((await kgrank(["compare", "cmp-a.state", "cmp-b.state", "--samples", "20", "--quiet"])).stderr).toBe("");
    expect(
      (await kgrank(["evaluate", "--scores-tail", "cmp-tail.npy", "--save-state", "cmp-c.state", "--quiet"])).status,
    ).toBe(0);
    expectUserError(
      await kgrank(["compare", "cmp-a.state", "cmp-c.state"]),
      /runs: cmp-c\.state has 201 tasks, cmp-a\.state 402/,
    );
    expectUserError(await kgrank(["compare", "cmp-a.state"]), /at least two saved runs/);
    expectUserError(await kgrank(["compare", "cmp-a.state", "cmp-head.npy"]), /cmp-head\.npy: .*wrong magic bytes/);
    // Identical runs: d_z is 0, not NaN.
    const same = await kgrank(["compare", "cmp-a.state", "cmp-a.state", "--samples", "50", "--metrics", "mrr,mr"]);
    expect(same.status, same.stderr).toBe(0);
    expect(same.stdout).not.toMatch(/NaN/);
    expect(same.stdout).toMatch(
      /^inverse_harmonic_mean_rank\s+cmp-a\.state\s+0\.5499\s+0\.5499\s+0\s+\[0, 0\]\s+1\.0000\s+1\.0000\s+0$/m,
    );
  });

  it("compare takes --ranks-out files (.npz by id, .tsv by label) as well as states; a task mismatch names the first differing task", async () => {
    const b = (side: "head" | "tail") =>
      new FrequencyBaseline(nations.splits.train, n, nations.numRelations)
        .scoreBatch(nations.splits.test, side)
        .map((x, i) => x + ((i * 7919) % 5) * 0.5);
    writeNpy(p("rk-head.npy"), b("head"), [rows, n]);
    writeNpy(p("rk-tail.npy"), b("tail"), [rows, n]);
    for (const [name, extra] of [
      ["rk-a", []],
      ["rk-b", ["--scores-head", "rk-head.npy", "--scores-tail", "rk-tail.npy"]],
    ] as const) {
      const r = await kgrank([
        "evaluate",
        ...extra,
        "--save-state",
        `${name}.state`,
        "--ranks-out",
        `${name}.npz`,
        "--quiet",
      ]);
      expect(r.status, r.stderr).toBe(0);
      expect((await kgrank(["evaluate", ...extra, "--ranks-out", `${name}.tsv`, "--quiet"])).status).toBe(0);
    }
    const cmp = async (files: string[]) => {
      const r = await kgrank([
        "compare",
        ...files,
        "--samples",
        "300",
        "--seed",
        "4",
        "--metrics",
        "mrr,hits@3,median_rank",
        "--format",
        "json",
      ]);
      expect(r.status, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout);
      delete j.names;
      return j;
    };
    const fromStates = await cmp(["rk-a.state", "rk-b.state"]);
    expect(fromStates.rows[0].difference).not.toBe(0);
    expect(await cmp(["rk-a.npz", "rk-b.npz"])).toEqual(fromStates);
    expect(await cmp(["rk-a.tsv", "rk-b.tsv"])).toEqual(fromStates);
    expect(await cmp(["rk-a.state", "rk-b.npz"])).toEqual(fromStates);
    // The same tail tasks in another order: the first differing task is named, by id (states, .npz) or label (.tsv).
    const t = nations.splits.test;
    const last = rows - 1;
    for (const [args, name] of [
      [["--scores-tail", "tail.npy"], "rk-fwd"],
      [["--scores-tail", "rev-tail.npy", "--triples", "rev-triples.npy"], "rk-rev"],
    ] as const) {
      expect(
        (await kgrank(["evaluate", ...args, "--save-state", `${name}.state`, "--ranks-out", `${name}.tsv`, "--quiet"]))
          .status,
      ).toBe(0);
    }
    const ids = (i: number) => `tail \\(${t[3 * i]}, ${t[3 * i + 1]}, ${t[3 * i + 2]}\\)`;
    const labels = (i: number) =>
      `tail \\(${nations.entityLabels[t[3 * i]!]}, ${nations.relationLabels[t[3 * i + 1]!]}, ${nations.entityLabels[t[3 * i + 2]!]}\\)`;
    expectUserError(
      await kgrank(["compare", "rk-fwd.state", "rk-rev.state"]),
      new RegExp(
        `^kgrank: runs: task 0 differs: rk-fwd\\.state has ${ids(0)}, rk-rev\\.state has ${ids(last)}; the runs must be over the same tasks in the same order$`,
        "m",
      ),
    );
    expectUserError(
      await kgrank(["compare", "rk-fwd.tsv", "rk-rev.tsv"]),
      new RegExp(`task 0 differs: rk-fwd\\.tsv has ${labels(0)}, rk-rev\\.tsv has ${labels(last)};`),
    );
    expectUserError(
      await kgrank(["compare", "rk-a.state", "rk-b.tsv"]),
      /task 0 differs: .*\(a \.tsv rank file names tasks by label, a state or \.npz by id: compare like with like\)$/m,
    );
    // Files that are not rank files.
    writeFileSync(p("not-ranks.tsv"), "a\tb\n");
    expectUserError(
      await kgrank(["compare", "rk-a.tsv", "not-ranks.tsv"]),
      /^kgrank: not-ranks\.tsv: line 1 is not the header .*: not a rank file written by kgrank evaluate --ranks-out/,
    );
    writeFileSync(
      p("short-ranks.tsv"),
      "side\thead\trelation\ttail\toptimistic\trealistic\tpessimistic\tnum_candidates\ntail\ta\tr\tb\t1\t1\n",
    );
    expectUserError(
      await kgrank(["compare", "rk-a.tsv", "short-ranks.tsv"]),
      /short-ranks\.tsv: line 2 has 6 fields, not 8/,
    );
    writeFileSync(
      p("bad-rank.tsv"),
      "side\thead\trelation\ttail\toptimistic\trealistic\tpessimistic\tnum_candidates\ntail\ta\tr\tb\t1\t9\t9\t3\n",
    );
    expectUserError(
      await kgrank(["compare", "rk-a.tsv", "bad-rank.tsv"]),
      /bad-rank\.tsv: line 2, column pessimistic: pessimistic = 9 is not a rank in \[1, num_candidates = 3\]/,
    );
    expectUserError(
      await kgrank(["compare", "rk-a.npz", "ranks.npy"]),
      /ranks\.npy: is not a valid kgrank evaluator state/,
    );
    writeNpz(p("not-ranks.npz"), { side: { data: Int8Array.of(1) } }, "test");
    expectUserError(
      await kgrank(["compare", "rk-a.npz", "not-ranks.npz"]),
      /not-ranks\.npz: has no array "head", "relation", "tail", "optimistic", "realistic", "pessimistic", "num_candidates": not a rank file/,
    );
  });

  it("evaluate --ranks-out: every task's ranks as .tsv with labels and as .npz NumPy reads; equal to results.tasks()", async () => {
    expect((await kgrank(["evaluate", "--ranks-out", "ranks.tsv", "--quiet"])).status).toBe(0);
    expect((await kgrank(["evaluate", "--ranks-out", "ranks-out.npz", "--quiet"])).status).toBe(0);
    const ev = new RankEvaluator({
      numEntities: n,
      numRelations: nations.numRelations,
      filterTriples: [nations.splits.train, nations.splits.valid, nations.splits.test],
    });
    const b = new FrequencyBaseline(nations.splits.train, n, nations.numRelations);
    for (const side of ["head", "tail"] as const)
      await ev.add({ triples: nations.splits.test, side, scores: b.scoreBatch(nations.splits.test, side) });
    const t = ev.finalize().tasks();
    const lines = readFileSync(p("ranks.tsv"), "utf8").trim().split("\n");
    expect(lines[0]).toBe("side\thead\trelation\ttail\toptimistic\trealistic\tpessimistic\tnum_candidates");
    expect(lines).toHaveLength(1 + 2 * rows);
    const first = lines[1]!.split("\t");
    expect(first).toEqual([
      "head",
      nations.entityLabels[t.head[0]!],
      nations.relationLabels[t.relation[0]!],
      nations.entityLabels[t.tail[0]!],
      String(t.optimistic[0]),
      String(t.realistic[0]),
      String(t.pessimistic[0]),
      String(t.numCandidates[0]),
    ]);
    const z = parseNpz(new Uint8Array(readFileSync(p("ranks-out.npz"))));
    expect(Array.from(z.realistic!.data as Float64Array)).toEqual(Array.from(t.realistic));
    expect(Array.from(z.side!.data as Int8Array).filter((x) => x === 1)).toHaveLength(rows);
    expectUserError(await kgrank(["evaluate", "--ranks-out", "ranks.csv"]), /--ranks-out: must end in \.npz or \.tsv/);
  });

  it("evaluate --negatives-tail: sampled ranks (each positive 2.5 above 3 of 5 negatives -> realistic rank 3)", async () => {
    const r = await kgrank([
      "evaluate",
      "--scores-tail",
      "pos.npy",
      "--negatives-tail",
      "neg.npy",
      "--format",
      "json",
      "--metrics",
      "mr,mrr",
    ]);
    expect(r.status, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.results.tail.realistic.arithmetic_mean_rank).toBe(3);
    expect(j.results.tail.realistic.inverse_harmonic_mean_rank).toBeCloseTo(1 / 3, 12);
    expect(Object.keys(j.results.tail.realistic).sort()).toEqual([
      "arithmetic_mean_rank",
      "inverse_harmonic_mean_rank",
    ]);
  });

  it("evaluate options: --split valid, --filter, --ks, --metrics, csv, markdown, --by-relation, --bootstrap", async () => {
    const valid = JSON.parse((await kgrank(["evaluate", "--split", "valid", "--format", "json"])).stdout);
    expect(valid.triples).toBe(199);
    const raw = JSON.parse((await kgrank(["evaluate", "--filter", "none", "--format", "json"])).stdout);
    expect(raw.info.filtered).toBe(false);
    expect(raw.results.both.realistic.arithmetic_mean_rank).toBeGreaterThan(
      valid.results.both.realistic.arithmetic_mean_rank - 100,
    );
    const trainOnly = JSON.parse((await kgrank(["evaluate", "--filter", "train", "--format", "json"])).stdout);
    expect(trainOnly.setting).toBe("filtered by train+test"); // the evaluated split always filters (PyKEEN)
    const ks = JSON.parse(
      (await kgrank(["evaluate", "--ks", "2,7", "--metrics", "hits@2,hits@7", "--format", "json"])).stdout,
    );
    expect(Object.keys(ks.results.both.realistic).sort()).toEqual(["hits_at_2", "hits_at_7"]);
    const c = (await kgrank(["evaluate", "--format", "csv"])).stdout.trim().split("\n");
    expect(c[0]).toBe("relation,side,rank_type,metric,value,expected,lower,upper");
    expect(c.some((l) => l.startsWith("all,both,realistic,inverse_harmonic_mean_rank,"))).toBe(true);
    expect((await kgrank(["evaluate", "--format", "markdown"])).stdout).toMatch(
      /^\| metric \| head \| tail \| both \| random E \|\n\| --- \|[^\n]*\n\| MRR \| /m,
    );
    expect((await kgrank(["evaluate", "--metrics", "all", "--format", "markdown"])).stdout).toMatch(
      /^\| metric \| head opti\. \|/m,
    );
    const rel = await kgrank(["evaluate", "--by-relation"]);
    expect(rel.stdout).toMatch(/Per relation/);
    expect(rel.stdout).toMatch(/^embassy\s+\d+/m); // relation labels, not ids
    const boot = JSON.parse((await kgrank(["evaluate", "--bootstrap", "50", "--format", "json"])).stdout);
    const iv = boot.intervals.both.realistic.inverse_harmonic_mean_rank;
    expect(iv.lower).toBeLessThanOrEqual(iv.value);
    expect(iv.upper).toBeGreaterThanOrEqual(iv.value);
    expect(iv.upper).toBeGreaterThan(iv.lower);
  });

  it("--output writes the file atomically and prints nothing on stdout", async () => {
    const r = await kgrank(["evaluate", "--format", "json", "--output", "out.json", "--quiet"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    expect(JSON.parse(readFileSync(p("out.json"), "utf8")).dataset).toBe("nations");
    expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("--output to a full disk (/dev/full) or a missing directory: one-line error, no file", async () => {
    if (existsSync("/dev/full"))
      expectUserError(
        await kgrank(["evaluate", "--output", "/dev/full"]),
        /--output: cannot write \/dev\/full: no space left/,
      );
    expectUserError(await kgrank(["evaluate", "--output", "nodir/out.txt"]), /--output: cannot write/);
    expect(existsSync(p("nodir"))).toBe(false);
  });

  it("echoed input is bounded: a 50,000-dimension .npy or an .npz of two 60,000-character names as --scores-tail", async () => {
    // The one line on stderr stays under 600 characters though the shape and the names would take 150 KB and 120 KB.
    writeFileSync(p("dims-50k.npy"), encodeNpy(Float32Array.of(0.5), new Array<number>(50_000).fill(1)));
    const r = await kgrank(["evaluate", "--scores-tail", "dims-50k.npy"]);
    expectUserError(
      r,
      /^kgrank: --scores-tail: shape \(1, 1, 1, 1, 1, 1, \.\.\. \(50000 dimensions\)\) does not match \(201, 14\)/,
    );
    expect(r.stderr.length).toBeLessThan(600);
    const good = encodeNpy(Float32Array.of(1, 2));
    writeFileSync(
      p("long-names.npz"),
      zipSync({ [`${"a".repeat(60_000)}.npy`]: good, [`${"b".repeat(60_000)}.npy`]: good }, { level: 0 }),
    );
    const z = await kgrank(["evaluate", "--scores-tail", "long-names.npz"]);
    expectUserError(
      z,
      /^kgrank: --scores-tail: long-names\.npz holds 2 arrays \("a{60}"… \(60000 characters\), "b{60}"… \(60000 characters\)\); save exactly one/,
    );
    expect(z.stderr.length).toBeLessThan(600);
  });

  it("bad input to evaluate: missing file, wrong dtype, wrong shape, not npy, unknown metric/dataset/option/format", async () => {
    expectUserError(
      await kgrank(["evaluate", "--scores-tail", "missing.npy"]),
      /--scores-tail: cannot read missing\.npy: no such file/,
    );
    expectUserError(
      await kgrank(["evaluate", "--scores-tail", "int.npy"]),
      /--scores-tail: dtype i4 is not a float type/,
    );
    expectUserError(
      await kgrank(["evaluate", "--scores-tail", "narrow.npy"]),
      /--scores-tail: shape \(201, 13\) does not match \(201, 14\)/,
    );
    expectUserError(
      await kgrank(["evaluate", "--scores-head", "short.npy"]),
      /--scores-head: shape \(200, 14\) does not match \(201, 14\)/,
    );
    expectUserError(
      await kgrank(["evaluate", "--scores-tail", "garbage.npy"]),
      /--scores-tail: not a valid \.npy file: wrong magic/,
    );
    expectUserError(
      await kgrank(["evaluate", "--scores-tail", "pos.npy", "--negatives-tail", "short.npy"]),
      /--negatives-tail: shape \(200, 14\) does not match \(201, K\)/,
    );
    expectUserError(await kgrank(["evaluate", "--negatives-tail", "neg.npy"]), /--negatives-tail: needs --scores-tail/);
    expectUserError(await kgrank(["evaluate", "--metrics", "mrx"]), /unknown metric "mrx"; closest known names: .*mrr/);
    expectUserError(await kgrank(["evaluate", "--dataset", "fb16k"]), /unknown dataset "fb16k"/);
    expectUserError(
      await kgrank(["evaluate", "--dataset", "wn18rr", "--dataset-dir", "nowhere"]),
      /--dataset-dir: wn18rr is not bundled/,
    );
    expectUserError(await kgrank(["evaluate", "--dataset-dir", "nowhere"]), /--dataset-dir: nowhere has no train\.tsv/);
    expectUserError(
      await kgrank(["evaluate", "--split", "dev"]),
      /^kgrank: --split: must be train, valid or test, got "dev"$/m,
    );
    expectUserError(await kgrank(["evaluate", "--filter", "train,tset"]), /--filter: "tset" is not a split/);
    expectUserError(
      await kgrank(["evaluate", "--format", "xml"]),
      /^kgrank: --format: must be one of table, json, csv, markdown, got "xml"$/m,
    );
    expectUserError(await kgrank(["evaluate", "--bootstrap", "-3"]), /^kgrank: --bootstrap: must be an integer/);
    // Checked as a flag, not later as the library's bootstrap.samples.
    // The flags' own checks and commander's usage errors print like every other error: "kgrank: --flag: ...".
    expectUserError(
      await kgrank(["evaluate", "--bootstrap", "1"]),
      /^kgrank: --bootstrap: must be an integer from 2 to 1000000, got "1"$/m,
    );
    expectUserError(await kgrank(["evaluate", "--output", ""]), /^kgrank: --output: needs a file name/);
    expectUserError(
      await kgrank(["evaluate", "--ks", "0"]),
      /^kgrank: --ks: takes positive integers separated by commas, got "0"$/m,
    );
    expectUserError(await kgrank(["evaluate", "--seed"]), /^kgrank: --seed: needs a value$/m);
    expectUserError(await kgrank(["metrics"]), /^kgrank: --ranks: is required$/m);
    expectUserError(await kgrank(["evaluate", "--bogus"]), /^kgrank: unknown option '--bogus'/);
    expectUserError(
      await kgrank(["evaluate", "--by-relatio"]),
      /^kgrank: unknown option '--by-relatio' \(Did you mean --by-relation\?\)$/m,
    );
    expectUserError(await kgrank(["frobnicate"]), /^kgrank: unknown command 'frobnicate'/);
    const long = await kgrank(["evaluate", "--format", "x".repeat(100_000)]);
    expectUserError(long, /^kgrank: --format: must be one of .*, got "x{60}"… \(100000 characters\)$/m);
  });

  it("bad values of worker, report and plot flags: one line naming the flag", async () => {
    expectUserError(
      await kgrank(["worker", "--redis", "redis://127.0.0.1:1", "--state-dir", "states", "--close-timeout", "-1"]),
      /--close-timeout:? must be an integer from 0 to 3600000, got "-1"/,
    );
    expectUserError(
      await kgrank(["worker", "--redis", "redis://127.0.0.1:1", "--state-dir", "states", "--close-timeout", "soon"]),
      /--close-timeout:? must be an integer from 0 to 3600000, got "soon"/,
    );
    expectUserError(
      await kgrank(["worker", "--redis", "http://x", "--state-dir", "states"]),
      /^kgrank: --redis: must be a redis:\/\/ or rediss:\/\/ \(TLS\) URL/,
    );
    expect((await kgrank(["evaluate", "--save-state", "flags.state", "--quiet"])).status).toBe(0);
    expectUserError(
      await kgrank(["report", "flags.state", "--dataset", "kinships"]),
      /^kgrank: --dataset: kinships has 104 entities and 25 relations, but flags\.state was evaluated over 14 entities/,
    );
    expectUserError(
      await kgrank(["report", "flags.state", "--dataset", "nationz"]),
      /^kgrank: --dataset: unknown dataset "nationz"/,
    );
    expectUserError(
      await kgrank(["plot", "degrees", "flags.state", "--dataset-dir", "nowhere"]),
      /^kgrank: --dataset-dir: /,
    );
    expectUserError(
      await kgrank(["plot", "degree", "flags.state"]),
      /^kgrank: NAME: "degree" is not a plot; choose ranks, hits, relations, categories, degrees/,
    );
  });

  it("a dataset directory with a malformed TSV: the file and line are named", async () => {
    const d = mkdtempSync(path.join(dir, "ds-"));
    writeFileSync(path.join(d, "train.tsv"), "a\tr\tb\r\nb\tr\tc\r\n");
    writeFileSync(path.join(d, "valid.tsv"), "\uFEFFa\tr\tc\n");
    writeFileSync(path.join(d, "test.tsv"), "a\tr\tc\nb\tr\n");
    expectUserError(
      await kgrank(["evaluate", "--dataset-dir", d]),
      /test\.tsv: line 2 has 2 tab-separated fields, expected 3/,
    );
    writeFileSync(path.join(d, "test.tsv"), "a\tr\tc\nb\tr\ta\n");
    const r = await kgrank(["evaluate", "--dataset-dir", d, "--format", "json"]);
    expect(r.status, r.stderr).toBe(0); // CRLF and BOM accepted
    expect(JSON.parse(r.stdout).triples).toBe(2);
  });

  it("a file found through --dataset-dir is that flag's error: a Latin-1 train.tsv, a bad id-array split", async () => {
    const d = mkdtempSync(path.join(dir, "ds-latin1-"));
    writeFileSync(path.join(d, "train.tsv"), Buffer.from("a\tr\tcaf\u00e9\n", "latin1"));
    writeFileSync(path.join(d, "valid.tsv"), "a\tr\ta\n");
    writeFileSync(path.join(d, "test.tsv"), "a\tr\ta\n");
    expectUserError(
      await kgrank(["evaluate", "--dataset-dir", d]),
      /^kgrank: --dataset-dir: .*ds-latin1-\w+\/train\.tsv: line 1 is not valid UTF-8/,
    );
    // by name under --dataset-dir too: the folder flag led to the file
    const root2 = mkdtempSync(path.join(dir, "ds-root-"));
    mkdirSync(path.join(root2, "wn18rr"));
    for (const s of ["train", "valid", "test"]) writeFileSync(path.join(root2, "wn18rr", `${s}.tsv`), "a\tr\n");
    expectUserError(
      await kgrank(["evaluate", "--dataset", "wn18rr", "--dataset-dir", root2]),
      /^kgrank: --dataset-dir: .*wn18rr\/train\.tsv: line 1 has 2 tab-separated fields/,
    );
  });

  it("metrics --ranks (.txt, .json, .npy) with and without candidate counts", async () => {
    const mr = getMetric("mr");
    for (const f of ["ranks.txt", "ranks.json", "ranks.npy"]) {
      const r = await kgrank(["metrics", "--ranks", f, "--num-candidates", "nc.txt", "--format", "json"]);
      expect(r.status, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout);
      const row = (k: string) => j.metrics.find((m: { metric: string }) => m.metric === k);
      expect(row("arithmetic_mean_rank").value).toBe(4.125);
      expect(row("arithmetic_mean_rank").expected).toBeCloseTo(
        mr.expectedValue(prepareCandidates([10, 10, 10, 14]) as never),
        12,
      );
      expect(row("inverse_harmonic_mean_rank").value).toBeCloseTo((1 + 0.5 + 1 / 3.5 + 0.1) / 4, 12);
      expect(row("z_inverse_harmonic_mean_rank")).toBeDefined();
    }
    const plain = await kgrank(["metrics", "--ranks", "ranks.txt"]);
    expect(plain.status, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(/not computed \(need --num-candidates\): .*adjusted_arithmetic_mean_rank/);
    const w = await kgrank(["metrics", "--ranks", "ranks.txt", "--weights", "nc.txt", "--format", "csv"]);
    expect(w.status, w.stderr).toBe(0);
    expect(w.stdout.split("\n")[0]).toBe("metric,value,expected,std");
  });

  it("bad input to metrics: missing file, non-number line, length mismatch, rank above candidates, unknown metric", async () => {
    expectUserError(await kgrank(["metrics", "--ranks", "nope.txt"]), /--ranks: cannot read nope\.txt: no such file/);
    expectUserError(
      await kgrank(["metrics", "--ranks", "ranks-bad.txt"]),
      /--ranks: ranks-bad\.txt line 2: "two" is not a decimal number/,
    );
    expectUserError(
      await kgrank(["metrics", "--ranks", "ranks.txt", "--num-candidates", "nc-short.txt"]),
      /--num-candidates: has 2 numbers but --ranks has 4/,
    );
    expectUserError(await kgrank(["metrics", "--ranks", "ranks-big.txt", "--num-candidates", "nc.txt"]), /rank/);
    expectUserError(await kgrank(["metrics", "--ranks", "tail.npy"]), /--ranks: shape \(201, 14\) is not a vector/);
    expectUserError(await kgrank(["metrics", "--ranks", "ranks.txt", "--metrics", "hitz@3"]), /unknown metric/);
    expectUserError(await kgrank(["metrics"]), /^kgrank: --ranks: is required$/m);
  });

  it("rank files (metrics --ranks .txt, compare's --ranks-out .tsv / .npz): only plain decimals; errors name the file, line and column", async () => {
    for (const [i, v] of ["0x2", " 2 ", "2 ", "+2", "1_0", "Infinity"].entries()) {
      writeFileSync(p(`ranks-odd-${i}.txt`), `1\n${v}\n3\n`);
      expectUserError(
        await kgrank(["metrics", "--ranks", `ranks-odd-${i}.txt`]),
        new RegExp(`^kgrank: --ranks: ranks-odd-${i}\\.txt line 2: "${v.replace("+", "\\+")}" is not a decimal number`),
      );
    }
    // np.savetxt's default format (%.18e) is read: .txt files are numpy's.
    writeFileSync(p("ranks-savetxt.txt"), "1.000000000000000000e+00\n2.500000000000000000e+00\n1e1\n");
    const savetxt = await kgrank(["metrics", "--ranks", "ranks-savetxt.txt", "--format", "json", "--quiet"]);
    expect(savetxt.status, savetxt.stderr).toBe(0);
    writeFileSync(p("nc-hex.txt"), "10\n0xA\n10\n");
    writeFileSync(p("ranks-three.txt"), "1\n2.5\n3\n");
    expectUserError(
      await kgrank(["metrics", "--ranks", "ranks-three.txt", "--num-candidates", "nc-hex.txt"]),
      /--num-candidates: nc-hex\.txt line 2: "0xA" is not a decimal number/,
    );
    expect((await kgrank(["metrics", "--ranks", "ranks-three.txt", "--quiet"])).status).toBe(0);

    expect((await kgrank(["evaluate", "--ranks-out", "rf.tsv", "--save-state", "rf.state", "--quiet"])).status).toBe(0);
    const lines = readFileSync(p("rf.tsv"), "utf8").split("\n");
    /** rf.tsv with line 2's field `column` (0-based) set to `value`. */
    const edited = (name: string, column: number, value: string) => {
      const f = lines[1]!.split("\t");
      f[column] = value;
      writeFileSync(p(name), [lines[0], f.join("\t"), ...lines.slice(2)].join("\n"));
      return name;
    };
    for (const v of ["0x2", " 2 ", "1e1", "", "Infinity"]) {
      expectUserError(
        await kgrank(["compare", edited("rf-odd.tsv", 5, v), "rf.state"]),
        new RegExp(`^kgrank: rf-odd\\.tsv: line 2, column realistic: "${v}" is not a plain decimal number`),
      );
    }
    expectUserError(
      await kgrank(["compare", edited("rf-nc.tsv", 7, "20.5"), "rf.state"]),
      /^kgrank: rf-nc\.tsv: line 2, column num_candidates: 20\.5 is not a candidate count/,
    );
    expectUserError(
      await kgrank(["compare", edited("rf-zero.tsv", 5, "0"), "rf.state"]),
      /^kgrank: rf-zero\.tsv: line 2, column realistic: realistic = 0 is not a rank in \[1, num_candidates = \d+\]/,
    );
    expectUserError(
      await kgrank(["compare", edited("rf-order.tsv", 5, "2"), "rf.state"]),
      /^kgrank: rf-order\.tsv: line 2, column optimistic, realistic, pessimistic: optimistic \d+, realistic 2, pessimistic \d+ are out of order/,
    );
    expectUserError(
      await kgrank(["compare", "/dev/null", "rf.state"]),
      /^kgrank: \/dev\/null: cannot read \/dev\/null: it is a device/,
    );
    const side = Int8Array.of(0, 1);
    const ids = Int32Array.of(0, 1);
    writeNpz(p("rf-nc.npz"), {
      side: { data: side },
      head: { data: ids },
      relation: { data: ids },
      tail: { data: ids },
      optimistic: { data: Float64Array.of(1, 1) },
      realistic: { data: Float64Array.of(1, 1) },
      pessimistic: { data: Float64Array.of(1, 1) },
      num_candidates: { data: Float64Array.of(14, 2.5) },
    });
    expectUserError(
      await kgrank(["compare", "rf-nc.npz", "rf.state"]),
      /^kgrank: rf-nc\.npz: array num_candidates, entry 1: 2\.5 is not a candidate count/,
    );
    // A plain decimal past 2^31 - 1 is no count kgrank wrote: the file, line / entry and column are named.
    expectUserError(
      await kgrank(["compare", edited("rf-huge.tsv", 7, "3000000000"), "rf.state"]),
      /^kgrank: rf-huge\.tsv: line 2, column num_candidates: 3000000000 candidates are more than 2147483647/,
    );
    writeNpz(p("rf-huge.npz"), {
      side: { data: side },
      head: { data: ids },
      relation: { data: ids },
      tail: { data: ids },
      optimistic: { data: Float64Array.of(1, 1) },
      realistic: { data: Float64Array.of(1, 1) },
      pessimistic: { data: Float64Array.of(1, 1) },
      num_candidates: { data: Float64Array.of(14, 3e9) },
    });
    expectUserError(
      await kgrank(["compare", "rf-huge.npz", "rf.state"]),
      /^kgrank: rf-huge\.npz: array num_candidates, entry 1: 3000000000 candidates are more than 2147483647/,
    );
  });

  it("adjust: z and adjusted index of published numbers from the filtered candidate counts", async () => {
    const ref = await reference();
    const mrr = ref.get("mrr");
    // The baseline's own MRR adjusted post hoc must equal the evaluator's z-MRR and AMRI-style adjusted MRR.
    const r = await kgrank([
      "adjust",
      "--dataset",
      "nations",
      "--metric",
      `mrr=${mrr}`,
      "--metric",
      "hits@10=0.54",
      "--format",
      "json",
    ]);
    expect(r.status, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.metrics[0].metric).toBe("inverse_harmonic_mean_rank");
    expect(j.metrics[0].z).toBeCloseTo(ref.get("z_inverse_harmonic_mean_rank"), 9);
    expect(j.metrics[0].adjustedIndex).toBeCloseTo(ref.get("adjusted_inverse_harmonic_mean_rank"), 9);
    expect(j.metrics[0].expected).toBeCloseTo(ref.expected("mrr")!, 12);
    expect(j.metrics[1].metric).toBe("hits_at_10");
    expect(j.tasks).toBe(2 * rows);
    const table = await kgrank(["adjust", "--dataset", "nations", "--metric", "mrr=0.35"]);
    expect(table.stdout).toMatch(/inverse_harmonic_mean_rank\s+0\.3500\s+0\.3844/);
  });

  it("bad input to adjust: no metric, not NAME=VALUE, unknown metric, already adjusted, no closed form", async () => {
    expectUserError(await kgrank(["adjust"]), /--metric: give at least one NAME=VALUE/);
    expectUserError(await kgrank(["adjust", "--metric", "mrr"]), /--metric: "mrr" is not NAME=VALUE/);
    expectUserError(await kgrank(["adjust", "--metric", "mrx=0.3"]), /unknown metric "mrx"/);
    expectUserError(await kgrank(["adjust", "--metric", "amri=0.3"]), /already adjusted/);
    expectUserError(await kgrank(["adjust", "--metric", "hmr=2"]), /no closed-form expectation/);
  });

  it("expectations: filtered and unfiltered E and Var per side; filtered both-side E matches evaluate's", async () => {
    const ref = await reference();
    const r = await kgrank(["expectations", "--dataset", "nations", "--split", "test", "--format", "json"]);
    expect(r.status, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    const get = (m: string, side: string, setting: string) =>
      j.rows.find(
        (x: { metric: string; side: string; setting: string }) =>
          x.metric === m && x.side === side && x.setting === setting,
      );
    expect(get("inverse_harmonic_mean_rank", "both", "filtered").expected).toBeCloseTo(ref.expected("mrr")!, 12);
    expect(get("hits_at_10", "tail", "filtered").expected).toBeCloseTo(ref.expected("tail.hits@10")!, 12);
    // Unfiltered: every task has all 14 entities as candidates: E[MR] = (14 + 1) / 2, Var = (14^2 - 1) / 12 / tasks.
    expect(get("arithmetic_mean_rank", "head", "unfiltered").expected).toBeCloseTo(7.5, 12);
    expect(get("arithmetic_mean_rank", "head", "unfiltered").variance).toBeCloseTo((14 * 14 - 1) / 12 / rows, 12);
    expect((await kgrank(["expectations"])).stdout).toMatch(/^arithmetic_mean_rank\s+both\s+4\.477612/m);
    expectUserError(await kgrank(["expectations", "--dataset", "nope"]), /unknown dataset/);
  });

  it("expectations --dataset all: every bundled dataset, and the external ones found under --dataset-dir", async () => {
    const r = await kgrank(["expectations", "--dataset", "all", "--dataset-dir", p("no-such-dir"), "--format", "json"]);
    expect(r.status, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.datasets.map((d: { dataset: string }) => d.dataset)).toEqual(["nations", "kinships", "umls"]);
    expect(j.missing).toEqual(["fb15k-237", "wn18rr", "codex-s", "codex-m"]);
    const one = JSON.parse((await kgrank(["expectations", "--dataset", "kinships", "--format", "json"])).stdout);
    expect(j.datasets[1].rows).toEqual(one.rows);
    const c = (
      await kgrank(["expectations", "--dataset", "all", "--dataset-dir", p("no-such-dir"), "--format", "csv"])
    ).stdout
      .trim()
      .split("\n");
    expect(c[0]).toBe("dataset,metric,side,setting,expected,variance");
    expect(new Set(c.slice(1).map((l) => l.split(",")[0]))).toEqual(new Set(["nations", "kinships", "umls"]));
  });

  const fb = sharedDataset("fb15k-237");
  it.skipIf(fb.missing)(
    fb.name("adjust on FB15k-237 from --dataset-dir: 2 x 20,438 filtered tasks over 14,505 entities"),
    async () => {
      const r = await kgrank([
        "adjust",
        "--dataset",
        "fb15k-237",
        "--dataset-dir",
        SHARED_DATASETS,
        "--metric",
        "mrr=0.35",
        "--format",
        "json",
      ]);
      expect(r.status, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout);
      expect(j.tasks).toBe(2 * 20438);
      expect(j.metrics[0].expected).toBeGreaterThan(0);
      expect(j.metrics[0].expected).toBeLessThan(0.01);
      expect(j.metrics[0].z).toBeGreaterThan(100);
    },
  );
});
