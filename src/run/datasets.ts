/** The dataset of a run, the splits that filter it and its candidate counts without scores. */
import { KgrankInputError } from "../checks/errors";
import { filteredCandidateCounts } from "../evaluation/candidate-counts";
import { ESTIMATORS } from "../evaluation/sampled-negatives";
import {
  canonicalDatasetName,
  type Dataset,
  datasetDirHoldsSplits,
  loadDataset,
  loadDatasetAsync,
  type Split,
  SPLITS,
} from "../io/datasets";
import { modelDirDataset } from "../io/model-dir";
import { quoted } from "../text/suggest";

export const SIDES = ["head", "tail"] as const;
export type TaskSide = (typeof SIDES)[number];
/** The sides `--sides` names: the entity sides and "relation" ((h, ?, t) ranked among the relations). */
const RUN_SIDES = ["head", "tail", "relation"] as const;
export type RunSide = (typeof RUN_SIDES)[number];

/** The dataset flags of a run, and the model directory whose config.json may name its dataset. */
export interface DatasetFlags {
  dataset?: string;
  datasetDir?: string;
  modelDir?: string;
}

/**
 * The dataset a run reads: --dataset (in --dataset-dir), or the folder --dataset-dir alone, or else the dataset the
 * model directory's config.json names (OGB's and DGL-KE's save their run's `dataset`), so `--model-dir DIR` of an
 * FB15k-237 model evaluates on FB15k-237, not on the default Nations. A --dataset that contradicts the config (both
 * names kgrank knows, for different datasets) is an error naming both: the model's rows are another dataset's
 * entities. Without --dataset and --dataset-dir, a config naming a dataset kgrank does not know is an error saying to
 * give its folder.
 */
function runDataset(opts: DatasetFlags): { dataset?: string; datasetDir?: string } {
  const flags = { dataset: opts.dataset, datasetDir: opts.datasetDir };
  const named = opts.modelDir ? modelDirDataset(opts.modelDir) : null;
  if (!named) return flags;
  const fromConfig = canonicalDatasetName(named.dataset);
  if (opts.dataset !== undefined) {
    const given = canonicalDatasetName(opts.dataset);
    if (fromConfig && given && given !== fromConfig) {
      throw new KgrankInputError(
        "--dataset",
        `${quoted(opts.dataset)} is not the dataset ${named.file} names (${quoted(named.dataset)}, ${fromConfig}): the ` +
          `model's embedding rows are ${fromConfig}'s entities; leave out --dataset to evaluate on ${fromConfig}, or give ` +
          `the model directory of a model trained on ${given}`,
      );
    }
    return flags;
  }
  if (opts.datasetDir !== undefined) {
    // --dataset-dir alone is the dataset's folder, or the folder that holds it by the config's name.
    return datasetDirHoldsSplits(opts.datasetDir) || !fromConfig ? flags : { ...flags, dataset: fromConfig };
  }
  if (!fromConfig) {
    throw new KgrankInputError(
      "--dataset",
      `is not given and ${named.file} names the dataset ${quoted(named.dataset)}, which kgrank does not know by name: ` +
        `give its folder (--dataset-dir DIR with train, valid and test splits), or --dataset NAME`,
    );
  }
  return { dataset: fromConfig };
}

export function datasetFrom(opts: DatasetFlags): Dataset {
  const flags = runDataset(opts);
  return loadDataset(flags.dataset, { datasetDir: flags.datasetDir });
}

/** datasetFrom off the event loop (a queue worker keeps renewing its job's lock while FB15k-237 loads). */
export function datasetFromAsync(opts: DatasetFlags): Promise<Dataset> {
  const flags = runDataset(opts);
  return loadDatasetAsync(flags.dataset, { datasetDir: flags.datasetDir });
}

/**
 * The sides of `--sides` (a comma list of head, tail and relation, each once), in that order; the flag is read as
 * given, so a list in another order ranks the same tasks.
 */
