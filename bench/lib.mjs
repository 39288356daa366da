// Shared helpers for benchmark scenarios: Benchmark.js runs with median/spread, machine description, JSON output.
import Benchmark from "benchmark";
import { spawnSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import * as os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const resultsDir = join(root, "bench", "results");

/**
 * Takes `--name VALUE` out of `args` (a command line's arguments, changed in place so that what is left is the
 * positional ones) and returns VALUE, or `fallback` when the option is not there.
 */
export function takeOption(args, name, fallback) {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const value = args[i + 1];
  args.splice(i, 2);
  return value;
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Median absolute deviation relative to the median, in percent: the spread we print. */
export function spreadPct(xs) {
  const m = median(xs);
  return (100 * median(xs.map((x) => Math.abs(x - m)))) / m;
}

/**
 * Runs the cases (name -> sync function) with Benchmark.js; returns name -> { median (s), spread (%), samples }.
 * Each case is a whole operation on the scenario's data; Benchmark.js repeats it and we take the sample median.
 */
export function runCases(cases, { minSamples = 7, maxTime = 4, onCase } = {}) {
  return new Promise((resolve, reject) => {
    const suite = new Benchmark.Suite();
    const out = {};
    for (const [name, fn, opts] of cases) {
      suite.add(name, fn, {
        minSamples: opts?.minSamples ?? minSamples,
        maxTime: opts?.maxTime ?? maxTime,
        initCount: 1,
      });
    }
    suite
      .on("cycle", (event) => {
        const b = event.target;
        if (b.error) return;
        const sample = b.stats.sample;
        out[b.name] = { median: median(sample), spread: spreadPct(sample), samples: sample.length };
        onCase?.(b.name, out[b.name]);
      })
      .on("error", (event) => reject(event.target.error))
      .on("complete", () => resolve(out))
      .run({ async: false });
  });
}

/** Quantile (linear interpolation) of a numeric array. */
export function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

/**
 * Paired, interleaved timing: runs reference() and subject() alternately `reps` times and returns the median and
 * quartiles of time(reference) / time(subject) over the pairs. Each pair sees the same machine conditions, so the
 * ratio is robust on a shared, noisy machine where sequential medians drift.
 */
export function pairedRatio(reference, subject, reps = 15) {
  reference();
  subject();
  const ratios = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    reference();
    const t1 = performance.now();
    subject();
    const t2 = performance.now();
    ratios.push((t1 - t0) / (t2 - t1));
  }
  return { median: median(ratios), q1: quantile(ratios, 0.25), q3: quantile(ratios, 0.75), reps };
}

/**
 * The probe's variants: every SIMD level this CPU has, with plain loads, and AVX2 and AVX-512 with non-temporal ones
 * too (the other levels have no loads of their own for it). Which streams best depends on the CPU: on an AMD EPYC VM the 256-bit loads beat the 512-bit
 * ones and the non-temporal ones beat both by about 7 %.
 */
export function readVariants(addon) {
  return addon
    .info()
    .simdLevels.flatMap((l) => [
      { name: l.name, level: l.level, streaming: false },
      ...(l.name === "avx2" || l.name === "avx512" ? [{ name: `${l.name} nt`, level: l.level, streaming: true }] : []),
    ]);
}

/**
 * The machine's read limit over `buffers`, in ms: one read of the same bytes by the addon's probe (bandwidthRead: the
 * counting kernels' thread split, aligned loads, an add per vector) on `threads` threads, in its fastest variant
 * (readVariants) here, like the best of likwid-bench's load kernels it is checked against (bench/bandwidth.mjs).
 * The variant is chosen once per buffer list, by the median of five rounds of every variant (fastestReadVariant),
 * and each call then times that one variant once: a sample of the same kind as the run it is paired with. (The
 * fastest of the five variants' single reads, taken afresh each call, was a minimum of five noisy samples: 2-4 %
 * below the fastest variant's median on the shared VMs, which flattered the probe.) Every "% of probe" is against
 * this.
 */
export function probeRead(addon, buffers, threads = addon.info().hardwareThreads) {
  return timeRead(addon, buffers, probeVariant(addon, buffers, threads), threads);
}

/** probeRead's variant for `buffers`: chosen on the first call for that list (the caller's array), then kept. */
export function probeVariant(addon, buffers, threads = addon.info().hardwareThreads) {
  let variant = probeVariants.get(buffers);
  if (variant === undefined) {
    variant = fastestReadVariant(addon, buffers, 5, threads);
    probeVariants.set(buffers, variant);
  }
  return variant;
}

const probeVariants = new WeakMap();

/** The probe variant that reads `buffers` fastest, by the median of `reps` rounds (for timers that take one call). */
export function fastestReadVariant(addon, buffers, reps = 5, threads = addon.info().hardwareThreads) {
  const variants = readVariants(addon);
  const times = variants.map(() => []);
  for (let r = 0; r < reps; r++) variants.forEach((v, i) => times[i].push(timeRead(addon, buffers, v, threads)));
  const medians = times.map(median);
  return variants[medians.indexOf(Math.min(...medians))];
}

/** One read of `buffers` by the probe in one variant, ms. */
function timeRead(addon, buffers, { level, streaming }, threads) {
  const t0 = performance.now();
  for (const b of buffers) addon.bandwidthRead(b, level, threads, streaming);
  return performance.now() - t0;
}

export function machine() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model ?? "unknown",
    cores: os.availableParallelism(),
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
  };
}

