#!/usr/bin/python3
"""A Freebase- or Wikidata-shaped PyTorch-BigGraph checkpoint, written in PBG's layout with h5py in chunks (no table in
memory).

PBG trains Freebase (86,054,151 entities, 14,824 relations) as one entity type in 16 partitions, d = 100, ComplEx
(operator complex_diagonal, comparator dot) with dynamic relations. This script writes that shape at a fraction of
the entities (--entities, default a quarter: 21,513,537 = 16 x 1,344,596 rows, 8.6 GB of float32), every relation,
--train random training edges (the filter) and --test test edges, the entity folder with counts (no names files:
kgrank labels rows type/partition/row) and dynamic_rel_count.txt. Per-task time scales with the entity count, so a
run's time per task projects to the whole graph.
    /usr/bin/python3 bench/pbg_freebase.py OUT [--entities N] [--train N] [--test N]
    npx kgrank evaluate --model-dir OUT/ckpt --dataset-dir OUT/edges --sample-tasks 200 --seed 1 --format json
--shape wikidata: PBG's Wikidata shape instead (78,404,883 entities and 4,151 relations, standard relations with
the translation operator under dot; --entities sets the cut, --partitions the partitions, default 4). A standard
relation's operator transforms its tail candidates, so a tail side reads the table once per relation it holds.
"""
import argparse
import json
import os

import h5py
import numpy as np

FREEBASE_ENTITIES = 86_054_151
D = 100

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--entities", type=int, default=FREEBASE_ENTITIES // 4)
ap.add_argument("--train", type=int, default=2_000_000)
ap.add_argument("--valid", type=int, default=10_000)
ap.add_argument("--test", type=int, default=10_000)
ap.add_argument("--seed", type=int, default=7)
ap.add_argument("--shape", choices=["freebase", "wikidata"], default="freebase")
ap.add_argument("--partitions", type=int, default=None)
a = ap.parse_args()
wikidata = a.shape == "wikidata"
RELATIONS = 4_151 if wikidata else 14_824
PARTITIONS = a.partitions or (4 if wikidata else 16)
rng = np.random.default_rng(a.seed)
sizes = [a.entities // PARTITIONS + (1 if p < a.entities % PARTITIONS else 0) for p in range(PARTITIONS)]

ent = os.path.join(a.out, "entities")
ckpt = os.path.join(a.out, "ckpt")
os.makedirs(ent, exist_ok=True)
os.makedirs(ckpt, exist_ok=True)
for p, n in enumerate(sizes):
    with open(os.path.join(ent, f"entity_count_all_{p}.txt"), "w") as fh:
        fh.write(f"{n}\n")
if not wikidata:
    with open(os.path.join(ent, "dynamic_rel_count.txt"), "w") as fh:
        fh.write(f"{RELATIONS}\n")

config = {
    "entity_path": "../entities",
    "edge_paths": ["../edges/train"],
    "checkpoint_path": ".",
    "entities": {"all": {"num_partitions": PARTITIONS}},
    "relations": (
        [{"name": f"P{r}", "lhs": "all", "rhs": "all", "operator": "translation"} for r in range(RELATIONS)]
        if wikidata
        else [{"name": "all_edges", "lhs": "all", "rhs": "all", "operator": "complex_diagonal"}]
    ),
    "dimension": D,
    "comparator": "dot",
    "bias": False,
    "global_emb": False,
    "dynamic_relations": not wikidata,
}
with open(os.path.join(ckpt, "config.json"), "w") as fh:
    json.dump(config, fh, indent=2)
with open(os.path.join(ckpt, "checkpoint_version.txt"), "w") as fh:
    fh.write("1\n")

# Embeddings: each partition written in blocks of 262,144 rows, N(0, 0.1) float32 (a trained model's scale).
BLOCK = 1 << 18
for p, n in enumerate(sizes):
    with h5py.File(os.path.join(ckpt, f"embeddings_all_{p}.v1.h5"), "w") as f:
        f.attrs["format_version"] = 1
        ds = f.create_dataset("embeddings", shape=(n, D), dtype=np.float32)
        for s in range(0, n, BLOCK):
            e = min(n, s + BLOCK)
            ds[s:e] = rng.standard_normal((e - s, D), dtype=np.float32) * np.float32(0.1)
    print(f"partition {p}: {n} rows", flush=True)

with h5py.File(os.path.join(ckpt, "model.v1.h5"), "w") as f:
    f.attrs["format_version"] = 1
    if wikidata:
        for r in range(RELATIONS):
            f.create_dataset(
                f"model/relations/{r}/operator/rhs/translation",
                data=(0.1 * rng.standard_normal(D)).astype(np.float32),
            )
    else:
        for side in ("lhs", "rhs"):
            for name in ("real", "imag"):
                f.create_dataset(
                    f"model/relations/0/operator/{side}/{name}",
                    data=(1 + 0.1 * rng.standard_normal((RELATIONS, D // 2))).astype(np.float32),
                )

# Edges: random (relation, lhs, rhs) over the partitions, bucketed by (lhs partition, rhs partition).
starts = np.concatenate([[0], np.cumsum(sizes)])
for split, count in (("train", a.train), ("valid", a.valid), ("test", a.test)):
    d = os.path.join(a.out, "edges", split)
    os.makedirs(d, exist_ok=True)
    rel = rng.integers(0, RELATIONS, count)
    lhs = rng.integers(0, a.entities, count)
    rhs = rng.integers(0, a.entities, count)
    lp = np.searchsorted(starts, lhs, side="right") - 1
    rp = np.searchsorted(starts, rhs, side="right") - 1
    for i in range(PARTITIONS):
        for j in range(PARTITIONS):
            m = (lp == i) & (rp == j)
            with h5py.File(os.path.join(d, f"edges_{i}_{j}.h5"), "w") as f:
                f.attrs["format_version"] = 1
                f.create_dataset("rel", data=rel[m].astype(np.int64))
                f.create_dataset("lhs", data=(lhs[m] - starts[i]).astype(np.int64))
                f.create_dataset("rhs", data=(rhs[m] - starts[j]).astype(np.int64))
    print(f"{split}: {count} edges", flush=True)
