/**
 * The `kgrank` CLI in this test process: `main(argv, out)` with stdout and stderr captured, run in `cwd` (relative
 * paths resolve there) and on this test project's backend. Flag, usage and output tests use it; helpers/process.ts
 * runs bin/kgrank.js in a subprocess where the process itself is the subject.
 */
import { expect } from "vitest";

import { main } from "../../src/cli/main";
import type { Run } from "./process";

export type { Run } from "./process";

/** Runs `kgrank args` in-process in `cwd`; the result has the exit code `main` resolves to as its status. */
export async function kgrank(args: string[], cwd: string): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const before = process.cwd();
  process.chdir(cwd);
  try {
    const status = await main(args, { stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s) });
    return { status, signal: null, stdout, stderr };
  } finally {
    process.chdir(before);
  }
}

/**
 * A user error: exit code 1, one line on stderr starting with "kgrank: " and matching `pattern` (commander's own
 * usage errors too, rewritten by src/cli/main.ts usageError), no stack.
 */
export function expectUserError(r: Run, pattern: RegExp): void {
  expect(r.status, r.stderr).toBe(1);
  const lines = r.stderr.trim().split("\n");
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^kgrank: /);
  expect(r.stderr).toMatch(pattern);
  expect(r.stderr).not.toMatch(/\n\s+at /);
}
