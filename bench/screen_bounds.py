"""How many (query, candidate) pairs each certified bound leaves undecided, on a trained model's own rows.

    /usr/bin/python3 bench/screen_bounds.py --model-dir M --dataset-dir DIR [--rows 4096] [--seed 1]
    /usr/bin/python3 bench/screen_bounds.py --random [--kind gaussian|wikikg90m] --entities 200000 --dim 64 [--rows 1500]

Emulates, in NumPy, the decisions of docs/screen.md for three screens and prints the share of pairs whose interval
holds the threshold (the pairs a kernel would rescore with the float32 lanes):

- int8, first level: per-vector scale s = max|v| / 127, a = round(v / s), bound
  ||q|| (||dt|| + gamma_d ||t||) + ||dq|| ||t^|| (steps 1-4);
- int8, both levels: the residuals quantised again at 1/256 of the scale (step 6);
- bf16: both vectors rounded to bfloat16 (round to nearest even, as `vcvtne2ps2bf16` does), the products exact in
  float32 and summed in float32 (`vdpbf16ps`), so the bound is the int8 one's with the bf16 residuals plus
  gamma_d ||q^|| ||t^|| for the float32 sum of the products;
- bf16 x 2: each vector split into two bf16 parts (hi + lo, about 16 significant bits), three bf16 dots
  (hi.hi + hi.lo + lo.hi), the bf16 analogue of the int8 second level.

Each decision carries the kernels' margins (2^-16 of |approx| + |thr|, and 1 + 2^-16 on the bound). The true
answer's own pair is left out (the kernels count it equal without rescoring). Scores are compared in float64, so a
pair within a rounding of its bound's edge may be counted on either side; the shares are not affected at the digits
printed.

Also printed, for the question whether a streamed run could read a quantised table and fetch only the float rows it
rescores: the share of a chunk's entities that some query of a pass of Q rows leaves undecided (Q = 150, 1,500,
15,000 where the rows allow), each entity's float row being needed once for all of them.

Model directories are those of bench/train_kge.py (OGB's layout; rows in kgrank's id order). DistMult and ComplEx.
"""
import argparse
import json
import os
import sys

import numpy as np

U = 2.0**-24


def gamma(n):
    return n * U / (1 - n * U)


