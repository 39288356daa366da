/**
 * The .npy header as a Python literal (src/io/npy.ts parseNpyHeader reads its fields from what this parses).
 * NumPy reads the header with ast.literal_eval: a dict whose keys are exactly 'descr', 'fortran_order' and 'shape'.
 * This is a small parser of that literal over code points (latin-1 bytes for versions 1.0 / 2.0, UTF-8 for 3.0):
 * strings (quotes, triple quotes, u/r prefixes, escapes, adjacent strings joined), True / False / None, decimal
 * integers (with a sign, underscores, and the Python 2 'L' suffix in versions 1.0 / 2.0), tuples and lists; Python's
 * whitespace, comments and line continuations between tokens. Duplicate keys: the last wins. Linear in the header's
 * length, whatever its nesting, comments and continuations (test/parse.test.ts measures it).
 */

/** A parsed literal; `start`/`end` are its code point span in the header (for messages). */
export type PyValue =
  | { kind: "str"; text: number[]; start: number; end: number }
  | { kind: "bool"; value: boolean; start: number; end: number }
  | { kind: "none"; start: number; end: number }
  | { kind: "int"; negative: boolean; digits: number[]; start: number; end: number }
  | { kind: "tuple" | "list"; items: PyValue[]; start: number; end: number };

/** Deepest nesting of tuples and lists accepted (NumPy headers have one level). */
const MAX_DEPTH = 32;
/** Code points of the header echoed in a message. */
const ECHO = 60;

export class PySyntaxError {
  constructor(
    readonly what: string,
    readonly at: number,
  ) {}
}

/** Up to ECHO code points of cps[start, end) for a message: controls as '?', surrogates as U+FFFD, '...' if cut. */
export function echoCodePoints(cps: ArrayLike<number>, start: number, end: number): string {
  let s = "";
  const stop = Math.min(end, start + ECHO);
  for (let i = start; i < stop; i++) {
    const c = cps[i]!;
    s += c < 0x20 || (c >= 0x7f && c <= 0x9f) ? "?" : c >= 0xd800 && c <= 0xdfff ? "\ufffd" : String.fromCodePoint(c);
  }
  return end > stop ? s + "..." : s;
}

