/**
 * Async safety: the inputs of a pending async call can be neither collected nor freed under the running job.
 * Detaching an input (structuredClone / postMessage with a transfer list, ArrayBuffer.prototype.transfer where Node
 * has it) while the call runs must not crash - the job co-owns the memory - and the call rejects with
 * KgrankDetachedError instead of returning results computed from data the caller gave away. Unless the job pins its
 * inputs (native/addon/pin.h), the first test segfaults: the transferred buffer is dropped and collected, its memory
 * freed and reused while the worker thread still reads it.
 */
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";

import {
  backendInfo,
  computeRanks,
  computeRanksSync,
  computeSampledRanks,
  computeSampledRanksSync,
  countScores,
  EmbeddingModel,
  KgrankDetachedError,
  KgrankError,
  RankCounter,
  RankEvaluator,
} from "../src/index";
import { backendLabel } from "./helpers/backend";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const info = backendInfo();
const label = backendLabel;

// 16 rows of 2^20 columns (64 MiB of float32): above glibc's largest mmap threshold (32 MiB), so the memory is
// always its own mapping and freeing it unmaps it - a use-after-free read then faults instead of reading stale data.
const ROWS = 16;
const COLS = 1 << 20;
function bigScores(): Float32Array {
  const s = new Float32Array(ROWS * COLS);
  for (let i = 0; i < s.length; i++) s[i] = (i * 2654435761) % 1000;
  return s;
}
const trueIndices = Int32Array.from({ length: ROWS }, (_, r) => (r * 7919) % COLS);

type Detach = (buffer: ArrayBuffer) => void;
const detachers: [string, Detach | null][] = [
  ["structuredClone transfer", (b) => void structuredClone(b, { transfer: [b] })],
  [
    "MessagePort.postMessage transfer",
    (b) => {
      const channel = new MessageChannel();
      channel.port1.postMessage(b, [b]);
      channel.port1.close();
      channel.port2.close();
    },
  ],
  [
    "ArrayBuffer.prototype.transfer",
    typeof (ArrayBuffer.prototype as { transfer?: unknown }).transfer === "function"
      ? (b) => void (b as unknown as { transfer(n?: number): ArrayBuffer }).transfer(8)
      : null,
  ],
];

// Drop the transferred copy, collect it, and churn memory so freed pages would be unmapped or reused.
function collectAndChurn(): void {
  gc();
  gc();
  const junk: Float32Array[] = [];
  for (let i = 0; i < 4; i++) junk.push(new Float32Array((ROWS * COLS) / 4).fill(7));
  expect(junk.length).toBe(4);
}

// Occupies libuv's 4 worker threads for a while (the native backend's async jobs queue behind them), so a job
// queued next starts only after the test has detached its input and collected the memory: unpinned, its reads
// would then be use-after-free, deterministically. The fallback runs these inline.
const blockerScores = new Float32Array(ROWS * COLS).fill(1);
const blockerIndices = new Int32Array(ROWS);
function occupyWorkers(): Promise<unknown> {
  return Promise.all(
    Array.from({ length: 4 }, () =>
      computeRanks({ scores: blockerScores, numColumns: COLS, trueIndices: blockerIndices, threads: 1 }),
    ),
  );
}

// E[MRR] of the child's tasks (N = 5 + i % 7, i < 10) by enumeration: mean over tasks of H(N) / N.
/** E[MRR] under random ranking of tasks with N[i] candidates each: the mean of H(N_i) / N_i. */
function meanReciprocalRankExpectation(N: number[]): number {
  let total = 0;
  for (const n of N) {
    let h = 0;
    for (let r = 1; r <= n; r++) h += 1 / r;
    total += h / n;
  }
  return total / N.length;
}

async function expectDetached(promise: Promise<unknown>, argument: string): Promise<void> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(KgrankDetachedError);
  expect(err).toBeInstanceOf(KgrankError);
  expect((err as KgrankDetachedError).code).toBe("KGRANK_DETACHED");
  expect((err as KgrankDetachedError).argument).toBe(argument);
}

