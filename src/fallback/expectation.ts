/**
 * Closed-form expectation and variance of MR, MRR, Hits@k, MRR@k and the geometric mean under uniform ranks, from the
 * histogram of N_i. Twin of native/core/expectation.{h,cpp}: one routine per formula, one blocked combine (fixed
 * blocks of BIN_BLOCK bins merged in block order, as the native parallel one, so the bits agree), the weighted
 * geometric mean grouped by exponent through the same per-exponent routine.
 */
import { type CandidateHistogram, ClosedMetricCode } from "../contract/kernels";
import { CompensatedSum } from "../numeric/compensated";
import { harmonic1, harmonic2, harmonicMeans } from "./harmonic";
import { log1pSmall, powerSweep } from "./power-sums";

export interface Histogram {
  n: ArrayLike<number>;
  w1: ArrayLike<number>;
  w2: ArrayLike<number>;
  total: number;
}

/** Tasks grouped by distinct N (sorted), with weight sums w1 and squared-weight sums w2 (candidate_histogram). */
export function candidateHistogram(numCandidates: Float64Array, weights: Float64Array | null): Histogram {
  const count = numCandidates.length;
  if (!weights) {
    let maxN = 0;
    for (let i = 0; i < count; i++) maxN = Math.max(maxN, numCandidates[i]!);
    if (maxN <= 8 * count + 4096) {
      // Dense counting (as the native path): one counter per value 1..max N.
      const counts = new Uint32Array(maxN + 1);
      let distinct = 0;
      for (let i = 0; i < count; i++) {
        const x = numCandidates[i]!;
        const c = counts[x]!;
        counts[x] = c + 1;
        if (c === 0) distinct++;
      }
      const n = new Float64Array(distinct);
      const w = new Float64Array(distinct);
      for (let v = 1, b = 0; v <= maxN; v++) {
        if (counts[v] === 0) continue;
        n[b] = v;
        w[b++] = counts[v]!;
      }
      return { n, w1: w, w2: w, total: count };
    }
  }
  const h = { n: [] as number[], w1: [] as number[], w2: [] as number[], total: 0 };
  if (!weights) {
    const counts = new Map<number, number>();
    for (let i = 0; i < count; i++) counts.set(numCandidates[i]!, (counts.get(numCandidates[i]!) ?? 0) + 1);
    for (const v of [...counts.keys()].sort((a, b) => a - b)) {
      const c = counts.get(v)!;
      h.n.push(v);
      h.w1.push(c);
      h.w2.push(c);
    }
    h.total = count;
    return h;
  }
  const order = Array.from({ length: count }, (_, i) => i).sort((a, b) => numCandidates[a]! - numCandidates[b]!);
  const total = new CompensatedSum();
  for (let i = 0; i < count;) {
    const s1 = new CompensatedSum();
    const s2 = new CompensatedSum();
    const v = numCandidates[order[i]!]!;
    let j = i;
    for (; j < count && numCandidates[order[j]!] === v; j++) {
      const wj = weights[order[j]!]!;
      s1.add(wj);
      s2.add(wj * wj);
    }
    h.n.push(v);
    h.w1.push(s1.value());
    h.w2.push(s2.value());
    total.merge(s1);
    i = j;
  }
  h.total = total.value();
  return h;
}

// ---- one routine per formula --------------------------------------------------------------------------------------
const arithmeticMoments = (n: number): [number, number] => [(n + 1) / 2, ((n - 1) * (n + 1)) / 12];

function inverseHarmonicMoments(n: number): [number, number] {
  const [mean, second] = harmonicMeans(n);
  return [mean, Math.max(0, second - mean * mean)];
}

function hitsMoments(n: number, k: number): [number, number] {
  const hit = Math.min(k, n);
  const p = hit / n;
  return [p, p * ((n - hit) / n)];
}

/** MRR@k, one task: E[X] = H_1(m)/n, E[X^2] = H_2(m)/n with m = min(floor(k), n) (truncated_inverse_moments). */
function truncatedInverseMoments(n: number, k: number): [number, number] {
  const m = Math.min(Math.floor(k), n);
  const mean = harmonic1(m) / n;
  return [mean, Math.max(0, harmonic2(m) / n - mean * mean)];
}

/** Adds m log E[r^a] and m log1p(Var[r^a] / E[r^a]^2) of one bin (add_geometric_logs). */
function addGeometricLogs(
  n: number,
  m: number,
  s1: number,
  s2: number,
  logMean: CompensatedSum,
  logRatio: CompensatedSum,
) {
  const inv = 1 / n;
  const meanE = s1 * inv;
  const variance = Math.max(0, s2 * inv - meanE * meanE);
  const mu = 1 + meanE;
  logMean.add(m * log1pSmall(meanE));
  logRatio.add(m * log1pSmall(variance / (mu * mu)));
}

// ---- the one blocked combine ----------------------------------------------------------------------------------
const BIN_BLOCK = 4096;

