/**
 * `kgrank predict` and `kgrank grade` as a user runs them (in-process through `main(argv, out)`, on this project's
 * backend) on the bundled Nations with a small model written to .npy: the .npz holds per side int64 ids and float32
 * scores (n, k) equal to the library's predictTopK; --format wikikg90mv2 writes t_pred_top10 (int64, (n, 10)), and
 * grade prints the WikiKG90Mv2 MRR of it; --memory (the table read in chunks) and --screen write the same bytes; bad
 * flags are one-line errors naming the flag.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

import {
  EmbeddingModel,
  encodeNpy,
  evaluateWikiKG90Mv2,
  loadDataset,
  predictTopK,
  readNpy,
  readNpz,
} from "../src/index";
import { encodeNpz } from "../src/io/npz-write";
import { backendLabel } from "./helpers/backend";
import { expectUserError, kgrank } from "./helpers/cli";
import { randomValues } from "./helpers/embedding-reference";
import { tempDir } from "./helpers/temp";

const dir = tempDir("predict-cli");
const ds = loadDataset("nations");
const n = ds.numEntities;
const nr = ds.numRelations;
const ent = randomValues(n * 8, 61, 0.5);
const rel = randomValues(nr * 8, 62, 0.5);
writeFileSync(path.join(dir, "entity.npy"), encodeNpy(ent, [n, 8]));
writeFileSync(path.join(dir, "relation.npy"), encodeNpy(rel, [nr, 8]));
const model = new EmbeddingModel({
  interaction: "distmult",
  entityEmbeddings: { data: ent, shape: [n, 8] },
  relationEmbeddings: { data: rel, shape: [nr, 8] },
});
const modelFlags = [
  "--dataset",
  "nations",
  "--interaction",
  "distmult",
  "--entity-embeddings",
  "entity.npy",
  "--relation-embeddings",
  "relation.npy",
];
const filter = [ds.splits.train, ds.splits.valid, ds.splits.test];
const rows = ds.splits.test.length / 3;

describe(`kgrank predict (${backendLabel})`, () => {
  const bad = async (args: string[], re: RegExp) =>
    expectUserError(await kgrank(["predict", ...modelFlags, ...args], dir), re);
  it("writes per side int64 ids and float32 scores (n, k): the library's filtered lists", async () => {
    const r = await kgrank(["predict", ...modelFlags, "--top-k", "5", "-o", "p.npz"], dir);
    expect(r.status, r.stderr).toBe(0);
    const z = readNpz(path.join(dir, "p.npz"));
    const lib = predictTopK(model, { triples: ds.splits.test, k: 5, filter });
    for (const side of ["head", "tail"] as const) {
      expect(z[`${side}_ids`]!.dtype).toBe("i8");
      expect(z[`${side}_ids`]!.shape).toEqual([rows, 5]);
      expect(Array.from(z[`${side}_ids`]!.data)).toEqual(Array.from(lib[side]!.ids));
      expect(z[`${side}_scores`]!.dtype).toBe("f4");
      expect(Array.from(z[`${side}_scores`]!.data)).toEqual(Array.from(lib[side]!.scores));
    }
    const raw = await kgrank(
      ["predict", ...modelFlags, "--top-k", "3", "--raw", "--sides", "tail", "-o", "r.npz"],
      dir,
    );
    expect(raw.status, raw.stderr).toBe(0);
    const zr = readNpz(path.join(dir, "r.npz"));
    expect(Object.keys(zr).sort()).toEqual(["entity_range", "filtered", "tail_ids", "tail_scores"]);
    expect(Array.from(zr.entity_range!.data)).toEqual([0, n]);
    expect(Array.from(zr.filtered!.data)).toEqual([0]);
    const libRaw = predictTopK(model, { triples: ds.splits.test, k: 3, side: "tail" });
    expect(Array.from(zr.tail_ids!.data)).toEqual(Array.from(libRaw.tail!.ids));
  });

  it("--format tsv: a line per query and candidate with labels, score and ids, the library's lists", async () => {
    const read = (name: string) => {
      const [header, ...lines] = readFileSync(path.join(dir, name), "utf8").trimEnd().split("\n");
      return { header: header!.split("\t"), lines: lines.map((l) => l.split("\t")) };
    };
    const r = await kgrank(["predict", ...modelFlags, "--top-k", "5", "--format", "tsv", "-o", "p.tsv"], dir);
    expect(r.status, r.stderr).toBe(0);
    const t = read("p.tsv");
    expect(t.header).toEqual([
      "row",
      "side",
      "head",
      "relation",
      "tail",
      "position",
      "candidate",
      "score",
      "head_id",
      "relation_id",
      "tail_id",
      "candidate_id",
    ]);
    const lib = predictTopK(model, { triples: ds.splits.test, k: 5, filter });
    const want: string[][] = [];
    const test = ds.splits.test;
    for (let i = 0; i < rows; i++) {
      const [h, rr, tt] = [test[3 * i]!, test[3 * i + 1]!, test[3 * i + 2]!];
      for (const side of ["head", "tail"] as const) {
        for (let j = 0; j < 5; j++) {
          const id = lib[side]!.ids[i * 5 + j]!;
          if (id < 0) break; // a filtered row with fewer than 5 candidates: its padding is not written
          want.push([
            String(i),
            side,
            ds.entityLabels[h]!,
            ds.relationLabels[rr]!,
            ds.entityLabels[tt]!,
            String(j + 1),
            ds.entityLabels[id]!,
            "score",
            String(h),
            String(rr),
            String(tt),
            String(id),
          ]);
        }
      }
    }
    expect(t.lines.map((l) => l.map((c, i) => (i === 7 ? "score" : c)))).toEqual(want);
    // Float32 scores with 9 digits: read back as float32, the very values of the .npz.
    const scores = t.lines.map((l) => Math.fround(Number(l[7])));
    const libScores = t.lines.map((l) => lib[l[1] as "head" | "tail"]!.scores[Number(l[0]) * 5 + Number(l[5]) - 1]!);
    expect(scores).toEqual(libScores);
    // Queries: no true answer (its columns empty); padding (k past the range) is not written.
    writeFileSync(path.join(dir, "hr-tsv.npy"), encodeNpy(Int32Array.of(0, 1, 5, 2), [2, 2]));
    const q = await kgrank(
      [
        "predict",
        ...modelFlags,
        "--queries",
        "hr-tsv.npy",
        "--entity-range",
        "10:14",
        "--top-k",
        "6",
        "--format",
        "tsv",
        "-o",
        "q.tsv",
      ],
      dir,
    );
    expect(q.status, q.stderr).toBe(0);
    const libQ = predictTopK(model, { queries: Int32Array.of(0, 1, 5, 2), k: 6, entityRange: [10, 14], filter });
    const qt = read("q.tsv").lines;
    const listed = Array.from(libQ.tail!.ids).filter((id) => id >= 0).length;
    expect(qt.length).toBe(listed);
    expect(qt[0]!.slice(0, 6)).toEqual(["0", "tail", ds.entityLabels[0]!, ds.relationLabels[1]!, "", "1"]);
    expect(qt.map((l) => Number(l[11]))).toEqual(Array.from(libQ.tail!.ids).filter((id) => id >= 0));
    expect(qt.every((l) => l[10] === "" && l[4] === "")).toBe(true);
  });

  it("--queries and --entity-range: prediction over a range, every known answer removed", async () => {
    const q = Int32Array.of(0, 1, 5, 2, 13, 7);
    writeFileSync(path.join(dir, "hr.npy"), encodeNpy(q, [3, 2]));
    const r = await kgrank(
      ["predict", ...modelFlags, "--queries", "hr.npy", "--entity-range", "2:12", "--top-k", "4", "-o", "q.npz"],
      dir,
    );
    expect(r.status, r.stderr).toBe(0);
    const z = readNpz(path.join(dir, "q.npz"));
    const lib = predictTopK(model, { queries: q, k: 4, filter, entityRange: [2, 12] });
    expect(Array.from(z.tail_ids!.data)).toEqual(Array.from(lib.tail!.ids));
    expect(Array.from(z.tail_scores!.data)).toEqual(Array.from(lib.tail!.scores));
  });

  it("--format wikikg90mv2 writes t_pred_top10 (int64, (n, 10)); grade prints its WikiKG90Mv2 MRR", async () => {
    const r = await kgrank(["predict", ...modelFlags, "--format", "wikikg90mv2", "-o", "w.npz"], dir);
    expect(r.status, r.stderr).toBe(0);
    const z = readNpz(path.join(dir, "w.npz"));
    expect(Object.keys(z)).toEqual(["t_pred_top10"]);
    expect(z.t_pred_top10!.dtype).toBe("i8");
    expect(z.t_pred_top10!.shape).toEqual([rows, 10]);
    const lib = predictTopK(model, { triples: ds.splits.test, k: 10, side: "tail", filter });
    expect(Array.from(z.t_pred_top10!.data)).toEqual(Array.from(lib.tail!.ids));
    const t = Int32Array.from({ length: rows }, (_, i) => ds.splits.test[3 * i + 2]!);
    const want = evaluateWikiKG90Mv2({ tPredTop10: lib.tail!.ids, t }).mrr;
    expect(want).toBeGreaterThan(0);
    const g = await kgrank(["grade", "w.npz", "--dataset", "nations", "--format", "json"], dir);
    expect(g.status, g.stderr).toBe(0);
    expect(JSON.parse(g.stdout)).toEqual({ mrr: want, rows, duplicateRows: 0 });
    writeFileSync(path.join(dir, "t.npy"), encodeNpy(t, [rows]));
    const g2 = await kgrank(["grade", "w.npz", "--truth", "t.npy"], dir);
    expect(g2.stdout).toContain(`WikiKG90Mv2 MRR of w.npz: ${want.toFixed(6)} (${rows} rows)`);
  });

  it("combine: the files of entity ranges merge into the whole range's, bit for bit (npz and wikikg90mv2)", async () => {
    const run = async (args: string[]) => {
      const r = await kgrank(args, dir);
      expect(r.status, r.stderr).toBe(0);
    };
    await run(["predict", ...modelFlags, "--top-k", "5", "-o", "whole.npz"]);
    await run(["predict", ...modelFlags, "--top-k", "5", "--entity-range", "6:14", "-o", "c.npz"]);
    await run(["predict", ...modelFlags, "--top-k", "5", "--entity-range", "0:6", "-o", "d.npz"]);
    await run(["combine", "c.npz", "d.npz", "-o", "cd.npz"]);
    const whole = readNpz(path.join(dir, "whole.npz"));
    const cd = readNpz(path.join(dir, "cd.npz"));
    expect(Object.keys(cd).sort()).toEqual(Object.keys(whole).sort());
    for (const key of Object.keys(whole)) expect(Array.from(cd[key]!.data), key).toEqual(Array.from(whole[key]!.data));
    expectUserError(
      await kgrank(["combine", "c.npz", "d.npz", "--format", "wikikg90mv2", "-o", "x.npz"], dir),
      /--format: wikikg90mv2 needs 10 tails per query; these predictions hold 5/,
    );
    await run(["predict", ...modelFlags, "--top-k", "10", "--sides", "tail", "-o", "ten.npz"]);
    await run(["combine", "ten.npz", "--format", "wikikg90mv2", "-o", "ten-wiki.npz"]);
    expect(Array.from(readNpz(path.join(dir, "ten-wiki.npz")).t_pred_top10!.data)).toEqual(
      Array.from(readNpz(path.join(dir, "ten.npz")).tail_ids!.data),
    );
    await run(["predict", ...modelFlags, "--top-k", "5", "--entity-range", "2:14", "-o", "e.npz"]);
    expectUserError(
      await kgrank(["combine", "d.npz", "e.npz", "-o", "x.npz"], dir),
      /entity ranges \[0, 6\) and \[2, 14\) overlap/,
    );
    // An entity shard smaller than k: its lists are padded (-1, NaN), and the shards still combine exactly.
    await run(["predict", ...modelFlags, "--top-k", "5", "--entity-range", "0:11", "-o", "f.npz"]);
    await run(["predict", ...modelFlags, "--top-k", "5", "--entity-range", "11:14", "-o", "g.npz"]);
    const small = readNpz(path.join(dir, "g.npz"));
    expect(Array.from(small.tail_ids!.data.slice(0, 5), Number).slice(3)).toEqual([-1, -1]);
    expect(Array.from(small.tail_scores!.data.slice(3, 5))).toEqual([NaN, NaN]);
    await run(["combine", "g.npz", "f.npz", "-o", "fg.npz"]);
    const fg = readNpz(path.join(dir, "fg.npz"));
    for (const key of Object.keys(whole)) expect(Array.from(fg[key]!.data), key).toEqual(Array.from(whole[key]!.data));
    // k past every entity: the whole list, then padding.
    await run(["predict", ...modelFlags, "--top-k", "16", "-o", "k16.npz"]);
    const k16 = readNpz(path.join(dir, "k16.npz")).head_ids!;
    expect(k16.shape).toEqual([rows, 16]);
    expect(Array.from(k16.data.slice(14, 16), Number)).toEqual([-1, -1]);
    await run(["predict", ...modelFlags, "--format", "wikikg90mv2", "-o", "w2.npz"]);
    expectUserError(await kgrank(["combine", "d.npz", "w2.npz", "-o", "x.npz"], dir), /w2.npz: holds no entity_range/);
  });

  it("--memory that reads the table more than once says how many times, and which budget reads it once", async () => {
    // 4,000 entities: a 125 KiB table that the least budget cannot hold whole.
    const big = path.join(dir, "big");
    mkdirSync(big, { recursive: true });
    const E = 4000;
    const line = (h: number, r: number, t: number) => `e${h}\tr${r}\te${t}\n`;
    let train = "";
    for (let e = 0; e < E; e++) train += line(e, e % 5, (e * 7 + 1) % E);
    let test = "";
    for (let i = 0; i < 300; i++) test += line((i * 13) % E, i % 5, (i * 31 + 5) % E);
    writeFileSync(path.join(big, "train.tsv"), train);
    writeFileSync(path.join(big, "valid.tsv"), test);
    writeFileSync(path.join(big, "test.tsv"), test);
    writeFileSync(path.join(dir, "big-entity.npy"), encodeNpy(randomValues(E * 8, 71, 0.5), [E, 8]));
    writeFileSync(path.join(dir, "big-relation.npy"), encodeNpy(randomValues(5 * 8, 72, 0.5), [5, 8]));
    const flags = [
      "predict",
      "--dataset-dir",
      big,
      "--interaction",
      "distmult",
      "--entity-embeddings",
      "big-entity.npy",
      "--relation-embeddings",
      "big-relation.npy",
      "--top-k",
      "5",
    ];
    const refused = await kgrank([...flags, "--memory", "100", "-o", "x.npz"], dir);
    const least = /give at least ([\d.]+) KiB/.exec(refused.stderr)![1]!;
    const r = await kgrank([...flags, "--memory", `${least}KiB`, "-o", "big-least.npz"], dir);
    expect(r.status, r.stderr).toBe(0);
    const notice =
      /^kgrank: --memory ([\d.]+KiB) reads the entity table (\d+) times \((\d+) queries per pass, (\d+) reads of (\d+) rows each\); --memory ([\d.]+KiB) reads it once$/m.exec(
        r.stderr,
      );
    expect(notice, r.stderr).not.toBeNull();
    expect(Number(notice![2])).toBeGreaterThan(1);
    expect(Number(notice![3])).toBeGreaterThanOrEqual(64); // a workable block at the least budget
    expect(Number(notice![5])).toBeGreaterThanOrEqual(512); // and a workable chunk
    const once = await kgrank([...flags, "--memory", notice![6]!, "-o", "big-once.npz"], dir);
    expect(once.status, once.stderr).toBe(0);
    expect(once.stderr).not.toMatch(/reads the entity table/);
    expect(readFileSync(path.join(dir, "big-once.npz"))).toEqual(readFileSync(path.join(dir, "big-least.npz")));
    const quiet = await kgrank([...flags, "--memory", `${least}KiB`, "--quiet", "-o", "big-quiet.npz"], dir);
    expect(quiet.stderr).toBe("");
  });

  it("--memory with an id map that reorders the rows: refused in the flags' words (top-k orders ties by id)", async () => {
    // The rows reversed, and the id map naming them so.
    const reversed = new Float32Array(n * 8);
    for (let r = 0; r < n; r++) reversed.set(ent.subarray((n - 1 - r) * 8, (n - r) * 8), r * 8);
    writeFileSync(path.join(dir, "reversed.npy"), encodeNpy(reversed, [n, 8]));
    writeFileSync(path.join(dir, "reversed.dict"), [...ds.entityLabels].reverse().join("\n") + "\n");
    const flags = [
      "predict",
      "--dataset",
      "nations",
      "--interaction",
      "distmult",
      "--relation-embeddings",
      "relation.npy",
    ];
    const args = ["--entity-embeddings", "reversed.npy", "--entity-ids", "reversed.dict", "--top-k", "3"];
    // In memory (no --memory, or a budget twice the table): the lists of the table in id order.
    await kgrank([...flags, ...args, "--quiet", "-o", "rev.npz"], dir);
    await kgrank([...flags, "--entity-embeddings", "entity.npy", "--top-k", "3", "--quiet", "-o", "fwd.npz"], dir);
    expect(readFileSync(path.join(dir, "rev.npz"))).toEqual(readFileSync(path.join(dir, "fwd.npz")));
    expectUserError(
      await kgrank([...flags, ...args, "--memory", "500", "-o", "x.npz"], dir),
      /^kgrank: --entity-embeddings \/ --relation-embeddings: reads .*reversed\.npy, whose rows are in another order than the entity ids .*leave --memory out to read it into memory/,
    );
  });

  it("--memory reads the table in chunks: the same files, byte for byte (npz and wikikg90mv2, with a range)", async () => {
    const run = async (args: string[]) => {
      const r = await kgrank(["predict", ...modelFlags, ...args], dir);
      expect(r.status, r.stderr).toBe(0);
    };
    for (const [name, args] of [
      ["m-both", ["--top-k", "5"]],
      ["m-wiki", ["--format", "wikikg90mv2"]],
      ["m-range", ["--top-k", "3", "--entity-range", "2:12", "--raw"]],
      ["m-pad", ["--top-k", "5", "--entity-range", "11:14"]], // k past the range: padded alike
    ] as const) {
      // The budget a too-small one's error names: one query per block, a few rows per chunk.
      const refused = await kgrank(["predict", ...modelFlags, ...args, "--memory", "100", "-o", "x.npz"], dir);
      expectUserError(refused, /--memory: 100 B cannot hold the top-\d+ lists .* give at least [\d.]+ KiB/);
      const least = /give at least ([\d.]+ KiB)/.exec(refused.stderr)![1]!.replace(" ", "");
      await run([...args, "-o", `${name}.npz`]);
      await run([...args, "--memory", least, "-o", `${name}-streamed.npz`]);
      expect(readFileSync(path.join(dir, `${name}-streamed.npz`)), name).toEqual(
        readFileSync(path.join(dir, `${name}.npz`)),
      );
    }
  });

  it("--screen auto / int8 / off write the same bytes (in memory and with --memory); --verbose says what it did", async () => {
    const files: Buffer[] = [];
    for (const screen of ["off", "auto", "int8"]) {
      for (const memory of [[], ["--memory", "64KiB"]]) {
        const out = `s-${screen}-${memory.length}.npz`;
        const r = await kgrank(
          ["predict", ...modelFlags, "--top-k", "4", "--screen", screen, "--verbose", ...memory, "-o", out],
          dir,
        );
        expect(r.status, r.stderr).toBe(0);
        expect(r.stderr).toMatch(/^screen (off|auto|int8): /m);
        if (screen === "int8" && backendLabel.startsWith("native")) {
          expect(r.stderr).toMatch(
            /screen int8: \d+ \(query, candidate\) pairs screened in int8, \d+ rescored exactly/,
          );
        }
        files.push(readFileSync(path.join(dir, out)));
      }
    }
    for (const f of files) expect(f).toEqual(files[0]);
    await bad(["--top-k", "3", "--screen", "fast", "-o", "x.npz"], /--screen: "fast" is not a screen mode/);
  });

  it("quantize writes the screen's table; evaluate and predict --quantized read it for this model only", async () => {
    const q = await kgrank(["quantize", ...modelFlags, "-o", "entity.kgq"], dir);
    if (!backendLabel.startsWith("native")) {
      expectUserError(q, /no int8 screen/);
      return;
    }
    expect(q.status, q.stderr).toBe(0);
    expect(q.stderr).toMatch(/wrote entity\.kgq: the int8 screen's table of 14 entities x 8/);
    const plain = await kgrank(["predict", ...modelFlags, "--top-k", "4", "-o", "q-off.npz"], dir);
    expect(plain.status, plain.stderr).toBe(0);
    const used = await kgrank(
      ["predict", ...modelFlags, "--top-k", "4", "--quantized", "entity.kgq", "--verbose", "-o", "q-on.npz"],
      dir,
    );
    expect(used.status, used.stderr).toBe(0);
    expect(used.stderr).toMatch(/screen auto: \d+ \(query, candidate\) pairs screened in int8/);
    expect(readFileSync(path.join(dir, "q-on.npz"))).toEqual(readFileSync(path.join(dir, "q-off.npz")));
    const evalFlags = ["evaluate", ...modelFlags, "--format", "json", "--quiet"];
    const e0 = await kgrank(evalFlags, dir);
    const e1 = await kgrank([...evalFlags, "--quantized", "entity.kgq"], dir);
    expect(e1.status, e1.stderr).toBe(0);
    expect(JSON.parse(e1.stdout).results).toEqual(JSON.parse(e0.stdout).results);
    // With --memory the table must stay in memory: the budget must take it and its int8 copy twice over. The
    // refusal names that size, and that size is enough.
    const tight = await kgrank([...evalFlags, "--quantized", "entity.kgq", "--memory", "4KiB"], dir);
    expectUserError(
      tight,
      /--quantized: goes with an entity table held in memory, and --memory reads .*entity\.npy in chunks: give --memory at least [\d.]+ KiB \(twice the table and its int8 copy\), or leave out --quantized$/m,
    );
    const least = Math.ceil(1024 * Number(/at least ([\d.]+) KiB/.exec(tight.stderr)![1]));
    const e2 = await kgrank([...evalFlags, "--quantized", "entity.kgq", "--memory", String(least)], dir);
    expect(e2.status, e2.stderr).toBe(0);
    expect(JSON.parse(e2.stdout).results).toEqual(JSON.parse(e0.stdout).results);
    // Another model's table, a missing file, not a DistMult / ComplEx model, an output folder that does not exist.
    writeFileSync(path.join(dir, "entity2.npy"), encodeNpy(randomValues(n * 8, 63, 0.5), [n, 8]));
    const other = modelFlags.map((f) => (f === "entity.npy" ? "entity2.npy" : f));
    expectUserError(
      await kgrank(["predict", ...other, "--top-k", "3", "--quantized", "entity.kgq", "-o", "x.npz"], dir),
      /--quantized: entity\.kgq was made from other values than this model's entity table/,
    );
    await bad(
      ["--top-k", "3", "--quantized", "none.kgq", "-o", "x.npz"],
      /--quantized: cannot open none\.kgq: no such file$/m,
    );
    await bad(["--top-k", "3", "--quantized", ".", "-o", "x.npz"], /--quantized: \. is not a file/);
    const transe = modelFlags.map((f) => (f === "distmult" ? "transe-l1" : f));
    expectUserError(
      await kgrank(["quantize", ...transe, "-o", "t.kgq"], dir),
      /transe-l1 at float32: the int8 screen, and so its table, applies to DistMult, ComplEx, TransE-L2 and RotatE-L2/,
    );
    expectUserError(
      await kgrank(["quantize", ...modelFlags, "-o", "no-such-dir/t.kgq"], dir),
      /--output: cannot create .*no-such-dir\/t\.kgq: No such file or directory$/m,
    );
    expectUserError(
      await kgrank(["quantize", ...modelFlags, "-o", "entity.npy"], dir),
      /--output: \(-o\) entity\.npy names a data file kgrank reads.*entity\.kgq/,
    );
  });

  it("refuses bad flags in one line naming the flag and the fix", async () => {
    await bad(["--top-k", "0", "-o", "x.npz"], /--top-k/);
    await bad(["--top-k", "2.5", "-o", "x.npz"], /--top-k/);
    await bad(["--top-k", "3", "--sides", "head,head", "-o", "x.npz"], /--sides: lists a side twice \("head,head"\)/);
    await bad(["--top-k", "3", "--sides", "tail, tail", "-o", "x.npz"], /--sides: lists a side twice/);
    await bad(["--top-k", "3", "-o", "x.npz"].slice(0, 2), /--output/);
    await bad(
      ["--top-k", "3", "-o", "no-such-dir/x.npz"],
      /--output: cannot write .*does not exist or is not writable/,
    );
    await bad(["--top-k", "3", "--entity-range", "5:99", "-o", "x.npz"], /--entity-range: .*END <= 14/);
    await bad(["--top-k", "3", "--entity-range", "5:5", "-o", "x.npz"], /--entity-range: takes BEGIN:END/);
    await bad(["--top-k", "3", "--format", "wikikg90mv2", "-o", "x.npz"], /--top-k: .*10 tails per query/);
    await bad(["--top-k", "3", "--sides", "left", "-o", "x.npz"], /--sides/);
    expectUserError(
      await kgrank(["predict", "--dataset", "nations", "--top-k", "3", "-o", "x.npz"], dir),
      /--model-dir: or --interaction with --entity-embeddings and --relation-embeddings is required/,
    );
    // An int64 id past 2^32 is refused as stored, not wrapped into a valid int32 id.
    writeFileSync(path.join(dir, "big.npy"), encodeNpy(BigInt64Array.of(2n ** 32n + 1n, 0n), [1, 2]));
    await bad(["--top-k", "3", "--queries", "big.npy", "-o", "x.npz"], /--queries: row 0: anchor 4294967297/);
    mkdirSync(path.join(dir, "ro"), { recursive: true });
    chmodSync(path.join(dir, "ro"), 0o500);
    if (process.getuid?.() !== 0) await bad(["--top-k", "3", "-o", "ro/x.npz"], /--output: cannot write/);
    chmodSync(path.join(dir, "ro"), 0o700);
  });

  it("grade refuses a t_pred_top10 of the wrong shape or dtype, naming the file", async () => {
    writeFileSync(
      path.join(dir, "shape.npz"),
      encodeNpz({ t_pred_top10: { data: new BigInt64Array(rows * 9), shape: [rows, 9] } }),
    );
    expectUserError(
      await kgrank(["grade", "shape.npz", "--dataset", "nations"], dir),
      /shape.npz: shape \(201, 9\) does not match \(201, 10\)/,
    );
    writeFileSync(
      path.join(dir, "dtype.npz"),
      encodeNpz({ t_pred_top10: { data: new Float32Array(rows * 10), shape: [rows, 10] } }),
    );
    expectUserError(await kgrank(["grade", "dtype.npz", "--dataset", "nations"], dir), /dtype.npz: .*dtype f4.*int64/);
  });

  it("-o FILE.npy: --format npz is refused before any work (it writes several arrays); wikikg90mv2 writes the .npy asked for", async () => {
    await bad(
      ["--top-k", "3", "-o", "lists.npy"],
      /^kgrank: --output: \(-o\) lists\.npy ends in \.npy, but --format npz writes several arrays .*name it lists\.npz/,
    );
    expectUserError(
      await kgrank(["combine", "whole.npz", "-o", "whole.npy"], dir),
      /^kgrank: --output: \(-o\) whole\.npy ends in \.npy, but --format npz/,
    );
    const r = await kgrank(["predict", ...modelFlags, "--format", "wikikg90mv2", "-o", "w.npy", "--quiet"], dir);
    expect(r.status, r.stderr).toBe(0);
    const npy = readNpy(path.join(dir, "w.npy"));
    expect([npy.dtype, npy.shape]).toEqual(["i8", [rows, 10]]);
    const lib = predictTopK(model, { triples: ds.splits.test, k: 10, side: "tail", filter });
    expect(Array.from(npy.data)).toEqual(Array.from(lib.tail!.ids));
    const g = await kgrank(["grade", "w.npy", "--dataset", "nations", "--format", "json"], dir);
    expect(g.status, g.stderr).toBe(0);
  });

  it("grade --truth refuses an id that is no entity (-1), naming the flag, the file and the row", async () => {
    const r = await kgrank(["predict", ...modelFlags, "--format", "wikikg90mv2", "-o", "wt.npz", "--quiet"], dir);
    expect(r.status, r.stderr).toBe(0);
    const t = Int32Array.from({ length: rows }, (_, i) => ds.splits.test[3 * i + 2]!);
    t[7] = -1;
    writeFileSync(path.join(dir, "t-neg.npy"), encodeNpy(t, [rows]));
    expectUserError(
      await kgrank(["grade", "wt.npz", "--truth", "t-neg.npy"], dir),
      /^kgrank: --truth: t-neg\.npy row 7 holds -1, not an entity id/,
    );
  });
});
