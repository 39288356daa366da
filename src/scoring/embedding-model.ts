/**
 * A trained model given by its embeddings: what RankEvaluator.addModel() ranks directly, scoring every candidate
 * from the embeddings in the kernel (native/core/interaction.cpp, twin src/fallback/interaction.ts) without ever
 * materialising a score matrix. The formulas and sign conventions (higher = better; distances negated; OGB's
 * constant gamma dropped) are written out in native/core/interaction.cpp and the README.
 */
import { backendInfo, kernels, type ScreenKernel } from "../backend/backend";
import { KgrankInputError } from "../checks/errors";
import {
  type EmbeddingRankInput,
  type EmbeddingScreen,
  type FloatArray,
  type Kernels,
  SCREEN_MODES,
  type ScreenModeName,
} from "../contract/kernels";
import { allocateTable, checkTableLength } from "../checks/alloc";
import { describe, options, optionKeys, threadCount, tripleArray } from "../checks/validate";

import { INTERACTIONS, interactionOf, type InteractionName } from "./interactions";

/** Table rows per panel of the screen's quantised copy (native/core/screen.h kScreenPanel): a copy pads to them. */
export const SCREEN_PANEL = 16;
/** Bytes of a screen table beyond its rows: 1 KiB of slack after each of its two levels (kScreenTileSlack). */
export const SCREEN_SLACK = 2048;
/**
 * "auto" quantises a table for a call only when the call's rows times the row width reach this
 * (native/core/screen.h kScreenAutoWork): below it, quantising costs more than the screen saves.
 */
export const SCREEN_AUTO_WORK = 2 ** 17;
/** Rows wider than this keep the float32 path in every mode (native/core/screen.h kScreenMaxDim). */
export const SCREEN_MAX_DIM = 65000;

/**
 * Bytes of the screen's quantised copy of `rows` table rows at `rowBytes` a row (EmbeddingModel.screenRowBytes; 0:
 * none): rows padded to whole panels, and the AMX kernel's slack after each of the two levels.
 */
export function screenTableBytes(rows: number, rowBytes: number): number {
  return rowBytes === 0 || rows === 0 ? 0 : Math.ceil(rows / SCREEN_PANEL) * SCREEN_PANEL * rowBytes + SCREEN_SLACK;
}

/**
 * Bytes of a query row's quantised forms for a table of `rowBytes` a row (0: none): four int8 copies of the row and
 * nine terms, within twice a table row's.
 */
export function screenQueryBytes(rowBytes: number): number {
  return 2 * rowBytes;
}

/**
 * The screen kernels under which "auto" screens (native/core/screen.h screen_auto_kernel): not the scalar one, nor
 * AVX2's without VNNI, which gains nothing on a model's rows (docs/screen.md).
 */
export const AUTO_SCREEN_KERNELS: ReadonlySet<ScreenKernel> = new Set(["amx", "avx512-vnni", "avx-vnni", "neon-sdot"]);

/** Why a memory plan kept the float32 path under "auto" (EmbeddingModel.screenWhy: --verbose's words). */
export const BUDGET_WHY =
  "its int8 copy would not fit the memory budget (--memory, memoryBudget; by default a quarter of the machine's memory) beside the table";

/** The screen mode of a batch or a run that names none: the fastest the CPU has (docs/screen.md). */
export const DEFAULT_SCREEN: ScreenModeName = "auto";

/** A `screen` option (addModel, predictTopK), checked: one of SCREEN_MODES' names (absent: DEFAULT_SCREEN). */
export function screenMode(value: unknown): ScreenModeName {
  if (value === undefined) return DEFAULT_SCREEN;
  if (typeof value !== "string" || !Object.hasOwn(SCREEN_MODES, value)) {
    throw new KgrankInputError(
      "screen",
      `must be ${Object.keys(SCREEN_MODES)
        .map((m) => `"${m}"`)
        .join(", ")}, got ${describe(value)}`,
    );
  }
  return value as ScreenModeName;
}

