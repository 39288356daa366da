"""NumPy peer for the filtered-evaluation benchmark: the way PyKEEN's rank-based evaluator filters and ranks.

    python3 bench/numpy_evaluator.py POOL.npy TEST.npy FILTER.npy BATCH REPEATS

POOL is a (P, BATCH, N) float32 stack of score blocks that batches reuse round-robin, TEST the (n, 3) evaluated
triples, FILTER the (T, 3) known triples (train + valid + test). For each side and batch of BATCH test triples:
the scores are copied into a work buffer (a model would write fresh scores there), the true scores gathered, every
other known answer of the row set to NaN (PyKEEN's filtering), then (S > t).sum(1), (S >= t).sum(1) and the
non-NaN count per row. The one-off lookup structure (answers per (anchor, relation), as arrays) is built before
the clock starts and reported separately, like our filter index. The copy into the work buffer is timed on its
own and subtracted, so the peer is charged only for filtering and counting.

Prints JSON: {"times": [seconds per full pass over both sides], "copy": seconds, "build": seconds, "mrr": ...}
(the filtered realistic MRR over both sides, to check that the peer did the same work).
"""
import json
import sys
import time

import numpy as np


def build(filter_triples, side):
    anchor_col, answer_col = (0, 2) if side == "tail" else (2, 0)
    keys = filter_triples[:, anchor_col].astype(np.int64) * (1 << 20) + filter_triples[:, 1]
    order = np.argsort(keys, kind="stable")
    keys_sorted = keys[order]
    answers = filter_triples[order, answer_col]
    uniq, start = np.unique(keys_sorted, return_index=True)
    end = np.append(start[1:], len(keys_sorted))
    return {int(k): answers[s:e] for k, s, e in zip(uniq, start, end)}


def main():
    pool_file, test_file, filter_file, batch, repeats = sys.argv[1:6]
    batch, repeats = int(batch), int(repeats)
    pool = np.load(pool_file)
    test = np.load(test_file)
    known = np.load(filter_file)
    n = test.shape[0]
    num_entities = pool.shape[2]

    t0 = time.perf_counter()
    lookup = {side: build(known, side) for side in ("head", "tail")}
    build_s = time.perf_counter() - t0

    work = np.empty((batch, num_entities), dtype=np.float32)
    batches = []
    for side in ("head", "tail"):
        for b, s in enumerate(range(0, n, batch)):
            batches.append((side, s, min(n, s + batch), b % pool.shape[0]))

    def copy_only():
        for side, s, e, p in batches:
            np.copyto(work[: e - s], pool[p, : e - s])

    def full():
        checksum = 0.0
        for side, s, e, p in batches:
            rows = e - s
            S = work[:rows]
            np.copyto(S, pool[p, :rows])
            tri = test[s:e]
            anchor_col, answer_col = (0, 2) if side == "tail" else (2, 0)
            truth = tri[:, answer_col]
            true_scores = S[np.arange(rows), truth].copy()
            table = lookup[side]
            keys = tri[:, anchor_col].astype(np.int64) * (1 << 20) + tri[:, 1]
            parts = [table[int(k)] for k in keys]
            row_idx = np.repeat(np.arange(rows), [len(x) for x in parts])
            col_idx = np.concatenate(parts)
            S[row_idx, col_idx] = np.nan
            S[np.arange(rows), truth] = true_scores
            t = true_scores[:, None]
            greater = (S > t).sum(axis=1)
            greater_equal = (S >= t).sum(axis=1)
            candidates = (~np.isnan(S)).sum(axis=1)
            realistic = 0.5 * (1 + greater + greater_equal)
            checksum += float((1.0 / realistic).sum())
        return checksum / (2 * n)

    copy_times, times = [], []
    checksum = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        copy_only()
        copy_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        checksum = full()
        times.append(time.perf_counter() - t0)
    copy_s = float(np.median(copy_times))
    print(json.dumps({
        "times": [t - copy_s for t in times], "rawTimes": times, "copy": copy_s, "build": build_s,
        "mrr": checksum, "numpy": np.__version__,
    }))


if __name__ == "__main__":
    main()
