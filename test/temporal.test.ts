/**
 * TemporalEvaluator's raw / static / time-aware filtered ranks on a seeded ICEWS14-shaped fixture, against a
 * brute-force count written here from the definitions: ranks exact, metrics to 1e-12.
 */
import { describe, expect, it } from "vitest";

import { compareRuns, EmbeddingModel, RankEvaluator, TemporalEvaluator } from "../src/index";
import { expectInputError } from "./helpers/errors";
import { backendLabel } from "./helpers/backend";
import { ICEWS14_SHAPE, seededTemporal } from "./helpers/temporal";

/** Brute-force filtered ranks: `known` maps a key to the answers it removes (null: raw). */
function referenceRanks(
  rows: Int32Array,
  side: "head" | "tail",
  scores: ArrayLike<number>,
  numEntities: number,
  key: ((q: Int32Array, i: number) => string) | null,
  known: Map<string, Set<number>>,
) {
  const n = rows.length / 4;
  const out = { optimistic: new Float64Array(n), pessimistic: new Float64Array(n), numCandidates: new Float64Array(n) };
  for (let i = 0; i < n; i++) {
    const truth = rows[4 * i + (side === "tail" ? 2 : 0)]!;
    const removed = key ? known.get(key(rows, i))! : new Set<number>();
    const s = scores[i * numEntities + truth]!;
    let above = 0;
    let ties = 0;
    let candidates = 1;
    for (let e = 0; e < numEntities; e++) {
      if (e === truth || removed.has(e)) continue;
      candidates++;
      const v = scores[i * numEntities + e]!;
      if (v > s) above++;
      else if (v === s) ties++;
    }
    out.optimistic[i] = 1 + above;
    out.pessimistic[i] = 1 + above + ties;
    out.numCandidates[i] = candidates;
  }
  return out;
}

