/**
 * Full-ranking MRR and Hits@k from sampled-negative ranks (src/evaluation/sampled-negatives.ts, Krichene & Rendle
 * 2020): exact where the answer is known (every other candidate sampled: r = R), the sampling matrix A against an
 * enumeration of every draw, the corrections against the loss minimised directly, and a simulation on UMLS where the
 * full ranks are known: minimum-bias's MRR is closer to the full one than the sampled mean, minimum-mse's is pulled to
 * the uniform prior (the baseline's truths sit near the top), and from ranks drawn from the prior both are close.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";

import { correctionTables, sampledRankMatrix } from "../src/evaluation/sampled-negatives";
import {
  estimateFromSampledRanks,
  FrequencyBaseline,
  KgrankInputError,
  loadDataset,
  RankEvaluator,
} from "../src/index";
import { streamKey, uniform01Keyed } from "../src/numeric/random";
import { expectInputError } from "./helpers/errors";

const reciprocal = (R: number) => 1 / R;
const hits = (k: number) => (R: number) => (R <= k ? 1 : 0);

/** x with M x = b, M dense (n x n, row-major arrays): Gaussian elimination with partial pivoting. */
function gaussSolve(M: number[][], b: number[]): number[] {
  const n = b.length;
  const a = M.map((row, i) => [...row, b[i]!]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[p]![c]!)) p = r;
    [a[c], a[p]] = [a[p]!, a[c]!];
    for (let r = c + 1; r < n; r++) {
      const f = a[r]![c]! / a[c]![c]!;
      for (let k = c; k <= n; k++) a[r]![k]! -= f * a[c]![k]!;
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    let s = a[r]![n]!;
    for (let k = r + 1; k < n; k++) s -= a[r]![k]! * x[k]!;
    x[r] = s / a[r]![r]!;
  }
  return x;
}

/** sum_R p(R) [(E[f~|R] - f(R))^2 + gamma Var(f~|R)], the uniform prior. */
function loss(A: ArrayLike<number>[], f: (R: number) => number, ft: ArrayLike<number>, gamma: number): number {
  let out = 0;
  A.forEach((row, at) => {
    let m = 0;
    let m2 = 0;
    for (let j = 0; j < row.length; j++) {
      m += row[j]! * ft[j]!;
      m2 += row[j]! * ft[j]! ** 2;
    }
    out += ((m - f(at + 1)) ** 2 + gamma * (m2 - m * m)) / A.length;
  });
  return out;
}

/** The least-squares residual sum_R (E[f~|R] - f(R))^2: the bias. */
function bias2(A: ArrayLike<number>[], f: (R: number) => number, ft: ArrayLike<number>): number {
  return A.reduce((s, row, at) => {
    let m = 0;
    for (let j = 0; j < row.length; j++) m += row[j]! * ft[j]!;
    return s + (m - f(at + 1)) ** 2;
  }, 0);
}

