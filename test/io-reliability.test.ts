/**
 * The input readers under hostile or unusual files: .npy headers parsed as the Python literal they are,
 * Fortran-order files with many unit dimensions, TSV files that are not UTF-8, allocations the machine cannot make,
 * safetensors headers that are not what they claim, and .npz archives read through their central directory (lazily,
 * bounded by the real data, CRC-checked). Runs on every backend; the memory cases run in child processes under a
 * bounded heap or address space.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { closeSync, openSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import * as path from "node:path";
import { crc32 } from "node:zlib";
import { describe, expect, it } from "vitest";

import { zipSync } from "fflate";

import {
  encodeNpy,
  KgrankInputError,
  loadEmbeddingModel,
  ogbEvaluateSync,
  parseNpy,
  parseNpz,
  parseSafetensors,
  readNpy,
  readNpz,
  readTriples,
  writeNpy,
} from "../src/index";
import { readArray } from "../src/io/array-file";
import { expectShape, readNumbers } from "../src/run/arrays";
import { splitTsvBytes } from "../src/io/tsv";
import { deflated, zip } from "./helpers/archives";
import { external, runs } from "./helpers/external";
import { expectError, thrownBy } from "./helpers/errors";
import { tempDir } from "./helpers/temp";

const dir = tempDir("io-rel");

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

const errorOf = (call: () => unknown): KgrankInputError => expectError(thrownBy(call), KgrankInputError);

describe(".npy header: a Python dict literal, as NumPy reads it", () => {
  it("duplicate keys: the last one wins, as in a Python dict", () => {
    const a = parseNpy(
      npy(
        "{'descr': '<f4', 'fortran_order': True, 'shape': (9,), 'descr': '<i4', 'shape': (2,), 'fortran_order': False}",
        i32(7, -1),
      ),
    );
    expect(a.dtype).toBe("i4");
    expect(a.shape).toEqual([2]);
    expect(Array.from(a.data)).toEqual([7, -1]);
  });

  it("a string value holding \"'shape': (9,)\" or \"'descr': '<f8'\" is a string, not a key", () => {
    const a = parseNpy(
      npy(
        `{'descr': "'descr': '<f8', 'shape': (9,)", 'descr': '<i4', 'fortran_order': False, 'shape': (2,), }`,
        i32(3, 4),
      ),
    );
    expect([a.dtype, a.shape, Array.from(a.data)]).toEqual(["i4", [2], [3, 4]]);
  });

  it("escapes, quotes, prefixes, comments, line continuations, adjacent strings and trailing commas", () => {
    const headers = [
      "{'descr': '\\x3ci4', \"fortran_order\": False, 'shape': (2,)}",
      "{'descr': '\\u003ci4', 'fortran_order': False, 'shape': (2 ,) , }",
      "{u'descr': r'<i4', 'fortran_order': False, # a comment ' }\n 'shape': (\n2,\n)}",
      "{'de' \"scr\": '<' 'i4', 'fortran_order':\\\nFalse, 'shape': (2,)}",
      "{'descr': '''<i4''', 'fortran_order': False, 'shape': (2,)}",
      "{'descr': '<i\\64', 'fortran_order': False, 'shape': (2,)}",
      "\t {'descr': '<i4', 'fortran_order': False, 'shape': (2,)}  \n",
    ];
    for (const h of headers) {
      const a = parseNpy(npy(h, i32(5, 6)));
      expect([a.dtype, a.shape, Array.from(a.data)], h).toEqual(["i4", [2], [5, 6]]);
    }
  });

  it("rejects what NumPy rejects: other keys, a missing key, shape not a tuple, fortran_order not a bool, bad syntax", () => {
    const cases: [string, RegExp][] = [
      [
        "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
        /key 'x' besides 'descr', 'fortran_order' and 'shape'/,
      ],
      ["{'descr': '<i4', 'shape': (2,)}", /no 'fortran_order'/],
      ["{'descr': '<i4', 'fortran_order': False, 'shape': (2)}", /'shape' is not a tuple/],
      ["{'descr': '<i4', 'fortran_order': 'False', 'shape': (2,)}", /'fortran_order' is 'False', not True or False/],
      ["{'descr': '<i4', 'fortran_order': False, 'shape': (2,), ", /not a valid Python dict literal/],
      ["{'descr': '<i4', 'fortran_order': False, 'shape': (2,)} x", /not a valid Python dict literal/],
      ["{'descr': '<i4\n', 'fortran_order': False, 'shape': (2,)}", /unterminated string/],
      ["{'descr': '<i4', 'fortran_order': False, 'shape': (-2,)}", /not a non-negative integer/],
      ["{'descr': '<i4', 'fortran_order': False, 'shape': (02,)}", /not a valid Python dict literal/],
      ["{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (2,)}", /'descr' is not a string/],
    ];
    for (const [h, re] of cases) expect(errorOf(() => parseNpy(npy(h, i32(5, 6)))).message, h).toMatch(re);
  });

  it("a version 3.0 header must be UTF-8; version 1.0 / 2.0 headers are latin-1", () => {
    const bad = npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2,)}", i32(1, 2), 3);
    bad[12 + 1] = 0xff; // the "'" before descr
    expect(errorOf(() => parseNpy(bad)).message).toMatch(/not valid UTF-8/);
    // latin-1 text inside a string of a v1 header is just text
    expect(parseNpy(npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", i32(1, 2), 1)).shape).toEqual([2]);
  });

  it("long headers are cut short in error messages", () => {
    const long = "x".repeat(500_000);
    for (const h of [
      `{'descr': '${long}', 'fortran_order': False, 'shape': (2,)}`,
      `{'descr': '<i4', 'fortran_order': False, 'shape': (2,), '${long}`,
      `{'descr': '<i4', 'fortran_order': False, 'shape': (${"1, ".repeat(200_000)}2, 7777777777777)}`,
      `{'descr': '<i4', 'fortran_order': ${long}, 'shape': (2,)}`,
    ]) {
      const e = errorOf(() => parseNpy(npy(h, i32(1, 2), 2)));
      expect(e.message.length, e.message.slice(0, 300)).toBeLessThan(600);
    }
  });
});

const numpy = external("python3 with NumPy", runs("python3", ["-c", "import numpy"]), "install python3-numpy");

describe.skipIf(numpy.missing)(numpy.name(".npy header: same verdict as numpy.load"), () => {
  it("accepts and rejects hand-picked headers exactly as NumPy does, with the same dtype and shape", () => {
    const headers = [
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2,)}",
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), 'descr': '>i4'}",
      "{'descr': '\\x3ci4', 'fortran_order': False, 'shape': (2, 1)}",
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2)}",
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
      "{'descr': '<i4', 'fortran_order': 0, 'shape': (2,)}",
      "{'descr': '<i4', 'fortran_order': False, # c\n 'shape': (1, 2)}",
      "{'descr': '<i' '4', 'fortran_order': False, 'shape': (2,)}",
      "{'descr': '<i4', 'fortran_order': False, 'shape': (1_0,)}",
      "{'descr': '<i4', 'fortran_order': False, 'shape': (02,)}",
      "{'descr': \"'descr': '<f8'\", 'descr': '<u4', 'fortran_order': False, 'shape': (2,)}",
      "{'descr': '<i4', 'fortran_order': False, 'shape': ()}",
      "{'descr': '<i4', 'fortran_order': True, 'shape': (1, 2, 1)}",
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2,),}",
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2,)",
      "{'descr': '<i4', 'fortran_order': False}",
      "{'descr': '''<i4''', 'fortran_order': False, 'shape': (2,)}",
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2,)} # trailing comment",
    ];
    const files = headers.map((h, k) => file(`np-verdict-${k}.npy`, npy(h, new Uint8Array(64), 1)));
    const py = `
import numpy as np, sys, json
out = []
for f in sys.argv[1:]:
    try:
        a = np.load(f)
        out.append({"ok": [a.dtype.str[1:], list(a.shape)]})
    except Exception as e:
        out.append({"error": type(e).__name__})
print(json.dumps(out))
`;
    const verdicts = JSON.parse(execFileSync("python3", ["-c", py, ...files], { encoding: "utf8" })) as (
      { ok: [string, number[]] } | { error: string }
    )[];
    headers.forEach((h, k) => {
      const v = verdicts[k]!;
      let ours: { ok: [string, number[]] } | { error: string };
      try {
        const a = readNpy(files[k]!);
        ours = { ok: [a.dtype, a.shape] };
      } catch (e) {
        expect(e, h).toBeInstanceOf(KgrankInputError);
        ours = { error: "any" };
      }
      if ("ok" in v) expect(ours, h).toEqual(v);
      else expect("error" in ours, `${h}: NumPy raised ${v.error}, we accepted`).toBe(true);
    });
  });
});

describe("Fortran-order .npy with many unit dimensions", () => {
  it("a (N, 1, 1, ..., 1) file with 100,000 dimensions is read without a transpose pass (no work of elements x dimensions)", () => {
    const n = 20_000;
    const dims = [n, ...new Array<number>(99_999).fill(1)];
    const values = Float64Array.from({ length: n }, (_, i) => i * 0.5);
    const bytes = npy(
      `{'descr': '<f8', 'fortran_order': True, 'shape': (${dims.join(",")}), }`,
      new Uint8Array(values.buffer),
      2,
    );
    const a = readNpy(file("many-dims.npy", bytes));
    expect(a.shape.length).toBe(100_000);
    expect(Array.from(a.data)).toEqual(Array.from(values));
    // The work, not the time: with one dimension left after the unit ones are dropped, nothing moves, so the array is
    // a view of the input's own bytes (the transpose visits no element, rather than each once per dimension).
    const m = parseNpy(bytes);
    expect(m.data.buffer).toBe(bytes.buffer);
    expect(Array.from(m.data)).toEqual(Array.from(values));
    // With two non-unit dimensions the transpose runs over the elements, whatever the unit dimensions around them.
    const t = parseNpy(
      npy(
        `{'descr': '<i4', 'fortran_order': True, 'shape': (2, ${new Array<number>(99_998).fill(1).join(",")}, 3), }`,
        i32(0, 3, 1, 4, 2, 5),
        2,
      ),
    );
    expect(t.data.buffer).not.toBe(bytes.buffer);
    expect(Array.from(t.data)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("unit dimensions anywhere do not change the transpose (1 x 2 x 1 x 3 x 1 Fortran = 2 x 3 Fortran)", () => {
    // (i, j) of a 2 x 3 array at Fortran offset i + 2 j holds 3 i + j (its C offset).
    const f = [0, 3, 1, 4, 2, 5];
    const a = parseNpy(npy("{'descr': '<i4', 'fortran_order': True, 'shape': (1, 2, 1, 3, 1), }", i32(...f)));
    expect(a.shape).toEqual([1, 2, 1, 3, 1]);
    expect(Array.from(a.data)).toEqual([0, 1, 2, 3, 4, 5]);
  });
});

describe("TSV files that are not UTF-8", () => {
  const latin1 = (s: string) => Buffer.from(s, "latin1");
  it("café and cafè in Latin-1 are refused with the file and the line, not merged into caf\\uFFFD", () => {
    const p = file("latin1.tsv", latin1("a\tr\tb\ncaf\u00e9\tr\tb\ncaf\u00e8\tr\tb\n"));
    const e = errorOf(() => readTriples(p, { argument: "--train" }));
    expect(e.argument).toBe("--train");
    expect(e.message).toContain(p);
    expect(e.message).toMatch(/line 2 is not valid UTF-8 \(byte 0xe9 at byte 4 of the line\)/);
    expect(e.message).toMatch(/iconv/);
  });

  it("the line number counts every line, and a bad byte wins over a later column error", () => {
    expect(
      errorOf(() =>
        splitTsvBytes(
          Buffer.from([0x61, 0x09, 0x62, 0x09, 0x63, 0x0a, 0x0a, 0x61, 0x09, 0xc3, 0x28, 0x0a, 0x61, 0x0a]),
          "t",
        ),
      ).message,
    ).toMatch(/^t: line 3 is not valid UTF-8 \(byte 0xc3 at byte 3 of the line\)/);
    // encoded surrogates and overlong forms are not UTF-8 either (WHATWG / Python both refuse them)
    expect(errorOf(() => splitTsvBytes(Buffer.from([0x61, 0x09, 0xed, 0xa0, 0x80, 0x09, 0x62]), "t")).message).toMatch(
      /line 1 is not valid UTF-8/,
    );
    expect(errorOf(() => splitTsvBytes(Buffer.from([0x61, 0x09, 0xc0, 0xaf, 0x09, 0x62]), "t")).message).toMatch(
      /line 1 is not valid UTF-8/,
    );
    // a truncated sequence at the end of the file
    expect(errorOf(() => splitTsvBytes(Buffer.from([0x61, 0x09, 0x62, 0x09, 0xe2, 0x82]), "t")).message).toMatch(
      /line 1 is not valid UTF-8 \(byte 0xe2 at byte 5/,
    );
    expect(splitTsvBytes(Buffer.from("caf\u00e9\t\u{1f600}\tb\n", "utf8"), "t")).toEqual([
      ["caf\u00e9", "\u{1f600}", "b"],
    ]);
  });
});

/** Runs `script` (CommonJS, `kg` = the built package) in a child under `ulimit -v` (KiB) and a 64 MiB old space. */
function child(script: string, virtualKiB = 2_000_000): { out: string; err: string; status: number | null } {
  const dist = path.resolve(__dirname, "..", "dist", "cjs", "index.js");
  const code = `const kg = require(${JSON.stringify(dist)});\n${script}`;
  const r = spawnSync(
    "bash",
    ["-c", `ulimit -v ${virtualKiB} && exec "$0" --max-old-space-size=64 -e "$1"`, process.execPath, code],
    {
      encoding: "utf8",
      env: { ...process.env },
      timeout: 120_000,
    },
  );
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
    const r = child(
      `${report}\nreport(() => kg.readNpy(${JSON.stringify(p)}, "--scores-tail"));\nreport(() => kg.readSafetensors(${JSON.stringify(st)}, "--scores-head"));`,
    );
    const lines = r.out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { name: string; argument: string; message: string });
    expect(lines, r.err).toHaveLength(2);
    expect(lines[0]).toMatchObject({ name: "KgrankInputError", argument: "--scores-tail" });
    expect(lines[0]!.message).toContain(p);
    expect(lines[0]!.message).toMatch(/8589934592 bytes \(8\.0 GiB\)/);
    expect(lines[1]).toMatchObject({ name: "KgrankInputError", argument: "--scores-head" });
    expect(lines[1]!.message).toContain(st);
  });
});

