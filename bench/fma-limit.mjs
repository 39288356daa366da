// The float32 path of ranking from embeddings against the FMA probe, at a small table and at WikiKG2 size, in one run:
// rounds of (FMA probe, rankEmbeddings at 20,000 entities, rankEmbeddings at 2,500,604 entities), each ranking timed
// against the probe of its own round, and the median of the rounds' ratios printed (the machine may be shared: a
// ratio to a probe taken seconds apart is steadier than either time). The calls are what `kgrank evaluate` makes from
// a model: 512 rows per call (src/run/evaluate/model.ts MODEL_ROWS), one side, every entity, no job control (the CLI
// passes neither a signal nor a progress callback to addModel), optionally filtered (--exclusions E known answers per
// row, scored one by one by the same code and taken out, as the filter does). Seeded uniform embeddings
// (the values do not change the float32 path's cost), DistMult (and ComplEx with --complex) at d = 100.
//   npm run build:ts && node bench/fma-limit.mjs [--rounds R] [--rows 512] [--dim 100] [--exclusions E] [--complex]
//     [--entities N] [--threads T] [--simd avx512|avx2]
import { execSync } from "node:child_process";
import { createRequire } from "node:module";
import { loadavg } from "node:os";

import { seededFloats, writeResult } from "./lib.mjs";

const require = createRequire(import.meta.url);
const { nativeAddon, kernels } = require("../dist/cjs/backend/backend.js");
const { EmbeddingModel } = require("../dist/cjs/index.js");
const { embeddingArgs } = require("../dist/cjs/contract/addon.js");

const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const rounds = Number(flag("--rounds", "5"));
const rows = Number(flag("--rows", "512"));
const dim = Number(flag("--dim", "100"));
const exclusions = Number(flag("--exclusions", "0"));
const big = Number(flag("--entities", "2500604"));
const interaction = args.includes("--complex") ? "complex" : "distmult";
const addon = nativeAddon();
if (!addon) throw new Error("the native addon is needed for this benchmark");
const k = kernels();
const simd = flag("--simd", k.simd);
const level = { scalar: 0, avx2: 1, avx512: 2, neon: 3 }[simd];
const threads = Number(flag("--threads", String(k.threads)));
// A complex model's multiply-adds per (query, entity): 4 per complex dimension as bench/embeddings.mjs counts them
// would overstate the kernel's work; the kernel does dim fused multiply-adds per pair for either (the query is formed
// once per row), so both count dim.
const maddsPerPair = dim;

// Wall and CPU seconds of fn() (CPU: this process's user + system time, every thread): on a shared machine a rate
// per CPU-second counts only the time the threads ran, so it is steadier than a rate per wall second.
function timed(fn) {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const value = fn();
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const c = process.cpuUsage(c0);
  return { value, wall, cpu: (c.user + c.system) / 1e6 };
}

function probe() {
  const r = timed(() => addon.fmaProbe(level, threads, 4e6)[0]);
  return { wall: r.value / r.wall, cpu: r.value / r.cpu };
}

function job(n) {
  const model = new EmbeddingModel({
    interaction,
    entityEmbeddings: { data: seededFloats(n * dim, 1), shape: [n, dim] },
    relationEmbeddings: { data: seededFloats(16 * dim, 2), shape: [16, dim] },
    ...(interaction === "complex" ? { complexLayout: "halves" } : {}),
  });
  const anchor = Int32Array.from({ length: rows }, (_, i) => (i * 7919) % n);
  const rel = Int32Array.from({ length: rows }, (_, i) => i % 16);
  const truth = Int32Array.from({ length: rows }, (_, i) => (i * 104729 + 17) % n);
  const extra = {};
  if (exclusions > 0) {
    const offsets = new Uint32Array(rows + 1);
    const ids = new Int32Array(rows * exclusions);
    for (let i = 0; i < rows; i++) {
      offsets[i + 1] = (i + 1) * exclusions;
      for (let j = 0; j < exclusions; j++) ids[i * exclusions + j] = ((i * 31 + j * 2654435761) % n) >>> 0;
    }
    extra.excludeOffsets = offsets;
    extra.excludeIds = ids;
  }
  return { j: model.job("tail", anchor, rel, truth, extra), n };
}

function time(jb) {
  const out = new Float64Array(5 * rows + 2);
  const args = { ...embeddingArgs(jb.j, level, threads), out };
  const r = timed(() => addon.rankEmbeddings(args));
  const madds = rows * jb.n * maddsPerPair;
  return { s: r.wall, rate: madds / r.wall, cpuRate: madds / r.cpu, checksum: out.reduce((a, b) => a + b, 0) };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const small = job(20000);
const large = job(big);
time(small);
const sums = { small: time(small).checksum, large: time(large).checksum };
const rec = { small: [], large: [], smallCpu: [], largeCpu: [], probe: [], probeCpu: [], loads: [] };
const pct = (x) => `${(100 * x).toFixed(1)} %`;
for (let r = 0; r < rounds; r++) {
  // The probe before and after the rankings, the faster of the two (a neighbour's burst slows one of them).
  const p1 = probe();
  const a = time(small);
  const b = time(large);
  const p2 = probe();
  const pr = Math.max(p1.wall, p2.wall);
  const pc = Math.max(p1.cpu, p2.cpu);
  if (a.checksum !== sums.small || b.checksum !== sums.large) throw new Error("counts changed between rounds");
  rec.probe.push(pr);
  rec.probeCpu.push(pc);
  rec.small.push(a.rate / pr);
  rec.large.push(b.rate / pr);
  rec.smallCpu.push(a.cpuRate / pc);
  rec.largeCpu.push(b.cpuRate / pc);
  rec.loads.push(loadavg()[0]);
  console.log(
    `round ${r + 1}: probe ${(pr / 1e9).toFixed(1)} G/s; 20,000 entities ${(a.s * 1e3).toFixed(1)} ms = ` +
      `${pct(a.rate / pr)} (per CPU-second ${pct(a.cpuRate / pc)}); ${big} entities ${b.s.toFixed(3)} s = ` +
      `${pct(b.rate / pr)} (per CPU-second ${pct(b.cpuRate / pc)}) (load ${loadavg()[0].toFixed(2)})`,
  );
}
const result = {
  interaction,
  simd,
  threads,
  rows,
  dim,
  exclusions,
  entities: big,
  probeMedian: median(rec.probe),
  smallRatioMedian: median(rec.small),
  largeRatioMedian: median(rec.large),
  smallCpuRatioMedian: median(rec.smallCpu),
  largeCpuRatioMedian: median(rec.largeCpu),
  rounds: rec,
  uptime: execSync("uptime").toString().trim(),
};
console.log(
  `${interaction} d = ${dim}, ${rows} rows per call, ${simd}, ${threads} threads, ${exclusions} exclusions per row: ` +
    `median of ${rounds} rounds: 20,000 entities ${pct(result.smallRatioMedian)} of the FMA probe ` +
    `(per CPU-second ${pct(result.smallCpuRatioMedian)}), ${big} entities ${pct(result.largeRatioMedian)} ` +
    `(per CPU-second ${pct(result.largeCpuRatioMedian)}); probe ${(result.probeMedian / 1e9).toFixed(1)} G/s; ` +
    `${result.uptime}`,
);
writeResult(`fma-limit-${interaction}-${simd}`, result);
