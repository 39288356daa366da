/**
 * Checks of the evaluator's inputs: id arrays, triples, sides. Each throws a KgrankInputError naming the argument
 * and what is accepted; each returns the value in the form the kernels take.
 */
import { KgrankInputError } from "../checks/errors";
import type { FloatArray } from "../contract/kernels";
import { DEFAULT_KS, metricSelection } from "../metrics/index";
import { CandidateSets } from "../ranking/candidate-sets";
import { cutoffs, describe, integer, isArrayLike, threadCount, tripleArray, type Unchecked } from "../checks/validate";
import { type BatchContext, idSet } from "./selection";
import { TaskBuffer, type TaskColumns } from "./task-buffer";
import type {
  EvaluationSide,
  RankEvaluatorOptions,
  RanksBatch,
  SampledBatch,
  TaskSide,
  TemporalProtocol,
  Weighting,
} from "./types";

/** The entity side of a score, sampled or chunked batch; "relation" is named with the call that takes it. */
export function sideArg(value: unknown, allowed: EvaluationSide[]): EvaluationSide {
  if (value === "relation") {
    throw new KgrankInputError(
      "side",
      '"relation" ranks relations, not entities: give rows x numRelations scores to addRelationScores({ triples, scores }), or ranks to addRanks({ side: "relation" })',
    );
  }
  if (value !== "head" && value !== "tail") {
    throw new KgrankInputError("side", `must be "head" or "tail", got ${describe(value)}`);
  }
  if (!allowed.includes(value)) {
    throw new KgrankInputError(
      "side",
      `"${value}" is not evaluated by this RankEvaluator (sides: ${allowed.join(", ")})`,
    );
  }
  return value;
}

/**
 * The task columns of an addRanks() batch: ranks (integers or halves in [1, N_i]; a rank type not given is NaN),
 * candidate counts, weights (NaN when not given); the triples' relation, anchor and answer when `triples` are given,
 * else the relations (if given) with anchor and answer unknown (-1).
 */
