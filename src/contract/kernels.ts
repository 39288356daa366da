/**
 * The one interface both backends implement: the native addon (C++/SIMD) and the pure-TypeScript fallback.
 * Kernels assume validated input (see validate.ts); the public functions validate once, for both backends.
 */
export type FloatArray = Float32Array | Float64Array;

export type BackendName = "native" | "wasm" | "ts";

/** Instruction-set levels of the native kernels. The WebAssembly core reports "simd128", the fallback "none". */
export type SimdLevel = "scalar" | "avx2" | "avx512" | "neon";

/** Per-row counts against the row's threshold; exact integers stored as doubles. */
export interface CountBuffers {
  greater: Float64Array;
  equal: Float64Array;
  nan: Float64Array;
}

/**
 * Cancellation and progress of one async kernel call (src/backend/call-control.ts CallControl implements it for the public async
 * APIs). Once `stopped`, the kernel stops at its next task boundary - native: the job control of native/addon/async.h
 * (the addon's name), checked by the core's parallel loops; fallback: between row slices - and rejects with
 * `stopReason`, also when the work happened to finish anyway; the promise settles only once no work of the call runs
 * any more. When `wantsProgress`, the kernel reports the rows of this call finished so far to `progress` (from the
 * event loop, never after it settles; the control throttles and orders them). Without a control, an async kernel runs
 * to its end.
 */
export interface KernelControl {
  readonly stopped: boolean;
  /** Why the call was stopped (the AbortSignal's reason); what the kernel rejects with. */
  readonly stopReason: unknown;
  /** Calls `fn` once when the call is stopped (at once if it is); returns a function that unregisters it. */
  onStop(fn: () => void): () => void;
  readonly wantsProgress: boolean;
  /** Rows of this kernel call finished so far. */
  progress(done: number): void;
}

/** Which side of a triple is predicted: head = (?, r, t), tail = (h, r, ?). */
export type Side = "head" | "tail";

/**
 * Filtered counts: CountBuffers plus the number of non-NaN known answers removed from each row's candidates (-1 when
 * the row's own triple is not in the index).
 */
export interface FilteredCountBuffers extends CountBuffers {
  removed: Float64Array;
}

/**
 * Known answers of one side (CSR): for side "tail", anchor = head and answers = tails of (head, relation); for side
 * "head", anchor = tail and answers = heads of (relation, tail). Sorted and unique per key.
 */
