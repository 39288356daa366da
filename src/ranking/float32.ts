/** Exact comparison of float64 thresholds against float32 scores. */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The largest float32 that is <= x (x finite or infinite, not NaN). */
function float32Floor(x: number): number {
  const nearest = Math.fround(x);
  if (nearest <= x) return nearest;
  // nearest > x: step one float32 toward -Infinity.
  f32[0] = nearest;
  if (nearest === 0) {
    u32[0] = 0x80000001; // -denorm_min
  } else if (nearest > 0) {
    u32[0] = u32[0]! - 1;
  } else {
    u32[0] = u32[0]! + 1;
  }
  return f32[0]!;
}

/**
 * Thresholds in the element type of the scores, such that counting against them is exact for the original
 * (float64) thresholds: for float32 scores s and a threshold t that no float32 equals, s > t <=> s > floor32(t),
 * and s == t never holds. Returns the converted thresholds and the rows whose equal count must be zeroed.
 */
export function thresholdsFor(
  scores: Float32Array | Float64Array,
  thresholds: ArrayLike<number>,
): { thresholds: Float32Array | Float64Array; inexactRows: number[] } {
  if (scores instanceof Float64Array) {
    return {
      thresholds: thresholds instanceof Float64Array ? thresholds : Float64Array.from(thresholds),
      inexactRows: [],
    };
  }
  if (thresholds instanceof Float32Array) return { thresholds, inexactRows: [] };
  const out = new Float32Array(thresholds.length);
  const inexactRows: number[] = [];
  for (let i = 0; i < thresholds.length; i++) {
    const t = thresholds[i]!;
    const nearest = Math.fround(t);
    if (nearest === t || t !== t) {
      out[i] = nearest;
    } else {
      out[i] = float32Floor(t);
      inexactRows.push(i);
    }
  }
  return { thresholds: out, inexactRows };
}
