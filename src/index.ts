/**
 * kgrank-native: rank-based evaluation of knowledge-graph link prediction.
 * The public surface; see README.md.
 */
export { backendInfo } from "./backend";
export type { BackendInfo } from "./backend";
export { countScores, countScoresSync } from "./count";
export type { CountScoresOptions, CountScoresResult } from "./count";
export { KgrankBackendError, KgrankError, KgrankInputError } from "./errors";
export type { BackendName, FloatArray, SimdLevel } from "./kernels";