export function rankedTasks(
  batch: Unchecked<RanksBatch>,
  side: TaskSide,
  numEntities: number,
  numRelations: number | null,
): TaskColumns {
  // A relation task ranks its relation among the relations; an entity task its entity among the entities.
  const bound = side === "relation" ? numRelations! : numEntities;
  const among = side === "relation" ? `numRelations = ${bound}` : `numEntities = ${bound}`;
  const nc = batch.numCandidates as ArrayLike<unknown>;
  if (!isArrayLike(nc)) {
    throw new KgrankInputError("numCandidates", `must be an array of numbers, got ${describe(nc)}`);
  }
  const n = nc.length;
  if (n === 0) throw new KgrankInputError("numCandidates", "is empty: pass at least one task");
  const numCandidates = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const v = nc[i];
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > bound) {
      throw new KgrankInputError(
        "numCandidates",
        `numCandidates[${i}] = ${describe(v)} is not an integer in [1, ${among}] (a task ranks its answer among the graph's ${side === "relation" ? "relations" : "entities"})`,
      );
    }
    numCandidates[i] = v;
  }
  const given = (["optimistic", "pessimistic", "realistic"] as const).filter((k) => batch[k] !== undefined);
  if (given.length === 0) {
    throw new KgrankInputError("ranks", "give at least one of optimistic, pessimistic, realistic (arrays of ranks)");
  }
  const cols: Record<"optimistic" | "pessimistic" | "realistic", Float64Array> = {
    optimistic: new Float64Array(n).fill(NaN),
    pessimistic: new Float64Array(n).fill(NaN),
    realistic: new Float64Array(n).fill(NaN),
  };
  for (const k of given) {
    const arr = batch[k] as ArrayLike<unknown>;
    if (!isArrayLike(arr) || arr.length !== n) {
      throw new KgrankInputError(k, `must be an array with one rank per task (${n}), got ${describe(arr)}`);
    }
    for (let i = 0; i < n; i++) {
      const v = arr[i];
      const twice = typeof v === "number" ? 2 * v : NaN;
      if (typeof v !== "number" || !Number.isInteger(twice) || v < 1 || v > numCandidates[i]!) {
        throw new KgrankInputError(
          k,
          `${k}[${i}] = ${describe(v)} is not a rank in [1, numCandidates[${i}] = ${numCandidates[i]}] (integers or halves)`,
        );
      }
      cols[k][i] = v;
    }
  }
  for (let i = 0; i < n; i++) {
    const lo = cols.optimistic[i]!,
      mid = cols.realistic[i]!,
      hi = cols.pessimistic[i]!;
    if (lo > hi || lo > mid || mid > hi) {
      throw new KgrankInputError(
        "ranks",
        `task ${i}: optimistic ${lo}, realistic ${mid}, pessimistic ${hi} are out of order (optimistic <= realistic <= pessimistic)`,
      );
    }
  }
  const weight = new Float64Array(n).fill(NaN);
  if (batch.weights !== undefined) {
    const w = batch.weights as ArrayLike<unknown>;
    if (!isArrayLike(w) || w.length !== n) {
      throw new KgrankInputError("weights", `must be an array with one weight per task (${n}), got ${describe(w)}`);
    }
    for (let i = 0; i < n; i++) {
      const v = w[i];
      if (typeof v !== "number" || !(v >= 0) || !Number.isFinite(v)) {
        throw new KgrankInputError(
          "weights",
          `weights[${i}] = ${describe(v)} is not a finite number >= 0 (0: the task counts for nothing)`,
        );
      }
      weight[i] = v;
    }
  }
  if (batch.triples !== undefined) {
    if (batch.relations !== undefined)
      throw new KgrankInputError("relations", "give relations or triples, not both (the triples hold the relations)");
    return { ...cols, numCandidates, weight, ...sampledKeys(batch, side, n, numEntities, numRelations, "task") };
  }
  const relation = new Int32Array(n).fill(-1);
  if (batch.relations !== undefined) {
    const r = idSet("relations", batch.relations, numRelations);
    if (r.length !== n)
      throw new KgrankInputError("relations", `must have one relation per task (${n}), got ${r.length}`);
    relation.set(r);
  }
  const minusOne = new Int32Array(n).fill(-1);
  return { ...cols, numCandidates, weight, relation, anchor: minusOne, truth: minusOne };
}

/** Keys of sampled tasks: from the batch's optional triples, else unknown (-1). */
function sampledKeys(
  batch: Unchecked<SampledBatch | RanksBatch>,
  side: TaskSide,
  n: number,
  numEntities: number,
  numRelations: number | null,
  per = "positive",
) {
  const relation = new Int32Array(n).fill(-1);
  const anchor = new Int32Array(n).fill(-1);
  const truth = new Int32Array(n).fill(-1);
  if (batch.triples !== undefined) {
    const t = tripleArray("triples", batch.triples, numEntities, numRelations);
    if (t.length !== 3 * n)
      throw new KgrankInputError("triples", `must have ${n} rows (one per ${per}), got ${t.length / 3}`);
    for (let i = 0; i < n; i++) {
      relation[i] = t[3 * i + 1]!;
      // A relation task's columns: anchor the head, truth the tail (its answer is the relation).
      anchor[i] = side === "head" ? t[3 * i + 2]! : t[3 * i]!;
      truth[i] = side === "head" ? t[3 * i]! : t[3 * i + 2]!;
    }
  }
  return { relation, anchor, truth };
}

/** computeSampledRanks options from a sampled batch. */
export function sampledArgs(batch: Unchecked<SampledBatch>, threads: number | undefined) {
  return {
    positiveScores: batch.positiveScores as ArrayLike<number>,
    negativeScores: batch.negativeScores as FloatArray,
    threads: (batch.threads as number | undefined) ?? threads,
  };
}

