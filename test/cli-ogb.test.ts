/**
 * `kgrank evaluate --positive-scores p.npy --negative-scores n.npy`: OGB's sampled protocol without a dataset, as a
 * user runs it (in-process through `main(argv, out)`, on this project's backend). Its realistic ranks must be the ones
 * ogbEvaluate() gives on the same arrays (element for element, through --ranks-out), its MRR the mean of OGB's
 * mrr_list up to float32 rounding (1e-7), its Hits@k the means of the hits lists exactly; shards merge to the same
 * output; every wrong flag or file is one line naming the flag.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

import { ogbEvaluateSync, parseNpz, writeNpy } from "../src/index";
import { backendLabel } from "./helpers/backend";
import { expectUserError, kgrank as runIn, type Run } from "./helpers/cli";
import { rng } from "./helpers/reference";
import { tempDir } from "./helpers/temp";

const dir = tempDir("ogb-cli");
const p = (name: string) => path.join(dir, name);
const kgrank = (args: string[]): Promise<Run> => runIn(args, dir);

const n = 600;
const K = 40;
/** OGB-shaped scores with many ties (quarter steps) and a few NaN negatives (no candidates). */
function scores(seed: number, Float: Float32ArrayConstructor | Float64ArrayConstructor) {
  const next = rng(seed);
  const pos = new Float(n).map(() => Math.round(next() * 12) / 4);
  const neg = new Float(n * K).map(() => Math.round(next() * 10) / 4);
  for (let i = 0; i < 30; i++) neg[Math.floor(next() * n * K)] = NaN;
  return { pos, neg };
}
const f32 = scores(5, Float32Array);
const f64 = scores(6, Float64Array);

beforeAll(() => {
  writeNpy(p("pos.npy"), f32.pos);
  writeNpy(p("neg.npy"), f32.neg, [n, K]);
  writeNpy(p("pos64.npy"), f64.pos, [n, 1]); // (n, 1) is accepted as (n,)
  writeNpy(p("neg64.npy"), f64.neg, [n, K]);
  const bad = Float32Array.from(f32.pos);
  bad[123] = NaN;
  writeNpy(p("pos-nan.npy"), bad);
  writeNpy(p("pos-2d.npy"), new Float32Array(n * 2), [n, 2]);
  writeNpy(p("neg-short.npy"), new Float32Array((n - 1) * K), [n - 1, K]);
  writeNpy(p("neg-int.npy"), new Int32Array(n * K), [n, K]);
});

