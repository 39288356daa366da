/**
 * Link-prediction datasets as three TSV splits. Nations, Kinships and UMLS ship with the package (`data/`); the
 * bigger benchmarks (FB15k-237, WN18RR, CoDEx-S/M) are read from a directory and stay out of the npm tarball.
 * Ids follow PyKEEN: sorted labels of the training triples; valid/test triples with a label unseen in training
 * are dropped and counted (FB15k-237 and WN18RR have such triples).
 */
import { existsSync, statSync } from "node:fs";
import * as path from "node:path";

import { KgrankInputError } from "../checks/errors";
import { quoted } from "../text/suggest";
import { describe, optionKeys, options as checkOptions, signalOption } from "../checks/validate";
import { readRegularFile, readRegularFileAsync } from "./files";
import { runSteps, runStepsAsync, type Steps } from "./steps";
import { ID_ARRAY_EXTS, isIdArrayFile, type IdArrayDataset, loadIdArrays, loadIdArraysAsync } from "./id-arrays";
import { tripleTable, type TripleTable } from "./triple-table";
import { tsvPiecesSteps } from "./tsv";

/** @internal The datasets shipped in the package, by name (the CLI lists them). */
export const BUNDLED_DATASETS = ["nations", "kinships", "umls"] as const;
/** @internal The datasets read from `KGRANK_DATASETS` by name (the CLI lists them). */
export const EXTERNAL_DATASETS = ["fb15k-237", "wn18rr", "codex-s", "codex-m"] as const;
export const SPLITS = ["train", "valid", "test"] as const;
export type Split = (typeof SPLITS)[number];

const ALIASES: Record<string, string> = {
  nations: "nations",
  kinships: "kinships",
  kinship: "kinships",
  umls: "umls",
  "fb15k-237": "fb15k-237",
  fb15k237: "fb15k-237",
  fb15k_237: "fb15k-237",
  wn18rr: "wn18rr",
  "wn18-rr": "wn18rr",
  "codex-s": "codex-s",
  codexs: "codex-s",
  "codex-small": "codex-s",
  "codex-m": "codex-m",
  codexm: "codex-m",
  "codex-medium": "codex-m",
};

export interface Dataset {
  /** Canonical name, or the directory's name for a dataset read from --dataset-dir alone. */
  name: string;
  /** Where the splits were read from. */
  directory: string;
  entityLabels: string[];
  relationLabels: string[];
  entityToId: Map<string, number>;
  relationToId: Map<string, number>;
  numEntities: number;
  numRelations: number;
  /** t x 3 (head, relation, tail) ids per split. */
  splits: Record<Split, Int32Array>;
  /** Triples per split dropped because a label does not occur in train. */
  dropped: Record<Split, number>;
}

export interface LoadDatasetOptions {
  /**
   * Directory holding NAME/{train,valid,test}.tsv for the non-bundled datasets (default: $KGRANK_DATASETS, else
   * `datasets/` in the working directory). If it holds train.tsv itself, it is the dataset. Splits may be .tsv or
   * .txt (as FB15k-237, WN18RR and CoDEx are distributed). A bundled dataset named with an explicit directory that
   * does not hold it is an error, not the bundled copy. An error about a file found through it (not UTF-8, a bad row)
   * names `datasetDir`, the option that led to the file.
   */
  datasetDir?: string;
}

/** The bundled data/ folder, found from the source (src/io) or compiled (dist/cjs/io) location. */
function bundledDataDir(): string {
  for (const up of [
    ["..", ".."],
    ["..", "..", ".."],
  ]) {
    const dir = path.resolve(__dirname, ...up, "data");
    if (existsSync(path.join(dir, "nations", "train.tsv"))) return dir;
  }
  return path.resolve(__dirname, "..", "..", "..", "data");
}

function defaultDatasetDir(): string {
  return process.env.KGRANK_DATASETS || path.resolve(process.cwd(), "datasets");
}

