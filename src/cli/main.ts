/**
 * The `kgrank` command: every command's flags come from its module in run/flags/ (one definition per option), and
 * main.ts wires each to what runs it. Parsing by commander; every user error is a KgrankError (or a commander usage
 * error) printed as one line on stderr with exit code 1; SIGINT removes any half-written output file and exits 130.
 * bin/kgrank.js calls `main()`.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";

import { Command, CommanderError } from "commander";

import { backendInfo } from "../backend/backend";
import { KgrankError } from "../checks/errors";
import { removePendingFiles } from "../io/atomic";

import { adjustCommand, estimateFullCommand, expectationsCommand, infoCommand, metricsCommand } from "./commands";
import { evaluateRun } from "../run/evaluate-run";
import type { EvaluateOptions } from "../run/evaluate/options";
import { compareFlags } from "../run/flags/compare";
import { evaluateFlags, givenKeys } from "../run/flags/evaluate";
import { buildNativeFlags, infoFlags } from "../run/flags/info";
import { mergeFlags } from "../run/flags/merge";
import { adjustFlags, estimateFullFlags, expectationsFlags, metricsFlags } from "../run/flags/metrics";
import { combineFlags, gradeFlags, predictFlags, quantizeFlags } from "../run/flags/predict";
import { plotFlags, reportFlags } from "../run/flags/report";
import { submitFlags, workerFlags } from "../run/flags/submit";
import {
  combineRun,
  type CombineOptions,
  gradeRun,
  type GradeOptions,
  predictRun,
  type PredictOptions,
  quantizeRun,
  type QuantizeOptions,
} from "../run/predict-run";
import { buildNativeCommand } from "./native-build";
import { compareCommand, type CompareCliOptions } from "./compare";
import { mergeCommand, type MergeOptions } from "../run/merge";
import { plotCommand, reportCommand } from "./report";
import { submitRun, type SubmitOptions, workerCommand, type WorkerOptions } from "../run/queue";
import { errorLine, internalErrorLine, usageLine } from "../run/flag-parsers";
import type { Out } from "../run/out";

// ---- program -----------------------------------------------------------------------------------------------------

export function buildProgram(out: Out, argv: string[] = []): Command {
  const program = new Command("kgrank")
    .description("Rank-based evaluation of knowledge-graph link prediction (PyKEEN semantics)")
    .version(backendInfoVersion(), "-V, --version")
    .showHelpAfterError(false)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => out.stdout(s),
      writeErr: (s) => out.stderr(s),
      outputError: (s, write) => write(usageError(s)),
    });

  evaluateFlags(program).action(async (flags: EvaluateOptions, cmd: Command) =>
    evaluateRun({ ...flags, argv, given: givenKeys(cmd) }, out),
  );
  submitFlags(program).action(async (flags: SubmitOptions) => {
    await submitRun({ ...flags, args: argv }, out);
  });
  predictFlags(program).action(async (flags: PredictOptions) => predictRun(flags, out));
  quantizeFlags(program).action(async (flags: QuantizeOptions) => quantizeRun(flags, out));
  combineFlags(program).action((files: string[], flags: CombineOptions) => combineRun(files, flags, out));
  gradeFlags(program).action(async (file: string, flags: GradeOptions) => gradeRun(file, flags, out));
  compareFlags(program).action(async (files: string[], flags: CompareCliOptions) => compareCommand(files, flags, out));
  reportFlags(program).action(async (files: string[], flags) => reportCommand(files, flags, out));
  plotFlags(program).action(async (name: string, file: string, flags) => plotCommand(name, file, flags, out));
  workerFlags(program).action(async (flags: WorkerOptions & { quiet?: boolean; closeTimeout?: number }) =>
    workerCommand(flags, out),
  );
  mergeFlags(program).action(async (files: string[], flags: MergeOptions) => mergeCommand(files, flags, out));
  metricsFlags(program).action(async (flags) => metricsCommand(flags, out));
  estimateFullFlags(program).action((flags) => estimateFullCommand(flags, out));
  adjustFlags(program).action((flags) => adjustCommand(flags, out));
  expectationsFlags(program).action((flags) => expectationsCommand(flags, out));
  infoFlags(program).action((flags) => infoCommand(flags, out));
  buildNativeFlags(program).action((flags: { fromSource?: boolean; verbose?: boolean }) => buildNativeCommand(flags));
  return program;
}

function backendInfoVersion(): string {
  try {
    return (
      JSON.parse(readFileSync(path.resolve(__dirname, "..", "..", "..", "package.json"), "utf8")) as { version: string }
    ).version;
  } catch {
    return backendInfo().version;
  }
}

/** Runs the CLI; resolves to the exit code. */
export async function main(argv: string[] = process.argv.slice(2), out: Out = defaultOut): Promise<number> {
  if (argv.length === 0) argv = ["--help"];
  const program = buildProgram(out, argv);
  try {
    await program.parseAsync(argv, { from: "user" });
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and version exit with 0; usage errors were already printed by commander, through usageError().
      return e.exitCode === 0 || e.code === "commander.helpDisplayed" || e.code === "commander.version" ? 0 : 1;
    }
    if (e instanceof KgrankError) {
      out.stderr(`kgrank: ${errorLine(e)}\n`);
      return 1;
    }
    out.stderr(`kgrank: ${internalErrorLine(e)}\n`);
    if (process.env.KGRANK_DEBUG) out.stderr(`${(e as Error)?.stack}\n`);
    return 70;
  }
}

/** commander's usage error as the CLI prints it: `kgrank: --flag: what is wrong` (usageLine). */
function usageError(text: string): string {
  return `kgrank: ${usageLine(text)}\n`;
}

const defaultOut: Out = {
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
};

/** Entry point of bin/kgrank.js: SIGINT removes half-written files; the exit code waits for stdout to drain. */
export function runCli(): void {
  process.on("SIGINT", () => {
    removePendingFiles();
    process.stderr.write("kgrank: interrupted\n");
    process.exit(130);
  });
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(0);
  });
  void main().then((code) => {
    process.exitCode = code;
  });
}
