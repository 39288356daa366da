/**
 * Random-input properties of the archive readers written in TypeScript: .npz (zip central directory, stored /
 * deflated / zip64 members, CRC-32) and safetensors (JSON header, offsets). Random bytes, random edits of valid
 * files (bytes set, inserted, deleted; 16/32/64-bit fields overwritten with edge values; truncation) and random
 * safetensors headers must give a clean result or a KgrankInputError - never another error, a crash or a hang - and:
 *   - a clean result is consistent (each array holds the product of its shape elements);
 *   - the work is bounded by the input: the arrays returned hold at most 2 x 1032 x (input bytes) + 4 KiB of data
 *     (deflate expands at most 1032-fold, float16 widens to float32), which is what keeps the time of a case bounded
 *     without timing it;
 *   - messages are short (no echo of a long name, shape or header).
 * Runs on every backend: the members' .npy headers are parsed by the native parser on native projects.
 */
import { writeFileSync } from "node:fs";
import * as path from "node:path";

import fc from "fast-check";
import { zipSync } from "fflate";
import { describe, expect, it } from "vitest";

import { encodeNpy, KgrankInputError, parseNpz, parseSafetensors, readNpz, readSafetensors } from "../src/index";
import type { NpyData } from "../src/io/npy";
import { encodeNpz } from "../src/io/npz-write";
import { backendLabel } from "./helpers/backend";
import { deflated, zip } from "./helpers/archives";
import { tempDir } from "./helpers/temp";

const RUNS = Number(process.env.KGRANK_PROPERTY_RUNS ?? 1000);
const MAX_MESSAGE = 1000;
const dir = tempDir("archive-props");

type Outcome = "ok" | "error";

/** Runs one parse and checks the properties above; returns what happened. Any other error fails the property. */
function check(parse: () => Record<string, NpyData>, inputBytes: number): Outcome {
  let out: Record<string, NpyData>;
  try {
    out = parse();
  } catch (e) {
    if (!(e instanceof KgrankInputError)) throw e;
    expect(e.message.length, e.message.slice(0, 200)).toBeLessThan(MAX_MESSAGE);
    expect(e.argument.length).toBeLessThan(100);
    return "error";
  }
  let bytes = 0;
  for (const a of Object.values(out)) {
    expect(a.data.length).toBe(a.shape.reduce((x, y) => x * y, 1));
    bytes += a.data.byteLength;
  }
  expect(bytes).toBeLessThanOrEqual(2 * 1032 * inputBytes + 4096);
  return "ok";
}

/** An edit of a valid file: a byte set, inserted or deleted; a little-endian field overwritten; or a cut. */
const EDGE = [0, 1, 0x7f, 0x80, 0xff, 0xffff, 0x7fffffff, 0xffffffff];
const edit = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.tuple(fc.constantFrom("set", "insert", "delete"), fc.nat(), fc.integer({ min: 0, max: 255 })),
  },
  {
    weight: 3,
    arbitrary: fc.tuple(fc.constantFrom("u16", "u32", "u64"), fc.nat(), fc.oneof(fc.constantFrom(...EDGE), fc.nat())),
  },
  { weight: 1, arbitrary: fc.tuple(fc.constant("cut"), fc.nat(), fc.constant(0)) },
);
type Edit = [string, number, number];

function applyEdits(seed: Uint8Array, edits: Edit[]): Uint8Array {
  let b = Array.from(seed);
  for (const [op, at, v] of edits) {
    const i = b.length ? at % b.length : 0;
    if (op === "set" && b.length) b[i] = v;
    else if (op === "insert") b.splice(i, 0, v & 0xff);
    else if (op === "delete") b.splice(i, 1);
    else if (op === "cut") b = b.slice(0, i);
    else {
      const width = op === "u16" ? 2 : op === "u32" ? 4 : 8;
      for (let k = 0; k < width && i + k < b.length; k++)
        b[i + k] = k < 4 ? Math.floor(v / 2 ** (8 * k)) & 0xff : v === 0xffffffff ? 0xff : 0;
    }
  }
  return Uint8Array.from(b);
}

/** Offsets of the zip records' signatures: edits there hit the fields that matter most often. */
function signatures(b: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i + 4 <= b.length; i++)
    if (b[i] === 0x50 && b[i + 1] === 0x4b && b[i + 2]! <= 8 && b[i + 3]! <= 8) out.push(i);
  return out;
}

