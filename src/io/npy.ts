/**
 * NumPy .npy files (format versions 1.0, 2.0 and 3.0): the header parser is a small pure function over bytes
 * (`parseNpyHeader`) so it can be fuzzed or ported on its own; `readNpy` reads the data straight into a typed array
 * with one positioned read (no intermediate copy for native-endian C-order files), `writeNpy` writes version 1.0
 * (2.0 when the header needs it) through a temporary file that is renamed into place. The header parser has no
 * twin: both backends run this one (a header is read once per file and is at most 1 MiB). The header's Python
 * literal grammar is in py-literal.ts.
 *
 * Why one file of ~700 lines: the format's header fields, dtype table (ITEM_SIZE), byte order and Fortran-order
 * rules are what every part here checks against, and the reader, the async reader and the writer must agree on them
 * bit for bit (a file writeNpy writes reads back through the same checks); split apart, each piece would import the
 * same table and re-state the same limits (MAX_ELEMENTS, MAX_HEADER) far from the code that enforces them.
 */
import { isUtf8 } from "node:buffer";
import { closeSync, fstatSync, readSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";

import { KgrankInputError } from "../checks/errors";
import { formatDims, quoted } from "../text/suggest";
import { describe, optionKeys, options as checkOptions, signalOption } from "../checks/validate";
import { allocate } from "../checks/alloc";
import { writeFileAtomic } from "./atomic";
import { checkRegularFileAsync, fileError, openRegularFile } from "./files";
import { echoCodePoints, PyLiteralParser, PySyntaxError, type PyValue } from "./py-literal";
import { runSteps, runStepsAsync, STEP, type Steps } from "./steps";

/** "bf16" (bfloat16) comes from safetensors files only: NumPy has no such dtype. */
export type NpyDtype = "f2" | "bf16" | "f4" | "f8" | "i1" | "i2" | "i4" | "i8" | "u1" | "u2" | "u4" | "u8" | "b1";
export type NpyArray =
  Float32Array | Float64Array | Int8Array | Int16Array | Int32Array | Uint8Array | Uint16Array | Uint32Array;

/** A parsed .npy header (parseNpyHeader). @internal */
export interface NpyHeader {
  /** Format version: 1, 2 or 3. */
  version: 1 | 2 | 3;
  /** Byte offset of the data (magic + version + header length + header). */
  dataOffset: number;
  dtype: NpyDtype;
  littleEndian: boolean;
  fortranOrder: boolean;
  shape: number[];
  /** Product of the shape (1 for a 0-d array). */
  size: number;
  /** Bytes per element. */
  itemSize: number;
}

/** `A`: the array type of `data`, narrowed by readNpy's `dtype` option (e.g. Float32Array for "float32"). */
export interface NpyData<A extends NpyArray = NpyArray> {
  /** Elements in C (row-major) order, whatever the file's order. f2 is widened to Float32Array, i8/u8 to Float64Array. */
  data: A;
  shape: number[];
  /** The dtype in the file. */
  dtype: NpyDtype;
}

/**
 * The floating-point data readNpy / readNpyAsync are asked for (`{ dtype }`): "float32" (the file's dtype f4, or f2
 * widened), "float64" (f8), "float" (any of them: what `scores` takes). Another dtype in the file is refused.
 */
export type NpyFloatType = "float32" | "float64" | "float";
/** The array type of each NpyFloatType. */
export type NpyFloatArray<T extends NpyFloatType> = T extends "float32"
  ? Float32Array
  : T extends "float64"
    ? Float64Array
    : Float32Array | Float64Array;

/** Options of readNpy when given as an object. */
export interface ReadNpyOptions {
  /** The floating-point data asked for; the result's `data` is typed so (e.g. Float32Array for "float32"). */
  dtype?: NpyFloatType;
  /** The name errors give the file (default "file"). */
  argument?: string;
}

const FLOAT_DTYPES: Record<NpyFloatType, readonly NpyDtype[]> = {
  float32: ["f4", "f2"],
  float64: ["f8"],
  float: ["f4", "f2", "f8"],
};

/** The `dtype` option checked: undefined (any data) or an NpyFloatType. */
function floatTypeOption(value: unknown): NpyFloatType | undefined {
  if (value === undefined || (typeof value === "string" && Object.hasOwn(FLOAT_DTYPES, value)))
    return value as NpyFloatType | undefined;
  throw new KgrankInputError("dtype", `must be "float32", "float64" or "float", got ${describe(value)}`);
}

/** Refuses a file whose dtype does not give the floating-point data asked for, before its data is read. */
function checkFloatType(header: NpyHeader, want: NpyFloatType | undefined, argument: string, path: string): void {
  if (want === undefined || FLOAT_DTYPES[want].includes(header.dtype)) return;
  const numpy = want === "float64" ? "np.float64" : "np.float32";
  throw new KgrankInputError(
    argument,
    `${path} holds ${header.dtype} data, not ${want === "float" ? "float32 or float64" : want}: save it with ` +
      `.astype(${numpy}) in NumPy${want === "float" ? "" : ', or read it with { dtype: "float" }'}`,
  );
}

/** readNpy's second argument: the name errors give the file (a string), or ReadNpyOptions. */
function readNpyOptions(value: unknown): { argument: string; dtype: NpyFloatType | undefined } {
  if (value === undefined) return { argument: "file", dtype: undefined };
  if (typeof value === "string") return { argument: value, dtype: undefined };
  const o = checkOptions("options", value, optionKeys<ReadNpyOptions>({ dtype: 1, argument: 1 }));
  const argument = o.argument === undefined ? "file" : o.argument;
  if (typeof argument !== "string")
    throw new KgrankInputError("argument", `must be a string, got ${describe(argument)}`);
  return { argument, dtype: floatTypeOption(o.dtype) };
}

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY
/** Bytes per element of each dtype (the .npy and safetensors readers both size data by it). */
export const ITEM_SIZE: Record<NpyDtype, number> = {
  f2: 2,
  bf16: 2,
  f4: 4,
  f8: 8,
  i1: 1,
  i2: 2,
  i4: 4,
  i8: 8,
  u1: 1,
  u2: 2,
  u4: 4,
  u8: 8,
  b1: 1,
};
/** Largest element count accepted (2^40): a header declaring more is lying or unusable. */
const MAX_ELEMENTS = 2 ** 40;
/** Longest header accepted; NumPy's own limit is 10,000 bytes for untrusted files. */
const MAX_HEADER = 1 << 20;

/**
 * Parses the start of a .npy file: at least the magic, version and header length, plus the header itself.
 * Pure: no I/O. Throws KgrankInputError(`argument`) for anything NumPy would not have written.
 * `fileSize` (when known) checks that the declared shape fits in the file.
 * The one parser of .npy headers, on both backends: a header is read once per file and is at most MAX_HEADER bytes, so
 * a native port would save nothing measurable, and the fallback must parse headers without the addon.
 * @internal
 */
export function parseNpyHeader(bytes: Uint8Array, argument = "file", fileSize?: number): NpyHeader {
  const bad = (msg: string) => new KgrankInputError(argument, `not a valid .npy file: ${msg}`);
  if (bytes.length < 10) throw bad(`only ${bytes.length} bytes, shorter than the 10-byte preamble (truncated header)`);
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[i] !== MAGIC[i]) throw bad("wrong magic (a .npy file starts with \\x93NUMPY); save it with numpy.save()");
  }
  const major = bytes[6]!;
  if (major !== 1 && major !== 2 && major !== 3)
    throw bad(`format version ${major}.${bytes[7]} is not 1.0, 2.0 or 3.0`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let headerLen: number;
  let start: number;
  if (major === 1) {
    headerLen = view.getUint16(8, true);
    start = 10;
  } else {
    if (bytes.length < 12) throw bad("truncated header (version 2/3 preamble needs 12 bytes)");
    headerLen = view.getUint32(8, true);
    start = 12;
  }
  if (headerLen > MAX_HEADER) throw bad(`header length ${headerLen} is absurd (more than ${MAX_HEADER} bytes)`);
  if (bytes.length < start + headerLen) {
    throw bad(`truncated header: it declares ${headerLen} bytes but only ${bytes.length - start} follow`);
  }
  const raw = bytes.subarray(start, start + headerLen);
  let cps: ArrayLike<number> = raw; // versions 1.0 and 2.0: latin-1, one code point per byte
  if (major === 3) {
    // NumPy decodes a 3.0 header as strict UTF-8 (a BOM is not skipped: it is a character Python refuses there).
    if (utf8ErrorOffset(raw) >= 0)
      throw bad("the version 3.0 header is not valid UTF-8; save the file with numpy.save()");
    cps = Array.from(new TextDecoder("utf-8", { ignoreBOM: true }).decode(raw), (c) => c.codePointAt(0)!);
  }
  let entries: [PyValue, PyValue][];
  try {
    entries = new PyLiteralParser(cps, major !== 3).dict();
  } catch (e) {
    if (!(e instanceof PySyntaxError)) throw e;
    if (e.what === "not a dict") {
      throw bad(
        `the header is not a dict with 'descr', 'fortran_order' and 'shape' (it starts: ${echoCodePoints(cps, e.at, cps.length)})`,
      );
    }
    throw bad(
      `the header is not a valid Python dict literal: ${e.what} at character ${e.at + 1} (near: ${echoCodePoints(cps, e.at, cps.length)}); save the file with numpy.save()`,
    );
  }
  const fields = new Map<string, PyValue>();
  for (const [k, v] of entries) {
    if (k.kind !== "str") throw bad(`the header has a key ${echoCodePoints(cps, k.start, k.end)} that is not a string`);
    const name = k.text.length <= 13 ? String.fromCodePoint(...k.text) : "";
    if (name !== "descr" && name !== "fortran_order" && name !== "shape") {
      throw bad(
        `the header has a key '${echoCodePoints(k.text, 0, k.text.length)}' besides 'descr', 'fortran_order' and 'shape' (NumPy refuses such files too)`,
      );
    }
    fields.set(name, v); // a Python dict literal: the last duplicate wins
  }
  for (const key of ["descr", "fortran_order", "shape"]) {
    if (!fields.has(key))
      throw bad(`the header has no '${key}' (NumPy writes a dict with 'descr', 'fortran_order' and 'shape')`);
  }
  const descr = fields.get("descr")!;
  const fortran = fields.get("fortran_order")!;
  const shapeV = fields.get("shape")!;
  const accepted = "(accepted: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, any byte order)";
  if (descr.kind !== "str") {
    throw bad(
      `'descr' is not a string but ${echoCodePoints(cps, descr.start, descr.end)}: structured and object dtypes are not supported ${accepted}`,
    );
  }
  const d = echoCodePoints(descr.text, 0, descr.text.length);
  const dm = descr.text.length <= 8 ? /^([<>|=]?)([fiub])(\d+)$/.exec(String.fromCodePoint(...descr.text)) : null;
  const code = dm ? (`${dm[2]}${dm[3]}` as NpyDtype) : null;
  if (
    !dm ||
    !code ||
    !Object.hasOwn(ITEM_SIZE, code) ||
    (code === "b1" && dm[2] !== "b") ||
    (dm[2] === "b" && code !== "b1")
  ) {
    throw bad(`dtype '${d}' is not supported ${accepted}`);
  }
  if (fortran.kind !== "bool")
    throw bad(`'fortran_order' is ${echoCodePoints(cps, fortran.start, fortran.end)}, not True or False`);
  if (shapeV.kind !== "tuple") {
    throw bad(
      `'shape' is not a tuple but ${echoCodePoints(cps, shapeV.start, shapeV.end)}: it must be a tuple of non-negative integers such as (1000, 14541)`,
    );
  }
  const itemSize = ITEM_SIZE[code];
  const littleEndian = dm[1] !== ">";
  const shape: number[] = [];
  let size = 1;
  for (const item of shapeV.items) {
    const digits = item.kind === "int" ? item.digits : [];
    let z = 0;
    while (z < digits.length - 1 && digits[z] === 0) z++;
    if (item.kind !== "int" || (item.negative && digits[z] !== 0)) {
      throw bad(
        `shape has a dimension ${echoCodePoints(cps, item.start, item.end)} that is not a non-negative integer`,
      );
    }
    let n = 0;
    for (let k = z; k < digits.length && k - z <= 16; k++) n = n * 10 + digits[k]!;
    if (digits.length - z > 16 || n > Number.MAX_SAFE_INTEGER)
      throw bad(`shape dimension ${echoCodePoints(cps, item.start, item.end)} is too large`);
    shape.push(n);
    if (size * n > MAX_ELEMENTS)
      throw bad(`declared shape ${echoCodePoints(cps, shapeV.start, shapeV.end)} has more than 2^40 elements`);
    size *= n;
  }
  const dataOffset = start + headerLen;
  if (fileSize !== undefined && fileSize < dataOffset + size * itemSize) {
    throw bad(
      `declared shape (${formatDims(shape)}) of ${d} needs ${size * itemSize} data bytes but the file has ` +
        `${Math.max(0, fileSize - dataOffset)} (truncated file or lying header)`,
    );
  }
  return {
    version: major as 1 | 2 | 3,
    dataOffset,
    dtype: code,
    littleEndian,
    fortranOrder: fortran.value,
    shape,
    size,
    itemSize,
  };
}

