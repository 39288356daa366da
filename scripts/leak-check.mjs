// Calls each main entry point many times and reports RSS growth: a leak shows as growth that scales with calls,
// so growth is measured over a second phase of calls, after a first phase of the same size.
//   node --expose-gc scripts/leak-check.mjs [CALLS]      (default 100000; prints JSON, exits 1 over the budget)
import { createRequire } from "node:module";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const kg = createRequire(import.meta.url)(join(root, "dist", "cjs", "index.js"));
const { RankEvaluator } = createRequire(import.meta.url)(join(root, "dist", "cjs", "evaluation", "evaluator.js"));
const calls = Number(process.argv[2] ?? 100_000);
const budgetMiB = 10;
const rawGc = globalThis.gc ?? (() => {});
// Node-API finalizers (e.g. of native filter indexes) may run on a later event-loop turn than the GC that found
// the object dead: let macrotasks run, then collect again.
async function gc() {
  rawGc();
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
  rawGc();
}

const scores = new Float32Array(64 * 100).map((_, i) => (i * 7919) % 97);
const trueIndices = Int32Array.from({ length: 64 }, (_, r) => r % 100);
const pos = new Float32Array(64).map((_, i) => i % 13);
const triples = Int32Array.from({ length: 64 * 3 }, (_, i) => (i % 3 === 1 ? i % 5 : (i * 31) % 100));
// The evaluator keeps its tasks by design, so the add path is checked on a fresh evaluator every 1000 calls.
let evaluator = null;
let evaluatorCalls = 0;
function currentEvaluator() {
  if (evaluatorCalls++ % 1000 === 0)
    evaluator = new RankEvaluator({ numEntities: 100, filterTriples: triples, sides: "tail" });
  return evaluator;
}

// ChunkedBatch: each row's true score is its own score at its true column (the triple's tail).
const chunkTrue = Array.from({ length: 64 }, (_, r) => scores[r * 100 + triples[3 * r + 2]]);
const columns = (from, to) => {
  const out = new Float32Array(64 * (to - from));
  for (let r = 0; r < 64; r++) out.set(scores.subarray(r * 100 + from, r * 100 + to), r * (to - from));
  return out;
};
const leftSlice = columns(0, 50);
const rightSlice = columns(50, 100);
// finalize() (the metric value pass, expectations, variances) of a small evaluation restored from its state on
// every call (an evaluator finalizes once): covers serialize / merge too.
const finalizeState = (() => {
  const e = new RankEvaluator({ numEntities: 100, filterTriples: triples, sides: "tail" });
  e.addSync({ triples, side: "tail", scores });
  return e.serialize();
})();

const entryPoints = {
  countScoresSync: () => kg.countScoresSync({ scores, numColumns: 100, thresholds: pos }),
  countScores: () => kg.countScores({ scores, numColumns: 100, thresholds: pos }),
  computeRanksSync: () => kg.computeRanksSync({ scores, numColumns: 100, trueIndices }),
  computeRanks: () => kg.computeRanks({ scores, numColumns: 100, trueIndices }),
  computeSampledRanksSync: () => kg.computeSampledRanksSync({ positiveScores: pos, negativeScores: scores }),
  computeSampledRanks: () => kg.computeSampledRanks({ positiveScores: pos, negativeScores: scores }),
  rankCounter: () => {
    const c = new kg.RankCounter({ trueScores: pos });
    c.addSync({ scores, columnStart: 0 });
    return c.ranks();
  },
  rankCounterAsync: async () => {
    const c = new kg.RankCounter({ trueScores: pos });
    await c.add({ scores, columnStart: 0 });
    return c.ranks();
  },
  chunkedBatch: async () => {
    const b = currentEvaluator().chunked({ triples, side: "tail", trueScores: chunkTrue });
    await b.add({ scores: leftSlice, entityStart: 0 });
    b.addSync({ scores: rightSlice, entityStart: 50 });
    b.finish();
  },
  evaluatorAddSampled: () =>
    currentEvaluator().addSampled({ side: "tail", positiveScores: pos, negativeScores: scores }),
  evaluatorMergeFinalize: () => RankEvaluator.merge([finalizeState]).finalize(),
  // An async call whose input is transferred away mid-call (KgrankDetachedError): the job's pins must be released.
  detachedMidCall: async () => {
    const s = scores.slice();
    const p = kg.computeRanks({ scores: s, numColumns: 100, trueIndices });
    structuredClone(s.buffer, { transfer: [s.buffer] });
    await p.catch(() => {});
  },
  evaluatorFilterIndex: () => new RankEvaluator({ numEntities: 100, filterTriples: triples, sides: "tail" }),
  evaluatorAdd: () => currentEvaluator().add({ triples, side: "tail", scores }),
  evaluatorAddSync: () => currentEvaluator().addSync({ triples, side: "tail", scores }),
  badInput: () => {
    try {
      kg.computeRanksSync({ scores, numColumns: 100, trueIndices: [1e9] });
    } catch {
      // expected
    }
  },
};

const report = {};
let worst = 0;
async function run(fn, n) {
  for (let i = 0; i < n; i += 100) {
    const pending = [];
    for (let j = 0; j < 100; j++) pending.push(fn());
    await Promise.all(pending);
    if (i % 10_000 === 0) await gc();
  }
  await gc();
}

// The process's own heaps grow to their working size in the first seconds whatever runs first: warm every entry
// point up once before measuring any.
for (const fn of Object.values(entryPoints)) await run(fn, Math.min(calls, 20_000));

for (const [name, fn] of Object.entries(entryPoints)) {
  // A first phase of `calls` calls lets the heaps and allocator caches reach their working size; growth over a
  // second phase of `calls` calls is what scales with calls: a leak.
  await run(fn, calls);
  const before = process.memoryUsage().rss;
  await run(fn, calls);
  const growth = (process.memoryUsage().rss - before) / 2 ** 20;
  report[name] = { calls, rssGrowthMiB: Number(growth.toFixed(2)) };
  worst = Math.max(worst, growth);
}
console.log(JSON.stringify({ budgetMiB, worstGrowthMiB: Number(worst.toFixed(2)), report }, null, 2));
process.exit(worst > budgetMiB ? 1 : 0);