/**
 * The task columns of sampled ranks: keys from the batch's triples (or unknown), no weight. Under restriction the
 * triples are required, and `keep` marks the rows whose relation and entities are kept (the others are skipped,
 * as in score batches; the negatives are whatever the caller scored).
 */
export function sampledTasks(
  batch: Unchecked<SampledBatch>,
  side: EvaluationSide,
  ranks: Omit<TaskColumns, "relation" | "anchor" | "truth" | "weight">,
  { numEntities, numRelations, selection }: Pick<BatchContext, "numEntities" | "numRelations" | "selection">,
): [columns: TaskColumns, skipped: number] {
  const n = ranks.optimistic.length;
  for (let i = 0; i < n; i++) {
    if (ranks.numCandidates[i]! > numEntities) {
      throw new KgrankInputError(
        "negativeScores",
        `row ${i} has ${ranks.numCandidates[i]! - 1} negatives besides the positive, more than numEntities = ${numEntities} ` +
          "allows: sampled negatives are other entities of the graph (drop duplicates or raise numEntities)",
      );
    }
  }
  if (selection.restricted && batch.triples === undefined) {
    throw new KgrankInputError(
      "triples",
      "are required under restrictRelations / restrictEntities: they say which tasks fall outside",
    );
  }
  const columns = {
    ...ranks,
    ...sampledKeys(batch, side, n, numEntities, numRelations),
    weight: new Float64Array(n).fill(NaN),
  };
  const keep = selection.keepMask(batch.triples as Int32Array);
  if (!keep) return [columns, 0];
  const kept = new TaskBuffer();
  kept.append(columns, keep);
  return [kept.columns(), n - kept.length];
}

const TASK_SIDES: readonly TaskSide[] = ["head", "tail", "relation"];

/** `sides` as a list in the order head, tail, relation: "both" (default), one entity side, or a list of sides. */
function sidesOption(value: unknown): TaskSide[] {
  const side = value ?? "both";
  if (side === "both") return ["head", "tail"];
  if (side === "head" || side === "tail") return [side];
  if (
    Array.isArray(side) &&
    side.length > 0 &&
    side.every((s, i) => TASK_SIDES.includes(s as TaskSide) && side.indexOf(s) === i)
  ) {
    return TASK_SIDES.filter((s) => side.includes(s));
  }
  throw new KgrankInputError(
    "sides",
    `must be "both", "head", "tail" or a list of distinct sides among "head", "tail", "relation" (e.g. ["head", "tail", "relation"]), got ${describe(side)}`,
  );
}

/** The evaluator's settings from its options: each checked, with a typed error naming the option. */
export function evaluatorSettings(options: Unchecked<RankEvaluatorOptions>) {
  const numEntities = integer("numEntities", options.numEntities, 1, 2 ** 31 - 1);
  const filterList =
    options.filterTriples === undefined
      ? []
      : Array.isArray(options.filterTriples)
        ? options.filterTriples
        : [options.filterTriples];
  let numRelations: number | null =
    options.numRelations === undefined ? null : integer("numRelations", options.numRelations, 1, 2 ** 31 - 1);
  const checked = filterList.map((t, i) => tripleArray(`filterTriples[${i}]`, t, numEntities, numRelations));
  if (numRelations === null && checked.length > 0) {
    let max = -1;
    for (const t of checked) for (let i = 1; i < t.length; i += 3) if (t[i]! > max) max = t[i]!;
    numRelations = max + 1;
  }
  const sides = sidesOption(options.sides);
  if (sides.includes("relation")) {
    if (numRelations === null) {
      throw new KgrankInputError(
        "numRelations",
        'is needed with sides including "relation" (the candidates are the relations): give numRelations or filterTriples',
      );
    }
    for (const name of ["restrictEntities", "restrictRelations", "entityShard"] as const) {
      if (options[name] !== undefined) {
        throw new KgrankInputError(
          name,
          `cannot be combined with sides including "relation": evaluate the relation side in an evaluator without ${name}`,
        );
      }
    }
  }
  const candidates = candidatesOption(options.candidates, numEntities, numRelations, options);
  if (candidates && numRelations === null) numRelations = candidates.numRelations;
  const ks = cutoffs("ks", options.ks ?? [...DEFAULT_KS]).sort((a, b) => a - b);
  if (
    options.metrics !== undefined &&
    (!Array.isArray(options.metrics) || options.metrics.some((m) => typeof m !== "string"))
  ) {
    throw new KgrankInputError("metrics", `must be an array of metric names, got ${describe(options.metrics)}`);
  }
  const metricKeys = (options.metrics as string[] | undefined) ?? null;
  // Resolve the names now: a misspelt metric must fail here, not in finalize() after an hour-long run.
  metricSelection(metricKeys, ks);
  const weighting = options.weighting ?? "micro";
  if (weighting !== "micro" && weighting !== "macro") {
    throw new KgrankInputError("weighting", `must be "micro" or "macro", got ${describe(weighting)}`);
  }
  return {
    numEntities,
    numRelations,
    checked,
    sides,
    ks,
    metricKeys,
    weighting: weighting as Weighting,
    threads: threadCount(options.threads),
    candidates,
    temporal: temporalOption(options.temporal),
  };
}

