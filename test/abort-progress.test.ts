/**
 * A long evaluation inside a server: every async API takes an AbortSignal (`signal`) and long ones report
 * progress (`onProgress`). On every backend: an aborted call rejects with the signal's reason (an "AbortError"
 * DOMException by default), at once when the signal is already aborted and at the next task boundary when it is
 * aborted mid-run, and records nothing - the evaluator afterwards gives exactly the results of one that never saw
 * the batch; progress is monotone and ends with done === total; the signal's listener is gone once the call
 * settles; the async readers give what the sync ones give. No timing is asserted: mid-run aborts are triggered from
 * the call's own progress reports.
 */
import { getEventListeners } from "node:events";
import { mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import {
  backendInfo,
  computeRanks,
  computeSampledRanks,
  countScores,
  EmbeddingModel,
  encodeNpy,
  KgrankInputError,
  KgrankStateError,
  loadDataset,
  loadDatasetAsync,
  ogbEvaluate,
  type Progress,
  RankCounter,
  RankEvaluator,
  readNpy,
  readNpyAsync,
} from "../src/index";
import { runSteps } from "../src/io/steps";
import { splitTsvBytes, splitTsvSteps } from "../src/io/tsv";
import { backendLabel } from "./helpers/backend";
import { loadBundled, SHARED_DATASETS, sharedDataset } from "./helpers/datasets";
import { rng } from "./helpers/reference";
import { tempDir } from "./helpers/temp";

const abortDir = tempDir("abort");

const info = backendInfo();
const label = backendLabel;

const nations = loadBundled("nations");
const N = nations.entities.length;
const R = nations.relations.length;
const known = [nations.splits.train, nations.splits.valid, nations.splits.test];
const test = nations.splits.test;

/** A DistMult model with seeded random embeddings in [-0.5, 0.5). */
function randomDistMult(entities: number, relations: number, dim: number, seed: number): EmbeddingModel {
  const next = rng(seed);
  return new EmbeddingModel({
    interaction: "distmult",
    entityEmbeddings: {
      data: Float32Array.from({ length: entities * dim }, () => next() - 0.5),
      shape: [entities, dim],
    },
    relationEmbeddings: {
      data: Float32Array.from({ length: relations * dim }, () => next() - 0.5),
      shape: [relations, dim],
    },
  });
}

/** A Nations-sized DistMult model with seeded random embeddings. */
function nationsModel(seed: number): EmbeddingModel {
  return randomDistMult(N, R, 16, seed);
}

/** Scores of every entity for each test triple's side (b x N), seeded, with ties. */
function scoreRows(triples: Int32Array, seed: number): Float32Array {
  const next = rng(seed);
  return Float32Array.from({ length: (triples.length / 3) * N }, () => Math.floor(next() * 20));
}

const ev = () => new RankEvaluator({ numEntities: N, filterTriples: known });

/** Awaits `p` and returns what it rejected with (fails when it resolves). */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("the call resolved; it should have rejected");
}

/** Typed arrays compared by type and bytes (toEqual walks them element by element: slow for large ones). */
function sameArray(a: ArrayBufferView, b: ArrayBufferView): boolean {
  return (
    a.constructor === b.constructor &&
    Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength))
  );
}

function expectSameNpy(a: { data: ArrayBufferView; shape: number[]; dtype: string }, b: typeof a, what: string): void {
  expect([a.shape, a.dtype], what).toEqual([b.shape, b.dtype]);
  expect(sameArray(a.data, b.data), what).toBe(true);
}

function expectSameDataset(a: ReturnType<typeof loadDataset>, b: ReturnType<typeof loadDataset>): void {
  const { splits: sa, entityToId: ea, relationToId: ra, entityLabels: la, ...restA } = a;
  const { splits: sb, entityToId: eb, relationToId: rb, entityLabels: lb, ...restB } = b;
  expect(restA).toEqual(restB);
  expect(la.join("\n")).toBe(lb.join("\n"));
  expect([...ea].join("\n")).toBe([...eb].join("\n"));
  expect([...ra].join("\n")).toBe([...rb].join("\n"));
  for (const s of ["train", "valid", "test"] as const) expect(sameArray(sa[s], sb[s]), s).toBe(true);
}

