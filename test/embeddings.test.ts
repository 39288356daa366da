/**
 * Ranking from embeddings (RankEvaluator.addModel, EmbeddingModel) on the backend of this project, against the
 * independent float64 reference in helpers/embedding-reference.ts: every interaction and complex layout, on Nations
 * (bundled) with random embeddings (FB15k-237: test/embeddings-fb15k.test.ts, in test:long and test:matrix). Ranks must be identical except where the true score
 * and a candidate's differ by less than the float32 bound (README: (dim + 4) x 2^-24 x sum |terms| per score);
 * metrics (MRR, MR, Hits@k) always within what those open tasks can move them (below 1e-6 for MRR but in one
 * FB15k-237 case), else equal. float64 accumulation must match exactly up to 1e-9 ties.
 */
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

import { EmbeddingModel, encodeNpy, KgrankInputError, loadEmbeddingModel, RankEvaluator } from "../src/index";
import { encodeNpz } from "../src/io/npz-write";
import { deflated, safetensorsFile, stored, zip } from "./helpers/archives";
import { backendLabel } from "./helpers/backend";
import { loadBundled } from "./helpers/datasets";
import { randomValues, type RefModel, refScore } from "./helpers/embedding-reference";
import { build, CASES, checkAgainstReference, evaluatorFor, known, label } from "./helpers/embedding-checks";
import { tempDir } from "./helpers/temp";

