/**
 * Triples as TSV (`head<TAB>relation<TAB>tail`, one per line). `splitTsvTriples` is a small pure function over
 * text (UTF-8 BOM and CRLF accepted, empty lines skipped, any other column count rejected with its line number);
 * `readTriples` maps labels to ids. Ids follow PyKEEN: the sorted labels of the *training* triples, so score
 * matrices exported from PyKEEN line up column for column. The splitter's twin is native/core/parse.cpp
 * (split_tsv_triples), which the native backend runs.
 */
import { isAscii, isUtf8 } from "node:buffer";

import { nativeParsers } from "../backend/parsers";
import { KgrankInputError } from "../checks/errors";
import { options as checkOptions } from "../checks/validate";
import { readRegularFile } from "./files";
import { utf8ErrorOffset } from "./npy";
import { ROW_STEP, runSteps, type Steps } from "./steps";

/**
 * Splits TSV text into [head, relation, tail] rows. Pure. A leading BOM and `\r\n` line ends are accepted; blank
 * lines (empty or only whitespace) are skipped; a line with another number of tab-separated fields, or an empty
 * field, is a KgrankInputError naming the 1-based line.
 */
export function splitTsvTriples(text: string, argument = "file"): [string, string, string][] {
  // Native: the C++ splitter over the UTF-8 bytes (a string with lone surrogates would not survive the round trip).
  if (nativeParsers() && typeof text === "string" && (text as unknown as { isWellFormed(): boolean }).isWellFormed()) {
    return splitTsvBytes(Buffer.from(text, "utf8"), argument);
  }
  return splitTsvTriplesTs(text, argument);
}

/**
 * Splits UTF-8 TSV bytes into rows: the C++ splitter (native/core/parse.cpp, fuzzed by native/fuzz/fuzz_tsv.cpp)
 * finds the field offsets, the labels are decoded here; on the fallback, decodes the text and runs splitTsvTriplesTs.
 * Same rows and same errors either way.
 */
export function splitTsvBytes(bytes: Buffer, argument = "file"): [string, string, string][] {
  const parsers = nativeParsers();
  if (!parsers || bytes.length > 0xffffffff) return splitTsvBytesTs(bytes, argument);
  const r = parsers.splitTsvTriples(bytes, argument);
  const n = r.length / 6;
  const rows = new Array<[string, string, string]>(n);
  if (isAscii(bytes)) {
    // Byte offsets are string offsets: one decode, then slices (about 1.6x faster than decoding each field).
    const text = bytes.toString("latin1");
    for (let i = 0, k = 0; i < n; i++, k += 6) {
      rows[i] = [text.slice(r[k]!, r[k + 1]!), text.slice(r[k + 2]!, r[k + 3]!), text.slice(r[k + 4]!, r[k + 5]!)];
    }
    return rows;
  }
  for (let i = 0, k = 0; i < n; i++, k += 6) {
    rows[i] = [
      bytes.toString("utf8", r[k]!, r[k + 1]!),
      bytes.toString("utf8", r[k + 2]!, r[k + 3]!),
      bytes.toString("utf8", r[k + 4]!, r[k + 5]!),
    ];
  }
  return rows;
}

/**
 * The TypeScript byte splitter, twin of native/core/parse.cpp split_tsv_triples: the bytes must be UTF-8 (a Latin-1
 * file would otherwise decode "café" and "cafè" both to "caf\uFFFD" and merge two entities; NumPy and PyKEEN read
 * strict UTF-8 and raise), then the text is split by splitTsvTriplesTs.
 */
