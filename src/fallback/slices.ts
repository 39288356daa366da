/**
 * The fallback's async kernels under a control (src/contract/kernels.ts KernelControl): the rows are worked through in slices of
 * about SLICE_MS between turns of the event loop, the control's stop is checked between slices (the fallback's task
 * boundary; twin of the cancellation check of native/core/thread_pool.cpp parallel_for) and the rows done are reported
 * after each. Rows are independent in every kernel that uses it, so slicing never changes a result.
 *
 * Between slices the caller's arrays may be detached (transferred) or shrunk. A slice loop that finds one of its
 * `inputs` so stops there and resolves with incomplete output - as the native async runner does (native/addon/async.h)
 * - and the facade, which watches every input of an async call (src/checks/errors.ts watchDetach), then rejects with
 * KgrankDetachedError.
 */
import { SLICE_MS, turn } from "../contract/event-loop";
import type { CountBuffers, KernelControl } from "../contract/kernels";

/**
 * Runs `step(r0, r1)` over [0, rows) in consecutive slices; `work` estimates one row's cost (elements touched), which
 * sizes the first slice (about 64k elements); later slices are resized from the time the previous one took.
 */
export async function inSlices(
  rows: number,
  work: number,
  control: KernelControl,
  inputs: readonly (ArrayBufferView | null)[],
  step: (r0: number, r1: number) => void,
): Promise<void> {
  if (control.stopped) throw control.stopReason;
  const watched = inputs.filter((v): v is ArrayBufferView => v !== null).map((v) => [v, v.byteLength] as const);
  let size = Math.max(1, Math.floor(65536 / Math.max(1, work)));
  for (let r = 0; r < rows;) {
    const end = Math.min(rows, r + size);
    const t0 = performance.now();
    step(r, end);
    const ms = performance.now() - t0;
    r = end;
    size = Math.max(1, Math.min(4 * size, Math.floor((size * SLICE_MS) / Math.max(ms, 0.01))));
    if (r < rows) {
      if (control.wantsProgress) control.progress(r);
      await turn();
      if (control.stopped) throw control.stopReason;
      if (watched.some(([v, bytes]) => v.byteLength !== bytes)) return; // given away: the facade reports it
    }
  }
}

/** Rows [r0, r1) of count buffers (plain or filtered): views, for a slice's counts. */
export function bufferRows<T extends CountBuffers>(out: T, r0: number, r1: number): T {
  const part: Record<string, Float64Array> = {};
  for (const [k, v] of Object.entries(out)) part[k] = (v as Float64Array).subarray(r0, r1);
  return part as unknown as T;
}
