/**
 * Backend selection: the native addon when it loads, else the WebAssembly core (wasm/kgrank.wasm, src/backend/wasm.ts),
 * else the pure-TypeScript fallback, chosen once when the package is loaded. Environment variables:
 *   KGRANK_BACKEND=native|wasm|ts   force a backend (native and wasm fail loudly when theirs cannot load)
 *   KGRANK_SIMD=scalar|avx2|avx512|neon   run the native kernels at this level (must be supported here)
 *   KGRANK_THREADS=N           default thread count of native kernels (default: hardware threads)
 *   KGRANK_ADDON_PATH=FILE     load the addon from this file instead of the prebuild and the local builds
 *   KGRANK_BUILD_FROM_SOURCE=1 try the local builds before the prebuild (as after `kgrank build-native --from-source`)
 *   KGRANK_WASM_PATH=FILE      load the WebAssembly core from this file instead of the package's wasm/kgrank.wasm
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import { KgrankBackendError, KgrankInputError } from "../checks/errors";
import { tsKernels as fallbackKernels, rowSlices } from "../fallback";
import {
  type BackendName,
  type CountBuffers,
  type EmbeddingRankInput,
  type FilteredCountBuffers,
  type FilterIndexHandle,
  type FloatArray,
  type KernelControl,
  type Kernels,
  type RankTriplesProblem,
  type Side,
  type SimdLevel,
  type TopKRange,
  embeddingMeta,
  StatusCode,
} from "../contract/kernels";
import { nativeCall, nativeCallAsync, nativeError, statusOf, withMemoryErrors } from "./native-call";
import { type NativeMetricsAddon, nativeMetricKernels } from "./native-metrics";
import { compileWasm, wasmKernels } from "./wasm";

/** What the addon exports (native/addon/addon.cpp). */
/** The sorted label tables and id rows of native/core/intern.h. */
interface InternedTriples {
  triples: [Int32Array, Int32Array, Int32Array];
  dropped: [number, number, number];
  /** Sorted labels as UTF-8 bytes; label k is bytes [offsets[k], offsets[k + 1]). */
  entityBytes: Uint8Array;
  entityOffsets: Float64Array;
  relationBytes: Uint8Array;
  relationOffsets: Float64Array;
}

export interface NativeTripleInterner {
  /** Splits whole lines of TSV and appends their rows to the split; a rejected piece throws a status error. */
  add(split: number, bytes: Uint8Array): number;
  finish(): InternedTriples;
}

