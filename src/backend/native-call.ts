/**
 * What the addon throws, as the facade's typed errors: every binding call of src/backend/backend.ts and
 * src/backend/native-metrics.ts goes through nativeCall / nativeCallAsync.
 */
import { allocationFailure, KgrankInputError, KgrankMemoryError } from "../checks/errors";
import { StatusCode } from "../contract/kernels";

/**
 * The facade's typed error for what a binding threw, or `e` itself. KGRANK_MEMORY (a native allocation failed,
 * native/addon/common.h guarded) becomes KgrankMemoryError. KGRANK_INPUT from a binding's own checks or a core
 * InvalidInput status means an input failed the addon's check after it had passed the facade's: it changed during the
 * call (a SharedArrayBuffer another thread writes); it becomes a KgrankInputError naming `argument`.
 */
export function nativeError(e: unknown, argument: string): unknown {
  if (!(e instanceof Error)) return e;
  const { code } = e as Error & { code?: unknown };
  if (code === "KGRANK_MEMORY") return new KgrankMemoryError(e.message.split(":")[0]!, e.message);
  const status = statusOf(e)?.status;
  if (code === "KGRANK_INPUT" && (status === undefined || status === StatusCode.InvalidInput)) {
    return new KgrankInputError(
      argument,
      `${e.message} (the addon's second check; the first one passed, so the array changed during the call - is it ` +
        `memory another thread writes? Pass an array that stays unchanged until the call returns, e.g. a copy)`,
    );
  }
  return e;
}

/** `run()`, with what the addon throws turned into the facade's typed errors (nativeError). */
export function nativeCall<T>(argument: string, run: () => T): T {
  try {
    return run();
  } catch (e) {
    throw nativeError(e, argument);
  }
}

/** The same for an async binding: both its synchronous throw and its rejection. */
export function nativeCallAsync<T>(argument: string, run: () => Promise<T>): Promise<T> {
  try {
    return run().catch((e: unknown) => {
      throw nativeError(e, argument);
    });
  } catch (e) {
    return Promise.reject(nativeError(e, argument));
  }
}

/**
 * The fallback's kernels with a failed typed-array allocation (either kind of errors.ts allocationFailure) turned
 * into the KgrankMemoryError the native backend throws for the same input, with the same message; `operation` is the
 * kernel's name. Handles returned by a kernel (the filter index) are the
 * fallback's own.
 */
export function withMemoryErrors<K extends object>(kernels: K): K {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(kernels)) {
    out[name] =
      typeof value !== "function"
        ? value
        : (...args: unknown[]) => {
            try {
              return (value as (...a: unknown[]) => unknown).apply(kernels, args);
            } catch (e) {
              if (allocationFailure(e)) {
                throw new KgrankMemoryError(name, `${name}: ${MEMORY_ADVICE} (${(e as RangeError).message})`);
              }
              throw e;
            }
          };
  }
  return out as K;
}

/** native/addon/common.h memory_message(), after "<operation>: ". */
const MEMORY_ADVICE =
  "not enough memory for this input (a native allocation failed); pass a smaller input (fewer rows, entities or " +
  "triples per call) or give the process more memory";

/**
 * The one way the addon reports what the core rejected (native/addon/common.h throw_status): an error with code
 * "KGRANK_INPUT" and numeric `status` and `index`. Returns them, or null for any other error (a binding's own
 * argument checks throw KGRANK_INPUT without a status). The only place that reads them.
 */
export function statusOf(e: unknown): { status: StatusCode; index: number; message: string } | null {
  if (!(e instanceof Error)) return null;
  const { code, status, index } = e as Error & { code?: unknown; status?: unknown; index?: unknown };
  if (code !== "KGRANK_INPUT" || typeof status !== "number" || typeof index !== "number") return null;
  return { status, index, message: e.message };
}
