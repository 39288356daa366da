// One evaluation, printed as JSON, for test/determinism.test.ts: run under different KGRANK_BACKEND / KGRANK_SIMD /
// KGRANK_THREADS settings, the outputs must agree (bit for bit across native settings, 1e-12 against the fallback).
"use strict";
const path = require("node:path");
const { readFileSync } = require("node:fs");
const kg = require(path.join(__dirname, "..", "dist", "cjs", "index.js"));

const dir = path.join(__dirname, "..", "data", "umls");
const read = (s) =>
  readFileSync(path.join(dir, `${s}.tsv`), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => l.split("\t"));
const raw = { train: read("train"), valid: read("valid"), test: read("test") };
const ents = [...new Set(raw.train.flatMap(([h, , t]) => [h, t]))].sort();
const rels = [...new Set(raw.train.map(([, r]) => r))].sort();
const e = new Map(ents.map((x, i) => [x, i]));
const r = new Map(rels.map((x, i) => [x, i]));
const map = (rows) => Int32Array.from(rows.flatMap(([h, rr, t]) => [e.get(h), r.get(rr), e.get(t)]));
const train = map(raw.train),
  valid = map(raw.valid),
  test = map(raw.test);
const N = ents.length;
let x = 12345;
const rnd = () => {
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  return (x >>> 0) / 4294967296;
};
const rows = test.length / 3;
const ev = new kg.RankEvaluator({ numEntities: N, filterTriples: [train, valid, test] });
for (const side of ["head", "tail"]) {
  const s = new Float32Array(rows * N);
  for (let i = 0; i < s.length; i++) s[i] = rnd() < 0.01 ? NaN : Math.floor(rnd() * 50) / 7;
  for (let i = 0; i < rows; i++) {
    const j = i * N + (side === "tail" ? test[3 * i + 2] : test[3 * i]);
    if (Number.isNaN(s[j])) s[j] = 1;
  }
  ev.addSync({ triples: test, side, scores: s });
}
const ranks = {};
for (const side of ["head", "tail"]) {
  const c = ev.taskColumns(side);
  ranks[side] = { realistic: Array.from(c.realistic), numCandidates: Array.from(c.numCandidates) };
}
const res = ev.finalize({ bootstrap: { samples: 64, seed: 3 } });
const nc = kg.generateNumCandidatesAndRanks(20000, 5000, { seed: 4 });
const est = kg.getMetric("hmr").estimate({ numCandidates: nc.numCandidates, numSamples: 200, seed: 5 });
process.stdout.write(
  JSON.stringify({
    backend: kg.backendInfo(),
    ranks,
    values: res.toFlatObject(),
    intervals: res.intervals(),
    estimate: est,
  }),
);
