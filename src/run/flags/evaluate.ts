/**
 * `kgrank evaluate`'s flags: those that define an evaluation (evaluationFlags; `kgrank submit` takes the same ones)
 * and those of one run (its shard, state, worker processes and ranks file). In the run layer so that `kgrank submit`
 * can read them (which flags name files, to make them absolute for workers elsewhere) and a queue worker can parse a
 * job's evaluate arguments with them (parseEvaluateArgs), neither through the CLI.
 */
import { Command, CommanderError } from "commander";

import { KgrankError } from "../../checks/errors";

import { estimatorsArg, negativesFromArg, sampleSizeArg, screenArg, sidesArg, stratifyArg } from "../datasets";
import type { EvaluateOptions } from "../evaluate/options";
import { formatOption, intArg, ksOption, metricsArg, outputOption, quietOption, usageLine } from "../flag-parsers";
import { entityShardArg, shardArg } from "../shard";
import { bootstrapOption, datasetOptions, memoryOption, modelFlags, seedOption } from "./shared";

/** The flags that define an evaluation (evaluate and submit share them). */
export function evaluationFlags(cmd: Command): Command {
  return modelFlags(
    cmd
      .option(
        "--scores-head <file>",
        "head scores (.npy/.npz/.safetensors, float): rows in split order, columns in entity id order",
      )
      .option(
        "--scores-tail <file>",
        "tail scores, same layout; with --negatives-*: the true triples' scores, one per row",
      )
      .option(
        "--scores-relation <file>",
        "relation scores (rows x relations, float): rows in split order, columns in relation id order; ranks (h, ?, t) as side relation",
      )
      .option(
        "--triples <file>",
        "the evaluated triples as ids (rows x 3 integer .npy) in the order of the score rows, e.g. PyKEEN's mapped_triples (default: the split's TSV order)",
      )
      .option("--negatives-head <file>", "sampled head negatives' scores (rows x K) for sampled ranking (OGB protocol)")
      .option("--negatives-tail <file>", "sampled tail negatives' scores (rows x K)")
      .option(
        "--positive-scores <file>",
        "dataset-free sampled ranking (OGB's y_pred_pos): one positive score per task, shape (n,); with --negative-scores",
      )
      .option(
        "--negative-scores <file>",
        "OGB's y_pred_neg: K negatives' scores per task, shape (n, K); no dataset or labels needed",
      ),
    (c) =>
      c
        .option(
          "--negatives-ids <file>",
          "OGB protocol from embeddings: rows x K entity ids (integer .npy), the candidates of each triple on every side",
        )
        .option(
          "--estimate-full [estimators]",
          "with --negatives-ids: also estimate the full-ranking MRR and Hits@k from the sampled ranks (sampled, minimum-mse, minimum-bias; default those within the work limits)",
          estimatorsArg,
        )
        .option(
          "--negatives-from <set>",
          "with --estimate-full: what the negatives were drawn from, all (every entity but the true one; default) or filtered (not a known answer; checked)",
          negativesFromArg,
        )
        .option("--replacement", "with --estimate-full: the negatives were drawn with replacement")
        .option(
          "--pbg-sampled",
          "a PyTorch-BigGraph checkpoint ranked by PBG's own sampled protocol (torchbiggraph_eval: batch and uniform negatives from its config, unfiltered, --seed for the draw) instead of exactly, to compare with PBG's numbers; its rank is the pessimistic one",
        ),
  )
    .addOption(memoryOption("the table's chunks, the query rows and the filter index"))
    .option(
      "--screen <mode>",
      "ranking from DistMult / ComplEx / TransE-L2 / RotatE-L2 embeddings: auto (default) screens candidates with certified int8 scores where the CPU has an int8 kernel that pays (AMX, AVX-512 VNNI, AVX-VNNI, NEON sdot) and rescores only those it cannot decide (giving up where that does not pay; under --memory, only where the int8 copy fits), off keeps the float32 path alone, int8 screens wherever it applies; ranks are identical in every mode (docs/screen.md)",
      screenArg,
    )
    .option(
      "--quantized <file>",
      "the entity table quantised for the screen, as kgrank quantize wrote it for this model: read (checked against the table) instead of quantised again; implies --screen auto unless --screen is given (auto uses it where the CPU's int8 kernel pays: not with AVX2 without VNNI, where --screen int8 uses it anyway)",
    )
    .option(
      "--verbose",
      "also print what the int8 screen did: pairs screened, pairs rescored exactly (stderr, and backend.screen in --format json)",
    )
    .option(
      "--metrics <list>",
      "comma list of metrics to report at every rank type (names or synonyms: mrr, hits@10, amri, ...), or all (default: MRR, Hits@1/3/10, MR, AMRI and z(MRR) from realistic ranks)",
      metricsArg({ all: true, fullKeys: true }),
    )
    .addOption(ksOption())
    .addOption(formatOption())
    .addOption(outputOption())
    .option(
      "--sides <list>",
      "sides to rank: head,tail (default), head or tail, and relation ((h, ?, t) among the relations, from --scores-relation, the model or the frequency baseline); with --scores-*, the sides whose files are given",
      sidesArg,
    )
    .option(
      "--sample-tasks <n>",
      "rank a seeded sample of N tasks (or a fraction, e.g. 0.05) against every entity and estimate the whole split's MR, MRR, Hits@k and adjusted forms with intervals",
      sampleSizeArg,
    )
    .option("--stratify <what>", "with --sample-tasks: relation, a sample stratified by relation", stratifyArg)
    .option(
      "--constrain-candidates <train|file>",
      "also rank each head / tail task against its relation's typed candidates, reported beside the unconstrained results: train (the entities seen as its heads / tails in train) or FILE (head/tail lists or entity types with domain/range, docs/formats.md)",
    )
    .option(
      "--quadruples <dir>",
      "evaluate a temporal KG instead: DIR holds train.txt, valid.txt, test.txt of head, relation, tail, timestamp lines (ICEWS14, ICEWS05-15, GDELT); raw, static and time-aware filtered results side by side",
    )
    .option("--by-relation", "also break the results down per relation")
    .addOption(bootstrapOption("bootstrap percentile intervals (95%) with N replicates (2 to 1e6)"))
    .addOption(seedOption("the bootstrap and of --sample-tasks"))
    .addOption(quietOption());
}

