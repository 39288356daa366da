/** Row-wise counting, the fallback. Twin of native/core/count.{h,cpp} (the scalar kernel of native/core/kernels_scalar.cpp). */
import type { CountBuffers, FloatArray } from "../contract/kernels";

/** Row-wise greater / equal / NaN counts, the fallback's twin of native/core/count.cpp. */
export function countScores(scores: FloatArray, numColumns: number, thresholds: FloatArray, out: CountBuffers): void {
  const rows = thresholds.length;
  const { greater, equal, nan } = out;
  for (let r = 0; r < rows; r++) {
    const t = thresholds[r]!;
    const start = r * numColumns;
    const end = start + numColumns;
    let g = 0;
    let e = 0;
    let u = 0;
    for (let j = start; j < end; j++) {
      const v = scores[j]!;
      // Branch-free counting: comparisons with NaN are false, and v !== v only for NaN.
      g += v > t ? 1 : 0;
      e += v === t ? 1 : 0;
      u += v !== v ? 1 : 0;
    }
    greater[r] = g;
    equal[r] = e;
    nan[r] = u;
  }
}

/** countScores with each row's threshold taken from the row at column trueIndex[r]; thresholds written out. */
export function countScoresByIndex(
  scores: FloatArray,
  numColumns: number,
  trueIndex: Int32Array,
  thresholdsOut: FloatArray,
  out: CountBuffers,
): void {
  for (let r = 0; r < trueIndex.length; r++) thresholdsOut[r] = scores[r * numColumns + trueIndex[r]!]!;
  countScores(scores, numColumns, thresholdsOut, out);
}
