/**
 * The WebAssembly tier: native/core compiled for wasm32 with SIMD128, one thread (scripts/build-wasm.mjs builds
 * wasm/kgrank.wasm; native/wasm/exports.cpp is its C ABI). No Node-API: each call copies its inputs into the
 * instance's memory, runs the core's scalar kernel there and copies the outputs back, so the kernels' outputs equal
 * the native addon's bit for bit (the core's kernels: the same operations in the same order as every native level). The kernels
 * it runs: countScores, countScoresByIndex (dense rows, in blocks of about COUNT_BLOCK_BYTES so the copy is read
 * back from cache), rankEmbeddings, topKEmbeddings, scoreRelations, firstNonFinite. Everything else - the metric
 * kernels, the filter index and its filtered counts - is the fallback's (`fallback`), which gives the same results
 * but for the geometric-mean family's last bits (Math.log / Math.exp against the C library's: within 1e-12 relative).
 *
 * Safety: the instance's memory is its own (a bad pointer reads or traps inside it, never the process's). An
 * allocation the instance cannot make (wasm32: 4 GiB at most) or a trap (an allocation failed inside the core,
 * which aborts there: the build has no exceptions) runs the call on the fallback instead, on a fresh instance for the
 * next call; the instance is also dropped after a call that grew its memory past KEEP_BYTES (wasm memory never
 * shrinks), so no call leaves the process holding more than that.
 */
import type {
  CountBuffers,
  EmbeddingRankInput,
  FloatArray,
  KernelControl,
  Kernels,
  TopKRange,
} from "../contract/kernels";
import { embeddingArgs } from "../contract/addon";
import { embeddingReads } from "../contract/kernels";

/**
 * The part of the WebAssembly JavaScript API used here (the global of Node and browsers; this project's type
 * libraries do not declare it).
 */
interface WebAssemblyApi {
  Module: { new (bytes: Uint8Array): WasmModule; exports(module: WasmModule): { name: string }[] };
  compile(bytes: Uint8Array | ArrayBuffer): Promise<WasmModule>;
  Instance: new (module: WasmModule, imports: object) => { exports: unknown };
  RuntimeError: new (message?: string) => Error;
}
const WebAssembly = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;

/** A compiled kgrank.wasm. */
export interface WasmModule {
  readonly __wasmModule: unique symbol;
}

/** Compiles kgrank.wasm's bytes (synchronously: the module is about 200 kB) and checks it exports this glue's ABI. */
export function compileWasm(bytes: Uint8Array): WasmModule {
  return checkedWasm(new WebAssembly.Module(bytes));
}

/**
 * compileWasm off the calling thread (WebAssembly.compile): what a browser's main thread must use for a module this
 * size. The bytes, or a module compiled elsewhere (e.g. by WebAssembly.compileStreaming), are checked the same way.
 */
export async function compileWasmAsync(source: Uint8Array | ArrayBuffer | WasmModule): Promise<WasmModule> {
  return checkedWasm(
    source instanceof Uint8Array || source instanceof ArrayBuffer ? await WebAssembly.compile(source) : source,
  );
}

/** `module` when it exports this glue's ABI (WasmExports); otherwise an error that says to rebuild it. */
function checkedWasm(module: WasmModule): WasmModule {
  const names = new Set(WebAssembly.Module.exports(module).map((e) => e.name));
  const missing = EXPORTS.filter((name) => !names.has(name));
  if (missing.length > 0) {
    throw new Error(
      `not this package's kgrank.wasm (no export ${missing.join(", ")}): rebuild it with npm run build:wasm`,
    );
  }
  return module;
}

/** What native/wasm/exports.cpp exports (sizes and pointers are 32-bit; doubles for the indices that may not be). */
interface WasmExports {
  memory: { readonly buffer: ArrayBuffer };
  _initialize(): void;
  kg_alloc(bytes: number): number;
  kg_free(pointer: number): void;
  kg_ptr_count(): number;
  kg_count_f32(s: number, rows: number, cols: number, t: number, g: number, e: number, n: number): void;
  kg_count_f64(s: number, rows: number, cols: number, t: number, g: number, e: number, n: number): void;
  kg_count_by_index_f32(
    s: number,
    rows: number,
    cols: number,
    i: number,
    t: number,
    g: number,
    e: number,
    n: number,
  ): void;
  kg_count_by_index_f64(
    s: number,
    rows: number,
    cols: number,
    i: number,
    t: number,
    g: number,
    e: number,
    n: number,
  ): void;
  kg_first_non_finite_f32(values: number, n: number): number;
  kg_first_non_finite_f64(values: number, n: number): number;
  kg_rank_embeddings(wide: number, meta: number, pointers: number, out: number): number;
  kg_top_k(
    wide: number,
    meta: number,
    pointers: number,
    k: number,
    begin: number,
    end: number,
    ids: number,
    scores: number,
  ): number;
  kg_score_relations(wide: number, meta: number, pointers: number, scores: number): number;
}