export interface NativeAddon extends NativeMetricsAddon {
  info(): {
    version: string;
    bestSimd: number;
    simdLevels: { name: SimdLevel; level: number }[];
    hardwareThreads: number;
    napiVersion: number;
  };
  /**
   * Debug hook (native/core/simd.h): per kernel family, the ISA variant the dispatch table holds for `simd` and the
   * variant the family's most recent call ran.
   */
  dispatchInfo(simd: number): {
    variants: Record<"count" | "read" | "answers" | "rankSums" | "generateRanks", SimdLevel>;
    last: Record<"count" | "read" | "answers" | "rankSums" | "generateRanks", SimdLevel>;
  };
  countScores(
    scores: FloatArray,
    numColumns: number,
    thresholds: FloatArray,
    greater: Float64Array,
    equal: Float64Array,
    nan: Float64Array,
    simd: number,
    threads: number,
  ): void;
  countScoresAsync(
    scores: FloatArray,
    numColumns: number,
    thresholds: FloatArray,
    greater: Float64Array,
    equal: Float64Array,
    nan: Float64Array,
    simd: number,
    threads: number,
    control?: NativeKernelControl,
  ): Promise<void>;
  countScoresByIndex(
    scores: FloatArray,
    numColumns: number,
    trueIndex: Int32Array,
    thresholdsOut: FloatArray,
    greater: Float64Array,
    equal: Float64Array,
    nan: Float64Array,
    simd: number,
    threads: number,
  ): void;
  countScoresByIndexAsync(
    scores: FloatArray,
    numColumns: number,
    trueIndex: Int32Array,
    thresholdsOut: FloatArray,
    greater: Float64Array,
    equal: Float64Array,
    nan: Float64Array,
    simd: number,
    threads: number,
    control?: NativeKernelControl,
  ): Promise<void>;
  /** The read-bandwidth probe (native/core/count.h bandwidth_read); `streaming`: non-temporal loads. */
  bandwidthRead(data: ArrayBufferView, simd: number, threads: number, streaming?: boolean): number;
  /**
   * native/addon/async.h: a kernel control to pass as the last argument of an async binding; cancelKernel stops the
   * calls given it at their next task boundary (they reject with code KGRANK_CANCELLED), kernelProgress reads
   * [done, total] work units.
   */
  kernelControl(): NativeKernelControl;
  cancelKernel(control: NativeKernelControl): void;
  kernelProgress(control: NativeKernelControl): [number, number];
  /** native/addon/score_bindings.cpp: ranking from embeddings (arguments in that file's order). */
  rankEmbeddings(...args: unknown[]): void;
  rankEmbeddingsAsync(...args: unknown[]): Promise<void>;
  firstNonFinite(values: FloatArray): number;
  /** rankEmbeddings' arguments, then topK (k, begin, end), ids, scores, floor (native/addon/score_bindings.cpp). */
  topKEmbeddings(...args: unknown[]): void;
  /** rankEmbeddings' arguments, then scores (rows x numRelations; native/addon/score_bindings.cpp). */
  scoreRelations(...args: unknown[]): void;
  /** Peak FMA probe: [multiply-adds performed, checksum]. */
  fmaProbe(simd: number, threads: number, iterations: number): [number, number];
  /**
   * native/core/parse.h: 6 byte offsets per triple ([start, end) of head, relation, tail); a rejected file throws a
   * status error (statusOf()).
   */
  splitTsvTriples(bytes: Uint8Array): Uint32Array;
  /** native/core/intern.h: labelled TSV triples to PyKEEN's ids, split by split (0 train, 1 valid, 2 test). */
  TripleInterner: new () => NativeTripleInterner;
  FilterIndex: new (
    triples: Int32Array[],
    numEntities: number,
    numRelations: number,
    side: number,
    threads: number,
  ) => {
    answers(anchor: number, relation: number): Int32Array;
    missing(anchor: Int32Array, relation: Int32Array, answer: Int32Array): number;
    answerCounts(triples: Int32Array, out: Float64Array): void;
    stats(): { keys: number; answers: number; bytes: number; wide: boolean };
    countFiltered(...args: unknown[]): void;
    countFilteredAsync(...args: unknown[]): Promise<void>;
    countFilteredRange(...args: unknown[]): void;
    countFilteredRangeAsync(...args: unknown[]): Promise<void>;
    rankTriples(...args: unknown[]): void;
    rankTriplesConstrained(...args: unknown[]): void;
  };
}

/**
 * An opaque kernel control of the addon (native/addon/async.h; in C++ a kgrank::JobControl, where a job is one async
 * native call).
 */
type NativeKernelControl = { readonly __nativeKernelControl: unique symbol };

/** How often a running native call's progress counter is read (an atomic load: the call never waits for it). */
const PROGRESS_POLL_MS = 50;

/**
 * Runs one async binding under `control` (src/contract/kernels.ts KernelControl): without one, as it is; with one,
 * the binding gets a native kernel control (its last argument, through `start`), the control's stop cancels it, a
 * timer reads its progress (scaled from the driver's work units to the call's `rows`) while it runs, and a stopped
 * call rejects with the stop reason once the native work has ended - also when it finished anyway. The stop listener
 * and the timer are gone when the promise settles.
 */
async function underControl(
  addon: NativeAddon,
  control: KernelControl | undefined,
  rows: number,
  start: (nativeControl?: NativeKernelControl) => Promise<void>,
): Promise<void> {
  if (!control) return start();
  if (control.stopped) throw control.stopReason;
  const nativeControl = addon.kernelControl();
  const unregister = control.onStop(() => addon.cancelKernel(nativeControl));
  const timer = control.wantsProgress
    ? setInterval(() => {
        const [done, total] = addon.kernelProgress(nativeControl);
        if (total > 0) control.progress(Math.min(rows, Math.floor((done / total) * rows)));
      }, PROGRESS_POLL_MS)
    : null;
  timer?.unref();
  try {
    await start(nativeControl);
  } catch (e) {
    if (control.stopped) throw control.stopReason;
    throw e;
  } finally {
    if (timer) clearInterval(timer);
    unregister();
  }
  if (control.stopped) throw control.stopReason;
}

