/**
 * Binary state of a RankEvaluator: everything finalize() needs (tasks per side, provenance), so shards evaluated
 * in separate processes or machines merge exactly. Layout (little-endian), format 2:
 *   "KGRS" | u32 format version | u32 header bytes | SHA-256 of everything after the digest (32 bytes) |
 *   header JSON (UTF-8, padded with spaces to a multiple of 8) | per side (head, tail, then relation when the
 *   header's sides list it), per column: raw values
 * The header's sides are the protocol: states of other sides (a relation side or not) are never merged.
 * Format 1 (an FNV-1a word in the digest's place) is read too. A state is input like any other: decodeState()
 * checks every header field and every task as addRanks() checks its arguments, so a crafted state whose digest was
 * recomputed still cannot carry a rank outside [1, N], a candidate count above numEntities or an unknown side.
 */
import { createHash } from "node:crypto";

import { KgrankInputError } from "../checks/errors";
import { describe, headerShardRange } from "../checks/validate";
import { COLUMN_NAMES, type TaskColumns } from "./task-buffer";
import type { RankEvaluatorOptions, SideCounts, TaskSide, TemporalProtocol } from "./types";
import type { CandidateProtocol } from "../ranking/candidate-sets";

export const STATE_FORMAT_VERSION = 2;
/** Bytes before the header JSON, per format version. */
const PREFIX: Record<number, number> = { 1: 16, 2: 48 };
const MAGIC = "KGRS";

export interface StateHeader {
  format: number;
  numEntities: number;
  numRelations: number | null;
  /** The evaluated sides, in the order head, tail, relation (states written before the relation side: head / tail). */
  sides: TaskSide[];
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
  /** Per side; `relation` exactly when sides lists it. */
  skipped: SideCounts;
  tasks: SideCounts;
  /** The caller's provenance (serialize({ meta })), e.g. the CLI's run fingerprint and shard; JSON values. */
  meta?: Record<string, unknown>;
  /**
   * An entity shard's state (RankEvaluatorOptions.entityShard): its task columns hold partial counts
   * (./entity-shards.ts), merged into ranks with the other entity shards of the same tasks. `begin` / `end`: its
   * entity range when it is not the even split (RankEvaluatorOptions.entityShard's).
   */
  entityShard?: { index: number; count: number; begin?: number; end?: number };
  /**
   * Typed candidates (RankEvaluatorOptions.candidates): where the sets came from, their fingerprint and size. Part of
   * the protocol: only states of the same sets merge. Absent: every entity was a candidate.
   */
  candidates?: CandidateProtocol;
  /** A TemporalEvaluator's setting and timestamps (RankEvaluatorOptions.temporal); part of the protocol. */
  temporal?: TemporalProtocol;
}

