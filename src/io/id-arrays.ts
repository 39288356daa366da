/**
 * Datasets given as integer id arrays: train, valid and test as SPLIT.npy (shape (n, 3): head, relation, tail) or
 * SPLIT.npz with 1-D `head`, `relation` and `tail` arrays (the keys of OGB's ogbl-wikikg2 split dicts; other arrays,
 * such as `head_neg`, are ignored). The ids are the arrays' own: nothing is sorted or dropped. Optional label files
 * (entities.tsv / .txt / .dict, relations.tsv / .txt / .dict; one line per id, "label" or "id<TAB>label") give the
 * labels and the counts; without them the counts are the largest id + 1 over the splits and each label is its id.
 * Every id is checked: a negative id, a fractional one or one not below the count is an error naming the file, the
 * row and the column. Memory: the file's bytes and 12 bytes per row.
 */
import { existsSync } from "node:fs";
import * as path from "node:path";

import { KgrankInputError } from "../checks/errors";
import { describe } from "../checks/validate";
import { formatDims, quoted, quotedList } from "../text/suggest";
import { readRegularFile, readRegularFileAsync } from "./files";
import { decodeNpyData, type NpyData, parseNpyHeader } from "./npy";
import { readNpz } from "./npz";
import { invalidUtf8Line } from "./tsv";

export const ID_ARRAY_EXTS = [".npy", ".npz"] as const;
const COLUMNS = ["head", "relation", "tail"] as const;
const INTEGER = new Set(["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"]);

export interface IdArrayDataset {
  entityLabels: string[];
  relationLabels: string[];
  numEntities: number;
  numRelations: number;
  /** Per split (train, valid, test): t x 3 ids. */
  triples: Int32Array[];
}

/** True when `file` is a split given as id arrays. */
export function isIdArrayFile(file: string): boolean {
  return (ID_ARRAY_EXTS as readonly string[]).includes(path.extname(file).toLowerCase());
}

/** The (head, relation, tail) columns of a split file, each with its name in errors. */
function columns(
  file: string,
  npy: NpyData | null,
): { data: NpyData["data"]; stride: number; offset: number; name: string }[] {
  const bad = (what: string) => new KgrankInputError("dataset", `${file}: ${what}`);
  const integer = (a: NpyData, name: string) => {
    if (!INTEGER.has(a.dtype))
      throw bad(
        `${name} has dtype ${a.dtype}; ids must be integers (int32 or int64, as torch.load gives OGB's splits)`,
      );
  };
  if (npy) {
    integer(npy, "the array");
    if (npy.shape.length !== 2 || npy.shape[1] !== 3)
      throw bad(`has shape [${formatDims(npy.shape)}]; a split's .npy must have shape (n, 3): head, relation, tail`);
    return COLUMNS.map((name, c) => ({ data: npy.data, stride: 3, offset: c, name: `column ${c} (${name})` }));
  }
  const all = readNpz(file, "dataset");
  const missing = COLUMNS.filter((k) => !Object.hasOwn(all, k));
  if (missing.length > 0)
    throw bad(
      `has no ${quotedList(missing)} array (it holds ${quotedList(Object.keys(all))}); a split's .npz needs 1-D head, relation and tail`,
    );
  const n = all.head!.data.length;
  return COLUMNS.map((name) => {
    const a = all[name]!;
    integer(a, `array "${name}"`);
    if (a.shape.length !== 1 || a.data.length !== n)
      throw bad(
        `array "${name}" has shape [${formatDims(a.shape)}]; head, relation and tail must be 1-D of one length (${n})`,
      );
    return { data: a.data, stride: 1, offset: 0, name: `array "${name}"` };
  });
}

/** True when v is not an id: a whole number in [0, 2^31 - 1). */
function notAnId(v: number): boolean {
  return !(v >= 0 && v < 2147483647) || v !== Math.floor(v);
}

function notAnIdError(file: string, row: number, column: string, v: number | bigint): KgrankInputError {
  return new KgrankInputError(
    "dataset",
    `${file} row ${row} ${column}: id ${v} is not an id (ids are whole numbers from 0 to 2^31 - 2)`,
  );
}

