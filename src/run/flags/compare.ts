/** `kgrank compare`'s flags. */
import { type Command, Option } from "commander";

import { formatOption, intArg, metricsArg, outputOption, quietOption } from "../flag-parsers";
import { seedOption } from "./shared";

/** --samples N of the randomization test and the bootstrap (compare's, and report's comparison). */
export function samplesOption(help: string, defaultValue: number): Option {
  return new Option("--samples <n>", help).argParser(intArg("--samples", 10, 1e7)).default(defaultValue);
}

export function compareFlags(program: Command): Command {
  return program
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
    .addOption(samplesOption("randomization and bootstrap samples", 10000))
    .addOption(seedOption("both"))
    .addOption(
      new Option("--correction <how>", "adjustment of the p-values over all rows")
        .choices(["holm", "bh", "none"])
        .default("holm"),
    )
    .addOption(formatOption())
    .addOption(outputOption())
    .addOption(quietOption());
}
