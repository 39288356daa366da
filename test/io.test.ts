/**
 * src/io: .npy (every version, byte order, memory order and dtype), .npz, safetensors, TSV triples with PyKEEN ids,
 * datasets and atomic writes. Files are built byte by byte here from the format specs (independently of
 * encodeNpy); when NumPy is installed, files NumPy itself wrote are read too.
 */
import { execFileSync } from "node:child_process";
import fs, { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { zipSync } from "fflate";
import { describe, expect, it, vi } from "vitest";

import {
  computeRanksSync,
  encodeNpy,
  FrequencyBaseline,
  KgrankInputError,
  labelMaps,
  loadDataset,
  loadDatasetAsync,
  loadEmbeddingModel,
  mapTriples,
  parseNpz,
  parseSafetensors,
  readNpy,
  readNpyAsync,
  readNpz,
  readSafetensors,
  readTriples,
  splitTsvTriples,
  writeFileAtomic,
  writeNpy,
} from "../src/index";
import { parseNpyHeader } from "../src/io/npy";
import { filteredCandidateCounts } from "../src/evaluation/candidate-counts";
import { encodeNpz } from "../src/io/npz-write";
import { loadBundled, loadShared, SHARED_DATASETS, sharedDataset } from "./helpers/datasets";
import { expectInputError } from "./helpers/errors";
import { external, runs } from "./helpers/external";
import { tempDir } from "./helpers/temp";

const dir = tempDir("io");

/** A .npy file image from a header dict string and raw data bytes (spec: magic, version, header length, header). */
function npyBytes(dict: string, data: Uint8Array, version = 1): Uint8Array {
  const pre = version === 1 ? 10 : 12;
  const total = Math.ceil((pre + dict.length + 1) / 64) * 64;
  const header = dict.padEnd(total - pre - 1, " ") + "\n";
  const out = new Uint8Array(total + data.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, version, 0]);
  const dv = new DataView(out.buffer);
  if (version === 1) dv.setUint16(8, header.length, true);
  else dv.setUint32(8, header.length, true);
  out.set(new TextEncoder().encode(header), pre);
  out.set(data, total);
  return out;
}

function file(name: string, bytes: Uint8Array | string): string {
  const p = path.join(dir, name);
  writeFileSync(p, bytes);
  return p;
}

function bytesOf(values: number[], dtype: string, littleEndian: boolean): Uint8Array {
  const size = Number(dtype.slice(1));
  const buf = new Uint8Array(values.length * size);
  const dv = new DataView(buf.buffer);
  values.forEach((v, i) => {
    const o = i * size;
    switch (dtype) {
      case "f2":
        dv.setUint16(o, v === 1.5 ? 0x3e00 : v === -2 ? 0xc000 : v === 0 ? 0 : 0x7c00, littleEndian);
        break;
      case "f4":
        dv.setFloat32(o, v, littleEndian);
        break;
      case "f8":
        dv.setFloat64(o, v, littleEndian);
        break;
      case "i1":
        dv.setInt8(o, v);
        break;
      case "u1":
      case "b1":
        dv.setUint8(o, v);
        break;
      case "i2":
        dv.setInt16(o, v, littleEndian);
        break;
      case "u2":
        dv.setUint16(o, v, littleEndian);
        break;
      case "i4":
        dv.setInt32(o, v, littleEndian);
        break;
      case "u4":
        dv.setUint32(o, v, littleEndian);
        break;
      case "i8":
        dv.setBigInt64(o, BigInt(v), littleEndian);
        break;
      case "u8":
        dv.setBigUint64(o, BigInt(v), littleEndian);
        break;
    }
  });
  return buf;
}

describe("readNpy with { dtype }: data typed for scores", () => {
  const f4 = () => file("typed-f4.npy", encodeNpy(Float32Array.of(1, 2, 3, 4), [2, 2]));
  const f8 = () => file("typed-f8.npy", encodeNpy(Float64Array.of(1, 2, 3, 4), [2, 2]));

  it("gives the data of the float type asked for, typed so: it can be passed as scores as it is", async () => {
    const a = readNpy(f4(), { dtype: "float32" });
    const scores: Float32Array = a.data; // a type error without the dtype option's overload
    expect(scores).toBeInstanceOf(Float32Array);
    expect(Array.from(scores)).toEqual([1, 2, 3, 4]);
    const b: Float64Array = readNpy(f8(), { dtype: "float64" }).data;
    expect(Array.from(b)).toEqual([1, 2, 3, 4]);
    for (const p of [f4(), f8()]) {
      const either: Float32Array | Float64Array = readNpy(p, { dtype: "float", argument: "--scores-tail" }).data;
      expect(Array.from(either)).toEqual([1, 2, 3, 4]);
    }
    const c: Float32Array = (await readNpyAsync(f4(), { dtype: "float32" })).data;
    expect(Array.from(c)).toEqual([1, 2, 3, 4]);
    const ranks = computeRanksSync({ scores, numColumns: 2, trueIndices: [0, 1] });
    expect(Array.from(ranks.realistic)).toEqual([2, 1]);
  });

  it("refuses a file of another dtype before reading its data, naming the file, its dtype and the fix", async () => {
    expectInputError(
      () => readNpy(f8(), { dtype: "float32", argument: "--scores-tail" }),
      "--scores-tail",
      /typed-f8\.npy holds f8 data, not float32: save it with \.astype\(np\.float32\) in NumPy, or read it with \{ dtype: "float" \}/,
    );
    expectInputError(() => readNpy(f4(), { dtype: "float64" }), "file", /holds f4 data, not float64/);
    const ints = file("typed-i4.npy", encodeNpy(Int32Array.of(1, 2), [2]));
    expectInputError(() => readNpy(ints, { dtype: "float" }), "file", /holds i4 data, not float32 or float64/);
    await expect(readNpyAsync(f8(), { dtype: "float32" })).rejects.toThrow(/holds f8 data, not float32/);
    expectInputError(() => readNpy(f4(), { dtype: "f4" as never }), "dtype", /"float32", "float64" or "float"/);
    expectInputError(() => readNpy(f4(), { dtpye: "float32" } as never), "options", /dtype/);
  });
});

