import { describe, expect, it } from "vitest";

import { backendInfo, kernels } from "../src/backend/backend";
import { StatusCode } from "../src/contract/kernels";
import { umls } from "./helpers/umls";
import { knownAnswers, rng } from "./helpers/reference";
import { backendLabel } from "./helpers/backend";

const label = backendLabel;
const { N, R, all, test: umlsTest } = umls();

describe(`filter index on ${label}`, () => {
  for (const side of ["tail", "head"] as const) {
    it(`lists exactly the known ${side}s of every key of UMLS train+valid+test, sorted, duplicates merged`, () => {
      const ref = knownAnswers(all, side);
      // Duplicated input: the test split twice.
      const index = kernels().buildFilterIndex([...all, umlsTest], N, R, side);
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
      const ref = knownAnswers(all, side);
      const test = umlsTest;
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
          const out = {
            greater: new Float64Array(rows),
            equal: new Float64Array(rows),
            nan: new Float64Array(rows),
            removed: new Float64Array(rows),
          };
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

describe(`countFilteredRange (a column slice of the filtered count) on ${label}`, () => {
  const test = umlsTest;
  const rows = test.length / 3;
  /** Random cut points of [0, N), shuffled. */
  const tiling = (next: () => number): [number, number][] => {
    const cuts = new Set<number>([0, N]);
    const k = 1 + Math.floor(next() * 7);
    for (let i = 0; i < k; i++) cuts.add(Math.floor(next() * N));
    const c = [...cuts].sort((a, b) => a - b);
    const out: [number, number][] = [];
    for (let i = 0; i + 1 < c.length; i++) if (c[i]! < c[i + 1]!) out.push([c[i]!, c[i + 1]!]);
    return out.sort(() => next() - 0.5);
  };
  for (const side of ["tail", "head"] as const) {
    it(`each slice equals "count the slice, minus the other known ${side}s inside it"; the slices sum to countFiltered`, async () => {
      const index = kernels().buildFilterIndex(all, N, R, side);
      const ref = knownAnswers(all, side);
      const next = rng(29);
      const anchor = new Int32Array(rows);
      const relation = new Int32Array(rows);
      const truth = new Int32Array(rows);
      for (let i = 0; i < rows; i++) {
        anchor[i] = side === "tail" ? test[3 * i]! : test[3 * i + 2]!;
        relation[i] = test[3 * i + 1]!;
        truth[i] = side === "tail" ? test[3 * i + 2]! : test[3 * i]!;
      }
      // Row 0's task gets a truth that is no known answer: removed is -1 in every slice.
      const known0 = ref.get(`${anchor[0]},${relation[0]}`)!;
      truth[0] = Array.from({ length: N }, (_, e) => e).find((e) => !known0.has(e))!;
      let multi = 0;
      for (const Ctor of [Float32Array, Float64Array]) {
        const scores = new Ctor(rows * N).map(() => (next() < 0.03 ? NaN : Math.floor(next() * 16) / 4));
        for (let i = 0; i < rows; i++) if (Number.isNaN(scores[i * N + truth[i]!]!)) scores[i * N + truth[i]!] = 1;
        // Given thresholds: the true column's score, or (every third row) a value of its own.
        const th = new Ctor(rows).map((_, i) => (i % 3 === 2 ? 1.25 : scores[i * N + truth[i]!]!));
        const whole = {
          greater: new Float64Array(rows),
          equal: new Float64Array(rows),
          nan: new Float64Array(rows),
          removed: new Float64Array(rows),
        };
        index.countFiltered(scores, anchor, relation, truth, new Ctor(rows), whole);
        for (let round = 0; round < 3; round++) {
          const sum = {
            greater: new Float64Array(rows),
            equal: new Float64Array(rows),
            nan: new Float64Array(rows),
            removed: new Float64Array(rows),
          };
          let k = 0;
          const slices = tiling(next);
          for (const [a, b] of slices) {
            const w = b - a;
            const slice = new Ctor(rows * w);
            for (let i = 0; i < rows; i++) slice.set(scores.subarray(i * N + a, i * N + b), i * w);
            const out = {
              greater: new Float64Array(rows),
              equal: new Float64Array(rows),
              nan: new Float64Array(rows),
              removed: new Float64Array(rows),
            };
            if (k++ % 2) await index.countFilteredRangeAsync(slice, a, w, anchor, relation, truth, th, out);
            else index.countFilteredRange(slice, a, w, anchor, relation, truth, th, out);
            for (let i = 0; i < rows; i++) {
              const answers = ref.get(`${anchor[i]},${relation[i]}`)!;
              const t = th[i]!;
              let g = 0,
                e = 0,
                nan = 0,
                removed = 0,
                inside = 0;
              for (let j = a; j < b; j++) {
                const v = slice[i * w + j - a]!;
                if (answers.has(j) && j !== truth[i]) inside++;
                if (Number.isNaN(v)) nan++;
                else if (answers.has(j) && j !== truth[i]) removed++;
                else {
                  g += v > t ? 1 : 0;
                  e += v === t ? 1 : 0;
                }
              }
              if (inside > 0 && inside < answers.size - 1) multi++;
              expect(
                [out.greater[i], out.equal[i], out.nan[i], out.removed[i]],
                `row ${i}, slice [${a}, ${b})`,
              ).toEqual([g, e, nan, answers.has(truth[i]!) ? removed : -1]);
              sum.greater[i]! += g;
              sum.equal[i]! += e;
              sum.nan[i]! += nan;
              sum.removed[i]! += removed;
            }
          }
          // Rows whose given threshold is their true column's score: the slices sum to the whole row's count.
          for (let i = 1; i < rows; i++) {
            if (i % 3 === 2) continue;
            expect([sum.greater[i], sum.equal[i], sum.nan[i], sum.removed[i]], `row ${i}`).toEqual([
              whole.greater[i],
              whole.equal[i],
              whole.nan[i],
              whole.removed[i],
            ]);
          }
        }
      }
      expect(multi).toBeGreaterThan(100); // tasks whose known answers fall in several slices
    });
  }

  it.skipIf(backendInfo().backend !== "native")(
    "refuses slices past numEntities and ids out of range (native checks)",
    () => {
      const index = kernels().buildFilterIndex(all, N, R, "tail");
      const one = Int32Array.of(0);
      const out = {
        greater: new Float64Array(1),
        equal: new Float64Array(1),
        nan: new Float64Array(1),
        removed: new Float64Array(1),
      };
      const th = new Float32Array(1);
      expect(() => index.countFilteredRange(new Float32Array(4), N - 3, 4, one, one, one, th, out)).toThrow(/run past/);
      expect(() => index.countFilteredRange(new Float32Array(4), 0, 4, Int32Array.of(N), one, one, th, out)).toThrow(
        /anchor\[0\]/,
      );
      expect(() => index.countFilteredRange(new Float32Array(4), 0, 4, one, Int32Array.of(-1), one, th, out)).toThrow(
        /relation\[0\]/,
      );
      expect(() => index.countFilteredRange(new Float32Array(4), 0, 4, one, one, Int32Array.of(N), th, out)).toThrow(
        /truth\[0\]/,
      );
      return expect(
        index.countFilteredRangeAsync(new Float32Array(4), N - 1, 4, one, one, one, th, out),
      ).rejects.toThrow(/run past/);
    },
  );
});

describe(`rankTriples (one call per filtered batch) on ${label}`, () => {
  const index = kernels().buildFilterIndex([Int32Array.of(0, 0, 1, 0, 0, 2, 3, 1, 2)], 4, 2, "tail");
  const call = (triples: number[], scores: number[]) => {
    const rows = triples.length / 3;
    const keys = new Int32Array(3 * rows);
    const out = new Float64Array(6 * rows);
    const problem = index.rankTriples(
      Float32Array.from(scores),
      Int32Array.from(triples),
      keys,
      new Float32Array(rows),
      out,
    );
    return { problem, keys: Array.from(keys), out: Array.from(out) };
  };

  it("ranks like the brute force: (0, 0, ?) with known answers 1 and 2, (3, 1, ?) with known answer 2", () => {
    // Row 0: true tail 1 scores 0.5; 2 is another known answer (removed); 0 scores 0.9 (above), 3 scores 0.5 (tie).
    // Row 1: true tail 2 scores 0.1; every other tail is a candidate, 0 and 1 above, 3 NaN (no candidate).
    const r = call([0, 0, 1, 3, 1, 2], [0.9, 0.5, 0.7, 0.5, 0.8, 0.3, 0.1, NaN]);
    expect(r.problem).toBeNull();
    expect(r.keys).toEqual([0, 1, 0, 3, 1, 2]); // relation | anchor | truth
    const col = (k: number) => r.out.slice(2 * k, 2 * k + 2);
    expect(col(0)).toEqual([2, 3]); // optimistic
    expect(col(1)).toEqual([3, 3]); // pessimistic
    expect(col(2)).toEqual([2.5, 3]); // realistic
    expect(col(3)).toEqual([3, 3]); // candidates: 4 - removed 1; 4 - NaN 1
    expect(col(4).every(Number.isNaN)).toBe(true); // weight
  });

  it("returns the first problem with its status: an id out of range (flat index), a NaN true score, a triple not in the index (row)", () => {
    expect(call([0, 0, 1, 0, 5, 1], new Array(8).fill(0)).problem).toEqual({
      status: StatusCode.IdOutOfRange,
      index: 4,
    });
    expect(call([0, 0, 1, 0, 0, 2], [0, NaN, 0, 0, 0, 0, 0, 0]).problem).toEqual({
      status: StatusCode.NanTrueScore,
      index: 0,
    });
    expect(call([0, 0, 1, 1, 0, 3], new Array(8).fill(0)).problem).toEqual({
      status: StatusCode.NotInIndex,
      index: 1,
    });
  });
});

describe(`answerCounts (every key's number of known answers, one call) on ${label}`, () => {
  it("equals the brute force on random small indexes, 0 for unknown keys, both sides", () => {
    const next = rng(29);
    const int = (k: number) => Math.floor(next() * k);
    for (let round = 0; round < 40; round++) {
      const E = 1 + int(30);
      const R = 1 + int(6);
      const random = (rows: number) => Int32Array.from({ length: 3 * rows }, (_, i) => int(i % 3 === 1 ? R : E));
      const filter = [random(int(80)), random(int(20))];
      // Known triples (their keys are known) and random ones (some keys unknown).
      const known = filter[0]!.subarray(0, 3 * Math.min(5, filter[0]!.length / 3));
      const triples = Int32Array.from([...known, ...random(int(30))]);
      for (const side of ["tail", "head"] as const) {
        const index = kernels().buildFilterIndex(filter, E, R, side);
        const ref = knownAnswers(filter, side);
        const out = new Float64Array(triples.length / 3).fill(-1);
        expect(index.answerCounts(triples, out)).toBeNull();
        const want = Array.from(out, (_, i) => {
          const [h, r, t] = [triples[3 * i]!, triples[3 * i + 1]!, triples[3 * i + 2]!];
          return ref.get(`${side === "tail" ? h : t},${r}`)?.size ?? 0;
        });
        expect(Array.from(out)).toEqual(want);
        for (let i = 0; i < out.length; i++) {
          const a = triples[3 * i + (side === "tail" ? 0 : 2)]!;
          expect(out[i]).toBe(index.answers(a, triples[3 * i + 1]!).length);
        }
      }
    }
  });

  it("returns the first id out of range (flat index: head, relation, tail of each row) and writes the rows before it", () => {
    const index = kernels().buildFilterIndex([Int32Array.of(0, 0, 1, 0, 0, 2, 3, 1, 2)], 4, 2, "tail");
    const call = (triples: number[]) => {
      const out = new Float64Array(triples.length / 3).fill(-1);
      return { problem: index.answerCounts(Int32Array.from(triples), out), out: Array.from(out) };
    };
    expect(call([0, 0, 3, 3, 1, 0, 1, 1, 1])).toEqual({ problem: null, out: [2, 1, 0] });
    expect(call([0, 0, 1, 4, 0, 1, 0, 0, 1])).toEqual({
      problem: { status: StatusCode.IdOutOfRange, index: 3 },
      out: [2, -1, -1],
    });
    expect(call([0, 0, 1, 0, 2, 1]).problem).toEqual({ status: StatusCode.IdOutOfRange, index: 4 });
    expect(call([0, -1, 1]).problem).toEqual({ status: StatusCode.IdOutOfRange, index: 1 });
    expect(call([0, 0, -5]).problem).toEqual({ status: StatusCode.IdOutOfRange, index: 2 });
    expect(call([0, 0, 4]).problem).toEqual({ status: StatusCode.IdOutOfRange, index: 2 });
  });
});
