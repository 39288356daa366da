/**
 * Task selection: which rows of a batch are evaluated (restriction to relations and entities), the keys of those
 * tasks (anchor, relation, answer) in the filter index's ids and in original ids, and their score rows gathered
 * down to the kept rows and candidate columns. Used by score batches and by chunked batches alike.
 *
 * Under entity restriction the index lives in compact ids (position among the sorted kept entities), so only the
 * kept entities are candidates and the kernels see contiguous columns.
 */
import { KgrankInputError, nanTrueScore } from "../checks/errors";
import { describe, isArrayLike } from "../checks/validate";
import type { FilterIndexHandle, FloatArray } from "../contract/kernels";
import type { EvaluationSide } from "./types";
import type { ColumnArena } from "./column-arena";

/** What a batch needs of its evaluator. */
export interface BatchContext {
  numEntities: number;
  numRelations: number | null;
  sides: EvaluationSide[];
  selection: TaskSelection;
  filter: Partial<Record<EvaluationSide, FilterIndexHandle>> | null;
  threads: number | undefined;
  /** An entity shard's entity range [begin, end) (RankEvaluatorOptions.entityShard), or null for every entity. */
  entityRange: [number, number] | null;
  /** Where the one-call batches' columns are written (src/evaluation/column-arena.ts). */
  arena: ColumnArena;
}

/** A checked array of ids in [0, bound) (any id below 2^31 when bound is null), not empty. */
export function idSet(name: string, value: unknown, bound: number | null): Int32Array {
  const arr = value as ArrayLike<unknown>;
  if (!isArrayLike(value)) {
    throw new KgrankInputError(name, `must be an array of ids, got ${describe(value)}`);
  }
  const out = new Int32Array(arr.length);
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i];
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || (bound !== null && v >= bound)) {
      throw new KgrankInputError(name, `${name}[${i}] = ${describe(v)} is not an id in [0, ${bound ?? "2^31"})`);
    }
    out[i] = v;
  }
  if (out.length === 0) throw new KgrankInputError(name, "is empty: nothing would be evaluated");
  return out;
}

/** The kept tasks of a batch and their keys. */
export interface TaskKeys {
  side: EvaluationSide;
  /** Rows of the batch, kept or not. */
  rows: number;
  /** Per row: 1 when evaluated; null when every row is. */
  keep: Uint8Array | null;
  kept: number;
  /** Keys in the index's ids (compact under entity restriction). */
  anchor: Int32Array;
  relation: Int32Array;
  truth: Int32Array;
  /** Anchor and answer in the caller's entity ids (recorded with the ranks). */
  origAnchor: Int32Array;
  origTruth: Int32Array;
  index: FilterIndexHandle | null;
}

/**
 * Entity id -> compact id (its position among the sorted kept entities; -1: excluded). A dense table when that is
 * small (up to 2^24 entities, or 16 per kept one), else a binary search: a restriction to a few entities of a graph
 * declared with 2^31 - 1 entities must not allocate and fill 8 GiB (it took a minute, or failed untyped).
 */
export class CompactIds {
  private readonly dense: Int32Array | null = null;

  constructor(
    private readonly kept: Int32Array,
    numEntities: number,
  ) {
    if (numEntities <= 2 ** 24 || numEntities <= 16 * kept.length) {
      try {
        const dense = new Int32Array(numEntities).fill(-1);
        kept.forEach((e, i) => (dense[e] = i));
        this.dense = dense;
      } catch (e) {
        if (!(e instanceof RangeError)) throw e; // no memory for the table: the search gives the same ids
      }
    }
  }

  id(e: number): number {
    if (this.dense) return this.dense[e] ?? -1;
    let lo = 0;
    let hi = this.kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.kept[mid]! < e) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.kept.length && this.kept[lo] === e ? lo : -1;
  }
}

/** The error for an evaluated triple (row `row` of the keys) that the filter does not hold. */
export function notInFilter(
  k: { side: EvaluationSide; origAnchor: Int32Array; origTruth: Int32Array; relation: Int32Array },
  row: number,
): KgrankInputError {
  const [h, t] = k.side === "tail" ? [k.origAnchor[row], k.origTruth[row]] : [k.origTruth[row], k.origAnchor[row]];
  return new KgrankInputError(
    "triples",
    `the evaluated triple (${h}, ${k.relation[row]}, ${t}) is not in filterTriples: include the evaluation ` +
      `split in filterTriples (the evaluated triples always filter, as in PyKEEN)`,
  );
}

/** The NaN-true-score error of kept task `i`: names its triple and its row in the batch (error.index). */
export function nanTrueTask(
  k: {
    side: EvaluationSide;
    origAnchor: Int32Array;
    origTruth: Int32Array;
    relation: Int32Array;
    keep?: Uint8Array | null;
  },
  i: number,
): KgrankInputError {
  let row = i;
  if (k.keep)
    for (let r = 0, seen = -1; r < k.keep.length; r++)
      if (k.keep[r] && ++seen === i) {
        row = r;
        break;
      }
  const [h, t] = k.side === "tail" ? [k.origAnchor[i], k.origTruth[i]] : [k.origTruth[i], k.origAnchor[i]];
  return nanTrueScore(`row ${row} of the batch (triple (${h}, ${k.relation[i]}, ${t}), ${k.side} side)`, "scores", row);
}

