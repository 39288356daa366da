// Child process of test/async-safety.test.ts: starts Worker threads that run one async entry point of the built
// package (dist/) in a loop, terminates each worker while its native jobs are pending or running, and repeats.
// Before the addon's async jobs tolerated a dying environment, the first termination aborted the whole process
// ("terminate called after throwing an instance of 'Napi::Error'", 8 of 8 runs). Prints JSON and exits 0.
// With "workers-only" the main thread loads the package only after the workers are gone, so the addon is loaded by
// the workers alone and Node unloads it when the last one ends; kgrank's pool threads then ran in unmapped code
// (SIGSEGV) until the addon pinned itself in memory.
//   node test/helpers/terminate-child.mjs <entry point> <rounds> [workers-only]
import { Worker } from "node:worker_threads";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "dist", "cjs", "index.js");
const entry = process.argv[2];
const rounds = Number(process.argv[3] ?? 4);
const workersOnly = process.argv[4] === "workers-only";
const early = workersOnly ? null : await import(pkg);

// Each worker builds its inputs, starts several calls of the entry point without awaiting them (they queue on
// libuv's pool and kgrank's), tells the parent, and keeps calling until it is terminated.
const worker = `
const kg = require(${JSON.stringify(pkg)});
const { parentPort, workerData } = require("node:worker_threads");
const rows = 16, cols = 1 << 18;
const scores = new Float32Array(rows * cols).map((_, i) => (i * 2654435761) % 1000);
const trueIndices = Int32Array.from({ length: rows }, (_, r) => (r * 7919) % cols);
const thresholds = new Float32Array(rows).fill(500);
const triples = Int32Array.from({ length: rows * 3 }, (_, i) => (i % 3 === 1 ? 0 : (i * 7919) % cols));
const evaluator = new kg.RankEvaluator({ numEntities: cols, filterTriples: triples, sides: "tail" });
const plain = new kg.RankEvaluator({ numEntities: cols, sides: "tail" });
const calls = {
  countScores: () => kg.countScores({ scores, numColumns: cols, thresholds }),
  computeRanks: () => kg.computeRanks({ scores, numColumns: cols, trueIndices }),
  computeSampledRanks: () => kg.computeSampledRanks({ positiveScores: thresholds, negativeScores: scores }),
  "RankCounter.add": () => new kg.RankCounter({ trueScores: thresholds }).add({ scores, columnStart: 0 }),
  "RankEvaluator.add filtered": () => evaluator.add({ triples, side: "tail", scores }),
  "RankEvaluator.add unfiltered": () => plain.add({ triples, side: "tail", scores }),
  "ChunkedBatch.add": () => {
    const trueScores = Array.from({ length: rows }, (_, r) => scores[r * cols + triples[3 * r + 2]]);
    return evaluator.chunked({ triples, side: "tail", trueScores }).add({ scores, entityStart: 0 });
  },
};
const call = calls[workerData];
if (!call) throw new Error("unknown entry point " + workerData);
const pending = [];
for (let i = 0; i < 6; i++) pending.push(call().catch(() => {}));
parentPort.postMessage("started");
(async () => { for (;;) await call().catch(() => {}); })();
`;

let terminated = 0;
for (let round = 0; round < rounds; round++) {
  const w = new Worker(worker, { eval: true, workerData: entry });
  const failed = new Promise((_, reject) => w.once("error", reject));
  await Promise.race([new Promise((resolve) => w.once("message", resolve)), failed]);
  // Terminate at a different point of the jobs' lives each round: at once, or after a few milliseconds.
  if (round % 2 === 1) await new Promise((resolve) => setTimeout(resolve, 2 + round));
  await w.terminate();
  terminated++;
}
const loaded = early ?? (await import(pkg));
const { backendInfo } = loaded.default ?? loaded;
console.log(JSON.stringify({ entry, terminated, backend: backendInfo().backend }));
