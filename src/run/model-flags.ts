/**
 * The model flags (--model-dir, --interaction and the embedding files) shared by `kgrank evaluate` and `kgrank
 * predict`: the model they name, loaded within --memory, and the library's errors about it named as those flags.
 */
import { backendInfo } from "../backend/backend";
import { KgrankInputError } from "../checks/errors";
import type { ScreenModeName } from "../contract/kernels";
import { loadEmbeddingModel, type LoadEmbeddingModelOptions } from "../io/model-dir";
import { loadScreenTable } from "../io/screen-table";
import { formatBytes, type StreamPlan } from "../scoring/entity-chunks";
import {
  AUTO_SCREEN_KERNELS,
  type ComplexLayout,
  DEFAULT_SCREEN,
  type EmbeddingModel,
  type InteractionName,
  screenTableBytes,
} from "../scoring/embedding-model";
import type { Out } from "./out";

/**
 * --memory's notice when the budget reads the entity table more than once (each pass serves one block of queries), with
 * the budget that reads it once; nothing with --quiet or one pass.
 */
export function memoryNotice(out: Out, quiet: boolean | undefined): ((plan: StreamPlan) => void) | undefined {
  if (quiet) return undefined;
  return (plan) => {
    if (plan.passes <= 1) return;
    const size = (n: number, up = false) => formatBytes(n, up).replace(" ", "");
    out.stderr(
      `kgrank: --memory ${size(plan.budget)} reads the entity table ${plan.passes} times (${plan.blockRows} queries ` +
        `per pass, ${plan.chunks} reads of ${plan.chunkRows} rows each); --memory ${size(plan.onePassBudget, true)} ` +
        `reads it once\n`,
    );
  };
}

/** The model flags (modelFlags in ./flags/shared.ts) as parsed: evaluate's and predict's. */
export interface ModelFlagOptions {
  modelDir?: string;
  interaction?: string;
  entityEmbeddings?: string;
  relationEmbeddings?: string;
  entityIds?: string;
  relationIds?: string;
  complexLayout?: string;
  precision?: string;
}
/**
 * --quantized FILE (what `kgrank quantize` wrote): the screen's table read for the model, checked against its entity
 * table, so the run does not quantise it again. Returns the screen mode of the run: --screen, else auto with
 * --quantized (a table given to be used), else the default.
 */
export function useQuantized(
  model: EmbeddingModel,
  file: string | undefined,
  screen: ScreenModeName | undefined,
): ScreenModeName {
  if (file === undefined) return screenOfFlags({ screen });
  if (model.entitySource) {
    // loadModelWithin reads a table whole when it and its int8 copy take at most half of --memory.
    const need = 2 * heldBytes(model, screenOfFlags({ screen, quantized: file }));
    throw new KgrankInputError(
      "--quantized",
      `goes with an entity table held in memory, and --memory reads ${model.entitySource.name} in chunks: give --memory at least ` +
        `${formatBytes(need, true)} (twice the table and its int8 copy), or leave out --quantized`,
    );
  }
  try {
    loadScreenTable(model, file);
  } catch (e) {
    if (e instanceof KgrankInputError && e.argument === "path") {
      throw new KgrankInputError("--quantized", e.message.slice(e.argument.length + 2));
    }
    throw e;
  }
  return screenOfFlags({ screen, quantized: file });
}

/**
 * --verbose's line on what the int8 screen did for a model's calls (EmbeddingModel.screenStats), with the kernel
 * that screened (BackendInfo.screenKernel) or why none did.
 */
export function screenLine(screen: ScreenModeName, model: EmbeddingModel): string {
  const stats = model.screenStats;
  const pct = stats.pairs > 0 ? ((100 * stats.rescored) / stats.pairs).toFixed(3) : "0";
  const kernel = backendInfo().screenKernel;
  if (stats.calls > 0) {
    return `screen ${screen}: ${stats.pairs} (query, candidate) pairs screened in int8, ${stats.rescored} rescored exactly (${pct} %; ${kernel ?? "no"} kernel)\n`;
  }
  if (screen === "off") return "screen off: the float path scored every pair\n";
  // Why auto did not screen a model the screen applies to (int8 would have).
  let why = model.screenWhy ?? undefined;
  if (why === undefined && model.screenRowBytes("int8") > 0) {
    if (screen === "auto" && !AUTO_SCREEN_KERNELS.has(kernel!)) why = `the ${kernel} kernel does not pay`;
    else if (!model.screenAsked) {
      why = "it applies only to ranking against the entity table: not to given negatives, candidate lists or relations";
    } else if (screen === "auto") why = "too few query rows to pay for quantising the table";
  }
  why ??= `${model.precision}, ${model.interaction}, backend ${backendInfo().backend}`;
  return `screen ${screen}: not used (${why}; the float path scored every pair)\n`;
}

/**
 * The library's errors about a model as the CLI names them: `model` (a score that overflowed) becomes the flags that
 * gave the model, `negatives` --negatives-ids, and the precision option its flag (errorLine maps the other argument
 * names: entityEmbeddings, interaction, ...).
 */
