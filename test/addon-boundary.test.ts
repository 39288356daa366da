/**
 * The addon's boundary (native/addon/args.h, src/contract/addon.ts): every call takes one record read by name. For
 * each call, sync and async, a valid record works; each of its fields, left out or given the wrong type, is a
 * TypeError (code KGRANK_INPUT) whose message names the call and the field's path; a code one past its enum's last
 * member (the count of the addon's own table, info().enums) is a RangeError naming the field. Addon-only: the
 * fallback has no such boundary (its checks are the facade's), so this file runs once, on the native addon.
 */
import * as path from "node:path";
import { describe, expect, it } from "vitest";

import { nativeAddon, type NativeAddon } from "../src/backend/backend";
import { tempDir } from "./helpers/temp";
import type { AddonEnums } from "../src/contract/addon";

const addon = nativeAddon();
// Where screenTableSave's case writes its table.
const saveDir = tempDir("addon-boundary-");

const f32 = (...v: number[]) => Float32Array.from(v);
const f64 = (...v: number[]) => Float64Array.from(v);
const i32 = (...v: number[]) => Int32Array.from(v);
const u32 = (...v: number[]) => Uint32Array.from(v);
const opts = { simd: 0, threads: 1 };

type Record = { [field: string]: unknown };
/** A call of the addon on one record (an async one returns a promise). */
type Call = (args: never) => unknown;

interface Case {
  name: string;
  call: (a: NativeAddon) => Call;
  /** A valid record; a fresh one per use (the calls write into its outputs). */
  record: () => Record;
  /** Fields that may be left out (paths). */
  optional?: string[];
  /** Optional fields the valid record leaves out: each, given the wrong type, must still be named. */
  extra?: string[];
  /** Code fields: path -> the addon's enum table whose count bounds it. */
  codes?: { [path: string]: keyof AddonEnums };
  /** String fields (file paths): given the wrong type means a number here. */
  strings?: string[];
}

function filterIndex(a: NativeAddon) {
  return new a.FilterIndex({ triples: [i32(0, 0, 1, 1, 0, 2)], numEntities: 3, numRelations: 1, side: 1, threads: 1 });
}

const countRecord = () => ({
  scores: f32(1, 2, 3, 4, 5, 6),
  numColumns: 3,
  thresholds: f32(2, 5),
  greater: new Float64Array(2),
  equal: new Float64Array(2),
  nan: new Float64Array(2),
  ...opts,
});
const filteredRecord = () => ({
  scores: f32(1, 2, 3),
  anchor: i32(0),
  relation: i32(0),
  truth: i32(1),
  thresholds: new Float32Array(1),
  greater: new Float64Array(1),
  equal: new Float64Array(1),
  nan: new Float64Array(1),
  removed: new Float64Array(1),
  ...opts,
});
const rangeRecord = () => ({ ...filteredRecord(), scores: f32(2, 3), thresholds: f32(2), columnStart: 1, width: 2 });
const rankTriplesRecord = () => ({
  scores: f32(1, 2, 3),
  triples: i32(0, 0, 1),
  keys: new Int32Array(3),
  thresholds: new Float32Array(1),
  out: new Float64Array(6),
  ...opts,
});
const embeddingRecord = () => ({
  model: {
    interaction: 2,
    layout: 0,
    entity: f32(1, 0, 0, 1, 1, 1),
    relation: f32(1, 1),
    numEntities: 3,
    entityWidth: 2,
    numRelations: 1,
    relationWidth: 2,
    phaseScale: 1,
    entityOffset: 0,
  },
  queries: { headSide: false, anchor: i32(0), relation: i32(0), truth: i32(1), negativesPerRow: 0 },
  ...opts,
});
const embeddingOptional = [
  "model.entityScale",
  "queries.candidates",
  "queries.negatives",
  "queries.excludeOffsets",
  "queries.excludeIds",
  "queries.anchorRows",
  "queries.anchorScale",
  "queries.trueScores",
  "queries.setOffsets",
  "queries.setIds",
];
const embeddingCodes = {
  "model.interaction": "Interaction",
  "model.layout": "ComplexLayout",
  simd: "SimdLevel",
} as const;

