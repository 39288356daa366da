/**
 * `kgrank evaluate --model-dir CHECKPOINT` of a PyTorch-BigGraph checkpoint: the graph from --dataset-dir (PBG edge
 * folders or TSV of PBG's names), every task ranked against the entities of its relation's type on that side (typed
 * candidates when the checkpoint has more than one entity type, so E / Var are those of the typed sets), filtered as
 * any run. Scores are PBG's (src/scoring/pbg.ts), computed once per (query, candidate) pair in float64 and counted by
 * the backend's kernels; candidate tables are adjusted once per relation (standard relations' tail tasks) or per type
 * and streamed partition by partition within --memory.
 */
import { KgrankInputError } from "../../checks/errors";
import { turn } from "../../contract/event-loop";
import { RankEvaluator } from "../../evaluation/evaluator";
import { openPbgCheckpoint, type PbgCheckpoint, type PbgEntityType, type PbgRelation } from "../../io/pbg/checkpoint";
import { pbgDataset, pbgEntityFolders } from "../../io/pbg/graph";
import { PbgEmbeddings } from "../../io/pbg/tables";
import { CandidateSets } from "../../ranking/candidate-sets";
import { adjustRows, compareRows, type PbgScoring } from "../../scoring/pbg";
import type { TaskSide } from "../datasets";
import type { Out } from "../out";
import { Progress } from "../progress";
import { evaluatorMetrics } from "../render";
import { openRun, runFilter } from "./context";
import { directoryFingerprints, finish } from "./finish";
import { entitySides, relationSide, type EvaluateOptions } from "./options";

/** The memory a run uses without --memory: score rows, adjusted candidate tables and kept partitions. */
const DEFAULT_BUDGET = 256 * 2 ** 20;

/**
 * The candidate sets of a typed checkpoint (more than one entity type): relation r's heads are the entities of its
 * lhs type, its tails those of its rhs type. Null with one type (every entity is a candidate).
 */
export function pbgCandidateSets(ckpt: PbgCheckpoint): CandidateSets | null {
  if (ckpt.types.length === 1) return null;
  const types = new Map(ckpt.types.map((t) => [t.name, t]));
  const pairs = (side: "lhs" | "rhs") => {
    const total = ckpt.relations.reduce((n, r) => n + types.get(r[side])!.count, 0);
    const out = new Int32Array(2 * total);
    let at = 0;
    ckpt.relations.forEach((r, i) => {
      const t = types.get(r[side])!;
      for (let e = t.offset; e < t.offset + t.count; e++) {
        out[at++] = i;
        out[at++] = e;
      }
    });
    return out;
  };
  return CandidateSets.fromPairs({
    numEntities: ckpt.numEntities,
    numRelations: ckpt.relations.length,
    head: pairs("lhs"),
    tail: pairs("rhs"),
    source: "PyTorch-BigGraph entity types",
  });
}

/** How one side of one relation is scored: the candidates' type, their adjustment, the query's, the argument order. */
interface SidePlan {
  candidates: PbgEntityType;
  /** Cache key of the adjusted candidate table (shared by relations whose candidates are adjusted alike). */
  key: string;
  adjustCandidates(rows: Float32Array, n: number): Float64Array;
  adjustQueries(rows: Float32Array, n: number): Float64Array;
  /** The query is the comparator's first argument (PBG's lhs of a standard relation's tail task). */
  queryFirst: boolean;
}