describe(`ranking from embeddings on Nations [${backendLabel}]`, () => {
  const ds = loadBundled("nations");
  for (const c of CASES) {
    it(`${label(c)}: filtered ranks, both sides, equal the float64 reference`, () => {
      const { model, ref } = build(c, ds, 8, 11);
      const ev = evaluatorFor(ds);
      ev.addModelSync({ model, triples: ds.splits.test });
      const { open, results } = checkAgainstReference(ev, ds, ref, ds.splits.test, false);
      expect(open).toBeLessThanOrEqual(2);
      expect(results.get("both.realistic.mrr")).toBeGreaterThan(0);
    });
  }

  it("float64 accumulation gives the reference's ranks (bound 2^-53)", () => {
    for (const c of [CASES[1]!, CASES[3]!, CASES[5]!, CASES[8]!, CASES[9]!]) {
      const { model, ref } = build(c, ds, 8, 5, "float64");
      const ev = evaluatorFor(ds);
      ev.addModelSync({ model, triples: ds.splits.test });
      expect(checkAgainstReference(ev, ds, ref, ds.splits.test, true).open).toBe(0);
    }
  });

  it("the async addModel records exactly what addModelSync records", async () => {
    const { model } = build(CASES[3]!, ds, 8, 3);
    const a = evaluatorFor(ds);
    const b = evaluatorFor(ds);
    a.addModelSync({ model, triples: ds.splits.test });
    await b.addModel({ model, triples: ds.splits.test });
    for (const side of ["head", "tail"] as const) {
      expect(Array.from(b.taskColumns(side).realistic)).toEqual(Array.from(a.taskColumns(side).realistic));
    }
    expect(b.finalize().toJSON()).toEqual(a.finalize().toJSON());
  });

  it("results do not depend on the thread count", () => {
    const { model } = build(CASES[0]!, ds, 8, 9);
    const cols = [1, 2, 3].map((threads) => {
      const ev = evaluatorFor(ds);
      ev.addModelSync({ model, triples: ds.splits.test, threads });
      return Array.from(ev.taskColumns("tail").pessimistic);
    });
    expect(cols[1]).toEqual(cols[0]);
    expect(cols[2]).toEqual(cols[0]);
  });

  it("the true triple's score equals model.scoreTriples and the column scoring it (rank counts it once)", () => {
    for (const c of [CASES[8]!, CASES[9]!, CASES[10]!]) {
      const { model, ref } = build(c, ds, 8, 21);
      const s = model.scoreTriples(ds.splits.test);
      for (let i = 0; i < ds.splits.test.length / 3; i++) {
        const want = refScore(ref, ds.splits.test[3 * i]!, ds.splits.test[3 * i + 1]!, ds.splits.test[3 * i + 2]!);
        expect(Math.abs(s[i]! - want), label(c)).toBeLessThan(1e-4 * (1 + Math.abs(want)));
      }
    }
  });

  it("rotate-l2 (PyKEEN's -||h r - t||_2) and rotate (OGB's sum of moduli) rank the same embeddings differently", () => {
    const c = CASES[9]!;
    const l2 = build(c, ds, 8, 17);
    const ogb = build({ ...c, name: "rotate" }, ds, 8, 17);
    const ranks = (model: EmbeddingModel) => {
      const ev = evaluatorFor(ds);
      ev.addModelSync({ model, triples: ds.splits.test });
      return Array.from(ev.taskColumns("tail").realistic);
    };
    expect(ranks(l2.model)).not.toEqual(ranks(ogb.model));
  });

  it("entity restriction ranks among the kept entities only", () => {
    const { model, ref } = build(CASES[2]!, ds, 8, 4);
    const keep = Array.from({ length: 10 }, (_, i) => i);
    const ev = evaluatorFor(ds, { restrictEntities: keep });
    ev.addModelSync({ model, triples: ds.splits.test });
    const cols = ev.taskColumns("tail");
    const t = ds.splits.test;
    const answers = known(ds, "tail");
    let k = 0;
    for (let i = 0; i < t.length / 3; i++) {
      const [h, r, tail] = [t[3 * i]!, t[3 * i + 1]!, t[3 * i + 2]!];
      if (h >= 10 || tail >= 10) continue;
      const ts = refScore(ref, h, r, tail);
      const filtered = answers.get(`${h},${r}`)!;
      const greater = keep.filter((e) => e !== tail && !filtered.has(e) && refScore(ref, h, r, e) > ts).length;
      expect(cols.optimistic[k]).toBe(1 + greater);
      k++;
    }
    expect(k).toBe(cols.optimistic.length);
    expect(k).toBeGreaterThan(0);
  });

  it("OGB protocol: sampled negatives give OGB's rank 0.5 (#neg > pos + #neg >= pos) + 1", () => {
    const { model, ref } = build(CASES[3]!, ds, 8, 13);
    const t = ds.splits.test;
    const rows = t.length / 3;
    const K = 7;
    const ids = randomValues(rows * K, 99);
    const negatives = Int32Array.from(ids, (v) => Math.floor(((v + 1) / 2) * ds.entities.length));
    const ev = new RankEvaluator({ numEntities: ds.entities.length, sides: "tail" });
    ev.addModelSync({ model, triples: t, side: "tail", negatives });
    const cols = ev.taskColumns("tail");
    let mrr = 0;
    for (let i = 0; i < rows; i++) {
      const pos = refScore(ref, t[3 * i]!, t[3 * i + 1]!, t[3 * i + 2]!);
      let gt = 0;
      let ge = 0;
      for (let j = 0; j < K; j++) {
        const s = refScore(ref, t[3 * i]!, t[3 * i + 1]!, negatives[i * K + j]!);
        gt += s > pos ? 1 : 0;
        ge += s >= pos ? 1 : 0;
      }
      const rank = 0.5 * (gt + ge) + 1;
      expect(cols.realistic[i]).toBe(rank);
      expect(cols.numCandidates[i]).toBe(K + 1);
      mrr += 1 / rank / rows;
    }
    expect(Math.abs(ev.finalize().get("tail.realistic.mrr") - mrr)).toBeLessThan(1e-12);
  });
});

