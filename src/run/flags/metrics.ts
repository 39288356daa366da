/**
 * The flags of the commands that compute from numbers given rather than from scores: `kgrank metrics` (ranks),
 * `kgrank estimate-full` (sampled ranks), `kgrank adjust` (published values) and `kgrank expectations`.
 */
import { type Command, Option } from "commander";

import { KgrankInputError } from "../../checks/errors";
import {
  collect,
  formatOption,
  intArg,
  ksOption,
  listArg,
  metricsArg,
  outputOption,
  quietOption,
} from "../flag-parsers";
import { bootstrapOption, datasetOptions, seedOption } from "./shared";

/** --gamma of estimate-full: a number in (0, 1]. */
function gammaArg(v: string): number {
  const g = /^\s*(\d+(\.\d*)?|\.\d+)(e-?\d+)?\s*$/i.test(v) ? Number(v) : NaN;
  if (!(g > 0 && g <= 1)) throw new KgrankInputError("--gamma", `must be a number in (0, 1] such as 0.01, got "${v}"`);
  return g;
}

export function metricsFlags(program: Command): Command {
  return program
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
    .addOption(quietOption());
}

export function estimateFullFlags(program: Command): Command {
  return program
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
    .addOption(bootstrapOption("95% percentile intervals over tasks with N replicates (2 to 1e6)"))
    .addOption(seedOption("the bootstrap"))
    .addOption(formatOption())
    .addOption(outputOption())
    .addOption(quietOption());
}

export function adjustFlags(program: Command): Command {
  return datasetOptions(
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
    .addOption(quietOption());
}

export function expectationsFlags(program: Command): Command {
  return datasetOptions(
    program
      .command("expectations")
      .description(
        "expected value and variance of every metric with a closed form, per side, filtered and unfiltered (--dataset all: every dataset found)",
      ),
  )
    .addOption(ksOption())
    .addOption(formatOption())
    .addOption(outputOption())
    .addOption(quietOption());
}
