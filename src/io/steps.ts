/**
 * Work cut into steps: a generator that yields between pieces of a few milliseconds each, so one implementation runs
 * at once (runSteps: the sync readers) or between turns of the event loop (runStepsAsync: the async readers, which
 * keep any one turn to about SLICE_MS and stop at an AbortSignal between steps).
 */
import { SLICE_MS, turn } from "../contract/event-loop";

export type Steps<T> = Generator<void, T, void>;

/** Elements per step of a loop over typed-array elements (about a millisecond of work). */
export const STEP = 1 << 16;

/** Rows per step of a loop over rows of strings (map and set lookups: far slower per row than an element). */
export const ROW_STEP = 1 << 13;

/** Runs every step now. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * Runs the steps in slices of about SLICE_MS between event-loop turns; rejects with the signal's reason when it is
 * aborted (checked before the first step and between slices; the generator is closed).
 */
export async function runStepsAsync<T>(steps: Steps<T>, signal: AbortSignal | undefined): Promise<T> {
  try {
    signal?.throwIfAborted();
    let deadline = performance.now() + SLICE_MS;
    for (;;) {
      const r = steps.next();
      if (r.done) return r.value;
      if (performance.now() >= deadline) {
        await turn();
        signal?.throwIfAborted();
        deadline = performance.now() + SLICE_MS;
      }
    }
  } finally {
    steps.return(undefined as never);
  }
}
