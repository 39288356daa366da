/**
 * TypeScript twin of native/core/{harmonic,aggregate,expectation,sampling}.cpp: the same algorithms in the same
 * order (compensated sums, histogram of N_i, expm1-centred geometric sweep, counter-based random stream).
 */
import {
  AGGREGATE_FLAGS, AGGREGATE_SLOTS, type CandidateHistogram, ClosedMetricCode, type MetricKernels, StatisticCode,
} from "../kernels";

/** Neumaier summation (mirrors native/core/compensated.h). */
export class CompensatedSum {
  sum = 0;
  error = 0;
  add(x: number): void {
    const t = this.sum + x;
    if (Math.abs(this.sum) >= Math.abs(x)) this.error += this.sum - t + x;
    else this.error += x - t + this.sum;
    this.sum = t;
  }
  merge(o: CompensatedSum): void {
    this.add(o.sum);
    this.add(o.error);
  }
  value(): number {
    return this.sum + this.error;
  }
}

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
  n: number[];
  w1: number[];
  w2: number[];
  total: number;
}

function candidateHistogram(numCandidates: Float64Array, weights: Float64Array | null): Histogram {
  const count = numCandidates.length;
  const h: Histogram = { n: [], w1: [], w2: [], total: 0 };
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

function sweepExponent(groups: GeometricGroup[], from: number, to: number, logMean: CompensatedSum, logRatio: CompensatedSum) {
  const a = groups[from]!.exponent;
  const s1 = new CompensatedSum();
  const s2 = new CompensatedSum();
  let j = 1;
  for (let g = from; g < to; g++) {
    const n = groups[g]!.n;
    for (; j <= n; j += 1) {
      const e = Math.expm1(a * Math.log(j));
      s1.add(e);
      s2.add(e * e);
    }
    const meanE = s1.value() / n;
    const variance = Math.max(0, s2.value() / n - meanE * meanE);
    const mu = 1 + meanE;
    logMean.add(groups[g]!.multiplicity * Math.log1p(meanE));
    logRatio.add(groups[g]!.multiplicity * Math.log1p(variance / (mu * mu)));
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
        const mean = harmonic1(n) / n;
        return [mean, Math.max(0, harmonic2(n) / n - mean * mean)];
      });
    case ClosedMetricCode.Hits:
      return combine(h, (n) => {
        const hit = Math.min(k, n);
        const p = hit / n;
        return [p, p * ((n - hit) / n)];
      });
    case ClosedMetricCode.GeometricMean: {
      const groups = h.n.map((n, b) => ({ exponent: 1 / count, n, multiplicity: h.w1[b]! }));
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
  return { values: Float64Array.from(h.n), w1: Float64Array.from(h.w1), w2: Float64Array.from(h.w2), totalWeight: h.total };
}

function fromTyped(h: CandidateHistogram): Histogram {
  return { n: Array.from(h.values), w1: Array.from(h.w1), w2: Array.from(h.w2), total: h.totalWeight };
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
};
