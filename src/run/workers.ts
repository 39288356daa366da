/**
 * `kgrank evaluate --workers K`: the shards of `--shard I/K --save-state` run in K local child processes (each
 * with its share of the cores), and the parent merges their states exactly as `kgrank merge` does. The children
 * get the parent's own flags, so their run fingerprints agree; a child that fails stops the others and its one-line
 * error is the parent's. Temporary states live in a private directory removed on exit, also on Ctrl-C.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import { KgrankError, KgrankInputError } from "../checks/errors";
import { writeFileAtomic } from "../io/atomic";

import type { Format } from "./format";
import { mergeShards, printMerged } from "./merge";
import { Progress } from "./progress";
import type { Out } from "./out";

/** Flags a child must not inherit: the parent prints and saves; `--flag value` and `--flag=value` forms. */
const PARENT_ONLY_WITH_VALUE = ["--workers", "--output", "-o", "--format", "--save-state", "--ranks-out"];
const PARENT_ONLY = ["--quiet", "-q"];

export function childArgs(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (PARENT_ONLY.includes(a)) continue;
    if (PARENT_ONLY_WITH_VALUE.includes(a)) {
      i++;
      continue;
    }
    if (PARENT_ONLY_WITH_VALUE.some((f) => a.startsWith(`${f}=`))) continue;
    out.push(a);
  }
  return out;
}

function binPath(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const bin = path.join(dir, "bin", "kgrank.js");
    if (existsSync(bin)) return bin;
    if (path.dirname(dir) === dir)
      throw new KgrankError("--workers: cannot find bin/kgrank.js above the installed package");
  }
}

export async function evaluateWithWorkers(
  argv: string[],
  workers: number,
  opts: { format: Format; output?: string; quiet?: boolean; saveState?: string; shard?: unknown; ranksOut?: string },
  out: Out,
): Promise<void> {
  if (opts.shard)
    throw new KgrankInputError(
      "--workers",
      "runs its own shards: drop --shard (or run the shards yourself, without --workers)",
    );
  const t0 = performance.now();
  const dir = mkdtempSync(path.join(os.tmpdir(), "kgrank-workers-"));
  const children: ChildProcess[] = [];
  const cleanup = () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", cleanup);
  const threads = process.env.KGRANK_THREADS || String(Math.max(1, Math.floor(os.availableParallelism() / workers)));
  const progress = new Progress(`evaluating in ${workers} worker processes`, workers, { quiet: opts.quiet });
  try {
    const base = childArgs(argv);
    const files = Array.from({ length: workers }, (_, i) => path.join(dir, `shard-${i}.state`));
    const runs = files.map((file, i) => {
      const child = spawn(
        process.execPath,
        [binPath(), ...base, "--shard", `${i}/${workers}`, "--save-state", file, "--quiet"],
        {
          env: { ...process.env, KGRANK_THREADS: threads },
          stdio: ["ignore", "ignore", "pipe"],
        },
      );
      children.push(child);
      let stderr = "";
      child.stderr!.on("data", (b: Buffer) => (stderr += b.toString()));
      return new Promise<void>((resolve, reject) => {
        child.on("error", (e) => reject(new KgrankError(`--workers: cannot start a worker process: ${e.message}`)));
        child.on("close", (code, signal) => {
          progress.tick();
          if (code === 0) return resolve();
          const line =
            stderr
              .trim()
              .split("\n")[0]
              ?.replace(/^kgrank: /, "") || `ended by ${signal ?? `exit code ${code}`}`;
          reject(new KgrankError(`worker ${i}/${workers}: ${line}`));
        });
      });
    });
    try {
      await Promise.all(runs);
    } catch (e) {
      for (const c of children) c.kill("SIGKILL");
      await Promise.allSettled(runs);
      throw e;
    }
    progress.stop();
    const merged = mergeShards(files.map((file) => ({ file, bytes: new Uint8Array(readFileSync(file)) })));
    if (opts.saveState) {
      // The merged state stands for the whole run: one shard of one.
      const meta = { ...merged.meta, shard: 0, shards: 1, rows: [0, merged.report.triples] };
      writeFileAtomic(opts.saveState, merged.evaluator.serialize({ meta }), "--save-state");
    }
    await printMerged(
      merged,
      { format: opts.format, output: opts.output, quiet: opts.quiet, ranksOut: opts.ranksOut },
      out,
      t0,
    );
  } finally {
    progress.stop();
    cleanup();
    process.removeListener("exit", cleanup);
  }
}
