// The WebAssembly core against native and the TypeScript fallback, one thread each, ratios measured in one run with
// paired alternating timings (pairedRatio: the median of per-pair time ratios, robust to a loaded machine): dense
// counting of a float32 score matrix (countScores) and fused DistMult ranking from float32 embeddings
// (rankEmbeddings, every entity a candidate, unfiltered). Native runs at its AVX2 level (the brief's reference;
// the best level is printed too when it differs).
//   npm run build:wasm && node bench/wasm.mjs [--quick]
import { createRequire } from "node:module";
import { join } from "node:path";

import { fillRandom, pairedRatio, printTable, root, writeResult } from "./lib.mjs";

const require = createRequire(import.meta.url);
const backend = require(join(root, "dist", "cjs", "backend", "backend.js"));
const { tsKernels } = require(join(root, "dist", "cjs", "fallback", "index.js"));
const { EmbeddingModel } = require(join(root, "dist", "cjs", "index.js"));

const quick = process.argv.includes("--quick");
const reps = quick ? 7 : 15;
const addon = backend.nativeAddon();
const wasm = backend.wasmCoreKernels();
if (!addon || !wasm) {
  const why = "needs the native addon (npm run build:native) and wasm/kgrank.wasm (npm run build:wasm)";
  console.log(`wasm bench: skipped: ${why}`);
  writeResult("wasm", { skipped: why });
  process.exit(0);
}
const levels = addon.info().simdLevels.map((l) => l.name);
const reference = levels.includes("avx2") ? "avx2" : levels.at(-1);
const native = backend.nativeKernels(addon, reference, 1);

// Dense counting: 32 MiB of float32 scores, 2048 rows of 4096 candidates.
const rows = 2048;
const cols = 4096;
const scores = fillRandom(new Float32Array(rows * cols), 7);
const thresholds = new Float32Array(rows);
for (let r = 0; r < rows; r++) thresholds[r] = scores[r * cols + ((r * 31) % cols)];
const out = () => ({ greater: new Float64Array(rows), equal: new Float64Array(rows), nan: new Float64Array(rows) });
const o1 = out();
const o2 = out();
const count = (k, o) => () => k.countScores(scores, cols, thresholds, o, 1);

// DistMult: 20000 entities x 200 float32, 64 tail queries.
const n = quick ? 10_000 : 20_000;
const d = 200;
const q = 64;
const model = new EmbeddingModel({
  interaction: "distmult",
  entityEmbeddings: { data: fillRandom(new Float32Array(n * d), 1), shape: [n, d] },
  relationEmbeddings: { data: fillRandom(new Float32Array(8 * d), 2), shape: [8, d] },
});
const job = model.job(
  "tail",
  Int32Array.from({ length: q }, (_, i) => (i * 7919) % n),
  Int32Array.from({ length: q }, (_, i) => i % 8),
  Int32Array.from({ length: q }, (_, i) => (i * 104729) % n),
);
const e1 = new Float64Array(5 * q + 2);
const e2 = new Float64Array(5 * q + 2);
const rank = (k, o) => () => k.rankEmbeddings(job, o, 1);

// The same numbers, or the comparison means nothing.
count(native, o1)();
count(wasm, o2)();
if (JSON.stringify(o1) !== JSON.stringify(o2)) throw new Error("wasm and native counts differ");
rank(native, e1)();
rank(wasm, e2)();
if (e1.join() !== e2.join()) throw new Error("wasm and native DistMult ranks differ");

const fmt = (r) => `${r.median.toFixed(3)} (IQR ${r.q1.toFixed(3)}-${r.q3.toFixed(3)})`;
const result = { reference, threads: 1, count: { rows, cols }, distmult: { n, d, q } };
// time(native) / time(wasm): wasm's speed as a fraction of native's; time(ts) / time(wasm): wasm's speedup over ts.
result.countWasmOfNative = pairedRatio(count(native, o1), count(wasm, o2), 3 * reps); // a few ms each: more pairs
result.countWasmOverTs = pairedRatio(count(tsKernels, o1), count(wasm, o2), quick ? 3 : 5);
result.distmultWasmOfNative = pairedRatio(rank(native, e1), rank(wasm, e2), reps);
result.distmultWasmOverTs = pairedRatio(rank(tsKernels, e1), rank(wasm, e2), 3);

printTable(
  ["kernel (1 thread)", `wasm / native ${reference} (speed)`, "wasm / ts (speed)"],
  [
    [`dense count ${rows} x ${cols} f32`, fmt(result.countWasmOfNative), fmt(result.countWasmOverTs)],
    [`DistMult ${q} q x ${n} x ${d} f32`, fmt(result.distmultWasmOfNative), fmt(result.distmultWasmOverTs)],
  ],
);
console.log(`written ${writeResult("wasm", result)}`);
