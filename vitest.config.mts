/**
 * Three tiers of tests, chosen by KGRANK_TEST_TIER (the npm scripts set it):
 *
 * - default (`npm test`): every behavioural file on the pure-TS fallback and on the best native SIMD level with
 *   the machine's threads, plus the `once` files (they compare every backend in one process, choose the backend
 *   themselves, or are about the process and not the backend).
 * - matrix (`npm run test:matrix`): the kernel-facing files, whose native code paths differ by SIMD level, at every
 *   level this CPU supports (the best with the machine's threads, lower levels single-threaded). The fallback is
 *   not a SIMD level: `npm test` covers it.
 * - package (`npm run test:package`): packing, installing and compiling the package.
 * - long (`npm run test:long`): the slowest files and backends, apart from `npm test` to keep that within 3 minutes
 *   on 2 vCPUs (the lists below); .ci/run runs it.
 * - wasm (`npm run test:wasm`): every behavioural file on the WebAssembly core (wasm/kgrank.wasm, `npm run
 *   build:wasm`), the files the native project runs, and the browser build's test (the example page in headless
 *   Chromium, test/browser.test.ts). Apart from `npm test` to keep that within its time budget, and because a fresh
 *   clone has no core until it is built.
 *
 * Each project gets a fresh module graph with KGRANK_BACKEND / KGRANK_SIMD / KGRANK_THREADS set, so the public
 * functions run on that backend. `KGRANK_BACKEND=ts npm test` runs the fallback project only.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import * as path from "node:path";
import { defineConfig } from "vitest/config";

interface AddonInfo {
  simdLevels: { name: string; level: number }[];
  bestSimd: number;
  hardwareThreads: number;
}

function nativeLevels(): AddonInfo | null {
  // Resolves absolute addon paths only, so any base works (import.meta is not allowed under the CommonJS tsconfig).
  const require = createRequire(path.resolve("vitest.config.mts"));
  const candidates = process.env.KGRANK_ADDON_PATH
    ? [path.resolve(process.env.KGRANK_ADDON_PATH)]
    : [path.resolve("build/Release/kgrank.node"), path.resolve("build-cmake/Release/kgrank.node")];
  for (const file of candidates) {
    if (!existsSync(file)) continue;
    return (require(file) as { info(): AddonInfo }).info();
  }
  return null;
}

const tier = process.env.KGRANK_TEST_TIER || "default";
if (!["default", "long", "matrix", "package", "wasm"].includes(tier)) {
  throw new Error(`KGRANK_TEST_TIER=${tier} is not a tier: use default, long, matrix, package or wasm.`);
}
const onlyTs = (process.env.KGRANK_BACKEND ?? "").toLowerCase() === "ts";

const behaviour = ["test/**/*.test.ts"];
// Run once, not per backend: they compare every backend in one process, recompute the backend-independent references
// the other files read from fixtures, choose the backend themselves, test the process (spawned `kgrank` commands)
// rather than a backend, test TypeScript-only code (the paired statistics of `compare`), check the repository's
// documents against the code (architecture, docs examples, the metric table, the status enum) or feed inputs past
// 2^31 elements (the best native level only).
const once = [
  "test/loader.test.ts",
  "test/determinism.test.ts",
  "test/parity.test.ts",
  "test/references.test.ts",
  "test/large.test.ts",
  "test/cli-process.test.ts",
  "test/compare.test.ts",
  "test/queue.test.ts",
  "test/report.test.ts",
  "test/architecture.test.ts",
  "test/surface.test.ts",
  "test/docs-examples.test.ts",
  "test/metrics-docs.test.ts",
  "test/readme-numbers.test.ts",
  "test/status.test.ts",
  "test/enums.test.ts",
  "test/addon-boundary.test.ts",
  "test/task-sample-coverage.test.ts",
  "test/build-native.test.ts",
  "test/example-server.test.ts",
];
// Packing, `npm install` and compiling the addon: `npm run test:package`.
const packaging = ["test/package.test.ts"];
// The browser build and its example page: the wasm tier, once (it loads the core itself and runs the CLI as a user
// would, on the default backend).
const browser = ["test/browser.test.ts"];
// The files whose kernels have SIMD-dependent code paths (the dispatch table itself, counting, ranks, the filter
// index, chunked counters, the evaluator, embedding scorers, expectations, the median, sampled statistics, metric
// aggregation).
const kernelFacing = [
  "test/backend.test.ts",
  "test/count.test.ts",
  "test/ranks.test.ts",
  "test/filter-index.test.ts",
  "test/chunked.test.ts",
  "test/rank-counter.test.ts",
  "test/evaluator.test.ts",
  "test/embeddings.test.ts",
  "test/embeddings-fb15k.test.ts",
  "test/relation-scores.test.ts",
  "test/relation-scores-numpy.test.ts",
  "test/typed-candidates.test.ts",
  "test/typed-candidates-numpy.test.ts",
  "test/expectation.test.ts",
  "test/median-moments.test.ts",
  "test/estimate.test.ts",
  "test/metrics.test.ts",
  "test/screen.test.ts",
];