/** Runs a parser binding; a rejected input becomes the KgrankInputError its TypeScript twin throws. */
export function nativeParse<T>(argument: string, parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    const s = statusOf(e);
    if (s?.status === StatusCode.InvalidInput) throw new KgrankInputError(argument, s.message);
    throw e;
  }
}

/** The statuses FilterIndexHandle.rankTriples returns as a RankTriplesProblem instead of throwing. */
function isRankTriplesProblem(status: StatusCode): status is RankTriplesProblem["status"] {
  return status === StatusCode.IdOutOfRange || status === StatusCode.NanTrueScore || status === StatusCode.NotInIndex;
}

/** The native filter index behind the FilterIndexHandle interface. */
function nativeFilterIndex(
  addon: NativeAddon,
  triples: Int32Array[],
  numEntities: number,
  numRelations: number,
  side: Side,
  level: number,
  threads: number,
): FilterIndexHandle {
  const index = nativeCall(
    "filterTriples",
    () => new addon.FilterIndex(triples, numEntities, numRelations, side === "tail" ? 1 : 0, threads),
  );
  return {
    side,
    numEntities,
    numRelations,
    answers: (anchor, relation) => nativeCall("anchor", () => index.answers(anchor, relation)),
    missing: (anchor, relation, answer) => nativeCall("triples", () => index.missing(anchor, relation, answer)),
    answerCounts(triples, out) {
      try {
        index.answerCounts(triples, out);
        return null;
      } catch (e) {
        const s = statusOf(e);
        if (s?.status !== StatusCode.IdOutOfRange) throw nativeError(e, "triples");
        return { status: s.status, index: s.index };
      }
    },
    stats: () => index.stats(),
    countFiltered(scores, anchor, relation, truth, th, out: FilteredCountBuffers, t?: number) {
      nativeCall("triples", () =>
        index.countFiltered(
          scores,
          numEntities,
          anchor,
          relation,
          truth,
          th,
          out.greater,
          out.equal,
          out.nan,
          out.removed,
          level,
          t ?? threads,
        ),
      );
    },
    rankTriples(scores, triples, keys, th, out, t?: number) {
      try {
        index.rankTriples(scores, triples, keys, th, out, level, t ?? threads);
        return null;
      } catch (e) {
        const s = statusOf(e);
        if (!s || !isRankTriplesProblem(s.status)) throw nativeError(e, "triples");
        return { status: s.status, index: s.index };
      }
    },
    rankTriplesConstrained(scores, triples, filtered, sets, keys, th, out, t?: number) {
      try {
        const { offsets, ids, bits, bitsAt } = sets;
        index.rankTriplesConstrained(
          scores,
          triples,
          filtered,
          offsets,
          ids,
          bits,
          bitsAt,
          keys,
          th,
          out,
          level,
          t ?? threads,
        );
        return null;
      } catch (e) {
        const s = statusOf(e);
        if (s?.status === StatusCode.InvalidInput) return { status: s.status, index: 0, message: s.message };
        if (!s || !isRankTriplesProblem(s.status)) throw nativeError(e, "triples");
        return { status: s.status, index: s.index };
      }
    },
    countFilteredAsync(
      scores,
      anchor,
      relation,
      truth,
      th,
      out: FilteredCountBuffers,
      t?: number,
      control?: KernelControl,
    ) {
      return underControl(addon, control, truth.length, (nativeControl) =>
        nativeCallAsync("triples", () =>
          index.countFilteredAsync(
            holdable(scores),
            numEntities,
            holdable(anchor),
            holdable(relation),
            holdable(truth),
            th,
            out.greater,
            out.equal,
            out.nan,
            out.removed,
            level,
            t ?? threads,
            nativeControl,
          ),
        ),
      );
    },
    countFilteredRange(scores, start, width, anchor, relation, truth, th, out: FilteredCountBuffers, t?: number) {
      nativeCall("triples", () =>
        index.countFilteredRange(
          scores,
          start,
          width,
          anchor,
          relation,
          truth,
          th,
          out.greater,
          out.equal,
          out.nan,
          out.removed,
          level,
          t ?? threads,
        ),
      );
    },
    countFilteredRangeAsync(
      scores,
      start,
      width,
      anchor,
      relation,
      truth,
      th,
      out: FilteredCountBuffers,
      t?: number,
      control?: KernelControl,
    ) {
      return underControl(addon, control, truth.length, (nativeControl) =>
        nativeCallAsync("triples", () =>
          index.countFilteredRangeAsync(
            holdable(scores),
            start,
            width,
            holdable(anchor),
            holdable(relation),
            holdable(truth),
            holdable(th),
            out.greater,
            out.equal,
            out.nan,
            out.removed,
            level,
            t ?? threads,
            nativeControl,
          ),
        ),
      );
    },
  };
}

