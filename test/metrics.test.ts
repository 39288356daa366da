/** The catalogue, the resolver and value() of every metric, against plain reference implementations. */
import * as path from "node:path";

import fc from "fast-check";
import { describe, expect, it } from "vitest";

import {
  getMetric,
  KgrankInputError,
  listMetrics,
  loadDataset,
  metricValues,
  prepareCandidates,
  RankEvaluator,
  readTriples,
  UnknownMetricError,
} from "../src/index";
import {
  FIXED_METRIC_KEYS,
  METRIC_SYNONYMS,
  metricSelection,
  type MetricQuery,
  parseMetricKey,
} from "../src/metrics/index";
import { refMedian, refValue, relErr } from "./helpers/metrics-reference";
import { closest } from "../src/text/suggest";
import { rng } from "./helpers/reference";
import { expectInputError } from "./helpers/errors";

const BASE_KEYS = [
  "arithmetic_mean_rank",
  "geometric_mean_rank",
  "harmonic_mean_rank",
  "median_rank",
  "hits_at_10",
  "standard_deviation",
  "variance",
  "median_absolute_deviation",
  "count",
  "inverse_arithmetic_mean_rank",
  "inverse_geometric_mean_rank",
  "inverse_harmonic_mean_rank",
  "inverse_median_rank",
];
const ALL_KEYS = [
  ...BASE_KEYS,
  "adjusted_arithmetic_mean_rank",
  "adjusted_arithmetic_mean_rank_index",
  "adjusted_geometric_mean_rank_index",
  "adjusted_inverse_harmonic_mean_rank",
  "adjusted_hits_at_10",
  "z_arithmetic_mean_rank",
  "z_geometric_mean_rank",
  "z_inverse_harmonic_mean_rank",
  "z_hits_at_10",
];