describe("estimateFromSampledRanks: exact cases", () => {
  it("every other candidate sampled (K = N - 1, without replacement): r = R, every estimator is the full metric", () => {
    const N = 20;
    const ranks = [1, 1, 2, 3, 5, 8, 13, 20, 4, 10, 11];
    const few = [1, 2, 4];
    const est = estimateFromSampledRanks({ ranks, numNegatives: N - 1, numCandidates: N, ks: [1, 3, 10] });
    const mean = (f: (R: number) => number) => ranks.reduce((a, r) => a + f(r), 0) / ranks.length;
    const want: Record<string, number> = {
      inverse_harmonic_mean_rank: mean(reciprocal),
      hits_at_1: mean(hits(1)),
      hits_at_3: mean(hits(3)),
      hits_at_10: mean(hits(10)),
    };
    expect(Object.keys(est.values)).toEqual(["sampled", "minimum-mse", "minimum-bias"]);
    for (const [name, byMetric] of Object.entries(est.values)) {
      expect(Object.keys(byMetric)).toEqual(Object.keys(want));
      for (const [key, v] of Object.entries(byMetric))
        expect(Math.abs(v.estimate - want[key]!), `${name} ${key}`).toBeLessThanOrEqual(1e-12);
    }
    expect(est).toMatchObject({ numCandidates: N, numNegatives: N - 1, tasks: ranks.length, replacement: false });
    // A repeated cut-off is one metric.
    expect(
      Object.keys(
        estimateFromSampledRanks({ ranks: few, numNegatives: 3, numCandidates: N, ks: [3, 3] }).values.sampled!,
      ),
    ).toEqual(["inverse_harmonic_mean_rank", "hits_at_3"]);
  });

  it("a half-integer rank (ties) is the mean of its two neighbours' corrected values", () => {
    const base = { numNegatives: 10, numCandidates: 135, estimators: ["minimum-mse" as const] };
    const v = (ranks: number[]) => estimateFromSampledRanks({ ...base, ranks }).values["minimum-mse"]!;
    const half = v([2.5]);
    const two = v([2]);
    const three = v([3]);
    for (const key of Object.keys(half))
      expect(half[key]!.estimate).toBeCloseTo((two[key]!.estimate + three[key]!.estimate) / 2, 14);
    // The sampled mean takes f of the rank as given, as RankEvaluator does for realistic ranks.
    expect(
      estimateFromSampledRanks({ ...base, ranks: [2.5], estimators: ["sampled"] }).values.sampled!
        .inverse_harmonic_mean_rank!.estimate,
    ).toBe(0.4);
  });
});

describe("the sampling matrix and the corrections, N = 7, K = 3", () => {
  const N = 7;
  const K = 3;

  it("A equals an enumeration of every draw of K of the N - 1 others (without replacement and with)", () => {
    // The others are 0..5; the first R - 1 of them score above the true entity.
    for (const replacement of [false, true]) {
      const A = sampledRankMatrix(N, K, replacement);
      expect(A).toHaveLength(N);
      for (let R = 1; R <= N; R++) {
        const count = new Array<number>(K + 1).fill(0);
        let draws = 0;
        const visit = (picked: number[], from: number): void => {
          if (picked.length === K) {
            count[picked.filter((o) => o < R - 1).length]!++;
            draws++;
            return;
          }
          for (let o = replacement ? 0 : from; o < N - 1; o++) visit([...picked, o], o + 1);
        };
        visit([], 0);
        expect(draws).toBe(replacement ? 216 : 20);
        for (let j = 0; j <= K; j++)
          expect(Math.abs(A[R - 1]![j]! - count[j]! / draws), `R ${R} j ${j}`).toBeLessThanOrEqual(1e-15);
      }
    }
  });

  it("the corrections solve the normal equations (a separate elimination) and minimise the loss", () => {
    const A = sampledRankMatrix(N, K, false);
    for (const f of [reciprocal, hits(1), hits(3)]) {
      for (const gamma of [1, 0.3, 0.01]) {
        const [ft] = correctionTables(N, K, false, [f], gamma);
        // ((1 - gamma) A^T A + gamma D) x = A^T f, the prior's 1/N on both sides.
        const M = Array.from({ length: K + 1 }, (_, i) =>
          Array.from({ length: K + 1 }, (_, j) => {
            let g = 0;
            for (const row of A) g += row[i]! * row[j]!;
            const d = i === j ? A.reduce((s, row) => s + row[i]!, 0) : 0;
            return (1 - gamma) * g + gamma * d;
          }),
        );
        const b = Array.from({ length: K + 1 }, (_, i) => A.reduce((s, row, at) => s + row[i]! * f(at + 1), 0));
        const x = gaussSolve(M, b);
        for (let j = 0; j <= K; j++) expect(Math.abs(ft![j]! - x[j]!), `gamma ${gamma} j ${j}`).toBeLessThan(1e-12);
        // No step along any coordinate lowers the loss.
        const at = loss(A, f, ft!, gamma);
        for (let j = 0; j <= K; j++) {
          for (const step of [-1e-4, 1e-4]) {
            const moved = Float64Array.from(ft!);
            moved[j]! += step;
            expect(loss(A, f, moved, gamma)).toBeGreaterThan(at);
          }
        }
      }
    }
  });

  it("gamma -> 0: E[f~|R] fits f(R) in least squares, no worse than minimum-mse's", () => {
    const A = sampledRankMatrix(N, K, false);
    for (const f of [reciprocal, hits(1), hits(3)]) {
      const [mse] = correctionTables(N, K, false, [f], 1);
      const [tiny] = correctionTables(N, K, false, [f], 1e-9);
      const [small] = correctionTables(N, K, false, [f], 0.01);
      // The least-squares fit itself (gamma = 0) by the separate elimination.
      const M = Array.from({ length: K + 1 }, (_, i) =>
        Array.from({ length: K + 1 }, (_, j) => A.reduce((s, row) => s + row[i]! * row[j]!, 0)),
      );
      const ls = gaussSolve(
        M,
        Array.from({ length: K + 1 }, (_, i) => A.reduce((s, row, at) => s + row[i]! * f(at + 1), 0)),
      );
      expect(bias2(A, f, tiny!)).toBeLessThanOrEqual(bias2(A, f, ls) + 1e-9);
      expect(bias2(A, f, small!)).toBeLessThanOrEqual(bias2(A, f, mse!));
      expect(bias2(A, f, tiny!)).toBeLessThanOrEqual(bias2(A, f, small!) + 1e-12);
    }
  });
});

