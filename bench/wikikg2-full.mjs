// The whole WikiKG2-shaped test set, measured end to end rather than projected: 2,500,604 entities, 535 relations,
// 17,137,181 training triples as the filter, 598,543 test triples ranked on both sides (1,197,086 tasks) by DistMult
// at d = 100, filtered, every input a file (the split as OGB's integer id arrays, the embeddings as .npy).
//  1. one process: `kgrank evaluate` with the machine's threads; wall time and peak RSS of the command;
//  2. the same split as queue jobs: a real redis-server on a free localhost port, two `kgrank worker` processes of one
//     kernel thread each, `kgrank submit --shards S`; wall time of the submit and each worker's peak RSS;
//  3. the two JSON outputs compared value by value (Object.is: bit-identical, or the bench fails), and the per-task
//     cost against the FMA probe of the same threads, measured in this process just before.
// Data are written once under $TMPDIR and kept (seeded: bench/wikikg2-dataset.mjs and two .npy tables).
// With --screen MODE (int8 or auto; docs/screen.md) the one-process run screens in int8 and writes single-MODE.json;
// the screened and the float32 run's single.json are compared value by value when both exist, after whichever of the
// two runs came second (run the bench once without --screen, with --skip-queue, for the float32 run).
//   npm run build:ts && node bench/wikikg2-full.mjs [--scale F] [--shards S] [--screen MODE] [--skip-single] [--skip-queue]
import { spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { npyHeader, root, startRedis, writeResult } from "./lib.mjs";

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const scale = Number(flag("--scale", "1"));
const shards = Number(flag("--shards", "8"));
const screen = flag("--screen", "off");
const D = 100;
const R = 535;
const tag = scale === 1 ? "" : `-${scale}`;
const base = join(tmpdir(), `kgrank-wikikg2-full${tag}`);
const tsvDir = join(base, "tsv");
const idsDir = join(base, "ids");
const entFile = join(base, `entity-d${D}.npy`);
const relFile = join(base, `relation-d${D}.npy`);
const out = join(base, "out");
const bin = join(root, "bin", "kgrank.js");
mkdirSync(out, { recursive: true });

function lcg(seed) {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32 - 0.5;
}

/** A seeded float32 .npy of rows x D, written in blocks (the entity table is 1 GB). */
function writeTable(file, rows, seed) {
  if (existsSync(file)) return;
  const next = lcg(seed);
  const fd = openSync(`${file}.tmp`, "w");
  writeSync(fd, npyHeader("<f4", [rows, D]));
  const block = new Float32Array(65_536 * D);
  for (let r0 = 0; r0 < rows; r0 += 65_536) {
    const n = Math.min(65_536, rows - r0) * D;
    for (let i = 0; i < n; i++) block[i] = next();
    writeSync(fd, new Uint8Array(block.buffer, 0, 4 * n));
  }
  closeSync(fd);
  spawnSync("mv", [`${file}.tmp`, file]);
}

const t0 = performance.now();
if (!existsSync(join(idsDir, "test.npy"))) {
  const r = spawnSync(
    process.execPath,
    [join(root, "bench", "wikikg2-dataset.mjs"), tsvDir, "--scale", String(scale), "--ids", idsDir],
    { stdio: "inherit" },
  );
  if (r.status !== 0) process.exit(1);
}
const numEntities = readFileSync(join(idsDir, "entities.txt"), "utf8").split("\n").filter(Boolean).length;
writeTable(entFile, numEntities, 11);
writeTable(relFile, R, 13);
console.log(`data under ${base} (${((performance.now() - t0) / 1000).toFixed(0)} s to write or find)`);

// The FMA probe on the threads the single run uses.
const { nativeAddon, kernels } = require(join(root, "dist", "cjs", "backend", "backend.js"));
const k = kernels();
const level = { scalar: 0, avx2: 1, avx512: 2, neon: 3 }[k.simd];
let probe = 0;
for (let rep = 0; rep < 5; rep++) {
  const p0 = process.hrtime.bigint();
  const [madds] = nativeAddon().fmaProbe(level, k.threads, 1e7);
  probe = Math.max(probe, madds / (Number(process.hrtime.bigint() - p0) / 1e9));
}

const model = [
  "--dataset-dir",
  idsDir,
  "--interaction",
  "distmult",
  "--entity-embeddings",
  entFile,
  "--relation-embeddings",
  relFile,
  "--format",
  "json",
  "--quiet",
];
// The float32 run names --screen off: auto is the CLI's default.
const screenArgs = screen === "off" ? ["--screen", "off"] : ["--screen", screen, "--verbose"];

/** Where two evaluate outputs differ, value by value (Object.is), leaving out what describes the run (backend, info). */
function differences(a, b) {
  const diffs = [];
  const walk = (x, y, path) => {
    if (path === ".backend" || path === ".info") return;
    if (typeof x === "object" && x !== null && typeof y === "object" && y !== null) {
      for (const key of new Set([...Object.keys(x), ...Object.keys(y)])) walk(x[key], y[key], `${path}.${key}`);
    } else if (!Object.is(x, y)) diffs.push(`${path}: ${x} vs ${y}`);
  };
  walk(a, b, "");
  return diffs;
}

/** Runs `kgrank ARGS` under /usr/bin/time: wall seconds and peak RSS in bytes. */
function timedCli(cliArgs, env = {}) {
  const r = spawnSync("/usr/bin/time", ["-f", "%e %M", process.execPath, bin, ...cliArgs], {
    encoding: "utf8",
    env: { ...process.env, ...env },
  });
  if (r.status !== 0) throw new Error(`kgrank ${cliArgs.join(" ")} failed:\n${r.stderr}`);
  const [secs, kb] = r.stderr.trim().split("\n").at(-1).split(" ").map(Number);
  return { seconds: secs, peakRssBytes: kb * 1024 };
}

const result = {
  scale,
  numEntities,
  dim: D,
  shards,
  screen,
  simd: k.simd,
  threads: k.threads,
  probeMaddsPerSecond: probe,
};
const singleJson = join(out, "single.json");
const ownJson = screen === "off" ? singleJson : join(out, `single-${screen}.json`);
if (!args.includes("--skip-single")) {
  const state = join(out, screen === "off" ? "single.state" : `single-${screen}.state`);
  rmSync(ownJson, { force: true });
  const single = timedCli(["evaluate", ...model, ...screenArgs, "-o", ownJson, "--save-state", state]);
  result.single = single;
  const doc = JSON.parse(readFileSync(ownJson, "utf8"));
  const tasks = 2 * doc.triples;
  const madds = tasks * numEntities * D;
  result.tasks = tasks;
  console.log(
    `one process (${k.threads} threads, ${k.simd}): ${tasks} tasks in ${single.seconds.toFixed(1)} s end to end, peak RSS ${(single.peakRssBytes / 2 ** 30).toFixed(2)} GiB; ` +
      `${((1e3 * single.seconds * k.threads) / tasks).toFixed(2)} ms per task per thread; ` +
      `${(madds / single.seconds / 1e9).toFixed(1)} G multiply-adds/s = ${((100 * madds) / single.seconds / probe).toFixed(1)} % of the FMA probe (${(probe / 1e9).toFixed(1)} G/s)`,
  );
  console.log(`tail MRR (realistic) ${doc.results.tail.realistic.inverse_harmonic_mean_rank}`);
  if (doc.backend?.screen) {
    result.single.screen = doc.backend.screen;
    console.log(`screen: ${JSON.stringify(doc.backend.screen)}`);
  }
  // The screened run against the float32 run, whichever ran first (each run removes its own output first, so a file
  // a failed run leaves is never compared).
  const identical = [];
  for (const mode of screen === "off" ? ["int8", "auto"] : [screen]) {
    const onFile = join(out, `single-${mode}.json`);
    if (!existsSync(singleJson) || !existsSync(onFile)) continue;
    const diffs = differences(JSON.parse(readFileSync(singleJson, "utf8")), JSON.parse(readFileSync(onFile, "utf8")));
    identical.push(diffs.length === 0);
    console.log(
      diffs.length === 0
        ? `the --screen ${mode} output (${onFile}) equals the float32 run's (${singleJson}) value for value (Object.is)`
        : `--screen ${mode} DIFFERENT from the float32 run (${diffs.length}):\n${diffs.slice(0, 20).join("\n")}`,
    );
    if (diffs.length) process.exitCode = 1;
  }
  if (identical.length > 0) result.screenIdentical = identical.every(Boolean);
}

if (!args.includes("--skip-queue")) {
  const redis = await startRedis();
  try {
    const url = redis.url;
    const stateDir = join(out, "states");
    rmSync(stateDir, { recursive: true, force: true });
    mkdirSync(stateDir);
    const workers = [0, 1].map(() =>
      spawn(process.execPath, [bin, "worker", "--redis", url, "--state-dir", stateDir, "--quiet"], {
        stdio: "ignore",
        env: { ...process.env, KGRANK_THREADS: "1" },
      }),
    );
    const hwm = workers.map(() => 0);
    const poll = setInterval(() => {
      workers.forEach((w, i) => {
        try {
          const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${w.pid}/status`, "utf8"));
          if (m) hwm[i] = Math.max(hwm[i], Number(m[1]) * 1024);
        } catch {
          // the worker exited between polls
        }
      });
    }, 200);
    const queueJson = join(out, "queue.json");
    const submitArgs = [
      "submit",
      ...model,
      "--screen",
      screen,
      "--redis",
      url,
      "--shards",
      String(shards),
      "--state-dir",
      stateDir,
      "-o",
      queueJson,
    ];
    const s0 = performance.now();
    const submit = spawn(process.execPath, [bin, ...submitArgs], { stdio: ["ignore", "ignore", "inherit"] });
    const code = await new Promise((resolve) => submit.on("exit", resolve));
    const seconds = (performance.now() - s0) / 1000;
    clearInterval(poll);
    for (const w of workers) w.kill("SIGTERM");
    if (code !== 0) throw new Error(`kgrank submit exited ${code}`);
    result.queue = { seconds, workerPeakRssBytes: hwm };
    console.log(
      `queue: ${shards} shards on 2 workers of 1 thread: ${seconds.toFixed(1)} s end to end, worker peak RSS ${hwm.map((b) => (b / 2 ** 30).toFixed(2)).join(" / ")} GiB`,
    );
    if (existsSync(singleJson)) {
      const a = JSON.parse(readFileSync(singleJson, "utf8"));
      const b = JSON.parse(readFileSync(queueJson, "utf8"));
      const diffs = differences(a, b);
      result.identical = diffs.length === 0;
      console.log(
        diffs.length === 0
          ? "queue output equals the one-process output value for value (Object.is)"
          : `DIFFERENT (${diffs.length}):\n${diffs.slice(0, 20).join("\n")}`,
      );
      if (diffs.length) process.exitCode = 1;
    }
  } finally {
    redis.stop();
  }
}
writeResult(`wikikg2-full${tag}${screen === "off" ? "" : `-${screen}`}`, result);
