/**
 * A model's score matrix computed by the kernel's own code, for tests that rank it through the score path and
 * compare with ranking from the embeddings: score (i, e) is the true score the kernel computes for row i of
 * `triples` with entity e as its answer (score_one, which equals the kernel lanes' score bit for bit).
 */
import { expect } from "vitest";

import type { EmbeddingModel } from "../../src/index";
import { kernels } from "../../src/backend/backend";

export function modelScoreMatrix(
  model: EmbeddingModel,
  triples: Int32Array,
  side: "head" | "tail",
): Float32Array | Float64Array {
  const E = model.numEntities;
  const rows = triples.length / 3;
  const n = rows * E;
  const anchor = new Int32Array(n);
  const relation = new Int32Array(n);
  const truth = new Int32Array(n);
  for (let i = 0; i < rows; i++) {
    for (let e = 0; e < E; e++) {
      anchor[i * E + e] = triples[3 * i + (side === "tail" ? 0 : 2)]!;
      relation[i * E + e] = triples[3 * i + 1]!;
      truth[i * E + e] = e;
    }
  }
  const out = new Float64Array(5 * n + 2);
  kernels().rankEmbeddings(model.job(side, anchor, relation, truth, { candidates: Int32Array.of(0) }), out);
  expect(out[5 * n], "status of the scoring call").toBe(0);
  const scores = out.subarray(4 * n, 5 * n);
  return model.precision === "float64" ? Float64Array.from(scores) : Float32Array.from(scores);
}
