/** Argument checks shared by every public function, so both backends see only valid input. */
import { KgrankInputError } from "./errors";
import type { FloatArray } from "../contract/kernels";
import { closest, quoted } from "../text/suggest";

export function describe(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (ArrayBuffer.isView(value))
    return `${value.constructor.name}(${(value as unknown as ArrayLike<unknown>).length ?? value.byteLength})`;
  if (Array.isArray(value)) return `Array(${value.length})`;
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === "object") return (value as object).constructor?.name ?? "object";
  return typeof value;
}

/**
 * `value` as an entity shard: an object of exactly { index, count }, integers with 0 <= index < count <= maxCount;
 * null when it is not one. The one shape check of the option, the state header, a run's meta and a queue job.
 */
export function entityShardOf(value: unknown, maxCount: number): { index: number; count: number } | null {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const { index, count } = value as { index?: unknown; count?: unknown };
  const ok =
    Object.keys(value).length === 2 &&
    Number.isSafeInteger(count) &&
    Number.isSafeInteger(index) &&
    (count as number) >= 1 &&
    (count as number) <= maxCount &&
    (index as number) >= 0 &&
    (index as number) < (count as number);
  return ok ? { index: index as number, count: count as number } : null;
}

/** The entity range of shard `index` of `count` over `numEntities` entities (the even split). */
export function entityRange(index: number, count: number, numEntities: number): [number, number] {
  return [Math.floor((index * numEntities) / count), Math.floor(((index + 1) * numEntities) / count)];
}

/**
 * The entity range of a state header's entity shard: its own [begin, end) when it records one (a split along other
 * lines, e.g. a PyTorch-BigGraph checkpoint's partitions), else the even split's. Null when the fields are not that.
 */
export function headerShardRange(value: unknown, numEntities: number): [number, number] | null {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const { begin, end, ...rest } = value as { begin?: unknown; end?: unknown };
  const shard = entityShardOf(rest, numEntities);
  if (!shard) return null;
  if (begin === undefined && end === undefined) return entityRange(shard.index, shard.count, numEntities);
  if (!Number.isSafeInteger(begin) || !Number.isSafeInteger(end)) return null;
  const [b, e] = [begin as number, end as number];
  return b >= 0 && b < e && e <= numEntities ? [b, e] : null;
}

/** An array or a typed array view (not a DataView, whose bytes have no element type): something with numbered elements. */
export function isArrayLike(value: unknown): value is ArrayLike<unknown> {
  return Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView));
}

/** A Float32Array or Float64Array with at least one element. */
export function floatMatrix(name: string, value: unknown): FloatArray {
  if (!(value instanceof Float32Array) && !(value instanceof Float64Array)) {
    throw new KgrankInputError(
      name,
      `must be a Float32Array or Float64Array (row-major), got ${describe(value)}; convert with Float32Array.from(...)`,
    );
  }
  if (value.length === 0) {
    throw new KgrankInputError(name, "is empty (or its ArrayBuffer was detached): pass at least one row of scores");
  }
  return value;
}

/**
 * Cut-offs of Hits@k given as `name` (the library's `ks`): a non-empty array of integers >= 1, each once (in the order
 * given; a repeated k is one cut-off).
 */
export function cutoffs(name: string, value: unknown): number[] {
  if (!Array.isArray(value) || value.length === 0)
    throw new KgrankInputError(name, `must be a non-empty array of integers >= 1, got ${describe(value)}`);
  return [...new Set(value.map((k, i) => integer(`${name}[${i}]`, k, 1)))];
}

/** An integer in [min, max]. */
export function integer(name: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new KgrankInputError(name, `must be an integer ${range}, got ${describe(value)}`);
  }
  return value;
}

/** Optional thread count: an integer from 1 to 4096. */
export function threadCount(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  return integer("threads", value, 1, 4096);
}

/** The number of rows of a row-major matrix with `numColumns` columns. */
export function rowCount(scoresName: string, scores: FloatArray, numColumns: number): number {
  if (scores.length % numColumns !== 0) {
    throw new KgrankInputError(
      "numColumns",
      `${numColumns} does not divide ${scoresName}.length ${scores.length}: ${scoresName} must hold whole rows`,
    );
  }
  return scores.length / numColumns;
}

/** An array-like of numbers with exactly `length` elements (typed array or plain array). */
export function numberArray(name: string, value: unknown, length: number): ArrayLike<number> {
  const isNumericView =
    ArrayBuffer.isView(value) &&
    !(value instanceof DataView) &&
    !(value instanceof BigInt64Array) &&
    !(value instanceof BigUint64Array);
  if (!isNumericView && !Array.isArray(value)) {
    throw new KgrankInputError(name, `must be a typed array or an array of numbers, got ${describe(value)}`);
  }
  const arr = value as ArrayLike<unknown>;
  if (arr.length !== length) {
    throw new KgrankInputError(name, `must have ${length} elements (one per row), got ${arr.length}`);
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (typeof value[i] !== "number")
        throw new KgrankInputError(name, `element ${i} is ${describe(value[i])}, not a number`);
    }
  }
  return arr as ArrayLike<number>;
}

/**
 * The keys of an options type, written once as a record so the compiler checks the list is complete and has no
 * extra key: `optionKeys<RankEvaluatorOptions>({ numEntities: 1, filterTriples: 1, ... })`.
 */
