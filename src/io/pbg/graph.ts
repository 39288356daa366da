/**
 * A PyTorch-BigGraph graph as a kgrank Dataset: the entity folder (entity_count_{type}_{part}.txt,
 * entity_names_{type}_{part}.json, dynamic_rel_count.txt, dynamic_rel_names.json) and the edges, either PBG's edge
 * folders (edges_{lhs part}_{rhs part}.h5 buckets with datasets rel, lhs, rhs: offsets within the partitions) or TSV
 * splits of PBG's entity names. Entities take the checkpoint's global ids (types in config order, partitions in
 * order); a relation's heads are entities of its lhs type and its tails of its rhs type.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import * as path from "node:path";

import { KgrankInputError } from "../../checks/errors";
import { type Dataset, type Split, SPLITS } from "../datasets";
import type { PbgCheckpoint, PbgEntityType } from "./checkpoint";
import { H5File } from "./hdf5";

const ARG = "--dataset-dir";

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

/**
 * Per type and partition, PBG's entity names (entity_names_*.json), checked against the counts of the entity folder
 * and the checkpoint's partitions; null without an entity folder.
 */
function entityNames(ckpt: PbgCheckpoint, entityDir: string | null): string[][][] | null {
  if (!entityDir) return null;
  return ckpt.types.map((t) =>
    t.partitions.map((size, p) => {
      const countFile = path.join(entityDir, `entity_count_${t.name}_${p}.txt`);
      if (!existsSync(countFile))
        throw new KgrankInputError(
          ARG,
          `${countFile} is missing: the checkpoint has partition ${p} of "${t.name}"; give the entity folder the checkpoint was trained with`,
        );
      const count = Number(readFileSync(countFile, "utf8").trim());
      if (count !== size)
        throw new KgrankInputError(
          ARG,
          `${countFile} says ${count} entities, but ${path.basename(ckpt.embeddingsFile(t.name, p))} has ${size} rows: the entity folder and the checkpoint are of different graphs`,
        );
      const namesFile = path.join(entityDir, `entity_names_${t.name}_${p}.json`);
      if (!existsSync(namesFile)) return Array.from({ length: size }, (_, i) => `${t.name}/${p}/${i}`);
      let names: unknown;
      try {
        names = JSON.parse(readFileSync(namesFile, "utf8"));
      } catch {
        throw new KgrankInputError(ARG, `${namesFile} is not valid JSON: PBG writes a JSON list of names there`);
      }
      if (!Array.isArray(names) || names.length !== size)
        throw new KgrankInputError(
          ARG,
          `${namesFile} is not a list of ${size} names (the partition's rows): the entity folder and the checkpoint are of different graphs`,
        );
      return names.map(String);
    }),
  );
}

/** The relation labels: the config's names, or for dynamic relations dynamic_rel_names.json (else the ids). */
function relationLabels(ckpt: PbgCheckpoint, entityDir: string | null): string[] {
  if (ckpt.dynamic) {
    const file = entityDir ? path.join(entityDir, "dynamic_rel_names.json") : null;
    if (file && existsSync(file)) {
      const names = JSON.parse(readFileSync(file, "utf8")) as unknown;
      if (Array.isArray(names) && names.length === ckpt.relations.length) return names.map(String);
    }
    return ckpt.relations.map((_, i) => String(i));
  }
  return ckpt.relations.map((r) => r.name);
}

/** True when `dir` holds PBG edge buckets (edges_L_R.h5). */
function holdsBuckets(dir: string): boolean {
  return isDir(dir) && readdirSync(dir).some((f) => /^edges_\d+_\d+\.h5$/.test(f));
}

/** The partition index of a bucket for a type: the bucket's own for a partitioned type, 0 for an unpartitioned one. */
function partitionOf(t: PbgEntityType, bucket: number, file: string, side: string): number {
  if (t.partitions.length === 1) return 0;
  if (bucket >= t.partitions.length)
    throw new KgrankInputError(
      ARG,
      `${file}: bucket partition ${bucket} on the ${side} side, but entity type "${t.name}" has ${t.partitions.length} partitions: the edges and the checkpoint are of different graphs`,
    );
  return bucket;
}