export interface FilterIndexHandle {
  readonly side: Side;
  readonly numEntities: number;
  readonly numRelations: number;
  /** Known answers of (anchor, relation), sorted ascending. */
  answers(anchor: number, relation: number): Int32Array;
  /** First row i whose answer[i] is not a known answer of (anchor[i], relation[i]), or -1. */
  missing(anchor: Int32Array, relation: Int32Array, answer: Int32Array): number;
  /**
   * out[i] = the number of known answers of triple i's (anchor, relation) key, 0 for an unknown key; `triples` are
   * rows of (head, relation, tail), the anchor is the head (side tail) or the tail (side head), out has one element
   * per row. Returns null, or the first id out of range (head, relation, tail of each row in turn; index = its flat
   * index into triples): out's rows before it are written then, the rest left as they were
   * (native/core/filter_index.cpp answer_counts; TsFilterIndex.answerCounts).
   */
  answerCounts(triples: Int32Array, out: Float64Array): AnswerCountsProblem | null;
  /** Number of (anchor, relation) keys, of answers, and bytes held by the index arrays. */
  stats(): { keys: number; answers: number; bytes: number };
  /**
   * Rows of `scores` score every entity (numEntities columns) for the task (anchor[i], relation[i], ?) whose true
   * answer is column truth[i]: counts as countScoresByIndex, minus every other known answer of the task.
   */
  countFiltered(
    scores: FloatArray,
    anchor: Int32Array,
    relation: Int32Array,
    truth: Int32Array,
    thresholdsOut: FloatArray,
    out: FilteredCountBuffers,
    threads?: number,
  ): void;
  countFilteredAsync(
    scores: FloatArray,
    anchor: Int32Array,
    relation: Int32Array,
    truth: Int32Array,
    thresholdsOut: FloatArray,
    out: FilteredCountBuffers,
    threads?: number,
    control?: KernelControl,
  ): Promise<void>;
  /**
   * countFiltered over one column slice (a chunked batch: scores arrive in slices of the entity axis). Rows of
   * `scores` (rows x width) hold columns [columnStart, columnStart + width) of the task (anchor[i], relation[i], ?);
   * `thresholds` (scores' type) are the true scores, given (the true column truth[i] may lie in another slice).
   * Counts as countScores, minus every other known answer of the task inside the slice (at column answer -
   * columnStart); answers outside it are left to their own slice. removed[i] counts the slice's removed non-NaN
   * candidates, -1 when the task's own triple is not in the index. Summed over slices that tile the entity axis,
   * the counts are countFiltered's (native/core/count.cpp count_rows_filtered_range; TsFilterIndex).
   */
  countFilteredRange(
    scores: FloatArray,
    columnStart: number,
    width: number,
    anchor: Int32Array,
    relation: Int32Array,
    truth: Int32Array,
    thresholds: FloatArray,
    out: FilteredCountBuffers,
    threads?: number,
  ): void;
  countFilteredRangeAsync(
    scores: FloatArray,
    columnStart: number,
    width: number,
    anchor: Int32Array,
    relation: Int32Array,
    truth: Int32Array,
    thresholds: FloatArray,
    out: FilteredCountBuffers,
    threads?: number,
    control?: KernelControl,
  ): Promise<void>;
  /**
   * A whole filtered evaluator batch (rows x 3 triples, one score row each) in one call, on both backends (the
   * addon's binding and TsFilterIndex.rankTriples). keysOut (3 x rows) receives [relation | anchor | truth], out
   * (6 x rows) [optimistic | pessimistic | realistic | numCandidates | weight NaN | scratch]. Returns null, or the
   * first problem it does not throw (RankTriplesProblem).
   */
  rankTriples(
    scores: FloatArray,
    triples: Int32Array,
    keysOut: Int32Array,
    thresholdsOut: FloatArray,
    out: Float64Array,
    threads?: number,
  ): RankTriplesProblem | null;
  /**
   * rankTriples with each task's candidates cut to its relation's allowed set (typed candidates, `sets`), plus the
   * true answer itself; the other known answers leave them only when `filtered` (an index built from no triples
   * serves the unfiltered setting then). Same layouts and problems as rankTriples, and InvalidInput (with its
   * message) for a broken set.
   */
  rankTriplesConstrained(
    scores: FloatArray,
    triples: Int32Array,
    filtered: boolean,
    sets: ConstrainedSets,
    keysOut: Int32Array,
    thresholdsOut: FloatArray,
    out: Float64Array,
    threads?: number,
  ): RankTriplesProblem | null;
}

/**
 * Kinds of a failed core Status: the TypeScript mirror of native/core/status.h StatusCode, value for value
 * (test/status.test.ts reads status.h and compares). The addon reports a failed status as an error with these
 * numbers (src/backend/native-call.ts statusOf); the fallback returns them where the core does.
 */
export enum StatusCode {
  Ok = 0,
  /** The input was rejected; the message says why. */
  InvalidInput = 1,
  /** An id is outside its range; `index` is the flat index of the id. */
  IdOutOfRange = 2,
  /** The true answer's score is NaN; `index` is the row. */
  NanTrueScore = 3,
  /** An evaluated triple is not among the filter triples; `index` is the row. */
  NotInIndex = 4,
}

/**
 * One side's typed candidate sets as the kernels read them (src/ranking/candidate-sets.ts builds them): relation r's
 * allowed entity ids are ids[offsets[r] .. offsets[r + 1]) (offsets: numRelations + 1 entries; ids ascending per
 * relation, in range). The native kernel counts a relation with bitsAt[r] >= 0 in one streamed pass under its bit set
 * bits[bitsAt[r] .. + ceil(numEntities / 16)) (bit j of word i: entity 16 i + j, the same set as its ids) and
 * gathers the others; the fallback reads the ids only.
 */
export interface ConstrainedSets {
  offsets: Int32Array;
  ids: Int32Array;
  bits: Uint16Array;
  bitsAt: Int32Array;
}

/** A problem of FilterIndexHandle.rankTriples: its kind and where (status.h: a flat id index or a row). */
export interface RankTriplesProblem {
  status: StatusCode.IdOutOfRange | StatusCode.NanTrueScore | StatusCode.NotInIndex | StatusCode.InvalidInput;
  index: number;
  /** InvalidInput only (rankTriplesConstrained's broken candidate set): what was wrong. */
  message?: string;
}

