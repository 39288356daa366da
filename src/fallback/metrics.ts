/**
 * TypeScript twin of native/core/{harmonic,aggregate,expectation,sampling}.cpp: the same algorithms in the same
 * order (compensated sums, histogram of N_i, expm1-centred geometric sweep, counter-based random stream).
 */
import {
  AGGREGATE_FLAGS, AGGREGATE_SLOTS, type CandidateHistogram, ClosedMetricCode, type MetricKernels, StatisticCode,
} from "../kernels";
import { CompensatedSum } from "./compensated";
import { medianMoments } from "./median-moments";

export { CompensatedSum };

// ---- harmonic numbers ------------------------------------------------------------------------------------------
export const HARMONIC_TABLE_LIMIT = 1 << 16;
let tables: { h1: Float64Array; h2: Float64Array } | null = null;

function harmonicTables(): { h1: Float64Array; h2: Float64Array } {
  if (tables) return tables;
  const h1 = new Float64Array(HARMONIC_TABLE_LIMIT + 1);
  const h2 = new Float64Array(HARMONIC_TABLE_LIMIT + 1);
  const s1 = new CompensatedSum();
  const s2 = new CompensatedSum();
  for (let j = 1; j <= HARMONIC_TABLE_LIMIT; j++) {
    const inv = 1 / j;
    s1.add(inv);
    s2.add(inv * inv);
    h1[j] = s1.value();
    h2[j] = s2.value();
  }
  tables = { h1, h2 };
  return tables;
}

const EULER_GAMMA = 0.5772156649015329;
const PI2_OVER_6 = 1.6449340668482264;

export function harmonic1(n: number): number {
  if (n <= HARMONIC_TABLE_LIMIT) return harmonicTables().h1[n]!;
  const x2 = 1 / (n * n);
  const tail = x2 * (1 / 12 - x2 * (1 / 120 - x2 * (1 / 252 - x2 * (1 / 240 - x2 * (1 / 132)))));
  return Math.log(n) + EULER_GAMMA + 0.5 / n - tail;
}

export function harmonic2(n: number): number {
  if (n <= HARMONIC_TABLE_LIMIT) return harmonicTables().h2[n]!;
  const x = 1 / n;
  const x2 = x * x;
  const series = x + 0.5 * x2 + x * x2 * (1 / 6 - x2 * (1 / 30 - x2 * (1 / 42 - x2 * (1 / 30))));
  return PI2_OVER_6 - (series - x2);
}

/** [H_1(n)/n, H_2(n)/n] with one log and one division above the table (native/core/harmonic.cpp). */
export function harmonicMeans(n: number): [number, number] {
  if (n <= HARMONIC_TABLE_LIMIT) {
    const t = harmonicTables();
    return [t.h1[n]! / n, t.h2[n]! / n];
  }
  const x = 1 / n;
  const x2 = x * x;
  const tail1 = x2 * (1 / 12 - x2 * (1 / 120 - x2 * (1 / 252 - x2 * (1 / 240 - x2 * (1 / 132)))));
  const h1 = Math.log(n) + EULER_GAMMA + 0.5 * x - tail1;
  const series = x + 0.5 * x2 + x * x2 * (1 / 6 - x2 * (1 / 30 - x2 * (1 / 42 - x2 * (1 / 30))));
  const h2 = PI2_OVER_6 - (series - x2);
  return [h1 * x, h2 * x];
}

/** H_p(n) for real p: mirrors harmonic_real in native/core/harmonic.cpp. */
export function generalizedHarmonic(n: number, p: number): number {
  const M = 256;
  const s = new CompensatedSum();
  const top = Math.min(n, M);
  for (let j = 1; j <= top; j++) s.add(Math.exp(-p * Math.log(j)));
  if (n <= M) return s.value();
  const logRatio = Math.log(n / M);
  const q = 1 - p;
  const integral = q === 0 ? logRatio : (Math.exp(q * Math.log(M)) * Math.expm1(q * logRatio)) / q;
  const c1 = -p;
  const c3 = -p * (p + 1) * (p + 2);
  const c5 = c3 * (p + 3) * (p + 4);
  const em = (x: number) => {
    const fx = Math.exp(-p * Math.log(x));
    const inv = 1 / x;
    const inv2 = inv * inv;
    return fx / 2 + fx * inv * (c1 / 12 + inv2 * (-c3 / 720 + inv2 * (c5 / 30240)));
  };
  s.add(integral);
  s.add(em(n) - em(M));
  return s.value();
}

