/**
 * Top-k predictions (predictTopK, mergeTopK, evaluateWikiKG90Mv2) on the backend of this project: every list against
 * a brute force over every (query, entity) pair scored by the ranking kernel itself (the true score rankEmbeddings
 * reports for that pair, same side), sorted by (score descending, id ascending), for every interaction, raw and
 * filtered, with ties; lists of two entity ranges merged against the whole range; every backend, SIMD level and
 * thread count of this process giving the same lists bit for bit; WikiKG90Mv2's MRR rules on hand-made lists.
 */
import { describe, expect, it } from "vitest";

import { allKernels, kernels } from "../src/backend/backend";
import {
  EmbeddingModel,
  evaluateWikiKG90Mv2,
  KgrankInputError,
  mergeTopK,
  predictTopK,
  predictTopKAsync,
  type TopKPredictions,
} from "../src/index";
import { backendLabel } from "./helpers/backend";
import { EMBEDDING_CASES, type EmbeddingCase, randomValues } from "./helpers/embedding-reference";

type Case = EmbeddingCase;
const CASES = EMBEDDING_CASES;

const label = (c: Case) => `${c.name}${c.layout ? `/${c.layout}` : ""}${c.phases ? "/phases" : ""}`;

function makeModel(
  c: Case,
  n: number,
  nr: number,
  dim: number,
  seed: number,
  opts: { precision?: "float32" | "float64"; duplicateRows?: boolean } = {},
): EmbeddingModel {
  const rotation = c.name === "rotate" || c.name === "rotate-l2";
  const width = c.name === "complex" || rotation ? 2 * dim : dim;
  const relWidth = c.name === "pairre" ? 2 * width : rotation && c.phases ? width / 2 : width;
  const ent = randomValues(n * width, seed, 0.5);
  if (opts.duplicateRows) for (let e = 1; e < n; e += 2) ent.copyWithin(e * width, (e - 1) * width, e * width);
  return new EmbeddingModel({
    interaction: c.name,
    entityEmbeddings: { data: ent, shape: [n, width] },
    relationEmbeddings: {
      data: randomValues(nr * relWidth, seed + 1, rotation && c.phases ? 3 : 0.5),
      shape: [nr, relWidth],
    },
    ...(c.layout ? { complexLayout: c.layout } : {}),
    ...(c.phases ? { phaseScale: 1.0471975511965976 } : {}),
    precision: opts.precision ?? "float32",
  });
}

/** The ranking kernel's score of (anchor, relation, e) on `side` for every e: its true score with truth e. */
function kernelScores(model: EmbeddingModel, side: "head" | "tail", anchor: number, relation: number): Float64Array {
  const n = model.numEntities;
  const a = new Int32Array(n).fill(anchor);
  const r = new Int32Array(n).fill(relation);
  const truth = Int32Array.from({ length: n }, (_, i) => i);
  const out = new Float64Array(5 * n + 2);
  kernels().rankEmbeddings(model.job(side, a, r, truth, { candidates: Int32Array.of(0) }), out);
  return out.slice(4 * n, 5 * n);
}

/** Brute force: entities of [begin, end) not excluded, NaN dropped, by (score desc, id asc), the first k, padded. */
function bruteForce(scores: Float64Array, k: number, begin: number, end: number, excluded: Set<number>) {
  const ids: number[] = [];
  for (let e = begin; e < end; e++) if (!excluded.has(e) && !Number.isNaN(scores[e]!)) ids.push(e);
  ids.sort((a, b) => (scores[a]! > scores[b]! ? -1 : scores[a]! < scores[b]! ? 1 : a - b));
  const top = ids.slice(0, k);
  return {
    ids: [...top, ...new Array<number>(k - top.length).fill(-1)],
    scores: [...top.map((e) => scores[e]!), ...new Array<number>(k - top.length).fill(NaN)],
  };
}

function rng(seed: number) {
  let s = seed >>> 0;
  return (m: number) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % m;
  };
}

