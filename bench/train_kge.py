"""Seeded NumPy trainer of DistMult, ComplEx and TransE-L2, for measuring kgrank on a model trained here (issue 44).

    /usr/bin/python3 bench/train_kge.py --dataset-dir DIR --model distmult|complex|transe-l2 --dim D --epochs E --seed S \
        --out OUT [--batch 1000] [--optimizer adagrad|adam] [--lr LR] [--init 0.001] [--reg 0] [--threads T]

DIR holds train / valid / test as TSV (head<TAB>relation<TAB>tail, .tsv or .txt), as $KGRANK_DATASETS/NAME does;
only train is read. Ids are kgrank's (and PyKEEN's): the training triples' entity and relation labels sorted by
code point, so the embedding rows are in the order `kgrank evaluate` numbers the dataset.

Loss: KvsAll cross-entropy. Each query (h, r, ?) and (?, r, t) of the training triples is scored against every
entity, and the softmax over all of them is pulled towards the uniform distribution over the query's known training
answers. 1-N scoring gets a trained model in a few epochs where negative sampling needs many (every gradient step
sees every entity), and grouping the triples by query scores FB15k-237's 93 k tail and 56 k head queries an epoch
instead of 2 x 272 k triples. No reciprocal relations: kgrank ranks both sides with the one relation row, so the head
queries train that row too (DistMult's head score is the tail score's formula; ComplEx's is Re(<t, conj(r), conj(h)>),
the tail formula with the relation conjugated; TransE-L2's logit is minus the squared distance, -||q - e||^2 with
q = h + r for tails and q = t - r for heads, which is 2 q . e - ||e||^2 up to a constant per query: the same BLAS
products). The three B x N x D products a batch makes (scores, the query
gradient, the entity gradient) go through NumPy's BLAS, which is what uses several threads (OpenBLAS' pthread build;
--threads sets its thread count); the rest is elementwise.

Optimizer: Adagrad (default, dense over the entity table, whose every row gets a gradient from 1-N scoring) or Adam.
Optional N3 regularisation (Lacroix et al. 2018) of the rows a batch queries, weight --reg.

Deterministic for a seed: one NumPy Generator (PCG64) draws the initial values and each epoch's query order, every
reduction runs in a fixed order, and OpenBLAS splits a product between threads by output blocks, so a rerun with the
same arguments and thread count on the same machine writes the same bytes.

OUT is a model directory in the layout of OGB's KnowledgeGraphEmbedding code (run.py -save), which
`kgrank evaluate --model-dir OUT --dataset-dir DIR` reads as it is: entity_embedding.npy and relation_embedding.npy
(float32; ComplEx rows are real | imaginary halves, as torch.chunk splits them there), config.json (model, hidden_dim,
double_entity_embedding, double_relation_embedding, dataset, and this run's arguments), and the row labels
entities.tsv / relations.tsv ("id<TAB>label", as DGL-KE writes them; kgrank maps rows through them). Timings and
losses go to stderr, never into OUT, so two runs can be compared byte for byte.
"""
import argparse
import json
import os
import sys
import time

MODELS = {"distmult": "DistMult", "complex": "ComplEx", "transe-l2": "TransE_l2"}


