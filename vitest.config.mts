/**
 * Every behavioural test runs once per backend: one vitest project per native SIMD level this CPU supports (the
 * best level with the machine's threads, lower levels single-threaded) plus the pure-TS fallback. Each project
 * gets a fresh module graph with KGRANK_BACKEND / KGRANK_SIMD / KGRANK_THREADS set, so the public functions run on
 * that backend. `KGRANK_BACKEND=ts npm test` runs the fallback project only.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
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

const onlyTs = (process.env.KGRANK_BACKEND ?? "").toLowerCase() === "ts";
const behaviour = ["test/**/*.test.ts"];
// Run once, not per backend: they start subprocesses per backend themselves, or compare every backend in one process.
const once = [
  "test/package.test.ts",
  "test/loader.test.ts",
  "test/determinism.test.ts",
  "test/parity.test.ts",
  "test/shard.test.ts",
  "test/queue.test.ts",
  "test/report.test.ts",
  "test/architecture.test.ts",
];

const projects: object[] = [];
if (!onlyTs) {
  const info = nativeLevels();
  if (!info) {
    throw new Error(
      "The native addon is not built, so the native backend cannot be tested. Run `npm run build:native`, " +
        "or run the fallback's tests alone with KGRANK_BACKEND=ts npm test.",
    );
  }
  for (const level of info.simdLevels) {
    const best = level.level === info.bestSimd;
    const threads = best ? String(info.hardwareThreads) : "1";
    projects.push({
      extends: true,
      test: {
        name: `native-${level.name}-t${threads}`,
        include: behaviour,
        exclude: once,
        env: { KGRANK_BACKEND: "native", KGRANK_SIMD: level.name, KGRANK_THREADS: threads },
      },
    });
  }
}
projects.push({
  extends: true,
  test: {
    name: "ts",
    include: behaviour,
    exclude: once,
    env: { KGRANK_BACKEND: "ts", KGRANK_SIMD: "", KGRANK_THREADS: "" },
  },
});
if (!onlyTs) {
  projects.push({ extends: true, test: { name: "once", include: once, testTimeout: 600_000, hookTimeout: 600_000 } });
}

export default defineConfig({
  test: {
    projects,
    globalSetup: ["test/helpers/build-dist.ts"],
    testTimeout: 60_000,
    pool: "forks",
  },
});
