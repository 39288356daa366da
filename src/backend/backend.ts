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
import {
  type AddonEnums,
  asIs,
  type CountScoresArgs,
  type CountScoresByIndexArgs,
  embeddingArgs,
  type Hold,
  type PbgAdjustArgs,
  type PbgCompareArgs,
  type RankEmbeddingsArgs,
  type ScoreRelationsArgs,
  type ScreenTableArgs,
  type ScreenTableSaveArgs,
  screenArgs,
  type TopKEmbeddingsArgs,
} from "../contract/addon";
import {
  type BackendName,
  type CountBuffers,
  type EmbeddingRankInput,
  type FloatArray,
  type KernelControl,
  type Kernels,
  PBG_COMPARATORS,
  PBG_OPERATORS,
  type SimdLevel,
  StatusCode,
  type TopKRange,
} from "../contract/kernels";
import { tsKernels as fallbackKernels, rowSlices } from "../fallback";
import {
  holdable,
  nativeAsync,
  nativeCall,
  type NativeControls,
  type NativeKernelControl,
  statusOf,
  underControl,
  withMemoryErrors,
} from "./native-call";
import { type NativeFilterIndexClass, nativeFilterIndex } from "./native-filter-index";
import { type NativeMetricsAddon, nativeMetricKernels } from "./native-metrics";
import { compileWasm, wasmKernels } from "./wasm";

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

/**
 * What the addon exports (native/addon/addon.cpp). Every kernel takes one record, described in src/contract/addon.ts
 * and read by name in C++ (native/addon/args.h); an async form takes the same record and an optional kernel control.
 * The few calls of one or two plain values (the probes, firstNonFinite, splitTsvTriples, dispatchInfo) take them as
 * they are.
 */