// ---- aggregation -----------------------------------------------------------------------------------------------
function aggregateRanks(ranks: Float64Array, weights: Float64Array | null, ks: Float64Array, flags: number) {
  const n = ranks.length;
  const numK = ks.length;
  const w = new CompensatedSum();
  const wr = new CompensatedSum();
  const wlog = new CompensatedSum();
  const winv = new CompensatedSum();
  const hits = Array.from({ length: numK }, () => new CompensatedSum());
  for (let i = 0; i < n; i++) {
    const x = ranks[i]!;
    const wi = weights ? weights[i]! : 1;
    if (weights) w.add(wi);
    wr.add(wi * x);
    wlog.add(wi * Math.log(x));
    winv.add(wi / x);
    for (let j = 0; j < numK; j++) hits[j]!.add(x <= ks[j]! ? wi : 0);
  }
  if (!weights) w.add(n);
  const out = new Float64Array(AGGREGATE_SLOTS.fixed + numK);
  out[AGGREGATE_SLOTS.sumWeights] = w.value();
  out[AGGREGATE_SLOTS.sumRanks] = wr.value();
  out[AGGREGATE_SLOTS.sumLogRanks] = wlog.value();
  out[AGGREGATE_SLOTS.sumInverseRanks] = winv.value();
  for (let j = 0; j < numK; j++) out[AGGREGATE_SLOTS.fixed + j] = hits[j]!.value();
  if (flags & AGGREGATE_FLAGS.variance && n > 0) out[AGGREGATE_SLOTS.sumSquaredDeviations] = squaredDeviations(ranks);
  let invalid = 0;
  for (let i = 0; i < n; i++) if (!(ranks[i]! >= 1 && ranks[i]! <= Number.MAX_VALUE)) invalid++;
  out[AGGREGATE_SLOTS.invalid] = invalid;
  const medians = invalid === 0 && n > 0;
  out[AGGREGATE_SLOTS.median] = medians && flags & (AGGREGATE_FLAGS.median | AGGREGATE_FLAGS.mad) ? median(ranks, weights) : NaN;
  out[AGGREGATE_SLOTS.mad] = medians && flags & AGGREGATE_FLAGS.mad ? medianAbsoluteDeviation(ranks, weights) : NaN;
  return out;
}

function squaredDeviations(r: ArrayLike<number>): number {
  const s = new CompensatedSum();
  for (let i = 0; i < r.length; i++) s.add(r[i]!);
  const mean = s.value() / r.length;
  const d = new CompensatedSum();
  for (let i = 0; i < r.length; i++) d.add((r[i]! - mean) * (r[i]! - mean));
  return d.value();
}

export const NORMAL_QUARTILE = 0.6744897501960817; // Phi^-1(3/4)

function median(values: Float64Array, weights: Float64Array | null): number {
  const n = values.length;
  if (!weights) {
    const v = Float64Array.from(values).sort();
    const mid = n >> 1;
    if (n % 2 === 1) return v[mid]!;
    const lower = v[mid - 1]!;
    const upper = v[mid]!;
    return lower + (upper - lower) / 2;
  }
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => values[a]! - values[b]!);
  const total = new CompensatedSum();
  for (let i = 0; i < n; i++) total.add(weights[i]!);
  const half = total.value() / 2;
  const cum = new CompensatedSum();
  for (let i = 0; i < n; i++) {
    cum.add(weights[order[i]!]!);
    const c = cum.value();
    if (c >= half) {
      const x = values[order[i]!]!;
      if (c === half && i + 1 < n) {
        const y = values[order[i + 1]!]!;
        return x + (y - x) / 2;
      }
      return x;
    }
  }
  return values[order[n - 1]!]!;
}

function medianAbsoluteDeviation(values: Float64Array, weights: Float64Array | null): number {
  const m = median(values, weights);
  const dev = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) dev[i] = Math.abs(values[i]! - m);
  return median(dev, weights) / NORMAL_QUARTILE;
}