function isAbortError(e: unknown): boolean {
  return e instanceof DOMException && e.name === "AbortError";
}

/**
 * A model big enough that ranking a batch takes long on every backend (the native SIMD levels and the fallback), so
 * its first progress report comes well before its end; the batch is aborted from that report.
 */
function bigModel(size: "big" | "medium" = "big") {
  const ts = info.backend === "ts";
  const n = ts || size === "medium" ? 6000 : 40_000;
  const dim = ts || size === "medium" ? 32 : 64;
  const model = randomDistMult(n, 4, dim, 99);
  const rows = ts ? 400 : 8000;
  const triples = Int32Array.from({ length: 3 * rows }, (_, i) => (i % 3 === 1 ? i % 4 : (i * 7919) % n));
  return { model, triples, n };
}

describe(`abort and progress on ${label}`, () => {
  let unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);
  beforeAll(() => {
    unhandled = [];
    process.on("unhandledRejection", onUnhandled);
  });
  afterAll(async () => {
    await new Promise((r) => setTimeout(r, 20));
    process.off("unhandledRejection", onUnhandled);
    expect(unhandled).toEqual([]);
  });

  it("an already-aborted signal rejects every async call at once with its reason, and nothing is recorded", async () => {
    const scores = scoreRows(test, 1);
    const cols = N;
    const rows = test.length / 3;
    const trueIndices = Int32Array.from({ length: rows }, (_, i) => test[3 * i + 2]!);
    const npy = path.join(abortDir, "a.npy");
    writeFileSync(npy, encodeNpy(Float32Array.of(1, 2, 3)));
    const reason = new Error("stop now");
    for (const signal of [AbortSignal.abort(), AbortSignal.abort(reason)]) {
      const e = ev();
      const counter = new RankCounter({ trueScores: [1, 2] });
      const chunked = e.chunked({ triples: test.subarray(0, 6), side: "tail", trueScores: [1, 1] });
      const calls: [string, () => Promise<unknown>][] = [
        ["countScores", () => countScores({ scores, numColumns: cols, thresholds: new Float32Array(rows), signal })],
        ["computeRanks", () => computeRanks({ scores, numColumns: cols, trueIndices, signal })],
        [
          "computeSampledRanks",
          () => computeSampledRanks({ positiveScores: [1, 2], negativeScores: new Float32Array(8), signal }),
        ],
        ["ogbEvaluate", () => ogbEvaluate({ y_pred_pos: [1, 2], y_pred_neg: new Float32Array(8), signal })],
        ["RankCounter.add", () => counter.add({ scores: new Float32Array(4), columnStart: 0, signal })],
        ["RankEvaluator.add", () => e.add({ triples: test, side: "tail", scores, signal })],
        ["RankEvaluator.addModel", () => e.addModel({ model: nationsModel(1), triples: test, signal })],
        [
          "RankEvaluator.addSampled",
          () => e.addSampled({ side: "tail", positiveScores: [1, 2], negativeScores: new Float32Array(8), signal }),
        ],
        ["ChunkedBatch.add", () => chunked.add({ scores: new Float32Array(2 * N), entityStart: 0, signal })],
        ["readNpyAsync", () => readNpyAsync(npy, { signal })],
        ["loadDatasetAsync", () => loadDatasetAsync("nations", { signal })],
      ];
      for (const [name, call] of calls) {
        const err = await rejection(call());
        if (signal.reason === reason) expect(err, name).toBe(reason);
        else expect(isAbortError(err), `${name}: ${String(err)}`).toBe(true);
      }
      expect(e.taskCounts).toEqual({ head: 0, tail: 0 });
      // The counter and the chunked batch took nothing: their columns can still be added.
      await counter.add({ scores: Float32Array.of(0, 3, 0, 3), columnStart: 0 });
      expect(counter.ranks().optimistic).toEqual(Float64Array.of(2, 2));
      expect(chunked.entitiesSeen).toBe(0);
      chunked.abort();
    }
  });

  it("addModel aborted mid-run rejects with AbortError and leaves the evaluator exactly as if it never saw the batch", async () => {
    const { model, triples, n } = bigModel();
    const small = (seed: number) =>
      Int32Array.from({ length: 60 }, (_, i) => (i % 3 === 1 ? (seed + i) % 4 : (i * 31 + seed) % n));
    const a = new RankEvaluator({ numEntities: n, numRelations: 4 });
    const b = new RankEvaluator({ numEntities: n, numRelations: 4 });
    await a.addModel({ model, triples: small(1) });
    await b.addModel({ model, triples: small(1) });
    const controller = new AbortController();
    const reports: Progress[] = [];
    const err = await rejection(
      a.addModel({
        model,
        triples,
        signal: controller.signal,
        onProgress: (p) => {
          reports.push(p);
          controller.abort();
        },
      }),
    );
    expect(isAbortError(err), String(err)).toBe(true);
    expect(reports.length).toBe(1);
    expect(reports[0]!.done).toBeGreaterThan(0);
    expect(reports[0]!.done, "the abort came mid-run").toBeLessThan(reports[0]!.total);
    expect(reports[0]!.total).toBe(2 * (triples.length / 3));
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    // Usable: more batches, then the same results as the evaluator that never saw the aborted one.
    await a.addModel({ model, triples: small(2) });
    b.addModelSync({ model, triples: small(2) });
    expect(a.taskCounts).toEqual(b.taskCounts);
    expect(a.finalize().toJSON()).toEqual(b.finalize().toJSON());
  });

  it("a batch aborted while its job runs (add, addSampled, RankCounter.add, ChunkedBatch.add) records nothing", async () => {
    const scores = scoreRows(test, 2);
    const a = ev();
    const b = ev();
    const controller = new AbortController();
    const pending = [
      a.add({ triples: test, side: "tail", scores, signal: controller.signal }),
      a.add({ triples: test, side: "head", scores, signal: controller.signal }),
      a.addSampled({
        side: "tail",
        positiveScores: [1, 2],
        negativeScores: new Float32Array(8),
        signal: controller.signal,
      }),
    ];
    controller.abort(); // the jobs are queued or running: each stops at its next task boundary
    for (const e of await Promise.all(pending.map(rejection))) expect(isAbortError(e), String(e)).toBe(true);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    expect(a.taskCounts).toEqual({ head: 0, tail: 0 });
    for (const e of [a, b]) {
      await e.add({ triples: test, side: "tail", scores });
      await e.addModel({ model: nationsModel(3), triples: test, side: "head" });
    }
    expect(a.finalize().toJSON()).toEqual(b.finalize().toJSON());

    // A chunked batch: the aborted slice is not covered and can be added again; the ranks are the unsliced ones.
    const c = ev();
    const d = ev();
    const trueScores = Array.from({ length: test.length / 3 }, (_, i) => scores[i * N + test[3 * i + 2]!]!);
    const batch = c.chunked({ triples: test, side: "tail", trueScores });
    const half = Math.floor(N / 2);
    const slice = (start: number, end: number) => {
      const rows = test.length / 3;
      const out = new Float32Array(rows * (end - start));
      for (let r = 0; r < rows; r++) out.set(scores.subarray(r * N + start, r * N + end), r * (end - start));
      return out;
    };
    const stop = new AbortController();
    const aborted = batch.add({ scores: slice(0, half), entityStart: 0, signal: stop.signal });
    stop.abort();
    expect(isAbortError(await rejection(aborted))).toBe(true);
    expect(batch.entitiesSeen).toBe(0);
    await batch.add({ scores: slice(0, half), entityStart: 0 });
    await batch.add({ scores: slice(half, N), entityStart: half });
    batch.finish();
    await d.add({ triples: test, side: "tail", scores });
    expect(c.finalize().toJSON()).toEqual(d.finalize().toJSON());

    // A RankCounter chunk: not counted, its columns can be added again.
    const counter = new RankCounter({ trueScores: [1, 2], numColumns: 2 });
    const stop2 = new AbortController();
    const chunk = counter.add({ scores: Float32Array.of(3, 0, 0, 3), columnStart: 0, signal: stop2.signal });
    stop2.abort(new Error("mine"));
    expect(((await rejection(chunk)) as Error).message).toBe("mine");
    await counter.add({ scores: Float32Array.of(3, 0, 0, 3), columnStart: 0 });
    expect(counter.ranks().optimistic).toEqual(Float64Array.of(2, 2));
  });

  it("computeRanks, countScores and ogbEvaluate aborted while running reject; the same call afterwards gives the plain result", async () => {
    const rows = 3000;
    const cols = 1000;
    const next = rng(7);
    const scores = Float32Array.from({ length: rows * cols }, () => Math.floor(next() * 50));
    const trueIndices = Int32Array.from({ length: rows }, (_, i) => (i * 13) % cols);
    const c1 = new AbortController();
    const p1 = computeRanks({ scores, numColumns: cols, trueIndices, signal: c1.signal });
    const c2 = new AbortController();
    const p2 = countScores({ scores, numColumns: cols, thresholds: new Float32Array(rows), signal: c2.signal });
    const c3 = new AbortController();
    const p3 = ogbEvaluate({
      y_pred_pos: new Float32Array(rows),
      y_pred_neg: { data: scores, shape: [rows, cols] },
      signal: c3.signal,
    });
    c1.abort();
    c2.abort();
    c3.abort();
    for (const e of await Promise.all([p1, p2, p3].map(rejection))) expect(isAbortError(e), String(e)).toBe(true);
    const plain = await computeRanks({ scores, numColumns: cols, trueIndices });
    const reports: Progress[] = [];
    const watched = await computeRanks({
      scores,
      numColumns: cols,
      trueIndices,
      signal: new AbortController().signal,
      onProgress: (p) => reports.push(p),
    });
    expect(watched).toEqual(plain);
    expect(reports.at(-1)).toEqual({ done: rows, total: rows });
  });

  it("onProgress: monotone done below total while running, one final call with done === total, on every long call", async () => {
    const check = (reports: Progress[], total: number) => {
      expect(reports.length).toBeGreaterThanOrEqual(1);
      for (const p of reports) expect(p.total).toBe(total);
      for (let i = 1; i < reports.length; i++) expect(reports[i]!.done).toBeGreaterThan(reports[i - 1]!.done);
      expect(reports.at(-1)!.done).toBe(total);
      for (const p of reports.slice(0, -1)) expect(p.done).toBeLessThan(total);
    };
    const { model, n } = bigModel("medium");
    const rows = info.backend === "ts" ? 60 : 400;
    const triples = Int32Array.from({ length: 3 * rows }, (_, i) => (i % 3 === 1 ? i % 4 : (i * 7919) % n));
    const a = new RankEvaluator({ numEntities: n, numRelations: 4 });
    const b = new RankEvaluator({ numEntities: n, numRelations: 4 });
    let reports: Progress[] = [];
    await a.addModel({ model, triples, onProgress: (p) => reports.push({ ...p }) });
    check(reports, 2 * rows);
    b.addModelSync({ model, triples });
    expect(a.finalize().toJSON()).toEqual(b.finalize().toJSON());

    const e = ev();
    const scores = scoreRows(test, 4);
    const rowsN = test.length / 3;
    reports = [];
    await e.add({ triples: test, side: "tail", scores, onProgress: (p) => reports.push(p) });
    check(reports, rowsN);
    reports = [];
    await e.addSampled({
      side: "head",
      positiveScores: [1, 2, 3],
      negativeScores: new Float32Array(12),
      onProgress: (p) => reports.push(p),
    });
    check(reports, 3);
    reports = [];
    const counter = new RankCounter({ trueScores: [1, 2] });
    await counter.add({ scores: new Float32Array(6), columnStart: 0, onProgress: (p) => reports.push(p) });
    check(reports, 2);
    reports = [];
    await countScores({
      scores,
      numColumns: N,
      thresholds: new Float32Array(rowsN),
      onProgress: (p) => reports.push(p),
    });
    check(reports, rowsN);
    reports = [];
    await ogbEvaluate({ y_pred_pos: [1, 2], y_pred_neg: new Float32Array(8), onProgress: (p) => reports.push(p) });
    check(reports, 2);
    reports = [];
    const batch = e.chunked({ triples: test.subarray(0, 6), side: "tail", trueScores: [0, 0] });
    await batch.add({ scores: new Float32Array(2 * N), entityStart: 0, onProgress: (p) => reports.push(p) });
    check(reports, 2);
    batch.finish();
  });

  it("a throwing onProgress stops the call, which rejects with what it threw and records nothing", async () => {
    const { model, triples, n } = bigModel();
    const a = new RankEvaluator({ numEntities: n, numRelations: 4 });
    const boom = new Error("progress callback failed");
    const err = await rejection(
      a.addModel({
        model,
        triples,
        onProgress: () => {
          throw boom;
        },
      }),
    );
    expect(err).toBe(boom);
    expect(a.taskCounts).toEqual({ head: 0, tail: 0 });
    const e = ev();
    const err2 = await rejection(
      e.add({
        triples: test,
        side: "tail",
        scores: scoreRows(test, 5),
        onProgress: () => {
          throw boom;
        },
      }),
    );
    expect(err2).toBe(boom);
    expect(e.taskCounts).toEqual({ head: 0, tail: 0 });
  });

  it("the final onProgress call (done === total) sees its call still running: finalize, serialize, finish and ranks refuse; the batch is recorded after it (20 tries per call)", async () => {
    const model = nationsModel(7);
    const rowsN = test.length / 3;
    const scores = scoreRows(test, 8);
    /** Runs `call` with an onProgress that tries every closing method at done === total; each must refuse. */
    const atLast = async (
      what: string,
      closers: Record<string, () => unknown>,
      call: (onProgress: (p: Progress) => void) => Promise<void>,
    ) => {
      let finals = 0;
      await call((p) => {
        if (p.done !== p.total) return;
        finals++;
        for (const [name, close] of Object.entries(closers))
          expect(close, `${what}: ${name}() from the final progress call`).toThrow(KgrankStateError);
      });
      expect(finals, what).toBe(1);
    };
    for (let t = 0; t < 20; t++) {
      const entries: [string, RankEvaluator, (e: RankEvaluator, on: (p: Progress) => void) => Promise<void>, number][] =
        [
          ["add", ev(), (e, onProgress) => e.add({ triples: test, side: "tail", scores, onProgress }), rowsN],
          ["addModel", ev(), (e, onProgress) => e.addModel({ model, triples: test, onProgress }), 2 * rowsN],
          [
            "addSampled",
            ev(),
            (e, onProgress) =>
              e.addSampled({
                side: "head",
                positiveScores: [1, 2, 3],
                negativeScores: new Float32Array(12),
                onProgress,
              }),
            3,
          ],
          [
            "add (every row restricted away)",
            new RankEvaluator({ numEntities: N, filterTriples: known, restrictRelations: [R - 1] }),
            (e, onProgress) =>
              e.add({ triples: test.map((v, i) => (i % 3 === 1 ? 0 : v)), side: "tail", scores, onProgress }),
            0,
          ],
        ];
      for (const [what, e, call, tasks] of entries) {
        await atLast(what, { finalize: () => e.finalize(), serialize: () => e.serialize() }, (on) => call(e, on));
        expect(e.taskCounts.head + e.taskCounts.tail, what).toBe(tasks);
        e.serialize();
        if (tasks > 0) {
          const done = e.finalize().info.tasks;
          expect(done.head + done.tail).toBe(tasks);
        }
      }
      const e = ev();
      const batch = e.chunked({ triples: test, side: "tail", trueScores: new Float64Array(rowsN) });
      const finish = () => batch.finish();
      await atLast("ChunkedBatch.add", { finalize: () => e.finalize(), serialize: () => e.serialize(), finish }, (on) =>
        batch.add({ scores: new Float32Array(rowsN * N), entityStart: 0, onProgress: on }),
      );
      batch.finish();
      expect(e.finalize().info.tasks.tail).toBe(rowsN);
      const counter = new RankCounter({ trueScores: [1, 2] });
      await atLast("RankCounter.add", { ranks: () => counter.ranks() }, (on) =>
        counter.add({ scores: new Float32Array(6), columnStart: 0, onProgress: on }),
      );
      expect(counter.ranks().realistic).toHaveLength(2);
    }
  });

  it("one signal shared by many calls: one listener while they run, none once they settled", async () => {
    const controller = new AbortController();
    const scores = scoreRows(test, 6);
    const e = ev();
    const calls = Array.from({ length: 40 }, (_, i) =>
      e.add({ triples: test, side: i % 2 ? "head" : "tail", scores, signal: controller.signal }),
    );
    expect(getEventListeners(controller.signal, "abort").length).toBeLessThanOrEqual(1);
    await Promise.all(calls);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    expect(e.taskCounts).toEqual({ head: 20 * (test.length / 3), tail: 20 * (test.length / 3) });
  });

  it("sync calls refuse the async options (they cannot be stopped)", () => {
    expect(() =>
      ev().addSync({ triples: test, side: "tail", scores: scoreRows(test, 1), signal: AbortSignal.abort() } as never),
    ).toThrow(KgrankInputError);
    expect(() => ev().addModelSync({ model: nationsModel(1), triples: test, onProgress: () => {} } as never)).toThrow(
      /unknown option "onProgress"/,
    );
  });
});

