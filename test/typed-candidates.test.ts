/**
 * Typed candidates (RankEvaluatorOptions.candidates, CandidateSets) against references written here from the
 * definition: on Nations, brute force over every task (candidates = the relation's allowed set and the true answer,
 * less the other known answers when filtered, less NaN scores), the metrics through addRanks of those ranks, the
 * state and merge, and every refusal; on FB15k-237 and WN18RR, an independent float64 NumPy reference (ranks and
 * candidate counts exact, metrics to 1e-12 relative).
 */
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

import { expectError, expectInputError, thrownBy } from "./helpers/errors";
import { CandidateSets, KgrankStateError, RankEvaluator } from "../src/index";
import { backendLabel } from "./helpers/backend";
import { loadBundled, loadShared, sharedDataset } from "./helpers/datasets";
import { describeWith, external, pythonWith } from "./helpers/external";
import { runProcess } from "./helpers/process";
import { rng } from "./helpers/reference";
import { tempDir } from "./helpers/temp";

type Side = "head" | "tail";

/** The definition, task by task: allowed(r) on the side, plus the truth, less the other known answers, less NaN. */
function bruteForce(
  triples: Int32Array,
  scores: Float32Array | Float64Array,
  E: number,
  side: Side,
  allowed: (relation: number) => Set<number>,
  known: Set<string> | null,
) {
  const rows = triples.length / 3;
  const out = { optimistic: [] as number[], pessimistic: [] as number[], numCandidates: [] as number[] };
  for (let i = 0; i < rows; i++) {
    const [h, r, t] = [triples[3 * i]!, triples[3 * i + 1]!, triples[3 * i + 2]!];
    const own = side === "tail" ? t : h;
    const truthScore = scores[i * E + own]!;
    const set = allowed(r);
    let greater = 0;
    let equal = 0;
    let n = 1;
    for (let e = 0; e < E; e++) {
      if (e === own || !set.has(e)) continue;
      if (known?.has(side === "tail" ? `${h},${r},${e}` : `${e},${r},${t}`)) continue;
      const v = scores[i * E + e]!;
      if (Number.isNaN(v)) continue;
      n++;
      if (v > truthScore) greater++;
      else if (v === truthScore) equal++;
    }
    out.optimistic.push(1 + greater);
    out.pessimistic.push(1 + greater + equal);
    out.numCandidates.push(n);
  }
  return out;
}

