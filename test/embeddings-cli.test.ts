/**
 * `kgrank evaluate` from embeddings as a user runs it (bin/kgrank.js from dist/, in a subprocess on this project's
 * backend): explicit .npy files, an OGB KnowledgeGraphEmbedding model directory (config.json, RotatE phases), a
 * DGL-KE directory with shuffled rows and an entities.tsv id map, the OGB protocol; `--format json` must equal the
 * library's results for the same model.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

import { EmbeddingModel, encodeNpy, loadDataset, RankEvaluator } from "../src/index";
import { backendLabel } from "./helpers/backend";
import { randomValues } from "./helpers/embedding-reference";

const bin = path.resolve(__dirname, "..", "bin", "kgrank.js");
const dir = mkdtempSync(path.join(tmpdir(), "kgrank-emb-"));
const ds = loadDataset("nations");
const n = ds.numEntities;
const nr = ds.numRelations;

function kgrank(args: string[]) {
  const r = spawnSync(process.execPath, [bin, "evaluate", "--dataset", "nations", ...args], { cwd: dir, encoding: "utf8", timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function library(model: EmbeddingModel, negatives?: Int32Array) {
  const ev = new RankEvaluator({
    numEntities: n, numRelations: nr, ...(negatives ? {} : { filterTriples: [ds.splits.train, ds.splits.valid, ds.splits.test] }),
  });
  ev.addModelSync({ model, triples: ds.splits.test, ...(negatives ? { negatives: { head: negatives, tail: negatives } } : {}) });
  return ev.finalize().toJSON();
}

function expectClose(a: unknown, b: unknown): void {
  if (a === null) {
    expect(b === null || Number.isNaN(b)).toBe(true); // JSON writes NaN as null
    return;
  }
  if (typeof a === "number") {
    expect(Number.isNaN(a) ? NaN : a).toBeCloseTo(b as number, 12);
    return;
  }
  expect(Object.keys(a as object).sort()).toEqual(Object.keys(b as object).sort());
  for (const k of Object.keys(a as object)) expectClose((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]);
}

const ent = randomValues(n * 16, 3, 0.5);
const rel = randomValues(nr * 16, 4, 0.5);
writeFileSync(path.join(dir, "entity.npy"), encodeNpy(ent, [n, 16]));
writeFileSync(path.join(dir, "relation.npy"), encodeNpy(rel, [nr, 16]));

describe(`kgrank evaluate from embeddings [${backendLabel}]`, () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  it("explicit files: --format json equals the library's results", () => {
    const r = kgrank(["--interaction", "distmult", "--entity-embeddings", "entity.npy", "--relation-embeddings", "relation.npy", "--format", "json", "--quiet"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const got = JSON.parse(r.stdout);
    expect(got.setting).toBe("filtered by train+valid+test");
    const model = new EmbeddingModel({ interaction: "distmult", entityEmbeddings: { data: ent, shape: [n, 16] }, relationEmbeddings: { data: rel, shape: [nr, 16] } });
    expectClose(got.results, library(model));
  });

  it("an OGB KnowledgeGraphEmbedding directory (RotatE: halves, phases scaled by pi / embedding_range)", () => {
    const d = path.join(dir, "ogb-rotate");
    spawnSync("mkdir", ["-p", d]);
    const relPhases = randomValues(nr * 8, 5, 0.6);
    writeFileSync(path.join(d, "entity_embedding.npy"), encodeNpy(ent, [n, 16]));
    writeFileSync(path.join(d, "relation_embedding.npy"), encodeNpy(relPhases, [nr, 8]));
    writeFileSync(path.join(d, "config.json"), JSON.stringify({ model: "RotatE", hidden_dim: 8, gamma: 6, double_entity_embedding: true, double_relation_embedding: false }));
    const r = kgrank(["--model-dir", d, "--format", "json", "--quiet"]);
    expect(r.stderr).toBe("");
    const model = new EmbeddingModel({
      interaction: "rotate", entityEmbeddings: { data: ent, shape: [n, 16] }, relationEmbeddings: { data: relPhases, shape: [nr, 8] },
      complexLayout: "halves", phaseScale: Math.PI / ((6 + 2) / 8),
    });
    expectClose(JSON.parse(r.stdout).results, library(model));
  });

  it("a DGL-KE directory with rows in another order, mapped through entities.tsv; a missing label is an error", () => {
    const d = path.join(dir, "dglke");
    spawnSync("mkdir", ["-p", d]);
    const order = Array.from({ length: n }, (_, i) => (i * 5 + 3) % n); // row j holds entity order[j]
    const shuffled = new Float32Array(n * 16);
    order.forEach((e, j) => shuffled.set(ent.subarray(e * 16, e * 16 + 16), j * 16));
    writeFileSync(path.join(d, "Nations_TransE_l2_entity.npy"), encodeNpy(shuffled, [n, 16]));
    writeFileSync(path.join(d, "Nations_TransE_l2_relation.npy"), encodeNpy(rel, [nr, 16]));
    writeFileSync(path.join(d, "config.json"), JSON.stringify({ model: "TransE_l2", emb_size: 16, gamma: 12 }));
    writeFileSync(path.join(d, "entities.tsv"), order.map((e, j) => `${j}\t${ds.entityLabels[e]}`).join("\n") + "\n");
    const r = kgrank(["--model-dir", d, "--format", "json", "--quiet"]);
    expect(r.stderr).toBe("");
    const model = new EmbeddingModel({ interaction: "transe-l2", entityEmbeddings: { data: ent, shape: [n, 16] }, relationEmbeddings: { data: rel, shape: [nr, 16] } });
    expectClose(JSON.parse(r.stdout).results, library(model));
    writeFileSync(path.join(d, "entities.tsv"), order.map((e, j) => `${j}\t${j === 0 ? "atlantis" : ds.entityLabels[e]}`).join("\n") + "\n");
    const bad = kgrank(["--model-dir", d, "--quiet"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/has no row for the dataset's label/);
  });

  it("--negatives-ids: the OGB protocol from embeddings", () => {
    const rows = ds.splits.test.length / 3;
    const neg = Int32Array.from(randomValues(rows * 5, 8), (v) => Math.floor(((v + 1) / 2) * n));
    writeFileSync(path.join(dir, "neg.npy"), encodeNpy(neg, [rows, 5]));
    const r = kgrank(["--interaction", "distmult", "--entity-embeddings", "entity.npy", "--relation-embeddings", "relation.npy", "--negatives-ids", "neg.npy", "--format", "json", "--quiet"]);
    expect(r.stderr).toBe("");
    const model = new EmbeddingModel({ interaction: "distmult", entityEmbeddings: { data: ent, shape: [n, 16] }, relationEmbeddings: { data: rel, shape: [nr, 16] } });
    expectClose(JSON.parse(r.stdout).results, library(model, neg));
  });

  // Id maps and config.json are read like every other input: before, `--entity-ids FIFO` blocked forever and
  // `--entity-ids /dev/zero` under a memory limit aborted (std::bad_alloc, exit 134). Each run has a time limit, so a
  // regression fails here instead of hanging.
  it("--entity-ids / --relation-ids / --model-dir's config.json as a FIFO or /dev/zero (under ulimit -v): one-line error, exit 1", () => {
    const fifo = path.join(dir, "ids.fifo");
    spawnSync("mkfifo", [fifo]);
    const model = path.join(dir, "fifo-model");
    spawnSync("mkdir", ["-p", model]);
    writeFileSync(path.join(model, "entity_embedding.npy"), encodeNpy(ent, [n, 16]));
    writeFileSync(path.join(model, "relation_embedding.npy"), encodeNpy(rel, [nr, 16]));
    spawnSync("mkfifo", [path.join(model, "config.json")]);
    const zeroModel = path.join(dir, "zero-model");
    spawnSync("mkdir", ["-p", zeroModel]);
    writeFileSync(path.join(zeroModel, "entity_embedding.npy"), encodeNpy(ent, [n, 16]));
    writeFileSync(path.join(zeroModel, "relation_embedding.npy"), encodeNpy(rel, [nr, 16]));
    symlinkSync("/dev/zero", path.join(zeroModel, "config.json"));
    const files = ["--interaction", "distmult", "--entity-embeddings", "entity.npy", "--relation-embeddings", "relation.npy"];
    const limited = (args: string[]) => {
      const r = spawnSync("bash", ["-c", 'ulimit -v 4000000 && exec "$0" "$@"', process.execPath, bin, "evaluate", "--dataset", "nations", ...args], {
        cwd: dir, encoding: "utf8", timeout: 60_000,
      });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    const cases: [string[], RegExp][] = [
      [[...files, "--entity-ids", fifo], /^kgrank: --entity-ids: cannot read .*ids\.fifo: it is a FIFO/],
      [[...files, "--relation-ids", fifo], /^kgrank: --relation-ids: cannot read .*ids\.fifo: it is a FIFO/],
      [["--model-dir", model], /^kgrank: --model-dir: cannot read .*config\.json: it is a FIFO/],
      [[...files, "--entity-ids", "/dev/zero"], /^kgrank: --entity-ids: cannot read \/dev\/zero: it is a device/],
      [[...files, "--relation-ids", "/dev/zero"], /^kgrank: --relation-ids: cannot read \/dev\/zero: it is a device/],
      [["--model-dir", zeroModel], /^kgrank: --model-dir: cannot read .*config\.json: it is a device/],
    ];
    for (const [args, re] of cases) {
      const r = args.includes("/dev/zero") || args.includes(zeroModel) ? limited(args) : kgrank(args);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(1);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(re);
    }
  });

  it("complex without --complex-layout is refused, naming the flag's option", () => {
    const r = kgrank(["--interaction", "complex", "--entity-embeddings", "entity.npy", "--relation-embeddings", "relation.npy"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/complexLayout.*halves.*interleaved/);
  });
});
