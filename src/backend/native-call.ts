/**
 * What the addon throws, as the facade's typed errors: every binding call of src/backend/backend.ts,
 * native-filter-index.ts and native-metrics.ts goes through nativeCall / nativeCallAsync; and how an async binding
 * runs (underControl: cancellation and progress; holdable: the inputs it may hold).
 */
import { allocationFailure, KgrankInputError, KgrankMemoryError } from "../checks/errors";
import type { Hold } from "../contract/addon";
import { type KernelControl, StatusCode } from "../contract/kernels";

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
function nativeCallAsync<T>(argument: string, run: () => Promise<T>): Promise<T> {
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

/**
 * An opaque kernel control of the addon (native/addon/async.h; in C++ a kgrank::JobControl, where a job is one async
 * native call).
 */
export type NativeKernelControl = { readonly __nativeKernelControl: unique symbol };

/**
 * native/addon/async.h: a kernel control to pass after an async binding's record; cancelKernel stops the calls given
 * it at their next task boundary (they reject with code KGRANK_CANCELLED), kernelProgress reads [done, total] work
 * units.
 */
export interface NativeControls {
  kernelControl(): NativeKernelControl;
  cancelKernel(control: NativeKernelControl): void;
  kernelProgress(control: NativeKernelControl): [number, number];
}

/** How often a running native call's progress counter is read (an atomic load: the call never waits for it). */
const PROGRESS_POLL_MS = 50;

/**
 * Runs one async binding under `control` (src/contract/kernels.ts KernelControl): without one, as it is; with one,
 * the binding gets a native kernel control (after its record, through `start`), the control's stop cancels it, a
 * timer reads its progress (scaled from the driver's work units to the call's `rows`) while it runs, and a stopped
 * call rejects with the stop reason once the native work has ended - also when it finished anyway. The stop listener
 * and the timer are gone when the promise settles.
 */
export async function underControl(
  addon: NativeControls,
  control: KernelControl | undefined,
  rows: number,
  start: (nativeControl?: NativeKernelControl) => Promise<void>,
): Promise<void> {
  if (!control) return start();
  if (control.stopped) throw control.stopReason;
  const nativeControl = addon.kernelControl();
  const unregister = control.onStop(() => addon.cancelKernel(nativeControl));
  const timer = control.wantsProgress
    ? setInterval(() => {
        const [done, total] = addon.kernelProgress(nativeControl);
        if (total > 0) control.progress(Math.min(rows, Math.floor((done / total) * rows)));
      }, PROGRESS_POLL_MS)
    : null;
  timer?.unref();
  try {
    await start(nativeControl);
  } catch (e) {
    if (control.stopped) throw control.stopReason;
    throw e;
  } finally {
    if (timer) clearInterval(timer);
    unregister();
  }
  if (control.stopped) throw control.stopReason;
}

/** underControl over nativeCallAsync: an async binding's errors as the facade's, named by `argument`. */
export function nativeAsync(
  addon: NativeControls,
  argument: string,
  control: KernelControl | undefined,
  rows: number,
  start: (nativeControl?: NativeKernelControl) => Promise<void>,
): Promise<void> {
  return underControl(addon, control, rows, (c) => nativeCallAsync(argument, () => start(c)));
}

/**
 * An async binding's input as the native call takes it: views of a resizable ArrayBuffer are copied (the addon refuses
 * them: its job works in slices between event-loop turns and would stop when one shrinks, native/addon/watch.h).
 * Outputs are always the facade's own arrays and never go through this.
 */
export const holdable: Hold = <T extends ArrayBufferView>(a: T): T =>
  (a.buffer as { resizable?: boolean }).resizable === true ? ((a as unknown as { slice(): T }).slice() as T) : a;
