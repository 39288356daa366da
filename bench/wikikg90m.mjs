// A WikiKG90Mv2-shaped full ranking: 91,230,610 entities, 1,387 relations, d = 64, the entity table stored as float16
// (11.7 GB, half this machine's memory; 23 GB as float32), exact tail ranks of Q queries against every entity under a
// 4 GiB memory budget (openEntityTable + addModel's memoryBudget), unfiltered as OGB-LSC ranks WikiKG90Mv2; then the
// same queries' top-10 lists (predictTopKAsync with the same budget: OGB-LSC's t_pred_top10), each in its own process.
// Prints each run's time, peak RSS (VmHWM) and multiply-add rate against the FMA probe of the same threads, measured
// in the same process just before. The table is written once (seeded; kept with --keep). With --screen MODE (int8 or
// auto: docs/screen.md) each run also runs with that screen, each chunk quantised as it is read, in its own process
// after the float32 run, and the two outputs (the evaluators' saved states; every id and score of the lists) must have
// one SHA-256.
//   npm run build:ts && node bench/wikikg90m.mjs [--entities N] [--queries Q] [--budget-gib G] [--keep] [--skip-ranks]
//                                               [--skip-top-k] [--screen MODE]
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { npyHeader, takeOption, writeResult } from "./lib.mjs";

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const screenMode = takeOption(args, "--screen", "off");
if (!["off", "auto", "int8"].includes(screenMode)) {
  console.error(`--screen must be off, auto or int8, got ${screenMode}`);
  process.exit(2);
}
/** SHA-256 of bytes (a saved evaluator state, the lists' arrays): equal outputs, equal digests. */
const sha256 = (...parts) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(new Uint8Array(p.buffer, p.byteOffset, p.byteLength));
  return h.digest("hex");
};

const E = flag("--entities", 91_230_610);
const R = 1387;
const D = 64;
const Q = flag("--queries", 15_000);
const budget = Math.round(flag("--budget-gib", 4) * 2 ** 30);
const dir = join(tmpdir(), "kgrank-bench-wikikg90m");
// v2: rows from xorshift128 (period 2^128 - 1). The first version drew them from a 32-bit LCG whose bits below 30
// repeat every 2^30 values, so its table held 2^24 distinct rows, each repeated about 5.4 times.
const table = join(dir, `entity-${E}x${D}-f16-v2.npy`);

/** xorshift128 (Marsaglia): 32 random bits per call, period 2^128 - 1. */
function xorshift128(seed) {
  let x = seed >>> 0 || 1;
  let y = 362436069;
  let z = 521288629;
  let w = 88675123;
  return () => {
    const t = x ^ (x << 11);
    x = y;
    y = z;
    z = w;
    w = (w ^ (w >>> 19) ^ (t ^ (t >>> 8))) >>> 0;
    return w;
  };
}

function lcg(seed) {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x;
  };
}

/** Seeded float16 rows: random sign, exponent 13 or 14 (|x| in [0.25, 1)), random mantissa. */
function writeTable() {
  if (existsSync(table) && statSync(table).size === 128 + E * D * 2) return;
  mkdirSync(dir, { recursive: true });
  const header = npyHeader("<f2", [E, D]);
  const fd = openSync(table, "w");
  writeSync(fd, header);
  const next = xorshift128(1);
  const rows = 1 << 18;
  const buf = new Uint16Array(rows * D);
  for (let r0 = 0; r0 < E; r0 += rows) {
    const n = Math.min(rows, E - r0) * D;
    for (let i = 0; i < n; i++) {
      const x = next();
      buf[i] = (x & 0x8000) | ((13 + ((x >>> 16) & 1)) << 10) | ((x >>> 20) & 0x3ff);
    }
    writeSync(fd, new Uint8Array(buf.buffer, 0, 2 * n));
  }
  closeSync(fd);
}

/** Q seeded tail queries (h, r, t), heads and tails with a Zipf-like popularity. */
function queries() {
  const next = lcg(5);
  const t = new Int32Array(3 * Q);
  for (let i = 0; i < Q; i++) {
    t[3 * i] = Math.floor(E * (next() / 2 ** 32) ** 3);
    t[3 * i + 1] = next() % R;
    t[3 * i + 2] = Math.floor(E * (next() / 2 ** 32) ** 2);
  }
  return t;
}

