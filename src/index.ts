/**
 * kgrank-native: rank-based evaluation of knowledge-graph link prediction. Ranks from scores, embeddings or top-k
 * lists, every rank-based metric with its expectation and variance under random ranking, on a native (C++/SIMD)
 * backend with a pure-TypeScript fallback. The guides are the README and docs/ of the repository.
 *
 * @packageDocumentation
 */
// The public surface (package.json "exports" "."); etc/kgrank-native.api.md is its checked report (`npm run check:api`).
// A name only tests or the CLI use is not exported here: they import it from its module.
export { backendInfo } from "./backend/backend";
export type { BackendInfo, BackendTier, ScreenKernel } from "./backend/backend";
export { countScores, countScoresSync } from "./ranking/count";
export type { CountScoresOptions, CountScoresResult } from "./ranking/count";
export {
  KgrankBackendError,
  KgrankDetachedError,
  KgrankError,
  KgrankInputError,
  KgrankMemoryError,
  KgrankMissingPackageError,
  KgrankStateError,
} from "./checks/errors";
export type { BackendName, CountBuffers, FloatArray, ScreenModeName, Side, SimdLevel } from "./contract/kernels";
export type { AsyncOptions, Progress } from "./backend/call-control";
export { RankCounter } from "./ranking/rank-counter";
export type { RankChunk, RankCounterOptions } from "./ranking/rank-counter";
export { computeRanks, computeRanksSync, computeSampledRanks, computeSampledRanksSync } from "./ranking/ranks";
export type { ComputeRanksOptions, ComputeSampledRanksOptions, Ranks } from "./ranking/ranks";
export { NoClosedFormError, UnknownMetricError } from "./checks/errors";
export {
  affine,
  expectationNormalized,
  generateNumCandidatesAndRanks,
  generateRanks,
  getMetric,
  listMetrics,
  metricValues,
  prepareCandidates,
  reindexed,
  zScored,
} from "./metrics/index";
export type {
  AffineCoefficients,
  CandidateSet,
  Candidates,
  DerivedRankMetric,
  Estimate,
  EstimateOptions,
  Interval,
  MetricKey,
  MetricName,
  MetricQuery,
  RankMetric,
  RankType,
  ValueRange,
} from "./metrics/index";
export type { DerivedNames } from "./metrics/derived";
export { RankEvaluator } from "./evaluation/evaluator";
export type {
  EvaluationInfo,
  EvaluationSide,
  FinalizeOptions,
  RankEvaluatorOptions,
  RanksBatch,
  RelationScoreBatch,
  SampledBatch,
  ScoreBatch,
  SideCounts,
  TaskSide,
  TemporalProtocol,
  Weighting,
} from "./evaluation/evaluator";
export { CandidateSets } from "./ranking/candidate-sets";
export type {
  CandidateProtocol,
  CandidateSetArrays,
  CandidateSetsFromPairsOptions,
  CandidateSetsFromTriplesOptions,
  CandidateSide,
} from "./ranking/candidate-sets";
export { ChunkedBatch } from "./evaluation/chunked";
export type { ChunkedBatchOptions, EntitySlice } from "./evaluation/chunked";
export { RankResults } from "./evaluation/results";
export { RelationRanker } from "./evaluation/relation-ranks";
export { TemporalEvaluator } from "./evaluation/temporal";
export type {
  TemporalEvaluatorOptions,
  TemporalModelBatch,
  TemporalScoreBatch,
  TemporalSetting,
} from "./evaluation/temporal";
export type { RelationBatch, RelationRankerOptions } from "./evaluation/relation-ranks";
export { estimateFull, sampleTasks } from "./evaluation/task-sample";
export { estimateFromSampledRanks } from "./evaluation/sampled-negatives";
export type {
  SampledRankEstimates,
  SampledRankEstimator,
  SampledRanksOptions,
  SampledRankValue,
} from "./evaluation/sampled-negatives";
export type {
  EstimateFullOptions,
  FullEstimate,
  FullEstimates,
  SampleStratum,
  SampleTasksOptions,
  TaskSample,
} from "./evaluation/task-sample";
export type {
  Breakdown,
  DegreeBreakdown,
  DegreeOptions,
  RelationBreakdown,
  RelationCategory,
  RelationCategoryBreakdown,
  ResultRankType,
  ResultSide,
  ResultTable,
  TaskTable,
} from "./evaluation/results";
export type { BootstrapOptions, IntervalTable } from "./evaluation/tabulate";
export { FrequencyBaseline } from "./scoring/baseline";
export { EmbeddingModel, INTERACTIONS } from "./scoring/embedding-model";
export type {
  ComplexLayout,
  EmbeddingMatrix,
  EmbeddingModelOptions,
  EntityRowReader,
  EntityRowSource,
  InteractionName,
} from "./scoring/embedding-model";
export { EntityTableFile, openEntityTable } from "./io/entity-table";
export type { OpenEntityTableOptions } from "./io/entity-table";
export type { StreamPlan } from "./scoring/entity-chunks";
export type { ModelBatch } from "./evaluation/model-batch";
export { loadEmbeddingModel } from "./io/model-dir";
export type { LoadEmbeddingModelOptions } from "./io/model-dir";
export { loadScreenTable, saveScreenTable } from "./io/screen-table";
export { evaluatePbgCheckpoint } from "./evaluation/pbg";
export type { PbgEvaluationOptions } from "./evaluation/pbg";
export { predictTopK, predictTopKAsync } from "./scoring/top-k";
export type { PredictTopKOptions } from "./scoring/top-k";
export { mergeTopK } from "./ranking/top-k";
export type { TopKList, TopKPredictions } from "./ranking/top-k";
export { evaluateWikiKG90Mv2 } from "./ranking/wikikg90mv2";
export type { WikiKG90Mv2Input, WikiKG90Mv2Result } from "./ranking/wikikg90mv2";
export type { Scorer } from "./scoring/baseline";
export { encodeNpy, parseNpy, readNpy, readNpyAsync, writeNpy } from "./io/npy";
export type {
  NpyArray,
  NpyData,
  NpyDtype,
  NpyFloatArray,
  NpyFloatType,
  ReadNpyAsyncOptions,
  ReadNpyOptions,
} from "./io/npy";
export { parseNpz, readNpz } from "./io/npz";
export type { NpzOptions } from "./io/npz";
export { parseSafetensors, readSafetensors } from "./io/safetensors";
export { labelMaps, mapTriples, readTriples, splitTsvTriples } from "./io/tsv";
export type { LabelMaps, TriplesFile } from "./io/tsv";
export { parseQuadruples, readQuadruples } from "./io/quadruples";
export { parseCandidateText, readCandidateFile } from "./io/candidate-file";
export type { CandidateFileOptions, CandidateTextOptions } from "./io/candidate-file";
export type { QuadrupleDataset, QuadrupleTexts } from "./io/quadruples";
export { loadDataset, loadDatasetAsync } from "./io/datasets";
export type { Dataset, LoadDatasetAsyncOptions, LoadDatasetOptions, Split } from "./io/datasets";
export { writeFileAtomic } from "./io/atomic";
export { ogbEvaluate, ogbEvaluateSync } from "./ranking/ogb";
export { compareRuns } from "./compare/paired";
export type { Comparison, ComparisonRow, CompareOptions, NamedRun, TaskLabels } from "./compare/paired";
export type { OgbInput, OgbLists } from "./ranking/ogb";
