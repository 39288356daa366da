/** Native adapter of the metric kernels (native/addon/metrics_bindings.cpp), spread into nativeKernels(). */
import type {
  AggregateRanksArgs,
  CandidateHistogramArgs,
  ClosedMomentsArgs,
  GeneralizedHarmonicArgs,
  GenerateRanksArgs,
  HarmonicArgs,
  HistogramMomentsArgs,
  MedianMomentsArgs,
  MedianRanksArgs,
  PairedResampleArgs,
  SampleStatisticArgs,
} from "../contract/addon";
import type {
  CandidateHistogram,
  ClosedMetricCode,
  MetricKernels,
  ResamplingKind,
  StatisticCode,
} from "../contract/kernels";
import { nativeCall as call } from "./native-call";

/** What native/addon/metrics_bindings.cpp exports: each call takes one record (src/contract/addon.ts). */
export interface NativeMetricsAddon {
  aggregateRanks(args: AggregateRanksArgs): Float64Array;
  medianRanks(args: MedianRanksArgs): number;
  candidateHistogram(args: CandidateHistogramArgs): CandidateHistogram;
  histogramMoments(args: HistogramMomentsArgs): Float64Array;
  closedMoments(args: ClosedMomentsArgs): Float64Array;
  medianMoments(args: MedianMomentsArgs): Float64Array;
  sampleStatistic(args: SampleStatisticArgs): Float64Array;
  generateRanks(args: GenerateRanksArgs): Float64Array;
  pairedResample(args: PairedResampleArgs): Float64Array;
  harmonic(args: HarmonicArgs): number;
  generalizedHarmonic(args: GeneralizedHarmonicArgs): number;
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
    aggregateRanks: (ranks, weights, ks, truncatedKs, flags, t) =>
      call("ranks", () =>
        addon.aggregateRanks({ ranks, weights, ks, truncatedKs, flags, simd: level, threads: t ?? threads }),
      ),
    medianRanks: (values, weights, mad) => call("ranks", () => addon.medianRanks({ values, weights, mad })),
    candidateHistogram: (numCandidates, weights) =>
      weights === null && isSmall(numCandidates)
        ? smallHistogram!(numCandidates)
        : call("numCandidates", () => addon.candidateHistogram({ numCandidates, weights, threads })),
    histogramMoments: (metric, h, count, k, t) =>
      call("numCandidates", () =>
        addon.histogramMoments({
          metric,
          values: h.values,
          w1: h.w1,
          w2: h.w2,
          totalWeight: h.totalWeight,
          count,
          k,
          threads: t ?? threads,
        }),
      ),
    closedMoments: (metric: ClosedMetricCode, numCandidates, weights, k) =>
      call("numCandidates", () => addon.closedMoments({ metric, numCandidates, weights, k })),
    medianMoments: (numCandidates, wantVariance) =>
      call("numCandidates", () => addon.medianMoments({ numCandidates, wantVariance })),
    sampleStatistic: (numCandidates, weights, numSamples, seed, statistic: StatisticCode, k, t) =>
      call("numCandidates", () =>
        addon.sampleStatistic({
          numCandidates,
          weights,
          numSamples,
          seed,
          statistic,
          k,
          simd: level,
          threads: t ?? threads,
        }),
      ),
    generateRanks: (numCandidates, seed, sample) =>
      call("numCandidates", () => addon.generateRanks({ numCandidates, seed, sample, simd: level, threads })),
    pairedResample: (kind: ResamplingKind, c, key, first, count, t) =>
      call("runs", () =>
        addon.pairedResample({
          kind,
          key,
          first,
          count,
          n: c.n,
          x: c.x,
          medians: c.medians,
          simd: level,
          threads: t ?? threads,
        }),
      ),
    harmonic: (n, order) => addon.harmonic({ n, order }),
    generalizedHarmonic: (n, p) => addon.generalizedHarmonic({ n, p }),
  };
}
