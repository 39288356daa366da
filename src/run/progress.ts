/**
 * A progress bar (cli-progress) on stderr for work that runs longer than about a second. It only appears on a
 * TTY and never with --quiet; quick runs never show it. Off a terminal (piped, a log) a stage given `line` reports
 * itself in one line when it ends, with its time, unless quiet.
 */
import { SingleBar } from "cli-progress";

export class Progress {
  readonly #enabled: boolean;
  readonly #label: string;
  readonly #total: number;
  readonly #start = Date.now();
  readonly #delayMs: number;
  readonly #stream: NodeJS.WriteStream;
  #bar: SingleBar | null = null;
  #value = 0;

  readonly #report: ((done: number, total: number) => void) | undefined;
  readonly #line: ((text: string) => void) | undefined;

  constructor(
    label: string,
    total: number,
    options: {
      quiet?: boolean;
      stream?: NodeJS.WriteStream;
      delayMs?: number;
      report?: (done: number, total: number) => void;
      /** Where the stage's one line goes off a terminal (e.g. the command's stderr). */
      line?: (text: string) => void;
    } = {},
  ) {
    const stream = options.stream ?? process.stderr;
    this.#enabled = !options.quiet && Boolean(stream.isTTY) && total > 0;
    this.#line = !options.quiet && !stream.isTTY ? options.line : undefined;
    this.#label = label;
    this.#total = total;
    this.#delayMs = options.delayMs ?? 1000;
    this.#stream = stream;
    this.#report = options.report;
  }

  /** Advances by `n` units; the bar appears once the work has run for ~1 s. */
  tick(n = 1): void {
    this.#value += n;
    this.#report?.(this.#value, this.#total);
    if (!this.#enabled) return;
    if (!this.#bar && Date.now() - this.#start >= this.#delayMs) {
      this.#bar = new SingleBar({
        format: `${this.#label} [{bar}] {percentage}% | {value}/{total} | ETA {eta_formatted}`,
        stream: this.#stream,
        hideCursor: true,
        clearOnComplete: true,
      });
      this.#bar.start(this.#total, this.#value);
    } else if (this.#bar) {
      this.#bar.update(this.#value);
    }
  }

  stop(): void {
    this.#bar?.stop();
    this.#bar = null;
  }

  /** Ends the stage: stop(), and off a terminal its one line ("kgrank: LABEL: 3.2 s"). */
  done(): void {
    this.stop();
    this.#line?.(`kgrank: ${this.#label}: ${((Date.now() - this.#start) / 1000).toFixed(1)} s\n`);
  }
}
