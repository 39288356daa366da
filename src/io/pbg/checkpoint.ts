/**
 * A PyTorch-BigGraph checkpoint folder (PBG's docs/source/input_output.rst): config.json (entity types and their
 * partitions, relations with their lhs / rhs types and operator, dimension, comparator, bias, global_emb,
 * dynamic_relations), checkpoint_version.txt (the version N of the complete checkpoint), one
 * embeddings_{type}_{partition}.vN.h5 per partition (dataset "embeddings": the partition's entities' rows) and
 * model.vN.h5 (model/relations/{idx}/operator/{lhs,rhs}/{param}, model/entities/{type}/global_embedding).
 *
 * Entities get global ids: the config's types in order, each type's partitions in order, the rows of a partition in
 * order. Each check names the file and what to do; nothing is read from the embeddings until a row is asked for.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import * as path from "node:path";

import { KgrankInputError } from "../../checks/errors";
import {
  PBG_COMPARATORS as COMPARATOR_CODES,
  PBG_OPERATORS as OPERATOR_CODES,
  type PbgComparatorName as PbgComparator,
  type PbgOperatorName as PbgOperator,
  type PbgOperatorValues as PbgOperatorParams,
} from "../../contract/kernels";
import { H5File } from "./hdf5";

// The names a config may give, from the one table of each (native/core/pbg.h's codes).
const PBG_OPERATORS = Object.keys(OPERATOR_CODES) as readonly PbgOperator[];
const PBG_COMPARATORS = Object.keys(COMPARATOR_CODES) as readonly PbgComparator[];

export interface PbgEntityType {
  readonly name: string;
  /** Entities per partition (from the embeddings files' shapes). */
  readonly partitions: readonly number[];
  /** Global id of the type's first entity, and of each partition's first entity. */
  readonly offset: number;
  readonly partitionOffsets: readonly number[];
  readonly count: number;
}

/** PBG's sampled protocol's sizes (PbgCheckpoint.sampling). */
export interface PbgSampling {
  readonly batchSize: number;
  readonly batchNegatives: number;
  readonly uniformNegatives: number;
}

interface PbgRelation {
  readonly name: string;
  readonly lhs: string;
  readonly rhs: string;
  readonly operator: PbgOperator;
  /** The config's all_negs: PBG's sampled evaluation ranks this relation's edges against every entity instead. */
  readonly allNegs: boolean;
  /** Standard relations: the rhs operator's parameters; dynamic relations: both sides'. */
  readonly params: { readonly lhs?: PbgOperatorParams; readonly rhs: PbgOperatorParams };
}

export interface PbgCheckpoint {
  readonly dir: string;
  readonly version: number;
  readonly dimension: number;
  readonly comparator: PbgComparator;
  readonly bias: boolean;
  readonly dynamic: boolean;
  readonly types: readonly PbgEntityType[];
  readonly numEntities: number;
  /** Standard: the config's relations; dynamic: the config's one relation once per relation id. */
  readonly relations: readonly PbgRelation[];
  /** Per type, its global embedding (global_emb), else absent. */
  readonly globalEmbeddings: ReadonlyMap<string, Float64Array>;
  /**
   * PBG's sampled evaluation as this config sets it (torchbiggraph_eval): edges in batches of batch_size, each cut
   * into chunks of num_batch_negs whose edges are each other's negatives, plus num_uniform_negs entities drawn per
   * chunk from the side's partition; PBG's defaults 1000, 50 and 50 where the config leaves them out.
   */
  readonly sampling: PbgSampling;
  /** The entity folder found (entity_count_*.txt, names, dynamic_rel_count.txt), or null. */
  readonly entityDir: string | null;
  /** The embeddings file of a type's partition. */
  embeddingsFile(type: string, partition: number): string;
}

const ARG = "--model-dir";

/** True when `dir` is a PBG checkpoint folder: config.json and checkpoint_version.txt side by side. */
export function isPbgCheckpoint(dir: string): boolean {
  return (
    existsSync(path.join(dir, "checkpoint_version.txt")) &&
    existsSync(path.join(dir, "config.json")) &&
    statSync(dir).isDirectory()
  );
}

function fail(file: string, message: string): never {
  throw new KgrankInputError(ARG, `${file}: ${message}`);
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    fail(file, `is not valid JSON (${(e as Error).message.slice(0, 80)}): give the config.json PyTorch-BigGraph saved`);
  }
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function oneOf<T extends string>(file: string, key: string, v: unknown, allowed: readonly T[], fallback: T): T {
  const value = v === undefined || v === null ? fallback : v;
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value))
    fail(
      file,
      `"${key}" is ${JSON.stringify(value)}, which kgrank does not score: PyTorch-BigGraph's are ${allowed.join(", ")} (a custom ${key} cannot be read from a checkpoint)`,
    );
  return value as T;
}

