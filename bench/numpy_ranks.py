"""NumPy peer for the rank benchmarks: the way PyKEEN and OGB compute ranks from scores, on the same data.

    python3 bench/numpy_ranks.py dense SCORES.npy TRUE_IDX.npy REPEATS
    python3 bench/numpy_ranks.py sampled POS.npy NEG.npy REPEATS

Prints JSON: {"times": [seconds per repeat], "checksum": ...}. Dense: true scores gathered from the matrix, then
(S > t).sum(1), (S >= t).sum(1) and the non-NaN count per row. Sampled (OGB): (neg > pos).sum(1), (neg >= pos).sum(1).
"""
import json
import sys
import time

import numpy as np


def dense(scores, idx):
    t = scores[np.arange(scores.shape[0]), idx][:, None]
    greater = (scores > t).sum(axis=1)
    greater_equal = (scores >= t).sum(axis=1)
    candidates = (~np.isnan(scores)).sum(axis=1)
    optimistic = 1 + greater
    pessimistic = greater_equal
    return float((optimistic + pessimistic).sum() + candidates.sum())


def sampled(pos, neg):
    p = pos[:, None]
    rank = 0.5 * ((neg > p).sum(axis=1) + (neg >= p).sum(axis=1)) + 1
    return float(rank.sum())


def main():
    mode, a, b, repeats = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    x, y = np.load(a), np.load(b)
    fn = dense if mode == "dense" else sampled
    times = []
    checksum = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        checksum = fn(x, y)
        times.append(time.perf_counter() - t0)
    print(json.dumps({"times": times, "checksum": checksum, "numpy": np.__version__}))


if __name__ == "__main__":
    main()
