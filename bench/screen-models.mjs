// The int8 screen against the float32 path on whole evaluations, side by side in one process: RankEvaluator.addModel
// (filtered, both sides) with screen "off" and "auto" (or "int8"), alternated round by round (off first in even
// rounds), median times, the median of the per-round ratios, the rescored fraction (the model's screenStats), and a
// check that both modes give the same results to the last bit. Models:
//   --model-dir DIR --dataset-dir DIR   a trained model (bench/train_kge.py writes one) on its dataset's test split
//   --wikikg2 [--dim 100] [--tasks 2000] [--interaction distmult|complex|transe-l2|rotate-l2]
//                                       WikiKG2-shaped random embeddings (2,500,604 entities, 535 relations; d floats a
//                                       row): a sample of test-like triples, truth at random (the screen's worst case)
// Options: --rounds 5, --mode auto|int8 (the screened side; default auto), --threads N, --unfiltered, --top-k K
// (predictTopK's lists of both sides in place of the evaluation: the same alternation, lists compared bit for bit).
// Needs the addon and `npm run build:ts`:
//   node bench/screen-models.mjs --model-dir /tmp/fb-distmult-100 --dataset-dir ../shared/datasets/fb15k237
//   node bench/screen-models.mjs --wikikg2 --dim 100
import { createRequire } from "node:module";
import { join } from "node:path";

import { median, root, seededFloats, writeResult } from "./lib.mjs";

const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const rounds = Number(opt("--rounds", 5));
const mode = opt("--mode", "auto");
// --unfiltered: no filter pass (the known answers scored one by one), so the ratio is the ranking pass's alone.
const unfiltered = args.includes("--unfiltered");
const require = createRequire(import.meta.url);
const kg = require(join(root, "dist", "cjs", "index.js"));
const { kernels } = require(join(root, "dist", "cjs", "backend", "backend.js"));
const k = kernels();
if (k.backend !== "native") throw new Error("the screen runs on the native backend only: build the addon first");
const threads = Number(opt("--threads", k.threads));

/** { model, triples, filter, numEntities, numRelations, label } of the run asked for. */
function setup() {
  if (args.includes("--wikikg2")) {
    const n = 2500604;
    const nr = 535;
    const d = Number(opt("--dim", 100));
    const tasks = Number(opt("--tasks", 2000));
    const interaction = opt("--interaction", "distmult");
    const complex = interaction === "complex" || interaction === "rotate-l2";
    const model = new kg.EmbeddingModel({
      interaction,
      entityEmbeddings: { data: seededFloats(n * d, 1), shape: [n, d] },
      relationEmbeddings: { data: seededFloats(nr * d, 2), shape: [nr, d] },
      ...(complex ? { complexLayout: "halves" } : {}),
    });
    const triples = new Int32Array(3 * tasks);
    for (let i = 0; i < tasks; i++) triples.set([(i * 7919) % n, i % nr, (i * 104729 + 17) % n], 3 * i);
    return {
      model,
      triples,
      filter: [triples],
      numEntities: n,
      numRelations: nr,
      label: `WikiKG2-shaped random ${interaction} d=${d}`,
    };
  }
  const modelDir = opt("--model-dir", null);
  const datasetDir = opt("--dataset-dir", null);
  if (!modelDir || !datasetDir) throw new Error("give --model-dir DIR --dataset-dir DIR, or --wikikg2");
  const ds = kg.loadDataset(undefined, { datasetDir });
  const model = kg.loadEmbeddingModel({ modelDir, entityLabels: ds.entityLabels, relationLabels: ds.relationLabels });
  return {
    model,
    triples: ds.splits.test,
    filter: [ds.splits.train, ds.splits.valid, ds.splits.test],
    numEntities: ds.numEntities,
    numRelations: ds.numRelations,
    label: `${modelDir} (${model.interaction}, ${model.entityWidth} columns)`,
  };
}

const s = setup();
const topK = opt("--top-k", null);
/** One evaluation (or top-k prediction): seconds, the results' JSON and the screen's counts of this run. */
async function evaluate(screen) {
  const before = s.model.screenStats;
  if (topK !== null) {
    const t0 = process.hrtime.bigint();
    const lists = kg.predictTopK(s.model, {
      triples: s.triples,
      k: Number(topK),
      ...(unfiltered ? {} : { filter: s.filter }),
      screen,
      threads,
    });
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const after = s.model.screenStats;
    const bits = ["head", "tail"].map((side) => [Array.from(lists[side].ids), Array.from(lists[side].scores, String)]);
    return {
      seconds,
      json: JSON.stringify(bits),
      pairs: after.pairs - before.pairs,
      rescored: after.rescored - before.rescored,
    };
  }
  const ev = new kg.RankEvaluator({
    numEntities: s.numEntities,
    numRelations: s.numRelations,
    filterTriples: unfiltered ? undefined : s.filter,
  });
  const t0 = process.hrtime.bigint();
  await ev.addModel({ model: s.model, triples: s.triples, screen, threads });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const after = s.model.screenStats;
  return {
    seconds,
    json: JSON.stringify(ev.finalize().toJSON()),
    pairs: after.pairs - before.pairs,
    rescored: after.rescored - before.rescored,
  };
}

await evaluate(mode); // the table quantised once, as in an evaluation's first batch; not timed again
const off = [];
const on = [];
const ratio = [];
let pairs = 0;
let rescored = 0;
for (let r = 0; r < rounds; r++) {
  const [a, b] =
    r % 2 === 0
      ? [await evaluate("off"), await evaluate(mode)]
      : [await evaluate(mode), await evaluate("off")].reverse();
  if (a.json !== b.json) throw new Error(`round ${r}: the screen's results differ from the float32 path's`);
  off.push(a.seconds);
  on.push(b.seconds);
  ratio.push(a.seconds / b.seconds);
  pairs += b.pairs;
  rescored += b.rescored;
}
const row = {
  run: s.label,
  simd: k.simd,
  screenKernel: kg.backendInfo().screenKernel ?? null,
  threads,
  mode,
  job: topK !== null ? `top-${topK}` : "ranks",
  tasks: s.triples.length / 3,
  offSeconds: median(off),
  screenSeconds: median(on),
  ratioOfMedians: median(off) / median(on),
  medianPairedRatio: median(ratio),
  screenedPairs: pairs / rounds,
  rescoredFraction: pairs > 0 ? rescored / pairs : null,
};
console.log(
  `${row.run}: ${row.job}, ${row.simd} (screen kernel ${row.screenKernel}), ${threads} threads, ${row.tasks} triples x 2 sides, ${rounds} rounds\n` +
    `  off ${row.offSeconds.toFixed(3)} s, ${mode} ${row.screenSeconds.toFixed(3)} s: ${row.ratioOfMedians.toFixed(2)}x ` +
    `(median paired ${row.medianPairedRatio.toFixed(2)}x); pairs screened ${row.screenedPairs}, rescored ` +
    `${row.rescoredFraction === null ? "-" : (100 * row.rescoredFraction).toFixed(3)} %; results identical`,
);
writeResult("screen-models", row);