export function splitTsvBytesTs(bytes: Uint8Array, argument = "file"): [string, string, string][] {
  const bad = invalidUtf8Line(bytes);
  if (bad !== null) throw new KgrankInputError(argument, bad);
  return splitTsvTriplesTs(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"), argument);
}

/** Bytes per piece of splitTsvSteps: a few ms of splitting. */
const PIECE = 1 << 17;

/**
 * [start, end) byte ranges of about PIECE bytes covering `bytes`, each but the last ending just after a newline, and
 * none after the first starting with the bytes of a BOM (the one-call splitter drops a BOM only at the file's start).
 * At least one range, also for no bytes.
 */
function tsvPieces(bytes: Uint8Array): [number, number][] {
  const pieces: [number, number][] = [];
  let start = 0;
  while (bytes.length - start > PIECE) {
    let cut = bytes.indexOf(0x0a, start + PIECE - 1);
    while (cut >= 0 && bytes[cut + 1] === 0xef && bytes[cut + 2] === 0xbb && bytes[cut + 3] === 0xbf)
      cut = bytes.indexOf(0x0a, cut + 1);
    if (cut < 0 || cut + 1 >= bytes.length) break;
    pieces.push([start, cut + 1]);
    start = cut + 1;
  }
  pieces.push([start, bytes.length]);
  return pieces;
}

/** Newlines in bytes[start, end). */
function newlines(bytes: Uint8Array, start: number, end: number): number {
  let n = 0;
  for (let i = bytes.indexOf(0x0a, start); i >= 0 && i < end; i = bytes.indexOf(0x0a, i + 1)) n++;
  return n;
}

/**
 * Runs `consume` on each piece of about PIECE bytes of `bytes` (whole lines), in steps (./steps.ts), with the errors
 * of one call over the whole file: an invalid UTF-8 byte anywhere is reported before any other problem, and a
 * piece's "line N" errors are renumbered to the file's lines.
 */
export function* tsvPiecesSteps(bytes: Buffer, argument: string, consume: (piece: Buffer) => void): Steps<void> {
  const pieces = tsvPieces(bytes);
  if (pieces.length === 1) return consume(bytes);
  // A piece's own line numbers, moved to the file's.
  const renumbered = (line: number, f: () => void) => {
    try {
      f();
    } catch (e) {
      if (!(e instanceof KgrankInputError) || e.argument !== argument) throw e;
      const message = e.message
        .slice(argument.length + 2)
        .replace(/^line (\d+)/, (_, n: string) => `line ${Number(n) + line}`);
      throw new KgrankInputError(argument, message);
    }
  };
  let line = 0;
  for (const [start, end] of pieces) {
    const piece = bytes.subarray(start, end);
    if (!isUtf8(piece))
      renumbered(line, () => {
        throw new KgrankInputError(argument, invalidUtf8Line(piece)!);
      });
    line += newlines(bytes, start, end);
    yield;
  }
  line = 0;
  for (const [start, end] of pieces) {
    renumbered(line, () => consume(bytes.subarray(start, end)));
    line += newlines(bytes, start, end);
    yield;
  }
}

/**
 * splitTsvBytes in steps of about PIECE bytes (./steps.ts): the same rows and the same errors (lines numbered in the
 * whole file; an invalid UTF-8 byte anywhere is reported before any other problem, as the one-call splitter does).
 */
export function* splitTsvSteps(bytes: Buffer, argument = "file"): Steps<[string, string, string][]> {
  const rows: [string, string, string][] = [];
  yield* tsvPiecesSteps(bytes, argument, (piece) => {
    const part = splitTsvBytes(piece, argument);
    for (let i = 0; i < part.length; i++) rows.push(part[i]!);
  });
  return rows;
}

/**
 * Null when `bytes` are all UTF-8; else "line N is not valid UTF-8 (...)" naming the 1-based line and the first bad
 * byte (the C++ twin builds the same message). Every reader of text files (TSV triples, id maps) refuses with it.
 */
export function invalidUtf8Line(bytes: Uint8Array): string | null {
  const bad = utf8ErrorOffset(bytes);
  if (bad < 0) return null;
  let line = 1;
  let lineStart = 0;
  for (let i = bytes.indexOf(0x0a); i >= 0 && i < bad; i = bytes.indexOf(0x0a, i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return invalidUtf8Message(line, bytes[bad]!, bad - lineStart + 1);
}

/** The message for a text line that is not UTF-8 (the C++ twin builds the same). */
function invalidUtf8Message(line: number, byte: number, column: number): string {
  return (
    `line ${line} is not valid UTF-8 (byte 0x${byte.toString(16).padStart(2, "0")} at byte ${column} of the line): the file must be ` +
    `UTF-8, as PyKEEN reads it; re-encode it, e.g. iconv -f latin1 -t utf-8 FILE > FILE.utf8`
  );
}

/**
 * The TypeScript splitter: the fallback backend's, and the reference of the C++ port. Also used by
 * bench/parse-tsv.mjs, through dist/.
 * @public
 */
export function splitTsvTriplesTs(text: string, argument = "file"): [string, string, string][] {
  const rows: [string, string, string][] = [];
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let lineNo = 0;
  while (start <= text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    lineNo++;
    let line = text.slice(start, end);
    if (line.endsWith("\r")) line = line.slice(0, -1);
    start = end + 1;
    if (line.trim() === "") continue;
    const fields = line.split("\t");
    if (fields.length !== 3) {
      throw new KgrankInputError(
        argument,
        `line ${lineNo} has ${fields.length} tab-separated field${fields.length === 1 ? "" : "s"}, expected 3 (head<TAB>relation<TAB>tail)`,
      );
    }
    if (fields.some((f) => f === ""))
      throw new KgrankInputError(argument, `line ${lineNo} has an empty field (head<TAB>relation<TAB>tail)`);
    rows.push(fields as [string, string, string]);
  }
  return rows;
}

export interface LabelMaps {
  /** Entity labels in id order (sorted). */
  entityLabels: string[];
  /** Relation labels in id order (sorted). */
  relationLabels: string[];
  entityToId: Map<string, number>;
  relationToId: Map<string, number>;
}

export interface TriplesFile extends LabelMaps {
  /** t x 3 (head, relation, tail) ids. */
  triples: Int32Array;
  /** Triples dropped because a label is unknown to the given maps (0 when the maps were built from this file). */
  dropped: number;
}

/** Label maps as PyKEEN builds them from training triples: sorted distinct entity (head or tail) and relation labels. */
export function labelMaps(rows: readonly (readonly string[])[]): LabelMaps {
  return runSteps(labelMapsSteps(rows));
}

/** labelMaps in steps of ROW_STEP rows (./steps.ts). */
function* labelMapsSteps(rows: readonly (readonly string[])[]): Steps<LabelMaps> {
  const ents = new Set<string>();
  const rels = new Set<string>();
  for (let i0 = 0; i0 < rows.length; i0 += ROW_STEP) {
    for (let i = i0, end = Math.min(rows.length, i0 + ROW_STEP); i < end; i++) {
      const [h, r, t] = rows[i]!;
      ents.add(h!);
      ents.add(t!);
      rels.add(r!);
    }
    yield;
  }
  const entityLabels = [...ents].sort(byCodePoint);
  yield;
  const relationLabels = [...rels].sort(byCodePoint);
  return {
    entityLabels,
    relationLabels,
    entityToId: new Map(entityLabels.map((l, i) => [l, i])),
    relationToId: new Map(relationLabels.map((l, i) => [l, i])),
  };
}

/** Python's sorted() order for str: by Unicode code point (JavaScript's default sorts UTF-16 units). */
export function byCodePoint(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/** Maps label rows to ids; rows with a label missing from the maps are dropped and counted. */
export function mapTriples(
  rows: readonly (readonly string[])[],
  maps: LabelMaps,
): { triples: Int32Array; dropped: number } {
  return runSteps(mapTriplesSteps(rows, maps));
}

/** mapTriples in steps of ROW_STEP rows (./steps.ts). */
function* mapTriplesSteps(
  rows: readonly (readonly string[])[],
  maps: LabelMaps,
): Steps<{ triples: Int32Array; dropped: number }> {
  const out = new Int32Array(rows.length * 3);
  let k = 0;
  for (let i0 = 0; i0 < rows.length; i0 += ROW_STEP) {
    for (let i = i0, end = Math.min(rows.length, i0 + ROW_STEP); i < end; i++) {
      const [h, r, t] = rows[i]!;
      const hi = maps.entityToId.get(h!);
      const ri = maps.relationToId.get(r!);
      const ti = maps.entityToId.get(t!);
      if (hi === undefined || ri === undefined || ti === undefined) continue;
      out[k++] = hi;
      out[k++] = ri;
      out[k++] = ti;
    }
    yield;
  }
  return { triples: out.slice(0, k), dropped: rows.length - k / 3 };
}

/** Reads a TSV file of labelled triples as text (argument names the path in errors). */
function readTsvRows(path: string, argument = "file"): [string, string, string][] {
  checkTsvPath(path, argument);
  return runSteps(tsvRowsSteps(readRegularFile(path, argument), path, argument));
}

function checkTsvPath(path: unknown, argument: string): void {
  if (typeof path !== "string" || path === "")
    throw new KgrankInputError(argument, "must be a path to a TSV file of head<TAB>relation<TAB>tail lines");
}

/** The rows of a TSV file's bytes in steps; errors name the file. */
function* tsvRowsSteps(bytes: Buffer, path: string, argument: string): Steps<[string, string, string][]> {
  try {
    return yield* splitTsvSteps(bytes, argument);
  } catch (e) {
    if (e instanceof KgrankInputError)
      throw new KgrankInputError(argument, `${path}: ${e.message.slice(argument.length + 2)}`);
    throw e;
  }
}

/**
 * Reads `head<TAB>relation<TAB>tail` triples. Without `maps` the ids come from this file's own sorted labels (use
 * it for a training split); with the training split's maps, triples with unknown labels are dropped and counted.
 */
export function readTriples(path: string, options: { maps?: LabelMaps; argument?: string } = {}): TriplesFile {
  checkOptions("options", options, ["maps", "argument"]);
  const argument = options.argument ?? "path";
  const rows = readTsvRows(path, argument);
  const maps = options.maps ?? labelMaps(rows);
  return { ...maps, ...mapTriples(rows, maps) };
}
