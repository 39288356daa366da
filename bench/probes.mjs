// The two read probes side by side, and the kernels against each: the addon's probe (lib.mjs probeRead:
// bandwidthRead, the counting kernels' thread split in 1 MiB pieces on the process's pool, its fastest SIMD variant
// here) and a plain OpenMP sum of a float array of the same size (a C program written below, compiled into a
// temporary folder with `gcc -O3 -march=native -fopenmp` and run as its own process on the same number of threads:
// `#pragma omp parallel for simd reduction` over static halves, the same loop in 1 MiB pieces, and four running sums
// per thread). Each round runs, in an order rotated from round to round: the OpenMP program (`--passes` passes of
// each of its loops, interleaved), and `--passes` times each of the addon's probe, `computeRanksSync` and
// `countScoresSync` on 512 x 262,144 float32 scores (512 MiB; 512 x 262,144 x 4 bytes), and with `--fb15k` the
// FB15k-237 filtered pass (RankEvaluator.addSync over the test set's 80 batches, both sides, as
// bench/fb15k-levels.mjs feeds it; each probe's time for those bytes from its rate in the round). Per round each
// figure is the median of its passes (and the best, the statistic a best-of-N probe reports); the ratios are per
// round, and the tables give their medians and ranges over the rounds. The probe with the highest median rate is the
// denominator of the last lines.
//   node bench/probes.mjs [--rounds 7] [--passes 7] [--mib 512] [--threads T] [--fb15k] [--datasets DIR] [--quick]
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as os from "node:os";
import { join, resolve } from "node:path";

import {
  fb15kTestBatches,
  fillRandom,
  median,
  printTable,
  probeRead,
  probeVariant,
  root,
  writeResult,
} from "./lib.mjs";

const require = createRequire(import.meta.url);
const kg = require(join(root, "dist", "cjs", "index.js"));
const backend = require(join(root, "dist", "cjs", "backend", "backend.js"));
const addon = backend.nativeAddon();
if (!addon) {
  console.error("probes: the native addon is not built (npm run build:native)");
  process.exit(1);
}

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const quick = args.includes("--quick");
const rounds = Number(option("--rounds", quick ? 2 : 7));
const passes = Number(option("--passes", quick ? 3 : 7));
const mib = Number(option("--mib", quick ? 64 : 512));
const threads = Number(option("--threads", addon.info().hardwareThreads));
const withFb15k = args.includes("--fb15k");
const datasetsDir = resolve(option("--datasets", join(root, "..", "shared", "datasets")));
for (const [name, v] of [
  ["--rounds", rounds],
  ["--passes", passes],
  ["--mib", mib],
  ["--threads", threads],
]) {
  if (!Number.isInteger(v) || v < 1) {
    console.error(`probes: ${name} must be a positive integer, got ${v}`);
    process.exit(2);
  }
}

// ---- the OpenMP sum -------------------------------------------------------------------------------------------
// Allocates and first-touches its own array (the same threads and static split that then read it), then times
// `passes` rounds of both loops, alternating them, with omp_get_wtime; prints one JSON line of seconds per pass.
const source = String.raw`
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

/* The plain sum: static halves, one running sum per thread (a vector of them: omp simd). */
static float sum_static(const float *a, long n) {
  float s = 0.0f;
#pragma omp parallel for simd reduction(+ : s) schedule(static)
  for (long i = 0; i < n; i++) s += a[i];
  return s;
}

/* The same loop handed out in 1 MiB pieces, as the addon's pool splits its work. */
static float sum_dynamic(const float *a, long n) {
  float s = 0.0f;
#pragma omp parallel for simd reduction(+ : s) schedule(dynamic, 262144)
  for (long i = 0; i < n; i++) s += a[i];
  return s;
}

/* Four running sums per thread: more adds in flight. */
static float sum_four(const float *a, long n) {
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
#pragma omp parallel for simd reduction(+ : s0, s1, s2, s3) schedule(static)
  for (long i = 0; i < n; i += 4) {
    s0 += a[i];
    s1 += a[i + 1];
    s2 += a[i + 2];
    s3 += a[i + 3];
  }
  return s0 + s1 + s2 + s3;
}

typedef float (*loop)(const float *, long);

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  long n = atol(argv[1]) & ~15L;
  int passes = atoi(argv[2]);
  float *a = aligned_alloc(64, (size_t)n * sizeof(float));
  if (!a) return 3;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) a[i] = (float)(i & 1023) * (1.0f / 1024.0f);
  const char *names[3] = {"static", "dynamic", "four"};
  loop loops[3] = {sum_static, sum_dynamic, sum_four};
  double sink = 0.0, t[3][64];
  if (passes > 64) passes = 64;
  for (int k = 0; k < 3; k++) sink += loops[k](a, n);
  /* Passes of the three loops interleaved, so that each sees the same minutes. */
  for (int p = 0; p < passes; p++) {
    for (int k = 0; k < 3; k++) {
      double t0 = omp_get_wtime();
      sink += loops[k](a, n);
      t[k][p] = omp_get_wtime() - t0;
    }
  }
  printf("{\"threads\":%d", omp_get_max_threads());
  for (int k = 0; k < 3; k++) {
    printf(",\"%s\":[", names[k]);
    for (int p = 0; p < passes; p++) printf("%s%.9f", p ? "," : "", t[k][p]);
    printf("]");
  }
  printf(",\"sink\":%g}\n", sink);
  free(a);
  return 0;
}
`;