describe("readNpy", () => {
  const dtypes = ["f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "b1"];
  for (const dtype of dtypes) {
    for (const endian of ["<", ">"]) {
      it(`reads ${endian}${dtype} in C order (2 x 3)`, () => {
        const values =
          dtype === "b1" ? [1, 0, 1, 1, 0, 0] : dtype.startsWith("i") ? [0, -1, 2, -3, 4, 5] : [0, 1, 2, 3, 4, 5];
        const descr = dtype === "b1" || dtype.endsWith("1") ? `|${dtype}` : `${endian}${dtype}`;
        const p = file(
          `c-${endian === "<" ? "le" : "be"}-${dtype}.npy`,
          npyBytes(
            `{'descr': '${descr}', 'fortran_order': False, 'shape': (2, 3), }`,
            bytesOf(values, dtype, endian === "<"),
          ),
        );
        const a = readNpy(p);
        expect(a.shape).toEqual([2, 3]);
        expect(a.dtype).toBe(dtype);
        expect(Array.from(a.data)).toEqual(values);
      });
    }
  }

  it("reads half floats (f2), both byte orders", () => {
    for (const le of [true, false]) {
      const p = file(
        `f2-${le}.npy`,
        npyBytes(
          `{'descr': '${le ? "<" : ">"}f2', 'fortran_order': False, 'shape': (3,), }`,
          bytesOf([1.5, -2, 99], "f2", le),
        ),
      );
      const a = readNpy(p);
      expect(a.data).toBeInstanceOf(Float32Array);
      expect(Array.from(a.data)).toEqual([1.5, -2, Infinity]);
    }
  });

  it("reads Fortran order into C order (2 x 3 and 2 x 3 x 2)", () => {
    // Column-major storage of [[0,1,2],[3,4,5]] is 0,3,1,4,2,5.
    const p = file(
      "f.npy",
      npyBytes("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", bytesOf([0, 3, 1, 4, 2, 5], "f8", true)),
    );
    expect(Array.from(readNpy(p).data)).toEqual([0, 1, 2, 3, 4, 5]);
    // 3-d: element (i, j, k) at Fortran offset i + 2 j + 6 k; C offset 6 i + 2 j + k.
    const fVals: number[] = new Array(12);
    for (let i = 0; i < 2; i++)
      for (let j = 0; j < 3; j++) for (let k = 0; k < 2; k++) fVals[i + 2 * j + 6 * k] = 6 * i + 2 * j + k;
    const p3 = file(
      "f3.npy",
      npyBytes("{'descr': '>i4', 'fortran_order': True, 'shape': (2, 3, 2), }", bytesOf(fVals, "i4", false)),
    );
    expect(Array.from(readNpy(p3).data)).toEqual([...Array(12).keys()]);
  });

  it("reads format versions 2.0 and 3.0 (4-byte header length; 3.0 has a UTF-8 header)", () => {
    for (const v of [2, 3]) {
      const p = file(
        `v${v}.npy`,
        npyBytes("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", bytesOf([7, 8, 9, 10], "i4", true), v),
      );
      expect(Array.from(readNpy(p).data)).toEqual([7, 8, 9, 10]);
    }
  });

  it("reads 0-d and empty arrays", () => {
    expect(
      Array.from(
        readNpy(
          file(
            "0d.npy",
            npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", bytesOf([3.25], "f8", true)),
          ),
        ).data,
      ),
    ).toEqual([3.25]);
    const e = readNpy(
      file("empty.npy", npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 5), }", new Uint8Array(0))),
    );
    expect(e.shape).toEqual([0, 5]);
    expect(e.data.length).toBe(0);
  });

  it("int64 past 2^53 is a typed error; up to 2^53 converts exactly", () => {
    const ok = readNpy(
      file(
        "i8ok.npy",
        npyBytes(
          "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
          bytesOf([2 ** 53, -(2 ** 53)], "i8", true),
        ),
      ),
    );
    expect(Array.from(ok.data)).toEqual([2 ** 53, -(2 ** 53)]);
    const big = new Uint8Array(8);
    new DataView(big.buffer).setBigInt64(0, 2n ** 53n + 1n, true);
    const p = file("i8big.npy", npyBytes("{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }", big));
    expect(() => readNpy(p)).toThrow(/past 2\^53/);
    expect(() => readNpy(p)).toThrow(KgrankInputError);
  });

  it("native-endian C-order data is viewed, not copied, from the buffer it was read into", () => {
    const p = file(
      "view.npy",
      npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", bytesOf([1, 2, 3], "f4", true)),
    );
    const a = readNpy(p);
    expect(a.data.byteOffset).toBe(0);
    expect(a.data.buffer.byteLength).toBe(12); // exactly the data: one buffer, no header bytes, no second copy
  });

  it("writeNpy round-trips every writable dtype and shape, and its header parses as v1.0 aligned to 64 bytes", () => {
    const cases = [
      Float32Array.from([1.5, -2, NaN]),
      Float64Array.from([Math.PI, -0]),
      Int8Array.from([-128, 127]),
      Int16Array.from([-3, 4]),
      Int32Array.from([2 ** 31 - 1, -(2 ** 31)]),
      Uint8Array.from([0, 255]),
      Uint16Array.from([65535]),
      Uint32Array.from([2 ** 32 - 1]),
    ];
    for (const arr of cases) {
      const p = path.join(dir, `rt-${arr.constructor.name}.npy`);
      writeNpy(p, arr);
      const back = readNpy(p);
      expect(back.data.constructor).toBe(arr.constructor);
      expect(Array.from(back.data)).toEqual(Array.from(arr));
      const h = parseNpyHeader(readFileSync(p));
      expect(h.version).toBe(1);
      expect(h.dataOffset % 64).toBe(0);
    }
    const m = path.join(dir, "rt-matrix.npy");
    writeNpy(m, Float32Array.from([1, 2, 3, 4, 5, 6]), [3, 2]);
    expect(readNpy(m).shape).toEqual([3, 2]);
    expect(() => writeNpy(m, Float32Array.from([1, 2, 3]), [2, 2])).toThrow(/shape/);
  });

  it("rejects bad files with a KgrankInputError naming the argument", () => {
    const good = npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", bytesOf([1, 2], "f4", true));
    const cases: [string, Uint8Array, RegExp][] = [
      ["wrong magic", Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0, 0, 0, 0, 0]), /wrong magic/],
      ["truncated preamble", good.subarray(0, 7), /preamble|truncated/],
      ["truncated header", good.subarray(0, 30), /truncated header/],
      ["truncated data", good.subarray(0, good.length - 1), /truncated|lying/],
      [
        "giant shape",
        npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (100000000, 100000000), }", new Uint8Array(0)),
        /2\^40/,
      ],
      [
        "lying shape",
        npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000,), }", new Uint8Array(8)),
        /needs 4000000 data bytes/,
      ],
      [
        "unsupported dtype",
        npyBytes("{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }", new Uint8Array(16)),
        /dtype '<c16'/,
      ],
      [
        "object dtype",
        npyBytes("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", new Uint8Array(8)),
        /dtype/,
      ],
      ["version 9", Uint8Array.from([...good.subarray(0, 6), 9, 0, ...good.subarray(8)]), /version 9/],
      ["no dict", npyBytes("hello", new Uint8Array(0)), /dict/],
      [
        "negative dimension",
        npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", new Uint8Array(0)),
        /not a non-negative integer/,
      ],
    ];
    for (const [name, bytes, re] of cases) {
      const p = file(`bad-${name.replace(/ /g, "-")}.npy`, bytes);
      let err: unknown;
      try {
        readNpy(p, "--scores-tail");
      } catch (e) {
        err = e;
      }
      expect(err, name).toBeInstanceOf(KgrankInputError);
      expect((err as KgrankInputError).argument, name).toBe("--scores-tail");
      expect((err as Error).message, name).toMatch(re);
    }
    expect(() => readNpy(path.join(dir, "nope.npy"))).toThrow(/no such file/);
    expect(() => readNpy(dir)).toThrow(/directory/);
  });

  it("parseNpyHeader is pure and total: random bytes never escape as anything but KgrankInputError", () => {
    let seed = 12345;
    const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    const good = npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", new Uint8Array(24));
    for (let i = 0; i < 2000; i++) {
      const b = good.slice(0, Math.floor(rnd() * good.length));
      for (let k = 0; k < 4; k++) if (b.length) b[Math.floor(rnd() * b.length)] = Math.floor(rnd() * 256);
      try {
        parseNpyHeader(b, "x", b.length);
      } catch (e) {
        expect(e).toBeInstanceOf(KgrankInputError);
      }
    }
  });
});

