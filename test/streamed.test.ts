/**
 * Entity tables read from disk in chunks (openEntityTable, RankEvaluator.addModel with memoryBudget): the evaluator's
 * state after a streamed run must equal, byte for byte, the state after the same triples ranked from the table in
 * memory, for every interaction, both sides, filtered and unfiltered, the OGB protocol, float16 / bfloat16 / float32
 * / float64 storage, both precisions, and budgets from one that forces many blocks and one-row chunks to one that
 * holds the whole table. Bad input: budgets too small, files that are not chunk-readable or lie, a value that is not
 * finite, the sync call, restriction. Top-k lists from a chunked table (predictTopKAsync with memoryBudget) equal the
 * in-memory predictTopK's, ids and scores, bit for bit, under the same range of budgets.
 */
import { renameSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

import {
  type EntityRowSource,
  type EntityTableFile,
  type StreamPlan,
  EmbeddingModel,
  encodeNpy,
  KgrankInputError,
  loadEmbeddingModel,
  openEntityTable,
  predictTopK,
  predictTopKAsync,
  RankEvaluator,
  readNpy,
  readSafetensors,
} from "../src/index";
import { kernels } from "../src/backend/backend";
import { safetensorsFile } from "./helpers/archives";
import { backendLabel } from "./helpers/backend";
import { randomValues } from "./helpers/embedding-reference";
import { seededTriples } from "./helpers/seeded-triples";
import { tempDir } from "./helpers/temp";

type Name = "transe-l1" | "transe-l2" | "distmult" | "complex" | "rotate" | "rotate-l2" | "pairre";

const CASES: { name: Name; layout?: "halves" | "interleaved"; phases?: boolean }[] = [
  { name: "transe-l1" },
  { name: "transe-l2" },
  { name: "distmult" },
  { name: "complex", layout: "interleaved" },
  { name: "rotate", layout: "halves", phases: true },
  { name: "rotate-l2", layout: "interleaved", phases: false },
  { name: "pairre" },
];

/** Entities: enough that the table exceeds the least budget (a block of 64 queries, a chunk of 512 rows). */
const N = 4000;
const R = 9;
const DIM = 8;

/** Seeded triples: a Zipf-like head popularity so the filter has heavy keys. */
const triples = (count: number, seed: number) => seededTriples(count, seed, N, R, 3);

const TRAIN = triples(3000, 1);
const TEST = triples(150, 2);

function widths(c: (typeof CASES)[number]) {
  const rotation = c.name === "rotate" || c.name === "rotate-l2";
  const width = c.name === "complex" || rotation ? 2 * DIM : DIM;
  const relWidth = c.name === "pairre" ? 2 * width : rotation && c.phases ? width / 2 : width;
  return { width, relWidth };
}

function options(c: (typeof CASES)[number], precision: "float32" | "float64" = "float32") {
  return {
    interaction: c.name,
    ...(c.layout ? { complexLayout: c.layout } : {}),
    ...(c.phases ? { phaseScale: 1.0471975511965976 } : {}),
    precision,
  } as const;
}

function evaluator(filtered: boolean): RankEvaluator {
  return new RankEvaluator({
    numEntities: N,
    numRelations: R,
    ...(filtered ? { filterTriples: [TRAIN, TEST] } : {}),
  });
}

/** Room for the filter index of TRAIN + TEST (about 80 KiB on both backends), added to a filtered run's budget. */
const INDEX = 96 << 10;

/** (head, relation) pairs of TEST. */
const QUERIES = Int32Array.from(TEST.filter((_, i) => i % 3 !== 2));

/**
 * Ranks TEST (or with OGB negatives) from `model` and returns the evaluator's state; `memoryBudget` is what the run
 * may use beyond the filter index. `plans` receives how the table was read.
 */
async function state(
  model: EmbeddingModel,
  filtered: boolean,
  extra?: number,
  negatives?: boolean,
  plans?: StreamPlan[],
) {
  const e = evaluator(filtered && !negatives);
  const memoryBudget = extra === undefined ? undefined : extra + (filtered && !negatives ? INDEX : 0);
  await e.addModel({
    model,
    triples: TEST,
    ...(memoryBudget ? { memoryBudget } : {}),
    ...(negatives ? NEGATIVES : {}),
    ...(plans ? { onPlan: (p: StreamPlan) => plans.push(p) } : {}),
  });
  return Buffer.from(e.serialize());
}

const NEGATIVES = {
  negatives: { head: triples(50 * 3, 7).map((x) => x % N), tail: triples(50 * 3, 8).map((x) => x % N) },
};

/** The least budget a refusal names (its first size: KiB, or exact bytes), in bytes. */
function leastNamed(e: unknown): number {
  const m = /give at least ([\d.]+) (KiB|MiB|B)\b/.exec(String(e));
  expect(m, String(e)).not.toBeNull();
  return Math.ceil(Number(m![1]) * (m![2] === "MiB" ? 1 << 20 : m![2] === "KiB" ? 1024 : 1));
}

const dir = tempDir("kgrank-streamed-");
let fileNo = 0;
function file(name: string, bytes: Uint8Array): string {
  const f = path.join(dir, `${fileNo++}-${name}`);
  writeFileSync(f, bytes);
  return f;
}

describe(`entity tables read in chunks [${backendLabel}]`, () => {
  for (const c of CASES) {
    it(`${c.name}${c.layout ? `/${c.layout}` : ""}: streamed ranks equal the in-memory ranks, bit for bit`, async () => {
      const { width, relWidth } = widths(c);
      const ent = randomValues(N * width, 11, 0.5);
      const rel = randomValues(R * relWidth, 12, c.phases ? 3 : 0.5);
      const relationEmbeddings = { data: rel, shape: [R, relWidth] };
      const inMemory = new EmbeddingModel({
        ...options(c),
        entityEmbeddings: { data: ent, shape: [N, width] },
        relationEmbeddings,
      });
      const table = openEntityTable(file("ent.npy", encodeNpy(ent, [N, width])));
      const streamed = new EmbeddingModel({ ...options(c), entityEmbeddings: table, relationEmbeddings });
      expect(streamed.numEntities).toBe(N);
      for (const filtered of [true, false]) {
        const want = await state(inMemory, filtered);
        // The least budget (its refusal names it): blocks of 64 queries, chunks of 512 rows; 12 KiB more; 64 MiB:
        // the table read whole.
        const least = leastNamed(await state(streamed, filtered, 1).catch((e: unknown) => e));
        const plans: StreamPlan[] = [];
        for (const budget of [least, least + (12 << 10), 64 << 20]) {
          const extra = budget - (filtered ? INDEX : 0);
          expect(
            await state(streamed, filtered, extra, false, plans),
            `filtered ${filtered}, budget ${budget}`,
          ).toEqual(want);
        }
        expect(plans.map((p) => p.whole)).toEqual([false, false, true]);
        expect(plans[0]!.passes).toBeGreaterThan(1);
        expect(plans[0]!.chunks).toBeGreaterThan(1);
      }
      expect(await state(streamed, false, 64 << 10, true)).toEqual(await state(inMemory, false, undefined, true));
      expect(await state(streamed, false, 64 << 20, true)).toEqual(await state(inMemory, false, undefined, true));
    });
  }

  it("float16, bfloat16 and float64 storage convert as the in-memory readers do; float64 accumulation too", async () => {
    const c = CASES[2]!;
    const rel = randomValues(R * DIM, 12, 0.5);
    const relationEmbeddings = { data: rel, shape: [R, DIM] };
    const values = randomValues(N * DIM, 21, 0.5);
    const f16 = new Uint16Array(N * DIM);
    const bf16 = new Uint16Array(N * DIM);
    const f32 = new Uint32Array(values.buffer);
    for (let i = 0; i < f16.length; i++) {
      f16[i] = (f32[i]! >>> 16) & 0x8000 ? 0xb000 | (i % 1000) : 0x3000 | (i % 1000); // small float16 values
      bf16[i] = f32[i]! >>> 16;
    }
    const npy16 = file("f16.npy", npyBytes("<f2", f16, [N, DIM]));
    const st16 = file("bf16.safetensors", safetensorsFile({ ent: { dtype: "BF16", shape: [N, DIM], data: bf16 } }));
    const npy64 = file(
      "f8.npy",
      encodeNpy(
        Float64Array.from(values, (v, i) => v + i * 1e-12),
        [N, DIM],
      ),
    );
    for (const [f, readAll] of [
      [npy16, () => readNpy(npy16)],
      [st16, () => Object.values(readSafetensors(st16))[0]!],
      [npy64, () => readNpy(npy64)],
    ] as const) {
      for (const precision of ["float32", "float64"] as const) {
        const m = readAll();
        const inMemory = new EmbeddingModel({
          ...options(c, precision),
          entityEmbeddings: { data: m.data as Float32Array, shape: m.shape },
          relationEmbeddings,
        });
        const streamed = new EmbeddingModel({
          ...options(c, precision),
          entityEmbeddings: openEntityTable(f),
          relationEmbeddings,
        });
        const least = leastNamed(await state(streamed, true, 1).catch((e: unknown) => e));
        const plans: StreamPlan[] = [];
        expect(await state(streamed, true, least - INDEX, false, plans), `${f} ${precision}`).toEqual(
          await state(inMemory, true),
        );
        expect(plans[0]!.whole).toBe(false);
        // Read whole (converted in pieces through one scratch buffer): the same.
        expect(await state(streamed, true, 64 << 20, false, plans), `${f} ${precision} whole`).toEqual(
          await state(inMemory, true),
        );
        expect(plans[1]!.whole).toBe(true);
      }
    }
  });

  it("reports progress and stops on abort, recording nothing", async () => {
    const ent = randomValues(N * DIM, 11, 0.5);
    const model = new EmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: openEntityTable(file("ent.npy", encodeNpy(ent, [N, DIM]))),
      relationEmbeddings: { data: randomValues(R * DIM, 12, 0.5), shape: [R, DIM] },
    });
    const e = evaluator(true);
    const seen: number[] = [];
    const budget = leastNamed(await e.addModel({ model, triples: TEST, memoryBudget: 1 }).catch((x: unknown) => x));
    await e.addModel({
      model,
      triples: TEST,
      memoryBudget: budget,
      onProgress: (p) => seen.push(p.done / p.total),
    });
    expect(seen.at(-1)).toBe(1);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThan(seen[i - 1]!);
    const before = Buffer.from(e.serialize());
    const ac = new AbortController();
    const call = e.addModel({
      model,
      triples: TEST,
      memoryBudget: budget,
      signal: ac.signal,
      onProgress: () => ac.abort(new Error("enough")),
    });
    await expect(call).rejects.toThrow("enough");
    expect(Buffer.from(e.serialize())).toEqual(before);
  });

  it("firstNonFinite (the check of each chunk read) finds the first NaN or infinity at any position", () => {
    const k = kernels();
    for (const Ctor of [Float32Array, Float64Array]) {
      const values = new Ctor(10_000).map((_, i) => (i % 7) - 3.5);
      expect(k.firstNonFinite(values)).toBe(-1);
      expect(k.firstNonFinite(new Ctor(0))).toBe(-1);
      for (const at of [0, 1, 4095, 4096, 4097, 9999]) {
        for (const bad of [NaN, Infinity, -Infinity]) {
          const v = values.slice();
          v[at] = bad;
          v[Math.min(9999, at + 5)] = NaN;
          expect(k.firstNonFinite(v), `${Ctor.name} ${bad} at ${at}`).toBe(at);
        }
      }
      const big = values.slice();
      big[77] = Ctor === Float32Array ? 3.4e38 : Number.MAX_VALUE; // finite, however large
      expect(k.firstNonFinite(big)).toBe(-1);
    }
  });

  it("refuses what it cannot do, naming the argument and the fix", async () => {
    const ent = randomValues(N * DIM, 11, 0.5);
    const f = file("ent.npy", encodeNpy(ent, [N, DIM]));
    const relationEmbeddings = { data: randomValues(R * DIM, 12, 0.5), shape: [R, DIM] };
    const model = new EmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: openEntityTable(f),
      relationEmbeddings,
    });
    const e = evaluator(true);
    await expect(e.addModel({ model, triples: TEST, memoryBudget: 512 })).rejects.toThrow(
      /memoryBudget: 512 B cannot hold a query block beside the filter index \(.*\) and a table chunk: 64 query rows .* and 512 table rows .*; give at least [\d.]+ KiB \(more makes fewer passes over the table; [\d.]+ KiB reads it once\)$/,
    );
    await expect(e.addModel({ model, triples: TEST, memoryBudget: 1.5 })).rejects.toThrow(
      /memoryBudget: must be a whole number of bytes/,
    );
    expect(() => e.addModelSync({ model, triples: TEST })).toThrow(
      /model: reads its entity table from disk in chunks: rank it with addModel\(\)/,
    );
    const restricted = new RankEvaluator({ numEntities: N, numRelations: R, restrictEntities: [...Array(600).keys()] });
    await expect(restricted.addModel({ model, triples: TEST })).rejects.toThrow(
      /entity restriction .* needs the table in memory/,
    );
    expect(() => model.scoreTriples(TEST)).toThrow(KgrankInputError);
    // Not chunk-readable, or lying about its size.
    const bytes = encodeNpy(ent, [N, DIM]);
    expect(() => openEntityTable(file("short.npy", bytes.subarray(0, bytes.length - 4)))).toThrow(
      /entityEmbeddings: .*truncated|entityEmbeddings: .*declared/,
    );
    expect(() => openEntityTable(file("ent.npz", bytes))).toThrow(
      /a table read in chunks must be a \.npy or \.safetensors file/,
    );
    expect(() => openEntityTable(file("ids.npy", encodeNpy(new Int32Array(8), [4, 2])))).toThrow(
      /dtype i4; embeddings must be float16/,
    );
    expect(() => openEntityTable(file("vec.npy", encodeNpy(new Float32Array(8), [8])))).toThrow(
      /must be 2-D \[rows, dim\]/,
    );
    const fortran = npyBytes("<f4", new Float32Array(8), [4, 2], true);
    expect(() => openEntityTable(file("f.npy", fortran))).toThrow(/Fortran \(column\) order/);
    const bad = ent.slice();
    bad[600 * DIM + 3] = NaN;
    const nanModel = new EmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: openEntityTable(file("nan.npy", encodeNpy(bad, [N, DIM]))),
      relationEmbeddings,
    });
    await expect(evaluator(true).addModel({ model: nanModel, triples: TEST, memoryBudget: 1 << 20 })).rejects.toThrow(
      /entityEmbeddings: .*nan\.npy row 600, column 3 is NaN: embeddings must be finite/,
    );
  });
});