export function cliModelError(e: unknown, opts: Pick<ModelFlagOptions, "modelDir">): unknown {
  if (!(e instanceof KgrankInputError)) return e;
  const argument =
    e.argument === "model"
      ? opts.modelDir
        ? "--model-dir"
        : "--entity-embeddings / --relation-embeddings"
      : e.argument === "negatives"
        ? "--negatives-ids"
        : e.argument;
  const text = e.message.slice(e.argument.length + 2);
  const cli = text
    .replaceAll('precision: "float64"', "--precision float64")
    .replace(/or read it into memory$/, "or leave --memory out to read it into memory");
  return argument === e.argument && cli === text ? e : new KgrankInputError(argument, cli);
}

/** The model the model flags (modelFlags in ./flags/shared.ts) name, for the dataset's labels; errors name the flags. */
function loadModelFlags(
  opts: ModelFlagOptions,
  ds: { entityLabels: readonly string[]; relationLabels: readonly string[] },
  extra: Partial<Pick<LoadEmbeddingModelOptions, "mayRead" | "streamEntities">> = {},
): EmbeddingModel {
  return withModelFlags(opts, () =>
    loadEmbeddingModel({
      modelDir: opts.modelDir,
      interaction: opts.interaction as InteractionName | undefined,
      entityEmbeddings: opts.entityEmbeddings,
      relationEmbeddings: opts.relationEmbeddings,
      entityIds: opts.entityIds,
      relationIds: opts.relationIds,
      complexLayout: opts.complexLayout as ComplexLayout | undefined,
      precision: opts.precision as "float32" | "float64" | undefined,
      entityLabels: ds.entityLabels,
      relationLabels: ds.relationLabels,
      ...extra,
    }),
  );
}

/**
 * The model of the flags with --memory: its entity table opened to be read in chunks (checked as such), then read
 * into memory when it takes at most half the budget (the rest left to the filter index and the query rows), so a
 * budget the table fits never costs more memory than no budget; without --memory, in memory. A run that screens
 * (`screen`: the run's mode, --quantized's auto included) counts the screen's copy of the table with it.
 */
export function loadModelWithin(
  opts: ModelFlagOptions,
  ds: { entityLabels: readonly string[]; relationLabels: readonly string[] },
  memory: number | undefined,
  extra: Partial<Pick<LoadEmbeddingModelOptions, "mayRead">> = {},
  screen: ScreenModeName = "off",
): EmbeddingModel {
  if (memory === undefined) return loadModelFlags(opts, ds, extra);
  const streamed = loadModelFlags(opts, ds, { ...extra, streamEntities: true });
  return heldBytes(streamed, screen) <= memory / 2 ? loadModelFlags(opts, ds, extra) : streamed;
}

/** What a model whose table is opened to be read in chunks would hold read whole: the table and its screen's copy. */
function heldBytes(model: EmbeddingModel, screen: ScreenModeName, queryRows = Infinity): number {
  const { rows, cols } = model.entitySource ?? { rows: model.numEntities, cols: model.entityWidth };
  const B = model.precision === "float64" ? 8 : 4;
  return rows * cols * B + screenTableBytes(rows, model.screenRowBytes(screen, queryRows));
}

/**
 * The mode whose int8 copy loadModelWithin counts for a run's flags: screenOfFlags', except auto without --quantized,
 * which takes the float32 path where the copy does not fit (screenWithin) rather than read the table in chunks.
 */
export function copyOfFlags(opts: {
  screen?: ScreenModeName | undefined;
  quantized?: string | undefined;
}): ScreenModeName {
  const screen = screenOfFlags(opts);
  return screen === "auto" && opts.quantized === undefined ? "off" : screen;
}

/**
 * The run's screen mode under --memory (`memory`): auto, without --quantized, on a table loadModelWithin read into
 * memory whose int8 copy beside it would take more than half the budget takes the float32 path (the same ranks),
 * so that the default never holds more than the budget allows; otherwise `screen`. `rows`: the query rows the run
 * ranks (auto makes no copy for fewer than SCREEN_AUTO_WORK / width of them).
 */
export function screenWithin(
  model: EmbeddingModel,
  memory: number | undefined,
  screen: ScreenModeName,
  quantized: string | undefined,
  rows: number,
): ScreenModeName {
  if (screen !== "auto" || memory === undefined || quantized !== undefined || model.entitySource) return screen;
  if (heldBytes(model, screen, rows) <= memory / 2) return screen;
  model.noteScreenWhy(MEMORY_WHY);
  return "off";
}

/** Why screenWithin took the float32 path (screenLine's words, through EmbeddingModel.screenWhy). */
const MEMORY_WHY = "its int8 copy would not fit --memory beside the table";

/** The screen mode a run's flags ask for: --screen, else auto with --quantized, else the default (useQuantized's). */
function screenOfFlags(opts: { screen?: ScreenModeName | undefined; quantized?: string | undefined }): ScreenModeName {
  return opts.screen ?? (opts.quantized === undefined ? DEFAULT_SCREEN : "auto");
}

function withModelFlags<T>(opts: Pick<ModelFlagOptions, "modelDir">, load: () => T): T {
  try {
    return load();
  } catch (e) {
    throw cliModelError(e, opts);
  }
}
