// RankEvaluator at benchmark scale:
//  1. FB15k-237 test, both sides, float32 scores batch by batch, filtered by train+valid+test: evaluator time vs the
//     bandwidth probe over the same bytes; filtered vs unfiltered
//  2. filter index: build time and bytes per triple, FB15k-237 and a WikiKG2-shaped graph (2,500,604 entities,
//     535 relations, 17 M power-law triples)
//  3. WikiKG2-shaped sampled evaluation: 598,543 test triples x 500 negatives per side, fed end to end; peak RSS
//  4. a dense WikiKG2-width slice: 256 triples x 2,500,604 entities, filtered, vs the probe
//   node bench/evaluator.bench.mjs [--quick] [--datasets DIR]
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import * as os from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import {
  fb15kTestBatches,
  median,
  numpyVersion,
  printTable,
  probeRead,
  quantile,
  root,
  xorshift,
  writeNpyFile,
  writeResult,
} from "./lib.mjs";

const require = createRequire(import.meta.url);
const { RankEvaluator } = require(join(root, "dist", "cjs", "evaluation", "evaluator.js"));
const backend = require(join(root, "dist", "cjs", "backend", "backend.js"));
const { loadDataset } = require(join(root, "dist", "cjs", "index.js"));
const args = process.argv.slice(2);
const quick = args.includes("--quick");
const dsArg = args.indexOf("--datasets");
const datasetsDir = dsArg >= 0 ? resolve(args[dsArg + 1]) : resolve(root, "..", "shared", "datasets");
const tsChild = args.includes("--ts-fb15k");
const addon = backend.nativeAddon();
if (!addon && !tsChild) {
  console.error("evaluator bench: the native addon is not loaded; build it with `npm run build:native`.");
  process.exit(1);
}
const info = addon?.info();
const hw = info?.hardwareThreads;
const report = {};
const now = () => performance.now();

function fill(arr, seed) {
  const r = xorshift(seed);
  for (let i = 0; i < arr.length; i++) arr[i] = r();
  return arr;
}

/** A dataset from DIR/NAME/{train,valid,test}.tsv through the library's own reader (PyKEEN ids), or null. */
function loadTsvDataset(name) {
  if (!existsSync(join(datasetsDir, name, "train.tsv"))) return null;
  const d = loadDataset(name, { datasetDir: datasetsDir });
  return {
    numEntities: d.numEntities,
    numRelations: d.numRelations,
    train: d.splits.train,
    valid: d.splits.valid,
    test: d.splits.test,
  };
}

// ---- 1. FB15k-237 ---------------------------------------------------------------------------------------------
function fb15kBatches(fb, poolSize) {
  const N = fb.numEntities;
  return { N, ...fb15kTestBatches(fb.test, N, poolSize), filterTriples: [fb.train, fb.valid, fb.test] };
}