const numpy = external("python3 with NumPy", runs("python3", ["-c", "import numpy"]), "install python3-numpy");

describe.skipIf(numpy.missing)(numpy.name("files written by NumPy"), () => {
  it("reads numpy.save output (both byte orders, Fortran order, f2, bool) and numpy reads writeNpy output", () => {
    const py = `
import numpy as np, sys
d = sys.argv[1]
np.save(d + '/np-be.npy', np.arange(12, dtype='>f8').reshape(3, 4))
np.save(d + '/np-fortran.npy', np.asfortranarray(np.arange(12, dtype='<i2').reshape(3, 4)))
np.save(d + '/np-f2.npy', np.array([0.5, -1.25, np.inf], dtype='f2'))
np.save(d + '/np-bool.npy', np.array([True, False, True]))
np.savez(d + '/np-stored.npz', a=np.arange(5, dtype='u4'), b=np.ones((2, 2), dtype='f4'))
np.savez_compressed(d + '/np-deflated.npz', a=np.arange(5, dtype='i8'))
np.savez(d + '/np-proto.npz', **{'__proto__': np.array([1.5, 2.5], dtype='f8'), 'constructor': np.arange(2, dtype='i4')})
x = np.load(d + '/from-js.npy'); assert x.dtype == np.float32 and x.shape == (2, 3) and x.tolist() == [[1, 2, 3], [4, 5, 6]], x
`;
    writeNpy(path.join(dir, "from-js.npy"), Float32Array.from([1, 2, 3, 4, 5, 6]), [2, 3]);
    execFileSync("python3", ["-c", py, dir]);
    expect(Array.from(readNpy(path.join(dir, "np-be.npy")).data)).toEqual([...Array(12).keys()]);
    const f = readNpy(path.join(dir, "np-fortran.npy"));
    expect(f.shape).toEqual([3, 4]);
    expect(Array.from(f.data)).toEqual([...Array(12).keys()]);
    expect(Array.from(readNpy(path.join(dir, "np-f2.npy")).data)).toEqual([0.5, -1.25, Infinity]);
    expect(Array.from(readNpy(path.join(dir, "np-bool.npy")).data)).toEqual([1, 0, 1]);
    const s = readNpz(path.join(dir, "np-stored.npz"));
    expect(Object.keys(s).sort()).toEqual(["a", "b"]);
    expect(Array.from(s.a!.data)).toEqual([0, 1, 2, 3, 4]);
    expect(s.b!.shape).toEqual([2, 2]);
    expect(Array.from(readNpz(path.join(dir, "np-deflated.npz")).a!.data)).toEqual([0, 1, 2, 3, 4]);
    // Names that are Object.prototype's own: arrays like any other, the record's prototype untouched (null).
    const proto = readNpz(path.join(dir, "np-proto.npz"));
    expect(Object.getPrototypeOf(proto)).toBeNull();
    expect(Object.keys(proto).sort()).toEqual(["__proto__", "constructor"]);
    expect(Array.from(proto["__proto__"]!.data)).toEqual([1.5, 2.5]);
    expect(Array.from(proto["constructor"]!.data)).toEqual([0, 1]);
  });
});

