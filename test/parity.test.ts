/**
 * Every backend this process can run (native at each supported SIMD level and several thread counts, the
 * WebAssembly core when wasm/kgrank.wasm is built, and the TS fallback) gives the same results on the same inputs, in one process (vitest's "once" project, where the addon
 * must load): counts of score matrices and ranking from embeddings (every interaction, both complex layouts, float32
 * and float64: the true scores bit for bit; relation scores bit for bit), seeded rank generation and sample statistics, metric aggregation and
 * closed moments, and the median's E and Var (within 1e-12 relative where the order of summation differs).
 */
import { existsSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

import { allKernels } from "../src/backend/backend";
import {
  type CountBuffers,
  type FloatArray,
  type Kernels,
  type PairedColumns,
  PBG_COMPARATORS,
  PBG_OPERATORS,
  type PbgComparatorName,
  type PbgOperatorName,
  type PbgOperatorValues,
  ResamplingKind,
} from "../src/contract/kernels";
import { EmbeddingModel, INTERACTIONS } from "../src/scoring/embedding-model";
import { lcg } from "./helpers/median-dp";
import { relErr } from "./helpers/metrics-reference";
import { rng, SPECIAL_F32, SPECIAL_F64 } from "./helpers/reference";

/** The native kernels at every SIMD level the CPU supports; the addon must have loaded (at least scalar and one more). */
function nativeKernels(): Kernels[] {
  const native = allKernels().filter((k) => k.backend === "native");
  expect(native.length, "the native addon did not load: parity needs it").toBeGreaterThanOrEqual(2);
  return native;
}

/** The pure-TypeScript fallback, the reference of the comparisons. */
function fallback(): Kernels {
  const ts = allKernels().at(-1)!;
  expect(ts.backend).toBe("ts");
  return ts;
}

function run(k: Kernels, scores: FloatArray, cols: number, thresholds: FloatArray, threads?: number): CountBuffers {
  const rows = thresholds.length;
  const out = { greater: new Float64Array(rows), equal: new Float64Array(rows), nan: new Float64Array(rows) };
  k.countScores(scores, cols, thresholds, out, threads);
  return out;
}

function kernelsWithThreads(): { name: string; kernels: Kernels; threads?: number }[] {
  const out: { name: string; kernels: Kernels; threads?: number }[] = [];
  for (const k of allKernels()) {
    if (k.backend === "ts" || k.backend === "wasm") {
      out.push({ name: k.backend, kernels: k });
    } else {
      for (const t of [1, 2, 5]) out.push({ name: `native/${k.simd}/t${t}`, kernels: k, threads: t });
    }
  }
  return out;
}

/** The WebAssembly core is compared too once it is built (CI builds it: .ci/run). */
const wasmBuilt = existsSync(path.join(__dirname, "..", "wasm", "kgrank.wasm"));

describe("backend parity", () => {
  const variants = kernelsWithThreads();

  it("includes the native kernels at every SIMD level (3 thread counts each) and the fallback", () => {
    const native = variants.filter((v) => v.kernels.backend === "native");
    expect(native.length).toBe(3 * nativeKernels().length);
    expect(variants.length).toBe(native.length + 1 + (wasmBuilt ? 1 : 0));
  });

  it.skipIf(!wasmBuilt)(
    wasmBuilt ? "includes the WebAssembly core" : "includes the WebAssembly core [skipped: npm run build:wasm first]",
    () => {
      expect(variants.filter((v) => v.kernels.backend === "wasm").map((v) => v.kernels.simd)).toEqual(["simd128"]);
    },
  );

  for (const [name, Ctor, specials] of [
    ["float32", Float32Array, SPECIAL_F32],
    ["float64", Float64Array, SPECIAL_F64],
  ] as const) {
    for (const [rows, cols] of [
      [1, 1],
      [3, 17],
      [64, 1025],
      [2, 600_001],
      [300, 3000],
    ] as const) {
      it(`agrees exactly on ${rows} x ${cols} ${name} with specials and ties`, () => {
        const next = rng(rows * 31 + cols);
        const scores = new Ctor(rows * cols);
        for (let i = 0; i < scores.length; i++) {
          const u = next();
          scores[i] = u < 0.2 ? specials[Math.floor(next() * specials.length)]! : Math.floor(u * 16) / 4;
        }
        const thresholds = new Ctor(rows);
        for (let r = 0; r < rows; r++) thresholds[r] = r % 3 === 0 ? specials[r % specials.length]! : scores[r * cols]!;
        const results = variants.map((v) => ({
          name: v.name,
          counts: run(v.kernels, scores, cols, thresholds, v.threads),
        }));
        const first = results[0]!;
        for (const other of results.slice(1)) {
          expect(other.counts, `${other.name} vs ${first.name}`).toEqual(first.counts);
        }
        // By index: each row's threshold is its own entry at a chosen column, gathered by the kernel.
        const idx = Int32Array.from({ length: rows }, (_, r) => (r * 7 + 3) % cols);
        const gathered = new Ctor(rows).map((_, r) => scores[r * cols + idx[r]!]!);
        const direct = run(variants[0]!.kernels, scores, cols, gathered, variants[0]!.threads);
        for (const v of variants) {
          const out = { greater: new Float64Array(rows), equal: new Float64Array(rows), nan: new Float64Array(rows) };
          const th = new Ctor(rows);
          v.kernels.countScoresByIndex(scores, cols, idx, th, out, v.threads);
          expect(out, `${v.name} by index`).toEqual(direct);
          expect(Array.from(th), `${v.name} gathered thresholds`).toEqual(Array.from(gathered));
        }
      });
    }
  }
});

describe("backend parity of ranking from embeddings", () => {
  const variants = kernelsWithThreads();
  const n = 211;
  const rows = 17;
  for (const interaction of INTERACTIONS) {
    const complex = interaction === "complex" || interaction === "rotate" || interaction === "rotate-l2";
    for (const layout of complex ? (["halves", "interleaved"] as const) : ([undefined] as const)) {
      for (const precision of ["float32", "float64"] as const) {
        it(`${interaction}${layout ? `/${layout}` : ""} ${precision}: counts and true scores agree bit for bit`, () => {
          const next = rng(n + interaction.length * 7 + (layout === "interleaved" ? 1 : 0));
          const width = 10;
          const relWidth =
            interaction === "pairre"
              ? 2 * width
              : interaction.startsWith("rotate") && layout === "halves"
                ? width / 2
                : width;
          // Quarter steps give many exact ties; the rest are arbitrary float32 values.
          const value = () => (next() < 0.5 ? Math.floor(next() * 17 - 8) / 4 : Math.fround(next() * 4 - 2));
          const ent = Float32Array.from({ length: n * width }, value);
          const rel = Float32Array.from({ length: 3 * relWidth }, value);
          const model = new EmbeddingModel({
            interaction,
            entityEmbeddings: { data: ent, shape: [n, width] },
            relationEmbeddings: { data: rel, shape: [3, relWidth] },
            precision,
            phaseScale: 0.7,
            ...(layout ? { complexLayout: layout } : {}),
          });
          const ids = (m: number) => Int32Array.from({ length: rows }, () => Math.floor(next() * m));
          const anchor = ids(n);
          const relation = ids(3);
          const truth = ids(n);
          const excludeOffsets = Uint32Array.from({ length: rows + 1 }, (_, i) => 2 * i);
          const excludeIds = Int32Array.from({ length: 2 * rows }, (_, j) => (truth[j >> 1]! + 1 + j) % n);
          // Typed candidates: relation 0 allows the even entities, relation 1 every fifth from 1, relation 2 none.
          const setIds = [0, 1, 2].map((r) =>
            Array.from({ length: n }, (_, e) => e).filter((e) => (r === 0 ? e % 2 === 0 : r === 1 && e % 5 === 1)),
          );
          const candidateSets = {
            offsets: Int32Array.of(0, setIds[0]!.length, setIds[0]!.length + setIds[1]!.length, setIds.flat().length),
            ids: Int32Array.from(setIds.flat()),
          };
          for (const side of ["head", "tail"] as const) {
            for (const typed of [false, true]) {
              const job = model.job(side, anchor, relation, truth, {
                excludeOffsets,
                excludeIds,
                ...(typed ? { candidateSets } : {}),
              });
              const outs = variants.map((v) => {
                const out = new Float64Array(5 * rows + 2);
                v.kernels.rankEmbeddings(job, out, v.threads);
                return { name: v.name, out: Array.from(out) };
              });
              for (const other of outs.slice(1))
                expect(other.out, `${side}${typed ? " typed" : ""}: ${other.name} vs ${outs[0]!.name}`).toEqual(
                  outs[0]!.out,
                );
            }
          }
          // Relation scores of the (anchor, truth) pairs: every relation, every backend, bit for bit.
          const pairs = variants.map((v) => {
            const scores = precision === "float64" ? new Float64Array(rows * 3) : new Float32Array(rows * 3);
            v.kernels.scoreRelations(model.job("tail", anchor, relation, truth), scores, v.threads);
            return { name: v.name, out: Array.from(scores) };
          });
          for (const other of pairs.slice(1))
            expect(other.out, `relation scores: ${other.name} vs ${pairs[0]!.name}`).toEqual(pairs[0]!.out);
        });
      }
    }
  }
});

describe("a fused multiply-add rounds once on every backend", () => {
  // DistMult over 2 dimensions, query = the anchor's row (relation all ones): the score of entity 1 is
  // fma(8(1 + 2^-23), 8(1 - 2^-23), 2^30 + 2^7), exactly 2^30 + 2^7 + 2^6 - 2^-40. Its float64 sum is the midpoint
  // 2^30 + 2^7 + 2^6 of two floats, which rounds (ties to even) to 2^30 + 2^8; the fma rounds once, to 2^30 + 2^7.
  // Entity 2 scores 2^30 + 2^8 exactly. WebAssembly has no fma instruction and wasi-libc's fmaf rounds twice: the
  // WebAssembly core's own fmaf and SIMD128 kernel must give the native FMA's value.
  const u = 2 ** -23;
  const rows = Float32Array.of(2 ** 15, 8 * (1 + u), 2 ** 15 + 2 ** -8, 8 * (1 - u), 2 ** 15 + 2 ** -7, 0);
  const model = new EmbeddingModel({
    interaction: "distmult",
    entityEmbeddings: { data: Float32Array.from({ length: 34 }, (_, i) => (i < 6 ? rows[i]! : 0.5)), shape: [17, 2] },
    relationEmbeddings: { data: Float32Array.of(1, 1), shape: [1, 2] },
  });
  const job = model.job("tail", Int32Array.of(0), Int32Array.of(0), Int32Array.of(1));

  for (const k of allKernels(1)) {
    it(`${k.backend}/${k.simd}: the true score, the counts and the top-k scores`, () => {
      const out = new Float64Array(7);
      k.rankEmbeddings(job, out, 1);
      expect(out[4]).toBe(2 ** 30 + 2 ** 7);
      expect([out[0], out[1]]).toEqual([1, 2]); // entity 2 above; entities 0 and 1 (the true one) equal
      const ids = new Int32Array(3);
      const scores = new Float64Array(3);
      k.topKEmbeddings(job, { k: 3, begin: 0, end: 17 }, ids, scores, 1);
      expect(Array.from(ids)).toEqual([2, 0, 1]);
      expect(Array.from(scores)).toEqual([2 ** 30 + 2 ** 8, 2 ** 30 + 2 ** 7, 2 ** 30 + 2 ** 7]);
      const relationScore = new Float32Array(1);
      k.scoreRelations(job, relationScore, 1);
      expect(relationScore[0]).toBe(2 ** 30 + 2 ** 7);
    });
  }
});

describe("sampling kernels: native and fallback agree", () => {
  const N = [10, 20, 50, 100, 3, 7, 1000, 2];

  it("gives bit-identical ranks on every backend (counter-based 32-bit stream)", () => {
    const big = Float64Array.from({ length: 10_000 }, (_, i) => 1 + ((i * 7919) % 2_500_000));
    const ref = Array.from(fallback().generateRanks(big, 123, 0));
    for (const k of nativeKernels()) expect(Array.from(k.generateRanks(big, 123, 0))).toEqual(ref);
  });

  it("is identical for a seed whatever the native thread count", () => {
    const n = Float64Array.from(N);
    for (const k of nativeKernels()) {
      const one = Array.from(k.sampleStatistic(n, null, 500, 9, 2, 0, 1));
      expect(Array.from(k.sampleStatistic(n, null, 500, 9, 2, 0, 2))).toEqual(one);
      expect(Array.from(k.sampleStatistic(n, null, 500, 9, 2, 0, 7))).toEqual(one);
    }
  });

  it("native and fallback sample statistics agree (bit-identical for rational statistics, 1e-12 for log-based)", () => {
    const n = Float64Array.from(N);
    const w = Float64Array.from(N, (_, i) => 1 + i / 3);
    const ref = fallback();
    for (const k of nativeKernels()) {
      for (const stat of [0, 2, 3, 4, 5, 6, 7]) {
        expect(Array.from(k.sampleStatistic(n, stat === 5 || stat === 7 ? null : w, 300, 4, stat, 3, 2))).toEqual(
          Array.from(ref.sampleStatistic(n, stat === 5 || stat === 7 ? null : w, 300, 4, stat, 3)),
        );
      }
      const a = k.sampleStatistic(n, w, 300, 4, 1, 0, 2);
      const b = ref.sampleStatistic(n, w, 300, 4, 1, 0);
      a.forEach((x, i) => expect(Math.abs(x - b[i]!) / b[i]!).toBeLessThanOrEqual(1e-12));
    }
  });
});

describe("metric kernels: native and fallback agree within 1e-12 relative", () => {
  const random = rng(99);
  const n = 200_003;
  const ranks = Float64Array.from({ length: n }, () => 1 + Math.floor(random() * 5000) / 2);
  const weights = Float64Array.from({ length: n }, () => 0.1 + random());
  const N = Float64Array.from(ranks, (x) => Math.ceil(x) + Math.floor(random() * 100));
  // few distinct weights: the weighted geometric closed form sweeps once per distinct weight (see README)
  const fewWeights = Float64Array.from(ranks, () => 1 + Math.floor(random() * 4) / 2);
  const ks = Float64Array.of(1, 3, 10);
  const truncatedKs = Float64Array.of(10, 2);
  const ref = fallback();
  for (const k of nativeKernels()) {
    it(`${k.backend}/${k.simd}: aggregate, median and closed moments`, () => {
      for (const w of [null, weights]) {
        const a = k.aggregateRanks(ranks, w, ks, truncatedKs, 7, 2);
        const b = ref.aggregateRanks(ranks, w, ks, truncatedKs, 7);
        a.forEach((x, i) => expect(relErr(x, b[i]!)).toBeLessThanOrEqual(1e-12));
        expect(k.medianRanks(ranks, w, false)).toBe(ref.medianRanks(ranks, w, false));
        expect(k.medianRanks(ranks, w, true)).toBe(ref.medianRanks(ranks, w, true));
        for (const code of [0, 1, 2, 3, 4]) {
          const cw = w && code === 3 ? fewWeights : w;
          const x = k.closedMoments(code, N, cw, 10);
          const y = ref.closedMoments(code, N, cw, 10);
          expect(relErr(x[0]!, y[0]!)).toBeLessThanOrEqual(1e-12);
          expect(relErr(x[1]!, y[1]!)).toBeLessThanOrEqual(1e-12);
        }
      }
    });
  }

  it("the native aggregate gives the same bits on 1, 2 and 7 threads, weighted and unweighted", () => {
    for (const k of nativeKernels()) {
      for (const w of [null, weights]) {
        const one = k.aggregateRanks(ranks, w, ks, truncatedKs, 7, 1);
        for (const t of [2, 7])
          expect(Array.from(k.aggregateRanks(ranks, w, ks, truncatedKs, 7, t))).toEqual(Array.from(one));
      }
    }
  });

  it("histogram moments give the same bits on 1, 2 and 7 threads (bins and geometric sweep blocks)", () => {
    const big = Float64Array.from({ length: 50_000 }, (_, i) => 1 + ((i * 104729) % 300_000));
    for (const k of nativeKernels()) {
      const h = k.candidateHistogram(big, null);
      for (const code of [0, 1, 2, 3]) {
        const one = Array.from(k.histogramMoments(code, h, big.length, 10, 1));
        for (const t of [2, 7]) expect(Array.from(k.histogramMoments(code, h, big.length, 10, t))).toEqual(one);
        const ts = ref.histogramMoments(code, ref.candidateHistogram(big, null), big.length, 10);
        expect(relErr(one[0]!, ts[0]!)).toBeLessThanOrEqual(1e-12);
        expect(relErr(one[1]!, ts[1]!)).toBeLessThanOrEqual(1e-12);
      }
    }
  });
});

describe("median E and Var: native and fallback agree within 1e-12 relative", () => {
  const rnd = lcg(11);
  const sets: [string, Float64Array][] = [
    ["n = 1,001, N up to 5,000", Float64Array.from({ length: 1001 }, () => 1 + Math.floor(rnd() * 5000))],
    ["n = 20,001, N up to 2.5 M", Float64Array.from({ length: 20001 }, () => 1 + Math.floor(rnd() * 2.5e6))],
    // Even n costs more (the joint law of the two middle ranks): its sum over the gap grows with N/n.
    ["n = 20,000, N up to 20,000", Float64Array.from({ length: 20000 }, () => 1 + Math.floor(rnd() * 20000))],
    ["n = 201, N up to 2^31-1", Float64Array.from({ length: 201 }, () => 1 + Math.floor(rnd() * 2147483646))],
    // even, distinct N far apart: the joint rows' chains through the kinks, at integer and non-integer x
    [
      "n = 12, distinct N in 40,009..290,011",
      Float64Array.from([40009, 61007, 83003, 97001, 120011, 131009, 150001, 171007, 190027, 230003, 260003, 290011]),
    ],
  ];
  for (const [name, N] of sets) {
    it(name, () => {
      const ref = fallback().medianMoments(N);
      for (const k of nativeKernels()) {
        const m = k.medianMoments(N);
        expect(relErr(m[0]!, ref[0]!)).toBeLessThanOrEqual(1e-12);
        expect(relErr(m[1]!, ref[1]!)).toBeLessThanOrEqual(1e-12);
        expect(relErr(k.medianMoments(N, false)[0]!, ref[0]!), "E alone").toBeLessThanOrEqual(1e-12);
      }
    });
  }
});

describe("paired resampling (compare's replicates): bit-identical on every backend", () => {
  /** Two runs' ranks over n tasks with ties between and within runs, and their columns as compare builds them. */
  function columns(n: number, medians: boolean): { columns: PairedColumns; cols: number } {
    const next = rng(n);
    const a = Float64Array.from({ length: n }, () => 1 + Math.floor(next() * 60) / 2);
    const b = Float64Array.from({ length: n }, (_, i) => (i % 5 === 0 ? a[i]! : 1 + Math.floor(next() * 400) / 2));
    const parts = [
      b.map((x, i) => x - a[i]!),
      b.map((x, i) => 1 / x - 1 / a[i]!),
      b.map((x, i) => Math.log(x) - Math.log(a[i]!)),
      b.map((x, i) => (x <= 10 ? 1 : 0) - (a[i]! <= 10 ? 1 : 0)),
    ];
    const x = new Float64Array(parts.length * n);
    parts.forEach((p, i) => x.set(p, i * n));
    if (!medians) return { columns: { n, x, medians: null }, cols: parts.length };
    const values = Float64Array.from(new Set([...a, ...b])).sort();
    const at = new Map(Array.from(values, (v, i) => [v, i] as const));
    const order = (r: Float64Array) => Uint32Array.from(r.keys()).sort((i, j) => r[i]! - r[j]! || i - j);
    const orderA = order(a);
    const orderB = order(b);
    return {
      cols: parts.length,
      columns: {
        n,
        x,
        medians: {
          indexA: Uint32Array.from(a, (v) => at.get(v)!),
          indexB: Uint32Array.from(b, (v) => at.get(v)!),
          values,
          orderA,
          orderB,
          sortedA: Float64Array.from(orderA, (i) => a[i]!),
          sortedB: Float64Array.from(orderB, (i) => b[i]!),
        },
      },
    };
  }

  it("every native level and thread count gives the fallback's sums and medians bit for bit", () => {
    for (const n of [1, 2, 31, 33, 2048 + 77, 5001]) {
      for (const medians of [false, true]) {
        const { columns: c, cols } = columns(n, medians);
        for (const kind of [ResamplingKind.Randomization, ResamplingKind.Bootstrap]) {
          const ref = fallback().pairedResample(kind, c, 0x5eed + n, 3, 9);
          expect(ref.length).toBe(9 * (cols + (medians ? 2 : 0)));
          for (const k of nativeKernels()) {
            for (const threads of [1, 2, 5]) {
              const got = k.pairedResample(kind, c, 0x5eed + n, 3, 9, threads);
              expect(
                got.every((v, i) => Object.is(v, ref[i])),
                `${k.simd} threads ${threads} n ${n} kind ${kind} medians ${medians}`,
              ).toBe(true);
            }
          }
          // A block of replicates is the same replicates called one by one.
          const one = fallback().pairedResample(kind, c, 0x5eed + n, 7, 1);
          const width = cols + (medians ? 2 : 0);
          expect(Array.from(one)).toEqual(Array.from(ref.subarray(4 * width, 5 * width)));
        }
      }
    }
  });
});

describe("PyTorch-BigGraph's scores (pbgAdjust, pbgCompare): bit-identical on every backend", () => {
  const variants = kernelsWithThreads();
  /** Values of a scale that makes sums round, with now and then a special value (NaN, infinities, zeros, subnormals). */
  function values(n: number, next: () => number, special: boolean): Float64Array {
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      out[i] = special && next() < 0.02 ? SPECIAL_F64[Math.floor(next() * SPECIAL_F64.length)]! : next() * 2.6 - 1.3;
    }
    return out;
  }
  const same = (a: Float64Array, b: Float64Array) =>
    a.every((x, i) => Object.is(x, b[i]) || (x !== x && b[i] !== b[i]));

  it("adjust: every operator and comparator, with and without bias and global embeddings, float32 and float64 rows", () => {
    const next = rng(45);
    const ts = fallback();
    let cases = 0;
    for (const d of [1, 2, 7, 33]) {
      for (const operator of Object.keys(PBG_OPERATORS) as PbgOperatorName[]) {
        for (const comparator of Object.keys(PBG_COMPARATORS) as PbgComparatorName[]) {
          for (const bias of [false, true]) {
            const count = 1 + Math.floor(next() * 300);
            const special = next() < 0.5;
            const rows64 = values(count * d, next, special);
            const rows = next() < 0.5 ? rows64 : Float32Array.from(rows64);
            const params: PbgOperatorValues = {
              translation: values(d, next, false),
              diagonal: values(d, next, false),
              linear_transformation: values(d * d, next, false),
              real: values(d >> 1, next, false),
              imag: values(d >> 1, next, false),
            };
            const global = next() < 0.5 ? values(d, next, false) : undefined;
            const input = { scoring: { comparator, bias, dimension: d }, rows, count, global, operator, params };
            const want = new Float64Array(count * d).fill(42);
            ts.pbgAdjust(input, want);
            for (const v of variants) {
              const got = new Float64Array(count * d).fill(-42);
              v.kernels.pbgAdjust(input, got, v.threads);
              expect(same(got, want), `${v.name} d=${d} ${operator} ${comparator} bias=${bias}`).toBe(true);
            }
            cases++;
          }
        }
      }
    }
    expect(cases).toBe(4 * 6 * 4 * 2);
  });

  it("compare: every comparator, bias on either side, widths around every level's panel, rows at an offset", () => {
    const next = rng(4545);
    const ts = fallback();
    for (const d of [1, 2, 5, 64, 101]) {
      for (const comparator of Object.keys(PBG_COMPARATORS) as PbgComparatorName[]) {
        for (const bias of [false, true]) {
          for (const queryFirst of [false, true]) {
            const numQueries = 1 + Math.floor(next() * 9);
            // Around the panels (8, 16, 32 lanes) and the tasks (512 candidates).
            const numCandidates = [1, 7, 15, 17, 31, 33, 513, 1100][Math.floor(next() * 8)]!;
            const special = next() < 0.5;
            const queries = values(numQueries * d, next, special);
            // Float64 (adjusted) rows, or stored float32 rows that no adjustment changes.
            const candidates: Float32Array | Float64Array =
              next() < 0.5 ? values(numCandidates * d, next, special) : new Float32Array(numCandidates * d);
            if (candidates instanceof Float32Array) candidates.set(values(numCandidates * d, next, special));
            // Exact ties: a candidate equal to another, and one equal to a query.
            if (numCandidates > 3) candidates.copyWithin(0, 2 * d, 3 * d);
            if (numCandidates > 1) candidates.set(queries.subarray(0, d), d);
            const outOffset = Math.floor(next() * 5);
            const outStride = outOffset + numCandidates + Math.floor(next() * 3);
            const input = {
              scoring: { comparator, bias, dimension: d },
              queries,
              numQueries,
              candidates,
              numCandidates,
              queryFirst,
              outStride,
              outOffset,
            };
            const want = new Float64Array(numQueries * outStride).fill(42);
            ts.pbgCompare(input, want);
            for (const v of variants) {
              const got = new Float64Array(numQueries * outStride).fill(42);
              v.kernels.pbgCompare(input, got, v.threads);
              expect(same(got, want), `${v.name} d=${d} ${comparator} bias=${bias} queryFirst=${queryFirst}`).toBe(
                true,
              );
            }
          }
        }
      }
    }
  });
});