describe("catalogue", () => {
  it("lists every metric of Hoyt et al. 2022 under its PyKEEN key", () => {
    const keys = listMetrics().map((m) => m.key);
    for (const k of ALL_KEYS) expect(keys).toContain(k);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("every metric carries the fields of RankMetric", () => {
    for (const m of listMetrics()) {
      expect(typeof m.name).toBe("string");
      expect(Array.isArray(m.synonyms)).toBe(true);
      expect(typeof m.increasing).toBe("boolean");
      expect(m.valueRange).toHaveProperty("lowerInclusive");
      expect(m.supportedRankTypes.length).toBeGreaterThan(0);
      expect(typeof m.closedExpectation).toBe("boolean");
    }
  });

  it("directions and closed forms follow the definitions", () => {
    expect(getMetric("mr").increasing).toBe(false);
    expect(getMetric("mrr").increasing).toBe(true);
    expect(getMetric("zmr").increasing).toBe(true);
    expect(getMetric("amri").increasing).toBe(true);
    expect(getMetric("amr").increasing).toBe(false);
    expect(getMetric("gmr").closedVariance).toBe(true);
    expect(getMetric("hmr").closedExpectation).toBe(false);
    expect(getMetric("zmrr").needsCandidates).toBe(true);
    expect(getMetric("mrr").needsCandidates).toBe(false);
    expect(getMetric("zmrr").supportedRankTypes).toEqual(["realistic"]);
  });
});

describe("getMetric resolves keys, synonyms and class-style names case-insensitively", () => {
  const cases: [string, string][] = [
    ["mr", "arithmetic_mean_rank"],
    ["MR", "arithmetic_mean_rank"],
    ["mean_rank", "arithmetic_mean_rank"],
    ["ArithmeticMeanRank", "arithmetic_mean_rank"],
    ["mrr", "inverse_harmonic_mean_rank"],
    ["mean_reciprocal_rank", "inverse_harmonic_mean_rank"],
    ["InverseHarmonicMeanRank", "inverse_harmonic_mean_rank"],
    ["igmr", "inverse_geometric_mean_rank"],
    ["gmr", "geometric_mean_rank"],
    ["hmr", "harmonic_mean_rank"],
    ["amri", "adjusted_arithmetic_mean_rank_index"],
    ["AdjustedArithmeticMeanRankIndex", "adjusted_arithmetic_mean_rank_index"],
    ["amr", "adjusted_arithmetic_mean_rank"],
    ["zmrr", "z_inverse_harmonic_mean_rank"],
    ["zmr", "z_arithmetic_mean_rank"],
    ["zgmr", "z_geometric_mean_rank"],
    ["gmri", "adjusted_geometric_mean_rank_index"],
    ["amrr", "adjusted_inverse_harmonic_mean_rank"],
    ["adjusted_mrr", "adjusted_inverse_harmonic_mean_rank"],
    ["std", "standard_deviation"],
    ["rank_var", "variance"],
    ["mad", "median_absolute_deviation"],
    ["rank_count", "count"],
    ["iamr", "inverse_arithmetic_mean_rank"],
    ["hits@10", "hits_at_10"],
    ["h@10", "hits_at_10"],
    ["hits@3", "hits_at_3"],
    ["hits_at_3", "hits_at_3"],
    ["Hits_At_7", "hits_at_7"],
    ["HitsAtK", "hits_at_10"],
    ["ah@10", "adjusted_hits_at_10"],
    ["ahits@5", "adjusted_hits_at_5"],
    ["adjusted_hits_at_3", "adjusted_hits_at_3"],
    ["AdjustedHitsAtK", "adjusted_hits_at_10"],
    ["z_hits_at_1", "z_hits_at_1"],
    ["zh@2", "z_hits_at_2"],
    ["ZHitsAtK", "z_hits_at_10"],
    ["median_rank", "median_rank"],
    ["imr", "inverse_median_rank"],
  ];
  for (const [query, key] of cases) {
    it(`${query} -> ${key}`, () => expect(getMetric(query).key).toBe(key));
  }

  it("adjusted and z Hits@k keep k in their key (unlike PyKEEN)", () => {
    expect(getMetric("ah@3").key).toBe("adjusted_hits_at_3");
    expect(getMetric("z_hits_at_3").key).toBe("z_hits_at_3");
  });

  it("unknown names throw UnknownMetricError listing the closest names", () => {
    try {
      getMetric("mrrr");
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(UnknownMetricError);
      expect((e as UnknownMetricError).suggestions).toContain("mrr");
      expect((e as UnknownMetricError).code).toBe("KGRANK_UNKNOWN_METRIC");
    }
  });

  it("hits with k = 0 and non-string queries are input errors", () => {
    expect(() => getMetric("hits@0")).toThrow(/k >= 1/);
    expect(() => getMetric(3 as unknown as string)).toThrow(KgrankInputError);
    expect(() => getMetric("")).toThrow(/query/);
  });
});

describe("metric names as types", () => {
  it("the literal key and synonym lists (for editor completion) are exactly the catalogue's", () => {
    const fixed = listMetrics().filter((m) => !/_at_\d+$/.test(m.key));
    expect([...FIXED_METRIC_KEYS]).toEqual(fixed.map((m) => m.key));
    expect([...METRIC_SYNONYMS].sort()).toEqual(fixed.flatMap((m) => m.synonyms).sort());
    const typed: MetricQuery[] = ["mrr", "hits@10", "tail.amri", "both.realistic.hits_at_3", "MeanReciprocalRank"];
    expect(typed.map((q) => parseMetricKey(q).metric.key)).toEqual([
      "inverse_harmonic_mean_rank",
      "hits_at_10",
      "adjusted_arithmetic_mean_rank_index",
      "hits_at_3",
      "inverse_harmonic_mean_rank",
    ]);
  });
});

describe("weights at the ends of the double range", () => {
  it("weights whose sum overflows ([1e308] x 3) give the equal-weight values, E and Var (no abort, no hang)", () => {
    const r = [1, 2, 4];
    const N = [5, 5, 9];
    const huge = [1e308, 1e308, 1e308];
    for (const q of ["mr", "mrr", "gmr", "hits@3", "median_rank", "amri", "zmrr"]) {
      expect(metricValues([q], r, N, huge)[getMetric(q).key], q).toBeCloseTo(
        metricValues([q], r, N, [1, 1, 1])[getMetric(q).key]!,
        13,
      );
    }
    expect(getMetric("mrr").expectedValue(N, huge)).toBeCloseTo(getMetric("mrr").expectedValue(N), 14);
    expect(getMetric("mrr").variance(N, huge)).toBeCloseTo(getMetric("mrr").variance(N), 14);
  });
});

describe("names a user gets wrong", () => {
  it("a negative k is refused, not read as a positive one", () => {
    for (const q of ["hits@-1", "hits_at_-3", "adjusted_hits_at_-10", "z_hits_at_-1", "hits @ -5"]) {
      expect(() => getMetric(q), q).toThrow(/Hits@k needs an integer k >= 1, not a negative one/);
    }
    // Hyphens as separators stay accepted.
    expect(getMetric("hits-at-10").key).toBe("hits_at_10");
    expect(getMetric("z-hits-at-1").key).toBe("z_hits_at_1");
  });

  it("a full PyKEEN key given to getMetric names the metric part; parseMetricKey splits it", () => {
    expect(() => getMetric("both.realistic.hits_at_10")).toThrow(
      /is a full key .*getMetric takes the metric part, "hits_at_10"/,
    );
    const k = parseMetricKey("Right.PESSIMISTIC.mrr");
    expect([k.side, k.rankType, k.metric.key]).toEqual(["tail", "pessimistic", "inverse_harmonic_mean_rank"]);
    expect(parseMetricKey("amri").side).toBeNull();
  });

  it("the suggestion search compares at most 64 characters of a query, whatever its length (its cost is bounded)", () => {
    // The work, not the time (edit distances over a whole 4e5-character query take seconds): every string the
    // search compares passes through `normalize`, the query once, cut to 64 characters, then each name once.
    const seen: number[] = [];
    const names = ["mean_rank", "hits_at_10", "inverse_harmonic_mean_rank", "mean_rank"];
    const found = closest("q".repeat(400_000), names, 2, (s) => {
      seen.push(s.length);
      return s;
    });
    expect(seen).toEqual([64, 9, 10, 26]);
    expect(found).toHaveLength(2);
  });

  it("a name cut short is suggested by prefix, then by substring, before edit distance (filter -> filterTriples)", () => {
    expectInputError(
      () => new RankEvaluator({ numEntities: 3, filter: [] } as never),
      "RankEvaluator options",
      /unknown option "filter"; did you mean "filterTriples"\?/,
    );
    expect(closest("filter", ["sides", "filterTriples", "ks"])).toEqual(["filterTriples"]);
    expect(closest("bootstraps", ["boots", "bootstrap"])).toEqual(["bootstrap"]); // holds it
    expect(closest("sdes", ["sides", "filterTriples"])).toEqual(["sides"]); // a typo: edit distance
    expect(closest("ks", ["ksx", "k"])).toEqual(["k"]); // under 3 characters: edit distance alone
  });

  it("readTriples()'s result or a dataset given for triples says which field to pass", () => {
    const nations = path.join(__dirname, "..", "data", "nations");
    const read = readTriples(path.join(nations, "train.tsv"));
    expectInputError(
      () => new RankEvaluator({ numEntities: 14, filterTriples: [read] } as never),
      "filterTriples[0]",
      /got Object \(what readTriples\(\) returns\): pass its \.triples$/,
    );
    expectInputError(
      () => new RankEvaluator({ numEntities: 14, filterTriples: loadDataset("nations") } as never),
      "filterTriples[0]",
      /\(a dataset, as loadDataset\(\) returns\): pass its \.splits\.train, \.splits\.valid or \.splits\.test$/,
    );
    expect(new RankEvaluator({ numEntities: 14, filterTriples: [read.triples] }).info().filtered).toBe(true);
  });

  it("a huge unknown name is echoed cut short", () => {
    const q = "q".repeat(400_000);
    let message = "";
    try {
      getMetric(q);
    } catch (e) {
      expect(e).toBeInstanceOf(UnknownMetricError);
      message = (e as Error).message;
    }
    expect(message).toMatch(/^unknown metric "q{60}"… \(400000 characters\); closest known names: /);
    expect(message.length).toBeLessThan(600);
  });

  it("one default selection: every metric with the Hits family at each k, a metric named twice reported once", () => {
    const keys = metricSelection(null, [1, 10]).map((m) => m.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.filter((k) => /hits_at/.test(k))).toEqual([
      "hits_at_1",
      "adjusted_hits_at_1",
      "z_hits_at_1",
      "hits_at_10",
      "adjusted_hits_at_10",
      "z_hits_at_10",
    ]);
    expect(metricSelection(["mrr", "MRR", "both.realistic.mrr", "hits@10"]).map((m) => m.key)).toEqual([
      "inverse_harmonic_mean_rank",
      "hits_at_10",
    ]);
  });
});

describe("value() of every base metric equals the plain reference (1e-12 relative)", () => {
  const random = rng(7);
  const n = 501;
  const N = Array.from({ length: n }, () => 1 + Math.floor(random() * 1000));
  const r = N.map((x) => 1 + Math.floor(random() * 2 * x) / 2).map((x, i) => Math.min(x, N[i]!)); // half-integers
  const w = N.map(() => 0.25 + random() * 3);
  for (const key of BASE_KEYS) {
    it(`${key}, unweighted`, () => {
      expect(relErr(getMetric(key).value(r, N), refValue(key, r))).toBeLessThanOrEqual(1e-12);
    });
    if (getMetric(key).supportsWeights) {
      it(`${key}, weighted`, () => {
        expect(relErr(getMetric(key).value(r, N, w), refValue(key, r, w))).toBeLessThanOrEqual(1e-12);
      });
    }
  }

  it("property: median and MAD of random half-integer ranks equal the sort-based reference", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 2, max: 40 }), { minLength: 1, maxLength: 30 }), (twice) => {
        const ranks = twice.map((x) => x / 2);
        expect(getMetric("median_rank").value(ranks)).toBe(refMedian(ranks));
        expect(relErr(getMetric("mad").value(ranks), refValue("median_absolute_deviation", ranks))).toBeLessThanOrEqual(
          1e-15,
        );
      }),
      { numRuns: 60 },
    );
  });

  it("even count: the median is the mean of the two middle ranks", () => {
    expect(getMetric("median_rank").value([1, 2, 10, 4])).toBe(3);
    expect(getMetric("median_rank").value([1, 2, 10, 4], undefined, [1, 1, 1, 1])).toBe(3);
    expect(getMetric("median_rank").value([1, 2, 10, 4], undefined, [1, 1, 5, 1])).toBe(10);
  });

  it("MAD uses Phi^-1(3/4) = 0.6744897501960817 with and without weights", () => {
    expect(getMetric("mad").value([1, 2, 3, 4, 5])).toBe(1 / 0.6744897501960817);
    expect(getMetric("mad").value([1, 2, 3, 4, 5], undefined, [1, 1, 1, 1, 1])).toBe(1 / 0.6744897501960817);
  });

  it("sums stay within 1e-12 relative over 1e6 ranks with a large offset (compensated)", () => {
    const m = 1_000_000;
    const ranks = new Float64Array(m);
    for (let i = 0; i < m; i++) ranks[i] = 1e6 + (i % 7) + 0.5;
    // exact: mean = 1e6 + 3.5 - 3/7 * ... computed exactly per residue class
    let exact = 0n;
    for (let i = 0; i < m; i++) exact += BigInt(2e6 + 2 * (i % 7) + 1);
    const mean = Number(exact) / 2 / m;
    expect(relErr(getMetric("mr").value(ranks), mean)).toBeLessThanOrEqual(1e-15);
    const counts = Array.from({ length: 7 }, (_, j) => Math.floor((m - 1 - j) / 7) + 1);
    const mu = counts.reduce((a, c, j) => a + c * (j + 0.5), 0) / m;
    const variance = counts.reduce((a, c, j) => a + c * (j + 0.5 - mu) ** 2, 0) / m;
    expect(relErr(getMetric("var").value(ranks), variance)).toBeLessThanOrEqual(1e-12);
  });
});

