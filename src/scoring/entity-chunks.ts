/**
 * An entity table read from disk within a memory budget: the pieces the streamed ranking
 * (src/evaluation/streamed-model.ts) and the streamed top-k (./top-k.ts) share. Rows a block of queries needs
 * (anchors, true answers) are gathered by id, nearby ids in one read; the table itself is read once per block,
 * chunk after chunk, the next chunk read while the current one is used (two buffers). A table held in memory is
 * handed out in place, without buffers.
 */
import { totalmem } from "node:os";

import { scaleBytes } from "../checks/alloc";
import { KgrankInputError } from "../checks/errors";
import { describe } from "../checks/validate";
import type { CallControl } from "../backend/call-control";
import type { FloatArray } from "../contract/kernels";
import {
  type EmbeddingModel,
  type EntityRowSource,
  SCREEN_PANEL,
  SCREEN_SLACK,
  screenTableBytes,
} from "./embedding-model";
import { interactionOf } from "./interactions";

/** A memoryBudget option checked (bytes), or the default: a quarter of the machine's memory. */
export function memoryBudget(value: unknown): number {
  if (value === undefined) return Math.floor(totalmem() / 4);
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new KgrankInputError("memoryBudget", `must be a whole number of bytes >= 1, got ${describe(value)}`);
  }
  return value;
}

/** An onPlan option checked: a function, or undefined. */
export function planOption(value: unknown): ((plan: StreamPlan) => void) | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "function") {
    throw new KgrankInputError("onPlan", `must be a function (plan) => void, got ${describe(value)}`);
  }
  return value as (plan: StreamPlan) => void;
}

/** A readable size: 1.50 GiB, 12.0 MiB, 512 B; `up`: rounded up, so that a budget it names is enough. */
export function formatBytes(n: number, up = false): string {
  const [v, unit] = scaleBytes(n);
  if (unit === "B") return `${up ? Math.ceil(v) : v} ${unit}`;
  const digits = v < 10 ? 2 : 1;
  return `${(up ? Math.ceil(v * 10 ** digits) / 10 ** digits : v).toFixed(digits)} ${unit}`;
}

/**
 * Two sizes as a message names them, e.g. a budget and the least it must be: each as formatBytes writes it (`need`
 * rounded up), both with their exact bytes when the rounded forms would read as equal.
 */
export function formatBytesApart(have: number, need: number): [string, string] {
  const a = formatBytes(have);
  const b = formatBytes(need, true);
  if (a !== b || have === need) return [a, b];
  const exact = (n: number) => `${n.toLocaleString("en-US")} bytes`;
  return [`${a} (${exact(have)})`, `${b} (${exact(need)})`];
}

/** What a refusal adds after the least budget: how much reads the table once. */
export const onceHint = (least: number, onePass: number) =>
  least < onePass
    ? ` (more makes fewer passes over the table; ${formatBytes(onePass, true)} reads it once)`
    : " (the table is then read once)";

/** A table chunk holds at least this many rows (the kernels' candidate chunk) when the range has them. */
export const MIN_CHUNK_ROWS = 512;
/** A query block holds at least this many rows when there are: each pass over the table serves that many queries. */
export const MIN_BLOCK_ROWS = 64;

/**
 * How a run reads an entity table from disk within its memory budget (the `onPlan` option of RankEvaluator.addModel
 * and predictTopKAsync; `kgrank evaluate` / `predict --memory` print it when the table is read more than once).
 */
export interface StreamPlan {
  /** The table fits the budget: it is read once, whole, and ranked as a table in memory. */
  whole: boolean;
  /** Times the table (or the entity range) is read from start to end: one per query block. */
  passes: number;
  /** Query rows ranked per pass (the largest block). */
  blockRows: number;
  /** Table rows per read (the whole range when `whole`). */
  chunkRows: number;
  /** Reads per pass. */
  chunks: number;
  /**
   * Bytes the run allocates for the table's rows: the whole table, or two chunks (and their stored bytes); with the
   * int8 screen, its quantised copy of the table (or of one chunk) too.
   */
  tableBytes: number;
  /** The budget the run was given, and the smallest budget with which the table is read once. */
  budget: number;
  onePassBudget: number;
}

