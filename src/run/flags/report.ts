/** The flags of the commands that draw saved runs: `kgrank report` (HTML) and `kgrank plot` (one SVG). */
import { type Command, Option } from "commander";

import { outputOption, quietOption } from "../flag-parsers";
import { samplesOption } from "./compare";
import { bootstrapOption, seedOption } from "./shared";

/** --dataset-dir of a saved run's dataset (report and plot). */
const datasetDirOption = () => new Option("--dataset-dir <dir>", "folder of that dataset (as for evaluate)");

export function reportFlags(program: Command): Command {
  return program
    .command("report")
    .description(
      "one self-contained HTML report (tables, plots, comparison) of saved runs (kgrank evaluate --save-state)",
    )
    .argument("<files...>", "one or more state files; with several, each is compared with the first")
    .addOption(bootstrapOption("bootstrap intervals of each run's metrics with N replicates"))
    .addOption(samplesOption("samples of the comparison's randomization test and bootstrap", 2000))
    .addOption(seedOption("the bootstrap and the comparison"))
    .option(
      "--dataset <name>",
      "the runs' dataset, for the relation-category and degree breakdowns (default: the one recorded in each state)",
    )
    .addOption(datasetDirOption())
    .addOption(outputOption())
    .addOption(quietOption());
}

export function plotFlags(program: Command): Command {
  return program
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
    .addOption(datasetDirOption())
    .addOption(outputOption())
    .addOption(quietOption());
}