describe("edge cases of value()", () => {
  it("all ranks 1: MR = GMR = HMR = median = 1, MRR = hits@1 = 1, dispersion 0", () => {
    const r = [1, 1, 1];
    for (const q of ["mr", "gmr", "hmr", "median_rank", "mrr", "hits@1", "igmr", "iamr", "imr"])
      expect(getMetric(q).value(r)).toBe(1);
    for (const q of ["std", "var", "mad"]) expect(getMetric(q).value(r)).toBe(0);
  });

  it("ranks equal to N_i are accepted; reindexed metrics reach their worst there", () => {
    const N = [10, 10];
    expect(getMetric("amri").value([10, 10], N)).toBeCloseTo(-1, 14);
    expect(getMetric("amri").value([1, 1], N)).toBeCloseTo(1, 14);
  });

  it("rejects empty, non-finite, < 1 and > N_i ranks with KgrankInputError naming ranks", () => {
    const m = getMetric("mrr");
    expect(() => m.value([])).toThrow(/ranks: is empty/);
    expect(() => m.value([1, NaN])).toThrow(/ranks: element 1 is NaN/);
    expect(() => m.value([1, Infinity])).toThrow(/ranks: element 1 is Infinity/);
    expect(() => m.value([0.5])).toThrow(/ranks: element 0 is 0.5/);
    expect(() => m.value([3, 5], [4, 4])).toThrow(/exceed its number of candidates/);
    expect(() => m.value([3, 5], [4])).toThrow(/numCandidates: must have 2 elements/);
    expect(() => m.value("abc" as unknown as number[])).toThrow(KgrankInputError);
  });

  it("metrics without weight support ignore weights, as PyKEEN's (variance, standard deviation, count)", () => {
    const r = [1, 2, 7, 3.5];
    const w = [0.5, 3, 0, 1];
    for (const q of ["std", "variance", "count"]) {
      expect(getMetric(q).value(r, undefined, w)).toBe(getMetric(q).value(r));
    }
    // NumPy: np.var([1, 2, 7, 3.5]) = 5.171875 (population variance, as PyKEEN).
    expect(getMetric("variance").value(r, undefined, w)).toBeCloseTo(5.171875, 14);
    expect(getMetric("count").value(r, undefined, w)).toBe(4);
    expect(() => getMetric("std").value([1, 2], undefined, [1, -1])).toThrow(/weights: element 1 is -1/);
  });

  it("derived metrics need numCandidates", () => {
    expect(() => getMetric("amri").value([1, 2])).toThrow(/numCandidates: adjusted_arithmetic_mean_rank_index needs/);
  });
});

