// Metric numerics at benchmark scale (WikiKG2-like), native vs the TS fallback, through the public API:
//   closed   E and Var of MR, MRR, Hits@10, GMR, z-GMR and AMRR together (prepareCandidates + 12 calls),
//            n = 1.2 M tasks with N_i uniform on 1..2.5 M (WikiKG2-like); PyKEEN: MRR 98 ms, MR 11 ms, GMR hours
//   values   every base metric (13) over 1e7 ranks in one fused pass (metricValues)
//   estimate Monte-Carlo E/Var of HMR, 1000 samples x 20,000 ranks, 1000 bootstrap resamples; PyKEEN: 0.47 s
//   median   exact E and Var of the median rank (Kernels.medianMoments: native/core/median_moments.cpp vs its TS
//            twin), n = 1.2 M tasks, N_i uniform on 1..2.5 M (even n: includes the joint law of the middle pair)
//   median-gap  the same with N_i far above n (the gap between the middle ranks is long): WN18RR's shape, n = 2,924
//            tasks with 46 distinct N_i in 40,088..40,559 (the joint term's rows cut at the distinct N_i and summed
//            by panels: 0.2-0.3 s CPU native)
// Each backend runs in its own child process (KGRANK_BACKEND=native|ts), since the public API uses the backend
// chosen at load.   node bench/metrics.bench.mjs [--quick]
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { mkdtempSync, rmSync } from "node:fs";
import * as os from "node:os";

import { median, numpyVersion, printTable, root, runCases, writeNpyFile, writeResult } from "./lib.mjs";

const args = process.argv.slice(2);
const quick = args.includes("--quick");

const BASE = ["mr", "gmr", "hmr", "median_rank", "hits@10", "std", "var", "mad", "count", "iamr", "igmr", "mrr", "imr"];
const CLOSED = ["mr", "mrr", "hits@10", "gmr", "zgmr", "amrr"];

async function child(backendName) {
  const require = createRequire(import.meta.url);
  const k = require(join(root, "dist", "cjs", "index.js"));
  const info = k.backendInfo();
  if (info.backend !== backendName) throw new Error(`wanted ${backendName}, got ${info.backend}`);
  const { numCandidates } = k.generateNumCandidatesAndRanks(1_200_000, 2_500_000, { seed: 1 });
  const ranks7 = k.generateRanks(new Float64Array(10_000_000).fill(1_000_000), { seed: 2 });
  const n20k = Float64Array.from({ length: 20_000 }, (_, i) => 1 + ((i * 7919) % 5000));
  const metrics = CLOSED.map((q) => k.getMetric(q));
  const hmr = k.getMetric("hmr");
  const med = k.getMetric("median_rank");
  const gapN = Float64Array.from({ length: 2924 }, (_, i) => 40088 + (((i * 7919) % 46) * 471) / 45);
  for (let i = 0; i < gapN.length; i++) gapN[i] = Math.round(gapN[i]);
  if (args.includes("--npy")) {
    // The same data for the NumPy peer (written once, by the native child).
    const dir = args[args.indexOf("--npy") + 1];
    writeNpyFile(join(dir, "n.npy"), Float64Array.from(numCandidates), [numCandidates.length]);
    writeNpyFile(join(dir, "r.npy"), Float64Array.from(ranks7), [ranks7.length]);
    writeNpyFile(join(dir, "e.npy"), n20k, [n20k.length]);
  }
  const slow = backendName === "ts" ? { minSamples: 2, maxTime: 1 } : undefined;
  const cases = [
    [
      "closed",
      () => {
        const c = k.prepareCandidates(numCandidates);
        for (const m of metrics) {
          m.expectedValue(c);
          m.variance(c);
        }
      },
      slow,
    ],
    ["values", () => k.metricValues(BASE, ranks7), slow],
    ["estimate", () => hmr.estimate({ numCandidates: n20k, numSamples: 1000, seed: 1 }), slow],
    // The median's exact E and Var (native/core/median_moments.cpp vs src/fallback/median-moments.ts), same n = 1.2 M.
    [
      "median",
      () => {
        const c = k.prepareCandidates(numCandidates);
        med.expectedValue(c);
        med.variance(c);
      },
      { minSamples: 2, maxTime: 1 },
    ],
    [
      "median-gap",
      () => {
        const c = k.prepareCandidates(gapN);
        med.expectedValue(c);
        med.variance(c);
      },
      { minSamples: 2, maxTime: 1 },
    ],
  ];
  const results = await runCases(cases, { minSamples: quick ? 3 : 7, maxTime: quick ? 1 : 3 });
  process.stdout.write(JSON.stringify({ info, results }));
}

