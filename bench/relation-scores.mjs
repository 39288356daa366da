// Relation scores from embeddings on the FB15k-237 test set: every relation's score of each test (h, t) pair (20,466 x
// 237) from a seeded random model, by the native kernel and by the TypeScript fallback (the scoreRelations kernel of
// each, same input), the two outputs checked equal bit for bit, reported as medians of alternating runs and their
// ratio. Alone: npm run build:ts && node bench/relation-scores.mjs [--datasets DIR] [--interaction NAME] [--dim D]
// [--reps R] [--threads T]. Writes bench/results/relation-scores.json.
import { createRequire } from "node:module";
import { join, resolve } from "node:path";

import { median, root, seededFloats as rnd, writeResult } from "./lib.mjs";

const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const datasetDir = resolve(flag("--datasets", process.env.KGRANK_DATASETS ?? join(root, "..", "shared", "datasets")));
const interaction = flag("--interaction", "distmult");
const dim = Number(flag("--dim", "100"));
const reps = Number(flag("--reps", "3"));

const require = createRequire(import.meta.url);
const { kernels } = require("../dist/cjs/backend/backend.js");
const { tsKernels } = require("../dist/cjs/fallback/index.js");
const { EmbeddingModel, loadDataset, backendInfo } = require("../dist/cjs/index.js");

const native = kernels();
if (native.backend !== "native")
  throw new Error("relation-scores: the native addon is not loaded (npm run build:native)");
const threads = Number(flag("--threads", String(native.threads)));
const ds = loadDataset("fb15k-237", { datasetDir });
const test = ds.splits.test;
const rows = test.length / 3;
const E = ds.numEntities;
const R = ds.numRelations;
const complex = interaction === "complex" || interaction.startsWith("rotate");
const width = complex ? 2 * dim : dim;
const relWidth = interaction === "pairre" ? 2 * width : width;
const model = new EmbeddingModel({
  interaction,
  entityEmbeddings: { data: rnd(E * width, 1), shape: [E, width] },
  relationEmbeddings: { data: rnd(R * relWidth, 2), shape: [R, relWidth] },
  ...(complex ? { complexLayout: "halves" } : {}),
});
const heads = Int32Array.from({ length: rows }, (_, i) => test[3 * i]);
const tails = Int32Array.from({ length: rows }, (_, i) => test[3 * i + 2]);
const input = model.job("tail", heads, new Int32Array(rows), tails);

const seconds = (kern, out) => {
  const t0 = process.hrtime.bigint();
  kern.scoreRelations(input, out, threads);
  return Number(process.hrtime.bigint() - t0) / 1e9;
};
const a = new Float32Array(rows * R);
const b = new Float32Array(rows * R);
const nativeTimes = [];
const tsTimes = [];
seconds(native, a); // warm-up
for (let r = 0; r < reps; r++) {
  nativeTimes.push(seconds(native, a));
  tsTimes.push(seconds(tsKernels, b));
}
for (let j = 0; j < a.length; j++) {
  if (!Object.is(a[j], b[j]))
    throw new Error(`relation-scores: native and fallback differ at ${j}: ${a[j]} vs ${b[j]}`);
}
const nat = median(nativeTimes);
const ts = median(tsTimes);
const madds = rows * R * width;
const result = {
  dataset: "fb15k-237",
  interaction,
  width,
  rows,
  relations: R,
  threads,
  simd: backendInfo().simd,
  nativeSeconds: nat,
  fallbackSeconds: ts,
  nativeRuns: nativeTimes,
  fallbackRuns: tsTimes,
  ratio: ts / nat,
  nativeScoresPerSecond: (rows * R) / nat,
};
console.log(
  `relation scores, FB15k-237 test (${rows} x ${R}), ${interaction}, width ${width}: native ${nat.toFixed(3)} s ` +
    `(${threads} threads, ${(madds / nat / 1e9).toFixed(2)} G element-ops/s), fallback ${ts.toFixed(3)} s, ` +
    `fallback / native ${(ts / nat).toFixed(1)}x; outputs equal bit for bit`,
);
writeResult("relation-scores", result);
