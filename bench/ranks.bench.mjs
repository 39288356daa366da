// Ranks from scores, the hot path of evaluation:
//  1. dense float32 (>= 512 MiB): native vs the bandwidth probe, the TS fallback and NumPy (PyKEEN's / OGB's way)
//  2. FB15k-237-width rows (14,541 columns) that sit in cache: GB/s vs the DRAM probe rate
//  3. sampled, OGB WikiKG2 test shape: n = 598,543 positives x K = 500 negatives
//  4. event-loop delay (monitorEventLoopDelay, p99) while an async ~1 GiB job runs
//   node bench/ranks.bench.mjs [--quick]
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import * as os from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";

import {
  fastestReadVariant,
  fillRandom,
  median,
  numpyVersion,
  pairedRatio,
  printTable,
  root,
  runCases,
  writeNpyFile,
  writeResult,
} from "./lib.mjs";

const require = createRequire(import.meta.url);
const kg = require(join(root, "dist", "cjs", "index.js"));
const backend = require(join(root, "dist", "cjs", "backend", "backend.js"));
const quick = process.argv.includes("--quick");
const addon = backend.nativeAddon();
if (!addon) {
  console.error("ranks bench: the native addon is not loaded; build it with `npm run build:native`.");
  process.exit(1);
}
const info = addon.info();
// The probe's variant: whichever reads a 256 MiB buffer fastest here (lib.mjs probeRead).
const best = fastestReadVariant(addon, [fillRandom(new Float32Array(2 ** 26), 3)]);
const hw = info.hardwareThreads;
const tmp = mkdtempSync(join(os.tmpdir(), "kgrank-bench-"));
const numpy = numpyVersion();
const report = {};

function tsRanks(scores, cols, idx) {
  // The fallback through the same public path: force the ts kernels for one call.
  const { tsKernels } = require(join(root, "dist", "cjs", "fallback", "index.js"));
  const rows = idx.length;
  const t = new Float32Array(rows);
  for (let r = 0; r < rows; r++) t[r] = scores[r * cols + idx[r]];
  const out = { greater: new Float64Array(rows), equal: new Float64Array(rows), nan: new Float64Array(rows) };
  tsKernels.countScores(scores, cols, t, out);
  return out;
}

function runNumpy(mode, arrays, repeats) {
  if (!numpy) return null;
  const files = arrays.map(([name, arr, shape]) => {
    const f = join(tmp, `${name}.npy`);
    writeNpyFile(f, arr, shape);
    return f;
  });
  const r = spawnSync("python3", [join(root, "bench", "numpy_ranks.py"), mode, ...files, String(repeats)], {
    encoding: "utf8",
  });
  for (const f of files) rmSync(f, { force: true });
  if (r.status !== 0) {
    console.error(`numpy peer failed: ${r.stderr}`);
    return null;
  }
  return median(JSON.parse(r.stdout).times);
}

// ---- 1. dense ---------------------------------------------------------------------------------------------------
{
  const cols = 16384;
  const rows = Math.floor(((quick ? 256 : 512) * 2 ** 20) / 4 / cols);
  const bytes = rows * cols * 4;
  const scores = fillRandom(new Float32Array(rows * cols), 99);
  const idx = Int32Array.from({ length: rows }, (_, r) => (r * 7919) % cols);
  console.log(`dense: ${rows} x ${cols} float32 (${(bytes / 2 ** 20).toFixed(0)} MiB)`);
  const res = await runCases(
    [
      ["probe", () => addon.bandwidthRead(scores, best.level, hw, best.streaming)],
      ["native", () => kg.computeRanksSync({ scores, numColumns: cols, trueIndices: idx })],
      ["ts", () => tsRanks(scores, cols, idx), { minSamples: 3, maxTime: 1 }],
    ],
    { minSamples: quick ? 5 : 9, maxTime: quick ? 1 : 3 },
  );
  const paired = pairedRatio(
    () => addon.bandwidthRead(scores, best.level, hw, best.streaming),
    () => kg.computeRanksSync({ scores, numColumns: cols, trueIndices: idx }),
    quick ? 9 : 21,
  );
  const np = runNumpy(
    "dense",
    [
      ["scores", scores, [rows, cols]],
      ["idx", idx, [rows]],
    ],
    quick ? 3 : 5,
  );
  report.dense = {
    rows,
    cols,
    bytes,
    probeMs: res.probe.median * 1e3,
    nativeMs: res.native.median * 1e3,
    tsMs: res.ts.median * 1e3,
    numpyMs: np === null ? null : np * 1e3,
    fractionOfProbe: paired.median,
    fractionOfProbeQuartiles: [paired.q1, paired.q3],
    speedupVsTs: res.ts.median / res.native.median,
    speedupVsNumpy: np === null ? null : np / res.native.median,
  };
}

