import type { CountBuffers, FloatArray, Kernels, Side } from "../kernels";
import { countScores, countScoresByIndex } from "./count";
import { TsFilterIndex } from "./filter-index";
import { tsMetricKernels } from "./metrics";

/** The pure-TypeScript backend: identical results to the native one, single-threaded and slower. */
export const tsKernels: Kernels = {
  backend: "ts",
  simd: "none",
  threads: 1,
  ...tsMetricKernels,
  countScores(scores: FloatArray, numColumns: number, thresholds: FloatArray, out: CountBuffers): void {
    countScores(scores, numColumns, thresholds, out);
  },
  async countScoresAsync(scores: FloatArray, numColumns: number, thresholds: FloatArray, out: CountBuffers) {
    countScores(scores, numColumns, thresholds, out);
  },
  countScoresByIndex(scores: FloatArray, numColumns: number, trueIndex: Int32Array, thresholdsOut: FloatArray, out: CountBuffers) {
    countScoresByIndex(scores, numColumns, trueIndex, thresholdsOut, out);
  },
  async countScoresByIndexAsync(
    scores: FloatArray, numColumns: number, trueIndex: Int32Array, thresholdsOut: FloatArray, out: CountBuffers,
  ) {
    countScoresByIndex(scores, numColumns, trueIndex, thresholdsOut, out);
  },
  buildFilterIndex(triples: Int32Array[], numEntities: number, numRelations: number, side: Side) {
    return new TsFilterIndex(triples, numEntities, numRelations, side);
  },
};
