/**
 * PyTorch-BigGraph's scores through the backend's kernels (Kernels.pbgAdjust and pbgCompare: native/core/pbg.cpp,
 * twin src/fallback/pbg.ts, which says what is computed). Every (query, candidate) score is one fixed sequence of
 * float64 operations on every backend, so the backends count the same numbers and a candidate's score is the same
 * whichever batch, chunk or entity shard it is in.
 */
import { kernels } from "../backend/backend";
import type { FloatArray, PbgOperatorName, PbgOperatorValues, PbgScoring } from "../contract/kernels";

/**
 * Whether adjust() leaves rows as they are (operator none, no global embedding, no cos preparation): such rows are
 * compared as stored (float32 values convert to float64 exactly), with no float64 copy of the table.
 */
export function adjustsNothing(
  scoring: PbgScoring,
  global: Float64Array | undefined,
  operator: PbgOperatorName,
): boolean {
  return operator === "none" && global === undefined && scoring.comparator !== "cos";
}

/** adjust() of n rows of width d (row-major): global embedding, operator, preparation, into a new float64 array. */
export function adjustRows(
  scoring: PbgScoring,
  rows: FloatArray,
  count: number,
  global: Float64Array | undefined,
  operator: PbgOperatorName,
  params: PbgOperatorValues,
): Float64Array {
  const out = new Float64Array(count * scoring.dimension);
  const values = rows.subarray(0, count * scoring.dimension);
  kernels().pbgAdjust({ scoring, rows: values, count, global, operator, params }, out);
  return out;
}

/**
 * c(a, b) of numQueries adjusted query rows against count adjusted candidate rows: query j's scores to
 * out[j * outStride + outOffset ..]. `queryFirst`: the query is the comparator's first argument (its bias added
 * first), as for PBG's left-hand side of a standard relation's tail task; otherwise each candidate is.
 */
export function compareRows(
  scoring: PbgScoring,
  queries: Float64Array,
  numQueries: number,
  candidates: FloatArray,
  count: number,
  queryFirst: boolean,
  out: Float64Array,
  outStride: number,
  outOffset: number,
): void {
  const d = scoring.dimension;
  kernels().pbgCompare(
    {
      scoring,
      queries: queries.subarray(0, numQueries * d),
      numQueries,
      candidates: candidates.subarray(0, count * d),
      numCandidates: count,
      queryFirst,
      outStride,
      outOffset,
    },
    out,
  );
}