def parse_args(argv):
    p = argparse.ArgumentParser(prog="train_kge.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset-dir", required=True, help="folder with train.tsv (or train.txt): head<TAB>relation<TAB>tail")
    p.add_argument("--model", required=True, choices=sorted(MODELS))
    p.add_argument("--dim", required=True, type=int, help="embedding dimension (ComplEx: complex numbers, 2 x dim floats)")
    p.add_argument("--epochs", required=True, type=int, help="passes over the training queries (0: the initial model)")
    p.add_argument("--seed", required=True, type=int)
    p.add_argument("--out", required=True, help="model directory to write (created; its files are replaced)")
    p.add_argument("--batch", type=int, default=1000, help="queries per step (default 1000)")
    p.add_argument("--optimizer", choices=["adagrad", "adam"], default="adagrad")
    p.add_argument("--lr", type=float, default=None, help="learning rate (default: adagrad 0.1, adam 0.003)")
    p.add_argument("--init", type=float, default=1e-3, help="standard deviation of the initial values (default 1e-3)")
    p.add_argument("--reg", type=float, default=0.0, help="N3 weight on the queried rows (default 0)")
    p.add_argument("--threads", type=int, default=None, help="BLAS threads (default: OpenBLAS' own, every core)")
    a = p.parse_args(argv)
    for name, value, low in (("--dim", a.dim, 1), ("--epochs", a.epochs, 0), ("--batch", a.batch, 1)):
        if value < low:
            p.error(f"{name} is {value}; it must be an integer of at least {low}")
    if a.seed < 0:
        p.error(f"--seed is {a.seed}; it must be a non-negative integer (NumPy's SeedSequence takes no negative seed)")
    if a.threads is not None and a.threads < 1:
        p.error(f"--threads is {a.threads}; it must be at least 1, or left out for every core")
    if a.lr is None:
        a.lr = 0.1 if a.optimizer == "adagrad" else 0.003
    for name, value in (("--lr", a.lr), ("--init", a.init)):
        if not (value > 0 and value < float("inf")):
            p.error(f"{name} is {value}; it must be a positive finite number")
    if not (a.reg >= 0 and a.reg < float("inf")):
        p.error(f"--reg is {a.reg}; it must be a finite number of at least 0")
    a.train_file = None
    for ext in ("tsv", "txt"):
        f = os.path.join(a.dataset_dir, f"train.{ext}")
        if os.path.isfile(f):
            a.train_file = f
            break
    if a.train_file is None:
        p.error(f"--dataset-dir {a.dataset_dir} has no train.tsv or train.txt: give a dataset's own folder "
                "(e.g. $KGRANK_DATASETS/fb15k-237)")
    return a, p


def read_triples(file, parser):
    heads, rels, tails = [], [], []
    with open(file, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n").rstrip("\r")
            if not line:
                continue
            parts = line.split("\t")
            if len(parts) != 3 or not all(parts):
                parser.error(f"--dataset-dir: {file} line {n} is not head<TAB>relation<TAB>tail: {line[:80]!r}")
            heads.append(parts[0])
            rels.append(parts[1])
            tails.append(parts[2])
    if not heads:
        parser.error(f"--dataset-dir: {file} holds no triples")
    return heads, rels, tails


def queries(np, h, r, t, num_relations):
    """KvsAll queries: (anchor, relation, side) with side 0 = tail query (h, r, ?), 1 = head query (?, r, t), sorted
    by key, and each one's training answers as CSR (offsets into answers)."""
    anchor = np.concatenate([h, t]).astype(np.int64)
    rel = np.concatenate([r, r]).astype(np.int64)
    side = np.concatenate([np.zeros(len(h), np.int64), np.ones(len(t), np.int64)])
    answer = np.concatenate([t, h]).astype(np.int64)
    key = (side * num_relations + rel) * (int(anchor.max()) + 1) + anchor
    order = np.lexsort((answer, key))
    key, answer = key[order], answer[order]
    first = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
    offsets = np.append(first, len(key)).astype(np.int64)
    return anchor[order][first], rel[order][first], side[order][first], answer, offsets


class Adagrad:
    def __init__(self, np, params, lr):
        self.np, self.lr = np, lr
        self.acc = [np.zeros_like(p) for p in params]

    def step(self, params, grads):
        np = self.np
        for p, g, acc in zip(params, grads, self.acc):
            acc += g * g
            p -= self.lr * g / (np.sqrt(acc) + np.float32(1e-10))


class Adam:
    def __init__(self, np, params, lr, beta1=0.9, beta2=0.999, eps=1e-8):
        self.np, self.lr, self.b1, self.b2, self.eps = np, lr, beta1, beta2, eps
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, params, grads):
        np = self.np
        self.t += 1
        scale = np.float32(self.lr * (1 - self.b2**self.t) ** 0.5 / (1 - self.b1**self.t))
        for p, g, m, v in zip(params, grads, self.m, self.v):
            m *= np.float32(self.b1)
            m += np.float32(1 - self.b1) * g
            v *= np.float32(self.b2)
            v += np.float32(1 - self.b2) * g * g
            p -= scale * m / (np.sqrt(v) + np.float32(self.eps))