// ---- valid files to start from -------------------------------------------------------------------------------------
const f4 = encodeNpy(Float32Array.from([1.5, -2, 3, 4, 5, 6]), [2, 3]);
const i8 = encodeNpy(BigInt64Array.from([7n, -9n, 2n ** 40n]));
/** float16 (encodeNpy writes no f2): a u2 file with its descr changed. */
const f2 = (() => {
  const b = encodeNpy(Uint16Array.from([0x3c00, 0xc000]), [2]);
  const at = Buffer.from(b).indexOf("<u2");
  b[at + 1] = "f".charCodeAt(0);
  return b;
})();
const b1 = encodeNpy(Uint8Array.from([1, 0, 1]), [3], { dtype: "b1" });
const zeros = encodeNpy(new Float64Array(512)); // deflates ~100-fold
const NPZ_SEEDS: [string, Uint8Array][] = [
  [
    "stored (fflate)",
    zipSync({ "a.npy": f4, "b.npy": i8, "README.txt": new TextEncoder().encode("hello") }, { level: 0 }),
  ],
  ["deflated (fflate)", zipSync({ "a.npy": f4, "z.npy": zeros, "h.npy": f2 }, { level: 6 })],
  [
    "kgrank's own writer",
    encodeNpz({ a: { data: Float32Array.from([1, 2, 3, 4]), shape: [2, 2] }, b: { data: Int32Array.from([5, 6]) } }),
  ],
  [
    "zip64, stored and deflated",
    zip([{ name: "a.npy", data: f4 }, deflated("z.npy", zeros), { name: "b.npy", data: b1 }], { zip64: true }),
  ],
  ["plain, hand-built", zip([deflated("a.npy", f4), { name: "c.npy", data: i8 }])],
];