/**
 * Offset of the first byte of the first ill-formed UTF-8 sequence in `bytes`, or -1 when all of it is UTF-8 (no
 * surrogates, no overlong forms, nothing past U+10FFFF: what Python's and WHATWG's strict decoders accept). The C++
 * twin is utf8_error_offset (native/core/parse.cpp).
 */
export function utf8ErrorOffset(bytes: Uint8Array): number {
  if (isUtf8(bytes)) return -1;
  const n = bytes.length;
  for (let i = 0; i < n;) {
    const c = bytes[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c === 0xe0) lo = 0xa0;
      if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c === 0xf0) lo = 0x90;
      if (c === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      const b = i + k < n ? bytes[i + k]! : -1;
      if (b < (k === 1 ? lo : 0x80) || b > (k === 1 ? hi : 0xbf)) return i;
    }
    i += need + 1;
  }
  return -1;
}

const hostLittle = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

let halves: Float32Array | null = null;

/**
 * Every float16 bit pattern's value (exact in float32), 256 KiB built once: a lookup per element instead of the
 * arithmetic of halfToFloat. The .npy / safetensors readers and the chunked entity-table reader decode with it.
 */
export function halfTable(): Float32Array {
  if (!halves) {
    halves = new Float32Array(65536);
    for (let h = 0; h < 65536; h++) halves[h] = halfToFloat(h);
  }
  return halves;
}

