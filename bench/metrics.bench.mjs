// Metric numerics at the scales, native vs the TS fallback, through the public API:
//   closed   E and Var of MR, MRR, Hits@10, GMR, z-GMR and AMRR together (prepareCandidates + 12 calls),
//            n = 1.2 M tasks with N_i uniform on 1..2.5 M (WikiKG2-like); PyKEEN: MRR 98 ms, MR 11 ms, GMR hours
//   values   every base metric (13) over 1e7 ranks in one fused pass (metricValues)
//   estimate Monte-Carlo E/Var of HMR, 1000 samples x 20,000 ranks, 1000 bootstrap resamples; PyKEEN: 0.47 s
// Each backend runs in its own child process (KGRANK_BACKEND=native|ts), since the public API uses the backend
// chosen at load.   node bench/metrics.bench.mjs [--quick]
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { printTable, root, runCases, writeResult } from "./lib.mjs";

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
  const slow = backendName === "ts" ? { minSamples: 2, maxTime: 1 } : undefined;
  const cases = [
    ["closed", () => {
      const c = k.prepareCandidates(numCandidates);
      for (const m of metrics) {
        m.expectedValue(c);
        m.variance(c);
      }
    }, slow],
    ["values", () => k.metricValues(BASE, ranks7), slow],
    ["estimate", () => hmr.estimate({ numCandidates: n20k, numSamples: 1000, seed: 1 }), slow],
  ];
  const results = await runCases(cases, { minSamples: quick ? 3 : 7, maxTime: quick ? 1 : 3 });
  process.stdout.write(JSON.stringify({ info, results }));
}

if (args.includes("--child")) {
  await child(args[args.indexOf("--child") + 1]);
} else {
  const self = fileURLToPath(import.meta.url);
  const out = {};
  for (const b of ["native", "ts"]) {
    console.error(`  running ${b}...`);
    const r = spawnSync(process.execPath, [self, "--child", b, ...args], {
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
  const targets = { closed: 50, values: 40, estimate: 50 };
  const rows = Object.keys(targets).map((name) => {
    const nat = out.native.results[name].median * 1e3;
    const ts = out.ts.results[name].median * 1e3;
    return [name, nat.toFixed(1), `±${out.native.results[name].spread.toFixed(1)}%`, ts.toFixed(1), (ts / nat).toFixed(1),
      String(targets[name])];
  });
  console.log(`metrics (native ${out.native.info.simd}, ${out.native.info.threads} threads):`);
  printTable(["case", "native ms", "spread", "ts ms", "x ts", "target ms"], rows);
  const file = writeResult("metrics", { native: out.native, ts: out.ts, targets });
  console.log(`wrote ${file}`);
}