export function sidesArg(v: string): RunSide[] {
  const listed = v.split(",").map((s) => s.trim());
  for (const s of listed) {
    if (!(RUN_SIDES as readonly string[]).includes(s)) {
      throw new KgrankInputError(
        "--sides",
        `${quoted(s)} is not a side; use a comma list of head, tail and relation (head,tail ranks both entity sides, the default)`,
      );
    }
  }
  if (new Set(listed).size !== listed.length)
    throw new KgrankInputError("--sides", `lists a side twice (${quoted(v)}): name each of head, tail, relation once`);
  return RUN_SIDES.filter((s) => listed.includes(s));
}

/** --sample-tasks: a whole number of tasks, or a fraction in (0, 1) of them (sampleTasks checks it against the split). */
export function sampleSizeArg(v: string): number {
  const x = /^\s*(\d+|\d*\.\d+)\s*$/.test(v) ? Number(v) : NaN;
  if (!(x > 0) || (x >= 1 && !Number.isInteger(x)))
    throw new KgrankInputError(
      "--sample-tasks",
      `must be a number of tasks (e.g. 2000) or a fraction in (0, 1) (e.g. 0.05), got ${quoted(v)}`,
    );
  return x;
}

/** --estimate-full's list: each of sampled, minimum-mse, minimum-bias at most once. */
export function estimatorsArg(v: string): string[] {
  const listed = v.split(",").map((s) => s.trim());
  for (const e of listed) {
    if (!(ESTIMATORS as readonly string[]).includes(e)) {
      throw new KgrankInputError(
        "--estimate-full",
        `${quoted(e)} is not an estimator; use a comma list of ${ESTIMATORS.join(", ")} (or none: those within the work limits)`,
      );
    }
  }
  if (new Set(listed).size !== listed.length)
    throw new KgrankInputError("--estimate-full", `lists an estimator twice (${quoted(v)}): name each once`);
  return listed;
}

/** --negatives-from: all or filtered. */
export function negativesFromArg(v: string): "all" | "filtered" {
  if (v !== "all" && v !== "filtered")
    throw new KgrankInputError(
      "--negatives-from",
      `${quoted(v)} is not a candidate set: all (every entity but the true one) or filtered (no known answer)`,
    );
  return v;
}

/** --screen: auto, int8 or off (the ranks are the same in each; only the time differs). */
export function screenArg(v: string): "auto" | "int8" | "off" {
  if (v !== "auto" && v !== "int8" && v !== "off")
    throw new KgrankInputError(
      "--screen",
      `${quoted(v)} is not a screen mode: auto (default: where the CPU has an int8 kernel that pays), off (the float32 path alone) or int8 (wherever it applies)`,
    );
  return v;
}

/** --stratify: relation. */
export function stratifyArg(v: string): "relation" {
  if (v !== "relation")
    throw new KgrankInputError("--stratify", `${quoted(v)} is not a stratification: relation is the one there is`);
  return v;
}

/** The splits that filter: a comma list of train, valid, test, or "none". The evaluated split is always added. */
export function filterSplits(list: string[], evaluated: Split): Split[] {
  if (list.length === 1 && list[0] === "none") return [];
  const out = new Set<Split>();
  for (const s of list) {
    if (!(SPLITS as readonly string[]).includes(s)) {
      throw new KgrankInputError(
        "--filter",
        `${quoted(s)} is not a split; use a comma list of train, valid, test (or "none" for raw ranks)`,
      );
    }
    out.add(s as Split);
  }
  out.add(evaluated);
  return SPLITS.filter((s) => out.has(s));
}

export function candidateCounts(
  ds: Dataset,
  split: Split,
  filter: string[],
): { head: Float64Array; tail: Float64Array; both: Float64Array; setting: string } {
  const evaluated = ds.splits[split];
  const fs = filterSplits(filter, split);
  const c = fs.length
    ? filteredCandidateCounts(
        evaluated,
        fs.map((s) => ds.splits[s]),
        ds.numEntities,
        ds.numRelations,
      )
    : {
        head: new Float64Array(evaluated.length / 3).fill(ds.numEntities),
        tail: new Float64Array(evaluated.length / 3).fill(ds.numEntities),
      };
  const both = new Float64Array(c.head.length * 2);
  both.set(c.head, 0);
  both.set(c.tail, c.head.length);
  return { ...c, both, setting: fs.length ? `filtered by ${fs.join("+")}` : "unfiltered" };
}
