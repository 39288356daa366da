/**
 * Binary state of a RankEvaluator: everything finalize() needs (tasks per side, provenance), so shards evaluated
 * in separate processes or machines merge exactly. Layout (little-endian):
 *   "KGRS" | u32 format version | u32 header bytes | u32 FNV-1a checksum of everything after this field |
 *   header JSON (UTF-8, padded with spaces to a multiple of 8) | per side (head, tail), per column: raw values
 */
import { KgrankInputError } from "../errors";
import { COLUMN_NAMES, type TaskColumns } from "./task-buffer";

export const STATE_FORMAT_VERSION = 1;
const MAGIC = "KGRS";

export interface StateHeader {
  format: number;
  numEntities: number;
  numRelations: number | null;
  sides: ("head" | "tail")[];
  ks: number[];
  metrics: string[] | null;
  weighting: "micro" | "macro";
  explicitWeights: boolean;
  filtered: boolean;
  filterTriples: number[];
  /** Distinct known triples; absent in states written before it was recorded. */
  knownTriples?: number | null;
  restrictEntities: number | null;
  restrictRelations: number | null;
  skipped: { head: number; tail: number };
  tasks: { head: number; tail: number };
}

const isI32 = (c: string) => c === "relation" || c === "anchor" || c === "truth";
/** On little-endian hosts (nearly all) columns are copied as bytes; elsewhere they are converted per element. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function fnv1a(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) {
    h ^= bytes[i]!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export function encodeState(header: StateHeader, sides: { head: TaskColumns; tail: TaskColumns }): Uint8Array {
  let json = JSON.stringify(header);
  json += " ".repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const headerBytes = new TextEncoder().encode(json);
  let payload = 0;
  for (const side of ["head", "tail"] as const) {
    for (const c of COLUMN_NAMES) payload += sides[side][c].byteLength;
  }
  const out = new Uint8Array(16 + headerBytes.length + payload);
  const view = new DataView(out.buffer);
  out.set(new TextEncoder().encode(MAGIC), 0);
  view.setUint32(4, STATE_FORMAT_VERSION, true);
  view.setUint32(8, headerBytes.length, true);
  out.set(headerBytes, 16);
  let off = 16 + headerBytes.length;
  for (const side of ["head", "tail"] as const) {
    for (const c of COLUMN_NAMES) {
      const col = sides[side][c];
      if (LITTLE_ENDIAN) {
        out.set(new Uint8Array(col.buffer, col.byteOffset, col.byteLength), off);
      } else {
        const dv = new DataView(out.buffer, off, col.byteLength);
        for (let i = 0; i < col.length; i++) {
          if (isI32(c)) dv.setInt32(4 * i, col[i]!, true);
          else dv.setFloat64(8 * i, col[i]!, true);
        }
      }
      off += col.byteLength;
    }
  }
  view.setUint32(12, fnv1a(out.subarray(16)), true);
  return out;
}

function corrupt(why: string): KgrankInputError {
  return new KgrankInputError("state", `is not a valid kgrank evaluator state: ${why}`);
}

export function decodeState(bytes: unknown): { header: StateHeader; sides: { head: TaskColumns; tail: TaskColumns } } {
  if (!(bytes instanceof Uint8Array)) throw new KgrankInputError("state", "must be a Uint8Array from RankEvaluator.serialize()");
  if (bytes.length < 16 || new TextDecoder().decode(bytes.subarray(0, 4)) !== MAGIC) throw corrupt("wrong magic bytes");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(4, true);
  if (version !== STATE_FORMAT_VERSION) {
    throw corrupt(`format version ${version}; this kgrank-native reads version ${STATE_FORMAT_VERSION}`);
  }
  const headerLength = view.getUint32(8, true);
  if (16 + headerLength > bytes.length) throw corrupt("truncated header");
  if (fnv1a(bytes.subarray(16)) !== view.getUint32(12, true)) throw corrupt("checksum mismatch (damaged or truncated)");
  let header: StateHeader;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(16, 16 + headerLength)));
  } catch {
    throw corrupt("unreadable header");
  }
  let off = 16 + headerLength;
  const sides = {} as { head: TaskColumns; tail: TaskColumns };
  for (const side of ["head", "tail"] as const) {
    const n = header.tasks?.[side];
    if (!Number.isInteger(n) || n < 0) throw corrupt(`bad task count for ${side}`);
    const cols = {} as Record<string, Float64Array | Int32Array>;
    for (const c of COLUMN_NAMES) {
      const size = (isI32(c) ? 4 : 8) * n;
      if (off + size > bytes.length) throw corrupt("truncated payload");
      const a = isI32(c) ? new Int32Array(n) : new Float64Array(n);
      if (LITTLE_ENDIAN) {
        new Uint8Array(a.buffer).set(bytes.subarray(off, off + size));
      } else {
        const dv = new DataView(bytes.buffer, bytes.byteOffset + off, size);
        for (let i = 0; i < n; i++) a[i] = isI32(c) ? dv.getInt32(4 * i, true) : dv.getFloat64(8 * i, true);
      }
      cols[c] = a;
      off += size;
    }
    sides[side] = cols as unknown as TaskColumns;
  }
  if (off !== bytes.length) throw corrupt("trailing bytes");
  return { header, sides };
}