/** The problem FilterIndexHandle.answerCounts returns: an id out of range, at its flat index into the triples. */
export interface AnswerCountsProblem {
  status: StatusCode.IdOutOfRange;
  index: number;
}

/** Closed forms the kernels know (codes shared with native/core/expectation.h). */
export enum ClosedMetricCode {
  ArithmeticMean = 0,
  InverseHarmonicMean = 1,
  /** Hits@k. */
  Hits = 2,
  GeometricMean = 3,
  /** MRR@k: the mean of 1/r over r <= k, 0 above. */
  TruncatedInverse = 4,
}

/** Statistics of one rank vector that Monte Carlo estimates (codes shared with native/core/sampling.h). */
export enum StatisticCode {
  Mean = 0,
  GeometricMean = 1,
  InverseHarmonic = 2,
  Median = 3,
  Hits = 4,
  Variance = 5,
  Mad = 6,
  Count = 7,
}

/**
 * Slots of aggregateRanks()'s output. They are followed by the hit slots, one hit sum (w over r <= k) per entry of
 * `ks`, from `fixed`, then the truncated slots, one truncated reciprocal sum of MRR@k (w / r over r <= k) per entry of
 * `truncatedKs`, from `fixed + ks.length` (native/core/aggregate.h).
 */
export const AGGREGATE_SLOTS = {
  sumWeights: 0,
  sumRanks: 1,
  sumLogRanks: 2,
  sumInverseRanks: 3,
  sumSquaredDeviations: 4,
  median: 5,
  mad: 6,
  /** Ranks that are not finite or < 1 (the pass doubles as validation; medians are skipped then). */
  invalid: 7,
  fixed: 8,
} as const;

/** Which replicates pairedResample() draws: compare's randomization test (swaps) or its paired bootstrap (draws). */
export enum ResamplingKind {
  Randomization = 0,
  Bootstrap = 1,
}

/**
 * Two runs' per-task columns for pairedResample() (native/core/resample.h PairedColumns): `x` holds cols columns of n
 * values each, summed per replicate over the swapped tasks (randomization) or weighted by the draw counts
 * (bootstrap); `medians`, when given, the runs' ranks arranged for the replicates' two medians.
 */
export interface PairedColumns {
  n: number;
  x: Float64Array;
  medians: PairedMedians | null;
}

/** Both runs' ranks for pairedResample()'s medians (see native/core/resample.h). */
export interface PairedMedians {
  /** Each task's rank in run a (b) as an index into `values`, the runs' distinct ranks ascending. */
  indexA: Uint32Array;
  indexB: Uint32Array;
  values: Float64Array;
  /** Task ids by ascending rank in run a (b), and those ranks. */
  orderA: Uint32Array;
  orderB: Uint32Array;
  sortedA: Float64Array;
  sortedB: Float64Array;
}

export interface CandidateHistogram {
  values: Float64Array;
  w1: Float64Array;
  w2: Float64Array;
  totalWeight: number;
}

/** What aggregateRanks() computes beyond the sums (bit flags). */
export const AGGREGATE_FLAGS = { variance: 1, median: 2, mad: 4 } as const;

/**
 * Numerics of the metrics (native/core/{aggregate,expectation,harmonic,median_moments,sampling};
 * src/fallback/{aggregate,expectation,harmonic,median-moments,power-sums,sampling}.ts).
 */
