/**
 * Typed errors. Every error kgrank throws on purpose is a `KgrankError`; its `code` says which kind, and input
 * errors name the offending argument and say what is accepted.
 */
import { quoted } from "../text/suggest";

export class KgrankError extends Error {
  readonly code: string;
  constructor(message: string, code = "KGRANK_ERROR") {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A public function was called with an argument it cannot accept. `argument` names it. */
export class KgrankInputError extends KgrankError {
  readonly argument: string;
  /** The row (of a batch) or element the error is about, when there is one: callers map it to their own numbering. */
  readonly index: number | undefined;
  constructor(argument: string, message: string, index?: number) {
    super(`${argument}: ${message}`, "KGRANK_INPUT");
    this.argument = argument;
    this.index = index;
  }
}

/** The backend could not be loaded or configured as asked (KGRANK_BACKEND, KGRANK_SIMD, KGRANK_THREADS). */
export class KgrankBackendError extends KgrankError {
  constructor(message: string) {
    super(message, "KGRANK_BACKEND");
  }
}

/**
 * A feature needs an optional package that is not installed (bullmq, for `kgrank submit` and `kgrank worker`).
 * `packageName` names it; the message says what needs it and the one command that installs it.
 */
export class KgrankMissingPackageError extends KgrankError {
  readonly packageName: string;
  constructor(packageName: string, neededBy: string) {
    super(
      `${neededBy} needs the package ${packageName}, which kgrank-native does not install for everyone: ` +
        `run \`npm install ${packageName}\` in your project`,
      "KGRANK_MISSING_PACKAGE",
    );
    this.packageName = packageName;
  }
}

/**
 * The native backend could not allocate the memory an input needs (e.g. a filter index for 2^31 - 1 entities under
 * a memory limit). Nothing was computed and the process goes on; `operation` names the native call.
 */
export class KgrankMemoryError extends KgrankError {
  readonly operation: string;
  constructor(operation: string, message: string) {
    super(message, "KGRANK_MEMORY");
    this.operation = operation;
  }
}

const INVALID_LENGTH = /invalid (typed )?array( buffer)? length/i;
const ALLOCATION_FAILED = /allocation failed/i;

/**
 * The one reading of a failed typed-array allocation, which V8 reports as a bare RangeError: "length" for a length no
 * typed array can have ("Invalid typed array length", "Invalid array buffer length"), "memory" when the memory is not
 * there ("Array buffer allocation failed"), null for anything else. The fallback's kernels (src/backend/native-call.ts
 * withMemoryErrors) and the tables sized by arguments (src/checks/alloc.ts allocateTable) turn it into their
 * KgrankMemoryError (or, for a refused length of a table, a KgrankInputError naming the argument).
 */
export function allocationFailure(e: unknown): "length" | "memory" | null {
  if (!(e instanceof RangeError)) return null;
  if (INVALID_LENGTH.test(e.message)) return "length";
  return ALLOCATION_FAILED.test(e.message) ? "memory" : null;
}

/** An object was used in a state that does not allow the call (e.g. adding to a finished accumulator). */
export class KgrankStateError extends KgrankError {
  constructor(message: string) {
    super(message, "KGRANK_STATE");
  }
}

/**
 * An input of an async call was detached (transferred: structuredClone / postMessage with a transfer list,
 * ArrayBuffer.prototype.transfer) or shrunk (a resizable ArrayBuffer's resize()) before the call settled. The kernel
 * was safe (it reads inputs only while JavaScript cannot run, in slices, and stops at a change), but its result is
 * discarded, since the caller gave the data away mid-call. `argument` names the detached input.
 */
export class KgrankDetachedError extends KgrankError {
  readonly argument: string;
  constructor(argument: string) {
    super(
      `${argument}: its ArrayBuffer was detached (transferred) or shrunk (resized) while the async call was ` +
        `running; the result is discarded. Keep inputs as they are until the promise settles, or pass a copy`,
      "KGRANK_DETACHED",
    );
    this.argument = argument;
  }
}

/**
 * Records the byte lengths of an async call's input arrays (by name, or as [name, array] pairs when several share a
 * name); check() throws KgrankDetachedError when one of them was
 * detached or shrunk since (a detached or out-of-bounds view has byteLength 0). Call check() after awaiting the kernel, before using results.
 */
export function watchDetach(
  inputs: Record<string, ArrayBufferView | null | undefined> | [string, ArrayBufferView | null | undefined][],
): { check(): void } {
  const watched: [string, ArrayBufferView, number][] = [];
  for (const [name, view] of Array.isArray(inputs) ? inputs : Object.entries(inputs)) {
    if (view && view.byteLength > 0) watched.push([name, view, view.byteLength]);
  }
  return {
    check() {
      for (const [name, view, bytes] of watched) if (view.byteLength !== bytes) throw new KgrankDetachedError(name);
    },
  };
}

/** A metric has no closed-form expectation or variance (use `estimate()`), or cannot be derived for that reason. */
export class NoClosedFormError extends KgrankError {
  readonly metric: string;
  constructor(metric: string, message: string) {
    super(`${metric}: ${message}`, "KGRANK_NO_CLOSED_FORM");
    this.metric = metric;
  }
}

/** getMetric() did not recognise the query; `suggestions` holds the closest known names. */
export class UnknownMetricError extends KgrankError {
  readonly query: string;
  readonly suggestions: readonly string[];
  constructor(query: string, suggestions: readonly string[]) {
    super(
      `unknown metric ${quoted(query)}; closest known names: ${suggestions.join(", ")} ` +
        `(listMetrics() prints the catalogue)`,
      "KGRANK_UNKNOWN_METRIC",
    );
    this.query = query;
    this.suggestions = suggestions;
  }
}

/**
 * A ranking task whose true score is NaN: a NaN score marks a non-candidate, so the true answer has no rank.
 * `where` names the task ("task 3 of the batch", "row 3 (column 7)"); `argument` the input that holds the score.
 */
export function nanTrueScore(where: string, argument = "scores", index?: number): KgrankInputError {
  return new KgrankInputError(
    argument,
    `the true score of ${where} is NaN: a NaN score marks a non-candidate, so the true answer has no rank; fix the scores or drop the row`,
    index,
  );
}
