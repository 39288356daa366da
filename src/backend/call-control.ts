/**
 * Cancellation and progress of the public async calls (`signal` and `onProgress` options). A call checks its two
 * options first and rejects at once when the signal is already aborted; while it runs, a `CallControl` joins the
 * caller's AbortSignal to the kernels it runs (src/contract/kernels.ts KernelControl: native work stops at the next task
 * boundary, the fallback between row slices) and turns the kernels' rows-done into `onProgress` calls. The call
 * rejects with the signal's reason - a DOMException named "AbortError" unless `abort(reason)` gave another - once no
 * work of it runs any more, and records nothing: whatever the call would have changed is as before it.
 */
import type { KernelControl } from "../contract/kernels";
import { optionKeys, options, progressOption, signalOption, type Unchecked } from "../checks/validate";

/** Work done so far by an async call, in its tasks (rows: one per ranking task). */
export interface Progress {
  done: number;
  total: number;
}

/** The options every long async call takes. */
export interface AsyncOptions {
  /**
   * Stops the call: it rejects with `signal.reason` (an "AbortError" DOMException by default) and leaves every object
   * it would have changed as it was before the call. Checked before any work starts and at every task boundary.
   */
  signal?: AbortSignal;
  /**
   * Called with `{ done, total }` tasks (rows) while the call runs - from the event loop, at most about every 50 ms,
   * `done` increasing and below `total` - and once with `done === total` just before the promise resolves (never
   * after it rejects). If it throws, the call stops and rejects with what it threw.
   */
  onProgress?: (progress: Progress) => void;
}

export const ASYNC_KEYS = optionKeys<AsyncOptions>({ signal: 1, onProgress: 1 });

/** The checked `signal` and `onProgress` of an async call's options. */
export interface AsyncArgs {
  signal: AbortSignal | undefined;
  onProgress: ((progress: Progress) => void) | undefined;
}

/**
 * Checks an options object's `signal` and `onProgress` (KgrankInputError naming the option) and throws the signal's
 * reason when it is already aborted. Call it first, before the other checks, so an aborted call does no work.
 */
function asyncArgs(options: Unchecked<AsyncOptions>): AsyncArgs {
  const signal = signalOption(options.signal);
  const onProgress = progressOption<(progress: Progress) => void>(options.onProgress);
  signal?.throwIfAborted();
  return { signal, onProgress };
}

/** The options of a call that has a sync and an async form, keys checked: the call's own, and its async ones. */
export interface CallOptions<K extends string> {
  /** The call's own options (`keys`), values not yet checked. */
  options: { [P in K]?: unknown };
  /** The async form's checked `signal` and `onProgress`; both undefined for the sync form. */
  asyncArgs: AsyncArgs;
}

/**
 * The options object of a call that has a sync and an async form: its keys checked (`keys`, and for the async form
 * ASYNC_KEYS too), then for the async form its `signal` and `onProgress` before any other option (asyncArgs); the
 * sync form's are both undefined.
 */
export function callOptions<K extends string>(
  name: string,
  args: unknown,
  keys: readonly K[],
  isAsync: boolean,
): CallOptions<K> {
  if (!isAsync) return { options: options(name, args, keys), asyncArgs: { signal: undefined, onProgress: undefined } };
  const checked = options(name, args, [...keys, ...ASYNC_KEYS]);
  return { options: checked, asyncArgs: asyncArgs(checked) };
}

/** Shortest time between two intermediate progress calls. */
const PROGRESS_MS = 50;

/**
 * The calls running under each signal: one "abort" listener per signal whatever the number of calls (a server that
 * shares one signal among hundreds of calls would otherwise pass Node's listener-leak warning), removed with the
 * last call.
 */
const watched = new WeakMap<AbortSignal, { calls: Set<CallControl>; listener: () => void }>();

function watch(signal: AbortSignal, call: CallControl): void {
  let w = watched.get(signal);
  if (!w) {
    const calls = new Set<CallControl>();
    const listener = () => {
      watched.delete(signal);
      for (const c of [...calls]) c.stop(signal.reason);
    };
    signal.addEventListener("abort", listener, { once: true });
    w = { calls, listener };
    watched.set(signal, w);
  }
  w.calls.add(call);
}

function unwatch(signal: AbortSignal, call: CallControl): void {
  const w = watched.get(signal);
  if (!w || !w.calls.delete(call) || w.calls.size > 0) return;
  signal.removeEventListener("abort", w.listener);
  watched.delete(signal);
}