/** The triples of one PBG edge folder, in global ids. */
async function readEdgeFolder(ckpt: PbgCheckpoint, dir: string): Promise<Int32Array> {
  const types = new Map(ckpt.types.map((t) => [t.name, t]));
  const files = readdirSync(dir)
    .filter((f) => /^edges_\d+_\d+\.h5$/.test(f))
    .sort();
  const parts: Int32Array[] = [];
  for (const name of files) {
    const file = path.join(dir, name);
    const [lb, rb] = name.slice(6, -3).split("_").map(Number) as [number, number];
    const h5 = await H5File.open(file, ARG);
    try {
      const lhsDs = h5.dataset("lhs", "the edges' lhs offsets");
      const rhsDs = h5.dataset("rhs", "the edges' rhs offsets");
      const n = lhsDs.shape[0]!;
      if (rhsDs.shape[0] !== n || lhsDs.kind !== "int" || rhsDs.kind !== "int")
        throw new KgrankInputError(
          ARG,
          `${file}: "lhs" and "rhs" must be integer arrays of one length, as PBG writes them`,
        );
      if (h5.has("lhsd") || h5.has("rhsd"))
        throw new KgrankInputError(
          ARG,
          `${file} holds featurized entities (lhsd / rhsd): kgrank ranks plain entities only`,
        );
      const lhs = lhsDs.rows(0, n);
      const rhs = rhsDs.rows(0, n);
      let rel: Float64Array;
      if (h5.has("rel")) {
        const relDs = h5.dataset("rel", "the edges' relation ids");
        if (relDs.shape[0] !== n || relDs.kind !== "int")
          throw new KgrankInputError(ARG, `${file}: "rel" must be an integer array as long as "lhs"`);
        rel = relDs.rows(0, n);
      } else if (ckpt.relations.length === 1) {
        rel = new Float64Array(n);
      } else {
        throw new KgrankInputError(
          ARG,
          `${file} has no "rel" dataset and the checkpoint has ${ckpt.relations.length} relations`,
        );
      }
      const out = new Int32Array(3 * n);
      for (let i = 0; i < n; i++) {
        const r = rel[i]!;
        const relation = ckpt.relations[r];
        if (!Number.isInteger(r) || !relation)
          throw new KgrankInputError(
            ARG,
            `${file}: edge ${i} has relation ${r}, outside the checkpoint's ${ckpt.relations.length} relations`,
          );
        const lt = types.get(relation.lhs)!;
        const rt = types.get(relation.rhs)!;
        const lp = partitionOf(lt, lb, file, "lhs");
        const rp = partitionOf(rt, rb, file, "rhs");
        const lo = lhs[i]!;
        const ro = rhs[i]!;
        if (!(lo >= 0 && lo < lt.partitions[lp]!) || !(ro >= 0 && ro < rt.partitions[rp]!))
          throw new KgrankInputError(
            ARG,
            `${file}: edge ${i} (${lo}, ${r}, ${ro}) has an offset outside its partitions (${lt.partitions[lp]} "${lt.name}" entities, ${rt.partitions[rp]} "${rt.name}"): the edges and the checkpoint are of different graphs`,
          );
        out[3 * i] = lt.partitionOffsets[lp]! + lo;
        out[3 * i + 1] = r;
        out[3 * i + 2] = rt.partitionOffsets[rp]! + ro;
      }
      parts.push(out);
    } finally {
      h5.close();
    }
  }
  const total = parts.reduce((n, p) => n + p.length, 0);
  const all = new Int32Array(total);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return all;
}

/** TSV splits (head, relation, tail per line) of PBG's entity names and relation names. */
function readTsvSplit(
  file: string,
  ckpt: PbgCheckpoint,
  relIds: Map<string, number>,
  nameIds: Map<string, Map<string, number>>,
): Int32Array {
  const lines = readFileSync(file, "utf8").split(/\r?\n/);
  const out: number[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    const cols = line.split("\t");
    if (cols.length < 3)
      throw new KgrankInputError(ARG, `${file}:${i + 1}: expected head, relation, tail separated by tabs`);
    const [h, r, t] = cols as [string, string, string];
    const rel = relIds.get(r);
    if (rel === undefined)
      throw new KgrankInputError(
        ARG,
        `${file}:${i + 1}: relation ${JSON.stringify(r)} is not one of the checkpoint's relations`,
      );
    const relation = ckpt.relations[rel]!;
    const id = (name: string, type: string) => {
      const v = nameIds.get(type)!.get(name);
      if (v === undefined)
        throw new KgrankInputError(
          ARG,
          `${file}:${i + 1}: ${JSON.stringify(name)} is not an entity of type "${type}" in the entity folder's names (relation ${JSON.stringify(r)} takes that type there)`,
        );
      return v;
    };
    out.push(id(h, relation.lhs), rel, id(t, relation.rhs));
  });
  return Int32Array.from(out);
}