function safetensors(header: unknown, data: Uint8Array): Uint8Array {
  const h = new TextEncoder().encode(typeof header === "string" ? header : JSON.stringify(header));
  const out = new Uint8Array(8 + h.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  out.set(data, 8 + h.length);
  return out;
}
// Bytes 24-40 hold two small int64 values (random ones would pass 2^53, which the reader refuses, as it should).
const stData = new Uint8Array(64).map((_, i) => (i >= 24 && i < 40 ? (i % 8 === 0 ? i : 0) : (i * 37) & 0xff));
const ST_SEEDS: [string, Uint8Array][] = [
  [
    "F32 + I64 + BOOL + metadata",
    safetensors(
      {
        __metadata__: { format: "pt" },
        w: { dtype: "F32", shape: [2, 3], data_offsets: [0, 24] },
        ids: { dtype: "I64", shape: [2], data_offsets: [24, 40] },
        mask: { dtype: "BOOL", shape: [4], data_offsets: [40, 44] },
      },
      stData.subarray(0, 44),
    ),
  ],
  [
    "F16 + U8, unaligned",
    safetensors(
      { h: { dtype: "F16", shape: [3], data_offsets: [0, 6] }, u: { dtype: "U8", shape: [5], data_offsets: [6, 11] } },
      stData.subarray(0, 11),
    ),
  ],
];

describe(`archive readers under random input [${backendLabel}]`, () => {
  it("the seeds are valid files (so the edits start from something the readers accept)", () => {
    for (const [name, b] of NPZ_SEEDS)
      expect(
        check(() => parseNpz(b), b.length),
        name,
      ).toBe("ok");
    for (const [name, b] of ST_SEEDS)
      expect(
        check(() => parseSafetensors(b), b.length),
        name,
      ).toBe("ok");
  });

  it(".npz: random bytes (some starting with a zip signature) -> a KgrankInputError or a clean result", () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 2048 }),
      fc.uint8Array({ maxLength: 2048 }).map((b) => Uint8Array.from([0x50, 0x4b, 3, 4, ...b])),
      // random bytes ending in an end-of-central-directory record pointing into them
      fc
        .tuple(fc.uint8Array({ maxLength: 1024 }), fc.nat({ max: 0xffff }), fc.nat(), fc.nat())
        .map(([b, n, size, offset]) => {
          const eocd = new Uint8Array(22);
          const dv = new DataView(eocd.buffer);
          dv.setUint32(0, 0x06054b50, true);
          dv.setUint16(8, n, true);
          dv.setUint16(10, n, true);
          dv.setUint32(12, size % (b.length + 1), true);
          dv.setUint32(16, offset % (b.length + 1), true);
          return Uint8Array.from([0x50, 0x4b, ...b, ...eocd]);
        }),
    );
    fc.assert(
      fc.property(bytes, (b) => {
        check(() => parseNpz(b, "--scores"), b.length);
      }),
      { numRuns: RUNS },
    );
  });

  it(".npz: valid archives (stored, deflated, zip64, NumPy's layout) with random edits -> a KgrankInputError or a clean result", () => {
    let ok = 0;
    const seeds = NPZ_SEEDS.map(([, b]) => b);
    const near = (b: Uint8Array) =>
      fc.constantFrom(...signatures(b)).chain((s) => fc.nat({ max: 46 }).map((d) => s + d));
    const targeted = fc
      .constantFrom(...seeds)
      .chain((seed) =>
        fc.tuple(
          fc.constant(seed),
          fc.array(
            fc.tuple(
              fc.constantFrom("u16", "u32", "u64", "set"),
              near(seed),
              fc.constantFrom(...EDGE, 2, 8, 12, 14, 45),
            ),
            { minLength: 1, maxLength: 3 },
          ),
        ),
      );
    const anywhere = fc.tuple(fc.constantFrom(...seeds), fc.array(edit, { minLength: 1, maxLength: 6 }));
    fc.assert(
      fc.property(
        fc.oneof(targeted, anywhere),
        fc.option(fc.array(fc.string({ maxLength: 3 }), { maxLength: 3 })),
        ([seed, edits], arrays) => {
          const b = applyEdits(seed, edits as Edit[]);
          if (check(() => parseNpz(b, "--scores", arrays === null ? {} : { arrays }), b.length) === "ok") ok++;
        },
      ),
      { numRuns: RUNS },
    );
    // Not vacuous: some edits leave a readable archive (a field nobody reads, a README byte, a wanted subset).
    expect(ok).toBeGreaterThan(RUNS / 100);
  });

  it(".npz from a file (positioned reads): edited archives behave as in memory", () => {
    const file = path.join(dir, "edited.npz");
    fc.assert(
      fc.property(
        fc.constantFrom(...NPZ_SEEDS.map(([, b]) => b)),
        fc.array(edit, { minLength: 1, maxLength: 4 }),
        (seed, edits) => {
          const b = applyEdits(seed, edits as Edit[]);
          writeFileSync(file, b);
          const fromFile = check(() => readNpz(file, "--scores"), b.length);
          expect(check(() => parseNpz(b, "--scores"), b.length)).toBe(fromFile);
        },
      ),
      { numRuns: RUNS / 4 },
    );
  });

  it("safetensors: random bytes, and random headers (any dtype, shape and offsets) over random data", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 1024 }), (b) => {
        check(() => parseSafetensors(b, "--scores"), b.length);
      }),
      { numRuns: RUNS },
    );
    const dim = fc.oneof(
      { weight: 6, arbitrary: fc.nat({ max: 8 }) },
      { weight: 1, arbitrary: fc.constantFrom(-1, 2.5, 2 ** 31, 2 ** 53, 1e308, "3", null) },
    );
    const offset = fc.oneof(
      { weight: 6, arbitrary: fc.nat({ max: 80 }) },
      { weight: 1, arbitrary: fc.constantFrom(-8, 1.5, 2 ** 53, 2 ** 64, "0", null) },
    );
    const dtype = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.constantFrom("F16", "F32", "F64", "I8", "I16", "I32", "I64", "U8", "U16", "U32", "U64", "BOOL"),
      },
      {
        weight: 1,
        arbitrary: fc.oneof(
          fc.string({ maxLength: 5 }),
          fc.constantFrom("constructor", "__proto__", "toString", 4, null),
        ),
      },
    );
    const tensor = fc.record(
      {
        dtype,
        shape: fc.oneof(fc.array(dim, { maxLength: 3 }), fc.constantFrom(3, "x", null)),
        data_offsets: fc.oneof(fc.tuple(offset, offset), fc.array(offset, { maxLength: 3 })),
      },
      { requiredKeys: [] },
    );
    const header = fc.dictionary(
      fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom("__metadata__", "__proto__", "constructor")),
      fc.oneof({ weight: 8, arbitrary: tensor }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) }),
      { maxKeys: 4 },
    );
    let ok = 0;
    fc.assert(
      fc.property(header, fc.uint8Array({ maxLength: 96 }), (h, data) => {
        const b = safetensors(h, data);
        if (check(() => parseSafetensors(b, "--scores"), b.length) === "ok") ok++;
      }),
      { numRuns: RUNS },
    );
    expect(ok).toBeGreaterThan(RUNS / 100);
  });

  it("safetensors: valid files with random edits (header bytes, length field, data), in memory and from a file", () => {
    const file = path.join(dir, "edited.safetensors");
    let ok = 0;
    // Edits anywhere (mostly in the JSON header, which they usually break), or byte changes in the data only (which
    // leave a valid file unless they push an int64 past 2^53).
    const dataStart = (b: Uint8Array) => 8 + Number(new DataView(b.buffer, b.byteOffset).getBigUint64(0, true));
    const inData = fc
      .constantFrom(...ST_SEEDS.map(([, b]) => b))
      .chain((seed) =>
        fc.tuple(
          fc.constant(seed),
          fc.array(
            fc.tuple(
              fc.constant("set"),
              fc.integer({ min: dataStart(seed), max: seed.length - 1 }),
              fc.integer({ min: 0, max: 255 }),
            ),
            { minLength: 1, maxLength: 4 },
          ),
        ),
      );
    const anywhere = fc.tuple(
      fc.constantFrom(...ST_SEEDS.map(([, b]) => b)),
      fc.array(edit, { minLength: 1, maxLength: 6 }),
    );
    fc.assert(
      fc.property(fc.oneof(anywhere, inData), fc.boolean(), ([seed, edits], fromFile) => {
        const b = applyEdits(seed, edits as Edit[]);
        let outcome: Outcome;
        if (fromFile) {
          writeFileSync(file, b);
          outcome = check(() => readSafetensors(file, "--scores"), b.length);
        } else {
          outcome = check(() => parseSafetensors(b, "--scores"), b.length);
        }
        if (outcome === "ok") ok++;
      }),
      { numRuns: RUNS },
    );
    expect(ok).toBeGreaterThan(RUNS / 100);
  });
});
