import { describe, expect, it } from "vitest";

import { backendInfo, kernels } from "../src/backend";
import type { Side } from "../src/kernels";
import { loadBundled } from "./helpers/datasets";
import { rng } from "./helpers/reference";

const info = backendInfo();
const label = `${info.backend}${info.backend === "native" ? `/${info.simd}/t${info.threads}` : ""}`;
const umls = loadBundled("umls");
const all = [umls.splits.train, umls.splits.valid, umls.splits.test];
const N = umls.entities.length;
const R = umls.relations.length;

/** Known answers per (anchor, relation), from plain Sets. */
function referenceAnswers(side: Side): Map<string, Set<number>> {
  const m = new Map<string, Set<number>>();
  for (const t of all) {
    for (let i = 0; i < t.length; i += 3) {
      const [h, r, tail] = [t[i]!, t[i + 1]!, t[i + 2]!];
      const key = side === "tail" ? `${h},${r}` : `${tail},${r}`;
      if (!m.has(key)) m.set(key, new Set());
      m.get(key)!.add(side === "tail" ? tail : h);
    }
  }
  return m;
}

describe(`filter index on ${label}`, () => {
  for (const side of ["tail", "head"] as const) {
    it(`lists exactly the known ${side}s of every key of UMLS train+valid+test, sorted, duplicates merged`, () => {
      const ref = referenceAnswers(side);
      // Duplicated input: the test split twice.
      const index = kernels().buildFilterIndex([...all, umls.splits.test], N, R, side);
      let total = 0;
      for (let a = 0; a < N; a++) {
        for (let r = 0; r < R; r++) {
          const want = [...(ref.get(`${a},${r}`) ?? [])].sort((x, y) => x - y);
          expect(Array.from(index.answers(a, r))).toEqual(want);
          total += want.length;
        }
      }
      expect(index.stats()).toMatchObject({ keys: ref.size, answers: total });
    });

    it(`gives filtered counts equal to NaN-masking the other known ${side}s (UMLS test, float32 and float64)`, async () => {
      const index = kernels().buildFilterIndex(all, N, R, side);
      const ref = referenceAnswers(side);
      const test = umls.splits.test;
      const rows = test.length / 3;
      const next = rng(17);
      for (const Ctor of [Float32Array, Float64Array]) {
        const scores = new Ctor(rows * N).map(() => (next() < 0.03 ? NaN : Math.floor(next() * 16) / 4));
        const anchor = new Int32Array(rows);
        const relation = new Int32Array(rows);
        const truth = new Int32Array(rows);
        for (let i = 0; i < rows; i++) {
          const [h, r, t] = [test[3 * i]!, test[3 * i + 1]!, test[3 * i + 2]!];
          anchor[i] = side === "tail" ? h : t;
          relation[i] = r;
          truth[i] = side === "tail" ? t : h;
          if (Number.isNaN(scores[i * N + truth[i]!]!)) scores[i * N + truth[i]!] = 1;
        }
        for (const useAsync of [false, true]) {
          const out = { greater: new Float64Array(rows), equal: new Float64Array(rows), nan: new Float64Array(rows), removed: new Float64Array(rows) };
          const th = new Ctor(rows);
          if (useAsync) await index.countFilteredAsync(scores, anchor, relation, truth, th, out);
          else index.countFiltered(scores, anchor, relation, truth, th, out);
          for (let i = 0; i < rows; i++) {
            const row = Array.from(scores.subarray(i * N, (i + 1) * N));
            const t = row[truth[i]!]!;
            for (const k of ref.get(`${anchor[i]},${relation[i]}`)!) if (k !== truth[i]) row[k] = NaN;
            const candidates = row.filter((v) => !Number.isNaN(v));
            expect(th[i]).toBe(t);
            expect(out.greater[i]).toBe(candidates.filter((v) => v > t).length);
            expect(out.equal[i]).toBe(candidates.filter((v) => v === t).length);
            expect(N - out.nan[i]! - out.removed[i]!).toBe(candidates.length);
          }
        }
      }
    });
  }
});
