import type { CountBuffers, FloatArray, Kernels } from "../kernels";
import { countScores } from "./count";
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
};
