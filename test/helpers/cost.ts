/**
 * Cost comparisons for tests, without wall-clock limits (ARCHITECTURE.md: no timed assertions; speed is measured by
 * bench/). A test that guards a complexity fix compares the CPU time of the same call on a small and a large input
 * and asserts the ratio is far below what the old complexity gives: a ratio holds on a loaded machine, where a
 * limit in milliseconds does not. CPU time (process.cpuUsage, user + system) counts this process's work only, and
 * the best of several runs drops a garbage collection or a preemption that lands in one of them.
 */

/** CPU milliseconds of the cheapest of `runs` runs of `work` (each run calls it `inner` times). */
export function cpuMs(work: () => void, runs = 5, inner = 1): number {
  let best = Infinity;
  for (let r = 0; r < runs; r++) {
    const start = process.cpuUsage();
    for (let i = 0; i < inner; i++) work();
    const used = process.cpuUsage(start);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  // cpuUsage counts microseconds: a floor keeps the ratio finite for very cheap work.
  return Math.max(best, 0.05);
}

/** cpuMs(large) / cpuMs(small), both measured after one warm-up call each (the first call compiles the code). */
export function costRatio(small: () => void, large: () => void, runs = 5, inner = 1): number {
  small();
  large();
  return cpuMs(large, runs, inner) / cpuMs(small, runs, inner);
}
