/**
 * Entity tables read in row chunks (openEntityTable): what a model whose table is larger than the memory it may use
 * ranks from. A .npy file (C order) or one tensor of a safetensors file, float16, bfloat16, float32 or float64,
 * converted while read to the model's accumulation type exactly as the in-memory readers convert it (float16 through
 * the same table, float64 to float32 rounded as Float32Array.from rounds), so a chunk holds the values the whole
 * table in memory would hold. Only the header is read when the table is opened, and the file's identity noted (size,
 * modification and change times, device and inode). A run (one ranking or top-k call) reads through one file
 * descriptor (openRun) and checks before each read, and once more when its reads are done, that the file is still the
 * one opened: the descriptor's size and times (a rewrite in place) and the path's device and inode (another file
 * renamed over it, as checkpoint writers save); a change is refused, never mixed into the results.
 */
import { open, stat, type FileHandle } from "node:fs/promises";
import { type BigIntStats, closeSync, fstatSync } from "node:fs";

import { kernels } from "../backend/backend";
import { KgrankInputError } from "../checks/errors";
import { allocate } from "../checks/alloc";
import { describe, optionKeys, options } from "../checks/validate";
import { turn } from "../contract/event-loop";
import type { EntityRowReader, EntityRowSource } from "../scoring/embedding-model";
import { fileError, openRegularFile } from "./files";
import { type ArrayFormat, arrayFormat, formatList, type StoredArray } from "./formats";
import { halfTable, ITEM_SIZE, type NpyDtype } from "./npy";

/** Options of openEntityTable. */
export interface OpenEntityTableOptions {
  /** A safetensors file's tensor; needed when the file holds more than one. */
  tensor?: string;
  /** The argument (or CLI flag) errors name; default "entityEmbeddings". */
  argument?: string;
}

const OPEN_KEYS = optionKeys<OpenEntityTableOptions>({ tensor: 1, argument: 1 });

const FLOATS: readonly NpyDtype[] = ["f2", "bf16", "f4", "f8"];
/** Values converted between two event-loop turns (a few ms). */
const STEP = 1 << 22;
/** Values checked between two event-loop turns (natively a few ms; the fallback's loop about 40 ms). */
const CHECK_STEP = 1 << 25;
/** Largest single read (Linux reads at most 2 GiB - 4 KiB per call). */
const MAX_READ = 1 << 30;
const hostLittle = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** What tells one version of a file from another: its size, times and inode. */
interface FileIdentity {
  size: number;
  mtimeNs: bigint;
  ctimeNs: bigint;
  dev: bigint;
  ino: bigint;
}

function identityOf(st: BigIntStats): FileIdentity {
  return { size: Number(st.size), mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs, dev: st.dev, ino: st.ino };
}

const isoTime = (ns: bigint) => new Date(Number(ns / 1_000_000n)).toISOString();

/** A 2-D float table in a file, read by row ranges. */
export class EntityTableFile implements EntityRowSource {
  readonly rows: number;
  readonly cols: number;
  readonly name: string;
  readonly storedRowBytes: number;
  /** The file's element type: f2 (float16), bf16, f4 or f8. */
  readonly dtype: NpyDtype;
  readonly #path: string;
  readonly #argument: string;
  readonly #dataOffset: number;
  readonly #identity: FileIdentity;
  readonly #littleEndian: boolean;
  /** The row of each entity id when the rows are in another order (withRowOrder), else undefined. */
  readonly rowOfEntity: Int32Array | undefined;

  private constructor(
    file: string,
    argument: string,
    header: TableHeader,
    identity: FileIdentity,
    rowOfEntity?: Int32Array,
  ) {
    this.#path = file;
    this.#argument = argument;
    this.name = file;
    this.rows = header.rows;
    this.cols = header.cols;
    this.dtype = header.dtype;
    this.storedRowBytes = header.cols * ITEM_SIZE[header.dtype];
    this.#dataOffset = header.dataOffset;
    this.#identity = identity;
    this.#littleEndian = header.littleEndian;
    this.rowOfEntity = rowOfEntity;
  }