// The long tier (`npm run test:long`, which .ci/run runs): the runs that take longest, kept out of `npm test` so that
// the inner loop stays within 3 minutes on 2 vCPUs with the datasets present (measured per file and project on a
// quiet machine: the fallback's embedding scorers 51 s, the queue's Redis and worker processes 47 s, async safety 17 s
// native and 22 s on the fallback, out of 383 s of test time; on 2026-12-02, after the typed boundary, the
// descriptors and MRR@k, npm test took 199 s, and the fallback's streamed tables (31 s) and relation scores against
// NumPy (20 s) moved here too; a clean clone then took 203-214 s, so the docs' executed examples (29 s), the HTML
// report (23 s) and the CLI's processes (13 s) of the once project followed; the screen and PyTorch-BigGraph files'
// fallback runs, the statistical coverage of 400 sampled-task intervals (14 s) and compare's paired statistics
// against SciPy (24 s) and the recomputed median DP fixture (10 s) after them; on this round's slower 2-vCPU machines, the dataset checks below too). Nothing is dropped: the same files on the same projects, in another command.
// train-kge: bench/train_kge.py trains Nations models in Python processes, which kgrank then evaluates on the
// project's backend (23-40 s a project on 2 loaded vCPUs).
const longBothBackends = ["test/async-safety.test.ts", "test/train-kge.test.ts"];
// The reference checks on the external datasets whose references cost the most (5.8 million float64 scores per
// FB15k-237 case in TypeScript; NumPy processes per case): 71 s of `npm test`'s test time on 2 vCPUs. Their native runs
// are test:matrix's (every SIMD level, the best one with the machine's threads, as `npm test` would run them), their
// fallback runs test:long's (in longFallback).
const datasetChecks = [
  "test/embeddings-fb15k.test.ts",
  "test/relation-scores-numpy.test.ts",
  "test/typed-candidates-numpy.test.ts",
];
// The fallback's run only: the native one stays in `npm test` (and in test:matrix at every SIMD level).
const longFallback = [
  ...datasetChecks,
  "test/embeddings.test.ts",
  "test/streamed.test.ts",
  "test/relation-scores.test.ts",
  "test/screen.test.ts",
  "test/pbg.test.ts",
  "test/pbg-shards.test.ts",
  "test/pbg-sampled.test.ts",
];
const longOnce = [
  "test/queue.test.ts",
  "test/compare.test.ts",
  "test/references.test.ts",
  "test/docs-examples.test.ts",
  "test/report.test.ts",
  "test/cli-process.test.ts",
  "test/task-sample-coverage.test.ts",
];

function backendProject(name: string, include: string[], env: Record<string, string>, skip: string[] = []): object {
  return { extends: true, test: { name, include, exclude: [...once, ...packaging, ...browser, ...skip], env } };
}

function nativeProjects(include: string[], allLevels: boolean, skip: string[] = []): object[] {
  const info = nativeLevels();
  if (!info) {
    throw new Error(
      "The native addon is not built, so the native backend cannot be tested. Run `npm run build:native`, " +
        "or run the fallback's tests alone with KGRANK_BACKEND=ts npm test.",
    );
  }
  const levels = allLevels ? info.simdLevels : info.simdLevels.filter((l) => l.level === info.bestSimd);
  return levels.map((level) => {
    const threads = level.level === info.bestSimd ? String(info.hardwareThreads) : "1";
    return backendProject(
      `native-${level.name}-t${threads}`,
      include,
      { KGRANK_BACKEND: "native", KGRANK_SIMD: level.name, KGRANK_THREADS: threads },
      skip,
    );
  });
}

const tsProject = (include: string[], skip: string[] = []) =>
  backendProject("ts", include, { KGRANK_BACKEND: "ts", KGRANK_SIMD: "", KGRANK_THREADS: "" }, skip);
const wasmProject = (include: string[]) => {
  if (!existsSync(path.resolve("wasm/kgrank.wasm"))) {
    throw new Error("The WebAssembly core is not built, so it cannot be tested. Run `npm run build:wasm`.");
  }
  return backendProject("wasm", include, { KGRANK_BACKEND: "wasm", KGRANK_SIMD: "", KGRANK_THREADS: "" });
};
const long = { testTimeout: 600_000, hookTimeout: 600_000 };

const projects: object[] = [];
if (tier === "package") {
  projects.push({ extends: true, test: { name: "package", include: packaging, ...long } });
} else if (tier === "wasm") {
  projects.push(wasmProject(behaviour));
  projects.push({ extends: true, test: { name: "browser", include: browser, env: { KGRANK_BACKEND: "" }, ...long } });
} else if (tier === "matrix") {
  if (onlyTs) throw new Error("The matrix runs the native SIMD levels; KGRANK_BACKEND=ts npm test runs the fallback.");
  projects.push(...nativeProjects(kernelFacing, true));
} else if (tier === "long") {
  if (!onlyTs) projects.push(...nativeProjects(longBothBackends, false));
  projects.push(tsProject([...longBothBackends, ...longFallback]));
  if (!onlyTs) projects.push({ extends: true, test: { name: "once", include: longOnce, ...long } });
} else {
  if (!onlyTs) projects.push(...nativeProjects(behaviour, false, [...longBothBackends, ...datasetChecks]));
  projects.push(tsProject(behaviour, [...longBothBackends, ...longFallback]));
  if (!onlyTs) projects.push({ extends: true, test: { name: "once", include: once, exclude: longOnce, ...long } });
}

export default defineConfig({
  test: {
    projects,
    globalSetup: ["test/helpers/build-dist.ts"],
    testTimeout: 60_000,
    pool: "forks",
    // No fresh module graph per file: a fork keeps the library it loaded for the next file of its project (forks
    // serve one project each, and test/helpers/project-guard.ts asserts before every file that the backend is the
    // project's). On 2 vCPUs this takes the fallback project's CPU time from 230 s to 158 s, most of it the
    // library's module evaluation repeated per file.
    isolate: false,
    setupFiles: ["test/helpers/project-guard.ts"],
    // Vitest's default (one fork less than the CPUs) runs the files one at a time on 2 vCPUs, where much of the
    // suite waits on child processes, Redis and Chromium: two forks take the suite from 340 s to 188 s there.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