export { INTERACTION_CODES, INTERACTIONS, type InteractionName } from "./interactions";
export type ComplexLayout = "halves" | "interleaved";

/** A row-major matrix: `shape` = [rows, columns] (what readNpy / readNpz / readSafetensors return fits). */
export interface EmbeddingMatrix {
  data: ArrayLike<number> & { length: number };
  shape: readonly number[];
}

/**
 * An entity table read in row chunks instead of held in memory (openEntityTable reads .npy and safetensors files this
 * way). A model built on one is ranked by RankEvaluator.addModel with a memory budget: the table is read in one
 * sequential pass per block of queries, and the ranks equal those of the same table in memory, bit for bit.
 */
export interface EntityRowSource {
  readonly rows: number;
  readonly cols: number;
  /** Where the rows come from (a file name), as errors name it. */
  readonly name: string;
  /** Bytes of one row as stored: a chunk read costs rows x this much before it is converted. */
  readonly storedRowBytes: number;
  /**
   * Reads rows [begin, end) into `into` ((end - begin) x cols values, in its element type: float32 rounds as
   * Float32Array.from does), refusing a value that is not finite there with a KgrankInputError naming the row.
   * `scratch`, when given, is room for the stored bytes of those rows (the caller reuses it between reads).
   */
  readRows(begin: number, end: number, into: Float32Array | Float64Array, scratch?: Uint8Array): Promise<void>;
  /**
   * Optional: the reads of one run (a ranking or top-k call) through one open file, checked to still be the file
   * opened before each read and by check(), which the run calls when its reads are done (openEntityTable's refuses a
   * table rewritten or replaced meanwhile). The run closes it when it ends.
   */
  openRun?(): Promise<EntityRowReader>;
  /**
   * Optional: when the rows are not in entity id order, the row of each entity id (a permutation of the rows; a
   * model directory's id map gives it). Ranking maps every id to its row; top-k lists (which order ties by id) refuse
   * such a table.
   */
  readonly rowOfEntity?: Int32Array | undefined;
}

/** One run's reads of an EntityRowSource (EntityRowSource.openRun). */
export interface EntityRowReader extends EntityRowSource {
  /** Throws when the rows read so far may not all come from the table opened (e.g. the file changed). */
  check(): Promise<void>;
  close(): Promise<void>;
}

function isRowSource(value: unknown): value is EntityRowSource {
  return (
    value !== null &&
    typeof value === "object" &&
    typeof (value as EntityRowSource).readRows === "function" &&
    Number.isSafeInteger((value as EntityRowSource).rows) &&
    Number.isSafeInteger((value as EntityRowSource).cols)
  );
}

export interface EmbeddingModelOptions {
  /** transe-l1, transe-l2, distmult, complex, rotate (OGB's), rotate-l2 (PyKEEN's RotatE), pairre. */
  interaction: InteractionName;
  /**
   * numEntities x width, rows in kgrank's entity id order. A Float32Array (Float64Array with precision "float64")
   * is used in place, not copied (WikiKG2 at d = 500 is 5 GB): do not modify or transfer it while the model is used.
   * Or an EntityRowSource (openEntityTable(file)): the table stays on disk and is read in chunks when ranked.
   */
  entityEmbeddings: EmbeddingMatrix | EntityRowSource;
  /**
   * numRelations x width: the entity width (TransE, DistMult, ComplEx; RotatE as complex numbers), half of it
   * (RotatE phases; both for rotate and rotate-l2), or twice it (PairRE: [head factor | tail factor]).
   */
  relationEmbeddings: EmbeddingMatrix;
  /** How complex rows are stored; required for complex, rotate and rotate-l2 (never guessed). */
  complexLayout?: ComplexLayout;
  /** Accumulation: "float32" (default; float64 embeddings are rounded to float32) or "float64". */
  precision?: "float32" | "float64";
  /** rotate, rotate-l2 phase relations: angle = value x phaseScale (OGB: pi / embedding_range). Default 1 (radians). */
  phaseScale?: number;
  /** PairRE: divide entity rows by their L2 norm as the PairRE code does (default true). */
  normalizeEntities?: boolean;
}

