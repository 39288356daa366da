/**
 * OGB-LSC WikiKG90Mv2's metric on top-10 tail predictions, by the rules its evaluator states
 * (snap-stanford/ogb, ogb/lsc/wikikg90mv2.py, WikiKG90Mv2Evaluator.eval and _calculate_mrr): t_pred_top10 has
 * shape (n, 10) and n is the number of true tails; a row's reciprocal rank is 1 / (j + 1) for the position j
 * (0-based) of the true tail in the row, 0 when it is absent; the MRR is their mean. Entries below 0 (padding)
 * are ignored; when any row lists the same entity (>= 0) twice, the evaluator prints a warning and the MRR is 0
 * for the whole file, not only for that row. Written from those rules; no code of it is copied.
 */
import { KgrankInputError } from "../checks/errors";
import { describe, isArrayLike, options } from "../checks/validate";

export interface WikiKG90Mv2Input {
  /** n x 10 predicted tail ids, row-major (int64 files arrive as exact numbers; bigint is accepted). */
  tPredTop10: ArrayLike<number> | BigInt64Array;
  /** The n true tails. */
  t: ArrayLike<number> | BigInt64Array;
}

export interface WikiKG90Mv2Result {
  /** The evaluator's MRR: the mean reciprocal rank, or 0 when a row holds a duplicate. */
  mrr: number;
  /** Each row's reciprocal rank as if it had no duplicate (0 when the true tail is not among the 10). */
  reciprocalRanks: Float64Array;
  /** Rows that list an entity twice (each makes the evaluator's MRR 0). */
  duplicateRows: number;
}

function ids(name: string, value: unknown): ArrayLike<number | bigint> {
  if (!isArrayLike(value) && !(value instanceof BigInt64Array)) {
    throw new KgrankInputError(name, `must be an array of entity ids, got ${describe(value)}`);
  }
  return value as ArrayLike<number | bigint>;
}

/** WikiKG90Mv2's MRR of top-10 tail predictions (rules: this file's header). */
export function evaluateWikiKG90Mv2(input: WikiKG90Mv2Input): WikiKG90Mv2Result {
  const opts = options("input", input, ["tPredTop10", "t"]);
  const pred = ids("tPredTop10", opts.tPredTop10);
  const t = ids("t", opts.t);
  const n = t.length;
  if (n === 0) throw new KgrankInputError("t", "is empty: give one true tail per predicted row");
  if (pred.length !== 10 * n) {
    throw new KgrankInputError(
      "tPredTop10",
      `has ${pred.length} ids, not 10 per true tail (${n} tails): give shape (${n}, 10), row-major, as WikiKG90Mv2's t_pred_top10`,
    );
  }
  const rr = new Float64Array(n);
  let duplicateRows = 0;
  const seen = new Set<number>();
  for (let i = 0; i < n; i++) {
    const truth = Number(t[i]!);
    seen.clear();
    let dup = false;
    let pos = -1;
    for (let j = 0; j < 10; j++) {
      const v = Number(pred[10 * i + j]!);
      if (v >= 0) {
        if (seen.has(v)) dup = true;
        seen.add(v);
      }
      if (pos < 0 && v === truth) pos = j;
    }
    if (dup) duplicateRows++;
    rr[i] = pos < 0 ? 0 : 1 / (pos + 1);
  }
  let sum = 0;
  for (let i = 0; i < n; i++) sum += rr[i]!;
  return { mrr: duplicateRows > 0 ? 0 : sum / n, reciprocalRanks: rr, duplicateRows };
}
