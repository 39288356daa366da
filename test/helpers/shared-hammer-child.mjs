// Child process of test/async-safety.test.ts: inputs that change while native code uses them. A Worker writes values
// into a SharedArrayBuffer the whole time one entry point of the built package (dist/) is called on it in a loop; or
// (mutate-after-call) an async call's index array is overwritten right after the call returned its promise. Whatever
// native code indexes with must be its own copy (or checked again at use): every call must return a valid result or
// throw a KgrankError. Prints {ok, typed, untyped, invalid} as JSON and exits 0; native code that indexed with the
// caller's memory would kill the process (SIGSEGV on out-of-bounds reads, heap corruption).
//   node test/helpers/shared-hammer-child.mjs <case> <iterations>
import { Worker } from "node:worker_threads";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "dist", "cjs", "index.js");
const kg = createRequire(import.meta.url)(pkg);
const which = process.argv[2];
const iterations = Number(process.argv[3] ?? 200);

// The hammer: for ever, picks a random element of `view` (Int32Array or Float64Array over a SharedArrayBuffer),
// writes a value from `bad` (far out of range) or from [0, good), holds it a few microseconds, and writes a good
// value back, so most calls pass validation and then see values change under them.
const hammerSource = `
const { workerData, parentPort } = require("node:worker_threads");
const { sab, kind, good, bad, stride, offset } = workerData;
const view = kind === "f64" ? new Float64Array(sab) : new Int32Array(sab);
let x = 12345;
parentPort.postMessage("hammering");
const next = () => { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; return x >>> 0; };
for (;;) {
  const i = (next() % Math.floor(view.length / stride)) * stride + offset;
  const keep = view[i];
  view[i] = next() % 4 === 0 ? bad[next() % bad.length] : next() % good;
  for (let s = 0; s < 50; s++) if (view[i] === 0.5) break;
  view[i] = next() % 2 === 0 ? keep : next() % good;
}
`;

async function hammer(sab, kind, good, bad, stride = 1, offset = 0) {
  const w = new Worker(hammerSource, { eval: true, workerData: { sab, kind, good, bad, stride, offset } });
  await new Promise((resolve, reject) => {
    w.once("message", resolve);
    w.once("error", reject);
  });
  return w;
}

const HUGE = [2 ** 31 - 1, -(2 ** 31), 1 << 30, -1, 1 << 24];
const out = { ok: 0, typed: 0, untyped: [], invalid: 0 };
function record(result, valid) {
  if (valid(result)) out.ok++;
  else out.invalid++;
}
function failed(e) {
  if (e instanceof kg.KgrankError) out.typed++;
  else out.untyped.push(String(e && e.stack ? e.stack.split("\n")[0] : e));
}
const ranksValid = (cols) => (r) =>
  r.realistic.every((x) => x >= 1 && x <= cols) && r.optimistic.every((x) => x >= 1 && x <= cols);

const rows = 2048,
  cols = 512;
const scores = new Float32Array(rows * cols).map((_, i) => (i * 2654435761) % 97);

