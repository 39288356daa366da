// The main job until the `kgrank evaluate` command lands: evaluate the bundled Nations test split with a
// frequency baseline (no training needed), filtered by train + valid + test, both sides, every metric and rank
// type, and print the table. Run: npm run demo
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { backendInfo, RankEvaluator } = createRequire(import.meta.url)(join(root, "dist", "cjs", "index.js"));

const t0 = performance.now();
const info = backendInfo();
console.log(`kgrank-native ${info.version}: backend ${info.backend}, SIMD ${info.simd}, threads ${info.threads}`);
if (info.fallbackReason) console.log(`  (fallback: ${info.fallbackReason.split("\n")[0]})`);

// Ids as PyKEEN assigns them: sorted labels of the training triples.
const read = (split) =>
  readFileSync(join(root, "data", "nations", `${split}.tsv`), "utf8").split("\n").filter(Boolean).map((l) => l.split("\t"));
const raw = { train: read("train"), valid: read("valid"), test: read("test") };
const entities = [...new Set(raw.train.flatMap(([h, , t]) => [h, t]))].sort();
const relations = [...new Set(raw.train.map(([, r]) => r))].sort();
const eid = new Map(entities.map((e, i) => [e, i]));
const rid = new Map(relations.map((r, i) => [r, i]));
const toIds = (rows) => Int32Array.from(rows.flatMap(([h, r, t]) => [eid.get(h), rid.get(r), eid.get(t)]));
const train = toIds(raw.train);
const valid = toIds(raw.valid);
const test = toIds(raw.test);
const n = entities.length;

// Baseline scorer: how often an entity is the head / tail of the relation in training. Many candidates tie.
const freq = { head: new Float32Array(relations.length * n), tail: new Float32Array(relations.length * n) };
for (let i = 0; i < train.length; i += 3) {
  freq.head[train[i + 1] * n + train[i]] += 1;
  freq.tail[train[i + 1] * n + train[i + 2]] += 1;
}
const rows = test.length / 3;
const evaluator = new RankEvaluator({ numEntities: n, filterTriples: [train, valid, test] });
for (const side of ["head", "tail"]) {
  const scores = new Float32Array(rows * n);
  for (let i = 0; i < rows; i++) scores.set(freq[side].subarray(test[3 * i + 1] * n, (test[3 * i + 1] + 1) * n), i * n);
  await evaluator.add({ triples: test, side, scores });
}
const results = evaluator.finalize();
console.log(`\nNations test (${rows} triples x ${n} entities), filtered by train+valid+test, frequency baseline\n`);
console.log(results.toMarkdown());
console.log(`\nboth.realistic MRR ${results.get("mrr").toFixed(4)} vs ${results.expected("mrr").toFixed(4)} expected at random; ` +
  `z-MRR ${results.get("zmrr").toFixed(2)}; done in ${(performance.now() - t0).toFixed(0)} ms`);
