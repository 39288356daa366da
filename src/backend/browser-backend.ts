/**
 * The backend of the browser build (dist/browser/kgrank.mjs): scripts/build-browser.mjs bundles this module in place
 * of ./backend.ts, so every public function's `kernels()` is this one's. A page has no addon and no file system: the
 * kernels are the TypeScript fallback's until `loadWasm` hands over the WebAssembly core (the same wasm/kgrank.wasm
 * as Node's wasm tier, the same glue, so the same ranks bit for bit as every other backend, and the same metrics but
 * for the geometric-mean family's last bits: Math.log / Math.exp against the C library's). It exports what
 * src/ imports from ./backend.ts (kernels, backendInfo, nativeAddon, nativeParse); `nativeAddon()` is always null,
 * so the parsers run their TypeScript twins.
 */
import type { BackendInfo } from "./backend";
import { KgrankBackendError, KgrankInputError } from "../checks/errors";
import { describe } from "../checks/validate";
import type { Kernels } from "../contract/kernels";
import { rowSlices, tsKernels as fallbackKernels } from "../fallback";
import { withMemoryErrors } from "./native-call";
import { compileWasmAsync, type WasmModule, wasmKernels } from "./wasm";

/** The types src/ imports from ./backend.ts, for the modules the build points here. @public */
export type { BackendInfo, BackendTier, NativeTripleInterner } from "./backend";

/** The package version, written in by scripts/build-browser.mjs ("unknown" in the CommonJS build). */
declare const KGRANK_VERSION: string | undefined;
const version = typeof KGRANK_VERSION === "string" ? KGRANK_VERSION : "unknown";

const tsKernels: Kernels = withMemoryErrors(fallbackKernels);
const hardwareThreads =
  (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency ?? 1;

let current: Kernels = tsKernels;
let info: BackendInfo = {
  backend: "ts",
  simd: "none",
  threads: 1,
  version,
  supportedSimd: [],
  hardwareThreads,
  fallbackReason: "the WebAssembly core is not loaded yet: await loadWasm(fetch(URL of kgrank.wasm)) first",
  tier: "ts",
  skipped: ["native: no addon in a browser"],
};

/** The kernels every public function uses. */
export function kernels(): Kernels {
  return current;
}

/** No addon in a browser. */
export function nativeAddon(): null {
  return null;
}

/**
 * Never reached here (nativeAddon() is null, so no parser binding runs); src/io/triple-table.ts imports it.
 * @public
 */
export function nativeParse<T>(_argument: string, parse: () => T): T {
  return parse();
}

/** Which backend is in use and why: the fallback until loadWasm resolves, the WebAssembly core after. */
export function backendInfo(): BackendInfo {
  return { ...info, supportedSimd: [], skipped: [...info.skipped] };
}

/** What loadWasm accepts: kgrank.wasm's URL, a fetch of it (awaited or not), its bytes, or the compiled module. */
export type WasmSource = string | URL | Response | PromiseLike<Response> | ArrayBuffer | Uint8Array | object;

/**
 * Compiles kgrank.wasm (the package's wasm/kgrank.wasm) and makes it the backend of every later call; resolves to
 * backendInfo(). Calls made before it resolves, or after it rejects, run on the fallback: same results, slower.
 * @example await loadWasm(fetch(new URL("kgrank.wasm", import.meta.url)));
 */
export async function loadWasm(source: WasmSource): Promise<BackendInfo> {
  const where = typeof source === "string" || source instanceof URL ? String(source) : describeSource(source);
  let module: WasmModule;
  try {
    module = await compileWasmAsync(await wasmBytes(source));
  } catch (e) {
    if (e instanceof KgrankInputError) throw e;
    throw new KgrankBackendError(`the WebAssembly core could not be loaded from ${where}: ${(e as Error).message}`);
  }
  current = wasmKernels(module, tsKernels, rowSlices);
  info = {
    backend: "wasm",
    simd: "simd128",
    threads: 1,
    version,
    supportedSimd: [],
    hardwareThreads,
    wasmPath: where,
    fallbackReason: "native: no addon in a browser",
    tier: "wasm",
    skipped: ["native: no addon in a browser"],
  };
  return backendInfo();
}

function describeSource(source: unknown): string {
  if (typeof Response === "function" && source instanceof Response) return source.url || "a Response";
  if (isThenable(source)) return "a fetch";
  return source instanceof Uint8Array || source instanceof ArrayBuffer ? "bytes" : "a compiled module";
}

const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  v !== null && typeof v === "object" && typeof (v as PromiseLike<unknown>).then === "function";

const WASM_SOURCE_FIX =
  "give kgrank.wasm's URL, fetch(url), its bytes (ArrayBuffer or Uint8Array) or a WebAssembly.Module";

/** A SharedArrayBuffer, or a view of one: WebAssembly compiles from unshared bytes only. */
function isShared(v: unknown): boolean {
  if (typeof SharedArrayBuffer !== "function") return false;
  return v instanceof SharedArrayBuffer || (ArrayBuffer.isView(v) && v.buffer instanceof SharedArrayBuffer);
}

/** The bytes (or the compiled module) behind a WasmSource. `url`: where a fetch of it goes, for its error. */
async function wasmBytes(source: WasmSource, url?: string): Promise<Uint8Array | ArrayBuffer | WasmModule> {
  if (typeof source === "string" || source instanceof URL) {
    let fetched: Promise<Response>;
    try {
      fetched = fetch(source);
    } catch (e) {
      throw new KgrankInputError(
        "source",
        `${String(source)} cannot be fetched (${(e as Error).message}): ${WASM_SOURCE_FIX}`,
      );
    }
    return wasmBytes(fetched, String(source));
  }
  if (isShared(source)) {
    throw new KgrankInputError(
      "source",
      `is ${describe(source)} over a SharedArrayBuffer, which WebAssembly does not compile from: copy the bytes ` +
        "into an unshared buffer first (new Uint8Array(shared).slice())",
    );
  }
  if (source instanceof Uint8Array || source instanceof ArrayBuffer) return source;
  const Wasm = (globalThis as { WebAssembly?: { Module: new (...a: never[]) => object } }).WebAssembly;
  if (Wasm && source instanceof Wasm.Module) return source as WasmModule;
  if (isThenable(source)) {
    let response: unknown;
    try {
      response = await source;
    } catch (e) {
      // The fetch itself failed (no network, a refused connection, a blocked or malformed URL): no Response came.
      throw new KgrankInputError(
        "source",
        `the fetch of ${url ?? "kgrank.wasm"} failed before any response (${String((e as Error)?.message ?? e)}): ` +
          "check the URL, that a server serves it (a file:// page cannot fetch), and the page's network and CSP",
      );
    }
    return wasmBytes(response as WasmSource, url);
  }
  if (typeof Response === "function" && source instanceof Response) {
    if (!source.ok) throw new Error(`HTTP ${source.status} ${source.statusText}`.trim());
    return new Uint8Array(await source.arrayBuffer());
  }
  throw new KgrankInputError("source", `is ${describe(source)}: ${WASM_SOURCE_FIX}`);
}
