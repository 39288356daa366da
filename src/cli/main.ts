/**
 * The `kgrank` command: evaluate, metrics, adjust, expectations, info. Parsing by commander; every user error is
 * a KgrankError (or a commander usage error) printed as one line on stderr with exit code 1; SIGINT removes any
 * half-written output file and exits 130. bin/kgrank.js calls `main()`.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";

import { Command, CommanderError, Option } from "commander";

import { backendInfo } from "../backend/backend";
import { KgrankError, KgrankInputError } from "../checks/errors";
import { removePendingFiles } from "../io/atomic";

import { adjustCommand, estimateFullCommand, expectationsCommand, infoCommand, metricsCommand } from "./commands";
import { evaluateRun } from "../run/evaluate-run";
import type { EvaluateOptions } from "../run/evaluate/options";
import { datasetOptions, evaluateFlags, evaluateRunFlags, givenKeys, modelFlags } from "../run/flags";
import {
  combineRun,
  type CombineOptions,
  entityRangeArg,
  gradeRun,
  type GradeOptions,
  predictRun,
  predictSidesArg,
  type PredictOptions,
} from "../run/predict-run";
import { buildNativeCommand } from "./native-build";
import { compareCommand, type CompareCliOptions } from "./compare";
import { mergeCommand, type MergeOptions } from "../run/merge";
import { plotCommand, reportCommand } from "./report";
import {
  DEFAULT_CLOSE_TIMEOUT_MS,
  DEFAULT_QUEUE,
  NOT_QUEUED_FLAGS,
  submitRun,
  type SubmitOptions,
  workerCommand,
  type WorkerOptions,
} from "../run/queue";
import { MAX_SHARDS } from "../run/shard";
import {
  collect,
  errorLine,
  formatOption,
  internalErrorLine,
  intArg,
  ksOption,
  listArg,
  metricsArg,
  outputOption,
  quietOption,
  SEED_MAX,
  sizeArg,
  usageLine,
} from "../run/flag-parsers";
import type { Out } from "../run/out";

/** --gamma of estimate-full: a number in (0, 1]. */
function gammaArg(v: string): number {
  const g = /^\s*(\d+(\.\d*)?|\.\d+)(e-?\d+)?\s*$/i.test(v) ? Number(v) : NaN;
  if (!(g > 0 && g <= 1)) throw new KgrankInputError("--gamma", `must be a number in (0, 1] such as 0.01, got "${v}"`);
  return g;
}

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

  evaluateRunFlags(
    evaluateFlags(
      datasetOptions(
        program
          .command("evaluate")
          .description(
            "rank the split's triples (both sides) and print MRR, Hits@1/3/10, MR, AMRI and z(MRR) with their random expectation (--metrics all: every metric and rank type); default: bundled Nations test with a frequency baseline",
          ),
      ),
    ),
  ).action(async (flags: EvaluateOptions, cmd: Command) => evaluateRun({ ...flags, argv, given: givenKeys(cmd) }, out));

  const submit = evaluateFlags(
    datasetOptions(
      program
        .command("submit")
        .description(
          "run an evaluation as shard jobs on a BullMQ queue (kgrank worker takes them), wait, merge and print it like evaluate",
        ),
    ),
  )
    .requiredOption("--redis <url>", "Redis of the queue, e.g. redis://:PASSWORD@host:6379 (rediss:// for TLS)")
    .requiredOption("--shards <n>", "number of shard jobs", intArg("--shards", 1, MAX_SHARDS))
    .option(
      "--entity-shards <m>",
      "from a model: split the entities too, M jobs per shard, each ranking against 1/M of the entity table (a grid of shards x M jobs)",
      intArg("--entity-shards", 1, MAX_SHARDS),
    )
    .requiredOption(
      "--state-dir <dir>",
      "the folder the workers write the shard states to (their --state-dir), seen by all at the same path",
    )
    .option("--queue <name>", "queue name", DEFAULT_QUEUE)
    .option("--attempts <n>", "attempts per shard job before the run fails", intArg("--attempts", 1, 100), 3)
    .option(
      "--keep-states",
      "keep the shard states after the merge (default: a merged run's states and jobs are deleted; a failed run's kept)",
    )
    .action(async (flags: SubmitOptions) => {
      await submitRun({ ...flags, args: argv }, out);
    });
  // Its help lists only what a queue job runs; the others are still parsed, to be refused with the reason.
  for (const o of submit.options) if (o.long && NOT_QUEUED_FLAGS.includes(o.long)) o.hideHelp();

  modelFlags(
    datasetOptions(
      program
        .command("predict")
        .description(
          "each query's k best candidate entities and their scores from a model's embeddings, filtered or raw, as .npz (or WikiKG90Mv2's t_pred_top10)",
        ),
    ),
  )
    .option("--top-k <k>", "candidates listed per query (default 10 with --format wikikg90mv2)", intArg("--top-k", 1))
    .option("--raw", "keep other known answers among the candidates (default: filtered by --filter's splits)")
    .option(
      "--sides <list>",
      "head,tail (default for triples) or one of them, each once; tail for --queries",
      (v: string) => predictSidesArg(v),
    )
    .option(
      "--triples <file>",
      "the triples to predict for as ids (rows x 3 integer .npy; default: the split's triples); each keeps its own answer",
    )
    .option(
      "--queries <file>",
      "predict for (anchor, relation) id pairs without an answer (rows x 2 integer .npy, e.g. WikiKG90Mv2's test hr); every known answer is filtered",
    )
    .option(
      "--entity-range <begin:end>",
      "candidates are the entities [BEGIN, END) only (an entity shard)",
      entityRangeArg,
    )
    .option(
      "--memory <size>",
      "leave the entity table on disk and read it in chunks, holding at most SIZE (e.g. 4GiB) for the lists, the known answers, the query rows and the table's chunks; a .npy or .safetensors table in the dataset's id order",
      sizeArg("--memory"),
    )
    .addOption(
      new Option(
        "--format <layout>",
        "npz: head_ids / head_scores / tail_ids / tail_scores; wikikg90mv2: t_pred_top10; tsv: a line per query and candidate, labels, scores and ids",
      )
        .choices(["npz", "wikikg90mv2", "tsv"])
        .default("npz"),
    )
    .requiredOption(
      "-o, --output <file>",
      "the .npz (or .tsv) to write, or with --format wikikg90mv2 an .npy (atomically: temporary name, then rename)",
    )
    .addOption(quietOption())
    .action(async (flags: PredictOptions) => predictRun(flags, out));

  program
    .command("combine")
    .description(
      "the top-k predictions of entity shards (kgrank predict --entity-range, .npz) merged into those of their whole range, exactly",
    )
    .argument("<files...>", "predict's .npz files of ranges that tile one range, in any order")
    .addOption(
      new Option("--format <layout>", "npz (as predict writes it) or wikikg90mv2 (t_pred_top10)")
        .choices(["npz", "wikikg90mv2"])
        .default("npz"),
    )
    .requiredOption(
      "-o, --output <file>",
      "the .npz to write, or with --format wikikg90mv2 an .npy (atomically: temporary name, then rename)",
    )
    .addOption(quietOption())
    .action((files: string[], flags: CombineOptions) => combineRun(files, flags, out));

  const grade = program
    .command("grade")
    .description(
      "OGB-LSC WikiKG90Mv2's MRR of a t_pred_top10 file (kgrank predict --format wikikg90mv2, or OGB's own): the true tail's reciprocal position in the top 10",
    )
    .argument("<file>", ".npz with t_pred_top10 (or .npy), int64, shape (n, 10)");
  // The dataset flags but --filter: the truth is the split's tails, nothing is filtered.
  for (const o of datasetOptions(new Command()).options) if (o.long !== "--filter") grade.addOption(o);
  grade
    .option(
      "--truth <file>",
      "the n true tail ids (integer .npy, e.g. WikiKG90Mv2's val_t.npy); default the split's tails",
    )
    .option("--triples <file>", "the triples whose tails are the truth (rows x 3 integer .npy), instead of the split's")
    .addOption(new Option("--format <format>", "output format").choices(["table", "json"]).default("table"))
    .addOption(outputOption())
    .addOption(quietOption())
    .action(async (file: string, flags: GradeOptions) => gradeRun(file, flags, out));

  program
    .command("compare")
    .description(
      "paired comparison of saved runs (kgrank evaluate --save-state, or --ranks-out .npz / .tsv) over the same tasks: differences, intervals, p-values",
    )
    .argument("<files...>", "two or more state or rank files; every later run is compared with the first")
    .option(
      "--metrics <list>",
      "metrics to compare (default: mrr, hits@1, hits@3, hits@10, mr, amri, median_rank)",
      metricsArg({ all: false, fullKeys: false }),
    )
    .option("--samples <n>", "randomization and bootstrap samples", intArg("--samples", 10, 1e7), 10000)
    .option("--seed <n>", "seed of both", intArg("--seed", 0, SEED_MAX), 0)
    .addOption(
      new Option("--correction <how>", "adjustment of the p-values over all rows")
        .choices(["holm", "bh", "none"])
        .default("holm"),
    )
    .addOption(formatOption())
    .addOption(outputOption())
    .addOption(quietOption())
    .action(async (files: string[], flags: CompareCliOptions) => compareCommand(files, flags, out));

  program
    .command("report")
    .description(
      "one self-contained HTML report (tables, plots, comparison) of saved runs (kgrank evaluate --save-state)",
    )
    .argument("<files...>", "one or more state files; with several, each is compared with the first")
    .option(
      "--bootstrap <n>",
      "bootstrap intervals of each run's metrics with N replicates",
      intArg("--bootstrap", 2, 1e6),
    )
    .option(
      "--samples <n>",
      "samples of the comparison's randomization test and bootstrap",
      intArg("--samples", 10, 1e7),
      2000,
    )
    .option("--seed <n>", "seed of the bootstrap and the comparison", intArg("--seed", 0, SEED_MAX), 0)
    .option(
      "--dataset <name>",
      "the runs' dataset, for the relation-category and degree breakdowns (default: the one recorded in each state)",
    )
    .option("--dataset-dir <dir>", "folder of that dataset (as for evaluate)")
    .addOption(outputOption())
    .addOption(quietOption())
    .action(async (files: string[], flags) => reportCommand(files, flags, out));

  program
    .command("plot")
    .description(
      "one plot of a saved run as SVG: ranks (rank distribution), hits (Hits@k curve), relations (MRR per relation), categories (MRR per relation category), degrees (MRR by entity degree)",
    )
    .argument("<name>", "ranks, hits, relations, categories or degrees")
    .argument("<file>", "state file (kgrank evaluate --save-state)")
    .option(
      "--dataset <name>",
      "the run's dataset, for categories and degrees (default: the one recorded in the state)",
    )
    .option("--dataset-dir <dir>", "folder of that dataset (as for evaluate)")
    .addOption(outputOption())
    .addOption(quietOption())
    .action(async (name: string, file: string, flags) => plotCommand(name, file, flags, out));

  program
    .command("worker")
    .description(
      "take shard jobs from a BullMQ queue (kgrank submit) and run them until SIGINT / SIGTERM (run node_modules/.bin/kgrank, not npx, under a process manager: npx does not pass SIGTERM on)",
    )
    .requiredOption("--redis <url>", "Redis of the queue, e.g. redis://:PASSWORD@host:6379 (rediss:// for TLS)")
    .requiredOption(
      "--state-dir <dir>",
      "the folder submit's --state-dir names (shared storage): shard states are written there and nowhere else",
    )
    .option(
      "--allow-read <dir>",
      "read the files jobs name only inside this folder, links resolved (repeat for more; default: any file)",
      collect,
    )
    .option("--queue <name>", "queue name", DEFAULT_QUEUE)
    .option("--concurrency <n>", "shard jobs run at once in this process", intArg("--concurrency", 1, 64), 1)
    .option(
      "--lock-ms <ms>",
      "a job whose worker stops renewing its lock for this long is retried elsewhere",
      intArg("--lock-ms", 500, 3_600_000),
      30_000,
    )
    .option(
      "--close-timeout <ms>",
      "on SIGTERM, wait at most this long for a running shard and the queue to close, then exit 143 (its job is retried elsewhere)",
      intArg("--close-timeout", 0, 3_600_000),
      DEFAULT_CLOSE_TIMEOUT_MS,
    )
    .addOption(quietOption())
    .action(async (flags: WorkerOptions & { quiet?: boolean; closeTimeout?: number }) => workerCommand(flags, out));

  program
    .command("merge")
    .description(
      "the results of a sharded evaluate run from its shards' --save-state files, exactly as the unsharded run prints them",
    )
    .argument("<files...>", "state files of every shard of one run, in any order")
    .option(
      "--metrics <list>",
      "comma list of metrics to report, as for evaluate, or all (default: those the shards were evaluated with)",
      metricsArg({ all: true, fullKeys: true }),
    )
    .option("--ranks-out <file>", "also write every task's ranks: .npz or .tsv (entities by id)")
    .addOption(formatOption())
    .addOption(outputOption())
    .addOption(quietOption())
    .action(async (files: string[], flags: MergeOptions) => mergeCommand(files, flags, out));

  program
    .command("metrics")
    .description("every metric from ranks computed elsewhere (.npy, .txt one per line, .json array)")
    .requiredOption("--ranks <file>", "realistic (or any) ranks, one per task")
    .option("--num-candidates <file>", "candidates per task (enables expectations and adjusted / z-scored metrics)")
    .option("--weights <file>", "positive weight per task")
    .option(
      "--metrics <list>",
      "comma list of metrics (default: all that apply)",
      metricsArg({ all: false, fullKeys: true }),
    )
    .addOption(ksOption())
    .addOption(formatOption())
    .addOption(outputOption())
    .addOption(quietOption())
    .action(async (flags) => metricsCommand(flags, out));

  program
    .command("estimate-full")
    .description(
      "full-ranking MRR and Hits@k from ranks among K sampled negatives (OGB protocol): the plain sampled value and Krichene & Rendle's corrections",
    )
    .requiredOption(
      "--ranks <file>",
      "each task's rank among its true entity and the K negatives, 1 to K + 1 (.npy, .txt, .json)",
    )
    .requiredOption("--negatives <k>", "K, the negatives drawn per task", intArg("--negatives", 1))
    .requiredOption(
      "--num-candidates <n>",
      "N, a task's full candidate count with the true one (the negatives come from the other N - 1)",
      intArg("--num-candidates", 2),
    )
    .option("--replacement", "the negatives were drawn with replacement (default: without)")
    .option("--estimators <list>", "comma list of sampled, minimum-mse, minimum-bias (default all three)", listArg)
    .option("--gamma <g>", "minimum-bias's variance weight in (0, 1] (default 0.01)", gammaArg)
    .addOption(ksOption())
    .option(
      "--bootstrap <n>",
      "95% percentile intervals over tasks with N replicates (2 to 1e6)",
      intArg("--bootstrap", 2, 1e6),
    )
    .option("--seed <n>", "seed of the bootstrap", intArg("--seed", 0, SEED_MAX), 0)
    .addOption(formatOption())
    .addOption(outputOption())
    .addOption(quietOption())
    .action((flags) => estimateFullCommand(flags, out));

  datasetOptions(
    program
      .command("adjust")
      .description("adjusted index and z-score of published numbers, from the dataset's filtered candidate counts"),
  )
    .option("--metric <name=value>", "a published value, e.g. mrr=0.35 (repeat for more)", collect, [])
    .addOption(
      new Option("--side <side>", "which tasks the number covers").choices(["both", "head", "tail"]).default("both"),
    )
    .addOption(formatOption())
    .addOption(outputOption())
    .addOption(quietOption())
    .action((flags) => adjustCommand(flags, out));

  datasetOptions(
    program
      .command("expectations")
      .description(
        "expected value and variance of every metric with a closed form, per side, filtered and unfiltered (--dataset all: every dataset found)",
      ),
  )
    .addOption(ksOption())
    .addOption(formatOption())
    .addOption(outputOption())
    .addOption(quietOption())
    .action((flags) => expectationsCommand(flags, out));

  program
    .command("info")
    .description("backend, SIMD level, threads, version")
    .addOption(new Option("--format <format>", "output format").choices(["table", "json"]).default("table"))
    .action((flags) => infoCommand(flags, out));

  program
    .command("build-native")
    .description(
      "build the native addon inside the installed package: where no prebuild fits (macOS, Windows, FreeBSD), " +
        "or from source with --from-source (a C++17 compiler, make and Python 3)",
    )
    .option("--from-source", "compile even where a prebuild fits, and load that build before the prebuild")
    .option("--verbose", "show the compiler's output as it comes (else only when the build fails)")
    .action((flags: { fromSource?: boolean; verbose?: boolean }) => buildNativeCommand(flags));
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
