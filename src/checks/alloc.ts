/**
 * Input-sized allocations. A file declares how much memory it needs (a .npy shape, a zip member's size, a
 * safetensors offset), and some constructors size tables by their arguments (FrequencyBaseline: relations x
 * entities); when the machine cannot give it (an 8 GiB array under a memory limit), V8 throws a bare RangeError
 * ("Array buffer allocation failed", or "Invalid typed array length" past its limit). File data goes through
 * `allocate` (a KgrankInputError naming the argument, the file and the size); tables sized by arguments through
 * `allocateTable` (a KgrankMemoryError naming the operation, as the native backend's), after `checkTableLength`
 * has refused a length no typed array can have.
 */
import { constants } from "node:buffer";

import { allocationFailure, KgrankInputError, KgrankMemoryError } from "./errors";

/** `n` bytes in the largest binary unit it reaches, up to TiB: [value, unit], "B" below 1 KiB. */
export function scaleBytes(n: number): [number, string] {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return [v, units[u]!];
}

/** Bytes for a message: "8589934592 bytes (8.0 GiB)". */
function formatBytes(n: number): string {
  const [v, unit] = scaleBytes(n);
  return unit === "B" ? `${n} bytes` : `${n} bytes (${v.toFixed(1)} ${unit})`;
}

/**
 * Runs `make` (which allocates about `bytes` bytes for data read from `file`); an allocation failure becomes a
 * KgrankInputError(argument) saying how much was asked for and what to do.
 */
export function allocate<T>(argument: string, file: string | undefined, bytes: number, make: () => T): T {
  try {
    return make();
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    throw new KgrankInputError(
      argument,
      `cannot allocate ${formatBytes(bytes)} for the data of ${file ?? "the file"}: ${e.message}; ` +
        `free memory (or raise the process's memory limit), or split the array into smaller files`,
    );
  }
}

/**
 * The most elements a typed array of `bytesPerElement`-byte elements can have in this Node. Up to Node 20 V8 capped
 * the length (buffer.constants.MAX_LENGTH = 2^32 elements, whatever their size); since Node 22 it caps the bytes
 * (MAX_LENGTH = 2^53 - 1 bytes, so 2^53 / bytesPerElement elements). The minimum of the two readings is exact on both.
 */
function typedArrayLimit(bytesPerElement: number): number {
  return Math.min(constants.MAX_LENGTH, Math.floor(Number.MAX_SAFE_INTEGER / bytesPerElement));
}

/**
 * Throws a KgrankInputError(argument) when a table of `length` elements (the product `what` names, e.g.
 * "numRelations x numEntities") is longer than any typed array can be.
 */
export function checkTableLength(argument: string, what: string, length: number, bytesPerElement: number): void {
  const limit = typedArrayLimit(bytesPerElement);
  if (length > limit) {
    throw new KgrankInputError(
      argument,
      `${what} = ${length} elements is more than one typed array can hold (${limit} here); use fewer entities or relations`,
    );
  }
}

/**
 * Runs `make` (which allocates a table of about `bytes` bytes sized by the arguments of `operation`); an allocation
 * failure becomes a KgrankMemoryError(operation) saying how much was asked for, and a length V8 refuses a
 * KgrankInputError(argument). Nothing is left half-built.
 */
export function allocateTable<T>(operation: string, argument: string, bytes: number, make: () => T): T {
  try {
    return make();
  } catch (e) {
    const failure = allocationFailure(e);
    if (failure === null) throw e;
    const cause = (e as RangeError).message;
    if (failure === "length") {
      throw new KgrankInputError(
        argument,
        `needs a table of ${formatBytes(bytes)}, more than one typed array can hold: ${cause}`,
      );
    }
    throw new KgrankMemoryError(
      operation,
      `${operation}: not enough memory for this input: cannot allocate ${formatBytes(bytes)} (${cause}); ` +
        `use fewer entities or relations, or give the process more memory`,
    );
  }
}
