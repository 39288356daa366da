/**
 * Relation prediction from score matrices: for each evaluated triple (h, r, t) the candidates are the relations,
 * scored in a row of numRelations columns; the filtered setting removes every other relation r' with a known
 * (h, r', t). Ranks come from the same tie-aware count kernel as entity ranks (computeRanksSync, native or fallback);
 * the filter then takes each other known relation out of its row's counts exactly as the entity filter does (a
 * known relation with a NaN score is already no candidate and is not removed twice). The ranks and candidate counts
 * feed RankEvaluator.addRanks, whose expectations and variances follow from the candidate counts.
 */
import { KgrankInputError } from "../checks/errors";
import { floatMatrix, integer, options, optionKeys, threadCount, tripleArray } from "../checks/validate";
import { computeRanksSync, type Ranks } from "../ranking/ranks";

export interface RelationRankerOptions {
  /** Number of entities: heads and tails of every triple are ids in [0, numEntities). */
  numEntities: number;
  /** Number of relations: score rows have this many columns (relation ids 0 .. numRelations-1). */
  numRelations: number;
  /**
   * Known triples for the filtered setting (t x 3 Int32Array: head, relation, tail), one array or several; include
   * the evaluated split (rank() checks that every evaluated triple is in this set). Omit for the unfiltered setting.
   */
  filterTriples?: Int32Array | Int32Array[];
}

export interface RelationBatch {
  /** The evaluated triples: b x 3 (head, relation, tail). */
  triples: Int32Array | ArrayLike<number>;
  /** Row-major b x numRelations scores: row i scores (h_i, r, t_i) for every relation r. NaN marks a non-candidate. */
  scores: Float32Array | Float64Array;
  threads?: number;
}

const RANKER_KEYS = optionKeys<RelationRankerOptions>({ numEntities: 1, numRelations: 1, filterTriples: 1 });
const BATCH_KEYS = optionKeys<RelationBatch>({ triples: 1, scores: 1, threads: 1 });

/** Ranks relations for (h, ?, t) tasks, raw or filtered by known triples; O(known triples) memory. */
export class RelationRanker {
  readonly numEntities: number;
  readonly numRelations: number;
  readonly filtered: boolean;
  /** (h x numEntities + t) -> the relations known between h and t, ascending and distinct. */
  private readonly known = new Map<number, Int32Array>();

  constructor(args: RelationRankerOptions) {
    const fields = options("RelationRanker options", args, RANKER_KEYS);
    this.numEntities = integer("numEntities", fields.numEntities, 1, 2 ** 31 - 1);
    this.numRelations = integer("numRelations", fields.numRelations, 1, 2 ** 31 - 1);
    const given = fields.filterTriples;
    this.filtered = given !== undefined;
    if (given === undefined) return;
    const arrays = Array.isArray(given) ? given : [given];
    if (arrays.length === 0)
      throw new KgrankInputError("filterTriples", "is an empty list: give at least one array, or omit it (raw)");
    const lists = new Map<number, number[]>();
    arrays.forEach((value, k) => {
      const name = Array.isArray(given) ? `filterTriples[${k}]` : "filterTriples";
      const triples = tripleArray(name, value, this.numEntities, this.numRelations);
      for (let i = 0; i < triples.length; i += 3) {
        const key = triples[i]! * this.numEntities + triples[i + 2]!;
        const list = lists.get(key);
        if (list) list.push(triples[i + 1]!);
        else lists.set(key, [triples[i + 1]!]);
      }
    });
    for (const [key, list] of lists) {
      const sorted = Int32Array.from(list).sort();
      let n = 0;
      for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[n - 1]) sorted[n++] = sorted[i]!;
      this.known.set(key, sorted.slice(0, n));
    }
  }

  /** Distinct known triples of the filter (0 when raw). */
  get knownTriples(): number {
    let n = 0;
    for (const list of this.known.values()) n += list.length;
    return n;
  }

  /**
   * Ranks of each triple's true relation among its row's scores (all three rank types) and its candidate count:
   * numRelations, minus NaN-scored relations, minus the other known relations of (h, t) when filtered.
   */
  rank(batch: RelationBatch): Ranks {
    const fields = options("batch", batch, BATCH_KEYS);
    const triples = tripleArray("triples", fields.triples, this.numEntities, this.numRelations);
    const rows = triples.length / 3;
    if (rows === 0) throw new KgrankInputError("triples", "is empty: pass at least one triple");
    const scores = floatMatrix("scores", fields.scores);
    const width = this.numRelations;
    if (scores.length !== rows * width) {
      throw new KgrankInputError(
        "scores",
        `has ${scores.length} elements; a batch of ${rows} triples needs ${rows} x numRelations ${width} = ` +
          `${rows * width} (row-major, one row of relation scores per triple)`,
      );
    }
    const threads = threadCount(fields.threads);
    const truth = new Int32Array(rows);
    for (let i = 0; i < rows; i++) truth[i] = triples[3 * i + 1]!;
    const ranks = computeRanksSync({ scores, numColumns: width, trueIndices: truth, threads });
    if (!this.filtered) return ranks;
    const { optimistic, pessimistic, realistic, numCandidates } = ranks;
    for (let i = 0; i < rows; i++) {
      const [h, r, t] = [triples[3 * i]!, truth[i]!, triples[3 * i + 2]!];
      const list = this.known.get(h * this.numEntities + t);
      if (!list || !list.includes(r)) {
        throw new KgrankInputError(
          "triples",
          `row ${i}: (${h}, ${r}, ${t}) is not in filterTriples; include the evaluated split in filterTriples`,
          i,
        );
      }
      const row = i * width;
      const own = scores[row + r]!;
      let g = 0;
      let e = 0;
      let gone = 0;
      for (let k = 0; k < list.length; k++) {
        const other = list[k]!;
        if (other === r) continue;
        const v = scores[row + other]!;
        g += v > own ? 1 : 0;
        e += v === own ? 1 : 0;
        gone += v === v ? 1 : 0;
      }
      optimistic[i] = optimistic[i]! - g;
      pessimistic[i] = pessimistic[i]! - g - e;
      realistic[i] = 0.5 * (optimistic[i]! + pessimistic[i]!);
      numCandidates[i] = numCandidates[i]! - gone;
    }
    return ranks;
  }
}