describe("estimateFromSampledRanks on UMLS: sampled ranks simulated from known full ranks", () => {
  const umls = loadDataset("umls");
  const { train, valid, test } = umls.splits;
  const baseline = new FrequencyBaseline(train, umls.numEntities, umls.numRelations);
  const ev = new RankEvaluator({
    numEntities: umls.numEntities,
    numRelations: umls.numRelations,
    filterTriples: [train, valid, test],
  });
  for (const side of ["head", "tail"] as const)
    ev.addSync({ triples: test, side, scores: baseline.scoreBatch(test, side) });
  const tasks = ev.finalize().tasks();
  const n = tasks.realistic.length;
  // Integer full ranks: ties broken uniformly at random (seeded), so the exact MRR is that of these R_i.
  const tieKey = streamKey(7, 1);
  const full = Float64Array.from(tasks.optimistic, (lo, i) => {
    const width = tasks.pessimistic[i]! - lo + 1;
    return lo + Math.floor(uniform01Keyed(tieKey, i) * width);
  });
  const exactMrr = full.reduce((a, R) => a + 1 / R, 0) / n;
  const meanCandidates = Math.round(tasks.numCandidates.reduce((a, c) => a + c, 0) / n);

  /** j_i ~ Hypergeometric(N_i - 1, R_i - 1, min(K, N_i - 1)): the negatives above the truth among a uniform draw. */
  function simulate(
    K: number,
    seed: number,
    ranks: Float64Array = full,
    candidates = (i: number) => tasks.numCandidates[i]!,
  ): Float64Array {
    return Float64Array.from(ranks, (R, i) => {
      const key = streamKey(seed, i);
      let population = candidates(i) - 1;
      let above = R - 1;
      let j = 0;
      const draws = Math.min(K, population);
      for (let d = 0; d < draws; d++) {
        if (uniform01Keyed(key, d) * population < above) {
          j++;
          above--;
        }
        population--;
      }
      return j + 1;
    });
  }

  // Measured (exact filtered MRR 0.6687 over 1322 tasks, N = round(mean N_i) = 116; |estimate - exact|):
  //   K = 10: sampled 0.2209, minimum-mse 0.4529, minimum-bias 0.1863
  //   K = 50: sampled 0.0914, minimum-mse 0.1893, minimum-bias 0.0197
  // The frequency baseline puts most truths near the top (filtered MRR 0.67), far from the uniform prior the
  // corrections assume: minimum-mse, the posterior mean of 1/R, is pulled towards the prior's mean H_N / N (0.046)
  // and ends further from the truth than the sampled mean; minimum-bias, nearly unbiased whatever the prior, is closer.
  for (const K of [10, 50]) {
    it(`K = ${K}: minimum-bias is closer to the exact full MRR than the sampled mean; minimum-mse is pulled to the prior`, () => {
      const est = estimateFromSampledRanks({
        ranks: simulate(K, 11),
        numNegatives: K,
        numCandidates: meanCandidates,
      });
      const mrr = (e: "sampled" | "minimum-mse" | "minimum-bias") =>
        est.values[e]!.inverse_harmonic_mean_rank!.estimate;
      const error = (e: "sampled" | "minimum-mse" | "minimum-bias") => Math.abs(mrr(e) - exactMrr);
      expect(error("minimum-bias")).toBeLessThan(error("sampled"));
      expect(mrr("sampled")).toBeGreaterThan(exactMrr);
      expect(mrr("minimum-mse")).toBeLessThan(exactMrr);
    });
  }

  // Where the prior holds (full ranks uniform on 1..N, one N for every task) both corrections beat the sampled mean.
  // Measured (exact MRR 0.0452, N = 116, 1322 tasks; estimates): K = 10: sampled 0.2749, minimum-mse 0.0462,
  // minimum-bias 0.0479; K = 50: sampled 0.0873, minimum-mse 0.0452, minimum-bias 0.0441.
  it("full ranks from the uniform prior: both corrections are closer to the exact MRR than the sampled mean", () => {
    const N = 116;
    const key = streamKey(1, 0);
    const uniformFull = Float64Array.from({ length: n }, (_, i) => 1 + Math.floor(uniform01Keyed(key, i) * N));
    const exact = uniformFull.reduce((a, R) => a + 1 / R, 0) / n;
    for (const K of [10, 50]) {
      const ranks = simulate(K, 9, uniformFull, () => N);
      const est = estimateFromSampledRanks({ ranks, numNegatives: K, numCandidates: N });
      const error = (e: "sampled" | "minimum-mse" | "minimum-bias") =>
        Math.abs(est.values[e]!.inverse_harmonic_mean_rank!.estimate - exact);
      expect(error("minimum-mse"), `K ${K}`).toBeLessThan(error("sampled") / 10);
      expect(error("minimum-bias"), `K ${K}`).toBeLessThan(error("sampled") / 10);
    }
  });

  it("bootstrap intervals: seeded, the same for a seed, around the estimate", () => {
    const opts = {
      ranks: simulate(50, 3),
      numNegatives: 50,
      numCandidates: meanCandidates,
      bootstrap: { samples: 200, seed: 5, confidenceLevel: 0.9 },
    };
    const a = estimateFromSampledRanks(opts);
    expect(estimateFromSampledRanks(opts)).toEqual(a);
    for (const byMetric of Object.values(a.values)) {
      for (const v of Object.values(byMetric)) {
        expect(v.lower).toBeLessThanOrEqual(v.estimate);
        expect(v.upper).toBeGreaterThanOrEqual(v.estimate);
        expect(v.upper! - v.lower!).toBeLessThan(0.2);
      }
    }
  });
});

