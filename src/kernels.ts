/**
 * The one interface both backends implement: the native addon (C++/SIMD) and the pure-TypeScript fallback.
 * Kernels assume validated input (see validate.ts); the public functions validate once, for both backends.
 */
export type FloatArray = Float32Array | Float64Array;

export type BackendName = "native" | "ts";

/** Instruction-set levels of the native kernels. The fallback reports "none". */
export type SimdLevel = "scalar" | "avx2" | "avx512" | "neon";

/** Per-row counts against the row's threshold; exact integers stored as doubles. */
export interface CountBuffers {
  greater: Float64Array;
  equal: Float64Array;
  nan: Float64Array;
}

/** Which side of a triple is predicted: head = (?, r, t), tail = (h, r, ?). */
export type Side = "head" | "tail";

/** Filtered counts: CountBuffers plus the number of non-NaN known answers removed from each row's candidates. */
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
  /** Number of (anchor, relation) keys, of answers, and bytes held by the index arrays. */
  stats(): { keys: number; answers: number; bytes: number };
  /**
   * Rows of `scores` score every entity (numEntities columns) for the task (anchor[i], relation[i], ?) whose true
   * answer is column truth[i]: counts as countScoresByIndex, minus every other known answer of the task.
   */
  countFiltered(
    scores: FloatArray, anchor: Int32Array, relation: Int32Array, truth: Int32Array, thresholdsOut: FloatArray,
    out: FilteredCountBuffers, threads?: number,
  ): void;
  countFilteredAsync(
    scores: FloatArray, anchor: Int32Array, relation: Int32Array, truth: Int32Array, thresholdsOut: FloatArray,
    out: FilteredCountBuffers, threads?: number,
  ): Promise<void>;
}

export interface Kernels {
  readonly backend: BackendName;
  /** SIMD level the kernels run at ("none" for the fallback). */
  readonly simd: SimdLevel | "none";
  /** Default number of threads for parallel kernels (1 for the fallback). */
  readonly threads: number;

  /**
   * For each row i of the row-major matrix `scores` (numColumns per row) count entries > thresholds[i],
   * === thresholds[i] and NaN. `thresholds` has the element type of `scores`.
   */
  countScores(scores: FloatArray, numColumns: number, thresholds: FloatArray, out: CountBuffers, threads?: number): void;
  /** The same, off the JavaScript thread where the backend can; resolves when `out` is filled. */
  countScoresAsync(
    scores: FloatArray,
    numColumns: number,
    thresholds: FloatArray,
    out: CountBuffers,
    threads?: number,
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
  ): Promise<void>;

  /** Builds the filter index of one side from triple arrays (t x 3 Int32Array each: head, relation, tail). */
  buildFilterIndex(
    triples: Int32Array[], numEntities: number, numRelations: number, side: Side, threads?: number,
  ): FilterIndexHandle;
}
