/**
 * HDF5 files through h5wasm (the HDF5 C library compiled to WebAssembly; an optional peer dependency, loaded on first
 * use so that nobody who never reads a PyTorch-BigGraph checkpoint installs its 15 MB). Its Node build reads the
 * file from disk as HDF5 asks, so a row range of a dataset reads only the chunks that hold it. kgrank reads: a
 * dataset's shape and element type, a range of its leading rows, a group's members and a scalar attribute; every
 * failure becomes a KgrankInputError naming the file, the object and what to do.
 */
import fs from "node:fs";
import { closeSync, openSync, readSync } from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";

import { KgrankInputError, KgrankMissingPackageError } from "../../checks/errors";

/** What kgrank uses of an h5wasm object. */
interface H5Object {
  readonly type: string;
  readonly attrs: Record<string, { readonly value: unknown } | undefined>;
  keys?(): string[];
  readonly shape?: number[] | null;
  readonly metadata?: { type: number; size: number; signed?: boolean };
  slice?(ranges: ([number, number] | [])[]): unknown;
  get?(name: string): H5Object | null;
}
interface H5FileHandle extends H5Object {
  close(): unknown;
}
interface H5Module {
  ready: Promise<unknown>;
  File: new (file: string, mode: "r") => H5FileHandle;
}

// h5wasm is an ES module; a plain import() survives the CommonJS build this way.
const importEsm = new Function("specifier", "return import(specifier)") as (s: string) => Promise<unknown>;

let loading: Promise<H5Module> | null = null;

/**
 * import() of an ES module file; where the running code has no dynamic import (a module runner's vm context, as in
 * the tests), a require of it, which Node supports for ES modules since 20.19 and 22.12.
 */
async function loadEsm(file: string): Promise<unknown> {
  try {
    return await importEsm(pathToFileURL(file).href);
  } catch (e) {
    if ((e as { code?: string }).code !== "ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING") throw e;
    // The same file, by a fixed name beside it (a JavaScript module, no native code).
    return createRequire(file)("./hdf5_hl.js") as unknown;
  }
}

/** h5wasm's Node build, found where Node would find the package (its exports name no CommonJS entry). */
function h5wasm(argument: string): Promise<H5Module> {
  if (!loading) {
    const dirs = require.resolve.paths("h5wasm") ?? [];
    const entry = dirs.map((d) => path.join(d, "h5wasm", "dist", "node", "hdf5_hl.js")).find((f) => existsSync(f));
    if (!entry) {
      return Promise.reject(
        new KgrankMissingPackageError("h5wasm", `reading PyTorch-BigGraph's HDF5 files (${argument})`),
      );
    }
    loading = loadEsm(entry).then(async (m) => {
      const mod = ((m as { default?: H5Module }).default ?? m) as H5Module;
      await mod.ready;
      return mod;
    });
    loading.catch(() => (loading = null));
  }
  return loading;
}

/**
 * Runs a synchronous h5wasm call with HDF5's own diagnostics (its error stack, which the WebAssembly build writes to
 * file descriptor 2 itself) held back: kgrank's error says what went wrong and what to do, in one line.
 */
function quiet<T>(call: () => T): T {
  const write = fs.writeSync;
  // Reports every byte written (a writer retries what it was told is unwritten), and writes none to fd 2.
  const held = (data: unknown, offset: unknown, length: unknown): number =>
    typeof data === "string"
      ? Buffer.byteLength(data)
      : typeof length === "number"
        ? length
        : (data as ArrayBufferView).byteLength - (typeof offset === "number" ? offset : 0);
  (fs as { writeSync: unknown }).writeSync = (fd: number, ...rest: unknown[]): number =>
    fd === 2 ? held(rest[0], rest[1], rest[2]) : (write as (fd: number, ...a: unknown[]) => number)(fd, ...rest);
  try {
    return call();
  } finally {
    (fs as { writeSync: unknown }).writeSync = write;
  }
}

// A plain Uint8Array: this module is in the browser bundle too, where Buffer does not exist at load time.
const SIGNATURE = Uint8Array.of(0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a);

/**
 * True when the file starts with HDF5's format signature at one of the offsets the format allows (0, 512, 1024,
 * ...): checked before h5wasm opens it, so a file of another format gets kgrank's message, not HDF5's diagnostics.
 */
function looksLikeHdf5(file: string): boolean {
  const fd = openSync(file, "r");
  try {
    const buf = Buffer.alloc(8);
    for (let at = 0; at <= 1 << 20; at = at === 0 ? 512 : at * 2) {
      if (readSync(fd, buf, 0, 8, at) < 8) return false;
      if (SIGNATURE.every((b, i) => buf[i] === b)) return true;
    }
    return false;
  } finally {
    closeSync(fd);
  }
}