/** A run's reads of an entity table: one open file (openRun) when the source has it, checked when done, closed. */
export type RowReader = EntityRowSource & {
  view?: ((begin: number, end: number) => FloatArray) | undefined;
  check(): Promise<void>;
  close(): Promise<void>;
};

/** Opens a run's reads of `source` (EntityRowSource.openRun when it has one). */
export async function openReader(
  source: EntityRowSource & { view?: (begin: number, end: number) => FloatArray },
): Promise<RowReader> {
  if (typeof source.openRun === "function") {
    const run = await source.openRun();
    return {
      rows: run.rows,
      cols: run.cols,
      name: run.name,
      storedRowBytes: run.storedRowBytes,
      readRows: (begin, end, into, scratch) => run.readRows(begin, end, into, scratch),
      check: () => run.check(),
      close: () => run.close(),
    };
  }
  return {
    rows: source.rows,
    cols: source.cols,
    name: source.name,
    storedRowBytes: source.storedRowBytes,
    view: source.view,
    readRows: (begin, end, into, scratch) => source.readRows(begin, end, into, scratch),
    check: async () => {},
    close: async () => {},
  };
}

/**
 * The whole table [first, last) read into one array of the accumulation type (`wide`: float64), in reads of at most
 * 8 MiB of stored bytes (one scratch buffer of that size when the values are converted).
 */
export async function readWhole(
  source: EntityRowSource,
  first: number,
  last: number,
  wide: boolean,
  call?: CallControl,
): Promise<FloatArray> {
  const d = source.cols;
  const n = last - first;
  const data = wide ? new Float64Array(n * d) : new Float32Array(n * d);
  const step = Math.max(1, Math.floor(RUN_BYTES / source.storedRowBytes));
  const scratch = new Uint8Array(Math.min(n, step) * source.storedRowBytes);
  for (let a = 0; a < n; a += step) {
    call?.check();
    const b = Math.min(n, a + step);
    await source.readRows(first + a, first + b, data.subarray(a * d, b * d), scratch);
  }
  return data;
}

/**
 * A reader of the range [first, first + rows) read whole into `data`, handing those rows out in place; rows outside
 * the range (an entity shard's anchors and true answers) are read from `file`.
 */
export function inMemoryReader(file: RowReader, data: FloatArray, first: number, d: number): RowReader {
  const last = first + data.length / d;
  return {
    rows: file.rows,
    cols: d,
    name: file.name,
    storedRowBytes: d * data.BYTES_PER_ELEMENT,
    view: (a, b) => data.subarray((a - first) * d, (b - first) * d),
    readRows: async (a, b, into, scratch) => {
      if (a >= first && b <= last) into.set(data.subarray((a - first) * d, (b - first) * d));
      else await file.readRows(a, b, into, scratch);
    },
    check: () => file.check(),
    close: async () => {},
  };
}

/** Runs of sorted ids closer than this many bytes of rows are read as one range. */
const GAP_BYTES = 256 << 10;
/** Longest range read for a gather. */
const RUN_BYTES = 8 << 20;

/** Sorted unique ids of several arrays. */
export function uniqueIds(arrays: Int32Array[]): Int32Array {
  let n = 0;
  for (const a of arrays) n += a.length;
  const all = new Int32Array(n);
  let o = 0;
  for (const a of arrays) {
    all.set(a, o);
    o += a.length;
  }
  all.sort();
  let w = 0;
  for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[i - 1]) all[w++] = all[i]!;
  return all.slice(0, w);
}

/** Index of each id in the sorted unique `ids`. */
export function localIds(ids: Int32Array, of: Int32Array): Int32Array {
  const out = new Int32Array(of.length);
  for (let i = 0; i < of.length; i++) {
    const v = of[i]!;
    let lo = 0;
    let hi = ids.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ids[mid]! < v) lo = mid + 1;
      else hi = mid;
    }
    out[i] = lo;
  }
  return out;
}