describe(`async readers on ${label}`, () => {
  const dir = tempDir("async-readers");

  it("readNpyAsync equals readNpy for every conversion path, also past one decoding step", async () => {
    const n = 200_000;
    const next = rng(11);
    const f = Float64Array.from({ length: n }, () => next() * 100 - 50);
    const files: [string, Uint8Array][] = [
      ["f4.npy", encodeNpy(Float32Array.from(f), [400, 500])],
      ["f8.npy", encodeNpy(f, [n])],
      [
        "i8.npy",
        encodeNpy(
          BigInt64Array.from(f, (x) => BigInt(Math.round(x * 1e6))),
          [500, 400],
        ),
      ],
      [
        "b1.npy",
        encodeNpy(
          Uint8Array.from(f, (x) => (x > 0 ? 1 : 0)),
          [n],
          { dtype: "b1" },
        ),
      ],
    ];
    // Big-endian, half precision and Fortran order, written by hand (header text as NumPy writes it).
    const header = (dict: string) => {
      const total = Math.ceil((10 + dict.length + 1) / 64) * 64;
      const text = dict.padEnd(total - 11, " ") + "\n";
      const out = new Uint8Array(total);
      out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
      new DataView(out.buffer).setUint16(8, text.length, true);
      for (let i = 0; i < text.length; i++) out[10 + i] = text.charCodeAt(i);
      return out;
    };
    const withData = (h: Uint8Array, data: Uint8Array) => {
      const out = new Uint8Array(h.length + data.length);
      out.set(h);
      out.set(data, h.length);
      return out;
    };
    const be = new Uint8Array(8 * n);
    f.forEach((x, i) => new DataView(be.buffer).setFloat64(8 * i, x, false));
    files.push(["f8-be.npy", withData(header("{'descr': '>f8', 'fortran_order': False, 'shape': (200000,), }"), be)]);
    const half = new Uint8Array(2 * n);
    for (let i = 0; i < n; i++) new DataView(half.buffer).setUint16(2 * i, (i * 7919) & 0x7bff, true);
    files.push(["f2.npy", withData(header("{'descr': '<f2', 'fortran_order': False, 'shape': (200000,), }"), half)]);
    const fortran = new Uint8Array(Float32Array.from(f).buffer);
    files.push([
      "fortran.npy",
      withData(header("{'descr': '<f4', 'fortran_order': True, 'shape': (400, 5, 100), }"), fortran),
    ]);
    for (const [name, bytes] of files) {
      const file = path.join(dir, name);
      writeFileSync(file, bytes);
      expectSameNpy(await readNpyAsync(file), readNpy(file), name);
    }
    // Errors are the sync reader's, naming the same argument.
    const truncated = path.join(dir, "truncated.npy");
    writeFileSync(truncated, files[0]![1].subarray(0, 1000));
    const syncErr = (() => {
      try {
        readNpy(truncated, "--scores");
      } catch (e) {
        return e as Error;
      }
    })();
    const asyncErr = (await rejection(readNpyAsync(truncated, { argument: "--scores" }))) as KgrankInputError;
    expect(asyncErr).toBeInstanceOf(KgrankInputError);
    expect(asyncErr.message).toBe(syncErr!.message);
    expect(((await rejection(readNpyAsync(path.join(dir, "missing.npy")))) as KgrankInputError).argument).toBe("file");
    expect(((await rejection(readNpyAsync("/dev/zero"))) as Error).message).toMatch(/device/);
  });

  it("loadDatasetAsync equals loadDataset (bundled, and a multi-piece dataset with an error on a late line)", async () => {
    expectSameDataset(await loadDatasetAsync("nations"), loadDataset("nations"));
    // A synthetic dataset of several parsing pieces (512 KiB each), with CRLF lines, blank lines and a BOM.
    const root = path.join(dir, "datasets");
    const ds = path.join(root, "synth");
    mkdirSync(ds, { recursive: true });
    const lines = (count: number, seed: number) => {
      const next = rng(seed);
      return Array.from(
        { length: count },
        (_, i) => `entity_${Math.floor(next() * 30000)}\trel_${i % 37}\tentity_${Math.floor(next() * 30000)}`,
      );
    };
    writeFileSync(path.join(ds, "train.tsv"), "\uFEFF" + lines(60_000, 1).join("\r\n") + "\n\n");
    writeFileSync(path.join(ds, "valid.tsv"), lines(2000, 2).join("\n"));
    writeFileSync(path.join(ds, "test.tsv"), lines(2000, 3).join("\n") + "\n");
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const got = await loadDatasetAsync(undefined, { datasetDir: ds });
    clearInterval(ticker);
    expectSameDataset(got, loadDataset(undefined, { datasetDir: ds }));
    expect(turns, "the event loop turned while the dataset loaded").toBeGreaterThan(0);
    // An error on a late line (another piece than the first) names the same line as the sync loader.
    const bad = lines(60_000, 4);
    bad[55_000] = "a\tb";
    writeFileSync(path.join(ds, "train.tsv"), bad.join("\n"));
    const syncMessage = (() => {
      try {
        loadDataset(undefined, { datasetDir: ds });
      } catch (e) {
        return (e as Error).message;
      }
    })();
    expect(syncMessage).toMatch(/line 55001 has 2 tab-separated fields/);
    expect(((await rejection(loadDatasetAsync(undefined, { datasetDir: ds }))) as Error).message).toBe(syncMessage);
    // Invalid UTF-8 late in the file is reported before an earlier field error, as by the one-call splitter.
    const latin = Buffer.concat([
      Buffer.from(bad.slice(0, 59_000).join("\n") + "\n"),
      Buffer.from("caf\xe9\tr\tx\n", "latin1"),
    ]);
    writeFileSync(path.join(ds, "train.tsv"), latin);
    const syncUtf8 = (() => {
      try {
        loadDataset(undefined, { datasetDir: ds });
      } catch (e) {
        return (e as Error).message;
      }
    })();
    expect(syncUtf8).toMatch(/line 59001 is not valid UTF-8/);
    expect(((await rejection(loadDatasetAsync(undefined, { datasetDir: ds }))) as Error).message).toBe(syncUtf8);
    // Aborted while it runs: the signal's reason.
    writeFileSync(path.join(ds, "train.tsv"), lines(60_000, 1).join("\n"));
    const controller = new AbortController();
    const p = loadDatasetAsync(undefined, { datasetDir: ds, signal: controller.signal });
    controller.abort();
    expect(isAbortError(await rejection(p))).toBe(true);
  });

  it("TSV split in pieces equals the one-call splitter, also where every line starts with a BOM's bytes", () => {
    // Each line but the first starts with U+FEFF: a label character there (only a file's first BOM is dropped), so
    // no piece may start at such a line - here none can, and the file is one piece, split by the one-call splitter;
    // with every other line BOM-led, pieces are cut before the others.
    for (const every of [1, 2]) {
      const lines = Array.from(
        { length: 30_000 },
        (_, i) => `${i % every === 0 && i > 0 ? "\uFEFF" : ""}e${i}\tr\te${i + 1}`,
      );
      const bytes = Buffer.from(lines.join("\n") + "\n");
      const want = splitTsvBytes(bytes, "file");
      const got = runSteps(splitTsvSteps(bytes, "file"));
      expect(got.length).toBe(want.length);
      expect(got.map((r) => r.join("\t")).join("\n")).toBe(want.map((r) => r.join("\t")).join("\n"));
    }
  });

  const fb = sharedDataset("fb15k-237");
  it.skipIf(fb.missing)(fb.name("loadDatasetAsync equals loadDataset on FB15k-237"), async () => {
    expectSameDataset(
      await loadDatasetAsync("fb15k-237", { datasetDir: SHARED_DATASETS }),
      loadDataset("fb15k-237", { datasetDir: SHARED_DATASETS }),
    );
  });
});
