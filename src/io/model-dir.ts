/**
 * Loading a trained model's embeddings from files into an EmbeddingModel, rows mapped to a dataset's entity and
 * relation ids. Layouts:
 *   - a model directory with config.json, as OGB's KnowledgeGraphEmbedding code saves it
 *     (snap-stanford/ogb examples/linkproppred/wikikg2/run.py save_model: entity_embedding.npy,
 *     relation_embedding.npy, config.json holding the run's arguments: model, hidden_dim, gamma,
 *     double_entity_embedding, double_relation_embedding), or as DGL-KE saves it (<dataset>_<model>_entity.npy and
 *     _relation.npy, the names dgl-ke's KEModel.save_emb writes and InferModel.load_emb reads (awslabs/dgl-ke
 *     python/dglke/models/general_models.py), with config.json keys model, emb_size / hidden_dim, gamma,
 *     double_ent, double_rel, and id maps in the data folder its data_path names (idMapFile) or entities.tsv /
 *     relations.tsv beside the embeddings);
 *   - or explicit files (.npy / .npz / .safetensors, float32 or float64) and --interaction.
 * Complex models from a config are stored as real | imaginary halves (torch.chunk in both codes); RotatE relations are
 * phases scaled by pi / embedding_range, embedding_range = (gamma + 2) / hidden_dim. Without a config the complex
 * layout must be given. Gamma only shifts scores and is dropped. A plain "TransE" is the L1 distance in an OGB
 * directory and the L2 distance in a DGL-KE one (savedBy below tells them apart).
 */
import { existsSync, readdirSync } from "node:fs";
import * as path from "node:path";

import { KgrankInputError } from "../checks/errors";
import { type ComplexLayout, EmbeddingModel, INTERACTIONS, type InteractionName } from "../scoring/embedding-model";
import { interactionOf, interactionsSavedAs } from "../scoring/interactions";
import { formatDims, quoted } from "../text/suggest";
import { describe } from "../checks/validate";
import { readArray } from "./array-file";
import { openEntityTable } from "./entity-table";
import { formatList } from "./formats";
import { readRegularFile } from "./files";
import type { NpyData } from "./npy";
import { invalidUtf8Line } from "./tsv";

export interface LoadEmbeddingModelOptions {
  /** Directory with config.json and the embedding files (OGB KnowledgeGraphEmbedding or DGL-KE layout). */
  modelDir?: string;
  interaction?: InteractionName;
  entityEmbeddings?: string;
  relationEmbeddings?: string;
  /** Label of each embedding row, one per line ("label" or "id<TAB>label", as DGL-KE's entities.tsv). */
  entityIds?: string;
  relationIds?: string;
  complexLayout?: ComplexLayout;
  precision?: "float32" | "float64";
  /** The dataset's labels in id order: rows are mapped to them through the id maps. */
  entityLabels?: readonly string[];
  relationLabels?: readonly string[];
  /**
   * Whether a file that config.json names outside the model directory (DGL-KE's id maps under its data_path) may be
   * read; a queue worker's --allow-read. Files it refuses count as absent. Default: every file.
   */
  mayRead?: (file: string) => boolean;
  /**
   * Leave the entity table on disk, read in chunks when the model is ranked (openEntityTable): a .npy or
   * .safetensors file whose rows are in the dataset's id order. Default false: read it into memory.
   */
  streamEntities?: boolean;
}

/**
 * Which code saved a model directory, from what each writes: DGL-KE's config.json is its run's arguments
 * (python/dglke/utils.py save_model: vars(args), keys model_name / hidden_dim / double_ent / double_rel; the
 * newer writer keys model / emb_size / double_ent / double_rel, as python/dglke/models/infer.py reads them) and its
 * embeddings are <dataset>_<model>_entity.npy / _relation.npy (KEModel.save_emb); OGB's is its run's arguments
 * too (run.py save_model: model, hidden_dim, double_entity_embedding, double_relation_embedding) with
 * entity_embedding.npy / relation_embedding.npy. The config's keys decide; without any, the files' names. Null when
 * the signs are missing or disagree.
 */
