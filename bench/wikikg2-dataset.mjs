// Writes a WikiKG2-shaped dataset folder as TSV: 2,500,604 entities ("Q…" labels, as OGB's nodeidx2entityid),
// 535 relations ("P…"), 17,137,181 train, 429,456 valid and 598,543 test triples (ogbl-wikikg2's split sizes).
// Seeded, so every run writes the same bytes. Entity popularity is Zipf-like (an entity's draw is
// floor(E * u^3), so a few entities head very large filter groups, as real KGs have);
// every entity and relation occurs in train. About 360 MB; well under a minute.
//   node bench/wikikg2-dataset.mjs [DIR] [--seed N] [--scale F]   (DIR default: $TMPDIR/kgrank-wikikg2)
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const args = process.argv.slice(2);
const flag = (name, dflt) => {
  const i = args.indexOf(name);
  if (i < 0) return dflt;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const seed = Number(flag("--seed", "1"));
const scale = Number(flag("--scale", "1"));
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

mkdirSync(dir, { recursive: true });
const ROWS = 1 << 16;
const buf = Buffer.allocUnsafe(ROWS * 64);
let written = 0;
for (const [split, n] of Object.entries(SIZES)) {
  const fd = openSync(join(dir, `${split}.tsv`), "w");
  let p = 0;
  const put = (table, i) => {
    for (let j = table.off[i], end = table.off[i + 1]; j < end; j++) buf[p++] = table.bytes[j];
  };
  for (let i = 0; i < n; i++) {
    // In train the first E rows give every entity a head and the first R rows every relation.
    const h = split === "train" && i < E ? i : popular(E, 3);
    const r = split === "train" && i < R ? i : popular(R, 2);
    const t = popular(E, 3);
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
}
console.log(
  `${dir}: ${E} entities, ${R} relations, train ${SIZES.train}, valid ${SIZES.valid}, test ${SIZES.test} triples; ` +
    `${(written / 1e6).toFixed(0)} MB`,
);