describe(`top-k lists from entity tables read in chunks [${backendLabel}]`, () => {
  for (const c of CASES) {
    it(`${c.name}${c.layout ? `/${c.layout}` : ""}: streamed lists equal the in-memory lists, bit for bit`, async () => {
      const { width, relWidth } = widths(c);
      const ent = randomValues(N * width, 31, 0.5);
      const relationEmbeddings = { data: randomValues(R * relWidth, 32, c.phases ? 3 : 0.5), shape: [R, relWidth] };
      const inMemory = new EmbeddingModel({
        ...options(c),
        entityEmbeddings: { data: ent, shape: [N, width] },
        relationEmbeddings,
      });
      const streamed = new EmbeddingModel({
        ...options(c),
        entityEmbeddings: openEntityTable(file("ent.npy", encodeNpy(ent, [N, width]))),
        relationEmbeddings,
      });
      const calls = [
        { triples: TEST, k: 7, filter: [TRAIN, TEST] },
        { triples: TEST, k: 3, side: "head" as const },
        { queries: QUERIES, k: 10, filter: TRAIN },
        { queries: QUERIES, k: 5, entityRange: [123, 456] as const },
      ];
      for (const call of calls) {
        const want = predictTopK(inMemory, call);
        // The budget a too-small one's error names as enough, and 12 KiB over it: blocks of tens of queries, chunks
        // of tens of rows; then 64 MiB: one block, one chunk.
        const refused = await predictTopKAsync(streamed, { ...call, memoryBudget: 1 }).catch((e: Error) => e);
        const least = leastNamed(refused); // accepted: see the last test of this block
        const plans: StreamPlan[] = [];
        for (const memoryBudget of [least, least + (12 << 10), 64 << 20]) {
          const got = await predictTopKAsync(streamed, { ...call, memoryBudget, onPlan: (p) => plans.push(p) });
          expect(got, `${JSON.stringify(Object.keys(call))} k ${call.k} budget ${memoryBudget}`).toEqual(want);
        }
        expect(plans.at(-1)!.whole).toBe(true);
      }
    });
  }

  it("float16 storage and float64 accumulation: the lists of the converted table in memory", async () => {
    const rel = { data: randomValues(R * DIM, 12, 0.5), shape: [R, DIM] };
    const f16 = Uint16Array.from({ length: N * DIM }, (_, i) =>
      ((i * 2654435761) >>> 0) % 3 === 0 ? 0xb000 | (i % 1000) : 0x3000 | ((i * 7) % 1000),
    );
    const f = file("topk-f16.npy", npyBytes("<f2", f16, [N, DIM]));
    for (const precision of ["float32", "float64"] as const) {
      const m = readNpy(f);
      const inMemory = new EmbeddingModel({
        interaction: "transe-l2",
        precision,
        entityEmbeddings: {
          data: (precision === "float64" ? Float64Array.from(m.data) : m.data) as Float32Array,
          shape: m.shape,
        },
        relationEmbeddings: rel,
      });
      const streamed = new EmbeddingModel({
        interaction: "transe-l2",
        precision,
        entityEmbeddings: openEntityTable(f),
        relationEmbeddings: rel,
      });
      const call = { triples: TEST, k: 4, filter: TRAIN };
      const least = leastNamed(await predictTopKAsync(streamed, { ...call, memoryBudget: 1 }).catch((e: unknown) => e));
      expect(await predictTopKAsync(streamed, { ...call, memoryBudget: least }), precision).toEqual(
        predictTopK(inMemory, call),
      );
    }
  });

  it("reports progress, stops on abort, and refuses a budget too small or the sync call", async () => {
    const model = new EmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: openEntityTable(file("ent.npy", encodeNpy(randomValues(N * DIM, 11, 0.5), [N, DIM]))),
      relationEmbeddings: { data: randomValues(R * DIM, 12, 0.5), shape: [R, DIM] },
    });
    const seen: number[] = [];
    const budget = leastNamed(
      await predictTopKAsync(model, { queries: QUERIES, k: 10, memoryBudget: 1 }).catch((e) => e),
    );
    await predictTopKAsync(model, {
      queries: QUERIES,
      k: 10,
      memoryBudget: budget,
      onProgress: (p) => seen.push(p.done / p.total),
    });
    expect(seen.at(-1)).toBe(1);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThan(seen[i - 1]!);
    const ac = new AbortController();
    await expect(
      predictTopKAsync(model, {
        queries: QUERIES,
        k: 10,
        memoryBudget: budget,
        signal: ac.signal,
        onProgress: () => ac.abort(new Error("enough")),
      }),
    ).rejects.toThrow("enough");
    const refused = await predictTopKAsync(model, { queries: QUERIES, k: 10, memoryBudget: 4096 }).catch((e) => e);
    expect(String(refused)).toMatch(
      /memoryBudget: 4\.00 KiB cannot hold the top-10 lists and known answers .* beside a query block \(64 rows, .*\) and a table chunk \(512 rows, .*\); give at least [\d.]+ KiB \(more makes fewer passes over the table; [\d.]+ KiB reads it once\)$/,
    );
    // The budget the error names is enough (one query per block, a few rows per chunk).
    const few = QUERIES.subarray(0, 20);
    const named = /give at least ([\d.]+) KiB/.exec(
      String(await predictTopKAsync(model, { queries: few, k: 10, memoryBudget: 1 }).catch((e) => e)),
    );
    const least = Math.ceil(Number(named![1]) * 1024);
    const inMemory = new EmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: { data: randomValues(N * DIM, 11, 0.5), shape: [N, DIM] },
      relationEmbeddings: { data: randomValues(R * DIM, 12, 0.5), shape: [R, DIM] },
    });
    expect(await predictTopKAsync(model, { queries: few, k: 10, memoryBudget: least })).toEqual(
      predictTopK(inMemory, { queries: few, k: 10 }),
    );
    expect(() => predictTopK(model, { queries: QUERIES, k: 10 })).toThrow(
      /model: reads its entity table from .* in chunks: rank it with RankEvaluator\.addModel or predictTopKAsync/,
    );
  });
});

