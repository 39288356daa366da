// FB15k-237 filtered, both sides, at every SIMD level this CPU has: each level in its own process (the level is
// fixed at load by KGRANK_SIMD), the bandwidth probe (lib.mjs probeRead: its fastest variant here) over the same bytes
// measured in that process right before each run, 15 pairs: medians of each, and the median of the pairs' ratios (a noisy neighbour then skews a pair, not the
// ratio).
//   node bench/fb15k-levels.mjs [--datasets DIR]
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { fb15kTestBatches, probeRead, root, writeResult } from "./lib.mjs";

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const dsArg = args.indexOf("--datasets");
const datasetsDir = dsArg >= 0 ? resolve(args[dsArg + 1]) : resolve(root, "..", "shared", "datasets");
const { RankEvaluator, countScoresSync, loadDataset, backendInfo } = require(join(root, "dist", "cjs", "index.js"));
/** Pairs of probe-then-runs per level. */
const REPS = 15;
const backend = require(join(root, "dist", "cjs", "backend", "backend.js"));
const addon = backend.nativeAddon();
if (!addon) throw new Error("fb15k-levels: the native addon is not built (npm run build:native)");
const info = addon.info();

if (args.includes("--child")) {
  const d = loadDataset("fb15k-237", { datasetDir: datasetsDir });
  const N = d.numEntities;
  const { batches, thresholds } = fb15kTestBatches(d.splits.test, N);
  const filterTriples = [d.splits.train, d.splits.valid, d.splits.test];
  const scoreBuffers = batches.map((b) => b.scores);
  const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
  // Dense counting of the same rows (each row's own true entity's score as its threshold, no filter): what the
  // filtered path adds over it is the filter's work.
  const dense = () =>
    batches.forEach((b, i) => countScoresSync({ scores: b.scores, numColumns: N, thresholds: thresholds[i] }));
  const evaluators = Array.from({ length: 2 * REPS }, () => new RankEvaluator({ numEntities: N, filterTriples }));
  const t = { probe: [], dense: [], sync: [], async: [] };
  const ratio = { dense: [], sync: [], async: [] };
  for (let rep = 0; rep < REPS; rep++) {
    t.probe.push(probeRead(addon, scoreBuffers));
    let t0 = performance.now();
    dense();
    t.dense.push(performance.now() - t0);
    let ev = evaluators.pop();
    t0 = performance.now();
    for (const b of batches) ev.addSync(b);
    t.sync.push(performance.now() - t0);
    ev = evaluators.pop();
    t0 = performance.now();
    for (const b of batches) await ev.add(b);
    t.async.push(performance.now() - t0);
    for (const k of ["dense", "sync", "async"]) ratio[k].push(t[k][rep] / t.probe[rep]);
  }
  process.stdout.write(
    JSON.stringify({
      simd: backendInfo().simd,
      probeMs: med(t.probe),
      denseMs: med(t.dense),
      filteredMs: med(t.sync),
      asyncMs: med(t.async),
      denseRatio: med(ratio.dense),
      ratio: med(ratio.sync),
      asyncRatio: med(ratio.async),
      asyncToSync: med(t.async.map((a, i) => a / t.sync[i])),
    }),
  );
  process.exit(0);
}

console.log("FB15k-237 test, both sides, filtered, per SIMD level (each vs the probe in the same process):");
const results = [];
for (const level of info.simdLevels.map((l) => l.name)) {
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--child", ...args], {
    env: { ...process.env, KGRANK_SIMD: level },
    encoding: "utf8",
  });
  if (r.status !== 0) {
    console.log(`${level}: failed: ${r.stderr.trim().split("\n")[0]}`);
    continue;
  }
  const j = JSON.parse(r.stdout);
  results.push(j);
  console.log(
    `${j.simd.padEnd(7)} probe ${j.probeMs.toFixed(1).padStart(6)} ms | dense ${j.denseMs.toFixed(1).padStart(6)} ms ` +
      `${(100 / j.denseRatio).toFixed(1)}% of probe | filtered ${j.filteredMs.toFixed(1).padStart(6)} ms ` +
      `${j.ratio.toFixed(3)}x | async ${j.asyncMs.toFixed(1).padStart(6)} ms ${j.asyncRatio.toFixed(3)}x, ` +
      `${j.asyncToSync.toFixed(3)}x sync`,
  );
}
console.log(
  `(medians of ${REPS} paired ratios: the probe, then dense, filtered sync and async, in one process per level)`,
);
writeResult("fb15k-levels", { reps: REPS, levels: results });
