/**
 * NumPy .npy files (format versions 1.0, 2.0 and 3.0): the header parser is a small pure function over bytes
 * (`parseNpyHeader`) so it can be fuzzed or ported on its own; `readNpy` reads the data straight into a typed array
 * with one positioned read (no intermediate copy for native-endian C-order files), `writeNpy` writes version 1.0
 * (2.0 when the header needs it) through a temporary file that is renamed into place.
 */
import { closeSync, fstatSync, readSync } from "node:fs";

import { nativeAddon, nativeParse } from "../backend";
import { KgrankInputError } from "../errors";
import { options as checkOptions } from "../validate";
import { allocate } from "./alloc";
import { writeFileAtomic } from "./atomic";
import { fileError, openRegularFile } from "./files";

export type NpyDtype = "f2" | "f4" | "f8" | "i1" | "i2" | "i4" | "i8" | "u1" | "u2" | "u4" | "u8" | "b1";
export type NpyArray = Float32Array | Float64Array | Int8Array | Int16Array | Int32Array | Uint8Array | Uint16Array | Uint32Array;

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

export interface NpyData {
  /** Elements in C (row-major) order, whatever the file's order. f2 is widened to Float32Array, i8/u8 to Float64Array. */
  data: NpyArray;
  shape: number[];
  /** The dtype in the file. */
  dtype: NpyDtype;
}

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY
const ITEM_SIZE: Record<NpyDtype, number> = { f2: 2, f4: 4, f8: 8, i1: 1, i2: 2, i4: 4, i8: 8, u1: 1, u2: 2, u4: 4, u8: 8, b1: 1 };
/** Largest element count accepted (2^40): a header declaring more is lying or unusable. */
const MAX_ELEMENTS = 2 ** 40;
/** Longest header accepted; NumPy's own limit is 10,000 bytes for untrusted files. */
const MAX_HEADER = 1 << 20;

/**
 * Parses the start of a .npy file: at least the magic, version and header length, plus the header itself.
 * Pure: no I/O. Throws KgrankInputError(`argument`) for anything NumPy would not have written.
 * `fileSize` (when known) checks that the declared shape fits in the file.
 * On the native backend this runs the C++ port (native/core/parse.cpp, fuzzed by native/fuzz/fuzz_npy_header.cpp),
 * which accepts and rejects exactly what `parseNpyHeaderTs` does, with the same messages.
 */
export function parseNpyHeader(bytes: Uint8Array, argument = "file", fileSize?: number): NpyHeader {
  const addon = nativeAddon();
  if (addon && bytes instanceof Uint8Array && (fileSize === undefined || (Number.isSafeInteger(fileSize) && fileSize >= 0))) {
    return nativeParse(argument, () => addon.parseNpyHeader(bytes, fileSize)) as NpyHeader;
  }
  return parseNpyHeaderTs(bytes, argument, fileSize);
}

