/**
 * Entity tables read from disk in chunks (openEntityTable, RankEvaluator.addModel with memoryBudget): the evaluator's
 * state after a streamed run must equal, byte for byte, the state after the same triples ranked from the table in
 * memory, for every interaction, both sides, filtered and unfiltered, the OGB protocol, float16 / bfloat16 / float32
 * / float64 storage, both precisions, and budgets from one that forces many blocks and one-row chunks to one that
 * holds the whole table. Bad input: budgets too small, files that are not chunk-readable or lie, a value that is not
 * finite, the sync call, restriction. Top-k lists from a chunked table (predictTopKAsync with memoryBudget) equal the
 * in-memory predictTopK's, ids and scores, bit for bit, under the same range of budgets.
 */
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

import {
  EmbeddingModel,
  encodeNpy,
  KgrankInputError,
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

const N = 700;
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

/** Room for the filter index of TRAIN + TEST (about 55 KiB on both backends), added to a filtered run's budget. */
const INDEX = 60 << 10;

/**
 * Ranks TEST (or with OGB negatives) from `model` and returns the evaluator's state; `memoryBudget` is what the run
 * may use beyond the filter index.
 */
async function state(model: EmbeddingModel, filtered: boolean, extra?: number, negatives?: boolean) {
  const e = evaluator(filtered && !negatives);
  const memoryBudget = extra === undefined ? undefined : extra + (filtered && !negatives ? INDEX : 0);
  const neg = negatives
    ? { negatives: { head: triples(50 * 3, 7).map((x) => x % N), tail: triples(50 * 3, 8).map((x) => x % N) } }
    : {};
  await e.addModel({ model, triples: TEST, ...(memoryBudget ? { memoryBudget } : {}), ...neg });
  return Buffer.from(e.serialize());
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
        // 3 KiB: blocks of a few rows and chunks of a few table rows; 64 MiB: one block, one chunk.
        for (const budget of [3 << 10, 20 << 10, 64 << 20]) {
          expect(await state(streamed, filtered, budget), `filtered ${filtered}, budget ${budget}`).toEqual(want);
        }
      }
      expect(await state(streamed, false, 8 << 10, true)).toEqual(await state(inMemory, false, undefined, true));
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
        expect(await state(streamed, true, 20 << 10), `${f} ${precision}`).toEqual(await state(inMemory, true));
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
    await e.addModel({
      model,
      triples: TEST,
      memoryBudget: INDEX + (8 << 10),
      onProgress: (p) => seen.push(p.done / p.total),
    });
    expect(seen.at(-1)).toBe(1);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThan(seen[i - 1]!);
    const before = Buffer.from(e.serialize());
    const ac = new AbortController();
    const call = e.addModel({
      model,
      triples: TEST,
      memoryBudget: INDEX + (8 << 10),
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
      /memoryBudget: .*cannot hold one query block beside the filter index/,
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
  const QUERIES = Int32Array.from(TEST.filter((_, i) => i % 3 !== 2)); // (head, relation) pairs
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
        const named = /give at least ([\d.]+) KiB/.exec(String(refused));
        expect(named, String(refused)).not.toBeNull();
        const least = Math.ceil(Number(named![1]) * 1024); // accepted: see the last test of this block
        for (const memoryBudget of [least + (12 << 10), 64 << 20]) {
          const got = await predictTopKAsync(streamed, { ...call, memoryBudget });
          expect(got, `${JSON.stringify(Object.keys(call))} k ${call.k} budget ${memoryBudget}`).toEqual(want);
        }
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
      expect(await predictTopKAsync(streamed, { ...call, memoryBudget: 96 << 10 }), precision).toEqual(
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
    await predictTopKAsync(model, {
      queries: QUERIES,
      k: 10,
      memoryBudget: 96 << 10,
      onProgress: (p) => seen.push(p.done / p.total),
    });
    expect(seen.at(-1)).toBe(1);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThan(seen[i - 1]!);
    const ac = new AbortController();
    await expect(
      predictTopKAsync(model, {
        queries: QUERIES,
        k: 10,
        memoryBudget: 96 << 10,
        signal: ac.signal,
        onProgress: () => ac.abort(new Error("enough")),
      }),
    ).rejects.toThrow("enough");
    const refused = await predictTopKAsync(model, { queries: QUERIES, k: 10, memoryBudget: 4096 }).catch((e) => e);
    expect(String(refused)).toMatch(
      /memoryBudget: 4\.00 KiB cannot hold the top-10 lists and known answers .* give at least [\d.]+ KiB$/,
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
