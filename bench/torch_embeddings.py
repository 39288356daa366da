"""PyTorch CPU peer of bench/embeddings.mjs: full filtered ranking of a DistMult model the way PyKEEN does it
(query . E^T by matmul for a batch of rows, the filtered known answers set to NaN, the true scores gathered, two
comparisons, sums). Reads the embeddings and triples the Node side wrote; prints JSON {seconds, mrr}. The filter's
index tensors are built before the clock starts (PyKEEN keeps them precomputed too); the timed part is the scoring
and counting. Run by bench/embeddings.mjs --torch with Debian's /usr/bin/python3 (python3-torch)."""
import json
import sys
import time

import numpy as np
import torch

def main():
    d = sys.argv[1]
    threads = int(sys.argv[2])
    torch.set_num_threads(threads)
    E = torch.from_numpy(np.load(f"{d}/entity.npy"))
    R = torch.from_numpy(np.load(f"{d}/relation.npy"))
    test = np.load(f"{d}/test.npy")
    known = np.load(f"{d}/known.npy")
    batch = 512
    # known answers per (side, anchor, relation)
    answers = {}
    for h, r, t in known:
        answers.setdefault((1, int(h), int(r)), []).append(int(t))
        answers.setdefault((0, int(t), int(r)), []).append(int(h))
    plans = []
    for side in (0, 1):  # 0 = head, 1 = tail
        for s in range(0, len(test), batch):
            rows = test[s:s + batch]
            anchor = rows[:, 2] if side == 0 else rows[:, 0]
            truth = rows[:, 0] if side == 0 else rows[:, 2]
            ri, ci = [], []
            for i, (a, r, t) in enumerate(zip(anchor, rows[:, 1], truth)):
                for x in answers[(side, int(a), int(r))]:
                    if x != t:
                        ri.append(i)
                        ci.append(x)
            plans.append((torch.from_numpy(anchor.astype(np.int64)), torch.from_numpy(rows[:, 1].astype(np.int64)),
                          torch.from_numpy(truth.astype(np.int64)), torch.tensor(ri, dtype=torch.long), torch.tensor(ci, dtype=torch.long)))
    recip = 0.0
    count = 0
    t0 = time.perf_counter()
    with torch.no_grad():
        for anchor, rel, truth, ri, ci in plans:
            q = E[anchor] * R[rel]
            scores = q @ E.T
            true = scores[torch.arange(len(truth)), truth].unsqueeze(1)
            scores[ri, ci] = float("nan")
            greater = (scores > true).sum(dim=1)
            equal = (scores == true).sum(dim=1)
            rank = greater + 0.5 * (equal + 1)
            recip += float((1.0 / rank).sum())
            count += len(truth)
    seconds = time.perf_counter() - t0
    print(json.dumps({"seconds": seconds, "mrr": recip / count}))

main()