const isI32 = (c: string) => c === "relation" || c === "anchor" || c === "truth";
/** On little-endian hosts (nearly all) columns are copied as bytes; elsewhere they are converted per element. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Format 1's checksum: FNV-1a over everything after the checksum word. */
function fnv1a(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) {
    h ^= bytes[i]!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

const sha256 = (bytes: Uint8Array): Uint8Array => new Uint8Array(createHash("sha256").update(bytes).digest());

/** Task columns per side; relation's when the header's sides list it. */
type StateSides = { head: TaskColumns; tail: TaskColumns; relation?: TaskColumns };

/** The sides whose columns a state holds, in payload order. */
const payloadSides = (h: StateHeader): TaskSide[] =>
  h.sides.includes("relation") ? ["head", "tail", "relation"] : ["head", "tail"];

export function encodeState(header: StateHeader, sides: StateSides): Uint8Array {
  let json = JSON.stringify({ ...header, format: STATE_FORMAT_VERSION });
  json += " ".repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const headerBytes = new TextEncoder().encode(json);
  const prefix = PREFIX[STATE_FORMAT_VERSION]!;
  const written = payloadSides(header);
  let payload = 0;
  for (const side of written) {
    for (const c of COLUMN_NAMES) payload += sides[side]![c].byteLength;
  }
  const out = new Uint8Array(prefix + headerBytes.length + payload);
  const view = new DataView(out.buffer);
  out.set(new TextEncoder().encode(MAGIC), 0);
  view.setUint32(4, STATE_FORMAT_VERSION, true);
  view.setUint32(8, headerBytes.length, true);
  out.set(headerBytes, prefix);
  let off = prefix + headerBytes.length;
  for (const side of written) {
    for (const c of COLUMN_NAMES) {
      const col = sides[side]![c];
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
  out.set(sha256(out.subarray(prefix)), 12);
  return out;
}

/** The header with the caller's provenance (a plain object of JSON values; copied), or unchanged without one. */
export function withMeta(header: StateHeader, meta: unknown): StateHeader {
  if (meta === undefined) return header;
  if (meta === null || typeof meta !== "object" || Array.isArray(meta))
    throw new KgrankInputError("meta", "must be a plain object of JSON values");
  return { ...header, meta: JSON.parse(JSON.stringify(meta)) as Record<string, unknown> };
}

/** The provenance a state was serialized with (serialize({ meta })), after every check decodeState makes. */
export function stateMeta(bytes: Uint8Array): Record<string, unknown> | null {
  return decodeState(bytes).header.meta ?? null;
}

export type DecodedState = ReturnType<typeof decodeState>;

/**
 * The states of shards to merge, decoded (an error names the shard: `states[i]`) and checked to share the
 * settings that make their tasks one evaluation: numEntities, sides, ks, metrics, weighting, filter, restriction.
 */
export function decodeShards(states: Uint8Array[]): DecodedState[] {
  const decoded = states.map((s, i) => {
    try {
      return decodeState(s);
    } catch (e) {
      if (e instanceof KgrankInputError) throw new KgrankInputError(`states[${i}]`, e.message.replace(/^state: /, ""));
      throw e;
    }
  });
  const settings = (h: StateHeader) =>
    JSON.stringify([
      h.numEntities,
      h.numRelations,
      h.sides,
      h.ks,
      h.metrics,
      h.weighting,
      h.filtered,
      h.filterTriples,
      h.restrictEntities,
      h.restrictRelations,
    ]);
  // Equal digests are equal states (SHA-256; format 1 states are hashed whole): a state given twice counts twice.
  const seen = new Map<string, number>();
  states.forEach((s, i) => {
    const version = new DataView(s.buffer, s.byteOffset, s.byteLength).getUint32(4, true);
    const digest = Buffer.from(version === 1 ? sha256(s) : s.subarray(12, 44)).toString("hex");
    const twin = seen.get(digest);
    if (twin !== undefined) {
      throw new KgrankInputError(
        `states[${i}]`,
        `repeats states[${twin}] (the same state, equal SHA-256 digests); give each shard's state once`,
      );
    }
    seen.set(digest, i);
  });
  const protocol = (h: StateHeader) => h.sides.join(",");
  // Typed candidates are the same protocol when their fingerprints are (the source is a label: a path, say).
  const candidates = (h: StateHeader) =>
    (h.candidates ? `candidates with fingerprint ${h.candidates.fingerprint}` : "every entity a candidate") +
    (h.temporal ? `, temporal setting ${h.temporal.setting} over ${h.temporal.numTimestamps} timestamps` : "");
  const first = settings(decoded[0]!.header);
  decoded.forEach((d, i) => {
    if (candidates(d.header) !== candidates(decoded[0]!.header)) {
      throw new KgrankInputError(
        `states[${i}]`,
        `was ranked against ${candidates(d.header)}, states[0] against ${candidates(decoded[0]!.header)}: ` +
          "states of different protocols do not merge; merge the shards of each run (and of each temporal setting) separately",
      );
    }
    if (protocol(d.header) !== protocol(decoded[0]!.header)) {
      throw new KgrankInputError(
        `states[${i}]`,
        `was evaluated for sides ${protocol(d.header)}, states[0] for sides ${protocol(decoded[0]!.header)}: ` +
          "states of different protocols do not merge; merge the shards of each run separately, evaluated with the same sides",
      );
    }
    if (settings(d.header) !== first) {
      throw new KgrankInputError(
        `states[${i}]`,
        "was evaluated with other settings (numEntities, sides, ks, metrics, weighting, filter or restriction) than states[0]",
      );
    }
  });
  return decoded;
}

/** The options of an evaluator with a state's settings (the one shards' states are merged into). */
export function evaluatorOptions(h: StateHeader): RankEvaluatorOptions {
  return {
    numEntities: h.numEntities,
    numRelations: h.numRelations ?? undefined,
    sides: h.sides.includes("relation")
      ? [...h.sides]
      : h.sides.length === 2
        ? "both"
        : (h.sides[0] as "head" | "tail"),
    ks: h.ks,
    metrics: h.metrics ?? undefined,
    weighting: h.weighting,
  };
}

function corrupt(why: string): KgrankInputError {
  return new KgrankInputError("state", `is not a valid kgrank evaluator state: ${why}`);
}

export function decodeState(bytes: unknown): { header: StateHeader; sides: StateSides } {
  if (!(bytes instanceof Uint8Array))
    throw new KgrankInputError("state", "must be a Uint8Array from RankEvaluator.serialize()");
  if (bytes.length < 16 || new TextDecoder().decode(bytes.subarray(0, 4)) !== MAGIC) throw corrupt("wrong magic bytes");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(4, true);
  const prefix = PREFIX[version];
  if (prefix === undefined) {
    throw corrupt(`format version ${version}; this kgrank-native reads versions ${Object.keys(PREFIX).join(" and ")}`);
  }
  const headerLength = view.getUint32(8, true);
  if (bytes.length < prefix || prefix + headerLength > bytes.length) throw corrupt("truncated header");
  const body = bytes.subarray(prefix);
  const intact =
    version === 1
      ? fnv1a(body) === view.getUint32(12, true)
      : Buffer.compare(sha256(body), bytes.subarray(12, 44)) === 0;
  if (!intact) throw corrupt("checksum mismatch (damaged or truncated)");
  let parsed: unknown;
  try {
    parsed = JSON.parse(
      new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(prefix, prefix + headerLength)),
    );
  } catch {
    throw corrupt("unreadable header");
  }
  const header = checkHeader(parsed, version);
  let off = prefix + headerLength;
  const sides = {} as StateSides;
  for (const side of payloadSides(header)) {
    const n = header.tasks[side]!;
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
    checkTasks(side, sides[side], header);
  }
  if (off !== bytes.length) throw corrupt("trailing bytes");
  return { header, sides };
}

const SIDES: readonly TaskSide[] = ["head", "tail", "relation"];
const isCount = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const isPositive = (v: unknown, max = 2 ** 31 - 1): v is number =>
  typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= max;
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const HEADER_FIELDS = new Set([
  "format",
  "numEntities",
  "numRelations",
  "sides",
  "ks",
  "metrics",
  "weighting",
  "explicitWeights",
  "filtered",
  "filterTriples",
  "knownTriples",
  "restrictEntities",
  "restrictRelations",
  "skipped",
  "tasks",
  "meta",
  "entityShard",
  "candidates",
  "temporal",
]);

/** The header as the evaluator wrote it, or a typed error naming the first field that it could not have written. */
function checkHeader(h: unknown, version: number): StateHeader {
  const bad = (field: string, why: string) => corrupt(`header field ${field} ${why}`);
  if (!isRecord(h)) throw corrupt("the header is not a JSON object");
  for (const k of Object.keys(h))
    if (!HEADER_FIELDS.has(k)) throw bad(JSON.stringify(k.slice(0, 40)), "is not one kgrank writes");
  if (h.format !== version) throw bad("format", `is ${describe(h.format)}, not the file's version ${version}`);
  if (!isPositive(h.numEntities)) throw bad("numEntities", "is not an integer in [1, 2^31 - 1]");
  if (h.numRelations !== null && !isPositive(h.numRelations))
    throw bad("numRelations", "is neither null nor an integer >= 1");
  const sides = h.sides;
  if (
    !Array.isArray(sides) ||
    sides.length === 0 ||
    !sides.every((s, i) => SIDES.includes(s as TaskSide) && sides.indexOf(s) === i) ||
    sides.join() !== SIDES.filter((s) => sides.includes(s)).join()
  ) {
    throw bad("sides", 'is not a list of distinct "head" / "tail" / "relation", in that order');
  }
  const relationSide = sides.includes("relation");
  if (relationSide && h.numRelations === null)
    throw bad("numRelations", 'is null, but sides lists "relation" (whose candidates are the relations)');
  if (!Array.isArray(h.ks) || !h.ks.every((k) => isPositive(k))) throw bad("ks", "is not a list of integers >= 1");
  if (
    h.metrics !== null &&
    !(Array.isArray(h.metrics) && h.metrics.every((m) => typeof m === "string" && m.length <= 200))
  ) {
    throw bad("metrics", "is neither null nor a list of metric names");
  }
  if (h.weighting !== "micro" && h.weighting !== "macro") throw bad("weighting", 'is not "micro" or "macro"');
  if (typeof h.explicitWeights !== "boolean") throw bad("explicitWeights", "is not true or false");
  if (typeof h.filtered !== "boolean") throw bad("filtered", "is not true or false");
  if (!Array.isArray(h.filterTriples) || !h.filterTriples.every(isCount) || h.filterTriples.length > 0 !== h.filtered) {
    throw bad("filterTriples", "is not a list of triple counts matching filtered");
  }
  if (h.knownTriples !== undefined && h.knownTriples !== null && !isCount(h.knownTriples))
    throw bad("knownTriples", "is not a count");
  if (h.restrictEntities !== null && !isPositive(h.restrictEntities, h.numEntities)) {
    throw bad("restrictEntities", `is neither null nor a count in [1, numEntities = ${h.numEntities}]`);
  }
  if (h.restrictRelations !== null && !isPositive(h.restrictRelations))
    throw bad("restrictRelations", "is neither null nor a count >= 1");
  for (const field of ["skipped", "tasks"] as const) {
    const v = h[field];
    if (
      !isRecord(v) ||
      Object.keys(v).length !== (relationSide ? 3 : 2) ||
      !isCount(v.head) ||
      !isCount(v.tail) ||
      (relationSide && !isCount(v.relation))
    ) {
      throw bad(field, relationSide ? "is not { head, tail, relation } counts" : "is not { head, tail } counts");
    }
  }
  if (relationSide && (h.restrictEntities !== null || h.restrictRelations !== null))
    throw bad("sides", 'lists "relation", which is never evaluated under a restriction');
  if (h.meta !== undefined && !isRecord(h.meta)) throw bad("meta", "is not a JSON object");
  if (h.entityShard !== undefined) {
    if (
      !headerShardRange(h.entityShard, h.numEntities as number) ||
      h.explicitWeights !== false ||
      h.restrictEntities !== null ||
      relationSide
    ) {
      throw bad(
        "entityShard",
        "is not { index, count } (and a range [begin, end) within numEntities) with 0 <= index < count <= numEntities " +
          "(and no weights, restriction or relation side)",
      );
    }
  }
  if (h.candidates !== undefined) {
    const c = h.candidates;
    if (
      !isRecord(c) ||
      Object.keys(c).length !== 3 ||
      typeof c.source !== "string" ||
      c.source.length === 0 ||
      c.source.length > 1000 ||
      typeof c.fingerprint !== "string" ||
      !/^[0-9a-f]{16}$/.test(c.fingerprint) ||
      !isCount(c.pairs) ||
      relationSide ||
      h.restrictEntities !== null ||
      h.restrictRelations !== null
    ) {
      throw bad(
        "candidates",
        "is not { source, fingerprint (16 hex digits), pairs } (and no relation side or restriction)",
      );
    }
  }
  if (h.temporal !== undefined) {
    const t = h.temporal;
    if (
      !isRecord(t) ||
      Object.keys(t).length !== 2 ||
      !["raw", "static", "timeAware"].includes(t.setting as string) ||
      !isPositive(t.numTimestamps)
    ) {
      throw bad("temporal", 'is not { setting: "raw" | "static" | "timeAware", numTimestamps }');
    }
  }
  const tasks = h.tasks as SideCounts;
  for (const side of ["head", "tail"] as const) {
    if (tasks[side] > 0 && !sides.includes(side))
      throw bad("tasks", `has ${side} tasks, but sides is ${JSON.stringify(sides)}`);
  }
  return h as unknown as StateHeader;
}

const isRank = (v: number, n: number) => Number.isNaN(v) || (Number.isInteger(2 * v) && v >= 1 && v <= n);

/** An entity shard's partial counts (./entity-shards.ts) as the kernel can produce them. */
function checkPartialTasks(side: TaskSide, c: TaskColumns, h: StateHeader): void {
  const [begin, end] = headerShardRange(h.entityShard, h.numEntities)!;
  const size = end - begin;
  const relations = h.numRelations ?? 2 ** 31 - 1;
  for (let i = 0; i < c.optimistic.length; i++) {
    const bad = (column: string, why: string) => corrupt(`${side} task ${i}: ${column} ${why}`);
    for (const [name, v] of [
      ["above (optimistic)", c.optimistic[i]!],
      ["equal (realistic)", c.realistic[i]!],
      ["NaN (pessimistic)", c.pessimistic[i]!],
      ["removed (numCandidates)", c.numCandidates[i]!],
    ] as const) {
      if (!(Number.isInteger(v) && v >= 0 && v <= size))
        throw bad(name, `count = ${v} is not an integer in [0, ${size}] (the shard's entities)`);
    }
    if (!Number.isFinite(c.weight[i]!)) throw bad("true score (weight)", `= ${c.weight[i]} is not finite`);
    if (c.relation[i]! < 0 || c.relation[i]! >= relations) throw bad("relation", `= ${c.relation[i]} is not an id`);
    for (const column of ["anchor", "truth"] as const) {
      const e = c[column][i]!;
      if (e < 0 || e >= h.numEntities) throw bad(column, `= ${e} is not an id in [0, numEntities = ${h.numEntities})`);
    }
  }
}

/** Each task as addRanks() and the ranking paths can produce it; a typed error names side, task and column. */
function checkTasks(side: TaskSide, c: TaskColumns, h: StateHeader): void {
  if (h.entityShard) return checkPartialTasks(side, c, h);
  // A relation task ranks its relation among the relations; its anchor and truth are its head and tail.
  const bound = side === "relation" ? h.numRelations! : h.numEntities;
  const among = side === "relation" ? "numRelations" : "numEntities";
  const relations = h.numRelations ?? 2 ** 31 - 1;
  const n = c.optimistic.length;
  for (let i = 0; i < n; i++) {
    const bad = (column: string, why: string) => corrupt(`${side} task ${i}: ${column} ${why}`);
    const nc = c.numCandidates[i]!;
    if (!(Number.isInteger(nc) && nc >= 1 && nc <= bound)) {
      throw bad("numCandidates", `= ${nc} is not an integer in [1, ${among} = ${bound}]`);
    }
    const o = c.optimistic[i]!,
      p = c.pessimistic[i]!,
      r = c.realistic[i]!;
    for (const [name, v] of [
      ["optimistic", o],
      ["pessimistic", p],
      ["realistic", r],
    ] as const) {
      if (!isRank(v, nc))
        throw bad(name, `rank = ${v} is not NaN or a rank in [1, numCandidates = ${nc}] (integers or halves)`);
    }
    if (Number.isNaN(o) && Number.isNaN(p) && Number.isNaN(r)) throw bad("ranks", "are all missing (NaN)");
    if (o > p || o > r || r > p)
      throw bad("ranks", `are out of order: optimistic ${o} <= realistic ${r} <= pessimistic ${p} must hold`);
    const rel = c.relation[i]!;
    if (rel < -1 || rel >= relations)
      throw bad("relation", `= ${rel} is not -1 (unknown) or an id in [0, ${relations})`);
    for (const column of ["anchor", "truth"] as const) {
      const e = c[column][i]!;
      if (e < -1 || e >= h.numEntities)
        throw bad(column, `= ${e} is not -1 (unknown) or an id in [0, numEntities = ${h.numEntities})`);
    }
    const w = c.weight[i]!;
    if (!Number.isNaN(w) && !(w >= 0 && Number.isFinite(w)))
      throw bad("weight", `= ${w} is not NaN (none) or a finite number >= 0`);
    if (!Number.isNaN(w) && !h.explicitWeights)
      throw bad("weight", `= ${w} is given, but the header says explicitWeights: false`);
  }
}