export interface BackendInfo {
  /** Which backend the package uses. */
  backend: BackendName;
  /** SIMD level of the kernels ("simd128" on the WebAssembly core, "none" on the fallback). */
  simd: SimdLevel | "simd128" | "none";
  /** Default thread count of parallel kernels. */
  threads: number;
  /** Package version. */
  version: string;
  /** SIMD levels this machine and build support (empty on the fallback). */
  supportedSimd: SimdLevel[];
  /** Hardware threads seen by the addon (or os.availableParallelism on the fallback). */
  hardwareThreads: number;
  /** File the addon was loaded from, when native. */
  addonPath?: string;
  /** File the WebAssembly core was loaded from, when wasm. */
  wasmPath?: string;
  /** Why the native backend is not in use, when it is not. */
  fallbackReason?: string;
  /**
   * Where the code in use comes from: the prebuilt addon the package ships, an addon built on this machine
   * (node-gyp or cmake-js, or the file KGRANK_ADDON_PATH names), the WebAssembly core (one thread, SIMD128), or the
   * TypeScript fallback.
   */
  tier: BackendTier;
  /** One line per place tried before the one in use: its tier, its file and why it was not used (empty if none). */
  skipped: string[];
}

/** The tiers of BackendInfo.tier, fastest first. */
export type BackendTier = "native prebuild" | "native build" | "wasm" | "ts";

