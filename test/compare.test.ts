/**
 * Paired comparison: the distributions against closed forms and SciPy (t, normal, exact Wilcoxon), the paired
 * t-test and Wilcoxon signed-rank test against SciPy's ttest_rel and wilcoxon (ties, zeros, n above and below 50),
 * the randomization test against exact enumeration of all 2^n swaps at tiny n (within 4 Monte-Carlo standard
 * errors), Holm and Benjamini–Hochberg against hand-worked values, and compareRuns end to end on Nations. The
 * statistics are TypeScript whatever the backend, so the file runs once (vitest's "once" project, native backend).
 */
import { describe, expect, it } from "vitest";

import { normalTwoSided, studentTwoSided, wilcoxonExactTwoSided } from "../src/compare/distributions";
import { compareRuns, compareRunsAsync, pairedTests, sortedNumbers } from "../src/compare/paired";
import { wasmCoreKernels } from "../src/backend/backend";
import { runSteps } from "../src/io/steps";
import { FrequencyBaseline, getMetric, KgrankInputError, loadDataset, metricValues, RankEvaluator } from "../src/index";
import { lowerHalfKeyed, quantile, streamKey, uniform01Keyed } from "../src/numeric";
import { external, pythonWith } from "./helpers/external";
import { runProcess } from "./helpers/process";
import { rng } from "./helpers/reference";

const python = pythonWith("scipy", "numpy");
const scipy = external("Python with SciPy", python !== null, "install Debian's python3-scipy (or pip install scipy)");

