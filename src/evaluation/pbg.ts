/**
 * Ranking a PyTorch-BigGraph checkpoint: every task against the entities of its relation's type on that side (typed
 * candidates when the checkpoint has more than one entity type, so E / Var are those of the typed sets), scored as
 * PBG scores (src/scoring/pbg.ts) once per (query, candidate) pair in float64 and counted by the backend's kernels
 * through RankEvaluator's score batches. Candidate tables are adjusted once per relation (a standard relation's tail
 * tasks: its operator on the candidates) or per type, and streamed partition by partition within the memory budget.
 * `kgrank evaluate --model-dir CHECKPOINT` (src/run/evaluate/pbg.ts) and evaluatePbgCheckpoint run it.
 */
import { KgrankInputError } from "../checks/errors";
import { options, optionKeys, integer } from "../checks/validate";
import type { FloatArray, PbgOperatorName, PbgOperatorValues, PbgScoring } from "../contract/kernels";
import { turn } from "../contract/event-loop";
import { SPLITS, type Split } from "../io/datasets";
import { openPbgCheckpoint, type PbgCheckpoint, type PbgEntityType, type PbgSampling } from "../io/pbg/checkpoint";
import { pbgDataset, pbgEntityFolders, pbgFileOrder } from "../io/pbg/graph";
import { PbgEmbeddings } from "../io/pbg/tables";
import type { MetricQuery } from "../metrics/names";
import { CandidateSets } from "../ranking/candidate-sets";
import { streamKey, uniform01Keyed } from "../numeric/random";
import { adjustRows, adjustsNothing, compareRows } from "../scoring/pbg";
import { RankEvaluator } from "./evaluator";
import type { RankResults } from "./results";

/** The memory a run uses without a budget: score rows, adjusted candidate tables and kept partitions. */
export const PBG_DEFAULT_BUDGET = 256 * 2 ** 20;

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

/**
 * The entity ranges [begin, end) of `count` entity shards of a checkpoint, in shard order (they tile its global ids).
 * When `count` is at most the number of (non-empty) partitions, of every type together, shards follow partitions:
 * each holds whole partitions, consecutive in global id order, the cut between shards k - 1 and k at the partition
 * boundary nearest to k x E / count (so shards differ by up to about a partition when count does not divide them).
 * With more shards than partitions, the entities are split evenly ([floor(k E / count), floor((k + 1) E / count)),
 * the split of any model's entity shards), and a shard holds a slice of one or two partitions.
 */
export function pbgShardRanges(ckpt: PbgCheckpoint, count: number): [number, number][] {
  const n = ckpt.numEntities;
  const bounds = [...new Set([...ckpt.types.flatMap((t) => t.partitionOffsets), n])].sort((a, b) => a - b);
  const pieces = bounds.length - 1;
  const out: [number, number][] = [];
  if (count > pieces) {
    for (let k = 0; k < count; k++) out.push([Math.floor((k * n) / count), Math.floor(((k + 1) * n) / count)]);
    return out;
  }
  let prev = 0;
  for (let k = 1; k <= count; k++) {
    let j = pieces;
    if (k < count) {
      const target = (k * n) / count;
      j = prev + 1;
      for (let c = prev + 2; c <= pieces - (count - k); c++)
        if (Math.abs(bounds[c]! - target) < Math.abs(bounds[j]! - target)) j = c;
    }
    out.push([bounds[prev]!, bounds[j]!]);
    prev = j;
  }
  return out;
}

/** How one side of one relation is scored: the candidates' type, their adjustment, the query's, the argument order. */
interface SidePlan {
  candidates: PbgEntityType;
  /** Cache key of the adjusted candidate table (shared by relations whose candidates are adjusted alike). */
  key: string;
  /** The rows themselves where adjust() changes nothing (adjustsNothing), else their adjusted float64 copy. */
  adjustCandidates(rows: Float32Array, n: number): FloatArray;
  adjustQueries(rows: Float32Array, n: number): Float64Array;
  /** The query is the comparator's first argument (PBG's lhs of a standard relation's tail task). */
  queryFirst: boolean;
}