/** Every function of WasmExports, and the memory. */
const EXPORTS = [
  "memory",
  "_initialize",
  "kg_alloc",
  "kg_free",
  "kg_ptr_count",
  "kg_count_f32",
  "kg_count_f64",
  "kg_count_by_index_f32",
  "kg_count_by_index_f64",
  "kg_first_non_finite_f32",
  "kg_first_non_finite_f64",
  "kg_rank_embeddings",
  "kg_top_k",
  "kg_score_relations",
];

/** Bytes of score rows copied and counted at a time: the copy is still in cache when the kernel reads it. */
const COUNT_BLOCK_BYTES = 1024 * 1024;
/** An instance whose memory grew past this is dropped after its call (the next call starts a fresh one). */
const KEEP_BYTES = 256 * 1024 * 1024;
/** native/wasm/exports.cpp Ptr: the slots of the pointer table of an embedding call. */
const PTR_SLOTS = 18;

type Typed = FloatArray | Int32Array | Uint32Array;
type TypedCtor = Float32ArrayConstructor | Float64ArrayConstructor | Int32ArrayConstructor | Uint32ArrayConstructor;

/** The allocation failed (the instance cannot grow that far): the call goes to the fallback. */
class OutOfWasmMemory extends Error {}

/** One call's allocations in the instance: inputs copied in, outputs read back, everything freed at the end. */
class Frame {
  private readonly pointers: number[] = [];
  constructor(private readonly x: WasmExports) {}
  alloc(bytes: number): number {
    const p = this.x.kg_alloc(bytes);
    if (p === 0) throw new OutOfWasmMemory();
    this.pointers.push(p);
    return p;
  }
  /** A copy of `a` in the instance; 0 (none) for null, and for an empty array unless `keepEmpty`. */
  put(a: Typed | null, keepEmpty = false): number {
    if (a === null || (a.length === 0 && !keepEmpty)) return 0;
    const p = this.alloc(a.byteLength);
    new Uint8Array(this.x.memory.buffer, p, a.byteLength).set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
    return p;
  }
  /** A view of `length` elements at `p` (valid until the next allocation: memory may grow). */
  view<C extends TypedCtor>(ctor: C, p: number, length: number): InstanceType<C> {
    return new ctor(this.x.memory.buffer, p, length) as InstanceType<C>;
  }
  free(): void {
    for (const p of this.pointers) this.x.kg_free(p);
  }
}

/**
 * An async kernel without a control, as the fallback runs it: to its end before the call returns (the inputs are read
 * at once, whatever the caller does with them afterwards), settled as a promise.
 */
function settled(run: () => void): Promise<void> {
  try {
    run();
    return Promise.resolve();
  } catch (e) {
    return Promise.reject(e);
  }
}

function instantiate(module: WasmModule): WasmExports {
  const x = new WebAssembly.Instance(module, {}).exports as unknown as WasmExports;
  x._initialize();
  if (x.kg_ptr_count() !== PTR_SLOTS) throw new Error("kgrank.wasm does not match this package's glue (rebuild it)");
  return x;
}

/**
 * How the fallback slices an async kernel's rows between event-loop turns under a control (src/fallback/slices.ts):
 * the stop checked and the rows done reported between slices, a slice loop that finds an input given away stopping.
 */
export interface RowSlices {
  inSlices(
    rows: number,
    work: number,
    control: KernelControl,
    inputs: readonly (ArrayBufferView | null)[],
    step: (r0: number, r1: number) => void,
  ): Promise<void>;
  bufferRows<T extends CountBuffers>(out: T, r0: number, r1: number): T;
}

/**
 * The kernels of the WebAssembly core `module` (kgrank.wasm, compiled); what it does not run is `fallback`'s. An
 * async call under a control runs the core in `slices`, as the fallback does.
 */
