/**
 * Paired resampling of two runs' per-task columns: compare's randomization and bootstrap replicates. Twin of
 * native/core/resample.{h,cpp}, bit for bit: the same draws (src/numeric/random.ts), each column summed in 32
 * interleaved lanes in task order and the lanes folded in halves (lane j += lane j + 16, then + 8, 4, 2, 1), the
 * randomization's medians counted by value and the bootstrap's walked in rank order.
 */
import { type PairedColumns, ResamplingKind } from "../contract/kernels";
import { lowerHalfKeyed, streamKey, uniform01Keyed } from "../numeric/random";

const LANES = 32;

function fold(l: Float64Array, at: number): number {
  for (let width = LANES / 2; width >= 1; width /= 2) {
    for (let j = 0; j < width; j++) l[at + j]! += l[at + j + width]!;
  }
  return l[at]!;
}

/** lo + (hi - lo) / 2 of the two middle values of `total` values, counted by value (countOf(v) of values[v]). */
function medianByValue(countOf: (v: number) => number, values: Float64Array, total: number): number {
  const kLo = Math.floor((total - 1) / 2);
  const kHi = Math.floor(total / 2);
  let seen = 0;
  let lo = 0;
  for (let v = 0; v < values.length; v++) {
    const next = seen + countOf(v);
    if (seen <= kLo && kLo < next) lo = values[v]!;
    if (kHi < next) return lo + (values[v]! - lo) / 2;
    seen = next;
  }
  return lo;
}

/** The same over the drawn tasks: a run's tasks in rank order, each counted as often as it was drawn. */
function medianByOrder(counts: Uint32Array, order: Uint32Array, sorted: Float64Array): number {
  const n = order.length;
  const kLo = Math.floor((n - 1) / 2);
  const kHi = Math.floor(n / 2);
  let seen = 0;
  let lo = 0;
  for (let k = 0; k < n; k++) {
    const next = seen + counts[order[k]!]!;
    if (seen <= kLo && kLo < next) lo = sorted[k]!;
    if (kHi < next) return lo + (sorted[k]! - lo) / 2;
    seen = next;
  }
  return lo;
}

/** Replicates first .. first + count - 1 (count x width: the column sums, then the two medians when asked for). */
export function pairedResample(
  kind: ResamplingKind,
  c: PairedColumns,
  key: number,
  first: number,
  count: number,
): Float64Array {
  const n = c.n;
  const cols = n > 0 ? c.x.length / n : 0;
  const m = c.medians;
  const width = cols + (m ? 2 : 0);
  const out = new Float64Array(count * width);
  if (n === 0) return out;
  const x = c.x;
  const lanes = new Float64Array(cols * LANES);
  const randomization = kind === ResamplingKind.Randomization;
  const swaps = new Uint8Array(randomization ? n : 0);
  const counts = new Uint32Array(randomization ? 0 : n);
  // The randomization's medians: run a's histogram, and both runs' together.
  const histA0 = new Uint32Array(randomization && m ? m.values.length : 0);
  const histAB = new Uint32Array(histA0.length);
  if (histA0.length) {
    for (let i = 0; i < n; i++) {
      histA0[m!.indexA[i]!]!++;
      histAB[m!.indexA[i]!]!++;
      histAB[m!.indexB[i]!]!++;
    }
  }
  const hist = new Uint32Array(histA0.length);
  for (let r = 0; r < count; r++) {
    const k = streamKey(key, first + r);
    const at = r * width;
    lanes.fill(0);
    if (randomization) {
      for (let i = 0; i < n; i++) swaps[i] = lowerHalfKeyed(k, i) ? 1 : 0;
      for (let col = 0; col < cols; col++) {
        const base = col * n;
        const l = col * LANES;
        for (let i = 0; i < n; i++) lanes[l + (i & 31)]! += swaps[i] ? x[base + i]! : 0;
        out[at + col] = fold(lanes, l);
      }
      if (m) {
        hist.set(histA0);
        for (let i = 0; i < n; i++) {
          if (swaps[i]) {
            hist[m.indexA[i]!]!--;
            hist[m.indexB[i]!]!++;
          }
        }
        out[at + cols] = medianByValue((v) => hist[v]!, m.values, n);
        out[at + cols + 1] = medianByValue((v) => histAB[v]! - hist[v]!, m.values, n);
      }
    } else {
      counts.fill(0);
      for (let i = 0; i < n; i++) counts[Math.floor(uniform01Keyed(k, i) * n)]!++;
      for (let col = 0; col < cols; col++) {
        const base = col * n;
        const l = col * LANES;
        for (let i = 0; i < n; i++) lanes[l + (i & 31)]! += counts[i]! * x[base + i]!;
        out[at + col] = fold(lanes, l);
      }
      if (m) {
        out[at + cols] = medianByOrder(counts, m.orderA, m.sortedA);
        out[at + cols + 1] = medianByOrder(counts, m.orderB, m.sortedB);
      }
    }
  }
  return out;
}
