/**
 * PyTorch-BigGraph's scores (its docs/source/scoring.rst): f_r(x, y) = c(adjust(x), adjust_r(y)), where
 * adjust(v) = prepare(op(v + g_type)): the type's global embedding added (global_emb), the relation's operator applied
 * (standard relations: to the right-hand side only; dynamic relations: the rhs operator when the left-hand side is
 * ranked, the lhs operator when the right-hand side is), then the comparator's preparation (cos: divided by its
 * norm). With bias the first coordinate is left out of the preparation and the comparison and both sides' first
 * coordinates are added: c(a, b) = (base(a[1:], b[1:]) + a[0]) + b[0]. base: dot and cos a . b, l2
 * -sqrt(max(||a - b||^2, 1e-30)), squared_l2 -||a - b||^2.
 *
 * Everything is float64 from the stored float32 values, in one fixed order of operations per (query, candidate)
 * pair, so equal rows score equal and a candidate's column is its score whichever batch or chunk it is in. The
 * scores are shared by every backend: the counting kernels (native or fallback) then rank them.
 */

export type PbgOperatorName = "none" | "translation" | "diagonal" | "linear" | "affine" | "complex_diagonal";
type PbgComparatorName = "dot" | "cos" | "l2" | "squared_l2";

export interface PbgOperatorValues {
  translation?: Float64Array;
  diagonal?: Float64Array;
  linear_transformation?: Float64Array;
  real?: Float64Array;
  imag?: Float64Array;
}

export interface PbgScoring {
  readonly comparator: PbgComparatorName;
  readonly bias: boolean;
  readonly dimension: number;
}

/**
 * adjust() of n rows of width d (row-major, float32 or float64 values): global embedding, operator, preparation,
 * into a new float64 array.
 */
export function adjustRows(
  s: PbgScoring,
  rows: ArrayLike<number>,
  n: number,
  global: Float64Array | undefined,
  op: PbgOperatorName,
  p: PbgOperatorValues,
): Float64Array {
  const d = s.dimension;
  const out = new Float64Array(n * d);
  const v = new Float64Array(d);
  const h = d >> 1;
  for (let i = 0; i < n; i++) {
    const o = i * d;
    for (let k = 0; k < d; k++) v[k] = global ? rows[o + k]! + global[k]! : rows[o + k]!;
    switch (op) {
      case "none":
        for (let k = 0; k < d; k++) out[o + k] = v[k]!;
        break;
      case "translation":
        for (let k = 0; k < d; k++) out[o + k] = v[k]! + p.translation![k]!;
        break;
      case "diagonal":
        for (let k = 0; k < d; k++) out[o + k] = p.diagonal![k]! * v[k]!;
        break;
      case "linear":
      case "affine": {
        const m = p.linear_transformation!;
        for (let r = 0; r < d; r++) {
          let acc = 0;
          for (let k = 0; k < d; k++) acc += m[r * d + k]! * v[k]!;
          out[o + r] = op === "affine" ? acc + p.translation![r]! : acc;
        }
        break;
      }
      case "complex_diagonal":
        for (let k = 0; k < h; k++) {
          const re = v[k]!;
          const im = v[k + h]!;
          out[o + k] = re * p.real![k]! - im * p.imag![k]!;
          out[o + k + h] = re * p.imag![k]! + im * p.real![k]!;
        }
        break;
    }
    if (s.comparator === "cos") {
      const from = s.bias ? 1 : 0;
      let sq = 0;
      for (let k = from; k < d; k++) sq += out[o + k]! * out[o + k]!;
      const inv = 1 / Math.sqrt(sq);
      for (let k = from; k < d; k++) out[o + k] = out[o + k]! * inv;
    }
  }
  return out;
}

/**
 * c(a, b) of one query row against n candidate rows (adjusted), written to out[at .. at + n). `queryFirst`: the
 * query is the comparator's first argument (its bias added first), as for PBG's left-hand side of a standard
 * relation's tail task; otherwise each candidate is.
 */
export function compareRows(
  s: PbgScoring,
  query: Float64Array,
  qo: number,
  cands: Float64Array,
  n: number,
  queryFirst: boolean,
  out: Float32Array | Float64Array,
  at: number,
): void {
  const d = s.dimension;
  const from = s.bias ? 1 : 0;
  const dot = s.comparator === "dot" || s.comparator === "cos";
  for (let j = 0; j < n; j++) {
    const co = j * d;
    let acc = 0;
    if (dot) {
      for (let k = from; k < d; k++) acc += query[qo + k]! * cands[co + k]!;
    } else {
      for (let k = from; k < d; k++) {
        const x = query[qo + k]! - cands[co + k]!;
        acc += x * x;
      }
      acc = s.comparator === "l2" ? -Math.sqrt(Math.max(acc, 1e-30)) : -acc;
    }
    if (s.bias) acc = queryFirst ? acc + query[qo]! + cands[co]! : acc + cands[co]! + query[qo]!;
    out[at + j] = acc;
  }
}
