// An entity table larger than the memory budget, read from disk in chunks (openEntityTable + addModel's
// memoryBudget), against the same table read into memory, each in its own process: time, peak RSS (VmHWM) and the
// state's SHA-256 (they must be equal). Cases: in memory; streamed with the file in the page cache; streamed after
// the file's pages were dropped from the cache (dd iflag=nocache), beside the disk's own sequential read of the
// file in the same state (dd, 16 MiB blocks). Ratios are taken in one run.
//   npm run build:ts && node bench/streamed.mjs [--entities N] [--dim D] [--queries Q] [--budget-mib M] [--keep]
// Defaults: a 4 GiB float32 table (10,485,760 x 100), 1,000 tail queries, a 1 GiB budget (the table is 4x it).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { npyHeader, seededFloats as rnd, writeResult } from "./lib.mjs";

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);

const D = flag("--dim", 100);
const E = flag("--entities", Math.floor((4 * 2 ** 30) / (4 * D)));
const Q = flag("--queries", 1000);
const R = 100;
const budget = flag("--budget-mib", 1024) * 2 ** 20;
const dir = join(tmpdir(), "kgrank-bench-streamed");
const table = join(dir, `entity-${E}x${D}.npy`);

function queries() {
  const t = new Int32Array(3 * Q);
  const r = rnd(3 * Q, 5);
  for (let i = 0; i < Q; i++) {
    t[3 * i] = Math.floor((r[3 * i] + 0.5) * E);
    t[3 * i + 1] = Math.floor((r[3 * i + 1] + 0.5) * R);
    t[3 * i + 2] = Math.floor((r[3 * i + 2] + 0.5) * E);
  }
  return t;
}

/** The child: one evaluation, then {seconds, peakRssBytes, sha256} on stdout. */
async function child(mode) {
  const { EmbeddingModel, RankEvaluator, openEntityTable, readNpy } = require("../dist/cjs/index.js");
  if (mode === "baseline") {
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
    process.stdout.write(JSON.stringify({ seconds: 0, peakRssBytes: Number(hwm[1]) * 1024, sha256: "" }));
    return;
  }
  const relationEmbeddings = { data: rnd(R * D, 7), shape: [R, D] };
  const t0 = performance.now();
  let entityEmbeddings;
  if (mode === "memory") {
    const m = readNpy(table);
    entityEmbeddings = { data: m.data, shape: m.shape };
  } else {
    entityEmbeddings = openEntityTable(table);
  }
  const model = new EmbeddingModel({ interaction: "distmult", entityEmbeddings, relationEmbeddings });
  const e = new RankEvaluator({ numEntities: E, numRelations: R, sides: "tail" });
  await e.addModel({
    model,
    triples: queries(),
    side: "tail",
    screen: "off",
    ...(mode === "memory" ? {} : { memoryBudget: budget }),
  });
  const seconds = (performance.now() - t0) / 1000;
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
  const sha256 = createHash("sha256").update(e.serialize()).digest("hex");
  process.stdout.write(JSON.stringify({ seconds, peakRssBytes: Number(hwm[1]) * 1024, sha256 }));
}

function run(mode) {
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--child", mode, ...args], {
    encoding: "utf8",
    maxBuffer: 1 << 20,
  });
  if (r.status !== 0) throw new Error(`${mode}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** Drops the file's pages from the page cache (fadvise DONTNEED through GNU dd). */
function dropCache() {
  spawnSync("dd", [`if=${table}`, "iflag=nocache", "count=0", "status=none"]);
}

function ddSeconds() {
  const t0 = performance.now();
  const r = spawnSync("dd", [`if=${table}`, "of=/dev/null", "bs=16M", "status=none"]);
  if (r.status !== 0) throw new Error(`dd: ${r.stderr}`);
  return (performance.now() - t0) / 1000;
}

function writeTable() {
  if (existsSync(table) && statSync(table).size > E * D * 4) return;
  mkdirSync(dir, { recursive: true });
  const header = npyHeader("<f4", [E, D]);
  const fd = openSync(table, "w");
  writeSync(fd, header);
  const rows = 1 << 16;
  for (let r0 = 0; r0 < E; r0 += rows) {
    const n = Math.min(rows, E - r0);
    const a = rnd(n * D, r0 + 1);
    writeSync(fd, new Uint8Array(a.buffer));
  }
  closeSync(fd);
}

if (args[0] === "--child") {
  await child(args[1]);
} else {
  const gib = (b) => (b / 2 ** 30).toFixed(2);
  writeTable();
  console.log(
    `table ${table}: ${E} x ${D} float32 (${gib(E * D * 4)} GiB), budget ${gib(budget)} GiB, ${Q} tail queries`,
  );
  const baseline = run("baseline");
  const memory = run("memory");
  ddSeconds(); // the file is in the page cache now
  const warm = run("streamed");
  // Not in the page cache: the disk's read time varies from read to read on a VM (the host caches too), so each
  // streamed run is paired with a dd read just before it, both from a dropped cache; the median pair is reported.
  const pairs = [];
  for (let rep = 0; rep < 3; rep++) {
    dropCache();
    const disk = ddSeconds();
    dropCache();
    const run1 = run("streamed");
    pairs.push({ disk, run: run1, ratio: run1.seconds / disk });
  }
  pairs.sort((a, b) => a.ratio - b.ratio);
  const { disk, run: cold } = pairs[1];
  if (warm.sha256 !== memory.sha256 || pairs.some((p) => p.run.sha256 !== memory.sha256))
    throw new Error("the states differ");
  const rows = [
    ["in memory (read whole, then ranked)", memory],
    ["streamed, file in the page cache", warm],
    ["streamed, file not in the page cache", cold],
  ];
  for (const [name, r] of rows) {
    console.log(`${name.padEnd(40)} ${r.seconds.toFixed(2).padStart(7)} s   peak RSS ${gib(r.peakRssBytes)} GiB`);
  }
  console.log(`disk's sequential read of the file (dd)  ${disk.toFixed(2).padStart(7)} s (the median pair of 3)`);
  console.log(`node with the library loaded, idle        peak RSS ${gib(baseline.peakRssBytes)} GiB`);
  console.log(`streamed / in-memory speed (page cache): ${(memory.seconds / warm.seconds).toFixed(3)}`);
  console.log(`streamed (cold) / disk read time: ${(cold.seconds / disk).toFixed(3)}`);
  console.log(
    `peak RSS / budget (streamed, warm and cold): ${(warm.peakRssBytes / budget).toFixed(3)}, ${(cold.peakRssBytes / budget).toFixed(3)}; ` +
      `without the idle process's ${(warm.peakRssBytes - baseline.peakRssBytes) / budget < 0 ? 0 : ((warm.peakRssBytes - baseline.peakRssBytes) / budget).toFixed(3)}`,
  );
  console.log(`states equal (SHA-256 ${memory.sha256.slice(0, 16)}...)`);
  writeResult("streamed", {
    entities: E,
    dim: D,
    queries: Q,
    budgetBytes: budget,
    tableBytes: E * D * 4,
    memory,
    warm,
    cold,
    diskSeconds: disk,
    coldPairs: pairs.map((p) => ({ disk: p.disk, seconds: p.run.seconds })),
    baselineRssBytes: baseline.peakRssBytes,
  });
  if (!args.includes("--keep")) spawnSync("rm", ["-f", table]);
}