const EMBEDDING_MODEL_KEYS = optionKeys<EmbeddingModelOptions>({
  interaction: 1,
  entityEmbeddings: 1,
  relationEmbeddings: 1,
  complexLayout: 1,
  precision: 1,
  phaseScale: 1,
  normalizeEntities: 1,
});

function matrix(name: string, value: unknown, wide: boolean): { data: FloatArray; rows: number; cols: number } {
  if (value === null || typeof value !== "object" || !("data" in value) || !("shape" in value)) {
    throw new KgrankInputError(
      name,
      `must be { data, shape: [rows, columns] } (e.g. what readNpy returns), got ${describe(value)}`,
    );
  }
  const { data, shape } = value as EmbeddingMatrix;
  if (!Array.isArray(shape) || shape.length !== 2 || !shape.every((s) => Number.isInteger(s) && s >= 1)) {
    throw new KgrankInputError(
      name,
      `must be a 2-D matrix [rows, columns] with at least one of each; got shape ${
        Array.isArray(shape)
          ? `[${shape.map((d) => (typeof d === "number" ? String(d) : describe(d))).join(", ")}]`
          : describe(shape)
      }`,
    );
  }
  const [rows, cols] = shape as [number, number];
  if (!(data instanceof Float32Array || data instanceof Float64Array || Array.isArray(data))) {
    throw new KgrankInputError(name, `data must be a Float32Array or Float64Array, got ${describe(data)}`);
  }
  if (data.length !== rows * cols) {
    throw new KgrankInputError(name, `has ${data.length} values but shape [${rows}, ${cols}] needs ${rows * cols}`);
  }
  const out = wide
    ? data instanceof Float64Array
      ? data
      : Float64Array.from(data)
    : data instanceof Float32Array
      ? data
      : Float32Array.from(data);
  for (let i = 0; i < out.length; i++) {
    const v = out[i]!;
    if (!Number.isFinite(v)) {
      throw new KgrankInputError(
        name,
        `row ${Math.floor(i / cols)}, column ${i % cols} is ${v}${Number.isFinite(data[i]!) ? ' after rounding to float32 (use precision: "float64")' : ""}: embeddings must be finite (check the training run or the export)`,
      );
    }
  }
  return { data: out, rows, cols };
}

export class EmbeddingModel {
  readonly interaction: InteractionName;
  readonly numEntities: number;
  readonly numRelations: number;
  /** Columns of an entity row (complex models: 2 x complex dimension). */
  readonly entityWidth: number;
  readonly relationWidth: number;
  readonly precision: "float32" | "float64";
  readonly complexLayout: ComplexLayout | null;
  readonly phaseScale: number;
  readonly #entity: FloatArray;
  readonly #relation: FloatArray;
  readonly #scale: FloatArray | null;
  readonly #source: EntityRowSource | null;
  readonly #normalize: boolean;
  /** The int8 screen's counters, added to by every screened call: calls, pairs, pairs rescored. */
  readonly #screenCounts = new Float64Array(3);
  /** The entity table quantised for the screen once, by the backend that made it (null: not made). */
  #screenTable: { kernels: Kernels; table: unknown } | null = null;
  // Query rows ranked whole under "auto" before the table was quantised (screenFor's rule counts them together).
  #autoRows = 0;
  // Why a memory plan kept the float32 path under "auto" (screenWhy), if one did.
  #screenWhy: string | null = null;
  // Whether a call the screen applies to (against every entity, a chunk or a shard of them) asked screenFor.
  #screenAsked = false;

