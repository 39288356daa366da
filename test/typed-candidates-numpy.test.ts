/**
 * Typed candidate sets (CandidateSets.fromTriples: each relation's heads and tails in training) on FB15k-237 and
 * WN18RR against an independent float64 NumPy reference written from the definition: 500 test triples with seeded
 * scores (ties and NaN included), every task's ranks and candidate count, and the metrics with their expectations
 * and z-scores. The external datasets and a Python process per case: `npm run test:long` (fallback) and `npm run
 * test:matrix` (every native SIMD level) run it, not `npm test`; test/typed-candidates.test.ts holds the rest.
 */
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { expect, it } from "vitest";

import { CandidateSets, RankEvaluator } from "../src/index";
import { backendLabel } from "./helpers/backend";
import { loadShared, sharedDataset } from "./helpers/datasets";
import { describeWith, external, pythonWith } from "./helpers/external";
import { runProcess } from "./helpers/process";
import { rng } from "./helpers/reference";
import { tempDir } from "./helpers/temp";

type Side = "head" | "tail";

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
