// Sampled negatives against the truth: how far the OGB protocol's sampled MRR and Hits@10, and Krichene & Rendle's
// corrections of them (estimateFromSampledRanks: minimum-mse, minimum-bias), land from the exact full-ranking values,
// where those are known. For FB15k-237 and WN18RR and three models - the frequency baseline, and DistMult and
// TransE-L1 with seeded random embeddings (d = 64) - every test task is ranked against all entities, filtered (the
// exact values, and each task's counts of candidates above and tied with the truth). The protocol is then simulated
// exactly from those counts: K negatives drawn uniformly without replacement from the task's other filtered
// candidates, the realistic sampled rank 1 + (drawn above) + (drawn tied) / 2, for K = 50, 500 and 2,000 and 3 seeds.
// The estimators take one N, the tasks' mean filtered candidate count, rounded. Errors are estimate - exact, averaged
// over the seeds.
//   npm run build:ts && node bench/sampled-negatives.mjs [--datasets DIR] [--reps R]
import { createRequire } from "node:module";
import { join, resolve } from "node:path";

import { printTable, root, seededFloats, writeResult } from "./lib.mjs";

const require = createRequire(import.meta.url);
const { EmbeddingModel, FrequencyBaseline, RankEvaluator, estimateFromSampledRanks, loadDataset } = require(
  join(root, "dist", "cjs", "index.js"),
);
const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const datasetDir = resolve(flag("--datasets", process.env.KGRANK_DATASETS ?? join(root, "..", "shared", "datasets")));
const reps = Number(flag("--reps", "3"));
const KS = [50, 500, 2000];
const ESTIMATORS = ["sampled", "minimum-mse", "minimum-bias"];
const D = 64;

/** Exact filtered ranks of every test task (both sides) under `model`, with the per-task counts. */
function exactRanks(ds, model) {
  const { train, valid, test } = ds.splits;
  const ev = new RankEvaluator({
    numEntities: ds.numEntities,
    numRelations: ds.numRelations,
    filterTriples: [train, valid, test],
  });
  if (model === "baseline") {
    const scorer = new FrequencyBaseline(train, ds.numEntities, ds.numRelations);
    const rows = test.length / 3;
    for (const side of ["head", "tail"]) {
      for (let r = 0; r < rows; r += 1024) {
        const batch = test.subarray(3 * r, 3 * Math.min(rows, r + 1024));
        ev.addSync({ triples: batch, side, scores: scorer.scoreBatch(batch, side) });
      }
    }
  } else {
    const m = new EmbeddingModel({
      interaction: model,
      entityEmbeddings: { data: seededFloats(ds.numEntities * D, 11), shape: [ds.numEntities, D] },
      relationEmbeddings: { data: seededFloats(ds.numRelations * D, 12), shape: [ds.numRelations, D] },
    });
    ev.addModelSync({ model: m, triples: test });
  }
  const results = ev.finalize();
  return {
    tasks: results.tasks(),
    mrr: results.get("both.realistic.inverse_harmonic_mean_rank"),
    hits10: results.get("both.realistic.hits_at_10"),
  };
}

function lcg(seed) {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

/** Realistic sampled ranks: K of each task's N - 1 other candidates drawn without replacement, tallied by kind. */
function simulate(tasks, K, seed) {
  const next = lcg(seed);
  const n = tasks.realistic.length;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let above = tasks.optimistic[i] - 1;
    let tied = tasks.pessimistic[i] - tasks.optimistic[i];
    let left = tasks.numCandidates[i] - 1;
    if (K > left) throw new Error(`task ${i} has ${left} other candidates, fewer than K = ${K}`);
    let drawnAbove = 0;
    let drawnTied = 0;
    for (let t = 0; t < K; t++) {
      const u = next() * left;
      if (u < above) {
        drawnAbove++;
        above--;
      } else if (u < above + tied) {
        drawnTied++;
        tied--;
      }
      left--;
    }
    out[i] = 1 + drawnAbove + drawnTied / 2;
  }
  return out;
}

const rows = [];
const result = { reps, ks: KS, dim: D, cases: [] };
for (const name of ["fb15k-237", "wn18rr"]) {
  const ds = loadDataset(name, { datasetDir });
  for (const model of ["baseline", "distmult", "transe-l1"]) {
    const exact = exactRanks(ds, model);
    const meanN = exact.tasks.numCandidates.reduce((a, b) => a + b, 0) / exact.tasks.numCandidates.length;
    const N = Math.round(meanN);
    for (const K of KS) {
      const sums = Object.fromEntries(ESTIMATORS.map((e) => [e, { mrr: 0, hits10: 0 }]));
      let seconds = 0;
      for (let rep = 0; rep < reps; rep++) {
        const ranks = simulate(exact.tasks, K, 1000 * K + rep);
        const t0 = performance.now();
        const est = estimateFromSampledRanks({ ranks, numNegatives: K, numCandidates: N, ks: [10] });
        seconds += (performance.now() - t0) / 1000;
        for (const e of ESTIMATORS) {
          sums[e].mrr += est.values[e].inverse_harmonic_mean_rank.estimate / reps;
          sums[e].hits10 += est.values[e].hits_at_10.estimate / reps;
        }
      }
      const err = (e, m) => sums[e][m] - exact[m];
      result.cases.push({
        dataset: name,
        model,
        K,
        N,
        exact: { mrr: exact.mrr, hits10: exact.hits10 },
        estimates: sums,
      });
      rows.push([
        name,
        model,
        String(K),
        exact.mrr.toFixed(4),
        ...ESTIMATORS.map(
          (e) => `${sums[e].mrr.toFixed(4)} (${err(e, "mrr") >= 0 ? "+" : ""}${err(e, "mrr").toFixed(4)})`,
        ),
        exact.hits10.toFixed(4),
        ...ESTIMATORS.map((e) => `${err(e, "hits10") >= 0 ? "+" : ""}${err(e, "hits10").toFixed(4)}`),
        (seconds / reps).toFixed(2),
      ]);
      console.error(`${name} ${model} K=${K} done`);
    }
  }
}
printTable(
  [
    "dataset",
    "model",
    "K",
    "exact MRR",
    "sampled MRR (error)",
    "minimum-mse (error)",
    "minimum-bias (error)",
    "exact Hits@10",
    "sampled error",
    "minimum-mse error",
    "minimum-bias error",
    "estimate s",
  ],
  rows,
);
console.log(`written ${writeResult("sampled-negatives", result)}`);
