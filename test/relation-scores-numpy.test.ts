/**
 * Relation prediction from embeddings against an independent float64 NumPy reference on 500 FB15k-237 and WN18RR
 * test triples: the filtered relation ranks (RelationRanker over EmbeddingModel.scoreRelations) are identical and the
 * metrics agree to 1e-12 relative. Python processes on the external datasets: `npm run test:long` (both backends) and
 * `npm run test:matrix` (every SIMD level) run it, not `npm test`.
 */
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { expect, it } from "vitest";

import { RankEvaluator, RelationRanker } from "../src/index";
import { backendLabel } from "./helpers/backend";
import { loadShared, sharedDataset } from "./helpers/datasets";
import { type EmbeddingCase, randomValues } from "./helpers/embedding-reference";
import { describeWith, external, pythonWith } from "./helpers/external";
import { runProcess } from "./helpers/process";
import { build, label } from "./helpers/relation-model";
import { rng } from "./helpers/reference";
import { tempDir } from "./helpers/temp";

const python = pythonWith("numpy");
const numpy = external("Python with NumPy", python !== null, "install Debian's python3-numpy (or pip install numpy)");

// The NumPy reference, float64 throughout, from the formulas: every relation's score of each (h, t), then the
// filtered ranks by brute force (the other known relations of (h, t) left out) and the metrics as plain means.
const NUMPY_REFERENCE = `
import sys, json, numpy as np
d, name, E, R, W, RW, scale = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7])
ent = np.fromfile(d + "/ent.f64", dtype=np.float64).reshape(E, W)
rel = np.fromfile(d + "/rel.f64", dtype=np.float64).reshape(R, RW)
known = np.fromfile(d + "/known.i32", dtype=np.int32).reshape(-1, 3)
triples = np.fromfile(d + "/triples.i32", dtype=np.int32).reshape(-1, 3)
h, t = ent[triples[:, 0]], ent[triples[:, 2]]
if name == "distmult":
    scores = (h * t) @ rel.T
elif name == "transe-l1":
    scores = -np.abs(h[:, None, :] + rel[None, :, :] - t[:, None, :]).sum(-1)
elif name == "complex":  # interleaved (re, im) pairs: Re(sum_k h_k r_k conj(t_k))
    c = lambda x: x[..., 0::2] + 1j * x[..., 1::2]
    scores = np.real((c(h) * np.conj(c(t))) @ c(rel).T)
elif name == "rotate":  # halves, relation phases: -sum_k |h_k exp(i phase_k scale) - t_k|
    c = lambda x: x[..., : W // 2] + 1j * x[..., W // 2 :]
    r = np.exp(1j * rel * scale)
    scores = -np.abs(c(h)[:, None, :] * r[None, :, :] - c(t)[:, None, :]).sum(-1)
others = {}
for a, r, b in known.tolist():
    others.setdefault((a, b), set()).add(r)
opt, pess, cand = [], [], []
for i, (a, r, b) in enumerate(triples.tolist()):
    row = scores[i]
    mask = np.ones(R, bool)
    for o in others[(a, b)]:
        if o != r:
            mask[o] = False
    g = int(np.sum(row[mask] > row[r]))
    e = int(np.sum(row[mask] == row[r])) - 1
    opt.append(1 + g); pess.append(1 + g + e); cand.append(int(mask.sum()))
opt, pess = np.array(opt, np.float64), np.array(pess, np.float64)
real = (opt + pess) / 2
print(json.dumps({"optimistic": opt.tolist(), "pessimistic": pess.tolist(), "numCandidates": cand,
  "mrr": float(np.mean(1 / real)), "mr": float(np.mean(real)), "hits10": float(np.mean(real <= 10))}))
`;

const NUMPY_CASES: EmbeddingCase[] = [
  { name: "distmult" },
  { name: "complex", layout: "interleaved" },
  { name: "transe-l1" },
  { name: "rotate", layout: "halves", phases: true },
];

for (const name of ["fb15k-237", "wn18rr"]) {
  const data = python ? loadShared(name) : null;
  const ext = python ? sharedDataset(name) : numpy;
  describeWith(`scoreRelations on ${name} against NumPy on ${backendLabel}`, data, ext, (data) => {
    // float64 accumulation: the kernel and NumPy round differently only in the last bits, far below the gaps between
    // the scores of random embeddings, so the ranks are the same and must be identical.
    it.each(NUMPY_CASES.map((c) => [label(c, "float64"), c] as const))(
      "%s: filtered relation ranks equal the brute-force NumPy ranks, metrics to 1e-12",
      (_, c) => {
        const { train, valid, test } = data.splits;
        const R = data.relations.length;
        const E = data.entities.length;
        const pick = rng(name.length + 100);
        const rows = 500;
        const idx = Array.from({ length: rows }, () => Math.floor(pick() * (test.length / 3)));
        const triples = Int32Array.from(idx.flatMap((i) => [test[3 * i]!, test[3 * i + 1]!, test[3 * i + 2]!]));
        const model = build(c, E, R, 16, 1234, "float64");
        const scores = model.scoreRelations(triples);
        const all = new Int32Array(train.length + valid.length + test.length);
        all.set(train);
        all.set(valid, train.length);
        all.set(test, train.length + valid.length);
        const ranks = new RelationRanker({ numEntities: E, numRelations: R, filterTriples: [train, valid, test] }).rank(
          { triples, scores },
        );
        // The model's own tables, as NumPy reads them.
        const rotation = c.name === "rotate";
        const W = c.name === "complex" || rotation ? 32 : 16;
        const RW = rotation ? W / 2 : W;
        const dir = tempDir("kgrank-relation-scores-");
        writeFileSync(path.join(dir, "ent.f64"), Float64Array.from(randomValues(E * W, 1234, 0.5)));
        writeFileSync(path.join(dir, "rel.f64"), Float64Array.from(randomValues(R * RW, 1235, rotation ? 3 : 0.5)));
        writeFileSync(path.join(dir, "known.i32"), all);
        writeFileSync(path.join(dir, "triples.i32"), triples);
        const args = [c.name, E, R, W, RW, rotation ? 1.0471975511965976 : 1].map(String);
        const run = runProcess(python!, ["-c", NUMPY_REFERENCE, dir, ...args]);
        expect(run.status, run.stderr).toBe(0);
        const want = JSON.parse(run.stdout) as {
          optimistic: number[];
          pessimistic: number[];
          numCandidates: number[];
          mrr: number;
          mr: number;
          hits10: number;
        };
        expect(Array.from(ranks.optimistic)).toEqual(want.optimistic);
        expect(Array.from(ranks.pessimistic)).toEqual(want.pessimistic);
        expect(Array.from(ranks.numCandidates)).toEqual(want.numCandidates);
        // Random embeddings rank the true relation anywhere: the test must not pass on ranks that are all 1.
        expect(new Set(want.optimistic).size).toBeGreaterThan(10);
        const ev = new RankEvaluator({ numEntities: R, sides: "tail" });
        ev.addRanks({ side: "tail", ...ranks });
        const res = ev.finalize();
        const close = (a: number | undefined, b: number) =>
          expect(Math.abs(a! - b) / Math.abs(b)).toBeLessThanOrEqual(1e-12);
        close(res.get("tail.realistic.inverse_harmonic_mean_rank"), want.mrr);
        close(res.get("tail.realistic.arithmetic_mean_rank"), want.mr);
        close(res.get("tail.realistic.hits_at_10"), want.hits10);
      },
    );
  });
}