const tmp = mkdtempSync(join(os.tmpdir(), "kgrank-probes-"));
process.on("exit", () => rmSync(tmp, { recursive: true, force: true }));
writeFileSync(join(tmp, "sum.c"), source);
const compiled = spawnSync("gcc", ["-O3", "-march=native", "-fopenmp", "-o", join(tmp, "sum"), join(tmp, "sum.c")], {
  encoding: "utf8",
});
if (compiled.status !== 0) {
  console.error(
    `probes: compiling the OpenMP sum failed (needs gcc with OpenMP: Debian's gcc): ${compiled.error?.message ?? compiled.stderr}`,
  );
  process.exit(1);
}

// ---- the inputs ------------------------------------------------------------------------------------------------
const cols = 262_144;
const rows = Math.max(1, Math.floor((mib * 2 ** 20) / 4 / cols));
const floats = rows * cols;
const bytes = 4 * floats;
const scores = fillRandom(new Float32Array(floats), 7);
const trueIndices = Int32Array.from({ length: rows }, (_, r) => (r * 7919) % cols);
const thresholds = Float32Array.from({ length: rows }, (_, r) => scores[r * cols + trueIndices[r]]);
const probeBuffers = [scores];
const variant = probeVariant(addon, probeBuffers, threads);

let fb = null;
if (withFb15k) {
  let d;
  try {
    d = kg.loadDataset("fb15k-237", { datasetDir: datasetsDir });
  } catch (e) {
    console.error(`probes: --fb15k needs FB15k-237 under ${datasetsDir} (or --datasets DIR): ${e.message}`);
    process.exit(1);
  }
  const { batches } = fb15kTestBatches(d.splits.test, d.numEntities);
  const filterTriples = [d.splits.train, d.splits.valid, d.splits.test];
  fb = {
    batches,
    bytes: batches.reduce((s, b) => s + b.scores.byteLength, 0),
    evaluator: () => new kg.RankEvaluator({ numEntities: d.numEntities, filterTriples }),
  };
}

/** Median and best (smallest) of `passes` timed calls of fn, in seconds. */
function timed(fn, setup) {
  const ts = [];
  for (let p = 0; p < passes; p++) {
    const arg = setup?.();
    const t0 = performance.now();
    fn(arg);
    ts.push((performance.now() - t0) / 1e3);
  }
  return { median: median(ts), best: Math.min(...ts) };
}

function openmp() {
  const r = spawnSync(join(tmp, "sum"), [String(floats), String(passes)], {
    encoding: "utf8",
    env: { ...process.env, OMP_NUM_THREADS: String(threads) },
  });
  if (r.status !== 0) throw new Error(`the OpenMP sum failed: status ${r.status} ${r.stderr}`);
  const j = JSON.parse(r.stdout);
  const stat = (ts) => ({ median: median(ts), best: Math.min(...ts) });
  return { static: stat(j.static), dynamic: stat(j.dynamic), four: stat(j.four) };
}

// Warm-up: pages, the pool, the dispatch.
kg.computeRanksSync({ scores, numColumns: cols, trueIndices });
kg.countScoresSync({ scores, numColumns: cols, thresholds });