describe(`async safety on ${label}`, () => {
  for (const [name, detach] of detachers) {
    it.skipIf(detach === null)(
      `computeRanks: scores detached mid-call by ${name} -> KgrankDetachedError, no crash`,
      async () => {
        const scores = bigScores();
        const want = computeRanksSync({ scores: scores.slice(), numColumns: COLS, trueIndices });
        const busy = occupyWorkers();
        const pending = computeRanks({ scores, numColumns: COLS, trueIndices });
        detach!(scores.buffer as ArrayBuffer);
        expect(scores.length).toBe(0);
        collectAndChurn();
        await expectDetached(pending, "scores");
        await busy;
        // The process is intact and the next call is right.
        const again = await computeRanks({ scores: bigScores(), numColumns: COLS, trueIndices });
        expect(again).toEqual(want);
      },
    );
  }

  // In a fresh process (the built package, default backend), where nothing else holds memory: the standalone
  // reproduction of the use-after-free (an unpinned input exits 139).
  for (const mode of ["clone", "port"]) {
    it.skipIf(info.backend !== "native")(
      `a fresh process survives a ${mode} transfer of a running job's scores`,
      () => {
        const child = spawnSync(
          process.execPath,
          ["--expose-gc", join(__dirname, "helpers", "detach-child.mjs"), mode],
          {
            encoding: "utf8",
            env: { ...process.env, KGRANK_BACKEND: "native" },
          },
        );
        expect(child.signal).toBeNull();
        expect(child.status).toBe(0);
        expect(JSON.parse(child.stdout.trim())).toMatchObject({
          outcome: "rejected",
          name: "KgrankDetachedError",
          code: "KGRANK_DETACHED",
        });
      },
    );
  }

  // A Worker terminated while its native jobs are queued or running: the environment's teardown drains the jobs
  // and settles nothing into the dying environment: the process stays alive (no abort, exit 134, from a Napi::Error
  // thrown into a dying environment). Every async entry point, 4 rounds; every other one with the addon loaded by the
  // workers alone (Node unloads an addon with its last worker, so the addon pins itself: its pool threads must never
  // run in unmapped code, exit 139).
  const asyncEntryPoints = [
    "countScores",
    "computeRanks",
    "computeSampledRanks",
    "RankCounter.add",
    "RankEvaluator.add filtered",
    "RankEvaluator.add unfiltered",
    "ChunkedBatch.add",
  ];
  for (const [n, entry] of asyncEntryPoints.entries()) {
    const mode = n % 2 === 0 ? "workers-only" : "main-loaded";
    it(`${entry}: a worker terminated mid-job, 4 times, leaves the process alive (exit 0; ${mode})`, () => {
      const child = spawnSync(process.execPath, [join(__dirname, "helpers", "terminate-child.mjs"), entry, "4", mode], {
        encoding: "utf8",
        env: { ...process.env, KGRANK_BACKEND: info.backend },
        timeout: 120_000,
      });
      expect(child.stderr).not.toMatch(/terminate called|Napi::Error|Aborted/);
      expect(child.signal).toBeNull();
      expect(child.status).toBe(0);
      expect(JSON.parse(child.stdout.trim())).toEqual({ entry, terminated: 4, backend: info.backend });
    }, 150_000);
  }

  // Inputs that change while native code uses them: a SharedArrayBuffer written by a second thread
  // during the calls, or an index array overwritten right after an async call returned its promise. A score may
  // change (garbage in, garbage out), an index never: every call returns a valid result or throws a KgrankError.
  // No SIGSEGV and no raw RangeError from the addon. In a child process, so that a crash fails this test and nothing
  // else.
  const hammerCases = [
    "computeRanksSync",
    "computeRanks",
    "mutate-after-call",
    "filterIndex",
    "addSync",
    "metricValue",
  ];
  for (const which of hammerCases) {
    it(`${which}: inputs changed by another thread (or after the call) -> a valid result or a KgrankError, no crash`, () => {
      const iterations = 150;
      const child = spawnSync(
        process.execPath,
        [join(__dirname, "helpers", "shared-hammer-child.mjs"), which, String(iterations)],
        {
          encoding: "utf8",
          env: { ...process.env, KGRANK_BACKEND: info.backend },
          timeout: 240_000,
        },
      );
      expect(child.signal).toBeNull();
      expect(child.status).toBe(0);
      const r = JSON.parse(child.stdout.trim()) as { ok: number; typed: number; untyped: string[]; invalid: number };
      expect(r.untyped).toEqual([]);
      expect(r.invalid).toBe(0);
      // metricValue makes up to three calls per iteration (the first to throw ends the iteration).
      if (which === "metricValue") expect(r.ok + r.typed).toBeGreaterThanOrEqual(iterations);
      else expect(r.ok + r.typed).toBe(iterations);
    }, 300_000);
  }

  // Allocation failure: under a virtual-memory limit, an input whose buffers cannot fit fails with KgrankMemoryError
  // naming the operation, and the process goes on: std::bad_alloc escapes neither the binding (the filter index) nor a
  // pool thread (the Monte-Carlo estimate), so there is no abort (exit 134).
  const memoryCases: [string, string, boolean][] = [
    ["filterIndex", "buildFilterIndex", true],
    ["estimate", "sampleStatistic", false],
    ["baseline", "FrequencyBaseline", true],
  ];
  for (const [which, operation, mustFail] of memoryCases) {
    it.skipIf(process.platform !== "linux")(
      `${which} under ulimit -v: KgrankMemoryError (${operation}), exit 0`,
      () => {
        const script = join(__dirname, "helpers", "memory-child.cjs");
        const child = spawnSync("bash", ["-c", `ulimit -v 2200000; exec "${process.execPath}" "${script}" ${which}`], {
          encoding: "utf8",
          env: { ...process.env, KGRANK_BACKEND: info.backend },
          timeout: 120_000,
        });
        expect(child.stderr).not.toMatch(/terminate called|bad_alloc/);
        expect(child.signal).toBeNull();
        expect(child.status).toBe(0);
        const r = JSON.parse(child.stdout.trim()) as Record<string, unknown>;
        expect(r.after).toBe(3);
        // The fallback needs less memory for the estimate (one sample buffer at a time): it may succeed.
        if (mustFail || r.outcome !== "ok") {
          expect(r).toMatchObject({
            outcome: "threw",
            name: "KgrankMemoryError",
            code: "KGRANK_MEMORY",
            operation,
            typed: true,
          });
          expect(r.message).toMatch(/not enough memory for this input/);
        }
      },
      150_000,
    );
  }

  // 1e5 expectation calls in one synchronous loop keep no per-call memory: RSS grows by at most 16 MiB (external
  // buffers freed only when the event loop turns would grow it by ~60 MiB; the fallback's growth is ~1 MiB).
  // Tiny candidate sets (<= 64 tasks, N <= 256) never reach the addon's histogram (src/backend/native-metrics.ts), so
  // the second run, 100 tasks with N up to 999, is the one that exercises the addon's copy of small
  // columns (adopt()).
  const memoryRuns: [string, number, number, number, number][] = [
    // name, tasks, base, spread, addon histogram calls on the native backend
    ["10 tasks, N <= 11 (tiny: the TypeScript histogram)", 10, 5, 7, 0],
    ["100 tasks, N up to 999 (the addon's histogram)", 100, 300, 700, 102_000],
  ];
  for (const [name, tasks, base, spread, nativeCalls] of memoryRuns) {
    it(`1e5 expectation calls without an event-loop turn, ${name}: RSS grows < 16 MiB`, () => {
      const child = spawnSync(
        process.execPath,
        [
          "--expose-gc",
          join(__dirname, "helpers", "expectation-memory-child.cjs"),
          String(tasks),
          String(base),
          String(spread),
        ],
        {
          encoding: "utf8",
          env: { ...process.env, KGRANK_BACKEND: info.backend },
          timeout: 240_000,
        },
      );
      expect(child.status, child.stderr).toBe(0);
      const r = JSON.parse(child.stdout.trim()) as { growthMiB: number; mean: number; nativeHistograms: number };
      const N = Array.from({ length: tasks }, (_, i) => base + ((i * 37) % spread));
      expect(r.mean).toBeCloseTo(meanReciprocalRankExpectation(N), 9); // the mean of 1e5 summed values: rounding ~1e-12
      // Which path ran (2,000 warm-up calls + 1e5): the run tests the code it means to.
      expect(r.nativeHistograms).toBe(info.backend === "native" ? nativeCalls : 0);
      expect(r.growthMiB).toBeLessThan(16);
    }, 300_000);
  }

  it("computeRanks: a resizable ArrayBuffer shrunk mid-call -> KgrankDetachedError, no crash", async () => {
    // Resizable ArrayBuffers (ES2024) are in Node 20; the TypeScript lib here predates them.
    const Resizable = ArrayBuffer as unknown as new (
      n: number,
      o: { maxByteLength: number },
    ) => ArrayBuffer & { resize(n: number): void };
    const ab = new Resizable(ROWS * COLS * 4, { maxByteLength: ROWS * COLS * 4 });
    const scores = new Float32Array(ab, 0, ROWS * COLS);
    scores.set(bigScores());
    const busy = occupyWorkers();
    const pending = computeRanks({ scores, numColumns: COLS, trueIndices });
    ab.resize(4096);
    expect(scores.length).toBe(0);
    collectAndChurn();
    await expectDetached(pending, "scores");
    await busy;
  });

  it.skipIf(info.backend !== "native")(
    "the addon's async bindings refuse views of resizable ArrayBuffers (second line)",
    () => {
      type Async = (...args: unknown[]) => Promise<void>;
      const addon = createRequire(__filename)(info.addonPath!) as { countScoresAsync: Async };
      const Resizable = ArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => ArrayBuffer;
      const scores = new Float32Array(new Resizable(16, { maxByteLength: 64 }));
      const out = () => new Float64Array(2);
      let err: unknown;
      try {
        void addon.countScoresAsync({
          scores,
          numColumns: 2,
          thresholds: new Float32Array(2),
          greater: out(),
          equal: out(),
          nan: out(),
          simd: 0,
          threads: 1,
        });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(TypeError);
      expect((err as { code?: string }).code).toBe("KGRANK_INPUT");
      expect(String((err as Error).message)).toContain('countScoresAsync: "scores" is a view of a resizable');
    },
  );

  it("countScores: thresholds detached mid-call -> KgrankDetachedError", async () => {
    const scores = bigScores();
    const thresholds = new Float32Array(ROWS).fill(500);
    const pending = countScores({ scores, numColumns: COLS, thresholds });
    structuredClone(thresholds.buffer, { transfer: [thresholds.buffer as ArrayBuffer] });
    collectAndChurn();
    await expectDetached(pending, "thresholds");
  });

  it("computeSampledRanks: negatives detached mid-call -> KgrankDetachedError", async () => {
    const negativeScores = bigScores();
    const positiveScores = new Float32Array(ROWS).fill(500);
    const pending = computeSampledRanks({ positiveScores, negativeScores });
    structuredClone(negativeScores.buffer, { transfer: [negativeScores.buffer as ArrayBuffer] });
    collectAndChurn();
    await expectDetached(pending, "scores");
  });

  it("RankCounter.add: a chunk detached mid-call is rejected and not counted; the counter goes on", async () => {
    const trueScores = new Float32Array(ROWS).fill(500);
    const counter = new RankCounter({ trueScores });
    const chunk = bigScores();
    const keep = chunk.slice();
    const pending = counter.add({ scores: chunk, columnStart: 0 });
    structuredClone(chunk.buffer, { transfer: [chunk.buffer as ArrayBuffer] });
    collectAndChurn();
    await expectDetached(pending, "scores");
    expect(counter.columnsSeen).toBe(0);
    await counter.add({ scores: keep, columnStart: 0 });
    expect(counter.ranks()).toEqual(computeSampledRanksSync({ positiveScores: trueScores, negativeScores: keep }));
  });

  it("RankEvaluator.add: scores detached mid-call -> KgrankDetachedError, nothing recorded", async () => {
    const numEntities = 1 << 16;
    const rows = 64;
    const triples = Int32Array.from({ length: rows * 3 }, (_, i) => (i % 3 === 1 ? 0 : (i * 7919) % numEntities));
    const evaluator = new RankEvaluator({ numEntities, filterTriples: triples, sides: "tail" });
    const scores = new Float32Array(rows * numEntities).map((_, i) => i % 97);
    const pending = evaluator.add({ triples, side: "tail", scores });
    structuredClone(scores.buffer, { transfer: [scores.buffer as ArrayBuffer] });
    collectAndChurn();
    await expectDetached(pending, "scores");
  });

  it("ChunkedBatch.add: a slice detached mid-call is rejected and not covered; re-adding it gives the same results", async () => {
    const numEntities = 1 << 20;
    const rows = 8;
    const triples = Int32Array.from({ length: rows * 3 }, (_, i) => (i % 3 === 1 ? 0 : (i * 7919) % numEntities));
    const all = new Float32Array(rows * numEntities).map((_, i) => (i * 31) % 89);
    const trueScores = Array.from({ length: rows }, (_, r) => all[r * numEntities + triples[3 * r + 2]!]!);
    const half = numEntities / 2;
    const slice = (start: number) => {
      const out = new Float32Array(rows * half);
      for (let r = 0; r < rows; r++)
        out.set(all.subarray(r * numEntities + start, r * numEntities + start + half), r * half);
      return out;
    };
    const reference = new RankEvaluator({ numEntities, filterTriples: triples, sides: "tail" });
    await reference.add({ triples, side: "tail", scores: all });
    const evaluator = new RankEvaluator({ numEntities, filterTriples: triples, sides: "tail" });
    const batch = evaluator.chunked({ triples, side: "tail", trueScores });
    await batch.add({ scores: slice(0), entityStart: 0 });
    const doomed = slice(half);
    const pending = batch.add({ scores: doomed, entityStart: half });
    structuredClone(doomed.buffer, { transfer: [doomed.buffer as ArrayBuffer] });
    collectAndChurn();
    await expectDetached(pending, "scores");
    expect(batch.entitiesSeen).toBe(half);
    await batch.add({ scores: slice(half), entityStart: half });
    batch.finish();
    expect(evaluator.finalize().get("mrr")).toBe(reference.finalize().get("mrr"));
  });

  it("RankEvaluator.addModel: the model's embeddings detached mid-call -> KgrankDetachedError, nothing recorded", async () => {
    // Without a signal, and with one (then the fallback ranks in row slices between event-loop turns).
    for (const signal of [undefined, new AbortController().signal]) {
      const n = 20_000;
      const dim = 32;
      const entity = new Float32Array(n * dim).map((_, i) => ((i * 2654435761) % 1000) / 1000 - 0.5);
      const model = new EmbeddingModel({
        interaction: "distmult",
        entityEmbeddings: { data: entity, shape: [n, dim] },
        relationEmbeddings: { data: new Float32Array(2 * dim).fill(0.25), shape: [2, dim] },
      });
      const rows = info.backend === "ts" ? 40 : 400;
      const triples = Int32Array.from({ length: 3 * rows }, (_, i) => (i % 3 === 1 ? i % 2 : (i * 7919) % n));
      const evaluator = new RankEvaluator({ numEntities: n, numRelations: 2 });
      const pending = evaluator.addModel({ model, triples, signal });
      structuredClone(entity.buffer, { transfer: [entity.buffer as ArrayBuffer] });
      collectAndChurn();
      await expectDetached(pending, "model");
      expect(evaluator.taskCounts).toEqual({ head: 0, tail: 0 });
    }
  });

  it("inputs referenced only by the pending call are not collected: results equal the sync call", async () => {
    const want = computeRanksSync({ scores: bigScores(), numColumns: COLS, trueIndices });
    const pending = computeRanks({ scores: bigScores(), numColumns: COLS, trueIndices: trueIndices.slice() });
    collectAndChurn();
    expect(await pending).toEqual(want);
  });

  it("aborting jobs at any moment (queued, waiting for a worker, mid-run, after the work) never crashes; every call settles", async () => {
    // 48 calls of each kind share the busy libuv pool; their signals abort at once, on the next turn, after a few ms
    // or never. Each call resolves with the plain result or rejects with AbortError - nothing else - and the inputs
    // detached meanwhile (one in four) are safe as ever.
    const cols = 1 << 16; // 4 MiB per call
    const base = bigScores().subarray(0, ROWS * cols);
    const idx = trueIndices.map((i) => i % cols);
    const want = computeRanksSync({ scores: base, numColumns: cols, trueIndices: idx });
    const busy = occupyWorkers();
    const calls: Promise<unknown>[] = [];
    for (let k = 0; k < 48; k++) {
      const controller = new AbortController();
      const scores = base.slice();
      calls.push(
        computeRanks({ scores, numColumns: cols, trueIndices: idx, signal: controller.signal }).then(
          (r) => expect(r).toEqual(want),
          (e: unknown) =>
            expect(
              e instanceof KgrankDetachedError || (e instanceof DOMException && e.name === "AbortError"),
              String(e),
            ).toBe(true),
        ),
      );
      if (k % 4 === 3) structuredClone(scores.buffer, { transfer: [scores.buffer as ArrayBuffer] });
      const when = k % 4;
      if (when === 0) controller.abort();
      else if (when === 1) setImmediate(() => controller.abort());
      else if (when === 2) setTimeout(() => controller.abort(), k % 7);
    }
    collectAndChurn();
    await Promise.all(calls);
    await busy;
    expect(await computeRanks({ scores: base, numColumns: cols, trueIndices: idx })).toEqual(want);
  }, 120_000);

  it("after the call settles the caller may detach its inputs again", async () => {
    const scores = bigScores();
    await computeRanks({ scores, numColumns: COLS, trueIndices });
    const moved = structuredClone(scores.buffer, { transfer: [scores.buffer as ArrayBuffer] });
    expect(moved.byteLength).toBe(ROWS * COLS * 4);
    expect(scores.length).toBe(0);
  });
});
