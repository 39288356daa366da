/**
 * The queue commands' flags: `kgrank submit` (an evaluation's flags, as evaluate takes them, plus the queue's) and
 * `kgrank worker`. --redis and --queue are defined once for both.
 */
import { type Command, Option } from "commander";

import { collect, intArg, quietOption } from "../flag-parsers";
import { DEFAULT_CLOSE_TIMEOUT_MS, DEFAULT_QUEUE, NOT_QUEUED_FLAGS } from "../queue";
import { MAX_SHARDS } from "../shard";
import { evaluationFlags } from "./evaluate";
import { datasetOptions } from "./shared";

const redisOption = () =>
  new Option(
    "--redis <url>",
    "Redis of the queue, e.g. redis://:PASSWORD@host:6379 (rediss:// for TLS)",
  ).makeOptionMandatory();
const queueOption = () => new Option("--queue <name>", "queue name").default(DEFAULT_QUEUE);

/** `kgrank submit`: its help lists only what a queue job runs; the other evaluate flags are parsed, to be refused. */
export function submitFlags(program: Command): Command {
  const submit = evaluationFlags(
    datasetOptions(
      program
        .command("submit")
        .description(
          "run an evaluation as shard jobs on a BullMQ queue (kgrank worker takes them), wait, merge and print it like evaluate",
        ),
    ),
  )
    .addOption(redisOption())
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
    .addOption(queueOption())
    .option("--attempts <n>", "attempts per shard job before the run fails", intArg("--attempts", 1, 100), 3)
    .option(
      "--keep-states",
      "keep the shard states after the merge (default: a merged run's states and jobs are deleted; a failed run's kept)",
    );
  for (const o of submit.options) if (o.long && NOT_QUEUED_FLAGS.includes(o.long)) o.hideHelp();
  return submit;
}

/** `kgrank worker`. */
export function workerFlags(program: Command): Command {
  return program
    .command("worker")
    .description(
      "take shard jobs from a BullMQ queue (kgrank submit) and run them until SIGINT / SIGTERM (run node_modules/.bin/kgrank, not npx, under a process manager: npx does not pass SIGTERM on)",
    )
    .addOption(redisOption())
    .requiredOption(
      "--state-dir <dir>",
      "the folder submit's --state-dir names (shared storage): shard states are written there and nowhere else",
    )
    .option(
      "--allow-read <dir>",
      "read the files jobs name only inside this folder, links resolved (repeat for more; default: any file)",
      collect,
    )
    .addOption(queueOption())
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
    .addOption(quietOption());
}