describe("estimateFromSampledRanks with one N per task (negatives drawn from each task's filtered candidates)", () => {
  // Tasks of three candidate counts; the estimate over all of them is the task-weighted mean of each group's own.
  const groups = [
    { N: 40, ranks: [1, 2, 2.5, 7, 11] },
    { N: 15, ranks: [1, 1, 3, 11, 4, 6, 2] },
    { N: 120, ranks: [9, 1, 2] },
  ];
  const ranks = groups.flatMap((g) => g.ranks);
  // Interleaved, so grouping must not depend on the order of the tasks.
  const order = ranks.map((_, i) => (i * 7) % ranks.length);
  const counts = groups.flatMap((g) => g.ranks.map(() => g.N));
  const K = 10;
  it("equals the weighted mean of the groups' estimates, for every estimator and metric, tasks in any order", () => {
    const whole = estimateFromSampledRanks({
      ranks: order.map((i) => ranks[i]!),
      numNegatives: K,
      numCandidates: order.map((i) => counts[i]!),
      ks: [1, 3],
    });
    expect(whole.numCandidates).toEqual({ min: 15, max: 120, distinct: 3 });
    const parts = groups.map((g) =>
      estimateFromSampledRanks({ ranks: g.ranks, numNegatives: K, numCandidates: g.N, ks: [1, 3] }),
    );
    for (const [est, byMetric] of Object.entries(whole.values)) {
      for (const [key, v] of Object.entries(byMetric!)) {
        const want = parts.reduce(
          (s, p, g) => s + (groups[g]!.ranks.length * p.values[est as "sampled"]![key]!.estimate) / ranks.length,
          0,
        );
        expect(v.estimate, `${est} ${key}`).toBeCloseTo(want, 13);
      }
    }
  });
  it("one N for every task given as an array is the scalar call", () => {
    const a = estimateFromSampledRanks({ ranks, numNegatives: K, numCandidates: ranks.map(() => 40) });
    const b = estimateFromSampledRanks({ ranks, numNegatives: K, numCandidates: 40 });
    expect(a.values).toEqual(b.values);
    expect(a.numCandidates).toEqual({ min: 40, max: 40, distinct: 1 });
  });
  it("N = 2 with replacement (every j but 0 and K impossible) gives finite corrections", () => {
    const est = estimateFromSampledRanks({
      ranks: [1, 5, 1],
      numNegatives: 4,
      numCandidates: [2, 2, 3],
      replacement: true,
    });
    // With N = 2 a sampled rank of 1 means R = 1 and of K + 1 means R = 2: every estimator but the plain mean is exact.
    for (const e of ["minimum-mse", "minimum-bias"] as const) {
      const mrr = est.values[e]!.inverse_harmonic_mean_rank!.estimate;
      expect(Number.isFinite(mrr)).toBe(true);
    }
    const exact = estimateFromSampledRanks({ ranks: [1, 5], numNegatives: 4, numCandidates: 2, replacement: true });
    expect(exact.values["minimum-mse"]!.inverse_harmonic_mean_rank!.estimate).toBeCloseTo(0.75, 12);
    expect(exact.values["minimum-bias"]!.inverse_harmonic_mean_rank!.estimate).toBeCloseTo(0.75, 2);
  });
  it("refuses an array of another length, a count below 2 and a K no task's candidates allow", () => {
    expectInputError(
      () => estimateFromSampledRanks({ ranks: [1, 2], numNegatives: 3, numCandidates: [10] }),
      "numCandidates",
      /one per rank \(2\)/,
    );
    expectInputError(
      () => estimateFromSampledRanks({ ranks: [1, 2], numNegatives: 3, numCandidates: [10, 1], replacement: true }),
      "numCandidates",
    );
    expectInputError(
      () => estimateFromSampledRanks({ ranks: [1, 2], numNegatives: 3, numCandidates: [10, 3] }),
      "numNegatives",
      /numCandidates\[1\]/,
    );
  });
});

