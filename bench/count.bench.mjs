// Dense rank counting (greater / equal / NaN per row) on a large float32 matrix: native at every SIMD level and
// thread count vs the TS fallback, each printed as a fraction of the memory-bandwidth probe (a plain streaming
// read of the same buffer with the same threads) measured in the same run.
//   node bench/count.bench.mjs [--quick] [--mb 512]
import { createRequire } from "node:module";
import { join } from "node:path";

import { fillRandom, pairedRatio, printTable, readVariants, root, runCases, writeResult } from "./lib.mjs";

const require = createRequire(import.meta.url);
const backend = require(join(root, "dist", "cjs", "backend", "backend.js"));
const { tsKernels } = require(join(root, "dist", "cjs", "fallback", "index.js"));

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const mbArg = args.indexOf("--mb");
const megabytes = mbArg >= 0 ? Number(args[mbArg + 1]) : quick ? 128 : 512;
const cols = 16384;
const rows = Math.floor((megabytes * 2 ** 20) / 4 / cols);
const bytes = rows * cols * 4;

const addon = backend.nativeAddon();
if (!addon) {
  console.error("count bench: the native addon is not loaded; build it with `npm run build:native`.");
  process.exit(1);
}
const info = addon.info();
const hw = info.hardwareThreads;
const threadCounts = [...new Set([1, hw])];

console.log(
  `count: ${rows} x ${cols} float32 = ${(bytes / 2 ** 20).toFixed(0)} MiB, threads ${threadCounts.join("/")}`,
);
const scores = fillRandom(new Float32Array(rows * cols), 12345);
const thresholds = new Float32Array(rows);
for (let r = 0; r < rows; r++) thresholds[r] = scores[r * cols + (r % cols)];
const out = { greater: new Float64Array(rows), equal: new Float64Array(rows), nan: new Float64Array(rows) };

const cases = [];
for (const level of info.simdLevels) {
  for (const t of threadCounts) {
    // Every probe variant of this level (lib.mjs readVariants: plain, and non-temporal where the level has such
    // loads): the best probe is the best of all of them.
    for (const v of readVariants(addon).filter((v) => v.level === level.level)) {
      const name = `probe ${v.streaming ? `${level.name}-nt` : level.name} t${t}`;
      cases.push([name, () => addon.bandwidthRead(scores, v.level, t, v.streaming)]);
    }
    const k = backend.nativeKernels(addon, level.name, t);
    cases.push([`native ${level.name} t${t}`, () => k.countScores(scores, cols, thresholds, out, t)]);
  }
}
cases.push(["ts fallback", () => tsKernels.countScores(scores, cols, thresholds, out), { minSamples: 3, maxTime: 1 }]);

const results = await runCases(cases, {
  minSamples: quick ? 5 : 9,
  maxTime: quick ? 1 : 3,
  onCase: (name, r) => console.error(`  ${name}: ${(r.median * 1e3).toFixed(2)} ms ±${r.spread.toFixed(1)}%`),
});

const gbps = (s) => bytes / s / 1e9;
const bestProbe = Math.min(
  ...Object.entries(results)
    .filter(([n]) => n.startsWith("probe"))
    .map(([, r]) => r.median),
);
const best = info.simdLevels[info.simdLevels.length - 1].name;
const bestNativeName = `native ${best} t${hw}`;
const tsTime = results["ts fallback"].median;
const rows_ = Object.entries(results).map(([name, r]) => {
  const probeName = name.startsWith("native") ? name.replace("native", "probe") : null;
  return [
    name,
    (r.median * 1e3).toFixed(2),
    `±${r.spread.toFixed(1)}%`,
    gbps(r.median).toFixed(2),
    probeName ? `${((100 * results[probeName].median) / r.median).toFixed(1)}%` : "",
    `${((100 * bestProbe) / r.median).toFixed(1)}%`,
    (tsTime / r.median).toFixed(1),
  ];
});
printTable(["case", "median ms", "spread", "GB/s", "% probe (same cfg)", "% best probe", "x ts"], rows_);
// Headline: the fastest probe configuration and the best native kernel, timed alternately in pairs.
const bestProbeName = Object.entries(results)
  .filter(([n]) => n.startsWith("probe"))
  .sort((a, b) => a[1].median - b[1].median)[0][0];
const [, probeVariant, probeT] = bestProbeName.split(" ");
const probeStreaming = probeVariant.endsWith("-nt");
const probeLevel = info.simdLevels.find((l) => l.name === probeVariant.replace(/-nt$/, "")).level;
const probeThreads = Number(probeT.slice(1));
const bestKernels = backend.nativeKernels(addon, best, hw);
const paired = pairedRatio(
  () => addon.bandwidthRead(scores, probeLevel, probeThreads, probeStreaming),
  () => bestKernels.countScores(scores, cols, thresholds, out, hw),
  quick ? 9 : 21,
);
const headline = {
  bytes,
  bestNative: bestNativeName,
  bestProbe: bestProbeName,
  bestNativeMs: results[bestNativeName].median * 1e3,
  bestProbeMs: bestProbe * 1e3,
  fractionOfBestProbe: paired.median,
  fractionOfBestProbeQuartiles: [paired.q1, paired.q3],
  fractionOfBestProbeSequential: bestProbe / results[bestNativeName].median,
  speedupVsTs: tsTime / results[bestNativeName].median,
};
console.log(
  `\nheadline: ${bestNativeName} reaches ${(100 * paired.median).toFixed(1)}% of the best bandwidth probe ` +
    `(${bestProbeName}, ${gbps(bestProbe).toFixed(2)} GB/s; paired median of ${paired.reps}, quartiles ` +
    `${(100 * paired.q1).toFixed(1)}-${(100 * paired.q3).toFixed(1)}%) and is ${headline.speedupVsTs.toFixed(1)}x ` +
    `the TS fallback`,
);
const file = writeResult("count", { rows, cols, results, headline });
console.log(`wrote ${file}`);