export function wasmKernels(module: WasmModule, fallback: Kernels, slices: RowSlices): Kernels {
  // Instantiated at the first call: V8 reserves the whole wasm32 address space then, which a low `ulimit -v` refuses;
  // such a process runs every call on the fallback (inWasm) instead of failing at load.
  let current: WasmExports | null = null;
  /** Instances that trapped: never used again (a sliced call still running on one restarts on the fallback). */
  const broken = new WeakSet<WasmExports>();
  const trapped = (x: WasmExports) => {
    broken.add(x);
    if (current === x) current = null;
  };

  /** Runs `body` in a frame of the instance; on a failed allocation or a trap, returns `otherwise()` instead. */
  function inWasm<T>(body: (f: Frame, x: WasmExports) => T, otherwise: () => T): T {
    let x: WasmExports;
    try {
      x = current ?? (current = instantiate(module));
    } catch {
      return otherwise(); // no address space for a fresh instance (V8 reserves it whole): this call is the fallback's
    }
    const frame = new Frame(x);
    let result: T;
    try {
      result = body(frame, x);
      frame.free();
    } catch (e) {
      if (e instanceof WebAssembly.RuntimeError) {
        trapped(x); // a trap leaves the instance's allocator in an unknown state
        return otherwise();
      }
      frame.free();
      if (e instanceof OutOfWasmMemory) return otherwise();
      throw e;
    }
    if (x.memory.buffer.byteLength > KEEP_BYTES) current = null;
    return result;
  }

  function countBlocks(
    scores: FloatArray,
    numColumns: number,
    rows: number,
    perRow: Typed,
    thresholdsOut: FloatArray | null,
    out: CountBuffers,
    run: (x: WasmExports, s: number, r: number, perRow: number, th: number, g: number, e: number, n: number) => void,
  ): void {
    const wide = scores instanceof Float64Array;
    const esize = wide ? 8 : 4;
    const block = Math.max(1, Math.min(rows, Math.floor(COUNT_BLOCK_BYTES / Math.max(1, numColumns * esize))));
    const ctor = wide ? Float64Array : Float32Array;
    inWasm(
      (f, x) => {
        const s = f.alloc(block * numColumns * esize);
        const pr = f.alloc(block * perRow.BYTES_PER_ELEMENT);
        const th = thresholdsOut ? f.alloc(block * esize) : 0;
        const counts = f.alloc(3 * block * 8);
        for (let r0 = 0; r0 < rows; r0 += block) {
          const n = Math.min(block, rows - r0);
          f.view(ctor, s, n * numColumns).set(scores.subarray(r0 * numColumns, (r0 + n) * numColumns));
          f.view(perRow.constructor as TypedCtor, pr, n).set(perRow.subarray(r0, r0 + n));
          run(x, s, n, pr, th, counts, counts + 8 * n, counts + 16 * n);
          const c = f.view(Float64Array, counts, 3 * n);
          out.greater.set(c.subarray(0, n), r0);
          out.equal.set(c.subarray(n, 2 * n), r0);
          out.nan.set(c.subarray(2 * n, 3 * n), r0);
          if (thresholdsOut) thresholdsOut.set(f.view(ctor, th, n), r0);
        }
      },
      () => {
        if (thresholdsOut) {
          fallback.countScoresByIndex(scores, numColumns, perRow as Int32Array, thresholdsOut, out);
        } else {
          fallback.countScores(scores, numColumns, perRow as FloatArray, out);
        }
      },
    );
  }

  function countScores(scores: FloatArray, numColumns: number, thresholds: FloatArray, out: CountBuffers): void {
    const wide = scores instanceof Float64Array;
    countBlocks(scores, numColumns, thresholds.length, thresholds, null, out, (x, s, r, t, _th, g, e, n) =>
      wide ? x.kg_count_f64(s, r, numColumns, t, g, e, n) : x.kg_count_f32(s, r, numColumns, t, g, e, n),
    );
  }

  function countScoresByIndex(
    scores: FloatArray,
    numColumns: number,
    trueIndex: Int32Array,
    thresholdsOut: FloatArray,
    out: CountBuffers,
  ): void {
    const wide = scores instanceof Float64Array;
    countBlocks(scores, numColumns, trueIndex.length, trueIndex, thresholdsOut, out, (x, s, r, i, th, g, e, n) =>
      wide
        ? x.kg_count_by_index_f64(s, r, numColumns, i, th, g, e, n)
        : x.kg_count_by_index_f32(s, r, numColumns, i, th, g, e, n),
    );
  }

  /**
   * The meta and pointer table of an embedding call (native/wasm/exports.cpp), its inputs copied in: the record the
   * native addon takes (src/contract/addon.ts EmbeddingArgs), marshalled to the core's pointer ABI.
   */
  function embeddingFrame(
    f: Frame,
    input: EmbeddingRankInput,
  ): { wide: number; meta: number; table: number; slots: Uint32Array } {
    const { model: m, queries: q } = embeddingArgs(input, 0, 1);
    const rows = q.anchor.length;
    const meta = f.put(
      Float64Array.of(
        m.interaction,
        m.layout,
        m.numEntities,
        m.entityWidth,
        m.numRelations,
        m.relationWidth,
        m.phaseScale,
        q.headSide ? 1 : 0,
        m.entityOffset,
      ),
    );
    const slots = Uint32Array.of(
      f.put(m.entity),
      f.put(m.relation),
      f.put(m.entityScale ?? null),
      f.put(q.anchorRows ?? null),
      f.put(q.anchorScale ?? null),
      f.put(q.anchor),
      f.put(q.relation),
      f.put(q.truth),
      f.put(q.candidates ?? null),
      q.candidates?.length ?? 0,
      f.put(q.negatives ?? null),
      q.negatives?.length ? q.negativesPerRow : 0,
      f.put(q.excludeOffsets ?? null),
      q.excludeOffsets?.length ? f.put(q.excludeIds ?? null, true) : 0,
      f.put(q.trueScores ?? null),
      rows,
      f.put(q.setOffsets ?? null),
      q.setOffsets ? f.put(q.setIds ?? null, true) : 0,
    );
    return { wide: m.entity instanceof Float64Array ? 1 : 0, meta, table: f.put(slots), slots };
  }

  /**
   * rankEmbeddings under a control: the inputs copied in once, then rows ranked in the fallback's slices between
   * event-loop turns (kg_rank_embeddings over each slice's rows, the pointers of the per-row arrays moved to its first
   * row; the exclusion offsets index the whole id list), each slice's counts copied out, the first failed row's
   * status kept as the fallback keeps it. A trap or a failed allocation runs the whole call on the fallback.
   */
  async function rankEmbeddingsSliced(input: EmbeddingRankInput, out: Float64Array, control: KernelControl) {
    const onFallback = () => fallback.rankEmbeddingsAsync(input, out, 1, control);
    let x: WasmExports;
    try {
      x = current ?? (current = instantiate(module));
    } catch {
      return onFallback();
    }
    const f = new Frame(x);
    try {
      let prepared: ReturnType<typeof embeddingFrame>;
      let part: number;
      let table: number;
      const rows = input.anchor.length;
      try {
        prepared = embeddingFrame(f, input);
        part = f.alloc(8 * (5 * rows + 2));
        table = f.alloc(4 * PTR_SLOTS);
      } catch (e) {
        if (e instanceof OutOfWasmMemory) return onFallback();
        throw e;
      }
      const { wide, meta, slots } = prepared;
      const esize = wide ? 8 : 4;
      // Byte steps per row of the per-row slots (native/wasm/exports.cpp Ptr order).
      const K = slots[11]!;
      const w = input.entityWidth;
      const step = [0, 0, 0, esize * w, esize, 4, 4, 4, 0, 0, 4 * K, 0, 4, 0, 8, 0, 0, 0];
      const { arrays, perRow } = embeddingReads(input);
      out.fill(0);
      let failed = false;
      await slices.inSlices(rows, perRow, control, arrays, (r0, r1) => {
        if (failed) return;
        if (broken.has(x)) throw new WebAssembly.RuntimeError();
        const n = r1 - r0;
        const at = f.view(Uint32Array, table, PTR_SLOTS);
        for (let k = 0; k < PTR_SLOTS; k++)
          at[k] = slots[k]! !== 0 && step[k]! !== 0 ? slots[k]! + step[k]! * r0 : slots[k]!;
        at[15] = n;
        x.kg_rank_embeddings(wide, meta, table, part);
        const got = f.view(Float64Array, part, 5 * n + 2);
        if (got[5 * n] !== 0) {
          out[5 * rows] = got[5 * n]!;
          out[5 * rows + 1] = r0 + got[5 * n + 1]!;
          failed = true;
          return;
        }
        for (let k = 0; k < 5; k++) out.set(got.subarray(k * n, (k + 1) * n), k * rows + r0);
      });
    } catch (e) {
      if (!(e instanceof WebAssembly.RuntimeError)) throw e;
      trapped(x);
      return onFallback();
    } finally {
      if (!broken.has(x)) f.free();
    }
    if (x.memory.buffer.byteLength > KEEP_BYTES && current === x) current = null;
  }

  function rankEmbeddings(input: EmbeddingRankInput, out: Float64Array): void {
    inWasm(
      (f, x) => {
        const { wide, meta, table } = embeddingFrame(f, input);
        const o = f.put(out, true); // slots the kernel leaves (after a NaN true score) keep the caller's values
        x.kg_rank_embeddings(wide, meta, table, o);
        out.set(f.view(Float64Array, o, out.length));
      },
      () => fallback.rankEmbeddings(input, out),
    );
  }

  function firstNonFinite(values: FloatArray): number {
    const wide = values instanceof Float64Array;
    return inWasm(
      (f, x) => {
        const p = f.put(values);
        return wide ? x.kg_first_non_finite_f64(p, values.length) : x.kg_first_non_finite_f32(p, values.length);
      },
      () => fallback.firstNonFinite(values),
    );
  }

  return {
    ...fallback,
    backend: "wasm",
    simd: "simd128",
    threads: 1,
    countScores,
    countScoresByIndex,
    countScoresAsync(scores, numColumns, thresholds, out, _t?: number, control?: KernelControl) {
      if (!control) return settled(() => countScores(scores, numColumns, thresholds, out));
      return slices.inSlices(thresholds.length, numColumns, control, [scores, thresholds], (r0, r1) =>
        countScores(
          scores.subarray(r0 * numColumns, r1 * numColumns),
          numColumns,
          thresholds.subarray(r0, r1),
          slices.bufferRows(out, r0, r1),
        ),
      );
    },
    countScoresByIndexAsync(scores, numColumns, trueIndex, th, out, _t?: number, control?: KernelControl) {
      if (!control) return settled(() => countScoresByIndex(scores, numColumns, trueIndex, th, out));
      return slices.inSlices(trueIndex.length, numColumns, control, [scores, trueIndex], (r0, r1) =>
        countScoresByIndex(
          scores.subarray(r0 * numColumns, r1 * numColumns),
          numColumns,
          trueIndex.subarray(r0, r1),
          th.subarray(r0, r1),
          slices.bufferRows(out, r0, r1),
        ),
      );
    },
    rankEmbeddings,
    rankEmbeddingsAsync(input, out, _t?: number, control?: KernelControl) {
      if (control) return rankEmbeddingsSliced(input, out, control);
      return settled(() => rankEmbeddings(input, out));
    },
    firstNonFinite,
    topKEmbeddings(input: EmbeddingRankInput, range: TopKRange, ids: Int32Array, scores: Float64Array) {
      inWasm(
        (f, x) => {
          const { wide, meta, table } = embeddingFrame(f, input);
          const pi = f.put(ids, true);
          const ps = f.put(scores, true);
          const status = x.kg_top_k(wide, meta, table, range.k, range.begin, range.end, pi, ps);
          if (status !== 0) throw new OutOfWasmMemory(); // the core's only failure: its lists did not fit
          ids.set(f.view(Int32Array, pi, ids.length));
          scores.set(f.view(Float64Array, ps, scores.length));
        },
        () => fallback.topKEmbeddings(input, range, ids, scores),
      );
    },
    scoreRelations(input: EmbeddingRankInput, scores: FloatArray) {
      inWasm(
        (f, x) => {
          const { wide, meta, table } = embeddingFrame(f, input);
          const p = f.put(scores, true);
          const status = x.kg_score_relations(wide, meta, table, p);
          if (status !== 0) throw new OutOfWasmMemory(); // the core's only failure: its buffers did not fit
          scores.set(f.view(wide ? Float64Array : Float32Array, p, scores.length));
        },
        () => fallback.scoreRelations(input, scores),
      );
    },
    // PyTorch-BigGraph's scores: the fallback's (the same bits; the WebAssembly core does not export them).
    pbgAdjust: (input, out) => fallback.pbgAdjust(input, out),
    pbgCompare: (input, out) => fallback.pbgCompare(input, out),
  };
}