/**
 * The folder, absolute, that a run naming `name` (default nations) without a dataset folder reads it from: the
 * default folder ($KGRANK_DATASETS, else ./datasets) resolved against the working directory `cwd`; undefined
 * for a bundled dataset (read from the package) or an unknown name. A queue submitter sends it with the jobs, so workers
 * elsewhere read what the submitter would.
 */
export function implicitDatasetDir(name?: string, cwd = process.cwd()): string | undefined {
  let canonical: string;
  try {
    canonical = datasetName(name ?? "nations");
  } catch {
    return undefined;
  }
  if ((BUNDLED_DATASETS as readonly string[]).includes(canonical)) return undefined;
  return path.resolve(cwd, process.env.KGRANK_DATASETS || "datasets");
}

/** The canonical name of a dataset name or alias ("FB15k237" -> "fb15k-237"), or null for a name kgrank does not know. */
export function canonicalDatasetName(name: string): string | null {
  return ALIASES[name.trim().toLowerCase()] ?? null;
}

/** Canonical dataset name, or a KgrankInputError listing the known ones. */
function datasetName(name: string): string {
  const key = typeof name === "string" ? name.trim().toLowerCase() : "";
  const canonical = ALIASES[key];
  if (!canonical) {
    throw new KgrankInputError(
      "dataset",
      `unknown dataset ${typeof name === "string" ? quoted(name) : describe(name)}; known: ${[...BUNDLED_DATASETS, ...EXTERNAL_DATASETS].join(", ")} ` +
        `(or --dataset-dir DIR with train.tsv, valid.tsv, test.tsv)`,
    );
  }
  return canonical;
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The file of a split in `dir`: SPLIT.tsv, or SPLIT.txt as FB15k-237, WN18RR and CoDEx are distributed by their
 * authors (the same tab-separated triples), or SPLIT.npy / SPLIT.npz as id arrays (./id-arrays.ts); null when none
 * exists.
 */
function splitFile(dir: string, split: Split): string | null {
  for (const ext of [".tsv", ".txt", ...ID_ARRAY_EXTS]) {
    const file = path.join(dir, split + ext);
    if (existsSync(file)) return file;
  }
  return null;
}

/**
 * Warns, once per split and load, when `dir` holds a split under more than one name (train.tsv and train.npy): the
 * first of .tsv, .txt, .npy, .npz is read, and the warning names it and the files left unread.
 */
function warnSplitChoices(dir: string): void {
  for (const split of SPLITS) {
    const found = [".tsv", ".txt", ...ID_ARRAY_EXTS].map((ext) => path.join(dir, split + ext)).filter(existsSync);
    if (found.length < 2) continue;
    process.emitWarning(
      `${dir} holds ${split} as ${found.map((f) => path.basename(f)).join(" and ")}: reading ${found[0]}, not ` +
        `${found
          .slice(1)
          .map((f) => path.basename(f))
          .join(" or ")} (the first of .tsv, .txt, .npy, .npz); remove or rename the files that are not the split`,
      { code: "KGRANK_SPLIT_FILES" },
    );
  }
}

/** True when `dir` is itself a dataset folder (it holds a train split), as --dataset-dir alone must be. */
export function datasetDirHoldsSplits(dir: string): boolean {
  return splitFile(dir, "train") !== null;
}

/** Resolves where a dataset's splits live. */
function datasetDirectory(
  name: string | undefined,
  options: LoadDatasetOptions = {},
): { name: string; directory: string } {
  const explicit = options.datasetDir;
  if (explicit !== undefined && name === undefined) {
    if (splitFile(explicit, "train"))
      return { name: path.basename(path.resolve(explicit)), directory: path.resolve(explicit) };
    throw new KgrankInputError(
      "datasetDir",
      `${explicit} has no train.tsv (or train.txt, or train.npy / train.npz as id arrays); point it at a folder with train, valid and test splits, ` +
        `or add a dataset name to read ${path.join(explicit, "NAME")}`,
    );
  }
  const canonical = datasetName(name ?? "nations");
  const bundled = (BUNDLED_DATASETS as readonly string[]).includes(canonical);
  if (bundled && explicit === undefined) return { name: canonical, directory: path.join(bundledDataDir(), canonical) };
  const root = explicit ?? defaultDatasetDir();
  const dir = path.join(root, canonical);
  if (splitFile(dir, "train")) return { name: canonical, directory: dir };
  // The bundled copy stands in for a default folder without it; an explicit --dataset-dir must hold what it names.
  if (bundled && explicit === undefined) return { name: canonical, directory: path.join(bundledDataDir(), canonical) };
  throw new KgrankInputError(
    "datasetDir",
    `${bundled ? `--dataset-dir was given, but ` : `${canonical} is not bundled and `}${path.join(dir, "train.tsv")} does not exist` +
      (isDir(root) ? "" : ` (no directory ${root})`) +
      `; put its train, valid and test splits (.tsv or .txt) in ${dir}` +
      (bundled
        ? `, or leave out --dataset-dir to use the bundled copy`
        : `, or pass --dataset-dir DIR (env KGRANK_DATASETS)`),
  );
}

/**
 * An error about a file of the dataset (argument "dataset") as the error of the option that led to the file: the
 * datasetDir given (the CLI's --dataset-dir), or the name alone (bundled, or $KGRANK_DATASETS).
 */
function fileOf(options: LoadDatasetOptions, e: unknown): unknown {
  if (options.datasetDir === undefined || !(e instanceof KgrankInputError) || e.argument !== "dataset") return e;
  return new KgrankInputError("datasetDir", e.message.slice("dataset: ".length));
}

/** Loads a dataset by name (bundled, or from `datasetDir`), with PyKEEN's ids. */
export function loadDataset(name?: string, options: LoadDatasetOptions = {}): Dataset {
  checkOptions("options", options, optionKeys<LoadDatasetOptions>({ datasetDir: 1 }));
  const { name: canonical, directory } = datasetDirectory(name, options);
  try {
    warnSplitChoices(directory);
    const arrays = idArrayFiles(directory);
    if (arrays) return idArrayDataset(canonical, directory, loadIdArrays(directory, arrays));
    const table = tripleTable();
    SPLITS.forEach((s, k) => {
      const file = splitPath(directory, s);
      runSteps(splitSteps(table, k as 0 | 1 | 2, readRegularFile(file, "dataset"), file));
    });
    return runSteps(datasetSteps(canonical, directory, table));
  } catch (e) {
    throw fileOf(options, e);
  }
}

export interface LoadDatasetAsyncOptions extends LoadDatasetOptions {
  /** Stops the load: the promise rejects with the signal's reason (checked between reads and parsing slices). */
  signal?: AbortSignal;
}

/**
 * loadDataset off the event loop: the splits are read with fs.promises and parsed, labelled and mapped in slices
 * of about 10 ms between event-loop turns. The same dataset and the same errors as loadDataset.
 */
export async function loadDatasetAsync(name?: string, options: LoadDatasetAsyncOptions = {}): Promise<Dataset> {
  const o = checkOptions("options", options, optionKeys<LoadDatasetAsyncOptions>({ datasetDir: 1, signal: 1 }));
  const signal = signalOption(o.signal);
  signal?.throwIfAborted();
  const { name: canonical, directory } = datasetDirectory(name, options);
  try {
    warnSplitChoices(directory);
    const arrays = idArrayFiles(directory);
    if (arrays) return idArrayDataset(canonical, directory, await loadIdArraysAsync(directory, arrays, signal));
    const table = tripleTable();
    for (const [k, s] of SPLITS.entries()) {
      const file = splitPath(directory, s);
      const bytes = await readRegularFileAsync(file, "dataset", signal);
      await runStepsAsync(splitSteps(table, k as 0 | 1 | 2, bytes, file), signal);
    }
    return await runStepsAsync(datasetSteps(canonical, directory, table), signal);
  } catch (e) {
    throw fileOf(options, e);
  }
}

function splitPath(directory: string, split: Split): string {
  return splitFile(directory, split) ?? path.join(directory, `${split}.tsv`);
}

/**
 * The split files when train is given as id arrays (.npy / .npz); then every split must be (a TSV split would have
 * labels without ids). Null for a TSV dataset.
 */
function idArrayFiles(directory: string): string[] | null {
  const files = SPLITS.map((s) => splitPath(directory, s));
  if (!isIdArrayFile(files[0]!)) return null;
  SPLITS.forEach((s, k) => {
    if (!isIdArrayFile(files[k]!)) {
      throw new KgrankInputError(
        "dataset",
        `${files[0]} gives train as id arrays but ${s} is ${existsSync(files[k]!) ? files[k] : "missing"}: give ${s} as ${s}.npy or ${s}.npz too`,
      );
    }
  });
  return files;
}

function idArrayDataset(canonical: string, directory: string, d: IdArrayDataset): Dataset {
  if (d.triples[0]!.length === 0) {
    throw new KgrankInputError("dataset", `${splitPath(directory, "train")} holds no triple: train cannot be empty`);
  }
  return withLabelMaps({
    name: canonical,
    directory,
    entityLabels: d.entityLabels,
    relationLabels: d.relationLabels,
    numEntities: d.numEntities,
    numRelations: d.numRelations,
    splits: { train: d.triples[0]!, valid: d.triples[1]!, test: d.triples[2]! },
    dropped: { train: 0, valid: 0, test: 0 },
  });
}

/** Adds a split file's rows to the table, in steps; errors name the file (argument "dataset"). */
function* splitSteps(table: TripleTable, split: 0 | 1 | 2, bytes: Buffer, file: string): Steps<void> {
  try {
    yield* tsvPiecesSteps(bytes, "dataset", (piece) => table.add(split, piece, "dataset"));
  } catch (e) {
    if (e instanceof KgrankInputError && e.argument === "dataset")
      throw new KgrankInputError("dataset", `${file}: ${e.message.slice("dataset".length + 2)}`);
    throw e;
  }
}

/** A dataset from its splits' interned rows, in steps (./steps.ts). */
function* datasetSteps(canonical: string, directory: string, table: TripleTable): Steps<Dataset> {
  if (table.rows(0) === 0) {
    throw new KgrankInputError(
      "dataset",
      `${splitPath(directory, "train")} holds no triple: entity and relation ids come from the training triples (as in PyKEEN), so train cannot be empty`,
    );
  }
  const t = table.finish();
  const splits = {} as Record<Split, Int32Array>;
  const dropped = {} as Record<Split, number>;
  SPLITS.forEach((s, k) => {
    splits[s] = t.triples[k]!;
    dropped[s] = t.dropped[k]!;
  });
  const dataset = {
    name: canonical,
    directory,
    entityLabels: t.entityLabels,
    relationLabels: t.relationLabels,
    numEntities: t.entityLabels.length,
    numRelations: t.relationLabels.length,
    splits,
    dropped,
  };
  yield;
  return withLabelMaps(dataset);
}

/**
 * The dataset with entityToId and relationToId: label -> id Maps built on first read (at WikiKG2 size the entity
 * Map takes about 2 s and 200 MB that a run reading ids alone never needs), then kept.
 */
function withLabelMaps<T extends { entityLabels: string[]; relationLabels: string[] }>(
  dataset: T,
): T & Pick<Dataset, "entityToId" | "relationToId"> {
  const lazy = (key: "entityToId" | "relationToId", labels: string[]) => {
    let map: Map<string, number> | undefined;
    Object.defineProperty(dataset, key, {
      enumerable: true,
      configurable: true,
      get: () => {
        if (!map) {
          map = new Map();
          for (let k = 0; k < labels.length; k++) map.set(labels[k]!, k);
        }
        return map;
      },
    });
  };
  lazy("entityToId", dataset.entityLabels);
  lazy("relationToId", dataset.relationLabels);
  return dataset as T & Pick<Dataset, "entityToId" | "relationToId">;
}
