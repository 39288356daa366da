/**
 * `kgrank evaluate --quadruples DIR`: the three filter settings of a temporal KG from the command line, against the
 * library's TemporalEvaluator on the same scores (the frequency baseline of the static training triples, or a score
 * file), its shards' states merged per setting, and its user errors.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

import { FrequencyBaseline, readQuadruples, TemporalEvaluator, writeNpy } from "../src/index";
import { backendLabel } from "./helpers/backend";
import { expectUserError, kgrank } from "./helpers/cli";
import { seededTemporal } from "./helpers/temporal";
import { tempDir } from "./helpers/temp";

describe(`kgrank evaluate --quadruples on ${backendLabel}`, () => {
  // A seeded ICEWS14-shaped KG, small: labels e0.., r0.., dates from 2014-01-01.
  const dir = tempDir("temporal-cli");
  const kg = path.join(dir, "kg");
  const data = seededTemporal(20_000, 300, 5);
  const date = (tau: number) => new Date(Date.UTC(2014, 0, 1 + tau)).toISOString().slice(0, 10);
  const tsv = (q: Int32Array) => {
    const lines: string[] = [];
    for (let i = 0; i < q.length; i += 4) lines.push(`e${q[i]}\tr${q[i + 1]}\te${q[i + 2]}\t${date(q[i + 3]!)}`);
    return lines.join("\n") + "\n";
  };
  const files = {
    train: path.join(kg, "train.txt"),
    valid: path.join(kg, "valid.txt"),
    test: path.join(kg, "test.txt"),
  };
  mkdirSync(kg, { recursive: true });
  for (const s of ["train", "valid", "test"] as const) writeFileSync(files[s], tsv(data[s]));

  /** The library's three results on the baseline's (or the given) scores. */
  function library(given?: Float32Array) {
    const d = readQuadruples(files);
    const n = d.entityLabels.length;
    const ev = new TemporalEvaluator({
      numEntities: n,
      numRelations: d.relationLabels.length,
      numTimestamps: d.timestamps.length,
      filterQuadruples: [d.train, d.valid, d.test],
      ...(given ? { sides: "tail" as const } : {}),
    });
    const staticTrain = new Int32Array((d.train.length / 4) * 3);
    for (let i = 0; i < d.train.length / 4; i++) staticTrain.set(d.train.subarray(4 * i, 4 * i + 3), 3 * i);
    const base = new FrequencyBaseline(staticTrain, n, d.relationLabels.length);
    const triples = new Int32Array((d.test.length / 4) * 3);
    for (let i = 0; i < d.test.length / 4; i++) triples.set(d.test.subarray(4 * i, 4 * i + 3), 3 * i);
    for (const side of given ? (["tail"] as const) : (["head", "tail"] as const))
      ev.addSync({ quadruples: d.test, side, scores: given ?? base.scoreBatch(triples, side) });
    return { results: ev.finalize(), n, rows: d.test.length / 4 };
  }

  it("prints raw, static and time-aware results, the library's numbers, and they differ", async () => {
    const run = await kgrank(["evaluate", "--quadruples", "kg", "--format", "json"], dir);
    expect(run.status, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout);
    const { results } = library();
    for (const s of ["raw", "static", "timeAware"] as const) {
      expect(out[s].results).toEqual(
        JSON.parse(
          JSON.stringify(results[s].toJSON(), (_k, v: unknown) =>
            typeof v === "number" && !Number.isFinite(v) ? null : v,
          ),
        ),
      );
      expect(out[s].info.temporal.setting).toBe(s);
    }
    const mrr = (s: string) => out[s].results.both.realistic.inverse_harmonic_mean_rank as number;
    expect(mrr("raw")).toBeLessThanOrEqual(mrr("timeAware"));
    expect(mrr("timeAware")).toBeLessThan(mrr("static"));
    const text = (await kgrank(["evaluate", "--quadruples", "kg", "--metrics", "mrr"], dir)).stdout;
    expect(text).toMatch(/Raw \(no known fact removed\):[\s\S]*Static filter[\s\S]*Time-aware filter/);
  });

  it("ranks score files too, and its shards' states merge per setting; settings never mix", async () => {
    const { n, rows, results } = (() => {
      const base = library();
      const scores = new Float32Array(base.rows * base.n);
      for (let k = 0; k < scores.length; k++) scores[k] = (k * 7919) % 13;
      writeNpy(path.join(dir, "tail.npy"), scores, [base.rows, base.n]);
      return { ...library(scores), n: base.n, rows: base.rows };
    })();
    expect(n * rows).toBeGreaterThan(0);
    const files = await kgrank(
      ["evaluate", "--quadruples", "kg", "--scores-tail", "tail.npy", "--format", "json"],
      dir,
    );
    expect(files.status, files.stderr).toBe(0);
    const out = JSON.parse(files.stdout);
    expect(out.timeAware.results.tail.realistic.inverse_harmonic_mean_rank).toBe(results.timeAware.get("tail.mrr"));
    for (const i of [0, 1]) {
      const r = await kgrank(
        [
          "evaluate",
          "--quadruples",
          "kg",
          "--scores-tail",
          "tail.npy",
          "--shard",
          `${i}/2`,
          "--save-state",
          `t${i}.kgrs`,
        ],
        dir,
      );
      expect(r.status, r.stderr).toBe(0);
    }
    for (const [s, name] of [
      ["raw", "raw"],
      ["static", "static"],
      ["timeAware", "time-aware"],
    ] as const) {
      const merged = await kgrank(["merge", `t0.${name}.kgrs`, `t1.${name}.kgrs`, "--format", "json"], dir);
      expect(merged.status, merged.stderr).toBe(0);
      expect(JSON.parse(merged.stdout).results).toEqual(out[s].results);
    }
    expectUserError(
      await kgrank(["merge", "t0.raw.kgrs", "t1.static.kgrs"], dir),
      /t1\.static\.kgrs: was ranked against every entity in the static temporal setting, t0\.raw\.kgrs against every entity in the raw temporal setting: merge the shards of each protocol separately/,
    );
    // The same shard's states of two settings: the settings named, not "shard 0/2 again".
    expectUserError(
      await kgrank(["merge", "t0.raw.kgrs", "t0.static.kgrs"], dir),
      /t0\.static\.kgrs: was ranked against every entity in the static temporal setting/,
    );
  });

  it("names the file and line of a bad quadruple, and refuses flags it does not go with", async () => {
    const bad = path.join(dir, "bad");
    mkdirSync(bad, { recursive: true });
    writeFileSync(path.join(bad, "train.txt"), "a\tr\tb\t2014-01-01\na\tr\tc\t2014-02-30\n");
    writeFileSync(path.join(bad, "valid.txt"), "");
    writeFileSync(path.join(bad, "test.txt"), "a\tr\tb\t2014-01-01\n");
    expectUserError(
      await kgrank(["evaluate", "--quadruples", "bad"], dir),
      /train\.txt.* line 2 has timestamp "2014-02-30", which does not parse/,
    );
    const cases: [string[], RegExp][] = [
      [["--constrain-candidates", "train"], /^kgrank: --constrain-candidates: does not go with --quadruples/],
      [["--sides", "head,tail,relation"], /^kgrank: --sides: relation does not go with --quadruples/],
      [["--by-relation"], /^kgrank: --by-relation: does not go with --quadruples: the time-aware setting's relations/],
      [["--shard", "0/2"], /^kgrank: --shard: needs --save-state FILE/],
      [["--workers", "2"], /^kgrank: --workers: does not go with --quadruples: shard with --shard/],
      [
        ["--filter", "none"],
        /^kgrank: --filter: does not go with --quadruples: its three settings are raw, static and time-aware/,
      ],
      [["--positive-scores", "p.npy"], /^kgrank: --positive-scores: does not go with --quadruples/],
      [["--entity-ids", "ids.txt"], /^kgrank: --entity-ids: does not go with --quadruples/],
      [
        ["--scores-tail", "tail.npy", "--sides", "head,tail"],
        /^kgrank: --sides: head,tail does not match the score files given \(--scores-tail\)/,
      ],
    ];
    for (const [args, message] of cases)
      expectUserError(await kgrank(["evaluate", "--quadruples", "kg", ...args], dir), message);
    expectUserError(await kgrank(["evaluate", "--quadruples", "nowhere"], dir), /nowhere/);
  });
});