const fb = loadTsvDataset("fb15k-237");
if (tsChild) {
  // The TS fallback's filtered pass, in a child process started with KGRANK_BACKEND=ts.
  if (backend.backendInfo().backend !== "ts") throw new Error("--ts-fb15k needs KGRANK_BACKEND=ts");
  const { batches, N, filterTriples } = fb15kBatches(fb, quick ? 2 : 8);
  const times = [];
  let mrr = NaN;
  for (let rep = 0; rep < (quick ? 1 : 3); rep++) {
    const ev = new RankEvaluator({ numEntities: N, filterTriples });
    const t0 = now();
    for (const b of batches) ev.addSync(b);
    times.push(now() - t0);
    mrr = ev.finalize().get("both.realistic.mrr");
  }
  process.stdout.write(JSON.stringify({ times, mrr }));
  process.exit(0);
}
if (!fb) {
  console.log(`note: ${datasetsDir}/fb15k-237 not found; FB15k-237 scenario skipped (pass --datasets DIR)`);
} else {
  const { N, rows, batch, pool, batches, filterTriples } = fb15kBatches(fb, quick ? 2 : 8);
  const bytes = batches.reduce((a, b) => a + b.scores.byteLength, 0);
  const batchScores = batches.map((b) => b.scores);
  const runs = { filtered: [], unfiltered: [], probe: [] };
  let indexMs = 0;
  let mrr = NaN;
  for (let rep = 0; rep < (quick ? 3 : 7); rep++) {
    runs.probe.push(probeRead(addon, batchScores, hw));
    let t0 = now();
    const ev = new RankEvaluator({ numEntities: N, filterTriples });
    indexMs = now() - t0;
    t0 = now();
    for (const b of batches) ev.addSync(b);
    runs.filtered.push(now() - t0);
    mrr = ev.finalize().get("both.realistic.mrr");
    const raw = new RankEvaluator({ numEntities: N });
    t0 = now();
    for (const b of batches) raw.addSync(b);
    runs.unfiltered.push(now() - t0);
  }
  const fi = backend.kernels().buildFilterIndex(filterTriples, N, fb.numRelations, "tail");
  const fiHead = backend.kernels().buildFilterIndex(filterTriples, N, fb.numRelations, "head");
  const T = filterTriples.reduce((a, t) => a + t.length / 3, 0);
  // The same pass on the TS fallback (own process) and the way PyKEEN filters and ranks, in NumPy.
  console.error("  FB15k-237: TS fallback...");
  const ts = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--ts-fb15k", ...args], {
    cwd: root,
    env: { ...process.env, KGRANK_BACKEND: "ts" },
    encoding: "utf8",
    maxBuffer: 1 << 24,
  });
  const tsOut = ts.status === 0 ? JSON.parse(ts.stdout) : (console.error(ts.stderr), null);
  let np = null;
  const npVersion = numpyVersion();
  if (npVersion) {
    console.error("  FB15k-237: NumPy peer...");
    const tmp = mkdtempSync(join(os.tmpdir(), "kgrank-bench-"));
    const stack = new Float32Array(pool.length * batch * N);
    pool.forEach((p, i) => stack.set(p, i * batch * N));
    writeNpyFile(join(tmp, "pool.npy"), stack, [pool.length, batch, N]);
    writeNpyFile(join(tmp, "test.npy"), fb.test, [rows, 3]);
    const all = new Int32Array(T * 3);
    let o = 0;
    for (const t of filterTriples) {
      all.set(t, o);
      o += t.length;
    }
    writeNpyFile(join(tmp, "filter.npy"), all, [T, 3]);
    const r = spawnSync(
      "python3",
      [
        join(root, "bench", "numpy_evaluator.py"),
        join(tmp, "pool.npy"),
        join(tmp, "test.npy"),
        join(tmp, "filter.npy"),
        String(batch),
        String(quick ? 1 : 3),
      ],
      { encoding: "utf8", maxBuffer: 1 << 24 },
    );
    rmSync(tmp, { recursive: true, force: true });
    if (r.status === 0) np = JSON.parse(r.stdout);
    else console.error(`numpy peer failed: ${r.stderr}`);
  }
  report.fb15k237 = {
    tasks: 2 * rows,
    bytes,
    probeMs: median(runs.probe),
    filteredMs: median(runs.filtered),
    unfilteredMs: median(runs.unfiltered),
    filteredQuartilesMs: [quantile(runs.filtered, 0.25), quantile(runs.filtered, 0.75)],
    ratioToProbe: median(runs.filtered) / median(runs.probe),
    filteredVsUnfiltered: median(runs.filtered) / median(runs.unfiltered) - 1,
    indexBuildMs: indexMs,
    indexBytesPerTriple: (fi.stats().bytes + fiHead.stats().bytes) / T,
    mrr,
    tsMs: tsOut ? median(tsOut.times) : null,
    tsMrr: tsOut?.mrr ?? null,
    speedupVsTs: tsOut ? median(tsOut.times) / median(runs.filtered) : null,
    numpy: npVersion,
    numpyMs: np ? median(np.times) * 1e3 : null,
    numpyCopyMs: np ? np.copy * 1e3 : null,
    numpyBuildMs: np ? np.build * 1e3 : null,
    numpyMrr: np?.mrr ?? null,
    speedupVsNumpy: np ? (median(np.times) * 1e3) / median(runs.filtered) : null,
  };
}

// ---- 2 + 4. WikiKG2-shaped filter index and a dense full-width slice -------------------------------------------
{
  const N = 2_500_604;
  const R = 535;
  const T = quick ? 4_000_000 : 17_000_000;
  const rnd = xorshift(12345);
  const triples = new Int32Array(3 * T);
  for (let i = 0; i < T; i++) {
    triples[3 * i] = Math.floor(N * rnd() ** 2.5);
    triples[3 * i + 1] = Math.floor(R * rnd() ** 3);
    triples[3 * i + 2] = Math.floor(N * rnd() ** 2.5);
  }
  const rssBefore = process.memoryUsage().rss;
  let t0 = now();
  const ev = new RankEvaluator({ numEntities: N, numRelations: R, filterTriples: triples });
  const buildMs = now() - t0;
  const tail = backend.kernels().buildFilterIndex([triples], N, R, "tail").stats();
  const head = backend.kernels().buildFilterIndex([triples], N, R, "head").stats();
  report.wikikg2Index = {
    triples: T,
    buildBothSidesMs: buildMs,
    bytesPerTriple: (tail.bytes + head.bytes) / T,
    keysPerTriple: (tail.keys + head.keys) / (2 * T),
    rssGrowthMiB: (process.memoryUsage().rss - rssBefore) / 2 ** 20,
  };
  // Dense full-width slice: 256 evaluated triples (drawn from the filter set) x all entities.
  const rows = quick ? 64 : 256;
  const slice = triples.subarray(0, 3 * rows);
  const scores = fill(new Float32Array(rows * N), 7);
  const probes = [];
  const evals = [];
  const scoreList = [scores]; // one list: probeRead picks its variant once per list
  for (let rep = 0; rep < (quick ? 3 : 9); rep++) {
    probes.push(probeRead(addon, scoreList, hw));
    t0 = now();
    ev.addSync({ triples: slice, side: "tail", scores });
    evals.push(now() - t0);
  }
  report.wikikg2Slice = {
    rows,
    bytes: scores.byteLength,
    probeMs: median(probes),
    evaluatorMs: median(evals),
    ratioToProbe: median(evals) / median(probes),
  };
}