describe("metricValues() and prepareCandidates()", () => {
  const random = rng(3);
  const N = Array.from({ length: 3001 }, () => 1 + Math.floor(random() * 500));
  const r = N.map((x) => 1 + Math.floor(random() * x));

  it("one fused pass gives the same values as each metric's value() (1e-12 relative)", () => {
    const keys = [...BASE_KEYS, "hits@1", "hits@3", "amri", "zmrr", "z_hits_at_3", "agmri", "amr"];
    const all = metricValues(keys, r, N);
    for (const key of keys) {
      const m = getMetric(key);
      expect(relErr(all[m.key]!, m.value(r, N))).toBeLessThanOrEqual(1e-12);
    }
  });

  it("weights apply to the metrics that support them and are ignored by the others; derived metrics need N", () => {
    const w = r.map((_, i) => (i % 4 === 0 ? 0 : 1 + (i % 3)));
    const mixed = metricValues(["mr", "std", "count"], r, N, w);
    expect(mixed.arithmetic_mean_rank).toBe(metricValues(["mr"], r, N, w).arithmetic_mean_rank);
    expect(mixed.standard_deviation).toBe(metricValues(["std"], r).standard_deviation);
    expect(mixed.count).toBe(r.length);
    expect(() => metricValues(["zmrr"], r)).toThrow(/numCandidates/);
    expect(() => metricValues([], r)).toThrow(/metrics/);
  });

  it("a prepared candidate set gives the same E and Var as raw arrays, and is not affected by later edits", () => {
    const w = N.map((_, i) => 1 + (i % 3));
    const prepared = prepareCandidates(N, w);
    const copy = [...N];
    for (const q of ["mr", "mrr", "gmr", "hits@10", "zgmr", "amrr"]) {
      const m = getMetric(q);
      expect(m.expectedValue(prepared)).toBe(m.expectedValue(copy, w));
      expect(m.variance(prepared)).toBe(m.variance(copy, w));
    }
    N[0] = 7;
    expect(getMetric("mr").expectedValue(prepared)).toBe(getMetric("mr").expectedValue(copy, w));
    expect(() => getMetric("mr").expectedValue(prepared, w)).toThrow(/prepareCandidates/);
  });
});
