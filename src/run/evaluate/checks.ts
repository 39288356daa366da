/**
 * What `kgrank evaluate`'s flags do not go with, checked before anything is read: the relation side, a sample of
 * tasks, --estimate-full, --constrain-candidates and the score sources (files or a model).
 */
import { KgrankInputError } from "../../checks/errors";
import { INTERACTIONS, type InteractionName } from "../../scoring/embedding-model";
import { quoted } from "../../text/suggest";
import { SIDES } from "../datasets";
import { entitySides, type EvaluateOptions, relationSide } from "./options";

/**
 * What --constrain-candidates does not go with: the constrained ranks come from whole score rows (score files or
 * the frequency baseline) or a model's embeddings held in memory, ranked in this process; a sample, sampled
 * negatives, a table read in chunks (--memory), an entity shard and --workers' merge of one state per process have
 * no room for a second protocol.
 */
export function checkConstrainCandidates(opts: EvaluateOptions): void {
  if (opts.constrainCandidates === undefined) return;
  const model = Boolean(opts.modelDir || opts.interaction || opts.entityEmbeddings);
  for (const [given, flag, why] of [
    [
      model && opts.memory !== undefined,
      "--memory",
      "a model's typed candidates are gathered per relation from its entity table in memory; drop --memory",
    ],
    [
      opts.negativesHead ?? opts.negativesTail ?? opts.negativesIds,
      opts.negativesHead ? "--negatives-head" : opts.negativesTail ? "--negatives-tail" : "--negatives-ids",
      "sampled negatives are a candidate set of their own",
    ],
    [opts.sampleTasks !== undefined, "--sample-tasks", "the sample's estimates are of the unconstrained protocol"],
    [opts.entityShard, "--entity-shard", "an entity shard ranks a model against a slice of the entities"],
    [
      opts.workers !== undefined && opts.workers > 1,
      "--workers",
      "the workers' states hold one protocol each; shard with --shard and merge each protocol's states",
    ],
    [opts.positiveScores ?? opts.negativeScores, "--positive-scores", "dataset-free sampled ranking has no relations"],
  ] as const) {
    if (given) throw new KgrankInputError("--constrain-candidates", `does not go with ${flag}: ${why}`);
  }
  const fromFiles = Boolean(opts.scoresHead || opts.scoresTail || opts.scoresRelation);
  const entity = fromFiles ? Boolean(opts.scoresHead || opts.scoresTail) : entitySides(opts).length > 0;
  if (!entity) {
    throw new KgrankInputError(
      "--constrain-candidates",
      "constrains head and tail tasks, and this run ranks none: add head or tail to --sides (or their score files)",
    );
  }
}

/** --estimate-full and the flags that say how its negatives were drawn: with --negatives-ids, in one process. */
export function checkEstimateFull(opts: EvaluateOptions): void {
  if (!opts.estimateFull) {
    for (const [given, flag] of [
      [opts.negativesFrom, "--negatives-from"],
      [opts.replacement, "--replacement"],
    ] as const) {
      if (given)
        throw new KgrankInputError(
          flag,
          "says how the negatives of --estimate-full were drawn: give that too, or drop it",
        );
    }
    return;
  }
  if (!opts.negativesIds) {
    throw new KgrankInputError(
      "--estimate-full",
      "needs --negatives-ids (the negatives' ids are what its assumptions are checked against); for sampled ranks " +
        "from elsewhere use kgrank estimate-full --ranks FILE",
    );
  }
  for (const [given, flag, why] of [
    [
      opts.workers !== undefined && opts.workers > 1,
      "--workers",
      "the estimates need every task's rank in one process",
    ],
    [opts.shard, "--shard", "the estimates need every task's rank in one process"],
    [opts.saveState, "--save-state", "a state does not record how the negatives were drawn"],
    [opts.triples, "--triples", "its rows are not the split's, whose known answers the negatives are checked against"],
  ] as const) {
    if (given) throw new KgrankInputError("--estimate-full", `does not go with ${flag}: ${why}`);
  }
}

/**
 * What the relation side does not go with: relation ranks come from --scores-relation, the frequency baseline's
 * relation scores or a model's (EmbeddingModel.scoreRelations, the table in memory), over the rows this process
 * evaluates (whole, a --shard, or --workers' shards); nothing here samples relation tasks or shards relations.
 */
