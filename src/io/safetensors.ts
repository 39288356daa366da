/**
 * safetensors files: an 8-byte little-endian header length, a JSON header {name: {dtype, shape, data_offsets}},
 * then the tensors' bytes (little-endian, C order).
 */
import { closeSync, fstatSync, readSync } from "node:fs";

import { KgrankInputError } from "../checks/errors";
import { quoted, shortName } from "../text/suggest";
import { allocate } from "../checks/alloc";
import { fileError, openRegularFile } from "./files";
import { decodeNpyData, ITEM_SIZE, type NpyData, type NpyDtype } from "./npy";

const DTYPES: Record<string, NpyDtype> = {
  BF16: "bf16",
  F16: "f2",
  F32: "f4",
  F64: "f8",
  I8: "i1",
  I16: "i2",
  I32: "i4",
  I64: "i8",
  U8: "u1",
  U16: "u2",
  U32: "u4",
  U64: "u8",
  BOOL: "b1",
};

/** One tensor of a safetensors header, checked: its bytes are [begin, end) of the file. */
export interface SafetensorsTensor {
  name: string;
  dtype: NpyDtype;
  shape: number[];
  size: number;
  begin: number;
  end: number;
}

/** Bytes to read for the header, from the file's first 8 bytes `pre` (the JSON header's declared length, capped). */
export function safetensorsHeaderLength(pre: Uint8Array, fileSize: number, argument: string): number {
  const bad = (msg: string) => new KgrankInputError(argument, `not a valid safetensors file: ${msg}`);
  if (pre.length < 8) throw bad("shorter than its 8-byte header length");
  const len64 = new DataView(pre.buffer, pre.byteOffset, 8).getBigUint64(0, true);
  if (len64 > BigInt(fileSize - 8)) {
    throw bad(
      `its first 8 bytes declare a ${len64}-byte JSON header but only ${fileSize - 8} bytes follow (truncated, or not a safetensors file)`,
    );
  }
  const len = Number(len64);
  if (len > 100_000_000) throw bad(`the JSON header is ${len} bytes, more than the 100 MB safetensors allows`);
  return 8 + len;
}

/** Parses an in-memory safetensors file into arrays keyed by tensor name (`__metadata__` is skipped). */
export function parseSafetensors(bytes: Uint8Array, argument = "file"): Record<string, NpyData> {
  const { base, tensors } = parseSafetensorsHeader(bytes, bytes.length, argument);
  // A null-prototype record: a tensor named "__proto__" is a tensor like any other.
  const out: Record<string, NpyData> = Object.create(null);
  for (const { name, dtype, shape, size, begin, end } of tensors) {
    let data = bytes.subarray(base + begin, base + end);
    const arg = `${argument}[${shortName(name)}]`;
    if (data.byteOffset % ITEM_SIZE[dtype] !== 0) data = allocate(arg, undefined, data.length, () => data.slice());
    out[name] = decodeNpyData(
      {
        version: 1,
        dataOffset: 0,
        dtype,
        littleEndian: true,
        fortranOrder: false,
        shape,
        size,
        itemSize: ITEM_SIZE[dtype],
      },
      data,
      arg,
    );
  }
  return out;
}

/**
 * Parses a safetensors header: `bytes` holds at least the 8-byte length and the JSON header; `fileSize` is the whole
 * file's. Returns where the data starts (`base`) and each tensor, checked against the file's size (tensors never
 * overlap). No tensor data is read.
 */