function sidePlan(ckpt: PbgCheckpoint, r: number, side: TaskSide): SidePlan {
  const s: PbgScoring = ckpt;
  const rel: PbgRelation = ckpt.relations[r]!;
  const type = (name: string) => ckpt.types.find((t) => t.name === name)!;
  const g = (name: string) => ckpt.globalEmbeddings.get(name);
  const lhs = type(rel.lhs);
  const rhs = type(rel.rhs);
  if (ckpt.dynamic) {
    // Dynamic relations: the operator goes to the query's side only, the rhs one for head tasks, the lhs one for
    // tail tasks; the candidates stay as they are (PBG's dynamic_relations.rst).
    const cand = side === "head" ? lhs : rhs;
    const params = side === "head" ? rel.params.rhs : rel.params.lhs!;
    return {
      candidates: cand,
      key: `plain:${cand.name}`,
      adjustCandidates: (rows, n) => adjustRows(s, rows, n, undefined, "none", {}),
      adjustQueries: (rows, n) => adjustRows(s, rows, n, undefined, rel.operator, params),
      queryFirst: false,
    };
  }
  if (side === "tail") {
    return {
      candidates: rhs,
      key: `relation:${r}`,
      adjustCandidates: (rows, n) => adjustRows(s, rows, n, g(rhs.name), rel.operator, rel.params.rhs),
      adjustQueries: (rows, n) => adjustRows(s, rows, n, g(lhs.name), "none", {}),
      queryFirst: true,
    };
  }
  return {
    candidates: lhs,
    key: `plain:${lhs.name}`,
    adjustCandidates: (rows, n) => adjustRows(s, rows, n, g(lhs.name), "none", {}),
    adjustQueries: (rows, n) => adjustRows(s, rows, n, g(rhs.name), rel.operator, rel.params.rhs),
    queryFirst: false,
  };
}

/** Adjusted candidate tables, kept while they fit in their share of the budget. */
class AdjustedTables {
  private readonly kept = new Map<string, [number, Float64Array, number][]>();
  private bytes = 0;
  constructor(
    private readonly tables: PbgEmbeddings,
    private readonly limit: number,
  ) {}

  /** The plan's candidates adjusted, chunk by chunk: [global id of the first row, rows, row count]. */
  *chunks(plan: SidePlan): Generator<[number, Float64Array, number]> {
    const have = this.kept.get(plan.key);
    if (have) {
      yield* have;
      return;
    }
    const size = plan.candidates.count * this.tables.ckpt.dimension * 8;
    const keep = size <= this.limit;
    if (keep && this.bytes + size > this.limit) {
      this.kept.clear();
      this.bytes = 0;
    }
    const list: [number, Float64Array, number][] = [];
    for (const [start, rows, n] of this.tables.chunks(plan.candidates)) {
      const chunk: [number, Float64Array, number] = [start, plan.adjustCandidates(rows, n), n];
      if (keep) list.push(chunk);
      yield chunk;
    }
    if (keep) {
      this.kept.set(plan.key, list);
      this.bytes += size;
    }
  }
}

/** True when --model-dir names a PyTorch-BigGraph checkpoint (evaluate-run routes it here). */
export { isPbgCheckpoint } from "../../io/pbg/checkpoint";

/** --dataset-dir is missing: a checkpoint holds no edges. */
export function pbgNeedsEdges(): KgrankInputError {
  return new KgrankInputError(
    "--dataset-dir",
    "is required with a PyTorch-BigGraph checkpoint: give the folder of its edges (train/, valid/, test/ edge folders of edges_L_R.h5, or one of them) or TSV splits of PBG's entity names",
  );
}

