/**
 * The records the native addon's calls take: one interface per call, each field read by name in C++
 * (native/addon/args.h Args; a missing or wrong-typed field is a TypeError or RangeError naming the call and the
 * field, e.g. `rankEmbeddings: "queries.anchor" must be an Int32Array`). A sync binding and its async twin take the
 * same record; the async one takes an optional kernel control after it. Optional fields (`?`) may be absent,
 * undefined or null. src/backend/backend.ts builds them; test/addon-boundary.test.ts checks every field's error.
 */
import { type EmbeddingRankInput, type FloatArray, type PairedMedians, SCREEN_MODES } from "./kernels";

/** The SIMD level code (native/core/simd.h SimdLevel) and thread count (0 = hardware threads) of a kernel call. */
interface KernelOptions {
  simd: number;
  threads: number;
}

/** countScores: rows x numColumns scores counted against one threshold per row (native/core/count.h count_rows). */
export interface CountScoresArgs extends KernelOptions {
  scores: FloatArray;
  numColumns: number;
  /** One per row, scores' type. */
  thresholds: FloatArray;
  greater: Float64Array;
  equal: Float64Array;
  nan: Float64Array;
}

/** countScoresByIndex: as countScores, the thresholds gathered from each row's trueIndex column and written. */
export interface CountScoresByIndexArgs extends CountScoresArgs {
  trueIndex: Int32Array;
}

/** new FilterIndex(record) (native/core/filter_index.h). */
export interface FilterIndexArgs {
  triples: Int32Array[];
  numEntities: number;
  numRelations: number;
  /** 0 = head, 1 = tail. */
  side: 0 | 1;
  threads: number;
}

/** FilterIndex.answers: the known answers of one key. */
export interface AnswersArgs {
  anchor: number;
  relation: number;
}

/** FilterIndex.missing: the first row whose answer is not known, or -1. */
export interface MissingArgs {
  anchor: Int32Array;
  relation: Int32Array;
  answer: Int32Array;
}

/** FilterIndex.answerCounts: each triple's known-answer count into `out`. */
export interface AnswerCountsArgs {
  triples: Int32Array;
  out: Float64Array;
}

/** FilterIndex.countFiltered: whole rows (rows x numEntities); thresholds gathered from truth and written. */
export interface CountFilteredArgs extends KernelOptions {
  scores: FloatArray;
  anchor: Int32Array;
  relation: Int32Array;
  truth: Int32Array;
  thresholds: FloatArray;
  greater: Float64Array;
  equal: Float64Array;
  nan: Float64Array;
  removed: Float64Array;
}

/** FilterIndex.countFilteredRange: columns [columnStart, columnStart + width) of every row; thresholds given. */
export interface CountFilteredRangeArgs extends CountFilteredArgs {
  columnStart: number;
  width: number;
}

/** FilterIndex.rankTriples: a whole evaluator batch in one call (native/core/count.h rank_triples). */
export interface RankTriplesArgs extends KernelOptions {
  scores: FloatArray;
  /** 3 ids per score row. */
  triples: Int32Array;
  /** Written: [relation | anchor | truth], rows each. */
  keys: Int32Array;
  /** Written: one per row, scores' type. */
  thresholds: FloatArray;
  /** Written: 6 x rows. */
  out: Float64Array;
}

/** FilterIndex.rankTriplesConstrained: rankTriples over each relation's typed candidates. */
export interface RankTriplesConstrainedArgs extends RankTriplesArgs {
  filtered: boolean;
  sets: { offsets: Int32Array; ids: Int32Array; bits?: Uint16Array | null; bitsAt?: Int32Array | null };
}

export interface AggregateRanksArgs extends KernelOptions {
  ranks: Float64Array;
  weights?: Float64Array | null;
  /** Hits@k cut-offs: one hit slot each. */
  ks: Float64Array;
  /** MRR@k cut-offs (positive): one truncated reciprocal slot each, after the hit slots; absent: none. */
  truncatedKs?: Float64Array | null;
  /** AGGREGATE_FLAGS (src/contract/kernels.ts). */
  flags: number;
}

export interface MedianRanksArgs {
  values: Float64Array;
  weights?: Float64Array | null;
  mad: boolean;
}

