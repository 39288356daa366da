/**
 * Typed candidates ranked from a model's embeddings (RankEvaluator.addModel / addModelSync with options.candidates)
 * against the score path: every score of the model's score matrix computed here by the kernel's own code (the true
 * score of a one-row job, which equals its lanes' scores bit for bit), those rows ranked by the constrained score
 * path (add), and the two evaluators' task columns (ranks, numCandidates) and results (every metric, its exact
 * expectation and variance) compared for equality. Filtered and unfiltered, both sides, sets seen in training and
 * sparse random sets that leave many true answers out, float32 and float64, interactions with many exact ties.
 */
import { describe, expect, it } from "vitest";

import { CandidateSets, EmbeddingModel, RankEvaluator } from "../src/index";
import { backendLabel } from "./helpers/backend";
import { loadBundled } from "./helpers/datasets";
import { EMBEDDING_CASES, type EmbeddingCase, randomValues } from "./helpers/embedding-reference";
import { expectInputError } from "./helpers/errors";
import { modelScoreMatrix } from "./helpers/model-scores";
import { rng } from "./helpers/reference";

const nations = loadBundled("nations");
const E = nations.entities.length;
const R = nations.relations.length;
const { train, valid, test } = nations.splits;

/** A model with values on a grid of quarters (many exact ties among the scores). */
function gridModel(c: EmbeddingCase, dim: number, seed: number, precision: "float32" | "float64") {
  const rotation = c.name === "rotate" || c.name === "rotate-l2";
  const width = c.name === "complex" || rotation ? 2 * dim : dim;
  const relWidth = c.name === "pairre" ? 2 * width : rotation && c.phases ? width / 2 : width;
  // Zeros move to a quarter: a complex relation of modulus 0 has no rotation.
  const grid = (v: Float32Array) => v.map((x) => Math.round(x * 4) / 4 || 0.25);
  return new EmbeddingModel({
    interaction: c.name,
    entityEmbeddings: { data: grid(randomValues(E * width, seed, 1)), shape: [E, width] },
    relationEmbeddings: { data: grid(randomValues(R * relWidth, seed + 1, 1)), shape: [R, relWidth] },
    ...(c.layout ? { complexLayout: c.layout } : {}),
    ...(c.phases ? { phaseScale: 0.5 } : {}),
    precision,
  });
}

/** Sparse random sets: about a quarter of the entities per relation and side (many true answers left out). */
function sparseSets(seed: number): CandidateSets {
  const next = rng(seed);
  const pairs = () => {
    const out: number[] = [];
    for (let r = 0; r < R; r++) {
      out.push(r, Math.floor(next() * E)); // never empty
      for (let e = 0; e < E; e++) if (next() < 0.25) out.push(r, e);
    }
    return out;
  };
  return CandidateSets.fromPairs({ numEntities: E, numRelations: R, head: pairs(), tail: pairs(), source: "sparse" });
}

const trainSets = CandidateSets.fromTriples(train, { numEntities: E, numRelations: R });

function evaluator(sets: CandidateSets, filtered: boolean): RankEvaluator {
  return new RankEvaluator({
    numEntities: E,
    numRelations: R,
    candidates: sets,
    ...(filtered ? { filterTriples: [train, valid, test] } : {}),
  });
}

/** The score path's evaluator: the model's score rows of each side through add. */
async function fromScores(model: EmbeddingModel, sets: CandidateSets, filtered: boolean, triples: Int32Array) {
  const ev = evaluator(sets, filtered);
  for (const side of ["head", "tail"] as const)
    await ev.add({ triples, side, scores: modelScoreMatrix(model, triples, side) });
  return ev;
}

function expectSame(a: RankEvaluator, b: RankEvaluator, what: string) {
  for (const side of ["head", "tail"] as const) {
    const x = a.taskColumns(side);
    const y = b.taskColumns(side);
    for (const key of [
      "optimistic",
      "pessimistic",
      "realistic",
      "numCandidates",
      "relation",
      "anchor",
      "truth",
    ] as const)
      expect(Array.from(x[key]), `${what}: ${side} ${key}`).toEqual(Array.from(y[key]));
    expect(Array.from(x.weight).every(Number.isNaN), what).toBe(true);
  }
  const ra = a.finalize();
  const rb = b.finalize();
  expect(ra.toJSON(), what).toEqual(rb.toJSON());
  // E and Var of each task's candidate count: the expectations and the z-scores (value - E) / sqrt(Var).
  for (const key of ["both.mrr", "head.mr", "tail.hits@10", "both.z_inverse_harmonic_mean_rank", "head.z_mr"]) {
    expect(ra.get(key), `${what}: ${key}`).toBe(rb.get(key));
    expect(Number.isFinite(ra.get(key)), `${what}: ${key}`).toBe(true);
  }
  for (const key of ["both.mrr", "head.mr", "tail.hits@10"]) expect(ra.expected(key), what).toBe(rb.expected(key));
}