function py(code: string, input: unknown): unknown {
  const r = runProcess(python!, ["-c", code], { input: JSON.stringify(input) });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

describe("tail probabilities", () => {
  it("Student's t against closed forms (df 1: Cauchy, df 2) and the normal tail against known quantiles", () => {
    for (const t of [0, 0.3, 1, 2.5, 10, 300]) {
      expect(studentTwoSided(t, 1)).toBeCloseTo(1 - (2 / Math.PI) * Math.atan(t), 13);
      expect(studentTwoSided(-t, 2)).toBeCloseTo(1 - t / Math.sqrt(2 + t * t), 13);
    }
    expect(normalTwoSided(1.959963984540054)).toBeCloseTo(0.05, 14);
    expect(normalTwoSided(2.5758293035489004)).toBeCloseTo(0.01, 14);
    expect(normalTwoSided(0)).toBeCloseTo(1, 14);
  });

  it("the exact Wilcoxon null distribution against enumeration of every sign assignment", () => {
    for (const n of [1, 4, 9, 12]) {
      const max = (n * (n + 1)) / 2;
      for (const t of [0, 3, Math.floor(max / 3), Math.floor(max / 2), max]) {
        let tail = 0;
        for (let mask = 0; mask < 2 ** n; mask++) {
          let s = 0;
          for (let k = 0; k < n; k++) if (mask & (1 << k)) s += k + 1;
          if (s <= Math.min(t, max - t)) tail++;
        }
        expect(wilcoxonExactTwoSided(t, n)).toBeCloseTo(Math.min(1, (2 * tail) / 2 ** n), 14);
      }
    }
  });

  it.skipIf(scipy.missing)(scipy.name("Student's t and the normal tail against SciPy"), () => {
    const cases = [
      [0.5, 3],
      [2.1, 17],
      [4.4, 120],
      [1.3, 39999],
      [7, 5],
    ];
    const want = py(
      "import json,sys; from scipy import stats; c=json.load(sys.stdin); print(json.dumps([[2*stats.t.sf(abs(t),df), 2*stats.norm.sf(abs(t))] for t,df in c]))",
      cases,
    ) as number[][];
    cases.forEach(([t, df], i) => {
      expect(studentTwoSided(t!, df!) / want[i]![0]! - 1).toBeLessThan(1e-11);
      expect(Math.abs(normalTwoSided(t!) / want[i]![1]! - 1)).toBeLessThan(1e-11);
    });
  });
});

describe.skipIf(scipy.missing)(scipy.name("paired t-test and Wilcoxon against SciPy"), () => {
  const next = rng(3);
  const cases: [string, number[]][] = [
    ["n = 300 with ties and zeros (hits-like)", Array.from({ length: 300 }, () => Math.floor(next() * 3) - 1)],
    ["n = 300 continuous", Array.from({ length: 300 }, () => next() - 0.45)],
    [
      "n = 60 reciprocal-rank differences",
      Array.from({ length: 60 }, () => 1 / (1 + Math.floor(next() * 20)) - 1 / (1 + Math.floor(next() * 20))),
    ],
    ["n = 12 without ties (exact)", Array.from({ length: 12 }, (_, i) => (i + 1) * (i % 3 === 0 ? -1 : 1) * 0.37)],
  ];
  for (const [what, d] of cases) {
    it(what, () => {
      const want = py(
        "import json,sys; import numpy as np; from scipy import stats; d=np.array(json.load(sys.stdin));" +
          "t=stats.ttest_rel(d, np.zeros_like(d)); w=stats.wilcoxon(d, zero_method='wilcox', correction=False);" +
          "print(json.dumps([float(t.statistic), float(t.pvalue), float(w.pvalue), float(np.mean(d) / np.std(d, ddof=1))]))",
        d,
      ) as number[];
      const got = pairedTests(d);
      // Cohen's d_z against numpy: mean / sd with ddof 1.
      expect(Math.abs(got.dz / want[3]! - 1), `d_z ${got.dz} vs numpy ${want[3]}`).toBeLessThan(1e-12);
      expect(got.t).toBeCloseTo(want[0]!, 10);
      expect(Math.abs(got.pT / want[1]! - 1)).toBeLessThan(1e-9);
      expect(Math.abs(got.pW / want[2]! - 1)).toBeLessThan(1e-9);
    });
  }
});

/** A run of ranks alone (one side, `numCandidates` each) for compareRuns. */
function ranksRun(ranks: number[], numCandidates: number) {
  const ev = new RankEvaluator({ numEntities: numCandidates, numRelations: 1 });
  ev.addRanks({ side: "tail", realistic: ranks, numCandidates: ranks.map(() => numCandidates) });
  return ev.finalize();
}

describe.skipIf(scipy.missing)(
  scipy.name("the randomization test against SciPy's permutation_test, d_z against numpy"),
  () => {
    // SciPy's paired randomization test: permutation_type='samples' swaps each pair's two values, statistic the mean
    // difference of the per-task values (1/rank for MRR, rank for MR, [rank <= 10] for Hits@10). Exact when
    // n_resamples >= 2^n (n = 12), else Monte Carlo with its own +1 correction, like ours. Its two-sided p is twice the
    // smaller one-sided p; the sign-flip null is symmetric, so that is our P(|D*| >= |D|). Tolerance: 4 standard
    // errors of the difference of the two estimates, sqrt(p(1 - p) (1 / B_ours + 1 / B_scipy)) (B_scipy = inf when
    // exact), plus 1 / B_ours + 1 / B_scipy for the +1 corrections.
    /** [p-value, statistic] of SciPy's test for each (x, y) pair of per-task values, in one Python process. */
    const permutation = (pairs: [number[], number[]][], resamples: number) =>
      py(
        "import json,sys,inspect; import numpy as np; from scipy import stats; c=json.load(sys.stdin);" +
          "kw={'rng' if 'rng' in inspect.signature(stats.permutation_test).parameters else 'random_state': 1}\n" +
          "def test(x, y):\n" +
          "  r=stats.permutation_test((np.array(y,float), np.array(x,float)), lambda a, b, axis: np.mean(a - b, axis=axis), permutation_type='samples'," +
          " vectorized=True, n_resamples=c['B'], alternative='two-sided', **kw)\n" +
          "  return [float(r.pvalue), float(r.statistic)]\n" +
          "print(json.dumps([test(x, y) for x, y in c['pairs']]))",
        { pairs, B: resamples },
      ) as [number, number][];
    const next = rng(17);
    const N = 50;
    const small = { a: [3, 1, 7, 2, 12, 5, 1, 9, 4, 2, 30, 6], b: [1, 2, 3, 2, 6, 9, 1, 2, 8, 1, 4, 3] };
    const bigA = Array.from({ length: 300 }, () => 1 + Math.floor(next() * 30));
    const bigB = bigA.map((r) => Math.max(1, Math.min(N, r + Math.floor(next() * 5) - 2)));
    const cases: [string, number[], number[], number][] = [
      ["n = 12, SciPy exact (all 4096 swaps)", small.a, small.b, 5000],
      ["n = 300, both Monte Carlo", bigA, bigB, 20000],
    ];
    const perTask: Record<string, (r: number) => number> = {
      mrr: (r) => 1 / r,
      mr: (r) => r,
      "hits@10": (r) => (r <= 10 ? 1 : 0),
    };
    for (const [what, ra, rb, scipyResamples] of cases) {
      it(
        what,
        () => {
          const samples = 20000;
          const exact = scipyResamples >= 2 ** ra.length;
          const metrics = Object.entries(perTask);
          const scipyResults = permutation(
            metrics.map(([, f]) => [ra.map(f), rb.map(f)]),
            scipyResamples,
          );
          for (const [k, [metric]] of metrics.entries()) {
            const [want, statistic] = scipyResults[k]!;
            const row = compareRuns([ranksRun(ra, N), ranksRun(rb, N)], { metrics: [metric], samples, seed: 3 })
              .rows[0]!;
            expect(row.difference).toBeCloseTo(statistic, 12);
            const se = Math.sqrt(
              Math.max(want * (1 - want), 1 / samples) * (1 / samples + (exact ? 0 : 1 / scipyResamples)),
            );
            const tol = 4 * se + 1 / samples + (exact ? 0 : 1 / scipyResamples);
            expect(
              Math.abs(row.pRandomization - want),
              `${metric}: ours ${row.pRandomization}, SciPy ${want}, tolerance ${tol}`,
            ).toBeLessThan(tol);
          }
        },
        120_000,
      );
    }

    it("compareRuns' d_z equals numpy's on the per-task differences, with the metric's direction", () => {
      const a = ranksRun(bigA, N);
      const b = ranksRun(bigB, N);
      const rows = compareRuns([a, b], { metrics: ["mrr", "mr", "amri"], samples: 100 }).rows;
      const [reciprocal, ranks] = py(
        "import json,sys; import numpy as np; print(json.dumps([float(np.mean(d) / np.std(d, ddof=1)) for d in map(np.array, json.load(sys.stdin))]))",
        [(r: number) => 1 / r, (r: number) => r].map((f) => bigA.map((r, i) => f(bigB[i]!) - f(r))),
      ) as number[];
      expect(rows[0]!.effectSize! / reciprocal! - 1).toBeCloseTo(0, 12);
      expect(rows[1]!.effectSize! / ranks! - 1).toBeCloseTo(0, 12);
      // AMRI falls as ranks rise: its d_z is minus that of the ranks.
      expect(rows[2]!.effectSize! / -ranks! - 1).toBeCloseTo(0, 12);
    });
  },
);

describe("compareRuns", () => {
  const nations = loadDataset("nations");
  const N = nations.numEntities;
  const { train, valid, test } = nations.splits;
  const baseline = new FrequencyBaseline(train, N, nations.numRelations);
  const run = (noise: number, seed: number) => {
    const ev = new RankEvaluator({ numEntities: N, filterTriples: [train, valid, test] });
    const next = rng(seed);
    for (const side of ["head", "tail"] as const) {
      const s = baseline.scoreBatch(test, side).map((x) => x + noise * Math.floor(next() * 4));
      ev.addSync({ triples: test, side, scores: s });
    }
    return ev.finalize();
  };
  const a = run(0, 1);
  const b = run(3, 2);
  const c = run(0.001, 3);

  it("values, differences, intervals and p-values per metric and run; Holm over all of them", () => {
    const cmp = compareRuns(
      [
        { name: "A", results: a },
        { name: "B", results: b },
        { name: "C", results: c },
      ],
      { samples: 2000, seed: 9 },
    );
    expect(cmp.names).toEqual(["A", "B", "C"]);
    expect(cmp.rows).toHaveLength(2 * 7);
    for (const r of cmp.rows) {
      const other = r.run === 1 ? b : c;
      expect(r.valueA).toBe(a.get(`both.realistic.${r.metric}`));
      expect(r.valueB).toBe(other.get(`both.realistic.${r.metric}`));
      expect(r.difference).toBeCloseTo(r.valueB - r.valueA, 15);
      expect(r.lower).toBeLessThanOrEqual(r.upper);
      expect(r.pRandomization).toBeGreaterThan(0);
      expect(r.pAdjusted).toBeGreaterThanOrEqual(r.pRandomization);
      expect(r.pTTest === null).toBe(r.metric === "median_rank");
    }
    const mrrB = cmp.rows.find((r) => r.metric === "inverse_harmonic_mean_rank" && r.run === 1)!;
    expect(mrrB.difference).toBeLessThan(0); // noisy scores rank worse
    expect(mrrB.pRandomization).toBeLessThan(0.01);
    expect(mrrB.upper).toBeLessThan(0);
    // Deterministic for a seed.
    expect(compareRuns([a, b], { samples: 200, seed: 4, metrics: ["mrr"] })).toEqual(
      compareRuns([a, b], { samples: 200, seed: 4, metrics: ["mrr"] }),
    );
  });

  it("the same numbers on every backend: the replicates' sums and medians come from the core or its twin, bit for bit", () => {
    // Each backend in its own process (the backend is chosen when the package loads), on runs with ties; metrics of
    // every kind: means, an adjusted and a z-scored mean (moments summed over the drawn tasks), the median and GMR
    // (totals of the swapped tasks), and the standard deviation (recomputed in JavaScript).
    const script = `
      const k = require(${JSON.stringify(process.cwd() + "/dist/cjs/index.js")});
      const runOf = (seed) => {
        const ev = new k.RankEvaluator({ numEntities: 300, numRelations: 1 });
        let x = seed;
        const next = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 4294967296);
        const realistic = Array.from({ length: 777 }, () => 1 + Math.floor(next() * 80) / 2);
        ev.addRanks({ side: "tail", realistic, numCandidates: realistic.map((r, i) => 150 + (i % 7)) });
        return ev.finalize();
      };
      const metrics = ["mrr", "hits@3", "mr", "amri", "z_mr", "median_rank", "gmr", "std"];
      const cmp = k.compareRuns([runOf(1), runOf(2), runOf(3)], { samples: 300, seed: 11, metrics });
      process.stdout.write(JSON.stringify(cmp.rows));
    `;
    const backends = ["native", "ts", ...(wasmCoreKernels() ? ["wasm"] : [])];
    const outputs = backends.map((backend) => {
      const r = runProcess(process.execPath, ["-e", script], { env: { KGRANK_BACKEND: backend } });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout;
    });
    // The observed values come from the metric kernels: GMR's through a log, which std::log and Math.log may round
    // apart in the last bit (parity.test.ts); everything else is the same bits.
    const logBased = ["valueA", "valueB", "difference"];
    const split = (out: string) => {
      const rows = JSON.parse(out) as Record<string, unknown>[];
      const gmr = rows.filter((r) => r.metric === "geometric_mean_rank");
      const strip = (r: Record<string, unknown>) =>
        r.metric === "geometric_mean_rank"
          ? Object.fromEntries(Object.entries(r).filter(([f]) => !logBased.includes(f)))
          : r;
      return { strict: JSON.stringify(rows.map(strip)), gmr };
    };
    const ref = split(outputs[0]!);
    expect(ref.gmr.length).toBe(2);
    expect(JSON.parse(outputs[0]!).length).toBe(16);
    for (const [i, out] of outputs.entries()) {
      const got = split(out);
      expect(got.strict, backends[i]).toBe(ref.strict);
      got.gmr.forEach((r, j) => {
        for (const f of logBased) {
          const want = ref.gmr[j]![f] as number;
          expect(Math.abs((r[f] as number) - want), `${backends[i]} ${f}`).toBeLessThanOrEqual(1e-12 * Math.abs(want));
        }
      });
    }
  });

  it("compareRunsAsync (between event-loop turns, for the CLI's compare and report) gives compareRuns' numbers bit for bit and stops at its signal", async () => {
    const runs = [
      { name: "A", results: a },
      { name: "B", results: b },
    ];
    const opts = { samples: 3000, seed: 5 };
    expect(await compareRunsAsync(runs, opts)).toEqual(compareRuns(runs, opts));
    let turns = 0;
    const ticking = setInterval(() => turns++, 1);
    const stop = new AbortController();
    setTimeout(() => stop.abort(new Error("stopped")), 20);
    await expect(compareRunsAsync(runs, { samples: 1e7 }, stop.signal)).rejects.toThrow("stopped");
    clearInterval(ticking);
    expect(turns).toBeGreaterThan(0);
  });

  it("the intervals' sort in steps equals Float64Array's sort bit for bit: NaN dropped, -0 before +0, infinities, blocks merged", () => {
    const next = rng(11);
    const special = [0, -0, Infinity, -Infinity, NaN, 5e-324, -5e-324];
    for (const n of [0, 1, 7, 1 << 14, (1 << 14) + 1, 70_001]) {
      const x = Float64Array.from({ length: n }, (_, i) =>
        i % 3 === 0 ? special[i % special.length]! : Math.round(next() * 40 - 20) / 8,
      );
      const want = x.filter((v) => v === v).sort();
      const got = runSteps(sortedNumbers(x));
      expect(got.length).toBe(want.length);
      expect(got.every((v, i) => Object.is(v, want[i]))).toBe(true);
    }
  });

  it("equals the definition recomputed metric by metric (every replicate's swaps or resampled tasks, the metric recomputed)", () => {
    // The straightforward form of the two resampling loops, run per metric with metricValues: compareRuns shares
    // each replicate's swaps and picks among metrics and takes means of per-task differences where it can.
    const metrics = ["mrr", "hits@3", "mr", "amri", "median_rank", "gmr"];
    const samples = 300;
    const seed = 5;
    const cmp = compareRuns([a, b], { samples, seed, metrics });
    const A = a.tasks();
    const B = b.tasks();
    const n = A.realistic.length;
    for (const [k, name] of metrics.entries()) {
      const row = cmp.rows[k]!;
      const value = (r: Float64Array, c: Float64Array) => metricValues([name], r, c)[row.metric]!;
      const observed = value(B.realistic, A.numCandidates) - value(A.realistic, A.numCandidates);
      let extreme = 0;
      const diffs: number[] = [];
      for (let s = 0; s < samples; s++) {
        const key = streamKey(streamKey(seed, 0x5a17 + 1), s);
        const ra = new Float64Array(n);
        const rb = new Float64Array(n);
        for (let i = 0; i < n; i++) {
          const swap = uniform01Keyed(key, i) < 0.5;
          ra[i] = swap ? B.realistic[i]! : A.realistic[i]!;
          rb[i] = swap ? A.realistic[i]! : B.realistic[i]!;
        }
        const stat = value(rb, A.numCandidates) - value(ra, A.numCandidates);
        if (Math.abs(stat) >= Math.abs(observed) - 1e-9 * Math.max(1, Math.abs(observed))) extreme++;
        const boot = streamKey(streamKey(seed, 0xb007 + 1), s);
        const nc = new Float64Array(n);
        for (let i = 0; i < n; i++) {
          const pick = Math.floor(uniform01Keyed(boot, i) * n);
          ra[i] = A.realistic[pick]!;
          rb[i] = B.realistic[pick]!;
          nc[i] = A.numCandidates[pick]!;
        }
        diffs.push(value(rb, nc) - value(ra, nc));
      }
      diffs.sort((x, y) => x - y);
      expect(row.metric).toBe(getMetric(name).key);
      expect(row.pRandomization, name).toBe((1 + extreme) / (1 + samples));
      // Interval ends: quantiles of the same replicates, up to the rounding of a mean of differences.
      expect(Math.abs(row.lower - quantile(Float64Array.from(diffs), 0.025)), name).toBeLessThan(
        1e-12 * Math.max(1, Math.abs(observed)),
      );
      expect(Math.abs(row.upper - quantile(Float64Array.from(diffs), 0.975)), name).toBeLessThan(
        1e-12 * Math.max(1, Math.abs(observed)),
      );
    }
    // The swap test at half the cost is exactly the uniform's.
    let differ = 0;
    let lower = 0;
    for (let t = 0; t < 200_000; t++) {
      const key = streamKey(t, 7);
      const half = uniform01Keyed(key, t * 31) < 0.5;
      if (lowerHalfKeyed(key, t * 31) !== half) differ++;
      if (half) lower++;
    }
    expect(differ).toBe(0);
    expect(Math.abs(lower - 100_000)).toBeLessThan(5 * Math.sqrt(50_000)); // both halves occur
  });

  it("the randomization p-value equals exact enumeration of all 2^n swaps within its Monte-Carlo error", () => {
    const ranksA = [1, 3, 2, 8, 1, 5, 4, 2, 7, 1];
    const ranksB = [2, 1, 6, 3, 1, 9, 2, 5, 1, 3];
    const mk = (ranks: number[]) => {
      const ev = new RankEvaluator({ numEntities: 10, numRelations: 1 });
      ev.addRanks({ side: "tail", realistic: ranks, numCandidates: ranks.map(() => 10) });
      return ev.finalize();
    };
    for (const metric of ["mrr", "median_rank", "gmr"]) {
      const key =
        metric === "mrr" ? "inverse_harmonic_mean_rank" : metric === "gmr" ? "geometric_mean_rank" : "median_rank";
      const stat = (x: number[], y: number[]) =>
        metricValues(
          [key],
          y,
          y.map(() => 10),
        )[key]! -
        metricValues(
          [key],
          x,
          x.map(() => 10),
        )[key]!;
      const observed = stat(ranksA, ranksB);
      let extreme = 0;
      const n = ranksA.length;
      for (let mask = 0; mask < 2 ** n; mask++) {
        const x = ranksA.map((r, i) => (mask & (1 << i) ? ranksB[i]! : r));
        const y = ranksB.map((r, i) => (mask & (1 << i) ? ranksA[i]! : r));
        if (Math.abs(stat(x, y)) >= Math.abs(observed) - 1e-12) extreme++;
      }
      const exact = extreme / 2 ** n;
      const samples = 20000;
      const got = compareRuns([mk(ranksA), mk(ranksB)], { metrics: [metric], samples, seed: 1 }).rows[0]!
        .pRandomization;
      expect(Math.abs(got - exact), `${metric}: ${got} vs exact ${exact}`).toBeLessThan(
        4 * Math.sqrt((exact * (1 - exact)) / samples) + 1 / samples,
      );
    }
  });

  it("identical runs: d_z 0 (not NaN), randomization p 1, t-test and Wilcoxon undefined (NaN, as SciPy)", () => {
    const rows = compareRuns([a, a], { samples: 200 }).rows;
    for (const r of rows) {
      expect(r.difference).toBe(0);
      expect(r.pRandomization).toBe(1);
      if (r.effectSize !== null) expect(Object.is(r.effectSize, 0), `${r.metric}: ${r.effectSize}`).toBe(true);
    }
    // Effect sizes exist for the plain means (MRR, MR, Hits@k), so the check above ran.
    expect(rows.some((r) => r.effectSize !== null)).toBe(true);
    expect(pairedTests([0.5, 0.5, 0.5]).dz).toBe(Infinity);
    expect(pairedTests([-2, -2]).dz).toBe(-Infinity);
    expect(pairedTests([0, 0, 0]).dz).toBe(0);
  });

  it("addRanks({ triples }) keeps task identity; with labels, runs are matched by label, not id", () => {
    const mk = (triples: number[], ranks: number[]) => {
      const ev = new RankEvaluator({ numEntities: 5, numRelations: 2 });
      ev.addRanks({ side: "tail", realistic: ranks, numCandidates: ranks.map(() => 5), triples });
      return ev.finalize();
    };
    const x = mk([0, 0, 1, 2, 1, 3], [1, 2]);
    expect(Array.from(x.tasks().tail)).toEqual([1, 3]);
    expect(Array.from(x.tasks().relation)).toEqual([0, 1]);
    // The same tasks under other ids: equal by label, refused by id.
    const y = mk([3, 1, 4, 0, 0, 1], [2, 2]);
    const lx = { entities: ["a", "b", "c", "d", "e"], relations: ["r", "s"] };
    const ly = { entities: ["c", "d", "e", "a", "b"], relations: ["s", "r"] };
    expect(
      compareRuns(
        [
          { name: "x", results: x, labels: lx },
          { name: "y", results: y, labels: ly },
        ],
        { samples: 20 },
      ).tasks,
    ).toBe(2);
    expect(() =>
      compareRuns(
        [
          { name: "x", results: x },
          { name: "y", results: y },
        ],
        { samples: 20 },
      ),
    ).toThrow(/task 0 differs: x has tail \(0, 0, 1\), y has tail \(3, 1, 4\)/);
    const lz = { ...ly, entities: ["c", "d", "e", "a", "z"] };
    expect(() =>
      compareRuns(
        [
          { name: "x", results: x, labels: lx },
          { name: "z", results: y, labels: lz },
        ],
        { samples: 20 },
      ),
    ).toThrow(/task 0 differs: x has tail \(a, r, b\), z has tail \(a, r, z\)/);
  });

  it("Holm and Benjamini-Hochberg adjust as defined", () => {
    // Hand-worked: p = [0.01, 0.04, 0.03] -> Holm [0.03, 0.06, 0.06]; BH [0.03, 0.04, 0.04].
    const mk = (ranks: number[]) => {
      const ev = new RankEvaluator({ numEntities: 50 });
      ev.addRanks({ side: "tail", realistic: ranks, numCandidates: ranks.map(() => 50) });
      return ev.finalize();
    };
    const x = mk(Array.from({ length: 40 }, (_, i) => 1 + (i % 7)));
    const y = mk(Array.from({ length: 40 }, (_, i) => 1 + ((i * 3) % 11)));
    const holm = compareRuns([x, y], { samples: 500, metrics: ["mrr", "mr", "hits@3"] }).rows;
    const bh = compareRuns([x, y], { samples: 500, metrics: ["mrr", "mr", "hits@3"], correction: "bh" }).rows;
    const p = holm.map((r) => r.pRandomization);
    const order = [...p.keys()].sort((i, j) => p[i]! - p[j]!);
    const wantHolm = new Array<number>(3);
    let run = 0;
    order.forEach((i, k) => (wantHolm[i] = run = Math.max(run, Math.min(1, (3 - k) * p[i]!))));
    expect(holm.map((r) => r.pAdjusted)).toEqual(wantHolm);
    const wantBh = new Array<number>(3);
    let low = 1;
    for (let k = 2; k >= 0; k--) wantBh[order[k]!] = low = Math.min(low, Math.min(1, (3 * p[order[k]!]!) / (k + 1)));
    expect(bh.map((r) => r.pAdjusted)).toEqual(wantBh);
  });

  it("refuses runs over other tasks, naming the first difference, and bad options", () => {
    const ev = new RankEvaluator({ numEntities: N, filterTriples: [train, valid, test] });
    const s = baseline.scoreBatch(test, "tail");
    ev.addSync({ triples: test, side: "tail", scores: s });
    const tailOnly = ev.finalize();
    expect(() => compareRuns([a, tailOnly])).toThrow(/has 201 tasks, run 0 402/);
    const unfiltered = new RankEvaluator({ numEntities: N });
    for (const side of ["head", "tail"] as const)
      unfiltered.addSync({ triples: test, side, scores: baseline.scoreBatch(test, side) });
    expect(() => compareRuns([a, unfiltered.finalize()])).toThrow(
      /task \d+ head \(\d+, \d+, \d+\) has \d+ candidates in run 0, 14 in run 1: evaluated with other filter settings/,
    );
    for (const [o, arg] of [
      [{ samples: 3 }, "samples"],
      [{ correction: "sidak" }, "correction"],
      [{ seed: -1 }, "seed"],
      [{ metrics: "mrr" }, "metrics"],
    ] as const) {
      expect(() => compareRuns([a, b], o as never)).toThrow(KgrankInputError);
      try {
        compareRuns([a, b], o as never);
      } catch (e) {
        expect((e as KgrankInputError).argument).toBe(arg);
      }
    }
    expect(() => compareRuns([a])).toThrow(/at least two runs/);
  });
});
