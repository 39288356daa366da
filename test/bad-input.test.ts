/**
 * The bad-input matrix: every public entry point fed every kind of bad input it can meet. Each case must
 * throw (or reject with) the named error class whose `argument` names the offending argument, on every backend;
 * never crash, abort or hang. docs/reliability.md lists these kinds; a test below keeps the two in
 * step. CLI and file cases live in test/cli*.test.ts and are listed there too.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

import { loadWasm } from "../src/backend/browser-backend";
import {
  computeRanks,
  computeRanksSync,
  estimateFull,
  estimateFromSampledRanks,
  sampleTasks,
  computeSampledRanksSync,
  countScores,
  countScoresSync,
  EmbeddingModel,
  FrequencyBaseline,
  getMetric,
  KgrankBackendError,
  KgrankInputError,
  KgrankStateError,
  metricValues,
  ogbEvaluateSync,
  prepareCandidates,
  RankCounter,
  RankEvaluator,
  RelationRanker,
  TemporalEvaluator,
  UnknownMetricError,
  encodeNpy,
  evaluatePbgCheckpoint,
  loadDataset,
  loadEmbeddingModel,
  openEntityTable,
  parseNpy,
  parseNpz,
  parseSafetensors,
  readNpy,
  readNpz,
  readSafetensors,
  parseQuadruples,
  parseCandidateText,
  CandidateSets,
  readTriples,
  splitTsvTriples,
  writeNpy,
  computeSampledRanks,
  countScores as countScoresAsync,
  loadDatasetAsync,
  ogbEvaluate,
  readNpyAsync,
  predictTopK,
  predictTopKAsync,
  loadScreenTable,
  saveScreenTable,
  mergeTopK,
  evaluateWikiKG90Mv2,
} from "../src/index";
import { zipSync } from "fflate";
import { backendLabel } from "./helpers/backend";
import { decodeState, encodeState } from "../src/evaluation/state";
import { tempDir } from "./helpers/temp";
import { caughtFrom, expectError } from "./helpers/errors";
import { parseShardJobData, readRoots } from "../src/run/job-data";
import { predictSidesArg } from "../src/run/predict-run";
import { evaluateRun } from "../src/run/evaluate-run";
import { parseEvaluateArgs } from "../src/run/flags/evaluate";

/** Prints nothing: evaluateRun's output in the cases below, which must throw before printing. */
const SILENT = { stdout: () => undefined, stderr: () => undefined };

const label = backendLabel;

function detached(n: number): Float32Array {
  const buf = new ArrayBuffer(4 * n);
  const view = new Float32Array(buf);
  structuredClone(buf, { transfer: [buf] });
  return view;
}

const f32 = (n: number, v = 0.5) => new Float32Array(n).fill(v);
const shardJob = { run: "mh8k2x1c-0a1b2c3d4e5f", args: ["evaluate", "--dataset", "nations"], shard: 0, shards: 2 };
const triples = Int32Array.from([0, 0, 1, 1, 0, 2]);
const ev = () => new RankEvaluator({ numEntities: 3, filterTriples: triples });
/** An evaluator with typed candidates: relation 0 allows every head and the tails of `tail` ((relation, entity) pairs). */
const typedEv = (tail: number[]) =>
  new RankEvaluator({
    numEntities: 3,
    numRelations: 1,
    filterTriples: triples,
    candidates: CandidateSets.fromPairs({ numEntities: 3, numRelations: 1, head: [0, 0, 0, 1, 0, 2], tail }),
  });

/** A 3-entity, 1-relation DistMult model (width 2), with `over` replacing options. */
const emb = (over: Record<string, unknown> = {}) =>
  new EmbeddingModel({
    interaction: "distmult",
    entityEmbeddings: { data: f32(6), shape: [3, 2] },
    relationEmbeddings: { data: f32(2), shape: [1, 2] },
    ...over,
  } as never);

const goodNpy = encodeNpy(Float32Array.from([1, 2, 3, 4]), [2, 2]);
/** The good file with its header dict replaced (same length, padded), e.g. to declare another shape or dtype. */
function npyWithHeader(dict: string): Uint8Array {
  const b = goodNpy.slice();
  const len = new DataView(b.buffer).getUint16(8, true);
  const text = dict.padEnd(len - 1, " ") + "\n";
  for (let i = 0; i < len; i++) b[10 + i] = text.charCodeAt(i);
  return b;
}
const int64Npy = (() => {
  const b = encodeNpy(BigInt64Array.from([2n ** 60n]));
  return b;
})();

/** A one-member .npz ("a.npy" = goodNpy, stored or deflated) with `patch` applied (local header at 0, central entry at `cd`). */
function npzPatched(level: 0 | 6, patch: (z: Uint8Array, dv: DataView, cd: number) => void): Uint8Array {
  const z = zipSync({ "a.npy": goodNpy }, { level });
  const dv = new DataView(z.buffer, z.byteOffset, z.byteLength);
  let cd = z.length - 22;
  while (cd > 0 && dv.getUint32(cd, true) !== 0x02014b50) cd--;
  patch(z, dv, cd);
  return z;
}
const latin1Tsv = (() => {
  const p = path.join(tempDir("bad-input"), "latin1.tsv");
  writeFileSync(p, Buffer.from("a\tr\tcaf\u00e9\n", "latin1"));
  return p;
})();
/** A dataset folder of id arrays whose test split names entity 3 of a 3-label entities.txt. */
const idArrayDir = (() => {
  const d = tempDir("bad-ids");
  writeNpy(path.join(d, "train.npy"), Int32Array.from([0, 0, 1, 1, 0, 2]), [2, 3]);
  writeNpy(path.join(d, "valid.npy"), Int32Array.from([0, 0, 1]), [1, 3]);
  writeNpy(path.join(d, "test.npy"), Int32Array.from([0, 0, 3]), [1, 3]);
  writeFileSync(path.join(d, "entities.txt"), "a\nb\nc\n");
  return d;
})();
/** A dataset folder of id arrays, no label files, whose test split holds entity 2^31 - 2 among ids below 4. */
const sparseIdDir = (() => {
  const d = tempDir("bad-sparse-ids");
  writeNpy(path.join(d, "train.npy"), Int32Array.from([0, 0, 1, 1, 0, 2]), [2, 3]);
  writeNpy(path.join(d, "valid.npy"), Int32Array.from([0, 0, 1]), [1, 3]);
  writeNpy(path.join(d, "test.npy"), Int32Array.from([0, 0, 2147483646]), [1, 3]);
  return d;
})();
/** A dataset folder whose train.tsv is Latin-1. */
const latin1DatasetDir = (() => {
  const d = tempDir("bad-latin1-dataset");
  writeFileSync(path.join(d, "train.tsv"), Buffer.from("a\tr\tcaf\u00e9\n", "latin1"));
  writeFileSync(path.join(d, "valid.tsv"), "a\tr\ta\n");
  writeFileSync(path.join(d, "test.tsv"), "a\tr\ta\n");
  return d;
})();
/** Scores saved as float64, for a read that asks for float32. */
const f8Scores = (() => {
  const p = path.join(tempDir("bad-f8"), "scores-f8.npy");
  writeNpy(p, Float64Array.from([0.5, 0.25]), [1, 2]);
  return p;
})();
/**
 * A model's files for loadEmbeddingModel (3 entities, 1 relation, width 2) and id maps or a model directory that
 * are not regular files: a FIFO (read, it blocks until a writer comes) and /dev/zero (never ends).
 */
const modelFiles = (() => {
  const d = tempDir("bad-model");
  const p = (name: string) => path.join(d, name);
  writeFileSync(p("entity.npy"), encodeNpy(f32(6), [3, 2]));
  writeFileSync(p("relation.npy"), encodeNpy(f32(2), [1, 2]));
  writeFileSync(p("short.npy"), encodeNpy(f32(6), [3, 2]).subarray(0, 128 + 20));
  writeFileSync(p("entity.npz"), encodeNpy(f32(6), [3, 2]));
  writeFileSync(p("nan.npy"), encodeNpy(Float32Array.of(1, 2, 3, NaN, 5, 6), [3, 2]));
  execFileSync("mkfifo", [p("ids.fifo")]);
  writeFileSync(p("dup.tsv"), "a\nb\n\na\n");
  writeFileSync(p("latin1.tsv"), Buffer.from("a\nb\ncaf\u00e9\n", "latin1"));
  for (const [name, config] of [
    ["fifo-dir", "fifo"],
    ["zero-dir", "zero"],
  ] as const) {
    mkdirSync(p(name));
    writeFileSync(p(`${name}/entity_embedding.npy`), encodeNpy(f32(6), [3, 2]));
    writeFileSync(p(`${name}/relation_embedding.npy`), encodeNpy(f32(2), [1, 2]));
    if (config === "fifo") execFileSync("mkfifo", [p(`${name}/config.json`)]);
    else symlinkSync("/dev/zero", p(`${name}/config.json`));
  }
  mkdirSync(p("two-runs"));
  for (const run of ["A", "B"]) {
    writeFileSync(p(`two-runs/${run}_DistMult_entity.npy`), encodeNpy(f32(6), [3, 2]));
    writeFileSync(p(`two-runs/${run}_DistMult_relation.npy`), encodeNpy(f32(2), [1, 2]));
  }
  writeFileSync(p("two-runs/config.json"), JSON.stringify({ model: "DistMult", emb_size: 2 }));
  mkdirSync(p("wrong-dim"));
  writeFileSync(p("wrong-dim/entity_embedding.npy"), encodeNpy(f32(6), [3, 2]));
  writeFileSync(p("wrong-dim/relation_embedding.npy"), encodeNpy(f32(2), [1, 2]));
  writeFileSync(p("wrong-dim/config.json"), JSON.stringify({ model: "DistMult", hidden_dim: 4 }));
  mkdirSync(p("moved-maps"));
  writeFileSync(p("moved-maps/X_DistMult_entity.npy"), encodeNpy(f32(6), [3, 2]));
  writeFileSync(p("moved-maps/X_DistMult_relation.npy"), encodeNpy(f32(2), [1, 2]));
  writeFileSync(
    p("moved-maps/config.json"),
    JSON.stringify({
      model_name: "DistMult",
      dataset: "X",
      format: "built_in",
      data_path: p("moved-data"),
      emp_file: "entities.dict",
    }),
  );
  return { p, labels: { entityLabels: ["a", "b", "c"], relationLabels: ["r"] } };
})();
const loadModel = (o: Record<string, string>) =>
  loadEmbeddingModel({
    interaction: "distmult",
    entityEmbeddings: modelFiles.p("entity.npy"),
    relationEmbeddings: modelFiles.p("relation.npy"),
    ...modelFiles.labels,
    ...o,
  });
