/**
 * Relation prediction from embeddings (EmbeddingModel.scoreRelations, the scoreRelations kernel): for every
 * interaction and complex layout, float32 and float64, on Nations-sized random embeddings, each score of (h, r, t)
 * equals bit for bit the entity kernels' score of t for (h, r, ?) (scoreTriples, and the column the ranking kernel
 * compares: ranking with the relation score given as the true score counts exactly as ranking from the truth). The
 * filtered relation ranks against NumPy on FB15k-237 and WN18RR: test/relation-scores-numpy.test.ts.
 */
import { describe, expect, it } from "vitest";

import { expectInputError } from "./helpers/errors";
import { EmbeddingModel, RelationRanker } from "../src/index";
import { kernels } from "../src/backend/backend";
import { backendLabel } from "./helpers/backend";
import { loadBundled } from "./helpers/datasets";
import { EMBEDDING_CASES } from "./helpers/embedding-reference";
import { build, label } from "./helpers/relation-model";

describe(`EmbeddingModel.scoreRelations on ${backendLabel}`, () => {
  const nations = loadBundled("nations");
  const E = nations.entities.length;
  const R = nations.relations.length;
  const test = nations.splits.test;
  const rows = test.length / 3;

  for (const precision of ["float32", "float64"] as const) {
    it(`equals the entity kernels' score of every (h, r, t), bit for bit, for every interaction (${precision})`, () => {
      for (const [k, c] of EMBEDDING_CASES.entries()) {
        // Odd widths (37; complex 2 x 18) leave partial SIMD panels.
        const model = build(c, E, R, c.name === "complex" || c.name.startsWith("rotate") ? 18 : 37, 40 + k, precision);
        const scores = model.scoreRelations(test);
        expect(scores).toBeInstanceOf(precision === "float64" ? Float64Array : Float32Array);
        expect(scores.length).toBe(rows * R);
        expect(model.scoreRelations(test, { threads: 1 })).toEqual(scores);
        // Every (h, r, t) of the test pairs, scored by the entity kernels' code.
        const all = new Int32Array(rows * R * 3);
        for (let i = 0; i < rows; i++) {
          for (let r = 0; r < R; r++) all.set([test[3 * i]!, r, test[3 * i + 2]!], 3 * (i * R + r));
        }
        const want = model.scoreTriples(all);
        let same = 0;
        for (let j = 0; j < want.length; j++) if (Object.is(scores[j], want[j])) same++;
        expect(same, label(c, precision)).toBe(want.length);
        // The ranking kernel's column of t: ranking (h, r, ?) against the relation score as the given true score
        // counts exactly as ranking against the truth's own score (t's column equal to it, every other the same).
        const heads = new Int32Array(rows * R);
        const rels = new Int32Array(rows * R);
        const tails = new Int32Array(rows * R);
        for (let j = 0; j < rows * R; j++)
          [heads[j], rels[j], tails[j]] = [all[3 * j]!, all[3 * j + 1]!, all[3 * j + 2]!];
        const fromTruth = new Float64Array(5 * rows * R + 2);
        const fromRelation = new Float64Array(5 * rows * R + 2);
        kernels().rankEmbeddings(model.job("tail", heads, rels, tails), fromTruth);
        kernels().rankEmbeddings(
          { ...model.job("tail", heads, rels, tails), trueScores: Float64Array.from(scores) },
          fromRelation,
        );
        expect(fromRelation, label(c, precision)).toEqual(fromTruth);
      }
    });
  }

  it("ranks relations through RelationRanker as scores given by hand (one call, no copies to make)", () => {
    const model = build({ name: "distmult" }, E, R, 16, 3, "float32");
    const ranker = new RelationRanker({
      numEntities: E,
      numRelations: R,
      filterTriples: Object.values(nations.splits),
    });
    const scores = model.scoreRelations(test);
    expect(ranker.rank({ triples: test, scores })).toEqual(ranker.rank({ triples: test, scores: scores.slice() }));
    expect(model.scoreRelations(new Int32Array(0))).toEqual(new Float32Array(0));
  });

  it("refuses bad input with typed errors naming the argument and the fix", () => {
    const model = build({ name: "transe-l1" }, E, R, 4, 9, "float32");
    expectInputError(() => model.scoreRelations([0, 0, E]), "triples", /row 0: tail 14 is not an id in \[0, 14\)/);
    expectInputError(() => model.scoreRelations([-1, 0, 0]), "triples", /row 0: head -1/);
    expectInputError(() => model.scoreRelations([0, R, 0]), "triples", /row 0: relation 55 is not an id in \[0, 55\)/);
    expectInputError(() => model.scoreRelations([0, 0]), "triples", /not a multiple of 3/);
    expectInputError(() => model.scoreRelations(test, { thread: 2 } as never), "scoreRelations options", /thread/);
    // float32 overflow of finite embeddings: named with its row and relation, and the fix.
    const huge = new EmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: { data: new Float32Array(E * 2).fill(1e19), shape: [E, 2] },
      relationEmbeddings: { data: new Float32Array(R * 2).fill(1e19), shape: [R, 2] },
    });
    expectInputError(
      () => huge.scoreRelations([1, 0, 2]),
      "model",
      /row 0 \(1, 0, 2\) is Infinity: float32 overflow.*rescale/,
    );
  });
});