// ---- 2. FB15k-237-width rows in cache ---------------------------------------------------------------------------
{
  const cols = 14541;
  const rows = 32; // 1.8 MiB: stays in the last-level cache between repetitions
  const scores = fillRandom(new Float32Array(rows * cols), 5);
  const idx = Int32Array.from({ length: rows }, (_, r) => (r * 97) % cols);
  const bytes = rows * cols * 4;
  const big = fillRandom(new Float32Array((quick ? 128 : 256) * 2 ** 18), 6); // DRAM reference: 128/256 MiB
  const res = await runCases(
    [
      ["native", () => kg.computeRanksSync({ scores, numColumns: cols, trueIndices: idx })],
      ["ts", () => tsRanks(scores, cols, idx)],
      ["dram probe", () => addon.bandwidthRead(big, best.level, hw, best.streaming)],
    ],
    { minSamples: 20, maxTime: quick ? 0.5 : 1.5 },
  );
  const dramGBs = big.byteLength / res["dram probe"].median / 1e9;
  const nativeGBs = bytes / res.native.median / 1e9;
  report.cached = {
    rows,
    cols,
    bytes,
    nativeUs: res.native.median * 1e6,
    tsUs: res.ts.median * 1e6,
    nativeGBs,
    dramGBs,
    ratioToDram: nativeGBs / dramGBs,
    speedupVsTs: res.ts.median / res.native.median,
  };
}

// ---- 3. sampled, WikiKG2 test shape -----------------------------------------------------------------------------
{
  const n = quick ? 200_000 : 598_543;
  const k = 500;
  const pos = fillRandom(new Float32Array(n), 7);
  const neg = fillRandom(new Float32Array(n * k), 8);
  console.log(`sampled: ${n} positives x ${k} negatives (${((n * k * 4) / 2 ** 30).toFixed(2)} GiB)`);
  const res = await runCases(
    [
      ["probe", () => addon.bandwidthRead(neg, best.level, hw, best.streaming)],
      ["native", () => kg.computeSampledRanksSync({ positiveScores: pos, negativeScores: neg })],
      [
        "ts",
        () => {
          const { tsKernels } = require(join(root, "dist", "cjs", "fallback", "index.js"));
          const out = { greater: new Float64Array(n), equal: new Float64Array(n), nan: new Float64Array(n) };
          tsKernels.countScores(neg, k, pos, out);
        },
        { minSamples: 2, maxTime: 1 },
      ],
    ],
    { minSamples: quick ? 5 : 9, maxTime: quick ? 1 : 3 },
  );
  const np = runNumpy(
    "sampled",
    [
      ["pos", pos, [n]],
      ["neg", neg, [n, k]],
    ],
    3,
  );
  report.sampled = {
    n,
    k,
    probeMs: res.probe.median * 1e3,
    nativeMs: res.native.median * 1e3,
    tsMs: res.ts.median * 1e3,
    numpyMs: np === null ? null : np * 1e3,
    speedupVsTs: res.ts.median / res.native.median,
    speedupVsNumpy: np === null ? null : np / res.native.median,
  };
}

// ---- 4. event-loop delay during an async ~1 GiB job -------------------------------------------------------------
{
  const cols = 16384;
  const rows = Math.floor(((quick ? 512 : 1024) * 2 ** 20) / 4 / cols);
  const scores = fillRandom(new Float32Array(rows * cols), 10);
  const idx = Int32Array.from({ length: rows }, (_, r) => r % cols);
  const h = monitorEventLoopDelay({ resolution: 1 });
  const jobs = quick ? 10 : 30;
  h.enable();
  const t0 = performance.now();
  for (let i = 0; i < jobs; i++) await kg.computeRanks({ scores, numColumns: cols, trueIndices: idx });
  const elapsed = performance.now() - t0;
  h.disable();
  report.eventLoop = {
    bytes: scores.byteLength,
    jobs,
    elapsedMs: elapsed,
    p50Ms: h.percentile(50) / 1e6,
    p99Ms: h.percentile(99) / 1e6,
    maxMs: h.max / 1e6,
  };
}

rmSync(tmp, { recursive: true, force: true });
const d = report.dense,
  c = report.cached,
  s = report.sampled,
  e = report.eventLoop;
printTable(
  ["scenario", "native", "vs probe / DRAM", "x TS", "x NumPy", "target"],
  [
    [
      "dense 512 MiB f32",
      `${d.nativeMs.toFixed(1)} ms`,
      `${(100 * d.fractionOfProbe).toFixed(1)}% (q ${(100 * d.fractionOfProbeQuartiles[0]).toFixed(0)}-${(100 * d.fractionOfProbeQuartiles[1]).toFixed(0)}%)`,
      d.speedupVsTs.toFixed(1),
      d.speedupVsNumpy === null ? "n/a (no numpy)" : d.speedupVsNumpy.toFixed(1),
      ">= 85% probe, >= 8x TS, >= 8x NumPy",
    ],
    [
      "FB15k-237 rows in cache",
      `${c.nativeUs.toFixed(0)} us (${c.nativeGBs.toFixed(1)} GB/s)`,
      `${c.ratioToDram.toFixed(2)}x DRAM (${c.dramGBs.toFixed(1)} GB/s)`,
      c.speedupVsTs.toFixed(1),
      "",
      ">= 1x DRAM rate",
    ],
    [
      `sampled ${s.n} x ${s.k}`,
      `${s.nativeMs.toFixed(1)} ms`,
      `probe ${s.probeMs.toFixed(1)} ms`,
      s.speedupVsTs.toFixed(1),
      s.speedupVsNumpy === null ? "n/a" : s.speedupVsNumpy.toFixed(1),
      "<= 150 ms",
    ],
    [
      "event loop, async 1 GiB",
      `p99 ${e.p99Ms.toFixed(2)} ms`,
      `max ${e.maxMs.toFixed(2)} ms over ${e.jobs} jobs`,
      "",
      "",
      "p99 <= 20 ms",
    ],
  ],
);
if (!numpy) console.log("note: python3 with numpy not found; NumPy columns skipped");
console.log(`wrote ${writeResult("ranks", { numpy, report })}`);
