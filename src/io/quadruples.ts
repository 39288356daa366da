/**
 * Temporal knowledge-graph quadruples as TSV (`head<TAB>relation<TAB>tail<TAB>timestamp`, one per line), as ICEWS14,
 * ICEWS05-15 and GDELT are distributed. Entity and relation ids follow the triple reader (./tsv.ts, PyKEEN): the
 * sorted labels of the training rows; a valid or test row with a label not in those is dropped and counted.
 * Timestamps are integers (e.g. day offsets) or ISO dates `YYYY-MM-DD`, one kind per dataset; their ids are the
 * distinct timestamps of all splits in time order (a test split of a temporal dataset often holds later times than
 * train). Memory: the distinct labels and 16 bytes per row, plus one row's strings at a time.
 */
import { isUtf8 } from "node:buffer";

import { KgrankInputError } from "../checks/errors";
import { options as checkOptions } from "../checks/validate";
import { readRegularFile } from "./files";
import { forEachLine } from "./lines";
import { byCodePoint, invalidUtf8Line } from "./tsv";

export interface QuadrupleDataset {
  /** Entity labels in id order (sorted by code point, as PyKEEN's). */
  entityLabels: string[];
  relationLabels: string[];
  /** Timestamps in id order (time order): the ISO dates, or the integers in decimal. */
  timestamps: string[];
  /** Per split: n x 4 (head, relation, tail, timestamp) ids; an absent split is empty. */
  train: Int32Array;
  valid: Int32Array;
  test: Int32Array;
  /** Rows per split (train, valid, test) dropped for an entity or relation not in train (0 for train). */
  dropped: [number, number, number];
}

/** The text of each split and the name its errors carry (the file path when read from files). */
export interface QuadrupleTexts {
  train: string;
  valid?: string;
  test?: string;
  /** Names of the splits in errors (default "train", "valid", "test"). */
  names?: { train?: string; valid?: string; test?: string };
}

const SPLIT_NAMES = ["train", "valid", "test"] as const;
const INTEGER = /^-?\d+$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** "integer" or "date" for a well-formed timestamp, else null. */
function timestampKind(s: string): "integer" | "date" | null {
  if (INTEGER.test(s)) return Number.isSafeInteger(Number(s)) ? "integer" : null;
  const m = ISO_DATE.exec(s);
  if (!m) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1) return null;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = month === 2 && !leap ? 28 : DAYS[month - 1]!;
  return day <= days ? "date" : null;
}

type Rows = [string, string, string, string][];

/** Splits one file's text into rows; errors name `argument` and the 1-based line. */
function splitRows(text: string, argument: string, kind: { value: "integer" | "date" | null; where: string }): Rows {
  const rows: Rows = [];
  forEachLine(text, (line, lineNo) => {
    const fields = line.split("\t");
    if (fields.length !== 4) {
      throw new KgrankInputError(
        argument,
        `line ${lineNo} has ${fields.length} tab-separated field${fields.length === 1 ? "" : "s"}, expected 4 ` +
          `(head<TAB>relation<TAB>tail<TAB>timestamp); drop extra columns, e.g. cut -f1-4 FILE`,
      );
    }
    if (fields.some((f) => f === ""))
      throw new KgrankInputError(
        argument,
        `line ${lineNo} has an empty field (head<TAB>relation<TAB>tail<TAB>timestamp)`,
      );
    const tau = fields[3]!.trim();
    const k = timestampKind(tau);
    if (k === null) {
      throw new KgrankInputError(
        argument,
        `line ${lineNo} has timestamp ${JSON.stringify(fields[3]!.slice(0, 40))}, which does not parse: write an ` +
          `integer (e.g. a day offset) or an ISO date YYYY-MM-DD`,
      );
    }
    if (kind.value !== null && kind.value !== k) {
      throw new KgrankInputError(
        argument,
        `line ${lineNo} has ${k === "date" ? "an ISO date" : "an integer"} timestamp but ${kind.where} has ` +
          `${kind.value === "date" ? "an ISO date" : "an integer"}: write every timestamp of a dataset the same way`,
      );
    }
    if (kind.value === null) kind.value = k;
    kind.where = kind.where || `${argument} line ${lineNo}`;
    rows.push([fields[0]!, fields[1]!, fields[2]!, tau]);
  });
  return rows;
}