/**
 * Decodes `bytes` (exactly header.size * itemSize bytes of data) into a typed array in C order.
 * For a native-endian C-order file with an aligned buffer the result is a view on `bytes` (no copy).
 * @internal
 */
export function decodeNpyData(header: NpyHeader, bytes: Uint8Array, argument = "file"): NpyData {
  return runSteps(decodeNpySteps(header, bytes, argument));
}

/** decodeNpyData in steps of STEP elements (./steps.ts): readNpyAsync runs them between event-loop turns. */
function* decodeNpySteps(header: NpyHeader, bytes: Uint8Array, argument: string): Steps<NpyData> {
  const { dtype, size, itemSize, littleEndian, shape } = header;
  if (bytes.byteLength < size * itemSize) {
    throw new KgrankInputError(
      argument,
      `not a valid .npy file: ${size * itemSize} data bytes declared, ${bytes.byteLength} present (truncated)`,
    );
  }
  let data: NpyArray;
  const aligned = bytes.byteOffset % itemSize === 0;
  const native = itemSize === 1 || littleEndian === hostLittle;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, size * itemSize);
  const Ctor = {
    f4: Float32Array,
    f8: Float64Array,
    i1: Int8Array,
    i2: Int16Array,
    i4: Int32Array,
    u1: Uint8Array,
    u2: Uint16Array,
    u4: Uint32Array,
    b1: Uint8Array,
  }[dtype as "f4"] as
    ((new (buf: ArrayBufferLike, off: number, len: number) => NpyArray) & (new (len: number) => NpyArray)) | undefined;
  if (dtype === "f2" || dtype === "bf16") {
    const out = allocate(argument, undefined, 4 * size, () => new Float32Array(size));
    const table = dtype === "f2" ? halfTable() : null;
    const bits = new Uint32Array(out.buffer, out.byteOffset, size);
    for (let i0 = 0; i0 < size; i0 += STEP) {
      const end = Math.min(size, i0 + STEP);
      if (table) for (let i = i0; i < end; i++) out[i] = table[dv.getUint16(2 * i, littleEndian)]!;
      else for (let i = i0; i < end; i++) bits[i] = dv.getUint16(2 * i, littleEndian) << 16;
      yield;
    }
    data = out;
  } else if (dtype === "i8" || dtype === "u8") {
    const out = allocate(argument, undefined, 8 * size, () => new Float64Array(size));
    for (let i0 = 0; i0 < size; i0 += STEP) {
      for (let i = i0, end = Math.min(size, i0 + STEP); i < end; i++) {
        const v = dtype === "i8" ? dv.getBigInt64(8 * i, littleEndian) : dv.getBigUint64(8 * i, littleEndian);
        if (v > 9007199254740992n || v < -9007199254740992n) {
          throw new KgrankInputError(
            argument,
            `element ${i} of the ${dtype} array is ${v}, past 2^53: it cannot be represented exactly as a JavaScript number; ` +
              `save ids/ranks as int32 or float64`,
          );
        }
        out[i] = Number(v);
      }
      yield;
    }
    data = out;
  } else if (native && aligned) {
    data = new Ctor!(bytes.buffer, bytes.byteOffset, size);
  } else {
    const out = allocate(argument, undefined, size * itemSize, () => new Ctor!(size));
    const get = {
      f4: (o: number) => dv.getFloat32(o, littleEndian),
      f8: (o: number) => dv.getFloat64(o, littleEndian),
      i1: (o: number) => dv.getInt8(o),
      i2: (o: number) => dv.getInt16(o, littleEndian),
      i4: (o: number) => dv.getInt32(o, littleEndian),
      u1: (o: number) => dv.getUint8(o),
      b1: (o: number) => dv.getUint8(o),
      u2: (o: number) => dv.getUint16(o, littleEndian),
      u4: (o: number) => dv.getUint32(o, littleEndian),
    }[dtype as "f4"];
    for (let i0 = 0; i0 < size; i0 += STEP) {
      for (let i = i0, end = Math.min(size, i0 + STEP); i < end; i++) out[i] = get(i * itemSize);
      yield;
    }
    data = out;
  }
  if (dtype === "b1") {
    for (let i0 = 0; i0 < size; i0 += STEP) {
      for (let i = i0, end = Math.min(size, i0 + STEP); i < end; i++) if (data[i]! > 1) data[i] = 1;
      yield;
    }
  }
  if (header.fortranOrder && shape.length > 1) data = yield* fortranToC(data, shape, argument);
  return { data, shape: [...shape], dtype };
}