const safetensors = (header: string) => {
  const h = Buffer.from(header);
  const out = new Uint8Array(8 + h.length + 4);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  return out;
};

/** PyTorch-BigGraph checkpoints: copies of test/fixtures/pbg/typed's dot checkpoint, each broken one way. */
const pbgFiles = (() => {
  const fix = path.resolve(__dirname, "fixtures", "pbg", "typed");
  const d = tempDir("bad-pbg");
  const broken = (name: string, change: (dir: string) => void) => {
    const dir = path.join(d, name);
    cpSync(path.join(fix, "checkpoints", "dot"), dir, { recursive: true });
    change(dir);
    return dir;
  };
  const config = (dir: string, edit: (c: { relations: { operator: string }[] }) => void) => {
    const c = JSON.parse(readFileSync(path.join(dir, "config.json"), "utf8")) as { relations: { operator: string }[] };
    edit(c);
    writeFileSync(path.join(dir, "config.json"), JSON.stringify(c));
  };
  mkdirSync(path.join(d, "no-config"));
  mkdirSync(path.join(d, "no-edges"));
  return {
    edges: path.join(fix, "edges"),
    noConfig: path.join(d, "no-config"),
    noEdges: path.join(d, "no-edges"),
    missingPartition: broken("missing-partition", (c) => rmSync(path.join(c, "embeddings_user_1.v3.h5"))),
    version: broken("version", (c) => writeFileSync(path.join(c, "checkpoint_version.txt"), "7\n")),
    operator: broken("operator", (c) => config(c, (cfg) => (cfg.relations[0]!.operator = "rotate"))),
    notPbg: broken("not-pbg", (c) =>
      cpSync(path.join(fix, "edges", "train", "edges_0_0.h5"), path.join(c, "embeddings_item_0.v3.h5")),
    ),
    notHdf5: broken("not-hdf5", (c) => writeFileSync(path.join(c, "model.v3.h5"), "a text file\n")),
    batchSize: broken("batch-size", (c) => config(c, (cfg) => Object.assign(cfg, { batch_size: 0 }))),
    allNegs: broken("all-negs", (c) => config(c, (cfg) => Object.assign(cfg.relations[0]!, { all_negs: true }))),
    noNegatives: broken("no-negatives", (c) =>
      config(c, (cfg) => Object.assign(cfg, { num_batch_negs: 0, num_uniform_negs: 0 })),
    ),
    ok: path.join(fix, "checkpoints", "dot"),
    state: path.join(d, "shard.state"),
  };
})();

interface Case {
  kind: string;
  call: () => unknown;
  error: new (...args: never[]) => Error;
  argument?: string;
}