/** A side's candidate adjustment: none at all where adjust() would change nothing. */
function candidates(
  s: PbgScoring,
  global: Float64Array | undefined,
  operator: PbgOperatorName,
  params: PbgOperatorValues,
): SidePlan["adjustCandidates"] {
  if (adjustsNothing(s, global, operator)) return (rows, n) => rows.subarray(0, n * s.dimension);
  return (rows, n) => adjustRows(s, rows, n, global, operator, params);
}

function sidePlan(ckpt: PbgCheckpoint, r: number, side: "head" | "tail"): SidePlan {
  const s: PbgScoring = ckpt;
  const rel = ckpt.relations[r]!;
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
      adjustCandidates: candidates(s, undefined, "none", {}),
      adjustQueries: (rows, n) => adjustRows(s, rows, n, undefined, rel.operator, params),
      queryFirst: false,
    };
  }
  if (side === "tail") {
    return {
      candidates: rhs,
      key: `relation:${r}`,
      adjustCandidates: candidates(s, g(rhs.name), rel.operator, rel.params.rhs),
      adjustQueries: (rows, n) => adjustRows(s, rows, n, g(lhs.name), "none", {}),
      queryFirst: true,
    };
  }
  return {
    candidates: lhs,
    key: `plain:${lhs.name}`,
    adjustCandidates: candidates(s, g(lhs.name), "none", {}),
    adjustQueries: (rows, n) => adjustRows(s, rows, n, g(rhs.name), rel.operator, rel.params.rhs),
    queryFirst: false,
  };
}

/** sidePlan of each relation on `side`, made on first use. */
function sidePlans(ckpt: PbgCheckpoint, side: "head" | "tail"): (r: number) => SidePlan {
  const plans = new Map<number, SidePlan>();
  return (r) => {
    let plan = plans.get(r);
    if (!plan) plans.set(r, (plan = sidePlan(ckpt, r, side)));
    return plan;
  };
}

/** Every triple's relation is one of the checkpoint's. */
function checkRelations(ckpt: PbgCheckpoint, triples: Int32Array): void {
  for (let i = 0; i < triples.length / 3; i++) {
    const r = triples[3 * i + 1]!;
    if (!(r >= 0 && r < ckpt.relations.length))
      throw new KgrankInputError("triples", `row ${i} has relation ${r}, outside the checkpoint's relations`, i);
  }
}

/**
 * Ranks tasks of a checkpoint into an evaluator (one whose candidates are pbgCandidateSets'): the tables opened once,
 * kept within the budget while they fit, read in chunks when they do not.
 */
export class PbgRanker {
  private readonly kept = new Map<string, [number, FloatArray, number][]>();
  private keptBytes = 0;

  private constructor(
    readonly ckpt: PbgCheckpoint,
    private readonly tables: PbgEmbeddings,
    private readonly budget: number,
    /** An entity shard's global ids [begin, end) (pbgShardRanges), or null for every entity. */
    readonly range: readonly [number, number] | null,
  ) {}

  /**
   * The checkpoint's tables within `budget`; `range`: an entity shard's ids, whose candidates alone it scores (its
   * evaluator an entity shard of that range) and whose partitions alone it keeps in memory.
   */
  static async open(
    ckpt: PbgCheckpoint,
    budget = PBG_DEFAULT_BUDGET,
    range: readonly [number, number] | null = null,
  ): Promise<PbgRanker> {
    return new PbgRanker(ckpt, await PbgEmbeddings.open(ckpt, budget, range), budget, range);
  }

  /**
   * True when 64 whole score rows (every entity's column), or the typed candidate sets, do not fit in a quarter of
   * the budget: then each batch is ranked slice by slice (RankEvaluator.chunked: a partition's chunk at a time, the
   * other types' columns as NaN, no candidate), so memory holds rows x one chunk, and the counts of the slices add up
   * to the whole rows' exactly.
   * Such an evaluator takes no candidate sets: the NaN columns make the same typed candidates (the other types are no
   * candidates, and a relation's known answers are all of its type), so ranks and candidate counts are the same.
   */
  get streamed(): boolean {
    const ckpt = this.ckpt;
    // The candidate sets hold 8 bytes per (relation, entity) pair and side: many relations over large types may not
    // fit where the rows would.
    const count = new Map(ckpt.types.map((t) => [t.name, t.count]));
    const pairs =
      ckpt.types.length === 1 ? 0 : ckpt.relations.reduce((n, r) => n + count.get(r.lhs)! + count.get(r.rhs)!, 0);
    return ckpt.numEntities * 8 * 64 > this.budget / 4 || pairs * 8 > this.budget / 4;
  }

