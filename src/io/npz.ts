/**
 * NumPy .npz archives (numpy.savez / savez_compressed): a zip of .npy members, stored or deflated. Read through the
 * zip's central directory (zip64 too, as numpy.savez writes it) with positioned reads: only the `.npy` members asked
 * for are read and inflated, each bounded by its real data - a declared size that no deflate stream of the member's
 * compressed length can produce is refused before anything is allocated, the inflate stops at the declared size, and
 * the inflated bytes must match the member's CRC-32 (as NumPy's zipfile checks). Other members (a README.txt, say)
 * are never touched.
 */
import { closeSync, fstatSync, readSync } from "node:fs";
import { crc32, inflateRawSync } from "node:zlib";

import { KgrankInputError } from "../checks/errors";
import { quoted, quotedList, shortName } from "../text/suggest";
import { describe, options as checkOptions } from "../checks/validate";
import { allocate } from "../checks/alloc";
import { fileError, openRegularFile } from "./files";
import { type NpyData, parseNpy } from "./npy";

export interface NpzOptions {
  /** Names of the arrays to read (member names without ".npy"); default every `.npy` member. */
  arrays?: readonly string[];
}

/** Bytes of the archive at [position, position + length): a view of memory, or a positioned read of a file. */
interface Source {
  size: number;
  read(position: number, length: number): Uint8Array;
}

