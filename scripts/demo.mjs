// The main job until the `kgrank evaluate` command lands: show the backend, then rank the bundled Nations test
// split with a training-frequency baseline, using the native counting kernel, and print MR / MRR / Hits@k for the
// three rank types (unfiltered, tail side). Run: npm run demo
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { backendInfo, countScoresSync } = createRequire(import.meta.url)(join(root, "dist", "cjs", "index.js"));

const info = backendInfo();
console.log(`kgrank-native ${info.version}: backend ${info.backend}, SIMD ${info.simd}, threads ${info.threads}`);
if (info.fallbackReason) console.log(`  (fallback: ${info.fallbackReason.split("\n")[0]})`);

const read = (split) =>
  readFileSync(join(root, "data", "nations", `${split}.tsv`), "utf8").split("\n").filter(Boolean).map((l) => l.split("\t"));
const train = read("train");
const test = read("test");
const entities = [...new Set(train.flatMap(([h, , t]) => [h, t]))].sort();
const id = new Map(entities.map((e, i) => [e, i]));
const n = entities.length;

// Baseline scorer: how often entity e is the tail of relation r in training (many ties: rank types differ).
const tailFreq = new Map();
for (const [, r, t] of train) {
  if (!tailFreq.has(r)) tailFreq.set(r, new Float32Array(n));
  tailFreq.get(r)[id.get(t)] += 1;
}
const rows = test.filter(([h, r, t]) => id.has(h) && id.has(t) && tailFreq.has(r));
const scores = new Float32Array(rows.length * n);
const thresholds = new Float32Array(rows.length);
rows.forEach(([, r, t], i) => {
  scores.set(tailFreq.get(r), i * n);
  thresholds[i] = tailFreq.get(r)[id.get(t)];
});

const t0 = performance.now();
const { greater, equal } = countScoresSync({ scores, numColumns: n, thresholds });
const ms = performance.now() - t0;

const rankTypes = {
  optimistic: (i) => 1 + greater[i],
  pessimistic: (i) => greater[i] + equal[i],
  realistic: (i) => 1 + greater[i] + (equal[i] - 1) / 2,
};
console.log(`\nNations test, tail prediction, ${rows.length} triples x ${n} entities, unfiltered, frequency baseline`);
console.log(`counted in ${ms.toFixed(2)} ms\n`);
console.log("rank type     MR      MRR     Hits@1  Hits@3  Hits@10");
for (const [name, rank] of Object.entries(rankTypes)) {
  let sum = 0, rr = 0, h1 = 0, h3 = 0, h10 = 0;
  for (let i = 0; i < rows.length; i++) {
    const x = rank(i);
    sum += x; rr += 1 / x; h1 += x <= 1; h3 += x <= 3; h10 += x <= 10;
  }
  const m = rows.length;
  const f = (v) => v.toFixed(4).padEnd(8);
  console.log(`${name.padEnd(13)} ${f(sum / m)}${f(rr / m)}${f(h1 / m)}${f(h3 / m)}${f(h10 / m)}`);
}
console.log(`\nFor comparison, uniform random ranking over ${n} candidates: MR ${((n + 1) / 2).toFixed(4)}`);