/**
 * The dataset of a checkpoint from `datasetDir`: train/, valid/, test/ edge folders; or one edge folder (the split
 * `split` evaluated, no other split); or train / valid / test .tsv or .txt files of PBG's names. The entity folder is
 * the checkpoint's (openPbgCheckpoint looks for it where pbgEntityFolders says).
 */
export async function pbgDataset(ckpt: PbgCheckpoint, datasetDir: string, split: Split): Promise<Dataset> {
  const dir = path.resolve(datasetDir);
  if (!isDir(dir)) throw new KgrankInputError(ARG, `${datasetDir} is not a folder of PBG edges or TSV splits`);
  const entityDir = ckpt.entityDir;
  const names = entityNames(ckpt, entityDir);
  const relationNames = relationLabels(ckpt, entityDir);
  const splits = {} as Record<Split, Int32Array>;
  const tsv = (s: Split) => [".tsv", ".txt"].map((e) => path.join(dir, s + e)).find((f) => existsSync(f));
  if (
    SPLITS.every((s) => holdsBuckets(path.join(dir, s)) || !isDir(path.join(dir, s))) &&
    holdsBuckets(path.join(dir, split))
  ) {
    for (const s of SPLITS)
      splits[s] = holdsBuckets(path.join(dir, s)) ? await readEdgeFolder(ckpt, path.join(dir, s)) : new Int32Array(0);
  } else if (holdsBuckets(dir)) {
    for (const s of SPLITS) splits[s] = s === split ? await readEdgeFolder(ckpt, dir) : new Int32Array(0);
  } else if (tsv(split)) {
    if (!names)
      throw new KgrankInputError(
        ARG,
        `${dir} holds TSV splits, which name entities: the entity folder (entity_names_*.json) was not found in it, beside it (entities/) or at config.json's entity_path`,
      );
    const nameIds = new Map<string, Map<string, number>>();
    ckpt.types.forEach((t, ti) => {
      const m = new Map<string, number>();
      names[ti]!.forEach((part, p) => part.forEach((n, k) => m.set(n, t.partitionOffsets[p]! + k)));
      nameIds.set(t.name, m);
    });
    const relIds = new Map(relationNames.map((n, i) => [n, i]));
    for (const s of SPLITS) {
      const f = tsv(s);
      splits[s] = f ? readTsvSplit(f, ckpt, relIds, nameIds) : new Int32Array(0);
    }
  } else {
    throw new KgrankInputError(
      ARG,
      `${dir} holds no ${split} edges for the PyTorch-BigGraph checkpoint: give a folder with train/, valid/, test/ edge folders (edges_L_R.h5), one edge folder, or ${split}.tsv of PBG's entity names`,
    );
  }
  const labels: string[] = [];
  ckpt.types.forEach((t, ti) =>
    t.partitions.forEach((size, p) => {
      for (let k = 0; k < size; k++) labels.push(names ? names[ti]![p]![k]! : `${t.name}/${p}/${k}`);
    }),
  );
  // Names are unique per type in PBG; across types they may repeat: then every label carries its type.
  if (new Set(labels).size !== labels.length) {
    let at = 0;
    for (const t of ckpt.types) for (let k = 0; k < t.count; k++, at++) labels[at] = `${t.name}:${labels[at]!}`;
  }
  return {
    name: path.basename(dir),
    directory: dir,
    entityLabels: labels,
    relationLabels: relationNames,
    entityToId: new Map(labels.map((l, i) => [l, i])),
    relationToId: new Map(relationNames.map((l, i) => [l, i])),
    numEntities: ckpt.numEntities,
    numRelations: ckpt.relations.length,
    splits,
    dropped: { train: 0, valid: 0, test: 0 },
  };
}

/** Where the entity folder of a dataset folder may be: in it, its entities/, beside it, beside its parent. */
export function pbgEntityFolders(datasetDir: string): string[] {
  const dir = path.resolve(datasetDir);
  return [
    dir,
    path.join(dir, "entities"),
    path.dirname(dir),
    path.join(dir, "..", "entities"),
    path.join(dir, "..", "..", "entities"),
  ];
}
