/**
 * A PyTorch-BigGraph graph as a kgrank Dataset: the entity folder (entity_count_{type}_{part}.txt,
 * entity_names_{type}_{part}.json, dynamic_rel_count.txt, dynamic_rel_names.json) and the edges, either PBG's edge
 * folders (edges_{lhs part}_{rhs part}.h5 buckets with datasets rel, lhs, rhs: offsets within the partitions) or TSV
 * splits of PBG's entity names. Entities take the checkpoint's global ids (types in config order, partitions in
 * order); a relation's heads are entities of its lhs type and its tails of its rhs type.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import * as path from "node:path";

import { KgrankInputError } from "../../checks/errors";
import { type Dataset, type Split, SPLITS } from "../datasets";
import type { PbgCheckpoint, PbgEntityType } from "./checkpoint";
import { H5File } from "./hdf5";

const ARG = "--dataset-dir";

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

/** The entity folder's counts, checked against the checkpoint's partitions (each entity_count_{type}_{part}.txt). */
function checkEntityCounts(ckpt: PbgCheckpoint, entityDir: string): void {
  ckpt.types.forEach((t) =>
    t.partitions.forEach((size, p) => {
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
    }),
  );
}

/**
 * PBG's entity names (entity_names_{type}_{part}.json, a JSON list per partition; `{type}/{part}/{row}` where a
 * partition has no names file), read a partition at a time on first use: a Freebase-sized graph's names (86 million,
 * gigabytes of JSON) are read only by what prints them (--ranks-out) or keeps them (--save-state's fingerprint), never
 * to rank. Names are unique within a type; across types they may repeat, and then every label carries its type.
 */
export class PbgEntityNames {
  readonly #ckpt: PbgCheckpoint;
  readonly #entityDir: string | null;
  readonly #parts = new Map<string, string[]>();
  #typed: boolean | null = null;

  constructor(ckpt: PbgCheckpoint, entityDir: string | null) {
    this.#ckpt = ckpt;
    this.#entityDir = entityDir;
    if (ckpt.types.length === 1) this.#typed = false; // one type: no name repeats
  }