describe(`typed candidates on ${backendLabel}`, () => {
  const nations = loadBundled("nations");
  const E = nations.entities.length;
  const R = nations.relations.length;
  const { train, valid, test } = nations.splits;
  const known = new Set<string>();
  for (const split of [train, valid, test])
    for (let i = 0; i < split.length; i += 3) known.add(`${split[i]},${split[i + 1]},${split[i + 2]}`);
  const sets = CandidateSets.fromTriples(train, { numEntities: E, numRelations: R });
  const seen = (side: Side) => (relation: number) => {
    const out = new Set<number>();
    for (let i = 0; i < train.length; i += 3)
      if (train[i + 1] === relation) out.add(train[i + (side === "head" ? 0 : 2)]!);
    return out;
  };

  function randomScores(rows: number, seed: number, wide = false): Float32Array | Float64Array {
    const next = rng(seed);
    const s = wide ? new Float64Array(rows * E) : new Float32Array(rows * E);
    // Eight levels: many ties; 3 % NaN, never on the true answer (fixed by the caller).
    for (let k = 0; k < s.length; k++) s[k] = next() < 0.03 ? NaN : Math.floor(next() * 8) / 8;
    return s;
  }

  function scoresFor(side: Side, seed: number, wide = false) {
    const rows = test.length / 3;
    const scores = randomScores(rows, seed, wide);
    for (let i = 0; i < rows; i++) {
      const own = test[3 * i + (side === "tail" ? 2 : 0)]!;
      if (Number.isNaN(scores[i * E + own])) scores[i * E + own] = 0.5;
    }
    return scores;
  }

  it("builds each relation's sets from the training triples: ascending, unique, 4 bytes a pair", () => {
    for (const side of ["head", "tail"] as const) {
      for (let r = 0; r < R; r++) {
        const want = [...seen(side)(r)].sort((a, b) => a - b);
        expect(Array.from(sets.allowed(side, r)), `${side} ${r}`).toEqual(want);
        expect(sets.size(side, r)).toBe(want.length);
      }
    }
    expect(sets.bytes).toBe(4 * sets.pairs + 2 * 4 * (R + 1));
    expect(sets.source).toBe("train");
    expect(sets.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    // The same sets from pairs: the same fingerprint; one pair fewer: another.
    const pairs = (side: Side) => {
      const out: number[] = [];
      for (let i = 0; i < train.length; i += 3) out.push(train[i + 1]!, train[i + (side === "head" ? 0 : 2)]!);
      return out;
    };
    const again = CandidateSets.fromPairs({
      numEntities: E,
      numRelations: R,
      head: pairs("head"),
      tail: pairs("tail"),
    });
    expect(again.fingerprint).toBe(sets.fingerprint);
    const outside = [...Array(E).keys()].find((e) => !seen("tail")(0).has(e))!;
    const more = CandidateSets.fromPairs({
      numEntities: E,
      numRelations: R,
      head: pairs("head"),
      tail: pairs("tail").concat([0, outside]),
    });
    expect(more.size("tail", 0)).toBe(sets.size("tail", 0) + 1);
    expect(more.fingerprint).not.toBe(sets.fingerprint);
  });

  for (const filtered of [true, false]) {
    for (const wide of [false, true]) {
      it(`ranks every Nations test task like brute force (${filtered ? "filtered" : "raw"}, float${wide ? 64 : 32})`, () => {
        const ev = new RankEvaluator({
          numEntities: E,
          numRelations: R,
          candidates: sets,
          ...(filtered ? { filterTriples: [train, valid, test] } : {}),
        });
        const want: Record<Side, ReturnType<typeof bruteForce>> = {} as never;
        const pending: Promise<void>[] = [];
        for (const side of ["head", "tail"] as const) {
          const scores = scoresFor(side, side === "head" ? 11 : 12, wide);
          // Two batches: the second through the async path.
          const cut = 3 * 100;
          ev.addSync({ triples: test.subarray(0, cut), side, scores: scores.subarray(0, 100 * E) });
          want[side] = bruteForce(test, scores, E, side, seen(side), filtered ? known : null);
          pending.push(ev.add({ triples: test.subarray(cut), side, scores: scores.subarray(100 * E) }));
        }
        return (async () => {
          await Promise.all(pending);
          const res = await ev.finalizeAsync();
          const tasks = res.tasks();
          const reference = new RankEvaluator({ numEntities: E, numRelations: R });
          for (const side of ["head", "tail"] as const) {
            const at = tasks.side.map((s, i) => (s === side ? i : -1)).filter((i) => i >= 0);
            expect(at.map((i) => tasks.optimistic[i])).toEqual(want[side].optimistic);
            expect(at.map((i) => tasks.pessimistic[i])).toEqual(want[side].pessimistic);
            expect(at.map((i) => tasks.realistic[i])).toEqual(
              want[side].optimistic.map((o, k) => (o + want[side].pessimistic[k]!) / 2),
            );
            expect(at.map((i) => tasks.numCandidates[i])).toEqual(want[side].numCandidates);
            reference.addRanks({
              side,
              optimistic: want[side].optimistic,
              pessimistic: want[side].pessimistic,
              realistic: want[side].optimistic.map((o, k) => (o + want[side].pessimistic[k]!) / 2),
              numCandidates: want[side].numCandidates,
              triples: test,
            });
          }
          // The sets cut the candidates: far fewer than the 14 entities on average.
          const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
          expect(mean(want.tail.numCandidates)).toBeLessThan(E - 1);
          // Every metric (expectations, adjusted and z-scored ones included) equals the brute-force ranks' metrics.
          const ours = res.toFlatObject();
          const theirs = reference.finalize().toFlatObject();
          expect(Object.keys(ours).sort()).toEqual(Object.keys(theirs).sort());
          for (const k of Object.keys(theirs)) {
            if (Number.isNaN(theirs[k])) expect(ours[k], k).toBeNaN();
            else expect(ours[k], k).toBeCloseTo(theirs[k]!, 12);
          }
        })();
      });
    }
  }

  it("keeps the true answer a candidate when its relation's set leaves it out", () => {
    // Relation 0 allows tails {1, 2} only; the task (0, 0, 3) still ranks 3 among {1, 2, 3}.
    const c = CandidateSets.fromPairs({ numEntities: 5, numRelations: 1, head: [0, 0], tail: [0, 1, 0, 2] });
    const ev = new RankEvaluator({ numEntities: 5, candidates: c, sides: "tail" });
    ev.addSync({ triples: Int32Array.from([0, 0, 3]), side: "tail", scores: Float32Array.from([9, 0.5, 0.2, 0.3, 9]) });
    const t = ev.finalize().tasks();
    expect([t.optimistic[0], t.pessimistic[0], t.numCandidates[0]]).toEqual([2, 2, 3]);
  });

  it("records the sets in the state: round trip, merge of shards, and no merge across protocols", () => {
    const make = (withSets: boolean) =>
      new RankEvaluator({
        numEntities: E,
        numRelations: R,
        filterTriples: [train, valid, test],
        ...(withSets ? { candidates: sets } : {}),
      });
    const scores = scoresFor("tail", 5);
    const rows = test.length / 3;
    const whole = make(true);
    whole.addSync({ triples: test, side: "tail", scores });
    const half = Math.floor(rows / 2);
    const a = make(true);
    a.addSync({ triples: test.subarray(0, 3 * half), side: "tail", scores: scores.subarray(0, half * E) });
    const b = make(true);
    b.addSync({ triples: test.subarray(3 * half), side: "tail", scores: scores.subarray(half * E) });
    const merged = RankEvaluator.merge([a.serialize(), b.serialize()]);
    expect(merged.finalize().toFlatObject()).toEqual(whole.finalize().toFlatObject());
    const restored = RankEvaluator.deserialize(merged.serialize());
    expect(restored.finalize().info).toBeDefined();
    const plain = make(false);
    plain.addSync({ triples: test, side: "tail", scores });
    expectInputError(() => RankEvaluator.merge([a.serialize(), plain.serialize()]), "states[1]", /candidates/);
    const other = CandidateSets.fromTriples([train, valid], { numEntities: E, numRelations: R });
    const c = new RankEvaluator({
      numEntities: E,
      numRelations: R,
      filterTriples: [train, valid, test],
      candidates: other,
    });
    c.addSync({ triples: test, side: "tail", scores });
    expectInputError(() => RankEvaluator.merge([a.serialize(), c.serialize()]), "states[1]", /fingerprint/);
  });

  it("refuses what it does not go with, naming the option and the fix", () => {
    const base = { numEntities: E, numRelations: R, candidates: sets };
    expectInputError(() => new RankEvaluator({ ...base, numEntities: E + 1 }), "candidates", /entities/);
    expectInputError(() => new RankEvaluator({ ...base, numRelations: R + 1 }), "candidates", /relations/);
    expectInputError(
      () => new RankEvaluator({ ...base, sides: ["head", "tail", "relation"] }),
      "candidates",
      /relation/,
    );
    expectInputError(() => new RankEvaluator({ ...base, restrictEntities: [0, 1] }), "candidates", /restrict/);
    expectInputError(() => new RankEvaluator({ ...base, entityShard: { index: 0, count: 2 } }), "candidates", /shard/);
    expectInputError(
      () => new RankEvaluator({ ...base, candidates: { numEntities: E } as never }),
      "candidates",
      /CandidateSets/,
    );
    const ev = new RankEvaluator({ ...base, filterTriples: [train, valid, test] });
    const refused = (call: () => unknown) =>
      expectError(thrownBy(call), KgrankStateError, undefined, /typed candidates .*need whole score rows/);
    refused(() => ev.addRanks({ side: "tail", optimistic: [1], numCandidates: [2] }));
    refused(() => ev.addSampledSync({ side: "tail", positiveScores: [1], negativeScores: Float32Array.from([0]) }));
    refused(() => ev.chunked({ triples: test.subarray(0, 3), side: "tail", trueScores: [1] } as never));
    // A NaN true score and a triple outside the filter: the usual messages.
    const nan = new Float32Array(E).fill(0);
    nan[test[2]!] = NaN;
    expectInputError(() => ev.addSync({ triples: test.subarray(0, 3), side: "tail", scores: nan }), "scores", /NaN/);
    const unknown = Int32Array.from([0, 0, 0]);
    expect(known.has("0,0,0")).toBe(false);
    expectInputError(
      () => ev.addSync({ triples: unknown, side: "tail", scores: new Float32Array(E) }),
      "triples",
      /filter/,
    );
    // A relation whose set is empty: a typed error naming the relation and the fix.
    const sparse = CandidateSets.fromPairs({ numEntities: E, numRelations: R, head: [0, 1], tail: [0, 1] });
    const ev2 = new RankEvaluator({ numEntities: E, numRelations: R, candidates: sparse });
    expectInputError(
      () => ev2.addSync({ triples: Int32Array.from([0, 3, 1]), side: "tail", scores: new Float32Array(E) }),
      "candidates",
      /relation 3 .*allows no tail/,
    );
    expectInputError(
      () => CandidateSets.fromPairs({ numEntities: E, numRelations: R, head: [0, E], tail: [] }),
      "head",
      /entity/,
    );
    expectInputError(
      () => CandidateSets.fromPairs({ numEntities: E, numRelations: R, head: [R, 0], tail: [] }),
      "head",
      /relation/,
    );
    expectInputError(
      () => CandidateSets.fromPairs({ numEntities: E, numRelations: R, head: [0], tail: [] }),
      "head",
      /pairs/,
    );
    expectInputError(
      () => CandidateSets.fromTriples(Int32Array.from([0, 0, E]), { numEntities: E }),
      "triples",
      /tail/,
    );
  });
});

const python = pythonWith("numpy");
const numpy = external("Python with NumPy", python !== null, "install Debian's python3-numpy (or pip install numpy)");

/**
 * The NumPy reference, from the definition alone and float64 throughout: relation r's allowed heads (tails) are the
 * heads (tails) of r's training triples, as an R x E mask per side; a task's candidates are the entities with a
 * non-NaN score, less the other known answers of its query, restricted to the mask, plus the true answer. Metrics
 * over the realistic ranks r_i with N_i candidates, n tasks, under the null model of Hoyt et al. (2022) in which r_i
 * is uniform on {1..N_i}, independently: E[MR] = mean (N_i + 1) / 2, AMRI = 1 - (MR - 1) / (E[MR] - 1),
 * E[1/r_i] = H_{N_i} / N_i, Var[1/r_i] = H2_{N_i} / N_i - (H_{N_i} / N_i)^2, Var[MRR] = sum Var[1/r_i] / n^2,
 * zMRR = (MRR - E[MRR]) / sqrt(Var[MRR]); H and H2 (sums of 1/k and 1/k^2) as compensated running sums.
 */
const TYPED_REFERENCE = `
import sys, json, numpy as np
d, E, R = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def triples(name):
    return np.fromfile(d + "/" + name + ".i32", dtype=np.int32).reshape(-1, 3)
train, known, tasks = triples("train"), triples("known"), triples("tasks")
column = {"head": 0, "tail": 2}
allowed = {}
for side, c in column.items():
    allowed[side] = np.zeros((R, E), dtype=bool)
    allowed[side][train[:, 1], train[:, c]] = True
answers = {"head": {}, "tail": {}}
for h, r, t in known.tolist():
    answers["tail"].setdefault((h, r), []).append(t)
    answers["head"].setdefault((r, t), []).append(h)
out = {}
for side in ("head", "tail"):
    scores = np.fromfile(d + "/" + side + ".f32", dtype=np.float32).reshape(-1, E)
    opt, pess, typed_n, all_n = [], [], [], []
    for i, (h, r, t) in enumerate(tasks.tolist()):
        own, query = (h, (r, t)) if side == "head" else (t, (h, r))
        row = scores[i].astype(np.float64)
        assert not np.isnan(row[own])
        candidate = ~np.isnan(row)
        candidate[answers[side][query]] = False
        candidate[own] = True
        typed = candidate & allowed[side][r]
        typed[own] = True
        greater = int(np.count_nonzero(row[typed] > row[own]))
        equal = int(np.count_nonzero(row[typed] == row[own])) - 1
        opt.append(1 + greater); pess.append(1 + greater + equal)
        typed_n.append(int(typed.sum())); all_n.append(int(candidate.sum()))
    out[side] = {"optimistic": opt, "pessimistic": pess, "numCandidates": typed_n, "unconstrained": all_n}
def harmonic(power, top):
    h, s, c = np.zeros(top + 1), 0.0, 0.0
    for k in range(1, top + 1):
        y = 1.0 / k**power - c
        t = s + y
        c = (t - s) - y
        s = t
        h[k] = s
    return h
top = max(max(out[s]["numCandidates"]) for s in out)
H1, H2 = harmonic(1, top), harmonic(2, top)
def metrics(opt, pess, n):
    opt, pess, n = np.array(opt, np.float64), np.array(pess, np.float64), np.array(n, np.int64)
    real, nf = (opt + pess) / 2, n.astype(np.float64)
    mr, expected_mr = real.mean(), ((nf + 1) / 2).mean()
    mrr, e_rr = (1 / real).mean(), H1[n] / nf
    var_mrr = (H2[n] / nf - e_rr**2).sum() / len(n) ** 2
    m = {"mrr": mrr, "mr": mr, "expected_mr": expected_mr, "amri": 1 - (mr - 1) / (expected_mr - 1),
         "expected_mrr": e_rr.mean(), "zmrr": (mrr - e_rr.mean()) / np.sqrt(var_mrr)}
    for k in (1, 3, 10):
        m["hits_at_%d" % k] = np.mean(real <= k)
    return {k: float(v) for k, v in m.items()}
both = {k: out["head"][k] + out["tail"][k] for k in ("optimistic", "pessimistic", "numCandidates")}
out["metrics"] = {s: metrics(x["optimistic"], x["pessimistic"], x["numCandidates"])
                  for s, x in (("head", out["head"]), ("tail", out["tail"]), ("both", both))}
print(json.dumps(out))
`;

interface NumpyTasks {
  optimistic: number[];
  pessimistic: number[];
  numCandidates: number[];
  /** The same tasks' candidate counts without the sets (filtered, less NaN). */
  unconstrained: number[];
}
type NumpyReference = Record<Side, NumpyTasks> & { metrics: Record<Side | "both", Record<string, number>> };

/**
 * A seeded model's scores, with ties in every row: 1 % NaN, 0.2 % at the top score 1, the rest on 16 levels in
 * [0, 1). The true answer scores 1 in a third of the tasks (tied there with the few top-scored candidates its set
 * keeps, so Hits@1..10 count something on WN18RR's sets of thousands) and from the upper 8 levels otherwise: every
 * metric sits well away from its random-ranking expectation (AMRI and zMRR near 0 would leave a relative comparison
 * nothing to compare).
 */
function modelScores(triples: Int32Array, side: Side, E: number, next: () => number): Float32Array {
  const rows = triples.length / 3;
  const s = new Float32Array(rows * E);
  for (let k = 0; k < s.length; k++) {
    const u = next();
    s[k] = u < 0.01 ? NaN : u < 0.012 ? 1 : Math.floor(((u - 0.012) / 0.988) * 16) / 16;
  }
  for (let i = 0; i < rows; i++) {
    const own = i * E + triples[3 * i + (side === "tail" ? 2 : 0)]!;
    s[own] = next() < 1 / 3 ? 1 : (8 + Math.floor(next() * 8)) / 16;
  }
  return s;
}

/** The tasks of one side in the order added, as plain arrays. */
function sideTasks(tasks: ReturnType<ReturnType<RankEvaluator["finalize"]>["tasks"]>, side: Side) {
  const at = tasks.side.map((s, i) => (s === side ? i : -1)).filter((i) => i >= 0);
  return {
    optimistic: at.map((i) => tasks.optimistic[i]!),
    pessimistic: at.map((i) => tasks.pessimistic[i]!),
    realistic: at.map((i) => tasks.realistic[i]!),
    numCandidates: at.map((i) => tasks.numCandidates[i]!),
  };
}

for (const name of ["fb15k-237", "wn18rr"]) {
  const data = python ? loadShared(name) : null;
  const ext = python ? sharedDataset(name) : numpy;
  describeWith(`typed candidates on ${name} against NumPy on ${backendLabel}`, data, ext, (data) => {
    const { train, valid, test } = data.splits;
    const E = data.entities.length;
    const R = data.relations.length;
    const dir = tempDir("typed-numpy");
    const sets = CandidateSets.fromTriples(train, { numEntities: E, numRelations: R });

    /** 500 distinct test triples and both sides' scores (seeded), and the NumPy reference's answer for them. */
    let prepared: { triples: Int32Array; scores: Record<Side, Float32Array>; want: NumpyReference } | null = null;
    function prepare() {
      if (prepared) return prepared;
      const next = rng(27 + name.length);
      const order = Array.from({ length: test.length / 3 }, (_, i) => i);
      const rows = 500;
      for (let i = 0; i < rows; i++) {
        const j = i + Math.floor(next() * (order.length - i));
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      const triples = Int32Array.from(
        order.slice(0, rows).flatMap((i) => [test[3 * i]!, test[3 * i + 1]!, test[3 * i + 2]!]),
      );
      const scores = { head: modelScores(triples, "head", E, next), tail: modelScores(triples, "tail", E, next) };
      const known = new Int32Array(train.length + valid.length + test.length);
      known.set(train);
      known.set(valid, train.length);
      known.set(test, train.length + valid.length);
      writeFileSync(path.join(dir, "train.i32"), train);
      writeFileSync(path.join(dir, "known.i32"), known);
      writeFileSync(path.join(dir, "tasks.i32"), triples);
      for (const side of ["head", "tail"] as const) writeFileSync(path.join(dir, `${side}.f32`), scores[side]);
      const run = runProcess(python!, ["-c", TYPED_REFERENCE, dir, String(E), String(R)]);
      expect(run.status, run.stderr).toBe(0);
      prepared = { triples, scores, want: JSON.parse(run.stdout) as NumpyReference };
      return prepared;
    }

    function evaluate(candidates: CandidateSets | null) {
      const { triples, scores } = prepare();
      const ev = new RankEvaluator({
        numEntities: E,
        numRelations: R,
        filterTriples: [train, valid, test],
        ...(candidates ? { candidates } : {}),
      });
      for (const side of ["head", "tail"] as const) ev.addSync({ triples, side, scores: scores[side] });
      return ev.finalize();
    }

    it("ranks, candidate counts and metrics agree with the float64 NumPy reference on both sides", () => {
      const { want } = prepare();
      const res = evaluate(sets);
      const tasks = res.tasks();
      for (const side of ["head", "tail"] as const) {
        const got = sideTasks(tasks, side);
        expect(got.optimistic, side).toEqual(want[side].optimistic);
        expect(got.pessimistic, side).toEqual(want[side].pessimistic);
        expect(got.realistic, side).toEqual(want[side].optimistic.map((o, i) => (o + want[side].pessimistic[i]!) / 2));
        expect(got.numCandidates, side).toEqual(want[side].numCandidates);
      }
      const close = (key: string, a: number | undefined, b: number) =>
        expect(Math.abs(a! - b), `${key}: ${a} vs ${b}`).toBeLessThanOrEqual(1e-12 * Math.abs(b));
      for (const side of ["head", "tail", "both"] as const) {
        const m = want.metrics[side];
        const at = (metric: string) => `${side}.realistic.${metric}`;
        close(at("mrr"), res.get(at("inverse_harmonic_mean_rank")), m.mrr!);
        for (const k of [1, 3, 10]) close(at(`hits@${k}`), res.get(at(`hits_at_${k}`)), m[`hits_at_${k}`]!);
        close(at("mr"), res.get(at("arithmetic_mean_rank")), m.mr!);
        close(`${side} E[MR]`, res.expected(`${side}.arithmetic_mean_rank`), m.expected_mr!);
        close(at("amri"), res.get(at("adjusted_arithmetic_mean_rank_index")), m.amri!);
        close(`${side} E[MRR]`, res.expected(`${side}.inverse_harmonic_mean_rank`), m.expected_mrr!);
        close(at("zmrr"), res.get(at("z_inverse_harmonic_mean_rank")), m.zmrr!);
      }
    });

    it("the sets cut the candidates of both sides, so ranking without them fails the comparison", () => {
      const { want } = prepare();
      const tasks = evaluate(null).tasks();
      for (const side of ["head", "tail"] as const) {
        const plain = sideTasks(tasks, side);
        // The reference's unconstrained counts are the library's without the sets: its filter and NaN are right.
        expect(plain.numCandidates, side).toEqual(want[side].unconstrained);
        const typed = want[side].numCandidates;
        expect(typed.filter((n, i) => n > plain.numCandidates[i]!).length, side).toBe(0);
        const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
        expect(sum(typed), side).toBeLessThan(0.9 * sum(plain.numCandidates));
        expect(plain.pessimistic, side).not.toEqual(want[side].pessimistic);
      }
    });
  });
}