export interface MetricKernels {
  /**
   * One fused pass over validated ranks (weights null = all 1): compensated sums, hit counts per k of `ks`, MRR@k's
   * truncated reciprocal sums per k of `truncatedKs` (positive cut-offs), and what `flags` (AGGREGATE_FLAGS) asks
   * for; see AGGREGATE_SLOTS for the layout.
   */
  aggregateRanks(
    ranks: Float64Array,
    weights: Float64Array | null,
    ks: Float64Array,
    truncatedKs: Float64Array,
    flags: number,
    threads?: number,
  ): Float64Array;
  /** Conventional (weighted) median of `values`, or with `mad` the scaled median absolute deviation. */
  medianRanks(values: Float64Array, weights: Float64Array | null, mad: boolean): number;
  /** Tasks grouped by distinct N (sorted), with weight sums w1 and squared-weight sums w2. */
  candidateHistogram(numCandidates: Float64Array, weights: Float64Array | null): CandidateHistogram;
  /**
   * [E, Var] of a closed-form metric from a histogram; `count` is the number of tasks. The geometric mean needs an
   * unweighted histogram (its exponent is 1/count).
   */
  histogramMoments(
    metric: ClosedMetricCode,
    histogram: CandidateHistogram,
    count: number,
    k: number,
    threads?: number,
  ): Float64Array;
  /** [E, Var] of a closed-form metric under uniform ranks. */
  closedMoments(
    metric: ClosedMetricCode,
    numCandidates: Float64Array,
    weights: Float64Array | null,
    k: number,
  ): Float64Array;
  /**
   * [E, Var] of the conventional (unweighted) median rank under independent uniform ranks, for validated candidate
   * counts (native/core/median_moments.cpp; src/fallback/median-moments.ts).
   */
  /**
   * [E, Var, evaluations] of the median rank; with wantVariance false, Var may be NaN (the costly joint sum of even n
   * skipped). `evaluations` counts the kernel's evaluations of the generating function (its cost, for tests).
   */
  medianMoments(numCandidates: Float64Array, wantVariance?: boolean): Float64Array;
  /** The statistic of `numSamples` seeded random rank vectors. */
  sampleStatistic(
    numCandidates: Float64Array,
    weights: Float64Array | null,
    numSamples: number,
    seed: number,
    statistic: StatisticCode,
    k: number,
    threads?: number,
  ): Float64Array;
  /** Rank vector number `sample` of the seeded stream. */
  generateRanks(numCandidates: Float64Array, seed: number, sample: number): Float64Array;
  /**
   * Replicates first .. first + count - 1 of a paired resampling (native/core/resample.h; src/fallback/resample.ts):
   * per replicate, each column's sum and then, with indexA, the two runs' medians. Bit-identical on every backend.
   */
  pairedResample(
    kind: ResamplingKind,
    columns: PairedColumns,
    key: number,
    first: number,
    count: number,
    threads?: number,
  ): Float64Array;
  /** H_1(n) or H_2(n) for integer n >= 0. */
  harmonic(n: number, order: 1 | 2): number;
  /** H_p(n) = sum_{j<=n} j^-p for real p (table-free: direct sum to 256, Euler-Maclaurin above). */
  generalizedHarmonic(n: number, p: number): number;
}

/**
 * One batch of queries for ranking from embeddings (native/core/interaction.h; src/fallback/interaction.ts). Ids are
 * checked by the caller. Interaction codes: 0 TransE-L1, 1 TransE-L2, 2 DistMult, 3 ComplEx, 4 RotatE, 5 PairRE,
 * 6 RotatE-L2 (PyKEEN's RotatE).
 */
export interface EmbeddingRankInput {
  interaction: number;
  /** Complex rows: 0 = real halves then imaginary halves, 1 = interleaved. */
  layout: 0 | 1;
  /** numEntities x entityWidth; Float64Array = accumulate in float64. */
  entityEmbeddings: FloatArray;
  relationEmbeddings: FloatArray;
  /** PairRE: one factor per entity (1 / norm), same type; else null. */
  entityScale: FloatArray | null;
  numEntities: number;
  entityWidth: number;
  numRelations: number;
  relationWidth: number;
  /** RotatE with phase relations: angle = value x phaseScale. */
  phaseScale: number;
  headSide: boolean;
  anchor: Int32Array;
  relationIds: Int32Array;
  truth: Int32Array;
  /** Shared candidate entities (restriction), or null for every entity. */
  candidates: Int32Array | null;
  /**
   * Typed candidates: row i's candidates are ids[offsets[r] .. offsets[r + 1]) of its relation r (ascending entity
   * ids, CandidateSets' arrays); its true answer is a column only where the set holds it. Needs no candidates, no
   * negatives and entityOffset 0. Null or absent: none.
   */
  candidateSets?: { offsets: Int32Array; ids: Int32Array } | null;
  /** rows x negativesPerRow candidate ids (OGB protocol), or null. */
  negatives: Int32Array | null;
  negativesPerRow: number;
  /** Filter: ids excluded from row i are excludeIds[excludeOffsets[i] .. excludeOffsets[i + 1]). */
  excludeOffsets: Uint32Array | null;
  excludeIds: Int32Array | null;
  /**
   * A slice of a bigger table (a chunk read from disk, an entity shard): entityEmbeddings row j is entity
   * entityOffset + j; exclusion ids are global and those outside the slice are skipped. Needs no candidates and no
   * negatives. Default 0.
   */
  entityOffset?: number;
  /** rows x entityWidth: row i's anchor vector (the table need not hold the anchors); anchor ids are then unused. */
  anchorRows?: FloatArray | null;
  /** PairRE with anchorRows: row i's anchor factor (1 / norm); null when entities are not normalised. */
  anchorScale?: FloatArray | null;
  /**
   * The true scores, computed earlier by this code: counts are taken against them and truth is unused. Counts of
   * slices that partition the table add up to the whole table's.
   */
  trueScores?: Float64Array | null;
  /** rankEmbeddings: the int8 screen; absent or null: off. */
  screen?: EmbeddingScreen | null;
}

