/**
 * Every backend this process can run (native at each supported SIMD level and several thread counts, and the
 * TS fallback) gives exactly the same counts on the same inputs: score matrices, and ranking from embeddings (every
 * interaction, both complex layouts, float32 and float64: the true scores bit for bit).
 */
import { describe, expect, it } from "vitest";

import { allKernels } from "../src/backend/backend";
import type { CountBuffers, FloatArray, Kernels } from "../src/contract/kernels";
import { EmbeddingModel, INTERACTIONS } from "../src/scoring/embedding-model";
import { rng, SPECIAL_F32, SPECIAL_F64 } from "./helpers/reference";

function run(k: Kernels, scores: FloatArray, cols: number, thresholds: FloatArray, threads?: number): CountBuffers {
  const rows = thresholds.length;
  const out = { greater: new Float64Array(rows), equal: new Float64Array(rows), nan: new Float64Array(rows) };
  k.countScores(scores, cols, thresholds, out, threads);
  return out;
}

function kernelsWithThreads(): { name: string; kernels: Kernels; threads?: number }[] {
  const out: { name: string; kernels: Kernels; threads?: number }[] = [];
  for (const k of allKernels()) {
    if (k.backend === "ts") {
      out.push({ name: "ts", kernels: k });
    } else {
      for (const t of [1, 2, 5]) out.push({ name: `native/${k.simd}/t${t}`, kernels: k, threads: t });
    }
  }
  return out;
}

describe("backend parity", () => {
  const variants = kernelsWithThreads();

  it("includes the native kernels unless the fallback was forced", () => {
    const native = variants.filter((v) => v.kernels.backend === "native");
    if (process.env.KGRANK_BACKEND === "ts") {
      expect(native.length).toBe(0);
    } else {
      expect(native.length).toBeGreaterThanOrEqual(3);
    }
  });

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
          for (const side of ["head", "tail"] as const) {
            const job = model.job(side, anchor, relation, truth, { excludeOffsets, excludeIds });
            const outs = variants.map((v) => {
              const out = new Float64Array(5 * rows + 2);
              v.kernels.rankEmbeddings(job, out, v.threads);
              return { name: v.name, out: Array.from(out) };
            });
            for (const other of outs.slice(1))
              expect(other.out, `${side}: ${other.name} vs ${outs[0]!.name}`).toEqual(outs[0]!.out);
          }
        });
      }
    }
  }
});
