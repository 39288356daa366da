/** Test-side TSV loading (independent of src/io): label -> id maps from sorted training labels, like PyKEEN. */
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";

import { external, type External } from "./external";

export interface MappedDataset {
  entities: string[];
  relations: string[];
  splits: Record<"train" | "valid" | "test", Int32Array>;
}

/** Where the big benchmark datasets live: $KGRANK_DATASETS, or ../shared/datasets beside the repository. */
export const SHARED_DATASETS =
  process.env.KGRANK_DATASETS ?? path.resolve(__dirname, "..", "..", "..", "shared", "datasets");

/** Whether SHARED_DATASETS holds `name` (e.g. "fb15k-237"); a skip names the folder and the variable to set. */
export function sharedDataset(name: string): External {
  const found = existsSync(path.join(SHARED_DATASETS, name, "train.tsv"));
  return external(
    `${name} under ${SHARED_DATASETS}`,
    found,
    "set KGRANK_DATASETS to a folder holding NAME/{train,valid,test}.tsv",
  );
}

/** A dataset from SHARED_DATASETS, or null when it is not on this machine (see `sharedDataset`). */
export function loadShared(name: string): MappedDataset | null {
  return sharedDataset(name).missing ? null : loadDir(path.join(SHARED_DATASETS, name));
}

export function loadBundled(name: string): MappedDataset {
  return loadDir(path.resolve(__dirname, "..", "..", "data", name));
}

function loadDir(dir: string): MappedDataset {
  const read = (split: string) =>
    readFileSync(path.join(dir, `${split}.tsv`), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split("\t"));
  const raw = { train: read("train"), valid: read("valid"), test: read("test") };
  const entities = [...new Set(raw.train.flatMap(([h, , t]) => [h!, t!]))].sort();
  const relations = [...new Set(raw.train.map(([, r]) => r!))].sort();
  const e = new Map(entities.map((x, i) => [x, i]));
  const r = new Map(relations.map((x, i) => [x, i]));
  const map = (rows: string[][]) =>
    Int32Array.from(
      rows
        .filter(([h, rel, t]) => e.has(h!) && e.has(t!) && r.has(rel!))
        .flatMap(([h, rel, t]) => [e.get(h!)!, r.get(rel!)!, e.get(t!)!]),
    );
  return { entities, relations, splits: { train: map(raw.train), valid: map(raw.valid), test: map(raw.test) } };
}