/** checkpoint_version.txt's version, checked against the versions the folder's files carry. */
function checkpointVersion(dir: string): number {
  const file = path.join(dir, "checkpoint_version.txt");
  const text = readFileSync(file, "utf8").trim();
  if (!/^\d+$/.test(text))
    fail(file, `holds ${JSON.stringify(text.slice(0, 40))}, not a version number: PBG writes one integer there`);
  return Number(text);
}

/** The versions the files of `dir` carry (embeddings_*.vN.h5, model.vN.h5). */
function versionsOnDisk(dir: string): number[] {
  const out = new Set<number>();
  for (const f of readdirSync(dir)) {
    const m = /^(?:embeddings_.+|model)\.v(\d+)\.h5$/.exec(f);
    if (m) out.add(Number(m[1]));
  }
  return [...out].sort((a, b) => a - b);
}

/** Expected parameter names and widths of an operator of dimension d. */
function paramSpec(op: PbgOperator, d: number): [keyof PbgOperatorParams, number][] {
  switch (op) {
    case "none":
      return [];
    case "translation":
      return [["translation", d]];
    case "diagonal":
      return [["diagonal", d]];
    case "linear":
      return [["linear_transformation", d * d]];
    case "affine":
      return [
        ["linear_transformation", d * d],
        ["translation", d],
      ];
    case "complex_diagonal":
      return [
        ["real", d / 2],
        ["imag", d / 2],
      ];
  }
}

/** A dynamic relation's (plural) name of a parameter. */
const PLURAL: Record<keyof PbgOperatorParams, string> = {
  translation: "translations",
  diagonal: "diagonals",
  linear_transformation: "linear_transformations",
  real: "real",
  imag: "imag",
};

/**
 * Opens a checkpoint folder: the config checked, the version checked against the files, every partition's
 * embeddings file present with its rows' count and width, the operators' parameters and global embeddings read.
 * `entityDirs`: where to look for the entity folder (the first that holds the first type's entity_count file; then
 * config.json's entity_path, resolved against the checkpoint folder). A dynamic-relation checkpoint takes its number
 * of relations from that folder's dynamic_rel_count.txt, else from its parameters' leading dimension.
 */