def read_ids(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            i, label = line.rstrip("\n").split("\t")
            out[label] = int(i)
    return out


def load_model(model_dir, dataset_dir, rows, rng):
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    model = config["model"].lower()
    ent = np.load(os.path.join(model_dir, "entity_embedding.npy")).astype(np.float32)
    rel = np.load(os.path.join(model_dir, "relation_embedding.npy")).astype(np.float32)
    eid = read_ids(os.path.join(model_dir, "entities.tsv"))
    rid = read_ids(os.path.join(model_dir, "relations.tsv"))
    test = []
    name = next(n for n in ("test.tsv", "test.txt") if os.path.exists(os.path.join(dataset_dir, n)))
    with open(os.path.join(dataset_dir, name), encoding="utf-8") as f:
        for line in f:
            h, r, t = line.rstrip("\n").split("\t")
            if h in eid and t in eid and r in rid:
                test.append((eid[h], rid[r], eid[t]))
    test = np.array(test, dtype=np.int64)
    queries, truths = [], []
    for side in ("tail", "head"):
        h, r, t = ent[test[:, 0]], rel[test[:, 1]], ent[test[:, 2]]
        if model == "distmult":
            q = (h * r) if side == "tail" else (t * r)
        elif model == "complex":
            half = ent.shape[1] // 2
            hr, hi, rr, ri, tr, ti = h[:, :half], h[:, half:], r[:, :half], r[:, half:], t[:, :half], t[:, half:]
            if side == "tail":  # Re(<h, r, conj(t)>) = t_re . (h_re r_re - h_im r_im) + t_im . (h_re r_im + h_im r_re)
                q = np.concatenate([hr * rr - hi * ri, hr * ri + hi * rr], axis=1)
            else:  # as a function of h: h_re . (r_re t_re + r_im t_im) + h_im . (r_re t_im - r_im t_re)
                q = np.concatenate([rr * tr + ri * ti, rr * ti - ri * tr], axis=1)
        else:
            sys.exit(f"model {config['model']}: only DistMult and ComplEx are emulated here")
        queries.append(q.astype(np.float32))
        truths.append(test[:, 2] if side == "tail" else test[:, 0])
    q = np.concatenate(queries)
    truth = np.concatenate(truths)
    pick = rng.permutation(len(q))[:rows]
    return f"{config['model']} d = {ent.shape[1]}", ent, q[pick], truth[pick]


def random_set(entities, dim, rows, rng, kind):
    if kind == "wikikg90m":  # bench/wikikg90m.mjs's rows: random sign, |x| in [0.25, 1); relations in [-0.5, 0.5)
        ent = (rng.choice([-1.0, 1.0], (entities, dim)) * rng.uniform(0.25, 1, (entities, dim))).astype(np.float32)
        rel = rng.uniform(-0.5, 0.5, (rows, dim)).astype(np.float32)
        name = f"WikiKG90Mv2-shaped random d = {dim}"
    else:
        ent = rng.standard_normal((entities, dim)).astype(np.float32)
        rel = rng.standard_normal((rows, dim)).astype(np.float32)
        name = f"random Gaussian d = {dim}"
    anchor = rng.integers(0, entities, rows)
    return name, ent, (ent[anchor] * rel).astype(np.float32), rng.integers(0, entities, rows)


def int8_parts(v):
    """Per-row int8 quantisation of float32 rows, both levels, with the norms the bounds use (float64)."""
    m = np.abs(v).max(axis=1)
    s = (m / np.float32(127)).astype(np.float32)
    s[s == 0] = np.float32(1)  # an all-zero row: a = 0, every residual 0
    y = (v * (np.float32(1) / s)[:, None]).astype(np.float32)
    a = np.clip(np.rint(y), -127, 127)
    c = np.clip(np.rint(256 * (y.astype(np.float64) - a)), -127, 127)
    s64, v64 = s.astype(np.float64), v.astype(np.float64)
    hat = s64[:, None] * a
    T = a + c / 256
    return {
        "s": s64,
        "a": a,
        "c": c,
        "norm": np.linalg.norm(v64, axis=1),
        "hat": np.linalg.norm(hat, axis=1),
        "res": np.linalg.norm(v64 - hat, axis=1),
        "res2": np.linalg.norm(v64 - s64[:, None] * T, axis=1),
        "Tn": s64 * np.linalg.norm(T, axis=1),
        "cn": s64 * np.linalg.norm(c, axis=1) / 256,
    }


def bf16(v):
    """float32 -> bfloat16 (round to nearest, ties to even), returned as float32."""
    b = np.ascontiguousarray(v, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    return r.astype(np.uint32).view(np.float32)


def bf16_parts(v, split):
    hi = bf16(v)
    lo = bf16((v.astype(np.float64) - hi).astype(np.float32)) if split else np.zeros_like(hi)
    v64 = v.astype(np.float64)
    hat = hi.astype(np.float64) + lo
    return {
        "hi": hi.astype(np.float64),
        "lo": lo.astype(np.float64),
        "norm": np.linalg.norm(v64, axis=1),
        "hat": np.linalg.norm(hat, axis=1),
        "abs": np.abs(hat),
        "res": np.linalg.norm(v64 - hat, axis=1),
    }


def undecided(approx, thr, bound):
    m = bound * (1 + 2.0**-16) + (np.abs(approx) + np.abs(thr)) * 2.0**-16 + 2.0**-100
    return np.abs(approx - thr) <= m


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model-dir")
    p.add_argument("--dataset-dir")
    p.add_argument("--random", action="store_true")
    p.add_argument("--kind", choices=("gaussian", "wikikg90m"), default="gaussian")
    p.add_argument("--entities", type=int, default=200000)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--rows", type=int, default=4096)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--block", type=int, default=256)
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    if a.random:
        name, ent, q, truth = random_set(a.entities, a.dim, a.rows, rng, a.kind)
    else:
        if not a.model_dir or not a.dataset_dir:
            sys.exit("--model-dir and --dataset-dir (or --random)")
        name, ent, q, truth = load_model(a.model_dir, a.dataset_dir, a.rows, rng)
    n, d = ent.shape
    g = gamma(d)
    E8, Q8 = int8_parts(ent), int8_parts(q)
    EB, QB = bf16_parts(ent, False), bf16_parts(q, False)
    E2, Q2 = bf16_parts(ent, True), bf16_parts(q, True)
    ent64 = ent.astype(np.float64)
    counts = {k: 0 for k in ("int8 first level", "int8 both levels", "bf16", "bf16 x 2")}
    passes = [x for x in (150, 1500, 15000) if x <= len(q)]
    any_l1 = {x: np.zeros(n, dtype=bool) for x in passes}
    any_l2 = {x: np.zeros(n, dtype=bool) for x in passes}
    any_b = {x: np.zeros(n, dtype=bool) for x in passes}
    pairs = 0
    for lo in range(0, len(q), a.block):
        hi = min(len(q), lo + a.block)
        rows = np.arange(lo, hi)
        qq = q[rows].astype(np.float64)
        thr = np.einsum("ij,ij->i", qq, ent64[truth[rows]])[:, None]
        own = np.zeros((hi - lo, n), dtype=bool)
        own[np.arange(hi - lo), truth[rows]] = True
        # int8
        sq, st = Q8["s"][rows][:, None], E8["s"][None, :]
        I = Q8["a"][rows] @ E8["a"].T
        K = Q8["a"][rows] @ E8["c"].T + Q8["c"][rows] @ E8["a"].T
        e1 = Q8["norm"][rows][:, None] * (E8["res"] + g * E8["norm"])[None, :] + (
            Q8["res"][rows][:, None] * E8["hat"][None, :]
        )
        u1 = undecided(sq * st * I, thr, e1) & ~own
        e2 = (
            Q8["norm"][rows][:, None] * (E8["res2"] + g * E8["norm"])[None, :]
            + Q8["res2"][rows][:, None] * E8["Tn"][None, :]
            + (Q8["s"][rows] * np.linalg.norm(Q8["c"][rows], axis=1) / 256)[:, None] * E8["cn"][None, :]
        )
        u2 = u1 & undecided(sq * st * (I + K / 256), thr, e2)
        # bf16: one dot of the rounded vectors; bf16 x 2: three dots of the parts
        apb = QB["hi"][rows] @ EB["hi"].T
        eb = (
            QB["norm"][rows][:, None] * (EB["res"] + g * EB["norm"])[None, :]
            + QB["res"][rows][:, None] * EB["hat"][None, :]
            + g * QB["hat"][rows][:, None] * EB["hat"][None, :]
        )
        ub = undecided(apb, thr, eb) & ~own
        ap2 = Q2["hi"][rows] @ E2["hi"].T + Q2["hi"][rows] @ E2["lo"].T + Q2["lo"][rows] @ E2["hi"].T
        e22 = (
            Q2["norm"][rows][:, None] * (E2["res"] + g * E2["norm"])[None, :]
            + Q2["res"][rows][:, None] * E2["hat"][None, :]
            + 3 * g * Q2["hat"][rows][:, None] * E2["hat"][None, :]
            + (np.abs(Q2["lo"][rows]) @ np.abs(E2["lo"]).T)
        )
        u22 = undecided(ap2, thr, e22) & ~own
        counts["int8 first level"] += int(u1.sum())
        counts["int8 both levels"] += int(u2.sum())
        counts["bf16"] += int(ub.sum())
        counts["bf16 x 2"] += int(u22.sum())
        pairs += (hi - lo) * n - (hi - lo)
        for x in passes:
            if lo < x:
                take = slice(0, min(hi, x) - lo)
                any_l1[x] |= u1[take].any(axis=0)
                any_l2[x] |= u2[take].any(axis=0)
                any_b[x] |= ub[take].any(axis=0)
    print(f"{name}: {len(q):,} query rows x {n:,} entities ({pairs:,} pairs, the true answers' own left out)")
    for k, v in counts.items():
        print(f"  {k:18s} undecided {100 * v / pairs:8.4f} %")
    for x in passes:
        print(
            f"  a pass of {x:,} rows: entities some row leaves undecided: int8 first level "
            f"{100 * any_l1[x].mean():.2f} %, both levels {100 * any_l2[x].mean():.2f} %, bf16 {100 * any_b[x].mean():.2f} %"
        )


if __name__ == "__main__":
    main()