def complex_product(np, a, s, half):
    """a * s for rows of complex numbers stored as real | imaginary halves."""
    ar, ai, sr, si = a[:, :half], a[:, half:], s[:, :half], s[:, half:]
    return np.concatenate([ar * sr - ai * si, ar * si + ai * sr], axis=1)


def complex_conj_product(np, g, a, half):
    """g * conj(a), rows as real | imaginary halves (the gradient of a product through its other factor)."""
    gr, gi, ar, ai = g[:, :half], g[:, half:], a[:, :half], a[:, half:]
    return np.concatenate([gr * ar + gi * ai, gi * ar - gr * ai], axis=1)


def write_file(path, write):
    tmp = path + ".tmp"
    write(tmp)
    os.replace(tmp, path)


def main(argv):
    args, parser = parse_args(argv)
    if args.threads is not None:
        # OpenBLAS reads its thread count when it loads: set before NumPy is imported.
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
            os.environ[var] = str(args.threads)
    import numpy as np

    t_start = time.perf_counter()
    heads, rels, tails = read_triples(args.train_file, parser)
    entities = sorted(set(heads) | set(tails))
    relations = sorted(set(rels))
    eid = {e: i for i, e in enumerate(entities)}
    rid = {r: i for i, r in enumerate(relations)}
    h = np.fromiter((eid[x] for x in heads), np.int64, len(heads))
    r = np.fromiter((rid[x] for x in rels), np.int64, len(rels))
    t = np.fromiter((eid[x] for x in tails), np.int64, len(tails))
    N, R = len(entities), len(relations)
    q_anchor, q_rel, q_side, answers, offsets = queries(np, h, r, t, R)
    nq = len(q_anchor)
    counts = np.diff(offsets)
    weights = (1.0 / counts).astype(np.float32)

    complex_model = args.model == "complex"
    half = args.dim
    width = 2 * args.dim if complex_model else args.dim
    rng = np.random.default_rng(args.seed)
    E = (rng.standard_normal((N, width), dtype=np.float32) * np.float32(args.init)).astype(np.float32)
    W = (rng.standard_normal((R, width), dtype=np.float32) * np.float32(args.init)).astype(np.float32)
    transe = args.model == "transe-l2"
    if not complex_model and not transe:
        # DistMult's relation rows start near 1, so the first products are the entities' own similarities, not 1e-6.
        W += np.float32(1.0)
    params = [E, W]
    opt = Adagrad(np, params, args.lr) if args.optimizer == "adagrad" else Adam(np, params, args.lr)
    print(f"{N} entities, {R} relations, {len(h)} training triples, {nq} queries "
          f"({int((q_side == 0).sum())} tail, {int((q_side == 1).sum())} head); "
          f"{args.model} dim {args.dim} ({width} floats a row), {args.optimizer} lr {args.lr}, batch {args.batch}",
          file=sys.stderr)

    third = np.float32(args.reg)
    for epoch in range(1, args.epochs + 1):
        t0 = time.perf_counter()
        order = rng.permutation(nq)
        total = 0.0
        for s in range(0, nq, args.batch):
            idx = order[s:s + args.batch]
            B = len(idx)
            a_id, r_id, side = q_anchor[idx], q_rel[idx], q_side[idx]
            A = E[a_id]
            Wr = W[r_id]
            head = side == 1
            if complex_model:
                # Head queries score h by Re(<t, conj(r), conj(h)>): the tail formula with r conjugated.
                Wr[head, half:] *= np.float32(-1)
                Q = complex_product(np, A, Wr, half)
            elif transe:
                # Tails: q = h + r; heads: q = t - r.
                Wr[head] *= np.float32(-1)
                Q = A + Wr
            else:
                Q = A * Wr
            if transe:
                E2 = (E * E).sum(axis=1)
                S = np.float32(2) * (Q @ E.T) - E2[None, :]
            else:
                S = Q @ E.T
            # Softmax in place; log-probabilities of the answers for the loss.
            S -= S.max(axis=1, keepdims=True)
            n_ans = counts[idx]
            rows = np.repeat(np.arange(B), n_ans)
            starts = np.repeat(offsets[idx] - np.concatenate([[0], np.cumsum(n_ans)[:-1]]), n_ans)
            cols = answers[starts + np.arange(len(rows))]
            picked = S[rows, cols]
            np.exp(S, out=S)
            Z = S.sum(axis=1, dtype=np.float64)
            w = np.repeat(weights[idx], n_ans)
            total += float(np.log(Z).sum() - (w * picked).astype(np.float64).sum())
            S /= Z.astype(np.float32)[:, None]
            S[rows, cols] -= w
            S *= np.float32(1.0 / B)
            dQ = S @ E
            dE = S.T @ Q
            if transe:
                # d(2 q . e - ||e||^2): 2 e for q; 2 q - 2 e for e, summed over the batch's rows (column sums of S).
                dQ *= np.float32(2)
                dE *= np.float32(2)
                dE -= np.float32(2) * S.sum(axis=0)[:, None] * E
                dA = dQ
                dWr = dQ.copy()
                dWr[head] *= np.float32(-1)
            elif complex_model:
                dA = complex_conj_product(np, dQ, Wr, half)
                dWr = complex_conj_product(np, dQ, A, half)
                dWr[head, half:] *= np.float32(-1)
            else:
                dA = dQ * Wr
                dWr = dQ * A
            if third > 0:
                # N3: weight * (|a|^3 + |r|^3) summed over the batch's rows, averaged like the loss.
                dA += third * np.float32(3.0 / B) * A * np.abs(A)
                Wraw = W[r_id]
                dWr += third * np.float32(3.0 / B) * Wraw * np.abs(Wraw)
            np.add.at(dE, a_id, dA)
            dW = np.zeros_like(W)
            np.add.at(dW, r_id, dWr)
            opt.step(params, [dE, dW])
        print(f"epoch {epoch}/{args.epochs}: loss {total / nq:.4f}, {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    os.makedirs(args.out, exist_ok=True)
    config = {
        "model": MODELS[args.model],
        "hidden_dim": args.dim,
        "double_entity_embedding": complex_model,
        "double_relation_embedding": complex_model,
        "dataset": os.path.basename(os.path.normpath(args.dataset_dir)),
        "trainer": "bench/train_kge.py",
        "loss": "kvsall-cross-entropy",
        "epochs": args.epochs,
        "seed": args.seed,
        "batch_size": args.batch,
        "optimizer": args.optimizer,
        "learning_rate": args.lr,
        "init": args.init,
        "regularization": {"n3": args.reg},
    }

    def save(array):
        def w(f):
            with open(f, "wb") as out:
                np.save(out, array, allow_pickle=False)
        return w

    def text(s):
        def w(f):
            with open(f, "w", encoding="utf-8", newline="\n") as out:
                out.write(s)
        return w

    write_file(os.path.join(args.out, "entity_embedding.npy"), save(np.ascontiguousarray(E, np.float32)))
    write_file(os.path.join(args.out, "relation_embedding.npy"), save(np.ascontiguousarray(W, np.float32)))
    write_file(os.path.join(args.out, "entities.tsv"), text("".join(f"{i}\t{e}\n" for i, e in enumerate(entities))))
    write_file(os.path.join(args.out, "relations.tsv"), text("".join(f"{i}\t{x}\n" for i, x in enumerate(relations))))
    write_file(os.path.join(args.out, "config.json"), text(json.dumps(config, indent=2, sort_keys=True) + "\n"))
    print(f"wrote {args.out} in {time.perf_counter() - t_start:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