export function parseSafetensorsHeader(
  bytes: Uint8Array,
  fileSize: number,
  argument = "file",
): { base: number; tensors: SafetensorsTensor[] } {
  const bad = (msg: string) => new KgrankInputError(argument, `not a valid safetensors file: ${msg}`);
  const len = safetensorsHeaderLength(bytes, fileSize, argument) - 8;
  if (bytes.length < 8 + len) throw bad(`${bytes.length} bytes given, the header needs ${8 + len}`);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(8, 8 + len)));
  } catch (e) {
    throw bad(`the ${len}-byte header is not UTF-8 JSON (${(e as Error).message.slice(0, 120)})`);
  }
  const kind = (v: unknown) =>
    v === null
      ? "null"
      : Array.isArray(v)
        ? "an array"
        : typeof v === "object"
          ? "an object"
          : `${JSON.stringify(v)?.slice(0, 40)}`;
  if (typeof header !== "object" || header === null || Array.isArray(header)) {
    throw bad(
      `the header is ${kind(header)}, not a JSON object of tensors {"name": {"dtype", "shape", "data_offsets"}}`,
    );
  }
  const base = 8 + len;
  const dataBytes = fileSize - base;
  const checked: {
    name: string;
    tensor: string;
    dtype: NpyDtype;
    shape: number[];
    size: number;
    s: number;
    e: number;
  }[] = [];
  for (const [name, t] of Object.entries(header as Record<string, unknown>)) {
    // quoted() cuts a long name and reports its full length.
    const tensor = `tensor ${quoted(name)}`;
    if (name === "__metadata__") {
      if (
        typeof t !== "object" ||
        t === null ||
        Array.isArray(t) ||
        Object.values(t).some((v) => typeof v !== "string")
      ) {
        throw bad(`__metadata__ is ${kind(t)}, not an object of strings`);
      }
      continue;
    }
    if (typeof t !== "object" || t === null || Array.isArray(t))
      throw bad(`${tensor} is ${kind(t)}, not an object {dtype, shape, data_offsets}`);
    const {
      dtype: dt,
      shape,
      data_offsets: offsets,
    } = t as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    // Own keys only: a dtype "constructor" or "toString" is not a dtype.
    const dtype = typeof dt === "string" && Object.hasOwn(DTYPES, dt) ? DTYPES[dt] : undefined;
    if (!dtype)
      throw bad(
        `${tensor} has dtype ${dt === undefined ? "missing" : quoted(String(dt).slice(0, 40))} (accepted: ${Object.keys(DTYPES).join(" ")})`,
      );
    if (shape === undefined) throw bad(`${tensor}: shape is missing`);
    if (!Array.isArray(shape) || shape.some((n) => !Number.isSafeInteger(n) || n < 0)) {
      throw bad(`${tensor}: shape ${JSON.stringify(shape).slice(0, 80)} is not a list of non-negative integers`);
    }
    const size = (shape as number[]).reduce((a, b) => a * b, 1);
    if (offsets === undefined) throw bad(`${tensor}: data_offsets is missing`);
    const shown = JSON.stringify(offsets).slice(0, 80);
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((n) => Number.isSafeInteger(n) && n >= 0)) {
      throw bad(`${tensor}: data_offsets ${shown} is not a pair [begin, end] of non-negative integers`);
    }
    const [s, e] = offsets as [number, number];
    if (e < s) throw bad(`${tensor}: data_offsets ${shown} end before they start`);
    if (e > dataBytes)
      throw bad(`${tensor}: data_offsets ${shown} end past the ${dataBytes} data bytes of the file (truncated file?)`);
    if (e - s !== size * ITEM_SIZE[dtype]) {
      throw bad(
        `${tensor}: data_offsets ${shown} hold ${e - s} bytes but shape ${JSON.stringify(shape).slice(0, 80)} of ${dt} needs ${size * ITEM_SIZE[dtype]}`,
      );
    }
    checked.push({ name, tensor, dtype, shape: shape as number[], size, s, e });
  }
  // Tensors never share bytes (the safetensors library refuses overlapping offsets): overlapping ones would decode the
  // same bytes once per tensor, so a small file could cost memory and time in proportion to tensors x data.
  const spans = checked.filter((t) => t.e > t.s).sort((x, y) => x.s - y.s);
  for (let i = 1; i < spans.length; i++) {
    if (spans[i]!.s < spans[i - 1]!.e)
      throw bad(`${spans[i - 1]!.tensor} and ${spans[i]!.tensor} overlap (data_offsets sharing bytes)`);
  }
  return {
    base,
    tensors: checked.map(({ name, dtype, shape, size, s, e }) => ({ name, dtype, shape, size, begin: s, end: e })),
  };
}

/** Reads a safetensors file (one read of the whole file). */
export function readSafetensors(path: string, argument = "file"): Record<string, NpyData> {
  if (typeof path !== "string" || path === "")
    throw new KgrankInputError(argument, "must be a path to a .safetensors file");
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
