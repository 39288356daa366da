/**
 * The `kgrank` CLI in this test process: `main(argv, out)` with stdout and stderr captured, run in `cwd` (relative
 * paths resolve there) and on this test project's backend. Flag, usage and output tests use it; helpers/process.ts
 * runs bin/kgrank.js in a subprocess where the process itself is the subject.
 */
import { expect } from "vitest";

import { main } from "../../src/cli/main";
import type { Run } from "./process";

export type { Run } from "./process";

/**
 * Runs `kgrank args` in-process in `cwd`; the result has the exit code `main` resolves to as its status. `env` sets
 * variables the CLI reads while it runs (SLURM_ARRAY_TASK_ID, TMPDIR, ...), restored afterwards; the backend was
 * chosen when the test project loaded, so KGRANK_BACKEND and its kin need a process (helpers/process.ts).
 */
export async function kgrank(args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const before = process.cwd();
  const saved = Object.keys(env).map((k) => [k, process.env[k]] as const);
  process.chdir(cwd);
  Object.assign(process.env, env);
  try {
    const status = await main(args, { stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s) });
    return { status, signal: null, stdout, stderr };
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    process.chdir(before);
  }
}

/**
 * A user error: exit code 1, one line on stderr starting with "kgrank: " and matching `pattern` (commander's own
 * usage errors too, rewritten by src/run/flag-parsers.ts usageLine), no stack.
 */
export function expectUserError(r: Run, pattern: RegExp): void {
  expect(r.status, r.stderr).toBe(1);
  const lines = r.stderr.trim().split("\n");
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^kgrank: /);
  expect(r.stderr).toMatch(pattern);
  expect(r.stderr).not.toMatch(/\n\s+at /);
}