export interface ClosedMomentsArgs {
  /** ClosedMetricCode. */
  metric: number;
  numCandidates: Float64Array;
  weights?: Float64Array | null;
  k: number;
}

export interface MedianMomentsArgs {
  numCandidates: Float64Array;
  /** Default true. */
  wantVariance?: boolean;
}

export interface CandidateHistogramArgs {
  numCandidates: Float64Array;
  weights?: Float64Array | null;
  threads: number;
}

export interface HistogramMomentsArgs {
  /** ClosedMetricCode. */
  metric: number;
  values: Float64Array;
  w1: Float64Array;
  w2: Float64Array;
  totalWeight: number;
  count: number;
  k: number;
  threads: number;
}

export interface SampleStatisticArgs extends KernelOptions {
  numCandidates: Float64Array;
  weights?: Float64Array | null;
  numSamples: number;
  seed: number;
  /** StatisticCode. */
  statistic: number;
  k: number;
}

export interface GenerateRanksArgs extends KernelOptions {
  numCandidates: Float64Array;
  seed: number;
  sample: number;
}

export interface PairedResampleArgs extends KernelOptions {
  /** ResamplingKind. */
  kind: number;
  key: number;
  first: number;
  count: number;
  n: number;
  x: Float64Array;
  /** Both runs' ranks when the medians are resampled too (the same arrays as pairedResample's). */
  medians?: PairedMedians | null;
}

export interface HarmonicArgs {
  n: number;
  /** 1 or 2. */
  order: number;
}

export interface GeneralizedHarmonicArgs {
  n: number;
  p: number;
}

/** An embedding model as the core reads it (native/core/interaction.h EmbeddingModel). */
interface EmbeddingModelArgs {
  /** Interaction code (src/scoring/embedding-model.ts INTERACTION_CODES). */
  interaction: number;
  /** ComplexLayout: 0 = halves, 1 = interleaved. */
  layout: number;
  /** numEntities x entityWidth; Float64Array = accumulate in float64. */
  entity: FloatArray;
  /** numRelations x relationWidth, entity's type. */
  relation: FloatArray;
  /** PairRE: one factor per entity, entity's type. */
  entityScale?: FloatArray | null;
  numEntities: number;
  entityWidth: number;
  numRelations: number;
  relationWidth: number;
  phaseScale: number;
  /** Row j of `entity` is entity entityOffset + j. */
  entityOffset: number;
}

/** The queries of an embedding call (native/core/interaction.h EmbeddingQueries), one per row. */
interface EmbeddingQueriesArgs {
  headSide: boolean;
  anchor: Int32Array;
  relation: Int32Array;
  truth: Int32Array;
  candidates?: Int32Array | null;
  negatives?: Int32Array | null;
  negativesPerRow: number;
  excludeOffsets?: Uint32Array | null;
  excludeIds?: Int32Array | null;
  anchorRows?: FloatArray | null;
  anchorScale?: FloatArray | null;
  trueScores?: Float64Array | null;
  setOffsets?: Int32Array | null;
  setIds?: Int32Array | null;
}

/** What every embedding call reads. */
export interface EmbeddingArgs extends KernelOptions {
  model: EmbeddingModelArgs;
  queries: EmbeddingQueriesArgs;
}

/** rankEmbeddings: out = greater | equal | nan | removed | trueScore (rows each), then status and index. */
export interface RankEmbeddingsArgs extends EmbeddingArgs {
  out: Float64Array;
  /** The int8 screen: mode (ScreenMode code), table (screenTable's handle), stats (3 values, added to). */
  screen?: { mode: number; table?: unknown; stats?: Float64Array | null } | null;
}

/** screenTable: the model record (queries are not read). */
export interface ScreenTableArgs extends KernelOptions {
  model: EmbeddingModelArgs;
  /** Read the table from this file (screenTableSave's), checked against the model, instead of quantising it. */
  file?: string;
}

/** screenTableSave: writes a screenTable handle made from this model to a file. */
export interface ScreenTableSaveArgs extends ScreenTableArgs {
  table: unknown;
  file: string;
}

