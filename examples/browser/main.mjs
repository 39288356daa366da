// Evaluates the bundled Nations test split with the frequency baseline in a browser, on kgrank's WebAssembly core.
// Served from the repository root (`npm run example:browser`), so the bundle, the core and the data are files of
// the repository; a page of your own would import "kgrank-native/browser" and fetch the package's wasm/kgrank.wasm.
import {
  FrequencyBaseline,
  RankEvaluator,
  labelMaps,
  loadWasm,
  mapTriples,
  splitTsvTriples,
} from "../../dist/browser/kgrank.mjs";

const SPLITS = ["train", "valid", "test"];
const here = (file) => new URL(file, import.meta.url);
const status = document.getElementById("status");

async function text(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.text();
}

async function evaluateNations() {
  const info = await loadWasm(fetch(here("../../wasm/kgrank.wasm")));
  const rows = await Promise.all(
    SPLITS.map(async (s) => splitTsvTriples(await text(here(`../../data/nations/${s}.tsv`)), `${s}.tsv`)),
  );
  // Ids as PyKEEN (and `kgrank evaluate`) number them: the training split's labels, sorted; valid and test rows with a
  // label unseen in training are dropped.
  const maps = labelMaps(rows[0]);
  const [train, valid, test] = rows.map((r) => mapTriples(r, maps));
  const numEntities = maps.entityLabels.length;
  const numRelations = maps.relationLabels.length;
  const evaluator = new RankEvaluator({
    numEntities,
    numRelations,
    filterTriples: [train.triples, valid.triples, test.triples],
    sides: "both",
  });
  const baseline = new FrequencyBaseline(train.triples, numEntities, numRelations);
  for (const side of ["head", "tail"]) {
    await evaluator.add({ triples: test.triples, side, scores: baseline.scoreBatch(test.triples, side) });
  }
  const results = await evaluator.finalizeAsync();
  const expected = (side) => {
    const table = results.toJSON()[side];
    if (!table) return {};
    return Object.fromEntries(
      Object.keys(table.realistic)
        .map((k) => [k, results.expected(`${side}.${k}`)])
        .filter(([, e]) => e !== undefined),
    );
  };
  return {
    table: results.toTable({ format: "markdown" }),
    json: {
      dataset: "nations",
      split: "test",
      numEntities,
      triples: test.triples.length / 3,
      dropped: test.dropped,
      setting: "filtered by train+valid+test",
      scorer: "frequency baseline",
      backend: { backend: info.backend, simd: info.simd, threads: info.threads, version: info.version },
      results: results.toJSON(),
      expected: Object.fromEntries(["head", "tail", "both"].map((s) => [s, expected(s)])),
      meanRankWidth: Object.fromEntries(["head", "tail", "both"].map((s) => [s, results.meanRankWidth(s)])),
      intervals: results.intervals(),
      info: results.info,
    },
  };
}

try {
  const t0 = performance.now();
  const { table, json } = await evaluateNations();
  document.getElementById("table").textContent = table;
  // As the CLI writes JSON: a value that is not finite is null.
  document.getElementById("result").textContent = JSON.stringify(
    json,
    (_k, v) => (typeof v === "number" && !Number.isFinite(v) ? null : v),
    2,
  );
  status.textContent = `done in ${(performance.now() - t0).toFixed(0)} ms on the ${json.backend.backend} backend (${json.backend.simd})`;
  status.dataset.state = "done";
} catch (e) {
  status.textContent = `failed: ${e.message}`;
  status.dataset.state = "failed";
  throw e;
}