describe(`kgrank evaluate --positive-scores / --negative-scores [${backendLabel}]`, () => {
  for (const [what, files, arrays] of [
    ["float32", ["pos.npy", "neg.npy"], f32],
    ["float64, positives (n, 1)", ["pos64.npy", "neg64.npy"], f64],
  ] as const) {
    it(`${what}: the realistic ranks are ogbEvaluate's, MRR and Hits@k the means of its lists`, async () => {
      const out = `ranks-${files[0]}.npz`;
      const r = await kgrank([
        "evaluate",
        "--positive-scores",
        files[0],
        "--negative-scores",
        files[1],
        "--format",
        "json",
        "--ranks-out",
        out,
      ]);
      expect(r.status, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout);
      expect(j.dataset).toBeNull();
      expect(j.triples).toBe(n);
      const ogb = ogbEvaluateSync({ y_pred_pos: arrays.pos, y_pred_neg: { data: arrays.neg, shape: [n, K] } });
      const ranks = parseNpz(new Uint8Array(readFileSync(p(out))));
      const realistic = ranks.realistic!.data as Float64Array;
      expect(realistic.length).toBe(n);
      for (let i = 0; i < n; i++) {
        expect(Math.fround(1 / realistic[i]!), `row ${i}`).toBe(ogb.mrr_list[i]);
        for (const k of [1, 3, 10] as const) expect(realistic[i]! <= k ? 1 : 0).toBe(ogb[`hits@${k}_list`][i]);
      }
      const mean = (a: Float32Array) => a.reduce((s, x) => s + x, 0) / a.length;
      const got = j.results.both.realistic;
      // float64 over 1 / rank here, a mean of float32-rounded 1 / rank in OGB: they differ by at most ~1e-7.
      expect(Math.abs(got.inverse_harmonic_mean_rank - mean(ogb.mrr_list))).toBeLessThan(1e-7);
      for (const k of [1, 3, 10])
        expect(got[`hits_at_${k}`]).toBeCloseTo(mean(ogb[`hits@${k}_list` as "hits@1_list"]), 14);
      expect(j.results.tail.realistic).toEqual(got); // the tasks are one side
      // Every metric and its random expectation: K + 1 candidates less the NaN negatives.
      expect(Object.keys(got)).toContain("adjusted_arithmetic_mean_rank_index");
      expect(j.expected.both.inverse_harmonic_mean_rank).toBeGreaterThan(0);
      const nc = ranks.num_candidates!.data as Float64Array;
      const finite = (i: number) => arrays.neg.subarray(i * K, (i + 1) * K).filter((x) => !Number.isNaN(x)).length;
      for (let i = 0; i < n; i++) expect(nc[i]).toBe(1 + finite(i));
    });
  }

  it("prints evaluate's table; shards merge to the unsharded output; the state compares", async () => {
    const t = await kgrank([
      "evaluate",
      "--positive-scores",
      "pos.npy",
      "--negative-scores",
      "neg.npy",
      "--metrics",
      "mrr,hits@10",
    ]);
    expect(t.status, t.stderr).toBe(0);
    expect(t.stdout).toMatch(
      /^pos\.npy and neg\.npy \(600 tasks x 40 negatives, no dataset\), sampled negatives \(unfiltered\)/m,
    );
    expect(t.stdout).toMatch(/^inverse_harmonic_mean_rank\s+[\d.]+\s+[\d.]+/m);
    const whole = await kgrank([
      "evaluate",
      "--positive-scores",
      "pos.npy",
      "--negative-scores",
      "neg.npy",
      "--format",
      "json",
      "--bootstrap",
      "20",
    ]);
    for (const i of [0, 1, 2]) {
      const s = await kgrank([
        "evaluate",
        "--positive-scores",
        "pos.npy",
        "--negative-scores",
        "neg.npy",
        "--bootstrap",
        "20",
        "--shard",
        `${i}/3`,
        "--save-state",
        `ogb-${i}.state`,
        "--quiet",
      ]);
      expect(s.status, s.stderr).toBe(0);
    }
    const merged = await kgrank(["merge", "ogb-2.state", "ogb-0.state", "ogb-1.state", "--format", "json"]);
    expect(merged.status, merged.stderr).toBe(0);
    expect(merged.stdout).toBe(whole.stdout);
    expect(
      (
        await kgrank([
          "evaluate",
          "--positive-scores",
          "pos.npy",
          "--negative-scores",
          "neg.npy",
          "--save-state",
          "ogb.state",
          "--quiet",
        ])
      ).status,
    ).toBe(0);
    const c = await kgrank(["compare", "ogb.state", "ogb.state", "--samples", "50", "--format", "json"]);
    expect(c.status, c.stderr).toBe(0);
    expect(JSON.parse(c.stdout).tasks).toBe(n);
  });

  it("refuses, one line naming the flag: a missing half, a dataset flag, wrong shapes and dtypes, a NaN positive", async () => {
    const both = ["--positive-scores", "pos.npy", "--negative-scores", "neg.npy"];
    expectUserError(
      await kgrank(["evaluate", "--positive-scores", "pos.npy"]),
      /^kgrank: --positive-scores: needs --negative-scores FILE/,
    );
    expectUserError(
      await kgrank(["evaluate", "--negative-scores", "neg.npy"]),
      /^kgrank: --negative-scores: needs --positive-scores FILE/,
    );
    for (const extra of [
      ["--dataset", "nations"],
      ["--split", "valid"],
      ["--filter", "none"],
      ["--scores-tail", "pos.npy"],
      ["--by-relation"],
      ["--interaction", "distmult"],
    ]) {
      expectUserError(
        await kgrank(["evaluate", ...both, ...extra]),
        new RegExp(
          `^kgrank: ${extra[0]}: does not apply to --positive-scores / --negative-scores \\(sampled ranking without a dataset\\)`,
        ),
      );
    }
    expectUserError(
      await kgrank(["evaluate", "--positive-scores", "pos-2d.npy", "--negative-scores", "neg.npy"]),
      /--positive-scores: shape \(600, 2\) is not \(n,\)/,
    );
    expectUserError(
      await kgrank(["evaluate", "--positive-scores", "pos.npy", "--negative-scores", "neg-short.npy"]),
      /--negative-scores: shape \(599, 40\) does not match \(600, K\)/,
    );
    expectUserError(
      await kgrank(["evaluate", "--positive-scores", "pos.npy", "--negative-scores", "neg-int.npy"]),
      /--negative-scores: dtype i4 is not a float type/,
    );
    expectUserError(
      await kgrank(["evaluate", "--positive-scores", "missing.npy", "--negative-scores", "neg.npy"]),
      /--positive-scores: cannot read missing\.npy: no such file/,
    );
    expectUserError(
      await kgrank(["evaluate", "--positive-scores", "pos-nan.npy", "--negative-scores", "neg.npy"]),
      /--positive-scores: the true score of row 123 of pos-nan\.npy is NaN/,
    );
    expectUserError(
      await kgrank(["evaluate", "--positive-scores", "pos-nan.npy", "--negative-scores", "neg.npy", "--shard", "1/2"]),
      /--shard: needs --save-state/,
    );
  });
});