if (args.includes("--child")) {
  await child(args[args.indexOf("--child") + 1]);
} else {
  const self = fileURLToPath(import.meta.url);
  const out = {};
  const tmp = mkdtempSync(join(os.tmpdir(), "kgrank-bench-"));
  for (const b of ["native", "ts"]) {
    console.error(`  running ${b}...`);
    const extra = b === "native" ? ["--npy", tmp] : [];
    const r = spawnSync(process.execPath, [self, "--child", b, ...args, ...extra], {
      cwd: root,
      env: { ...process.env, KGRANK_BACKEND: b },
      encoding: "utf8",
      maxBuffer: 1 << 24,
    });
    if (r.status !== 0) {
      console.error(r.stderr);
      process.exit(1);
    }
    out[b] = JSON.parse(r.stdout);
  }
  // NumPy, computing what PyKEEN computes the way it does (bench/numpy_metrics.py), on the same data.
  const npVersion = numpyVersion();
  let numpy = null;
  if (npVersion) {
    console.error("  running numpy...");
    const r = spawnSync(
      "python3",
      [
        join(root, "bench", "numpy_metrics.py"),
        join(tmp, "n.npy"),
        join(tmp, "r.npy"),
        join(tmp, "e.npy"),
        String(quick ? 2 : 5),
      ],
      { encoding: "utf8", maxBuffer: 1 << 24 },
    );
    if (r.status === 0) {
      const j = JSON.parse(r.stdout);
      numpy = {
        version: j.numpy,
        closed: median(j.closed) * 1e3,
        values: median(j.values) * 1e3,
        estimate: median(j.estimate) * 1e3,
      };
    } else console.error(`numpy peer failed: ${r.stderr}`);
  }
  rmSync(tmp, { recursive: true, force: true });
  const targets = { closed: 50, values: 40, estimate: 50, median: 1000, "median-gap": 1000 };
  const rows = Object.keys(targets).map((name) => {
    const nat = out.native.results[name].median * 1e3;
    const ts = out.ts.results[name].median * 1e3;
    const np = numpy?.[name];
    return [
      name,
      nat.toFixed(1),
      `±${out.native.results[name].spread.toFixed(1)}%`,
      ts.toFixed(1),
      (ts / nat).toFixed(1),
      np === undefined ? "" : `${np.toFixed(1)} (${(np / nat).toFixed(1)}x)`,
      targets[name] === null ? "practical" : String(targets[name]),
    ];
  });
  console.log(`metrics (native ${out.native.info.simd}, ${out.native.info.threads} threads):`);
  printTable(["case", "native ms", "spread", "ts ms", "x ts", "numpy ms (x)", "target ms"], rows);
  if (!npVersion) console.log("note: python3 with numpy not found; NumPy column skipped");
  else
    console.log(
      "note: NumPy 'closed' computes MR, MRR and Hits@10 only (PyKEEN's GMR expectation is O(sum N_i)); median: no NumPy peer",
    );
  const file = writeResult("metrics", {
    native: out.native,
    ts: out.ts,
    numpy: numpy && { closed: numpy.closed, values: numpy.values, estimate: numpy.estimate },
    numpyVersion: npVersion,
    targets,
  });
  console.log(`wrote ${file}`);
}
