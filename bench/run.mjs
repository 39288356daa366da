// Runs every benchmark scenario, each in its own child process (so one scenario's heap, caches and thread pool do
// not colour the next), then gathers their JSON results into bench/results/latest.json.
//   npm run bench [-- --quick] [-- --only count]
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { machine, printTable, resultsDir, root } from "./lib.mjs";
import { HEADER, PROJECTION_HEADER, SIMD_HEADER, projectionRows, simdRows, summaryRows } from "./summary.mjs";

const SCENARIOS = [
  { name: "count", file: "count.bench.mjs" },
  { name: "ranks", file: "ranks.bench.mjs" },
  { name: "evaluator", file: "evaluator.bench.mjs" },
  { name: "metrics", file: "metrics.bench.mjs" },
  { name: "scale-out", file: "scale-out.bench.mjs" },
  // Ranking from embeddings: FMA probe and per-interaction rates, the WikiKG2-shaped sample, the event loop during an
  // async addModel, and the PyTorch peer on FB15k-237 (skipped with a note without torch or the dataset).
  { name: "embeddings", file: "embeddings.mjs", args: ["--wikikg2", "--event-loop", "--torch"] },
  // Top-10 predictions against ranking the same queries from embeddings, pair by pair.
  { name: "top-k", file: "top-k.mjs" },
  // The WebAssembly core against native AVX2 and the fallback, one thread each (needs npm run build:wasm).
  { name: "wasm", file: "wasm.mjs" },
];

const args = process.argv.slice(2);
const only = args.includes("--only") ? args[args.indexOf("--only") + 1].split(",") : null;
const passThrough = args.filter((a, i) => a !== "--only" && args[i - 1] !== "--only");

if (!existsSync(join(root, "dist", "cjs", "index.js"))) {
  console.error("bench: dist/ is missing; run `npm run build:ts` (npm ci does it) first.");
  process.exit(1);
}

const started = Date.now();
const latest = { date: new Date().toISOString(), machine: machine(), args: passThrough, scenarios: {} };
let failed = 0;
for (const s of SCENARIOS) {
  if (only && !only.includes(s.name)) continue;
  console.log(`\n=== ${s.name} ===`);
  const r = spawnSync(
    process.execPath,
    ["--expose-gc", join(root, "bench", s.file), ...(s.args ?? []), ...passThrough],
    {
      cwd: root,
      stdio: "inherit",
    },
  );
  if (r.status !== 0) {
    failed++;
    latest.scenarios[s.name] = { error: `exit status ${r.status}` };
    continue;
  }
  latest.scenarios[s.name] = JSON.parse(readFileSync(join(resultsDir, `${s.name}.json`), "utf8"));
}
latest.elapsedSeconds = (Date.now() - started) / 1e3;
writeFileSync(join(resultsDir, "latest.json"), JSON.stringify(latest, null, 2));
console.log(
  `\n=== summary (${latest.machine.cpu}, ${latest.machine.cores} cores; ${latest.elapsedSeconds.toFixed(0)} s) ===`,
);
printTable(HEADER, summaryRows(latest));
const simd = simdRows(latest);
if (simd.length) {
  console.log("");
  printTable(SIMD_HEADER, simd);
}
const proj = projectionRows(latest);
if (proj.length) {
  console.log("");
  printTable(PROJECTION_HEADER, proj);
}
console.log(`\nwrote ${join(resultsDir, "latest.json")}`);
process.exit(failed ? 1 : 0);
