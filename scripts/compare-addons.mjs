// Checks that two builds of the addon (e.g. node-gyp and cmake-js) load, report the same SIMD levels, and count
// identically on random data at every level. Usage: node scripts/compare-addons.mjs A.node B.node
import { createRequire } from "node:module";
import { resolve } from "node:path";

const require = createRequire(import.meta.url);
const [fileA, fileB] = process.argv.slice(2).map((f) => resolve(f));
const a = require(fileA);
const b = require(fileB);
const levelsA = JSON.stringify(a.info().simdLevels);
const levelsB = JSON.stringify(b.info().simdLevels);
if (levelsA !== levelsB) throw new Error(`SIMD levels differ: ${levelsA} vs ${levelsB}`);

let x = 7;
const next = () => (x = (x * 1103515245 + 12345) >>> 0) / 2 ** 32;
const rows = 64,
  cols = 50_001;
for (const Ctor of [Float32Array, Float64Array]) {
  const scores = new Ctor(rows * cols).map(() => (next() < 0.01 ? NaN : Math.floor(next() * 32) / 4));
  const thresholds = new Ctor(rows).map((_, r) => scores[r * cols + r]);
  for (const { level, name } of a.info().simdLevels) {
    const outs = [a, b].map((addon) => {
      const o = [new Float64Array(rows), new Float64Array(rows), new Float64Array(rows)];
      const [greater, equal, nan] = o;
      addon.countScores({ scores, numColumns: cols, thresholds, greater, equal, nan, simd: level, threads: 2 });
      return JSON.stringify(o.map((v) => Array.from(v)));
    });
    if (outs[0] !== outs[1]) throw new Error(`${Ctor.name} ${name}: the two addons disagree`);
  }
}
console.log(`addons agree (${levelsA})`);