/**
 * Transposes a Fortran-order (column-major) array of `shape` into C order. Unit dimensions are dropped first: they
 * do not move any element, and with them the odometer below carried through every one of them per element (a
 * (N, 1, 1, ..., 1) file with 100,000 dimensions cost N x 100,000 steps). What remains has at most 40 dimensions
 * (each >= 2, product <= 2^40), so the cost is O(elements); with one dimension left nothing moves at all.
 */
function* fortranToC(src: NpyArray, shape: readonly number[], argument: string): Steps<NpyArray> {
  const dims = shape.filter((n) => n !== 1);
  if (dims.length <= 1 || src.length === 0) return src;
  const out = allocate(
    argument,
    undefined,
    src.byteLength,
    () => new (src.constructor as new (n: number) => NpyArray)(src.length),
  );
  const nd = dims.length;
  const fStride: number[] = new Array(nd);
  let s = 1;
  for (let k = 0; k < nd; k++) {
    fStride[k] = s;
    s *= dims[k]!;
  }
  const idx = new Array(nd).fill(0);
  let f = 0;
  for (let c0 = 0; c0 < src.length; c0 += STEP) {
    for (let c = c0, end = Math.min(src.length, c0 + STEP); c < end; c++) {
      out[c] = src[f]!;
      for (let k = nd - 1; k >= 0; k--) {
        idx[k]++;
        f += fStride[k]!;
        if (idx[k] < dims[k]!) break;
        f -= idx[k] * fStride[k]!;
        idx[k] = 0;
      }
    }
    yield;
  }
  return out;
}