describe(".npz: the central directory, lazily, bounded, CRC-checked", () => {
  const a = encodeNpy(Float32Array.from([1, 2, 3]));
  const b = encodeNpy(Int32Array.from([4, 5]));

  it("reads stored, deflated and zip64 archives; only the arrays asked for", () => {
    for (const z64 of [false, true]) {
      const bytes = zip(
        [{ name: "a.npy", data: a }, deflated("b.npy", b), deflated("README.txt", Buffer.from("hello"))],
        { zip64: z64 },
      );
      const all = parseNpz(bytes);
      expect(Object.keys(all).sort()).toEqual(["a", "b"]);
      expect(Array.from(all.a!.data)).toEqual([1, 2, 3]);
      expect(Array.from(all.b!.data)).toEqual([4, 5]);
      const only = readNpz(file(`only-${z64}.npz`, bytes), "--scores", { arrays: ["b"] });
      expect(Object.keys(only)).toEqual(["b"]);
      expect(errorOf(() => parseNpz(bytes, "--scores", { arrays: ["c"] })).message).toMatch(
        /no array "c" \(it holds "a", "b"\)/,
      );
    }
  });

  it("a member whose bytes fail its CRC-32 is a typed error naming the member (NumPy raises; this read it silently)", () => {
    const flipped = a.slice();
    flipped[flipped.length - 1]! ^= 1;
    for (const m of [{ name: "a.npy", data: flipped, crc: crc32(a) }, deflated("a.npy", flipped, { crc: crc32(a) })]) {
      const e = errorOf(() => parseNpz(zip([m]), "--scores"));
      expect(e.message).toMatch(/a\.npy.*CRC-32/);
    }
  });

  it("bzip2 and lzma members name their compression and the fix", () => {
    for (const [method, what] of [
      [12, "bzip2"],
      [14, "LZMA"],
    ] as const) {
      const e = errorOf(() =>
        parseNpz(zip([{ name: "a.npy", method, data: new Uint8Array(40), declaredSize: a.length }])),
      );
      expect(e.message).toContain(what);
      expect(e.message).toMatch(/np\.savez/);
      expect(e.message).not.toMatch(/damaged/);
    }
  });

  it("a declared size no deflate stream of its length can produce is refused before anything is allocated", () => {
    const members = Array.from({ length: 20 }, (_, k) => deflated(`m${k}.npy`, a, { declaredSize: 0xffffffff }));
    const e = errorOf(() => parseNpz(zip(members)));
    expect(e.message).toMatch(/member "m0\.npy" declares 4294967295 bytes/);
    // a member that inflates to more or less than it declares
    expect(errorOf(() => parseNpz(zip([deflated("a.npy", a, { declaredSize: a.length - 1 })]))).message).toMatch(
      /member "a\.npy" inflates to more than its declared/,
    );
    expect(errorOf(() => parseNpz(zip([deflated("a.npy", a, { declaredSize: a.length + 1 })]))).message).toMatch(
      /member "a\.npy" inflates to \d+ bytes, not the \d+ it declares/,
    );
  });

  it("entries that share data (a zip bomb: many entries, one deflate stream) are refused before anything is inflated", () => {
    // 20 entries of one 1 MiB member that deflates to ~1 KB, all pointing at the first member's local header: each
    // entry alone is valid (size, CRC), so a reader that trusts entries would inflate the same stream 20 times (20 MiB
    // from 1 KB).
    const big = encodeNpy(new Float32Array(1 << 18));
    const bytes = zip(Array.from({ length: 20 }, (_, k) => deflated(`m${k}.npy`, big)));
    const dv = new DataView(bytes.buffer);
    let cd = bytes.length - 22;
    cd = dv.getUint32(cd + 16, true);
    for (let k = 0; k < 20; k++) {
      expect(dv.getUint32(cd, true)).toBe(0x02014b50);
      dv.setUint32(cd + 42, 0, true);
      cd += 46 + dv.getUint16(cd + 28, true) + dv.getUint16(cd + 30, true) + dv.getUint16(cd + 32, true);
    }
    expect(errorOf(() => parseNpz(bytes, "--scores")).message).toMatch(
      /^--scores: not a valid \.npz file: members "m0\.npy" and "m1\.npy" overlap/,
    );
    // one of them alone is read
    expect(parseNpz(bytes, "--scores", { arrays: ["m7"] }).m7!.shape).toEqual([1 << 18]);
  });

  it("a 512 MiB README.txt member in a small archive is never inflated (a child with a 64 MiB heap stays small)", () => {
    // 512 MiB of zeros deflated as one stream, built in a child that streams 1 MiB chunks (about 510 KB), so that no
    // process here ever holds 512 MiB
    const gen = `
const zlib = require("node:zlib"), fs = require("node:fs");
const chunk = Buffer.alloc(1 << 20); let crc = 0; const parts = [];
const d = zlib.createDeflateRaw({ level: 9 });
d.on("data", (b) => parts.push(b));
d.on("end", () => { fs.writeFileSync(process.argv[1], Buffer.concat(parts)); console.log(crc); });
let k = 0;
(function write() { while (k < 512) { crc = zlib.crc32(chunk, crc); k++; if (!d.write(chunk)) return d.once("drain", write); } d.end(); })();`;
    const streamFile = path.join(dir, "zeros-512m.deflate");
    const crc = Number(execFileSync(process.execPath, ["-e", gen, streamFile], { encoding: "utf8" }).trim());
    const stream = readFileSync(streamFile);
    const bytes = zip([
      { name: "a.npy", data: a },
      { name: "README.txt", method: 8, data: stream, declaredSize: 512 << 20, crc },
    ]);
    const p = file("readme-bomb.npz", bytes);
    expect(bytes.length).toBeLessThan(600_000);
    const r = child(
      `${report}\nreport(() => { const z = kg.readNpz(${JSON.stringify(p)}); if (Object.keys(z).join() !== "a") throw new Error("keys " + Object.keys(z)); });`,
      8_000_000,
    );
    const out = JSON.parse(r.out.trim() || "{}") as { ok?: boolean; rssMiB: number };
    expect(out.ok, r.out + r.err).toBe(true);
    expect(out.rssMiB).toBeLessThan(200);
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
      ['{"x": null}', /tensor "x" is null, not an object \{dtype, shape, data_offsets\}/],
      [
        '{"x": {"dtype": "F32", "shape": [2.5], "data_offsets": [0, 8]}}',
        /tensor "x": shape \[2\.5\] is not a list of non-negative integers/,
      ],
      [
        '{"x": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}',
        /tensor "x": data_offsets \[8,0\] end before they start/,
      ],
      [
        '{"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 16]}}',
        /tensor "x": data_offsets \[0,16\] end past the 8 data bytes of the file/,
      ],
      [
        '{"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 8]}}',
        /tensor "x": data_offsets \[0,8\] hold 8 bytes but shape \[1\] of F32 needs 4/,
      ],
      ['{"x": {"dtype": "F32", "shape": [2]}}', /tensor "x": data_offsets is missing/],
      // tensors sharing bytes: each would decode the same data again (a small file, tensors x data of work)
      [
        '{"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "y": {"dtype": "F16", "shape": [2], "data_offsets": [4, 8]}}',
        /tensor "x" and tensor "y" overlap/,
      ],
      [
        '{"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "__metadata__": 3}',
        /__metadata__ is 3, not an object of strings/,
      ],
    ];
    for (const [h, re] of cases) expect(errorOf(() => parseSafetensors(build(h))).message, h).toMatch(re);
  });
});

