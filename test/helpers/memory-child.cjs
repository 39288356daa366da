// Child process of test/async-safety.test.ts, run under a virtual-memory limit (bash -c 'ulimit -v N; node ...'):
// an input whose native allocations cannot fit. The call must fail with KgrankMemoryError (or, where the backend
// needs less memory for it, succeed) and the process go on and exit 0. Before, std::bad_alloc escaped the binding
// or a pool thread: 'terminate called after throwing an instance of std::bad_alloc', exit 134.
// The FrequencyBaseline's count tables are allocated in TypeScript on every backend: before, a bare RangeError ("Array
// buffer allocation failed").
//   node test/helpers/memory-child.cjs filterIndex|estimate|baseline
const path = require("node:path");
const kg = require(path.join(__dirname, "..", "..", "dist", "cjs", "index.js"));

const which = process.argv[2];
const run = {
  // 2^31 - 1 entities: the index's offsets alone are 8 GiB.
  filterIndex: () =>
    new kg.RankEvaluator({ numEntities: 2 ** 31 - 1, filterTriples: new Int32Array([0, 0, 1]), sides: "tail" }),
  // 5e7 tasks: each pool thread's sample buffer is 400 MB (the allocation fails on a pool thread or the caller).
  estimate: () =>
    kg
      .getMetric("median_rank")
      .estimate({ numCandidates: kg.prepareCandidates(new Float64Array(5e7).fill(10)), numSamples: 8, seed: 1 }),
  // 2^31 - 1 entities, 1 relation: two float32 count tables of 8 GiB each.
  baseline: () => new kg.FrequencyBaseline(new Int32Array([0, 0, 1]), 2 ** 31 - 1, 1),
}[which];
let outcome;
try {
  run();
  outcome = { outcome: "ok" };
} catch (e) {
  outcome = {
    outcome: "threw",
    name: e.name,
    code: e.code,
    operation: e.operation,
    typed: e instanceof kg.KgrankError,
    message: e.message,
  };
}
// The process goes on: a small call still works.
const after = kg.computeRanksSync({ scores: new Float32Array([1, 2, 3]), numColumns: 3, trueIndices: [0] })
  .realistic[0];
console.log(JSON.stringify({ ...outcome, after, backend: kg.backendInfo().backend }));
