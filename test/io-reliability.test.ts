/**
 * The input readers under hostile or unusual files (issue 18): .npy headers parsed as the Python literal they are,
 * Fortran-order files with many unit dimensions, TSV files that are not UTF-8, allocations the machine cannot make,
 * safetensors headers that are not what they claim, and .npz archives read through their central directory (lazily,
 * bounded by the real data, CRC-checked). Runs on every backend; the memory cases run in child processes under a
 * bounded heap or address space.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { deflateRawSync, crc32 } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";

import { encodeNpy, KgrankInputError, parseNpy, parseNpz, parseSafetensors, readNpy, readNpz, readSafetensors, readTriples } from "../src/index";
import { splitTsvBytes } from "../src/io/tsv";
import { external, runs } from "./helpers/external";

const dir = mkdtempSync(path.join(os.tmpdir(), "kgrank-io-rel-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, bytes: Uint8Array | string): string {
  const p = path.join(dir, name);
  writeFileSync(p, bytes);
  return p;
}

/** A .npy image: the header text as given (latin1 for v1/v2, UTF-8 for v3), padded to 64 bytes, then the data. */
function npy(dict: string, data: Uint8Array = new Uint8Array(0), version = 1): Uint8Array {
  const pre = version === 1 ? 10 : 12;
  const body = version === 3 ? Buffer.from(dict, "utf8") : Buffer.from(dict, "latin1");
  const total = Math.ceil((pre + body.length + 1) / 64) * 64;
  const out = new Uint8Array(total + data.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, version, 0]);
  const hlen = total - pre;
  if (version === 1) new DataView(out.buffer).setUint16(8, hlen, true);
  else new DataView(out.buffer).setUint32(8, hlen, true);
  out.fill(0x20, pre, total - 1);
  out.set(body, pre);
  out[total - 1] = 0x0a;
  out.set(data, total);
  return out;
}

const i32 = (...v: number[]) => new Uint8Array(Int32Array.from(v).buffer);

function errorOf(call: () => unknown): KgrankInputError {
  try {
    call();
  } catch (e) {
    expect(e).toBeInstanceOf(KgrankInputError);
    return e as KgrankInputError;
  }
  throw new Error("no error was raised");
}

describe("Fortran-order .npy with many unit dimensions", () => {
  it("a (N, 1, 1, ..., 1) file with 100,000 dimensions reads fast (was 8 s: elements x dimensions)", () => {
    const n = 20_000;
    const dims = [n, ...new Array<number>(99_999).fill(1)];
    const values = Float64Array.from({ length: n }, (_, i) => i * 0.5);
    const p = file("many-dims.npy", npy(`{'descr': '<f8', 'fortran_order': True, 'shape': (${dims.join(",")}), }`, new Uint8Array(values.buffer), 2));
    const t0 = performance.now();
    const a = readNpy(p);
    const ms = performance.now() - t0;
    expect(a.shape.length).toBe(100_000);
    expect(Array.from(a.data)).toEqual(Array.from(values));
    expect(ms).toBeLessThan(2000);
  });

  it("unit dimensions anywhere do not change the transpose (1 x 2 x 1 x 3 x 1 Fortran = 2 x 3 Fortran)", () => {
    // (i, j) of a 2 x 3 array at Fortran offset i + 2 j holds 3 i + j (its C offset).
    const f = [0, 3, 1, 4, 2, 5];
    const a = parseNpy(npy("{'descr': '<i4', 'fortran_order': True, 'shape': (1, 2, 1, 3, 1), }", i32(...f)));
    expect(a.shape).toEqual([1, 2, 1, 3, 1]);
    expect(Array.from(a.data)).toEqual([0, 1, 2, 3, 4, 5]);
  });
});
