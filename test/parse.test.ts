/**
 * The C++ input parsers (native/core/parse.cpp: .npy header, TSV triples) against their TypeScript twins
 * (parseNpyHeaderTs, splitTsvTriplesTs): on hand-picked and fast-check-generated inputs (grammar-built headers and
 * TSV texts, then mutated bytes) both give the same result or the same error message. Called explicitly on both, so
 * the parity runs in every native project; the ts project checks that the public functions stay on the TS twins.
 */
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";

import { NativeStatus, nativeAddon, statusOf } from "../src/backend";
import { KgrankInputError } from "../src/errors";
import { parseNpyHeader, parseNpyHeaderTs } from "../src/io/npy";
import { splitTsvBytes, splitTsvBytesTs, splitTsvTriples } from "../src/io/tsv";
import { costRatio } from "./helpers/cost";

const addon = nativeAddon();
const RUNS = 3000;

type Outcome = { ok: unknown } | { error: string };

function tsNpy(bytes: Uint8Array, fileSize?: number): Outcome {
  try {
    return { ok: parseNpyHeaderTs(bytes, "x", fileSize) };
  } catch (e) {
    if (!(e instanceof KgrankInputError)) throw e;
    expect(e.message.startsWith("x: ")).toBe(true);
    return { error: e.message.slice(3) };
  }
}

/** A binding's result, or the message of the failed core status it threw (native/addon/common.h throw_status). */
function nativeOutcome<T>(call: () => T): { ok: T } | { error: string } {
  try {
    return { ok: call() };
  } catch (e) {
    const status = statusOf(e);
    if (status?.status !== NativeStatus.invalidInput) throw e;
    return { error: status.message };
  }
}

function nativeNpy(bytes: Uint8Array, fileSize?: number): Outcome {
  return nativeOutcome(() => addon!.parseNpyHeader(bytes, fileSize));
}

function tsTsv(bytes: Uint8Array): Outcome {
  try {
    return { ok: splitTsvBytesTs(bytes, "x") };
  } catch (e) {
    if (!(e instanceof KgrankInputError)) throw e;
    return { error: e.message.slice(3) };
  }
}

function nativeTsv(bytes: Uint8Array): Outcome {
  const buf = Buffer.from(bytes);
  const outcome = nativeOutcome(() => addon!.splitTsvTriples(buf));
  if ("error" in outcome) return outcome;
  const r = outcome.ok;
  // Internal consistency of the offsets: increasing, within the buffer, fields free of tab and newline.
  for (let k = 0; k < r.length; k++) {
    expect(r[k]!).toBeLessThanOrEqual(buf.length);
    if (k > 0) expect(r[k]!).toBeGreaterThanOrEqual(r[k - 1]!);
    if (k % 2 === 1) {
      expect(r[k]!).toBeGreaterThan(r[k - 1]!);
      for (let i = r[k - 1]!; i < r[k]!; i++) expect(buf[i] === 0x09 || buf[i] === 0x0a).toBe(false);
    }
  }
  const rows: string[][] = [];
  for (let k = 0; k < r.length; k += 6) rows.push([0, 2, 4].map((o) => buf.toString("utf8", r[k + o]!, r[k + o + 1]!)));
  return { ok: rows };
}

/** A .npy preamble + header (the header bytes as given, padded or not) for `version`. */
function npy(header: Uint8Array, version: number, lengthDelta = 0, minor = 0): Uint8Array {
  const pre = version === 1 ? 10 : 12;
  const out = new Uint8Array(pre + header.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, version, minor]);
  const len = Math.max(0, header.length + lengthDelta);
  if (version === 1) new DataView(out.buffer).setUint16(8, len & 0xffff, true);
  else new DataView(out.buffer).setUint32(8, len >>> 0, true);
  out.set(header, pre);
  return out;
}

const latin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0) & 0xff);
const utf8 = (s: string) => new Uint8Array(Buffer.from(s, "utf8"));