/**
 * The async options of a call made inside the call `outer` controls: it stops with that call and reports its progress
 * through it (the outer call makes the final report). None without a control.
 */
export function nestedCall(outer: CallControl | undefined): AsyncOptions {
  if (!outer) return {};
  return {
    signal: outer.signal,
    onProgress: outer.wantsProgress ? (q: Progress) => outer.progress(q.done) : undefined,
  };
}

/** One async call's stop state and progress; the kernels it runs see it (or a part of it) as their KernelControl. */
export class CallControl implements KernelControl {
  readonly total: number;
  #stopped = false;
  #reason: unknown = undefined;
  readonly #stops = new Set<() => void>();
  readonly #signal: AbortSignal | undefined;
  readonly #onProgress: ((progress: Progress) => void) | undefined;
  #reported = 0;
  #reportedAt: number;
  #controller: AbortController | undefined;

  constructor(args: AsyncArgs, total: number) {
    this.total = total;
    this.#onProgress = args.onProgress;
    this.#reportedAt = performance.now();
    const signal = args.signal;
    if (signal) {
      if (signal.aborted) {
        this.stop(signal.reason);
      } else {
        this.#signal = signal;
        watch(signal, this);
      }
    }
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  get stopReason(): unknown {
    return this.#reason;
  }

  get wantsProgress(): boolean {
    return this.#onProgress !== undefined;
  }

  onStop(fn: () => void): () => void {
    if (this.#stopped) {
      fn();
      return () => {};
    }
    this.#stops.add(fn);
    return () => this.#stops.delete(fn);
  }

  /** Stops the call's kernels (at their next task boundary); the call rejects with `reason`. */
  stop(reason: unknown): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#reason = reason;
    const stops = [...this.#stops];
    this.#stops.clear();
    for (const fn of stops) fn();
  }

  /** An intermediate report: at most every PROGRESS_MS, increasing, below `total`. A throwing callback stops the call. */
  progress(done: number): void {
    if (!this.#onProgress || this.#stopped) return;
    const d = Math.min(Math.floor(done), this.total - 1);
    const now = performance.now();
    if (d <= this.#reported || now - this.#reportedAt < PROGRESS_MS) return;
    this.#reported = d;
    this.#reportedAt = now;
    try {
      this.#onProgress({ done: d, total: this.total });
    } catch (e) {
      this.stop(e);
    }
  }

  /**
   * The KernelControl of a kernel call whose rows are this call's rows [offset, offset + its rows); with `scale`, each
   * of its rows counts as that fraction of a row of this call (a call whose rows are done after several passes).
   */
  part(offset: number, scale = 1): KernelControl {
    const self = this;
    return {
      get stopped() {
        return self.stopped;
      },
      get stopReason() {
        return self.stopReason;
      },
      get wantsProgress() {
        return self.wantsProgress;
      },
      onStop: (fn) => self.onStop(fn),
      progress: (done) => self.progress(offset + done * scale),
    };
  }

  /** An AbortSignal that aborts (with the stop reason) when this call stops: hands its stop to a nested async call. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      const controller = new AbortController();
      this.#controller = controller;
      this.onStop(() => controller.abort(this.#reason));
    }
    return this.#controller.signal;
  }

  /** Throws the stop reason when the call was stopped. */
  check(): void {
    if (this.#stopped) throw this.#reason;
  }

  /**
   * The call's work is done and its result complete, not yet recorded: rejects (throws) if it was stopped meanwhile,
   * else makes the final progress call (done === total). What it throws is the call's rejection.
   */
  finish(): void {
    this.check();
    this.#onProgress?.({ done: this.total, total: this.total });
    this.check();
  }

  /** Lets go of the caller's signal (call when the promise settles). */
  close(): void {
    if (this.#signal) unwatch(this.#signal, this);
    this.#stops.clear();
  }
}

/**
 * Runs an async call's body under a CallControl of `total` tasks (none when the call has neither a signal nor a progress
 * callback: the kernels then run without a control), and lets go of the signal when it settles.
 */
export async function withCallControl<T>(
  args: AsyncArgs,
  total: number,
  body: (control: CallControl | undefined) => Promise<T>,
): Promise<T> {
  if (!args.signal && !args.onProgress) return body(undefined);
  const control = new CallControl(args, total);
  try {
    control.check();
    return await body(control);
  } finally {
    control.close();
  }
}