/**
 * A .npy split's ids: little-endian C-order int64 (n, 3), as OGB's arrays are saved, is read as pairs of 32-bit
 * words without a Float64Array in between (an id is a pair whose high word is 0 and whose low word is below 2^31 - 1);
 * any other dtype is decoded by the .npy reader and checked by splitIds.
 */
function npySplit(file: string, bytes: Buffer): { triples: Int32Array; max: [number, number] } {
  const header = parseNpyHeader(bytes, "dataset", bytes.byteLength);
  const { dataOffset, size, itemSize } = header;
  if (
    header.dtype === "i8" &&
    header.littleEndian &&
    !header.fortranOrder &&
    header.shape.length === 2 &&
    header.shape[1] === 3
  ) {
    let at = bytes.byteOffset + dataOffset;
    let buffer = bytes.buffer;
    if (at % 4 !== 0) {
      buffer = bytes.buffer.slice(at, at + size * itemSize);
      at = 0;
    }
    const words = new Int32Array(buffer, at, size * 2);
    const out = new Int32Array(size);
    const max: [number, number] = [-1, -1];
    for (let k = 0; k < size; k++) {
      const lo = words[2 * k]!;
      const hi = words[2 * k + 1]!;
      if (hi !== 0 || lo < 0 || lo === 2147483647) {
        const c = k % 3;
        throw notAnIdError(
          file,
          Math.floor(k / 3),
          `column ${c} (${COLUMNS[c]})`,
          (BigInt(hi) << 32n) | BigInt(lo >>> 0),
        );
      }
      out[k] = lo;
      const j = k % 3 === 1 ? 1 : 0;
      if (lo > max[j]) max[j] = lo;
    }
    return { triples: out, max };
  }
  return splitIds(file, decodeNpyData(header, bytes.subarray(dataOffset, dataOffset + size * itemSize), "dataset"));
}

/** A split's ids as t x 3 Int32Array, each checked to be a whole number in [0, 2^31 - 1). */
function splitIds(file: string, npy: NpyData | null): { triples: Int32Array; max: [number, number] } {
  const cols = columns(file, npy);
  const n = npy ? npy.shape[0]! : cols[0]!.data.length;
  const out = new Int32Array(n * 3);
  const max: [number, number] = [-1, -1];
  cols.forEach(({ data, stride, offset, name }, c) => {
    let m = c === 1 ? max[1] : max[0];
    for (let i = 0, k = offset; i < n; i++, k += stride) {
      const v = data[k]!;
      if (notAnId(v)) throw notAnIdError(file, i, name, v);
      out[i * 3 + c] = v;
      if (v > m) m = v;
    }
    if (c === 1) max[1] = m;
    else max[0] = m;
  });
  return { triples: out, max };
}

/**
 * The first label that repeats an earlier one, as [earlier index, later index], or null. Without a Set of every label
 * (2.5 M labels: about 2 s): 32-bit FNV-1a hashes are sorted, and only labels whose hash occurs twice are compared.
 */
function firstDuplicate(labels: string[]): [number, number] | null {
  const n = labels.length;
  const hashes = new Uint32Array(n);
  for (let k = 0; k < n; k++) {
    const l = labels[k]!;
    let x = 0x811c9dc5;
    for (let i = 0; i < l.length; i++) x = Math.imul(x ^ l.charCodeAt(i), 16777619);
    hashes[k] = x >>> 0;
  }
  const sorted = hashes.slice().sort();
  const collide = new Set<number>();
  for (let i = 1; i < n; i++) if (sorted[i] === sorted[i - 1]) collide.add(sorted[i]!);
  if (collide.size === 0) return null;
  const first = new Map<string, number>();
  for (let k = 0; k < n; k++) {
    if (!collide.has(hashes[k]!)) continue;
    const p = first.get(labels[k]!);
    if (p !== undefined) return [p, k];
    first.set(labels[k]!, k);
  }
  return null;
}

/**
 * The labels of a label file: one line per id, "label" or "id<TAB>label" (the id map format of --entity-ids, and
 * the .dict files of RotatE's datasets), UTF-8, each label once; errors name the file and the 1-based line.
 */