  /** The names file of a partition, or null (no entity folder, or the folder has none for it). */
  file(t: PbgEntityType, p: number): string | null {
    if (!this.#entityDir) return null;
    const f = path.join(this.#entityDir, `entity_names_${t.name}_${p}.json`);
    return existsSync(f) ? f : null;
  }

  /** A partition's names, read and checked once. */
  partition(t: PbgEntityType, p: number): string[] {
    const key = `${t.name}\u0000${p}`;
    const have = this.#parts.get(key);
    if (have) return have;
    const size = t.partitions[p]!;
    const namesFile = this.file(t, p);
    let out: string[];
    if (!namesFile) {
      out = Array.from({ length: size }, (_, i) => `${t.name}/${p}/${i}`);
    } else {
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
      out = names.map(String);
    }
    this.#parts.set(key, out);
    return out;
  }

  /** Every partition's names read and checked (a run that will print or keep them does this before it ranks). */
  check(): void {
    for (const t of this.#ckpt.types) t.partitions.forEach((_, p) => this.partition(t, p));
    this.#typeLabels();
  }

  /** Whether labels carry their type: some name occurs in two types (every partition read to know). */
  #typeLabels(): boolean {
    if (this.#typed === null) {
      const seen = new Set<string>();
      let total = 0;
      for (const t of this.#ckpt.types)
        t.partitions.forEach((_, p) => {
          for (const n of this.partition(t, p)) seen.add(n);
          total += t.partitions[p]!;
        });
      this.#typed = seen.size !== total;
    }
    return this.#typed;
  }

  /** The label of entity `id` (a global id), or undefined outside the checkpoint. */
  label(id: number): string | undefined {
    if (!(Number.isInteger(id) && id >= 0 && id < this.#ckpt.numEntities)) return undefined;
    const t = this.#ckpt.types.find((x) => id < x.offset + x.count)!;
    let p = t.partitionOffsets.length - 1;
    while (t.partitionOffsets[p]! > id) p--;
    const name = this.partition(t, p)[id - t.partitionOffsets[p]!]!;
    return this.#typeLabels() ? `${t.name}:${name}` : name;
  }

  /**
   * What a run's fingerprint keeps of the names: per partition the names file's SHA-256 (or its row count where it has
   * none), so that states of different graphs never merge, without one string of every name.
   */
  toJSON(): unknown {
    return this.#ckpt.types.map((t) =>
      t.partitions.map((size, p) => {
        const f = this.file(t, p);
        return f ? createHash("sha256").update(readFileSync(f)).digest("hex") : size;
      }),
    );
  }

  /** The labels as a read-only array whose elements are read on first use (length: the entity count). */
  asArray(): string[] {
    const n = this.#ckpt.numEntities;
    const index = (key: string | symbol) =>
      typeof key === "string" && /^(0|[1-9][0-9]*)$/.test(key) ? Number(key) : null;
    return new Proxy([] as string[], {
      get: (target, key, receiver) => {
        if (key === "length") return n;
        if (key === "toJSON") return () => this.toJSON();
        const i = index(key);
        return i === null ? Reflect.get(target, key, receiver) : this.label(i);
      },
      has: (target, key) => {
        const i = index(key);
        return i === null ? Reflect.has(target, key) : i < n;
      },
      set: () => false,
    });
  }

  /** Label -> global id, built on first use (every partition read). */
  idMap(): Map<string, number> {
    return new LazyMap(() => {
      const out: [string, number][] = [];
      for (let id = 0; id < this.#ckpt.numEntities; id++) out.push([this.label(id)!, id]);
      return out;
    });
  }
}

/** A Map filled on first use. */
class LazyMap<K, V> extends Map<K, V> {
  #fill: (() => Iterable<[K, V]>) | null;
  constructor(fill: () => Iterable<[K, V]>) {
    super();
    this.#fill = fill;
  }
  #ready(): this {
    const fill = this.#fill;
    if (fill) {
      this.#fill = null;
      for (const [k, v] of fill()) super.set(k, v);
    }
    return this;
  }
  override get(key: K): V | undefined {
    return this.#ready() && super.get(key);
  }
  override has(key: K): boolean {
    return this.#ready() && super.has(key);
  }
  override get size(): number {
    this.#ready();
    return super.size;
  }
  override forEach(fn: (value: V, key: K, map: Map<K, V>) => void, thisArg?: unknown): void {
    this.#ready();
    super.forEach(fn, thisArg);
  }
  override entries(): MapIterator<[K, V]> {
    this.#ready();
    return super.entries();
  }
  override keys(): MapIterator<K> {
    this.#ready();
    return super.keys();
  }
  override values(): MapIterator<V> {
    this.#ready();
    return super.values();
  }
  override [Symbol.iterator](): MapIterator<[K, V]> {
    this.#ready();
    return super[Symbol.iterator]();
  }
}

const NAMES = new WeakMap<Dataset, PbgEntityNames>();

/** The entity names behind a dataset pbgDataset made (to check them before a run that prints or keeps them). */
export function pbgEntityNamesOf(ds: Dataset): PbgEntityNames | undefined {
  return NAMES.get(ds);
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
  if (entityDir) checkEntityCounts(ckpt, entityDir);
  const names = new PbgEntityNames(ckpt, entityDir);
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
    if (!entityDir)
      throw new KgrankInputError(
        ARG,
        `${dir} holds TSV splits, which name entities: the entity folder (entity_names_*.json) was not found in it, beside it (entities/) or at config.json's entity_path`,
      );
    const nameIds = new Map<string, Map<string, number>>();
    ckpt.types.forEach((t) => {
      const m = new Map<string, number>();
      t.partitions.forEach((_, p) => names.partition(t, p).forEach((n, k) => m.set(n, t.partitionOffsets[p]! + k)));
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
  // Each split in relation order (stable): the order PbgRanker ranks tasks in, so that a task shard (a run of rows)
  // ranks its rows in the one-process run's order. Each row's position in the files is kept (pbgFileOrder).
  const fileOrder = {} as Record<Split, Int32Array>;
  for (const s of SPLITS) [splits[s], fileOrder[s]] = byRelation(splits[s]);
  const ds: Dataset = {
    name: path.basename(dir),
    directory: dir,
    entityLabels: names.asArray(),
    relationLabels: relationNames,
    entityToId: names.idMap(),
    relationToId: new Map(relationNames.map((l, i) => [l, i])),
    numEntities: ckpt.numEntities,
    numRelations: ckpt.relations.length,
    splits,
    dropped: { train: 0, valid: 0, test: 0 },
  };
  NAMES.set(ds, names);
  FILE_ORDER.set(ds, fileOrder);
  return ds;
}

const FILE_ORDER = new WeakMap<Dataset, Record<Split, Int32Array>>();

/**
 * For each row of a split of a PBG dataset (pbgDataset: in relation order), its position in the split's files (edge
 * buckets in the order read, rows in file order; TSV lines): PBG's sampled protocol batches dynamic relations' edges in
 * that order. Undefined for a dataset pbgDataset did not make.
 */
export function pbgFileOrder(ds: Dataset, split: Split): Int32Array | undefined {
  return FILE_ORDER.get(ds)?.[split];
}

/** Triples (t x 3) sorted by relation, rows of one relation in their order; and each sorted row's former position. */
function byRelation(triples: Int32Array): [Int32Array, Int32Array] {
  const n = triples.length / 3;
  const order = Array.from({ length: n }, (_, i) => i).sort(
    (a, b) => triples[3 * a + 1]! - triples[3 * b + 1]! || a - b,
  );
  const out = new Int32Array(triples.length);
  order.forEach((i, j) => out.set(triples.subarray(3 * i, 3 * i + 3), 3 * j));
  return [out, Int32Array.from(order)];
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
