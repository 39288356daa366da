/**
 * `kgrank evaluate` from embeddings as a user runs it (in-process through `main(argv, out)`, on this project's
 * backend; a subprocess only under a memory limit): explicit .npy files, an OGB KnowledgeGraphEmbedding model directory (config.json, RotatE phases), a
 * DGL-KE directory with shuffled rows and an entities.tsv id map (plain TransE: L2), .npz / safetensors files, shards
 * merged with kgrank merge, the OGB protocol; `--format json` must equal the library's results for the same model.
 */
import { copyFileSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

import {
  EmbeddingModel,
  encodeNpy,
  estimateFromSampledRanks,
  loadDataset,
  loadEmbeddingModel,
  RankEvaluator,
} from "../src/index";
import { backendInfo } from "../src/backend/backend";
import { AUTO_SCREEN_KERNELS } from "../src/scoring/embedding-model";
import { screenWithin } from "../src/run/model-flags";
import type { InteractionName } from "../src/index";
import { backendLabel } from "./helpers/backend";
import { deflated, safetensorsFile, zip } from "./helpers/archives";
import { expectUserError, kgrank as runIn, type Run } from "./helpers/cli";
import { randomValues } from "./helpers/embedding-reference";
import { KGRANK_BIN, runProcess } from "./helpers/process";
import { tempDir } from "./helpers/temp";

const dir = tempDir("emb-cli");
const ds = loadDataset("nations");
const n = ds.numEntities;
const nr = ds.numRelations;

/** `kgrank evaluate --dataset nations args`, in-process in the test folder. */
const kgrank = (args: string[]): Promise<Run> => runIn(["evaluate", "--dataset", "nations", ...args], dir);

function library(model: EmbeddingModel, negatives?: Int32Array) {
  const ev = new RankEvaluator({
    numEntities: n,
    numRelations: nr,
    ...(negatives ? {} : { filterTriples: [ds.splits.train, ds.splits.valid, ds.splits.test] }),
  });
  ev.addModelSync({
    model,
    triples: ds.splits.test,
    ...(negatives ? { negatives: { head: negatives, tail: negatives } } : {}),
  });
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
  for (const k of Object.keys(a as object))
    expectClose((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]);
}

/** The DistMult model of entity.npy and relation.npy below, as evaluate's flags. */
const DISTMULT_FLAGS = [
  "--interaction",
  "distmult",
  "--entity-embeddings",
  "entity.npy",
  "--relation-embeddings",
  "relation.npy",
];

const ent = randomValues(n * 16, 3, 0.5);
const rel = randomValues(nr * 16, 4, 0.5);
writeFileSync(path.join(dir, "entity.npy"), encodeNpy(ent, [n, 16]));
writeFileSync(path.join(dir, "relation.npy"), encodeNpy(rel, [nr, 16]));

/** The model of the shared `ent` / `rel` tables (16 columns each) under `interaction`. */
const sharedModel = (interaction: InteractionName) =>
  new EmbeddingModel({
    interaction,
    entityEmbeddings: { data: ent, shape: [n, 16] },
    relationEmbeddings: { data: rel, shape: [nr, 16] },
  });

/** A `--format json` run that printed nothing on stderr and the library's results for `model`. */
function expectResults(r: Run, model: EmbeddingModel, negatives?: Int32Array): void {
  expect(r.stderr).toBe("");
  expectClose(JSON.parse(r.stdout).results, library(model, negatives));
}

describe(`kgrank evaluate from embeddings [${backendLabel}]`, () => {
  it("explicit files: --format json equals the library's results", async () => {
    const r = await kgrank([...DISTMULT_FLAGS, "--format", "json", "--quiet"]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const got = JSON.parse(r.stdout);
    expect(got.setting).toBe("filtered by train+valid+test");
    expectClose(got.results, library(sharedModel("distmult")));
  });

  it("--screen auto / int8 / off print the same results; --verbose and the JSON say what the screen did", async () => {
    const outs = [];
    for (const screen of ["off", "auto", "int8"]) {
      const r = await kgrank([...DISTMULT_FLAGS, "--format", "json", "--screen", screen, "--verbose"]);
      expect(r.status).toBe(0);
      const got = JSON.parse(r.stdout);
      expect(got.backend.screen.mode).toBe(screen);
      const { pairs, rescored, calls } = got.backend.screen;
      if (got.backend.backend === "native" && screen === "int8") {
        expect(calls).toBeGreaterThan(0);
        expect(pairs).toBeGreaterThan(0);
        expect(r.stderr).toMatch(
          new RegExp(
            `screen int8: ${pairs} \\(query, candidate\\) pairs screened in int8, ${rescored} rescored exactly \\([0-9.]+ %; ${got.backend.screen.kernel} kernel\\)`,
          ),
        );
        expect(["amx", "avx512-vnni", "avx-vnni", "avx2", "neon-sdot", "scalar"]).toContain(got.backend.screen.kernel);
      } else if (screen !== "int8" || got.backend.backend !== "native") {
        if (screen === "off") expect(r.stderr).toMatch(/screen off: the float path scored every pair/);
      }
      if (screen === "auto") {
        // A call of this small world (rows x 16) stays below SCREEN_AUTO_WORK: auto says why it kept the float32 path.
        expect(calls).toBe(0);
        const kernel = backendInfo().screenKernel;
        expect(r.stderr).toMatch(
          got.backend.backend !== "native"
            ? /screen auto: not used \(float32, distmult, backend (wasm|ts); the float path scored every pair\)/
            : !AUTO_SCREEN_KERNELS.has(kernel!)
              ? new RegExp(`screen auto: not used \\(the ${kernel} kernel does not pay; the float path`)
              : /screen auto: not used \(too few query rows to pay for quantising the table; the float path/,
        );
      }
      outs.push(got.results);
    }
    expect(outs[1]).toEqual(outs[0]);
    expect(outs[2]).toEqual(outs[0]);
    // No --screen: auto, the default.
    const plain = await kgrank([...DISTMULT_FLAGS, "--format", "json", "--verbose"]);
    expect(JSON.parse(plain.stdout).backend.screen.mode).toBe("auto");
    expect(JSON.parse(plain.stdout).results).toEqual(outs[0]);
    const bad = await kgrank([...DISTMULT_FLAGS, "--screen", "fast"]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/^kgrank: --screen: "fast" is not a screen mode: auto \(default/);
  });

  it("--sides head,tail,relation: the relation side from the model's relation scores, as the library ranks it", async () => {
    const r = await kgrank([...DISTMULT_FLAGS, "--sides", "head,tail,relation", "--format", "json", "--quiet"]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const ev = new RankEvaluator({
      numEntities: n,
      numRelations: nr,
      filterTriples: [ds.splits.train, ds.splits.valid, ds.splits.test],
      sides: ["head", "tail", "relation"],
    });
    ev.addModelSync({ model: sharedModel("distmult"), triples: ds.splits.test });
    const want = ev.finalize().toJSON() as Record<string, unknown>;
    const got = JSON.parse(r.stdout).results as Record<string, unknown>;
    expect(Object.keys(got).sort()).toEqual(["both", "head", "relation", "tail"]);
    expectClose(got, want);
    // What cannot rank relations from embeddings is refused before any scoring.
    const refused = await kgrank([...DISTMULT_FLAGS, "--sides", "tail,relation", "--memory", "1GiB"]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(
      /^kgrank: --sides: relation does not go with --memory: relation scores from embeddings need the entity table in memory/,
    );
  });

  it("an OGB KnowledgeGraphEmbedding directory (RotatE: halves, phases scaled by pi / embedding_range)", async () => {
    const d = path.join(dir, "ogb-rotate");
    mkdirSync(d, { recursive: true });
    const relPhases = randomValues(nr * 8, 5, 0.6);
    writeFileSync(path.join(d, "entity_embedding.npy"), encodeNpy(ent, [n, 16]));
    writeFileSync(path.join(d, "relation_embedding.npy"), encodeNpy(relPhases, [nr, 8]));
    writeFileSync(
      path.join(d, "config.json"),
      JSON.stringify({
        model: "RotatE",
        hidden_dim: 8,
        gamma: 6,
        double_entity_embedding: true,
        double_relation_embedding: false,
      }),
    );
    const r = await kgrank(["--model-dir", d, "--format", "json", "--quiet"]);
    const model = new EmbeddingModel({
      interaction: "rotate",
      entityEmbeddings: { data: ent, shape: [n, 16] },
      relationEmbeddings: { data: relPhases, shape: [nr, 8] },
      complexLayout: "halves",
      phaseScale: Math.PI / ((6 + 2) / 8),
    });
    expectResults(r, model);
  });

  it("a DGL-KE directory with rows in another order, mapped through entities.tsv; a missing label is an error", async () => {
    const d = path.join(dir, "dglke");
    mkdirSync(d, { recursive: true });
    const order = Array.from({ length: n }, (_, i) => (i * 5 + 3) % n); // row j holds entity order[j]
    const shuffled = new Float32Array(n * 16);
    order.forEach((e, j) => shuffled.set(ent.subarray(e * 16, e * 16 + 16), j * 16));
    writeFileSync(path.join(d, "Nations_TransE_l2_entity.npy"), encodeNpy(shuffled, [n, 16]));
    writeFileSync(path.join(d, "Nations_TransE_l2_relation.npy"), encodeNpy(rel, [nr, 16]));
    writeFileSync(path.join(d, "config.json"), JSON.stringify({ model: "TransE_l2", emb_size: 16, gamma: 12 }));
    writeFileSync(path.join(d, "entities.tsv"), order.map((e, j) => `${j}\t${ds.entityLabels[e]}`).join("\n") + "\n");
    const r = await kgrank(["--model-dir", d, "--format", "json", "--quiet"]);
    const model = sharedModel("transe-l2");
    expectResults(r, model);
    writeFileSync(
      path.join(d, "entities.tsv"),
      order.map((e, j) => `${j}\t${j === 0 ? "atlantis" : ds.entityLabels[e]}`).join("\n") + "\n",
    );
    const bad = await kgrank(["--model-dir", d, "--quiet"]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/has no row for the dataset's label/);
  });

  it("a DGL-KE directory whose config says plain TransE is DGL-KE's TransE, the L2 distance (OGB's TransE is L1)", async () => {
    const d = path.join(dir, "dglke-transe");
    mkdirSync(d, { recursive: true });
    writeFileSync(path.join(d, "Nations_TransE_entity.npy"), encodeNpy(ent, [n, 16]));
    writeFileSync(path.join(d, "Nations_TransE_relation.npy"), encodeNpy(rel, [nr, 16]));
    // What dgl-ke's save_model writes (the run's arguments), for `dglke_train --model_name TransE`.
    writeFileSync(
      path.join(d, "config.json"),
      JSON.stringify({
        model: "TransE",
        dataset: "Nations",
        emb_size: 16,
        gamma: 12,
        double_ent: false,
        double_rel: false,
      }),
    );
    const r = await kgrank(["--model-dir", d, "--format", "json", "--quiet"]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const got = JSON.parse(r.stdout);
    expect(got.scorer).toMatch(/^transe-l2 from embeddings/);
    const files = [
      "--entity-embeddings",
      path.join(d, "Nations_TransE_entity.npy"),
      "--relation-embeddings",
      path.join(d, "Nations_TransE_relation.npy"),
    ];
    const l2 = JSON.parse(
      (await kgrank(["--interaction", "transe-l2", ...files, "--format", "json", "--quiet"])).stdout,
    );
    const l1 = JSON.parse(
      (await kgrank(["--interaction", "transe-l1", ...files, "--format", "json", "--quiet"])).stdout,
    );
    expect(got.results).toEqual(l2.results);
    expect(got.results).not.toEqual(l1.results); // the two distances rank these embeddings differently
  });

  it("plain TransE by the directory's writer: DGL-KE (either config generation or file names) L2, OGB L1; unknown: asks", async () => {
    const load = (
      name: string,
      config: Record<string, unknown>,
      entFile: string,
      interaction?: "transe-l1" | "transe-l2",
    ) => {
      const d = path.join(dir, `transe-${name}`);
      mkdirSync(d, { recursive: true });
      writeFileSync(path.join(d, entFile), encodeNpy(ent, [n, 16]));
      writeFileSync(path.join(d, entFile.replace("entity", "relation")), encodeNpy(rel, [nr, 16]));
      writeFileSync(path.join(d, "config.json"), JSON.stringify(config));
      return loadEmbeddingModel({ modelDir: d, ...(interaction ? { interaction } : {}) }).interaction;
    };
    // dgl-ke's older save_model: vars(args) with --model_name / --hidden_dim / --double_ent.
    expect(
      load(
        "dglke-old",
        { model_name: "TransE", hidden_dim: 16, gamma: 12, double_ent: false },
        "FB15k_TransE_entity.npy",
      ),
    ).toBe("transe-l2");
    expect(load("dglke-files", { model: "TransE", hidden_dim: 16, gamma: 12 }, "FB15k_TransE_entity.npy")).toBe(
      "transe-l2",
    );
    expect(load("dglke-l1", { model: "TransE_l1", emb_size: 16, gamma: 12 }, "FB15k_TransE_l1_entity.npy")).toBe(
      "transe-l1",
    );
    expect(
      load(
        "ogb",
        { model: "TransE", hidden_dim: 16, gamma: 12, double_entity_embedding: false },
        "entity_embedding.npy",
      ),
    ).toBe("transe-l1");
    expect(load("ogb-files", { model: "TransE", hidden_dim: 16, gamma: 12 }, "entity_embedding.npy")).toBe("transe-l1");
    expect(() => load("unknown", { model: "TransE", hidden_dim: 16 }, "entity.npy")).toThrow(
      /give --interaction transe-l1 or transe-l2/,
    );
    expect(load("unknown", { model: "TransE", hidden_dim: 16 }, "entity.npy", "transe-l2")).toBe("transe-l2");
    expect(() =>
      load("dglke-contradicted", { model: "TransE", emb_size: 16 }, "FB15k_TransE_entity.npy", "transe-l1"),
    ).toThrow(/contradicts/);
  });

  it("--model-dir scores the files its config names: a stray *_entity.npy or another run's files are never chosen by name order; a tie is refused, listing the candidates", async () => {
    const other = randomValues(n * 16, 11, 0.5);
    const d = path.join(dir, "ogb-stray");
    mkdirSync(d, { recursive: true });
    writeFileSync(path.join(d, "backup_entity.npy"), encodeNpy(other, [n, 16]));
    writeFileSync(path.join(d, "backup_relation.npy"), encodeNpy(rel, [nr, 16]));
    writeFileSync(path.join(d, "entity_embedding.npy"), encodeNpy(ent, [n, 16]));
    writeFileSync(path.join(d, "relation_embedding.npy"), encodeNpy(rel, [nr, 16]));
    writeFileSync(
      path.join(d, "config.json"),
      JSON.stringify({ model: "DistMult", hidden_dim: 16, gamma: 0, double_entity_embedding: false }),
    );
    const r = await kgrank(["--model-dir", d, "--format", "json", "--quiet"]);
    const model = sharedModel("distmult");
    expectResults(r, model);

    // DGL-KE: two runs in one folder; the config's dataset and model name the files.
    const g = path.join(dir, "dglke-two-runs");
    mkdirSync(g, { recursive: true });
    writeFileSync(path.join(g, "FB15k_DistMult_entity.npy"), encodeNpy(other, [n, 16]));
    writeFileSync(path.join(g, "FB15k_DistMult_relation.npy"), encodeNpy(rel, [nr, 16]));
    writeFileSync(path.join(g, "Nations_DistMult_entity.npy"), encodeNpy(ent, [n, 16]));
    writeFileSync(path.join(g, "Nations_DistMult_relation.npy"), encodeNpy(rel, [nr, 16]));
    writeFileSync(path.join(g, "AAA_TransE_l2_entity.npy"), encodeNpy(other, [n, 16]));
    const config = { model: "DistMult", dataset: "Nations", emb_size: 16, gamma: 12 };
    writeFileSync(path.join(g, "config.json"), JSON.stringify(config));
    const dgl = await kgrank(["--model-dir", g, "--format", "json", "--quiet"]);
    expectResults(dgl, model);
    // Without the dataset in config.json, two files of the model fit: refused, each candidate listed.
    writeFileSync(path.join(g, "config.json"), JSON.stringify({ ...config, dataset: undefined }));
    expectUserError(
      await kgrank(["--model-dir", g, "--quiet"]),
      /--model-dir: .*has 2 entity embedding files for .*config\.json's model "DistMult".*candidates: AAA_TransE_l2_entity\.npy, FB15k_DistMult_entity\.npy, Nations_DistMult_entity\.npy.*--entity-embeddings FILE/,
    );
    // An OGB config without entity_embedding.npy: refused, not the backup.
    const o = path.join(dir, "ogb-only-backup");
    mkdirSync(o, { recursive: true });
    writeFileSync(path.join(o, "backup_entity.npy"), encodeNpy(other, [n, 16]));
    writeFileSync(path.join(o, "relation_embedding.npy"), encodeNpy(rel, [nr, 16]));
    writeFileSync(path.join(o, "config.json"), JSON.stringify({ model: "DistMult", double_entity_embedding: false }));
    expectUserError(
      await kgrank(["--model-dir", o, "--quiet"]),
      /--model-dir: .*has no entity_embedding\.npy.*candidates: backup_entity\.npy/,
    );
  });

  it("scores that overflow float32 are an error naming the embedding flags and --precision float64, which ranks them", async () => {
    const big = Float32Array.from(ent, (v, i) => (Math.floor(i / 16) === 2 ? (i % 2 ? 3e38 : -3e38) : v));
    const rel2 = Float32Array.from(rel, (v, i) => (i < 16 ? 2 : v)); // relation 0: 3e38 x 2 overflows
    writeFileSync(path.join(dir, "entity-big.npy"), encodeNpy(big, [n, 16]));
    writeFileSync(path.join(dir, "relation-2.npy"), encodeNpy(rel2, [nr, 16]));
    const args = [
      "--interaction",
      "distmult",
      "--entity-embeddings",
      "entity-big.npy",
      "--relation-embeddings",
      "relation-2.npy",
      "--quiet",
    ];
    expectUserError(
      await kgrank(args),
      /^kgrank: --entity-embeddings \/ --relation-embeddings: the distmult model's score of .* is -?(NaN|Infinity): float32 overflow .*rescale the embeddings .*--precision float64\)$/m,
    );
    const wide = await kgrank([...args, "--precision", "float64"]);
    expect(wide.status, wide.stderr).toBe(0);
  });

  it("config.json keys that contradict the files or have the wrong type are refused, naming config.json, the key and the value", async () => {
    const d = path.join(dir, "ogb-bad-config");
    mkdirSync(d, { recursive: true });
    writeFileSync(path.join(d, "entity_embedding.npy"), encodeNpy(ent.subarray(0, n * 8), [n, 8]));
    writeFileSync(path.join(d, "relation_embedding.npy"), encodeNpy(rel.subarray(0, nr * 4), [nr, 4]));
    const good = {
      model: "RotatE",
      hidden_dim: 4,
      gamma: 6,
      double_entity_embedding: true,
      double_relation_embedding: false,
    };
    const cases: [Record<string, unknown>, RegExp][] = [
      // Another run's dimension: the phases would be scaled by pi / ((6 + 2) / 400), 100 times too much.
      [
        { hidden_dim: 400 },
        /config\.json: hidden_dim 400 with double_entity_embedding true expects 800 columns in entity_embedding\.npy, which has 8: the config is not this model's/,
      ],
      [
        { double_relation_embedding: true },
        /config\.json: hidden_dim 4 with double_relation_embedding true expects 8 columns in relation_embedding\.npy, which has 4/,
      ],
      [{ gamma: [] }, /config\.json: gamma is \[\], expected a finite number/],
      [{ gamma: "6" }, /config\.json: gamma is "6", expected a finite number/],
      [{ hidden_dim: 1e-300 }, /config\.json: hidden_dim is 1e-300, expected a positive integer/],
      // A whole number past any width (2 x 1e308 is Infinity): the key and the value, not "Infinity columns".
      [
        { hidden_dim: 1e308 },
        /config\.json: hidden_dim is 1e\+308, expected a positive integer \(an embedding width, at most 2147483647\)/,
      ],
      [{ double_entity_embedding: "yes" }, /config\.json: double_entity_embedding is "yes", expected true or false/],
      [{ gamma: -2 }, /config\.json: gamma is -2, expected more than -2/],
      [{ model: "__proto__" }, /config\.json: model is "__proto__", expected one of TransE/],
    ];
    for (const [change, re] of cases) {
      writeFileSync(path.join(d, "config.json"), JSON.stringify({ ...good, ...change }));
      expectUserError(await kgrank(["--model-dir", d, "--quiet"]), new RegExp(`^kgrank: --model-dir: .*${re.source}`));
    }
    writeFileSync(path.join(d, "config.json"), JSON.stringify(good));
    const ok = await kgrank(["--model-dir", d, "--quiet"]);
    expect(ok.status, ok.stderr).toBe(0);
  });

  it("DGL-KE's id maps are read from config.json's data_path (relative to where dglke_train ran, from save_path); a moved data folder is an error naming data_path", async () => {
    // What `cd run && dglke_train --dataset Nations --data_path data --save_path ckpts ...` leaves: the maps in the
    // data folder, the embeddings (rows in entities.dict order) and config.json in ckpts/TransE_l2_Nations_0.
    const run = path.join(dir, "dglke-run");
    const model = path.join(run, "ckpts", "TransE_l2_Nations_0");
    const data = path.join(run, "data", "Nations");
    mkdirSync(model, { recursive: true });
    mkdirSync(data, { recursive: true });
    const order = Array.from({ length: n }, (_, i) => (i * 3 + 5) % n); // row j holds entity order[j]
    const relOrder = Array.from({ length: nr }, (_, i) => (i * 7 + 2) % nr);
    const shuffled = new Float32Array(n * 16);
    order.forEach((e, j) => shuffled.set(ent.subarray(e * 16, e * 16 + 16), j * 16));
    const relShuffled = new Float32Array(nr * 16);
    relOrder.forEach((r, j) => relShuffled.set(rel.subarray(r * 16, r * 16 + 16), j * 16));
    writeFileSync(path.join(model, "Nations_TransE_l2_entity.npy"), encodeNpy(shuffled, [n, 16]));
    writeFileSync(path.join(model, "Nations_TransE_l2_relation.npy"), encodeNpy(relShuffled, [nr, 16]));
    writeFileSync(path.join(data, "entities.dict"), order.map((e, j) => `${j}\t${ds.entityLabels[e]}\n`).join(""));
    writeFileSync(
      path.join(data, "relations.dict"),
      relOrder.map((r, j) => `${j}\t${ds.relationLabels[r]}\n`).join(""),
    );
    writeFileSync(
      path.join(model, "config.json"),
      JSON.stringify({
        model_name: "TransE_l2",
        data_path: "data",
        dataset: "Nations",
        format: "built_in",
        save_path: "ckpts/TransE_l2_Nations_0",
        hidden_dim: 16,
        gamma: 12,
        double_ent: false,
        double_rel: false,
        emp_file: "entities.dict",
        rmap_file: "relations.dict",
      }),
    );
    const r = await kgrank(["--model-dir", model, "--format", "json", "--quiet"]);
    const want = sharedModel("transe-l2");
    expectResults(r, want);
    renameSync(path.join(run, "data"), path.join(run, "data-moved"));
    expectUserError(
      await kgrank(["--model-dir", model, "--quiet"]),
      /^kgrank: --model-dir: .*config\.json: emp_file "entities\.dict" is not found under its data_path "data" nor beside the embeddings \(looked for .*dglke-run\/data\/Nations\/entities\.dict.*\): the data folder moved; give the map as --entity-ids FILE/,
    );
    // --entity-ids / --relation-ids given: config.json's maps are not looked for.
    const given = await kgrank([
      "--model-dir",
      model,
      "--entity-ids",
      path.join(run, "data-moved", "Nations", "entities.dict"),
      "--relation-ids",
      path.join(run, "data-moved", "Nations", "relations.dict"),
      "--format",
      "json",
      "--quiet",
    ]);
    expectResults(given, want);
    // A map config.json chose that does not fit is the model directory's error, naming the file, not --entity-ids.
    mkdirSync(data, { recursive: true });
    writeFileSync(path.join(data, "entities.dict"), `0\t${ds.entityLabels[0]}\n`);
    copyFileSync(path.join(run, "data-moved", "Nations", "relations.dict"), path.join(data, "relations.dict"));
    expectUserError(
      await kgrank(["--model-dir", model, "--quiet"]),
      /^kgrank: --model-dir: .*data\/Nations\/entities\.dict lists 1 labels but the embeddings have 14 rows/,
    );
  });

  it("a model without --dataset is refused, saying no dataset was named (the bundled Nations was evaluated and --entity-embeddings blamed)", async () => {
    const d = path.join(dir, "ogb-other-dataset");
    mkdirSync(d, { recursive: true });
    writeFileSync(path.join(d, "entity_embedding.npy"), encodeNpy(new Float32Array(40 * 4).fill(0.5), [40, 4]));
    writeFileSync(path.join(d, "relation_embedding.npy"), encodeNpy(new Float32Array(3 * 4).fill(0.5), [3, 4]));
    writeFileSync(path.join(d, "config.json"), JSON.stringify({ model: "DistMult", hidden_dim: 4 }));
    for (const args of [
      ["--model-dir", d],
      ["--interaction", "distmult", "--entity-embeddings", "entity.npy", "--relation-embeddings", "relation.npy"],
    ]) {
      const r = await runIn(["evaluate", ...args, "--quiet"], dir);
      expectUserError(r, /^kgrank: --dataset: is required with a model: no dataset was named.*give --dataset NAME/);
      expect(r.stderr).not.toMatch(/--entity-embeddings|--entity-ids/);
    }
  });

  it("--model-dir without --dataset reads the dataset config.json names; a --dataset that contradicts it names both", async () => {
    const d = path.join(dir, "config-names-dataset");
    mkdirSync(d, { recursive: true });
    writeFileSync(path.join(d, "entity_embedding.npy"), encodeNpy(ent, [n, 16]));
    writeFileSync(path.join(d, "relation_embedding.npy"), encodeNpy(rel, [nr, 16]));
    const config = { model: "DistMult", dataset: "Nations", hidden_dim: 16, double_entity_embedding: false };
    writeFileSync(path.join(d, "config.json"), JSON.stringify(config));
    const named = await kgrank(["--model-dir", d, "--format", "json", "--quiet"]);
    expect(named.status, named.stderr).toBe(0);
    const fromConfig = await runIn(["evaluate", "--model-dir", d, "--format", "json", "--quiet"], dir);
    expect(fromConfig.status, fromConfig.stderr).toBe(0);
    expect(JSON.parse(fromConfig.stdout).results).toEqual(JSON.parse(named.stdout).results);
    expect(JSON.parse(fromConfig.stdout).dataset).toMatch(/^nations/);

    // A model of FB15k-237 given --dataset nations: both named, not "give the id map (--entity-ids)".
    writeFileSync(path.join(d, "config.json"), JSON.stringify({ ...config, dataset: "FB15k-237" }));
    const contradicts = await kgrank(["--model-dir", d, "--quiet"]);
    expectUserError(
      contradicts,
      /^kgrank: --dataset: "nations" is not the dataset .*config\.json names \("FB15k-237", fb15k-237\).*leave out --dataset to evaluate on fb15k-237/,
    );
    expect(contradicts.stderr).not.toMatch(/--entity-ids/);
    for (const args of [["evaluate"], ["predict", "--top-k", "3", "-o", "cfg.npz"]]) {
      // Without --dataset, config.json's FB15k-237 is read: here a folder of that name under --dataset-dir.
      const root2 = path.join(dir, "config-datasets");
      mkdirSync(path.join(root2, "fb15k-237"), { recursive: true });
      for (const s of ["train", "valid", "test"])
        copyFileSync(
          path.join(__dirname, "..", "data", "nations", `${s}.tsv`),
          path.join(root2, "fb15k-237", `${s}.tsv`),
        );
      const r = await runIn([...args, "--model-dir", d, "--dataset-dir", root2, "--quiet"], dir);
      expect(r.status, r.stderr).toBe(0);
      // A name kgrank does not know (OGB's own): its folder is asked for.
      writeFileSync(path.join(d, "config.json"), JSON.stringify({ ...config, dataset: "ogbl-wikikg2" }));
      expectUserError(
        await runIn([...args, "--model-dir", d, "--quiet"], dir),
        /^kgrank: --dataset: is not given and .*config\.json names the dataset "ogbl-wikikg2", which kgrank does not know by name: give its folder \(--dataset-dir DIR/,
      );
      writeFileSync(path.join(d, "config.json"), JSON.stringify({ ...config, dataset: "FB15k-237" }));
    }
  });

  it("a deflated .npz and a float64 safetensors file print what the .npy files print, byte for byte", async () => {
    writeFileSync(path.join(dir, "entity.npz"), zip([deflated("entity.npy", encodeNpy(ent, [n, 16]))]));
    writeFileSync(
      path.join(dir, "relation.safetensors"),
      safetensorsFile({ relation: { data: Float64Array.from(rel), shape: [nr, 16] } }),
    );
    const args = ["--interaction", "distmult", "--format", "json", "--quiet"];
    const want = await kgrank([...args, "--entity-embeddings", "entity.npy", "--relation-embeddings", "relation.npy"]);
    const got = await kgrank([
      ...args,
      "--entity-embeddings",
      "entity.npz",
      "--relation-embeddings",
      "relation.safetensors",
    ]);
    expect(got.stderr).toBe("");
    expect(got.stdout).toBe(want.stdout);
  });

  it("--memory reads the entity table in chunks: the output and the state equal the in-memory run's, byte for byte", async () => {
    const base = ["--interaction", "complex", "--complex-layout", "halves", "--relation-embeddings", "relation.npy"];
    const json = ["--format", "json", "--quiet"];
    const want = await kgrank([...base, "--entity-embeddings", "entity.npy", ...json, "--save-state", "mem.state"]);
    writeFileSync(path.join(dir, "entity-f32.safetensors"), safetensorsFile({ e: { data: ent, shape: [n, 16] } }));
    // 40 KiB: the filter index (16 KiB native, 31 KiB in the fallback) and the table, read whole (see streamed.test.ts
    // for budgets that read a table in blocks and chunks).
    for (const [file, memory] of [
      ["entity.npy", "40KiB"],
      ["entity.npy", "1GiB"],
      ["entity-f32.safetensors", "60000"],
    ] as const) {
      const got = await kgrank([
        ...base,
        "--entity-embeddings",
        file,
        "--memory",
        memory,
        ...json,
        "--save-state",
        "chunked.state",
      ]);
      expect(got.stderr).toBe("");
      expect(got.stdout).toBe(want.stdout);
      // The state names its input files: compared where they are the same.
      if (file === "entity.npy") {
        expect(readFileSync(path.join(dir, "chunked.state"))).toEqual(readFileSync(path.join(dir, "mem.state")));
      }
    }
    const npz = [...base, "--entity-embeddings", "entity.npz", "--memory", "1GiB"];
    writeFileSync(path.join(dir, "entity.npz"), zip([deflated("entity.npy", encodeNpy(ent, [n, 16]))]));
    expectUserError(
      await kgrank(npz),
      /^kgrank: --entity-embeddings: .*entity\.npz: a table read in chunks must be a \.npy or \.safetensors file/,
    );
    // 2 KiB: at least twice the 896-byte table, which is then read into memory (the filter index's 16 KiB beside it
    // is no longer refused): the in-memory run's output.
    const within = await kgrank([...base, "--entity-embeddings", "entity.npy", "--memory", "2KiB", ...json]);
    expect(within.stderr).toBe("");
    expect(within.stdout).toBe(want.stdout);
    // Under auto (the default) the table alone decides that. Its 201 tasks x 2 sides x 16 never make auto quantise
    // the table, so the copy does not count, and --verbose says so; a run of 2^17 / 16 rows would count it, which 2 KiB
    // cannot hold beside the table: auto keeps the float32 path there (screenWithin).
    const told = await kgrank([...base, "--entity-embeddings", "entity.npy", "--memory", "2KiB", "--verbose"]);
    expect(told.status).toBe(0);
    const small = sharedModel("distmult");
    expect(screenWithin(small, 2048, "auto", undefined, 402)).toBe("auto");
    expect(screenWithin(small, 2048, "int8", undefined, 402)).toBe("int8");
    expect(screenWithin(small, 2048, "auto", "table.kgq", 1 << 13)).toBe("auto");
    if (backendInfo().backend === "native" && AUTO_SCREEN_KERNELS.has(backendInfo().screenKernel!)) {
      expect(told.stderr).toMatch(
        /screen auto: not used \(too few query rows to pay for quantising the table; the float path scored every pair\)/,
      );
      expect(screenWithin(small, 2048, "auto", undefined, 1 << 13)).toBe("off");
      // --verbose's reason, recorded on the model as the memory planners record theirs.
      expect(small.screenWhy).toBe("its int8 copy would not fit --memory beside the table");
      expect(screenWithin(small, 1 << 20, "auto", undefined, 1 << 13)).toBe("auto");
    } else {
      expect(screenWithin(small, 2048, "auto", undefined, 1 << 13)).toBe("auto");
    }
    // The same with the int8 screen: on the native backend its quantised copy (16 rows x 72 bytes and 2 KiB of slack)
    // counts with the table, which then no longer fits half of 2 KiB and is read in chunks, where the filter index
    // does not fit; elsewhere nothing is screened, and the run is the in-memory one.
    const screened = await kgrank([
      ...base,
      "--entity-embeddings",
      "entity.npy",
      "--memory",
      "2KiB",
      "--screen",
      "int8",
      ...json,
    ]);
    if (backendInfo().backend === "native") {
      expectUserError(screened, /^kgrank: --memory: 2\.00 KiB cannot hold a query block beside the filter index/);
    } else {
      expect(screened.stderr).toBe("");
      expect(screened.stdout).toBe(want.stdout);
    }
    // 1 KiB: less than twice the 896-byte table (at most half the budget is read into memory), and no room for the
    // filter index.
    expectUserError(
      await kgrank([...base, "--entity-embeddings", "entity.npy", "--memory", "1KiB"]),
      /^kgrank: --memory: 1\.00 KiB cannot hold a query block beside the filter index \(.*\) and a table chunk: .*give at least/,
    );
    expectUserError(
      await kgrank([...base, "--entity-embeddings", "entity.npy", "--memory", "lots"]),
      /^kgrank: --memory: must be a size such as 4GiB, 512MiB or 2GB \(bytes without a unit\), got "lots"/,
    );
  });

  it("--shard I/3 --save-state, then kgrank merge, with --bootstrap: the unsharded output byte for byte", async () => {
    const args = [
      "--dataset",
      "nations",
      "--interaction",
      "complex",
      "--complex-layout",
      "halves",
      "--entity-embeddings",
      "entity.npy",
      "--relation-embeddings",
      "relation.npy",
      "--bootstrap",
      "100",
      "--seed",
      "9",
      "--format",
      "json",
      "--quiet",
    ];
    const run = async (a: string[]) => runIn(a, dir);
    for (let i = 0; i < 3; i++) {
      const r = await run(["evaluate", ...args, "--shard", `${i}/3`, "--save-state", `emb-shard-${i}.state`]);
      expect(r.status, r.stderr).toBe(0);
    }
    const merged = await run([
      "merge",
      "emb-shard-2.state",
      "emb-shard-0.state",
      "emb-shard-1.state",
      "--format",
      "json",
      "--quiet",
    ]);
    expect(merged.status, merged.stderr).toBe(0);
    const whole = await run(["evaluate", ...args]);
    expect(whole.status, whole.stderr).toBe(0);
    expect(JSON.parse(whole.stdout).intervals).not.toBeNull();
    expect(merged.stdout).toBe(whole.stdout);
  });

  it("--entity-shard I/M (also with --shard and --memory), then kgrank merge: the whole run's output byte for byte", async () => {
    const args = ["--dataset", "nations", "--interaction", "distmult", "--entity-embeddings", "entity.npy"];
    const more = ["--relation-embeddings", "relation.npy", "--format", "json", "--quiet"];
    const run = async (a: string[]) => runIn(a, dir);
    const whole = await run(["evaluate", ...args, ...more]);
    expect(whole.status, whole.stderr).toBe(0);
    const files: string[] = [];
    for (let t = 0; t < 2; t++) {
      for (let e = 0; e < 3; e++) {
        const file = `grid-${t}-${e}.state`;
        const memory = e === 1 ? ["--memory", "64MiB"] : [];
        const r = await run([
          "evaluate",
          ...args,
          ...more,
          ...memory,
          "--shard",
          `${t}/2`,
          "--entity-shard",
          `${e}/3`,
          "--save-state",
          file,
        ]);
        expect(r.status, r.stderr).toBe(0);
        files.push(file);
      }
    }
    const merged = await run(["merge", ...[...files].reverse(), "--format", "json", "--quiet"]);
    expect(merged.status, merged.stderr).toBe(0);
    expect(merged.stdout).toBe(whole.stdout);
    expectUserError(
      await run(["merge", ...files.filter((f) => f !== "grid-1-2.state"), "--quiet"]),
      /^kgrank: FILE: shard 1\/2 entity shard 2\/3 of this run is missing/,
    );
    expectUserError(
      await run(["evaluate", ...args, ...more, "--entity-shard", "0/3"]),
      /^kgrank: --entity-shard: needs --save-state FILE/,
    );
    expectUserError(
      await run(["evaluate", ...args, ...more, "--entity-shard", "3/3", "--save-state", "x.state"]),
      /^kgrank: --entity-shard: I must be in \[0, 2\]/,
    );
    // More entity shards than entities: said in the flag's words, not as the library's option.
    expectUserError(
      await run(["evaluate", ...args, ...more, "--entity-shard", "0/100000", "--save-state", "x.state"]),
      /^kgrank: --entity-shard: 0\/100000 splits \S+ \d+ entities into 100000 shards: N must be at most \d+,/,
    );
    // A task shard without rows (more shards than triples) saves its empty state, as without --entity-shard.
    const empty = await run([
      "evaluate",
      ...args,
      ...more,
      "--shard",
      "0/400",
      "--entity-shard",
      "1/2",
      "--save-state",
      "e.state",
    ]);
    expect(empty.status, empty.stderr).toBe(0);
    writeFileSync(path.join(dir, "neg2.npy"), encodeNpy(new Int32Array(201 * 2), [201, 2]));
    expectUserError(
      await run([
        "evaluate",
        ...args,
        ...more,
        "--entity-shard",
        "0/2",
        "--save-state",
        "x.state",
        "--negatives-ids",
        "neg2.npy",
      ]),
      /^kgrank: --entity-shard: does not apply to --negatives-ids/,
    );
  });

  it("--negatives-ids: the OGB protocol from embeddings", async () => {
    const rows = ds.splits.test.length / 3;
    const neg = Int32Array.from(randomValues(rows * 5, 8), (v) => Math.floor(((v + 1) / 2) * n));
    writeFileSync(path.join(dir, "neg.npy"), encodeNpy(neg, [rows, 5]));
    const r = await kgrank([...DISTMULT_FLAGS, "--negatives-ids", "neg.npy", "--format", "json", "--quiet"]);
    const model = sharedModel("distmult");
    expectResults(r, model, neg);
    // --verbose says the screen does not apply to given negatives (not that the rows were too few), in every mode
    // that could screen, where the model and backend could.
    for (const screen of ["auto", "int8"]) {
      const v = await kgrank([...DISTMULT_FLAGS, "--negatives-ids", "neg.npy", "--screen", screen, "--verbose"]);
      expect(v.status).toBe(0);
      const kernel = backendInfo().screenKernel;
      expect(v.stderr).toMatch(
        backendInfo().backend !== "native"
          ? new RegExp(`screen ${screen}: not used \\(float32, distmult, backend (wasm|ts);`)
          : screen === "auto" && !AUTO_SCREEN_KERNELS.has(kernel!)
            ? new RegExp(`screen auto: not used \\(the ${kernel} kernel does not pay;`)
            : new RegExp(
                `screen ${screen}: not used \\(it applies only to ranking against the entity table: not to given negatives,`,
              ),
      );
    }
  });

  describe("--estimate-full: full-ranking estimates from the sampled ranks, their assumptions checked", () => {
    const rows = ds.splits.test.length / 3;
    const K = 3;
    const base = DISTMULT_FLAGS;
    // Each test triple's known tails (train + valid + test), by brute force over the triples.
    const knownTails = Array.from({ length: rows }, (_, i) => {
      const [h, r] = [ds.splits.test[3 * i]!, ds.splits.test[3 * i + 1]!];
      const out = new Set<number>();
      for (const split of [ds.splits.train, ds.splits.valid, ds.splits.test])
        for (let j = 0; j < split.length; j += 3) if (split[j] === h && split[j + 1] === r) out.add(split[j + 2]!);
      return out;
    });
    const draw = (seed: number, pool: (i: number) => number[]) => {
      const u = randomValues(rows * K, seed);
      return Int32Array.from({ length: rows * K }, (_, x) => {
        const p = pool(Math.floor(x / K));
        return p[Math.min(p.length - 1, Math.floor(((u[x]! + 1) / 2) * p.length))]!;
      });
    };
    const entities = [...Array(n).keys()];
    // Tails drawn with replacement from the filtered candidates (some Nations tasks have a single one).
    const filtered = draw(11, (i) => entities.filter((e) => !knownTails[i]!.has(e)));
    writeFileSync(path.join(dir, "neg-filtered.npy"), encodeNpy(filtered, [rows, K]));
    const tailRanks = () => {
      const ev = new RankEvaluator({ numEntities: n, numRelations: nr, sides: "tail" });
      ev.addModelSync({ model: sharedModel("distmult"), triples: ds.splits.test, negatives: filtered });
      return ev.finalize().tasks().realistic;
    };

    it("filtered negatives: the library's estimates over each task's filtered count", async () => {
      const args = [...base, "--negatives-ids", "neg-filtered.npy", "--sides", "tail", "--estimate-full"];
      const r = await kgrank([...args, "--negatives-from", "filtered", "--replacement", "--format", "json", "--quiet"]);
      expect(r.stderr).toBe("");
      const got = JSON.parse(r.stdout).fullRankingEstimates;
      expect(Object.keys(got)).toEqual(["tail"]);
      const want = estimateFromSampledRanks({
        ranks: tailRanks(),
        numNegatives: K,
        numCandidates: knownTails.map((s) => n - s.size + 1),
        replacement: true,
      });
      expect(got.tail).toEqual(JSON.parse(JSON.stringify(want)));
      // The printed table says what the negatives were drawn from.
      const text = await kgrank([...args, "--negatives-from", "filtered", "--replacement", "--quiet"]);
      expect(text.stdout).toMatch(/Full-ranking estimates from the sampled negatives \(tail side, realistic ranks\)/);
      expect(text.stdout).toMatch(/drawn with replacement from each task's N - 1 other candidates \(N from \d+ to 14/);
      // Taken as drawn without replacement, the repeats some rows have are refused before any scoring.
      expectUserError(
        await kgrank([...args, "--negatives-from", "filtered", "--quiet"]),
        /^kgrank: --negatives-ids: row \d+, column \d+: entity \d+ appears twice in the row, .*drawn without replacement/,
      );
    });

    it("negatives from every entity: one N on both sides, and both sides together", async () => {
      const all = draw(12, (i) =>
        entities.filter((e) => e !== ds.splits.test[3 * i] && e !== ds.splits.test[3 * i + 2]),
      );
      writeFileSync(path.join(dir, "neg-all.npy"), encodeNpy(all, [rows, K]));
      const args = [...base, "--negatives-ids", "neg-all.npy", "--estimate-full", "sampled,minimum-mse"];
      const r = await kgrank([...args, "--replacement", "--format", "json", "--quiet", "--ks", "1,3"]);
      expect(r.stderr).toBe("");
      const got = JSON.parse(r.stdout).fullRankingEstimates;
      const ev = new RankEvaluator({ numEntities: n, numRelations: nr });
      ev.addModelSync({ model: sharedModel("distmult"), triples: ds.splits.test, negatives: { head: all, tail: all } });
      const realistic = ev.finalize().tasks().realistic;
      const est = (ranks: Float64Array) =>
        JSON.parse(
          JSON.stringify(
            estimateFromSampledRanks({
              ranks,
              numNegatives: K,
              numCandidates: n,
              replacement: true,
              ks: [1, 3],
              estimators: ["sampled", "minimum-mse"],
            }),
          ),
        );
      expect(got.head).toEqual(est(realistic.subarray(0, rows)));
      expect(got.tail).toEqual(est(realistic.subarray(rows)));
      expect(got.both).toEqual(est(realistic));
      const csv = await kgrank([...args, "--replacement", "--format", "csv", "--quiet"]);
      expect(csv.stdout).toMatch(/^full estimate \(minimum-mse\),both,realistic,inverse_harmonic_mean_rank,0\.\d+/m);
    });

    it("refuses negatives that break its assumptions, and flags that do not go with it, in one line", async () => {
      const truth = Int32Array.from({ length: rows * K }, (_, x) => ds.splits.test[3 * Math.floor(x / K) + 2]!);
      writeFileSync(path.join(dir, "neg-truth.npy"), encodeNpy(truth, [rows, K]));
      expectUserError(
        await kgrank([...base, "--negatives-ids", "neg-truth.npy", "--sides", "tail", "--estimate-full", "--quiet"]),
        /^kgrank: --negatives-ids: row 0, column 0: entity \d+ is the triple's own tail: .*draw them without the true tail/,
      );
      // A known tail (not the triple's own) among negatives said to be drawn from the filtered candidates.
      const i = knownTails.findIndex((s) => s.size > 1);
      const other = [...knownTails[i]!].find((e) => e !== ds.splits.test[3 * i + 2])!;
      const known = Int32Array.from(filtered);
      known[i * K + 1] = other;
      writeFileSync(path.join(dir, "neg-known.npy"), encodeNpy(known, [rows, K]));
      const flags = ["--sides", "tail", "--estimate-full", "--replacement", "--quiet"];
      expectUserError(
        await kgrank([...base, "--negatives-ids", "neg-known.npy", ...flags, "--negatives-from", "filtered"]),
        new RegExp(
          `^kgrank: --negatives-ids: row ${i}, column 1: entity ${other} is another known tail .*not known answers`,
        ),
      );
      // Taken as drawn from every entity, the same negatives are accepted.
      expect((await kgrank([...base, "--negatives-ids", "neg-known.npy", ...flags])).status).toBe(0);
      for (const [more, pattern] of [
        [["--estimate-full"], /^kgrank: --estimate-full: needs --negatives-ids/],
        [
          ["--negatives-ids", "neg-filtered.npy", "--replacement"],
          /^kgrank: --replacement: says how the negatives of --estimate-full/,
        ],
        [
          ["--negatives-ids", "neg-filtered.npy", "--estimate-full", "unbiased"],
          /^kgrank: --estimate-full: "unbiased" is not an estimator/,
        ],
        [
          ["--negatives-ids", "neg-filtered.npy", "--estimate-full", "--negatives-from", "some"],
          /^kgrank: --negatives-from: "some" is not/,
        ],
        [
          ["--negatives-ids", "neg-filtered.npy", "--estimate-full", "--save-state", "x.state"],
          /^kgrank: --estimate-full: does not go with --save-state/,
        ],
        [
          [
            "--negatives-ids",
            "neg-filtered.npy",
            "--estimate-full",
            "--negatives-from",
            "filtered",
            "--filter",
            "none",
          ],
          /^kgrank: --negatives-from: filtered needs known answers/,
        ],
      ] as [string[], RegExp][]) {
        expectUserError(await kgrank([...base, ...more, "--quiet"]), pattern);
      }
    });
  });

  it("--sides head from a model, in memory, with --memory and with --negatives-ids: the library's head-only results", async () => {
    const rows = ds.splits.test.length / 3;
    const model = sharedModel("distmult");
    const base = ["--interaction", "distmult", "--entity-embeddings", "entity.npy", "--relation-embeddings"];
    const json = ["relation.npy", "--sides", "head", "--format", "json", "--quiet"];
    const headOnly = (negatives?: Int32Array) => {
      const ev = new RankEvaluator({
        numEntities: n,
        numRelations: nr,
        sides: "head",
        ...(negatives ? {} : { filterTriples: [ds.splits.train, ds.splits.valid, ds.splits.test] }),
      });
      ev.addModelSync({ model, triples: ds.splits.test, ...(negatives ? { negatives } : {}) });
      return ev.finalize().toJSON();
    };
    const want = headOnly();
    const inMemory = await kgrank([...base, ...json]);
    expect(inMemory.stderr).toBe("");
    const j = JSON.parse(inMemory.stdout);
    expect(j.info.tasks).toEqual({ head: rows, tail: 0 });
    expectClose(j.results, want);
    const chunked = await kgrank([...base, ...json, "--memory", "40KiB"]);
    expect(chunked.stdout).toBe(inMemory.stdout);
    const neg = Int32Array.from(randomValues(rows * 5, 9), (v) => Math.floor(((v + 1) / 2) * n));
    writeFileSync(path.join(dir, "neg-sides.npy"), encodeNpy(neg, [rows, 5]));
    const sampled = await kgrank([...base, ...json, "--negatives-ids", "neg-sides.npy"]);
    expect(sampled.stderr).toBe("");
    expectClose(JSON.parse(sampled.stdout).results, headOnly(neg));
  });

  it("--sample-tasks from a model, in memory and with --memory: the same sample, results and estimates, also when a side draws none", async () => {
    const base = ["--interaction", "distmult", "--entity-embeddings", "entity.npy", "--relation-embeddings"];
    let oneSided = 0;
    for (const seed of ["0", "2", "7", "9"]) {
      const args = [...base, "relation.npy", "--sample-tasks", "2", "--seed", seed, "--format", "json", "--quiet"];
      const inMemory = await kgrank(args);
      expect(inMemory.stderr).toBe("");
      const chunked = await kgrank([...args, "--memory", "40KiB"]);
      expect(chunked.stderr).toBe("");
      expect(chunked.stdout).toBe(inMemory.stdout);
      const j = JSON.parse(inMemory.stdout);
      expect(j.estimates.sampled).toBe(2);
      if (j.info.tasks.head === 0 || j.info.tasks.tail === 0) oneSided++;
    }
    expect(oneSided, "a seed whose sample has one side only").toBeGreaterThan(0);
  });

  it("--negatives-ids stored as int64 / uint32: an id past the entity range is refused by its stored value, not wrapped", async () => {
    const rows = ds.splits.test.length / 3;
    const flags = [...DISTMULT_FLAGS, "--quiet"];
    const wide = new BigInt64Array(rows * 2).fill(1n);
    wide[3] = 2n ** 40n + 3n; // 3 modulo 2^32: a valid id once wrapped
    writeFileSync(path.join(dir, "neg-i8.npy"), encodeNpy(wide, [rows, 2]));
    expectUserError(
      await kgrank([...flags, "--negatives-ids", "neg-i8.npy"]),
      new RegExp(`--negatives-ids: row 1, column 1: entity id ${2 ** 40 + 3} is outside \\[0, ${n}\\)`),
    );
    const unsigned = new Uint32Array(rows * 2).fill(1);
    unsigned[0] = 2 ** 32 - 1;
    writeFileSync(path.join(dir, "neg-u4.npy"), encodeNpy(unsigned, [rows, 2]));
    expectUserError(
      await kgrank([...flags, "--negatives-ids", "neg-u4.npy"]),
      new RegExp(`--negatives-ids: row 0, column 0: entity id ${2 ** 32 - 1} is outside \\[0, ${n}\\)`),
    );
  });

  // Id maps and config.json are read like every other input: a FIFO is refused without being opened for reading, and
  // /dev/zero under a memory limit is a bounded read, not an abort. The subprocesses have a 60 s limit and the test
  // vitest's timeout, so a blocking read fails here instead of hanging.
  it("--entity-ids / --relation-ids / --model-dir's config.json as a FIFO or /dev/zero (under ulimit -v): one-line error, exit 1", async () => {
    const fifo = path.join(dir, "ids.fifo");
    runProcess("mkfifo", [fifo]);
    const model = path.join(dir, "fifo-model");
    mkdirSync(model, { recursive: true });
    writeFileSync(path.join(model, "entity_embedding.npy"), encodeNpy(ent, [n, 16]));
    writeFileSync(path.join(model, "relation_embedding.npy"), encodeNpy(rel, [nr, 16]));
    runProcess("mkfifo", [path.join(model, "config.json")]);
    const zeroModel = path.join(dir, "zero-model");
    mkdirSync(zeroModel, { recursive: true });
    writeFileSync(path.join(zeroModel, "entity_embedding.npy"), encodeNpy(ent, [n, 16]));
    writeFileSync(path.join(zeroModel, "relation_embedding.npy"), encodeNpy(rel, [nr, 16]));
    symlinkSync("/dev/zero", path.join(zeroModel, "config.json"));
    const files = [...DISTMULT_FLAGS];
    const limited = (args: string[]) => {
      return runProcess(
        "bash",
        [
          "-c",
          'ulimit -v 4000000 && exec "$0" "$@"',
          process.execPath,
          KGRANK_BIN,
          "evaluate",
          "--dataset",
          "nations",
          ...args,
        ],
        { cwd: dir, timeout: 60_000 },
      );
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
      const r = args.includes("/dev/zero") || args.includes(zeroModel) ? limited(args) : await kgrank(args);
      expect(r.status, `${args.join(" ")}: ${r.stderr}`).toBe(1);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(re);
    }
  });

  it("model errors name the flag and the value, never a library argument or a JavaScript type", async () => {
    const rows = ds.splits.test.length / 3;
    writeFileSync(path.join(dir, "neg-k0.npy"), encodeNpy(new Int32Array(0), [rows, 0]));
    writeFileSync(path.join(dir, "entity-w0.npy"), encodeNpy(new Float32Array(0), [n, 0]));
    const huge = Float64Array.from(ent, (v, i) => (i === 0 ? 1e300 : v));
    writeFileSync(path.join(dir, "entity-huge.npy"), encodeNpy(huge, [n, 16]));
    const files = ["--entity-embeddings", "entity.npy", "--relation-embeddings", "relation.npy"];
    const cases: [string[], RegExp][] = [
      [
        ["--interaction", "complex", ...files],
        /^kgrank: --complex-layout: is required with --interaction complex: halves .* or interleaved/,
      ],
      [["--interaction", "rotate-l2", ...files], /^kgrank: --complex-layout: is required with --interaction rotate-l2/],
      [files, /^kgrank: --interaction: is required with the embedding files: one of transe-l1, .*--model-dir DIR/],
      [["--interaction", "transh", ...files], /^kgrank: --interaction: "transh" is not known: one of transe-l1/],
      [
        ["--interaction", "distmult", "--complex-layout", "halves", ...files],
        /^kgrank: --complex-layout: applies to complex, rotate and rotate-l2 only, not distmult/,
      ],
      [
        ["--interaction", "distmult", ...files, "--negatives-ids", "neg-k0.npy"],
        new RegExp(`^kgrank: --negatives-ids: has shape \\(${rows}, 0\\): give at least one entity id per test triple`),
      ],
      [
        ["--interaction", "distmult", "--entity-embeddings", "entity-w0.npy", "--relation-embeddings", "relation.npy"],
        new RegExp(
          `^kgrank: --entity-embeddings: entity-w0\\.npy has shape \\[${n}, 0\\]; embeddings need at least one row and one column`,
        ),
      ],
      [
        [
          "--interaction",
          "distmult",
          "--entity-embeddings",
          "entity-huge.npy",
          "--relation-embeddings",
          "relation.npy",
        ],
        /^kgrank: --entity-embeddings: row 0, column 0 is Infinity after rounding to float32 \(use --precision float64\)/,
      ],
      [
        ["--model-dir", path.join(dir, "ogb-rotate"), "--interaction", "distmult"],
        /^kgrank: --interaction: distmult contradicts .*config\.json's model RotatE \(rotate\); drop --interaction/,
      ],
    ];
    for (const [args, re] of cases) {
      const r = await kgrank(args);
      expectUserError(r, re);
      expect(r.stderr, args.join(" ")).not.toMatch(
        /complexLayout|entityEmbeddings|(?<!-)(interaction|negatives|precision):|phaseScale|Array\(|Object|undefined/,
      );
    }
  });
});
