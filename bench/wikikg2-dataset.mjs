// Writes a WikiKG2-shaped dataset folder as TSV: 2,500,604 entities ("Q…" labels, as OGB's nodeidx2entityid),
// 535 relations ("P…"), 17,137,181 train, 429,456 valid and 598,543 test triples (ogbl-wikikg2's split sizes).
// Seeded, so every run writes the same bytes. Entity popularity is Zipf-like (an entity's draw is
// floor(E * u^3), so a few entities head very large filter groups, as real KGs have);
// every entity and relation occurs in train. About 360 MB; well under a minute.
// --ids DIR2 also writes the same splits as id arrays, as OGB distributes ogbl-wikikg2 (after torch.load): DIR2/SPLIT.npy
// int64 (n, 3) and DIR2/entities.txt, DIR2/relations.txt (one label per id); --npz DIR3 writes DIR3/SPLIT.npz with
// int32 head, relation and tail arrays (needs `npm run build:ts`) and no label files.
//   node bench/wikikg2-dataset.mjs [DIR] [--seed N] [--scale F] [--ids DIR2] [--npz DIR3]   (DIR default: $TMPDIR/kgrank-wikikg2)
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { takeOption } from "./lib.mjs";

const args = process.argv.slice(2);
const seed = Number(takeOption(args, "--seed", "1"));
const scale = Number(takeOption(args, "--scale", "1"));
const idsDir = takeOption(args, "--ids", null);
const npzDir = takeOption(args, "--npz", null);
const dir = args[0] ?? join(tmpdir(), "kgrank-wikikg2");

const E = Math.round(2_500_604 * scale);
const R = 535;
const SIZES = {
  train: Math.round(17_137_181 * scale),
  valid: Math.round(429_456 * scale),
  test: Math.round(598_543 * scale),
};

// mulberry32: a seeded uniform in [0, 1)
let s = seed >>> 0;
function rand() {
  s = (s + 0x6d2b79f5) >>> 0;
  let t = s;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

// Labels as bytes: entity i is "Q" + (i + 1), so the popular entities have the short labels, as Wikidata's oldest
// items do (and sorted labels are not numeric order); relation r is "P" + a number.
function labels(prefix, n, mul, add) {
  const off = new Int32Array(n + 1);
  const parts = [];
  let len = 0;
  for (let i = 0; i < n; i++) {
    const b = Buffer.from(prefix + String((i * mul + add) % 99_999_989), "latin1");
    parts.push(b);
    off[i] = len;
    len += b.length;
  }
  off[n] = len;
  return { bytes: Buffer.concat(parts), off };
}
const ent = labels("Q", E, 1, 1);
const rel = labels("P", R, 7, 6);

const popular = (n, a) => Math.min(n - 1, Math.floor(n * rand() ** a));

for (const d of [dir, idsDir, npzDir]) if (d) mkdirSync(d, { recursive: true });
const ROWS = 1 << 16;
const buf = Buffer.allocUnsafe(ROWS * 64);
let written = 0;
for (const [split, n] of Object.entries(SIZES)) {
  const fd = openSync(join(dir, `${split}.tsv`), "w");
  const ids = new Int32Array(3 * n);
  let p = 0;
  const put = (table, i) => {
    for (let j = table.off[i], end = table.off[i + 1]; j < end; j++) buf[p++] = table.bytes[j];
  };
  for (let i = 0; i < n; i++) {
    // In train the first E rows give every entity a head and the first R rows every relation.
    const h = split === "train" && i < E ? i : popular(E, 3);
    const r = split === "train" && i < R ? i : popular(R, 2);
    const t = popular(E, 3);
    ids[3 * i] = h;
    ids[3 * i + 1] = r;
    ids[3 * i + 2] = t;
    put(ent, h);
    buf[p++] = 9;
    put(rel, r);
    buf[p++] = 9;
    put(ent, t);
    buf[p++] = 10;
    if (p > buf.length - 64) {
      writeSync(fd, buf, 0, p);
      written += p;
      p = 0;
    }
  }
  writeSync(fd, buf, 0, p);
  written += p;
  closeSync(fd);
  if (idsDir) writeInt64Npy(join(idsDir, `${split}.npy`), ids, n);
  if (npzDir) {
    const require = createRequire(import.meta.url);
    const { writeNpz } = require(join(import.meta.dirname, "..", "dist", "cjs", "io", "npz-write.js"));
    const col = (c) => ({ data: Int32Array.from({ length: n }, (_, i) => ids[3 * i + c]) });
    writeNpz(join(npzDir, `${split}.npz`), { head: col(0), relation: col(1), tail: col(2) });
  }
}
if (idsDir) {
  const lines = (t, n) => {
    const parts = [];
    for (let i = 0; i < n; i++) parts.push(t.bytes.subarray(t.off[i], t.off[i + 1]), Buffer.from("\n"));
    return Buffer.concat(parts);
  };
  writeFileSync(join(idsDir, "entities.txt"), lines(ent, E));
  writeFileSync(join(idsDir, "relations.txt"), lines(rel, R));
}

/** ids (n x 3) as a little-endian int64 .npy, version 1.0. */
function writeInt64Npy(file, ids, n) {
  let header = `{'descr': '<i8', 'fortran_order': False, 'shape': (${n}, 3), }`;
  header += " ".repeat(63 - ((10 + header.length) % 64)) + "\n";
  const head = Buffer.alloc(10 + header.length);
  head.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  head.writeUInt16LE(header.length, 8);
  head.write(header, 10, "latin1");
  const body = new BigInt64Array(ids.length);
  for (let k = 0; k < ids.length; k++) body[k] = BigInt(ids[k]);
  writeFileSync(file, Buffer.concat([head, Buffer.from(body.buffer)]));
}
console.log(
  `${dir}: ${E} entities, ${R} relations, train ${SIZES.train}, valid ${SIZES.valid}, test ${SIZES.test} triples; ` +
    `${(written / 1e6).toFixed(0)} MB`,
);