describe("readNpz and readSafetensors", () => {
  it("reads stored and deflated members", () => {
    const a = encodeNpy(Float32Array.from([1, 2, 3]));
    const b = encodeNpy(Int32Array.from([4, 5]));
    for (const level of [0, 6] as const) {
      const p = file(`z${level}.npz`, zipSync({ "a.npy": a, "b.npy": b }, { level }));
      const z = readNpz(p);
      expect(Array.from(z.a!.data)).toEqual([1, 2, 3]);
      expect(Array.from(z.b!.data)).toEqual([4, 5]);
    }
  });

  it("an .npz that is not a zip, or a damaged one, is a KgrankInputError", () => {
    expect(() => readNpz(file("notzip.npz", "hello world"), "--scores-tail")).toThrow(/not a zip/);
    const z = zipSync({ "a.npy": encodeNpy(Float32Array.from([1, 2, 3])) }, { level: 6 });
    expect(() => readNpz(file("damaged.npz", z.subarray(0, z.length - 30)))).toThrow(KgrankInputError);
  });

  it("reads safetensors (F32, I64, BOOL) and rejects offsets that do not fit", () => {
    const data = new Uint8Array(12 + 16 + 2);
    new DataView(data.buffer).setFloat32(0, 1.5, true);
    new DataView(data.buffer).setFloat32(4, 2.5, true);
    new DataView(data.buffer).setFloat32(8, -1, true);
    new DataView(data.buffer).setBigInt64(12, 7n, true);
    new DataView(data.buffer).setBigInt64(20, -9n, true);
    data[28] = 1;
    const header = JSON.stringify({
      __metadata__: { format: "pt" },
      s: { dtype: "F32", shape: [3], data_offsets: [0, 12] },
      i: { dtype: "I64", shape: [2, 1], data_offsets: [12, 28] },
      b: { dtype: "BOOL", shape: [2], data_offsets: [28, 30] },
    });
    const h = new TextEncoder().encode(header);
    const out = new Uint8Array(8 + h.length + data.length);
    new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
    out.set(h, 8);
    out.set(data, 8 + h.length);
    const t = readSafetensors(file("t.safetensors", out));
    expect(Array.from(t.s!.data)).toEqual([1.5, 2.5, -1]);
    expect(Array.from(t.i!.data)).toEqual([7, -9]);
    expect(t.i!.shape).toEqual([2, 1]);
    expect(Array.from(t.b!.data)).toEqual([1, 0]);
    expect(() => readSafetensors(file("t-trunc.safetensors", out.subarray(0, out.length - 3)))).toThrow(/data_offsets/);
    expect(() => readSafetensors(file("t-bad.safetensors", "xx"))).toThrow(KgrankInputError);
  });

  it("safetensors: a tensor named __proto__ is kept as a tensor; a dtype 'constructor' is named as a bad dtype", () => {
    const build = (header: object, data: Uint8Array) => {
      const h = new TextEncoder().encode(JSON.stringify(header));
      const out = new Uint8Array(8 + h.length + data.length);
      new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
      out.set(h, 8);
      out.set(data, 8 + h.length);
      return out;
    };
    const four = new Uint8Array(new Float32Array([2.5]).buffer);
    const t = parseSafetensors(
      build(JSON.parse('{"__proto__": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}'), four),
    );
    expect(Object.keys(t)).toEqual(["__proto__"]);
    expect(Array.from(t["__proto__"]!.data)).toEqual([2.5]);
    expect(() =>
      parseSafetensors(build({ x: { dtype: "constructor", shape: [1], data_offsets: [0, 4] } }, four)),
    ).toThrow(/tensor "x" has dtype "constructor"/);
  });

  it(".npz: a member named __proto__ is kept as an array and the record's prototype stays null (zip writer and kgrank's own)", () => {
    const proto = encodeNpy(Float32Array.from([2.5, -1]));
    const b = encodeNpy(Int32Array.from([7]));
    const arrays: Record<string, { data: Float32Array | Int32Array }> = Object.create(null);
    arrays["__proto__"] = { data: Float32Array.from([2.5, -1]) };
    arrays.b = { data: Int32Array.from([7]) };
    const archives: [string, Uint8Array][] = [
      ["fflate, stored", zipSync({ ["__proto__.npy"]: proto, "b.npy": b }, { level: 0 })],
      ["fflate, deflated", zipSync({ ["__proto__.npy"]: proto, "b.npy": b }, { level: 6 })],
      ["encodeNpz", encodeNpz(arrays)],
    ];
    for (const [name, bytes] of archives) {
      for (const z of [
        parseNpz(bytes),
        readNpz(file(`proto-${name.replace(/\W+/g, "-")}.npz`, bytes)),
        parseNpz(bytes, "file", { arrays: ["__proto__"] }),
      ]) {
        expect(Object.getPrototypeOf(z), name).toBeNull();
        expect(Object.keys(z).includes("__proto__"), name).toBe(true);
        expect(Array.from(z["__proto__"]!.data), name).toEqual([2.5, -1]);
      }
      expect(Object.keys(parseNpz(bytes)).sort(), name).toEqual(["__proto__", "b"]);
    }
    expect(({} as Record<string, unknown>).data).toBeUndefined(); // nothing leaked into Object.prototype
  });

  it("refuses FIFOs and devices before opening them (a FIFO would block, /dev/zero never ends)", () => {
    const fifo = path.join(dir, "pipe.npy");
    execFileSync("mkfifo", [fifo]);
    const readers: [string, (p: string) => unknown][] = [
      ["readNpy", (p) => readNpy(p, "--scores-tail")],
      ["readNpz", (p) => readNpz(p, "--scores-tail")],
      ["readSafetensors", (p) => readSafetensors(p, "--scores-tail")],
      ["readTriples", (p) => readTriples(p, { argument: "--scores-tail" })],
    ];
    for (const [name, read] of readers) {
      expect(() => read(fifo), name).toThrow(/--scores-tail: cannot read .*pipe\.npy: it is a FIFO \(named pipe\)/);
      if (existsSync("/dev/zero")) expect(() => read("/dev/zero"), name).toThrow(/it is a device/);
    }
  });
});

describe("id maps of embedding rows (--entity-ids / --relation-ids)", () => {
  const model = () => {
    writeFileSync(path.join(dir, "idmap-entity.npy"), encodeNpy(Float32Array.from([1, 2, 3, 4, 5, 6]), [3, 2]));
    writeFileSync(path.join(dir, "idmap-relation.npy"), encodeNpy(Float32Array.from([1, 1]), [1, 2]));
    return (entityIds: string) =>
      loadEmbeddingModel({
        interaction: "distmult",
        entityEmbeddings: path.join(dir, "idmap-entity.npy"),
        relationEmbeddings: path.join(dir, "idmap-relation.npy"),
        entityIds,
        entityLabels: ["a", "b", "c"],
        relationLabels: ["r"],
      });
  };
  it("a label twice is refused with the file and both 1-based lines (before: the last row won silently)", () => {
    const load = model();
    // blank lines count as lines in the message, not as rows
    const p = file("dup-ids.tsv", "0\ta\n1\tb\n\n2\ta\n");
    const e = (() => {
      try {
        load(p);
      } catch (err) {
        return err as KgrankInputError;
      }
      return null;
    })();
    expect(e).toBeInstanceOf(KgrankInputError);
    expect(e!.argument).toBe("entityIds");
    expect(e!.message).toMatch(
      /^entityIds: .*dup-ids\.tsv line 4: label "a" is also on line 1: each row needs its own label$/,
    );
    // rows: "label" lines and "row<TAB>label" lines; CRLF accepted
    const ok = load(file("ok-ids.tsv", "c\r\nb\r\na\r\n"));
    expect(ok.numEntities).toBe(3);
  });
  it("an id map that is not UTF-8 is refused with the file and the line (before: decoded to U+FFFD, two labels could merge)", () => {
    const p = file("latin1-ids.tsv", Buffer.from("a\nb\ncaf\u00e9\n", "latin1") as unknown as Uint8Array);
    expect(() => model()(p)).toThrow(
      /^entityIds: .*latin1-ids\.tsv: line 3 is not valid UTF-8 \(byte 0xe9 at byte 4 of the line\)/,
    );
  });
});

