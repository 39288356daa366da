/**
 * PyTorch-BigGraph's scores: the native pbgCompare (native/core/pbg.cpp, candidates in the vector lanes) against the
 * fallback's loop (src/fallback/pbg.ts), on one batch of queries against a partition of candidates, with the machine's
 * own limit measured in the same run (the float32 FMA probe; a float64 score is a multiply and an add, so its limit is
 * a quarter of the probe's multiply-adds where the two share the FMA ports and a half where adds have ports of their
 * own). Every native result is checked equal to the fallback's bit for bit before it is timed.
 *   node bench/pbg-scores.mjs [--dim 100] [--queries 256] [--candidates 40000] [--comparator dot] [--rounds 5]
 */
import { createRequire } from "node:module";
import { join } from "node:path";

import { median, root, seededFloats, takeOption } from "./lib.mjs";

const require = createRequire(import.meta.url);
const backend = require(join(root, "dist", "cjs", "backend", "backend.js"));
const { tsKernels } = require(join(root, "dist", "cjs", "fallback", "index.js"));

const args = process.argv.slice(2);
const dim = Number(takeOption(args, "--dim", "100"));
const numQueries = Number(takeOption(args, "--queries", "256"));
const numCandidates = Number(takeOption(args, "--candidates", "40000"));
const comparator = takeOption(args, "--comparator", "dot");
const rounds = Number(takeOption(args, "--rounds", "5"));

const addon = backend.nativeAddon();
if (!addon) {
  console.error("pbg-scores: the native addon is not loaded; build it with `npm run build:native`.");
  process.exit(1);
}
const info = addon.info();
const hw = info.hardwareThreads;
const best = info.simdLevels.at(-1);

const scoring = { comparator, bias: true, dimension: dim };
const queries = Float64Array.from(seededFloats(numQueries * dim, 1));
const candidates = Float64Array.from(seededFloats(numCandidates * dim, 2));
const input = {
  scoring,
  queries,
  numQueries,
  candidates,
  numCandidates,
  queryFirst: true,
  outStride: numCandidates,
  outOffset: 0,
};
const pairs = numQueries * numCandidates;
const macs = pairs * (dim - 1);

function seconds(fn) {
  const t0 = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

const want = new Float64Array(pairs);
// The fallback on a slice of the queries (it is slow): its rate per pair is what is compared.
const tsQueries = Math.max(1, Math.floor(numQueries / 16));
const tsInput = { ...input, queries: queries.subarray(0, tsQueries * dim), numQueries: tsQueries };
const tsTimes = [];
for (let r = 0; r < Math.min(rounds, 3); r++)
  tsTimes.push(seconds(() => tsKernels.pbgCompare(tsInput, want)) / tsQueries);
tsKernels.pbgCompare(input, want);

const rows = [];
for (const level of info.simdLevels) {
  for (const threads of [...new Set([1, hw])]) {
    const k = backend.nativeKernels(addon, level.name, threads);
    const got = new Float64Array(pairs);
    k.pbgCompare(input, got);
    for (let i = 0; i < pairs; i++) {
      if (!Object.is(got[i], want[i]))
        throw new Error(`${level.name}/t${threads}: pair ${i} differs from the fallback`);
    }
    const times = [];
    for (let r = 0; r < rounds; r++) times.push(seconds(() => k.pbgCompare(input, got)));
    const probeTimes = [];
    let probeMacs = 0;
    for (let r = 0; r < 3; r++) {
      const t0 = process.hrtime.bigint();
      probeMacs = addon.fmaProbe(best.level, threads, 4e6)[0];
      probeTimes.push(Number(process.hrtime.bigint() - t0) / 1e9);
    }
    const rate = macs / median(times);
    const probe = probeMacs / median(probeTimes);
    rows.push({
      level: level.name,
      threads,
      seconds: median(times),
      rate,
      probe,
      speedup: (median(tsTimes) * numQueries) / median(times),
    });
  }
}

console.log(
  `pbgCompare ${comparator}+bias, d = ${dim}: ${numQueries} queries x ${numCandidates} candidates (${(macs / 1e9).toFixed(2)} G multiply-adds), ${rounds} rounds, medians`,
);
console.log(`fallback: ${(macs / numQueries / median(tsTimes) / 1e9).toFixed(3)} G multiply-adds/s (1 thread)`);
for (const r of rows) {
  console.log(
    `native ${r.level.padEnd(6)} t${r.threads}: ${(r.rate / 1e9).toFixed(2)} G multiply-adds/s, ${r.speedup.toFixed(1)}x the fallback, ` +
      `${((100 * r.rate) / (r.probe / 4)).toFixed(0)} % of probe/4, ${((100 * r.rate) / (r.probe / 2)).toFixed(0)} % of probe/2 (float32 FMA probe ${(r.probe / 1e9).toFixed(1)} G/s at ${best.name}, t${r.threads})`,
  );
}