function readLabels(file: string): string[] {
  const bytes = readRegularFile(file, "dataset");
  const notUtf8 = invalidUtf8Line(bytes);
  if (notUtf8 !== null) throw new KgrankInputError("dataset", `${file}: ${notUtf8}`);
  const lines = bytes.toString("utf8").split("\n");
  const labels: string[] = [];
  const lineOf: number[] = [];
  for (let k = 0; k < lines.length; k++) {
    let l = lines[k]!;
    if (l.endsWith("\r")) l = l.slice(0, -1);
    if (l.length === 0) continue;
    const i = labels.length;
    const tab = l.indexOf("\t");
    let label = l;
    if (tab >= 0) {
      if (l.indexOf("\t", tab + 1) >= 0 || l.slice(0, tab) !== String(i))
        throw new KgrankInputError(
          "dataset",
          `${file} line ${k + 1}: expected "label" or "${i}<TAB>label", got ${describe(l)}`,
        );
      label = l.slice(tab + 1);
    }
    labels.push(label);
    lineOf.push(k + 1);
  }
  const dup = firstDuplicate(labels);
  if (dup) {
    throw new KgrankInputError(
      "dataset",
      `${file} line ${lineOf[dup[1]]}: label ${quoted(labels[dup[1]]!)} is also on line ${lineOf[dup[0]]}: each id needs its own label`,
    );
  }
  return labels;
}

/** The label file of `kind` in `dir`, or null. */
function labelFile(dir: string, kind: "entities" | "relations"): string | null {
  for (const ext of [".tsv", ".txt", ".dict"]) {
    const file = path.join(dir, kind + ext);
    if (existsSync(file)) return file;
  }
  return null;
}

/** Checks every id of the splits against the counts; the error names the file, row and column. */
function checkCounts(
  files: string[],
  triples: Int32Array[],
  counts: [number, number],
  labelFiles: (string | null)[],
): void {
  triples.forEach((t, s) => {
    for (let k = 0; k < t.length; k++) {
      const c = k % 3;
      const limit = c === 1 ? counts[1] : counts[0];
      if (t[k]! >= limit) {
        const kind = c === 1 ? "relations" : "entities";
        throw new KgrankInputError(
          "dataset",
          `${files[s]} row ${Math.floor(k / 3)} column ${c} (${COLUMNS[c]}): id ${t[k]} is not below the ${limit} ${kind} of ${labelFiles[c === 1 ? 1 : 0]}`,
        );
      }
    }
  });
}

/**
 * Without a label file the count of entities (j = 0) or relations (j = 1) is the largest id + 1. A count far beyond
 * what the splits' rows can mention (more than 8 ids per id cell, past 1024) is refused, naming the id's file, row
 * and column: one id is most likely wrong (a 2^31 - 2 among ids below 15,000), and every id up to it would be a
 * candidate that each ranking scores (2^31 - 1 entities: 8 GiB of scores per query). A label file states the count
 * on purpose, so sparse ids with one are taken as given (a sample of a large graph's triples).
 */
function checkSparse(
  files: string[],
  parts: { triples: Int32Array; max: [number, number] }[],
  j: 0 | 1,
  count: number,
): void {
  const rows = parts.reduce((n, p) => n + p.triples.length / 3, 0);
  const cells = j === 0 ? 2 * rows : rows;
  if (count <= 1024 || count <= 8 * cells) return;
  const id = count - 1;
  const s = parts.findIndex((p) => p.max[j] === id);
  const t = parts[s]!.triples;
  let k = 0;
  while (!(t[k] === id && (k % 3 === 1) === (j === 1))) k++;
  const c = k % 3;
  const kind = j === 0 ? "entities" : "relations";
  throw new KgrankInputError(
    "dataset",
    `${files[s]} row ${Math.floor(k / 3)} column ${c} (${COLUMNS[c]}): id ${id} would make ${count} ${kind}, but the ` +
      `splits' ${rows} rows mention at most ${cells} (largest id in train: ${parts[0]!.max[j]}), and every id up to it ` +
      `would be ranked as a candidate: fix that id, number the ids from 0 without gaps, or give ${kind}.tsv with ` +
      `one label per id to state the count`,
  );
}

