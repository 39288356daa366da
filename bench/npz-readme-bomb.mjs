// Peak RSS of reading a small .npz (about 510 KB) that holds a 12-byte a.npy and a README.txt member of 512 MiB of
// deflated zeros. Usage: node bench/npz-readme-bomb.mjs [path/to/dist/cjs/index.js]
// (default: this checkout's dist). Builds the archive by streaming, then reads it in a child process and prints the
// child's VmHWM (its own peak RSS; getrusage's maxRSS would include the parent's pages across fork + exec).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { crc32, createDeflateRaw } from "node:zlib";

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.resolve(process.argv[2] ?? path.join(here, "..", "dist", "cjs", "index.js"));
const dir = mkdtempSync(path.join(tmpdir(), "kgrank-npz-bomb-"));
try {
  const chunk = Buffer.alloc(1 << 20);
  let crc = 0;
  const parts = [];
  const d = createDeflateRaw({ level: 9 });
  d.on("data", (b) => parts.push(b));
  const done = new Promise((resolve) => d.on("end", resolve));
  for (let k = 0; k < 512; k++) {
    crc = crc32(chunk, crc);
    if (!d.write(chunk)) await new Promise((r) => d.once("drain", r));
  }
  d.end();
  await done;
  const stream = Buffer.concat(parts);
  // a.npy: float32 [1, 2, 3], version 1.0, stored
  const header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  const npy = Buffer.alloc(64 + 12);
  npy.write("\x93NUMPY\x01\x00", 0, "latin1");
  npy.writeUInt16LE(54, 8);
  npy.write(header.padEnd(53, " ") + "\n", 10, "latin1");
  Buffer.from(new Float32Array([1, 2, 3]).buffer).copy(npy, 64);
  const members = [
    { name: "a.npy", method: 0, data: npy, size: npy.length, crc: crc32(npy) },
    { name: "README.txt", method: 8, data: stream, size: 512 << 20, crc },
  ];
  const locals = [];
  const central = [];
  let offset = 0;
  for (const m of members) {
    const name = Buffer.from(m.name);
    const lh = Buffer.alloc(30);
    lh.writeUInt32LE(0x04034b50, 0);
    lh.writeUInt16LE(20, 4);
    lh.writeUInt16LE(m.method, 8);
    lh.writeUInt32LE(m.crc >>> 0, 14);
    lh.writeUInt32LE(m.data.length, 18);
    lh.writeUInt32LE(m.size, 22);
    lh.writeUInt16LE(name.length, 26);
    const ch = Buffer.alloc(46);
    ch.writeUInt32LE(0x02014b50, 0);
    ch.writeUInt16LE(20, 4);
    ch.writeUInt16LE(20, 6);
    ch.writeUInt16LE(m.method, 10);
    ch.writeUInt32LE(m.crc >>> 0, 16);
    ch.writeUInt32LE(m.data.length, 20);
    ch.writeUInt32LE(m.size, 24);
    ch.writeUInt16LE(name.length, 28);
    ch.writeUInt32LE(offset, 42);
    locals.push(lh, name, m.data);
    central.push(ch, name);
    offset += 30 + name.length + m.data.length;
  }
  const cd = Buffer.concat(central);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(2, 8);
  eocd.writeUInt16LE(2, 10);
  eocd.writeUInt32LE(cd.length, 12);
  eocd.writeUInt32LE(offset, 16);
  const file = path.join(dir, "bomb.npz");
  const archive = Buffer.concat([...locals, cd, eocd]);
  writeFileSync(file, archive);
  const child = `
const kg = require(${JSON.stringify(dist)});
const t0 = process.hrtime.bigint();
let result;
try { result = Object.keys(kg.readNpz(${JSON.stringify(file)})).join(","); } catch (e) { result = e.constructor.name + ": " + e.message; }
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
const hwm = Number(/VmHWM:\\s*(\\d+)/.exec(require("fs").readFileSync("/proc/self/status", "utf8"))[1]) / 1024;
console.log(JSON.stringify({ arrays: result, peakRssMiB: Math.round(hwm * 10) / 10, ms: Math.round(ms) }));`;
  const out = execFileSync(process.execPath, ["-e", child], { encoding: "utf8" }).trim();
  console.log(`archive ${archive.length} bytes; ${dist}\n${out}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