/** Parses a whole .npy file held in memory (e.g. an .npz member). */
export function parseNpy(bytes: Uint8Array, argument = "file"): NpyData {
  const header = parseNpyHeader(bytes, argument, bytes.byteLength);
  return decodeNpyData(
    header,
    bytes.subarray(header.dataOffset, header.dataOffset + header.size * header.itemSize),
    argument,
  );
}

/**
 * Reads a .npy file: the header first, then the data in one positioned read into a buffer allocated for the
 * result (which becomes the typed array without a copy for native-endian C-order f4/f8/i1/i2/i4/u1/u2/u4/b1 data).
 */
/**
 * Bytes to read for the header from the file's first (up to) 12 bytes `pre`: magic, version and header length,
 * capped by the file and by MAX_HEADER; null when `pre` holds no version 1-3 prefix (the parser then reports `pre`).
 */
function headerReadLength(pre: Buffer, fileSize: number): number | null {
  if (pre.length < 10 || pre[6]! < 1 || pre[6]! > 3) return null;
  const len = pre[6] === 1 ? pre.readUInt16LE(8) + 10 : pre.length >= 12 ? pre.readUInt32LE(8) + 12 : 12;
  return Math.min(len, fileSize, MAX_HEADER + 12);
}

/**
 * The header of the open .npy file `fd` of `fileSize` bytes: its first bytes, then the header they declare, checked
 * by parseNpyHeader (a shape that does not fit the file is refused). readNpy and the chunked entity-table reader.
 */
