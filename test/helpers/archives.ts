/**
 * Archives built by hand for tests: zip files (.npz) with chosen members, methods and (possibly lying) sizes, and
 * safetensors files. Independent of src/io's readers and writers.
 */
import { crc32, deflateRawSync } from "node:zlib";

/** A zip archive built by hand: members with a method, raw (already compressed) data, and sizes that may lie. */
export interface Member {
  name: string;
  method?: number;
  data: Uint8Array;
  uncompressed?: Uint8Array;
  declaredSize?: number;
  crc?: number;
}
export function zip(members: Member[], options: { zip64?: boolean } = {}): Uint8Array {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const m of members) {
    const name = Buffer.from(m.name, "utf8");
    const usize = m.declaredSize ?? (m.uncompressed ?? m.data).length;
    const crc = m.crc ?? crc32(m.uncompressed ?? m.data);
    const z64 = options.zip64 === true;
    const extra = z64 ? Buffer.alloc(4 + 24) : Buffer.alloc(0);
    if (z64) {
      extra.writeUInt16LE(1, 0);
      extra.writeUInt16LE(24, 2);
      extra.writeBigUInt64LE(BigInt(usize), 4);
      extra.writeBigUInt64LE(BigInt(m.data.length), 12);
      extra.writeBigUInt64LE(BigInt(offset), 20);
    }
    const lh = Buffer.alloc(30);
    lh.writeUInt32LE(0x04034b50, 0);
    lh.writeUInt16LE(z64 ? 45 : 20, 4);
    lh.writeUInt16LE(0x800, 6);
    lh.writeUInt16LE(m.method ?? 0, 8);
    lh.writeUInt32LE(crc, 14);
    lh.writeUInt32LE(z64 ? 0xffffffff : m.data.length, 18);
    lh.writeUInt32LE(z64 ? 0xffffffff : Math.min(usize, 0xffffffff), 22);
    lh.writeUInt16LE(name.length, 26);
    const lextra = z64 ? Buffer.from(extra.subarray(0, 20)) : Buffer.alloc(0);
    if (z64) lextra.writeUInt16LE(16, 2);
    lh.writeUInt16LE(lextra.length, 28);
    const ch = Buffer.alloc(46);
    ch.writeUInt32LE(0x02014b50, 0);
    ch.writeUInt16LE(z64 ? 45 : 20, 4);
    ch.writeUInt16LE(z64 ? 45 : 20, 6);
    ch.writeUInt16LE(0x800, 8);
    ch.writeUInt16LE(m.method ?? 0, 10);
    ch.writeUInt32LE(crc, 16);
    ch.writeUInt32LE(z64 ? 0xffffffff : m.data.length, 20);
    ch.writeUInt32LE(z64 ? 0xffffffff : Math.min(usize, 0xffffffff), 24);
    ch.writeUInt16LE(name.length, 28);
    ch.writeUInt16LE(extra.length, 30);
    ch.writeUInt32LE(z64 ? 0xffffffff : offset, 42);
    locals.push(lh, name, Buffer.from(lextra), Buffer.from(m.data));
    central.push(ch, name, extra);
    offset += 30 + name.length + lextra.length + m.data.length;
  }
  const cd = Buffer.concat(central);
  const tail: Buffer[] = [];
  if (options.zip64) {
    const e64 = Buffer.alloc(56);
    e64.writeUInt32LE(0x06064b50, 0);
    e64.writeBigUInt64LE(44n, 4);
    e64.writeUInt16LE(45, 12);
    e64.writeUInt16LE(45, 14);
    e64.writeBigUInt64LE(BigInt(members.length), 24);
    e64.writeBigUInt64LE(BigInt(members.length), 32);
    e64.writeBigUInt64LE(BigInt(cd.length), 40);
    e64.writeBigUInt64LE(BigInt(offset), 48);
    const loc = Buffer.alloc(20);
    loc.writeUInt32LE(0x07064b50, 0);
    loc.writeBigUInt64LE(BigInt(offset + cd.length), 8);
    loc.writeUInt32LE(1, 16);
    tail.push(e64, loc);
  }
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(options.zip64 ? 0xffff : members.length, 8);
  eocd.writeUInt16LE(options.zip64 ? 0xffff : members.length, 10);
  eocd.writeUInt32LE(options.zip64 ? 0xffffffff : cd.length, 12);
  eocd.writeUInt32LE(options.zip64 ? 0xffffffff : offset, 16);
  return new Uint8Array(Buffer.concat([...locals, cd, ...tail, eocd]));
}
export const deflated = (name: string, raw: Uint8Array, extra: Partial<Member> = {}): Member => ({
  name,
  method: 8,
  data: deflateRawSync(raw),
  uncompressed: raw,
  ...extra,
});

/** A stored (method 0) zip member. */
export const stored = (name: string, raw: Uint8Array): Member => ({ name, data: raw });

/** A safetensors file: 8-byte little-endian header length, the JSON header (space-padded to 8 bytes), the data. */
export function safetensorsFile(
  tensors: Record<string, { data: Float32Array | Float64Array | Uint16Array; shape: number[]; dtype?: string }>,
): Uint8Array {
  const header: Record<string, unknown> = { __metadata__: { format: "pt" } };
  const parts: Uint8Array[] = [];
  let offset = 0;
  for (const [name, t] of Object.entries(tensors)) {
    const bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    header[name] = {
      dtype: t.dtype ?? (t.data instanceof Float64Array ? "F64" : "F32"),
      shape: t.shape,
      data_offsets: [offset, offset + bytes.length],
    };
    parts.push(bytes);
    offset += bytes.length;
  }
  let json = JSON.stringify(header);
  json += " ".repeat((8 - (json.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  return new Uint8Array(Buffer.concat([len, Buffer.from(json, "utf8"), ...parts]));
}
