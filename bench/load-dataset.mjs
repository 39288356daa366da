// Standalone (not one of run.mjs's scenarios): loadDataset and loadDatasetAsync of a dataset folder, each run in a
// fresh child process (time of the call, and the child's peak RSS from process.resourceUsage().maxRSS), against
// the machine's limit: reading the split files' bytes (readFileSync, page cache warm). Prints medians.
// Needs `npm run build:ts` (and the addon for the native backend; KGRANK_BACKEND=ts for the fallback).
//   node bench/wikikg2-dataset.mjs /tmp/kgrank-wikikg2 && node bench/load-dataset.mjs /tmp/kgrank-wikikg2 [--runs 3] [--sync-only|--async-only]
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

import { median, root } from "./lib.mjs";

const args = process.argv.slice(2);
if (args[0] === "--child") {
  // child: --child MODE DIR -> one JSON line { ms, maxRssMiB, ... }
  const [, mode, dir] = args;
  const require = createRequire(import.meta.url);
  const t0 = process.hrtime.bigint();
  let out = {};
  if (mode === "read") {
    let bytes = 0;
    for (const f of readdirSync(dir)) bytes += readFileSync(join(dir, f)).length;
    out.bytes = bytes;
  } else {
    const { loadDataset, loadDatasetAsync } = require(join(root, "dist", "cjs", "index.js"));
    const d =
      mode === "sync"
        ? loadDataset(undefined, { datasetDir: dir })
        : await loadDatasetAsync(undefined, { datasetDir: dir });
    out = {
      entities: d.numEntities,
      relations: d.numRelations,
      train: d.splits.train.length / 3,
      valid: d.splits.valid.length / 3,
      test: d.splits.test.length / 3,
      dropped: d.dropped,
    };
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  console.log(JSON.stringify({ ms, maxRssMiB: process.resourceUsage().maxRSS / 1024, ...out }));
  process.exit(0);
}

const runsAt = args.indexOf("--runs");
const runs = runsAt >= 0 ? Number(args.splice(runsAt, 2)[1]) : 3;
const modes = args.includes("--sync-only") ? ["sync"] : args.includes("--async-only") ? ["async"] : ["sync", "async"];
const dir = args.find((a) => !a.startsWith("--")) ?? "/tmp/kgrank-wikikg2";
const self = new URL(import.meta.url).pathname;

function child(mode) {
  const line = execFileSync(process.execPath, [self, "--child", mode, dir], {
    encoding: "utf8",
    maxBuffer: 1 << 20,
    stdio: ["ignore", "pipe", "inherit"],
  });
  return JSON.parse(line.trim().split("\n").pop());
}

console.log(`${dir}, backend ${process.env.KGRANK_BACKEND ?? "default"}, ${runs} runs each, one child process per run`);
const read = [];
for (let i = 0; i < runs; i++) read.push(child("read"));
const readMs = median(read.map((r) => r.ms));
console.log(
  `read the files' bytes             median ${readMs.toFixed(0).padStart(7)} ms   peak RSS ${median(read.map((r) => r.maxRssMiB)).toFixed(0)} MiB   (${(read[0].bytes / 1e6).toFixed(0)} MB)`,
);
for (const mode of modes) {
  const rs = [];
  for (let i = 0; i < runs; i++) rs.push(child(mode));
  const ms = median(rs.map((r) => r.ms));
  const rss = median(rs.map((r) => r.maxRssMiB));
  const name = mode === "sync" ? "loadDataset" : "loadDatasetAsync";
  console.log(
    `${name.padEnd(34)} median ${ms.toFixed(0).padStart(7)} ms   peak RSS ${rss.toFixed(0)} MiB   ${(ms / readMs).toFixed(1)}x the read   ` +
      `(runs: ${rs.map((r) => (r.ms / 1000).toFixed(1)).join(", ")} s)`,
  );
  const r = rs[0];
  console.log(`  ${r.entities} entities, ${r.relations} relations, train ${r.train}, valid ${r.valid}, test ${r.test}`);
}
