/** Native adapter of the metric kernels (native/addon/metrics_bindings.cpp), spread into nativeKernels(). */
import type { CandidateHistogram, ClosedMetricCode, MetricKernels, StatisticCode } from "./kernels";
import { nativeCall as call } from "./nativeCall";

/** What native/addon/metrics_bindings.cpp exports. */
export interface NativeMetricsAddon {
  aggregateRanks(ranks: Float64Array, weights: Float64Array | undefined, ks: Float64Array, flags: number,
    simd: number, threads: number): Float64Array;
  medianRanks(values: Float64Array, weights: Float64Array | undefined, mad: boolean): number;
  candidateHistogram(numCandidates: Float64Array, weights: Float64Array | undefined, threads?: number): CandidateHistogram;
  histogramMoments(metric: number, values: Float64Array, w1: Float64Array, w2: Float64Array, totalWeight: number,
    count: number, k: number, threads: number): Float64Array;
  closedMoments(metric: number, numCandidates: Float64Array, weights: Float64Array | undefined, k: number): Float64Array;
  medianMoments(numCandidates: Float64Array, wantVariance?: boolean): Float64Array;
  sampleStatistic(numCandidates: Float64Array, weights: Float64Array | undefined, numSamples: number, seed: number,
    statistic: number, k: number, simd: number, threads: number): Float64Array;
  generateRanks(numCandidates: Float64Array, seed: number, sample: number, simd: number, threads: number): Float64Array;
  harmonic(n: number, order: number): number;
  generalizedHarmonic(n: number, p: number): number;
}

/** `level`: the SIMD level code (KGRANK_SIMD) the aggregate's and the sampler's kernels run at, as the counting kernels'. */
export function nativeMetricKernels(addon: NativeMetricsAddon, level: number, threads: number): MetricKernels {
  return {
    aggregateRanks: (ranks, weights, ks, flags, t) =>
      call("ranks", () => addon.aggregateRanks(ranks, weights ?? undefined, ks, flags, level, t ?? threads)),
    medianRanks: (values, weights, mad) => call("ranks", () => addon.medianRanks(values, weights ?? undefined, mad)),
    candidateHistogram: (numCandidates, weights) =>
      call("numCandidates", () => addon.candidateHistogram(numCandidates, weights ?? undefined, threads)),
    histogramMoments: (metric, h, count, k, t) =>
      call("numCandidates", () => addon.histogramMoments(metric, h.values, h.w1, h.w2, h.totalWeight, count, k, t ?? threads)),
    closedMoments: (metric: ClosedMetricCode, numCandidates, weights, k) =>
      call("numCandidates", () => addon.closedMoments(metric, numCandidates, weights ?? undefined, k)),
    medianMoments: (numCandidates, wantVariance) => call("numCandidates", () => addon.medianMoments(numCandidates, wantVariance)),
    sampleStatistic: (numCandidates, weights, numSamples, seed, statistic: StatisticCode, k, t) =>
      call("numCandidates", () =>
        addon.sampleStatistic(numCandidates, weights ?? undefined, numSamples, seed, statistic, k, level, t ?? threads)),
    generateRanks: (numCandidates, seed, sample) =>
      call("numCandidates", () => addon.generateRanks(numCandidates, seed, sample, level, threads)),
    harmonic: (n, order) => addon.harmonic(n, order),
    generalizedHarmonic: (n, p) => addon.generalizedHarmonic(n, p),
  };
}
