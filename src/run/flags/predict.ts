/** The flags of `kgrank predict` and of the commands that read its output: `kgrank combine` and `kgrank grade`. */
import { Command, Option } from "commander";

import { screenArg } from "../datasets";
import { intArg, outputOption, quietOption } from "../flag-parsers";
import { entityRangeArg, predictSidesArg } from "../predict-run";
import { datasetOptions, memoryOption, modelFlags } from "./shared";

/** `kgrank predict`. */
export function predictFlags(program: Command): Command {
  return modelFlags(
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
    .addOption(memoryOption("the lists, the known answers, the query rows and the table's chunks"))
    .option(
      "--screen <mode>",
      "DistMult / ComplEx / TransE-L2 / RotatE-L2 embeddings: auto (default) screens candidates with certified int8 scores where the CPU has an int8 kernel that pays (under --memory, where the int8 copy fits), off keeps the float32 path alone, int8 screens wherever it applies; the lists are identical in every mode (docs/screen.md)",
      screenArg,
    )
    .option(
      "--quantized <file>",
      "the entity table quantised for the screen, as kgrank quantize wrote it for this model: read (checked against the table) instead of quantised again; implies --screen auto unless --screen is given (auto uses it where the CPU's int8 kernel pays: not with AVX2 without VNNI, where --screen int8 uses it anyway)",
    )
    .option("--verbose", "also print what the int8 screen did: pairs screened, pairs rescored exactly (stderr)")
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
    .addOption(quietOption());
}

/** `kgrank combine`. */
export function combineFlags(program: Command): Command {
  return program
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
    .addOption(quietOption());
}

/** `kgrank grade`: the dataset flags but --filter (the truth is the split's tails, nothing is filtered). */
export function gradeFlags(program: Command): Command {
  const grade = program
    .command("grade")
    .description(
      "OGB-LSC WikiKG90Mv2's MRR of a t_pred_top10 file (kgrank predict --format wikikg90mv2, or OGB's own): the true tail's reciprocal position in the top 10",
    )
    .argument("<file>", ".npz with t_pred_top10 (or .npy), int64, shape (n, 10)");
  for (const o of datasetOptions(new Command()).options) if (o.long !== "--filter") grade.addOption(o);
  return grade
    .option(
      "--truth <file>",
      "the n true tail ids (integer .npy, e.g. WikiKG90Mv2's val_t.npy); default the split's tails",
    )
    .option("--triples <file>", "the triples whose tails are the truth (rows x 3 integer .npy), instead of the split's")
    .addOption(new Option("--format <format>", "output format").choices(["table", "json"]).default("table"))
    .addOption(outputOption())
    .addOption(quietOption());
}

/** `kgrank quantize`. */
export function quantizeFlags(program: Command): Command {
  return modelFlags(
    datasetOptions(
      program
        .command("quantize")
        .description(
          "write a model's entity table quantised for the int8 screen (DistMult, ComplEx, TransE-L2, RotatE-L2), for evaluate and predict --quantized",
        ),
    ),
  )
    .requiredOption("-o, --output <file>", "the table to write (atomically; about half the float32 table)")
    .addOption(quietOption());
}
