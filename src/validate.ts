/** Argument checks shared by every public function, so both backends see only valid input. */
import { KgrankInputError } from "./errors";
import type { FloatArray } from "./kernels";
import { closest, quoted } from "./suggest";

export function describe(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (ArrayBuffer.isView(value)) return `${value.constructor.name}(${(value as unknown as ArrayLike<unknown>).length ?? value.byteLength})`;
  if (Array.isArray(value)) return `Array(${value.length})`;
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === "object") return (value as object).constructor?.name ?? "object";
  return typeof value;
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
  const isNumericView = ArrayBuffer.isView(value) && !(value instanceof DataView) && !(value instanceof BigInt64Array) &&
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
      if (typeof value[i] !== "number") throw new KgrankInputError(name, `element ${i} is ${describe(value[i])}, not a number`);
    }
  }
  return arr as ArrayLike<number>;
}

/**
 * The keys of an options type, written once as a record so the compiler checks the list is complete and has no
 * extra key: `optionKeys<RankEvaluatorOptions>({ numEntities: 1, filterTriples: 1, ... })`.
 */
export function optionKeys<T>(keys: Record<keyof T & string, 1>): readonly string[] {
  return Object.keys(keys);
}

/**
 * A plain options object whose keys are all among `known`. An unknown key (a typo such as `filter` for
 * `filterTriples`, or an option of another function) is an error naming the closest valid key, since ignoring it
 * would silently give other results than the caller asked for. Keys whose value is undefined count as absent.
 */
export function options(name: string, value: unknown, known: readonly string[]): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value) || ArrayBuffer.isView(value)) {
    throw new KgrankInputError(name, `must be an options object, got ${describe(value)}`);
  }
  for (const key of Object.keys(value)) {
    if (known.includes(key) || (value as Record<string, unknown>)[key] === undefined) continue;
    throw new KgrankInputError(
      name,
      `unknown option ${quoted(key)}; did you mean "${closest(key, known, 1, (s) => s.toLowerCase())[0]}"? ` +
        `Accepted: ${known.join(", ")}`,
    );
  }
  return value as Record<string, unknown>;
}