/**
 * The int8 screen of rankEmbeddings (docs/screen.md): off, auto (where the CPU has a vector screen kernel and the
 * input is one it applies to) or int8 (wherever it applies). Codes of native/core/screen.h ScreenMode.
 */
export type ScreenModeName = "off" | "auto" | "int8";
export const SCREEN_MODES = { off: 0, auto: 1, int8: 2 } as const satisfies Record<ScreenModeName, number>;

/** What rankEmbeddings is told about the screen; only the native backend screens (the others ignore it). */
export interface EmbeddingScreen {
  mode: ScreenModeName;
  /** Kernels.screenTable's handle for the input's entity table, or null (a call then quantises it itself). */
  table: unknown;
  /** Added to by the call: [calls that screened, (row, candidate) pairs seen, pairs rescored exactly]; or null. */
  stats: Float64Array | null;
}

/** PyTorch-BigGraph's comparators and operators (docs/source/scoring.rst); codes of native/core/pbg.h. */
export type PbgComparatorName = "dot" | "cos" | "l2" | "squared_l2";
export const PBG_COMPARATORS = { dot: 0, cos: 1, l2: 2, squared_l2: 3 } as const satisfies Record<
  PbgComparatorName,
  number
>;
export type PbgOperatorName = "none" | "translation" | "diagonal" | "linear" | "affine" | "complex_diagonal";
export const PBG_OPERATORS = {
  none: 0,
  translation: 1,
  diagonal: 2,
  linear: 3,
  affine: 4,
  complex_diagonal: 5,
} as const satisfies Record<PbgOperatorName, number>;

/** A PBG checkpoint's comparison: its comparator, whether coordinate 0 is a bias, the embedding width. */
export interface PbgScoring {
  readonly comparator: PbgComparatorName;
  readonly bias: boolean;
  readonly dimension: number;
}

/** A relation's operator parameters as PBG stores them (model.vN.h5), read as float64. */
export interface PbgOperatorValues {
  translation?: Float64Array;
  diagonal?: Float64Array;
  linear_transformation?: Float64Array;
  real?: Float64Array;
  imag?: Float64Array;
}

/** Kernels.pbgAdjust's input: `count` rows of width scoring.dimension, row-major. */
export interface PbgAdjustInput {
  scoring: PbgScoring;
  rows: FloatArray;
  count: number;
  /** The entity type's global embedding (dimension values), or undefined. */
  global: Float64Array | undefined;
  operator: PbgOperatorName;
  params: PbgOperatorValues;
}

/**
 * Kernels.pbgCompare's input: every adjusted query row against every adjusted candidate row; query j's score of
 * candidate c goes to out[j * outStride + outOffset + c].
 */
export interface PbgCompareInput {
  scoring: PbgScoring;
  queries: Float64Array;
  numQueries: number;
  /** Adjusted rows, or stored float32 rows that no adjustment changes (each value as adjust would convert it). */
  candidates: FloatArray;
  numCandidates: number;
  /** The query is the comparator's first argument (its bias added first); otherwise each candidate is. */
  queryFirst: boolean;
  outStride: number;
  outOffset: number;
}

/** How many candidates a top-k call lists per query, and among which entities: [begin, end) of the table. */
export interface TopKRange {
  k: number;
  begin: number;
  end: number;
  /**
   * Per row, a score its list already holds k entries at or above, from entities of smaller ids (an earlier chunk or
   * range): only scores strictly above it are listed, so merging the call's lists into the earlier ones gives the
   * same lists as without it, at less rescoring. NaN for a row without one.
   */
  floor?: Float64Array | null;
}