/**
 * `table` as an EntityRowSource whose reads call `after(begin, end)` once they are done, the run's reads too: a hook
 * between two reads (e.g. after the last row of the first pass) that needs no timing.
 */
function hooked(table: EntityTableFile, after: (begin: number, end: number) => void): EntityRowSource {
  return {
    rows: table.rows,
    cols: table.cols,
    name: table.name,
    storedRowBytes: table.storedRowBytes,
    readRows: async (a, b, into, scratch) => {
      await table.readRows(a, b, into, scratch);
      after(a, b);
    },
    openRun: async () => {
      const run = await table.openRun();
      return {
        ...run,
        readRows: async (a, b, into, scratch) => {
          await run.readRows(a, b, into, scratch);
          after(a, b);
        },
      };
    },
  };
}

describe(`a table read in chunks during a run [${backendLabel}]`, () => {
  const rel = { data: randomValues(R * DIM, 12, 0.5), shape: [R, DIM] };
  const first = randomValues(N * DIM, 11, 0.5);
  const second = randomValues(N * DIM, 77, 0.5); // another checkpoint: the same shape and size

  /** A model on `f` whose file is rewritten (in place, or another file renamed over it) after the first pass. */
  function changing(f: string, how: "in place" | "renamed over"): EmbeddingModel {
    let done = false;
    const source = hooked(openEntityTable(f), (_, end) => {
      if (done || end !== N) return; // the last rows of the table: the end of the first pass
      done = true;
      if (how === "in place") writeFileSync(f, encodeNpy(second, [N, DIM]));
      else {
        writeFileSync(`${f}.tmp`, encodeNpy(second, [N, DIM]));
        renameSync(`${f}.tmp`, f);
      }
    });
    return new EmbeddingModel({ interaction: "distmult", entityEmbeddings: source, relationEmbeddings: rel });
  }

  for (const how of ["in place", "renamed over"] as const) {
    it(`a table rewritten ${how} between two passes is refused, not mixed into the ranks or lists`, async () => {
      const f = file("changing.npy", encodeNpy(first, [N, DIM]));
      const e = evaluator(true);
      const least = leastNamed(await state(changing(f, how), true, 1).catch((x: unknown) => x));
      const plans: StreamPlan[] = [];
      const before = Buffer.from(e.serialize());
      await expect(
        e.addModel({ model: changing(f, how), triples: TEST, memoryBudget: least, onPlan: (p) => plans.push(p) }),
      ).rejects.toThrow(
        new RegExp(
          `entityEmbeddings: .*changing\\.npy changed while it was read \\(${how === "in place" ? "modified at" : "another file is at its path now"}.*\\): do not rewrite a table during a run`,
        ),
      );
      expect(plans[0]!.passes).toBeGreaterThan(1); // the change came between passes
      expect(Buffer.from(e.serialize())).toEqual(before);
      // Top-k lists: the same.
      writeFileSync(f, encodeNpy(first, [N, DIM]));
      const call = { queries: QUERIES.subarray(0, 300), k: 5 };
      const budget = leastNamed(
        await predictTopKAsync(changing(f, how), { ...call, memoryBudget: 1 }).catch((x: unknown) => x),
      );
      await expect(predictTopKAsync(changing(f, how), { ...call, memoryBudget: budget })).rejects.toThrow(
        /changing\.npy changed while it was read/,
      );
      // A table opened before the change is refused at its next run, even a run that reads it whole.
      const stale = openEntityTable(file("stale.npy", encodeNpy(first, [N, DIM])));
      writeFileSync(stale.name, encodeNpy(second, [N, DIM]));
      const model = new EmbeddingModel({ interaction: "distmult", entityEmbeddings: stale, relationEmbeddings: rel });
      await expect(evaluator(true).addModel({ model, triples: TEST, memoryBudget: 64 << 20 })).rejects.toThrow(
        /stale\.npy changed while it was read/,
      );
    });
  }

  it("reports progress after each pass, not only at the end", async () => {
    const f = file("slow.npy", encodeNpy(first, [N, DIM]));
    // Reads slower than the 50 ms between progress calls, so each pass's report is due when the pass ends.
    const table = openEntityTable(f);
    const source: EntityRowSource = {
      rows: table.rows,
      cols: table.cols,
      name: table.name,
      storedRowBytes: table.storedRowBytes,
      readRows: async (a, b, into, scratch) => {
        await new Promise((r) => setTimeout(r, 120));
        await table.readRows(a, b, into, scratch);
      },
    };
    const model = new EmbeddingModel({ interaction: "distmult", entityEmbeddings: source, relationEmbeddings: rel });
    const few = TEST.subarray(0, 3 * 40); // 80 rows: two blocks at the least budget
    const e = evaluator(true);
    const least = leastNamed(await e.addModel({ model, triples: few, memoryBudget: 1 }).catch((x: unknown) => x));
    const plans: StreamPlan[] = [];
    const seen: number[] = [];
    await e.addModel({
      model,
      triples: few,
      memoryBudget: least + 1000 * 2 * DIM * 4, // chunks of about 1,500 rows, not the whole table
      onPlan: (p) => plans.push(p),
      onProgress: (p) => seen.push(p.done),
    });
    const plan = plans[0]!;
    expect(plan.whole).toBe(false);
    expect(plan.passes * plan.chunks).toBeGreaterThanOrEqual(4);
    // Every chunk of every pass but the last was followed by a report, then the final one.
    expect(seen.length).toBeGreaterThanOrEqual(plan.passes * plan.chunks);
    expect(seen.at(-1)).toBe(80);
  });

  it("the least budget reads workable chunks and blocks; a budget the table fits reads it whole, sized by the table", async () => {
    const model = new EmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: openEntityTable(file("plan.npy", encodeNpy(first, [N, DIM]))),
      relationEmbeddings: rel,
    });
    const inMemory = new EmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: { data: first, shape: [N, DIM] },
      relationEmbeddings: rel,
    });
    const want = await state(inMemory, true);
    const least = leastNamed(await state(model, true, 1).catch((x: unknown) => x));
    const plans: StreamPlan[] = [];
    await state(model, true, least - INDEX, false, plans);
    await state(model, true, 64 << 20, false, plans);
    const [small, large] = plans;
    // At the least budget: blocks of at least 64 queries, chunks of at least 512 rows (the kernels' chunk).
    expect(small).toMatchObject({ whole: false, budget: least });
    expect(small!.blockRows).toBeGreaterThanOrEqual(64);
    expect(small!.chunkRows).toBeGreaterThanOrEqual(512);
    expect(small!.passes).toBe(Math.ceil(300 / small!.blockRows));
    expect(small!.chunks).toBe(Math.ceil(N / small!.chunkRows));
    expect(small!.onePassBudget).toBeGreaterThan(least);
    // 64 MiB for a 125 KiB table: read once, into one buffer of the table's size, not the budget's.
    expect(large).toMatchObject({ whole: true, passes: 1, chunks: 1, chunkRows: N, tableBytes: N * DIM * 4 });
    // The budget the plan names as one pass is enough for one.
    const once: StreamPlan[] = [];
    expect(await state(model, true, small!.onePassBudget - INDEX, false, once)).toEqual(want);
    expect(once[0]!.passes).toBe(1);
    // Top-k: the same rules.
    const topPlans: StreamPlan[] = [];
    const call = { queries: QUERIES.subarray(0, 300), k: 5, onPlan: (p: StreamPlan) => topPlans.push(p) };
    const topLeast = leastNamed(await predictTopKAsync(model, { ...call, memoryBudget: 1 }).catch((x: unknown) => x));
    await predictTopKAsync(model, { ...call, memoryBudget: topLeast });
    await predictTopKAsync(model, { ...call, memoryBudget: 64 << 20 });
    expect(topPlans[0]!.whole).toBe(false);
    expect(topPlans[0]!.blockRows).toBeGreaterThanOrEqual(64);
    expect(topPlans[0]!.chunkRows).toBeGreaterThanOrEqual(512);
    expect(topPlans[1]).toMatchObject({ whole: true, passes: 1, tableBytes: N * DIM * 4 });
  });

  it("an entity shard read in chunks, or read whole, records the counts of the shard of the table in memory", async () => {
    // 32 columns: a shard of 2,000 rows is larger than the least budget's chunk and block.
    const wide = randomValues(N * 32, 13, 0.5);
    const wideRel = { data: randomValues(R * 32, 14, 0.5), shape: [R, 32] };
    const streamed = new EmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: openEntityTable(file("shard.npy", encodeNpy(wide, [N, 32]))),
      relationEmbeddings: wideRel,
    });
    const inMemory = new EmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: { data: wide, shape: [N, 32] },
      relationEmbeddings: wideRel,
    });
    const shard = () =>
      new RankEvaluator({
        numEntities: N,
        numRelations: R,
        filterTriples: [TRAIN, TEST],
        entityShard: { index: 1, count: 2 },
      });
    const want = shard();
    await want.addModel({ model: inMemory, triples: TEST });
    // 64 MiB: the shard's rows read whole; a byte less than the budget that reads them once: in chunks.
    const plans: StreamPlan[] = [];
    const run = async (memoryBudget: number) => {
      const e = shard();
      await e.addModel({ model: streamed, triples: TEST, memoryBudget, onPlan: (p) => plans.push(p) });
      expect(Buffer.from(e.serialize()), `budget ${memoryBudget}`).toEqual(Buffer.from(want.serialize()));
    };
    await run(64 << 20);
    await run(plans[0]!.onePassBudget - 1);
    expect(
      plans.map((p) => p.whole),
      JSON.stringify(plans),
    ).toEqual([true, false]);
  });

  it("a refusal names the budget and the least budget apart, in exact bytes when they round alike", async () => {
    const model = new EmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: openEntityTable(file("apart.npy", encodeNpy(first, [N, DIM]))),
      relationEmbeddings: rel,
    });
    // The exact least budget: the smallest one accepted (a refusal reads nothing).
    const accepted = async (b: number) =>
      evaluator(true)
        .addModel({ model, triples: TEST.subarray(0, 3), memoryBudget: b, onPlan: () => {} })
        .then(
          () => true,
          (e: unknown) => {
            if (/changed|finite/.test(String(e))) throw e;
            return false;
          },
        );
    let lo = 1;
    let hi = 64 << 20;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (await accepted(mid)) hi = mid;
      else lo = mid;
    }
    const refused = String(
      await evaluator(true)
        .addModel({ model, triples: TEST.subarray(0, 3), memoryBudget: hi - 1 })
        .catch((e: unknown) => e),
    );
    const m = /memoryBudget: (.*?) cannot hold .* give at least (.*?) \((?:more|the table)/.exec(refused);
    expect(m, refused).not.toBeNull();
    expect(m![1]).not.toBe(m![2]);
    expect(m![1]).toMatch(new RegExp(`\\(${(hi - 1).toLocaleString("en-US")} bytes\\)$`));
    expect(m![2]).toMatch(new RegExp(`\\(${hi.toLocaleString("en-US")} bytes\\)$`));
  });

  it("an id map that orders the rows otherwise: every id ranked from its row, the ranks of the table in memory", async () => {
    // Row r of the file holds entity perm[r]: a seeded shuffle.
    const perm = Int32Array.from({ length: N }, (_, i) => i);
    for (let i = N - 1, x = 12345; i > 0; i--) {
      x = (x * 1103515245 + 12345) >>> 0;
      const j = x % (i + 1);
      [perm[i], perm[j]] = [perm[j]!, perm[i]!];
    }
    const shuffled = new Float32Array(N * DIM);
    const rowOfEntity = new Int32Array(N);
    for (let r = 0; r < N; r++) {
      shuffled.set(first.subarray(perm[r]! * DIM, (perm[r]! + 1) * DIM), r * DIM);
      rowOfEntity[perm[r]!] = r;
    }
    const f = file("shuffled.npy", encodeNpy(shuffled, [N, DIM]));
    const inMemory = new EmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: { data: first, shape: [N, DIM] },
      relationEmbeddings: rel,
    });
    const streamed = new EmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: openEntityTable(f).withRowOrder(rowOfEntity),
      relationEmbeddings: rel,
    });
    for (const filtered of [true, false]) {
      const want = await state(inMemory, filtered);
      const least = leastNamed(await state(streamed, filtered, 1).catch((x: unknown) => x));
      for (const budget of [least, 64 << 20]) {
        const extra = budget - (filtered ? INDEX : 0);
        expect(await state(streamed, filtered, extra), `filtered ${filtered} budget ${budget}`).toEqual(want);
      }
    }
    expect(await state(streamed, false, 64 << 10, true)).toEqual(await state(inMemory, false, undefined, true));
    // Through a model directory's id map (labels): the same.
    const labels = Array.from({ length: N }, (_, i) => `e${i}`);
    const ids = file("entities.dict", new TextEncoder().encode(Array.from(perm, (id) => `e${id}`).join("\n") + "\n"));
    const relFile = file("rel.npy", encodeNpy(rel.data, [R, DIM]));
    const loaded = loadEmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: f,
      relationEmbeddings: relFile,
      entityIds: ids,
      entityLabels: labels,
      streamEntities: true,
    });
    const loadedLeast = leastNamed(await state(loaded, true, 1).catch((x: unknown) => x));
    expect(await state(loaded, true, loadedLeast - INDEX)).toEqual(await state(inMemory, true));
    // Top-k lists order equal scores by id, which a pass in row order cannot: refused, naming the fix.
    await expect(predictTopKAsync(loaded, { queries: QUERIES.subarray(0, 30), k: 3 })).rejects.toThrow(
      /model: reads .*shuffled\.npy, whose rows are in another order than the entity ids .* read it into memory/,
    );
    // An id map naming fewer rows than the dataset's entities: refused.
    const fewer = file("fewer.dict", new TextEncoder().encode(labels.slice(1).join("\n") + "\n"));
    expect(() =>
      loadEmbeddingModel({
        interaction: "distmult",
        entityEmbeddings: f,
        relationEmbeddings: relFile,
        entityIds: fewer,
        entityLabels: labels,
        streamEntities: true,
      }),
    ).toThrow(/entityIds: .*fewer\.dict lists 3999 labels but .*shuffled\.npy has 4000 rows/);
  });
});

/** A .npy file of raw little-endian elements (encodeNpy writes float32 / float64 / int32 only). */
function npyBytes(descr: string, data: ArrayBufferView, shape: number[], fortran = false): Uint8Array {
  let header = `{'descr': '${descr}', 'fortran_order': ${fortran ? "True" : "False"}, 'shape': (${shape.join(", ")}${shape.length === 1 ? "," : ""}), }`;
  while ((10 + header.length + 1) % 64 !== 0) header += " ";
  header += "\n";
  const out = new Uint8Array(10 + header.length + data.byteLength);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, header.length & 0xff, header.length >> 8]);
  out.set(new TextEncoder().encode(header), 10);
  out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), 10 + header.length);
  return out;
}