/** `kgrank evaluate`: its description and every flag. */
export function evaluateFlags(program: Command): Command {
  return evaluateRunFlags(
    evaluationFlags(
      datasetOptions(
        program
          .command("evaluate")
          .description(
            "rank the split's triples (both sides) and print MRR, Hits@1/3/10, MR, AMRI and z(MRR) with their random expectation (--metrics all: every metric and rank type); default: bundled Nations test with a frequency baseline",
          ),
      ),
    ),
  );
}

/** The flags of one evaluate run beside those that define it: its shard, state, worker processes and ranks file. */
function evaluateRunFlags(cmd: Command): Command {
  return cmd
    .option(
      "--shard <I/N>",
      "evaluate only shard I (0-based) of N, a fixed split of the triples; auto/N takes I from SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX (needs --save-state)",
      shardArg,
    )
    .option(
      "--entity-shard <I/N>",
      "from a model: rank every query against entity shard I of N only and save its partial counts (needs --save-state); kgrank merge adds the entity shards into exact ranks",
      entityShardArg,
    )
    .option(
      "--save-state <file>",
      "write the evaluator's state (SHA-256-checked) to FILE, which kgrank merge (shards), compare, report and plot read",
    )
    .option(
      "--workers <k>",
      "run the evaluation as K shard processes on this machine and merge them (same output)",
      intArg("--workers", 1, 256),
    )
    .option(
      "--ranks-out <file>",
      "also write every task's ranks, triple and candidate count: .npz (ids) or .tsv (labels)",
    );
}

/**
 * An evaluate argument list (as `kgrank evaluate` takes it, a leading "evaluate" allowed) parsed into the typed
 * options of evaluateRun, by the same option definitions as the CLI's evaluate command: how a queue worker reads a
 * shard job's arguments without the CLI. A bad flag value throws the KgrankInputError of its parser, a usage error
 * (unknown flag, missing value) a KgrankError with the line the CLI prints for it (usageLine): the same messages as
 * `kgrank evaluate`.
 */
export function parseEvaluateArgs(args: string[]): EvaluateOptions {
  const cmd = evaluateRunFlags(evaluationFlags(datasetOptions(new Command("evaluate"))))
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
  const argv = args[0] === "evaluate" ? args : ["evaluate", ...args];
  try {
    cmd.parse(argv.slice(1), { from: "user" });
  } catch (e) {
    if (e instanceof CommanderError) throw new KgrankError(usageLine(e.message));
    throw e;
  }
  return { ...cmd.opts<EvaluateOptions>(), argv, given: givenKeys(cmd) };
}

/**
 * Every flag of `kgrank evaluate` / `kgrank submit` that names a file or a folder (its value placeholder is <file>
 * or <dir>), read off the definitions above so that the list cannot drift from them.
 */
export function pathFlags(): string[] {
  const cmd = evaluationFlags(datasetOptions(new Command("evaluate")));
  return cmd.options.filter((o) => /<(?:[a-z]+\|)?(?:file|dir)>/.test(o.flags) && o.long).map((o) => o.long!);
}

/** The option keys (camelCase) set on the command line, not by a default. */
export function givenKeys(cmd: Command): string[] {
  return cmd.options.map((o) => o.attributeName()).filter((k) => cmd.getOptionValueSource(k) === "cli");
}