describe("echoed input is bounded: shapes, member names, tensor names", () => {
  // Each message quotes at most a few names or dimensions, cut short, with the count (before: 150 KB for a 50,000-
  // dimension shape, 200 KB for writeNpy with a 1e5-dimension shape, 120 KB for two 60,000-character member names).
  const BOUND = 600;
  const ones = (n: number) => new Array<number>(n).fill(1);
  const manyDims = () =>
    file(
      "dims-50k.npy",
      npy(`{'descr': '<f4', 'fortran_order': False, 'shape': (${ones(50_000).join(",")}), }`, new Uint8Array(4), 2),
    );

  it("a .npy of 50,000 dimensions where scores, numbers or embeddings are expected: 6 dimensions and the count", () => {
    const p = manyDims();
    const a = readArray(p, "--scores-tail");
    const shape = errorOf(() => expectShape(a, [-1, 14], "--scores-tail", "one row per triple"));
    expect(shape.message).toMatch(
      /^--scores-tail: shape \(1, 1, 1, 1, 1, 1, \.\.\. \(50000 dimensions\)\) does not match \(K, 14\)/,
    );
    const numbers = errorOf(() => readNumbers(p, "--ranks"));
    expect(numbers.message).toMatch(/shape \(1, 1, 1, 1, 1, 1, \.\.\. \(50000 dimensions\)\) is not a vector/);
    const embeddings = errorOf(() =>
      loadEmbeddingModel({ interaction: "distmult", entityEmbeddings: p, relationEmbeddings: p }),
    );
    expect(embeddings.message).toMatch(
      /has shape \[1, 1, 1, 1, 1, 1, \.\.\. \(50000 dimensions\)\]; embeddings must be 2-D/,
    );
    for (const e of [shape, numbers, embeddings]) expect(e.message.length - p.length).toBeLessThan(BOUND);
  });

  it("writeNpy / encodeNpy with a 1e5-dimension shape, or a shape of long strings", () => {
    const e = errorOf(() => writeNpy(path.join(dir, "never.npy"), Float32Array.of(1, 2, 3), ones(100_000)));
    expect(e.argument).toBe("shape");
    expect(e.message).toMatch(
      /^shape: \(1, 1, 1, 1, 1, 1, \.\.\. \(100000 dimensions\)\) does not match the array's 3 elements$/,
    );
    const s = errorOf(() => encodeNpy(Float32Array.of(1, 2, 3), ["x".repeat(100_000)] as never));
    expect(s.message).toContain("(100000 characters)");
    for (const m of [e.message, s.message]) expect(m.length).toBeLessThan(BOUND);
    const o = errorOf(() =>
      ogbEvaluateSync({ y_pred_pos: [1], y_pred_neg: { data: new Float32Array(1), shape: ones(100_000) } as never }),
    );
    expect(o.message).toMatch(/got \(1, 1, 1, 1, 1, 1, \.\.\. \(100000 dimensions\)\)/);
    expect(o.message.length).toBeLessThan(BOUND);
  });

  it("an .npz with two 60,000-character member names: every message and argument stays short", () => {
    const long = (c: string) => c.repeat(60_000);
    const good = encodeNpy(Float32Array.of(1, 2));
    const bytes = zipSync({ [`${long("a")}.npy`]: good, [`${long("b")}.npy`]: good }, { level: 0 });
    const p = file("long-names.npz", bytes);
    const two = errorOf(() => readArray(p, "--scores-tail"));
    expect(two.message).toMatch(
      /holds 2 arrays \("a{60}"… \(60000 characters\), "b{60}"… \(60000 characters\)\); save exactly one/,
    );
    const missing = errorOf(() => parseNpz(bytes, "--scores", { arrays: ["c"] }));
    expect(missing.message).toMatch(/no array "c" \(it holds "a{60}"… \(60000 characters\), "b{60}"…/);
    // a member failing its CRC-32: the member is named cut short, in the message and in the argument
    const flipped = bytes.slice();
    flipped[30 + 60_004 + good.length - 1]! ^= 1;
    const crc = errorOf(() => parseNpz(flipped, "--scores"));
    expect(crc.message).toMatch(/CRC-32/);
    expect(crc.argument).toBe(`--scores[${"a".repeat(60)}…]`);
    for (const e of [two, missing, crc]) expect(e.message.length - p.length).toBeLessThan(BOUND);
    // many members: the first 5 names and the count
    const many = zipSync(Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`m${i}.npy`, good])), { level: 0 });
    expect(errorOf(() => parseNpz(many, "x", { arrays: ["zz"] })).message).toMatch(
      /\(it holds "m0", "m1", "m2", "m3", "m4", \.\.\. \(50 in all\)\)$/,
    );
  });

  it("safetensors: a 100,000-character tensor name is cut once, with its real length (before: cut to 80, then reported as 83)", () => {
    const name = "t".repeat(100_000);
    const h = Buffer.from(JSON.stringify({ [name]: { dtype: "Q8", shape: [1], data_offsets: [0, 1] } }));
    const out = new Uint8Array(8 + h.length + 1);
    new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
    out.set(h, 8);
    const e = errorOf(() => parseSafetensors(out, "--scores"));
    expect(e.message).toMatch(/tensor "t{60}"… \(100000 characters\) has dtype "Q8"/);
    expect(e.message.length).toBeLessThan(BOUND);
  });

  it("a path of a million characters is not echoed whole", () => {
    const e = errorOf(() => readNpy("/tmp/" + "p".repeat(1_000_000), "--scores-tail"));
    expect(e.message).toMatch(/cannot read "\/tmp\/p+"… \(1000005 characters\): the name is too long/);
    expect(e.message.length).toBeLessThan(BOUND);
  });
});