describe(`a model from .npy / .npz / safetensors files, float32 and float64, on Nations [${backendLabel}]`, () => {
  const ds = loadBundled("nations");
  const dir = tempDir("emb-files");
  const n = ds.entities.length;
  const nr = ds.relations.length;
  const width = 16; // ComplEx, 8 complex dimensions, interleaved
  // float64 values that float32 cannot hold: the float32 files hold them rounded.
  const ent64 = Float64Array.from(randomValues(n * width, 31, 0.5), (v, i) => v + 1e-9 * Math.sin(i));
  const rel64 = Float64Array.from(randomValues(nr * width, 32, 0.5), (v, i) => v + 1e-9 * Math.cos(i));
  const ent32 = Float32Array.from(ent64);
  const rel32 = Float32Array.from(rel64);
  const put = (name: string, bytes: Uint8Array) => {
    writeFileSync(path.join(dir, name), bytes);
    return path.join(dir, name);
  };
  const files = (tag: string, e: Float32Array | Float64Array, r: Float32Array | Float64Array) => {
    const es = [n, width];
    const rs = [nr, width];
    switch (tag) {
      case "npy":
        return [
          put(`e-${tag}-${e.BYTES_PER_ELEMENT}.npy`, encodeNpy(e, es)),
          put(`r-${tag}-${e.BYTES_PER_ELEMENT}.npy`, encodeNpy(r, rs)),
        ];
      case "npz":
        return [
          put(`e-${tag}-${e.BYTES_PER_ELEMENT}.npz`, encodeNpz({ entity: { data: e, shape: es } })),
          put(`r-${tag}-${e.BYTES_PER_ELEMENT}.npz`, encodeNpz({ relation: { data: r, shape: rs } })),
        ];
      case "npz-deflated":
        return [
          put(`e-${tag}-${e.BYTES_PER_ELEMENT}.npz`, zip([deflated("entity.npy", encodeNpy(e, es))])),
          put(`r-${tag}-${e.BYTES_PER_ELEMENT}.npz`, zip([deflated("relation.npy", encodeNpy(r, rs))])),
        ];
      case "npz-stored":
        return [
          put(`e-${tag}-${e.BYTES_PER_ELEMENT}.npz`, zip([stored("entity.npy", encodeNpy(e, es))])),
          put(`r-${tag}-${e.BYTES_PER_ELEMENT}.npz`, zip([stored("relation.npy", encodeNpy(r, rs))])),
        ];
      default:
        return [
          put(`e-${e.BYTES_PER_ELEMENT}.safetensors`, safetensorsFile({ entity: { data: e, shape: es } })),
          put(`r-${e.BYTES_PER_ELEMENT}.safetensors`, safetensorsFile({ relation: { data: r, shape: rs } })),
        ];
    }
  };
  const FORMATS = ["npy", "npz", "npz-stored", "npz-deflated", "safetensors"];
  const run = (entityEmbeddings: string, relationEmbeddings: string, precision?: "float64") => {
    const model = loadEmbeddingModel({
      interaction: "complex",
      complexLayout: "interleaved",
      entityEmbeddings,
      relationEmbeddings,
      ...(precision ? { precision } : {}),
    });
    const ev = evaluatorFor(ds);
    ev.addModelSync({ model, triples: ds.splits.test });
    return { model, ev };
  };
  const ref: RefModel = {
    name: "complex",
    ent: Float64Array.from(ent32),
    rel: Float64Array.from(rel32),
    width,
    relWidth: width,
    interleaved: true,
    phaseScale: 1,
  };
  const ref64: RefModel = { ...ref, ent: ent64, rel: rel64 };

  it("every format and element type of the same values gives the same results, bit for bit", () => {
    const want = run(...(files("npy", ent32, rel32) as [string, string]))
      .ev.finalize()
      .toJSON();
    for (const f of FORMATS) {
      // float32 files; float64 files are rounded to float32 on load (the default precision), so give the same.
      for (const [e, r] of [
        [ent32, rel32],
        [ent64, rel64],
      ] as const) {
        const { model, ev } = run(...(files(f, e, r) as [string, string]));
        expect(model.precision).toBe("float32");
        expect(ev.finalize().toJSON(), `${f} ${e.constructor.name}`).toEqual(want);
      }
    }
  });

  it("precision float64: a float64 file is the reference's ranks (bound 2^-53); float32 within the float32 bound", () => {
    const want = run(...(files("npy", ent64, rel64) as [string, string]), "float64")
      .ev.finalize()
      .toJSON();
    for (const f of FORMATS) {
      const { model, ev } = run(...(files(f, ent64, rel64) as [string, string]), "float64");
      expect(model.precision).toBe("float64");
      expect(checkAgainstReference(ev, ds, ref64, ds.splits.test, true).open, f).toBe(0);
      const again = run(...(files(f, ent64, rel64) as [string, string]), "float64")
        .ev.finalize()
        .toJSON();
      expect(again, f).toEqual(want);
      // The float32 file of the rounded values, accumulated in float32: the README's bound against its own values.
      const f32 = run(...(files(f, ent32, rel32) as [string, string])).ev;
      expect(checkAgainstReference(f32, ds, ref, ds.splits.test, false).open, f).toBeLessThanOrEqual(2);
    }
  });

  it("macro weighting and the bootstrap: a model gives what its score matrices give", () => {
    const { model } = run(...(files("npy", ent32, rel32) as [string, string]));
    const options = { weighting: "macro" as const };
    const fromModel = evaluatorFor(ds, options);
    fromModel.addModelSync({ model, triples: ds.splits.test });
    const fromScores = evaluatorFor(ds, options);
    const t = ds.splits.test;
    const rows = t.length / 3;
    for (const side of ["head", "tail"] as const) {
      // Every (row, candidate) triple scored by model.scoreTriples: the code that scores the ranking's columns.
      const all = new Int32Array(rows * n * 3);
      for (let i = 0; i < rows; i++) {
        for (let e = 0; e < n; e++) {
          const o = 3 * (i * n + e);
          all[o] = side === "head" ? e : t[3 * i]!;
          all[o + 1] = t[3 * i + 1]!;
          all[o + 2] = side === "tail" ? e : t[3 * i + 2]!;
        }
      }
      fromScores.addSync({ triples: t, side, scores: Float32Array.from(model.scoreTriples(all)) });
    }
    const bootstrap = { bootstrap: { samples: 200, seed: 5 } };
    const a = fromModel.finalize(bootstrap);
    const b = fromScores.finalize(bootstrap);
    expect(a.intervals()).not.toBeNull();
    expect(a.intervals()).toEqual(b.intervals());
    expect(a.toJSON()).toEqual(b.toJSON());
  });
});

