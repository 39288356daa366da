/**
 * Entity tables read in row chunks (openEntityTable): what a model whose table is larger than the memory it may use
 * ranks from. A .npy file (C order) or one tensor of a safetensors file, float16, bfloat16, float32 or float64,
 * converted while read to the model's accumulation type exactly as the in-memory readers convert it (float16 through
 * the same table, float64 to float32 rounded as Float32Array.from rounds), so a chunk holds the values the whole
 * table in memory would hold. Only the header is read when the table is opened; each read opens the file again and
 * refuses it if it changed size since.
 */
import { open, type FileHandle } from "node:fs/promises";
import { closeSync, fstatSync, readSync } from "node:fs";
import * as path from "node:path";

import { kernels } from "../backend/backend";
import { KgrankInputError } from "../checks/errors";
import { allocate } from "../checks/alloc";
import { describe, optionKeys, options } from "../checks/validate";
import { turn } from "../contract/event-loop";
import type { EntityRowSource } from "../scoring/embedding-model";
import { quotedList } from "../text/suggest";
import { fileError, openRegularFile } from "./files";
import { halfTable, ITEM_SIZE, type NpyDtype, readNpyHeader } from "./npy";
import { parseSafetensorsHeader, safetensorsHeaderLength } from "./safetensors";

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
  readonly #fileSize: number;
  readonly #littleEndian: boolean;

  private constructor(file: string, argument: string, header: TableHeader, fileSize: number) {
    this.#path = file;
    this.#argument = argument;
    this.name = file;
    this.rows = header.rows;
    this.cols = header.cols;
    this.dtype = header.dtype;
    this.storedRowBytes = header.cols * ITEM_SIZE[header.dtype];
    this.#dataOffset = header.dataOffset;
    this.#fileSize = fileSize;
    this.#littleEndian = header.littleEndian;
  }

  /** Opens `file` (.npy or .safetensors) and checks its header; no data is read. */
  static open(file: string, opts: OpenEntityTableOptions = {}): EntityTableFile {
    const o = options("openEntityTable options", opts, OPEN_KEYS);
    const argument = o.argument ?? "entityEmbeddings";
    if (typeof argument !== "string")
      throw new KgrankInputError("argument", `must be a string, got ${describe(argument)}`);
    if (typeof file !== "string" || file === "")
      throw new KgrankInputError(argument, "must be a path to a .npy or .safetensors file");
    const ext = path.extname(file).toLowerCase();
    if (ext !== ".npy" && ext !== ".safetensors") {
      throw new KgrankInputError(
        argument,
        `${file}: a table read in chunks must be a .npy or .safetensors file (an .npz is compressed or zipped: ` +
          `extract its array, e.g. numpy.save('entity.npy', numpy.load('${path.basename(file)}')['<name>']))`,
      );
    }
    if (o.tensor !== undefined && (typeof o.tensor !== "string" || ext !== ".safetensors")) {
      throw new KgrankInputError(
        "tensor",
        `names a tensor of a .safetensors file; got ${describe(o.tensor)} for ${file}`,
      );
    }
    const fd = openRegularFile(file, argument);
    try {
      let size: number;
      try {
        size = fstatSync(fd).size;
      } catch (e) {
        throw fileError(argument, file, e);
      }
      const header =
        ext === ".npy" ? npyTable(fd, file, size, argument) : safetensorsTable(fd, file, size, argument, o.tensor);
      return new EntityTableFile(file, argument, header, size);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Reads rows [begin, end) into `into` ((end - begin) x cols values). `scratch` (at least (end - begin) x
   * storedRowBytes bytes) receives the stored bytes when they must be converted; without it one is allocated.
   */
  async readRows(begin: number, end: number, into: Float32Array | Float64Array, scratch?: Uint8Array): Promise<void> {
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
    await this.#read(raw, this.#dataOffset + begin * this.storedRowBytes);
    if (!direct) await this.#convert(raw, into, n);
    await this.#checkFinite(into, n, begin);
  }

  async #read(raw: Uint8Array, position: number): Promise<void> {
    let fh: FileHandle;
    try {
      fh = await open(this.#path, "r");
    } catch (e) {
      throw fileError(this.#argument, this.name, e);
    }
    try {
      const size = (await fh.stat()).size;
      if (size !== this.#fileSize) {
        throw new KgrankInputError(
          this.#argument,
          `${this.name} changed while it was read (${this.#fileSize} bytes when opened, ${size} now): do not ` +
            `rewrite a table during a run`,
        );
      }
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
    } finally {
      await fh.close();
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

function readAt(fd: number, length: number, position: number, argument: string, file: string): Uint8Array {
  const buf = new Uint8Array(length);
  let done = 0;
  try {
    while (done < length) {
      const n = readSync(fd, buf, done, length - done, position + done);
      if (n === 0) break;
      done += n;
    }
  } catch (e) {
    throw fileError(argument, file, e);
  }
  return buf.subarray(0, done);
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

function npyTable(fd: number, file: string, size: number, argument: string): TableHeader {
  // The header is checked against the file's size: a table shorter than its header says is refused.
  const header = readNpyHeader(fd, size, argument, file);
  const [rows, cols] = tableShape(header.shape, header.dtype, file, argument);
  if (header.fortranOrder) {
    throw new KgrankInputError(
      argument,
      `${file} is in Fortran (column) order: rows cannot be read in chunks; save it in C order (numpy.ascontiguousarray)`,
    );
  }
  return { rows, cols, dtype: header.dtype, dataOffset: header.dataOffset, littleEndian: header.littleEndian };
}

function safetensorsTable(
  fd: number,
  file: string,
  size: number,
  argument: string,
  tensor: string | undefined,
): TableHeader {
  const len = safetensorsHeaderLength(readAt(fd, Math.min(size, 8), 0, argument, file), size, argument);
  const { base, tensors } = parseSafetensorsHeader(readAt(fd, len, 0, argument, file), size, argument);
  const names = tensors.map((t) => t.name);
  let t = tensors[0];
  if (tensor !== undefined) {
    t = tensors.find((x) => x.name === tensor);
    if (!t) throw new KgrankInputError("tensor", `${file} has no tensor "${tensor}"; it holds ${quotedList(names)}`);
  } else if (tensors.length !== 1) {
    throw new KgrankInputError(
      argument,
      `${file} holds ${tensors.length} tensors (${quotedList(names)}); name the entity table's (tensor)`,
    );
  }
  const [rows, cols] = tableShape(t!.shape, t!.dtype, file, argument);
  return { rows, cols, dtype: t!.dtype, dataOffset: base + t!.begin, littleEndian: true };
}