export const CASES: Case[] = [
  // ---- counting and ranks -------------------------------------------------------------------------------------
  {
    kind: "scores not a typed array",
    call: () => countScoresSync({ scores: [1, 2] as never, numColumns: 2, thresholds: [1] }),
    error: KgrankInputError,
    argument: "scores",
  },
  {
    kind: "scores an Int32Array",
    call: () => countScoresSync({ scores: new Int32Array(4) as never, numColumns: 2, thresholds: [1, 1] }),
    error: KgrankInputError,
    argument: "scores",
  },
  {
    kind: "scores a BigInt64Array",
    call: () => computeRanksSync({ scores: new BigInt64Array(4) as never, numColumns: 2, trueIndices: [0, 0] }),
    error: KgrankInputError,
    argument: "scores",
  },
  {
    kind: "scores a DataView",
    call: () =>
      computeRanksSync({ scores: new DataView(new ArrayBuffer(16)) as never, numColumns: 2, trueIndices: [0, 0] }),
    error: KgrankInputError,
    argument: "scores",
  },
  {
    kind: "scores empty",
    call: () => computeRanksSync({ scores: new Float32Array(0), numColumns: 2, trueIndices: [] }),
    error: KgrankInputError,
    argument: "scores",
  },
  {
    kind: "scores detached ArrayBuffer",
    call: () => computeRanksSync({ scores: detached(4), numColumns: 2, trueIndices: [0, 0] }),
    error: KgrankInputError,
    argument: "scores",
  },
  {
    kind: "numColumns zero",
    call: () => countScoresSync({ scores: f32(4), numColumns: 0, thresholds: [1] }),
    error: KgrankInputError,
    argument: "numColumns",
  },
  {
    kind: "numColumns negative",
    call: () => computeRanksSync({ scores: f32(4), numColumns: -2, trueIndices: [0, 0] }),
    error: KgrankInputError,
    argument: "numColumns",
  },
  {
    kind: "numColumns non-integer",
    call: () => computeRanksSync({ scores: f32(4), numColumns: 1.5, trueIndices: [0, 0] }),
    error: KgrankInputError,
    argument: "numColumns",
  },
  {
    kind: "numColumns NaN",
    call: () => computeRanksSync({ scores: f32(4), numColumns: NaN, trueIndices: [0, 0] }),
    error: KgrankInputError,
    argument: "numColumns",
  },
  {
    kind: "numColumns Infinity",
    call: () => computeRanksSync({ scores: f32(4), numColumns: Infinity, trueIndices: [0, 0] }),
    error: KgrankInputError,
    argument: "numColumns",
  },
  {
    kind: "numColumns a string",
    call: () => computeRanksSync({ scores: f32(4), numColumns: "2" as never, trueIndices: [0, 0] }),
    error: KgrankInputError,
    argument: "numColumns",
  },
  {
    kind: "numColumns not dividing the length",
    call: () => computeRanksSync({ scores: f32(5), numColumns: 2, trueIndices: [0, 0] }),
    error: KgrankInputError,
    argument: "numColumns",
  },
  {
    kind: "numColumns past 2^32 (index overflow)",
    call: () => computeRanksSync({ scores: f32(4), numColumns: 2 ** 33, trueIndices: [0] }),
    error: KgrankInputError,
    argument: "numColumns",
  },
  {
    kind: "thresholds length mismatch",
    call: () => countScoresSync({ scores: f32(4), numColumns: 2, thresholds: [1] }),
    error: KgrankInputError,
    argument: "thresholds",
  },
  {
    kind: "trueIndices out of range",
    call: () => computeRanksSync({ scores: f32(4), numColumns: 2, trueIndices: [0, 2] }),
    error: KgrankInputError,
    argument: "trueIndices",
  },
  {
    kind: "trueIndices negative",
    call: () => computeRanksSync({ scores: f32(4), numColumns: 2, trueIndices: [-1, 0] }),
    error: KgrankInputError,
    argument: "trueIndices",
  },
  {
    kind: "trueIndices non-integer",
    call: () => computeRanksSync({ scores: f32(4), numColumns: 2, trueIndices: [0.5, 0] }),
    error: KgrankInputError,
    argument: "trueIndices",
  },
  {
    kind: "trueIndices and trueScores both missing",
    call: () => computeRanksSync({ scores: f32(4), numColumns: 2 }),
    error: KgrankInputError,
  },
  {
    kind: "true score NaN",
    call: () => computeRanksSync({ scores: f32(4), numColumns: 2, trueScores: [NaN, 1] }),
    error: KgrankInputError,
    argument: "trueScores",
  },
  {
    kind: "true candidate's score NaN",
    call: () => computeRanksSync({ scores: Float32Array.from([NaN, 1, 1, 1]), numColumns: 2, trueIndices: [0, 0] }),
    error: KgrankInputError,
    argument: "scores",
  },
  {
    kind: "threads zero",
    call: () => computeRanksSync({ scores: f32(4), numColumns: 2, trueIndices: [0, 0], threads: 0 }),
    error: KgrankInputError,
    argument: "threads",
  },
  {
    kind: "threads absurd",
    call: () => computeRanksSync({ scores: f32(4), numColumns: 2, trueIndices: [0, 0], threads: 1e9 }),
    error: KgrankInputError,
    argument: "threads",
  },
  { kind: "options not an object", call: () => computeRanksSync(null as never), error: KgrankInputError },
  {
    kind: "sampled K = 0",
    call: () => computeSampledRanksSync({ positiveScores: [1, 2], negativeScores: new Float32Array(0) }),
    error: KgrankInputError,
  },
  {
    kind: "sampled negatives not a multiple of n",
    call: () => computeSampledRanksSync({ positiveScores: [1, 2], negativeScores: f32(5) }),
    error: KgrankInputError,
    argument: "negativeScores",
  },
  {
    kind: "sampled positive NaN",
    call: () => computeSampledRanksSync({ positiveScores: [1, NaN], negativeScores: f32(4) }),
    error: KgrankInputError,
    argument: "positiveScores",
  },
  {
    kind: "async: rejects, never throws synchronously",
    call: () => computeRanks({ scores: f32(5), numColumns: 2, trueIndices: [0, 0] }),
    error: KgrankInputError,
    argument: "numColumns",
  },
  {
    kind: "async count: bad thresholds",
    call: () => countScores({ scores: f32(4), numColumns: 2, thresholds: "x" as never }),
    error: KgrankInputError,
    argument: "thresholds",
  },
  {
    kind: "RankCounter: chunk overlap",
    call: () => {
      const c = new RankCounter({ trueScores: [1] });
      c.addSync({ scores: f32(2), columnStart: 0 });
      c.addSync({ scores: f32(2), columnStart: 1 });
    },
    error: KgrankInputError,
    argument: "columnStart",
  },
  {
    kind: "RankCounter: ranks() before any chunk",
    call: () => new RankCounter({ trueScores: [1] }).ranks(),
    error: KgrankStateError,
  },
  // ---- evaluator ---------------------------------------------------------------------------------------------
  {
    kind: "numEntities zero",
    call: () => new RankEvaluator({ numEntities: 0 }),
    error: KgrankInputError,
    argument: "numEntities",
  },
  {
    kind: "numEntities past 2^31",
    call: () => new RankEvaluator({ numEntities: 2 ** 31 }),
    error: KgrankInputError,
    argument: "numEntities",
  },
  {
    kind: "filterTriples with 2 columns",
    call: () => new RankEvaluator({ numEntities: 3, filterTriples: Int32Array.from([0, 1, 1, 2]) }),
    error: KgrankInputError,
    argument: "filterTriples[0]",
  },
  {
    kind: "filterTriples id out of range",
    call: () => new RankEvaluator({ numEntities: 3, filterTriples: Int32Array.from([0, 0, 3]) }),
    error: KgrankInputError,
    argument: "filterTriples[0]",
  },
  {
    kind: "unknown side",
    call: () => ev().addSync({ triples, side: "left" as never, scores: f32(6) }),
    error: KgrankInputError,
    argument: "side",
  },
  {
    kind: "unknown sides option",
    call: () => new RankEvaluator({ numEntities: 3, sides: "all" as never }),
    error: KgrankInputError,
    argument: "sides",
  },
  {
    kind: "row length != numEntities",
    call: () => ev().addSync({ triples, side: "tail", scores: f32(8) }),
    error: KgrankInputError,
    argument: "scores",
  },
  {
    kind: "rows x numEntities overflows 2^32",
    call: () =>
      new RankEvaluator({ numEntities: 2 ** 31 - 1 }).addSync({
        triples: Int32Array.from([0, 0, 1, 1, 0, 2, 2, 0, 1]),
        side: "tail",
        scores: f32(9),
      }),
    error: KgrankInputError,
    argument: "scores",
  },
  {
    kind: "evaluated triple not in filter",
    call: () => ev().addSync({ triples: Int32Array.from([2, 0, 0]), side: "tail", scores: f32(3) }),
    error: KgrankInputError,
    argument: "triples",
  },
  {
    kind: "ks with 0",
    call: () => new RankEvaluator({ numEntities: 3, ks: [0] }),
    error: KgrankInputError,
    argument: "ks[0]",
  },
  {
    kind: "unknown weighting",
    call: () => new RankEvaluator({ numEntities: 3, weighting: "mean" as never }),
    error: KgrankInputError,
    argument: "weighting",
  },
  {
    kind: "addRanks rank above numCandidates",
    call: () => ev().addRanks({ side: "tail", realistic: [5], numCandidates: [3] }),
    error: KgrankInputError,
    argument: "realistic",
  },
  {
    kind: "addRanks negative weight",
    call: () => ev().addRanks({ side: "tail", realistic: [1], numCandidates: [3], weights: [-1] }),
    error: KgrankInputError,
    argument: "weights",
  },
  {
    kind: "addRanks triples and relations both",
    call: () => ev().addRanks({ side: "tail", realistic: [1], numCandidates: [3], triples: [0, 0, 1], relations: [0] }),
    error: KgrankInputError,
    argument: "relations",
  },
  {
    kind: "addRanks triples not one row per task",
    call: () => ev().addRanks({ side: "tail", realistic: [1, 1], numCandidates: [3, 3], triples: [0, 0, 1] }),
    error: KgrankInputError,
    argument: "triples",
  },
  {
    kind: "addRanks triple id out of range",
    call: () => ev().addRanks({ side: "tail", realistic: [1], numCandidates: [3], triples: [0, 0, 7] }),
    error: KgrankInputError,
    argument: "triples",
  },
  {
    kind: "addRanks relations not one per task",
    call: () => ev().addRanks({ side: "tail", realistic: [1, 1], numCandidates: [3, 3], relations: [0] }),
    error: KgrankInputError,
    argument: "relations",
  },
  {
    kind: "every weight 0",
    call: () => prepareCandidates([3, 3], [0, 0]),
    error: KgrankInputError,
    argument: "weights",
  },
  {
    kind: "add after finalize",
    call: () => {
      const e = ev();
      e.addRanks({ side: "tail", realistic: [1], numCandidates: [3] });
      e.finalize();
      e.addRanks({ side: "tail", realistic: [1], numCandidates: [3] });
    },
    error: KgrankStateError,
  },
  { kind: "finalize with no tasks", call: () => ev().finalize(), error: KgrankStateError },
  {
    kind: "merge of corrupted state",
    call: () => {
      const e = ev();
      e.addRanks({ side: "tail", realistic: [1], numCandidates: [3] });
      const s = e.serialize();
      s[s.length - 1]! ^= 0xff;
      RankEvaluator.merge([s]);
    },
    error: KgrankInputError,
    argument: "states[0]",
  },
  {
    kind: "merge of crafted, re-checksummed state",
    call: () => {
      const e = ev();
      e.addRanks({ side: "tail", realistic: [1], numCandidates: [3] });
      const d = decodeState(e.serialize());
      d.sides.tail.realistic[0] = 0;
      RankEvaluator.merge([encodeState(d.header, d.sides)]);
    },
    error: KgrankInputError,
    argument: "states[0]",
  },
  {
    kind: "merge of random bytes",
    call: () => RankEvaluator.merge([new Uint8Array(100).fill(7)]),
    error: KgrankInputError,
    argument: "states[0]",
  },
  {
    kind: "merge of a state given twice",
    call: () => {
      const e = ev();
      e.addRanks({ side: "tail", realistic: [1], numCandidates: [3] });
      const s = e.serialize();
      RankEvaluator.merge([s, s]);
    },
    error: KgrankInputError,
    argument: "states[1]",
  },
  {
    kind: "OGB drop-in: NaN positive score",
    call: () => ogbEvaluateSync({ y_pred_pos: [NaN], y_pred_neg: new Float32Array(3) }),
    error: KgrankInputError,
    argument: "y_pred_pos",
  },
  {
    kind: "OGB drop-in: y_pred_neg not (n, K)",
    call: () => ogbEvaluateSync({ y_pred_pos: [1, 2], y_pred_neg: new Float32Array(3) }),
    error: KgrankInputError,
    argument: "y_pred_neg",
  },
  // ---- metrics -----------------------------------------------------------------------------------------------
  { kind: "unknown metric key", call: () => getMetric("mean_rank_thing"), error: UnknownMetricError },
  { kind: "rank < 1", call: () => metricValues(["mr"], [0.5, 2], [3, 3]), error: KgrankInputError },
  { kind: "rank > numCandidates", call: () => metricValues(["mr"], [4, 2], [3, 3]), error: KgrankInputError },
  { kind: "non-finite rank", call: () => metricValues(["mrr"], [Infinity]), error: KgrankInputError },
  {
    kind: "non-integer numCandidates",
    call: () => prepareCandidates([2.5]),
    error: KgrankInputError,
    argument: "numCandidates",
  },
  {
    kind: "negative weight",
    call: () => prepareCandidates([3, 3], [1, -1]),
    error: KgrankInputError,
    argument: "weights",
  },
  { kind: "NaN weight", call: () => prepareCandidates([3, 3], [1, NaN]), error: KgrankInputError, argument: "weights" },
  // ---- files (src/io); the CLI turns each into a one-line message and exit code 1 (test/cli.test.ts) ----------------
  {
    kind: "npy truncated header",
    call: () => parseNpy(goodNpy.subarray(0, 40)),
    error: KgrankInputError,
    argument: "file",
  },
  {
    kind: "npy truncated data",
    call: () => parseNpy(goodNpy.subarray(0, goodNpy.length - 2)),
    error: KgrankInputError,
    argument: "file",
  },
  {
    kind: "npy lying header (shape larger than the data)",
    call: () => parseNpy(npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2000, 2000), }")),
    error: KgrankInputError,
    argument: "file",
  },
  {
    kind: "npy giant declared shape (past 2^40 elements)",
    call: () => parseNpy(npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999, 99999999), }")),
    error: KgrankInputError,
    argument: "file",
  },
  {
    kind: "npy wrong magic",
    call: () => parseNpy(Uint8Array.from([0x50, 0x4b, 3, 4, ...goodNpy.subarray(4)])),
    error: KgrankInputError,
    argument: "file",
  },
  {
    kind: "npy unsupported dtype",
    call: () => parseNpy(npyWithHeader("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }")),
    error: KgrankInputError,
    argument: "file",
  },
  {
    kind: "npy header not a dict",
    call: () => parseNpy(npyWithHeader("[1, 2, 3]")),
    error: KgrankInputError,
    argument: "file",
  },
  { kind: "npy int64 past 2^53", call: () => parseNpy(int64Npy), error: KgrankInputError, argument: "file" },
  {
    kind: "npy a device (/dev/zero)",
    call: () => readNpy("/dev/zero", "--scores-tail"),
    error: KgrankInputError,
    argument: "--scores-tail",
  },
  {
    kind: "npz a device (/dev/zero)",
    call: () => readNpz("/dev/zero", "--scores-tail"),
    error: KgrankInputError,
    argument: "--scores-tail",
  },
  {
    kind: "safetensors a device (/dev/zero)",
    call: () => readSafetensors("/dev/zero", "--scores-tail"),
    error: KgrankInputError,
    argument: "--scores-tail",
  },
  { kind: "TSV triples a device (/dev/zero)", call: () => readTriples("/dev/zero"), error: KgrankInputError },
  {
    kind: "npy missing file",
    call: () => readNpy("/nonexistent/kgrank/scores.npy", "--scores-tail"),
    error: KgrankInputError,
    argument: "--scores-tail",
  },
  {
    kind: "npy read as float32 but holding f8 data",
    call: () => readNpy(f8Scores, { dtype: "float32", argument: "--scores-tail" }),
    error: KgrankInputError,
    argument: "--scores-tail",
  },
  {
    kind: "npy dtype option not a float type",
    call: () => readNpy("/nonexistent/kgrank/scores.npy", { dtype: "f4" as never }),
    error: KgrankInputError,
    argument: "dtype",
  },
  {
    kind: "writeNpy shape not matching the data",
    call: () => writeNpy("/tmp/kgrank-never-written.npy", Float32Array.from([1, 2, 3]), [2, 2]),
    error: KgrankInputError,
    argument: "shape",
  },
  {
    kind: "npy header with a key NumPy does not write",
    call: () => parseNpy(npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), 'x': 1}")),
    error: KgrankInputError,
    argument: "file",
  },
  {
    kind: "npy header that is not a Python literal",
    call: () => parseNpy(npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2}")),
    error: KgrankInputError,
    argument: "file",
  },
  {
    kind: "npy shape not a tuple",
    call: () => parseNpy(npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': 4}")),
    error: KgrankInputError,
    argument: "file",
  },
  { kind: ".npz that is not a zip", call: () => parseNpz(goodNpy), error: KgrankInputError, argument: "file" },
  {
    kind: ".npz member failing its CRC-32",
    call: () =>
      parseNpz(
        npzPatched(0, (z, _dv, cd) => {
          z[cd - 1]! ^= 1;
        }),
      ),
    error: KgrankInputError,
    argument: "file[a]",
  },
  {
    kind: ".npz member compressed with bzip2",
    call: () =>
      parseNpz(
        npzPatched(0, (_z, dv, cd) => {
          dv.setUint16(8, 12, true);
          dv.setUint16(cd + 10, 12, true);
        }),
      ),
    error: KgrankInputError,
    argument: "file[a]",
  },
  {
    kind: ".npz member declaring more than deflate can produce",
    call: () =>
      parseNpz(
        npzPatched(6, (_z, dv, cd) => {
          dv.setUint32(cd + 24, 0xffffffff, true);
        }),
      ),
    error: KgrankInputError,
    argument: "file[a]",
  },
  {
    kind: ".npz without the array asked for",
    call: () =>
      parseNpz(
        npzPatched(0, () => {}),
        "file",
        { arrays: ["b"] },
      ),
    error: KgrankInputError,
    argument: "file",
  },
  {
    kind: "safetensors header length past the end",
    call: () => parseSafetensors(Uint8Array.from([255, 255, 0, 0, 0, 0, 0, 0, 123])),
    error: KgrankInputError,
    argument: "file",
  },
  {
    kind: "safetensors header null",
    call: () => parseSafetensors(safetensors("null")),
    error: KgrankInputError,
    argument: "file",
  },
  {
    kind: "safetensors tensor entry not an object",
    call: () => parseSafetensors(safetensors('{"x": 3}')),
    error: KgrankInputError,
    argument: "file",
  },
  {
    kind: "safetensors data_offsets past the data",
    call: () => parseSafetensors(safetensors('{"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}')),
    error: KgrankInputError,
    argument: "file",
  },
  {
    kind: "TSV with 2 columns (line named)",
    call: () => splitTsvTriples("a\tr\tb\na\tr\n"),
    error: KgrankInputError,
    argument: "file",
  },
  {
    kind: "TSV with 4 columns (line named)",
    call: () => splitTsvTriples("a\tr\tb\tc\n"),
    error: KgrankInputError,
    argument: "file",
  },
  { kind: "TSV empty field", call: () => splitTsvTriples("a\t\tb\n"), error: KgrankInputError, argument: "file" },
  {
    kind: "TSV not UTF-8 (Latin-1; line named)",
    call: () => readTriples(latin1Tsv, { argument: "train.tsv" }),
    error: KgrankInputError,
    argument: "train.tsv",
  },
  {
    kind: "quadruple TSV timestamp that does not parse (line named)",
    call: () => parseQuadruples({ train: "a\tr\tb\t2014-02-30\n" }),
    error: KgrankInputError,
    argument: "train",
  },
  {
    kind: "quadruple TSV with 3 columns (line named)",
    call: () => parseQuadruples({ train: "a\tr\tb\t1\n", test: "a\tr\tb\n" }),
    error: KgrankInputError,
    argument: "test",
  },
  {
    kind: "TemporalEvaluator quadruple timestamp id past numTimestamps",
    call: () =>
      new TemporalEvaluator({
        numEntities: 2,
        numRelations: 1,
        numTimestamps: 3,
        filterQuadruples: Int32Array.of(0, 0, 1, 3),
      }),
    error: KgrankInputError,
    argument: "filterQuadruples",
  },
  {
    kind: "TemporalEvaluator numRelations x numTimestamps past 2^31",
    call: () =>
      new TemporalEvaluator({
        numEntities: 2,
        numRelations: 1 << 16,
        numTimestamps: 1 << 15,
        filterQuadruples: new Int32Array(0),
      }),
    error: KgrankInputError,
    argument: "numTimestamps",
  },
  {
    kind: "candidate file naming an unknown entity (line named)",
    call: () =>
      parseCandidateText("tail\tr\tatlantis\n", { entityLabels: ["a"], relationLabels: ["r"], argument: "file" }),
    error: KgrankInputError,
    argument: "file",
  },
  {
    kind: "candidate file domain type without entities (line named)",
    call: () =>
      parseCandidateText("domain\tr\tplanet\n", { entityLabels: ["a"], relationLabels: ["r"], argument: "file" }),
    error: KgrankInputError,
    argument: "file",
  },
  {
    kind: "CandidateSets pair with an entity out of range",
    call: () => CandidateSets.fromPairs({ numEntities: 2, numRelations: 1, head: [0, 2], tail: [] }),
    error: KgrankInputError,
    argument: "head",
  },
  {
    kind: "RankEvaluator candidates over other entities",
    call: () =>
      new RankEvaluator({
        numEntities: 3,
        candidates: CandidateSets.fromPairs({ numEntities: 2, numRelations: 1, head: [0, 0], tail: [0, 1] }),
      }),
    error: KgrankInputError,
    argument: "candidates",
  },
  {
    kind: "RankEvaluator candidates with an empty set for the batch's relation",
    call: () => {
      const ev = new RankEvaluator({
        numEntities: 2,
        candidates: CandidateSets.fromPairs({ numEntities: 2, numRelations: 1, head: [0, 0], tail: [] }),
      });
      ev.addSync({ triples: Int32Array.of(0, 0, 1), side: "tail", scores: Float32Array.of(0.5, 0.5) });
    },
    error: KgrankInputError,
    argument: "candidates",
  },
  {
    kind: "TemporalEvaluator.merge with a state under another setting's key",
    call: () => {
      const ev = new TemporalEvaluator({
        numEntities: 2,
        numRelations: 1,
        numTimestamps: 1,
        filterQuadruples: Int32Array.of(0, 0, 1, 0),
      });
      const s = ev.serialize();
      return TemporalEvaluator.merge([{ ...s, raw: s.static }]);
    },
    error: KgrankInputError,
    argument: "shards[0].raw",
  },
  {
    kind: "RankEvaluator temporal option not a setting",
    call: () => new RankEvaluator({ numEntities: 2, temporal: { setting: "weekly", numTimestamps: 3 } as never }),
    error: KgrankInputError,
    argument: "temporal",
  },
  { kind: "unknown dataset", call: () => loadDataset("freebase-2"), error: KgrankInputError, argument: "dataset" },
  {
    kind: "dataset id array with an id past its label file (file, row, column named)",
    call: () => loadDataset(undefined, { datasetDir: idArrayDir }),
    error: KgrankInputError,
    argument: "datasetDir",
  },
  {
    kind: "dataset id array without label files and one id of 2^31 - 2 (file, row, column named; no label per id made)",
    call: () => loadDataset(undefined, { datasetDir: sparseIdDir }),
    error: KgrankInputError,
    argument: "datasetDir",
  },
  {
    kind: "dataset folder with a Latin-1 train.tsv (the folder's option named)",
    call: () => loadDataset(undefined, { datasetDir: latin1DatasetDir }),
    error: KgrankInputError,
    argument: "datasetDir",
  },
  // ---- scorers -----------------------------------------------------------------------------------------------------
  {
    kind: "FrequencyBaseline relations x entities past the typed-array limit",
    call: () => new FrequencyBaseline(triples, 2 ** 31 - 1, 4),
    error: KgrankInputError,
    argument: "numEntities",
  },
  {
    kind: "FrequencyBaseline.scoreBatch into a buffer too small",
    call: () => new FrequencyBaseline(triples, 3, 2).scoreBatch(triples, "tail", new Float32Array(2)),
    error: KgrankInputError,
    argument: "into",
  },
  // ---- options objects and metric names ------------------------------------------------------------------------
  {
    kind: "unknown option key (filter for filterTriples)",
    call: () => new RankEvaluator({ numEntities: 3, filter: [triples] } as never),
    error: KgrankInputError,
    argument: "RankEvaluator options",
  },
  {
    kind: "misspelt metric at construction",
    call: () => new RankEvaluator({ numEntities: 3, metrics: ["mrr", "hist@10"] }),
    error: UnknownMetricError,
  },
  { kind: "negative k in a Hits name", call: () => getMetric("hits@-1"), error: KgrankInputError, argument: "query" },
  // ---- ranking from embeddings -------------------------------------------------------------------------------------
  {
    kind: "embeddings NaN",
    call: () => emb({ entityEmbeddings: { data: Float32Array.of(0, 0, 0, NaN, 0, 0), shape: [3, 2] } }),
    error: KgrankInputError,
    argument: "entityEmbeddings",
  },
  {
    kind: "embeddings data and shape disagree",
    call: () => emb({ entityEmbeddings: { data: f32(5), shape: [3, 2] } }),
    error: KgrankInputError,
    argument: "entityEmbeddings",
  },
  {
    kind: "embeddings not 2-D",
    call: () => emb({ entityEmbeddings: { data: f32(6), shape: [6] } }),
    error: KgrankInputError,
    argument: "entityEmbeddings",
  },
  {
    kind: "relation width wrong for the interaction",
    call: () => emb({ interaction: "pairre" }),
    error: KgrankInputError,
    argument: "relationEmbeddings",
  },
  {
    kind: "complex layout missing (never guessed)",
    call: () => emb({ interaction: "complex" }),
    error: KgrankInputError,
    argument: "complexLayout",
  },
  {
    kind: "unknown interaction",
    call: () => emb({ interaction: "transr" }),
    error: KgrankInputError,
    argument: "interaction",
  },
  {
    kind: "rotate-l2 complex layout missing (never guessed)",
    call: () => emb({ interaction: "rotate-l2" }),
    error: KgrankInputError,
    argument: "complexLayout",
  },
  {
    kind: "rotate-l2 relation width neither phases nor complex numbers",
    call: () =>
      emb({
        interaction: "rotate-l2",
        complexLayout: "interleaved",
        entityEmbeddings: { data: f32(12), shape: [3, 4] },
        relationEmbeddings: { data: f32(3), shape: [1, 3] },
      }),
    error: KgrankInputError,
    argument: "relationEmbeddings",
  },
  {
    kind: "model not an EmbeddingModel",
    call: () => ev().addModelSync({ model: {} as never, triples }),
    error: KgrankInputError,
    argument: "model",
  },
  {
    kind: "model entity count differs from the evaluator's",
    call: () => new RankEvaluator({ numEntities: 4 }).addModelSync({ model: emb(), triples }),
    error: KgrankInputError,
    argument: "model",
  },
  {
    kind: "model batch id out of range",
    call: () => ev().addModelSync({ model: emb(), triples: [0, 0, 3] }),
    error: KgrankInputError,
    argument: "triples",
  },
  {
    kind: "model batch screen not a screen mode",
    call: () => ev().addModelSync({ model: emb(), triples, screen: "fastest" as never }),
    error: KgrankInputError,
    argument: "screen",
  },
  {
    kind: "async model batch screen not a screen mode",
    call: () => ev().addModel({ model: emb(), triples, screen: 8 as never }),
    error: KgrankInputError,
    argument: "screen",
  },
  {
    kind: "OGB negatives out of range",
    call: () => ev().addModelSync({ model: emb(), triples, side: "tail", negatives: [0, 1, 2, 9] }),
    error: KgrankInputError,
    argument: "negatives",
  },
  {
    kind: "OGB negatives not K per triple",
    call: () => ev().addModelSync({ model: emb(), triples, side: "tail", negatives: [0, 1, 2] }),
    error: KgrankInputError,
    argument: "negatives",
  },
  {
    kind: "model embeddings transferred after the model was built",
    call: () => {
      const data = f32(6);
      const model = emb({ entityEmbeddings: { data, shape: [3, 2] } });
      structuredClone(data.buffer, { transfer: [data.buffer] });
      ev().addModelSync({ model, triples });
    },
    error: KgrankInputError,
    argument: "entityEmbeddings",
  },
  {
    kind: "id map (--entity-ids) a FIFO",
    call: () => loadModel({ entityIds: modelFiles.p("ids.fifo") }),
    error: KgrankInputError,
    argument: "entityIds",
  },
  {
    kind: "id map (--entity-ids) a device (/dev/zero)",
    call: () => loadModel({ entityIds: "/dev/zero" }),
    error: KgrankInputError,
    argument: "entityIds",
  },
  {
    kind: "id map (--relation-ids) a FIFO",
    call: () => loadModel({ relationIds: modelFiles.p("ids.fifo") }),
    error: KgrankInputError,
    argument: "relationIds",
  },
  {
    kind: "id map (--relation-ids) a device (/dev/zero)",
    call: () => loadModel({ relationIds: "/dev/zero" }),
    error: KgrankInputError,
    argument: "relationIds",
  },
  {
    kind: "model directory whose config.json is a FIFO",
    call: () => loadEmbeddingModel({ modelDir: modelFiles.p("fifo-dir"), ...modelFiles.labels }),
    error: KgrankInputError,
    argument: "modelDir",
  },
  {
    kind: "model directory whose config.json is /dev/zero",
    call: () => loadEmbeddingModel({ modelDir: modelFiles.p("zero-dir"), ...modelFiles.labels }),
    error: KgrankInputError,
    argument: "modelDir",
  },
  {
    kind: "id map with a duplicate label (line named)",
    call: () => loadModel({ entityIds: modelFiles.p("dup.tsv") }),
    error: KgrankInputError,
    argument: "entityIds",
  },
  {
    kind: "id map not UTF-8 (Latin-1; line named)",
    call: () => loadModel({ entityIds: modelFiles.p("latin1.tsv") }),
    error: KgrankInputError,
    argument: "entityIds",
  },
  {
    kind: "model score overflowing float32 (finite embeddings)",
    call: () =>
      ev().addModelSync({
        model: emb({
          entityEmbeddings: { data: Float32Array.of(3e38, 3e38, 1, -1, 1, 1), shape: [3, 2] },
          relationEmbeddings: { data: Float32Array.of(2, 2), shape: [1, 2] },
        }),
        triples: [0, 0, 1],
      }),
    error: KgrankInputError,
    argument: "model",
  },
  {
    kind: "model directory whose embedding files its config does not single out",
    call: () => loadEmbeddingModel({ modelDir: modelFiles.p("two-runs"), ...modelFiles.labels }),
    error: KgrankInputError,
    argument: "modelDir",
  },
  {
    kind: "model directory whose config.json contradicts its files (hidden_dim)",
    call: () => loadEmbeddingModel({ modelDir: modelFiles.p("wrong-dim"), ...modelFiles.labels }),
    error: KgrankInputError,
    argument: "modelDir",
  },
  {
    kind: "model directory whose config.json names an id map its data_path no longer holds",
    call: () => loadEmbeddingModel({ modelDir: modelFiles.p("moved-maps"), ...modelFiles.labels }),
    error: KgrankInputError,
    argument: "modelDir",
  },
  {
    kind: "async addModel: rejects, never throws synchronously",
    call: () => ev().addModel({ model: emb(), triples: [0, 0, 3] }),
    error: KgrankInputError,
    argument: "triples",
  },
  // ---- entity tables read in chunks ---------------------------------------------------------------------------------
  {
    kind: "entity table file shorter than its header says",
    call: () => openEntityTable(modelFiles.p("short.npy")),
    error: KgrankInputError,
    argument: "entityEmbeddings",
  },
  {
    kind: "entity table an .npz (not readable in chunks)",
    call: () => openEntityTable(modelFiles.p("entity.npz")),
    error: KgrankInputError,
    argument: "entityEmbeddings",
  },
  {
    kind: "entity table with a NaN row (found while read)",
    call: () => ev().addModel({ model: emb({ entityEmbeddings: openEntityTable(modelFiles.p("nan.npy")) }), triples }),
    error: KgrankInputError,
    argument: "entityEmbeddings",
  },
  {
    kind: "memoryBudget smaller than one query block",
    call: () =>
      ev().addModel({
        model: emb({ entityEmbeddings: openEntityTable(modelFiles.p("entity.npy")) }),
        triples,
        memoryBudget: 64,
      }),
    error: KgrankInputError,
    argument: "memoryBudget",
  },
  {
    kind: "memoryBudget not a whole number of bytes",
    call: () =>
      ev().addModel({
        model: emb({ entityEmbeddings: openEntityTable(modelFiles.p("entity.npy")) }),
        triples,
        memoryBudget: -1,
      }),
    error: KgrankInputError,
    argument: "memoryBudget",
  },
  {
    kind: "onPlan not a function",
    call: () =>
      ev().addModel({
        model: emb({ entityEmbeddings: openEntityTable(modelFiles.p("entity.npy")) }),
        triples,
        onPlan: "print" as unknown as () => void,
      }),
    error: KgrankInputError,
    argument: "onPlan",
  },
  {
    kind: "withRowOrder not a permutation of the table's rows",
    call: () => openEntityTable(modelFiles.p("entity.npy")).withRowOrder(new Int32Array(3)),
    error: KgrankInputError,
    argument: "rowOfEntity",
  },
  {
    kind: "table read in chunks ranked by the sync addModelSync",
    call: () =>
      ev().addModelSync({ model: emb({ entityEmbeddings: openEntityTable(modelFiles.p("entity.npy")) }), triples }),
    error: KgrankInputError,
    argument: "model",
  },
  {
    kind: "typed candidates from a model: a relation allowing no tail",
    call: () => typedEv([]).addModelSync({ model: emb(), triples: [0, 0, 1], side: "tail" }),
    error: KgrankInputError,
    argument: "candidates",
  },
  {
    kind: "typed candidates from a model with OGB negatives",
    call: () => typedEv([0, 1, 0, 2]).addModelSync({ model: emb(), triples, side: "tail", negatives: [0, 1] }),
    error: KgrankInputError,
    argument: "negatives",
  },
  {
    kind: "typed candidates from a table read in chunks",
    call: () =>
      typedEv([0, 1, 0, 2]).addModel({
        model: emb({ entityEmbeddings: openEntityTable(modelFiles.p("entity.npy")) }),
        triples,
      }),
    error: KgrankInputError,
    argument: "model",
  },
  {
    kind: "entityShard not { index, count } in range",
    call: () => new RankEvaluator({ numEntities: 3, entityShard: { index: 2, count: 2 } }),
    error: KgrankInputError,
    argument: "entityShard",
  },
  {
    kind: "entity shards merged with one missing",
    call: async () => {
      const e = new RankEvaluator({ numEntities: 3, filterTriples: triples, entityShard: { index: 0, count: 2 } });
      await e.addModel({ model: emb(), triples });
      return RankEvaluator.merge([e.serialize()]);
    },
    error: KgrankInputError,
    argument: "states[0]",
  },
  {
    kind: "entityShard range [begin, end) outside the entities",
    call: () => new RankEvaluator({ numEntities: 3, entityShard: { index: 0, count: 2, begin: 1, end: 4 } }),
    error: KgrankInputError,
    argument: "entityShard",
  },
  {
    kind: "chunked slice outside an entity shard's entities",
    call: () =>
      new RankEvaluator({ numEntities: 3, filterTriples: triples, entityShard: { index: 0, count: 2 } })
        .chunked({ triples, side: "tail", trueScores: [0, 0] })
        .addSync({ scores: new Float64Array(2), entityStart: 2 }),
    error: KgrankInputError,
    argument: "entityStart",
  },
  {
    kind: "entity shards merged whose ranges leave a gap",
    call: () => {
      const shard = (index: number, begin: number, end: number) => {
        const e = new RankEvaluator({ numEntities: 3, sides: "tail", entityShard: { index, count: 2, begin, end } });
        const b = e.chunked({ triples, side: "tail", trueScores: [1, 1] });
        b.addSync({ scores: new Float64Array(2 * (end - begin)).fill(1), entityStart: begin });
        b.finish();
        return e.serialize();
      };
      return RankEvaluator.merge([shard(0, 0, 1), shard(1, 2, 3)]);
    },
    error: KgrankInputError,
    argument: "states[1]",
  },
  // ---- a sample of tasks and its estimates -----------------------------------------------------------------------
  {
    kind: "sampleTasks size 1",
    call: () => sampleTasks({ triples: Int32Array.of(0, 0, 1, 1, 0, 2), size: 1 }),
    error: KgrankInputError,
    argument: "size",
  },
  {
    kind: "sampleTasks size above the population",
    call: () => sampleTasks({ triples: Int32Array.of(0, 0, 1, 1, 0, 2), size: 5 }),
    error: KgrankInputError,
    argument: "size",
  },
  {
    kind: "sampleTasks stratify not relation",
    call: () => sampleTasks({ triples: Int32Array.of(0, 0, 1, 1, 0, 2), size: 2, stratify: "side" as never }),
    error: KgrankInputError,
    argument: "stratify",
  },
  {
    kind: "estimateFull of results that are not the sample's tasks",
    call: () => {
      const t = Int32Array.of(0, 0, 1, 1, 0, 2, 2, 0, 0);
      const s = sampleTasks({ triples: t, size: 2, sides: "tail" });
      const e = new RankEvaluator({ numEntities: 3, sides: "tail" });
      e.addRanks({ side: "tail", realistic: [1, 2], numCandidates: [3, 3], triples: Int32Array.of(0, 0, 0, 0, 0, 0) });
      return estimateFull(e.finalize(), s);
    },
    error: KgrankInputError,
    argument: "results",
  },
  {
    kind: "estimateFromSampledRanks rank above numNegatives + 1",
    call: () => estimateFromSampledRanks({ ranks: [1, 12], numNegatives: 10, numCandidates: 100 }),
    error: KgrankInputError,
    argument: "ranks",
  },
  {
    kind: "estimateFromSampledRanks numNegatives not below numCandidates without replacement",
    call: () => estimateFromSampledRanks({ ranks: [1], numNegatives: 100, numCandidates: 100 }),
    error: KgrankInputError,
    argument: "numNegatives",
  },
  {
    kind: "estimateFromSampledRanks unknown estimator",
    call: () =>
      estimateFromSampledRanks({ ranks: [1], numNegatives: 10, numCandidates: 100, estimators: ["x" as never] }),
    error: KgrankInputError,
    argument: "estimators",
  },
  {
    kind: "estimateFromSampledRanks numCandidates too large for minimum-bias",
    call: () => estimateFromSampledRanks({ ranks: [1], numNegatives: 500, numCandidates: 2_500_604 }),
    error: KgrankInputError,
    argument: "numCandidates",
  },
  {
    kind: "estimateFromSampledRanks numCandidates per task of another length than ranks",
    call: () => estimateFromSampledRanks({ ranks: [1, 2], numNegatives: 3, numCandidates: [10] }),
    error: KgrankInputError,
    argument: "numCandidates",
  },
  {
    kind: "estimateFromSampledRanks a task's numCandidates below numNegatives + 1 without replacement",
    call: () => estimateFromSampledRanks({ ranks: [1, 2], numNegatives: 3, numCandidates: [10, 3] }),
    error: KgrankInputError,
    argument: "numNegatives",
  },
  // ---- the browser build's loadWasm (src/backend/browser-backend.ts; a failure leaves the backend as it was) ---------
  { kind: "loadWasm source null", call: () => loadWasm(null as never), error: KgrankInputError, argument: "source" },
  { kind: "loadWasm source a number", call: () => loadWasm(7 as never), error: KgrankInputError, argument: "source" },
  {
    kind: "loadWasm bytes that are not WebAssembly",
    call: () => loadWasm(new TextEncoder().encode("<!doctype html><p>not found</p>")),
    error: KgrankBackendError,
  },
  {
    kind: "loadWasm a WebAssembly module without the core's exports",
    call: () => loadWasm(Uint8Array.of(0, 0x61, 0x73, 0x6d, 1, 0, 0, 0)),
    error: KgrankBackendError,
  },
  {
    kind: "loadWasm a fetch that failed (HTTP 404)",
    call: () => loadWasm(Promise.resolve(new Response("not found", { status: 404 }))),
    error: KgrankBackendError,
  },
  {
    kind: "loadWasm a fetch that rejected (no response)",
    call: () => loadWasm(Promise.reject(new TypeError("fetch failed"))),
    error: KgrankInputError,
    argument: "source",
  },
  {
    kind: "loadWasm a URL nothing answers at",
    call: () => loadWasm("http://127.0.0.1:9/kgrank.wasm"),
    error: KgrankInputError,
    argument: "source",
  },
  {
    kind: "loadWasm a SharedArrayBuffer",
    call: () => loadWasm(new SharedArrayBuffer(8) as never),
    error: KgrankInputError,
    argument: "source",
  },
  {
    kind: "loadWasm a Uint8Array over a SharedArrayBuffer",
    call: () => loadWasm(new Uint8Array(new SharedArrayBuffer(8))),
    error: KgrankInputError,
    argument: "source",
  },
  // ---- cancellation and progress of async calls ---------------------------------------------------------------------
  {
    kind: "signal not an AbortSignal",
    call: () => computeRanks({ scores: f32(4), numColumns: 2, trueIndices: [0, 0], signal: "stop" as never }),
    error: KgrankInputError,
    argument: "signal",
  },
  {
    kind: "signal an AbortController (not its signal)",
    call: () => ev().add({ triples, side: "tail", scores: f32(6), signal: new AbortController() as never }),
    error: KgrankInputError,
    argument: "signal",
  },
  {
    kind: "onProgress not a function",
    call: () => ev().addModel({ model: emb(), triples, onProgress: 5 as never }),
    error: KgrankInputError,
    argument: "onProgress",
  },
  {
    kind: "onProgress an object",
    call: () => computeSampledRanks({ positiveScores: [1], negativeScores: f32(2), onProgress: {} as never }),
    error: KgrankInputError,
    argument: "onProgress",
  },
  {
    kind: "OGB drop-in: signal not an AbortSignal",
    call: () => ogbEvaluate({ y_pred_pos: [1], y_pred_neg: f32(2), signal: {} as never }),
    error: KgrankInputError,
    argument: "signal",
  },
  {
    kind: "RankCounter.add: onProgress not a function",
    call: () => new RankCounter({ trueScores: [1] }).add({ scores: f32(2), columnStart: 0, onProgress: "x" as never }),
    error: KgrankInputError,
    argument: "onProgress",
  },
  {
    kind: "readNpyAsync: signal not an AbortSignal",
    call: () => readNpyAsync("/nonexistent/kgrank/a.npy", { signal: 1 as never }),
    error: KgrankInputError,
    argument: "signal",
  },
  {
    kind: "loadDatasetAsync: signal not an AbortSignal",
    call: () => loadDatasetAsync("nations", { signal: null as never }),
    error: KgrankInputError,
    argument: "signal",
  },
  {
    kind: "readNpyAsync missing file",
    call: () => readNpyAsync("/nonexistent/kgrank/scores.npy", { argument: "--scores-tail" }),
    error: KgrankInputError,
    argument: "--scores-tail",
  },
  // ---- a queue job's data, as a worker takes it from Redis (untrusted) --------------------------------------------
  {
    kind: "queue job data not an object",
    call: () => parseShardJobData(["evaluate"]),
    error: KgrankInputError,
    argument: "job data",
  },
  {
    kind: "queue job data run holding a path (../)",
    call: () => parseShardJobData({ ...shardJob, run: "../x" }),
    error: KgrankInputError,
    argument: 'job data "run"',
  },
  {
    kind: "queue job data shard not an integer",
    call: () => parseShardJobData({ ...shardJob, shard: "x" }),
    error: KgrankInputError,
    argument: 'job data "shard"',
  },
  {
    kind: "queue job data shard not below shards",
    call: () => parseShardJobData({ ...shardJob, shard: 2 }),
    error: KgrankInputError,
    argument: 'job data "shard"',
  },
  {
    kind: "queue job data shards zero",
    call: () => parseShardJobData({ ...shardJob, shards: 0 }),
    error: KgrankInputError,
    argument: 'job data "shards"',
  },
  {
    kind: "queue job data args not an array",
    call: () => parseShardJobData({ ...shardJob, args: "--dataset nations" }),
    error: KgrankInputError,
    argument: 'job data "args"',
  },
  {
    kind: "queue job data args element not a string",
    call: () => parseShardJobData({ ...shardJob, args: [null] }),
    error: KgrankInputError,
    argument: 'job data "args"',
  },
  {
    kind: "queue job data args an unknown flag",
    call: () => parseShardJobData({ ...shardJob, args: ["--bogus"] }),
    error: KgrankInputError,
    argument: 'job data "args"',
  },
  {
    kind: "queue job data args setting --save-state",
    call: () => parseShardJobData({ ...shardJob, args: ["--save-state", "/tmp/x.state"] }),
    error: KgrankInputError,
    argument: 'job data "args"',
  },
  {
    kind: "queue job data args naming a file outside --allow-read",
    call: () =>
      parseShardJobData(
        { ...shardJob, args: ["--scores-tail", "/etc/hostname"] },
        readRoots([path.dirname(latin1Tsv)]),
      ),
    error: KgrankInputError,
    argument: 'job data "args"',
  },
  {
    kind: "top-k: k zero",
    call: () => predictTopK(emb(), { triples: Int32Array.of(0, 0, 1), k: 0 }),
    error: KgrankInputError,
    argument: "k",
  },
  {
    kind: "top-k: k not an integer",
    call: () => predictTopK(emb(), { triples: Int32Array.of(0, 0, 1), k: 1.5 }),
    error: KgrankInputError,
    argument: "k",
  },
  {
    kind: "top-k: screen not a screen mode",
    call: () => predictTopK(emb(), { triples: Int32Array.of(0, 0, 1), k: 1, screen: "bf16" as never }),
    error: KgrankInputError,
    argument: "screen",
  },
  {
    kind: "async top-k: screen not a screen mode",
    call: () => predictTopKAsync(emb(), { triples: Int32Array.of(0, 0, 1), k: 1, screen: null as never }),
    error: KgrankInputError,
    argument: "screen",
  },
  {
    kind: "screen table: path not a string",
    call: () => loadScreenTable(emb(), 5 as never),
    error: KgrankInputError,
    argument: "path",
  },
  {
    kind: "screen table: model not an EmbeddingModel",
    call: () => saveScreenTable({ interaction: "distmult" } as never, "x.kgq"),
    error: KgrankInputError,
    argument: "model",
  },
  {
    kind: "screen table: an interaction the screen does not apply to",
    call: () => saveScreenTable(emb({ interaction: "transe-l1" }), "x.kgq"),
    error: KgrankInputError,
    argument: "model",
  },
  {
    kind: "screen table: a table read in chunks",
    call: () =>
      loadScreenTable(emb({ entityEmbeddings: openEntityTable(modelFiles.p("entity.npy")) }), modelFiles.p("x.kgq")),
    error: KgrankInputError,
    argument: "model",
  },
  {
    kind: "predict: --sides naming a side twice",
    call: () => predictSidesArg("head,head"),
    error: KgrankInputError,
    argument: "--sides",
  },
  {
    kind: "top-k: entity range outside the table",
    call: () => predictTopK(emb(), { triples: Int32Array.of(0, 0, 1), k: 1, entityRange: [1, 4] }),
    error: KgrankInputError,
    argument: "entityRange",
  },
  {
    kind: "top-k: memoryBudget too small for the lists beside one table row",
    call: () =>
      predictTopKAsync(emb({ entityEmbeddings: openEntityTable(modelFiles.p("entity.npy")) }), {
        triples: Int32Array.of(0, 0, 1),
        k: 1,
        memoryBudget: 16,
      }),
    error: KgrankInputError,
    argument: "memoryBudget",
  },
  {
    kind: "top-k: onPlan not a function",
    call: () =>
      predictTopKAsync(emb({ entityEmbeddings: openEntityTable(modelFiles.p("entity.npy")) }), {
        triples: Int32Array.of(0, 0, 1),
        k: 1,
        onPlan: 1 as unknown as () => void,
      }),
    error: KgrankInputError,
    argument: "onPlan",
  },
  {
    kind: "top-k: table read in chunks listed by the sync predictTopK",
    call: () =>
      predictTopK(emb({ entityEmbeddings: openEntityTable(modelFiles.p("entity.npy")) }), {
        triples: Int32Array.of(0, 0, 1),
        k: 1,
      }),
    error: KgrankInputError,
    argument: "model",
  },
  {
    kind: "top-k: merged ranges that overlap",
    call: () => {
      const part = (r: [number, number]) =>
        predictTopK(emb(), { triples: Int32Array.of(0, 0, 1), k: 1, entityRange: r });
      return mergeTopK([part([0, 2]), part([1, 3])]);
    },
    error: KgrankInputError,
    argument: "parts",
  },
  {
    kind: "WikiKG90Mv2 t_pred_top10 not (n, 10)",
    call: () => evaluateWikiKG90Mv2({ tPredTop10: new Int32Array(9), t: [1] }),
    error: KgrankInputError,
    argument: "tPredTop10",
  },
  {
    kind: "relation scores not rows x numRelations",
    call: () => new RelationRanker({ numEntities: 3, numRelations: 2 }).rank({ triples, scores: f32(6) }),
    error: KgrankInputError,
    argument: "scores",
  },
  {
    kind: "relation triple not in the relation filter",
    call: () =>
      new RelationRanker({ numEntities: 3, numRelations: 2, filterTriples: Int32Array.of(0, 0, 1) }).rank({
        triples: Int32Array.of(0, 1, 1),
        scores: f32(2),
      }),
    error: KgrankInputError,
    argument: "triples",
  },
  {
    kind: "relation scores from embeddings: tail id out of range",
    call: () => emb().scoreRelations(Int32Array.of(0, 0, 3)),
    error: KgrankInputError,
    argument: "triples",
  },
  {
    kind: "relation scores from embeddings: triples not b x 3",
    call: () => emb().scoreRelations(Int32Array.of(0, 0)),
    error: KgrankInputError,
    argument: "triples",
  },
  {
    kind: "relation scores from embeddings of a table read in chunks",
    call: () =>
      emb({ entityEmbeddings: openEntityTable(modelFiles.p("entity.npy")) }).scoreRelations(Int32Array.of(0, 0, 1)),
    error: KgrankInputError,
    argument: "model",
  },
  {
    kind: "relation side without numRelations",
    call: () => new RankEvaluator({ numEntities: 3, sides: ["relation"] }),
    error: KgrankInputError,
    argument: "numRelations",
  },
  {
    kind: "relation side with restrictEntities",
    call: () =>
      new RankEvaluator({ numEntities: 3, filterTriples: triples, sides: ["relation"], restrictEntities: [0] }),
    error: KgrankInputError,
    argument: "restrictEntities",
  },
  {
    kind: "relation scores to an evaluator without the relation side",
    call: () => ev().addRelationScores({ triples: Int32Array.of(0, 0, 1), scores: f32(1) }),
    error: KgrankInputError,
    argument: "sides",
  },
  {
    kind: "relation side in an entity score batch",
    call: () =>
      new RankEvaluator({ numEntities: 3, filterTriples: triples, sides: ["tail", "relation"] }).addSync({
        triples: Int32Array.of(0, 0, 1),
        side: "relation" as never,
        scores: f32(3),
      }),
    error: KgrankInputError,
    argument: "side",
  },
  {
    kind: "relation side from an embedding model with entity negatives",
    call: () =>
      new RankEvaluator({ numEntities: 3, filterTriples: triples, sides: ["tail", "relation"] }).addModelSync({
        model: emb(),
        triples: Int32Array.of(0, 0, 1),
        negatives: Int32Array.of(0, 2),
      }),
    error: KgrankInputError,
    argument: "negatives",
  },
  {
    kind: "merge of states of other sides (relation side or not)",
    call: () => {
      const relation = new RankEvaluator({
        numEntities: 3,
        filterTriples: triples,
        sides: ["head", "tail", "relation"],
      });
      relation.addRanks({ side: "tail", realistic: [1], numCandidates: [3] });
      const entity = ev();
      entity.addRanks({ side: "tail", realistic: [1], numCandidates: [3] });
      return RankEvaluator.merge([entity.serialize(), relation.serialize()]);
    },
    error: KgrankInputError,
    argument: "states[1]",
  },
  // ---- PyTorch-BigGraph checkpoints --------------------------------------------------------------------------
  {
    kind: "PyTorch-BigGraph checkpoint folder without config.json and checkpoint_version.txt",
    call: () => evaluatePbgCheckpoint({ checkpoint: pbgFiles.noConfig, dataset: pbgFiles.edges }),
    error: KgrankInputError,
    argument: "checkpoint",
  },
  {
    kind: "PyTorch-BigGraph checkpoint missing a partition's embeddings",
    call: () => evaluatePbgCheckpoint({ checkpoint: pbgFiles.missingPartition, dataset: pbgFiles.edges }),
    error: KgrankInputError,
    argument: "checkpoint",
  },
  {
    kind: "PyTorch-BigGraph checkpoint_version.txt naming a version the files are not of",
    call: () => evaluatePbgCheckpoint({ checkpoint: pbgFiles.version, dataset: pbgFiles.edges }),
    error: KgrankInputError,
    argument: "checkpoint",
  },
  {
    kind: "PyTorch-BigGraph config with an unknown operator",
    call: () => evaluatePbgCheckpoint({ checkpoint: pbgFiles.operator, dataset: pbgFiles.edges }),
    error: KgrankInputError,
    argument: "checkpoint",
  },
  {
    kind: "PyTorch-BigGraph embeddings file that is HDF5 but not PBG's",
    call: () => evaluatePbgCheckpoint({ checkpoint: pbgFiles.notPbg, dataset: pbgFiles.edges }),
    error: KgrankInputError,
    argument: "checkpoint",
  },
  {
    kind: "PyTorch-BigGraph model file that is not HDF5",
    call: () => evaluatePbgCheckpoint({ checkpoint: pbgFiles.notHdf5, dataset: pbgFiles.edges }),
    error: KgrankInputError,
    argument: "checkpoint",
  },
  {
    kind: "PyTorch-BigGraph dataset folder holding no edges",
    call: () => evaluatePbgCheckpoint({ checkpoint: pbgFiles.ok, dataset: pbgFiles.noEdges }),
    error: KgrankInputError,
    argument: "dataset",
  },
  {
    kind: "PyTorch-BigGraph --entity-shard I/M with I not below M",
    call: () =>
      evaluateRun(
        parseEvaluateArgs(["--model-dir", pbgFiles.ok, "--dataset-dir", pbgFiles.edges, "--entity-shard", "2/2"]),
        SILENT,
      ),
    error: KgrankInputError,
    argument: "--entity-shard",
  },
  {
    kind: "PyTorch-BigGraph --entity-shard I/M with M above the checkpoint's entities",
    call: () =>
      evaluateRun(
        parseEvaluateArgs([
          "--model-dir",
          pbgFiles.ok,
          "--dataset-dir",
          pbgFiles.edges,
          "--entity-shard",
          "0/22",
          "--save-state",
          pbgFiles.state,
        ]),
        SILENT,
      ),
    error: KgrankInputError,
    argument: "--entity-shard",
  },
  {
    kind: "PyTorch-BigGraph protocol not exact or pbg-sampled",
    call: () => evaluatePbgCheckpoint({ checkpoint: pbgFiles.ok, dataset: pbgFiles.edges, protocol: "ogb" as never }),
    error: KgrankInputError,
    argument: "protocol",
  },
  {
    kind: "PyTorch-BigGraph pbg-sampled protocol with a filter",
    call: () =>
      evaluatePbgCheckpoint({ checkpoint: pbgFiles.ok, dataset: pbgFiles.edges, protocol: "pbg-sampled", filter: [] }),
    error: KgrankInputError,
    argument: "filter",
  },
  {
    kind: "PyTorch-BigGraph pbg-sampled seed not a 32-bit unsigned integer",
    call: () =>
      evaluatePbgCheckpoint({ checkpoint: pbgFiles.ok, dataset: pbgFiles.edges, protocol: "pbg-sampled", seed: -1 }),
    error: KgrankInputError,
    argument: "seed",
  },
  {
    kind: "PyTorch-BigGraph config with a batch_size below 1",
    call: () => evaluatePbgCheckpoint({ checkpoint: pbgFiles.batchSize, dataset: pbgFiles.edges }),
    error: KgrankInputError,
    argument: "checkpoint",
  },
  {
    kind: "PyTorch-BigGraph pbg-sampled protocol of a config with no negatives",
    call: () =>
      evaluatePbgCheckpoint({ checkpoint: pbgFiles.noNegatives, dataset: pbgFiles.edges, protocol: "pbg-sampled" }),
    error: KgrankInputError,
    argument: "checkpoint",
  },
  {
    kind: "PyTorch-BigGraph pbg-sampled protocol of a relation with all_negs",
    call: () =>
      evaluatePbgCheckpoint({ checkpoint: pbgFiles.allNegs, dataset: pbgFiles.edges, protocol: "pbg-sampled" }),
    error: KgrankInputError,
    argument: "checkpoint",
  },
  {
    kind: "--pbg-sampled with a model that is not a PyTorch-BigGraph checkpoint",
    call: () => evaluateRun(parseEvaluateArgs(["--dataset", "nations", "--pbg-sampled"]), SILENT),
    error: KgrankInputError,
    argument: "--pbg-sampled",
  },
  {
    kind: "PyTorch-BigGraph split not a split name",
    call: () => evaluatePbgCheckpoint({ checkpoint: pbgFiles.ok, dataset: pbgFiles.edges, split: "dev" as never }),
    error: KgrankInputError,
    argument: "split",
  },
];

