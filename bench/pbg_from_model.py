#!/usr/bin/python3
"""A trained model written as a PyTorch-BigGraph checkpoint, to compare PBG's sampled evaluation with exact ranks on
embeddings that mean something (issue 45, item 4): a DistMult or ComplEx model directory in OGB's layout (what
bench/train_kge.py writes: entity_embedding.npy, relation_embedding.npy, entities.tsv, relations.tsv, config.json)
and its dataset's TSV splits become PBG's files: one entity type "all" in P partitions (entities assigned as PBG's
importer does, at random: a seeded permutation, entity k of it in partition k mod P), relations with PBG's operator
for the model (DistMult: diagonal, ComplEx: complex_diagonal with the relation conjugated, both under the dot
comparator, which give the model's scores), the entity folder (counts, names) and edge folders train/valid/test of edges_{l}_{r}.h5 buckets. The config
carries PBG's sampled evaluation's defaults (batch_size 1000, num_batch_negs 50, num_uniform_negs 50) unless given.

    /usr/bin/python3 bench/pbg_from_model.py --model-dir M --dataset-dir D --out OUT [--partitions 4] [--seed 1]
        [--batch-size 1000] [--batch-negs 50] [--uniform-negs 50]
    npx kgrank evaluate --model-dir OUT/ckpt --dataset-dir OUT/edges                # exact, filtered
    npx kgrank evaluate --model-dir OUT/ckpt --dataset-dir OUT/edges --pbg-sampled  # PBG's protocol

h5py and NumPy (Debian's /usr/bin/python3).
"""
import argparse
import csv
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "fixtures", "pbg"))
import make_checkpoint as mc  # noqa: E402


def labels(path):
    with open(path, newline="") as fh:
        return [row[1] for row in csv.reader(fh, delimiter="\t")]


def split_file(folder, name):
    for ext in (".tsv", ".txt"):
        p = os.path.join(folder, name + ext)
        if os.path.exists(p):
            with open(p, newline="") as fh:
                return [tuple(row[:3]) for row in csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE) if row]
    raise SystemExit(f"{folder} has no {name}.tsv or {name}.txt")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model-dir", required=True)
    p.add_argument("--dataset-dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--partitions", type=int, default=4)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=1000)
    p.add_argument("--batch-negs", type=int, default=50)
    p.add_argument("--uniform-negs", type=int, default=50)
    a = p.parse_args()
    cfg = json.load(open(os.path.join(a.model_dir, "config.json")))
    model = cfg["model"].lower()
    if model not in ("distmult", "complex"):
        raise SystemExit(f"{a.model_dir}: model {cfg['model']} has no PBG operator here (DistMult, ComplEx)")
    ent = np.load(os.path.join(a.model_dir, "entity_embedding.npy")).astype(np.float32)
    rel = np.load(os.path.join(a.model_dir, "relation_embedding.npy")).astype(np.float32)
    ent_labels = labels(os.path.join(a.model_dir, "entities.tsv"))
    rel_labels = labels(os.path.join(a.model_dir, "relations.tsv"))
    n, d = ent.shape
    P = a.partitions
    perm = np.random.default_rng(a.seed).permutation(n)
    where = {}  # entity row -> (partition, offset)
    sizes = [0] * P
    for k, e in enumerate(perm):
        where[int(e)] = (k % P, k // P)
        sizes[k % P] += 1
    types = {"all": sizes}
    ent_id = {lab: i for i, lab in enumerate(ent_labels)}
    rel_id = {lab: i for i, lab in enumerate(rel_labels)}
    edges = {}
    for split in ("train", "valid", "test"):
        rows = []
        for h, r, t in split_file(a.dataset_dir, split):
            if h not in ent_id or t not in ent_id or r not in rel_id:
                continue  # an entity or relation the model never saw (kgrank drops such triples as well)
            lp, lo = where[ent_id[h]]
            rp, ro = where[ent_id[t]]
            rows.append((rel_id[r], ("all", lp, lo), ("all", rp, ro)))
        edges[split] = rows
    mc.write_graph(a.out, types, [{"name": r} for r in rel_labels], edges)
    # The names files: the model's labels at their partitions' offsets (write_graph wrote placeholders).
    for part in range(P):
        names = [None] * sizes[part]
        for e, (pp, off) in where.items():
            if pp == part:
                names[off] = ent_labels[e]
        with open(os.path.join(a.out, "entities", f"entity_names_all_{part}.json"), "w") as fh:
            json.dump(names, fh)
    op = "diagonal" if model == "distmult" else "complex_diagonal"
    config = {
        "entity_path": "../entities",
        "edge_paths": ["../edges/train"],
        "checkpoint_path": ".",
        "entities": {"all": {"num_partitions": P}},
        "relations": [{"name": r, "lhs": "all", "rhs": "all", "operator": op} for r in rel_labels],
        "dimension": d,
        "comparator": "dot",
        "bias": False,
        "global_emb": False,
        "dynamic_relations": False,
        "batch_size": a.batch_size,
        "num_batch_negs": a.batch_negs,
        "num_uniform_negs": a.uniform_negs,
    }
    ck = os.path.join(a.out, "ckpt")
    os.makedirs(ck, exist_ok=True)
    with open(os.path.join(ck, "config.json"), "w") as fh:
        json.dump(config, fh, indent=2)
    with open(os.path.join(ck, "checkpoint_version.txt"), "w") as fh:
        fh.write("1\n")
    for part in range(P):
        rows = np.zeros((sizes[part], d), dtype=np.float32)
        for e, (pp, off) in where.items():
            if pp == part:
                rows[off] = ent[e]
        mc.write_h5(os.path.join(ck, f"embeddings_all_{part}.v1.h5"), {"embeddings": rows})
    params = {}
    for r in range(len(rel_labels)):
        base = f"model/relations/{r}/operator/rhs/"
        if op == "diagonal":
            params[base + "diagonal"] = rel[r]
        else:
            # OGB's ComplEx rows are real | imaginary halves. PBG's dot of rows x and y is Re(conj(x) y), so
            # dot(h, conj(r) t) = Re(conj(h) conj(r) t) = Re(h r conj(t)), ComplEx's score: imag = -Im(r).
            params[base + "real"] = rel[r, : d // 2]
            params[base + "imag"] = -rel[r, d // 2 :]
    mc.write_h5(os.path.join(ck, "model.v1.h5"), params)
    print(json.dumps({"entities": n, "partitions": sizes, "relations": len(rel_labels),
                      "edges": {s: len(v) for s, v in edges.items()}}))


if __name__ == "__main__":
    main()
