// Two or more builds of the addon compared in one process, for changes worth a few percent on a bus whose speed
// swings within minutes (BENCHMARKS.md): every build is loaded side by side (each its own thread pool), and each
// round times the read probe once (the first build's, in its fastest variant: lib.mjs probeRead) and then, in an order
// that rotates from round to round, every build's dense count (countScores, the rows' own true scores as thresholds)
// and filtered pass (FilterIndex.rankTriples, both sides) over the FB15k-237 test set's 80 batches of 512 score rows
// (the batches of bench/fb15k-levels.mjs). Prints the probe and, per build, the medians of its rounds' dense and
// filtered ratios to the probe and of its filtered time over the first build's in the same round.
//   node bench/builds-ab.mjs [--rounds 11] [--level avx512] [--datasets DIR] base.node other.node ...
// Build a variant with e.g. `CXXFLAGS=-DSOMETHING npx node-gyp rebuild` and copy build/Release/kgrank.node away.
import { createRequire } from "node:module";
import { join, resolve } from "node:path";

import { fb15kTestBatches, median, probeRead, probeVariant, root, takeOption } from "./lib.mjs";

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const rounds = Number(takeOption(args, "--rounds", "11"));
const levelName = takeOption(args, "--level", "avx512");
const datasetsDir = resolve(takeOption(args, "--datasets", resolve(root, "..", "shared", "datasets")));
const builds = args.map((p) => resolve(p));
if (builds.length < 2 || !Number.isInteger(rounds) || rounds < 1) {
  console.error("usage: node bench/builds-ab.mjs [--rounds N] [--level NAME] [--datasets DIR] a.node b.node ...");
  process.exit(2);
}
const { loadDataset } = require(join(root, "dist", "cjs", "index.js"));
const addons = builds.map((p) => require(p));
const level = addons[0].info().simdLevels.find((l) => l.name === levelName);
if (!level)
  throw new Error(`builds-ab: no SIMD level ${levelName} here (${JSON.stringify(addons[0].info().simdLevels)})`);
const threads = addons[0].info().hardwareThreads;

const d = loadDataset("fb15k-237", { datasetDir: datasetsDir });
const N = d.numEntities;
const fb15k = fb15kTestBatches(d.splits.test, N);
const batches = fb15k.batches.map((b, i) => {
  const thresholds = fb15k.thresholds[i];
  const r = thresholds.length;
  const out = { keys: new Int32Array(3 * r), th: new Float32Array(r), ranks: new Float64Array(6 * r) };
  return {
    ...b,
    thresholds,
    out: { ...out, greater: new Float64Array(r), equal: new Float64Array(r), nan: new Float64Array(r) },
  };
});
const filterTriples = [d.splits.train, d.splits.valid, d.splits.test];
const indexes = addons.map((a) => ({
  head: new a.FilterIndex({ triples: filterTriples, numEntities: N, numRelations: d.numRelations, side: 0, threads }),
  tail: new a.FilterIndex({ triples: filterTriples, numEntities: N, numRelations: d.numRelations, side: 1, threads }),
}));
const scoreBuffers = batches.map((b) => b.scores);
const variant = probeVariant(addons[0], scoreBuffers, threads);
const probe = () => probeRead(addons[0], scoreBuffers, threads);

const opt = { simd: level.level, threads };
const probes = [];
const ratios = builds.map(() => ({ dense: [], filtered: [] }));
for (let round = 0; round < rounds; round++) {
  const p = probe();
  probes.push(p);
  for (let k = 0; k < builds.length; k++) {
    const j = (k + round) % builds.length;
    let t0 = performance.now();
    for (const b of batches) {
      const o = b.out;
      const { greater, equal, nan } = o;
      addons[j].countScores({ scores: b.scores, numColumns: N, thresholds: b.thresholds, greater, equal, nan, ...opt });
    }
    ratios[j].dense.push((performance.now() - t0) / p);
    t0 = performance.now();
    for (const b of batches) {
      const o = b.out;
      const { scores, triples } = b;
      indexes[j][b.side].rankTriples({ scores, triples, keys: o.keys, thresholds: o.th, out: o.ranks, ...opt });
    }
    ratios[j].filtered.push((performance.now() - t0) / p);
  }
}
console.log(`probe ${median(probes).toFixed(1)} ms (${variant.name}), ${rounds} rounds at ${levelName}:`);
builds.forEach((b, j) => {
  const r = ratios[j];
  const vsFirst =
    j === 0 ? "" : `, ${median(r.filtered.map((f, i) => f / ratios[0].filtered[i])).toFixed(3)}x the first's`;
  console.log(
    `  ${b}: dense ${(100 / median(r.dense)).toFixed(1)} % of the probe, filtered ${median(r.filtered).toFixed(3)}x` +
      vsFirst,
  );
});