/** `kgrank evaluate` of a PyTorch-BigGraph checkpoint. */
export async function evaluatePbg(opts: EvaluateOptions, out: Out, t0: number): Promise<void> {
  for (const [given, flag] of [
    [opts.interaction, "--interaction"],
    [opts.entityEmbeddings, "--entity-embeddings"],
    [opts.relationEmbeddings, "--relation-embeddings"],
    [opts.negativesIds, "--negatives-ids"],
    [opts.constrainCandidates, "--constrain-candidates"],
    [opts.entityShard, "--entity-shard"],
  ] as const) {
    if (given !== undefined && given !== null)
      throw new KgrankInputError(
        flag,
        `does not apply to a PyTorch-BigGraph checkpoint (--model-dir ${opts.modelDir}): its config gives the scoring and its entity types the candidates; drop ${flag}`,
      );
  }
  if (relationSide(opts))
    throw new KgrankInputError(
      "--sides",
      "relation is not ranked for a PyTorch-BigGraph checkpoint: rank head and tail",
    );
  if (!opts.datasetDir) throw pbgNeedsEdges();
  const ckpt = await openPbgCheckpoint(opts.modelDir!, { entityDirs: pbgEntityFolders(opts.datasetDir) });
  const ds = await pbgDataset(ckpt, opts.datasetDir, opts.split);
  const run = await openRun(opts, out, t0, ds);
  const { evaluated, lo, hi, shard } = run;
  const filter = runFilter(run, false);
  const sides = entitySides(opts);
  const sets = pbgCandidateSets(ckpt);
  const evaluator = new RankEvaluator({
    numEntities: ds.numEntities,
    numRelations: ds.numRelations,
    filterTriples: filter.triples,
    sides: sides.length === 2 ? "both" : sides[0],
    ks: opts.ks,
    metrics: evaluatorMetrics(opts.metrics),
    ...(sets ? { candidates: sets } : {}),
  });
  const budget = opts.memory ?? DEFAULT_BUDGET;
  const tables = await PbgEmbeddings.open(ckpt, budget);
  const adjusted = new AdjustedTables(tables, Math.floor(budget / 4));
  const n = ds.numEntities;
  const batchRows = Math.max(1, Math.min(4096, Math.floor(budget / 4 / (8 * n))));
  const label = `scoring ${ds.name} ${opts.split}${shard ? ` shard ${shard.index}/${shard.count}` : ""} from a PyTorch-BigGraph checkpoint`;
  const total = run.sample ? run.sample.sampled : (hi - lo) * sides.length;
  const progress = new Progress(label, total, { quiet: opts.quiet, report: run.out.progress });
  try {
    for (const side of sides) {
      const own = run.sample ? run.sample[side] : evaluated.subarray(3 * lo, 3 * hi);
      // The rows of each relation together: one adjusted candidate table serves them all.
      const byRelation = new Map<number, number[]>();
      for (let i = 0; i < own.length / 3; i++) {
        const r = own[3 * i + 1]!;
        const list = byRelation.get(r) ?? [];
        list.push(i);
        byRelation.set(r, list);
      }
      for (const [r, rows] of [...byRelation].sort((a, b) => a[0] - b[0])) {
        const plan = sidePlan(ckpt, r, side);
        for (let b = 0; b < rows.length; b += batchRows) {
          const batch = rows.slice(b, b + batchRows);
          const triples = new Int32Array(3 * batch.length);
          const anchors = new Int32Array(batch.length);
          batch.forEach((i, j) => {
            triples.set(own.subarray(3 * i, 3 * i + 3), 3 * j);
            anchors[j] = own[3 * i + (side === "head" ? 2 : 0)]!;
          });
          const queries = plan.adjustQueries(tables.rowsOf(anchors), batch.length);
          // Columns outside the candidates' type are no candidates (NaN; typed sets leave them out anyway).
          const scores = new Float64Array(batch.length * n).fill(NaN);
          const d = ckpt.dimension;
          for (const [start, cands, count] of adjusted.chunks(plan)) {
            for (let j = 0; j < batch.length; j++)
              compareRows(ckpt, queries, j * d, cands, count, plan.queryFirst, scores, j * n + start);
          }
          evaluator.addSync({ triples, side, scores });
          progress.tick(batch.length);
          await turn();
        }
      }
    }
  } finally {
    progress.stop();
    tables.close();
  }
  const scorerName =
    `PyTorch-BigGraph ${ckpt.comparator}${ckpt.bias ? " with bias" : ""}${ckpt.dynamic ? ", dynamic relations" : ""} ` +
    `(${ckpt.dimension} columns, float64; ${ckpt.types.length} entity type${ckpt.types.length > 1 ? "s as typed candidates" : ""})`;
  const dirFiles = opts.saveState ? await directoryFingerprints(opts.modelDir!) : null;
  await finish(run, evaluator, scorerName, filter.setting, filter.splits, [dirFiles, ckpt.version]);
}