/** RankEvaluatorOptions.temporal: { setting: "raw" | "static" | "timeAware", numTimestamps >= 1 }, or null. */
function temporalOption(value: unknown): TemporalProtocol | null {
  if (value === undefined) return null;
  const v = value as Partial<TemporalProtocol> | null;
  if (
    v === null ||
    typeof v !== "object" ||
    !["raw", "static", "timeAware"].includes(v.setting as string) ||
    !Number.isSafeInteger(v.numTimestamps) ||
    v.numTimestamps! < 1
  ) {
    throw new KgrankInputError(
      "temporal",
      `must be { setting: "raw" | "static" | "timeAware", numTimestamps: an integer >= 1 }, got ${describe(value)}`,
    );
  }
  return { setting: v.setting!, numTimestamps: v.numTimestamps! };
}

/**
 * RankEvaluatorOptions.candidates: a CandidateSets over the evaluator's entities and relations, for the entity sides
 * of whole score batches (what it does not go with is refused here, naming why).
 */
function candidatesOption(
  value: unknown,
  numEntities: number,
  numRelations: number | null,
  options: Unchecked<RankEvaluatorOptions>,
): CandidateSets | null {
  if (value === undefined) return null;
  if (!(value instanceof CandidateSets)) {
    throw new KgrankInputError(
      "candidates",
      `must be a CandidateSets (CandidateSets.fromTriples(train, ...) or readCandidateFile(...)), got ${describe(value)}`,
    );
  }
  if (value.numEntities !== numEntities)
    throw new KgrankInputError(
      "candidates",
      `were built for ${value.numEntities} entities, the evaluator has numEntities ${numEntities}: build them over the same entities`,
    );
  if (numRelations !== null && value.numRelations !== numRelations)
    throw new KgrankInputError(
      "candidates",
      `were built for ${value.numRelations} relations, the evaluator has ${numRelations}: build them over the same relations (give numRelations)`,
    );
  const refuse = (name: string, why: string) => {
    throw new KgrankInputError("candidates", `cannot be combined with ${name}: ${why}`);
  };
  if (Array.isArray(options.sides) && options.sides.includes("relation"))
    refuse(
      'sides including "relation"',
      "they constrain entity candidates; rank relations in an evaluator without candidates",
    );
  if (options.restrictEntities !== undefined || options.restrictRelations !== undefined)
    refuse(
      "restrictEntities or restrictRelations",
      "a per-relation candidate set already restricts; give one or the other",
    );
  if (options.entityShard !== undefined)
    refuse(
      "entityShard",
      "an entity shard ranks from embeddings against a slice of the entities; evaluate constrained candidates whole",
    );
  return value;
}