export function writeResult(name, data) {
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({ scenario: name, date: new Date().toISOString(), machine: machine(), ...data }, null, 2),
  );
  return file;
}

/** Prints rows (arrays of cells) as an aligned table. */
export function printTable(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => cells.map((c, i) => String(c).padEnd(widths[i])).join("  ");
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) console.log(line(r));
}

/** Fills a float array with pseudo-random values in [-1, 1) (xorshift's, doubled and shifted: exact), deterministic. */
export function fillRandom(arr, seed = 1) {
  const next = xorshift(seed);
  for (let i = 0; i < arr.length; i++) arr[i] = 2 * next() - 1;
  return arr;
}

/** A deterministic generator of values in [0, 1) (32-bit xorshift, Marsaglia), seeded with any nonzero integer. */
export function xorshift(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

/**
 * FB15k-237's test set as the FB15k-237 benches feed it: both sides (head first), batches of 512 triples, each with
 * its 512 score rows taken from a pool of `poolSize` buffers of xorshift values (seeds 100, 101, ...) used in turn
 * (the batches are evaluator batches as they are); `thresholds[i]` holds batch i's rows' own true answers' scores.
 * `test` holds (head, relation, tail) rows.
 */
export function fb15kTestBatches(test, numEntities, poolSize = 8) {
  const batch = 512;
  const rows = test.length / 3;
  const pool = Array.from({ length: poolSize }, (_, i) => {
    const next = xorshift(100 + i);
    return new Float32Array(batch * numEntities).map(next);
  });
  const batches = [];
  const thresholds = [];
  for (const side of ["head", "tail"]) {
    const truth = side === "tail" ? 2 : 0;
    for (let s = 0, b = 0; s < rows; s += batch, b++) {
      const e = Math.min(rows, s + batch);
      const triples = test.subarray(3 * s, 3 * e);
      const scores = pool[b % poolSize].subarray(0, (e - s) * numEntities);
      batches.push({ side, triples, scores });
      thresholds.push(Float32Array.from({ length: e - s }, (_, i) => scores[i * numEntities + triples[3 * i + truth]]));
    }
  }
  return { batch, rows, pool, batches, thresholds };
}

/** Writes a C-order little-endian .npy (format 1.0) for the NumPy peer benchmarks. */
export function writeNpyFile(file, array, shape) {
  const descr =
    array instanceof Float32Array
      ? "<f4"
      : array instanceof Float64Array
        ? "<f8"
        : array instanceof Int32Array
          ? "<i4"
          : null;
  if (!descr) throw new Error(`writeNpyFile: unsupported ${array.constructor.name}`);
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(", ")}${shape.length === 1 ? "," : ""}), }`;
  const unpadded = 10 + header.length + 1;
  header += " ".repeat((64 - (unpadded % 64)) % 64) + "\n";
  const head = Buffer.alloc(10);
  head.write("\x93NUMPY", 0, "latin1");
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const fd = openSync(file, "w");
  try {
    writeSync(fd, head);
    writeSync(fd, Buffer.from(header, "latin1"));
    writeSync(fd, new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
  } finally {
    closeSync(fd);
  }
}

/** True when `python3 -c "import numpy"` works; returns the numpy version or null. */
export function numpyVersion() {
  const r = spawnSync("python3", ["-c", "import numpy; print(numpy.__version__)"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** n seeded float32 values in [-0.5, 0.5) (an LCG): the benches' random embeddings. */
export function seededFloats(n, seed) {
  const a = new Float32Array(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    a[i] = x / 2 ** 32 - 0.5;
  }
  return a;
}

/** The header (magic, version 1, dict, padding to 64 bytes) of a C-order .npy file of `descr` (e.g. "<f4") and `shape`. */
export function npyHeader(descr, shape) {
  let text = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(", ")}${shape.length === 1 ? "," : ""}), }`;
  while ((10 + text.length + 1) % 64 !== 0) text += " ";
  text += "\n";
  const header = new Uint8Array(10 + text.length);
  header.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, text.length & 0xff, text.length >> 8]);
  header.set(new TextEncoder().encode(text), 10);
  return header;
}

/**
 * A redis-server on a free localhost port, without persistence, answered PING before this resolves: { url, stop }.
 * The queue benches' Redis (as the queue tests start theirs).
 */
export async function startRedis() {
  const { spawn, spawnSync } = await import("node:child_process");
  const net = await import("node:net");
  const port = await new Promise((resolve) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const p = srv.address().port;
      srv.close(() => resolve(p));
    });
  });
  const server = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: "ignore" },
  );
  for (
    let i = 0;
    i < 100 && spawnSync("redis-cli", ["-p", String(port), "ping"], { encoding: "utf8" }).stdout?.trim() !== "PONG";
    i++
  ) {
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url: `redis://127.0.0.1:${port}`, stop: () => server.kill("SIGKILL") };
}
