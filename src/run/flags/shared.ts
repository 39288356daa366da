/**
 * Option definitions that more than one command takes, each defined once: the dataset flags, the model flags,
 * --memory, --seed and --bootstrap. Where a flag holds or seeds something else per
 * command, its definition takes that part of the help text (what --memory's budget holds, what --seed seeds), so
 * the name, the parser, the range and the rest of the text cannot drift apart. The options every output command
 * takes (--format, --output, --quiet, --ks) are in ../flag-parsers.ts.
 */
import { type Command, Option } from "commander";

import { intArg, listArg, SEED_MAX, sizeArg, splitArg } from "../flag-parsers";

export function datasetOptions(cmd: Command, splitDefault = "test"): Command {
  return cmd
    .option(
      "--dataset <name>",
      "nations, kinships, umls (bundled); fb15k-237, wn18rr, codex-s, codex-m (from --dataset-dir)",
    )
    .option(
      "--dataset-dir <dir>",
      "folder with NAME/{train,valid,test}.tsv, or one dataset's own folder (default: $KGRANK_DATASETS or ./datasets)",
    )
    .addOption(new Option("--split <split>", "split to evaluate").argParser(splitArg).default(splitDefault))
    .option(
      "--filter <splits>",
      "comma list of splits whose triples are filtered out of the candidates, or none",
      listArg,
      ["train", "valid", "test"],
    );
}

/**
 * The flags that give a model by its embeddings (evaluate, submit and predict share them); `between` adds a
 * command's own flags after --relation-ids, where evaluate lists --negatives-ids.
 */
export function modelFlags(cmd: Command, between: (c: Command) => Command = (c) => c): Command {
  return between(
    cmd
      .option(
        "--model-dir <dir>",
        "rank from a trained model's embeddings: a directory with config.json (OGB KnowledgeGraphEmbedding or DGL-KE layout; evaluate: or a PyTorch-BigGraph checkpoint)",
      )
      .option(
        "--interaction <name>",
        "score from embeddings with this interaction: transe-l1, transe-l2, distmult, complex, rotate (OGB's), rotate-l2 (PyKEEN's RotatE), pairre",
      )
      .option("--entity-embeddings <file>", "entity embeddings (.npy/.npz/.safetensors, rows x dim, float32/float64)")
      .option(
        "--relation-embeddings <file>",
        "relation embeddings (rows x dim; RotatE phases: dim / 2; PairRE: 2 x dim)",
      )
      .option(
        "--entity-ids <file>",
        'the label of each entity embedding row ("label" or "id<TAB>label" per line), when rows are not in the dataset\'s id order',
      )
      .option("--relation-ids <file>", "the label of each relation embedding row"),
  )
    .option(
      "--complex-layout <layout>",
      "how complex vectors are stored: halves (re | im) or interleaved (re, im, ...); required for complex / rotate / rotate-l2 without a config",
    )
    .option("--precision <p>", "accumulation when scoring from embeddings: float32 (default) or float64");
}

/**
 * --memory SIZE, for a command that reads a model's entity table: what the budget holds beside the table's chunks
 * differs per command (`holds`, in the order the command fills it).
 */
export function memoryOption(holds: string): Option {
  return new Option(
    "--memory <size>",
    `leave the entity table on disk and read it in chunks, holding at most SIZE (e.g. 4GiB) for ${holds}; a .npy or .safetensors table in the dataset's id order`,
  ).argParser(sizeArg("--memory"));
}

/** --seed N (default 0): `of` says what it seeds. */
export function seedOption(of: string): Option {
  return new Option("--seed <n>", `seed of ${of}`).argParser(intArg("--seed", 0, SEED_MAX)).default(0);
}

/** --bootstrap N, 2 to 1e6 replicates: `help` says of what, and how the intervals are reported. */
export function bootstrapOption(help: string): Option {
  return new Option("--bootstrap <n>", help).argParser(intArg("--bootstrap", 2, 1e6));
}