  close(): void {
    this.tables.close();
    this.kept.clear();
  }

  private rankSlices(
    evaluator: RankEvaluator,
    side: "head" | "tail",
    triples: Int32Array,
    queries: Float64Array,
    plan: SidePlan,
  ): void {
    rankSlicesOf(this, this.tables, evaluator, side, triples, queries, plan);
  }

  /** The plan's candidates adjusted, chunk by chunk: [global id of the first row, rows, row count]. */
  *chunks(plan: SidePlan): Generator<[number, FloatArray, number]> {
    const have = this.kept.get(plan.key);
    if (have) {
      yield* have;
      return;
    }
    const limit = Math.floor(this.budget / 4);
    const t = plan.candidates;
    const rows = this.range
      ? Math.max(0, Math.min(t.offset + t.count, this.range[1]) - Math.max(t.offset, this.range[0]))
      : t.count;
    const size = rows * this.ckpt.dimension * 8;
    const keep = size <= limit;
    if (keep && this.keptBytes + size > limit) {
      this.kept.clear();
      this.keptBytes = 0;
    }
    const list: [number, FloatArray, number][] = [];
    for (const [start, table, n] of this.tables.chunks(plan.candidates, this.range)) {
      const chunk: [number, FloatArray, number] = [start, plan.adjustCandidates(table, n), n];
      if (keep) list.push(chunk);
      yield chunk;
    }
    if (keep) {
      this.kept.set(plan.key, list);
      this.keptBytes += size;
    }
  }

  /**
   * Ranks `triples` (global ids, t x 3) on `side` into `evaluator`: the rows of each relation together, in batches
   * of score rows within the budget; `onRows` after each batch with its row count. An entity shard's ranker (range)
   * scores its own candidates only, in slices, into the evaluator of that entity shard (partial counts).
   */
  async rank(
    evaluator: RankEvaluator,
    side: "head" | "tail",
    triples: Int32Array,
    onRows?: (rows: number) => void,
  ): Promise<void> {
    const ckpt = this.ckpt;
    const n = ckpt.numEntities;
    const range = this.range;
    const streamed = this.streamed || range !== null;
    if (streamed && evaluator.candidates)
      throw new KgrankInputError(
        "evaluator",
        `ranks whole score rows (candidate sets): ${range ? "an entity shard" : "this budget"} streams slices`,
      );
    const width = streamed ? Math.min(this.tables.chunkRows, range ? range[1] - range[0] : n) : n;
    const batchRows = Math.max(1, Math.min(4096, Math.floor(this.budget / 4 / (8 * width))));
    // Tasks run in relation order (then in their order: pbgDataset's splits are in that order already, so a task
    // shard's tasks are a run of the whole split's and shards merge into the one-process order). A batch is a run of
    // consecutive tasks whose candidates' table is adjusted alike (SidePlan.key: a head side, every dynamic relation
    // share one; a standard relation's tail side has its own), so those relations share each pass over the table;
    // each relation's queries are adjusted by its own operator.
    const planOf = sidePlans(ckpt, side);
    const tasks = triples.length / 3;
    checkRelations(ckpt, triples);
    const relationOf = (i: number) => triples[3 * i + 1]!;
    const order = Array.from({ length: tasks }, (_, i) => i).sort((a, b) => relationOf(a) - relationOf(b) || a - b);
    for (let b = 0; b < tasks;) {
      const plan = planOf(relationOf(order[b]!));
      let e = b + 1;
      while (e < tasks && e - b < batchRows && planOf(relationOf(order[e]!)).key === plan.key) e++;
      const batch = order.slice(b, e);
      b = e;
      const own = new Int32Array(3 * batch.length);
      const anchors = new Int32Array(batch.length);
      batch.forEach((i, j) => {
        own.set(triples.subarray(3 * i, 3 * i + 3), 3 * j);
        anchors[j] = triples[3 * i + (side === "head" ? 2 : 0)]!;
      });
      const anchorRows = this.tables.rowsOf(anchors);
      const d = ckpt.dimension;
      const queries = new Float64Array(batch.length * d);
      for (let j = 0; j < batch.length;) {
        const r = relationOf(batch[j]!);
        let end = j + 1;
        while (end < batch.length && relationOf(batch[end]!) === r) end++;
        queries.set(planOf(r).adjustQueries(anchorRows.subarray(j * d, end * d), end - j), j * d);
        j = end;
      }
      if (streamed) {
        this.rankSlices(evaluator, side, own, queries, plan);
        onRows?.(batch.length);
        await turn();
        continue;
      }
      // Columns outside the candidates' type are no candidates (NaN; typed sets leave them out anyway).
      const scores = new Float64Array(batch.length * n).fill(NaN);
      for (const [start, cands, count] of this.chunks(plan))
        compareRows(ckpt, queries, batch.length, cands, count, plan.queryFirst, scores, n, start);
      evaluator.addSync({ triples: own, side, scores });
      onRows?.(batch.length);
      await turn();
    }
  }