/** The TypeScript parser of .npy headers: the fallback backend's, and the reference of the C++ port. */
export function parseNpyHeaderTs(bytes: Uint8Array, argument = "file", fileSize?: number): NpyHeader {
  const bad = (msg: string) => new KgrankInputError(argument, `not a valid .npy file: ${msg}`);
  if (bytes.length < 10) throw bad(`only ${bytes.length} bytes, shorter than the 10-byte preamble (truncated header)`);
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[i] !== MAGIC[i]) throw bad("wrong magic (a .npy file starts with \\x93NUMPY); save it with numpy.save()");
  }
  const major = bytes[6]!;
  if (major !== 1 && major !== 2 && major !== 3) throw bad(`format version ${major}.${bytes[7]} is not 1.0, 2.0 or 3.0`);
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
  let text = "";
  if (major === 3) text = new TextDecoder("utf-8", { fatal: false }).decode(raw);
  else for (let i = 0; i < raw.length; i++) text += String.fromCharCode(raw[i]!);

  const descr = /['"]descr['"]\s*:\s*['"]([^'"]*)['"]/.exec(text);
  const fortran = /['"]fortran_order['"]\s*:\s*(True|False)/.exec(text);
  // Only text up to the last ')' can hold a match; cutting there keeps the regex linear on "'shape':(" repeated
  // (every start would otherwise scan to the end: ~1 min for a 1 MiB header). Same match either way.
  const shapeM = /['"]shape['"]\s*:\s*\(([^)]*)\)/.exec(text.slice(0, text.lastIndexOf(")") + 1));
  if (!text.trimStart().startsWith("{") || !descr || !fortran || !shapeM) {
    throw bad("the header is not a dict with 'descr', 'fortran_order' and 'shape'");
  }
  const d = descr[1]!;
  const dm = /^([<>|=]?)([fiub])(\d+)$/.exec(d);
  const code = dm ? (`${dm[2]}${dm[3]}` as NpyDtype) : null;
  if (!dm || !code || !(code in ITEM_SIZE) || (code === "b1" && dm[2] !== "b") || (dm[2] === "b" && code !== "b1")) {
    throw bad(`dtype '${d}' is not supported (accepted: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, any byte order)`);
  }
  const itemSize = ITEM_SIZE[code];
  const littleEndian = dm[1] !== ">";
  const shape: number[] = [];
  const parts = shapeM[1]!.split(",").map((s) => s.trim());
  if (parts.length > 0 && parts[parts.length - 1] === "") parts.pop();
  let size = 1;
  for (const p of parts) {
    if (!/^\d+L?$/.test(p)) throw bad(`shape (${shapeM[1]}) has a dimension '${p}' that is not a non-negative integer`);
    const n = Number.parseInt(p, 10);
    if (!Number.isSafeInteger(n)) throw bad(`shape dimension ${p} is too large`);
    shape.push(n);
    size *= n;
    if (size > MAX_ELEMENTS) throw bad(`declared shape (${shapeM[1]}) has more than 2^40 elements`);
  }
  const dataOffset = start + headerLen;
  if (fileSize !== undefined && fileSize < dataOffset + size * itemSize) {
    throw bad(
      `declared shape (${shape.join(", ")}) of ${d} needs ${size * itemSize} data bytes but the file has ` +
        `${Math.max(0, fileSize - dataOffset)} (truncated file or lying header)`,
    );
  }
  return { version: major as 1 | 2 | 3, dataOffset, dtype: code, littleEndian, fortranOrder: fortran[1] === "True", shape, size, itemSize };
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

/**
 * Decodes `bytes` (exactly header.size * itemSize bytes of data) into a typed array in C order.
 * For a native-endian C-order file with an aligned buffer the result is a view on `bytes` (no copy).
 */
export function decodeNpyData(header: NpyHeader, bytes: Uint8Array, argument = "file"): NpyData {
  const { dtype, size, itemSize, littleEndian, shape } = header;
  if (bytes.byteLength < size * itemSize) {
    throw new KgrankInputError(argument, `not a valid .npy file: ${size * itemSize} data bytes declared, ${bytes.byteLength} present (truncated)`);
  }
  let data: NpyArray;
  const aligned = bytes.byteOffset % itemSize === 0;
  const native = itemSize === 1 || littleEndian === hostLittle;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, size * itemSize);
  const Ctor = { f4: Float32Array, f8: Float64Array, i1: Int8Array, i2: Int16Array, i4: Int32Array, u1: Uint8Array, u2: Uint16Array, u4: Uint32Array, b1: Uint8Array }[
    dtype as "f4"
  ] as (new (buf: ArrayBufferLike, off: number, len: number) => NpyArray) & (new (len: number) => NpyArray) | undefined;
  if (dtype === "f2") {
    const out = allocate(argument, undefined, 4 * size, () => new Float32Array(size));
    for (let i = 0; i < size; i++) out[i] = halfToFloat(dv.getUint16(2 * i, littleEndian));
    data = out;
  } else if (dtype === "i8" || dtype === "u8") {
    const out = allocate(argument, undefined, 8 * size, () => new Float64Array(size));
    for (let i = 0; i < size; i++) {
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
    data = out;
  } else if (native && aligned) {
    data = new Ctor!(bytes.buffer, bytes.byteOffset, size);
  } else {
    const out = allocate(argument, undefined, size * itemSize, () => new Ctor!(size));
    const get = {
      f4: (o: number) => dv.getFloat32(o, littleEndian), f8: (o: number) => dv.getFloat64(o, littleEndian),
      i1: (o: number) => dv.getInt8(o), i2: (o: number) => dv.getInt16(o, littleEndian), i4: (o: number) => dv.getInt32(o, littleEndian),
      u1: (o: number) => dv.getUint8(o), b1: (o: number) => dv.getUint8(o), u2: (o: number) => dv.getUint16(o, littleEndian),
      u4: (o: number) => dv.getUint32(o, littleEndian),
    }[dtype as "f4"];
    for (let i = 0; i < size; i++) out[i] = get(i * itemSize);
    data = out;
  }
  if (dtype === "b1") for (let i = 0; i < size; i++) if (data[i]! > 1) data[i] = 1;
  if (header.fortranOrder && shape.length > 1) data = fortranToC(data, shape, argument);
  return { data, shape: [...shape], dtype };
}

/**
 * Transposes a Fortran-order (column-major) array of `shape` into C order. Unit dimensions are dropped first: they
 * do not move any element, and with them the odometer below carried through every one of them per element (a
 * (N, 1, 1, ..., 1) file with 100,000 dimensions cost N x 100,000 steps). What remains has at most 40 dimensions
 * (each >= 2, product <= 2^40), so the cost is O(elements); with one dimension left nothing moves at all.
 */
function fortranToC(src: NpyArray, shape: readonly number[], argument: string): NpyArray {
  const dims = shape.filter((n) => n !== 1);
  if (dims.length <= 1 || src.length === 0) return src;
  const out = allocate(argument, undefined, src.byteLength, () => new (src.constructor as new (n: number) => NpyArray)(src.length));
  const nd = dims.length;
  const fStride: number[] = new Array(nd);
  let s = 1;
  for (let k = 0; k < nd; k++) {
    fStride[k] = s;
    s *= dims[k]!;
  }
  const idx = new Array(nd).fill(0);
  let f = 0;
  for (let c = 0; c < src.length; c++) {
    out[c] = src[f]!;
    for (let k = nd - 1; k >= 0; k--) {
      idx[k]++;
      f += fStride[k]!;
      if (idx[k] < dims[k]!) break;
      f -= idx[k] * fStride[k]!;
      idx[k] = 0;
    }
  }
  return out;
}

/** Parses a whole .npy file held in memory (e.g. an .npz member). */
export function parseNpy(bytes: Uint8Array, argument = "file"): NpyData {
  const header = parseNpyHeader(bytes, argument, bytes.byteLength);
  return decodeNpyData(header, bytes.subarray(header.dataOffset, header.dataOffset + header.size * header.itemSize), argument);
}

export { fileError } from "./files";

/**
 * Reads a .npy file: the header first, then the data in one positioned read into a buffer allocated for the
 * result (which becomes the typed array without a copy for native-endian C-order f4/f8/i1/i2/i4/u1/u2/u4/b1 data).
 */
export function readNpy(path: string, argument = "file"): NpyData {
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
    const pre = Buffer.alloc(Math.min(fileSize, 12));
    readFully(fd, pre, 0, argument, path);
    let headerBytes = pre;
    if (pre.length >= 10 && pre[6]! >= 1 && pre[6]! <= 3) {
      const len = pre[6] === 1 ? pre.readUInt16LE(8) + 10 : pre.length >= 12 ? pre.readUInt32LE(8) + 12 : 12;
      headerBytes = Buffer.alloc(Math.min(len, fileSize, MAX_HEADER + 12));
      readFully(fd, headerBytes, 0, argument, path);
    }
    const header = parseNpyHeader(new Uint8Array(headerBytes.buffer, headerBytes.byteOffset, headerBytes.byteLength), argument, fileSize);
    const nbytes = header.size * header.itemSize;
    // Allocate with room for alignment: the data lands at offset 0 of a fresh ArrayBuffer.
    const buf = allocate(argument, path, nbytes, () => new Uint8Array(new ArrayBuffer(nbytes)));
    readFully(fd, buf, header.dataOffset, argument, path);
    return decodeNpyData(header, buf, argument);
  } finally {
    closeSync(fd);
  }
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
  [Float32Array, "f4"], [Float64Array, "f8"], [Int8Array, "i1"], [Int16Array, "i2"], [Int32Array, "i4"],
  [Uint8Array, "u1"], [Uint16Array, "u2"], [Uint32Array, "u4"], [BigInt64Array, "i8"], [BigUint64Array, "u8"],
];

/** Serialises a typed array as a .npy file image (little-endian, C order; version 1.0, or 2.0 for huge headers). */
export function encodeNpy(
  data: NpyArray | BigInt64Array | BigUint64Array,
  shape: number[] = [data.length],
  options: { dtype?: NpyDtype } = {},
): Uint8Array {
  const found = DTYPE_OF.find(([C]) => data instanceof C);
  if (!found) throw new KgrankInputError("data", `must be a typed array (Float32Array, Int32Array, ...), got ${String((data as object)?.constructor?.name)}`);
  const dtype = checkOptions("options", options, ["dtype"]).dtype as NpyDtype | undefined ?? found[1];
  if (dtype !== found[1] && !(dtype === "b1" && found[1] === "u1")) {
    throw new KgrankInputError("dtype", `'${dtype}' does not match the array type ${(data as object).constructor.name} (dtype ${found[1]})`);
  }
  if (!Array.isArray(shape) || shape.some((n) => !Number.isSafeInteger(n) || n < 0) || shape.reduce((a, b) => a * b, 1) !== data.length) {
    throw new KgrankInputError("shape", `(${String(shape)}) does not match the array's ${data.length} elements`);
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
