/**
 * Top-k lists of predictions (predictTopK, src/scoring/top-k.ts) and their exact merge across entity ranges. A list
 * is the k best candidates of one query by (score descending, entity id ascending), NaN scores never listed, padded
 * with id -1 and score NaN: a set defined by that order, so the lists of disjoint ranges merge into the list of
 * their union bit for bit (the k best of a union are among the k best of each part).
 */
import { KgrankInputError } from "../checks/errors";
import { describe, isArrayLike } from "../checks/validate";

/** One side's lists: `rows` x `k`, row-major. */
export interface TopKList {
  /** Entity ids, best first; -1 pads a row with fewer than k candidates. */
  ids: Int32Array;
  /** Their scores (the values the ranking kernel compares); NaN pads. */
  scores: Float64Array;
}

/** predictTopK's result: per predicted side, one list per query in the order given. */
export interface TopKPredictions {
  k: number;
  /** Queries (rows of each side's list). */
  rows: number;
  /** The candidate entities [begin, end) the lists were taken from. */
  entityRange: [number, number];
  /** Whether known answers were removed (a filter was given). */
  filtered: boolean;
  head?: TopKList;
  tail?: TopKList;
}

const SIDES = ["head", "tail"] as const;

/**
 * Merges predictions of the same queries over disjoint entity ranges that together form one range (entity shards,
 * in any order) into the predictions over that range: bit for bit those one call over the whole range gives.
 */
export function mergeTopK(parts: readonly TopKPredictions[]): TopKPredictions {
  if (!isArrayLike(parts) || parts.length === 0) {
    throw new KgrankInputError("parts", `must be a non-empty array of predictTopK results, got ${describe(parts)}`);
  }
  const first = parts[0]!;
  for (const [i, p] of parts.entries()) {
    if (p === null || typeof p !== "object" || !Array.isArray(p.entityRange)) {
      throw new KgrankInputError(`parts[${i}]`, `must be a predictTopK result, got ${describe(p)}`);
    }
    const same = p.k === first.k && p.rows === first.rows && p.filtered === first.filtered;
    if (!same || SIDES.some((s) => (p[s] === undefined) !== (first[s] === undefined))) {
      throw new KgrankInputError(
        `parts[${i}]`,
        "has other queries, k, sides or filter setting than parts[0]: merge only predictions of the same call over different entity ranges",
      );
    }
  }
  const order = [...parts].sort((a, b) => a.entityRange[0] - b.entityRange[0]);
  for (let i = 1; i < order.length; i++) {
    const [a0, a1] = order[i - 1]!.entityRange;
    const [b0, b1] = order[i]!.entityRange;
    if (b0 !== a1) {
      throw new KgrankInputError(
        "parts",
        `entity ranges [${a0}, ${a1}) and [${b0}, ${b1}) ${b0 < a1 ? "overlap" : "leave a gap"}: give the lists of ranges that tile one range, each once`,
      );
    }
  }
  const { k, rows } = first;
  const merged: TopKPredictions = {
    k,
    rows,
    entityRange: [order[0]!.entityRange[0], order[order.length - 1]!.entityRange[1]],
    filtered: first.filtered,
  };
  for (const side of SIDES) {
    if (!first[side]) continue;
    const lists = parts.map((p) => p[side]!);
    const ids = new Int32Array(rows * k).fill(-1);
    const scores = new Float64Array(rows * k).fill(NaN);
    const pool: number[] = [];
    const poolScore: number[] = [];
    for (let r = 0; r < rows; r++) {
      pool.length = 0;
      poolScore.length = 0;
      for (const l of lists) {
        for (let j = r * k; j < (r + 1) * k && l.ids[j]! >= 0; j++) {
          pool.push(l.ids[j]!);
          poolScore.push(l.scores[j]!);
        }
      }
      const idx = pool.map((_, i) => i);
      idx.sort((a, b) => {
        const sa = poolScore[a]!;
        const sb = poolScore[b]!;
        return sa > sb ? -1 : sa < sb ? 1 : pool[a]! - pool[b]!;
      });
      for (let j = 0; j < Math.min(k, idx.length); j++) {
        ids[r * k + j] = pool[idx[j]!]!;
        scores[r * k + j] = poolScore[idx[j]!]!;
      }
    }
    merged[side] = { ids, scores };
  }
  return merged;
}