interface Entry {
  name: string;
  method: number;
  flags: number;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

/** Deflate's largest expansion: 258 bytes per length/distance pair coded in 2 bits, i.e. 1032 bytes per input byte. */
const MAX_DEFLATE_RATIO = 1032;
const METHOD_NAMES: Record<number, string> = {
  1: "shrink",
  6: "implode",
  9: "deflate64",
  12: "bzip2",
  14: "LZMA",
  93: "Zstandard",
  95: "xz",
  98: "PPMd",
  99: "AES encryption",
};

/** Reads every array of an .npz file (or those in `options.arrays`), keyed by name (the member name without ".npy"). */
export function readNpz(path: string, argument = "file", options: NpzOptions = {}): Record<string, NpyData> {
  if (typeof path !== "string" || path === "") throw new KgrankInputError(argument, "must be a path to an .npz file");
  checkOptions("options", options, ["arrays"]);
  const fd = openRegularFile(path, argument);
  try {
    let size: number;
    try {
      size = fstatSync(fd).size;
    } catch (e) {
      throw fileError(argument, path, e);
    }
    const source: Source = {
      size,
      read(position, length) {
        const buf = allocate(argument, path, length, () => new Uint8Array(new ArrayBuffer(length)));
        let done = 0;
        while (done < length) {
          let n: number;
          try {
            n = readSync(fd, buf, done, Math.min(length - done, 1 << 30), position + done);
          } catch (e) {
            throw fileError(argument, path, e);
          }
          if (n === 0) throw new KgrankInputError(argument, `not a valid .npz file: ${path} ended early (truncated)`);
          done += n;
        }
        return buf;
      },
    };
    return readArchive(source, argument, options);
  } finally {
    closeSync(fd);
  }
}

/** Parses an in-memory .npz archive (or the arrays in `options.arrays`). */
export function parseNpz(bytes: Uint8Array, argument = "file", options: NpzOptions = {}): Record<string, NpyData> {
  checkOptions("options", options, ["arrays"]);
  return readArchive({ size: bytes.length, read: (p, n) => bytes.subarray(p, p + n) }, argument, options);
}

function readArchive(src: Source, argument: string, options: NpzOptions): Record<string, NpyData> {
  const bad = (msg: string) => new KgrankInputError(argument, `not a valid .npz file: ${msg}`);
  if (src.size < 4) throw bad("it is not a zip archive (save it with numpy.savez)");
  const magic = src.read(0, 4);
  if (magic[0] !== 0x50 || magic[1] !== 0x4b) throw bad("it is not a zip archive (save it with numpy.savez)");
  const entries = centralDirectory(src, bad);
  // The last member of a name wins, as in Python's zipfile.
  const byKey = new Map<string, Entry>();
  for (const e of entries) if (e.name.endsWith(".npy")) byKey.set(e.name.slice(0, -4), e);
  const wanted = options.arrays === undefined ? [...byKey.keys()] : [...options.arrays];
  if (!Array.isArray(options.arrays) && options.arrays !== undefined)
    throw new KgrankInputError("arrays", "must be an array of array names");
  for (const k of wanted) {
    if (typeof k !== "string" || !byKey.has(k)) {
      const asked = typeof k === "string" ? quoted(k) : describe(k);
      throw new KgrankInputError(
        argument,
        `the archive has no array ${asked} (it holds ${byKey.size ? quotedList([...byKey.keys()]) : "no .npy members"})`,
      );
    }
  }
  if (byKey.size === 0) throw bad("the archive holds no .npy members");
  // Members a zip writer made never share bytes. Entries that overlap (a zip-bomb trick: many entries pointing at
  // one small deflate stream) would multiply the work by their number, so they are refused before anything is read,
  // as Python's zipfile does. A member spans at least its 30-byte local header and its compressed data.
  const spans = [...new Set(wanted)].map((k) => byKey.get(k)!).sort((x, y) => x.localOffset - y.localOffset);
  for (let i = 1; i < spans.length; i++) {
    const [prev, next] = [spans[i - 1]!, spans[i]!];
    if (next.localOffset < prev.localOffset + 30 + prev.compressedSize) {
      throw bad(
        `members ${quoted(prev.name)} and ${quoted(next.name)} overlap (entries sharing data: a damaged archive or a zip bomb)`,
      );
    }
  }
  // A null-prototype record, so a member named "__proto__" cannot replace the record's prototype.
  const out: Record<string, NpyData> = Object.create(null);
  for (const key of wanted) {
    const entry = byKey.get(key)!;
    out[key] = parseNpy(memberBytes(src, entry, argument, key), `${argument}[${shortName(key)}]`);
  }
  return out;
}

/** The entries of the central directory (zip64 end records and extra fields honoured). */
function centralDirectory(src: Source, bad: (msg: string) => KgrankInputError): Entry[] {
  // End of central directory: 22 bytes plus a comment of up to 65,535 bytes, at the end of the file.
  const tailLen = Math.min(src.size, 22 + 0xffff);
  const tail = src.read(src.size - tailLen, tailLen);
  const tv = new DataView(tail.buffer, tail.byteOffset, tail.byteLength);
  let eocd = -1;
  for (let i = tailLen - 22; i >= 0; i--) {
    if (tv.getUint32(i, true) === 0x06054b50 && i + 22 + tv.getUint16(i + 20, true) <= tailLen) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw bad("the zip archive is damaged (no end of central directory record: truncated?)");
  const eocdPos = src.size - tailLen + eocd;
  if (tv.getUint16(eocd + 4, true) !== 0 || tv.getUint16(eocd + 6, true) !== 0)
    throw bad("multi-part (spanned) zip archives are not supported");
  let count = tv.getUint16(eocd + 10, true);
  let cdSize = tv.getUint32(eocd + 12, true);
  let cdOffset = tv.getUint32(eocd + 16, true);
  if (eocd >= 20 && tv.getUint32(eocd - 20, true) === 0x07064b50) {
    const z64Pos = Number(tv.getBigUint64(eocd - 12, true));
    if (z64Pos + 56 > eocdPos - 20) throw bad("the zip archive is damaged (zip64 end record out of place)");
    const z = src.read(z64Pos, 56);
    const zv = new DataView(z.buffer, z.byteOffset, 56);
    if (zv.getUint32(0, true) !== 0x06064b50)
      throw bad("the zip archive is damaged (no zip64 end of central directory record)");
    const n = zv.getBigUint64(32, true);
    const size = zv.getBigUint64(40, true);
    const offset = zv.getBigUint64(48, true);
    if (n > BigInt(src.size) || size > BigInt(src.size) || offset > BigInt(src.size))
      throw bad("the zip archive is damaged (zip64 sizes past the file)");
    count = Number(n);
    cdSize = Number(size);
    cdOffset = Number(offset);
  }
  const cdEnd = eocdPos - (eocd >= 20 && tv.getUint32(eocd - 20, true) === 0x07064b50 ? 20 + 56 : 0);
  if (cdOffset + cdSize > cdEnd || count * 46 > cdSize) {
    throw bad(
      `the zip archive is damaged (its central directory of ${count} entries, ${cdSize} bytes at ${cdOffset}, does not fit the file)`,
    );
  }
  const cd = src.read(cdOffset, cdSize);
  const cv = new DataView(cd.buffer, cd.byteOffset, cd.byteLength);
  const entries: Entry[] = [];
  let p = 0;
  for (let k = 0; k < count; k++) {
    if (p + 46 > cdSize || cv.getUint32(p, true) !== 0x02014b50)
      throw bad(`the zip archive is damaged (central directory entry ${k + 1} of ${count})`);
    const flags = cv.getUint16(p + 8, true);
    const nameLen = cv.getUint16(p + 28, true);
    const extraLen = cv.getUint16(p + 30, true);
    const commentLen = cv.getUint16(p + 32, true);
    if (p + 46 + nameLen + extraLen + commentLen > cdSize)
      throw bad(`the zip archive is damaged (central directory entry ${k + 1} of ${count})`);
    const nameBytes = cd.subarray(p + 46, p + 46 + nameLen);
    const name =
      (flags & 0x800) !== 0 ? new TextDecoder().decode(nameBytes) : Buffer.from(nameBytes).toString("latin1");
    let size = cv.getUint32(p + 24, true);
    let compressedSize = cv.getUint32(p + 20, true);
    let localOffset = cv.getUint32(p + 42, true);
    // Zip64 extended information (id 1): the 64-bit values of the fields set to 0xFFFFFFFF, in this order.
    for (let x = p + 46 + nameLen; x + 4 <= p + 46 + nameLen + extraLen;) {
      const id = cv.getUint16(x, true);
      const len = cv.getUint16(x + 2, true);
      if (x + 4 + len > p + 46 + nameLen + extraLen) break;
      if (id === 1) {
        let q = x + 4;
        const next = () => {
          if (q + 8 > x + 4 + len) throw bad(`the zip archive is damaged (zip64 field of ${quoted(name)})`);
          const v = cv.getBigUint64(q, true);
          q += 8;
          if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw bad(`member ${quoted(name)} declares a size past 2^53`);
          return Number(v);
        };
        if (size === 0xffffffff) size = next();
        if (compressedSize === 0xffffffff) compressedSize = next();
        if (localOffset === 0xffffffff) localOffset = next();
      }
      x += 4 + len;
    }
    entries.push({
      name,
      method: cv.getUint16(p + 10, true),
      flags,
      crc: cv.getUint32(p + 16, true),
      compressedSize,
      size,
      localOffset,
    });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

/** The uncompressed bytes of one member, checked against its declared size and CRC-32. */
function memberBytes(src: Source, e: Entry, argument: string, key: string): Uint8Array {
  const arg = `${argument}[${shortName(key)}]`;
  const bad = (msg: string) => new KgrankInputError(arg, `not a valid .npz file: member ${quoted(e.name)} ${msg}`);
  if ((e.flags & 1) !== 0) throw bad("is encrypted; save the arrays with np.savez (no password)");
  if (e.method !== 0 && e.method !== 8) {
    const what = METHOD_NAMES[e.method] ?? `method ${e.method}`;
    throw bad(
      `is compressed with ${what}, which kgrank does not read (NumPy writes stored or deflated members); re-save it with np.savez or np.savez_compressed`,
    );
  }
  if (e.method === 0 && e.compressedSize !== e.size)
    throw bad(`is stored (not compressed) but its sizes differ (${e.compressedSize} and ${e.size})`);
  if (e.method === 8 && e.size > e.compressedSize * MAX_DEFLATE_RATIO + 64) {
    throw bad(
      `declares ${e.size} bytes, but its ${e.compressedSize} compressed bytes can inflate to at most ${e.compressedSize * MAX_DEFLATE_RATIO + 64} ` +
        `(deflate expands at most 1032-fold): a damaged archive or a zip bomb`,
    );
  }
  if (e.localOffset + 30 > src.size) throw bad("starts past the end of the file (truncated archive)");
  const lh = src.read(e.localOffset, 30);
  const lv = new DataView(lh.buffer, lh.byteOffset, 30);
  if (lv.getUint32(0, true) !== 0x04034b50)
    throw bad("has no local header where the central directory says (damaged archive)");
  const dataStart = e.localOffset + 30 + lv.getUint16(26, true) + lv.getUint16(28, true);
  if (dataStart + e.compressedSize > src.size)
    throw bad(`needs ${e.compressedSize} bytes past the end of the file (truncated archive)`);
  const raw = src.read(dataStart, e.compressedSize);
  let data: Uint8Array;
  if (e.method === 0) data = raw;
  else {
    let inflated: Buffer;
    try {
      // The declared size is a hard cap: a stream that inflates past it stops there and is refused. The output grows
      // with the data actually inflated; nothing of the declared size is reserved up front.
      inflated = inflateRawSync(raw, { maxOutputLength: Math.max(1, e.size) });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ERR_BUFFER_TOO_LARGE")
        throw bad(`inflates to more than its declared ${e.size} bytes (damaged archive)`);
      if (err instanceof RangeError)
        return allocate(arg, `member ${quoted(e.name)}`, e.size, () => {
          throw err;
        });
      throw bad(`does not inflate (${(err as Error).message}): the archive is damaged`);
    }
    if (inflated.length !== e.size)
      throw bad(`inflates to ${inflated.length} bytes, not the ${e.size} it declares (damaged archive)`);
    data = inflated;
  }
  const crc = crc32(data) >>> 0;
  if (crc !== e.crc >>> 0) {
    throw bad(
      `fails its CRC-32 check (recorded 0x${(e.crc >>> 0).toString(16).padStart(8, "0")}, computed 0x${crc.toString(16).padStart(8, "0")}): ` +
        `the archive is damaged; save it again with np.savez`,
    );
  }
  // parseNpy views the data when aligned; copy to an aligned buffer only when the view is not.
  return data.byteOffset % 8 === 0 ? data : allocate(arg, `member ${quoted(e.name)}`, data.length, () => data.slice());
}