function savedBy(config: Record<string, unknown>, files: string[]): "ogb" | "dglke" | null {
  const dglkeKeys = ["emb_size", "double_ent", "double_rel", "model_name"].some((k) => Object.hasOwn(config, k));
  const ogbKeys = ["double_entity_embedding", "double_relation_embedding"].some((k) => Object.hasOwn(config, k));
  if (dglkeKeys || ogbKeys) return writerOf(dglkeKeys, ogbKeys);
  // No key of either writer: the embedding files' names (a stray *_entity.npy of another model is no sign).
  const model = String(config.model ?? "");
  return writerOf(
    files.some((f) => f.endsWith(`_${model}_entity.npy`)),
    files.includes("entity_embedding.npy"),
  );
}

function writerOf(dglke: boolean, ogb: boolean): "ogb" | "dglke" | null {
  return dglke === ogb ? null : dglke ? "dglke" : "ogb";
}

/**
 * The file of a model directory holding the `kind` embeddings, by the names its writer saves: OGB's
 * `<kind>_embedding.npy`; DGL-KE's `<dataset>_<model>_<kind>.npy` (KEModel.save_emb: the config's dataset and model
 * name), or the one `*_<model>_<kind>.npy` when the config names no dataset. A directory whose writer is unknown
 * takes the one file of either name, or else the one `<kind>.npy` / `*_<kind>.npy`. Several files that fit equally
 * (another run's embeddings, a backup) are refused, listed, never chosen by name order.
 */
function embeddingFile(
  dir: string,
  files: string[],
  config: Record<string, unknown>,
  writer: "ogb" | "dglke" | null,
  kind: "entity" | "relation",
  configFile: string,
): string {
  const flag = kind === "entity" ? "--entity-embeddings" : "--relation-embeddings";
  const ogbName = `${kind}_embedding.npy`;
  const model = config.model ?? config.model_name;
  const dataset = config.dataset;
  const anyCandidate = files.filter((f) => f === ogbName || f === `${kind}.npy` || f.endsWith(`_${kind}.npy`)).sort();
  const fail = (why: string): never => {
    throw new KgrankInputError(
      "modelDir",
      `${dir} ${why}; candidates: ${anyCandidate.length ? anyCandidate.join(", ") : "none"}: remove or rename the ` +
        `others, or name the file (${flag} FILE)`,
    );
  };
  const ogb = files.includes(ogbName) ? [ogbName] : [];
  let dglke: string[] = [];
  if (typeof model === "string" && model !== "") {
    const exact = typeof dataset === "string" ? `${dataset}_${model}_${kind}.npy` : null;
    dglke = exact && files.includes(exact) ? [exact] : files.filter((f) => f.endsWith(`_${model}_${kind}.npy`)).sort();
  }
  if (writer === "ogb") {
    if (ogb.length) return ogbName;
    return fail(`has no ${ogbName}, the file OGB's KnowledgeGraphEmbedding code saves (${configFile} is its config)`);
  }
  const named = writer === "dglke" ? dglke : [...ogb, ...dglke];
  if (named.length === 1) return named[0]!;
  if (named.length > 1) {
    return fail(
      `has ${named.length} ${kind} embedding files for ${configFile}'s model ${describe(model)}` +
        (typeof dataset === "string" ? "" : " (config.json names no dataset)"),
    );
  }
  if (writer === "dglke" && typeof dataset === "string" && typeof model === "string")
    return fail(`has no ${dataset}_${model}_${kind}.npy, the file DGL-KE saves for ${configFile}'s dataset and model`);
  if (anyCandidate.length === 1) return anyCandidate[0]!;
  if (anyCandidate.length === 0) {
    throw new KgrankInputError(
      "modelDir",
      `${dir} has no ${ogbName} (OGB) or <dataset>_<model>_${kind}.npy (DGL-KE); name the file (${flag} FILE)`,
    );
  }
  return fail(`has several ${kind} embedding files and none by the name its config gives`);
}

function readMatrix(file: string, argument: string): NpyData {
  const a = readArray(file, argument);
  if (a.dtype !== "f4" && a.dtype !== "f8" && a.dtype !== "f2" && a.dtype !== "bf16") {
    throw new KgrankInputError(
      argument,
      `${file} has dtype ${a.dtype}; embeddings must be float16, bfloat16, float32 or float64`,
    );
  }
  if (a.shape.length !== 2)
    throw new KgrankInputError(
      argument,
      `${file} has shape [${formatDims(a.shape)}]; embeddings must be 2-D [rows, dim]`,
    );
  if (a.shape.includes(0))
    throw new KgrankInputError(
      argument,
      `${file} has shape [${formatDims(a.shape)}]; embeddings need at least one row and one column`,
    );
  return a;
}