/** The rows of the sorted unique `ids` read from the source into `into` (ids.length x cols). */
export async function gather(
  source: EntityRowSource,
  ids: Int32Array,
  into: FloatArray,
  call?: CallControl,
): Promise<void> {
  const d = source.cols;
  const gap = Math.max(1, Math.floor(GAP_BYTES / source.storedRowBytes));
  const run = Math.max(1, Math.floor(RUN_BYTES / (d * into.BYTES_PER_ELEMENT)));
  const wide = into instanceof Float64Array;
  for (let i = 0; i < ids.length;) {
    call?.check();
    let j = i;
    while (j + 1 < ids.length && ids[j + 1]! - ids[j]! <= gap && ids[j + 1]! - ids[i]! < run) j++;
    const a = ids[i]!;
    const b = ids[j]! + 1;
    if (b - a === j - i + 1) {
      await source.readRows(a, b, into.subarray(i * d, (j + 1) * d));
    } else {
      const tmp = wide ? new Float64Array((b - a) * d) : new Float32Array((b - a) * d);
      await source.readRows(a, b, tmp);
      for (let k = i; k <= j; k++) into.set(tmp.subarray((ids[k]! - a) * d, (ids[k]! - a + 1) * d), k * d);
    }
    i = j + 1;
  }
}

/** Rows of the entity table: data (rows x width), the id of its first row, PairRE's factors (rowScales). */
export interface TableChunk {
  data: FloatArray;
  rows: number;
  offset: number;
  scale: FloatArray | null;
}

/**
 * What a refused budget's message adds when the chunks carry the screen's int8 copy (`screenRowBytes` a row, 0: no
 * screen): the planners' errors say it the same way.
 */
export function screenShare(screenRowBytes: number): string {
  return screenRowBytes > 0
    ? ` (of which the screen's int8 copy takes ${screenRowBytes} bytes a row; screen off needs less)`
    : "";
}

/**
 * The table's rows [first, last) in chunks of `rows` rows, read twice-buffered. `rowBytes` is what one row of a chunk
 * costs: two buffers in the accumulation type, their stored bytes when they must be converted, PairRE's factors (a
 * table in memory: the factors alone, plus a byte so a budget divides by it).
 */
export class TableChunks {
  readonly rowBytes: number;
  #rows = 1;
  #bufs: FloatArray[] | null = null;
  #scratch: Uint8Array[] | null = null;
  #source: EntityRowSource & { view?: ((begin: number, end: number) => FloatArray) | undefined };
  readonly #convert: boolean;
  readonly #wide: boolean;