function randomTriples(n: number, nr: number, rows: number, seed: number): Int32Array {
  const next = rng(seed);
  const t = new Int32Array(3 * rows);
  for (let i = 0; i < rows; i++) {
    t[3 * i] = next(n);
    t[3 * i + 1] = next(nr);
    t[3 * i + 2] = next(n);
  }
  return t;
}

/** Known answers of (anchor, relation) on a side among `filter`. */
function answers(filter: Int32Array, side: "head" | "tail", anchor: number, relation: number): Set<number> {
  const out = new Set<number>();
  for (let i = 0; i < filter.length; i += 3) {
    const [a, b] = side === "tail" ? [filter[i]!, filter[i + 2]!] : [filter[i + 2]!, filter[i]!];
    if (a === anchor && filter[i + 1] === relation) out.add(b);
  }
  return out;
}

function expectLists(
  model: EmbeddingModel,
  got: TopKPredictions,
  side: "head" | "tail",
  anchorRelation: (i: number) => [number, number],
  excludedOf: (i: number) => Set<number>,
  range: [number, number],
) {
  const k = got.k;
  const list = got[side]!;
  for (let i = 0; i < got.rows; i++) {
    const [a, r] = anchorRelation(i);
    const want = bruteForce(kernelScores(model, side, a, r), k, range[0], range[1], excludedOf(i));
    expect(Array.from(list.ids.subarray(i * k, (i + 1) * k)), `${side} row ${i}`).toEqual(want.ids);
    expect(Array.from(list.scores.subarray(i * k, (i + 1) * k)), `${side} row ${i}`).toEqual(want.scores);
  }
}