const cases: Case[] = [
  { name: "countScores", call: (a) => a.countScores as Call, record: countRecord, codes: { simd: "SimdLevel" } },
  { name: "countScoresAsync", call: (a) => a.countScoresAsync as Call, record: countRecord },
  {
    name: "countScoresByIndex",
    call: (a) => a.countScoresByIndex as Call,
    record: () => ({ ...countRecord(), trueIndex: i32(0, 1) }),
  },
  {
    name: "countScoresByIndexAsync",
    call: (a) => a.countScoresByIndexAsync as Call,
    record: () => ({ ...countRecord(), trueIndex: i32(0, 1) }),
  },
  {
    name: "FilterIndex",
    call: (a) => (args) => new a.FilterIndex(args as never),
    record: () => ({ triples: [i32(0, 0, 1)], numEntities: 3, numRelations: 1, side: 0, threads: 1 }),
  },
  {
    name: "answers",
    call: (a) => {
      const index = filterIndex(a);
      return (args) => index.answers(args as never);
    },
    record: () => ({ anchor: 0, relation: 0 }),
  },
  {
    name: "missing",
    call: (a) => {
      const index = filterIndex(a);
      return (args) => index.missing(args as never);
    },
    record: () => ({ anchor: i32(0), relation: i32(0), answer: i32(1) }),
  },
  {
    name: "answerCounts",
    call: (a) => {
      const index = filterIndex(a);
      return (args) => index.answerCounts(args as never);
    },
    record: () => ({ triples: i32(0, 0, 1), out: new Float64Array(1) }),
  },
  ...(["countFiltered", "countFilteredAsync"] as const).map((name) => ({
    name,
    call: (a: NativeAddon) => {
      const index = filterIndex(a);
      return (args: never) => index[name](args);
    },
    record: filteredRecord,
  })),
  ...(["countFilteredRange", "countFilteredRangeAsync"] as const).map((name) => ({
    name,
    call: (a: NativeAddon) => {
      const index = filterIndex(a);
      return (args: never) => index[name](args);
    },
    record: rangeRecord,
  })),
  {
    name: "rankTriples",
    call: (a) => {
      const index = filterIndex(a);
      return (args) => index.rankTriples(args as never);
    },
    record: rankTriplesRecord,
  },
  {
    name: "rankTriplesConstrained",
    call: (a) => {
      const index = filterIndex(a);
      return (args) => index.rankTriplesConstrained(args as never);
    },
    record: () => ({ ...rankTriplesRecord(), filtered: true, sets: { offsets: i32(0, 3), ids: i32(0, 1, 2) } }),
    extra: ["sets.bits", "sets.bitsAt"],
  },
  {
    name: "aggregateRanks",
    call: (a) => a.aggregateRanks as Call,
    record: () => ({ ranks: f64(1, 2), ks: f64(1), truncatedKs: f64(2), flags: 7, ...opts }),
    optional: ["truncatedKs"],
    extra: ["weights"],
  },
  {
    name: "medianRanks",
    call: (a) => a.medianRanks as Call,
    record: () => ({ values: f64(1, 2), weights: f64(1, 1), mad: false }),
    optional: ["weights"],
  },
  {
    name: "closedMoments",
    call: (a) => a.closedMoments as Call,
    record: () => ({ metric: 2, numCandidates: f64(3, 4), k: 1 }),
    extra: ["weights"],
    codes: { metric: "ClosedMetric" },
  },
  {
    name: "medianMoments",
    call: (a) => a.medianMoments as Call,
    record: () => ({ numCandidates: f64(3), wantVariance: true }),
    optional: ["wantVariance"],
  },
  {
    name: "candidateHistogram",
    call: (a) => a.candidateHistogram as Call,
    record: () => ({ numCandidates: f64(3, 4), threads: 1 }),
    extra: ["weights"],
  },
  {
    name: "histogramMoments",
    call: (a) => a.histogramMoments as Call,
    record: () => ({ metric: 0, values: f64(3), w1: f64(1), w2: f64(1), totalWeight: 1, count: 1, k: 1, threads: 1 }),
    codes: { metric: "ClosedMetric" },
  },
  {
    name: "sampleStatistic",
    call: (a) => a.sampleStatistic as Call,
    record: () => ({ numCandidates: f64(3, 4), numSamples: 2, seed: 1, statistic: 0, k: 1, ...opts }),
    extra: ["weights"],
    codes: { statistic: "Statistic", simd: "SimdLevel" },
  },
  {
    name: "generateRanks",
    call: (a) => a.generateRanks as Call,
    record: () => ({ numCandidates: f64(3, 4), seed: 1, sample: 0, ...opts }),
  },
  {
    name: "pairedResample",
    call: (a) => a.pairedResample as Call,
    record: () => ({
      kind: 1,
      key: 1,
      first: 0,
      count: 2,
      n: 2,
      x: f64(1, 2),
      medians: {
        indexA: u32(0, 1),
        indexB: u32(1, 0),
        values: f64(1, 2),
        orderA: u32(0, 1),
        orderB: u32(1, 0),
        sortedA: f64(1, 2),
        sortedB: f64(1, 2),
      },
      ...opts,
    }),
    optional: ["medians"],
    codes: { kind: "Resampling" },
  },
  { name: "harmonic", call: (a) => a.harmonic as Call, record: () => ({ n: 3, order: 2 }) },
  { name: "generalizedHarmonic", call: (a) => a.generalizedHarmonic as Call, record: () => ({ n: 3, p: 1.5 }) },
  ...(["rankEmbeddings", "rankEmbeddingsAsync"] as const).map((name) => ({
    name,
    call: (a: NativeAddon) => a[name] as Call,
    record: () => ({
      ...embeddingRecord(),
      out: new Float64Array(7),
      screen: { mode: 2, stats: new Float64Array(3) },
    }),
    optional: ["screen", "screen.stats"],
    extra: [...embeddingOptional, "screen.table"],
    codes: { ...embeddingCodes, "screen.mode": "ScreenMode" } as const,
  })),
  {
    name: "screenTable",
    call: (a) => a.screenTable as Call,
    record: () => {
      const { model, simd, threads } = embeddingRecord();
      return { model, simd, threads };
    },
    extra: ["model.entityScale", "file"],
    codes: embeddingCodes,
    strings: ["file"],
  },
  {
    name: "screenTableSave",
    call: (a) => a.screenTableSave as Call,
    record: () => {
      const { model, simd, threads } = embeddingRecord();
      const table = addon!.screenTable({ model, simd, threads } as never);
      return { model, simd, threads, table, file: path.join(saveDir, "t.kgq") };
    },
    extra: ["model.entityScale"],
    codes: embeddingCodes,
    strings: ["file"],
  },
  {
    name: "topKEmbeddings",
    call: (a) => a.topKEmbeddings as Call,
    record: () => ({
      ...embeddingRecord(),
      k: 1,
      begin: 0,
      end: 3,
      ids: new Int32Array(1),
      scores: new Float64Array(1),
      screen: { mode: 2, stats: new Float64Array(3) },
    }),
    optional: ["screen", "screen.stats"],
    extra: [
      ...embeddingOptional.filter((p) => p !== "queries.trueScores" && !p.startsWith("queries.set")),
      "floor",
      "screen.table",
    ],
    codes: { ...embeddingCodes, "screen.mode": "ScreenMode" } as const,
  },
  {
    name: "scoreRelations",
    call: (a) => a.scoreRelations as Call,
    record: () => ({ ...embeddingRecord(), scores: new Float32Array(1) }),
    extra: ["model.entityScale"],
    codes: embeddingCodes,
  },
  {
    // affine: the operator that reads translation and linear.
    name: "pbgAdjust",
    call: (a) => a.pbgAdjust as Call,
    record: () => ({
      comparator: 1,
      bias: true,
      dimension: 2,
      operator: 4,
      count: 1,
      rows: new Float32Array(2),
      global: new Float64Array(2),
      translation: new Float64Array(2),
      linear: new Float64Array(4),
      out: new Float64Array(2),
      threads: 1,
    }),
    optional: ["global"],
    codes: { comparator: "PbgComparator", operator: "PbgOperator" },
  },
  {
    name: "pbgCompare",
    call: (a) => a.pbgCompare as Call,
    record: () => ({
      comparator: 2,
      bias: true,
      dimension: 2,
      queries: new Float64Array(2),
      numQueries: 1,
      candidates: new Float64Array(4),
      numCandidates: 2,
      queryFirst: true,
      out: new Float64Array(2),
      outStride: 2,
      outOffset: 0,
      simd: 0,
      threads: 1,
    }),
    codes: { comparator: "PbgComparator", simd: "SimdLevel" },
  },
];