describe(`EmbeddingModel bad input [${backendLabel}]`, () => {
  const m = (over: Record<string, unknown>) => () =>
    new EmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: { data: new Float32Array(6), shape: [3, 2] },
      relationEmbeddings: { data: new Float32Array(2), shape: [1, 2] },
      ...over,
    } as never);
  it("rejects NaN, shape mismatches, wrong widths, a missing complex layout, unknown interactions", () => {
    expect(m({ entityEmbeddings: { data: Float32Array.of(0, 0, NaN, 0, 0, 0), shape: [3, 2] } })).toThrow(
      /row 1, column 0 is NaN/,
    );
    expect(m({ entityEmbeddings: { data: new Float32Array(5), shape: [3, 2] } })).toThrow(KgrankInputError);
    expect(m({ relationEmbeddings: { data: new Float32Array(3), shape: [1, 3] } })).toThrow(/relationEmbeddings/);
    expect(m({ interaction: "complex" })).toThrow(/complexLayout/);
    expect(m({ interaction: "transh" })).toThrow(/interaction/);
  });

  it("a model whose embedding buffer was transferred or shrunk since it was built: an error naming the embeddings", async () => {
    const triples = Int32Array.of(0, 0, 1, 2, 0, 1);
    const breakers: [string, "entityEmbeddings" | "relationEmbeddings", (data: Float32Array) => void][] = [
      [
        "entity buffer transferred",
        "entityEmbeddings",
        (d) => void structuredClone(d.buffer, { transfer: [d.buffer as ArrayBuffer] }),
      ],
      [
        "relation buffer transferred",
        "relationEmbeddings",
        (d) => void structuredClone(d.buffer, { transfer: [d.buffer as ArrayBuffer] }),
      ],
      [
        "entity buffer shrunk",
        "entityEmbeddings",
        (d) => (d.buffer as unknown as { resize(n: number): void }).resize(8),
      ],
    ];
    for (const [what, name, spoil] of breakers) {
      const calls: [string, (model: EmbeddingModel) => unknown][] = [
        ["addModelSync", (model) => new RankEvaluator({ numEntities: 3 }).addModelSync({ model, triples })],
        ["addModel", (model) => new RankEvaluator({ numEntities: 3 }).addModel({ model, triples })],
        ["scoreTriples", (model) => model.scoreTriples(triples)],
      ];
      for (const [call, run] of calls) {
        // A length-tracking view on a resizable buffer, so resizing shrinks the array the model holds.
        const buffer = new (ArrayBuffer as unknown as new (n: number, o: object) => ArrayBuffer)(24, {
          maxByteLength: 64,
        });
        const entity = new Float32Array(buffer).fill(0.5);
        const relation = new Float32Array(2).fill(0.25);
        const model = new EmbeddingModel({
          interaction: "distmult",
          entityEmbeddings: { data: entity, shape: [3, 2] },
          relationEmbeddings: { data: relation, shape: [1, 2] },
        });
        spoil(name === "entityEmbeddings" ? entity : relation);
        let caught: unknown;
        try {
          await run(model);
        } catch (e) {
          caught = e;
        }
        expect(caught, `${what}, ${call}`).toBeInstanceOf(KgrankInputError);
        expect((caught as KgrankInputError).argument, `${what}, ${call}`).toBe(name);
        expect((caught as Error).message).toMatch(/keep the buffer alive and at its size for the model's lifetime/);
      }
    }
  });
});

