#!/usr/bin/python3
"""A PyTorch-BigGraph checkpoint large enough to time entity shards against the one-process run: one entity type in
4 partitions of 40,000 entities, d = 64, relations translation and diagonal under dot, 10,000 edges (2,000 tested).
Written in PBG's layout by test/fixtures/pbg/make_checkpoint.py's functions (h5py and NumPy: /usr/bin/python3).

    /usr/bin/python3 bench/pbg_checkpoint.py OUT
    npx kgrank evaluate --model-dir OUT/ckpt --dataset-dir OUT/edges --quiet --format json > whole.json
    for i in 0 1 2 3; do
      npx kgrank evaluate --model-dir OUT/ckpt --dataset-dir OUT/edges --quiet --entity-shard $i/4 --save-state s$i.state
    done
    npx kgrank merge s*.state --format json > merged.json && cmp whole.json merged.json

On 2 shared vCPUs (2026-12-02, one run each, /usr/bin/time): the whole run 183 s, 478 MB peak RSS; the shards 65, 61,
48 and 43 s (217 s together, 1.19x the whole: each shard scores every query and reads its true answers' rows from the
other shards' partitions one by one), 437-451 MB each (the default --memory budget, not the table, sets the peak);
the merged output equals the whole run's byte for byte.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "fixtures", "pbg"))
import make_checkpoint as mc  # noqa: E402

mc.D = 64
out = sys.argv[1] if len(sys.argv) > 1 else "pbg-bench"
rng = np.random.default_rng(7)
types = {"node": [40000] * 4}
rels = [
    {"name": "r0", "lhs": "node", "rhs": "node", "operator": "translation"},
    {"name": "r1", "lhs": "node", "rhs": "node", "operator": "diagonal"},
]
mc.write_graph(out, types, rels, mc.split_edges(rng, types, rels, 10000))
config = {
    "entity_path": "../entities",
    "edge_paths": ["../edges/train"],
    "checkpoint_path": ".",
    "entities": {"node": {"num_partitions": 4}},
    "relations": rels,
    "dimension": mc.D,
    "comparator": "dot",
    "bias": False,
    "global_emb": False,
    "dynamic_relations": False,
}
params = [(None, {"rhs": mc.op_params(rng, r["operator"])}) for r in rels]
mc.write_checkpoint(os.path.join(out, "ckpt"), config, types, rng, params, False)