  constructor(args: EmbeddingModelOptions) {
    const o = options("EmbeddingModel options", args, EMBEDDING_MODEL_KEYS);
    const interaction = o.interaction as InteractionName;
    if (!INTERACTIONS.includes(interaction)) {
      throw new KgrankInputError(
        "interaction",
        `must be one of ${INTERACTIONS.join(", ")}, got ${describe(o.interaction)}`,
      );
    }
    const precision = o.precision ?? "float32";
    if (precision !== "float32" && precision !== "float64") {
      throw new KgrankInputError("precision", `must be "float32" or "float64", got ${describe(precision)}`);
    }
    const wide = precision === "float64";
    const source = isRowSource(o.entityEmbeddings) ? o.entityEmbeddings : null;
    if (source && (source.rows < 1 || source.cols < 1)) {
      throw new KgrankInputError(
        "entityEmbeddings",
        `${source.name} has shape [${source.rows}, ${source.cols}]: at least one row and one column are needed`,
      );
    }
    const ent = source
      ? { data: wide ? new Float64Array(0) : new Float32Array(0), rows: source.rows, cols: source.cols }
      : matrix("entityEmbeddings", o.entityEmbeddings, wide);
    const rel = matrix("relationEmbeddings", o.relationEmbeddings, wide);
    const descriptor = interactionOf(interaction);
    const complex = descriptor.complex;
    let layout: ComplexLayout | null = null;
    if (complex) {
      if (o.complexLayout !== "halves" && o.complexLayout !== "interleaved") {
        throw new KgrankInputError(
          "complexLayout",
          `is required for ${interaction}: "halves" (real parts then imaginary parts, as OGB's KnowledgeGraphEmbedding ` +
            `code stores them) or "interleaved" (re, im pairs, as torch.view_as_real); got ${describe(o.complexLayout)}`,
        );
      }
      layout = o.complexLayout;
      if (ent.cols % 2 !== 0) {
        throw new KgrankInputError(
          "entityEmbeddings",
          `has ${ent.cols} columns; ${interaction} needs an even width (2 x complex dimension)`,
        );
      }
    } else if (o.complexLayout !== undefined) {
      throw new KgrankInputError(
        "complexLayout",
        `applies to ${joinAnd(INTERACTIONS.filter((i) => interactionOf(i).complex))} only, not ${interaction}; remove it`,
      );
    }
    const d = ent.cols;
    if (!descriptor.relationWidths(d).includes(rel.cols)) {
      const what = descriptor.relationWidthText(d);
      throw new KgrankInputError(
        "relationEmbeddings",
        `has ${rel.cols} columns; ${interaction} with ${d}-column entities needs ${what}`,
      );
    }
    if (o.normalizeEntities !== undefined && typeof o.normalizeEntities !== "boolean") {
      throw new KgrankInputError("normalizeEntities", `must be true or false, got ${describe(o.normalizeEntities)}`);
    }
    const phaseScale = o.phaseScale ?? 1;
    if (typeof phaseScale !== "number" || !Number.isFinite(phaseScale)) {
      throw new KgrankInputError("phaseScale", `must be a finite number, got ${describe(phaseScale)}`);
    }
    this.interaction = interaction;
    this.numEntities = ent.rows;
    this.numRelations = rel.rows;
    this.entityWidth = d;
    this.relationWidth = rel.cols;
    this.precision = precision;
    this.complexLayout = layout;
    this.phaseScale = phaseScale;
    this.#entity = ent.data;
    this.#relation = rel.data;
    this.#source = source;
    this.#normalize = descriptor.normalizesEntities && o.normalizeEntities !== false;
    this.#scale = source ? null : this.rowScales(ent.data, ent.rows);
  }

  /** The entity table's source when it is read in chunks (openEntityTable), else null. @internal */
  get entitySource(): EntityRowSource | null {
    return this.#source;
  }