async function child(what, screen) {
  const { EmbeddingModel, RankEvaluator, openEntityTable, predictTopKAsync } = require("../dist/cjs/index.js");
  const { nativeAddon, kernels } = require("../dist/cjs/backend/backend.js");
  const k = kernels();
  const addon = nativeAddon();
  const level = { scalar: 0, avx2: 1, avx512: 2, neon: 3 }[k.simd];
  let probe = 0;
  for (let rep = 0; rep < 3; rep++) {
    const t0 = process.hrtime.bigint();
    const [madds] = addon.fmaProbe(level, k.threads, 1e7);
    probe = Math.max(probe, madds / (Number(process.hrtime.bigint() - t0) / 1e9));
  }
  const next = lcg(7);
  const rel = Float32Array.from({ length: R * D }, () => next() / 2 ** 32 - 0.5);
  const model = new EmbeddingModel({
    interaction: "distmult",
    entityEmbeddings: openEntityTable(table),
    relationEmbeddings: { data: rel, shape: [R, D] },
  });
  const hwm = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))[1]) * 1024;
  const common = { probeMaddsPerSecond: probe, simd: k.simd, threads: k.threads };
  const t0 = performance.now();
  if (what === "top-k") {
    const top = await predictTopKAsync(model, {
      queries: queries().filter((_, i) => i % 3 !== 2),
      side: "tail",
      k: 10,
      memoryBudget: budget,
      screen,
    });
    const seconds = (performance.now() - t0) / 1000;
    const ids = top.tail.ids;
    let listed = 0;
    for (let i = 0; i < ids.length; i++) if (ids[i] >= 0) listed++;
    process.stdout.write(
      JSON.stringify({
        seconds,
        peakRssBytes: hwm(),
        listed,
        first: Array.from(ids.subarray(0, 10)),
        output: sha256(ids, top.tail.scores),
        screen: model.screenStats,
        ...common,
      }),
    );
    return;
  }
  const e = new RankEvaluator({ numEntities: E, numRelations: R, sides: "tail" });
  await e.addModel({ model, triples: queries(), side: "tail", memoryBudget: budget, screen });
  const seconds = (performance.now() - t0) / 1000;
  const results = e.finalize();
  process.stdout.write(
    JSON.stringify({
      seconds,
      peakRssBytes: hwm(),
      mrr: results.get("tail.mrr"),
      meanRank: results.get("tail.mean_rank"),
      output: sha256(e.serialize()),
      screen: model.screenStats,
      ...common,
    }),
  );
}

if (args[0] === "--child") {
  await child(args[1], args[2]);
} else {
  const t0 = performance.now();
  writeTable();
  const written = (performance.now() - t0) / 1000;
  console.log(
    `table ${table}: ${E} x ${D} float16 (${(statSync(table).size / 1e9).toFixed(1)} GB; written in ${written.toFixed(0)} s)`,
  );
  const run = (what, screen = "off") => {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--child", what, screen, ...args], {
      encoding: "utf8",
    });
    if (r.status !== 0) throw new Error(r.stderr);
    return JSON.parse(r.stdout);
  };
  const rate = (res) => {
    const madds = Q * E * D;
    const r = madds / res.seconds;
    return `${(r / 1e9).toFixed(1)} G multiply-adds/s = ${((100 * r) / res.probeMaddsPerSecond).toFixed(1)} % of the FMA probe (${(res.probeMaddsPerSecond / 1e9).toFixed(1)} G/s, ${res.simd}, ${res.threads} threads); ${((1e6 * res.seconds) / Q).toFixed(0)} µs per query`;
  };
  const record = { entities: E, dim: D, queries: Q, budgetBytes: budget, screen: screenMode };
  /** The same run with the screen, its output compared with the float32 run's; returns the screened result. */
  const screened = (what, off) => {
    if (screenMode === "off") return undefined;
    const res = run(what, screenMode);
    const same = res.output === off.output;
    const s = res.screen;
    console.log(
      `  --screen ${screenMode}: ${res.seconds.toFixed(1)} s (the float32 run's time / this: ${(off.seconds / res.seconds).toFixed(2)}), peak RSS ${(res.peakRssBytes / 2 ** 30).toFixed(2)} GiB; ` +
        `${s.pairs} pairs screened, ${s.rescored} rescored (${((100 * s.rescored) / Math.max(1, s.pairs)).toFixed(4)} %); ` +
        (same ? "output equal to the float32 run's value for value" : "OUTPUT DIFFERS from the float32 run's"),
    );
    if (!same) process.exitCode = 1;
    return res;
  };
  if (!args.includes("--skip-ranks")) {
    const res = run("ranks");
    console.log(
      `exact ranks, ${Q} tail queries x ${E} entities, budget ${budget / 2 ** 30} GiB: ${res.seconds.toFixed(1)} s, peak RSS ${(res.peakRssBytes / 2 ** 30).toFixed(2)} GiB (${(res.peakRssBytes / budget).toFixed(3)}x the budget)`,
    );
    console.log(`MRR ${res.mrr.toFixed(6)}, mean rank ${res.meanRank.toFixed(0)}`);
    console.log(rate(res));
    record.ranks = res;
    record.ranksScreened = screened("ranks", res);
  }
  if (!args.includes("--skip-top-k")) {
    const res = run("top-k");
    console.log(
      `top-10 lists (t_pred_top10), ${Q} (h, r) queries x ${E} entities, budget ${budget / 2 ** 30} GiB: ${res.seconds.toFixed(1)} s, peak RSS ${(res.peakRssBytes / 2 ** 30).toFixed(2)} GiB (${(res.peakRssBytes / budget).toFixed(3)}x the budget); ${res.listed} ids listed; first list ${res.first.join(" ")}`,
    );
    console.log(rate(res));
    record.topK = res;
    record.topKScreened = screened("top-k", res);
  }
  writeResult("wikikg90m", record);
  if (!args.includes("--keep")) spawnSync("rm", ["-f", table]);
}
