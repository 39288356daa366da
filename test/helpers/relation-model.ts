/**
 * A model of random embeddings for an interaction case, at float32 or float64, with E entities and R relations, and
 * its label: the relation-prediction tests (test/relation-scores.test.ts, test/relation-scores-numpy.test.ts).
 */
import { EmbeddingModel } from "../../src/index";
import { type EmbeddingCase, randomValues } from "./embedding-reference";

export function label(c: EmbeddingCase, precision: string): string {
  return `${c.name}${c.layout ? `/${c.layout}` : ""}${c.phases === undefined ? "" : c.phases ? "/phases" : "/complex-rel"} ${precision}`;
}

export function build(
  c: EmbeddingCase,
  E: number,
  R: number,
  dim: number,
  seed: number,
  precision: "float32" | "float64",
) {
  const rotation = c.name === "rotate" || c.name === "rotate-l2";
  const width = c.name === "complex" || rotation ? 2 * dim : dim;
  const relWidth = c.name === "pairre" ? 2 * width : rotation && c.phases ? width / 2 : width;
  const ent = randomValues(E * width, seed, 0.5);
  const rel = randomValues(R * relWidth, seed + 1, rotation && c.phases ? 3 : 0.5);
  return new EmbeddingModel({
    interaction: c.name,
    entityEmbeddings: { data: precision === "float64" ? Float64Array.from(ent) : ent, shape: [E, width] },
    relationEmbeddings: { data: precision === "float64" ? Float64Array.from(rel) : rel, shape: [R, relWidth] },
    ...(c.layout ? { complexLayout: c.layout } : {}),
    ...(c.phases ? { phaseScale: 1.0471975511965976 } : {}),
    precision,
  });
}