describe(`TemporalEvaluator on an ICEWS14-shaped fixture on ${backendLabel}`, () => {
  const { numEntities, numRelations, numTimestamps } = ICEWS14_SHAPE;
  const data = seededTemporal(40_000, 2000, 14);
  const all = [data.train, data.valid, data.test];
  // Answers by (side, anchor, relation) at any time and at each time.
  const staticKnown = new Map<string, Set<number>>();
  const timeKnown = new Map<string, Set<number>>();
  const put = (m: Map<string, Set<number>>, k: string, v: number) => {
    let set = m.get(k);
    if (!set) m.set(k, (set = new Set()));
    set.add(v);
  };
  for (const q of all) {
    for (let i = 0; i < q.length; i += 4) {
      const [h, r, t, tau] = [q[i]!, q[i + 1]!, q[i + 2]!, q[i + 3]!];
      put(staticKnown, `tail ${h} ${r}`, t);
      put(staticKnown, `head ${t} ${r}`, h);
      put(timeKnown, `tail ${h} ${r} ${tau}`, t);
      put(timeKnown, `head ${t} ${r} ${tau}`, h);
    }
  }
  // Scores with many ties; known answers of (anchor, r) at any time get a bonus, so the filters matter.
  let seed = 27;
  const rnd = () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
  const scoreRows = (side: "head" | "tail", rows: Int32Array) => {
    const n = rows.length / 4;
    const scores = new Float32Array(n * numEntities);
    for (let i = 0; i < n; i++) {
      for (let e = 0; e < numEntities; e++) scores[i * numEntities + e] = Math.floor(rnd() * 48);
      const anchor = rows[4 * i + (side === "tail" ? 0 : 2)]!;
      for (const e of staticKnown.get(`${side} ${anchor} ${rows[4 * i + 1]!}`)!) scores[i * numEntities + e]! += 24;
    }
    return scores;
  };

  it("gives raw, static and time-aware ranks exactly, metrics to 1e-12", async () => {
    const ev = new TemporalEvaluator({ numEntities, numRelations, numTimestamps, filterQuadruples: all });
    const batch = 250;
    const expected = { raw: [] as number[][], static: [] as number[][], timeAware: [] as number[][] };
    for (const side of ["head", "tail"] as const) {
      const reference = {
        raw: { opt: [] as number[], pess: [] as number[], cand: [] as number[] },
        static: { opt: [] as number[], pess: [] as number[], cand: [] as number[] },
        timeAware: { opt: [] as number[], pess: [] as number[], cand: [] as number[] },
      };
      for (let start = 0; start < data.test.length / 4; start += batch) {
        const rows = data.test.subarray(4 * start, 4 * Math.min(start + batch, data.test.length / 4));
        const scores = scoreRows(side, rows);
        if (start === 0) await ev.add({ quadruples: rows, side, scores });
        else ev.addSync({ quadruples: rows, side, scores });
        const anchor = side === "tail" ? 0 : 2;
        const keys = {
          raw: null,
          static: (q: Int32Array, i: number) => `${side} ${q[4 * i + anchor]!} ${q[4 * i + 1]!}`,
          timeAware: (q: Int32Array, i: number) => `${side} ${q[4 * i + anchor]!} ${q[4 * i + 1]!} ${q[4 * i + 3]!}`,
        };
        for (const s of ["raw", "static", "timeAware"] as const) {
          const r = referenceRanks(
            rows,
            side,
            scores,
            numEntities,
            keys[s],
            s === "timeAware" ? timeKnown : staticKnown,
          );
          reference[s].opt.push(...r.optimistic);
          reference[s].pess.push(...r.pessimistic);
          reference[s].cand.push(...r.numCandidates);
        }
      }
      for (const s of ["raw", "static", "timeAware"] as const) {
        const got = ev.evaluators[s].taskColumns(side);
        expect([...got.optimistic]).toEqual(reference[s].opt);
        expect([...got.pessimistic]).toEqual(reference[s].pess);
        expect([...got.numCandidates]).toEqual(reference[s].cand);
        expected[s].push(reference[s].opt, reference[s].pess);
      }
    }
    const results = ev.finalize();
    for (const s of ["raw", "static", "timeAware"] as const) {
      const opt = [...expected[s][0]!, ...expected[s][2]!];
      const pess = [...expected[s][1]!, ...expected[s][3]!];
      const real = opt.map((o, i) => (o + pess[i]!) / 2);
      const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
      expect(results[s].get("both.optimistic.mrr")).toBeCloseTo(mean(opt.map((r) => 1 / r)), 12);
      expect(results[s].get("both.pessimistic.mrr")).toBeCloseTo(mean(pess.map((r) => 1 / r)), 12);
      expect(Math.abs(results[s].get("both.realistic.mr") / mean(real) - 1)).toBeLessThan(1e-12);
      expect(results[s].get("both.optimistic.hits@10")).toBeCloseTo(mean(opt.map((r) => (r <= 10 ? 1 : 0))), 12);
      expect(results[s].get("both.pessimistic.hits@1")).toBeCloseTo(mean(pess.map((r) => (r <= 1 ? 1 : 0))), 12);
    }
    // The fixture separates the settings: static removes more than time-aware, which removes more than raw.
    const mrr = (s: "raw" | "static" | "timeAware") => results[s].get("both.pessimistic.mrr");
    expect(mrr("raw")).toBeLessThan(mrr("timeAware"));
    expect(mrr("timeAware")).toBeLessThan(mrr("static"));
  });

  it("keeps the time-aware filter index within 12 bytes per fact", () => {
    const ev = new TemporalEvaluator({ numEntities, numRelations, numTimestamps, filterQuadruples: all });
    const facts = all.reduce((n, q) => n + q.length / 4, 0);
    type Index = { stats(): { keys: number; answers: number; bytes: number } };
    const index = (s: "static" | "timeAware") =>
      (ev.evaluators[s] as unknown as { filter: Record<"head" | "tail", Index> }).filter.tail.stats();
    expect(index("timeAware").bytes).toBeLessThanOrEqual(12 * facts);
    expect(index("timeAware").keys).toBeGreaterThan(index("static").keys);
  });

  it("ranks a static embedding model per timestamp in the three settings, as brute force on its exact scores", () => {
    // DistMult with small integer embeddings: every score is an exact integer, ties included, in any accumulation.
    const dim = 8;
    const ent = new Float32Array(numEntities * dim).map(() => Math.floor(rnd() * 5) - 2);
    const rel = new Float32Array(numRelations * dim).map(() => Math.floor(rnd() * 5) - 2);
    const model = new EmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: { data: ent, shape: [numEntities, dim] },
      relationEmbeddings: { data: rel, shape: [numRelations, dim] },
    });
    const ev = new TemporalEvaluator({ numEntities, numRelations, numTimestamps, filterQuadruples: all });
    const rows = data.test.subarray(0, 4 * 120);
    for (const side of ["head", "tail"] as const) {
      ev.addModelSync({ model, quadruples: rows, side });
      const n = rows.length / 4;
      const scores = new Float64Array(n * numEntities);
      for (let i = 0; i < n; i++) {
        const [h, r, t] = [rows[4 * i]!, rows[4 * i + 1]!, rows[4 * i + 2]!];
        for (let e = 0; e < numEntities; e++) {
          const [a, b] = side === "tail" ? [h, e] : [e, t];
          let v = 0;
          for (let k = 0; k < dim; k++) v += ent[a * dim + k]! * rel[r * dim + k]! * ent[b * dim + k]!;
          scores[i * numEntities + e] = v;
        }
      }
      const anchor = side === "tail" ? 0 : 2;
      const keys = {
        raw: null,
        static: (q: Int32Array, i: number) => `${side} ${q[4 * i + anchor]!} ${q[4 * i + 1]!}`,
        timeAware: (q: Int32Array, i: number) => `${side} ${q[4 * i + anchor]!} ${q[4 * i + 1]!} ${q[4 * i + 3]!}`,
      };
      for (const s of ["raw", "static", "timeAware"] as const) {
        const want = referenceRanks(
          rows,
          side,
          scores,
          numEntities,
          keys[s],
          s === "timeAware" ? timeKnown : staticKnown,
        );
        const got = ev.evaluators[s].taskColumns(side);
        expect([...got.optimistic]).toEqual([...want.optimistic]);
        expect([...got.pessimistic]).toEqual([...want.pessimistic]);
        expect([...got.numCandidates]).toEqual([...want.numCandidates]);
      }
    }
    expect(() => ev.addModelSync({ model, quadruples: rows, side: "both" as "head" })).toThrow(
      /^side: must be "head" or "tail"/,
    );
  });

  it("records each setting in its state: shards merge per setting, settings never mix", () => {
    const make = () => new TemporalEvaluator({ numEntities, numRelations, numTimestamps, filterQuadruples: all });
    const rows = data.test.subarray(0, 4 * 300);
    const scores = scoreRows("tail", rows);
    const whole = make();
    whole.addSync({ quadruples: rows, side: "tail", scores });
    const shards = [make(), make()];
    shards[0]!.addSync({
      quadruples: rows.subarray(0, 4 * 120),
      side: "tail",
      scores: scores.subarray(0, 120 * numEntities),
    });
    shards[1]!.addSync({
      quadruples: rows.subarray(4 * 120),
      side: "tail",
      scores: scores.subarray(120 * numEntities),
    });
    const states = shards.map((s) => s.serialize());
    const merged = TemporalEvaluator.merge(states);
    const want = whole.finalize();
    for (const setting of ["raw", "static", "timeAware"] as const) {
      const got = merged[setting].finalize();
      expect(got.toFlatObject()).toEqual(want[setting].toFlatObject());
      expect(got.info.temporal).toEqual({ setting, numTimestamps });
    }
    // A state under another setting's key, and states of two settings merged: refused, naming the shard.
    expectInputError(
      () => TemporalEvaluator.merge([states[0]!, { ...states[1]!, raw: states[1]!.static }]),
      "shards[1].raw",
      /holds the static setting's state/,
    );
    expectInputError(
      () => RankEvaluator.merge([states[0]!.raw, states[1]!.static]),
      "states[1]",
      /temporal setting static over 365 timestamps.*do not merge/,
    );
    // Raw and static rank the same tasks against other candidates: compareRuns refuses them.
    expectInputError(
      () => compareRuns([want.raw, want.static], { samples: 100 }),
      "runs",
      /raw temporal setting.*static temporal setting|static temporal setting.*raw temporal setting/,
    );
  });

  it("refuses quadruples outside the sizes and a composite relation id past 2^31", () => {
    expect(
      () =>
        new TemporalEvaluator({
          numEntities,
          numRelations,
          numTimestamps,
          filterQuadruples: new Int32Array([0, 0, 1, 365]),
        }),
    ).toThrow(/^filterQuadruples: row 0 has timestamp id 365, outside 0 \.\. 364/);
    expect(
      () =>
        new TemporalEvaluator({
          numEntities,
          numRelations: 1 << 16,
          numTimestamps: 1 << 15,
          filterQuadruples: new Int32Array(0),
        }),
    ).toThrow(/^numTimestamps: numRelations x numTimestamps = 2147483648 is past 2\^31 - 1/);
  });
});
