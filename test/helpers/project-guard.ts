/**
 * Runs before every test file (vitest.config.mts, setupFiles). The suite runs without per-file isolation: a worker
 * keeps its module graph from one file to the next, which takes a third off `npm test`'s CPU time. A worker serves
 * one project, so the backend it loaded is the one its project asked for; this guard makes that an assertion
 * instead of an assumption, so a file can never run quietly on another project's backend.
 */
import { backendInfo } from "../../src/backend/backend";

const wanted = process.env.KGRANK_BACKEND;
if (wanted) {
  const info = backendInfo();
  const simd = process.env.KGRANK_SIMD;
  const threads = process.env.KGRANK_THREADS;
  const wrong =
    info.backend !== wanted ||
    (wanted === "native" && ((simd && info.simd !== simd) || (threads && String(info.threads) !== threads)));
  if (wrong) {
    throw new Error(
      `this test file's project asked for KGRANK_BACKEND=${wanted} KGRANK_SIMD=${simd ?? ""} ` +
        `KGRANK_THREADS=${threads ?? ""}, but its worker runs ${info.backend}/${info.simd}/${info.threads} threads: ` +
        "a worker was shared across projects (vitest.config.mts, isolate)",
    );
  }
}