const gfs = (seconds) => floats / seconds / 1e9; // G floats/s over the 512 MiB
const perRound = [];
console.error(
  `probes: ${rows} x ${cols} float32 (${(bytes / 2 ** 20).toFixed(0)} MiB), ${threads} threads, ${rounds} rounds of ` +
    `${passes} passes; the addon's probe variant: ${variant.name}; load ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
);
for (let round = 0; round < rounds; round++) {
  // The steps in an order rotated each round, so that no one of them always follows the same neighbour.
  const got = {};
  const steps = [
    ["omp", () => openmp()],
    ["probe", () => timed(() => probeRead(addon, probeBuffers, threads))],
    ["ranks", () => timed(() => kg.computeRanksSync({ scores, numColumns: cols, trueIndices, threads }))],
    ["count", () => timed(() => kg.countScoresSync({ scores, numColumns: cols, thresholds, threads }))],
    ...(fb
      ? [
          [
            "filtered",
            () =>
              timed(
                (ev) => {
                  for (const b of fb.batches) ev.addSync(b);
                },
                () => fb.evaluator(),
              ),
          ],
        ]
      : []),
  ];
  for (let i = 0; i < steps.length; i++) {
    const [name, run] = steps[(round + i) % steps.length];
    got[name] = run();
  }
  const { omp, probe, ranks, count, filtered } = got;
  const r = {
    rates: {
      "OpenMP sum, static halves": gfs(omp.static.median),
      "OpenMP sum, 1 MiB pieces": gfs(omp.dynamic.median),
      "OpenMP sum, four sums": gfs(omp.four.median),
      "addon's probe": gfs(probe.median),
      computeRanksSync: gfs(ranks.median),
      countScoresSync: gfs(count.median),
    },
    best: {
      "OpenMP sum, static halves": gfs(omp.static.best),
      "OpenMP sum, 1 MiB pieces": gfs(omp.dynamic.best),
      "OpenMP sum, four sums": gfs(omp.four.best),
      "addon's probe": gfs(probe.best),
      computeRanksSync: gfs(ranks.best),
      countScoresSync: gfs(count.best),
    },
    filteredSeconds: filtered?.median ?? null,
    load: os.loadavg()[0],
  };
  perRound.push(r);
  console.error(
    `  round ${round + 1}: ` +
      Object.entries(r.rates)
        .map(([k, v]) => `${k} ${v.toFixed(2)}`)
        .join(", ") +
      ` G floats/s${filtered ? `; FB15k-237 filtered ${(filtered.median * 1e3).toFixed(1)} ms` : ""}; load ${r.load.toFixed(2)}`,
  );
}

const names = Object.keys(perRound[0].rates);
const range = (xs) => `${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}`;
console.log(
  `\n${rows} x ${cols} float32 (${(bytes / 2 ** 20).toFixed(0)} MiB), ${threads} threads, ${rounds} rounds; G floats/s, ` +
    `each round's figure the median (or the best) of its ${passes} passes:`,
);
printTable(
  ["read", "median over rounds", "range", "best of passes: median over rounds", "range"],
  names.map((n) => {
    const m = perRound.map((r) => r.rates[n]);
    const b = perRound.map((r) => r.best[n]);
    return [n, median(m).toFixed(2), range(m), median(b).toFixed(2), range(b)];
  }),
);

const probes = names.filter((n) => n !== "computeRanksSync" && n !== "countScoresSync");
const fastest = probes.reduce((a, b) =>
  median(perRound.map((r) => r.rates[b])) > median(perRound.map((r) => r.rates[a])) ? b : a,
);
const ratioRows = [];
for (const kernel of ["computeRanksSync", "countScoresSync"]) {
  for (const p of probes) {
    const q = perRound.map((r) => r.rates[kernel] / r.rates[p]);
    ratioRows.push([`${kernel} / ${p}`, `${(100 * median(q)).toFixed(1)} %`, `${range(q.map((x) => 100 * x))} %`]);
  }
}
for (const p of probes.filter((p) => p !== "addon's probe")) {
  const q = perRound.map((r) => r.rates["addon's probe"] / r.rates[p]);
  ratioRows.push([`addon's probe / ${p}`, `${(100 * median(q)).toFixed(1)} %`, `${range(q.map((x) => 100 * x))} %`]);
}
if (fb) {
  for (const p of probes) {
    // The probe's time for the FB15k-237 batches' bytes at its rate in the same round.
    const q = perRound.map((r) => r.filteredSeconds / (fb.bytes / 4 / (r.rates[p] * 1e9)));
    ratioRows.push([`FB15k-237 filtered pass, x ${p}'s time`, `${median(q).toFixed(3)}x`, `${range(q)}x`]);
  }
}
console.log(`\nper-round ratios (median over ${rounds} rounds, range):`);
printTable(["ratio", "median", "range"], ratioRows);
const against = (kernel) => median(perRound.map((r) => r.rates[kernel] / r.rates[fastest]));
console.log(
  `\nagainst the faster probe, ${fastest} (median of its per-round rates ${median(perRound.map((r) => r.rates[fastest])).toFixed(2)} G floats/s): ` +
    `computeRanksSync ${(100 * against("computeRanksSync")).toFixed(1)} %, countScoresSync ${(100 * against("countScoresSync")).toFixed(1)} %` +
    (fb
      ? `, FB15k-237 filtered ${median(perRound.map((r) => r.filteredSeconds / (fb.bytes / 4 / (r.rates[fastest] * 1e9)))).toFixed(3)}x its time`
      : "") +
    `; load average at the end ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
);
writeResult("probes", {
  rows,
  cols,
  bytes,
  threads,
  rounds,
  passes,
  addonProbeVariant: variant.name,
  fastest,
  fb15kBytes: fb?.bytes ?? null,
  perRound,
});