const isPyWs = (c: number) => c === 0x20 || c === 0x09 || c === 0x0c || c === 0x0a || c === 0x0d;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isIdent = (c: number) =>
  (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || isDigit(c) || c === 0x5f || c >= 0x80;
const hexValue = (c: number) =>
  isDigit(c) ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;

export class PyLiteralParser {
  i = 0;
  constructor(
    readonly t: ArrayLike<number>,
    readonly longSuffix: boolean,
  ) {}

  /** Skips whitespace, comments and backslash-newline continuations. */
  ws(): void {
    const t = this.t;
    for (;;) {
      const c = t[this.i];
      if (c === undefined) return;
      if (isPyWs(c)) this.i++;
      else if (c === 0x23) {
        while (this.i < t.length && t[this.i] !== 0x0a && t[this.i] !== 0x0d) this.i++;
      } else if (c === 0x5c && (t[this.i + 1] === 0x0a || t[this.i + 1] === 0x0d)) {
        this.i += t[this.i + 1] === 0x0d && t[this.i + 2] === 0x0a ? 3 : 2;
      } else return;
    }
  }

  fail(what: string, at = this.i): never {
    throw new PySyntaxError(what, at);
  }

  /** The word [A-Za-z0-9_]* starting here (an identifier or a string prefix). */
  word(): string {
    let s = "";
    for (let k = this.i; k < this.t.length && isIdent(this.t[k]!) && this.t[k]! < 0x80; k++)
      s += String.fromCharCode(this.t[k]!);
    return s;
  }

  value(depth: number): PyValue {
    this.ws();
    const t = this.t;
    const start = this.i;
    const c = t[this.i];
    if (c === undefined) this.fail("the header ends where a value should be");
    if (c === 0x27 || c === 0x22) return this.strings(start);
    if (c === 0x28 || c === 0x5b) return this.sequence(depth, start);
    if (c === 0x2d || c === 0x2b || isDigit(c)) return this.integer(start);
    if (isIdent(c) && c < 0x80) {
      const w = this.word();
      const q = t[this.i + w.length];
      if ((w === "u" || w === "U" || w === "r" || w === "R") && (q === 0x27 || q === 0x22)) return this.strings(start);
      if (q === undefined || !isIdent(q)) {
        if (w === "True" || w === "False") {
          this.i += w.length;
          return { kind: "bool", value: w === "True", start, end: this.i };
        }
        if (w === "None") {
          this.i += w.length;
          return { kind: "none", start, end: this.i };
        }
      }
      this.fail(`'${echoCodePoints(t, start, start + w.length)}' is not a literal NumPy writes`);
    }
    this.fail(`unexpected '${echoCodePoints(t, start, start + 1)}'`);
  }

  /** One or more adjacent string literals, joined. */
  strings(start: number): PyValue {
    const text: number[] = [];
    for (;;) {
      this.string(text);
      const save = this.i;
      this.ws();
      const c = this.t[this.i];
      if (c === 0x27 || c === 0x22) continue;
      if (c !== undefined && isIdent(c)) {
        const w = this.word();
        const q = this.t[this.i + w.length];
        if ((w === "u" || w === "U" || w === "r" || w === "R") && (q === 0x27 || q === 0x22)) continue;
      }
      this.i = save;
      return { kind: "str", text, start, end: this.i };
    }
  }

  /** One string literal (optional u / r prefix) appended to `out`. */
  string(out: number[]): void {
    const t = this.t;
    const begin = this.i;
    let raw = false;
    if (t[this.i] !== 0x27 && t[this.i] !== 0x22) {
      raw = t[this.i] === 0x72 || t[this.i] === 0x52;
      this.i++;
    }
    const q = t[this.i]!;
    const triple = t[this.i + 1] === q && t[this.i + 2] === q;
    this.i += triple ? 3 : 1;
    for (;;) {
      const c = t[this.i];
      if (c === undefined || (!triple && (c === 0x0a || c === 0x0d))) this.fail("unterminated string", begin);
      if (c === q && (!triple || (t[this.i + 1] === q && t[this.i + 2] === q))) {
        this.i += triple ? 3 : 1;
        return;
      }
      if (c !== 0x5c) {
        out.push(c);
        this.i++;
        continue;
      }
      const e = t[this.i + 1];
      if (e === undefined) this.fail("unterminated string", begin);
      if (raw) {
        // A raw string keeps the backslash; it only stops the next character from closing the string.
        out.push(0x5c, e);
        this.i += 2;
        continue;
      }
      this.i += 2;
      switch (e) {
        case 0x0a:
          break;
        case 0x0d:
          if (t[this.i] === 0x0a) this.i++;
          break;
        case 0x5c:
        case 0x27:
        case 0x22:
          out.push(e);
          break;
        case 0x61:
          out.push(7);
          break;
        case 0x62:
          out.push(8);
          break;
        case 0x66:
          out.push(12);
          break;
        case 0x6e:
          out.push(10);
          break;
        case 0x72:
          out.push(13);
          break;
        case 0x74:
          out.push(9);
          break;
        case 0x76:
          out.push(11);
          break;
        case 0x78:
        case 0x75:
        case 0x55: {
          const n = e === 0x78 ? 2 : e === 0x75 ? 4 : 8;
          let v = 0;
          for (let k = 0; k < n; k++) {
            const h = hexValue(t[this.i + k] ?? -1);
            if (h < 0) this.fail(`truncated \\${String.fromCharCode(e)} escape`, this.i - 2);
            v = v * 16 + h;
          }
          if (v > 0x10ffff) this.fail("\\U escape past U+10FFFF", this.i - 2);
          this.i += n;
          out.push(v);
          break;
        }
        case 0x4e:
          this.fail("\\N{...} escapes are not supported", this.i - 2);
        // eslint-disable-next-line no-fallthrough
        default:
          if (e >= 0x30 && e <= 0x37) {
            let v = e - 0x30;
            for (let k = 0; k < 2 && (t[this.i] ?? 0) >= 0x30 && t[this.i]! <= 0x37; k++)
              v = v * 8 + (t[this.i++]! - 0x30);
            out.push(v);
          } else out.push(0x5c, e);
      }
    }
  }

  /** A decimal integer with an optional sign (Python: no leading zeros except 0, single underscores between digits). */
  integer(start: number): PyValue {
    const t = this.t;
    // One sign at most (ast.literal_eval takes "-1", not "--1").
    const negative = t[this.i] === 0x2d;
    if (t[this.i] === 0x2d || t[this.i] === 0x2b) {
      this.i++;
      this.ws();
    }
    if (!isDigit(t[this.i] ?? -1)) this.fail("a sign without a number");
    const digits: number[] = [];
    const first = this.i;
    for (;;) {
      const c = t[this.i];
      if (c !== undefined && isDigit(c)) digits.push(c - 0x30);
      else if (c === 0x5f && isDigit(t[this.i + 1] ?? -1) && this.i > first) {
        /* separator */
      } else break;
      this.i++;
    }
    if (digits[0] === 0 && digits.some((d) => d !== 0)) this.fail("leading zeros in a decimal integer", first);
    if (this.longSuffix && (t[this.i] === 0x4c || t[this.i] === 0x6c)) this.i++;
    const c = t[this.i];
    if (c !== undefined && (isIdent(c) || c === 0x2e))
      this.fail("a number NumPy does not write (only decimal integers)", first);
    return { kind: "int", negative, digits, start, end: this.i };
  }

  /** ( ... ) or [ ... ]: a tuple, a list, or a parenthesised value. */
  sequence(depth: number, start: number): PyValue {
    const t = this.t;
    const open = t[this.i]!;
    const close = open === 0x28 ? 0x29 : 0x5d;
    if (depth >= MAX_DEPTH) this.fail(`nested more than ${MAX_DEPTH} deep`);
    this.i++;
    const items: PyValue[] = [];
    let comma = false;
    for (;;) {
      this.ws();
      if (t[this.i] === close) {
        this.i++;
        break;
      }
      if (items.length > 0 && !comma) this.fail(`expected ',' or '${String.fromCharCode(close)}'`);
      items.push(this.value(depth + 1));
      this.ws();
      comma = t[this.i] === 0x2c;
      if (comma) this.i++;
    }
    if (open === 0x28 && items.length === 1 && !comma) return { ...items[0]!, start, end: this.i };
    return { kind: open === 0x28 ? "tuple" : "list", items, start, end: this.i };
  }

  /** The whole header: a dict, then only whitespace and comments. Entries in order (duplicates kept). */
  dict(): [PyValue, PyValue][] {
    const t = this.t;
    this.ws();
    if (t[this.i] !== 0x7b) throw new PySyntaxError("not a dict", this.i);
    this.i++;
    const entries: [PyValue, PyValue][] = [];
    let comma = true;
    for (;;) {
      this.ws();
      if (t[this.i] === 0x7d) {
        this.i++;
        break;
      }
      if (!comma) this.fail("expected ',' or '}'");
      const key = this.value(1);
      this.ws();
      if (t[this.i] !== 0x3a) this.fail("expected ':' after a key");
      this.i++;
      const value = this.value(1);
      entries.push([key, value]);
      this.ws();
      comma = t[this.i] === 0x2c;
      if (comma) this.i++;
    }
    this.ws();
    if (this.i < t.length) this.fail("text after the dict");
    return entries;
  }
}