/** topKEmbeddings: each query's k best entities among [begin, end) of the table. */
export interface TopKEmbeddingsArgs extends EmbeddingArgs {
  k: number;
  begin: number;
  end: number;
  /** Written: rows x k. */
  ids: Int32Array;
  scores: Float64Array;
  floor?: Float64Array | null;
  /** As rankEmbeddings' (the lists are the same whatever the mode). */
  screen?: RankEmbeddingsArgs["screen"];
}

/** scoreRelations: the score of (anchor[i], r, truth[i]) for every relation r, into rows x numRelations. */
export interface ScoreRelationsArgs extends EmbeddingArgs {
  scores: FloatArray;
}

/** pbgAdjust (native/addon/pbg_bindings.cpp): PBG's adjust() of `count` rows into out (count x dimension). */
export interface PbgAdjustArgs {
  comparator: number;
  bias: boolean;
  dimension: number;
  operator: number;
  count: number;
  rows: FloatArray;
  global?: Float64Array | null;
  translation?: Float64Array | null;
  diagonal?: Float64Array | null;
  linear?: Float64Array | null;
  real?: Float64Array | null;
  imag?: Float64Array | null;
  out: Float64Array;
  threads: number;
}

/** pbgCompare: every query row against every candidate row, query j's scores from out[j * outStride + outOffset]. */
export interface PbgCompareArgs extends KernelOptions {
  comparator: number;
  bias: boolean;
  dimension: number;
  queries: Float64Array;
  numQueries: number;
  candidates: FloatArray;
  numCandidates: number;
  queryFirst: boolean;
  out: Float64Array;
  outStride: number;
  outOffset: number;
}

/** info().enums: the addon's enum tables (native/addon/enums.h), name -> value. */
export type AddonEnums = Record<
  | "Interaction"
  | "ComplexLayout"
  | "ScoreOp"
  | "ClosedMetric"
  | "Statistic"
  | "Resampling"
  | "AggregateSlot"
  | "StatusCode"
  | "ScreenMode"
  | "PbgComparator"
  | "PbgOperator"
  | "SimdLevel",
  Record<string, number>
>;

/** How a record builder takes an input array: as it is (sync calls) or a copy the call may hold (async calls). */
export type Hold = <T extends ArrayBufferView>(a: T) => T;

/** A sync call's input, as it is. */
export const asIs: Hold = (a) => a;

/**
 * The record of an embedding call from the kernels' input: the native addon's (held by `hold` for an async call) and
 * the WebAssembly core's, which marshals it to its pointer ABI (src/backend/wasm.ts).
 */
export function embeddingArgs(
  input: EmbeddingRankInput,
  simd: number,
  threads: number,
  hold: Hold = asIs,
): EmbeddingArgs {
  const held = <T extends ArrayBufferView>(a: T | null | undefined): T | null => (a ? hold(a) : null);
  return {
    model: {
      interaction: input.interaction,
      layout: input.layout,
      entity: hold(input.entityEmbeddings),
      relation: hold(input.relationEmbeddings),
      entityScale: held(input.entityScale),
      numEntities: input.numEntities,
      entityWidth: input.entityWidth,
      numRelations: input.numRelations,
      relationWidth: input.relationWidth,
      phaseScale: input.phaseScale,
      entityOffset: input.entityOffset ?? 0,
    },
    queries: {
      headSide: input.headSide,
      anchor: input.anchor,
      relation: input.relationIds,
      truth: input.truth,
      candidates: input.candidates,
      negatives: input.negatives,
      negativesPerRow: input.negativesPerRow,
      excludeOffsets: input.excludeOffsets,
      excludeIds: input.excludeIds,
      anchorRows: held(input.anchorRows),
      anchorScale: held(input.anchorScale),
      trueScores: input.trueScores ?? null,
      setOffsets: input.candidateSets?.offsets ?? null,
      setIds: input.candidateSets?.ids ?? null,
    },
    simd,
    threads,
  };
}

/** rankEmbeddings' screen field from the kernels' input: null when off or absent. */
export function screenArgs(input: EmbeddingRankInput): RankEmbeddingsArgs["screen"] {
  const s = input.screen;
  if (!s || s.mode === "off") return null;
  return { mode: SCREEN_MODES[s.mode], table: s.table ?? null, stats: s.stats };
}
