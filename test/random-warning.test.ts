/**
 * `kgrank evaluate` warns on stderr when its ranks are indistinguishable from uniformly random ranking (|z| of the
 * realistic MRR and MR below 3) and names the usual causes: a small DistMult model trained here on Nations is far
 * from random and gets no warning, the same model with its entity rows shuffled (rows in another order than the
 * dataset's ids) gets one; the bundled baseline gets none, random score files get the score files' causes.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

import { loadDataset, writeNpy } from "../src/index";
import { randomRankingScores } from "../src/run/random-warning";
import { backendLabel } from "./helpers/backend";
import { kgrank } from "./helpers/cli";
import { rng } from "./helpers/reference";
import { tempDir } from "./helpers/temp";

const ds = loadDataset("nations");
const E = ds.numEntities;
const R = ds.numRelations;
const D = 8;

/**
 * DistMult trained by full-batch gradient descent on the softmax cross-entropy of both sides' queries over every
 * entity (200 steps, plain float64 JavaScript: deterministic): MRR about 0.63 on the test split, random 0.38.
 */
function trainDistMult(): { ent: Float32Array; rel: Float32Array } {
  const next = rng(7);
  const ent = Float64Array.from({ length: E * D }, () => 0.2 * next() - 0.1);
  const rel = Float64Array.from({ length: R * D }, () => 0.2 * next() - 0.1);
  const train = ds.splits.train;
  const n = train.length / 3;
  const q = new Float64Array(D);
  const p = new Float64Array(E);
  for (let step = 0; step < 200; step++) {
    const ge = new Float64Array(E * D);
    const gr = new Float64Array(R * D);
    for (let i = 0; i < n; i++) {
      const r = train[3 * i + 1]!;
      for (const [a, truth] of [
        [train[3 * i]!, train[3 * i + 2]!],
        [train[3 * i + 2]!, train[3 * i]!],
      ] as const) {
        for (let j = 0; j < D; j++) q[j] = ent[a * D + j]! * rel[r * D + j]!;
        let most = -Infinity;
        for (let e = 0; e < E; e++) {
          let v = 0;
          for (let j = 0; j < D; j++) v += q[j]! * ent[e * D + j]!;
          p[e] = v;
          most = Math.max(most, v);
        }
        let z = 0;
        for (let e = 0; e < E; e++) z += p[e] = Math.exp(p[e]! - most);
        for (let e = 0; e < E; e++) {
          const g = p[e]! / z - (e === truth ? 1 : 0);
          for (let j = 0; j < D; j++) {
            ge[e * D + j] = ge[e * D + j]! + g * q[j]!;
            ge[a * D + j] = ge[a * D + j]! + g * rel[r * D + j]! * ent[e * D + j]!;
            gr[r * D + j] = gr[r * D + j]! + g * ent[a * D + j]! * ent[e * D + j]!;
          }
        }
      }
    }
    for (let x = 0; x < ent.length; x++) ent[x] = ent[x]! - (8 * ge[x]!) / n;
    for (let x = 0; x < rel.length; x++) rel[x] = rel[x]! - (8 * gr[x]!) / n;
  }
  return { ent: Float32Array.from(ent), rel: Float32Array.from(rel) };
}

function modelDir(dir: string, name: string, ent: Float32Array, rel: Float32Array): void {
  mkdirSync(path.join(dir, name));
  writeNpy(path.join(dir, name, "entity_embedding.npy"), ent, [E, D]);
  writeNpy(path.join(dir, name, "relation_embedding.npy"), rel, [R, D]);
  writeFileSync(path.join(dir, name, "config.json"), JSON.stringify({ model: "DistMult", hidden_dim: D, gamma: 0 }));
}