  /**
   * PBG's sampled evaluation of `side` (pbgSampledOrder describes the protocol) into `evaluator`, which takes
   * sampled ranks (no filter, no candidate sets); `onRows` after each batch of chunks with its row count.
   */
  async rankSampled(
    evaluator: RankEvaluator,
    side: "head" | "tail",
    triples: Int32Array,
    o: PbgSampledOptions,
    onRows?: (rows: number) => void,
  ): Promise<void> {
    const ckpt = this.ckpt;
    if (o.batchNegatives === 0 && o.uniformNegatives === 0)
      throw new KgrankInputError(
        "--model-dir",
        `${ckpt.dir}/config.json: "num_batch_negs" and "num_uniform_negs" are both 0, so PBG's sampled protocol has no negatives: set either above 0`,
      );
    checkRelations(ckpt, triples);
    for (const r of new Set(triples.filter((_, j) => j % 3 === 1)))
      if (ckpt.relations[r]!.allNegs)
        throw new KgrankInputError(
          "--model-dir",
          `${ckpt.dir}/config.json: relation "${ckpt.relations[r]!.name}" has "all_negs", which PBG's sampled protocol ranks against every entity of its partition; kgrank does not reproduce that: rank it exactly (without --pbg-sampled)`,
        );
    if (o.fileOrder && o.fileOrder.length !== triples.length / 3)
      throw new KgrankInputError("fileOrder", `has ${o.fileOrder.length} positions for ${triples.length / 3} triples`);
    const { order, chunks, lp, rp } = pbgSampledOrder(ckpt, triples, o.batchSize, chunkOf(o), o.fileOrder);
    const d = ckpt.dimension;
    const typeOf = new Map(ckpt.types.map((t) => [t.name, t]));
    const planOf = sidePlans(ckpt, side);
    const batchEdges = o.batchNegatives > 0;
    const U = o.uniformNegatives;
    // Sampled batches flushed to the evaluator: rows of equal negative count K together.
    let pending: { triples: number[]; pos: number[]; neg: number[]; k: number } = {
      triples: [],
      pos: [],
      neg: [],
      k: -1,
    };
    const flush = () => {
      if (pending.pos.length === 0) return;
      if (pending.k === 0) {
        // A chunk of one edge and no draws: no negative at all, rank 1 of 1 (PBG masks the edge's own pair).
        const one = new Float64Array(pending.pos.length).fill(1);
        evaluator.addRanks({
          side,
          triples: Int32Array.from(pending.triples),
          optimistic: one,
          realistic: one,
          pessimistic: one,
          numCandidates: one,
        });
      } else
        evaluator.addSampledSync({
          triples: Int32Array.from(pending.triples),
          side,
          positiveScores: Float64Array.from(pending.pos),
          negativeScores: Float64Array.from(pending.neg),
        });
      onRows?.(pending.pos.length);
      pending = { triples: [], pos: [], neg: [], k: -1 };
    };
    for (let ci = 0; ci < chunks.length; ci++) {
      const [at, len] = chunks[ci]!;
      const rows = order.slice(at, at + len);
      const first = rows[0]!;
      const rel = ckpt.relations[triples[3 * first + 1]!]!;
      const type = typeOf.get(side === "head" ? rel.lhs : rel.rhs)!;
      const part = side === "head" ? lp[first]! : rp[first]!;
      const lo = type.partitionOffsets[part]!;
      const span = type.partitions[part]!;
      const batchIds = batchEdges ? rows.map((i) => triples[3 * i + (side === "head" ? 0 : 2)]!) : [];
      const key = streamKey(o.seed, 2 * ci + (side === "head" ? 0 : 1));
      const uniform = Array.from(
        { length: span > 0 ? U : 0 },
        (_, k) => lo + Math.floor(uniform01Keyed(key, k) * span),
      );
      const truth = rows.map((i) => triples[3 * i + (side === "head" ? 0 : 2)]!);
      // Candidates: each row's own true answer first (its positive), then the chunk's batch negatives and the draws.
      const ids = Int32Array.from([...truth, ...batchIds, ...uniform]);
      const m = ids.length;
      const anchorRows = this.tables.rowsOf(rows.map((i) => triples[3 * i + (side === "head" ? 2 : 0)]!));
      const queries = new Float64Array(len * d);
      for (let j = 0; j < len;) {
        const r = triples[3 * rows[j]! + 1]!;
        let end = j + 1;
        while (end < len && triples[3 * rows[end]! + 1]! === r) end++;
        queries.set(planOf(r).adjustQueries(anchorRows.subarray(j * d, end * d), end - j), j * d);
        j = end;
      }
      // Dynamic relations and a standard relation's head side adjust candidates alike for every relation of the
      // chunk (SidePlan.key); a standard relation's tail side is one relation per chunk.
      const plan = planOf(triples[3 * first + 1]!);
      const cands = plan.adjustCandidates(this.tables.rowsOf(ids), m);
      const scores = new Float64Array(len * m);
      compareRows(ckpt, queries, len, cands, m, plan.queryFirst, scores, m, 0);
      const k = (batchEdges ? len - 1 : 0) + uniform.length;
      if (k !== pending.k) {
        flush();
        pending.k = k;
      }
      for (let j = 0; j < len; j++) {
        const row = scores.subarray(j * m, (j + 1) * m);
        const i = rows[j]!;
        pending.triples.push(triples[3 * i]!, triples[3 * i + 1]!, triples[3 * i + 2]!);
        pending.pos.push(row[j]!);
        for (let c = len; c < m; c++) if (!batchEdges || c - len !== j) pending.neg.push(row[c]!);
      }
      if (pending.pos.length >= 4096) {
        flush();
        await turn();
      }
    }
    flush();
  }
}