function findPackageRoot(start: string): string {
  let dir = start;
  for (;;) {
    const manifest = path.join(dir, "package.json");
    if (fs.existsSync(manifest)) {
      try {
        if (JSON.parse(fs.readFileSync(manifest, "utf8")).name === "kgrank-native") return dir;
      } catch {
        // not ours; keep looking
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(start, "..", "..", "..");
    dir = parent;
  }
}

/** The installed package (or the repository): where prebuilds/, build/, wasm/ and scripts/ lie. */
export const packageRoot: string = findPackageRoot(__dirname);

const packageVersion: string = (() => {
  try {
    return String(JSON.parse(fs.readFileSync(path.join(packageRoot, "package.json"), "utf8")).version);
  } catch {
    return "0.0.0";
  }
})();

interface PrebuildScript {
  explainPrebuild(root: string): { file?: string; reason?: string };
  prefersBuild(root: string): boolean;
}

/** scripts/find-prebuild.js (shared with the install script), or null when the package lacks it. */
function prebuildScript(): PrebuildScript | null {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(path.join(packageRoot, "scripts", "find-prebuild.js")) as PrebuildScript;
  } catch {
    return null;
  }
}

interface Candidate {
  tier: Exclude<BackendTier, "wasm" | "ts">;
  file: string;
  /** Set when the place has nothing to load, and why. */
  missing?: string;
}

/**
 * Ordered places to look for the addon: an explicit path alone; else the shipped prebuild (the Node-API binary for
 * this platform, arch and libc, matched by node-gyp-build's rules in scripts/find-prebuild.js), then the node-gyp
 * builds, then the cmake-js build; the local builds come first after an install that built from source (or with
 * KGRANK_BUILD_FROM_SOURCE=1). The TypeScript fallback comes after all of them.
 */
function addonCandidates(): Candidate[] {
  const explicit = process.env.KGRANK_ADDON_PATH;
  if (explicit) return [{ tier: "native build", file: path.resolve(explicit) }];
  const script = prebuildScript();
  const found = script?.explainPrebuild(packageRoot) ?? { reason: "scripts/find-prebuild.js is missing" };
  const prebuild: Candidate = found.file
    ? { tier: "native prebuild", file: found.file }
    : { tier: "native prebuild", file: path.join(packageRoot, "prebuilds"), missing: found.reason };
  const builds: Candidate[] = [
    path.join(packageRoot, "build", "Release", "kgrank.node"),
    path.join(packageRoot, "build", "Debug", "kgrank.node"),
    path.join(packageRoot, "build-cmake", "Release", "kgrank.node"),
  ].map((file) => ({ tier: "native build", file }));
  return script?.prefersBuild(packageRoot) ? [...builds, prebuild] : [prebuild, ...builds];
}

interface AddonLoad {
  addon: NativeAddon | null;
  path?: string;
  tier?: Candidate["tier"];
  /** One line per failed try, for the aggregated message. */
  failures: string[];
  /** The same, each with its tier. */
  skipped: string[];
  /** No prebuild fits this platform (the fix is then a build from source, not a reinstall). */
  noPrebuild: boolean;
}

function tryLoadAddon(): AddonLoad {
  const failures: string[] = [];
  const skipped: string[] = [];
  let noPrebuild = false;
  const fail = (c: Candidate, why: string) => {
    failures.push(`${c.file}: ${why}`);
    skipped.push(`${c.tier}: ${c.file}: ${why}`);
  };
  for (const candidate of addonCandidates()) {
    if (candidate.missing !== undefined) {
      noPrebuild = true;
      fail(candidate, candidate.missing);
      continue;
    }
    if (!fs.existsSync(candidate.file)) {
      fail(candidate, "not built");
      continue;
    }
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const addon = require(candidate.file) as NativeAddon;
      addon.info();
      return { addon, path: candidate.file, tier: candidate.tier, failures, skipped, noPrebuild };
    } catch (err) {
      fail(candidate, (err as Error).message.split("\n")[0]!);
    }
  }
  return { addon: null, failures, skipped, noPrebuild };
}

/** The fallback, with failed typed-array allocations raised as KgrankMemoryError (as the addon's). */
const tsKernels: Kernels = withMemoryErrors(fallbackKernels);

const SIMD_CODES: Record<SimdLevel, number> = { scalar: 0, avx2: 1, avx512: 2, neon: 3 };

/**
 * An async binding's input as the native call takes it: views of a resizable ArrayBuffer are copied (the addon refuses
 * them: its job works in slices between event-loop turns and would stop when one shrinks, native/addon/watch.h).
 * Outputs are always the facade's own arrays.
 */
function holdable<T extends FloatArray | Int32Array>(a: T): T {
  return (a.buffer as { resizable?: boolean }).resizable === true ? (a.slice() as T) : a;
}

/** The addon's rankEmbeddings arguments (native/addon/score_bindings.cpp); empty arrays stand for "none". */
function embeddingArgs(input: EmbeddingRankInput, out: Float64Array, level: number, threads: number): unknown[] {
  const empty = input.entityEmbeddings instanceof Float64Array ? new Float64Array(0) : new Float32Array(0);
  const meta = embeddingMeta(input);
  return [
    holdable(input.entityEmbeddings),
    holdable(input.relationEmbeddings),
    input.entityScale ? holdable(input.entityScale) : empty,
    meta,
    input.anchor,
    input.relationIds,
    input.truth,
    input.candidates ?? new Int32Array(0),
    input.negatives ?? new Int32Array(0),
    input.excludeOffsets ?? new Uint32Array(0),
    input.excludeIds ?? new Int32Array(0),
    input.anchorRows ? holdable(input.anchorRows) : empty,
    input.anchorScale ? holdable(input.anchorScale) : empty,
    input.trueScores ?? new Float64Array(0),
    input.candidateSets?.offsets ?? new Int32Array(0),
    input.candidateSets?.ids ?? new Int32Array(0),
    out,
    input.negativesPerRow,
    level,
    threads,
  ];
}