describe("estimateFromSampledRanks: bad input names the argument", () => {
  const ok = { ranks: [1, 2, 3], numNegatives: 10, numCandidates: 100 };
  it("a rank outside 1..K + 1", () => {
    expectInputError(() => estimateFromSampledRanks({ ...ok, ranks: [1, 12] }), "ranks", /from 1 to 11/);
    expectInputError(() => estimateFromSampledRanks({ ...ok, ranks: [0] }), "ranks");
  });
  it("a NaN rank", () => expectInputError(() => estimateFromSampledRanks({ ...ok, ranks: [1, NaN] }), "ranks"));
  it("a rank that is neither an integer nor a half-integer", () =>
    expectInputError(() => estimateFromSampledRanks({ ...ok, ranks: [1.25] }), "ranks", /half-integer/));
  it("no ranks", () => expectInputError(() => estimateFromSampledRanks({ ...ok, ranks: [] }), "ranks"));
  it("K >= N without replacement", () => {
    expectInputError(() => estimateFromSampledRanks({ ...ok, numNegatives: 100 }), "numNegatives", /replacement: true/);
    expect(estimateFromSampledRanks({ ...ok, numNegatives: 100, replacement: true }).numNegatives).toBe(100);
  });
  it("a non-integer K or N", () => {
    expectInputError(() => estimateFromSampledRanks({ ...ok, numNegatives: 2.5 }), "numNegatives");
    expectInputError(() => estimateFromSampledRanks({ ...ok, numCandidates: 99.5 }), "numCandidates");
  });
  it("an unknown estimator", () =>
    expectInputError(
      () => estimateFromSampledRanks({ ...ok, estimators: ["unbiased" as never] }),
      "estimators",
      /minimum-mse/,
    ));
  it("bad ks", () => {
    expectInputError(() => estimateFromSampledRanks({ ...ok, ks: [] }), "ks");
    expectInputError(() => estimateFromSampledRanks({ ...ok, ks: [0] }), "ks[0]");
  });
  it("a bad bootstrap", () => {
    expectInputError(() => estimateFromSampledRanks({ ...ok, bootstrap: { samples: 1 } }), "bootstrap.samples");
    expectInputError(
      () => estimateFromSampledRanks({ ...ok, bootstrap: { samples: 10, confidenceLevel: 2 } }),
      "bootstrap.confidenceLevel",
    );
  });
  it("a gamma outside (0, 1]", () => expectInputError(() => estimateFromSampledRanks({ ...ok, gamma: 0 }), "gamma"));
  it("N too large for the estimator, saying which fits", () => {
    const big = { ranks: [1], numNegatives: 500, numCandidates: 20_000_000 };
    expectInputError(() => estimateFromSampledRanks(big), "numCandidates", /"sampled" fit/);
    // WikiKG2's shape (OGB's K = 500): minimum-mse fits, minimum-bias does not.
    expectInputError(
      () => estimateFromSampledRanks({ ...big, numCandidates: 2_500_604 }),
      "numCandidates",
      /"sampled" and "minimum-mse" fit: pass estimators/,
    );
    expect(estimateFromSampledRanks({ ...big, estimators: ["sampled"] }).values.sampled).toBeDefined();
  });
  it("an unknown option", () =>
    expectInputError(() => estimateFromSampledRanks({ ...ok, negatives: 3 } as never), "options"));
});

describe("estimateFromSampledRanks under random inputs (property)", () => {
  it("any ranks, K, N (one or per task) and replacement: a KgrankInputError, or finite estimates in range", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: -1, max: 14 }), fc.double({ min: 0, max: 14, noNaN: true })), {
          maxLength: 20,
        }),
        fc.integer({ min: -1, max: 12 }),
        fc.oneof(fc.integer({ min: 0, max: 60 }), fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 20 })),
        fc.boolean(),
        (ranks, K, numCandidates, replacement) => {
          let est;
          try {
            est = estimateFromSampledRanks({ ranks, numNegatives: K, numCandidates, replacement, ks: [1, 3] });
          } catch (e) {
            expect(e).toBeInstanceOf(KgrankInputError);
            return;
          }
          expect(est.tasks).toBe(ranks.length);
          for (const [name, byMetric] of Object.entries(est.values)) {
            for (const [key, v] of Object.entries(byMetric!)) {
              expect(Number.isFinite(v.estimate), `${name} ${key}`).toBe(true);
              // The plain mean and the posterior mean are averages of values in [0, 1]; minimum-bias is not clipped.
              if (name !== "minimum-bias") expect(v.estimate >= -1e-12 && v.estimate <= 1 + 1e-12).toBe(true);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