  constructor(
    private readonly model: EmbeddingModel,
    readonly first: number,
    readonly last: number,
    source: EntityRowSource & { view?: ((begin: number, end: number) => FloatArray) | undefined } = model.rowSource(),
    /** Bytes a row costs in the screen's quantised copy of a chunk (EmbeddingModel.screenRowBytes; 0: no screen). */
    readonly screenRowBytes = 0,
  ) {
    const d = model.entityWidth;
    const wide = model.precision === "float64";
    const B = wide ? 8 : 4;
    const extra = interactionOf(model.interaction).memory;
    this.#source = source;
    this.#wide = wide;
    this.#convert = source.storedRowBytes !== d * B;
    this.rowBytes =
      "view" in source && source.view
        ? (extra.rowFactor ? B : 0) + 1
        : 2 * (d * B + (this.#convert ? source.storedRowBytes : 0) + (extra.rowFactor ? B : 0));
  }

  /**
   * Bytes of the whole range read at once: its rows in the accumulation type (PairRE: its factors too) and the
   * screen's copy of it.
   */
  get wholeBytes(): number {
    const B = this.model.precision === "float64" ? 8 : 4;
    const factor = interactionOf(this.model.interaction).memory.rowFactor ? B : 0;
    const rows = this.last - this.first;
    return rows * (this.model.entityWidth * B + factor) + screenTableBytes(rows, this.screenRowBytes);
  }

  /**
   * Bytes a chunk of `rows` costs: its buffers (two, the next read while one is ranked) and the screen's copy of the
   * chunk that ranks it (one call at a time).
   */
  bytesFor(rows: number): number {
    return rows * this.rowBytes + screenTableBytes(rows, this.screenRowBytes);
  }

  /** Rows per chunk: as many as `bytes` hold, a multiple of 512 when more than 512, at most the range, at least 1. */
  fit(bytes: number): number {
    // The screen's copy pads to whole panels and adds its slack: a first guess as if a panel more were padding, then
    // the largest count whose bytes (bytesFor) fit.
    const slack = this.screenRowBytes === 0 ? 0 : SCREEN_PANEL * this.screenRowBytes + SCREEN_SLACK;
    let rows = Math.min(this.last - this.first, Math.floor((bytes - slack) / (this.rowBytes + this.screenRowBytes)));
    while (rows < this.last - this.first && this.bytesFor(rows + 1) <= bytes) rows++;
    if (rows > 512 && rows < this.last - this.first) rows -= rows % 512;
    this.#rows = Math.max(1, rows);
    if (this.#bufs && this.#bufs[0]!.length < this.#rows * this.model.entityWidth) {
      this.#bufs = null;
      this.#scratch = null;
    }
    return this.#rows;
  }

  /** Reads the chunks from `source` (a run's reader of the same table) from now on. */
  readFrom(source: EntityRowSource): void {
    this.#source = source;
  }

  /** Rows per chunk (fit's choice). */
  get chunkRows(): number {
    return this.#rows;
  }

  /**
   * Bytes of the chunk buffers at the chosen size (nothing for a table in memory, handed out in place), with the
   * screen's copy of a chunk.
   */
  get bufferBytes(): number {
    const screen = screenTableBytes(this.#rows, this.screenRowBytes);
    return ("view" in this.#source && this.#source.view ? 0 : this.#rows * this.rowBytes) + screen;
  }

  get count(): number {
    return Math.ceil((this.last - this.first) / this.#rows);
  }

  /**
   * The chunks in order; the next one is read while the caller uses the current one (which stays valid until the
   * loop asks for the next). A read still running when the loop ends early (a break, a throw) ends first.
   */
  async *each(call?: CallControl): AsyncGenerator<TableChunk> {
    const source = this.#source;
    const d = this.model.entityWidth;
    const view = "view" in source ? source.view : undefined;
    const rows = this.#rows;
    if (!view) {
      this.#bufs ??= [0, 1].map(() => (this.#wide ? new Float64Array(rows * d) : new Float32Array(rows * d)));
      if (this.#convert) this.#scratch ??= [0, 1].map(() => new Uint8Array(rows * source.storedRowBytes));
    }
    const chunks = this.count;
    const read = (c: number) => {
      if (view) return Promise.resolve();
      const a = this.first + c * rows;
      const b = Math.min(this.last, a + rows);
      const p = source.readRows(a, b, this.#bufs![c % 2]!.subarray(0, (b - a) * d), this.#scratch?.[c % 2]);
      p.catch(() => {}); // awaited below; a rejection while a chunk is used is not unhandled
      return p;
    };
    let pending: Promise<void> | null = read(0);
    try {
      for (let c = 0; c < chunks; c++) {
        await pending;
        call?.check();
        pending = c + 1 < chunks ? read(c + 1) : null;
        const a = this.first + c * rows;
        const n = Math.min(this.last, a + rows) - a;
        const data = view ? view(a, a + n) : this.#bufs![c % 2]!.subarray(0, n * d);
        yield { data, rows: n, offset: a, scale: this.model.rowScales(data, n) };
      }
    } finally {
      await pending?.catch(() => {});
    }
  }
}