/**
 * Native kernels at a fixed SIMD level and default thread count. Also used by bench/count.bench.mjs, through dist/.
 * @public
 */
export function nativeKernels(addon: NativeAddon, simd: SimdLevel, threads: number): Kernels {
  const level = SIMD_CODES[simd];
  return {
    backend: "native",
    simd,
    threads,
    ...nativeMetricKernels(addon, level, threads, (n) => fallbackKernels.candidateHistogram(n, null)),
    countScores(scores: FloatArray, numColumns: number, thresholds: FloatArray, out: CountBuffers, t?: number) {
      nativeCall("scores", () =>
        addon.countScores(scores, numColumns, thresholds, out.greater, out.equal, out.nan, level, t ?? threads),
      );
    },
    countScoresAsync(
      scores: FloatArray,
      numColumns: number,
      thresholds: FloatArray,
      out: CountBuffers,
      t?: number,
      control?: KernelControl,
    ) {
      return underControl(addon, control, thresholds.length, (nativeControl) =>
        nativeCallAsync("scores", () =>
          addon.countScoresAsync(
            holdable(scores),
            numColumns,
            holdable(thresholds),
            out.greater,
            out.equal,
            out.nan,
            level,
            t ?? threads,
            nativeControl,
          ),
        ),
      );
    },
    countScoresByIndex(s: FloatArray, cols: number, idx: Int32Array, th: FloatArray, out: CountBuffers, t?: number) {
      nativeCall("trueIndices", () =>
        addon.countScoresByIndex(s, cols, idx, th, out.greater, out.equal, out.nan, level, t ?? threads),
      );
    },
    countScoresByIndexAsync(
      s: FloatArray,
      cols: number,
      idx: Int32Array,
      th: FloatArray,
      out: CountBuffers,
      t?: number,
      control?: KernelControl,
    ) {
      return underControl(addon, control, idx.length, (nativeControl) =>
        nativeCallAsync("trueIndices", () =>
          addon.countScoresByIndexAsync(
            holdable(s),
            cols,
            holdable(idx),
            th,
            out.greater,
            out.equal,
            out.nan,
            level,
            t ?? threads,
            nativeControl,
          ),
        ),
      );
    },
    rankEmbeddings(input: EmbeddingRankInput, out: Float64Array, t?: number) {
      addon.rankEmbeddings(...embeddingArgs(input, out, level, t ?? threads));
    },
    firstNonFinite(values: FloatArray) {
      return addon.firstNonFinite(values);
    },
    rankEmbeddingsAsync(input: EmbeddingRankInput, out: Float64Array, t?: number, control?: KernelControl) {
      return underControl(addon, control, input.anchor.length, (c) =>
        addon.rankEmbeddingsAsync(...embeddingArgs(input, out, level, t ?? threads), c),
      );
    },
    topKEmbeddings(input: EmbeddingRankInput, range: TopKRange, ids: Int32Array, scores: Float64Array, t?: number) {
      const out = new Float64Array(5 * input.anchor.length + 2); // rankEmbeddings' output argument, not written
      nativeCall("topKEmbeddings", () =>
        addon.topKEmbeddings(
          ...embeddingArgs(input, out, level, t ?? threads),
          Float64Array.of(range.k, range.begin, range.end),
          ids,
          scores,
          range.floor ?? new Float64Array(0),
        ),
      );
    },
    scoreRelations(input: EmbeddingRankInput, scores: FloatArray, t?: number) {
      const out = new Float64Array(5 * input.anchor.length + 2); // rankEmbeddings' output argument, not written
      nativeCall("scoreRelations", () =>
        addon.scoreRelations(...embeddingArgs(input, out, level, t ?? threads), scores),
      );
    },
    buildFilterIndex(triples: Int32Array[], numEntities: number, numRelations: number, side: Side, t?: number) {
      return nativeFilterIndex(addon, triples, numEntities, numRelations, side, level, t ?? threads);
    },
  };
}

