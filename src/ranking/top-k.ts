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
    const out: TopKList = { ids: new Int32Array(rows * k).fill(-1), scores: new Float64Array(rows * k).fill(NaN) };
    for (let r = 0; r < rows; r++)
      mergeRow(
        lists.map((l) => [l, r] as const),
        k,
        out,
        r,
      );
    merged[side] = out;
  }
  return merged;
}

/**
 * Row `outRow` of `out` becomes the list of the entries of `sources` (each a list and its row; ranges disjoint): the
 * k best by (score descending, id ascending), padded with -1 / NaN. `out` may be one of the sources.
 */
function mergeRow(sources: readonly (readonly [TopKList, number])[], k: number, out: TopKList, outRow: number): void {
  const ids: number[] = [];
  const scores: number[] = [];
  for (const [l, r] of sources) {
    for (let j = r * k; j < (r + 1) * k && l.ids[j]! >= 0; j++) {
      ids.push(l.ids[j]!);
      scores.push(l.scores[j]!);
    }
  }
  const order = ids.map((_, i) => i);
  order.sort((a, b) => {
    const sa = scores[a]!;
    const sb = scores[b]!;
    return sa > sb ? -1 : sa < sb ? 1 : ids[a]! - ids[b]!;
  });
  for (let j = 0; j < k; j++) {
    out.ids[outRow * k + j] = j < order.length ? ids[order[j]!]! : -1;
    out.scores[outRow * k + j] = j < order.length ? scores[order[j]!]! : NaN;
  }
}

/**
 * Merges `part` (lists of rows row0 .. row0 + part's rows, over an entity range disjoint from those already in
 * `into`) into `into`, row by row: the exact list over the union (predictTopKAsync's pieces).
 */
export function mergeInto(into: TopKList, row0: number, part: TopKList, k: number): void {
  const rows = part.ids.length / k;
  for (let r = 0; r < rows; r++) {
    mergeRow(
      [
        [into, row0 + r],
        [part, r],
      ],
      k,
      into,
      row0 + r,
    );
  }
}
