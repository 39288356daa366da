/**
 * The int8 screen of ranking from embeddings (docs/screen.md), seen from the library: RankEvaluator.addModel with
 * screen "auto", "int8" and "off" gives the same ranks bit for bit (every metric of every rank type, both sides,
 * filtered, sync and async, a table in memory, read in chunks and as entity shards), on a trained-like model (true
 * answers planted near their query, so the screen decides most pairs itself) and a random one (the screen gives
 * most rows up under auto). Top-k lists (predictTopK, predictTopKAsync) likewise. On the native backend the model's
 * screenStats show the screen ran (so a screen that never ran would fail here); on the others it stays at zero. Bad
 * values of `screen` are typed errors.
 */
import { describe, expect, it } from "vitest";

import {
  EmbeddingModel,
  encodeNpy,
  KgrankInputError,
  loadScreenTable,
  openEntityTable,
  predictTopK,
  predictTopKAsync,
  RankEvaluator,
  saveScreenTable,
  type StreamPlan,
} from "../src/index";
import { backendInfo, kernels } from "../src/backend/backend";
import { AUTO_SCREEN_KERNELS, BUDGET_WHY, SCREEN_AUTO_WORK, SCREEN_MAX_DIM } from "../src/scoring/embedding-model";
import { backendLabel } from "./helpers/backend";
import { tempDir } from "./helpers/temp";
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";

const native = backendInfo().backend === "native";

/** A seeded uniform generator in [-1, 1). */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  };
}

interface World {
  n: number;
  nr: number;
  width: number;
  ent: Float32Array;
  rel: Float32Array;
  train: Int32Array;
  test: Int32Array;
}

/**
 * n entities, nr relations, 400 test triples; `planted`: each test tail is 0.8 x (head o relation) + noise, so the
 * true answer scores far above most entities (as a trained model's does).
 */
type Screened = "distmult" | "complex" | "transe-l2" | "rotate-l2";
const SCREENED: readonly Screened[] = ["distmult", "complex", "transe-l2", "rotate-l2"];
const complexOf = (i: Screened) => i === "complex" || i === "rotate-l2";

function world(interaction: Screened, planted: boolean, seed: number, n = 1500, width = 48): World {
  const next = rng(seed);
  const nr = 6;
  const ent = Float32Array.from({ length: n * width }, () => next());
  // Near-identity relations (TransE-L2: a short translation), so the planted answer lies near the query.
  const rel = Float32Array.from({ length: nr * width }, (_, i) =>
    (complexOf(interaction) && i % width >= width / 2) || interaction === "transe-l2" ? 0.1 * next() : 1 + 0.1 * next(),
  );
  const triple = (): [number, number, number] => [
    Math.floor(((next() + 1) / 2) * n) % n,
    Math.floor(((next() + 1) / 2) * nr) % nr,
    Math.floor(((next() + 1) / 2) * n) % n,
  ];
  const test = new Int32Array(3 * 400);
  for (let i = 0; i < 400; i++) {
    const [h, r, t] = triple();
    test.set([h, r, t], 3 * i);
    if (planted && h !== t) {
      for (let k = 0; k < width; k++) ent[t * width + k] = 0.8 * ent[h * width + k]! + 0.2 * next();
    }
  }
  const train = new Int32Array(3 * 2000);
  for (let i = 0; i < 2000; i++) train.set(triple(), 3 * i);
  return { n, nr, width, ent, rel, train, test };
}

function modelOf(w: World, interaction: Screened) {
  return new EmbeddingModel({
    interaction,
    entityEmbeddings: { data: w.ent, shape: [w.n, w.width] },
    relationEmbeddings: { data: w.rel, shape: [w.nr, w.width] },
    ...(complexOf(interaction) ? { complexLayout: "halves" as const } : {}),
  });
}

/** A DistMult model maker whose entity table is w's, written to a .npy file and read in chunks. */
function streamedOf(w: World, prefix: string): () => EmbeddingModel {
  const file = path.join(tempDir(prefix), "entities.npy");
  writeFileSync(file, encodeNpy(w.ent, [w.n, w.width]));
  return () =>
    new EmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: openEntityTable(file),
      relationEmbeddings: { data: w.rel, shape: [w.nr, w.width] },
    });
}