describe(`typed candidates from embeddings on ${backendLabel}`, () => {
  const label = (c: EmbeddingCase) => `${c.name}${c.layout ? `/${c.layout}` : ""}${c.phases ? "/phases" : ""}`;

  for (const c of EMBEDDING_CASES) {
    it(`${label(c)}: addModel ranks as the constrained score rows, filtered and raw, train and sparse sets`, async () => {
      const model = gridModel(c, 6, 17, "float32");
      for (const [name, sets] of [
        ["train", trainSets],
        ["sparse", sparseSets(3)],
      ] as const) {
        for (const filtered of [true, false]) {
          const want = await fromScores(model, sets, filtered, test);
          const got = evaluator(sets, filtered);
          await got.addModel({ model, triples: test });
          expectSame(got, want, `${label(c)} ${name} ${filtered ? "filtered" : "raw"}`);
        }
      }
    });
  }

  it("float64 accumulation, addModelSync, one side at a time, and ties counted on both paths", async () => {
    let ties = 0;
    for (const c of [EMBEDDING_CASES[2]!, EMBEDDING_CASES[3]!, EMBEDDING_CASES[8]!]) {
      const model = gridModel(c, 4, 29, "float64");
      const sets = sparseSets(11);
      const want = await fromScores(model, sets, true, test);
      const got = evaluator(sets, true);
      got.addModelSync({ model, triples: test, side: "tail" });
      got.addModelSync({ model, triples: test, side: "head" });
      for (const side of ["head", "tail"] as const) {
        const cols = got.taskColumns(side);
        ties += cols.pessimistic.filter((p, i) => p > cols.optimistic[i]!).length;
      }
      expectSame(got, want, `${c.name} float64`);
    }
    // The grid makes ties: tasks whose pessimistic rank lies above their optimistic one.
    expect(ties).toBeGreaterThan(0);
  });

  it("under a job control (onProgress, signal) the async call records the same tasks and counts every row", async () => {
    const model = gridModel(EMBEDDING_CASES[3]!, 6, 23, "float32");
    const sets = sparseSets(5);
    const want = await fromScores(model, sets, true, test);
    const got = evaluator(sets, true);
    let done = 0;
    let total = 0;
    await got.addModel({
      model,
      triples: test,
      signal: new AbortController().signal,
      onProgress: (p) => {
        done = p.done;
        total = p.total;
      },
    });
    expect(total).toBeGreaterThan(0);
    expect(done).toBe(total);
    expectSame(got, want, "under a control");
  });

  it("a true answer its relation's set leaves out stays a candidate; the set's own size counts the others", async () => {
    // Relation 0 allows one entity per side, never the true answer of the rows ranked here.
    const rows = [] as number[];
    for (let i = 0; i < test.length; i += 3) if (test[i + 1] === 0) rows.push(test[i]!, 0, test[i + 2]!);
    const triples = Int32Array.from(rows);
    const taken = new Set(rows.filter((_, k) => k % 3 !== 1));
    const outside = Array.from({ length: E }, (_, e) => e).find((e) => !taken.has(e))!;
    const head: number[] = [];
    const tail: number[] = [];
    for (let r = 0; r < R; r++) {
      head.push(r, r === 0 ? outside : 0);
      tail.push(r, r === 0 ? outside : 0);
    }
    const sets = CandidateSets.fromPairs({ numEntities: E, numRelations: R, head, tail });
    const model = gridModel(EMBEDDING_CASES[2]!, 6, 5, "float32");
    for (const filtered of [true, false]) {
      const want = await fromScores(model, sets, filtered, triples);
      const got = evaluator(sets, filtered);
      await got.addModel({ model, triples });
      const cols = got.taskColumns("tail");
      expect(Array.from(cols.numCandidates)).toEqual(new Array(triples.length / 3).fill(2));
      expectSame(got, want, `outside ${filtered}`);
    }
  });

  it("an empty set, negatives and a table read in chunks are refused, naming the argument and the fix", async () => {
    const model = gridModel(EMBEDDING_CASES[2]!, 4, 7, "float32");
    const sets = CandidateSets.fromPairs({ numEntities: E, numRelations: R, head: [0, 1], tail: [0, 1] });
    const ev = evaluator(sets, false);
    const one = Int32Array.from([0, 3, 1]);
    // The score path refuses the same batch with the same error.
    expectInputError(
      () => ev.addSync({ triples: one, side: "tail", scores: modelScoreMatrix(model, one, "tail") }),
      "candidates",
      /relation 3 .*allows no tail/,
    );
    expectInputError(
      () => ev.addModelSync({ model, triples: one, side: "tail" }),
      "candidates",
      /relation 3 .*allows no tail/,
    );
    await expect(ev.addModel({ model, triples: one })).rejects.toThrow(/relation 3 .*allows no head/);
    expectInputError(
      () => ev.addModelSync({ model, triples: test, side: "tail", negatives: new Int32Array(test.length / 3) }),
      "negatives",
      /candidate set of their own.*without candidates/,
    );
    expect(ev.taskCounts.head + ev.taskCounts.tail).toBe(0);
    // Sets over fewer relations than the model, in an evaluator that names no numRelations: a relation past the
    // sets is an id out of range, as for score rows.
    const few = CandidateSets.fromPairs({ numEntities: E, numRelations: 2, head: [0, 1, 1, 1], tail: [0, 1, 1, 1] });
    const loose = new RankEvaluator({ numEntities: E, candidates: few });
    const far = Int32Array.from([0, 5, 1]);
    expectInputError(() => loose.addModelSync({ model, triples: far, side: "tail" }), "triples", /relation/);
    expectInputError(
      () => loose.addSync({ triples: far, side: "tail", scores: modelScoreMatrix(model, far, "tail") }),
      "triples",
      /relation/,
    );
  });
});
