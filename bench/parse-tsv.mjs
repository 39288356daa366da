// Standalone (not one of run.mjs's scenarios): the TSV splitter on a real training split, C++ (native/core/parse.cpp,
// offsets) + JavaScript label decoding against the TypeScript splitter, plus readTriples end to end. Needs the addon
// and `npm run build:ts`.   node bench/parse-tsv.mjs [file.tsv]   (default: FB15k-237's train.tsv in the datasets folder beside the checkout)
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

import { root } from "./lib.mjs";

const require = createRequire(import.meta.url);
const tsv = require(join(root, "dist/cjs/io/tsv.js"));
const { nativeAddon } = require(join(root, "dist/cjs/backend/backend.js"));
const file = process.argv[2] ?? join(root, "..", "shared", "datasets", "fb15k-237", "train.tsv");
const addon = nativeAddon();
if (!addon) throw new Error("the native addon is not loaded: build it with npm run build:native");

function time(name, f, reps = 7) {
  const ms = [];
  let out;
  for (let i = 0; i < reps; i++) {
    const t0 = process.hrtime.bigint();
    out = f();
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  console.log(
    `${name.padEnd(48)} median ${ms[reps >> 1].toFixed(1).padStart(7)} ms   min ${ms[0].toFixed(1).padStart(7)} ms`,
  );
  return out;
}

const bytes = readFileSync(file);
console.log(`${file}: ${bytes.length} bytes`);
const want = time("TS: decode + splitTsvTriplesTs", () => tsv.splitTsvTriplesTs(bytes.toString("utf8")));
time("C++: offsets only", () => addon.splitTsvTriples(bytes));
const got = time("C++ offsets + JS labels (splitTsvBytes)", () => tsv.splitTsvBytes(bytes));
time("splitTsvTriples(string), native path", () => tsv.splitTsvTriples(bytes.toString("utf8")));
time("readTriples (file -> ids), native path", () => tsv.readTriples(file));
console.log(`${got.length} triples; same rows as the TS splitter: ${JSON.stringify(got) === JSON.stringify(want)}`);
