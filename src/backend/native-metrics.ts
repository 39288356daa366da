/** Native adapter of the metric kernels (native/addon/metrics_bindings.cpp), spread into nativeKernels(). */
import type {
  CandidateHistogram,
  ClosedMetricCode,
  MetricKernels,
  ResamplingKind,
  StatisticCode,
} from "../contract/kernels";
import { nativeCall as call } from "./native-call";

/** What native/addon/metrics_bindings.cpp exports. */
export interface NativeMetricsAddon {
  aggregateRanks(
    ranks: Float64Array,
    weights: Float64Array | undefined,
    ks: Float64Array,
    flags: number,
    simd: number,
    threads: number,
  ): Float64Array;
  medianRanks(values: Float64Array, weights: Float64Array | undefined, mad: boolean): number;
  candidateHistogram(
    numCandidates: Float64Array,
    weights: Float64Array | undefined,
    threads?: number,
  ): CandidateHistogram;
  histogramMoments(
    metric: number,
    values: Float64Array,
    w1: Float64Array,
    w2: Float64Array,
    totalWeight: number,
    count: number,
    k: number,
    threads: number,
  ): Float64Array;
  closedMoments(
    metric: number,
    numCandidates: Float64Array,
    weights: Float64Array | undefined,
    k: number,
  ): Float64Array;
  medianMoments(numCandidates: Float64Array, wantVariance?: boolean): Float64Array;
  sampleStatistic(
    numCandidates: Float64Array,
    weights: Float64Array | undefined,
    numSamples: number,
    seed: number,
    statistic: number,
    k: number,
    simd: number,
    threads: number,
  ): Float64Array;
  generateRanks(numCandidates: Float64Array, seed: number, sample: number, simd: number, threads: number): Float64Array;
  pairedResample(
    kind: number,
    key: number,
    first: number,
    count: number,
    n: number,
    x: Float64Array,
    medians: (Uint32Array | Float64Array)[] | undefined,
    simd: number,
    threads: number,
  ): Float64Array;
  harmonic(n: number, order: number): number;
  generalizedHarmonic(n: number, p: number): number;
}

/**
 * Tiny unweighted histograms are counted by the fallback's kernel (`smallHistogram`, passed in by backend.ts): a
 * native call costs about 5 us of fixed overhead (two calls, their arrays and object), while the fallback's dense
 * counter costs O(max N + tasks) and is under 1 us when both are small. Measured with process.cpuUsage over
 * 1e5 candidateHistogram + histogramMoments calls, threads 1: 1 task, N = 5: native 4.9 us, fallback 0.65 us; 2 tasks,
 * N up to 7924: native 4.9 us, fallback 6.4 us (its counter spans max N). Both give the same exact integer counts, so
 * the results do not change; the moments stay native.
 */
const SMALL_HISTOGRAM_TASKS = 64;
const SMALL_HISTOGRAM_MAX_N = 256;

/** `level`: the SIMD level code (KGRANK_SIMD) the aggregate's and the sampler's kernels run at, as the counting kernels'. */
export function nativeMetricKernels(
  addon: NativeMetricsAddon,
  level: number,
  threads: number,
  smallHistogram?: (numCandidates: Float64Array) => CandidateHistogram,
): MetricKernels {
  const isSmall = (n: Float64Array): boolean => {
    if (!smallHistogram || n.length > SMALL_HISTOGRAM_TASKS) return false;
    for (let i = 0; i < n.length; i++) if (!(n[i]! <= SMALL_HISTOGRAM_MAX_N)) return false;
    return true;
  };
  return {
    aggregateRanks: (ranks, weights, ks, flags, t) =>
      call("ranks", () => addon.aggregateRanks(ranks, weights ?? undefined, ks, flags, level, t ?? threads)),
    medianRanks: (values, weights, mad) => call("ranks", () => addon.medianRanks(values, weights ?? undefined, mad)),
    candidateHistogram: (numCandidates, weights) =>
      weights === null && isSmall(numCandidates)
        ? smallHistogram!(numCandidates)
        : call("numCandidates", () => addon.candidateHistogram(numCandidates, weights ?? undefined, threads)),
    histogramMoments: (metric, h, count, k, t) =>
      call("numCandidates", () =>
        addon.histogramMoments(metric, h.values, h.w1, h.w2, h.totalWeight, count, k, t ?? threads),
      ),
    closedMoments: (metric: ClosedMetricCode, numCandidates, weights, k) =>
      call("numCandidates", () => addon.closedMoments(metric, numCandidates, weights ?? undefined, k)),
    medianMoments: (numCandidates, wantVariance) =>
      call("numCandidates", () => addon.medianMoments(numCandidates, wantVariance)),
    sampleStatistic: (numCandidates, weights, numSamples, seed, statistic: StatisticCode, k, t) =>
      call("numCandidates", () =>
        addon.sampleStatistic(numCandidates, weights ?? undefined, numSamples, seed, statistic, k, level, t ?? threads),
      ),
    generateRanks: (numCandidates, seed, sample) =>
      call("numCandidates", () => addon.generateRanks(numCandidates, seed, sample, level, threads)),
    pairedResample: (kind: ResamplingKind, c, key, first, count, t) => {
      const m = c.medians;
      const medians = m ? [m.indexA, m.indexB, m.values, m.orderA, m.orderB, m.sortedA, m.sortedB] : undefined;
      return call("runs", () => addon.pairedResample(kind, key, first, count, c.n, c.x, medians, level, t ?? threads));
    },
    harmonic: (n, order) => addon.harmonic(n, order),
    generalizedHarmonic: (n, p) => addon.generalizedHarmonic(n, p),
  };
}
