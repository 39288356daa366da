// Typed candidates on the FB15k-237 test set, filtered by train+valid+test, both sides: the same score batches ranked
// by an evaluator against every entity (the dense filtered count, rankTriples) and by one with the training-inferred
// candidate sets (rankTriplesConstrained: a dense set's rows streamed under its bit set, a sparse set's columns
// gathered). Batches of --batch rows (default 512) of seeded random float32 scores, each batch timed through both
// evaluators in alternating order (ABBA, so neither gains from the other's cache); per repetition the sums, then
// medians over repetitions and their ratio. Also the sets' memory against relations x entities. Alone: npm run
// build:ts && node bench/typed-candidates.mjs [--datasets DIR] [--reps R] [--batch B] [--threads T]; KGRANK_SIMD
// picks the level. Writes bench/results/typed-candidates.json.
import { createRequire } from "node:module";
import { join, resolve } from "node:path";

import { fillRandom, median, root, writeResult } from "./lib.mjs";

const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const datasetDir = resolve(flag("--datasets", process.env.KGRANK_DATASETS ?? join(root, "..", "shared", "datasets")));
const reps = Number(flag("--reps", "5"));

const require = createRequire(import.meta.url);
const { CandidateSets, RankEvaluator, loadDataset, backendInfo } = require("../dist/cjs/index.js");

const info = backendInfo();
const threads = Number(flag("--threads", String(info.threads)));
const ds = loadDataset("fb15k-237", { datasetDir });
const { train, valid, test } = ds.splits;
const E = ds.numEntities;
const R = ds.numRelations;
const rows = test.length / 3;
const sets = CandidateSets.fromTriples(train, { numEntities: E, numRelations: R });
const BATCH = Number(flag("--batch", "512"));
const batches = [];
for (let start = 0; start < rows; start += BATCH) {
  const end = Math.min(rows, start + BATCH);
  batches.push(test.subarray(3 * start, 3 * end));
}
// One buffer per batch size, refilled per batch and side with a seed of its own (the same scores for both evaluators).
const buffer = new Float32Array(BATCH * E);
const common = { numEntities: E, numRelations: R, filterTriples: [train, valid, test], threads };

// Mean allowed-set size per task, per side: what a constrained row reads.
const meanAllowed = {};
for (const side of ["head", "tail"]) {
  let sum = 0;
  for (let i = 0; i < rows; i++) sum += sets.size(side, test[3 * i + 1]);
  meanAllowed[side] = sum / rows;
}

const runs = { dense: [], constrained: [] };
let check = null;
for (let r = 0; r < reps; r++) {
  const dense = new RankEvaluator(common);
  const typed = new RankEvaluator({ ...common, candidates: sets });
  const t = { dense: 0, constrained: 0 };
  let k = 0;
  for (const side of ["head", "tail"]) {
    for (const triples of batches) {
      const scores = buffer.subarray(0, (triples.length / 3) * E);
      fillRandom(scores, 1000 + k);
      const order = k % 2 === 0 ? ["dense", "constrained"] : ["constrained", "dense"];
      for (const which of order) {
        const ev = which === "dense" ? dense : typed;
        const t0 = process.hrtime.bigint();
        ev.addSync({ triples, side, scores });
        t[which] += Number(process.hrtime.bigint() - t0) / 1e9;
      }
      k++;
    }
  }
  runs.dense.push(t.dense);
  runs.constrained.push(t.constrained);
  const a = dense.finalize();
  const b = typed.finalize();
  check = {
    mrrDense: a.get("both.realistic.mrr"),
    mrrConstrained: b.get("both.realistic.mrr"),
    expectedMrDense: a.expected("both.arithmetic_mean_rank"),
    expectedMrConstrained: b.expected("both.arithmetic_mean_rank"),
  };
}
const dense = median(runs.dense);
const constrained = median(runs.constrained);
const scoreBytes = 2 * rows * E * 4;
const result = {
  dataset: "fb15k-237",
  rows,
  entities: E,
  relations: R,
  backend: info.backend,
  simd: info.simd,
  threads,
  reps,
  denseSeconds: dense,
  constrainedSeconds: constrained,
  denseRuns: runs.dense,
  constrainedRuns: runs.constrained,
  constrainedOverDense: constrained / dense,
  scoreBytes,
  pairs: sets.pairs,
  setBytes: sets.bytes,
  bitSetBytes: sets.bitSetBytes,
  denseMaskBytes: 2 * R * E,
  meanAllowed,
  ...check,
};
console.log(
  `typed candidates, FB15k-237 test filtered, both sides (${rows} x ${E}, ${(scoreBytes / 1e9).toFixed(2)} GB of scores, ` +
    `${info.backend} ${info.simd}, ${threads} threads): every entity ${dense.toFixed(3)} s, typed candidates ` +
    `${constrained.toFixed(3)} s, typed / every ${(constrained / dense).toFixed(2)}x (medians of ${reps}); ` +
    `mean allowed set ${meanAllowed.head.toFixed(0)} heads, ${meanAllowed.tail.toFixed(0)} tails of ${E}; ` +
    `sets ${(sets.bytes / 1e6).toFixed(2)} MB (${sets.pairs} pairs) + bit sets ${(sets.bitSetBytes / 1e6).toFixed(2)} MB ` +
    `vs ${((2 * R * E) / 1e6).toFixed(1)} MB for ` +
    `relations x entities bytes; MRR ${check.mrrDense.toFixed(4)} -> ${check.mrrConstrained.toFixed(4)}, random E[MR] ` +
    `${check.expectedMrDense.toFixed(0)} -> ${check.expectedMrConstrained.toFixed(0)}`,
);
writeResult("typed-candidates", result);