describe("TSV triples", () => {
  it("splitTsvTriples accepts CRLF, a BOM and blank lines, and keeps labels as strings", () => {
    const rows = splitTsvTriples("\uFEFF00260881\t_hypernym\t00001740\r\n\r\n  \na\tr\tb\n");
    expect(rows).toEqual([
      ["00260881", "_hypernym", "00001740"],
      ["a", "r", "b"],
    ]);
  });

  it("rejects 2 or 4 columns and empty fields, naming the line", () => {
    expect(() => splitTsvTriples("a\tr\tb\nc\td\n")).toThrow(/line 2 has 2 tab-separated fields, expected 3/);
    expect(() => splitTsvTriples("a\tr\tb\n\na\tr\tb\tx\n")).toThrow(/line 3 has 4/);
    expect(() => splitTsvTriples("a\t\tb\n")).toThrow(/line 1 has an empty field/);
  });

  it("readTriples: ids are sorted training labels; other splits map through them and drop unknown labels", () => {
    const train = file("train.tsv", "b\tr2\tc\na\tr1\tb\n");
    const test = file("test.tsv", "a\tr2\tc\nz\tr1\ta\na\tr9\tb\n");
    const t = readTriples(train);
    expect(t.entityLabels).toEqual(["a", "b", "c"]);
    expect(t.relationLabels).toEqual(["r1", "r2"]);
    expect(Array.from(t.triples)).toEqual([1, 1, 2, 0, 0, 1]);
    const s = readTriples(test, { maps: t });
    expect(Array.from(s.triples)).toEqual([0, 1, 2]);
    expect(s.dropped).toBe(2);
    expect(() => readTriples(path.join(dir, "missing.tsv"))).toThrow(/no such file/);
  });
});

