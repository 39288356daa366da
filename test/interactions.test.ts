/**
 * The interaction descriptors (src/scoring/interactions.ts): one record per interaction that the model, the memory
 * planners and the model-directory readers read instead of branching on names. Every descriptor is complete and
 * consistent (codes distinct and those of the core's enum, test/enums.test.ts; every saved name resolves to its
 * interaction for its writer), and a model takes exactly the relation widths its descriptor lists, complex rows only
 * where it says so, and its entity normalisation; the scores of every accepted shape come from the kernels, so this
 * runs on each backend.
 */
import { describe, expect, it } from "vitest";

import { EmbeddingModel } from "../src/index";
import {
  INTERACTION_CODES,
  INTERACTION_TABLE,
  INTERACTIONS,
  interactionOf,
  interactionsSavedAs,
} from "../src/scoring/interactions";
import { backendLabel } from "./helpers/backend";

const d = 4;
const entities = { data: Float32Array.from({ length: 3 * d }, (_, i) => ((i * 7) % 5) / 4 - 0.4), shape: [3, d] };
const relation = (cols: number) => ({
  data: Float32Array.from({ length: 2 * cols }, (_, i) => ((i * 3) % 7) / 5 - 0.5),
  shape: [2, cols],
});
const triples = Int32Array.of(0, 0, 1, 2, 1, 0, 1, 1, 2);

describe(`interaction descriptors on ${backendLabel}`, () => {
  it("are one per interaction, with distinct codes, exported as INTERACTION_CODES", () => {
    expect(Object.keys(INTERACTION_TABLE)).toEqual([...INTERACTIONS]);
    const codes = INTERACTIONS.map((i) => interactionOf(i).code);
    expect(new Set(codes).size).toBe(INTERACTIONS.length);
    expect(Object.values(INTERACTION_CODES)).toEqual(codes);
  });

  it("resolve every name a model directory's writer saves to the interaction saving it", () => {
    let names = 0;
    for (const name of INTERACTIONS) {
      for (const writer of ["ogb", "dglke"] as const) {
        for (const saved of interactionOf(name).savedAs[writer]) {
          expect(interactionsSavedAs(saved, writer), `${writer} ${saved}`).toEqual([name]);
          names++;
        }
      }
    }
    expect(names).toBeGreaterThan(10);
    // Plain TransE is L1 in OGB's code, L2 in DGL-KE's, and ambiguous without the writer.
    expect(interactionsSavedAs("transe", null)).toEqual(["transe-l1", "transe-l2"]);
    expect(interactionsSavedAs("nosuchmodel", null)).toEqual([]);
  });

  it.each(INTERACTIONS.map((name) => [name] as const))(
    "%s: takes exactly its descriptor's relation widths, and scores with each",
    (name) => {
      const desc = interactionOf(name);
      const layout = desc.complex ? { complexLayout: "halves" as const } : {};
      const widths = desc.relationWidths(d);
      expect(widths.length).toBeGreaterThan(0);
      for (const w of widths) {
        const m = new EmbeddingModel({
          interaction: name,
          entityEmbeddings: entities,
          relationEmbeddings: relation(w),
          ...layout,
        });
        const s = m.scoreTriples(triples);
        expect(s.length).toBe(3);
        for (const x of s) expect(Number.isFinite(x)).toBe(true);
      }
      for (const w of [1, 3, d, 2 * d].filter((x) => !widths.includes(x))) {
        expect(
          () =>
            new EmbeddingModel({
              interaction: name,
              entityEmbeddings: entities,
              relationEmbeddings: relation(w),
              ...layout,
            }),
          `${name} width ${w}`,
        ).toThrow(desc.relationWidthText(d));
      }
      if (!desc.complex) {
        expect(
          () =>
            new EmbeddingModel({
              interaction: name,
              entityEmbeddings: entities,
              relationEmbeddings: relation(widths[0]!),
              complexLayout: "halves",
            }),
        ).toThrow(/applies to complex, rotate and rotate-l2 only/);
      }
    },
  );

  it("normalise entity rows where the descriptor says so (PairRE), and only there", () => {
    for (const name of INTERACTIONS) {
      const desc = interactionOf(name);
      const layout = desc.complex ? { complexLayout: "halves" as const } : {};
      const m = new EmbeddingModel({
        interaction: name,
        entityEmbeddings: entities,
        relationEmbeddings: relation(desc.relationWidths(d)[0]!),
        ...layout,
      });
      expect(m.rowScales(entities.data, 3) !== null, name).toBe(desc.normalizesEntities);
      expect(desc.memory.rowFactor, name).toBe(desc.normalizesEntities);
    }
    expect(INTERACTIONS.filter((i) => interactionOf(i).normalizesEntities)).toEqual(["pairre"]);
  });
});
