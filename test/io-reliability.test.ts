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

/** Runs `script` (CommonJS, `kg` = the built package) in a child under `ulimit -v` (KiB) and a 64 MiB old space. */
function child(script: string, virtualKiB = 2_000_000): { out: string; err: string; status: number | null } {
  const dist = path.resolve(__dirname, "..", "dist", "cjs", "index.js");
  const code = `const kg = require(${JSON.stringify(dist)});\n${script}`;
  const r = spawnSync("bash", ["-c", `ulimit -v ${virtualKiB} && exec "$0" --max-old-space-size=64 -e "$1"`, process.execPath, code], {
    encoding: "utf8",
    env: { ...process.env },
    timeout: 120_000,
  });
  return { out: r.stdout, err: r.stderr, status: r.status };
}

/**
 * The child's peak RSS in MiB: VmHWM is this process image's own high-water mark (getrusage's maxRSS would include
 * the parent's pages, inherited through fork and kept across exec).
 */
const report = `
function peakMiB() {
  try { return Number(/VmHWM:\\s*(\\d+)/.exec(require("fs").readFileSync("/proc/self/status", "utf8"))[1]) / 1024; }
  catch { return process.resourceUsage().maxRSS / 1024; }
}
function report(f) {
  try { f(); console.log(JSON.stringify({ ok: true, rssMiB: peakMiB() })); }
  catch (e) { console.log(JSON.stringify({ name: e.constructor.name, argument: e.argument, message: e.message, rssMiB: peakMiB() })); }
}`;

describe("allocations the machine cannot make are typed errors", () => {
  it("a sparse 8 GiB .npy and an 8 GiB safetensors under a 2 GB address-space limit: KgrankInputError naming the file and size", () => {
    const big = 2 ** 30; // float64 elements: 8 GiB
    const header = npy(`{'descr': '<f8', 'fortran_order': False, 'shape': (${big},), }`);
    const p = path.join(dir, "sparse-8g.npy");
    const fd = openSync(p, "w");
    writeSync(fd, header);
    writeSync(fd, new Uint8Array(1), 0, 1, header.length + 8 * big - 1);
    closeSync(fd);
    const st = path.join(dir, "sparse-8g.safetensors");
    const h = Buffer.from(JSON.stringify({ x: { dtype: "F64", shape: [big], data_offsets: [0, 8 * big] } }));
    const fd2 = openSync(st, "w");
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(h.length));
    writeSync(fd2, len);
    writeSync(fd2, h);
    writeSync(fd2, new Uint8Array(1), 0, 1, 8 + h.length + 8 * big - 1);
    closeSync(fd2);
    const r = child(`${report}\nreport(() => kg.readNpy(${JSON.stringify(p)}, "--scores-tail"));\nreport(() => kg.readSafetensors(${JSON.stringify(st)}, "--scores-head"));`);
    const lines = r.out.trim().split("\n").map((l) => JSON.parse(l) as { name: string; argument: string; message: string });
    expect(lines, r.err).toHaveLength(2);
    expect(lines[0]).toMatchObject({ name: "KgrankInputError", argument: "--scores-tail" });
    expect(lines[0]!.message).toContain(p);
    expect(lines[0]!.message).toMatch(/8589934592 bytes \(8\.0 GiB\)/);
    expect(lines[1]).toMatchObject({ name: "KgrankInputError", argument: "--scores-head" });
    expect(lines[1]!.message).toContain(st);
  });
});

describe("safetensors headers that are not what they claim", () => {
  const build = (header: string, data = new Uint8Array(8)) => {
    const h = Buffer.from(header);
    const out = new Uint8Array(8 + h.length + data.length);
    new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
    out.set(h, 8);
    out.set(data, 8 + h.length);
    return out;
  };
  it("says what is wrong, naming the tensor", () => {
    const cases: [string, RegExp][] = [
      ["null", /the header is null, not a JSON object of tensors/],
      ["[1]", /the header is an array, not a JSON object of tensors/],
      ["{\"x\": null}", /tensor "x" is null, not an object \{dtype, shape, data_offsets\}/],
      ["{\"x\": {\"dtype\": \"F32\", \"shape\": [2.5], \"data_offsets\": [0, 8]}}", /tensor "x": shape \[2\.5\] is not a list of non-negative integers/],
      ["{\"x\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [8, 0]}}", /tensor "x": data_offsets \[8,0\] end before they start/],
      ["{\"x\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 16]}}", /tensor "x": data_offsets \[0,16\] end past the 8 data bytes of the file/],
      ["{\"x\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 8]}}", /tensor "x": data_offsets \[0,8\] hold 8 bytes but shape \[1\] of F32 needs 4/],
      ["{\"x\": {\"dtype\": \"F32\", \"shape\": [2]}}", /tensor "x": data_offsets is missing/],
      ["{\"x\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}, \"__metadata__\": 3}", /__metadata__ is 3, not an object of strings/],
    ];
    for (const [h, re] of cases) expect(errorOf(() => parseSafetensors(build(h))).message, h).toMatch(re);
  });
});