// ---- 3. WikiKG2-shaped sampled evaluation -----------------------------------------------------------------------
{
  const n = quick ? 100_000 : 598_543;
  const K = 500;
  const pos = fill(new Float32Array(n), 1);
  const negs = { head: fill(new Float32Array(n * K), 2), tail: fill(new Float32Array(n * K), 3) };
  const triples = new Int32Array(3 * n);
  const rnd = xorshift(9);
  for (let i = 0; i < 3 * n; i++) triples[i] = Math.floor(rnd() * (i % 3 === 1 ? 535 : 2_500_604));
  const t0 = now();
  const ev = new RankEvaluator({ numEntities: 2_500_604, numRelations: 535 });
  for (const side of ["head", "tail"])
    await ev.addSampled({ side, triples, positiveScores: pos, negativeScores: negs[side] });
  const feedMs = now() - t0;
  const t1 = now();
  const results = ev.finalize();
  const finalizeMs = now() - t1;
  report.wikikg2Sampled = {
    n,
    K,
    feedMs,
    finalizeMs,
    endToEndMs: feedMs + finalizeMs,
    mrr: results.get("mrr"),
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
  };
}

const f = report.fb15k237;
const rowsOut = [];
if (f) {
  rowsOut.push([
    "FB15k-237 test, both sides, filtered",
    `${f.filteredMs.toFixed(0)} ms (q ${f.filteredQuartilesMs.map((x) => x.toFixed(0)).join("-")})`,
    `${f.ratioToProbe.toFixed(2)}x probe (${f.probeMs.toFixed(0)} ms, ${(f.bytes / 2 ** 30).toFixed(2)} GiB)`,
    "<= 1.3x probe",
  ]);
  rowsOut.push([
    "  TS fallback, same pass",
    f.tsMs === null ? "failed" : `${f.tsMs.toFixed(0)} ms`,
    f.tsMs === null
      ? ""
      : `native is ${f.speedupVsTs.toFixed(1)}x (MRR ${f.tsMrr === f.mrr ? "identical" : `${f.tsMrr} vs ${f.mrr}`})`,
    "",
  ]);
  rowsOut.push([
    "  NumPy, PyKEEN's filter-and-count",
    f.numpyMs === null ? "n/a (no numpy)" : `${f.numpyMs.toFixed(0)} ms`,
    f.numpyMs === null
      ? ""
      : `native is ${f.speedupVsNumpy.toFixed(1)}x (MRR diff ${Math.abs(f.numpyMrr - f.mrr).toExponential(1)}; copy ${f.numpyCopyMs.toFixed(0)} ms excluded)`,
    "",
  ]);
  rowsOut.push([
    "  filtered vs unfiltered",
    `${(100 * f.filteredVsUnfiltered).toFixed(1)}%`,
    `unfiltered ${f.unfilteredMs.toFixed(0)} ms`,
    "<= 10%",
  ]);
  rowsOut.push([
    "  filter index (train+valid+test)",
    `${f.indexBuildMs.toFixed(0)} ms`,
    `${f.indexBytesPerTriple.toFixed(2)} bytes/triple, both sides`,
    "<= 12",
  ]);
}
const w = report.wikikg2Index;
rowsOut.push([
  `WikiKG2-shaped index, ${(w.triples / 1e6).toFixed(0)} M triples`,
  `${w.buildBothSidesMs.toFixed(0)} ms`,
  `${w.bytesPerTriple.toFixed(2)} bytes/triple, both sides`,
  "<= 12",
]);
const d = report.wikikg2Slice;
rowsOut.push([
  `dense slice ${d.rows} x 2.5 M, filtered`,
  `${d.evaluatorMs.toFixed(0)} ms`,
  `${d.ratioToProbe.toFixed(2)}x probe (${d.probeMs.toFixed(0)} ms)`,
  "bus speed",
]);
const s = report.wikikg2Sampled;
rowsOut.push([
  `sampled ${s.n} x ${s.K}, both sides, end to end`,
  `${s.endToEndMs.toFixed(0)} ms`,
  `feed ${s.feedMs.toFixed(0)} ms + finalize ${s.finalizeMs.toFixed(0)} ms; peak RSS ${s.peakRssMiB.toFixed(0)} MiB`,
  "<= 2 s",
]);
printTable(["scenario", "time", "detail", "target"], rowsOut);
console.log(`wrote ${writeResult("evaluator", { report })}`);
