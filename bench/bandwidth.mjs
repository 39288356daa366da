// The machine's read bandwidth, the limit every "% of probe" in these benchmarks is measured against: the addon's
// probe (bandwidthRead: the counting kernels' thread split, aligned SIMD loads, an add per vector and nothing else)
// in every variant (each SIMD level, with plain and with non-temporal loads) on all hardware threads, checked against
// likwid-bench's load kernels (Debian package `likwid`) on the same threads and bytes. Rounds alternate the two, and
// each reports a mean rate over the same number of passes over the buffer (likwid-bench's statistic: -i passes, one
// clock); the medians over rounds and the median of the per-round ratios (the fastest of our variants / the fastest
// of likwid-bench's kernels; lib.mjs probeRead times the fastest variant for every bench) are printed. Without
// likwid-bench the probe alone is measured.
//   node bench/bandwidth.mjs [--bytes 1e9] [--rounds 9] [--passes 20] [--quick]
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";

import { median, printTable, readVariants, root, writeResult } from "./lib.mjs";

const require = createRequire(import.meta.url);
const backend = require(join(root, "dist", "cjs", "backend", "backend.js"));
const addon = backend.nativeAddon();
if (!addon) throw new Error("bandwidth: the native addon is not built (npm run build:native)");
const info = addon.info();

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const quick = args.includes("--quick");
const bytes = arg("--bytes", quick ? 2.5e8 : 1e9);
const rounds = arg("--rounds", quick ? 3 : 9);
const passes = arg("--passes", quick ? 5 : 20);
const threads = info.hardwareThreads;

const buffer = new Float32Array(Math.floor(bytes / 4)).fill(1);
/** The probe's mean rate over `passes` reads of the buffer in one variant (lib.mjs readVariants), GB/s. */
function probe({ level, streaming }) {
  addon.bandwidthRead(buffer, level, threads, streaming); // warm the pool and the pages
  const t0 = performance.now();
  for (let p = 0; p < passes; p++) addon.bandwidthRead(buffer, level, threads, streaming);
  return (passes * buffer.byteLength) / ((performance.now() - t0) * 1e6);
}

const likwidOk = spawnSync("likwid-bench", ["-a"], { encoding: "utf8" });
const kernels =
  likwidOk.status === 0
    ? ["load", "load_sse", "load_avx", "load_avx512", "load_mem"].filter((k) =>
        new RegExp(`^${k} - `, "m").test(likwidOk.stdout),
      )
    : [];
/** likwid-bench's rate for one kernel over the same bytes, threads and passes, GB/s (NaN when it fails). */
function likwid(kernel) {
  const r = spawnSync(
    "likwid-bench",
    ["-t", kernel, "-W", `N:${Math.round(buffer.byteLength / 1e3)}kB:${threads}`, "-i", String(passes)],
    { encoding: "utf8" },
  );
  const m = /MByte\/s:\s+([\d.]+)/.exec(r.stdout ?? "");
  return m ? Number(m[1]) / 1e3 : NaN;
}

const levels = readVariants(addon);
const ours = Object.fromEntries(levels.map((l) => [l.name, []]));
const theirs = Object.fromEntries(kernels.map((k) => [k, []]));
const ratios = [];
console.log(
  `read bandwidth: ${(buffer.byteLength / 1e9).toFixed(2)} GB, ${threads} threads, ${passes} passes a measurement, ` +
    `${rounds} rounds${kernels.length ? "" : " (likwid-bench not found: the probe alone)"}`,
);
for (let r = 0; r < rounds; r++) {
  for (const l of levels) ours[l.name].push(probe(l));
  for (const k of kernels) theirs[k].push(likwid(k));
  if (kernels.length) {
    const theirBest = Math.max(...kernels.map((k) => theirs[k][r]).filter((x) => !Number.isNaN(x)));
    ratios.push(Math.max(...levels.map((l) => ours[l.name][r])) / theirBest);
  }
}
const rows = [
  ...levels.map((l) => [`probe ${l.name}`, median(ours[l.name])]),
  ...kernels.map((k) => [`likwid-bench ${k}`, median(theirs[k])]),
];
printTable(
  ["read", "median GB/s", "range"],
  rows.map(([name, gbps]) => {
    const series = name.startsWith("probe ") ? ours[name.slice(6)] : theirs[name.split(" ")[1]];
    return [name, gbps.toFixed(2), `${Math.min(...series).toFixed(1)}-${Math.max(...series).toFixed(1)}`];
  }),
);
const result = {
  bytes: buffer.byteLength,
  threads,
  passes,
  rounds,
  probe: Object.fromEntries(levels.map((l) => [l.name, median(ours[l.name])])),
  likwid: Object.fromEntries(kernels.map((k) => [k, median(theirs[k])])),
};
if (ratios.length) {
  const bestKernel = kernels.reduce((a, k) => (median(theirs[k]) > median(theirs[a]) ? k : a), kernels[0]);
  const bestLevel = levels.reduce((a, l) => (median(ours[l.name]) > median(ours[a.name]) ? l : a), levels[0]);
  result.ratioToLikwidBest = median(ratios);
  result.likwidBestByMedian = bestKernel;
  result.probeBestByMedian = bestLevel.name;
  console.log(
    `\nheadline: the probe (the fastest of its variants, ${threads} threads) reads at ` +
      `${(100 * median(ratios)).toFixed(1)}% of likwid-bench's best load kernel in the same round (median of ` +
      `${ratios.length} rounds; range ${(100 * Math.min(...ratios)).toFixed(1)}-${(100 * Math.max(...ratios)).toFixed(1)}%); ` +
      `by medians, ${bestLevel.name} ${median(ours[bestLevel.name]).toFixed(2)} GB/s against ${bestKernel} ` +
      `${median(theirs[bestKernel]).toFixed(2)} GB/s`,
  );
}
writeResult("bandwidth", result);