function parseThreads(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 4096) {
    throw new KgrankBackendError(`KGRANK_THREADS=${raw} is not valid: use an integer from 1 to 4096, or unset it`);
  }
  return n;
}

interface Selection {
  kernels: Kernels;
  info: BackendInfo;
  addon: NativeAddon | null;
}

/** The fallback warning's last line: what makes the native code load here. */
function fallbackFix(load: AddonLoad): string {
  const build =
    "build the addon here with `npx kgrank build-native --from-source` (a C++17 compiler, make and Python 3; " +
    "pnpm: `pnpm exec kgrank build-native --from-source`)";
  return load.noPrebuild
    ? `No prebuilt addon fits ${process.platform}-${process.arch}: ${build}, or set KGRANK_BACKEND=ts to silence this warning.`
    : `Reinstall kgrank-native, or ${build}, or set KGRANK_BACKEND=ts to silence this warning.`;
}

interface WasmLoad {
  kernels: Kernels | null;
  file: string;
  /** Why it did not load, when it did not. */
  failure?: string;
}

/** The WebAssembly core (wasm/kgrank.wasm, or the file KGRANK_WASM_PATH names), compiled and instantiated. */
function tryLoadWasm(): WasmLoad {
  const explicit = process.env.KGRANK_WASM_PATH;
  const file = explicit ? path.resolve(explicit) : path.join(packageRoot, "wasm", "kgrank.wasm");
  if (!fs.existsSync(file)) return { kernels: null, file, failure: "not built (npm run build:wasm)" };
  try {
    return { kernels: wasmKernels(compileWasm(fs.readFileSync(file)), tsKernels, rowSlices), file };
  } catch (err) {
    return { kernels: null, file, failure: (err as Error).message.split("\n")[0]! };
  }
}

function tsSelection(reason: string, skipped: string[]): Selection {
  return {
    kernels: tsKernels,
    addon: null,
    info: {
      backend: "ts",
      simd: "none",
      threads: 1,
      version: packageVersion,
      supportedSimd: [],
      hardwareThreads: os.availableParallelism(),
      fallbackReason: reason,
      tier: "ts",
      skipped,
    },
  };
}

function wasmSelection(wasm: WasmLoad & { kernels: Kernels }, reason: string, skipped: string[]): Selection {
  return {
    kernels: wasm.kernels,
    addon: null,
    info: {
      backend: "wasm",
      simd: "simd128",
      threads: 1,
      version: packageVersion,
      supportedSimd: [],
      hardwareThreads: os.availableParallelism(),
      wasmPath: wasm.file,
      fallbackReason: reason,
      tier: "wasm",
      skipped,
    },
  };
}