/** One numeric dataset of an HDF5 file: its shape, element kind and rows read by range. */
export interface H5Dataset {
  readonly name: string;
  readonly shape: readonly number[];
  /** "float" or "int" (any width; int64 values arrive as exact numbers up to 2^53). */
  readonly kind: "float" | "int";
  /** Rows [start, end) of the leading dimension, every element of them, as float64 (float) or numbers. */
  rows(start: number, end: number): Float64Array;
  /** Rows [start, end) as float32 (float datasets). */
  rowsF32(start: number, end: number): Float32Array;
}

/** An HDF5 file opened for reading. */
export class H5File {
  private constructor(
    readonly file: string,
    private readonly argument: string,
    private readonly handle: H5FileHandle,
  ) {}

  /** Opens `file` (argument: the flag or option that led to it, for errors). */
  static async open(file: string, argument: string): Promise<H5File> {
    if (!existsSync(file))
      throw new KgrankInputError(argument, `${file} does not exist: check the path (and the checkpoint's files)`);
    if (!looksLikeHdf5(file)) {
      throw new KgrankInputError(
        argument,
        `${file} is not an HDF5 file (no HDF5 signature): give the file PyTorch-BigGraph wrote, not a copy in another format`,
      );
    }
    const h5 = await h5wasm(argument);
    let handle: H5FileHandle;
    try {
      handle = quiet(() => {
        const h = new h5.File(file, "r");
        h.keys?.(); // a file HDF5 cannot read fails here
        return h;
      });
    } catch (e) {
      throw new KgrankInputError(
        argument,
        `${file} could not be read as HDF5 (${String((e as Error)?.message ?? e).slice(0, 120)}): the file may be truncated; copy it again`,
      );
    }
    return new H5File(file, argument, handle);
  }

  close(): void {
    try {
      quiet(() => this.handle.close());
    } catch {
      // already closed
    }
  }

  private get(name: string): H5Object | null {
    try {
      return quiet(() => this.handle.get?.(name) ?? null);
    } catch {
      return null;
    }
  }

  /** True when the file holds an object (group or dataset) at `name`. */
  has(name: string): boolean {
    return this.get(name) !== null;
  }

  /** The members of group `name` (sorted), or null when there is no such group. */
  members(name: string): string[] | null {
    const g = this.get(name);
    if (!g || g.type !== "Group" || !g.keys) return null;
    return quiet(() => [...g.keys!()].sort());
  }

  /** A scalar numeric attribute of the root group, or null when absent. */
  rootAttribute(name: string): number | null {
    const a = this.handle.attrs[name];
    if (!a) return null;
    const v = a.value;
    if (typeof v === "bigint") return Number(v);
    if (typeof v === "number") return v;
    if (ArrayBuffer.isView(v) && (v as unknown as ArrayLike<number | bigint>).length === 1)
      return Number((v as unknown as ArrayLike<number | bigint>)[0]);
    return null;
  }

  /** The numeric dataset at `name`; `what` says what it should hold (errors name it and the file). */
  dataset(name: string, what: string): H5Dataset {
    const d = this.get(name);
    if (!d || d.type !== "Dataset" || !d.slice) {
      throw new KgrankInputError(
        this.argument,
        `${this.file} has no dataset "${name}" (${what}): this is not the file PyTorch-BigGraph writes there; check the path or rewrite the file with PBG`,
      );
    }
    const meta = d.metadata;
    const shape = d.shape ?? [];
    const kind = meta?.type === 1 ? "float" : meta?.type === 0 ? "int" : null;
    if (kind === null || shape.length === 0) {
      throw new KgrankInputError(
        this.argument,
        `${this.file}: dataset "${name}" (${what}) is not a numeric array: rewrite the file with PyTorch-BigGraph`,
      );
    }
    const file = this.file;
    const argument = this.argument;
    const slice = (start: number, end: number): ArrayLike<number | bigint> => {
      try {
        const ranges: ([number, number] | [])[] = [[start, end], ...shape.slice(1).map(() => [] as [])];
        return quiet(() => d.slice!(ranges) as ArrayLike<number | bigint>);
      } catch (e) {
        throw new KgrankInputError(
          argument,
          `${file}: rows ${start}..${end} of "${name}" could not be read (${String((e as Error)?.message ?? e).slice(0, 120)}): the file may be truncated; copy it again`,
        );
      }
    };
    return {
      name,
      shape,
      kind,
      rows(start, end) {
        const v = slice(start, end);
        if (v instanceof Float64Array) return v;
        const out = new Float64Array(v.length);
        for (let i = 0; i < v.length; i++) out[i] = Number(v[i]);
        return out;
      },
      rowsF32(start, end) {
        const v = slice(start, end);
        if (v instanceof Float32Array) return v;
        const out = new Float32Array(v.length);
        for (let i = 0; i < v.length; i++) out[i] = Number(v[i]);
        return out;
      },
    };
  }
}
