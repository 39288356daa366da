/** Test-side TSV loading (independent of src/io): label -> id maps from sorted training labels, like PyKEEN. */
import { readFileSync } from "node:fs";
import * as path from "node:path";

export interface MappedDataset {
  entities: string[];
  relations: string[];
  splits: Record<"train" | "valid" | "test", Int32Array>;
}

export function loadBundled(name: string): MappedDataset {
  const dir = path.resolve(__dirname, "..", "..", "data", name);
  const read = (split: string) =>
    readFileSync(path.join(dir, `${split}.tsv`), "utf8").split("\n").filter(Boolean).map((l) => l.split("\t"));
  const raw = { train: read("train"), valid: read("valid"), test: read("test") };
  const entities = [...new Set(raw.train.flatMap(([h, , t]) => [h!, t!]))].sort();
  const relations = [...new Set(raw.train.map(([, r]) => r!))].sort();
  const e = new Map(entities.map((x, i) => [x, i]));
  const r = new Map(relations.map((x, i) => [x, i]));
  const map = (rows: string[][]) =>
    Int32Array.from(rows.filter(([h, rel, t]) => e.has(h!) && e.has(t!) && r.has(rel!)).flatMap(([h, rel, t]) => [e.get(h!)!, r.get(rel!)!, e.get(t!)!]));
  return { entities, relations, splits: { train: map(raw.train), valid: map(raw.valid), test: map(raw.test) } };
}