export interface NativeAddon extends NativeMetricsAddon, NativeControls {
  info(): {
    version: string;
    bestSimd: number;
    simdLevels: { name: SimdLevel; level: number; screenKernel: ScreenKernel }[];
    hardwareThreads: number;
    napiVersion: number;
    /** The enums shared with TypeScript (native/addon/enums.h); test/enums.test.ts compares them. */
    enums: AddonEnums;
  };
  /**
   * Debug hook (native/core/simd.h): per kernel family, the ISA variant the dispatch table holds for `simd` and the
   * variant the family's most recent call ran.
   */
  dispatchInfo(simd: number): {
    variants: Record<"count" | "read" | "answers" | "rankSums" | "generateRanks", SimdLevel>;
    last: Record<"count" | "read" | "answers" | "rankSums" | "generateRanks", SimdLevel>;
  };
  countScores(args: CountScoresArgs): void;
  countScoresAsync(args: CountScoresArgs, control?: NativeKernelControl): Promise<void>;
  countScoresByIndex(args: CountScoresByIndexArgs): void;
  countScoresByIndexAsync(args: CountScoresByIndexArgs, control?: NativeKernelControl): Promise<void>;
  /** The read-bandwidth probe (native/core/count.h bandwidth_read); `streaming`: non-temporal loads. */
  bandwidthRead(data: ArrayBufferView, simd: number, threads: number, streaming?: boolean): number;
  /** native/addon/score_bindings.cpp: ranking from embeddings. */
  rankEmbeddings(args: RankEmbeddingsArgs): void;
  rankEmbeddingsAsync(args: RankEmbeddingsArgs, control?: NativeKernelControl): Promise<void>;
  screenTable(args: ScreenTableArgs): unknown;
  screenTableSave(args: ScreenTableSaveArgs): void;
  firstNonFinite(values: FloatArray): number;
  topKEmbeddings(args: TopKEmbeddingsArgs): void;
  scoreRelations(args: ScoreRelationsArgs): void;
  /** native/addon/pbg_bindings.cpp: PyTorch-BigGraph's scores. */
  pbgAdjust(args: PbgAdjustArgs): void;
  pbgCompare(args: PbgCompareArgs): void;
  /** Peak FMA probe: [multiply-adds performed, checksum]. */
  fmaProbe(simd: number, threads: number, iterations: number): [number, number];
  /**
   * native/core/parse.h: 6 byte offsets per triple ([start, end) of head, relation, tail); a rejected file throws a
   * status error (statusOf()).
   */
  splitTsvTriples(bytes: Uint8Array): Uint32Array;
  /** native/core/intern.h: labelled TSV triples to PyKEEN's ids, split by split (0 train, 1 valid, 2 test). */
  TripleInterner: new () => NativeTripleInterner;
  FilterIndex: NativeFilterIndexClass;
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
  /**
   * The int8 screen's kernel at `simd`, when native (docs/screen.md): "amx" (AMX-INT8 tiles), "avx512-vnni",
   * "avx-vnni", "avx2", "neon-sdot" or "scalar". The wasm tier and the fallback keep the float32 path.
   */
  screenKernel?: ScreenKernel;
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

/** The int8 screen's kernels (BackendInfo.screenKernel), fastest first. */
export type ScreenKernel = "amx" | "avx512-vnni" | "avx-vnni" | "avx2" | "neon-sdot" | "scalar";

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

/** The codes of native/core/simd.h SimdLevel (test/enums.test.ts compares). */
export const SIMD_CODES: Readonly<Record<SimdLevel, number>> = { scalar: 0, avx2: 1, avx512: 2, neon: 3 };

/**
 * Native kernels at a fixed SIMD level and default thread count. Also used by bench/count.bench.mjs, through dist/.
 * @public
 */
export function nativeKernels(addon: NativeAddon, simd: SimdLevel, threads: number): Kernels {
  const level = SIMD_CODES[simd];
  /** The record of countScores and its async form; `hold` takes the inputs (outputs are the facade's own). */
  const counted = (
    hold: Hold,
    scores: FloatArray,
    numColumns: number,
    thresholds: FloatArray,
    out: CountBuffers,
    t: number | undefined,
  ): CountScoresArgs => ({
    scores: hold(scores),
    numColumns,
    thresholds,
    greater: out.greater,
    equal: out.equal,
    nan: out.nan,
    simd: level,
    threads: t ?? threads,
  });
  const embedding = (input: EmbeddingRankInput, t: number | undefined, hold: Hold = asIs) =>
    embeddingArgs(input, level, t ?? threads, hold);
  return {
    backend: "native",
    simd,
    threads,
    ...nativeMetricKernels(addon, level, threads, (n) => fallbackKernels.candidateHistogram(n, null)),
    countScores(scores, numColumns, thresholds, out, t?: number) {
      nativeCall("scores", () => addon.countScores(counted(asIs, scores, numColumns, thresholds, out, t)));
    },
    countScoresAsync(scores, numColumns, thresholds, out, t?: number, control?: KernelControl) {
      // The thresholds are an input here, so they are held too.
      const args = counted(holdable, scores, numColumns, holdable(thresholds), out, t);
      return nativeAsync(addon, "scores", control, thresholds.length, (c) => addon.countScoresAsync(args, c));
    },
    countScoresByIndex(scores, numColumns, trueIndex, th, out, t?: number) {
      const args = { ...counted(asIs, scores, numColumns, th, out, t), trueIndex };
      nativeCall("trueIndices", () => addon.countScoresByIndex(args));
    },
    countScoresByIndexAsync(scores, numColumns, trueIndex, th, out, t?: number, control?: KernelControl) {
      const args = { ...counted(holdable, scores, numColumns, th, out, t), trueIndex: holdable(trueIndex) };
      return nativeAsync(addon, "trueIndices", control, trueIndex.length, (c) =>
        addon.countScoresByIndexAsync(args, c),
      );
    },
    rankEmbeddings(input, out, t?: number) {
      addon.rankEmbeddings({ ...embedding(input, t), out, screen: screenArgs(input) });
    },
    screenTable(input, t?: number, file?: string) {
      return nativeCall("screenTable", () =>
        addon.screenTable({
          model: embedding(input, t).model,
          simd: level,
          threads: t ?? threads,
          ...(file !== undefined ? { file } : {}),
        }),
      );
    },
    saveScreenTable(input, table, file, t?: number) {
      nativeCall("screenTableSave", () =>
        addon.screenTableSave({ model: embedding(input, t).model, simd: level, threads: t ?? threads, table, file }),
      );
    },
    firstNonFinite: (values) => addon.firstNonFinite(values),
    rankEmbeddingsAsync(input, out, t?: number, control?: KernelControl) {
      // The screen's stats are an output, as out is: not held.
      const args = { ...embedding(input, t, holdable), out, screen: screenArgs(input) };
      return underControl(addon, control, input.anchor.length, (c) => addon.rankEmbeddingsAsync(args, c));
    },
    topKEmbeddings(input, range: TopKRange, ids, scores, t?: number) {
      const { k, begin, end, floor } = range;
      nativeCall("topKEmbeddings", () =>
        addon.topKEmbeddings({ ...embedding(input, t), k, begin, end, ids, scores, floor, screen: screenArgs(input) }),
      );
    },
    scoreRelations(input, scores, t?: number) {
      nativeCall("scoreRelations", () => addon.scoreRelations({ ...embedding(input, t), scores }));
    },
    pbgAdjust({ scoring, rows, count, global, operator, params }, out, t?: number) {
      const args: PbgAdjustArgs = {
        comparator: PBG_COMPARATORS[scoring.comparator],
        bias: scoring.bias,
        dimension: scoring.dimension,
        operator: PBG_OPERATORS[operator],
        count,
        rows,
        global,
        translation: params.translation,
        diagonal: params.diagonal,
        linear: params.linear_transformation,
        real: params.real,
        imag: params.imag,
        out,
        threads: t ?? threads,
      };
      nativeCall("pbgAdjust", () => addon.pbgAdjust(args));
    },
    pbgCompare({ scoring, ...rest }, out, t?: number) {
      const args: PbgCompareArgs = {
        comparator: PBG_COMPARATORS[scoring.comparator],
        bias: scoring.bias,
        dimension: scoring.dimension,
        ...rest,
        out,
        simd: level,
        threads: t ?? threads,
      };
      nativeCall("pbgCompare", () => addon.pbgCompare(args));
    },
    buildFilterIndex(triples, numEntities, numRelations, side, t?: number) {
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
      screenKernel: native.simdLevels.find((l) => l.name === simd)?.screenKernel,
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