/**
 * Labels of the rows of an id-map file: one non-empty line per row, "label" or "row<TAB>label". Read like every other
 * input (a regular file only: a FIFO would block and /dev/zero never end), and like the TSV reader: UTF-8 only, and
 * each label once (a duplicate would silently map two rows to one label, the last winning); errors name the file and
 * the 1-based line.
 */
function readIdMap(file: string, argument: string): string[] {
  const bytes = readRegularFile(file, argument);
  const notUtf8 = invalidUtf8Line(bytes);
  if (notUtf8 !== null) throw new KgrankInputError(argument, `${file}: ${notUtf8}`);
  const lines = bytes.toString("utf8").split("\n");
  const labels: string[] = [];
  const lineOf = new Map<string, number>();
  lines.forEach((raw, k) => {
    const l = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (l.length === 0) return;
    const i = labels.length;
    const parts = l.split("\t");
    let label: string;
    if (parts.length === 1) label = parts[0]!;
    else if (parts.length === 2 && Number(parts[0]) === i) label = parts[1]!;
    else
      throw new KgrankInputError(
        argument,
        `${file} line ${k + 1}: expected "label" or "${i}<TAB>label", got ${describe(l)}`,
      );
    const first = lineOf.get(label);
    if (first !== undefined) {
      throw new KgrankInputError(
        argument,
        `${file} line ${k + 1}: label ${quoted(label)} is also on line ${first}: each row needs its own label`,
      );
    }
    lineOf.set(label, k + 1);
    labels.push(label);
  });
  return labels;
}

/** The matrix with its rows reordered to `labels` through the row labels of the id map `file`. */
function mapRows(m: NpyData, rowLabels: string[], labels: readonly string[], mapArg: string, file: string): NpyData {
  const [rows, cols] = m.shape as [number, number];
  if (rowLabels.length !== rows) {
    throw new KgrankInputError(
      mapArg,
      `${file} lists ${rowLabels.length} labels but the embeddings have ${rows} rows: the id map must name every row`,
    );
  }
  const row = new Map(rowLabels.map((l, i) => [l, i]));
  const data =
    m.data instanceof Float64Array ? new Float64Array(labels.length * cols) : new Float32Array(labels.length * cols);
  labels.forEach((label, id) => {
    const r = row.get(label);
    if (r === undefined)
      throw new KgrankInputError(
        mapArg,
        `${file} has no row for the dataset's label ${describe(label)} (id ${id}): the embeddings were trained on another id set`,
      );
    data.set((m.data as Float32Array).subarray(r * cols, (r + 1) * cols), id * cols);
  });
  return { data, shape: [labels.length, cols], dtype: m.dtype };
}

/**
 * The dataset a model directory's config.json names (its `dataset` key, as OGB's KnowledgeGraphEmbedding code and
 * DGL-KE save their run's arguments), with the config's path; null when there is no readable config or no such
 * string. Loading the model reports a broken config with its own messages.
 */
export function modelDirDataset(dir: string): { file: string; dataset: string } | null {
  const file = path.join(dir, "config.json");
  try {
    const config = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(readRegularFile(file, "modelDir")));
    const dataset = (config as Record<string, unknown> | null)?.dataset;
    return typeof dataset === "string" && dataset.trim() !== "" ? { file, dataset } : null;
  } catch {
    return null;
  }
}

