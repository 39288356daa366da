/**
 * safetensors files: an 8-byte little-endian header length, a JSON header {name: {dtype, shape, data_offsets}},
 * then the tensors' bytes (little-endian, C order).
 */
import { closeSync, fstatSync, readSync } from "node:fs";

import { KgrankInputError } from "../errors";
import { quoted } from "../suggest";
import { allocate } from "./alloc";
import { fileError, openRegularFile } from "./files";
import { decodeNpyData, type NpyData, type NpyDtype } from "./npy";

const DTYPES: Record<string, NpyDtype> = {
  F16: "f2", F32: "f4", F64: "f8", I8: "i1", I16: "i2", I32: "i4", I64: "i8", U8: "u1", U16: "u2", U32: "u4", U64: "u8", BOOL: "b1",
};
const SIZES: Record<NpyDtype, number> = { f2: 2, f4: 4, f8: 8, i1: 1, i2: 2, i4: 4, i8: 8, u1: 1, u2: 2, u4: 4, u8: 8, b1: 1 };

/** Parses an in-memory safetensors file into arrays keyed by tensor name (`__metadata__` is skipped). */
export function parseSafetensors(bytes: Uint8Array, argument = "file"): Record<string, NpyData> {
  const bad = (msg: string) => new KgrankInputError(argument, `not a valid safetensors file: ${msg}`);
  if (bytes.length < 8) throw bad("shorter than its 8-byte header length");
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const len = Number(dv.getBigUint64(0, true));
  if (len > bytes.length - 8 || len > 100_000_000) throw bad(`header length ${len} exceeds the file (truncated or not safetensors)`);
  let header: Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + len)));
  } catch {
    throw bad("the header is not JSON");
  }
  if (typeof header !== "object" || header === null || Array.isArray(header)) throw bad("the header is not a JSON object");
  const base = 8 + len;
  // A null-prototype record: a tensor named "__proto__" is a tensor like any other.
  const out: Record<string, NpyData> = Object.create(null);
  for (const [name, t] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    // Own keys only: a dtype "constructor" or "toString" is not a dtype.
    const dtype = typeof t?.dtype === "string" && Object.hasOwn(DTYPES, t.dtype) ? DTYPES[t.dtype] : undefined;
    if (!dtype) throw bad(`tensor ${name} has dtype ${quoted(String(t?.dtype))} (accepted: ${Object.keys(DTYPES).join(" ")})`);
    const shape = t.shape;
    if (!Array.isArray(shape) || shape.some((n) => !Number.isSafeInteger(n) || n < 0)) throw bad(`tensor ${name} has a bad shape`);
    const size = shape.reduce((a, b) => a * b, 1);
    const [s, e] = Array.isArray(t.data_offsets) ? t.data_offsets : [NaN, NaN];
    if (!Number.isSafeInteger(s) || !Number.isSafeInteger(e) || s < 0 || e < s || base + e > bytes.length || e - s !== size * SIZES[dtype]) {
      throw bad(`tensor ${name}: data_offsets ${JSON.stringify(t.data_offsets)} do not fit its shape and the file`);
    }
    let data = bytes.subarray(base + s, base + e);
    if (data.byteOffset % SIZES[dtype] !== 0) data = data.slice();
    out[name] = decodeNpyData(
      { version: 1, dataOffset: 0, dtype, littleEndian: true, fortranOrder: false, shape, size, itemSize: SIZES[dtype] },
      data,
      `${argument}[${name}]`,
    );
  }
  return out;
}

/** Reads a safetensors file (one read of the whole file). */
export function readSafetensors(path: string, argument = "file"): Record<string, NpyData> {
  if (typeof path !== "string" || path === "") throw new KgrankInputError(argument, "must be a path to a .safetensors file");
  const fd = openRegularFile(path, argument);
  try {
    const size = fstatSync(fd).size;
    const buf = allocate(argument, path, size, () => new Uint8Array(new ArrayBuffer(size)));
    let done = 0;
    while (done < size) {
      const n = readSync(fd, buf, done, Math.min(size - done, 1 << 30), done);
      if (n === 0) break;
      done += n;
    }
    return parseSafetensors(buf.subarray(0, done), argument);
  } catch (e) {
    if (e instanceof KgrankInputError) throw e;
    throw fileError(argument, path, e);
  } finally {
    closeSync(fd);
  }
}