/** PBG's sampled protocol for rankSampled: the checkpoint's sizes (PbgCheckpoint.sampling) and the uniform draw's seed. */
export interface PbgSampledOptions extends PbgSampling {
  seed: number;
  /**
   * Each triple's position in the split's files (pbgFileOrder), which orders a bucket's edges as PBG reads them
   * (dynamic relations are batched in that order); default: the order given.
   */
  fileOrder?: ArrayLike<number>;
}

/**
 * The evaluator's numEntities for PBG's sampled protocol: the graph's, or more where a task's negatives (drawn with
 * replacement, K = chunk - 1 + uniform) outnumber the graph's other entities, as on a small graph with PBG's default
 * sizes. Sampled ranks count candidates per task; the random expectations treat the K negatives as distinct.
 */
export function pbgSampledEntities(numEntities: number, s: PbgSampling): number {
  const k = (s.batchNegatives > 0 ? Math.min(chunkOf(s), s.batchSize) - 1 : 0) + s.uniformNegatives;
  return Math.max(numEntities, k + 1);
}

/** The edges of a full chunk: num_batch_negs, or num_uniform_negs without batch negatives (PBG's forward()). */
function chunkOf(s: PbgSampling): number {
  return s.batchNegatives > 0 ? s.batchNegatives : s.uniformNegatives;
}