async function main() {
  let worker = null;
  if (which === "computeRanksSync" || which === "computeRanks") {
    const sab = new SharedArrayBuffer(rows * 4);
    const trueIndices = new Int32Array(sab); // (map() would return an unshared copy)
    for (let r = 0; r < rows; r++) trueIndices[r] = (r * 7) % cols;
    worker = await hammer(sab, "i32", cols, HUGE);
    for (let k = 0; k < iterations; k++) {
      try {
        const res =
          which === "computeRanksSync"
            ? kg.computeRanksSync({ scores, numColumns: cols, trueIndices })
            : await kg.computeRanks({ scores, numColumns: cols, trueIndices });
        record(res, ranksValid(cols));
      } catch (e) {
        failed(e);
      }
    }
  } else if (which === "mutate-after-call") {
    // No second thread: the index array is overwritten as soon as the call has returned its promise.
    const trueIndices = Int32Array.from({ length: rows }, (_, r) => (r * 7) % cols);
    const want = kg.computeRanksSync({ scores, numColumns: cols, trueIndices });
    for (let k = 0; k < iterations; k++) {
      const idx = trueIndices.slice();
      const busy = kg.computeRanks({
        scores: new Float32Array(64 * (1 << 16)),
        numColumns: 1 << 16,
        trueIndices: new Int32Array(64),
        threads: 1,
      });
      const pending = kg.computeRanks({ scores, numColumns: cols, trueIndices: idx });
      idx.fill(HUGE[k % HUGE.length]);
      try {
        const res = await pending;
        record(res, (r) => ranksValid(cols)(r) && r.realistic.every((x, i) => x === want.realistic[i]));
      } catch (e) {
        failed(e);
      }
      await busy;
    }
  } else if (which === "filterIndex" || which === "addSync") {
    // Filter triples (build) or evaluated triples (one-call batch) in a SharedArrayBuffer; anchors are hammered with
    // valid ids (the index counted per anchor in one pass and filled in a second: changed anchors overflowed a
    // bucket) and with ids out of range.
    const numEntities = 4096,
      numRelations = 8,
      n = 1 << 16;
    const sab = new SharedArrayBuffer(n * 3 * 4);
    const triples = new Int32Array(sab);
    for (let i = 0; i < n; i++) {
      triples[3 * i] = (i * 7919) % numEntities;
      triples[3 * i + 1] = i % numRelations;
      triples[3 * i + 2] = (i * 104729) % numEntities;
    }
    const tailRows = 64;
    const batchScores = new Float32Array(tailRows * numEntities).map((_, i) => (i * 31) % 89);
    const plain = Int32Array.from(triples.subarray(0, tailRows * 3));
    const evaluator =
      which === "addSync"
        ? new kg.RankEvaluator({ numEntities, numRelations, filterTriples: plain, sides: "tail" })
        : null;
    const evalTriples = which === "addSync" ? new Int32Array(sab, 0, tailRows * 3) : null;
    worker = await hammer(
      sab,
      "i32",
      numEntities,
      [numEntities - 1, numEntities, 2 ** 31 - 1, -1],
      3,
      which === "addSync" ? 2 : 0,
    );
    for (let k = 0; k < iterations; k++) {
      try {
        if (which === "filterIndex") {
          const e = new kg.RankEvaluator({ numEntities, numRelations, filterTriples: triples, sides: "tail" });
          e.addSync({ triples: plain, side: "tail", scores: batchScores });
          record(e.finalize().get("mrr"), (v) => v > 0 && v <= 1);
        } else {
          evaluator.addSync({ triples: evalTriples, side: "tail", scores: batchScores });
          out.ok++;
        }
      } catch (e) {
        failed(e);
      }
    }
  } else if (which === "metricValue") {
    // Ranks (and weights) in a SharedArrayBuffer under a metric's fused pass with medians (radix selection copies
    // out the values of the median's buckets in a second pass; the weighted median sorts by value).
    const n = 1 << 15;
    const sab = new SharedArrayBuffer(n * 8);
    const ranks = new Float64Array(sab);
    for (let i = 0; i < n; i++) ranks[i] = 1 + ((i * 7919) % 1000);
    const weights = new Float64Array(n).fill(1);
    worker = await hammer(sab, "f64", 1000, [1, 1e300, 0.5, 2 ** 40]);
    const median = kg.getMetric("median_rank");
    const mad = kg.getMetric("median_absolute_deviation");
    for (let k = 0; k < iterations; k++) {
      try {
        record(median.value(ranks), (v) => typeof v === "number");
        record(mad.value(ranks), (v) => typeof v === "number");
        record(median.value(ranks, undefined, weights), (v) => typeof v === "number");
      } catch (e) {
        failed(e);
      }
    }
  } else {
    throw new Error("unknown case " + which);
  }
  if (worker) await worker.terminate();
  console.log(JSON.stringify({ case: which, backend: kg.backendInfo().backend, ...out }));
}
await main();
