/**
 * PyTorch-BigGraph's scores (its docs/source/scoring.rst) in float64: the twin of native/core/pbg.cpp, bit for bit.
 * f_r(x, y) = c(adjust(x), adjust_r(y)), where adjust(v) = prepare(op(v + g_type)): the type's global embedding added
 * (global_emb), the relation's operator applied, then the comparator's preparation (cos: divided by its norm). With
 * bias the first coordinate is left out of the preparation and the comparison and both sides' first coordinates are
 * added: c(a, b) = (base(a[1:], b[1:]) + a[0]) + b[0]. base: dot and cos a . b, l2 -sqrt(max(||a - b||^2, 1e-30)),
 * squared_l2 -||a - b||^2.
 *
 * Each value is one fixed sequence of float64 operations (a multiply, then an add; sums in coordinate order from 0),
 * the sequence the native lanes run, so equal rows score equal wherever they sit and every backend writes the same
 * bits.
 */
import type { PbgAdjustInput, PbgCompareInput } from "../contract/kernels";

/** adjust() of input.count rows: global embedding, operator, preparation, into out (count x dimension). */
export function pbgAdjust(input: PbgAdjustInput, out: Float64Array): void {
  const { scoring: s, rows, count: n, global, operator: op, params: p } = input;
  const d = s.dimension;
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
        if (d % 2 === 1) out[o + d - 1] = 0;
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
}

/** c(a, b) of every query row against every candidate row: query j's scores to out[j * outStride + outOffset ..]. */
export function pbgCompare(input: PbgCompareInput, out: Float64Array): void {
  const { scoring: s, queries, numQueries, candidates, numCandidates: n, queryFirst, outStride, outOffset } = input;
  const d = s.dimension;
  const from = s.bias ? 1 : 0;
  const dot = s.comparator === "dot" || s.comparator === "cos";
  for (let q = 0; q < numQueries; q++) {
    const qo = q * d;
    const at = q * outStride + outOffset;
    for (let j = 0; j < n; j++) {
      const co = j * d;
      let acc = 0;
      if (dot) {
        for (let k = from; k < d; k++) acc += queries[qo + k]! * candidates[co + k]!;
      } else {
        for (let k = from; k < d; k++) {
          const x = queries[qo + k]! - candidates[co + k]!;
          acc += x * x;
        }
        acc = s.comparator === "l2" ? -Math.sqrt(Math.max(acc, 1e-30)) : -acc;
      }
      if (s.bias) acc = queryFirst ? acc + queries[qo]! + candidates[co]! : acc + candidates[co]! + queries[qo]!;
      out[at + j] = acc;
    }
  }
}
