/**
 * RelationRanker (relation prediction from score matrices) against references written here from the definition:
 * brute force on Nations (every relation a candidate, ties, NaN, filtered and raw), exact expectations by
 * enumeration with rationals, and an independent float64 NumPy reference on FB15k-237 and WN18RR (ranks exact,
 * metrics to 1e-12 relative).
 */
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

import { expectInputError } from "./helpers/errors";
import { FrequencyBaseline, RankEvaluator, RelationRanker } from "../src/index";
import { backendLabel } from "./helpers/backend";
import { loadBundled, loadShared, sharedDataset } from "./helpers/datasets";
import { describeWith, external, pythonWith } from "./helpers/external";
import { Fraction } from "./helpers/metrics-reference";
import { runProcess } from "./helpers/process";
import { rng } from "./helpers/reference";
import { tempDir } from "./helpers/temp";

/** The definition: candidates are the relations with a non-NaN score, less every other known (h, r', t). */
function bruteForce(triples: Int32Array, scores: Float32Array, R: number, known: Set<string> | null) {
  const rows = triples.length / 3;
  const out = { optimistic: [] as number[], pessimistic: [] as number[], numCandidates: [] as number[] };
  for (let i = 0; i < rows; i++) {
    const [h, r, t] = [triples[3 * i]!, triples[3 * i + 1]!, triples[3 * i + 2]!];
    const own = scores[i * R + r]!;
    let greater = 0;
    let equal = 0;
    let n = 0;
    for (let c = 0; c < R; c++) {
      const v = scores[i * R + c]!;
      if (Number.isNaN(v)) continue;
      if (c !== r && known?.has(`${h},${c},${t}`)) continue;
      n++;
      if (c === r) continue;
      if (v > own) greater++;
      else if (v === own) equal++;
    }
    out.optimistic.push(1 + greater);
    out.pessimistic.push(1 + greater + equal);
    out.numCandidates.push(n);
  }
  return out;
}