// ---- closed forms ----------------------------------------------------------------------------------------------
interface Histogram {
  n: ArrayLike<number>;
  w1: ArrayLike<number>;
  w2: ArrayLike<number>;
  total: number;
}

function candidateHistogram(numCandidates: Float64Array, weights: Float64Array | null): Histogram {
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
  for (let i = 0; i < count; ) {
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

function combine(h: Histogram, fn: (n: number) => [number, number]): Float64Array {
  const e = new CompensatedSum();
  const v = new CompensatedSum();
  for (let b = 0; b < h.n.length; b++) {
    const [mean, variance] = fn(h.n[b]!);
    e.add(h.w1[b]! * mean);
    v.add(h.w2[b]! * variance);
  }
  return Float64Array.of(e.value() / h.total, v.value() / (h.total * h.total));
}

interface GeometricGroup {
  exponent: number;
  n: number;
  multiplicity: number;
}

// ---- centred power sums (mirrors native/core/power_sums.{h,cpp}) -------------------------------------------------
/** Term-by-term sweep limit M of the centred power sums; Euler-Maclaurin above it. */
export const POWER_SWEEP_LIMIT = 256;

/** expm1(a log x), by its Taylor polynomial when `small` (|a log x| < 0.02). */
function centredPower(a: number, x: number, small: boolean): number {
  const u = a * Math.log(x);
  if (!small) return Math.expm1(u);
  return u * (1 + u * (1 / 2 + u * (1 / 6 + u * (1 / 24 + u * (1 / 120 + u * (1 / 720 + u * (1 / 5040)))))));
}

/** log1p(x) by its Taylor polynomial for |x| < 0.02 (to x^5 below 1e-4), Math.log1p above. */
export function log1pSmall(x: number): number {
  const ax = Math.abs(x);
  if (ax < 1e-4) return x * (1 + x * (-1 / 2 + x * (1 / 3 + x * (-1 / 4 + x * (1 / 5)))));
  if (!(ax < 0.02)) return Math.log1p(x);
  return x * (1 + x * (-1 / 2 + x * (1 / 3 + x * (-1 / 4 + x * (1 / 5 + x * (-1 / 6 + x * (1 / 7 +
    x * (-1 / 8 + x * (1 / 9 + x * (-1 / 10 + x * (1 / 11 + x * (-1 / 12))))))))))));
}

const falling3 = (b: number) => b * (b - 1) * (b - 2);
const falling5 = (b: number) => b * (b - 1) * (b - 2) * (b - 3) * (b - 4);

/** Euler-Maclaurin part T(x) = F + f/2 + f'/12 - f'''/720 + f^(5)/30240 of S1 = sum e_j and S2 = sum e_j^2. */
class PowerTail {
  readonly f1: number;
  readonly f2: number;
  readonly d1: number;
  readonly d3: number;
  readonly d5: number;
  readonly e3: number;
  readonly e5: number;
  constructor(readonly a: number, readonly small: boolean) {
    this.f1 = 1 / (1 + a);
    this.f2 = 1 / ((1 + a) * (1 + 2 * a));
    this.d1 = a / 12;
    this.d3 = -falling3(a) / 720;
    this.d5 = falling5(a) / 30240;
    this.e3 = -falling3(2 * a) / 720;
    this.e5 = falling5(2 * a) / 30240;
  }
  at(x: number): [number, number] {
    const a = this.a;
    const e = centredPower(a, x, this.small);
    const p = 1 + e;
    const inv = 1 / x;
    const inv2 = inv * inv;
    const inv3 = inv2 * inv;
    const inv5 = inv3 * inv2;
    const t1 = x * (e - a) * this.f1 + 0.5 * e + p * (this.d1 * inv + this.d3 * inv3 + this.d5 * inv5);
    const t2 = x * (e * e * (1 + a) - 2 * a * e + 2 * a * a) * this.f2 + 0.5 * e * e + 2 * this.d1 * p * e * inv +
      (this.e3 * p * p - 2 * this.d3 * p) * inv3 + (this.e5 * p * p - 2 * this.d5 * p) * inv5;
    return [t1, t2];
  }
}

/**
 * Adds, for one exponent a and sorted distinct n (groups[from..to)), sum_c c*log E[r^a] and
 * sum_c c*log1p(Var[r^a]/E[r^a]^2), from the centred power sums: a sweep up to POWER_SWEEP_LIMIT, Euler-Maclaurin
 * above it.
 */
function sweepExponent(groups: GeometricGroup[], from: number, to: number, logMean: CompensatedSum, logRatio: CompensatedSum) {
  const a = groups[from]!.exponent;
  const maxN = groups[to - 1]!.n;
  const small = a * Math.log(Math.max(maxN, 2)) < 0.02;
  const limit = Math.min(maxN, POWER_SWEEP_LIMIT);
  const accumulate = (x: number, m: number, sum1: number, sum2: number) => {
    const inv = 1 / x;
    const meanE = sum1 * inv;
    const variance = Math.max(0, sum2 * inv - meanE * meanE);
    const mu = 1 + meanE;
    logMean.add(m * log1pSmall(meanE));
    logRatio.add(m * log1pSmall(variance / (mu * mu)));
  };
  const s1 = new CompensatedSum();
  const s2 = new CompensatedSum();
  let g = from;
  for (let j = 1; j <= limit; j += 1) {
    const e = centredPower(a, j, small);
    s1.add(e);
    s2.add(e * e);
    for (; g < to && groups[g]!.n === j; g++) accumulate(j, groups[g]!.multiplicity, s1.value(), s2.value());
  }
  if (g === to) return;
  const base1 = s1.value();
  const base2 = s2.value();
  const tail = new PowerTail(a, small);
  const [m1, m2] = tail.at(POWER_SWEEP_LIMIT);
  for (; g < to; g++) {
    const [t1, t2] = tail.at(groups[g]!.n);
    accumulate(groups[g]!.n, groups[g]!.multiplicity, base1 + (t1 - m1), base2 + (t2 - m2));
  }
}

function geometricMoments(numCandidates: Float64Array, weights: Float64Array): Float64Array {
  const count = numCandidates.length;
  const groups: GeometricGroup[] = [];
  {
    const total = new CompensatedSum();
    for (let i = 0; i < count; i++) total.add(weights[i]!);
    const w = total.value();
    const pairs = Array.from({ length: count }, (_, i) => [weights[i]! / w, numCandidates[i]!] as const);
    pairs.sort((p, q) => (p[0] !== q[0] ? p[0] - q[0] : p[1] - q[1]));
    for (let i = 0; i < count; ) {
      let j = i;
      while (j < count && pairs[j]![0] === pairs[i]![0] && pairs[j]![1] === pairs[i]![1]) j++;
      groups.push({ exponent: pairs[i]![0], n: pairs[i]![1], multiplicity: j - i });
      i = j;
    }
  }
  return geometricFromGroups(groups);
}

function geometricFromGroups(groups: GeometricGroup[]): Float64Array {
  const logMean = new CompensatedSum();
  const logRatio = new CompensatedSum();
  for (let i = 0; i < groups.length; ) {
    let j = i;
    while (j < groups.length && groups[j]!.exponent === groups[i]!.exponent) j++;
    sweepExponent(groups, i, j, logMean, logRatio);
    i = j;
  }
  const mean = Math.exp(logMean.value());
  return Float64Array.of(mean, mean * mean * Math.expm1(logRatio.value()));
}

function histogramMoments(metric: ClosedMetricCode, h: Histogram, count: number, k: number): Float64Array {
  switch (metric) {
    case ClosedMetricCode.ArithmeticMean:
      return combine(h, (n) => [(n + 1) / 2, ((n - 1) * (n + 1)) / 12]);
    case ClosedMetricCode.InverseHarmonicMean:
      return combine(h, (n) => {
        const [mean, second] = harmonicMeans(n);
        return [mean, Math.max(0, second - mean * mean)];
      });
    case ClosedMetricCode.Hits:
      return combine(h, (n) => {
        const hit = Math.min(k, n);
        const p = hit / n;
        return [p, p * ((n - hit) / n)];
      });
    case ClosedMetricCode.GeometricMean: {
      const groups = Array.from(h.n, (n, b) => ({ exponent: 1 / count, n, multiplicity: h.w1[b]! }));
      return geometricFromGroups(groups);
    }
  }
  throw new Error(`unknown closed metric ${metric as number}`);
}

function closedMoments(metric: ClosedMetricCode, numCandidates: Float64Array, weights: Float64Array | null, k: number) {
  if (metric === ClosedMetricCode.GeometricMean && weights) return geometricMoments(numCandidates, weights);
  return histogramMoments(metric, candidateHistogram(numCandidates, weights), numCandidates.length, k);
}

function toTyped(h: Histogram): CandidateHistogram {
  const w1 = Float64Array.from(h.w1);
  return { values: Float64Array.from(h.n), w1, w2: h.w2 === h.w1 ? w1 : Float64Array.from(h.w2), totalWeight: h.total };
}

function fromTyped(h: CandidateHistogram): Histogram {
  return { n: h.values, w1: h.w1, w2: h.w2, total: h.totalWeight };
}

// ---- sampling --------------------------------------------------------------------------------------------------
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function mix32(a: number, b: number): number {
  return fmix32(a ^ ((Math.imul(b, 0x9e3779b1) + 0x7f4a7c15) >>> 0));
}

/** Key of the stream (seed, sample). */
export function streamKey(seed: number, sample: number): number {
  return mix32(seed, sample);
}

/** Uniform double in [0, 1): element `index` of stream `key`; bit-identical to native/core/sampling.h. */
export function uniform01Keyed(key: number, index: number): number {
  const h = mix32(key, index);
  const hi = h >>> 5;
  const lo = fmix32((h + 0x63d83595) >>> 0) >>> 6;
  return (hi * 67108864 + lo) * (1 / 9007199254740992);
}

export function uniform01(seed: number, sample: number, index: number): number {
  return uniform01Keyed(streamKey(seed, sample), index);
}

function generateRanksInto(numCandidates: Float64Array, seed: number, sample: number, out: Float64Array): Float64Array {
  const key = streamKey(seed, sample);
  for (let i = 0; i < numCandidates.length; i++) out[i] = 1 + Math.floor(uniform01Keyed(key, i) * numCandidates[i]!);
  return out;
}

function statisticOf(stat: StatisticCode, r: Float64Array, w: Float64Array | null, k: number): number {
  const n = r.length;
  switch (stat) {
    case StatisticCode.Median:
      return median(r, w);
    case StatisticCode.Mad:
      return medianAbsoluteDeviation(r, w);
    case StatisticCode.Count:
      return n;
    case StatisticCode.Variance:
      return squaredDeviations(r) / n;
    default:
      break;
  }
  // Plain sums in index order, as native/core/sampling.cpp.
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    const x = r[i]!;
    let v: number;
    if (stat === StatisticCode.Mean) v = x;
    else if (stat === StatisticCode.GeometricMean) v = Math.log(x);
    else if (stat === StatisticCode.InverseHarmonic) v = 1 / x;
    else v = x <= k ? 1 : 0;
    if (w) {
      num += w[i]! * v;
      den += w[i]!;
    } else {
      num += v;
    }
  }
  if (!w) den = n;
  const mean = num / den;
  return stat === StatisticCode.GeometricMean ? Math.exp(mean) : mean;
}

export const tsMetricKernels: MetricKernels = {
  aggregateRanks: (ranks, weights, ks, flags) => aggregateRanks(ranks, weights, ks, flags),
  medianRanks: (values, weights, mad) => (mad ? medianAbsoluteDeviation(values, weights) : median(values, weights)),
  closedMoments,
  medianMoments: (numCandidates) => {
    const m = medianMoments(numCandidates);
    return Float64Array.of(m.expectation, m.variance);
  },
  candidateHistogram: (numCandidates, weights) => toTyped(candidateHistogram(numCandidates, weights)),
  histogramMoments: (metric, h, count, k) => histogramMoments(metric, fromTyped(h), count, k),
  sampleStatistic(numCandidates, weights, numSamples, seed, statistic, k) {
    const out = new Float64Array(numSamples);
    const ranks = new Float64Array(numCandidates.length);
    for (let s = 0; s < numSamples; s++) {
      out[s] = statisticOf(statistic, generateRanksInto(numCandidates, seed, s, ranks), weights, k);
    }
    return out;
  },
  generateRanks: (numCandidates, seed, sample) =>
    generateRanksInto(numCandidates, seed, sample, new Float64Array(numCandidates.length)),
  harmonic: (n, order) => (order === 1 ? harmonic1(n) : harmonic2(n)),
  generalizedHarmonic,
};