/**
 * Quadruple splits from TSV text to ids. Pure. Errors (KgrankInputError naming the split's name and the line): a line
 * with other than 4 tab-separated fields, an empty field, a timestamp that is neither an integer nor a valid ISO date,
 * integers and dates mixed in one dataset.
 */
export function parseQuadruples(texts: QuadrupleTexts): QuadrupleDataset {
  checkOptions("texts", texts, ["train", "valid", "test", "names"]);
  const kind = { value: null as "integer" | "date" | null, where: "" };
  const split = SPLIT_NAMES.map((s) => {
    const text = texts[s];
    if (text === undefined) return [] as Rows;
    if (typeof text !== "string") throw new KgrankInputError(`texts.${s}`, "must be a string of TSV text");
    return splitRows(text, texts.names?.[s] ?? s, kind);
  });
  const entities = new Set<string>();
  const relations = new Set<string>();
  for (const [h, r, t] of split[0]!) {
    entities.add(h);
    entities.add(t);
    relations.add(r);
  }
  const entityLabels = [...entities].sort(byCodePoint);
  const relationLabels = [...relations].sort(byCodePoint);
  const entityId = new Map(entityLabels.map((l, i) => [l, i]));
  const relationId = new Map(relationLabels.map((l, i) => [l, i]));
  const kept = split.map((rows) => rows.filter(([h, r, t]) => entityId.has(h) && entityId.has(t) && relationId.has(r)));
  // Integers by value ("007" and "7" are one time, named "7"); ISO dates sort by code point in time order.
  const timeKey = (s: string) => (kind.value === "integer" ? String(Number(s)) : s);
  const distinct = new Set<string>();
  for (const rows of kept) for (const row of rows) distinct.add(timeKey(row[3]));
  const timestamps =
    kind.value === "integer" ? [...distinct].sort((a, b) => Number(a) - Number(b)) : [...distinct].sort(byCodePoint);
  const timeId = new Map(timestamps.map((s, i) => [s, i]));
  const ids = kept.map((rows) => {
    const out = new Int32Array(rows.length * 4);
    rows.forEach(([h, r, t, tau], i) => {
      out[i * 4] = entityId.get(h)!;
      out[i * 4 + 1] = relationId.get(r)!;
      out[i * 4 + 2] = entityId.get(t)!;
      out[i * 4 + 3] = timeId.get(timeKey(tau))!;
    });
    return out;
  });
  return {
    entityLabels,
    relationLabels,
    timestamps,
    train: ids[0]!,
    valid: ids[1]!,
    test: ids[2]!,
    dropped: [0, split[1]!.length - kept[1]!.length, split[2]!.length - kept[2]!.length],
  };
}

/**
 * Quadruple splits from TSV files (UTF-8; see parseQuadruples). Errors name the file's path and the line.
 */
export function readQuadruples(paths: { train: string; valid?: string; test?: string }): QuadrupleDataset {
  checkOptions("paths", paths, ["train", "valid", "test"]);
  const texts: QuadrupleTexts = { train: "", names: {} };
  for (const s of SPLIT_NAMES) {
    const path = paths[s];
    if (path === undefined) continue;
    if (typeof path !== "string") throw new KgrankInputError(`paths.${s}`, "must be a file path");
    const bytes = readRegularFile(path, path);
    if (!isUtf8(bytes)) throw new KgrankInputError(path, invalidUtf8Line(bytes)!);
    texts[s] = bytes.toString("utf8");
    texts.names![s] = path;
  }
  return parseQuadruples(texts);
}