/**
 * PyTorch-BigGraph's sampled evaluation (torchbiggraph_eval's RankingEvaluator) of `side`, into `evaluator` (sampled
 * ranks through addSampled: an evaluator without filter or candidate sets). The edges go in PBG's order: buckets of
 * (lhs partition, rhs partition) in lexicographic order; within a bucket the edges of each relation together in
 * their order (dynamic relations: all together, in order); batches of batchSize, each cut into chunks of
 * min(batchNegatives, batch) consecutive edges (min(uniformNegatives, batch) when batchNegatives is 0). An edge's
 * negatives on `side` are the other edges' entities of its chunk on that side (an entity repeated, its own true
 * answer included, stays a negative: PBG masks only the edge's own pair) and uniformNegatives entities drawn for the
 * chunk, with replacement, from the partition of the side's type the bucket holds (the counter-based stream of
 * (seed, chunk, side): the same draws for a given split, sizes and seed). Scores are PBG's, as rank() computes them;
 * PBG reports the pessimistic rank (1 + the negatives scoring >= the edge), MR, MRR, Hits@1/10/50.
 */
function pbgSampledOrder(
  ckpt: PbgCheckpoint,
  triples: Int32Array,
  batchSize: number,
  chunk: number,
  fileOrder?: ArrayLike<number>,
) {
  const tasks = triples.length / 3;
  const typeOf = new Map(ckpt.types.map((t) => [t.name, t]));
  const partOf = (e: number, type: PbgEntityType) => {
    let p = 0;
    while (p + 1 < type.partitionOffsets.length && type.partitionOffsets[p + 1]! <= e) p++;
    return p;
  };
  const lp = new Int32Array(tasks);
  const rp = new Int32Array(tasks);
  for (let i = 0; i < tasks; i++) {
    const rel = ckpt.relations[triples[3 * i + 1]!]!;
    lp[i] = partOf(triples[3 * i]!, typeOf.get(rel.lhs)!);
    rp[i] = partOf(triples[3 * i + 2]!, typeOf.get(rel.rhs)!);
  }
  const group = (i: number) => (ckpt.dynamic ? 0 : triples[3 * i + 1]!);
  const at = fileOrder ?? Array.from({ length: tasks }, (_, i) => i);
  const order = Array.from({ length: tasks }, (_, i) => i).sort(
    (a, b) => lp[a]! - lp[b]! || rp[a]! - rp[b]! || group(a) - group(b) || at[a]! - at[b]!,
  );
  // Chunks: [first position in order, length], batch by batch within each (bucket, relation) group.
  const chunks: [number, number][] = [];
  for (let g = 0; g < tasks;) {
    let end = g + 1;
    const same = (i: number) => lp[i] === lp[order[g]!] && rp[i] === rp[order[g]!] && group(i) === group(order[g]!);
    while (end < tasks && same(order[end]!)) end++;
    for (let b = g; b < end; b += batchSize) {
      const len = Math.min(batchSize, end - b);
      const size = Math.min(chunk, len);
      for (let c = b; c < b + len; c += size) chunks.push([c, Math.min(size, b + len - c)]);
    }
    g = end;
  }
  return { order, chunks, lp, rp };
}

/**
 * One batch ranked slice by slice: the true scores first (each true answer's row adjusted and compared exactly as
 * in its chunk), then every entity column in order, the candidates' type chunk by chunk and the other types' columns
 * as NaN (no candidate), in pieces of at most one chunk's width.
 */
