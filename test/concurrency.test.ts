/**
 * Many async jobs at once: results identical to running them one by one, no deadlock, and the process's thread
 * count stays bounded (kgrank's pool is fixed-size; libuv's pool queues AsyncWorkers).
 */
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

import { backendInfo, computeRanks, computeRanksSync, computeSampledRanks, RankCounter } from "../src/index";
import { rng } from "./helpers/reference";
import { backendLabel } from "./helpers/backend";

const info = backendInfo();
const label = backendLabel;

/** The process's thread count, from Linux's /proc/self/status. */
function threadCount(): number {
  const m = /Threads:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"));
  if (!m) throw new Error("/proc/self/status has no Threads: line");
  return Number(m[1]);
}
const procStatus = existsSync("/proc/self/status");

describe(`concurrency on ${label}`, () => {
  it.runIf(procStatus)(
    "runs 200 concurrent async rank jobs of mixed sizes with results identical to sequential runs, within hardware threads + 4 extra threads (Linux /proc)",
    async () => {
      const next = rng(123);
      const jobs = Array.from({ length: 200 }, (_, j) => {
        const cols = [7, 100, 4099, 20_000][j % 4]!;
        const rows = 1 + ((j * 37) % 50);
        const scores = (j % 2 ? new Float32Array(rows * cols) : new Float64Array(rows * cols)).map(() =>
          Math.floor(next() * 16),
        );
        const trueIndices = Int32Array.from({ length: rows }, (_, r) => (r * 13 + j) % cols);
        return { scores, numColumns: cols, trueIndices, threads: 1 + (j % 3) };
      });
      const sequential = jobs.map((job) => computeRanksSync(job));
      const before = threadCount();
      let maxThreads = before;
      const sampler = setInterval(() => (maxThreads = Math.max(maxThreads, threadCount())), 1);
      const concurrent = await Promise.all(jobs.map((job) => computeRanks(job)));
      clearInterval(sampler);
      expect(concurrent).toEqual(sequential);
      // The pool is created once with hardware threads - 1 workers; libuv adds at most its 4 workers.
      expect(maxThreads - before).toBeLessThanOrEqual(info.hardwareThreads + 4);
    },
  );

  it("interleaves sampled jobs and chunked counters without mixing their results", async () => {
    const next = rng(5);
    const n = 300;
    const k = 64;
    const pos = new Float32Array(n).map(() => Math.floor(next() * 8));
    const neg = new Float32Array(n * k).map(() => Math.floor(next() * 8));
    const counters = Array.from({ length: 20 }, () => new RankCounter({ trueScores: pos }));
    const work: Promise<unknown>[] = [];
    for (let c = 0; c < counters.length; c++) {
      for (let start = 0; start < k; start += 16) {
        const chunk = new Float32Array(n * 16);
        for (let r = 0; r < n; r++) chunk.set(neg.subarray(r * k + start, r * k + start + 16), r * 16);
        work.push(counters[c]!.add({ scores: chunk, columnStart: start }));
      }
      work.push(computeSampledRanks({ positiveScores: pos, negativeScores: neg }));
    }
    const results = await Promise.all(work);
    const sampled = results.filter((r) => r !== undefined) as Awaited<ReturnType<typeof computeSampledRanks>>[];
    for (const r of sampled) expect(r).toEqual(sampled[0]);
    for (const c of counters) expect(c.ranks()).toEqual(sampled[0]);
  });
});
