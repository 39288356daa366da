// Child process of test/async-safety.test.ts: a 256 MiB rank job whose scores are transferred away (structuredClone
// or postMessage) right after the call, the transferred copy collected and its memory churned while the job runs
// single-threaded. Before the addon co-owned backing stores this segfaulted (exit 139). Prints the outcome as JSON.
//   node --expose-gc test/helpers/detach-child.mjs clone|port
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const kg = createRequire(import.meta.url)(
  join(dirname(fileURLToPath(import.meta.url)), "..", "..", "dist", "cjs", "index.js"),
);
const mode = process.argv[2] ?? "clone";
const rows = 64,
  cols = 1 << 20;
const scores = new Float32Array(rows * cols).fill(1);
const pending = kg.computeRanks({ scores, numColumns: cols, trueIndices: new Int32Array(rows), threads: 1 });
if (mode === "clone") structuredClone(scores.buffer, { transfer: [scores.buffer] });
else {
  const { port1 } = new MessageChannel();
  port1.postMessage(scores.buffer, [scores.buffer]);
  port1.close();
}
globalThis.gc();
globalThis.gc();
const junk = [];
for (let i = 0; i < 8; i++) junk.push(new Float32Array((rows * cols) / 8).fill(7));
try {
  await pending;
  console.log(JSON.stringify({ outcome: "resolved", backend: kg.backendInfo().backend, junk: junk.length }));
} catch (e) {
  console.log(JSON.stringify({ outcome: "rejected", name: e.name, code: e.code, backend: kg.backendInfo().backend }));
}
