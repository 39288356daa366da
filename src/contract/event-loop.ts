/**
 * The event-loop turn that long work is sliced around: the fallback's async kernels (fallback/slices.ts), stepped
 * file reading (io/steps.ts), the bootstrap (evaluation/finalize.ts), the paired comparison's resampling
 * (compare/paired.ts) and the CLI's batch loops run about SLICE_MS of work, then yield. Beside the kernel contract because both backends' callers and the fallback itself use it.
 */
/** Work run between two event-loop turns by the code that slices long work (well under a ~50 ms turn). */
export const SLICE_MS = 10;

/** Yields to the event loop: resolves after pending I/O callbacks and timers have run (setImmediate). */
export function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