// DistMult on finite float32 embeddings whose scores overflow float32: entity 2's entries times relation 0's 2 pass
// 3.4e38, so its query row is +Infinity. With entity 0 (mixed signs) the score is Inf - Inf = NaN; with entity 3 (all
// positive) it is +Infinity, and the other candidates' NaN scores would leave the ranking unseen.
describe(`scores that overflow the accumulation are an error, never a rank or a 0 [${backendLabel}]`, () => {
  const ent = Float32Array.of(
    0.5,
    -0.5,
    0.25,
    -0.25,
    0.25,
    0.5,
    -0.5,
    0.25,
    3e38,
    3e38,
    3e38,
    3e38,
    0.25,
    0.25,
    0.25,
    0.25,
  );
  const rel = Float32Array.of(2, 2, 2, 2, 0.5, -0.5, 0.5, -0.5);
  const model = (precision: "float32" | "float64" = "float32") =>
    new EmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: { data: ent, shape: [4, 4] },
      relationEmbeddings: { data: rel, shape: [2, 4] },
      precision,
    });

  it("scoreTriples: a NaN score is refused, naming the row and float32 overflow (the later rows were returned as 0)", () => {
    const triples = Int32Array.of(0, 1, 1, 2, 0, 0, 0, 1, 2);
    expect(() => model().scoreTriples(triples)).toThrow(
      /^model: the distmult model's score of row 1 \(2, 0, 0\) is NaN: float32 overflow of its finite embeddings.*rescale the embeddings.*precision: "float64"/,
    );
    const wide = model("float64").scoreTriples(triples);
    const exact = (h: number, r: number, t: number) =>
      [0, 1, 2, 3].reduce((s, k) => s + ent[4 * h + k]! * rel[4 * r + k]! * ent[4 * t + k]!, 0);
    expect(Array.from(wide)).toEqual([exact(0, 1, 1), exact(2, 0, 0), exact(0, 1, 2)].map((v) => expect.closeTo(v, 6)));
    expect(wide[2]).not.toBe(0);
  });

  it("addModel / addModelSync: a NaN or infinite true score is an error naming float32 overflow; float64 ranks them", async () => {
    for (const [triple, score] of [
      [[2, 0, 0], "NaN"],
      [[2, 0, 3], "Infinity"],
    ] as const) {
      const want = new RegExp(
        `^model: the distmult model's score of the tail side's task 0 of the batch \\(triple \\(${triple.join(", ")}\\)\\), ` +
          `its true triple is ${score}: float32 overflow`,
      );
      const batch = { model: model(), triples: Int32Array.from(triple), side: "tail" } as const;
      expect(() => new RankEvaluator({ numEntities: 4, numRelations: 2 }).addModelSync(batch)).toThrow(want);
      await expect(new RankEvaluator({ numEntities: 4, numRelations: 2 }).addModel(batch)).rejects.toThrow(want);
      const ev = new RankEvaluator({ numEntities: 4, numRelations: 2 });
      ev.addModelSync({ ...batch, model: model("float64") });
      expect(ev.finalize().get("tail.realistic.count")).toBe(1);
    }
  });
});