describe(`predictTopK (${backendLabel})`, () => {
  const n = 1100; // three candidate chunks of 512
  const nr = 3;
  for (const [ci, c] of CASES.entries()) {
    it(`${label(c)}: raw and filtered lists are the brute force's, both sides`, () => {
      const model = makeModel(c, n, nr, 5, 100 + ci);
      const triples = randomTriples(n, nr, 6, 7 + ci);
      // The filter holds each triple and other answers of its keys (and unrelated triples).
      const filter = new Int32Array([...triples, ...randomTriples(n, nr, 200, 9)]);
      for (let i = 0; i < 6; i++) {
        filter[3 * 6 + 3 * i] = triples[3 * i]!;
        filter[3 * 6 + 3 * i + 1] = triples[3 * i + 1]!;
      }
      const rowOf = (side: "head" | "tail") => (i: number) =>
        (side === "tail" ? [triples[3 * i]!, triples[3 * i + 1]!] : [triples[3 * i + 2]!, triples[3 * i + 1]!]) as [
          number,
          number,
        ];
      const raw = predictTopK(model, { triples, k: 9 });
      const filtered = predictTopK(model, { triples, k: 9, filter });
      expect(filtered.filtered).toBe(true);
      for (const side of ["head", "tail"] as const) {
        expectLists(model, raw, side, rowOf(side), () => new Set(), [0, n]);
        expectLists(
          model,
          filtered,
          side,
          rowOf(side),
          (i) => {
            const s = answers(filter, side, ...rowOf(side)(i));
            s.delete(side === "tail" ? triples[3 * i + 2]! : triples[3 * i]!); // the triple's own answer stays
            return s;
          },
          [0, n],
        );
      }
    });
  }

  it("queries (prediction): every known answer is removed; a range lists only its entities", () => {
    const model = makeModel({ name: "distmult" }, n, nr, 4, 3);
    const filter = randomTriples(n, nr, 3000, 5);
    const queries = Int32Array.of(filter[0]!, filter[1]!, filter[3]!, filter[4]!, 17, 2);
    const got = predictTopK(model, { queries, k: 12, filter, entityRange: [100, 900] });
    expect(got.head).toBeUndefined();
    expect(got.entityRange).toEqual([100, 900]);
    const row = (i: number) => [queries[2 * i]!, queries[2 * i + 1]!] as [number, number];
    expectLists(model, got, "tail", row, (i) => answers(filter, "tail", ...row(i)), [100, 900]);
    expect(answers(filter, "tail", ...row(0)).size).toBeGreaterThan(0);
  });

  it("k above a candidate chunk (512): the brute force, filtered, the list full only after two chunks", () => {
    const model = makeModel({ name: "transe-l1" }, n, nr, 3, 71, { duplicateRows: true });
    const triples = randomTriples(n, nr, 3, 72);
    const filter = randomTriples(n, nr, 2000, 73);
    const got = predictTopK(model, { triples, k: 700, side: "head", filter, entityRange: [3, n] });
    expectLists(
      model,
      got,
      "head",
      (i) => [triples[3 * i + 2]!, triples[3 * i + 1]!],
      (i) => {
        const s = answers(filter, "head", triples[3 * i + 2]!, triples[3 * i + 1]!);
        s.delete(triples[3 * i]!);
        return s;
      },
      [3, n],
    );
  });

  it("float64 precision: the brute force of the wide scores", () => {
    const model = makeModel({ name: "transe-l1" }, n, nr, 4, 11, { precision: "float64" });
    const triples = randomTriples(n, nr, 4, 12);
    const got = predictTopK(model, { triples, k: 5, side: "tail" });
    expectLists(
      model,
      got,
      "tail",
      (i) => [triples[3 * i]!, triples[3 * i + 1]!],
      () => new Set(),
      [0, n],
    );
  });

  it("ties (duplicated entity rows): the smaller id first; a short row is padded with -1 and NaN", () => {
    const model = makeModel({ name: "distmult" }, n, nr, 4, 21, { duplicateRows: true });
    const triples = randomTriples(n, nr, 300, 22); // more than one block of 256 rows
    const got = predictTopK(model, { triples, k: 6, side: "tail" });
    const k = 6;
    for (let i = 0; i < 300; i += 37) {
      const ids = got.tail!.ids.subarray(i * k, (i + 1) * k);
      const sc = got.tail!.scores.subarray(i * k, (i + 1) * k);
      for (let j = 0; j < k; j += 2) {
        expect(ids[j]! % 2).toBe(0); // each score twice: the even (smaller) id of the pair first
        expect(ids[j + 1]).toBe(ids[j]! + 1);
        expect(sc[j + 1]).toBe(sc[j]);
      }
    }
    expectLists(
      model,
      got,
      "tail",
      (i) => [triples[3 * i]!, triples[3 * i + 1]!],
      () => new Set(),
      [0, n],
    );
    // Range [10, 14) with 2 of its 4 entities removed: 2 listed, 2 pads.
    const q = Int32Array.of(3, 1);
    const short = predictTopK(model, {
      queries: q,
      k: 4,
      entityRange: [10, 14],
      filter: Int32Array.of(3, 1, 11, 3, 1, 12),
    });
    expect(Array.from(short.tail!.ids.subarray(2))).toEqual([-1, -1]);
    expect(Array.from(short.tail!.scores.subarray(2))).toEqual([NaN, NaN]);
    expect([...short.tail!.ids.subarray(0, 2)].sort()).toEqual([10, 13]);
  });

  it("mergeTopK: the lists of [0, a) and [a, n) merge into the list of [0, n) bit for bit, ties across a", () => {
    const model = makeModel({ name: "transe-l2" }, n, nr, 4, 31, { duplicateRows: true });
    const triples = randomTriples(n, nr, 40, 32);
    const filter = randomTriples(n, nr, 500, 33);
    for (const a of [9, 513, 601, n - 9]) {
      // a odd: the entity pair (a - 1, a) ties across the boundary.
      const whole = predictTopK(model, { triples, k: 8, filter });
      const left = predictTopK(model, { triples, k: 8, filter, entityRange: [0, a] });
      const right = predictTopK(model, { triples, k: 8, filter, entityRange: [a, n] });
      const merged = mergeTopK([right, left]);
      expect(merged.entityRange).toEqual([0, n]);
      for (const side of ["head", "tail"] as const) {
        expect(Array.from(merged[side]!.ids)).toEqual(Array.from(whole[side]!.ids));
        expect(Array.from(merged[side]!.scores)).toEqual(Array.from(whole[side]!.scores));
      }
    }
    const a = predictTopK(model, { triples, k: 8, entityRange: [0, 600] });
    const b = predictTopK(model, { triples, k: 8, entityRange: [500, n] });
    expect(() => mergeTopK([a, b])).toThrow(/overlap/);
    const c = predictTopK(model, { triples, k: 8, entityRange: [700, n] });
    expect(() => mergeTopK([a, c])).toThrow(/gap/);
    expect(() => mergeTopK([a, predictTopK(model, { triples, k: 7, entityRange: [600, n] })])).toThrow(/parts\[1\]/);
  });

  it("every backend, SIMD level and thread count gives the same lists bit for bit", () => {
    for (const c of [CASES[0]!, CASES[3]!, CASES[6]!]) {
      const model = makeModel(c, 2100, nr, 7, 41, { duplicateRows: true });
      const triples = randomTriples(2100, nr, 300, 42);
      const input = model.job(
        "tail",
        triples.filter((_, i) => i % 3 === 0),
        triples.filter((_, i) => i % 3 === 1),
        new Int32Array(300),
      );
      const results = [1, 2, 3].flatMap((t) =>
        allKernels(t).map((kern) => {
          const ids = new Int32Array(300 * 10);
          const scores = new Float64Array(300 * 10);
          kern.topKEmbeddings(input, { k: 10, begin: 5, end: 2100 }, ids, scores);
          return { ids: Array.from(ids), scores: Array.from(scores) };
        }),
      );
      for (const r of results.slice(1)) expect(r).toEqual(results[0]);
    }
  });

  it("predictTopKAsync: pieces of rows and entity ranges give predictTopK's lists bit for bit; signal, onProgress", async () => {
    const model = makeModel({ name: "transe-l1" }, n, nr, 3, 81, { duplicateRows: true });
    const triples = randomTriples(n, nr, 1100, 82); // two pieces of rows (1,024 per piece)
    const filter = randomTriples(n, nr, 2000, 83);
    const seen: number[] = [];
    const got = await predictTopKAsync(model, {
      triples,
      k: 4,
      filter,
      onProgress: (p) => seen.push(p.done / p.total),
    });
    const want = predictTopK(model, { triples, k: 4, filter });
    for (const side of ["head", "tail"] as const) {
      expect(Array.from(got[side]!.ids)).toEqual(Array.from(want[side]!.ids));
      expect(Array.from(got[side]!.scores)).toEqual(Array.from(want[side]!.scores));
    }
    expect(seen[seen.length - 1]).toBe(1);
    // Two entity pieces (1,048,576 entities per thread), merged across the boundary.
    const wide = makeModel({ name: "distmult" }, 1_100_000, 2, 1, 84, { duplicateRows: true });
    const queries = Int32Array.of(5, 0, 17, 1, 1_099_999, 1);
    const near: [number, number] = [1_048_570, 1_048_580];
    const a = await predictTopKAsync(wide, { queries, k: 6, threads: 1, entityRange: near });
    expect(a.tail!.ids).toEqual(predictTopK(wide, { queries, k: 6, entityRange: near }).tail!.ids);
    const whole = await predictTopKAsync(wide, { queries, k: 6, threads: 1 });
    const wholeSync = predictTopK(wide, { queries, k: 6 });
    expect(whole.tail!.ids).toEqual(wholeSync.tail!.ids);
    expect(whole.tail!.scores).toEqual(wholeSync.tail!.scores);
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    await expect(predictTopKAsync(model, { triples, k: 4, signal: controller.signal })).rejects.toThrow("stop");
    await expect(predictTopKAsync(model, { triples, k: 4, signl: 1 } as never)).rejects.toThrow(
      /did you mean "signal"/,
    );
  });

  it("k past the range's entities: the whole list, then padding (-1, NaN), as for a filter that leaves fewer", () => {
    const model = makeModel({ name: "distmult" }, 20, 2, 3, 51);
    const triples = Int32Array.of(0, 1, 2);
    // k past the candidates (docs/embeddings.md, Padding): the full list, then id -1 and score NaN.
    for (const entityRange of [undefined, [15, 20] as [number, number]]) {
      const n = entityRange ? 5 : 20;
      const exact = predictTopK(model, { triples, k: n, ...(entityRange ? { entityRange } : {}) });
      const padded = predictTopK(model, { triples, k: n + 3, ...(entityRange ? { entityRange } : {}) });
      for (const side of ["head", "tail"] as const) {
        expect(Array.from(padded[side]!.ids)).toEqual([...exact[side]!.ids, -1, -1, -1]);
        expect(Array.from(padded[side]!.scores)).toEqual([...exact[side]!.scores, NaN, NaN, NaN]);
      }
    }
  });

  it("refuses bad arguments with the argument and the fix", () => {
    const model = makeModel({ name: "distmult" }, 20, 2, 3, 51);
    const triples = Int32Array.of(0, 1, 2);
    const err = (f: () => unknown, arg: string, re: RegExp) => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(KgrankInputError);
        expect((e as KgrankInputError).argument).toBe(arg);
        expect((e as Error).message).toMatch(re);
        return;
      }
      throw new Error("no error");
    };
    err(() => predictTopK(model, { triples, k: 0 }), "k", /integer >= 1/);
    err(() => predictTopK(model, { triples, k: 2.5 }), "k", /integer/);
    err(() => predictTopK(model, { triples, k: 5, entityRange: [0, 21] }), "entityRange", /0 <= begin < end <= 20/);
    err(() => predictTopK(model, { triples, k: 5, entityRange: [4, 4] }), "entityRange", /begin < end/);
    err(
      () => predictTopK(model, { triples, k: 5, entityrange: [0, 4] } as never),
      "options",
      /did you mean "entityRange"/,
    );
    err(() => predictTopK(model, { triples, queries: Int32Array.of(0, 1), k: 5 }), "queries", /exactly one/);
    err(() => predictTopK(model, { queries: Int32Array.of(0, 1), k: 5, side: "both" }), "side", /one side per call/);
    err(() => predictTopK(model, { queries: Int32Array.of(0, 9), k: 5 }), "queries", /relation 9/);
  });
});