describe(`RelationRanker on ${backendLabel}`, () => {
  const nations = loadBundled("nations");
  const R = nations.relations.length;
  const E = nations.entities.length;
  const { train, valid, test } = nations.splits;
  const known = new Set<string>();
  for (const split of [train, valid, test])
    for (let i = 0; i < split.length; i += 3) known.add(`${split[i]},${split[i + 1]},${split[i + 2]}`);

  function randomScores(rows: number, seed: number): Float32Array {
    const next = rng(seed);
    const s = new Float32Array(rows * R);
    // Eight levels: many ties; 3 % NaN (non-candidates), never on the true relation (set below).
    for (let k = 0; k < s.length; k++) s[k] = next() < 0.03 ? NaN : Math.floor(next() * 8) / 8;
    return s;
  }

  it("ranks every Nations test triple's relation among all 55 like brute force, filtered and raw", () => {
    expect(R).toBe(55);
    const rows = test.length / 3;
    const scores = randomScores(rows, 55);
    for (let i = 0; i < rows; i++)
      if (Number.isNaN(scores[i * R + test[3 * i + 1]!])) scores[i * R + test[3 * i + 1]!] = 0.5;
    for (const filtered of [true, false]) {
      const ranker = new RelationRanker({
        numEntities: E,
        numRelations: R,
        ...(filtered ? { filterTriples: [train, valid, test] } : {}),
      });
      const got = ranker.rank({ triples: test, scores });
      const want = bruteForce(test, scores, R, filtered ? known : null);
      expect(Array.from(got.optimistic)).toEqual(want.optimistic);
      expect(Array.from(got.pessimistic)).toEqual(want.pessimistic);
      expect(Array.from(got.realistic)).toEqual(want.optimistic.map((o, i) => (o + want.pessimistic[i]!) / 2));
      expect(Array.from(got.numCandidates)).toEqual(want.numCandidates);
      // The filter removes something on Nations (pairs linked by several relations are common).
      if (filtered) expect(want.numCandidates).not.toEqual(bruteForce(test, scores, R, null).numCandidates);
    }
  });

  it("takes float64 scores and plain-array triples alike", () => {
    const rows = 20;
    const triples = Array.from(train.subarray(0, 3 * rows));
    const f32 = randomScores(rows, 7);
    for (let i = 0; i < rows; i++) f32[i * R + triples[3 * i + 1]!] = 0.25;
    const ranker = new RelationRanker({ numEntities: E, numRelations: R, filterTriples: train });
    const a = ranker.rank({ triples, scores: f32 });
    const b = ranker.rank({ triples: Int32Array.from(triples), scores: Float64Array.from(f32) });
    expect(a).toEqual(b);
  });

  it("gives the exact expectations of random ranking through addRanks (enumerated with rationals)", () => {
    // Four relations; (0, 1, 0) and (0, 2, 0) are known: ranking relation 1 of (0, ?, 0) leaves 3 candidates.
    const filter = Int32Array.from([0, 1, 0, 0, 2, 0, 1, 3, 1]);
    const ranker = new RelationRanker({ numEntities: 2, numRelations: 4, filterTriples: filter });
    const triples = Int32Array.from([0, 1, 0, 1, 3, 1]);
    const ranks = ranker.rank({ triples, scores: Float32Array.from([0.1, 0.5, 0.9, 0.2, 0.3, 0.3, 0.3, 0.3]) });
    expect(Array.from(ranks.numCandidates)).toEqual([3, 4]);
    expect(Array.from(ranks.realistic)).toEqual([1, 2.5]);
    const ev = new RankEvaluator({ numEntities: 4, sides: "tail" });
    ev.addRanks({ side: "tail", ...ranks });
    const res = ev.finalize();
    // Under uniformly random ranking a task with n candidates has each rank 1..n with probability 1/n.
    const meanOver = (f: (rank: number) => Fraction) => {
      let total = new Fraction(0n);
      for (const n of ranks.numCandidates) {
        let sum = new Fraction(0n);
        for (let k = 1; k <= n; k++) sum = sum.add(f(k));
        total = total.add(new Fraction(sum.num, sum.den * BigInt(n)));
      }
      return new Fraction(total.num, total.den * BigInt(ranks.numCandidates.length));
    };
    const asNumber = (x: Fraction) => Number(x.num) / Number(x.den);
    expect(res.expected("tail.arithmetic_mean_rank")).toBeCloseTo(asNumber(meanOver((k) => Fraction.of(k))), 14);
    expect(res.expected("tail.inverse_harmonic_mean_rank")).toBeCloseTo(
      asNumber(meanOver((k) => new Fraction(1n, BigInt(k)))),
      14,
    );
    expect(res.get("tail.realistic.arithmetic_mean_rank")).toBe(1.75);
  });

  it("FrequencyBaseline scores relations by counts of (h, r, ·) plus (·, r, t) in train", () => {
    const baseline = new FrequencyBaseline(train, E, R);
    const scores = baseline.scoreRelations(test);
    expect(scores.length).toBe((test.length / 3) * R);
    for (let i = 0; i < test.length / 3; i += 17) {
      const [h, t] = [test[3 * i]!, test[3 * i + 2]!];
      for (let r = 0; r < R; r++) {
        let count = 0;
        for (let k = 0; k < train.length; k += 3) {
          if (train[k + 1] !== r) continue;
          count += (train[k] === h ? 1 : 0) + (train[k + 2] === t ? 1 : 0);
        }
        expect(scores[i * R + r], `row ${i}, relation ${r}`).toBe(count);
      }
    }
    const ranks = new RelationRanker({ numEntities: E, numRelations: R, filterTriples: [train, valid, test] }).rank({
      triples: test,
      scores,
    });
    const want = bruteForce(test, scores, R, known);
    expect(Array.from(ranks.optimistic)).toEqual(want.optimistic);
    expect(Array.from(ranks.pessimistic)).toEqual(want.pessimistic);
    expect(() => baseline.scoreRelations([0, 0, E])).toThrow(/triples: row 0: tail/);
  });

  it("refuses bad input with typed errors naming the argument", () => {
    const ranker = new RelationRanker({ numEntities: E, numRelations: R, filterTriples: train });
    const one = train.subarray(0, 3);
    expectInputError(() => ranker.rank({ triples: one, scores: new Float32Array(E) }), "scores", /numRelations 55/);
    expectInputError(() => ranker.rank({ triples: [0, R, 0], scores: new Float32Array(R) }), "triples", /relation 55/);
    expectInputError(
      () => ranker.rank({ triples: [0, 0, 0], scores: new Float32Array(R) }),
      "triples",
      /not in filterTriples/,
    );
    expectInputError(() => ranker.rank({ triples: [], scores: new Float32Array(0) }), "triples", /empty/);
    expectInputError(() => new RelationRanker({ numEntities: E, numRelations: 0 }), "numRelations", /integer/);
    expectInputError(
      () => new RelationRanker({ numEntities: E, numRelations: R, filterTriples: [] }),
      "filterTriples",
      /empty/,
    );
    expectInputError(() => ranker.rank({ triples: one, scores: new Float32Array(R).fill(NaN) }), "scores", /NaN/);
  });
});

const python = pythonWith("numpy");
const numpy = external("Python with NumPy", python !== null, "install Debian's python3-numpy (or pip install numpy)");