/**
 * Every public function that takes an options object, called with one misspelt key: each must refuse it with a
 * KgrankInputError that suggests the key meant (an ignored option silently changes results).
 */
const withResults = () => {
  const e = ev();
  e.addRanks({ side: "tail", realistic: [1, 2], numCandidates: [3, 3] });
  e.addRanks({ side: "head", realistic: [1, 1], numCandidates: [3, 3] });
  return e.finalize();
};
const TYPOS: [string, () => unknown, string][] = [
  ["RankEvaluator", () => new RankEvaluator({ numEntities: 3, filterTriple: triples } as never), "filterTriples"],
  [
    "RankEvaluator.finalize",
    () => {
      const e = ev();
      e.addRanks({ side: "tail", realistic: [1], numCandidates: [3] });
      e.finalize({ bootstraps: { samples: 10 } } as never);
    },
    "bootstrap",
  ],
  [
    "finalize's bootstrap",
    () => {
      const e = ev();
      e.addRanks({ side: "tail", realistic: [1], numCandidates: [3] });
      e.finalize({ bootstrap: { sample: 10 } as never });
    },
    "samples",
  ],
  ["RankEvaluator.addSync", () => ev().addSync({ triples, side: "tail", score: f32(6) } as never), "scores"],
  [
    "RankEvaluator.addRanks",
    () => ev().addRanks({ side: "tail", realistic: [1], numCandidates: [3], weight: [1] } as never),
    "weights",
  ],
  [
    "RankEvaluator.addSampledSync",
    () => ev().addSampledSync({ side: "tail", positiveScores: [1], negativeScore: f32(2) } as never),
    "negativeScores",
  ],
  ["RankEvaluator.chunked", () => ev().chunked({ triples, side: "tail", trueScore: [1, 1] } as never), "trueScores"],
  [
    "computeRanksSync",
    () => computeRanksSync({ scores: f32(4), numColumns: 2, trueIndex: [0, 1] } as never),
    "trueIndices",
  ],
  [
    "computeSampledRanksSync",
    () => computeSampledRanksSync({ positiveScore: [1], negativeScores: f32(2) } as never),
    "positiveScores",
  ],
  [
    "countScoresSync",
    () => countScoresSync({ scores: f32(4), numColumns: 2, threshold: [1, 1] } as never),
    "thresholds",
  ],
  ["RankCounter", () => new RankCounter({ trueScores: [1], numColumn: 2 } as never), "numColumns"],
  [
    "RankCounter.add",
    () => new RankCounter({ trueScores: [1], numColumns: 2 }).addSync({ scores: f32(2), columnstart: 0 } as never),
    "columnStart",
  ],
  ["metric.estimate", () => getMetric("mrr").estimate({ numCandidates: [3, 3], numSample: 10 } as never), "numSamples"],
  ["loadDataset", () => loadDataset("nations", { datasetdir: "x" } as never), "datasetDir"],
  ["RankResults.byDegree", () => withResults().byDegree(triples, { bound: [1] } as never), "bounds"],
  ["RankResults.toMarkdown", () => withResults().toMarkdown({ digit: 3 } as never), "digits"],
  ["encodeNpy", () => encodeNpy(Float32Array.of(1), [1], { dtyp: "f4" } as never), "dtype"],
  // The async options (signal, onProgress) are known keys of every async call, and only of those.
  [
    "RankEvaluator.add",
    () => ev().add({ triples, side: "tail", scores: f32(6), onProgres: () => {} } as never),
    "onProgress",
  ],
  [
    "RankEvaluator.addModel",
    () => ev().addModel({ model: emb(), triples, signl: AbortSignal.abort() } as never),
    "signal",
  ],
  [
    "RankEvaluator.addSampled",
    () => ev().addSampled({ side: "tail", positiveScores: [1], negativeScores: f32(2), onprogress: () => {} } as never),
    "onProgress",
  ],
  [
    "computeRanks",
    () => computeRanks({ scores: f32(4), numColumns: 2, trueIndices: [0, 1], signl: AbortSignal.abort() } as never),
    "signal",
  ],
  [
    "countScores",
    () => countScoresAsync({ scores: f32(4), numColumns: 2, thresholds: [1, 1], onProgres: () => {} } as never),
    "onProgress",
  ],
  [
    "ogbEvaluate",
    () => ogbEvaluate({ y_pred_pos: [1], y_pred_neg: f32(2), signl: AbortSignal.abort() } as never),
    "signal",
  ],
  [
    "RankCounter.add (async)",
    () =>
      new RankCounter({ trueScores: [1] }).add({
        scores: f32(2),
        columnStart: 0,
        singal: AbortSignal.abort(),
      } as never),
    "signal",
  ],
  [
    "ChunkedBatch.add",
    () =>
      ev()
        .chunked({ triples, side: "tail", trueScores: [0, 0] })
        .add({ scores: f32(6), entityStart: 0, signl: AbortSignal.abort() } as never),
    "signal",
  ],
  ["readNpyAsync", () => readNpyAsync("/nonexistent/kgrank/a.npy", { signl: AbortSignal.abort() } as never), "signal"],
  ["loadDatasetAsync", () => loadDatasetAsync("nations", { datasetdir: "x" } as never), "datasetDir"],
  [
    "predictTopK",
    () => predictTopK(emb(), { triples: Int32Array.of(0, 0, 1), k: 1, entityrange: [0, 2] } as never),
    "entityRange",
  ],
  [
    "predictTopKAsync",
    () => predictTopKAsync(emb(), { triples: Int32Array.of(0, 0, 1), k: 1, signl: AbortSignal.abort() } as never),
    "signal",
  ],
  ["evaluateWikiKG90Mv2", () => evaluateWikiKG90Mv2({ tPredTop10: new Int32Array(10), truth: [1] } as never), "t"],
  [
    "RankEvaluator.finalizeAsync",
    () => {
      const e = ev();
      e.addRanks({ side: "tail", realistic: [1], numCandidates: [3] });
      return e.finalizeAsync({ signl: AbortSignal.abort() } as never);
    },
    "signal",
  ],
  [
    "EmbeddingModel.scoreRelations",
    () => emb().scoreRelations(Int32Array.of(0, 0, 1), { thread: 1 } as never),
    "threads",
  ],
  [
    "RankEvaluator.addRelationScores",
    () =>
      new RankEvaluator({ numEntities: 3, filterTriples: triples, sides: ["relation"] }).addRelationScores({
        triples: Int32Array.of(0, 0, 1),
        scoers: f32(1),
      } as never),
    "scores",
  ],
];

