/**
 * The pure-TypeScript backend, file for file the twin of native/core: aggregate.ts, count.ts, expectation.ts,
 * filter-index.ts, harmonic.ts, power-sums.ts, sampling.ts (numerics the facade shares live in src/numeric).
 */
import type {
  CountBuffers,
  EmbeddingRankInput,
  FloatArray,
  KernelControl,
  Kernels,
  MetricKernels,
  PbgAdjustInput,
  PbgCompareInput,
  Side,
  TopKRange,
} from "../contract/kernels";
import { aggregateRanks, median, medianAbsoluteDeviation } from "./aggregate";
import { countScores, countScoresByIndex } from "./count";
import { candidateHistogram, closedMoments, fromTyped, histogramMoments, toTyped } from "./expectation";
import { medianMoments } from "./median-moments";
import { TsFilterIndex } from "./filter-index";
import { firstNonFinite, rankEmbeddings, rankEmbeddingsSliced, scoreRelations, topKEmbeddings } from "./interaction";
import { pbgAdjust, pbgCompare } from "./pbg";
import { generalizedHarmonic, harmonic1, harmonic2 } from "./harmonic";
import { generateRanksInto, sampleStatistic } from "./sampling";
import { pairedResample } from "./resample";
import { bufferRows, inSlices } from "./slices";

/** The row slicing of the fallback's async kernels, for the WebAssembly tier's (src/backend/wasm.ts) to share. */
export const rowSlices = { inSlices, bufferRows };

const tsMetricKernels: MetricKernels = {
  aggregateRanks: (ranks, weights, ks, truncatedKs, flags) => aggregateRanks(ranks, weights, ks, truncatedKs, flags),
  medianRanks: (values, weights, mad) => (mad ? medianAbsoluteDeviation(values, weights) : median(values, weights)),
  closedMoments,
  medianMoments: (numCandidates, wantVariance) => {
    const m = medianMoments(numCandidates, wantVariance);
    return Float64Array.of(m.expectation, m.variance, m.evaluations);
  },
  candidateHistogram: (numCandidates, weights) => toTyped(candidateHistogram(numCandidates, weights)),
  histogramMoments: (metric, h, count, k) => histogramMoments(metric, fromTyped(h), count, k),
  sampleStatistic: (numCandidates, weights, numSamples, seed, statistic, k) =>
    sampleStatistic(numCandidates, weights, numSamples, seed, statistic, k),
  generateRanks: (numCandidates, seed, sample) =>
    generateRanksInto(numCandidates, seed, sample, new Float64Array(numCandidates.length)),
  pairedResample: (kind, columns, key, first, count) => pairedResample(kind, columns, key, first, count),
  harmonic: (n, order) => (order === 1 ? harmonic1(n) : harmonic2(n)),
  generalizedHarmonic,
};

/** The pure-TypeScript backend: identical results to the native one, single-threaded and slower. */
export const tsKernels: Kernels = {
  backend: "ts",
  simd: "none",
  threads: 1,
  ...tsMetricKernels,
  countScores(scores: FloatArray, numColumns: number, thresholds: FloatArray, out: CountBuffers): void {
    countScores(scores, numColumns, thresholds, out);
  },
  async countScoresAsync(
    scores: FloatArray,
    numColumns: number,
    thresholds: FloatArray,
    out: CountBuffers,
    _t?: number,
    control?: KernelControl,
  ) {
    if (!control) return countScores(scores, numColumns, thresholds, out);
    await inSlices(thresholds.length, numColumns, control, [scores, thresholds], (r0, r1) =>
      countScores(
        scores.subarray(r0 * numColumns, r1 * numColumns),
        numColumns,
        thresholds.subarray(r0, r1),
        bufferRows(out, r0, r1),
      ),
    );
  },
  countScoresByIndex(
    scores: FloatArray,
    numColumns: number,
    trueIndex: Int32Array,
    thresholdsOut: FloatArray,
    out: CountBuffers,
  ) {
    countScoresByIndex(scores, numColumns, trueIndex, thresholdsOut, out);
  },
  async countScoresByIndexAsync(
    scores: FloatArray,
    numColumns: number,
    trueIndex: Int32Array,
    thresholdsOut: FloatArray,
    out: CountBuffers,
    _t?: number,
    control?: KernelControl,
  ) {
    if (!control) return countScoresByIndex(scores, numColumns, trueIndex, thresholdsOut, out);
    await inSlices(trueIndex.length, numColumns, control, [scores, trueIndex], (r0, r1) =>
      countScoresByIndex(
        scores.subarray(r0 * numColumns, r1 * numColumns),
        numColumns,
        trueIndex.subarray(r0, r1),
        thresholdsOut.subarray(r0, r1),
        bufferRows(out, r0, r1),
      ),
    );
  },
  firstNonFinite(values: FloatArray) {
    return firstNonFinite(values);
  },
  rankEmbeddings(input: EmbeddingRankInput, out: Float64Array) {
    rankEmbeddings(input, out);
  },
  async rankEmbeddingsAsync(input: EmbeddingRankInput, out: Float64Array, _t?: number, control?: KernelControl) {
    if (!control) return rankEmbeddings(input, out);
    await rankEmbeddingsSliced(input, out, control);
  },
  topKEmbeddings(input: EmbeddingRankInput, range: TopKRange, ids: Int32Array, scores: Float64Array) {
    topKEmbeddings(input, range, ids, scores);
  },
  scoreRelations(input: EmbeddingRankInput, scores: FloatArray) {
    scoreRelations(input, scores);
  },
  pbgAdjust(input: PbgAdjustInput, out: Float64Array) {
    pbgAdjust(input, out);
  },
  pbgCompare(input: PbgCompareInput, out: Float64Array) {
    pbgCompare(input, out);
  },
  buildFilterIndex(triples: Int32Array[], numEntities: number, numRelations: number, side: Side) {
    return new TsFilterIndex(triples, numEntities, numRelations, side);
  },
};