describe("datasets", () => {
  it("loadDataset matches an independent reader on every bundled dataset", () => {
    for (const name of ["nations", "kinships", "umls"]) {
      const d = loadDataset(name);
      const ref = loadBundled(name);
      expect(d.entityLabels).toEqual(ref.entities);
      expect(d.relationLabels).toEqual(ref.relations);
      for (const s of ["train", "valid", "test"] as const)
        expect(Array.from(d.splits[s])).toEqual(Array.from(ref.splits[s]));
    }
  });

  it("nations has PyKEEN's sizes (14 entities, 55 relations, 201 test triples)", () => {
    const d = loadDataset("Nations");
    expect([d.numEntities, d.numRelations, d.splits.test.length / 3, d.dropped.test]).toEqual([14, 55, 201, 0]);
  });

  it("unknown names and missing external datasets are KgrankInputErrors with the fix", () => {
    expect(() => loadDataset("fb16k")).toThrow(/unknown dataset "fb16k"; known: nations/);
    expect(() => loadDataset("wn18rr", { datasetDir: path.join(dir, "none") })).toThrow(/--dataset-dir/);
  });

  it("reads splits as distributed by their authors (train.txt, valid.txt, test.txt) like .tsv ones", () => {
    const txt = path.join(dir, "as-distributed", "nations");
    fs.mkdirSync(txt, { recursive: true });
    for (const split of ["train", "valid", "test"]) {
      fs.copyFileSync(path.join(__dirname, "..", "data", "nations", `${split}.tsv`), path.join(txt, `${split}.txt`));
    }
    const a = loadDataset("nations", { datasetDir: path.join(dir, "as-distributed") });
    const b = loadDataset("nations");
    expect(a.entityLabels).toEqual(b.entityLabels);
    expect(Array.from(a.splits.test)).toEqual(Array.from(b.splits.test));
    expect(loadDataset(undefined, { datasetDir: txt }).splits.train.length).toBe(b.splits.train.length);
  });

  it("a bundled dataset named with an explicit directory that lacks it is an error, not the bundled copy", () => {
    expect(() => loadDataset("nations", { datasetDir: "/nonexistent/kgrank" })).toThrow(
      /datasetDir: --dataset-dir was given, but .*nations\/train.tsv does not exist .*leave out --dataset-dir/,
    );
  });

  it("interned ids equal labelMaps + mapTriples over the rows: code-point order, long shared prefixes, roles, pieces", () => {
    const long = "x".repeat(16);
    // Astral vs BMP labels (UTF-16 order differs from code-point order), labels sharing their first 16 bytes,
    // a zero-padded prefix tie ("ab" vs "ab\0"), a label that is a relation in train but an entity in test.
    const labels = ["\u{1F600}", "\uFB01", "é", "e", long, long + "a", long + "b", long + "ab", "ab", "ab\0"];
    let seed = 7;
    const pick = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) % n;
    const rows = (n: number, extra: string[]) =>
      Array.from({ length: n }, () => {
        const pool = [...labels, ...extra];
        return `${pool[pick(pool.length)]}\t${pick(3) === 0 ? "rel" : `r${pick(5)}`}\t${pool[pick(pool.length)]}`;
      }).join("\n");
    const folder = path.join(dir, "interned");
    fs.mkdirSync(folder, { recursive: true });
    // train past one piece (128 KiB) so the rows are interned piece by piece
    const train =
      rows(
        20000,
        Array.from({ length: 300 }, (_, k) => `n${k}`),
      ) + "\n";
    writeFileSync(path.join(folder, "train.tsv"), train);
    writeFileSync(path.join(folder, "valid.tsv"), rows(300, ["unseen", "r9"]));
    writeFileSync(path.join(folder, "test.tsv"), "rel\tr1\tab\n" + rows(300, ["unseen2"]));
    const d = loadDataset(undefined, { datasetDir: folder });
    const byRows = (file: string) => splitTsvTriples(readFileSync(path.join(folder, file), "utf8"));
    const maps = labelMaps(byRows("train.tsv"));
    expect(d.entityLabels).toEqual(maps.entityLabels);
    expect(d.relationLabels).toEqual(maps.relationLabels);
    for (const s of ["train", "valid", "test"] as const) {
      const m = mapTriples(byRows(`${s}.tsv`), maps);
      expect(Array.from(d.splits[s])).toEqual(Array.from(m.triples));
      expect(d.dropped[s]).toBe(m.dropped);
    }
    expect(d.dropped.test).toBeGreaterThan(0);
    expect(d.entityToId.get(long + "ab")).toBe(d.entityLabels.indexOf(long + "ab"));
    expect(d.relationToId.size).toBe(d.numRelations);
  });

  it("id arrays: SPLIT.npy (n, 3) or SPLIT.npz head / relation / tail, with label files, give the TSV dataset's triples", async () => {
    const nations = loadDataset("nations");
    const npyDir = path.join(dir, "ids-npy");
    const npzDir = path.join(dir, "ids-npz");
    fs.mkdirSync(npyDir, { recursive: true });
    fs.mkdirSync(npzDir, { recursive: true });
    for (const s of ["train", "valid", "test"] as const) {
      const t = nations.splits[s];
      writeNpy(path.join(npyDir, `${s}.npy`), BigInt64Array.from(t, BigInt), [t.length / 3, 3]);
      const col = (c: number) => ({ data: Int32Array.from({ length: t.length / 3 }, (_, i) => t[3 * i + c]!) });
      // OGB's valid / test dicts also hold negatives: other arrays are ignored
      const extra: Record<string, { data: Int32Array; shape: number[] }> =
        s === "train" ? {} : { head_neg: { data: new Int32Array(6), shape: [2, 3] } };
      writeFileSync(
        path.join(npzDir, `${s}.npz`),
        encodeNpz({ head: col(0), relation: col(1), tail: col(2), ...extra }),
      );
    }
    writeFileSync(path.join(npyDir, "entities.txt"), nations.entityLabels.join("\n") + "\n");
    writeFileSync(path.join(npyDir, "relations.dict"), nations.relationLabels.map((l, i) => `${i}\t${l}`).join("\n"));
    const a = loadDataset(undefined, { datasetDir: npyDir });
    const b = await loadDatasetAsync(undefined, { datasetDir: npzDir });
    expect(a.entityLabels).toEqual(nations.entityLabels);
    expect(a.relationLabels).toEqual(nations.relationLabels);
    expect(a.relationToId.get(nations.relationLabels[3]!)).toBe(3);
    // without label files: counts are the largest id + 1, labels the ids
    expect([b.numEntities, b.numRelations]).toEqual([nations.numEntities, nations.numRelations]);
    expect(b.entityLabels[13]).toBe("13");
    for (const s of ["train", "valid", "test"] as const) {
      expect(Array.from(a.splits[s])).toEqual(Array.from(nations.splits[s]));
      expect(Array.from(b.splits[s])).toEqual(Array.from(nations.splits[s]));
      expect(a.dropped[s]).toBe(0);
    }
  });

  it("id arrays: an id out of range, a negative or fractional id, a bad shape or a missing split name the file, row and column", () => {
    const d = path.join(dir, "ids-bad");
    fs.mkdirSync(d, { recursive: true });
    const put = (s: string, rows: number[][], data?: Float64Array | Int32Array) =>
      writeNpy(path.join(d, `${s}.npy`), data ?? Int32Array.from(rows.flat()), [rows.length, 3]);
    put("train", [
      [0, 0, 1],
      [1, 0, 2],
    ]);
    put("valid", [[0, 0, 1]]);
    put("test", [
      [2, 0, 1],
      [0, 1, 3],
    ]);
    writeFileSync(path.join(d, "entities.txt"), "a\nb\nc\n");
    const load = () => loadDataset(undefined, { datasetDir: d });
    expect(load).toThrow(
      /datasetDir: .*test\.npy row 1 column 2 \(tail\): id 3 is not below the 3 entities of .*entities\.txt/,
    );
    writeFileSync(path.join(d, "entities.txt"), "a\nb\nc\nb\n");
    expect(load).toThrow(/entities\.txt line 4: label "b" is also on line 2: each id needs its own label/);
    writeFileSync(path.join(d, "entities.txt"), "a\nb\nc\nd\n");
    expect(load().numRelations).toBe(2);
    put("valid", [
      [0, 0, 1],
      [0, -1, 1],
    ]);
    expect(load).toThrow(/valid\.npy row 1 column 1 \(relation\): id -1 is not an id/);
    put("valid", [[0, 0, 1]], Float64Array.from([0, 0, 1.5]));
    expect(load).toThrow(/valid\.npy: the array has dtype f8; ids must be integers/);
    writeNpy(path.join(d, "valid.npy"), new Int32Array(4), [2, 2]);
    expect(load).toThrow(/valid\.npy: has shape \[2, 2\]; a split's \.npy must have shape \(n, 3\)/);
    fs.rmSync(path.join(d, "valid.npy"));
    writeFileSync(path.join(d, "valid.npz"), encodeNpz({ head: { data: new Int32Array(1) } }));
    expect(load).toThrow(/valid\.npz: has no "relation", "tail" array/);
    fs.rmSync(path.join(d, "valid.npz"));
    writeFileSync(path.join(d, "valid.tsv"), "a\tr\tb\n");
    expect(load).toThrow(
      /train\.npy gives train as id arrays but valid is .*valid\.tsv: give valid as valid\.npy or valid\.npz too/,
    );
  });

  it("id arrays without label files: labels are made only when asked for; an id of 2^31 - 2 among small ones is refused by file, row and column", async () => {
    const d = path.join(dir, "ids-huge");
    fs.mkdirSync(d, { recursive: true });
    const put = (s: string, rows: number[][]) =>
      writeNpy(path.join(d, `${s}.npy`), BigInt64Array.from(rows.flat(), BigInt), [rows.length, 3]);
    put("train", [
      [0, 0, 1],
      [2, 1, 3],
    ]);
    put("valid", [[0, 0, 2]]);
    put("test", [
      [1, 1, 0],
      [3, 0, 2147483646],
    ]);
    const heap = process.memoryUsage().heapUsed;
    const refused =
      /datasetDir: .*test\.npy row 1 column 2 \(tail\): id 2147483646 would make 2147483647 entities, but the splits' 5 rows mention at most 10 \(largest id in train: 3\).*fix that id, number the ids from 0 without gaps, or give entities\.tsv/;
    expect(() => loadDataset(undefined, { datasetDir: d })).toThrow(refused);
    await expect(loadDatasetAsync(undefined, { datasetDir: d })).rejects.toThrow(refused);
    // a label file states the count on purpose: the id is checked against it
    writeFileSync(path.join(d, "entities.txt"), "a\nb\nc\nd\n");
    expect(() => loadDataset(undefined, { datasetDir: d })).toThrow(
      /test\.npy row 1 column 2 \(tail\): id 2147483646 is not below the 4 entities of .*entities\.txt/,
    );
    fs.rmSync(path.join(d, "entities.txt"));
    // up to 1024 ids (or 8 per id cell) are taken as they are: 1,000 entities from 5 rows
    put("test", [
      [1, 1, 0],
      [3, 0, 999],
    ]);
    for (const ds of [
      loadDataset(undefined, { datasetDir: d }),
      await loadDatasetAsync(undefined, { datasetDir: d }),
    ]) {
      expect([ds.numEntities, ds.numRelations]).toEqual([1000, 2]);
      expect(ds.entityLabels.length).toBe(1000);
      expect([ds.entityLabels[0], ds.entityLabels[999], ds.entityLabels[1000]]).toEqual(["0", "999", undefined]);
      expect([999 in ds.entityLabels, 1000 in ds.entityLabels]).toEqual([true, false]);
      // the whole list is made when a reader needs it, once
      expect(ds.relationLabels).toEqual(["0", "1"]);
      expect(ds.relationLabels.map((l) => l + "!")).toEqual(["0!", "1!"]);
      expect(ds.entityLabels.indexOf("999")).toBe(999);
      expect(ds.entityToId.get("999")).toBe(999);
    }
    expect(process.memoryUsage().heapUsed - heap).toBeLessThan(64 * 2 ** 20);
  });

  it("id-array splits the .npy reader refuses (truncated, object dtype, int64 past 2^53) name the file", () => {
    const d = path.join(dir, "ids-unreadable");
    fs.mkdirSync(d, { recursive: true });
    for (const s of ["train", "valid", "test"]) writeNpy(path.join(d, `${s}.npy`), Int32Array.of(0, 0, 1), [1, 3]);
    const load = () => loadDataset(undefined, { datasetDir: d });
    const good = readFileSync(path.join(d, "valid.npy"));
    writeFileSync(path.join(d, "valid.npy"), good.subarray(0, good.length - 4));
    expect(load).toThrow(/^datasetDir: \/.*valid\.npy: not a valid \.npy file: /);
    const header = (dict: string) => {
      const h = `${dict}${" ".repeat(117 - dict.length)}\n`;
      return Buffer.concat([Buffer.from([0x93]), Buffer.from("NUMPY"), Buffer.from([1, 0, 118, 0]), Buffer.from(h)]);
    };
    writeFileSync(
      path.join(d, "valid.npy"),
      Buffer.concat([header("{'descr': '|O', 'fortran_order': False, 'shape': (1, 3), }"), Buffer.alloc(24)]),
    );
    expect(load).toThrow(/^datasetDir: \/.*valid\.npy: .*/);
    const big = Buffer.alloc(24);
    big.writeBigInt64BE(2n ** 60n, 8);
    writeFileSync(
      path.join(d, "valid.npy"),
      Buffer.concat([header("{'descr': '>i8', 'fortran_order': False, 'shape': (1, 3), }"), big]),
    );
    expect(load).toThrow(/^datasetDir: \/.*valid\.npy: /);
  });

  it("a split under two names (train.tsv and train.npy): the one read is said, naming both", async () => {
    const d = path.join(dir, "two-names");
    fs.mkdirSync(d, { recursive: true });
    const nations = loadDataset("nations");
    for (const s of ["train", "valid", "test"])
      fs.copyFileSync(path.join(__dirname, "..", "data", "nations", `${s}.tsv`), path.join(d, `${s}.tsv`));
    writeNpy(path.join(d, "train.npy"), Int32Array.of(0, 0, 1), [1, 3]);
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    try {
      const ds = loadDataset(undefined, { datasetDir: d });
      await loadDatasetAsync(undefined, { datasetDir: d });
      expect(ds.splits.train.length).toBe(nations.splits.train.length);
      expect(warn).toHaveBeenCalledTimes(2);
      for (const [message, o] of warn.mock.calls) {
        expect(message).toMatch(
          /two-names holds train as train\.tsv and train\.npy: reading \/.*two-names\/train\.tsv, not train\.npy .*remove or rename/,
        );
        expect(o).toEqual({ code: "KGRANK_SPLIT_FILES" });
      }
      warn.mockClear();
      fs.rmSync(path.join(d, "train.npy"));
      loadDataset(undefined, { datasetDir: d });
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  it("id-array labels made on demand: the count and each label by index make no string per id", async () => {
    const { idLabels } = await import("../src/io/id-arrays");
    const heap = process.memoryUsage().heapUsed;
    const labels = idLabels(2147483647);
    expect(labels.length).toBe(2147483647);
    expect([labels[0], labels[2147483646], labels[2147483647], labels[-1 as number]]).toEqual([
      "0",
      "2147483646",
      undefined,
      undefined,
    ]);
    expect(Array.isArray(labels)).toBe(true);
    // a string per id would take tens of GB; these reads make none
    expect(process.memoryUsage().heapUsed - heap).toBeLessThan(16 * 2 ** 20);
  });

  const fb = loadShared("fb15k-237");
  const fbNeed = sharedDataset("fb15k-237");
  it.skipIf(fbNeed.missing)(
    fbNeed.name("FB15k-237 from the shared folder: 14,505 training entities, 20,438 test triples kept, 28 dropped"),
    () => {
      const d = loadDataset("fb15k-237", { datasetDir: SHARED_DATASETS });
      expect(d.numEntities).toBe(14505);
      expect(d.splits.test.length / 3).toBe(20438);
      expect(d.dropped.test).toBe(28);
      expect(d.dropped.valid).toBe(9);
      expect(d.entityLabels).toEqual(fb!.entities);
    },
  );

  const wn = loadShared("wn18rr");
  const wnNeed = sharedDataset("wn18rr");
  it.skipIf(wnNeed.missing)(
    wnNeed.name("WN18RR from the shared folder: labels keep their leading zeros; 2,924 of 3,134 test triples kept"),
    () => {
      const d = loadDataset("wn18rr", { datasetDir: SHARED_DATASETS });
      expect(d.splits.test.length / 3).toBe(2924);
      expect(d.dropped.test).toBe(210);
      expect(d.numEntities).toBe(40559);
      expect(d.entityLabels.every((l) => /^\d{8}$/.test(l))).toBe(true);
      expect(d.entityLabels.some((l) => l.startsWith("0"))).toBe(true);
      expect(d.entityLabels).toEqual(wn!.entities);
    },
  );
});

describe("baseline scorer and candidate counts", () => {
  it("FrequencyBaseline scores a tail by how often it is the relation's tail in training", () => {
    const train = Int32Array.from([0, 0, 1, 2, 0, 1, 1, 0, 2, 0, 1, 0]);
    const b = new FrequencyBaseline(train, 3, 2);
    expect(Array.from(b.scoreBatch(Int32Array.from([0, 0, 1]), "tail"))).toEqual([0, 2, 1]);
    expect(Array.from(b.scoreBatch(Int32Array.from([0, 0, 1]), "head"))).toEqual([1, 1, 1]);
    expect(Array.from(b.scoreBatch(Int32Array.from([0, 1, 0]), "head"))).toEqual([1, 0, 0]);
    expect(() => b.scoreBatch(Int32Array.from([0, 5, 0]), "tail")).toThrow(KgrankInputError);
    // A reused buffer gets the same scores and is returned as a view of its first rows x numEntities cells.
    const into = new Float32Array(12).fill(9);
    const two = Int32Array.from([0, 0, 1, 0, 1, 0]);
    const view = b.scoreBatch(two, "tail", into);
    expect(view.buffer).toBe(into.buffer);
    expect(Array.from(view)).toEqual(Array.from(b.scoreBatch(two, "tail")));
    expect(Array.from(into.subarray(6))).toEqual([9, 9, 9, 9, 9, 9]);
  });

  it("filteredCandidateCounts: N minus the other known answers", () => {
    const train = Int32Array.from([0, 0, 1, 0, 0, 2, 3, 0, 2]);
    const test = Int32Array.from([0, 0, 3]);
    const c = filteredCandidateCounts(test, [train], 4, 1);
    expect(Array.from(c.tail)).toEqual([2]); // tails of (0, 0): 1, 2 filtered; 0 and 3 remain
    expect(Array.from(c.head)).toEqual([4]); // no other head of (0, 3)
    // Ids are checked before either index is built, naming the array.
    expect(() => filteredCandidateCounts(Int32Array.from([0, 1, 3]), [train], 4, 1)).toThrow(/^evaluated: row 0/);
    expect(() => filteredCandidateCounts(test, [train, Int32Array.from([4, 0, 0])], 4, 1)).toThrow(
      /^filter\[1\]: row 0/,
    );
  });
});

describe("writeFileAtomic", () => {
  it("writes through a temporary file and leaves nothing else behind", () => {
    const sub = mkdtempSync(path.join(dir, "atomic-"));
    writeFileAtomic(path.join(sub, "out.txt"), "hello");
    expect(readFileSync(path.join(sub, "out.txt"), "utf8")).toBe("hello");
    expect(readdirSync(sub)).toEqual(["out.txt"]);
  });

  it("a failed write (disk full) keeps the old file and removes the temporary one", () => {
    const sub = mkdtempSync(path.join(dir, "atomic-"));
    const target = path.join(sub, "out.txt");
    writeFileSync(target, "old");
    const spy = vi.spyOn(fs, "writeSync").mockImplementation(() => {
      throw Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" });
    });
    try {
      expect(() => writeFileAtomic(target, "new content", "--output")).toThrow(
        /--output: cannot write .*no space left/,
      );
    } finally {
      spy.mockRestore();
    }
    expect(readFileSync(target, "utf8")).toBe("old");
    expect(readdirSync(sub)).toEqual(["out.txt"]);
  });

  it("/dev/full reports a full disk; a missing directory is a KgrankInputError", () => {
    if (existsSync("/dev/full")) expect(() => writeFileAtomic("/dev/full", "x")).toThrow(/no space left/);
    expect(() => writeFileAtomic(path.join(dir, "no", "such", "dir", "f.txt"), "x")).toThrow(KgrankInputError);
  });

  it("writes as a careful writer: keeps the mode, refuses read-only files, writes through links, fits NAME_MAX", () => {
    const sub = mkdtempSync(path.join(dir, "careful-"));
    const secret = path.join(sub, "secret.txt");
    writeFileSync(secret, "old", { mode: 0o600 });
    fs.chmodSync(secret, 0o600);
    writeFileAtomic(secret, "new");
    expect(fs.statSync(secret).mode & 0o777).toBe(0o600);
    expect(readFileSync(secret, "utf8")).toBe("new");

    const ro = path.join(sub, "read-only.txt");
    writeFileSync(ro, "keep");
    fs.chmodSync(ro, 0o444);
    expect(() => writeFileAtomic(ro, "x", "--output")).toThrow(
      /--output: cannot write .*read-only\.txt: it is read-only \(mode 0444\)/,
    );
    expect(readFileSync(ro, "utf8")).toBe("keep");

    const target = path.join(sub, "target.txt");
    writeFileSync(target, "old");
    const link = path.join(sub, "link.txt");
    fs.symlinkSync("target.txt", link);
    writeFileAtomic(link, "through the link");
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(target, "utf8")).toBe("through the link");

    const long = path.join(sub, "x".repeat(250) + ".txt");
    writeFileAtomic(long, "long name");
    expect(readFileSync(long, "utf8")).toBe("long name");
    expect(readdirSync(sub).sort()).toEqual(
      ["link.txt", "read-only.txt", "secret.txt", "target.txt", "x".repeat(250) + ".txt"].sort(),
    );
  });
});
