/**
 * Writing `.npz` files as NumPy's `np.savez` does: a zip archive (stored, no compression) of one `.npy` member per
 * array, each with its CRC-32, and ZIP64 fields when an archive outgrows 4 GiB is not needed here (a member over
 * 4 GiB is refused). `np.load` reads the result.
 */
import { crc32 } from "node:zlib";

import { KgrankInputError } from "../checks/errors";
import { quoted } from "../text/suggest";
import { writeFileAtomic } from "./atomic";
import { encodeNpy, type NpyArray } from "./npy";

export function encodeNpz(
  arrays: Record<string, { data: NpyArray | BigInt64Array | BigUint64Array; shape?: number[] }>,
): Uint8Array {
  const parts: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  const names = Object.keys(arrays);
  for (const name of names) {
    const body = encodeNpy(arrays[name]!.data, arrays[name]!.shape);
    if (body.length >= 2 ** 32 - 1 || offset >= 2 ** 32 - 1)
      throw new KgrankInputError("arrays", `${quoted(name)} does not fit a zip member without ZIP64 (4 GiB)`);
    const file = Buffer.from(`${name}.npy`, "utf8");
    const crc = crc32(body);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(0, 8); // stored
    local.writeUInt32LE(0x00210000, 10); // 1980-01-01 00:00
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(body.length, 22);
    local.writeUInt16LE(file.length, 26);
    local.writeUInt16LE(0, 28);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(20, 4);
    entry.writeUInt16LE(20, 6);
    entry.writeUInt16LE(0x0800, 8);
    entry.writeUInt16LE(0, 10);
    entry.writeUInt32LE(0x00210000, 12);
    entry.writeUInt32LE(crc, 16);
    entry.writeUInt32LE(body.length, 20);
    entry.writeUInt32LE(body.length, 24);
    entry.writeUInt16LE(file.length, 28);
    entry.writeUInt32LE(offset, 42);
    central.push(entry, file);
    parts.push(local, file, body);
    offset += local.length + file.length + body.length;
  }
  const centralSize = central.reduce((a, b) => a + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(names.length, 8);
  end.writeUInt16LE(names.length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  return new Uint8Array(Buffer.concat([...parts, ...central, end]));
}

/** encodeNpz to a file, atomically. */
export function writeNpz(
  path: string,
  arrays: Record<string, { data: NpyArray | BigInt64Array | BigUint64Array; shape?: number[] }>,
  argument = "output",
): void {
  writeFileAtomic(path, encodeNpz(arrays), argument);
}