// The NumPy reference: float64 throughout, the filter as a per-(h, t) set of relations, metrics as plain means.
const NUMPY_REFERENCE = `
import sys, json, numpy as np
d = sys.argv[1]
R = int(sys.argv[2])
known = np.fromfile(d + "/known.i32", dtype=np.int32).reshape(-1, 3)
triples = np.fromfile(d + "/triples.i32", dtype=np.int32).reshape(-1, 3)
scores = np.fromfile(d + "/scores.f32", dtype=np.float32).reshape(-1, R).astype(np.float64)
others = {}
for h, r, t in known.tolist():
    others.setdefault((h, t), set()).add(r)
opt, pess, cand = [], [], []
for i, (h, r, t) in enumerate(triples.tolist()):
    row = scores[i].copy()
    own = row[r]
    mask = ~np.isnan(row)
    for o in others[(h, t)]:
        if o != r:
            mask[o] = False
    g = int(np.sum(row[mask] > own))
    e = int(np.sum(row[mask] == own)) - 1
    opt.append(1 + g); pess.append(1 + g + e); cand.append(int(mask.sum()))
opt, pess = np.array(opt, np.float64), np.array(pess, np.float64)
real = (opt + pess) / 2
print(json.dumps({"optimistic": opt.tolist(), "pessimistic": pess.tolist(), "numCandidates": cand,
  "mrr": float(np.mean(1 / real)), "mr": float(np.mean(real)), "hits10": float(np.mean(real <= 10)),
  "amr_expected": float(np.mean((np.array(cand, np.float64) + 1) / 2))}))
`;

for (const name of ["fb15k-237", "wn18rr"]) {
  const data = python ? loadShared(name) : null;
  const ext = python ? sharedDataset(name) : numpy;
  describeWith(`RelationRanker on ${name} against NumPy on ${backendLabel}`, data, ext, (data) => {
    it("ranks, candidate counts and metrics agree with the float64 NumPy reference", () => {
      const { train, valid, test } = data.splits;
      const R = data.relations.length;
      const E = data.entities.length;
      const pick = rng(name.length);
      const rows = 500;
      const idx = Array.from({ length: rows }, () => Math.floor(pick() * (test.length / 3)));
      const triples = Int32Array.from(idx.flatMap((i) => [test[3 * i]!, test[3 * i + 1]!, test[3 * i + 2]!]));
      const scores = new Float32Array(rows * R);
      for (let k = 0; k < scores.length; k++) scores[k] = pick() < 0.01 ? NaN : Math.floor(pick() * 16) / 16;
      for (let i = 0; i < rows; i++) scores[i * R + triples[3 * i + 1]!] = Math.floor(pick() * 16) / 16;
      const all = new Int32Array(train.length + valid.length + test.length);
      all.set(train);
      all.set(valid, train.length);
      all.set(test, train.length + valid.length);
      const dir = tempDir("kgrank-relation-");
      writeFileSync(path.join(dir, "known.i32"), all);
      writeFileSync(path.join(dir, "triples.i32"), triples);
      writeFileSync(path.join(dir, "scores.f32"), scores);
      const run = runProcess(python!, ["-c", NUMPY_REFERENCE, dir, String(R)]);
      expect(run.status, run.stderr).toBe(0);
      const want = JSON.parse(run.stdout) as {
        optimistic: number[];
        pessimistic: number[];
        numCandidates: number[];
        mrr: number;
        mr: number;
        hits10: number;
        amr_expected: number;
      };
      const ranks = new RelationRanker({ numEntities: E, numRelations: R, filterTriples: [train, valid, test] }).rank({
        triples,
        scores,
      });
      expect(Array.from(ranks.optimistic)).toEqual(want.optimistic);
      expect(Array.from(ranks.pessimistic)).toEqual(want.pessimistic);
      expect(Array.from(ranks.numCandidates)).toEqual(want.numCandidates);
      const ev = new RankEvaluator({ numEntities: R, sides: "tail" });
      ev.addRanks({ side: "tail", ...ranks });
      const res = ev.finalize();
      const close = (a: number | undefined, b: number) =>
        expect(Math.abs(a! - b) / Math.abs(b)).toBeLessThanOrEqual(1e-12);
      close(res.get("tail.realistic.inverse_harmonic_mean_rank"), want.mrr);
      close(res.get("tail.realistic.arithmetic_mean_rank"), want.mr);
      close(res.get("tail.realistic.hits_at_10"), want.hits10);
      close(res.expected("tail.arithmetic_mean_rank"), want.amr_expected);
    });
  });
}