/**
 * Rows [r0, r1) of an embedding kernel input as an input of their own (the filter's exclusion offsets rebased, the
 * per-row arrays cut): the fallback's row slices and the facade's pieces of a top-k call.
 */
export function embeddingRows(input: EmbeddingRankInput, r0: number, r1: number): EmbeddingRankInput {
  const K = input.negativesPerRow;
  return {
    ...input,
    anchor: input.anchor.subarray(r0, r1),
    relationIds: input.relationIds.subarray(r0, r1),
    truth: input.truth.subarray(r0, r1),
    anchorRows: input.anchorRows ? input.anchorRows.subarray(r0 * input.entityWidth, r1 * input.entityWidth) : null,
    anchorScale: input.anchorScale ? input.anchorScale.subarray(r0, r1) : null,
    trueScores: input.trueScores ? input.trueScores.subarray(r0, r1) : null,
    negatives: input.negatives ? input.negatives.subarray(r0 * K, r1 * K) : null,
    ...exclusionRows(input.excludeOffsets, input.excludeIds, r0, r1),
  };
}

/** The size of the largest set of typed candidates (offsets of CandidateSets' arrays). */
function largestSet(offsets: Int32Array): number {
  let most = 0;
  for (let r = 0; r + 1 < offsets.length; r++) most = Math.max(most, offsets[r + 1]! - offsets[r]!);
  return most;
}

/**
 * What an embedding call reads: every array of `input` (null for those it lacks), watched for detaching and
 * resizing between slices, and its work per row (candidate values scored), which sizes the slices.
 */
export function embeddingReads(input: EmbeddingRankInput): { arrays: (ArrayBufferView | null)[]; perRow: number } {
  return {
    arrays: [
      input.entityEmbeddings,
      input.relationEmbeddings,
      input.entityScale,
      input.anchor,
      input.relationIds,
      input.truth,
      input.candidates,
      input.negatives,
      input.excludeOffsets,
      input.excludeIds,
      input.anchorRows ?? null,
      input.anchorScale ?? null,
      input.trueScores ?? null,
      input.candidateSets?.offsets ?? null,
      input.candidateSets?.ids ?? null,
    ],
    perRow:
      (input.negatives
        ? input.negativesPerRow
        : input.candidateSets
          ? largestSet(input.candidateSets.offsets)
          : input.candidates
            ? input.candidates.length
            : input.numEntities) * input.entityWidth,
  };
}

/** Rows [r0, r1) of exclusion lists (ids of row i: ids[offsets[i] .. offsets[i + 1])), the offsets rebased to 0. */
export function exclusionRows(
  offsets: Uint32Array | null,
  ids: Int32Array | null,
  r0: number,
  r1: number,
): { excludeOffsets: Uint32Array | null; excludeIds: Int32Array | null } {
  if (!offsets) return { excludeOffsets: null, excludeIds: null };
  const base = offsets[r0]!;
  return {
    excludeOffsets: Uint32Array.from(offsets.subarray(r0, r1 + 1), (x) => x - base),
    excludeIds: ids!.subarray(base, offsets[r1]!),
  };
}

export interface Kernels extends MetricKernels {
  readonly backend: BackendName;
  /** SIMD level the kernels run at ("simd128" for the WebAssembly core, "none" for the fallback). */
  readonly simd: SimdLevel | "simd128" | "none";
  /** Default number of threads for parallel kernels (1 for the fallback). */
  readonly threads: number;

  /**
   * For each row i of the row-major matrix `scores` (numColumns per row) count entries > thresholds[i],
   * === thresholds[i] and NaN. `thresholds` has the element type of `scores`.
   */
  countScores(
    scores: FloatArray,
    numColumns: number,
    thresholds: FloatArray,
    out: CountBuffers,
    threads?: number,
  ): void;
  /** The same, off the JavaScript thread where the backend can; resolves when `out` is filled. */
  countScoresAsync(
    scores: FloatArray,
    numColumns: number,
    thresholds: FloatArray,
    out: CountBuffers,
    threads?: number,
    control?: KernelControl,
  ): Promise<void>;

