/**
 * The event-loop turn that long work is sliced around: the fallback's async kernels (fallback/slices.ts), stepped
 * file reading (io/steps.ts), the bootstrap (evaluation/finalize.ts), the paired comparison's resampling
 * (compare/paired.ts) and the CLI's batch loops run about SLICE_MS of work, then yield. Beside the kernel contract because both backends' callers and the fallback itself use it.
 */
/** Work run between two event-loop turns by the code that slices long work (well under a ~50 ms turn). */
export const SLICE_MS = 10;

/**
 * Yields to the event loop: resolves after pending I/O callbacks and timers have run (setImmediate). Where there is
 * no setImmediate (a browser, the browser build), after a message to itself on a MessageChannel: a macrotask, without
 * the 4 ms a browser adds to nested setTimeout(0); with neither, after setTimeout(0).
 */
export function turn(): Promise<void> {
  if (typeof setImmediate === "function") return new Promise((resolve) => setImmediate(resolve));
  if (typeof MessageChannel !== "function") return new Promise((resolve) => setTimeout(resolve, 0));
  return new Promise((resolve) => {
    waiting.push(resolve);
    channel().postMessage(null);
  });
}

const waiting: (() => void)[] = [];

/** The part of a MessageChannel used here (the DOM's; Node's types describe its own). */
interface Port {
  onmessage: (() => void) | null;
  postMessage(message: null): void;
}
let port: Port | null = null;

/** The port that posts to the one whose messages resolve `waiting`, in order. */
function channel(): Port {
  if (port) return port;
  const c = new MessageChannel() as unknown as { port1: Port; port2: Port };
  c.port1.onmessage = () => waiting.shift()?.();
  port = c.port2;
  return port;
}