function rankSlicesOf(
  ranker: {
    ckpt: PbgCheckpoint;
    range: readonly [number, number] | null;
    chunks(plan: SidePlan): Generator<[number, FloatArray, number]>;
  },
  tables: PbgEmbeddings,
  evaluator: RankEvaluator,
  side: "head" | "tail",
  triples: Int32Array,
  queries: Float64Array,
  plan: SidePlan,
): void {
  const ckpt = ranker.ckpt;
  const d = ckpt.dimension;
  const rows = triples.length / 3;
  const truth = Int32Array.from({ length: rows }, (_, j) => triples[3 * j + (side === "head" ? 0 : 2)]!);
  const trueRows = plan.adjustCandidates(tables.rowsOf(truth), rows);
  const trueScores = new Float64Array(rows);
  for (let j = 0; j < rows; j++) {
    const query = queries.subarray(j * d, (j + 1) * d);
    compareRows(ckpt, query, 1, trueRows.subarray(j * d, (j + 1) * d), 1, plan.queryFirst, trueScores, 1, j);
  }
  const batch = evaluator.chunked({ triples, side, trueScores });
  try {
    // An entity shard's slices cover its range only.
    const [lo, hi] = ranker.range ?? [0, ckpt.numEntities];
    const piece = Math.max(1, Math.min(tables.chunkRows, hi - lo));
    const nan = new Float64Array(rows * piece).fill(NaN);
    for (const t of ckpt.types) {
      if (t !== plan.candidates) {
        const end = Math.min(t.offset + t.count, hi);
        for (let e = Math.max(t.offset, lo); e < end; e += piece) {
          const w = Math.min(piece, end - e);
          batch.addSync({ scores: nan.subarray(0, rows * w), entityStart: e });
        }
        continue;
      }
      // One score block for every chunk: addSync counts it before it returns, and each chunk overwrites it whole.
      const block = new Float64Array(rows * piece);
      for (const [start, cands, count] of ranker.chunks(plan)) {
        const scores = block.length >= rows * count ? block.subarray(0, rows * count) : new Float64Array(rows * count);
        compareRows(ckpt, queries, rows, cands, count, plan.queryFirst, scores, count, 0);
        batch.addSync({ scores, entityStart: start });
      }
    }
    batch.finish();
  } catch (e) {
    batch.abort();
    throw e;
  }
}

/** Options of evaluatePbgCheckpoint. */
export interface PbgEvaluationOptions {
  /** The checkpoint folder: config.json, checkpoint_version.txt, embeddings_{type}_{part}.vN.h5, model.vN.h5. */
  checkpoint: string;
  /**
   * The edges: a folder of train/, valid/, test/ edge folders (edges_{l}_{r}.h5), one edge folder (the split
   * evaluated), or train / valid / test .tsv files of PBG's entity names. The entity folder is looked for in it,
   * beside it (entities/) and at the config's entity_path.
   */
  dataset: string;
  /** The split ranked (default "test"). */
  split?: Split;
  /** The splits whose edges are filtered out of the candidates (default all three). */
  filter?: Split[];
  /** The sides ranked (default "both"). */
  sides?: "head" | "tail" | "both";
  /** The cut-offs of Hits@k (as RankEvaluator's). */
  ks?: number[];
  /** The metrics computed (as RankEvaluator's; default its defaults). */
  metrics?: MetricQuery[];
  /** Bytes for score rows, adjusted candidate tables and partitions kept in memory (default 256 MiB). */
  memoryBudget?: number;
  /**
   * "exact" (default): every task against every candidate of its type, filtered. "pbg-sampled": PyTorch-BigGraph's
   * own sampled evaluation (PbgRanker.rankSampled: batch and uniform negatives, unfiltered, the config's batch_size,
   * num_batch_negs and num_uniform_negs), for comparing with the numbers torchbiggraph_eval prints: its rank is the
   * pessimistic one. `filter` does not apply to it.
   */
  protocol?: "exact" | "pbg-sampled";
  /** The seed of the uniform negatives' draw under "pbg-sampled" (default 0). */
  seed?: number;
}

const PBG_KEYS = optionKeys<PbgEvaluationOptions>({
  checkpoint: 1,
  dataset: 1,
  split: 1,
  filter: 1,
  sides: 1,
  ks: 1,
  metrics: 1,
  memoryBudget: 1,
  protocol: 1,
  seed: 1,
});

function splitOption(name: string, v: unknown): Split {
  if (typeof v !== "string" || !(SPLITS as readonly string[]).includes(v))
    throw new KgrankInputError(name, `must be one of ${SPLITS.join(", ")}, got ${JSON.stringify(v)}`);
  return v as Split;
}

/**
 * Ranks a PyTorch-BigGraph checkpoint's split exactly: every edge's head and tail against the entities of its
 * relation's type on that side, the known edges of the filter splits taken out, with PBG's own scores (operator,
 * comparator, bias, global embeddings, dynamic relations). HDF5 is read through the optional package h5wasm
 * (`npm install h5wasm`).
 */
export async function evaluatePbgCheckpoint(opts: PbgEvaluationOptions): Promise<RankResults> {
  try {
    return await evaluatePbg(opts);
  } catch (e) {
    // The readers name the CLI's flags; the library's options are named for what they are.
    if (!(e instanceof KgrankInputError) || LIBRARY_NAMES[e.argument] === undefined) throw e;
    throw new KgrankInputError(LIBRARY_NAMES[e.argument]!, e.message.slice(e.argument.length + 2));
  }
}