const WARNING =
  /^kgrank: warning: these ranks are indistinguishable from uniformly random ranking \(z-scores over 402 tasks: realistic MRR -?\d+\.\d\d, MR -?\d+\.\d\d; \|z\| < 3 for both/;

describe(`kgrank evaluate warns about random-like ranks on ${backendLabel}`, () => {
  const { ent, rel } = trainDistMult();
  const dir = tempDir("random-warning");
  modelDir(dir, "good", ent, rel);
  // The same rows in another order: entity e's row is the trained row of entity (e + 5) mod E.
  const shuffled = new Float32Array(ent.length);
  for (let e = 0; e < E; e++) shuffled.set(ent.subarray(((e + 5) % E) * D, (((e + 5) % E) + 1) * D), e * D);
  modelDir(dir, "shuffled", shuffled, rel);

  it("a trained model: no warning; its entity rows shuffled: the warning and the embeddings' causes", async () => {
    const good = await kgrank(["evaluate", "--dataset", "nations", "--model-dir", "good", "--format", "json"], dir);
    expect(good.status, good.stderr).toBe(0);
    expect(good.stderr).toBe("");
    expect(JSON.parse(good.stdout).results.both.realistic.z_inverse_harmonic_mean_rank).toBeGreaterThan(10);
    const bad = await kgrank(["evaluate", "--dataset", "nations", "--model-dir", "shuffled", "--format", "json"], dir);
    expect(bad.status, bad.stderr).toBe(0);
    expect(bad.stderr).toMatch(WARNING);
    expect(bad.stderr).toMatch(/embedding rows in another order than the dataset's entity ids .*--entity-ids/);
    expect(bad.stderr).toMatch(/another dataset than the one the model was trained on \(--dataset\)/);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    // The results themselves are unchanged: JSON on stdout, no warning in it.
    const z = JSON.parse(bad.stdout).results.both.realistic.z_inverse_harmonic_mean_rank;
    expect(Math.abs(z)).toBeLessThan(3);
    expect(bad.stdout).not.toMatch(/warning/);
    // --quiet: no notes on stderr, this one included.
    const quiet = await kgrank(["evaluate", "--dataset", "nations", "--model-dir", "shuffled", "-q"], dir);
    expect(quiet.status).toBe(0);
    expect(quiet.stderr).toBe("");
  });

  it("the bundled baseline: no warning; random score files: the warning and the score files' causes", async () => {
    const baseline = await kgrank(["evaluate"], dir);
    expect(baseline.status, baseline.stderr).toBe(0);
    expect(baseline.stderr).toBe("");
    const rows = ds.splits.test.length / 3;
    const next = rng(3);
    for (const side of ["head", "tail"])
      writeNpy(
        path.join(dir, `${side}.npy`),
        Float32Array.from({ length: rows * E }, () => next()),
        [rows, E],
      );
    const r = await kgrank(["evaluate", "--scores-head", "head.npy", "--scores-tail", "tail.npy"], dir);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(WARNING);
    expect(r.stderr).toMatch(/score columns in another order than the dataset's entity ids/);
    expect(r.stdout).toMatch(/inverse_harmonic_mean_rank/);
  });

  it("the z-scores it tests are the results' z-scored MRR and MR", async () => {
    const { RankEvaluator, EmbeddingModel } = await import("../src/index");
    const ev = new RankEvaluator({
      numEntities: E,
      numRelations: R,
      filterTriples: [ds.splits.train, ds.splits.valid, ds.splits.test],
    });
    const model = new EmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: { data: ent, shape: [E, D] },
      relationEmbeddings: { data: rel, shape: [R, D] },
    });
    ev.addModelSync({ model, triples: ds.splits.test });
    const z = randomRankingScores(ev)!;
    const results = ev.finalize();
    expect(z.mrr).toBeCloseTo(results.get("both.realistic.z_inverse_harmonic_mean_rank"), 9);
    expect(z.mr).toBeCloseTo(results.get("both.realistic.z_arithmetic_mean_rank"), 9);
    expect(z.tasks).toBe(402);
  });
});