const DTYPES = ["f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "b1"];

describe.skipIf(!addon)("C++ parsers match their TypeScript twins", () => {
  it(".npy: every version and dtype, and every rejection, give the same result or message", () => {
    const cases: [Uint8Array, number | undefined][] = [];
    for (const v of [1, 2, 3]) {
      for (const d of DTYPES) {
        for (const order of ["<", ">", "|", "=", ""]) {
          const h = `{'descr': '${order}${d}', 'fortran_order': ${v === 2 ? "True" : "False"}, 'shape': (3, 4), }`;
          const b = npy(latin1(h.padEnd(118) + "\n"), v);
          cases.push([b, undefined], [b, b.length + 96], [b, b.length + 12 * 8], [b, b.length]);
        }
      }
      cases.push([npy(latin1("{'descr': '<f4', 'fortran_order': False, 'shape': (), }\n"), v), undefined]);
      cases.push([npy(latin1('{"descr":"<f4","fortran_order":False,"shape":(5,)}'), v), 20]);
      cases.push([npy(latin1("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 9007199254740991), }"), v), 0]);
      cases.push([
        npy(latin1("{'descr': '<f4', 'fortran_order': False, 'shape': (9007199254740992,), }"), v),
        undefined,
      ]);
      cases.push([
        npy(latin1("{'descr': '<f4', 'fortran_order': False, 'shape': (1048577, 1048577), }"), v),
        undefined,
      ]);
      cases.push([npy(latin1("{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 04, ), }"), v), undefined]);
      cases.push([npy(latin1("{'descr': '<f4', 'fortran_order': False, 'shape': (3,,4), }"), v), undefined]);
      cases.push([npy(latin1("{'descr': '<c16', 'fortran_order': False, 'shape': (3,), }"), v), undefined]);
      cases.push([npy(latin1("{'descr': '<f4\u00e9', 'fortran_order': False, 'shape': (3,), }"), v), undefined]);
      cases.push([
        npy(utf8("\ufeff{'descr': '<f4\u00e9', 'fortran_order': False, 'shape': (3,\u3000), }"), v),
        undefined,
      ]);
      cases.push([
        npy(latin1("\u00a0 {'descr'\u00a0:\u00a0'<f4', 'fortran_order': True, 'shape': (\u00a02\u00a0,), }"), v),
        undefined,
      ]);
      cases.push([npy(latin1("['descr': '<f4', 'fortran_order': False, 'shape': (3,), }"), v), undefined]);
      cases.push([npy(latin1("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"), v, 5), undefined]);
      cases.push([npy(latin1("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"), v, 0, 7), undefined]);
      cases.push([npy(new Uint8Array([0x7b, 0xff, 0xc3, 0x27, 0xe2, 0x82]), v), undefined]);
    }
    const huge = npy(new Uint8Array(0), 2);
    new DataView(huge.buffer).setUint32(8, (1 << 20) + 1, true);
    cases.push([huge, undefined], [npy(new Uint8Array(0), 4), undefined], [new Uint8Array(9), undefined]);
    cases.push([Uint8Array.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 2, 0, 1, 0, 0]), undefined]);
    let accepted = 0;
    for (const [b, size] of cases) {
      const want = tsNpy(b, size);
      if ("ok" in want) accepted++;
      expect(nativeNpy(b, size), Buffer.from(b).toString("latin1")).toEqual(want);
    }
    expect(accepted).toBeGreaterThan(100);
  });

  it(".npy: grammar-built headers with random whitespace, quotes, dtypes, shapes, versions and lengths", () => {
    const ws = fc.oneof(
      { weight: 12, arbitrary: fc.constantFrom("", " ", "  ", "\t", "\n") },
      {
        weight: 1,
        arbitrary: fc.constantFrom("\u00a0", "\u3000", "\u2028", "\u0085", "\ufeff", "\u180e", "\u00a0\u0020"),
      },
    );
    const quote = fc.constantFrom("'", '"');
    // Matching quotes mostly (Python needs them; the regexes this parser replaced did not), sometimes not.
    const quotes = fc.oneof(
      { weight: 8, arbitrary: quote.map((q) => [q, q] as const) },
      { weight: 1, arbitrary: fc.tuple(quote, quote) },
    );
    // Mostly valid pieces (so that many headers are accepted and whitespace/quoting differences show), some hostile.
    const dtype = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.tuple(fc.constantFrom("", "<", ">", "|", "="), fc.constantFrom(...DTYPES)).map(([a, d]) => a + d),
      },
      {
        weight: 2,
        arbitrary: fc
          .tuple(
            fc.constantFrom("", "<", ">", "|", "=", "!"),
            fc.constantFrom("f", "i", "u", "b", "c", "U", "é"),
            fc.constantFrom("1", "2", "4", "8", "16", "04", "", "4x"),
          )
          .map(([a, b, c]) => a + b + c),
      },
      { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
    );
    const dim = fc.oneof(
      { weight: 4, arbitrary: fc.nat({ max: 20 }).map(String) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          "0",
          "1048576",
          "1099511627776",
          "9007199254740991",
          "9007199254740992",
          "99999999999999999999999",
          "3L",
          "L",
          "-1",
          "1.5",
          "",
          " ",
          "0x10",
          "1e3",
          "\u00a07\u00a0",
          "\u0663",
        ),
      },
    );
    const shape = fc
      .array(fc.tuple(ws, dim, ws), { maxLength: 4 })
      .chain((ds) =>
        fc
          .constantFrom(",", ", ", "")
          .map((tail) => ds.map(([a, d, b]) => a + d + b).join(",") + (ds.length > 0 ? tail : "")),
      );
    const entry = (key: string, value: fc.Arbitrary<string>) =>
      fc.tuple(quotes, ws, ws, value).map(([[q1, q2], a, b, v]) => `${q1}${key}${q2}${a}:${b}${v}`);
    const header = fc
      .tuple(
        ws,
        fc.constantFrom("{", "{", "{", "{", "[", ""),
        fc
          .tuple(
            entry(
              "descr",
              fc.tuple(quotes, dtype).map(([[a, b], d]) => a + d + b),
            ),
            entry("fortran_order", fc.constantFrom("True", "False", "True", "False", "true", "1")),
            entry(
              "shape",
              shape.map((s) => `(${s})`),
            ),
            fc.boolean(),
          )
          .chain(([d, f, sh, all]) => fc.shuffledSubarray([d, f, sh], { minLength: all ? 3 : 2 })),
        fc.constantFrom("}", ", }", ""),
      )
      .map(([w, open, entries, close]) => `${w}${open}${entries.join(", ")}${close}`);
    let accepted = 0;
    fc.assert(
      fc.property(
        header,
        fc.constantFrom(1, 2, 3),
        fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, fc.integer({ min: -3, max: 3 })),
        fc.boolean(),
        fc.option(fc.integer({ min: -64, max: 4096 })),
        fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, fc.nat({ max: 8 })),
        (h, v, delta, asUtf8, sizeDelta, cut) => {
          const hb = asUtf8 ? utf8(h) : latin1(h);
          let b = npy(hb, v, delta);
          if (cut > 0) b = b.subarray(0, Math.max(0, b.length - cut));
          const size = sizeDelta === null ? undefined : Math.max(0, b.length + sizeDelta);
          const want = tsNpy(b, size);
          if ("ok" in want) accepted++;
          expect(nativeNpy(b, size)).toEqual(want);
        },
      ),
      { numRuns: RUNS },
    );
    // Not vacuous: some of the generated headers are accepted (none were, once, through a generator bug).
    expect(accepted).toBeGreaterThan(RUNS / 100); // ~5% in practice
  });

  it(".npy: valid headers with random bytes overwritten, inserted or dropped", () => {
    const seeds = [1, 2, 3].flatMap((v) =>
      ["<f4", ">i8", "|b1", "<f2"].map((d) =>
        npy(latin1(`{'descr': '${d}', 'fortran_order': False, 'shape': (2, 3), }`.padEnd(54) + "\n"), v),
      ),
    );
    const edit = fc.tuple(fc.constantFrom("set", "insert", "delete"), fc.nat(), fc.integer({ min: 0, max: 255 }));
    fc.assert(
      fc.property(
        fc.constantFrom(...seeds),
        fc.array(edit, { minLength: 1, maxLength: 6 }),
        fc.option(fc.nat({ max: 300 })),
        (seed, edits, size) => {
          const b = [...seed];
          for (const [op, at, byte] of edits) {
            const i = b.length ? at % b.length : 0;
            if (op === "set" && b.length) b[i] = byte;
            else if (op === "insert") b.splice(i, 0, byte);
            else b.splice(i, 1);
          }
          const bytes = Uint8Array.from(b);
          expect(nativeNpy(bytes, size ?? undefined)).toEqual(tsNpy(bytes, size ?? undefined));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("TSV: hand-picked texts (BOM, CRLF, blank and whitespace-only lines, empty and padded fields, bad UTF-8)", () => {
    const texts = [
      "",
      "\n",
      "\ufeff",
      "\ufeffa\tr\tb",
      "a\tr\tb\r\n\r\n  \n\t\t\nc\tr\td\n",
      "a\tr\tb\nc\td\n",
      "a\tr\tb\tx\n",
      "a\t\tb\n",
      "\ta\tb",
      "a\tb\t",
      " a \t r \t b ",
      "a\tr\tb\r\r\n",
      "a\rb\tc\td",
      "\u00a0\n\u2028\u3000\ufeff\n",
      "x\u2028\ty\tz",
      "\ufeff\ufeffa\tr\tb",
      "é\t😀\t\u0000",
      "a\tr\tb\n\u0085\n",
    ];
    for (const t of texts) expect(nativeTsv(utf8(t)), JSON.stringify(t)).toEqual(tsTsv(utf8(t)));
    const raw = [
      [0xff, 0x09, 0x61, 0x09, 0x62],
      [0xef, 0xbb],
      [0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf],
      [0xc2, 0x0a, 0xa0],
      [0xe2, 0x80, 0x0a],
      [0x61, 0x09, 0xed, 0xa0, 0x80, 0x09, 0x62],
      [0xc2, 0xa0, 0x09, 0x09],
      [0xe1, 0x9a, 0x80],
    ];
    for (const r of raw) expect(nativeTsv(Uint8Array.from(r)), String(r)).toEqual(tsTsv(Uint8Array.from(r)));
    expect(tsTsv(utf8("a\tr\tb\r\n\r\n  \n\t\t\nc\tr\td\n"))).toEqual({
      ok: [
        ["a", "r", "b"],
        ["c", "r", "d"],
      ],
    });
  });

  it("TSV: random texts over a hostile alphabet, and random bytes", () => {
    const piece = fc.constantFrom(
      "a",
      "bc",
      "\t",
      "\t",
      "\n",
      "\n",
      "\r",
      "\r\n",
      " ",
      "\u00a0",
      "\u2028",
      "\ufeff",
      "é",
      "😀",
      "\u3000",
      "\u0085",
      "\u180e",
    );
    const line = fc.array(piece, { maxLength: 8 }).map((p) => p.join(""));
    const good = fc
      .tuple(
        fc.string({ minLength: 1, maxLength: 4 }),
        fc.string({ minLength: 1, maxLength: 4 }),
        fc.string({ minLength: 1, maxLength: 4 }),
      )
      .map((f) => f.map((s) => s.replace(/[\t\n]/g, "_")).join("\t"));
    const text = fc
      .tuple(fc.boolean(), fc.array(fc.oneof(line, good, good), { maxLength: 12 }))
      .map(([bom, ls]) => (bom ? "\ufeff" : "") + ls.join("\n"));
    fc.assert(
      fc.property(text, (t) => {
        const want = tsTsv(utf8(t));
        expect(nativeTsv(utf8(t))).toEqual(want);
        // The public byte path (ASCII files: one decode and slices; others: a decode per field) gives the same rows.
        if ("ok" in want) expect(splitTsvBytes(Buffer.from(t, "utf8"), "x")).toEqual(want.ok);
      }),
      { numRuns: RUNS },
    );
    const bytes = fc.array(
      fc.oneof(
        fc.constantFrom(0x09, 0x0a, 0x0d, 0x20, 0x61, 0xc2, 0xa0, 0xe2, 0x80, 0xa8, 0xef, 0xbb, 0xbf),
        fc.integer({ min: 0, max: 255 }),
      ),
      { maxLength: 64 },
    );
    fc.assert(
      fc.property(bytes, (b) => {
        const u = Uint8Array.from(b);
        expect(nativeTsv(u)).toEqual(tsTsv(u));
      }),
      { numRuns: RUNS },
    );
  });

  it("the public parseNpyHeader and splitTsvTriples run the C++ parsers on the native backend", () => {
    const npySpy = vi.spyOn(addon!, "parseNpyHeader");
    const tsvSpy = vi.spyOn(addon!, "splitTsvTriples");
    try {
      const b = npy(latin1("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n"), 1);
      expect(parseNpyHeader(b, "arg").shape).toEqual([3]);
      expect(() => parseNpyHeader(b, "arg", 20)).toThrow(
        new KgrankInputError(
          "arg",
          "not a valid .npy file: declared shape (3) of <f4 needs 12 data bytes but the file has 0 (truncated file or lying header)",
        ),
      );
      expect(npySpy).toHaveBeenCalledTimes(2);
      expect(splitTsvTriples("a\tr\tb\n", "t")).toEqual([["a", "r", "b"]]);
      expect(() => splitTsvBytes(Buffer.from("a\tr\n"), "t")).toThrow(
        new KgrankInputError("t", "line 1 has 2 tab-separated fields, expected 3 (head<TAB>relation<TAB>tail)"),
      );
      expect(tsvSpy).toHaveBeenCalledTimes(2);
      // A string with a lone surrogate cannot round-trip through UTF-8: it stays on the TypeScript splitter.
      expect(splitTsvTriples("a\ud800\tr\tb")).toEqual([["a\ud800", "r", "b"]]);
      expect(tsvSpy).toHaveBeenCalledTimes(2);
    } finally {
      npySpy.mockRestore();
      tsvSpy.mockRestore();
    }
  });
});

describe.skipIf(addon !== null)("fallback backend", () => {
  it("parses with the TypeScript twins", () => {
    expect(splitTsvBytes(Buffer.from("\ufeffa\tr\tb\r\n"), "t")).toEqual([["a", "r", "b"]]);
    expect(() => splitTsvBytes(Buffer.from("a\t\tb"), "t")).toThrow(/^t: line 1 has an empty field/);
    expect(() => parseNpyHeader(new Uint8Array(3), "arg")).toThrow(/^arg: not a valid \.npy file: only 3 bytes/);
  });
});

describe("adversarial .npy headers", () => {
  it("a 1 MiB header of \"'shape':(\" repeated is rejected by both parsers at a cost linear in its length", () => {
    const header = (unit: string, bytes: number) => {
      let dict = "{";
      while (dict.length < bytes - 16) dict += unit;
      return npy(latin1(dict), 2);
    };
    for (const unit of ["'shape':(", "'descr':'", "'fortran_order' : ", "(", "'", "#", "\\\n"]) {
      const b = header(unit, 1 << 20);
      const want = tsNpy(b);
      if (addon) expect(nativeNpy(b)).toEqual(want);
      expect("error" in want && want.error, unit).toMatch(
        /^not a valid \.npy file: the header is not a valid Python dict literal: /,
      );
      // the message quotes the header near the problem, cut short
      expect("error" in want && want.error.length, unit).toBeLessThan(300);
      // The cost, as a CPU-time ratio (test/helpers/cost.ts), not a time limit: 8 times the header costs about 8 times
      // as much (measured 5-10); the quadratic scan this replaced costs 64 times as much.
      const small = header(unit, 1 << 17);
      const parsers: [string, (x: Uint8Array) => unknown][] = [
        ["ts", tsNpy],
        ...(addon ? [["native", nativeNpy] as [string, (x: Uint8Array) => unknown]] : []),
      ];
      for (const [name, parse] of parsers) {
        expect(
          costRatio(
            () => parse(small),
            () => parse(b),
            3,
            name === "native" ? 4 : 1,
          ),
          `${name}: ${unit}`,
        ).toBeLessThan(24);
      }
    }
    // Parentheses and quotes inside comments and strings are text, not structure.
    const h = npy(latin1("{'descr': '<f4', 'shape': (2,), 'fortran_order': False, } # '(((' )"), 1);
    expect(tsNpy(h)).toMatchObject({ ok: { shape: [2] } });
    if (addon) expect(nativeNpy(h)).toEqual(tsNpy(h));
  });
});