export function readNpyHeader(fd: number, fileSize: number, argument: string, path: string): NpyHeader {
  const pre = Buffer.alloc(Math.min(fileSize, 12));
  readFully(fd, pre, 0, argument, path);
  const len = headerReadLength(pre, fileSize);
  const headerBytes = len === null ? pre : Buffer.alloc(len);
  if (len !== null) readFully(fd, headerBytes, 0, argument, path);
  return parseNpyHeader(
    new Uint8Array(headerBytes.buffer, headerBytes.byteOffset, headerBytes.byteLength),
    argument,
    fileSize,
  );
}

/**
 * `readNpy(path, { dtype: "float32" })` types `data` as Float32Array (and refuses a file of another dtype), so that
 * it can be passed as `scores` under `strict`; "float64" and "float" likewise. `readNpy(path, argument)` names the
 * file in errors as `argument`.
 */
export function readNpy<T extends NpyFloatType>(
  path: string,
  options: ReadNpyOptions & { dtype: T },
): NpyData<NpyFloatArray<T>>;
export function readNpy(path: string, options?: string | ReadNpyOptions): NpyData;
export function readNpy(path: string, options?: string | ReadNpyOptions): NpyData {
  const { argument, dtype } = readNpyOptions(options);
  if (typeof path !== "string" || path === "") throw new KgrankInputError(argument, "must be a path to a .npy file");
  const fd = openRegularFile(path, argument);
  try {
    let fileSize: number;
    try {
      const st = fstatSync(fd);
      if (st.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
      fileSize = st.size;
    } catch (e) {
      throw fileError(argument, path, e);
    }
    const header = readNpyHeader(fd, fileSize, argument, path);
    checkFloatType(header, dtype, argument, path);
    const nbytes = header.size * header.itemSize;
    // Allocate with room for alignment: the data lands at offset 0 of a fresh ArrayBuffer.
    const buf = allocate(argument, path, nbytes, () => new Uint8Array(new ArrayBuffer(nbytes)));
    readFully(fd, buf, header.dataOffset, argument, path);
    return decodeNpyData(header, buf, argument);
  } finally {
    closeSync(fd);
  }
}

/** Options of readNpyAsync. */
export interface ReadNpyAsyncOptions {
  /** Stops the read: the promise rejects with the signal's reason (checked between reads and decoding slices). */
  signal?: AbortSignal;
  /** The name errors give the file (default "file"), as readNpy's second argument. */
  argument?: string;
  /** The floating-point data asked for, as readNpy's `dtype`: `data` is typed so. */
  dtype?: NpyFloatType;
}

/** Bytes per positioned read of readNpyAsync: each is one libuv request, off the event loop. */
const READ_CHUNK = 1 << 24;

/**
 * readNpy off the event loop: the file is read with fs.promises in chunks (each checked against the signal), and
 * data that needs converting (big-endian, f2, i8 / u8, Fortran order) is decoded in slices of about 10 ms between
 * event-loop turns. The same result and the same errors as readNpy.
 */
export async function readNpyAsync<T extends NpyFloatType>(
  path: string,
  opts: ReadNpyAsyncOptions & { dtype: T },
): Promise<NpyData<NpyFloatArray<T>>>;
export async function readNpyAsync(path: string, opts?: ReadNpyAsyncOptions): Promise<NpyData>;
export async function readNpyAsync(path: string, opts: ReadNpyAsyncOptions = {}): Promise<NpyData> {
  const o = checkOptions("options", opts, optionKeys<ReadNpyAsyncOptions>({ signal: 1, argument: 1, dtype: 1 }));
  const dtype = floatTypeOption(o.dtype);
  const signal = signalOption(o.signal);
  const argument = o.argument === undefined ? "file" : o.argument;
  if (typeof argument !== "string")
    throw new KgrankInputError("argument", `must be a string, got ${describe(argument)}`);
  signal?.throwIfAborted();
  if (typeof path !== "string" || path === "") throw new KgrankInputError(argument, "must be a path to a .npy file");
  await checkRegularFileAsync(path, argument);
  let fh: FileHandle;
  try {
    fh = await open(path, "r");
  } catch (e) {
    throw fileError(argument, path, e);
  }
  try {
    let fileSize: number;
    try {
      const st = await fh.stat();
      if (st.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
      fileSize = st.size;
    } catch (e) {
      throw fileError(argument, path, e);
    }
    const pre = Buffer.alloc(Math.min(fileSize, 12));
    await readFullyAsync(fh, pre, 0, argument, path, signal);
    const len = headerReadLength(pre, fileSize);
    const headerBytes = len === null ? pre : Buffer.alloc(len);
    if (len !== null) await readFullyAsync(fh, headerBytes, 0, argument, path, signal);
    const header = parseNpyHeader(
      new Uint8Array(headerBytes.buffer, headerBytes.byteOffset, headerBytes.byteLength),
      argument,
      fileSize,
    );
    checkFloatType(header, dtype, argument, path);
    const nbytes = header.size * header.itemSize;
    const buf = allocate(argument, path, nbytes, () => new Uint8Array(new ArrayBuffer(nbytes)));
    await readFullyAsync(fh, buf, header.dataOffset, argument, path, signal);
    return await runStepsAsync(decodeNpySteps(header, buf, argument), signal);
  } finally {
    await fh.close().catch(() => {});
  }
}

async function readFullyAsync(
  fh: FileHandle,
  buf: Uint8Array,
  position: number,
  argument: string,
  path: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  let done = 0;
  while (done < buf.byteLength) {
    signal?.throwIfAborted();
    let n: number;
    try {
      ({ bytesRead: n } = await fh.read(buf, done, Math.min(buf.byteLength - done, READ_CHUNK), position + done));
    } catch (e) {
      throw fileError(argument, path, e);
    }
    if (n === 0) throw new KgrankInputError(argument, `not a valid .npy file: ${path} ended early (truncated)`);
    done += n;
  }
  signal?.throwIfAborted();
}

function readFully(fd: number, buf: Uint8Array, position: number, argument: string, path: string): void {
  let done = 0;
  while (done < buf.byteLength) {
    let n: number;
    try {
      n = readSync(fd, buf, done, Math.min(buf.byteLength - done, 1 << 30), position + done);
    } catch (e) {
      throw fileError(argument, path, e);
    }
    if (n === 0) throw new KgrankInputError(argument, `not a valid .npy file: ${path} ended early (truncated)`);
    done += n;
  }
}

const DTYPE_OF: [new (...a: never[]) => unknown, NpyDtype][] = [
  [Float32Array, "f4"],
  [Float64Array, "f8"],
  [Int8Array, "i1"],
  [Int16Array, "i2"],
  [Int32Array, "i4"],
  [Uint8Array, "u1"],
  [Uint16Array, "u2"],
  [Uint32Array, "u4"],
  [BigInt64Array, "i8"],
  [BigUint64Array, "u8"],
];

/** Serialises a typed array as a .npy file image (little-endian, C order; version 1.0, or 2.0 for huge headers). */
export function encodeNpy(
  data: NpyArray | BigInt64Array | BigUint64Array,
  shape: number[] = [data.length],
  options: { dtype?: NpyDtype } = {},
): Uint8Array {
  const found = DTYPE_OF.find(([C]) => data instanceof C);
  if (!found)
    throw new KgrankInputError(
      "data",
      `must be a typed array (Float32Array, Int32Array, ...), got ${String((data as object)?.constructor?.name)}`,
    );
  const dtype = (checkOptions("options", options, ["dtype"]).dtype as NpyDtype | undefined) ?? found[1];
  if (dtype !== found[1] && !(dtype === "b1" && found[1] === "u1")) {
    throw new KgrankInputError(
      "dtype",
      `${quoted(String(dtype))} does not match the array type ${(data as object).constructor.name} (dtype ${found[1]})`,
    );
  }
  if (
    !Array.isArray(shape) ||
    shape.some((n) => !Number.isSafeInteger(n) || n < 0) ||
    shape.reduce((a, b) => a * b, 1) !== data.length
  ) {
    const shown = Array.isArray(shape) ? `(${formatDims(shape)})` : describe(shape);
    throw new KgrankInputError("shape", `${shown} does not match the array's ${data.length} elements`);
  }
  const descr = `${ITEM_SIZE[dtype] === 1 ? "|" : "<"}${dtype}`;
  const dims = shape.length === 1 ? `${shape[0]},` : shape.join(", ");
  let dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
  let version = 1;
  let pre = 10;
  if (dict.length + 1 + pre > 65535) {
    version = 2;
    pre = 12;
  }
  const total = Math.ceil((pre + dict.length + 1) / 64) * 64;
  dict = dict.padEnd(total - pre - 1, " ") + "\n";
  const dataBytes = data.byteLength;
  const out = new Uint8Array(total + dataBytes);
  out.set(MAGIC, 0);
  out[6] = version;
  out[7] = 0;
  const dv = new DataView(out.buffer);
  if (version === 1) dv.setUint16(8, dict.length, true);
  else dv.setUint32(8, dict.length, true);
  for (let i = 0; i < dict.length; i++) out[pre + i] = dict.charCodeAt(i);
  const src = new Uint8Array(data.buffer, data.byteOffset, dataBytes);
  if (hostLittle) out.set(src, total);
  else {
    const w = ITEM_SIZE[dtype];
    for (let i = 0; i < dataBytes; i += w) for (let b = 0; b < w; b++) out[total + i + b] = src[i + w - 1 - b]!;
  }
  return out;
}

/** Writes a .npy file atomically (temporary file, then rename): an interrupted write leaves no partial file. */
export function writeNpy(
  path: string,
  data: NpyArray | BigInt64Array | BigUint64Array,
  shape: number[] = [data.length],
  options: { dtype?: NpyDtype } = {},
): void {
  writeFileAtomic(path, encodeNpy(data, shape, options), "path");
}