describe(`unknown option keys on ${label}`, () => {
  for (const [where, call, meant] of TYPOS) {
    it(`${where}: a misspelt key is refused and "${meant}" suggested`, async () => {
      let err: unknown = null;
      try {
        await call();
      } catch (e) {
        err = e;
      }
      expect(err, "the misspelt key was ignored").toBeInstanceOf(KgrankInputError);
      expect((err as Error).message).toContain(`did you mean "${meant}"?`);
    });
  }
});

describe(`bad-input matrix on ${label}`, () => {
  it(`has at least 40 kinds of bad input (${CASES.length})`, () => {
    expect(CASES.length).toBeGreaterThanOrEqual(40);
    expect(new Set(CASES.map((c) => c.kind)).size).toBe(CASES.length);
  });
  for (const c of CASES) {
    it(`${c.kind} -> ${c.error.name}${c.argument ? ` naming ${c.argument}` : ""}`, async () => {
      const err = expectError(await caughtFrom(c.call), c.error, c.argument);
      expect(err.message.length).toBeGreaterThan(10);
    });
  }

  it("SharedArrayBuffer-backed inputs work and give the same ranks", async () => {
    const sab = new Float32Array(new SharedArrayBuffer(4 * 6));
    sab.set([0.5, 0.2, 0.9, 0.9, 0.1, 0.9]);
    const plain = Float32Array.from(sab);
    const want = computeRanksSync({ scores: plain, numColumns: 3, trueIndices: [0, 2] });
    expect(computeRanksSync({ scores: sab, numColumns: 3, trueIndices: [0, 2] })).toEqual(want);
    expect(await computeRanks({ scores: sab, numColumns: 3, trueIndices: [0, 2] })).toEqual(want);
  });

  it("TSV with CRLF line ends, a BOM or empty lines is accepted, not an error", () => {
    expect(splitTsvTriples("\uFEFFa\tr\tb\r\n\r\nc\tr\td\r\n\n")).toEqual([
      ["a", "r", "b"],
      ["c", "r", "d"],
    ]);
  });

  it("TSV errors name the line (1-based, blank lines counted)", () => {
    expect(() => splitTsvTriples("a\tr\tb\n\na\tr\n")).toThrow(/^file: line 3 has 2 tab-separated fields, expected 3/);
  });

  it("loadWasm's errors say what went wrong with the source and what to do", async () => {
    const refused = await loadWasm("http://127.0.0.1:9/kgrank.wasm").catch((e: unknown) => e);
    expect((refused as Error).message).toMatch(
      /^source: the fetch of http:\/\/127\.0\.0\.1:9\/kgrank\.wasm failed before any response \(.+\): check the URL, that a server serves it/,
    );
    const shared = await loadWasm(new Uint8Array(new SharedArrayBuffer(8))).catch((e: unknown) => e);
    expect((shared as Error).message).toBe(
      "source: is Uint8Array(8) over a SharedArrayBuffer, which WebAssembly does not compile from: copy the bytes " +
        "into an unshared buffer first (new Uint8Array(shared).slice())",
    );
    const floats = await loadWasm(new Float32Array(2) as never).catch((e: unknown) => e);
    expect((floats as Error).message).toMatch(/^source: is Float32Array\(2\): give kgrank\.wasm's URL/);
  });

  it("docs/reliability.md lists every kind", () => {
    const page = readFileSync(path.resolve(__dirname, "..", "docs", "reliability.md"), "utf8");
    for (const c of CASES) expect(page, c.kind).toContain(c.kind);
  });
});