/** Adds bin(i, a, b) for bins [begin, end) into (intoA, intoB), block by block (blocked_sum). */
function blockedSum(
  begin: number,
  end: number,
  intoA: CompensatedSum,
  intoB: CompensatedSum,
  bin: (i: number, a: CompensatedSum, b: CompensatedSum) => void,
): void {
  for (let from = begin; from < end; from += BIN_BLOCK) {
    const to = Math.min(end, from + BIN_BLOCK);
    const a = new CompensatedSum();
    const b = new CompensatedSum();
    for (let i = from; i < to; i++) bin(i, a, b);
    intoA.merge(a);
    intoB.merge(b);
  }
}

function combine(h: Histogram, fn: (n: number) => [number, number]): Float64Array {
  const e = new CompensatedSum();
  const v = new CompensatedSum();
  blockedSum(0, h.n.length, e, v, (i, a, b) => {
    const [mean, variance] = fn(h.n[i]!);
    a.add(h.w1[i]! * mean);
    b.add(h.w2[i]! * variance);
  });
  return Float64Array.of(e.value() / h.total, v.value() / (h.total * h.total));
}

/** The geometric-mean log terms of one exponent over sorted distinct n with multiplicities (geometric_logs). */
function geometricLogs(
  a: number,
  n: ArrayLike<number>,
  mult: ArrayLike<number>,
  bins: number,
  logMean: CompensatedSum,
  logRatio: CompensatedSum,
): void {
  const sweep = powerSweep(a, n, bins, (i, s1, s2) => addGeometricLogs(n[i]!, mult[i]!, s1, s2, logMean, logRatio));
  blockedSum(sweep.first, bins, logMean, logRatio, (i, lm, lr) => {
    const [s1, s2] = sweep.at(n[i]!);
    addGeometricLogs(n[i]!, mult[i]!, s1, s2, lm, lr);
  });
}

function geometricFinish(logMean: CompensatedSum, logRatio: CompensatedSum): Float64Array {
  const mean = Math.exp(logMean.value());
  return Float64Array.of(mean, mean * mean * Math.expm1(logRatio.value()));
}

/** Weighted geometric mean: exponents w_i / W, tasks grouped by (a, n), one sweep per exponent. */
function weightedGeometricMoments(numCandidates: Float64Array, weights: Float64Array): Float64Array {
  const count = numCandidates.length;
  const total = new CompensatedSum();
  for (let i = 0; i < count; i++) total.add(weights[i]!);
  const w = total.value();
  const pairs = Array.from({ length: count }, (_, i) => [weights[i]! / w, numCandidates[i]!] as const);
  pairs.sort((p, q) => (p[0] !== q[0] ? p[0] - q[0] : p[1] - q[1]));
  const logMean = new CompensatedSum();
  const logRatio = new CompensatedSum();
  for (let i = 0; i < count;) {
    const n: number[] = [];
    const mult: number[] = [];
    let j = i;
    while (j < count && pairs[j]![0] === pairs[i]![0]) {
      let e = j;
      while (e < count && pairs[e]![0] === pairs[j]![0] && pairs[e]![1] === pairs[j]![1]) e++;
      n.push(pairs[j]![1]);
      mult.push(e - j);
      j = e;
    }
    geometricLogs(pairs[i]![0], n, mult, n.length, logMean, logRatio);
    i = j;
  }
  return geometricFinish(logMean, logRatio);
}

/** [E, Var] of a closed form from a histogram; the geometric mean needs it unweighted (histogram_moments). */
export function histogramMoments(metric: ClosedMetricCode, h: Histogram, count: number, k: number): Float64Array {
  switch (metric) {
    case ClosedMetricCode.ArithmeticMean:
      return combine(h, arithmeticMoments);
    case ClosedMetricCode.InverseHarmonicMean:
      return combine(h, inverseHarmonicMoments);
    case ClosedMetricCode.Hits:
      return combine(h, (n) => hitsMoments(n, k));
    case ClosedMetricCode.TruncatedInverse:
      return combine(h, (n) => truncatedInverseMoments(n, k));
    case ClosedMetricCode.GeometricMean: {
      const logMean = new CompensatedSum();
      const logRatio = new CompensatedSum();
      geometricLogs(1 / count, h.n, h.w1, h.n.length, logMean, logRatio);
      return geometricFinish(logMean, logRatio);
    }
  }
  throw new Error(`unknown closed metric ${metric as number}`);
}

/** [E, Var] from the tasks (closed_moments). */
export function closedMoments(
  metric: ClosedMetricCode,
  numCandidates: Float64Array,
  weights: Float64Array | null,
  k: number,
): Float64Array {
  if (metric === ClosedMetricCode.GeometricMean && weights) return weightedGeometricMoments(numCandidates, weights);
  return histogramMoments(metric, candidateHistogram(numCandidates, weights), numCandidates.length, k);
}

export function toTyped(h: Histogram): CandidateHistogram {
  const w1 = Float64Array.from(h.w1);
  return { values: Float64Array.from(h.n), w1, w2: h.w2 === h.w1 ? w1 : Float64Array.from(h.w2), totalWeight: h.total };
}

export function fromTyped(h: CandidateHistogram): Histogram {
  return { n: h.values, w1: h.w1, w2: h.w2, total: h.totalWeight };
}