const LIBRARY_NAMES: Record<string, string> = { "--model-dir": "checkpoint", "--dataset-dir": "dataset" };

async function evaluatePbg(opts: PbgEvaluationOptions): Promise<RankResults> {
  const o = options("evaluatePbgCheckpoint options", opts, PBG_KEYS);
  for (const key of ["checkpoint", "dataset"] as const)
    if (typeof o[key] !== "string" || o[key] === "")
      throw new KgrankInputError(key, `must be the path of a folder, got ${JSON.stringify(o[key])}`);
  const split = o.split === undefined ? "test" : splitOption("split", o.split);
  const filter =
    o.filter === undefined
      ? [...SPLITS]
      : Array.isArray(o.filter)
        ? o.filter.map((s, i) => splitOption(`filter[${i}]`, s))
        : (() => {
            throw new KgrankInputError("filter", "must be an array of split names (train, valid, test)");
          })();
  const given = o.sides ?? "both";
  if (given !== "both" && given !== "head" && given !== "tail")
    throw new KgrankInputError("sides", `must be "head", "tail" or "both", got ${JSON.stringify(given)}`);
  const sides: "head" | "tail" | "both" = given;
  const budget = o.memoryBudget === undefined ? PBG_DEFAULT_BUDGET : integer("memoryBudget", o.memoryBudget, 1);
  const checkpoint = o.checkpoint as string;
  const ckpt = await openPbgCheckpoint(checkpoint, { entityDirs: pbgEntityFolders(o.dataset as string) });
  const ds = await pbgDataset(ckpt, o.dataset as string, split);
  const triples = ds.splits[split];
  if (triples.length === 0)
    throw new KgrankInputError("split", `${o.dataset as string} holds no ${split} edges to rank`);
  const protocol = o.protocol ?? "exact";
  if (protocol !== "exact" && protocol !== "pbg-sampled")
    throw new KgrankInputError("protocol", `must be "exact" or "pbg-sampled", got ${JSON.stringify(protocol)}`);
  const seed = o.seed === undefined ? 0 : integer("seed", o.seed, 0, 2 ** 32 - 1);
  if (protocol === "pbg-sampled" && o.filter !== undefined)
    throw new KgrankInputError(
      "filter",
      "does not apply to the pbg-sampled protocol, which PBG runs unfiltered: drop it",
    );
  const ranker = await PbgRanker.open(ckpt, budget);
  if (protocol === "pbg-sampled") {
    try {
      const evaluator = new RankEvaluator({
        numEntities: pbgSampledEntities(ds.numEntities, ckpt.sampling),
        numRelations: ds.numRelations,
        sides,
        ...(o.ks !== undefined ? { ks: o.ks as number[] } : {}),
        ...(o.metrics !== undefined ? { metrics: o.metrics as MetricQuery[] } : {}),
      });
      for (const side of sides === "both" ? (["head", "tail"] as const) : [sides])
        await ranker.rankSampled(evaluator, side, triples, {
          ...ckpt.sampling,
          seed,
          fileOrder: pbgFileOrder(ds, split),
        });
      return evaluator.finalize();
    } finally {
      ranker.close();
    }
  }
  const sets = ranker.streamed ? null : pbgCandidateSets(ckpt);
  const filterSplits = [...new Set([...filter, split])];
  let evaluator: RankEvaluator;
  try {
    evaluator = new RankEvaluator({
      numEntities: ds.numEntities,
      numRelations: ds.numRelations,
      filterTriples: filter.length ? filterSplits.map((s) => ds.splits[s]) : undefined,
      sides,
      ...(o.ks !== undefined ? { ks: o.ks as number[] } : {}),
      ...(o.metrics !== undefined ? { metrics: o.metrics as MetricQuery[] } : {}),
      ...(sets ? { candidates: sets } : {}),
    });
  } catch (e) {
    ranker.close();
    throw e;
  }
  try {
    for (const side of sides === "both" ? (["head", "tail"] as const) : [sides])
      await ranker.rank(evaluator, side, triples);
  } finally {
    ranker.close();
  }
  return evaluator.finalize();
}
