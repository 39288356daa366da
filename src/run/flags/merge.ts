/** `kgrank merge`'s flags. */
import type { Command } from "commander";

import { formatOption, metricsArg, outputOption, quietOption } from "../flag-parsers";

export function mergeFlags(program: Command): Command {
  return program
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
    .addOption(quietOption());
}