export async function openPbgCheckpoint(
  dir: string,
  opts: { entityDirs?: readonly (string | null | undefined)[] } = {},
): Promise<PbgCheckpoint> {
  const cfgFile = path.join(dir, "config.json");
  if (!isPbgCheckpoint(dir))
    throw new KgrankInputError(
      ARG,
      `${dir} is not a PyTorch-BigGraph checkpoint: it needs config.json and checkpoint_version.txt (the folder PBG's checkpoint_path names)`,
    );
  const cfg = readJson(cfgFile);
  if (!isObject(cfg)) fail(cfgFile, "is not a JSON object: give the config.json PyTorch-BigGraph saved");
  const entities = cfg.entities;
  if (!isObject(entities) || Object.keys(entities).length === 0)
    fail(cfgFile, `has no "entities" object of entity types: give the config.json PyTorch-BigGraph saved`);
  const dimension = cfg.dimension;
  if (typeof dimension !== "number" || !Number.isInteger(dimension) || dimension < 1)
    fail(cfgFile, `"dimension" is ${JSON.stringify(dimension)}: a positive integer is expected`);
  const comparator = oneOf(cfgFile, "comparator", cfg.comparator, PBG_COMPARATORS, "cos");
  const bias = Boolean(cfg.bias);
  const globalEmb = Boolean(cfg.global_emb);
  const dynamic = Boolean(cfg.dynamic_relations);
  if (bias && dimension < 2) fail(cfgFile, `"bias" needs a dimension of at least 2 (the first coordinate is the bias)`);
  const size = (key: string, fallback: number, least: number) => {
    const v = cfg[key];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== "number" || !Number.isInteger(v) || v < least || v > 2 ** 31 - 1)
      fail(cfgFile, `"${key}" is ${JSON.stringify(v)}: an integer of at least ${least} is expected`);
    return v;
  };
  const sampling: PbgSampling = {
    batchSize: size("batch_size", 1000, 1),
    batchNegatives: size("num_batch_negs", 50, 0),
    uniformNegatives: size("num_uniform_negs", 50, 0),
  };
  const rels = cfg.relations;
  if (!Array.isArray(rels) || rels.length === 0)
    fail(cfgFile, `has no "relations" list: give the config.json PyTorch-BigGraph saved`);
  if (dynamic && rels.length !== 1)
    fail(
      cfgFile,
      `"dynamic_relations" is on with ${rels.length} relations: PBG takes exactly one relation as the template then`,
    );
  if (dynamic && globalEmb)
    fail(cfgFile, `"global_emb" with "dynamic_relations": PyTorch-BigGraph cannot train that combination`);

  const version = checkpointVersion(dir);
  const onDisk = versionsOnDisk(dir);
  if (!onDisk.includes(version)) {
    fail(
      path.join(dir, "checkpoint_version.txt"),
      `says version ${version}, but the folder's files are of ${onDisk.length ? `version ${onDisk.join(", ")}` : "no version (no embeddings_*.vN.h5 or model.vN.h5)"}: ` +
        `the checkpoint is incomplete or mixed; point --model-dir at a complete checkpoint, or fix checkpoint_version.txt to the version whose files are all there`,
    );
  }
  const embeddingsFile = (type: string, partition: number) =>
    path.join(dir, `embeddings_${type}_${partition}.v${version}.h5`);

  // Entity types, partitions and their sizes (from the embeddings files).
  const types: PbgEntityType[] = [];
  let offset = 0;
  for (const [name, spec] of Object.entries(entities)) {
    if (!isObject(spec)) fail(cfgFile, `entity type "${name}" is not an object`);
    if (spec.featurized)
      fail(
        cfgFile,
        `entity type "${name}" is featurized: kgrank ranks plain embeddings only (each entity its own row)`,
      );
    if (spec.dimension !== undefined && spec.dimension !== null && spec.dimension !== dimension)
      fail(
        cfgFile,
        `entity type "${name}" has its own dimension ${String(spec.dimension)}: kgrank needs every type at "dimension" ${dimension}`,
      );
    const parts = spec.num_partitions ?? 1;
    if (typeof parts !== "number" || !Number.isInteger(parts) || parts < 1)
      fail(
        cfgFile,
        `entity type "${name}" has num_partitions ${JSON.stringify(parts)}: a positive integer is expected`,
      );
    const sizes: number[] = [];
    const partitionOffsets: number[] = [];
    const start = offset;
    for (let p = 0; p < parts; p++) {
      const file = embeddingsFile(name, p);
      if (!existsSync(file)) {
        fail(
          file,
          `is missing: entity type "${name}" has ${parts} partitions in config.json and partition ${p} has no embeddings of version ${version}; copy the whole checkpoint folder (every embeddings_${name}_*.v${version}.h5)`,
        );
      }
      const h5 = await H5File.open(file, ARG);
      try {
        checkFormatVersion(h5, file);
        const ds = h5.dataset("embeddings", `partition ${p} of entity type "${name}": rows x ${dimension}`);
        if (ds.kind !== "float" || ds.shape.length !== 2 || ds.shape[1] !== dimension)
          fail(
            file,
            `"embeddings" has shape (${ds.shape.join(", ")}) of ${ds.kind}s; PBG writes (entities, ${dimension}) floats for this config`,
          );
        sizes.push(ds.shape[0]!);
        partitionOffsets.push(offset);
        offset += ds.shape[0]!;
      } finally {
        h5.close();
      }
    }
    types.push({ name, partitions: sizes, offset: start, partitionOffsets, count: offset - start });
  }
  if (offset > 2 ** 31 - 1) fail(cfgFile, `the checkpoint has ${offset} entities: kgrank ids hold at most 2^31 - 1`);
  const typeNames = new Set(types.map((t) => t.name));
  const entityDir = findEntityFolder(types[0]!.name, [
    ...(opts.entityDirs ?? []),
    typeof cfg.entity_path === "string" ? path.resolve(dir, cfg.entity_path) : null,
  ]);

  // The model file: operator parameters and global embeddings.
  const modelFile = path.join(dir, `model.v${version}.h5`);
  const model = existsSync(modelFile) ? await H5File.open(modelFile, ARG) : null;
  try {
    if (model) checkFormatVersion(model, modelFile);
    const needModel = (what: string) => {
      if (!model)
        fail(modelFile, `is missing, and ${what} is stored there: copy model.v${version}.h5 with the checkpoint`);
      return model;
    };
    const readParam = (name: string, width: number, rows: number | null): Float64Array => {
      const m = needModel(`the parameter ${name}`);
      const ds = m.dataset(name, rows === null ? `${width} floats` : `${rows} x ${width} floats`);
      const size = ds.shape.reduce((a, b) => a * b, 1);
      const lead = rows === null ? 1 : ds.shape[0]!;
      if (ds.kind !== "float" || size !== lead * width || (rows !== null && lead !== rows))
        fail(
          modelFile,
          `"${name}" has shape (${ds.shape.join(", ")}); ${rows === null ? `${width} values` : `${rows} rows of ${width}`} are expected for dimension ${dimension}`,
        );
      return ds.rows(0, ds.shape[0]!);
    };
    const relations: PbgRelation[] = [];
    const parsed = rels.map((r, i) => {
      if (!isObject(r)) fail(cfgFile, `relation ${i} is not an object`);
      const name = typeof r.name === "string" ? r.name : String(i);
      for (const side of ["lhs", "rhs"] as const) {
        if (typeof r[side] !== "string" || !typeNames.has(r[side]))
          fail(
            cfgFile,
            `relation "${name}" has ${side} ${JSON.stringify(r[side])}, not one of the entity types (${[...typeNames].join(", ")})`,
          );
      }
      const operator = oneOf(cfgFile, `relations[${i}].operator`, r.operator, PBG_OPERATORS, "none");
      if (operator === "complex_diagonal" && dimension % 2 !== 0)
        fail(
          cfgFile,
          `relation "${name}" uses complex_diagonal with odd dimension ${dimension}: PBG needs an even one`,
        );
      return { name, lhs: r.lhs as string, rhs: r.rhs as string, operator, allNegs: Boolean(r.all_negs) };
    });
    if (!dynamic) {
      parsed.forEach((r, i) => {
        const rhs: PbgOperatorParams = {};
        for (const [p, width] of paramSpec(r.operator, dimension))
          rhs[p] = readParam(`model/relations/${i}/operator/rhs/${p}`, width, null);
        relations.push({ ...r, params: { rhs } });
      });
    } else {
      const r = parsed[0]!;
      const spec = paramSpec(r.operator, dimension);
      let count = dynamicRelationCount(entityDir);
      if (spec.length > 0) {
        const m = needModel("the dynamic relations' operators");
        const ds = m.dataset(`model/relations/0/operator/rhs/${PLURAL[spec[0]![0]]}`, "one row per relation");
        if (count !== null && count !== ds.shape[0])
          fail(
            modelFile,
            `has operators for ${ds.shape[0]} dynamic relations, but ${path.join(entityDir!, "dynamic_rel_count.txt")} says ${count}: the entity folder and the checkpoint are of different graphs`,
          );
        count = ds.shape[0]!;
      }
      if (count === null)
        fail(
          cfgFile,
          `has dynamic relations with operator "none": their number is in the entity folder's dynamic_rel_count.txt; put that folder beside the edges (or where config.json's entity_path points)`,
        );
      const sides: Record<"lhs" | "rhs", Record<string, Float64Array>> = { lhs: {}, rhs: {} };
      for (const side of ["lhs", "rhs"] as const)
        for (const [p, width] of spec)
          sides[side][p] = readParam(`model/relations/0/operator/${side}/${PLURAL[p]}`, width, count);
      const rowOf = (side: "lhs" | "rhs", k: number): PbgOperatorParams => {
        const out: PbgOperatorParams = {};
        for (const [p, width] of spec) out[p] = sides[side][p]!.subarray(k * width, (k + 1) * width);
        return out;
      };
      for (let k = 0; k < count; k++) relations.push({ ...r, params: { lhs: rowOf("lhs", k), rhs: rowOf("rhs", k) } });
    }
    const globalEmbeddings = new Map<string, Float64Array>();
    if (globalEmb)
      for (const t of types)
        globalEmbeddings.set(t.name, readParam(`model/entities/${t.name}/global_embedding`, dimension, null));
    return {
      dir,
      version,
      dimension,
      comparator,
      bias,
      dynamic,
      types,
      numEntities: offset,
      relations,
      globalEmbeddings,
      sampling,
      entityDir,
      embeddingsFile,
    };
  } finally {
    model?.close();
  }
}

/** PBG's files carry format_version 1 on their root group; another version is a layout kgrank does not know. */
function checkFormatVersion(h5: H5File, file: string): void {
  const v = h5.rootAttribute("format_version");
  if (v !== null && v !== 1)
    fail(
      file,
      `has format_version ${v}; kgrank reads PyTorch-BigGraph's format version 1: rewrite it with a PBG that writes version 1`,
    );
}

/** The first folder of `candidates` that holds entity_count_{type}_0.txt, or null. */
function findEntityFolder(type: string, candidates: readonly (string | null | undefined)[]): string | null {
  for (const c of candidates) {
    if (c && existsSync(path.join(c, `entity_count_${type}_0.txt`))) return path.resolve(c);
  }
  return null;
}

/** dynamic_rel_count.txt of an entity folder, or null. */
function dynamicRelationCount(entityDir: string | null): number | null {
  if (!entityDir) return null;
  const file = path.join(entityDir, "dynamic_rel_count.txt");
  if (!existsSync(file)) return null;
  const text = readFileSync(file, "utf8").trim();
  if (!/^\d+$/.test(text)) fail(file, `holds ${JSON.stringify(text.slice(0, 40))}, not a count of relations`);
  return Number(text);
}