describe(`evaluateWikiKG90Mv2 (${backendLabel})`, () => {
  const row = (...ids: number[]) => [...ids, ...Array.from({ length: 10 - ids.length }, (_, i) => 1000 + i)];
  it("reciprocal position of the true tail, 0 when absent; position 1 and 10", () => {
    const t = [5, 6, 7, 8];
    const pred = [row(5), row(1, 2, 3, 4, 9, 10, 11, 12, 13, 6), row(1, 2), row(1, 8, 8 + 100)];
    const r = evaluateWikiKG90Mv2({ tPredTop10: pred.flat(), t });
    expect(Array.from(r.reciprocalRanks)).toEqual([1, 0.1, 0, 0.5]);
    expect(r.mrr).toBe((1 + 0.1 + 0 + 0.5) / 4);
    expect(r.duplicateRows).toBe(0);
    expect(
      evaluateWikiKG90Mv2({ tPredTop10: BigInt64Array.from(pred.flat(), BigInt), t: BigInt64Array.from(t, BigInt) })
        .mrr,
    ).toBe(r.mrr);
  });
  it("a row listing an entity twice makes the MRR 0, as the evaluator does; -1 padding is not a duplicate", () => {
    const t = [5, 6];
    const dup = evaluateWikiKG90Mv2({ tPredTop10: [row(5), row(3, 6, 3)].flat(), t });
    expect(dup.duplicateRows).toBe(1);
    expect(dup.mrr).toBe(0);
    const padded = evaluateWikiKG90Mv2({ tPredTop10: [row(5), [6, -1, -1, -1, -1, -1, -1, -1, -1, -1]].flat(), t });
    expect(padded.duplicateRows).toBe(0);
    expect(padded.mrr).toBe(1);
  });
  it("refuses a shape that is not (n, 10)", () => {
    expect(() => evaluateWikiKG90Mv2({ tPredTop10: new Array<number>(18).fill(0), t: [1, 2] })).toThrow(
      /tPredTop10: has 18 ids, not 10 per true tail/,
    );
  });
});
