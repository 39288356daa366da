/**
 * The one subprocess runner of the tests, and `kgrank` run as a user runs it: bin/kgrank.js in a fresh Node process
 * (from dist/, which the test setup rebuilds when src/ is newer). Use it only where the process itself is the subject
 * (signals, TTY, pipes, exit codes, the bin shim, the environment a process starts with); flag, usage and output
 * tests call the CLI in-process (helpers/cli.ts).
 */
import { spawnSync } from "node:child_process";
import * as path from "node:path";

export interface Run {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  /** Added to (or, with `undefined`, removed from) this process's environment. */
  env?: Record<string, string | undefined>;
  /** false: the child's environment is `env` alone, not this process's with `env` on top (default true). */
  inheritEnv?: boolean;
  input?: string;
  /** Milliseconds before the process is killed (default 120 s). */
  timeout?: number;
}

/** bin/kgrank.js of this checkout. */
export const KGRANK_BIN = path.resolve(__dirname, "..", "..", "bin", "kgrank.js");

/** Runs `command args` to completion and returns its exit status, signal and output (UTF-8). */
export function runProcess(command: string, args: string[], options: RunOptions = {}): Run {
  const env: Record<string, string> = {};
  const base = options.inheritEnv === false ? {} : process.env;
  for (const [k, v] of Object.entries({ ...base, ...options.env })) if (v !== undefined) env[k] = v;
  const r = spawnSync(command, args, {
    cwd: options.cwd,
    env,
    input: options.input,
    encoding: "utf8",
    timeout: options.timeout ?? 120_000,
  });
  if (r.error) throw r.error;
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/** `node bin/kgrank.js args` in a fresh process. */
export function runKgrankProcess(args: string[], options: RunOptions = {}): Run {
  return runProcess(process.execPath, [KGRANK_BIN, ...args], options);
}
