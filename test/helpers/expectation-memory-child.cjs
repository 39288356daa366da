// Child process of test/async-safety.test.ts: 1e5 closed-form expectation calls on one candidate set in one
// synchronous loop (the event loop never turns), printing the RSS growth in MiB as JSON. Before, each native call
// left its histogram's columns to finalizers that Node runs only when the loop turns: +59 to +66 MiB.
//   node --expose-gc test/helpers/expectation-memory-child.cjs TASKS BASE SPREAD
// Task i has N = BASE + (i * 37) % SPREAD candidates. 10 tasks with N <= 11 ("tiny": at most 64 tasks, N <= 256)
// have their histogram counted by the TypeScript twin (src/backend/native-metrics.ts) even on the native backend; 100
// tasks with N up to 999 go through the addon's candidateHistogram and its adopt() (native/addon/metrics_bindings.cpp).
// `nativeHistograms` counts the addon's candidateHistogram calls, so the parent can check which path ran.
const path = require("node:path");
const kg = require(path.join(__dirname, "..", "..", "dist", "cjs", "index.js"));

const [tasks, base, spread] = process.argv.slice(2, 5).map(Number);
const calls = 100_000;
let nativeHistograms = 0;
const info = kg.backendInfo();
if (info.addonPath) {
  const addon = require(info.addonPath);
  const histogram = addon.candidateHistogram;
  addon.candidateHistogram = (...args) => {
    nativeHistograms++;
    return histogram(...args);
  };
}
const metric = kg.getMetric("mrr");
const numCandidates = Float64Array.from({ length: tasks }, (_, i) => base + ((i * 37) % spread));
for (let i = 0; i < 2_000; i++) metric.expectedValue(numCandidates);
globalThis.gc();
const before = process.memoryUsage().rss;
let sum = 0;
for (let i = 0; i < calls; i++) sum += metric.expectedValue(numCandidates);
const growth = (process.memoryUsage().rss - before) / 2 ** 20;
console.log(JSON.stringify({ calls, growthMiB: growth, mean: sum / calls, nativeHistograms, backend: info.backend }));
