/**
 * kgrank-native: rank-based evaluation of knowledge-graph link prediction.
 * The public surface; see README.md.
 */
export { backendInfo } from "./backend/backend";
export type { BackendInfo, BackendTier } from "./backend/backend";
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
export type { BackendName, FloatArray, SimdLevel } from "./contract/kernels";
export type { AsyncOptions, Progress } from "./backend/call-control";
export { RankCounter } from "./ranking/rank-counter";
export type { RankChunk, RankCounterOptions } from "./ranking/rank-counter";
export { computeRanks, computeRanksSync, computeSampledRanks, computeSampledRanksSync } from "./ranking/ranks";
export type { ComputeRanksOptions, ComputeSampledRanksOptions, Ranks } from "./ranking/ranks";
export { NoClosedFormError, UnknownMetricError } from "./checks/errors";
export {
  affine,
  DEFAULT_KS,
  expectationNormalized,
  generateNumCandidatesAndRanks,
  generateRanks,
  getMetric,
  listMetrics,
  metricSelection,
  metricValues,
  parseMetricKey,
  prepareCandidates,
  reindexed,
  zScored,
  zToPValue,
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
  ParsedMetricKey,
  RankMetric,
  RankType,
  ValueRange,
} from "./metrics/index";
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
export { TEMPORAL_SETTINGS, TemporalEvaluator } from "./evaluation/temporal";
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
export { predictTopK, predictTopKAsync } from "./scoring/top-k";
export type { PredictTopKOptions } from "./scoring/top-k";
export { mergeTopK } from "./ranking/top-k";
export type { TopKList, TopKPredictions } from "./ranking/top-k";
export { evaluateWikiKG90Mv2 } from "./ranking/wikikg90mv2";
export type { WikiKG90Mv2Input, WikiKG90Mv2Result } from "./ranking/wikikg90mv2";
export type { Scorer } from "./scoring/baseline";
export { decodeNpyData, encodeNpy, parseNpy, parseNpyHeader, readNpy, readNpyAsync, writeNpy } from "./io/npy";
export type {
  NpyArray,
  NpyData,
  NpyDtype,
  NpyFloatArray,
  NpyFloatType,
  NpyHeader,
  ReadNpyAsyncOptions,
  ReadNpyOptions,
} from "./io/npy";
export { parseNpz, readNpz } from "./io/npz";
export { parseSafetensors, readSafetensors } from "./io/safetensors";
export { labelMaps, mapTriples, readTriples, splitTsvTriples } from "./io/tsv";
export type { LabelMaps, TriplesFile } from "./io/tsv";
export { parseQuadruples, readQuadruples } from "./io/quadruples";
export { parseCandidateText, readCandidateFile } from "./io/candidate-file";
export type { CandidateFileOptions, CandidateTextOptions } from "./io/candidate-file";
export type { QuadrupleDataset, QuadrupleTexts } from "./io/quadruples";
export { BUNDLED_DATASETS, EXTERNAL_DATASETS, loadDataset, loadDatasetAsync } from "./io/datasets";
export type { Dataset, LoadDatasetAsyncOptions, LoadDatasetOptions, Split } from "./io/datasets";
export { writeFileAtomic } from "./io/atomic";
export { ogbEvaluate, ogbEvaluateSync } from "./ranking/ogb";
export { compareRuns } from "./compare/paired";
export type { Comparison, ComparisonRow, CompareOptions, NamedRun, TaskLabels } from "./compare/paired";
export type { OgbInput, OgbLists } from "./ranking/ogb";
