// `kgrank compare` and `kgrank report` as a user runs them, on FB15k-237 (test split, filtered, both sides: 40,876
// paired tasks). Three runs are evaluated once with `--save-state`: the frequency baseline and DistMult with two
// seeded random embeddings (d = 32, rows in the dataset's id order). Then, --reps times each (median printed):
//   compare: the three runs, default metrics, 10,000 randomization and 10,000 bootstrap samples (--samples);
//   report: the first two runs, default settings.
// Each is a fresh `node bin/kgrank.js` process, so the times include start-up and reading the states.
//   npm run build:ts && node bench/compare-report.mjs [--datasets DIR] [--reps R] [--samples N] [--keep DIR]
// --keep DIR: the runs' states stay in DIR (made if missing, reused when there), e.g. to profile one command.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

import { median, printTable, root, seededFloats, writeResult } from "./lib.mjs";

const require = createRequire(import.meta.url);
const { loadDataset, writeNpy } = require(join(root, "dist", "cjs", "index.js"));
const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const datasetDir = resolve(flag("--datasets", process.env.KGRANK_DATASETS ?? join(root, "..", "shared", "datasets")));
const reps = Number(flag("--reps", "3"));
const samples = flag("--samples", "10000");
const D = 32;
const cli = join(root, "bin", "kgrank.js");
process.env.KGRANK_DATASETS = datasetDir;
const env = process.env;

function kgrank(argv) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [cli, ...argv], { env, encoding: "utf8", maxBuffer: 1 << 26 });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`kgrank ${argv.join(" ")} failed (${r.status}): ${r.stderr}`);
  return seconds;
}

const keep = flag("--keep", null);
const dir = keep ? resolve(keep) : mkdtempSync(join(tmpdir(), "kgrank-compare-bench-"));
if (keep) mkdirSync(dir, { recursive: true });
const made = (path) => keep !== null && existsSync(path);
try {
  const ds = loadDataset("fb15k-237");
  const states = [join(dir, "baseline.state")];
  if (!made(states[0])) kgrank(["evaluate", "--dataset", "fb15k-237", "--save-state", states[0], "--quiet"]);
  for (const seed of [1, 2]) {
    const entities = join(dir, `entity${seed}.npy`);
    const relations = join(dir, `relation${seed}.npy`);
    writeNpy(entities, seededFloats(ds.numEntities * D, seed), [ds.numEntities, D]);
    writeNpy(relations, seededFloats(ds.numRelations * D, 100 + seed), [ds.numRelations, D]);
    states.push(join(dir, `distmult${seed}.state`));
    if (made(states[seed])) continue;
    kgrank([
      "evaluate",
      "--dataset",
      "fb15k-237",
      "--interaction",
      "distmult",
      "--entity-embeddings",
      entities,
      "--relation-embeddings",
      relations,
      "--save-state",
      states[seed],
      "--quiet",
    ]);
  }
  const cases = [
    ["compare (3 runs)", ["compare", ...states, "--samples", samples, "--seed", "1", "--quiet"]],
    ["report (2 runs)", ["report", states[0], states[1], "--output", join(dir, "report.html"), "--quiet"]],
  ];
  const out = {};
  for (const [name, argv] of cases) {
    const times = [];
    for (let r = 0; r < reps; r++) times.push(kgrank(argv));
    out[name] = { median: median(times), times };
  }
  console.log(`FB15k-237 test, filtered, both sides; compare with ${samples} samples; median of ${reps} processes`);
  printTable(
    ["command", "median s", "runs (s)"],
    Object.entries(out).map(([name, r]) => [name, r.median.toFixed(2), r.times.map((t) => t.toFixed(2)).join(" ")]),
  );
  writeResult("compare-report", { samples: Number(samples), reps, results: out });
} finally {
  if (!keep) rmSync(dir, { recursive: true, force: true });
}
