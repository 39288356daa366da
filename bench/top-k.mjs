// Top-k predictions against ranking: the same queries of a random DistMult model ranked (rankEmbeddings, unfiltered,
// every entity a candidate) and listed top-10 (predictTopK, raw), pair by pair back to back on the same threads,
// reported as the median of the pairs' time ratios (the machine's speed drifts; ARCHITECTURE.md "What not to do").
// Alone: npm run build:ts && node bench/top-k.mjs [--entities N] [--rows R] [--dim D] [--k K] [--pairs P] [--quick].
// Writes bench/results/top-k.json.
import { createRequire } from "node:module";

import { seededFloats as rnd, writeResult } from "./lib.mjs";

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const flagValue = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const n = flagValue("--entities", quick ? 50_000 : 500_000);
const rows = flagValue("--rows", quick ? 256 : 2048);
const dim = flagValue("--dim", 100);
const k = flagValue("--k", 10);
const pairs = flagValue("--pairs", quick ? 3 : 5);

const require = createRequire(import.meta.url);
const { kernels } = require("../dist/cjs/backend/backend.js");
const { EmbeddingModel, predictTopK } = require("../dist/cjs/index.js");

const nr = 50;
const model = new EmbeddingModel({
  interaction: "distmult",
  entityEmbeddings: { data: rnd(n * dim, 1), shape: [n, dim] },
  relationEmbeddings: { data: rnd(nr * dim, 2), shape: [nr, dim] },
});
const triples = new Int32Array(3 * rows);
for (let i = 0; i < rows; i++) {
  triples[3 * i] = (i * 7919) % n;
  triples[3 * i + 1] = i % nr;
  triples[3 * i + 2] = (i * 104729 + 13) % n;
}
const anchor = Int32Array.from({ length: rows }, (_, i) => triples[3 * i]);
const relation = Int32Array.from({ length: rows }, (_, i) => triples[3 * i + 1]);
const truth = Int32Array.from({ length: rows }, (_, i) => triples[3 * i + 2]);
const kern = kernels();

const seconds = (f) => {
  const t0 = process.hrtime.bigint();
  f();
  return Number(process.hrtime.bigint() - t0) / 1e9;
};
const rank = () => kern.rankEmbeddings(model.job("tail", anchor, relation, truth), new Float64Array(5 * rows + 2));
const top = () => predictTopK(model, { triples, k, side: "tail", screen: "off" });
rank();
top();
const ratios = [];
const rankTimes = [];
const topTimes = [];
for (let p = 0; p < pairs; p++) {
  const r = seconds(rank);
  const t = seconds(top);
  rankTimes.push(r);
  topTimes.push(t);
  ratios.push(t / r);
}
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const result = {
  backend: kern.backend,
  simd: kern.simd,
  threads: kern.threads,
  entities: n,
  rows,
  dim,
  k,
  rankSeconds: median(rankTimes),
  topKSeconds: median(topTimes),
  topKOverRank: median(ratios),
};
console.log(
  `top-${k} vs ranking, DistMult d=${dim}, ${rows} tail queries x ${n} entities (${kern.backend} ${kern.simd}, ` +
    `${kern.threads} threads): ranking ${result.rankSeconds.toFixed(3)} s, top-${k} ${result.topKSeconds.toFixed(3)} s, ` +
    `ratio ${result.topKOverRank.toFixed(2)} (median of ${pairs} back-to-back pairs)`,
);
writeResult("top-k", result);
