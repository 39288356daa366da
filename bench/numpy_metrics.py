"""NumPy peer for the metric benchmarks: the way PyKEEN's ranking module computes the same numbers, on the same data.

    python3 bench/numpy_metrics.py NUM_CANDIDATES.npy RANKS.npy ESTIMATE_CANDIDATES.npy REPEATS

- closed: E and Var of MR, MRR and Hits@10 over the candidate counts, as PyKEEN does (harmonic numbers from a
  cumulative sum over 1..max N, then indexed per task). GMR is left out: PyKEEN's expectation of GMR sums
  log(j) over 1..N_i for every task, O(sum N_i) (1.5e12 terms at n = 1.2 M, N_i <= 2.5 M), which does not finish.
  The peer therefore does *less* work than our "closed" case, so its ratio understates our advantage.
- values: every base metric over the ranks (mean, geometric and harmonic means, median, hits@10, std, var, MAD,
  count and the inverses), one NumPy reduction each.
- estimate: Monte-Carlo E and Var of the harmonic mean rank, 1000 samples of uniform ranks over the candidates.

Prints JSON: {"closed": [seconds...], "values": [...], "estimate": [...], "numpy": version}.
"""
import json
import sys
import time

import numpy as np


def closed(n):
    max_n = int(n.max())
    inv = 1.0 / np.arange(1, max_n + 1, dtype=np.float64)
    h1 = np.concatenate(([0.0], np.cumsum(inv)))
    h2 = np.concatenate(([0.0], np.cumsum(inv * inv)))
    idx = n.astype(np.int64)
    m = len(n)
    out = {}
    out["mr"] = (np.mean((n + 1) / 2), np.sum((n * n - 1) / 12) / m**2)
    e_rr = h1[idx] / n
    out["mrr"] = (np.mean(e_rr), np.sum(h2[idx] / n - e_rr * e_rr) / m**2)
    p = np.minimum(10, n) / n
    out["hits10"] = (np.mean(p), np.sum(p * (1 - p)) / m**2)
    return out


def values(r):
    lr = np.log(r)
    med = np.median(r)
    return [
        r.mean(), np.exp(lr.mean()), 1 / np.mean(1 / r), med, np.mean(r <= 10), r.std(), r.var(),
        0.6744897501960817 * np.median(np.abs(r - med)), float(r.size), 1 / r.mean(), np.exp(-lr.mean()),
        np.mean(1 / r), 1 / med,
    ]


def estimate(n, samples=1000, seed=1):
    rng = np.random.default_rng(seed)
    vals = np.empty(samples)
    for i in range(samples):
        r = np.floor(rng.random(n.shape) * n) + 1
        vals[i] = 1 / np.mean(1 / r)
    return vals.mean(), vals.var(ddof=1)


def main():
    n_file, r_file, e_file, repeats = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    n = np.load(n_file).astype(np.float64)
    r = np.load(r_file).astype(np.float64)
    e = np.load(e_file).astype(np.float64)
    out = {"closed": [], "values": [], "estimate": [], "numpy": np.__version__}
    for _ in range(repeats):
        for name, fn in (("closed", lambda: closed(n)), ("values", lambda: values(r)), ("estimate", lambda: estimate(e))):
            t0 = time.perf_counter()
            fn()
            out[name].append(time.perf_counter() - t0)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