/** The paths of a record's fields, nested records' fields included (typed arrays and arrays are leaves). */
function paths(record: Record, prefix = ""): string[] {
  return Object.entries(record).flatMap(([k, v]) =>
    v !== null && typeof v === "object" && !ArrayBuffer.isView(v) && !Array.isArray(v)
      ? [prefix + k, ...paths(v as Record, `${prefix}${k}.`)]
      : [prefix + k],
  );
}

/** `record` with the field at `path` set to `value` (undefined: deleted). */
function withField(record: Record, path: string, value: unknown): Record {
  const keys = path.split(".");
  let at = record;
  for (const k of keys.slice(0, -1)) at = at[k] as Record;
  if (value === undefined) delete at[keys.at(-1)!];
  else at[keys.at(-1)!] = value;
  return record;
}

/** What calling `call` on `record` throws or rejects with, or null when it works. */
async function outcome(call: Call, record: Record): Promise<(Error & { code?: string }) | null> {
  try {
    await call(record as never);
    return null;
  } catch (e) {
    return e as Error & { code?: string };
  }
}

describe.skipIf(addon === null)("the addon takes one record per call, read by name (native/addon/args.h)", () => {
  const a = addon!;
  const enums = a.info().enums;

  it("covers every function and class the addon exports, apart from the calls of one or two plain values", () => {
    const plain = [
      "info",
      "dispatchInfo",
      "kernelControl",
      "cancelKernel",
      "kernelProgress",
      "bandwidthRead",
      "fmaProbe",
      "firstNonFinite",
      "splitTsvTriples",
      "TripleInterner",
    ];
    const exported = Object.keys(a).filter((k) => typeof (a as unknown as Record)[k] === "function");
    const named = new Set([...cases.map((c) => c.name), ...plain]);
    expect(exported.filter((k) => !named.has(k))).toEqual([]);
    const methods = Object.getOwnPropertyNames(a.FilterIndex.prototype).filter((m) => m !== "constructor");
    expect(methods.filter((m) => m !== "stats" && !named.has(m))).toEqual([]);
  });

  for (const c of cases) {
    describe(c.name, () => {
      it("works on a valid record; not a record is a TypeError", async () => {
        expect(await outcome(c.call(a), c.record())).toBeNull();
        for (const bad of [undefined, 3, [c.record()], new Float64Array(1)]) {
          const e = await outcome(c.call(a), bad as unknown as Record);
          expect(e).toBeInstanceOf(TypeError);
          expect(e!.message).toContain(`${c.name}: takes one record`);
        }
      });

      it("names each field left out or of the wrong type", async () => {
        const fields = paths(c.record());
        for (const path of [...fields, ...(c.extra ?? [])]) {
          const expected = `${c.name}: "${path}"`;
          if (fields.includes(path)) {
            const left = await outcome(c.call(a), withField(c.record(), path, undefined));
            if (c.optional?.includes(path)) {
              expect(left, `${path} left out`).toBeNull();
            } else {
              expect(left, `${path} left out`).toBeInstanceOf(TypeError);
              expect(left!.code).toBe("KGRANK_INPUT");
              expect(left!.message, `${path} left out`).toContain(expected);
            }
          }
          const wrong = await outcome(
            c.call(a),
            withField(c.record(), path, c.strings?.includes(path) ? 7 : "not this"),
          );
          expect(wrong, `${path} of the wrong type`).toBeInstanceOf(TypeError);
          expect(wrong!.code).toBe("KGRANK_INPUT");
          expect(wrong!.message, `${path} of the wrong type`).toContain(expected);
        }
      });

      // Only the calls that take enum codes get this case (not a skip: the others have nothing to check).
      if (c.codes)
        it("checks each code against the count of its enum's table", async () => {
          for (const [path, table] of Object.entries(c.codes ?? {})) {
            const count = Object.keys(enums[table]).length;
            expect(count, table).toBeGreaterThanOrEqual(2);
            const e = await outcome(c.call(a), withField(c.record(), path, count));
            expect(e, `${path} = ${count}`).toBeInstanceOf(RangeError);
            expect(e!.message).toContain(`${c.name}: "${path}" must be`);
            expect(e!.message).toContain(`${count - 1} (`); // the last member is listed
            if (table !== "SimdLevel") {
              // The last member itself passes this check (the call may still refuse it for its own reasons).
              const last = await outcome(c.call(a), withField(c.record(), path, count - 1));
              expect(last?.message ?? "", `${path} = ${count - 1}`).not.toContain(`"${path}" must be`);
            }
          }
        });
    });
  }

  it("pbgAdjust and pbgCompare name a length that does not match the record's sizes", () => {
    const adjust = cases.find((c) => c.name === "pbgAdjust")!.record();
    const compare = cases.find((c) => c.name === "pbgCompare")!.record();
    const refused: [string, () => void, string][] = [
      ["rows", () => a.pbgAdjust({ ...adjust, rows: new Float32Array(3) } as never), '"rows" must hold'],
      ["linear", () => a.pbgAdjust({ ...adjust, linear: new Float64Array(2) } as never), '"linear" must hold 4'],
      ["out", () => a.pbgAdjust({ ...adjust, out: new Float64Array(1) } as never), '"out" must hold'],
      ["queries", () => a.pbgCompare({ ...compare, numQueries: 2 } as never), '"queries" must hold'],
      ["out", () => a.pbgCompare({ ...compare, out: new Float64Array(1) } as never), '"out" must hold'],
      [
        "outOffset",
        () => a.pbgCompare({ ...compare, queries: new Float64Array(4), numQueries: 2, outOffset: 1 } as never),
        '"outOffset" + numCandidates must be at most outStride',
      ],
    ];
    for (const [field, call, message] of refused) {
      expect(call, field).toThrow(RangeError);
      expect(call, field).toThrow(message);
    }
  });

  it("rankEmbeddings takes only a screen table made from its own entity table", () => {
    const record = embeddingRecord();
    const table = a.screenTable({ model: record.model, simd: record.simd, threads: record.threads });
    const stats = new Float64Array(3);
    const out = new Float64Array(7);
    a.rankEmbeddings({ ...record, out, screen: { mode: 2, table, stats } } as never);
    expect(stats[0]).toBe(1); // one call screened, with the prepared table
    expect(stats[1]).toBe(3); // one row against 3 entities
    const plain = new Float64Array(7);
    a.rankEmbeddings({ ...record, out: plain } as never);
    expect([...out]).toEqual([...plain]);
    // Another table (a copy of the same values): refused, naming the field and the fix.
    const other = { ...record, model: { ...record.model, entity: record.model.entity.slice() } };
    expect(() => a.rankEmbeddings({ ...other, out, screen: { mode: 2, table } } as never)).toThrow(
      /rankEmbeddings: "screen.table" was made from another entity table .*make it with screenTable/,
    );
    // Another interaction over the same table: refused too.
    const complex = { ...record, model: { ...record.model, interaction: 3 } };
    expect(() => a.rankEmbeddings({ ...complex, out, screen: { mode: 2, table } } as never)).toThrow(/"screen.table"/);
    // topKEmbeddings takes the same screen record, checked alike.
    const k = { k: 1, begin: 0, end: 3, ids: new Int32Array(1), scores: new Float64Array(1) };
    a.topKEmbeddings({ ...record, ...k, screen: { mode: 2, table, stats } } as never);
    expect(stats[0]).toBe(2); // and it screened
    expect(() => a.topKEmbeddings({ ...other, ...k, screen: { mode: 2, table } } as never)).toThrow(
      /topKEmbeddings: "screen.table" was made from another entity table/,
    );
    // Not a screen table (a kernel control is an external too).
    expect(() => a.rankEmbeddings({ ...record, out, screen: { mode: 2, table: a.kernelControl() } } as never)).toThrow(
      /"screen.table" must be what screenTable returned/,
    );
    // What the screen does not apply to: a RangeError naming the field.
    const transe = { ...record.model, interaction: 0 }; // TransE-L1
    expect(() => a.screenTable({ model: transe, simd: record.simd, threads: 1 } as never)).toThrow(
      /screenTable: "model.interaction" is not DistMult, ComplEx, TransE-L2 or RotatE-L2/,
    );
    const wide = { ...record.model, entity: new Float64Array(6), relation: new Float64Array(2) };
    expect(() => a.screenTable({ model: wide, simd: record.simd, threads: 1 } as never)).toThrow(
      /screenTable: "model.entity" is not a Float32Array/,
    );
  });

  it("an async job refuses views of a resizable ArrayBuffer, naming the field", () => {
    const Resizable = ArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => ArrayBuffer;
    const truth = new Int32Array(new Resizable(4, { maxByteLength: 64 }));
    truth[0] = 1;
    const record = { ...embeddingRecord(), out: new Float64Array(7) };
    record.queries.truth = truth;
    expect(() => a.rankEmbeddingsAsync(record as never)).toThrow(
      /rankEmbeddingsAsync: "queries.truth" is a view of a resizable ArrayBuffer/,
    );
  });
});