export class TaskSelection {
  /** Relation id -> 1 when evaluated; null without relation restriction. */
  readonly relations: Uint8Array | null = null;
  /** Entity id -> compact candidate id (-1: excluded); null without entity restriction. */
  readonly compact: CompactIds | null = null;
  /** Sorted kept entity ids (compact id = position), or null. */
  readonly keptEntities: Int32Array | null = null;

  constructor(
    readonly numEntities: number,
    numRelations: number | null,
    restrictRelations: unknown,
    restrictEntities: unknown,
  ) {
    if (restrictRelations !== undefined) {
      const ids = idSet("restrictRelations", restrictRelations, numRelations);
      let max = 0;
      for (const r of ids) max = Math.max(max, r);
      this.relations = new Uint8Array(max + 1);
      for (const r of ids) this.relations[r] = 1;
    }
    if (restrictEntities !== undefined) {
      const kept = Int32Array.from(new Set(idSet("restrictEntities", restrictEntities, numEntities))).sort();
      this.compact = new CompactIds(kept, numEntities);
      this.keptEntities = kept;
    }
  }

  /** True when some tasks or candidates are left out. */
  get restricted(): boolean {
    return this.relations !== null || this.compact !== null;
  }

  /** Candidate columns the kernels see: the kept entities, or every entity. */
  get numCandidates(): number {
    return this.keptEntities ? this.keptEntities.length : this.numEntities;
  }

  /** Relations kept by the restriction, or null. */
  get keptRelations(): number | null {
    return this.relations ? this.relations.reduce((a, b) => a + b, 0) : null;
  }

  /**
   * Filter triples in the index's ids: under entity restriction those with both entities kept, compacted; a triple
   * touching an excluded entity cannot matter (its anchor's task is skipped, its answer is no candidate).
   */
  indexTriples(t: Int32Array): Int32Array {
    const c = this.compact;
    if (!c) return t;
    const out: number[] = [];
    for (let i = 0; i < t.length; i += 3) {
      const h = c.id(t[i]!);
      const tail = c.id(t[i + 2]!);
      if (h >= 0 && tail >= 0) out.push(h, t[i + 1]!, tail);
    }
    return Int32Array.from(out);
  }

  /** Which rows of a batch are evaluated, or null when all are. */
  keepMask(triples: Int32Array): Uint8Array | null {
    if (!this.restricted) return null;
    const rows = triples.length / 3;
    const keep = new Uint8Array(rows);
    const rel = this.relations;
    const c = this.compact;
    for (let i = 0; i < rows; i++) {
      const r = triples[3 * i + 1]!;
      const relOk = !rel || (r < rel.length && rel[r] === 1);
      const entOk = !c || (c.id(triples[3 * i]!) >= 0 && c.id(triples[3 * i + 2]!) >= 0);
      keep[i] = relOk && entOk ? 1 : 0;
    }
    return keep;
  }

  /**
   * The kept rows' keys, in index ids and original ids. With `checkFilter`, every evaluated triple must be in the
   * filter (the filtered count checks it itself, so score batches skip this).
   */
  keys(side: EvaluationSide, triples: Int32Array, index: FilterIndexHandle | null, checkFilter: boolean): TaskKeys {
    const rows = triples.length / 3;
    const keep = this.keepMask(triples);
    const kept = keep ? keep.reduce((a, b) => a + b, 0) : rows;
    // One allocation for the key columns; without entity restriction the index ids are the original ids and the
    // columns are shared (they are only read from here on).
    const c = this.compact;
    const cols = new Int32Array((c ? 5 : 3) * kept);
    const origAnchor = cols.subarray(0, kept);
    const origTruth = cols.subarray(kept, 2 * kept);
    const relation = cols.subarray(2 * kept, 3 * kept);
    const anchor = c ? cols.subarray(3 * kept, 4 * kept) : origAnchor;
    const truth = c ? cols.subarray(4 * kept, 5 * kept) : origTruth;
    const a = side === "tail" ? 0 : 2;
    const b = 2 - a;
    for (let i = 0, k = 0; i < rows; i++) {
      if (keep && !keep[i]) continue;
      origAnchor[k] = triples[3 * i + a]!;
      origTruth[k] = triples[3 * i + b]!;
      relation[k] = triples[3 * i + 1]!;
      k++;
    }
    if (c) {
      for (let i = 0; i < kept; i++) {
        anchor[i] = c.id(origAnchor[i]!);
        truth[i] = c.id(origTruth[i]!);
      }
    }
    const keys = { side, rows, keep, kept, anchor, relation, truth, origAnchor, origTruth, index };
    if (index && kept > 0 && checkFilter) {
      const missing = index.missing(anchor, relation, truth);
      if (missing >= 0) throw notInFilter(keys, missing);
    }
    return keys;
  }

  /** The kept rows of row-major scores, and under entity restriction only the kept candidate columns. */
  gatherRows(scores: FloatArray, keys: TaskKeys): FloatArray {
    const kept = this.keptEntities;
    if (!kept && keys.kept === keys.rows) return scores;
    const n = this.numCandidates;
    const out = scores instanceof Float32Array ? new Float32Array(keys.kept * n) : new Float64Array(keys.kept * n);
    for (let i = 0, k = 0; i < keys.rows; i++) {
      if (keys.keep && !keys.keep[i]) continue;
      const row = scores.subarray(i * this.numEntities, (i + 1) * this.numEntities);
      if (kept) {
        const dst = k * n;
        for (let j = 0; j < n; j++) out[dst + j] = row[kept[j]!]!;
      } else {
        out.set(row, k * n);
      }
      k++;
    }
    return out;
  }
}
