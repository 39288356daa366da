/**
 * compareRuns' statistics on finished numbers: the replicates' differences sorted between event-loop turns, the
 * p-value adjustments over all (metric, run) pairs, and the per-task tests (paired t-test, Wilcoxon signed-rank,
 * Cohen's d_z) of the metrics that are means of per-task values.
 */
import { STEP, type Steps } from "../io/steps";
import { normalTwoSided, studentTwoSided, wilcoxonExactTwoSided } from "./distributions";

/** Values per block of sortedNumbers()'s first pass, each block sorted in one step (well under a millisecond). */
const SORT_BLOCK = 1 << 14;

/** x <= y in Float64Array.prototype.sort's order of numbers: ascending, -0 before +0. */
const notAfter = (x: number, y: number) => x < y || (x === y && (x !== 0 || 1 / x <= 1 / y));

/**
 * The values of `x` that are not NaN, sorted as Float64Array.prototype.sort sorts them (ascending, -0 before +0), in
 * steps of at most STEP elements: blocks sorted natively, then merged pairwise. Equal numbers are equal bits (but
 * for zeros, which notAfter orders), so the result is the native sort's bit for bit.
 */
export function* sortedNumbers(x: Float64Array): Steps<Float64Array> {
  let a = new Float64Array(x.length);
  let m = 0;
  for (let start = 0; start < x.length; start += STEP) {
    const end = Math.min(x.length, start + STEP);
    for (let i = start; i < end; i++) {
      const v = x[i]!;
      if (v === v) a[m++] = v;
    }
    yield;
  }
  a = a.subarray(0, m);
  for (let lo = 0; lo < m; lo += SORT_BLOCK) {
    a.subarray(lo, Math.min(m, lo + SORT_BLOCK)).sort();
    yield;
  }
  let b = new Float64Array(m);
  for (let width = SORT_BLOCK; width < m; width *= 2) {
    for (let lo = 0; lo < m; lo += 2 * width) {
      const mid = Math.min(m, lo + width);
      const hi = Math.min(m, lo + 2 * width);
      let i = lo;
      let j = mid;
      for (let k = lo; k < hi;) {
        const end = Math.min(hi, k + STEP);
        for (; k < end; k++) b[k] = j >= hi || (i < mid && notAfter(a[i]!, a[j]!)) ? a[i++]! : a[j++]!;
        yield;
      }
    }
    [a, b] = [b, a];
  }
  return a;
}

export function adjust(p: number[], how: "holm" | "bh" | "none"): number[] {
  const m = p.length;
  if (how === "none" || m === 0) return [...p];
  const order = p.map((v, i) => [v, i] as const).sort((x, y) => x[0] - y[0]);
  const out = new Array<number>(m);
  if (how === "holm") {
    let running = 0;
    order.forEach(([v, i], k) => {
      running = Math.max(running, Math.min(1, (m - k) * v));
      out[i] = running;
    });
  } else {
    let running = 1;
    for (let k = m - 1; k >= 0; k--) {
      const [v, i] = order[k]!;
      running = Math.min(running, Math.min(1, (m * v) / (k + 1)));
      out[i] = running;
    }
  }
  return out;
}

/** Paired t-test and Wilcoxon signed-rank test of per-task differences d (SciPy's two-sided conventions). */
export function pairedTests(d: ArrayLike<number>): { t: number; pT: number; pW: number; dz: number; wPlus: number } {
  const n = d.length;
  let mean = 0;
  for (let i = 0; i < n; i++) mean += d[i]!;
  mean /= n;
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (d[i]! - mean) ** 2;
  const sd = Math.sqrt(ss / (n - 1));
  const t = mean / (sd / Math.sqrt(n));
  const pT = sd === 0 ? (mean === 0 ? NaN : 0) : studentTwoSided(t, n - 1);
  // Wilcoxon: zeros dropped, |d| ranked with average ranks for ties. W+ sums the average rank of each positive
  // difference: per group of equal |d| in ascending order, its average rank times the positives in it (half-integers
  // times counts: exact sums in any order).
  let m = 0;
  let positives = 0;
  for (let i = 0; i < n; i++) {
    if (d[i] !== 0) m++;
    if (d[i]! > 0) positives++;
  }
  const abs = new Float64Array(m);
  const pos = new Float64Array(positives);
  for (let i = 0, a = 0, p = 0; i < n; i++) {
    const x = d[i]!;
    if (x !== 0) abs[a++] = Math.abs(x);
    if (x > 0) pos[p++] = x;
  }
  abs.sort();
  pos.sort();
  let tieTerm = 0;
  let wPlus = 0;
  for (let k = 0, p = 0; k < m;) {
    let j = k;
    while (j + 1 < m && abs[j + 1] === abs[k]) j++;
    const avg = (k + j) / 2 + 1;
    let count = 0;
    while (p < positives && pos[p] === abs[k]) {
      p++;
      count++;
    }
    wPlus += avg * count;
    const size = j - k + 1;
    if (size > 1) tieTerm += size * (size * size - 1);
    k = j + 1;
  }
  let pW: number;
  if (m === 0) pW = NaN;
  else if (m <= 50 && tieTerm === 0 && m === n) pW = wilcoxonExactTwoSided(wPlus, m);
  else {
    const wMinus = (m * (m + 1)) / 2 - wPlus;
    const stat = Math.min(wPlus, wMinus);
    const se = Math.sqrt((m * (m + 1) * (2 * m + 1) - 0.5 * tieTerm) / 24);
    pW = se === 0 ? NaN : normalTwoSided((stat - (m * (m + 1)) / 4) / se);
  }
  // d_z = mean / sd (ddof 1). Identical runs (every difference 0) have no effect: 0, not 0 / 0. Every task differing
  // by the same non-zero amount is an effect without spread: +-inf. One task: NaN (no standard deviation).
  const dz = sd === 0 ? (mean === 0 ? 0 : mean > 0 ? Infinity : -Infinity) : mean / sd;
  return { t, pT, pW, dz, wPlus };
}