function evaluator(w: World, extra: Partial<ConstructorParameters<typeof RankEvaluator>[0]> = {}) {
  return new RankEvaluator({ numEntities: w.n, numRelations: w.nr, filterTriples: [w.train, w.test], ...extra });
}

describe(`the int8 screen gives the float32 path's ranks [${backendLabel}]`, () => {
  for (const interaction of SCREENED) {
    for (const planted of [true, false]) {
      it(`${interaction}, ${planted ? "trained-like" : "random"} model: auto, int8 and off agree (sync and async)`, async () => {
        const w = world(interaction, planted, planted ? 7 : 8);
        const results: Record<string, unknown> = {};
        const stats: Record<string, { calls: number; pairs: number; rescored: number }> = {};
        for (const screen of ["off", "auto", "int8"] as const) {
          const model = modelOf(w, interaction);
          const ev = evaluator(w);
          ev.addModelSync({ model, triples: w.test.subarray(0, 600), screen });
          await ev.addModel({ model, triples: w.test.subarray(600), screen });
          results[screen] = ev.finalize().toJSON();
          stats[screen] = model.screenStats;
        }
        expect(results.auto).toEqual(results.off);
        expect(results.int8).toEqual(results.off);
        expect(stats.off).toEqual({ calls: 0, pairs: 0, rescored: 0 });
        if (native) {
          // Every call screened under int8: 400 tasks x 2 sides x 1500 candidates.
          expect(stats.int8!.calls).toBeGreaterThan(0);
          expect(stats.int8!.pairs).toBe(400 * 2 * w.n);
          expect(stats.int8!.rescored).toBeLessThanOrEqual(stats.int8!.pairs);
          if (planted) expect(stats.int8!.rescored * 4).toBeLessThan(stats.int8!.pairs);
        } else {
          expect(stats.int8).toEqual({ calls: 0, pairs: 0, rescored: 0 });
        }
      });
    }
  }

  it("a table read in chunks and entity shards rank as the table in memory does, screen on", async () => {
    const w = world("distmult", true, 9);
    const dir = tempDir("screen-");
    const file = path.join(dir, "entities.npy");
    writeFileSync(file, encodeNpy(w.ent, [w.n, w.width]));
    const whole = evaluator(w);
    whole.addModelSync({ model: modelOf(w, "distmult"), triples: w.test, screen: "off" });
    const expected = whole.finalize().toJSON();
    const source = openEntityTable(file);
    {
      const streamed = new EmbeddingModel({
        interaction: "distmult",
        entityEmbeddings: source,
        relationEmbeddings: { data: w.rel, shape: [w.nr, w.width] },
      });
      const ev = evaluator(w);
      // A budget below the whole table: several passes over it, each chunk quantised by its own call (the planner
      // counts that copy: 512 rows with it need 262 KiB of the budget, where the float rows alone need 192 KiB).
      await ev.addModel({ model: streamed, triples: w.test, screen: "int8", memoryBudget: 400 * 1024 });
      expect(ev.finalize().toJSON()).toEqual(expected);
      if (native) expect(streamed.screenStats.pairs).toBe(400 * 2 * w.n);
    }
    const shards = [0, 1, 2].map((index) => {
      const ev = evaluator(w, { entityShard: { index, count: 3 } });
      return ev;
    });
    const model = modelOf(w, "distmult");
    for (const ev of shards) await ev.addModel({ model, triples: w.test, screen: "int8" });
    const merged = RankEvaluator.merge(shards.map((s) => s.serialize()));
    expect(merged.finalize().toJSON()).toEqual(expected);
  });

  it("the memory planner counts the screen's copy of a chunk: smaller chunks within the same budget", async () => {
    const w = world("distmult", true, 21, 6000);
    const streamedModel = streamedOf(w, "screen-plan-");
    // The screen's row: two int8 levels of the width and ten 4-byte terms; nothing where no screen runs.
    const screenRow = native ? 2 * w.width + 40 : 0;
    // Budgets that read the table (1.1 MiB) in chunks with the screen on and off; at 900 KiB the float32 path's
    // evaluation takes chunks of 1,024 rows, the screened one (a quantised copy of 136 bytes a row) 512.
    let smaller = 0;
    // Top-k holds more beside the chunks (the lists; per thread, the piece's quantised rows and undecided ids).
    for (const [budget, topKBudget] of [
      [650 * 1024, 1100 * 1024],
      [900 * 1024, 1250 * 1024],
    ] as const) {
      const plans: Record<string, StreamPlan[]> = { off: [], int8: [] };
      const results: Record<string, unknown> = {};
      const lists: Record<string, unknown> = {};
      for (const screen of ["off", "int8"] as const) {
        const model = streamedModel();
        const ev = evaluator(w);
        const onPlan = (p: StreamPlan) => plans[screen]!.push(p);
        await ev.addModel({ model, triples: w.test, screen, memoryBudget: budget, onPlan });
        results[screen] = ev.finalize().toJSON();
        lists[screen] = await predictTopKAsync(model, {
          triples: w.test,
          k: 3,
          screen,
          memoryBudget: topKBudget,
          onPlan,
        });
      }
      expect(results.int8).toEqual(results.off);
      expect(lists.int8).toEqual(lists.off);
      expect(plans.off).toHaveLength(2);
      expect(plans.int8).toHaveLength(2);
      for (const [i, off] of plans.off!.entries()) {
        const on = plans.int8![i]!;
        expect(off.whole).toBe(false);
        const floatRows = off.tableBytes / off.chunkRows;
        if (screenRow === 0) {
          expect(on).toEqual(off);
          continue;
        }
        // The chunk shrinks so that its float buffers and its quantised copy fit where the float buffers did.
        expect(on.chunkRows).toBeLessThanOrEqual(off.chunkRows);
        if (on.chunkRows < off.chunkRows) smaller++;
        const screenBytes = Math.ceil(on.chunkRows / 16) * 16 * screenRow + 2048;
        expect(on.tableBytes).toBe(on.chunkRows * floatRows + screenBytes);
        expect(on.tableBytes).toBeLessThan(on.budget);
      }
    }
    if (screenRow > 0) expect(smaller).toBeGreaterThan(0);
    // A budget the float32 path could use but the screened run cannot: the error says what the screen adds.
    const tight = 340 * 1024;
    await evaluator(w).addModel({ model: streamedModel(), triples: w.test, screen: "off", memoryBudget: tight });
    const refused = evaluator(w).addModel({
      model: streamedModel(),
      triples: w.test,
      screen: "int8",
      memoryBudget: tight,
    });
    if (screenRow > 0)
      await expect(refused).rejects.toThrow(
        /table rows .* \(of which the screen's int8 copy takes 136 bytes a row; screen off needs less\)/,
      );
    else await refused;
  });

  it("top-k lists are the same with the screen on: sync, async, filtered, an entity range, a table read in chunks", async () => {
    for (const interaction of SCREENED) {
      const w = world(interaction, true, 12);
      const dir = tempDir("screen-topk-");
      const file = path.join(dir, "entities.npy");
      writeFileSync(file, encodeNpy(w.ent, [w.n, w.width]));
      const lists: Record<string, unknown[]> = {};
      const stats: Record<string, { calls: number; pairs: number; rescored: number }> = {};
      for (const screen of ["off", "auto", "int8"] as const) {
        const model = modelOf(w, interaction);
        const streamed = new EmbeddingModel({
          interaction,
          entityEmbeddings: openEntityTable(file),
          relationEmbeddings: { data: w.rel, shape: [w.nr, w.width] },
          ...(complexOf(interaction) ? { complexLayout: "halves" as const } : {}),
        });
        const triples = w.test;
        lists[screen] = [
          predictTopK(model, { triples, k: 5, screen }),
          predictTopK(model, { triples, k: 3, filter: [w.train, w.test], entityRange: [7, 1403], screen }),
          await predictTopKAsync(model, { queries: Int32Array.of(3, 1, 4, 2, 5, 0), side: "head", k: 9, screen }),
          // A budget below the whole table: several chunks, each quantised by its own calls (the screened runs get
          // more: the planner counts the quantised copy of a chunk).
          await predictTopKAsync(streamed, {
            triples,
            k: 4,
            filter: w.train,
            screen,
            memoryBudget: (screen === "off" ? 600 : 1200) * 1024,
          }),
        ];
        stats[screen] = { ...model.screenStats };
        if (native && screen === "int8") expect(streamed.screenStats.calls).toBeGreaterThan(0);
      }
      expect(lists.auto).toEqual(lists.off);
      expect(lists.int8).toEqual(lists.off);
      expect(stats.off).toEqual({ calls: 0, pairs: 0, rescored: 0 });
      if (native) {
        expect(stats.int8!.calls).toBeGreaterThan(0);
        expect(stats.int8!.rescored).toBeLessThanOrEqual(stats.int8!.pairs);
      } else {
        expect(stats.int8).toEqual({ calls: 0, pairs: 0, rescored: 0 });
      }
      // A bad mode is a typed error naming screen.
      expect(() => predictTopK(modelOf(w, interaction), { triples: w.test, k: 2, screen: "fast" as never })).toThrow(
        KgrankInputError,
      );
    }
  });

  it("a quantised table on disk: saved once, read back for the same table only, the same ranks and lists", () => {
    const w = world("distmult", true, 13);
    const dir = tempDir("screen-table-");
    const file = path.join(dir, "entity.kgq");
    const expectError = (f: () => unknown, argument: string, re: RegExp) => {
      let error: unknown = null;
      try {
        f();
      } catch (e) {
        error = e;
      }
      expect(error, String(re)).toBeInstanceOf(KgrankInputError);
      expect((error as KgrankInputError).argument).toBe(argument);
      expect((error as Error).message).toMatch(re);
    };
    const made = modelOf(w, "distmult");
    if (!native) {
      expectError(() => saveScreenTable(made, file), "model", /backend has no int8 screen/);
      expect(loadScreenTable(made, file)).toBe(false);
      return;
    }
    saveScreenTable(made, file);
    // A fresh model of the same values (another buffer) reads it and ranks with it: the same results as off.
    const again = modelOf({ ...w, ent: w.ent.slice() }, "distmult");
    expect(loadScreenTable(again, file)).toBe(true);
    const on = evaluator(w);
    on.addModelSync({ model: again, triples: w.test, screen: "int8" }); // any level (auto: only with a vector kernel)
    const off = evaluator(w);
    off.addModelSync({ model: modelOf(w, "distmult"), triples: w.test, screen: "off" });
    expect(on.finalize().toJSON()).toEqual(off.finalize().toJSON());
    expect(again.screenStats.calls).toBeGreaterThan(0);
    expect(predictTopK(again, { triples: w.test, k: 4, screen: "int8" })).toEqual(
      predictTopK(modelOf(w, "distmult"), { triples: w.test, k: 4 }),
    );
    // Another table: other values, other rows, another interaction; a damaged or cut file; not a table at all.
    const changed = w.ent.slice();
    changed[77] = changed[77]! + 2 ** -20;
    expectError(() => loadScreenTable(modelOf({ ...w, ent: changed }, "distmult"), file), "path", /other values/);
    const fewer = { ...w, n: w.n - 1, ent: w.ent.slice(0, (w.n - 1) * w.width) };
    expectError(() => loadScreenTable(modelOf(fewer, "distmult"), file), "path", /1500 rows of 48 floats.*1499 rows/);
    expectError(() => loadScreenTable(modelOf(w, "complex"), file), "path", /another interaction/);
    const bytes = readFileSync(file);
    const damaged = Buffer.from(bytes);
    damaged[Math.floor(bytes.length / 2)]! ^= 1;
    writeFileSync(path.join(dir, "damaged.kgq"), damaged);
    expectError(
      () => loadScreenTable(again, path.join(dir, "damaged.kgq")),
      "path",
      /the file is damaged\): write it again with kgrank quantize$/,
    );
    writeFileSync(path.join(dir, "cut.kgq"), bytes.subarray(0, bytes.length - 100));
    expectError(() => loadScreenTable(again, path.join(dir, "cut.kgq")), "path", /cut short/);
    writeFileSync(path.join(dir, "other.kgq"), encodeNpy(w.ent, [w.n, w.width]));
    writeFileSync(path.join(dir, "table.npy"), encodeNpy(w.ent, [w.n, w.width]));
    expectError(() => loadScreenTable(again, path.join(dir, "other.kgq")), "path", /no KGRANKQ1 header/);
    expectError(() => loadScreenTable(again, path.join(dir, "missing.kgq")), "path", /cannot open/);
    expectError(
      () => saveScreenTable(made, path.join(dir, "no-such-dir", "x.kgq")),
      "path",
      /cannot create .*no-such-dir\/x\.kgq: No such file or directory$/,
    );
    // What the screen does not apply to, and bad arguments.
    const transe = new EmbeddingModel({
      interaction: "transe-l1",
      entityEmbeddings: { data: w.ent, shape: [w.n, w.width] },
      relationEmbeddings: { data: w.rel, shape: [w.nr, w.width] },
    });
    expectError(() => saveScreenTable(transe, file), "model", /DistMult, ComplEx, TransE-L2 and RotatE-L2 at float32/);
    const streamed = new EmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: openEntityTable(path.join(dir, "other.kgq").replace(/other\.kgq$/, "table.npy")),
      relationEmbeddings: { data: w.rel, shape: [w.nr, w.width] },
    });
    expectError(() => loadScreenTable(streamed, file), "model", /in chunks/);
    expectError(() => loadScreenTable(made, "" as never), "path", /file name/);
    expectError(() => saveScreenTable({} as never, file), "model", /EmbeddingModel/);
  });

  it("auto quantises a table once a model's rows x width reach SCREEN_AUTO_WORK, then screens every batch", async () => {
    // The rule is the kernel's for a chunk (native/core/screen.h kScreenAutoWork), written twice: they must agree.
    const header = readFileSync(path.join(__dirname, "..", "native", "core", "screen.h"), "utf8");
    const shift = /kScreenAutoWork = size_t\{1\} << (\d+);/.exec(header);
    expect(shift).not.toBeNull();
    expect(2 ** Number(shift![1])).toBe(SCREEN_AUTO_WORK);
    // 1,500 entities: an async job of the small batch runs in several slices (blocks of 256 rows), which must not
    // quantise the table for themselves either.
    const w = world("distmult", true, 13);
    const batch = (count: number) => {
      const t = new Int32Array(3 * count);
      for (let i = 0; i < count; i++) t.set(w.test.subarray(3 * (i % 400), 3 * (i % 400) + 3), 3 * i);
      return t;
    };
    const below = batch(Math.ceil(SCREEN_AUTO_WORK / w.width) - 1);
    const at = batch(Math.ceil(SCREEN_AUTO_WORK / w.width));
    const model = modelOf(w, "distmult");
    const run = (m: EmbeddingModel, triples: Int32Array, screen: "off" | "auto", side: "tail" | "both" = "both") => {
      const ev = evaluator(w);
      ev.addModelSync({ model: m, triples, screen, side });
      return ev.finalize().toJSON();
    };
    // The tail side's rows times 48 fall one row short of the work: the float32 path, nothing quantised; the same
    // rows again, async (in slices of 256 rows, which must not quantise the table for themselves either), and the
    // model's rows under auto reach it: that call quantises the table and screens.
    const expected = run(modelOf(w, "distmult"), below, "off", "tail");
    expect(run(model, below, "auto", "tail")).toEqual(expected);
    expect(model.screenStats.calls).toBe(0);
    const async = evaluator(w);
    await async.addModel({ model, triples: below, screen: "auto", side: "tail" });
    expect(async.finalize().toJSON()).toEqual(expected);
    // Auto screens where the native level has a screen kernel that pays (not the scalar one, nor AVX2's without VNNI).
    const vector = native && AUTO_SCREEN_KERNELS.has(backendInfo().screenKernel!);
    expect(model.screenStats.calls > 0).toBe(vector);
    // A fresh model: one batch at the work screens from its first call.
    const first = modelOf(w, "distmult");
    expect(run(first, at, "auto", "tail")).toEqual(run(modelOf(w, "distmult"), at, "off", "tail"));
    expect(first.screenStats.calls > 0).toBe(vector);
    const after = model.screenStats.calls;
    // The table is now held: a small batch screens with it.
    expect(run(model, batch(40), "auto", "tail")).toEqual(run(modelOf(w, "distmult"), batch(40), "off", "tail"));
    if (vector) expect(model.screenStats.calls).toBeGreaterThan(after);
    // No screen named: auto, the default (a fresh model quantises for the large batch as auto did).
    const fresh = modelOf(w, "distmult");
    const ev = evaluator(w);
    ev.addModelSync({ model: fresh, triples: at });
    expect(ev.finalize().toJSON()).toEqual(run(modelOf(w, "distmult"), at, "off"));
    expect(fresh.screenStats.calls > 0).toBe(vector);
  });

  it("auto whose table could not be made keeps the float32 path for the model's later calls, large ones too", async () => {
    // The failure to make the table (memory) is injected into the backend's screenTable once; every later call,
    // an async batch whose rows alone would pay for quantising included, must not quantise a table of its own.
    const w = world("distmult", true, 29);
    const triples = new Int32Array(3 * 3000);
    for (let i = 0; i < 3000; i++) triples.set(w.test.subarray(3 * (i % 400), 3 * (i % 400) + 3), 3 * i);
    expect(3000 * w.width).toBeGreaterThanOrEqual(SCREEN_AUTO_WORK);
    const expected = (() => {
      const ev = evaluator(w);
      ev.addModelSync({ model: modelOf(w, "distmult"), triples, screen: "off" });
      return ev.finalize().toJSON();
    })();
    const model = modelOf(w, "distmult");
    const k = kernels();
    const make = k.screenTable;
    let failed = 0;
    if (make) {
      k.screenTable = () => {
        failed++;
        throw new RangeError("cannot allocate the table (injected)");
      };
    }
    try {
      const ev = evaluator(w);
      ev.addModelSync({ model, triples, screen: "auto" });
      expect(ev.finalize().toJSON()).toEqual(expected);
    } finally {
      if (make) k.screenTable = make;
    }
    const screens = native && AUTO_SCREEN_KERNELS.has(backendInfo().screenKernel!);
    expect(failed).toBe(screens ? 1 : 0);
    if (screens) expect(model.screenWhy).toMatch(/could not be made \(cannot allocate the table \(injected\)\)/);
    for (const sync of [true, false]) {
      const ev = evaluator(w);
      if (sync) ev.addModelSync({ model, triples, screen: "auto" });
      else await ev.addModel({ model, triples, screen: "auto" });
      expect(ev.finalize().toJSON()).toEqual(expected);
    }
    expect(model.screenStats.calls).toBe(0);
    // int8 still asks for the table (and gets it now): auto's choice does not outlive the model's auto use.
    const ev = evaluator(w);
    ev.addModelSync({ model, triples, screen: "int8" });
    expect(ev.finalize().toJSON()).toEqual(expected);
    expect(model.screenStats.calls > 0).toBe(native);
  });

  it("auto counts a top-k call's rows once, however many pieces the async call runs", async () => {
    // 1,500 tail queries x 48 < SCREEN_AUTO_WORK: two pieces of rows (1,024 and 476) must not count them twice.
    const w = world("distmult", true, 17);
    const queries = Int32Array.from({ length: 2 * 1500 }, (_, i) => (i % 2 === 1 ? i % w.nr : (i * 37) % w.n));
    expect(1500 * w.width).toBeLessThan(SCREEN_AUTO_WORK);
    const sync = modelOf(w, "distmult");
    const asyncModel = modelOf(w, "distmult");
    const a = predictTopK(sync, { queries, side: "tail", k: 5, screen: "auto" });
    const b = await predictTopKAsync(asyncModel, { queries, side: "tail", k: 5, screen: "auto" });
    expect(b).toEqual(a);
    expect(sync.screenStats.calls).toBe(0);
    expect(asyncModel.screenStats.calls).toBe(0);
    // Twice as many rows reach the work: both screen where the kernel pays.
    const twice = Int32Array.from({ length: 2 * 3000 }, (_, i) => queries[i % queries.length]!);
    const vector = native && AUTO_SCREEN_KERNELS.has(backendInfo().screenKernel!);
    const c = await predictTopKAsync(modelOf(w, "distmult"), { queries: twice, side: "tail", k: 5, screen: "off" });
    const onModel = modelOf(w, "distmult");
    expect(await predictTopKAsync(onModel, { queries: twice, side: "tail", k: 5, screen: "auto" })).toEqual(c);
    expect(onModel.screenStats.calls > 0).toBe(vector);
  });

  it("auto under a memoryBudget that holds the table only without its int8 copy takes the float32 path", async () => {
    // 2,000 x 128 floats (1000 KiB) and a copy of 296 bytes a row (578 KiB); 3,000 rows per side, and a piece of
    // 1,024 rows for top-k, times 128 reach SCREEN_AUTO_WORK, so the plans count the copy where the screen could run.
    const w = world("distmult", true, 23, 2000, 128);
    const triples = new Int32Array(3 * 3000);
    for (let i = 0; i < 3000; i++) triples.set(w.test.subarray(3 * (i % 400), 3 * (i % 400) + 3), 3 * i);
    const streamedModel = streamedOf(w, "screen-auto-budget-");
    const screens = native && AUTO_SCREEN_KERNELS.has(backendInfo().screenKernel!);
    const copy = screens ? 2000 * (2 * 128 + 40) : 0;
    const ranks = async (screen: "off" | "auto" | "int8", memoryBudget: number) => {
      const model = streamedModel();
      const plans: StreamPlan[] = [];
      const ev = evaluator(w);
      await ev.addModel({ model, triples, screen, memoryBudget, onPlan: (p) => plans.push(p) });
      return { results: ev.finalize().toJSON(), plans, calls: model.screenStats.calls, why: model.screenWhy };
    };
    const lists = async (screen: "off" | "auto", memoryBudget: number) => {
      const model = streamedModel();
      const plans: StreamPlan[] = [];
      const got = await predictTopKAsync(model, {
        triples: triples.subarray(0, 3 * 1024),
        side: "tail",
        k: 3,
        screen,
        memoryBudget,
        onPlan: (p) => plans.push(p),
      });
      return { lists: got, plans, calls: model.screenStats.calls, why: model.screenWhy };
    };
    const roomy = 64 << 20;
    // The least budgets that read the table once on the float32 path, and a little more: the table fits whole, but
    // not with its copy.
    const off = await ranks("off", roomy);
    const offLists = await lists("off", roomy);
    const budget = off.plans[0]!.onePassBudget + 64 * 1024;
    // Top-k of 1,024 tail queries (one piece) reads the table once holding every query row (1,044 bytes each: the
    // anchor row twice, its factor, ids), and reads it whole with 64 of them: that budget and a little more.
    const topKBudget = offLists.plans[0]!.onePassBudget - (1024 - 64) * 1044 + 64 * 1024;
    expect((await lists("off", topKBudget)).plans.map((p) => p.whole)).toEqual([true]);
    // Auto reads it whole and keeps the float32 path (and says why), where int8 reads it in chunks with the copy.
    const auto = await ranks("auto", budget);
    expect(auto.results).toEqual(off.results);
    expect(auto.plans.map((p) => p.whole)).toEqual([true]);
    expect(auto.calls).toBe(0);
    expect(auto.why).toBe(screens ? BUDGET_WHY : null);
    const autoLists = await lists("auto", topKBudget);
    expect(autoLists.lists).toEqual(offLists.lists);
    expect(autoLists.plans.map((p) => p.whole)).toEqual([true]);
    expect(autoLists.calls).toBe(0);
    expect(autoLists.why).toBe(screens ? BUDGET_WHY : null);
    if (screens) {
      expect(budget).toBeLessThan(off.plans[0]!.onePassBudget + copy);
      const int8 = await ranks("int8", budget);
      expect(int8.results).toEqual(off.results);
      expect(int8.plans.some((p) => !p.whole)).toBe(true);
      expect(int8.calls).toBeGreaterThan(0);
    }
    // A budget that holds both: auto screens, the table whole.
    const both = await ranks("auto", roomy);
    expect(both.results).toEqual(off.results);
    expect(both.plans.map((p) => p.whole)).toEqual([true]);
    expect(both.calls > 0).toBe(screens);
    expect(both.why).toBeNull();
    const bothLists = await lists("auto", roomy);
    expect(bothLists.lists).toEqual(offLists.lists);
    expect(bothLists.calls > 0).toBe(screens);
  });

  it("screen must be auto, int8 or off: anything else is a KgrankInputError naming it", () => {
    const w = world("distmult", true, 10);
    const model = modelOf(w, "distmult");
    for (const bad of ["fast", "INT8", 1, null, true]) {
      const ev = evaluator(w);
      let error: unknown = null;
      try {
        ev.addModelSync({ model, triples: w.test.subarray(0, 3), screen: bad as never });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(KgrankInputError);
      expect((error as KgrankInputError).argument).toBe("screen");
      expect(String((error as Error).message)).toMatch(/"off", "auto", "int8"/);
    }
  });

  it("float64 models and interactions the screen does not apply to rank as before, the screen unused", () => {
    const w = world("distmult", true, 11);
    for (const [interaction, precision] of [
      ["distmult", "float64"],
      ["transe-l1", "float32"],
    ] as const) {
      const make = () =>
        new EmbeddingModel({
          interaction,
          entityEmbeddings: { data: w.ent, shape: [w.n, w.width] },
          relationEmbeddings: { data: w.rel, shape: [w.nr, w.width] },
          precision,
        });
      const a = make();
      const b = make();
      const on = evaluator(w);
      on.addModelSync({ model: a, triples: w.test, screen: "int8" });
      const off = evaluator(w);
      off.addModelSync({ model: b, triples: w.test, screen: "off" });
      expect(on.finalize().toJSON()).toEqual(off.finalize().toJSON());
      expect(a.screenStats).toEqual({ calls: 0, pairs: 0, rescored: 0 });
    }
  });

  it("rows wider than SCREEN_MAX_DIM keep the float32 path in every mode; their table cannot be saved", () => {
    const header = readFileSync(path.join(__dirname, "..", "native", "core", "screen.h"), "utf8");
    expect(/kScreenMaxDim = (\d+);/.exec(header)?.[1]).toBe(String(SCREEN_MAX_DIM));
    // 40 entities of 65,004 elements (10 MiB), 3 relations, 40 test triples.
    const n = 40;
    const width = SCREEN_MAX_DIM + 4;
    const next = rng(5);
    const ent = Float32Array.from({ length: n * width }, () => next());
    const rel = Float32Array.from({ length: 3 * width }, () => 1 + 0.1 * next());
    const test = Int32Array.from({ length: 3 * 40 }, (_, i) => (i % 3 === 1 ? i % 3 : (i * 7) % n));
    const make = () =>
      new EmbeddingModel({
        interaction: "distmult",
        entityEmbeddings: { data: ent, shape: [n, width] },
        relationEmbeddings: { data: rel, shape: [3, width] },
      });
    const run = (model: EmbeddingModel, screen: "off" | "int8" | "auto") => {
      const ev = new RankEvaluator({ numEntities: n, numRelations: 3, filterTriples: [test] });
      ev.addModelSync({ model, triples: test, screen });
      return ev.finalize().toJSON();
    };
    const wide = make();
    const expected = run(make(), "off");
    expect(run(wide, "int8")).toEqual(expected);
    expect(run(wide, "auto")).toEqual(expected);
    expect(wide.screenStats).toEqual({ calls: 0, pairs: 0, rescored: 0 });
    expect(wide.screenRowBytes("int8")).toBe(0);
    const file = path.join(tempDir("screen-wide-"), "wide.kgq");
    expect(() => saveScreenTable(wide, file)).toThrow(KgrankInputError);
    expect(() => saveScreenTable(wide, file)).toThrow(/^model: has rows of 65004 elements: .* at most 65000/);
  });
});
