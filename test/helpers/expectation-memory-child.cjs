// Child process of test/async-safety.test.ts: 1e5 closed-form expectation calls on a tiny candidate set in one
// synchronous loop (the event loop never turns), printing the RSS growth in MiB as JSON. Before, each native call
// left its histogram's columns to finalizers that Node runs only when the loop turns: +59 to +66 MiB.
//   node --expose-gc test/helpers/expectation-memory-child.cjs
const path = require("node:path");
const kg = require(path.join(__dirname, "..", "..", "dist", "cjs", "index.js"));

const calls = 100_000;
const metric = kg.getMetric("mrr");
const numCandidates = Float64Array.from({ length: 10 }, (_, i) => 5 + (i % 7));
for (let i = 0; i < 2_000; i++) metric.expectedValue(numCandidates);
globalThis.gc();
const before = process.memoryUsage().rss;
let sum = 0;
for (let i = 0; i < calls; i++) sum += metric.expectedValue(numCandidates);
const growth = (process.memoryUsage().rss - before) / 2 ** 20;
console.log(JSON.stringify({ calls, growthMiB: growth, mean: sum / calls, backend: kg.backendInfo().backend }));