  /**
   * This table with its rows in another order than the entity ids: `rowOfEntity[id]` is entity id's row, a
   * permutation of the rows (a model directory's id map gives it). Ranking reads the rows in file order and maps
   * each id to its row; the ranks equal those of the table reordered in memory.
   */
  withRowOrder(rowOfEntity: Int32Array): EntityTableFile {
    if (!(rowOfEntity instanceof Int32Array) || rowOfEntity.length !== this.rows) {
      throw new KgrankInputError(
        "rowOfEntity",
        `must be an Int32Array of ${this.rows} rows (one per entity id), got ${describe(rowOfEntity)}`,
      );
    }
    const seen = new Uint8Array(this.rows);
    for (let id = 0; id < this.rows; id++) {
      const r = rowOfEntity[id]!;
      if (r < 0 || r >= this.rows || seen[r]) {
        throw new KgrankInputError(
          "rowOfEntity",
          `entity ${id}'s row ${r} is ${r < 0 || r >= this.rows ? `not a row of ${this.name}'s ${this.rows}` : "another entity's too"}: give each entity its own row (a permutation)`,
        );
      }
      seen[r] = 1;
    }
    const header = {
      rows: this.rows,
      cols: this.cols,
      dtype: this.dtype,
      dataOffset: this.#dataOffset,
      littleEndian: this.#littleEndian,
    };
    return new EntityTableFile(this.#path, this.#argument, header, this.#identity, rowOfEntity.slice());
  }

  /** Opens `file` (a format of src/io/formats.ts whose arrays can be located: .npy, .safetensors) and checks its header; no data is read. */
  static open(file: string, opts: OpenEntityTableOptions = {}): EntityTableFile {
    const o = options("openEntityTable options", opts, OPEN_KEYS);
    const argument = o.argument ?? "entityEmbeddings";
    if (typeof argument !== "string")
      throw new KgrankInputError("argument", `must be a string, got ${describe(argument)}`);
    const inPlace = (f: ArrayFormat) => f.locate !== null;
    if (typeof file !== "string" || file === "")
      throw new KgrankInputError(argument, `must be a path to a ${formatList(inPlace)} file`);
    const format = arrayFormat(file);
    if (!format?.locate) {
      throw new KgrankInputError(
        argument,
        `${file}: a table read in chunks must be a ${formatList(inPlace)} file` +
          (format?.why ? ` (${format.why(file)})` : ""),
      );
    }
    if (o.tensor !== undefined && (typeof o.tensor !== "string" || !format.named)) {
      throw new KgrankInputError(
        "tensor",
        `names a tensor of a ${formatList((f) => inPlace(f) && f.named)} file; got ${describe(o.tensor)} for ${file}`,
      );
    }
    const fd = openRegularFile(file, argument);
    try {
      let identity: FileIdentity;
      try {
        identity = identityOf(fstatSync(fd, { bigint: true }));
      } catch (e) {
        throw fileError(argument, file, e);
      }
      const size = identity.size;
      const header = tableHeader(format.locate(fd, file, size, argument, o.tensor), file, argument);
      return new EntityTableFile(file, argument, header, identity);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Reads rows [begin, end) into `into` ((end - begin) x cols values). `scratch` (at least (end - begin) x
   * storedRowBytes bytes) receives the stored bytes when they must be converted; without it one is allocated. Each
   * call opens the file and checks it is the one opened; a run of many reads keeps one descriptor (openRun).
   */
  async readRows(begin: number, end: number, into: Float32Array | Float64Array, scratch?: Uint8Array): Promise<void> {
    const run = await this.openRun();
    try {
      await run.readRows(begin, end, into, scratch);
    } finally {
      await run.close();
    }
  }

  /**
   * One run's reads through one file descriptor: each read, and check() (called when the run's reads are done),
   * refuses the file when it is no longer the one opened (its size, modification or change time differ, or another
   * file is at its path), with a KgrankInputError naming the argument. close() when the run ends.
   */
  async openRun(): Promise<EntityRowReader> {
    let fh: FileHandle;
    try {
      fh = await open(this.#path, "r");
    } catch (e) {
      throw fileError(this.#argument, this.name, e);
    }
    let closed = false;
    const check = async () => {
      if (closed) throw new Error(`${this.name}: the run's reads were closed`);
      await this.#checkSame(fh);
    };
    try {
      await check();
    } catch (e) {
      await fh.close();
      throw e;
    }
    return {
      rows: this.rows,
      cols: this.cols,
      name: this.name,
      storedRowBytes: this.storedRowBytes,
      readRows: async (begin, end, into, scratch) => {
        await check();
        await this.#readRows(fh, begin, end, into, scratch);
      },
      check,
      close: async () => {
        if (closed) return;
        closed = true;
        await fh.close();
      },
    };
  }

  /** The kept descriptor's size and times, and the path's device and inode, against those noted when opened. */
  async #checkSame(fh: FileHandle): Promise<void> {
    let now: FileIdentity;
    let atPath: FileIdentity;
    try {
      now = identityOf(await fh.stat({ bigint: true }));
      atPath = identityOf(await stat(this.#path, { bigint: true }));
    } catch (e) {
      throw fileError(this.#argument, this.name, e);
    }
    const was = this.#identity;
    let what: string | null = null;
    if (now.dev !== was.dev || now.ino !== was.ino || atPath.dev !== was.dev || atPath.ino !== was.ino) {
      what = `another file is at its path now (inode ${atPath.ino}, was ${was.ino} when opened): it was replaced`;
    } else if (now.size !== was.size) {
      what = `${was.size} bytes when opened, ${now.size} now`;
    } else if (now.mtimeNs !== was.mtimeNs || now.ctimeNs !== was.ctimeNs) {
      what =
        now.mtimeNs !== was.mtimeNs
          ? `modified at ${isoTime(now.mtimeNs)}; it was last modified at ${isoTime(was.mtimeNs)} when opened`
          : `its status changed at ${isoTime(now.ctimeNs)}; it was ${isoTime(was.ctimeNs)} when opened`;
    }
    if (what !== null) {
      throw new KgrankInputError(
        this.#argument,
        `${this.name} changed while it was read (${what}): do not rewrite a table during a run (save the next ` +
          `checkpoint under another name), then run again`,
      );
    }
  }

  async #readRows(
    fh: FileHandle,
    begin: number,
    end: number,
    into: Float32Array | Float64Array,
    scratch?: Uint8Array,
  ): Promise<void> {
    if (!(Number.isSafeInteger(begin) && Number.isSafeInteger(end) && 0 <= begin && begin <= end && end <= this.rows)) {
      throw new KgrankInputError("rows", `[${begin}, ${end}) is not a row range of ${this.name}'s ${this.rows} rows`);
    }
    const n = (end - begin) * this.cols;
    if (into.length < n)
      throw new KgrankInputError("into", `holds ${into.length} values; rows [${begin}, ${end}) need ${n}`);
    const bytes = (end - begin) * this.storedRowBytes;
    const direct =
      hostLittle === this.#littleEndian &&
      ((this.dtype === "f4" && into instanceof Float32Array) || (this.dtype === "f8" && into instanceof Float64Array));
    let raw: Uint8Array;
    if (direct) raw = new Uint8Array(into.buffer, into.byteOffset, bytes);
    else if (scratch && scratch.byteLength >= bytes) raw = scratch.subarray(0, bytes);
    else raw = allocate(this.#argument, this.name, bytes, () => new Uint8Array(new ArrayBuffer(bytes)));
    await this.#read(fh, raw, this.#dataOffset + begin * this.storedRowBytes);
    if (!direct) await this.#convert(raw, into, n);
    await this.#checkFinite(into, n, begin);
  }

  async #read(fh: FileHandle, raw: Uint8Array, position: number): Promise<void> {
    try {
      for (let done = 0; done < raw.byteLength;) {
        const want = Math.min(raw.byteLength - done, MAX_READ);
        const { bytesRead } = await fh.read(raw, done, want, position + done);
        if (bytesRead === 0) {
          throw new KgrankInputError(
            this.#argument,
            `${this.name} ended at byte ${position + done} (truncated while read)`,
          );
        }
        done += bytesRead;
      }
    } catch (e) {
      if (e instanceof KgrankInputError) throw e;
      throw fileError(this.#argument, this.name, e);
    }
  }

  /** Stored bytes to the accumulation type, in steps between event-loop turns. */
  async #convert(raw: Uint8Array, into: Float32Array | Float64Array, n: number): Promise<void> {
    const little = this.#littleEndian;
    const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    const table = this.dtype === "f2" ? halfTable() : null;
    for (let i0 = 0; i0 < n; i0 += STEP) {
      const stop = Math.min(n, i0 + STEP);
      switch (this.dtype) {
        case "f2":
          for (let i = i0; i < stop; i++) into[i] = table![dv.getUint16(2 * i, little)]!;
          break;
        case "bf16":
          // bfloat16 is the top half of a float32: widening is exact.
          for (let i = i0; i < stop; i++) into[i] = bf16(dv.getUint16(2 * i, little));
          break;
        case "f4":
          for (let i = i0; i < stop; i++) into[i] = dv.getFloat32(4 * i, little);
          break;
        default:
          // float64 to a Float32Array rounds to nearest, as Float32Array.from does for the table in memory.
          for (let i = i0; i < stop; i++) into[i] = dv.getFloat64(8 * i, little);
      }
      if (stop < n) await turn();
    }
  }

  /** Refuses the first value that is not finite (the kernels' firstNonFinite, in steps between event-loop turns). */
  async #checkFinite(into: Float32Array | Float64Array, n: number, begin: number): Promise<void> {
    const k = kernels();
    for (let i0 = 0; i0 < n; i0 += CHECK_STEP) {
      const stop = Math.min(n, i0 + CHECK_STEP);
      const found = k.firstNonFinite(into.subarray(i0, stop));
      if (found >= 0) {
        const i = i0 + found;
        const v = into[i]!;
        const row = begin + Math.floor(i / this.cols);
        throw new KgrankInputError(
          this.#argument,
          `${this.name} row ${row}, column ${i % this.cols} is ${v}${this.dtype === "f8" && into instanceof Float32Array ? " (after rounding to float32)" : ""}: ` +
            `embeddings must be finite (check the training run or the export)`,
        );
      }
      if (stop < n) await turn();
    }
  }
}

const bf16Bits = new Uint32Array(1);
const bf16Value = new Float32Array(bf16Bits.buffer);
function bf16(h: number): number {
  bf16Bits[0] = h << 16;
  return bf16Value[0]!;
}

/** Opens an entity table for reading in row chunks (see EntityTableFile). */
export function openEntityTable(file: string, opts: OpenEntityTableOptions = {}): EntityTableFile {
  return EntityTableFile.open(file, opts);
}

interface TableHeader {
  rows: number;
  cols: number;
  dtype: NpyDtype;
  dataOffset: number;
  littleEndian: boolean;
}

function tableShape(shape: readonly number[], dtype: NpyDtype, file: string, argument: string): [number, number] {
  if (!FLOATS.includes(dtype)) {
    throw new KgrankInputError(
      argument,
      `${file} has dtype ${dtype}; embeddings must be float16, bfloat16, float32 or float64`,
    );
  }
  if (shape.length !== 2 || shape[0]! < 1 || shape[1]! < 1) {
    throw new KgrankInputError(
      argument,
      `${file} has shape [${shape.join(", ")}]; an entity table must be 2-D [rows, dim] with at least one of each`,
    );
  }
  return [shape[0]!, shape[1]!];
}

function tableHeader(stored: StoredArray, file: string, argument: string): TableHeader {
  const [rows, cols] = tableShape(stored.shape, stored.dtype, file, argument);
  if (stored.fortranOrder) {
    throw new KgrankInputError(
      argument,
      `${file} is in Fortran (column) order: rows cannot be read in chunks; save it in C order (numpy.ascontiguousarray)`,
    );
  }
  return { rows, cols, dtype: stored.dtype, dataOffset: stored.dataOffset, littleEndian: stored.littleEndian };
}