function select(): Selection {
  const wanted = (process.env.KGRANK_BACKEND ?? "").trim().toLowerCase();
  if (wanted !== "" && wanted !== "native" && wanted !== "wasm" && wanted !== "ts" && wanted !== "auto") {
    throw new KgrankBackendError(
      `KGRANK_BACKEND=${process.env.KGRANK_BACKEND} is not valid: use native, wasm, ts or auto (or unset it)`,
    );
  }
  if (wanted === "ts") {
    return tsSelection("KGRANK_BACKEND=ts", [
      "native: not tried (KGRANK_BACKEND=ts)",
      "wasm: not tried (KGRANK_BACKEND=ts)",
    ]);
  }
  if (wanted === "wasm") {
    const wasm = tryLoadWasm();
    if (!wasm.kernels) {
      throw new KgrankBackendError(
        `KGRANK_BACKEND=wasm but the WebAssembly core could not be loaded: ${wasm.file}: ${wasm.failure}\n` +
          "Build it with `npm run build:wasm` (needs clang with the WASI sysroot), or unset KGRANK_BACKEND.",
      );
    }
    return wasmSelection(wasm as WasmLoad & { kernels: Kernels }, "KGRANK_BACKEND=wasm", [
      "native: not tried (KGRANK_BACKEND=wasm)",
    ]);
  }
  const load = tryLoadAddon();
  if (!load.addon) {
    const reason = `the native addon could not be loaded:\n  ${load.failures.join("\n  ")}`;
    if (wanted === "native") {
      throw new KgrankBackendError(
        `KGRANK_BACKEND=native but ${reason}\nBuild it with \`npm run build:native\` (needs a C++17 compiler and Python), ` +
          `or unset KGRANK_BACKEND to use the TypeScript fallback.`,
      );
    }
    const wasm = tryLoadWasm();
    if (wasm.kernels) {
      process.emitWarning(
        `kgrank-native is using its WebAssembly core (one thread, slower than native, same results) because ${reason}\n` +
          fallbackFix(load).replace("KGRANK_BACKEND=ts", "KGRANK_BACKEND=wasm"),
        { code: "KGRANK_WASM" },
      );
      return wasmSelection(wasm as WasmLoad & { kernels: Kernels }, reason, load.skipped);
    }
    process.emitWarning(
      `kgrank-native is using its pure-TypeScript fallback (slower, same results) because ${reason}\n  ` +
        `${wasm.file}: ${wasm.failure}\n${fallbackFix(load)}`,
      { code: "KGRANK_FALLBACK" },
    );
    return tsSelection(reason, [...load.skipped, `wasm: ${wasm.file}: ${wasm.failure}`]);
  }
  const addon = load.addon;
  const native = addon.info();
  const supported = native.simdLevels.map((l) => l.name);
  const best = native.simdLevels.find((l) => l.level === native.bestSimd)?.name ?? "scalar";
  let simd: SimdLevel = best;
  const forced = (process.env.KGRANK_SIMD ?? "").trim().toLowerCase();
  if (forced !== "") {
    if (!(forced in SIMD_CODES)) {
      throw new KgrankBackendError(
        `KGRANK_SIMD=${process.env.KGRANK_SIMD} is not a SIMD level: use one of ${supported.join(", ")} (or unset it)`,
      );
    }
    if (!supported.includes(forced as SimdLevel)) {
      throw new KgrankBackendError(
        `KGRANK_SIMD=${forced} is not supported by this CPU or build: supported levels are ${supported.join(", ")}`,
      );
    }
    simd = forced as SimdLevel;
  }
  const threads = parseThreads(process.env.KGRANK_THREADS, native.hardwareThreads);
  return {
    kernels: nativeKernels(addon, simd, threads),
    addon,
    info: {
      backend: "native",
      simd,
      threads,
      version: packageVersion,
      supportedSimd: supported,
      hardwareThreads: native.hardwareThreads,
      addonPath: load.path,
      tier: load.tier!,
      skipped: load.skipped,
    },
  };
}

const selection: Selection = select();

/** The kernels every public function uses. */
export function kernels(): Kernels {
  return selection.kernels;
}

/** The loaded addon, or null on the fallback (benchmarks and tests use it to run other SIMD levels). */
export function nativeAddon(): NativeAddon | null {
  return selection.addon;
}

/** Which backend is in use, at which SIMD level and thread count, and why the fallback is in use if it is. */
export function backendInfo(): BackendInfo {
  return { ...selection.info, supportedSimd: [...selection.info.supportedSimd], skipped: [...selection.info.skipped] };
}

let loadedWasm: Kernels | null | undefined;

/**
 * The WebAssembly core's kernels (the selection's, or loaded on first use), or null when it does not load. Also used
 * by bench/wasm.mjs, through dist/.
 * @public
 */
export function wasmCoreKernels(): Kernels | null {
  if (selection.info.backend === "wasm") return selection.kernels;
  if (loadedWasm === undefined) loadedWasm = tryLoadWasm().kernels;
  return loadedWasm;
}

/**
 * Every backend this process can run: the native kernels at each supported SIMD level, then the WebAssembly core
 * (when it loads), then the fallback. Used by tests (parity) and benchmarks; not part of the stable API.
 */
export function allKernels(threads?: number): Kernels[] {
  const out: Kernels[] = [];
  const addon = selection.addon;
  if (addon) {
    const info = addon.info();
    for (const level of info.simdLevels) out.push(nativeKernels(addon, level.name, threads ?? selection.info.threads));
  }
  const wasm = wasmCoreKernels();
  if (wasm) out.push(wasm);
  out.push(tsKernels);
  return out;
}