export function optionKeys<T>(keys: Record<keyof T & string, 1>): readonly (keyof T & string)[] {
  return Object.keys(keys) as (keyof T & string)[];
}

/**
 * An options object whose keys are checked (`options`) and whose values are not yet: each field of `T` is there,
 * as `unknown` until a check turns it into its type. A field `T` does not have does not compile.
 */
export type Unchecked<T> = { [K in keyof T & string]?: unknown };

/**
 * A plain options object whose keys are all among `known`. An unknown key (a typo such as `filter` for
 * `filterTriples`, or an option of another function) is an error naming the closest valid key, since ignoring it
 * would silently give other results than the caller asked for. Keys whose value is undefined count as absent.
 */
export function options<K extends string>(name: string, value: unknown, known: readonly K[]): { [P in K]?: unknown } {
  if (value === null || typeof value !== "object" || Array.isArray(value) || ArrayBuffer.isView(value)) {
    throw new KgrankInputError(name, `must be an options object, got ${describe(value)}`);
  }
  for (const key of Object.keys(value)) {
    if ((known as readonly string[]).includes(key) || (value as Record<string, unknown>)[key] === undefined) continue;
    throw new KgrankInputError(
      name,
      `unknown option ${quoted(key)}; did you mean "${closest(key, known, 1, (s) => s.toLowerCase())[0]}"? ` +
        `Accepted: ${known.join(", ")}`,
    );
  }
  return value as { [P in K]?: unknown };
}

/**
 * The common case of tripleArray, on a monomorphic Int32Array (values are integers already): true when every id is in
 * range. Otherwise the general loop below finds the first bad value and names it.
 */
function int32TriplesInRange(t: Int32Array, numEntities: number, numRelations: number | null): boolean {
  // Unsigned compares (x >>> 0): a negative id becomes >= 2^31 and fails the bound too.
  const relBound = numRelations ?? 2147483647;
  for (let i = 0; i + 2 < t.length; i += 3) {
    if (t[i]! >>> 0 >= numEntities || t[i + 1]! >>> 0 >= relBound || t[i + 2]! >>> 0 >= numEntities) return false;
  }
  return true;
}

/** Where an object that holds triples was given for them (readTriples()'s result, a dataset): what to pass instead. */
function tripleHolderHint(value: unknown): string {
  if (typeof value !== "object" || value === null) return "";
  const v = value as { triples?: unknown; splits?: unknown };
  if (isArrayLike(v.triples)) return " (what readTriples() returns): pass its .triples";
  if (typeof v.splits === "object" && v.splits !== null)
    return " (a dataset, as loadDataset() returns): pass its .splits.train, .splits.valid or .splits.test";
  return "";
}

/** Evaluated or known triples: rows of (head, relation, tail) ids below numEntities / numRelations (null: 2^31). */
export function tripleArray(
  name: string,
  value: unknown,
  numEntities: number,
  numRelations: number | null,
): Int32Array {
  if (!isArrayLike(value)) {
    throw new KgrankInputError(
      name,
      `must be an Int32Array of (head, relation, tail) rows, got ${describe(value)}${tripleHolderHint(value)}`,
    );
  }
  const arr = value as ArrayLike<unknown>;
  if (arr.length % 3 !== 0)
    throw new KgrankInputError(name, `has ${arr.length} elements, not a multiple of 3 (rows of head, relation, tail)`);
  if (value instanceof Int32Array && int32TriplesInRange(value, numEntities, numRelations)) return value;
  const out = value instanceof Int32Array ? value : new Int32Array(arr.length);
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i];
    const isRel = i % 3 === 1;
    const bound = isRel ? numRelations : numEntities;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || (bound !== null && v >= bound) || v > 2147483647) {
      const what = isRel ? "relation" : i % 3 === 0 ? "head" : "tail";
      throw new KgrankInputError(
        name,
        `row ${Math.floor(i / 3)}: ${what} ${describe(v)} is not an id in [0, ${bound ?? "2^31"})`,
      );
    }
    if (out !== value) out[i] = v;
  }
  return out;
}

/** A seed of the counter-based random streams: an integer from 0 to 2^32-1. */
export function seedArg(name: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 0xffffffff) {
    throw new KgrankInputError(name, `must be an integer from 0 to 2^32-1, got ${describe(value)}`);
  }
  return value;
}

/** A two-sided confidence level in (0, 1). */
export function confidenceLevelArg(name: string, value: unknown): number {
  if (typeof value !== "number" || !(value > 0 && value < 1)) {
    throw new KgrankInputError(name, `must be a number in (0, 1) such as 0.95, got ${describe(value)}`);
  }
  return value;
}

/** The `signal` option of an async call: an AbortSignal, or undefined. */
export function signalOption(value: unknown): AbortSignal | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof AbortSignal)) {
    throw new KgrankInputError(
      "signal",
      `must be an AbortSignal (e.g. new AbortController().signal), got ${describe(value)}`,
    );
  }
  return value;
}

/** The `onProgress` option of an async call: a function, or undefined. */
export function progressOption<F extends (...args: never[]) => unknown>(value: unknown): F | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "function") {
    throw new KgrankInputError("onProgress", `must be a function ({ done, total }) => void, got ${describe(value)}`);
  }
  return value as F;
}