  /**
   * As countScores, with row i's threshold being its own entry at column trueIndex[i] (in [0, numColumns)),
   * read where the row is streamed; the thresholds used are written to `thresholdsOut` (same type as scores).
   */
  countScoresByIndex(
    scores: FloatArray,
    numColumns: number,
    trueIndex: Int32Array,
    thresholdsOut: FloatArray,
    out: CountBuffers,
    threads?: number,
  ): void;
  countScoresByIndexAsync(
    scores: FloatArray,
    numColumns: number,
    trueIndex: Int32Array,
    thresholdsOut: FloatArray,
    out: CountBuffers,
    threads?: number,
    control?: KernelControl,
  ): Promise<void>;

  /**
   * Ranks a batch of queries from embeddings: out (5 x rows + 2) receives greater | equal | nan | removed |
   * trueScore per row, then a status code and row (0 = ok, 3 = NaN true score).
   */
  rankEmbeddings(input: EmbeddingRankInput, out: Float64Array, threads?: number): void;
  /**
   * The input's entity table quantised once for the screen (EmbeddingScreen.table), for every call of one
   * evaluation, or read from `file` (saveScreenTable's, checked against the table); absent on backends that do not
   * screen. The table must not change while the handle is used.
   */
  screenTable?(input: EmbeddingRankInput, threads?: number, file?: string): unknown;
  /** Writes a screenTable handle of the input's entity table to `file` (docs/screen.md, a quantised table on disk). */
  saveScreenTable?(input: EmbeddingRankInput, table: unknown, file: string, threads?: number): void;
  /** Index of the first NaN or infinite value of `values`, or -1 (an entity table's chunk checked as read). */
  firstNonFinite(values: FloatArray): number;
  rankEmbeddingsAsync(
    input: EmbeddingRankInput,
    out: Float64Array,
    threads?: number,
    control?: KernelControl,
  ): Promise<void>;
  /**
   * Each query's k best candidates among the entities [range.begin, range.end) of the model (native/core
   * interaction.h top_k_embeddings): ids and scores (rows x k, row-major), score descending, equal scores by the
   * smaller id first, NaN never listed, rows padded with id -1 and score NaN. Reads the model fields, anchor,
   * relationIds, headSide and excludeOffsets / excludeIds (entities never listed for the row) of `input`; not its
   * truth, candidates or negatives. Ids and the range must be checked by the caller.
   */
  topKEmbeddings(
    input: EmbeddingRankInput,
    range: TopKRange,
    ids: Int32Array,
    scores: Float64Array,
    threads?: number,
  ): void;

  /**
   * Relation prediction from embeddings (native/core/interaction.h score_relations): row i of `scores` (rows x
   * numRelations, row-major, the element type of entityEmbeddings) receives the score of (anchor[i], r, truth[i])
   * for every relation r, each the entity kernels' score of the tail truth[i] for (anchor[i], r, ?) bit for bit.
   * Reads the model fields, anchor (the heads) and truth (the tails) of `input`; not relationIds or headSide; it has
   * no candidates, negatives, exclusions, anchorRows or trueScores and entityOffset 0. Ids checked by the caller.
   */
  scoreRelations(input: EmbeddingRankInput, scores: FloatArray, threads?: number): void;

  /**
   * PyTorch-BigGraph's adjust() (native/core/pbg.h pbg_adjust, twin src/fallback/pbg.ts): of each row, the global
   * embedding added, the operator applied, then the comparator's preparation (cos: divided by the norm of the
   * coordinates after the bias), into `out` (count x dimension, float64). Lengths are checked by the caller.
   */
  pbgAdjust(input: PbgAdjustInput, out: Float64Array, threads?: number): void;

  /**
   * PyTorch-BigGraph's comparator of adjusted rows (native/core/pbg.h pbg_compare, twin src/fallback/pbg.ts), each
   * (query, candidate) score one fixed sequence of float64 operations, so every backend writes the same bits.
   * Lengths are checked by the caller.
   */
  pbgCompare(input: PbgCompareInput, out: Float64Array, threads?: number): void;

  /** Builds the filter index of one side from triple arrays (t x 3 Int32Array each: head, relation, tail). */
  buildFilterIndex(
    triples: Int32Array[],
    numEntities: number,
    numRelations: number,
    side: Side,
    threads?: number,
  ): FilterIndexHandle;
}