/** A config.json value as it is written there (JSON), bounded, for messages. */
function jsonValue(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/**
 * A config.json key that kgrank uses, checked against the type its writer gives it (both codes save argparse
 * values: hidden_dim / emb_size an int, gamma a float, the double_* flags store_true booleans); undefined when absent.
 */
function configValue(
  config: Record<string, unknown>,
  configFile: string,
  key: string,
  kind: "dimension" | "number" | "boolean",
): number | boolean | undefined {
  if (!Object.hasOwn(config, key)) return undefined;
  const v = config[key];
  // The largest width a config may give: past 2^31 - 1 a value is no width (1e308 doubled is Infinity).
  const MAX_DIMENSION = 2147483647;
  const ok =
    kind === "boolean"
      ? typeof v === "boolean"
      : typeof v === "number" &&
        Number.isFinite(v) &&
        (kind === "number" || (Number.isInteger(v) && v >= 1 && v <= MAX_DIMENSION));
  if (!ok) {
    const want = {
      dimension: `a positive integer (an embedding width, at most ${MAX_DIMENSION})`,
      number: "a finite number",
      boolean: "true or false",
    }[kind];
    throw new KgrankInputError("modelDir", `${configFile}: ${key} is ${jsonValue(v)}, expected ${want}`);
  }
  return v as number | boolean;
}

/**
 * The embedding widths a config's dimension allows, checked against the files: each matrix has hidden (a single
 * embedding) or 2 x hidden (double_entity_embedding / double_ent, double_relation_embedding / double_rel: complex
 * numbers, RotatE's entities, PairRE's relation pairs) columns, exactly one of them where the flag is given. A config
 * of another run (a hidden_dim that would scale RotatE's phases by another factor) is refused, naming the key.
 */
function checkConfigWidths(
  config: Record<string, unknown>,
  configFile: string,
  files: { entity: [string, number]; relation: [string, number] },
): void {
  for (const key of ["hidden_dim", "emb_size"]) {
    const hidden = configValue(config, configFile, key, "dimension") as number | undefined;
    if (hidden === undefined) continue;
    const flags = {
      entity: ["double_entity_embedding", "double_ent"],
      relation: ["double_relation_embedding", "double_rel"],
    } as const;
    for (const kind of ["entity", "relation"] as const) {
      const [file, cols] = files[kind];
      const flag = flags[kind].find((k) => Object.hasOwn(config, k));
      const double = flag === undefined ? undefined : configValue(config, configFile, flag, "boolean");
      const allowed = double === undefined ? [hidden, 2 * hidden] : [double ? 2 * hidden : hidden];
      if (!allowed.includes(cols)) {
        throw new KgrankInputError(
          "modelDir",
          `${configFile}: ${key} ${hidden}${flag ? ` with ${flag} ${String(double)}` : ""} expects ` +
            `${allowed.join(" or ")} columns in ${path.basename(file)}, which has ${cols}: the config is not this ` +
            `model's; correct config.json, or name the files and --interaction instead of the directory`,
        );
      }
    }
  }
}

/**
 * The folders a relative data_path of DGL-KE's config.json may be relative to. dglke_train resolves it against the
 * directory it ran in, which config.json does not record; its save_path does, relative to the same directory
 * (prepare_save_path: <save_path>/<model>_<dataset>_<n>), so the model directory less save_path's trailing
 * components is that directory when the model was not moved. Then the model directory's parent and grandparent (a
 * model moved with its save folder), then the current directory (the value as given). Absolute: itself only.
 */
function dataPathCandidates(dir: string, config: Record<string, unknown>, dataPath: string): string[] {
  if (path.isAbsolute(dataPath)) return [dataPath];
  const model = path.resolve(dir);
  const bases: string[] = [];
  const savePath = config.save_path;
  if (typeof savePath === "string" && savePath !== "" && !path.isAbsolute(savePath)) {
    const tail = path
      .normalize(savePath)
      .split(path.sep)
      .filter((p) => p !== "" && p !== ".");
    const parts = model.split(path.sep);
    if (tail.length < parts.length && tail.every((p, i) => parts[parts.length - tail.length + i] === p))
      bases.push(parts.slice(0, parts.length - tail.length).join(path.sep) || path.sep);
  }
  bases.push(path.dirname(model), path.dirname(path.dirname(model)), process.cwd());
  return [...new Set(bases.map((b) => path.resolve(b, dataPath)))];
}

/**
 * The id map of a model directory's entity or relation rows. DGL-KE's dglke_train keeps its maps in the dataset's
 * folder and names them in config.json (python/dglke/utils.py save_model: emp_file and rmap_file, with the run's
 * data_path, dataset and format; the newer writer emap_file and rmap_file only): a built-in dataset's entities.dict
 * under <data_path>/<dataset>, a user dataset's entities.tsv (raw_udd) or its own map (udd) under <data_path>
 * (dataloader/KGDataset.py). Looked up there (data_path as dataPathCandidates resolves it), then beside the
 * embeddings by its name, then entities.tsv / relations.tsv beside them. Undefined when config.json names no map and
 * none is beside; an error naming config.json's keys when it names one that is in none of these places.
 */
function idMapFile(
  dir: string,
  config: Record<string, unknown>,
  configFile: string,
  kind: "entity" | "relation",
  mayRead: (file: string) => boolean,
): string | undefined {
  const beside = path.join(dir, kind === "entity" ? "entities.tsv" : "relations.tsv");
  const key = (kind === "entity" ? ["emp_file", "emap_file"] : ["rmap_file"]).find(
    (k) => Object.hasOwn(config, k) && typeof config[k] === "string" && config[k] !== "",
  );
  if (key === undefined) return existsSync(beside) ? beside : undefined;
  const name = config[key] as string;
  const dataPath = typeof config.data_path === "string" && config.data_path !== "" ? config.data_path : null;
  const builtIn = config.format === "built_in" && typeof config.dataset === "string";
  const tried: string[] = [];
  for (const folder of dataPath === null ? [] : dataPathCandidates(dir, config, dataPath))
    tried.push(path.resolve(folder, builtIn ? (config.dataset as string) : "", name));
  tried.push(path.join(dir, path.basename(name)), beside);
  const found = tried.find((f) => existsSync(f) && mayRead(f));
  if (found !== undefined) return found;
  const flag = kind === "entity" ? "--entity-ids" : "--relation-ids";
  throw new KgrankInputError(
    "modelDir",
    `${configFile}: ${key} ${jsonValue(name)} is not found` +
      (dataPath === null ? " (config.json has no data_path)" : ` under its data_path ${jsonValue(dataPath)}`) +
      ` nor beside the embeddings (looked for ${[...new Set(tried)].join(", ")}): the data folder moved; give the ` +
      `map as ${flag} FILE, or copy it into ${dir}`,
  );
}

/** Reads a model's embeddings (and config) into an EmbeddingModel. */
/** The relation rows in the dataset's id order (through the id map when there is one). */
function mapRelations(rel: NpyData, relIds: string | undefined, options: LoadEmbeddingModelOptions): NpyData {
  if (relIds) {
    if (!options.relationLabels)
      throw new KgrankInputError("relationIds", "needs the dataset's relation labels to map rows to");
    const arg = options.relationIds ? "relationIds" : "modelDir";
    return mapRows(rel, readIdMap(relIds, arg), options.relationLabels, arg, relIds);
  }
  if (options.relationLabels && rel.shape[0] !== options.relationLabels.length) {
    throw new KgrankInputError(
      "relationEmbeddings",
      `has ${rel.shape[0]} rows but the dataset has ${options.relationLabels.length} relations: give the id map (--relation-ids) that names each row`,
    );
  }
  return rel;
}

export function loadEmbeddingModel(options: LoadEmbeddingModelOptions): EmbeddingModel {
  let interaction = options.interaction;
  let entFile = options.entityEmbeddings;
  let relFile = options.relationEmbeddings;
  let entIds = options.entityIds;
  let relIds = options.relationIds;
  let layout = options.complexLayout;
  let phaseScale: number | undefined;
  let configCheck: ((entCols: number, relCols: number) => void) | null = null;
  if (options.modelDir) {
    const dir = options.modelDir;
    const configFile = path.join(dir, "config.json");
    if (!existsSync(configFile)) {
      throw new KgrankInputError(
        "modelDir",
        `${dir} has no config.json (OGB KnowledgeGraphEmbedding or DGL-KE layout); give --interaction and the embedding files instead`,
      );
    }
    const configBytes = readRegularFile(configFile, "modelDir");
    let config: Record<string, unknown>;
    try {
      config = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(configBytes));
    } catch (e) {
      throw new KgrankInputError(
        "modelDir",
        `${configFile} is not valid UTF-8 JSON: ${(e as Error).message.slice(0, 120)}`,
      );
    }
    if (typeof config !== "object" || config === null || Array.isArray(config)) {
      throw new KgrankInputError(
        "modelDir",
        `${configFile} is ${describe(config)}, not a JSON object of the run's arguments`,
      );
    }
    const files = readdirSync(dir);
    const modelKey = Object.hasOwn(config, "model") ? "model" : "model_name";
    const modelName = config[modelKey];
    const name = typeof modelName === "string" ? modelName.toLowerCase() : "";
    // The interactions' descriptors name what each writer calls them. Plain "TransE" is the L1 distance in OGB's
    // KnowledgeGraphEmbedding code (examples/linkproppred/wikikg2/model.py TransE: torch.norm(score, p=1, dim=2)) and
    // the L2 distance in DGL-KE (python/dglke/models/general_models.py, KEModel and InferModel: `if model_name ==
    // 'TransE' or model_name == 'TransE_l2': self.score_func = TransEScore(gamma, 'l2')`): the writer decides.
    const named = interactionsSavedAs(name, null);
    let fromConfig: InteractionName | undefined = named.length === 1 ? named[0] : undefined;
    if (named.length > 1) {
      const layout = savedBy(config, files);
      if (layout) fromConfig = interactionsSavedAs(name, layout)[0];
      else if (interaction && named.includes(interaction)) fromConfig = interaction;
      else {
        throw new KgrankInputError(
          "modelDir",
          `${configFile}: model TransE is the L1 distance in OGB's KnowledgeGraphEmbedding code and the L2 distance in ` +
            `DGL-KE, and ${dir} does not show which saved it (OGB: entity_embedding.npy, double_entity_embedding; ` +
            `DGL-KE: <dataset>_<model>_entity.npy, emb_size / double_ent): give --interaction transe-l1 or transe-l2`,
        );
      }
    }
    if (!fromConfig) {
      throw new KgrankInputError(
        "modelDir",
        `${configFile}: ${modelKey} is ${jsonValue(modelName)}, expected one of TransE, TransE_l1, TransE_l2, DistMult, ` +
          `ComplEx, RotatE, PairRE (or name the files and --interaction instead of the directory)`,
      );
    }
    if (interaction && interaction !== fromConfig) {
      throw new KgrankInputError(
        "interaction",
        `${interaction} contradicts ${configFile}'s model ${String(modelName)} (${fromConfig}); drop --interaction`,
      );
    }
    interaction = fromConfig;
    const writer = savedBy(config, files);
    entFile ??= path.join(dir, embeddingFile(dir, files, config, writer, "entity", configFile));
    relFile ??= path.join(dir, embeddingFile(dir, files, config, writer, "relation", configFile));
    const mayRead = options.mayRead ?? (() => true);
    entIds ??= idMapFile(dir, config, configFile, "entity", mayRead);
    relIds ??= idMapFile(dir, config, configFile, "relation", mayRead);
    // OGB's and DGL-KE's code store complex rows as halves, and RotatE's relations as phases scaled by its config.
    if (interactionOf(interaction).complex) layout ??= "halves";
    if (interactionOf(interaction).phases) {
      const gamma = configValue(config, configFile, "gamma", "number") as number | undefined;
      const hiddenKey = Object.hasOwn(config, "hidden_dim") ? "hidden_dim" : "emb_size";
      const hidden = configValue(config, configFile, hiddenKey, "dimension") as number | undefined;
      if (gamma === undefined || hidden === undefined) {
        throw new KgrankInputError(
          "modelDir",
          `${configFile}: RotatE needs gamma and hidden_dim (or emb_size) for the phase scale pi / ((gamma + 2) / hidden_dim)`,
        );
      }
      if (!(gamma > -2)) {
        throw new KgrankInputError(
          "modelDir",
          `${configFile}: gamma is ${gamma}, expected more than -2: RotatE's embedding range (gamma + 2) / ${hiddenKey} ` +
            `must be positive to scale its phases`,
        );
      }
      phaseScale = Math.PI / ((gamma + 2) / hidden);
    }
    configCheck = (entCols, relCols) =>
      checkConfigWidths(config, configFile, { entity: [entFile!, entCols], relation: [relFile!, relCols] });
  }
  if (!interaction || !INTERACTIONS.includes(interaction)) {
    throw new KgrankInputError(
      "interaction",
      `must be one of ${INTERACTIONS.join(", ")} (or give a model directory with config.json), got ${describe(interaction)}`,
    );
  }
  if (!entFile)
    throw new KgrankInputError("entityEmbeddings", `is required: the entity embedding file (${formatList()})`);
  if (!relFile)
    throw new KgrankInputError("relationEmbeddings", `is required: the relation embedding file (${formatList()})`);
  let rel = readMatrix(relFile, "relationEmbeddings");
  if (options.streamEntities) {
    let table = openEntityTable(entFile, { argument: "entityEmbeddings" });
    configCheck?.(table.cols, rel.shape[1]!);
    if (entIds) {
      const arg = options.entityIds ? "entityIds" : "modelDir";
      const rows = readIdMap(entIds, arg);
      const labels = options.entityLabels;
      if (!labels) throw new KgrankInputError("entityIds", "needs the dataset's entity labels to map rows to");
      if (rows.length !== table.rows) {
        throw new KgrankInputError(
          arg,
          `${entIds} lists ${rows.length} labels but ${entFile} has ${table.rows} rows: the id map must name every row`,
        );
      }
      if (rows.length !== labels.length) {
        throw new KgrankInputError(
          arg,
          `${entIds} names ${rows.length} rows but the dataset has ${labels.length} entities: a table read in ` +
            `chunks must hold one row per entity (extra rows are candidates of every pass); read it into memory ` +
            `(leave --memory out), which keeps only the dataset's rows`,
        );
      }
      if (rows.some((l, k) => l !== labels[k])) {
        // Rows in another order: each id is ranked from its row (ranks count candidates, whatever their order).
        const rowOf = new Map(rows.map((l, i) => [l, i]));
        const rowOfEntity = new Int32Array(labels.length);
        labels.forEach((label, id) => {
          const r = rowOf.get(label);
          if (r === undefined) {
            throw new KgrankInputError(
              arg,
              `${entIds} has no row for the dataset's label ${describe(label)} (id ${id}): the embeddings were trained on another id set`,
            );
          }
          rowOfEntity[id] = r;
        });
        table = table.withRowOrder(rowOfEntity);
      }
    } else if (options.entityLabels && table.rows !== options.entityLabels.length) {
      throw new KgrankInputError(
        "entityEmbeddings",
        `has ${table.rows} rows but the dataset has ${options.entityLabels.length} entities: a table read in chunks must hold one row per entity id, in id order`,
      );
    }
    rel = mapRelations(rel, relIds, options);
    return new EmbeddingModel({
      interaction,
      entityEmbeddings: table,
      relationEmbeddings: { data: rel.data as Float32Array, shape: rel.shape },
      ...(layout ? { complexLayout: layout } : {}),
      ...(phaseScale !== undefined ? { phaseScale } : {}),
      ...(options.precision ? { precision: options.precision } : {}),
    });
  }
  let ent = readMatrix(entFile, "entityEmbeddings");
  configCheck?.(ent.shape[1]!, rel.shape[1]!);
  if (entIds) {
    if (!options.entityLabels)
      throw new KgrankInputError("entityIds", "needs the dataset's entity labels to map rows to");
    // A map the model directory's config.json chose is its error, not a flag's the user did not give.
    const arg = options.entityIds ? "entityIds" : "modelDir";
    ent = mapRows(ent, readIdMap(entIds, arg), options.entityLabels, arg, entIds);
  } else if (options.entityLabels && ent.shape[0] !== options.entityLabels.length) {
    throw new KgrankInputError(
      "entityEmbeddings",
      `has ${ent.shape[0]} rows but the dataset has ${options.entityLabels.length} entities: give the id map (--entity-ids) that names each row`,
    );
  }
  rel = mapRelations(rel, relIds, options);
  return new EmbeddingModel({
    interaction,
    entityEmbeddings: { data: ent.data as Float32Array, shape: ent.shape },
    relationEmbeddings: { data: rel.data as Float32Array, shape: rel.shape },
    ...(layout ? { complexLayout: layout } : {}),
    ...(phaseScale !== undefined ? { phaseScale } : {}),
    ...(options.precision ? { precision: options.precision } : {}),
  });
}