function assemble(
  dir: string,
  files: string[],
  parts: { triples: Int32Array; max: [number, number] }[],
): IdArrayDataset {
  const labelFiles = [labelFile(dir, "entities"), labelFile(dir, "relations")];
  const labels = labelFiles.map((f) => (f ? readLabels(f) : null));
  const counts = [0, 1].map((j) => labels[j]?.length ?? 1 + Math.max(-1, ...parts.map((p) => p.max[j]!))) as [
    number,
    number,
  ];
  for (const j of [0, 1] as const) if (!labels[j]) checkSparse(files, parts, j, counts[j]);
  if (labels[0] || labels[1])
    checkCounts(
      files,
      parts.map((p) => p.triples),
      counts,
      labelFiles,
    );
  return {
    entityLabels: labels[0] ?? idLabels(counts[0]),
    relationLabels: labels[1] ?? idLabels(counts[1]),
    numEntities: counts[0],
    numRelations: counts[1],
    triples: parts.map((p) => p.triples),
  };
}

/**
 * Labels "0" .. "n-1" for a dataset without a label file, made only when asked for: the count and each label by
 * index (`labels[k]`, `labels.length`, `k in labels`) cost nothing, since the label of id k is the index's own
 * string; anything else (iterating, `map`, `indexOf`, ...) makes the whole array once and answers from it. A
 * dataset of 2^31 - 1 ids loads without a string per id.
 */
export function idLabels(n: number): string[] {
  let all: string[] | undefined;
  const whole = () => {
    if (!all) {
      all = new Array<string>(n);
      for (let k = 0; k < n; k++) all[k] = String(k);
    }
    return all;
  };
  // A canonical index ("0", "17"): in range its label is itself; past the end there is none (no array made).
  const numeric = (p: string | symbol): boolean => typeof p === "string" && /^(0|[1-9]\d*)$/.test(p);
  const index = (p: string | symbol) => numeric(p) && Number(p) < n;
  return new Proxy([] as string[], {
    get(_target, p) {
      if (p === "length") return n;
      if (numeric(p)) return Number(p) < n ? (p as string) : undefined;
      // An array's own properties are its indices and length: anything else is Array.prototype's or absent.
      if (!(p in Array.prototype)) return undefined;
      const v = Reflect.get(whole(), p) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(whole()) : v;
    },
    has: (_target, p) => (numeric(p) ? index(p) : p === "length" || p in Array.prototype),
    set: () => false,
    deleteProperty: () => false,
    ownKeys: () => Reflect.ownKeys(whole()),
    getOwnPropertyDescriptor: (_target, p) => {
      if (p === "length") return { value: n, writable: true, enumerable: false, configurable: false };
      return index(p) ? { value: p, writable: false, enumerable: true, configurable: true } : undefined;
    },
  });
}

/**
 * A split file's ids, read by `read`; an error of the .npy / .npz readers (a truncated file, an object dtype, an
 * int64 past 2^53) is given the file's name, as the checks here give it.
 */
function splitOf(file: string, read: () => { triples: Int32Array; max: [number, number] }) {
  try {
    return read();
  } catch (e) {
    if (!(e instanceof KgrankInputError) || e.argument !== "dataset" || e.message.includes(file)) throw e;
    throw new KgrankInputError("dataset", `${file}: ${e.message.slice("dataset: ".length)}`);
  }
}

/** Loads the id-array splits `files` (train, valid, test) of `dir`. */
export function loadIdArrays(dir: string, files: string[]): IdArrayDataset {
  const parts = files.map((f) =>
    splitOf(f, () =>
      path.extname(f).toLowerCase() === ".npy" ? npySplit(f, readRegularFile(f, "dataset")) : splitIds(f, null),
    ),
  );
  return assemble(dir, files, parts);
}

/** loadIdArrays with each .npy file read off the event loop (its ids are checked, and .npz files read, at once). */
export async function loadIdArraysAsync(dir: string, files: string[], signal?: AbortSignal): Promise<IdArrayDataset> {
  const parts = [];
  for (const f of files) {
    const bytes = path.extname(f).toLowerCase() === ".npy" ? await readRegularFileAsync(f, "dataset", signal) : null;
    parts.push(splitOf(f, () => (bytes ? npySplit(f, bytes) : splitIds(f, null))));
    signal?.throwIfAborted();
  }
  return assemble(dir, files, parts);
}