  /**
   * The entity table as rows to read: its source, or (held in memory) one whose `view` hands out the rows in place,
   * so an entity shard of a table in memory is ranked without copies.
   * @internal
   */
  rowSource(): EntityRowSource & { view?: (begin: number, end: number) => FloatArray } {
    if (this.#source) return this.#source;
    this.#checkArrays();
    const data = this.#entity;
    const d = this.entityWidth;
    return {
      rows: this.numEntities,
      cols: d,
      name: "entityEmbeddings",
      storedRowBytes: d * data.BYTES_PER_ELEMENT,
      view: (begin, end) => data.subarray(begin * d, end * d),
      readRows: async (begin, end, into) => {
        into.set(data.subarray(begin * d, end * d));
      },
    };
  }

  /**
   * PairRE's per-row factor 1 / ||e||_2 (F.normalize, eps 1e-12) of `rows` entity rows in `data`, in the model's
   * accumulation type; null for every other interaction or without normalizeEntities. One function for the table in
   * memory and for each chunk read from disk, so both give the same factors.
   * @internal
   */
  rowScales(data: FloatArray, rows: number): FloatArray | null {
    if (!this.#normalize) return null;
    const d = this.entityWidth;
    const s = this.precision === "float64" ? new Float64Array(rows) : new Float32Array(rows);
    for (let e = 0; e < rows; e++) {
      let sq = 0;
      for (let k = 0; k < d; k++) sq += data[e * d + k]! ** 2;
      s[e] = 1 / Math.max(Math.sqrt(sq), 1e-12);
    }
    return s;
  }

  /**
   * The embeddings are used in place: a buffer transferred (detached) or resized smaller since the model was built
   * leaves fewer values than numEntities x entityWidth (numRelations x relationWidth); refused before any kernel call.
   */
  #checkArrays(): void {
    const arrays = [
      ["entityEmbeddings", this.#entity, this.numEntities * this.entityWidth],
      ["relationEmbeddings", this.#relation, this.numRelations * this.relationWidth],
    ] as const;
    for (const [name, data, size] of arrays) {
      if (data.length < size) {
        throw new KgrankInputError(
          name,
          `the EmbeddingModel's buffer was ${data.length === 0 ? "detached (transferred) or " : ""}shrunk (resized) ` +
            `after the model was built: ${data.length} of its ${size} values are left; keep the buffer alive and at ` +
            `its size for the model's lifetime (or build a new EmbeddingModel from a copy)`,
        );
      }
    }
  }

  /**
   * What the int8 screen (docs/screen.md) did for this model's rankings so far: kernel calls that screened, the
   * (query, candidate) pairs they saw, and how many of those the screen could not decide and scored exactly. Zero
   * where nothing screened (screen "off", the fallback or wasm backend, a float64 model, an interaction the screen
   * does not apply to). Ranks are the same either way.
   */
  get screenStats(): { calls: number; pairs: number; rescored: number } {
    const c = this.#screenCounts;
    return { calls: c[0]!, pairs: c[1]!, rescored: c[2]! };
  }

  /**
   * The screen field of a rankEmbeddings input of this model (null: the screen does not apply, or mode "off"). With
   * `whole` (the input's table is this model's whole table in memory) the table is quantised once per backend and
   * reused by every later call; otherwise each call quantises its own table (a chunk read from disk). Under "auto" a
   * table not yet quantised is quantised once the rows ranked whole under auto, this call's included, times the width
   * reach SCREEN_AUTO_WORK (the kernel's own rule for one call, counted over a run's batches, so that a run of many
   * small batches screens as one large batch would); until then the float32 path.
   * @internal
   */
  screenFor(
    mode: ScreenModeName,
    input: EmbeddingRankInput,
    threads: number | undefined,
    whole: boolean,
  ): EmbeddingScreen | null {
    if (!this.#screens(mode)) return null;
    this.#screenAsked = true;
    // A chunk read from disk or a shard: the addon quantises it per call, under auto by that call's rows alone.
    if (!whole) return { mode, table: null, stats: this.#screenCounts };
    const k = kernels();
    const held = this.#screenTable?.kernels === k;
    if (mode === "auto" && !held) this.#autoRows += input.anchor.length;
    // Auto on the whole table decides here, not by the addon's rule for a call given no table (its rows alone), which
    // would quantise the table per call after a failure to make it, or for a call the rows so far do not pay for.
    if (mode === "auto" && !held && this.#autoRows * this.entityWidth < SCREEN_AUTO_WORK) return null;
    let table: unknown;
    try {
      table = this.screenTableOn(k, () => k.screenTable!(input, threads));
    } catch (e) {
      // Auto takes the float32 path where the table cannot be made (memory), and does not try again.
      if (mode !== "auto") throw e;
      this.#autoRows = -Infinity;
      this.#screenWhy = `its int8 table could not be made (${e instanceof Error ? e.message : String(e)})`;
      return null;
    }
    return { mode, table, stats: this.#screenCounts };
  }

  /**
   * Why "auto" kept the float32 path for this model's last run that a memory plan decided (null: none did):
   * --verbose's words.
   * @internal
   */
  get screenWhy(): string | null {
    return this.#screenWhy;
  }

  /**
   * Whether any call of this model was one the screen applies to (ranks or top-k lists against every entity, a chunk
   * or a shard of them, on a backend and model that screen), whatever it then decided: false where every call had
   * given negatives, a candidate list or only relations to score.
   * @internal
   */
  get screenAsked(): boolean {
    return this.#screenAsked;
  }

  /**
   * Records why a memory plan kept the float32 path under "auto" (null: the plan kept the screen).
   * @internal
   */
  noteScreenWhy(why: string | null): void {
    this.#screenWhy = why;
  }

  /**
   * Bytes a table row costs in the screen's quantised copy of a table when `mode` would screen this model's rankings
   * (as screenFor decides), else 0: the row's two int8 levels (its width rounded up to 4, twice) and ten 4-byte terms
   * (native/core/screen.h ScreenTable: scale, slack, qnorm, corr, slack2, qnorm2, cnorm, corr2 and, for a distance,
   * offset; one spare), its rows padded to whole panels (SCREEN_PANEL). A table adds SCREEN_SLACK, and each query row
   * about twice its width (screenQueryBytes). The memory planners count them: a chunk's copy is made by the call that
   * ranks the chunk, a whole table's once. `rows`: the most query rows one call of the plan ranks; under "auto" a
   * call with fewer than SCREEN_AUTO_WORK / width never quantises a table, so its plan counts no copy.
   * @internal
   */
  screenRowBytes(mode: ScreenModeName, rows = Infinity): number {
    if (mode === "auto" && rows * this.entityWidth < SCREEN_AUTO_WORK) return 0;
    return this.#screens(mode) ? 2 * (Math.ceil(this.entityWidth / 4) * 4) + 40 : 0;
  }

  /**
   * Whether `mode` screens this model's rankings: not off, float32, a screened interaction, a backend with a screen,
   * and for "auto" a vector screen kernel (the native rule: auto never screens at the scalar level).
   */
  #screens(mode: ScreenModeName): boolean {
    if (mode === "off" || this.precision !== "float32" || !interactionOf(this.interaction).screens) return false;
    if (this.entityWidth > SCREEN_MAX_DIM) return false;
    if (mode === "auto" && !AUTO_SCREEN_KERNELS.has(backendInfo().screenKernel!)) return false;
    return kernels().screenTable !== undefined;
  }

  /**
   * This model's screen table on backend `k` (the one screenFor passes): the one it holds, or `make()`'s, kept.
   * @internal
   */
  screenTableOn(k: Kernels, make: () => unknown): unknown {
    if (this.#screenTable?.kernels !== k) this.#screenTable = { kernels: k, table: make() };
    return this.#screenTable.table;
  }

  /**
   * Holds `table` (read from a file by loadScreenTable) as this model's screen table on backend `k`.
   * @internal
   */
  useScreenTable(k: Kernels, table: unknown): void {
    this.#screenTable = { kernels: k, table };
  }

  /**
   * The rankEmbeddings kernel's input (src/contract/kernels.ts EmbeddingRankInput) for these keys (ids checked by the caller).
   * Named `job` as a method of the published class.
   * @internal
   */
  job(
    side: "head" | "tail",
    anchor: Int32Array,
    relation: Int32Array,
    truth: Int32Array,
    extra: Partial<
      Pick<
        EmbeddingRankInput,
        "candidates" | "candidateSets" | "negatives" | "negativesPerRow" | "excludeOffsets" | "excludeIds"
      >
    > = {},
  ): EmbeddingRankInput {
    if (this.#source) {
      throw new KgrankInputError(
        "model",
        `reads its entity table from ${this.#source.name} in chunks: rank it with RankEvaluator.addModel or ` +
          `predictTopKAsync (async), ` +
          `or build the model from the table in memory`,
      );
    }
    this.#checkArrays();
    const table = { data: this.#entity, rows: this.numEntities, offset: 0, scale: this.#scale };
    return this.sliceJob(side, table, anchor, relation, truth, extra);
  }

  /**
   * The kernel's input for rows of the entity table given apart from the model (a chunk read from disk, or gathered
   * rows): `table` holds rows entities offset .. offset + rows (ids in excludeIds are global), `scale` their
   * rowScales. With `anchorRows` the queries' anchor vectors are given, one per query.
   * @internal
   */
  sliceJob(
    side: "head" | "tail",
    table: { data: FloatArray; rows: number; offset: number; scale: FloatArray | null },
    anchor: Int32Array,
    relation: Int32Array,
    truth: Int32Array,
    extra: Partial<
      Pick<
        EmbeddingRankInput,
        | "candidates"
        | "candidateSets"
        | "negatives"
        | "negativesPerRow"
        | "excludeOffsets"
        | "excludeIds"
        | "anchorRows"
        | "anchorScale"
        | "trueScores"
      >
    > = {},
  ): EmbeddingRankInput {
    return {
      interaction: interactionOf(this.interaction).code,
      layout: this.complexLayout === "interleaved" ? 1 : 0,
      entityEmbeddings: table.data,
      relationEmbeddings: this.#relation,
      entityScale: table.scale,
      numEntities: table.rows,
      entityWidth: this.entityWidth,
      numRelations: this.numRelations,
      relationWidth: this.relationWidth,
      phaseScale: this.phaseScale,
      headSide: side === "head",
      anchor,
      relationIds: relation,
      truth,
      candidates: null,
      negatives: null,
      negativesPerRow: 0,
      excludeOffsets: null,
      excludeIds: null,
      entityOffset: table.offset,
      ...extra,
    };
  }

  /**
   * The model's score of each triple (b x 3), by the code that scores the ranking's columns. A score that is not
   * finite (an overflow of the accumulation) is an error naming its row (scoreOverflow).
   */
  scoreTriples(triples: Int32Array, opts: { threads?: number } = {}): Float64Array {
    const rows = triples.length / 3;
    if (!(triples instanceof Int32Array) || !Number.isInteger(rows)) {
      throw new KgrankInputError("triples", `must be an Int32Array of b x 3 ids, got ${describe(triples)}`);
    }
    this.#checkArrays();
    const anchor = new Int32Array(rows);
    const rel = new Int32Array(rows);
    const truth = new Int32Array(rows);
    for (let i = 0; i < rows; i++) {
      const [h, r, t] = [triples[3 * i]!, triples[3 * i + 1]!, triples[3 * i + 2]!];
      if (h < 0 || t < 0 || h >= this.numEntities || t >= this.numEntities || r < 0 || r >= this.numRelations) {
        throw new KgrankInputError(
          "triples",
          `row ${i}: (${h}, ${r}, ${t}) is outside ${this.numEntities} entities / ${this.numRelations} relations`,
        );
      }
      anchor[i] = h;
      rel[i] = r;
      truth[i] = t;
    }
    if (rows === 0) return new Float64Array(0);
    const out = new Float64Array(5 * rows + 2);
    kernels().rankEmbeddings(
      this.job("tail", anchor, rel, truth, { candidates: Int32Array.of(0) }),
      out,
      threadCount(opts.threads),
    );
    // The kernel stops at the first NaN score of a true triple (status 3) and leaves the later rows 0.
    const status = out[5 * rows]!;
    if (status !== 0 && status !== 3) {
      throw new KgrankInputError(
        "triples",
        `could not be scored (status ${status}): out of memory; pass fewer triples per call or fewer threads`,
      );
    }
    const first = status === 3 ? out[5 * rows + 1]! : rows;
    const scores = out.slice(4 * rows, 5 * rows);
    for (let i = 0; i < rows; i++) {
      if (i === first || !Number.isFinite(scores[i]!)) {
        const [h, r, t] = [triples[3 * i], triples[3 * i + 1], triples[3 * i + 2]];
        throw scoreOverflow(this, "model", `row ${i} (${h}, ${r}, ${t})`, i === first ? NaN : scores[i]!);
      }
    }
    return scores;
  }

  /**
   * Relation prediction (h, ?, t): for each triple of `triples` (b x 3; its relation is checked as an id, not
   * scored) the score of (h, r, t) for every relation r, row-major b x numRelations in the model's accumulation type
   * (a Float32Array for precision "float32", a Float64Array for "float64"): RelationRanker.rank's `scores`. Each score
   * is, bit for bit, the one the model gives the tail t of (h, r, ?) when ranking entities (scoreTriples, addModel).
   * A score that is not finite is an error naming its row and relation (scoreOverflow).
   */
  scoreRelations(
    triples: Int32Array | ArrayLike<number>,
    opts: { threads?: number } = {},
  ): Float32Array | Float64Array {
    const ids = tripleArray("triples", triples, this.numEntities, this.numRelations);
    const threads = threadCount(options("scoreRelations options", opts, SCORE_KEYS).threads);
    if (this.#source) {
      throw new KgrankInputError(
        "model",
        `reads its entity table from ${this.#source.name} in chunks: scoreRelations needs the table in memory; ` +
          `build the model from the table read whole (readNpy, readSafetensors)`,
      );
    }
    const rows = ids.length / 3;
    const R = this.numRelations;
    const wide = this.precision === "float64";
    checkTableLength("triples", "rows x numRelations", rows * R, wide ? 8 : 4);
    const scores = allocateTable("scoreRelations", "triples", rows * R * (wide ? 8 : 4), () =>
      wide ? new Float64Array(rows * R) : new Float32Array(rows * R),
    );
    if (rows === 0) return scores;
    const heads = new Int32Array(rows);
    const tails = new Int32Array(rows);
    for (let i = 0; i < rows; i++) {
      heads[i] = ids[3 * i]!;
      tails[i] = ids[3 * i + 2]!;
    }
    kernels().scoreRelations(this.job("tail", heads, new Int32Array(rows), tails), scores, threads);
    for (let j = 0; j < scores.length; j++) {
      if (!Number.isFinite(scores[j]!)) {
        const i = Math.floor(j / R);
        throw scoreOverflow(this, "model", `row ${i} (${heads[i]}, ${j % R}, ${tails[i]})`, scores[j]!);
      }
    }
    return scores;
  }
}

/** "a, b and c". */
function joinAnd(xs: readonly string[]): string {
  return xs.length < 2 ? xs.join("") : `${xs.slice(0, -1).join(", ")} and ${xs[xs.length - 1]}`;
}

const SCORE_KEYS = optionKeys<{ threads?: number }>({ threads: 1 });

/**
 * The error for a score of `model` that is not finite. Its embeddings are finite (checked when it was built), so a
 * NaN or infinite score is an overflow of the accumulation's float type (float32: beyond 3.4e38, e.g. entries of 1e19
 * multiplied), from which no rank can be read.
 */
export function scoreOverflow(model: EmbeddingModel, argument: string, where: string, score: number): KgrankInputError {
  return new KgrankInputError(
    argument,
    `the ${model.interaction} model's score of ${where} is ${score}: ${model.precision} overflow of its finite ` +
      `embeddings, so the scores cannot be ranked; rescale the embeddings (${interactionOf(model.interaction).rescale}, which ` +
      `changes no rank)` +
      (model.precision === "float32" ? ' or accumulate in float64 (precision: "float64")' : ""),
  );
}