export function checkRelationSide(opts: EvaluateOptions): void {
  if (!relationSide(opts)) return;

  const alone = opts.sides
    ? opts.sides.length === 1
    : Boolean(opts.scoresRelation) && !opts.scoresHead && !opts.scoresTail;
  const flag = opts.scoresRelation && !opts.sides?.includes("relation") ? "--scores-relation" : "--sides";
  for (const [given, other, why] of [
    [opts.negativesIds, "--negatives-ids", "given negatives are entities: rank relations in a run of their own"],
    [
      opts.memory,
      "--memory",
      "relation scores from embeddings need the entity table in memory: rank relations in a run of their own",
    ],
    [
      opts.entityShard,
      "--entity-shard",
      "a relation's score needs whole entity rows, not a slice of the table: rank relations in a run of their own",
    ],
    [
      opts.scoresRelation ? undefined : (opts.scoresHead ?? opts.scoresTail),
      opts.scoresHead ? "--scores-head" : "--scores-tail",
      "score files hold entity scores only: give the relation scores too (--scores-relation FILE, rows x relations), or leave relation out of --sides",
    ],
    [
      opts.negativesHead ?? opts.negativesTail,
      opts.negativesHead ? "--negatives-head" : "--negatives-tail",
      "sampled negatives are entities: rank relations in a run of their own",
    ],
    [
      opts.sampleTasks,
      "--sample-tasks",
      "a sample is drawn from head and tail tasks: rank relations in a run without --sample-tasks",
    ],
    [
      opts.byRelation && alone,
      "--by-relation",
      "its breakdown is of head and tail tasks, and relation tasks alone have none: add head and tail, or drop --by-relation",
    ],
  ] as const) {
    if (given !== undefined && given !== false)
      throw new KgrankInputError(flag, `${flag === "--sides" ? "relation " : ""}does not go with ${other}: ${why}`);
  }
}

/** What --sample-tasks does not go with: the sample is drawn, ranked and estimated in one process. */
export function checkSampleTasks(opts: EvaluateOptions): void {
  for (const [given, flag, why] of [
    [opts.workers !== undefined && opts.workers > 1, "--workers", "a sample is ranked in one process"],
    [opts.shard, "--shard", "a sample is ranked in one process"],
    [opts.entityShard, "--entity-shard", "a sample is ranked in one process"],
    [
      opts.saveState,
      "--save-state",
      "a state does not record the sample's design, so merged states could not be estimated",
    ],
    [opts.negativesIds, "--negatives-ids", "sampled tasks are ranked against every entity"],
    [
      opts.bootstrap,
      "--bootstrap",
      "the estimates carry their own intervals (a bootstrap of the sample would not see the rest of the split)",
    ],
    [
      opts.scoresHead ?? opts.scoresTail,
      opts.scoresHead ? "--scores-head" : "--scores-tail",
      "score files already hold every task's scores: evaluate them whole",
    ],
  ] as const) {
    if (given) throw new KgrankInputError("--sample-tasks", `does not go with ${flag}: ${why}`);
  }
}

/** Interactions of complex vectors, whose layout is never guessed. */
const COMPLEX: readonly InteractionName[] = ["complex", "rotate", "rotate-l2"];

/** Refuses score-source flags that do not go together; says whether the scores come from a model or from files. */
export function checkScoreSources(opts: EvaluateOptions): "model" | "files" {
  const given = { head: opts.scoresHead, tail: opts.scoresTail };
  const negatives = { head: opts.negativesHead, tail: opts.negativesTail };
  for (const side of SIDES) {
    if (negatives[side] && !given[side]) {
      throw new KgrankInputError(
        `--negatives-${side}`,
        `needs --scores-${side} with the true triples' scores (one per row of the ${opts.split} split)`,
      );
    }
  }
  const fromModel = Boolean(opts.modelDir || opts.interaction || opts.entityEmbeddings);
  if (fromModel && (given.head || given.tail)) {
    throw new KgrankInputError(
      "--scores-head",
      "scores files and a model's embeddings do not mix: give one or the other",
    );
  }
  if (opts.negativesIds && !fromModel) {
    throw new KgrankInputError(
      "--negatives-ids",
      "needs a model (--model-dir or --interaction with the embedding files); for negatives' scores use --negatives-head / --negatives-tail",
    );
  }
  if (opts.complexLayout !== undefined && opts.complexLayout !== "halves" && opts.complexLayout !== "interleaved") {
    throw new KgrankInputError("--complex-layout", `must be halves or interleaved, got ${opts.complexLayout}`);
  }
  if (opts.precision !== undefined && opts.precision !== "float32" && opts.precision !== "float64") {
    throw new KgrankInputError("--precision", `must be float32 or float64, got ${opts.precision}`);
  }
  if (fromModel && !opts.modelDir) {
    const interaction = opts.interaction as InteractionName | undefined;
    if (interaction === undefined || !INTERACTIONS.includes(interaction)) {
      throw new KgrankInputError(
        "--interaction",
        `${interaction === undefined ? "is required with the embedding files" : `${quoted(interaction)} is not known`}: ` +
          `one of ${INTERACTIONS.join(", ")} (or give --model-dir DIR, a directory with config.json)`,
      );
    }
    if (COMPLEX.includes(interaction) && opts.complexLayout === undefined) {
      throw new KgrankInputError(
        "--complex-layout",
        `is required with --interaction ${interaction}: halves (real parts then imaginary parts, as OGB's ` +
          "KnowledgeGraphEmbedding code stores them) or interleaved (re, im pairs, as torch.view_as_real)",
      );
    }
  }
  return fromModel ? "model" : "files";
}
