/** Where a run's text goes: the Out sink the CLI (process streams) or a queue worker (its job) gives. */
import { writeFileAtomic } from "../io/atomic";

export interface Out {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  /** Work done so far (e.g. a queue worker reports it through its job); called beside the progress bar. */
  progress?: (done: number, total: number) => void;
}

/** The text to stdout, or atomically to `output` (a note on stderr unless quiet). */
export function emit(out: Out, text: string, output: string | undefined, quiet: boolean | undefined): void {
  const body = text.endsWith("\n") ? text : text + "\n";
  if (output) {
    writeFileAtomic(output, body, "--output");
    if (!quiet) out.stderr(`wrote ${output}\n`);
  } else {
    out.stdout(body);
  }
}
