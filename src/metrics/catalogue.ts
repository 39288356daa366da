/**
 * The catalogue: every metric under its PyKEEN key, with synonyms, and the resolver getMetric() that accepts keys,
 * synonyms and class-style names case-insensitively and parses k from Hits-style queries.
 */
import { KgrankInputError, UnknownMetricError } from "../checks/errors";
import { closest, quoted } from "../text/suggest";
import { describe } from "../checks/validate";
import type { MetricQuery } from "./names";
import * as base from "./base";
import { reindexed, zScored, expectationNormalized } from "./derived";
import {
  type DerivedRankMetric,
  RANK_TYPES,
  type RankMetric,
  type RankType,
  range,
  RESULT_SIDES,
  type ResultSide,
} from "./types";

const DEFAULT_K = 10;

/** The Hits@k cut-offs reported when none are asked for. @internal */
export const DEFAULT_KS: readonly number[] = [1, 3, 5, 10];

function adjustedHits(k: number): DerivedRankMetric {
  return reindexed(base.hitsAtK(k), {
    key: `adjusted_hits_at_${k}`,
    name: `Adjusted Hits at ${k}`,
    synonyms: [`ah@${k}`, `ahits@${k}`, `ahits_at_${k}`, `ah_at_${k}`, `ahk${k}`],
    valueRange: range(null, false, 1, true),
  });
}

function zHits(k: number): DerivedRankMetric {
  return zScored(base.hitsAtK(k), {
    key: `z_hits_at_${k}`,
    name: `z-Scored Hits at ${k}`,
    synonyms: [`z_hits@${k}`, `zh@${k}`, `zahk${k}`],
  });
}

function adjustedTruncatedMrr(k: number): DerivedRankMetric {
  return reindexed(base.truncatedInverseHarmonicMeanRank(k), {
    key: `adjusted_inverse_harmonic_mean_rank_at_${k}`,
    name: `Adjusted Mean Reciprocal Rank at ${k} (AMRR@${k})`,
    synonyms: [`amrr@${k}`, `adjusted_mrr@${k}`, `amrr_at_${k}`],
  });
}

function zTruncatedMrr(k: number): DerivedRankMetric {
  return zScored(base.truncatedInverseHarmonicMeanRank(k), {
    key: `z_inverse_harmonic_mean_rank_at_${k}`,
    name: `z-Scored Mean Reciprocal Rank at ${k}`,
    synonyms: [`zmrr@${k}`, `zmrr_at_${k}`],
  });
}

/** Metrics without a parameter, by canonical key. */
const FIXED: Record<string, () => RankMetric> = {
  arithmetic_mean_rank: base.arithmeticMeanRank,
  geometric_mean_rank: base.geometricMeanRank,
  harmonic_mean_rank: base.harmonicMeanRank,
  median_rank: base.medianRank,
  standard_deviation: base.standardDeviation,
  variance: base.variance,
  median_absolute_deviation: base.medianAbsoluteDeviation,
  count: base.count,
  inverse_arithmetic_mean_rank: base.inverseArithmeticMeanRank,
  inverse_geometric_mean_rank: base.inverseGeometricMeanRank,
  inverse_harmonic_mean_rank: base.inverseHarmonicMeanRank,
  inverse_median_rank: base.inverseMedianRank,
  adjusted_arithmetic_mean_rank: () =>
    expectationNormalized(base.arithmeticMeanRank(), {
      name: "Adjusted Arithmetic Mean Rank (AAMR)",
      synonyms: ["adjusted_mean_rank", "amr", "aamr"],
      valueRange: range(0, true, 2, false),
    }),
  adjusted_arithmetic_mean_rank_index: () =>
    reindexed(base.arithmeticMeanRank(), {
      name: "Adjusted Arithmetic Mean Rank Index (AAMRI)",
      synonyms: ["adjusted_mean_rank_index", "amri", "aamri"],
      valueRange: range(-1, true, 1, true),
    }),
  adjusted_geometric_mean_rank_index: () =>
    reindexed(base.geometricMeanRank(), {
      name: "Adjusted Geometric Mean Rank Index (AGMRI)",
      synonyms: ["gmri", "agmri"],
    }),
  adjusted_inverse_harmonic_mean_rank: () =>
    reindexed(base.inverseHarmonicMeanRank(), {
      name: "Adjusted Inverse Harmonic Mean Rank (AMRR)",
      synonyms: ["amrr", "aihmr", "adjusted_mrr", "adjusted_mean_reciprocal_rank"],
    }),
  z_arithmetic_mean_rank: () =>
    zScored(base.arithmeticMeanRank(), {
      name: "z-Scored Arithmetic Mean Rank",
      synonyms: ["zamr", "zmr"],
    }),
  z_geometric_mean_rank: () =>
    zScored(base.geometricMeanRank(), {
      name: "z-Scored Geometric Mean Rank",
      synonyms: ["zgmr"],
    }),
  z_inverse_harmonic_mean_rank: () =>
    zScored(base.inverseHarmonicMeanRank(), {
      name: "z-Scored Inverse Harmonic Mean Rank",
      synonyms: ["zmrr", "zihmr"],
    }),
};

type Kind = "plain" | "adjusted" | "z";
const KINDS: readonly Kind[] = ["plain", "adjusted", "z"];

/**
 * Metrics with a cut-off k, by family: the plain metric and its adjusted and z-scored forms, how a query names the
 * family (after normalize(): the names' stems, with the kind's prefix before them and @k / at k after), and the k the
 * catalogue lists it at. A new metric with a cut-off is one entry here.
 */
interface KFamily {
  /** How errors name it: "Hits@k". */
  label: string;
  make: Record<Kind, (k: number) => RankMetric>;
  /** The stems of normalized names: "hits" in "hits@10", "ahits@10", "zhitsat10". */
  stems: readonly string[];
  /** The cut-offs the catalogue (listMetrics, docs/metrics.md) lists. */
  listed: readonly number[];
  /** Whether a run's default selection reports it at each of its ks (evaluate's `--ks`). */
  byDefault: boolean;
}

const K_FAMILIES: readonly KFamily[] = [
  {
    label: "Hits@k",
    make: { plain: base.hitsAtK, adjusted: adjustedHits, z: zHits },
    stems: ["hits", "h"],
    listed: DEFAULT_KS,
    byDefault: true,
  },
  {
    label: "MRR@k",
    make: { plain: base.truncatedInverseHarmonicMeanRank, adjusted: adjustedTruncatedMrr, z: zTruncatedMrr },
    stems: ["mrr", "meanreciprocalrank", "inverseharmonicmeanrank"],
    listed: [DEFAULT_K],
    byDefault: false,
  },
];

/** Lower case, without spaces, underscores and hyphens: "Hits_At_10", "hits at 10" and "HitsAt10" meet. */
function normalize(s: string): string {
  return s.toLowerCase().replace(/[\s_-]/g, "");
}

// A name with a cut-off: prefix and stem, then @|at, then k (digits; "k" or nothing means the default 10).
const K_PATTERN = /^([a-z]+?)(@|at)(\d+|k)?$/;
// The kinds' prefixes before a family's stem ("amrr@10", "adjustedhits@10", "zahk" aside).
const K_PREFIXES: readonly (readonly [string, Kind])[] = [
  ["", "plain"],
  ["z", "z"],
  ["za", "z"],
  ["adjusted", "adjusted"],
  ["a", "adjusted"],
];
// PyKEEN's class names and synonyms with the k left out: HitsAtK, AdjustedHitsAtK, ZHitsAtK, ahk, zahk.
const HITS_CLASS: Record<string, Kind> = {
  hitsatk: "plain",
  adjustedhitsatk: "adjusted",
  zhitsatk: "z",
  ahk: "adjusted",
  zahk: "z",
};

let index: Map<string, string> | null = null;
function nameIndex(): Map<string, string> {
  if (index) return index;
  index = new Map();
  for (const [key, make] of Object.entries(FIXED)) {
    const m = make();
    for (const name of [key, ...m.synonyms]) index.set(normalize(name), key);
  }
  return index;
}

function parseK(q: string): RankMetric | null {
  const cls = HITS_CLASS[q];
  if (cls) return K_FAMILIES[0]!.make[cls](DEFAULT_K);
  let kind: Kind | undefined;
  let family: KFamily | undefined;
  let digits: string | undefined;
  const pykeen = /^(zahk|ahk)(\d+)$/.exec(q);
  if (pykeen) {
    kind = pykeen[1] === "zahk" ? "z" : "adjusted";
    family = K_FAMILIES[0];
    digits = pykeen[2];
  } else {
    const m = K_PATTERN.exec(q);
    if (!m) return null;
    for (const f of K_FAMILIES) {
      for (const [prefix, k] of K_PREFIXES) if (f.stems.some((stem) => prefix + stem === m[1])) [family, kind] = [f, k];
    }
    digits = m[3];
  }
  if (!family || !kind) return null;
  const k = digits === undefined || digits === "k" ? DEFAULT_K : Number(digits);
  if (!Number.isSafeInteger(k) || k < 1) {
    throw new KgrankInputError(
      "query",
      `${family.label} needs an integer k >= 1, got k = ${digits} in the metric name`,
    );
  }
  return family.make[kind](k);
}

function suggestions(q: string): string[] {
  const names = [
    ...Object.keys(FIXED),
    ...Object.values(FIXED).flatMap((m) => m().synonyms),
    ...K_FAMILIES.flatMap((f) =>
      KINDS.flatMap((kind) => [f.make[kind](DEFAULT_K).key, ...f.make[kind](DEFAULT_K).synonyms]),
    ),
  ];
  return closest(q, names, 5, normalize);
}

/**
 * The metric for a key, synonym or class-style name (case-insensitive): "mrr", "MeanReciprocalRank",
 * "inverse_harmonic_mean_rank", "hits@3", "hits_at_3", "ah@10", "z_hits_at_1", "HitsAtK" (k = 10), ...
 */
export function getMetric(query: MetricQuery): RankMetric {
  if (typeof query !== "string" || query.trim() === "") {
    throw new KgrankInputError("query", `must be a metric name such as "mrr" or "hits@10", got ${describe(query)}`);
  }
  // normalize() drops hyphens, so a negative k ("hits@-1", "hits_at_-3") would read as a positive one.
  if (/(@|_|\s)-\s*\d/.test(query)) {
    throw new KgrankInputError(
      "query",
      `${quoted(query)}: Hits@k needs an integer k >= 1, not a negative one (MRR@k too)`,
    );
  }
  const q = normalize(query.trim());
  const key = nameIndex().get(q);
  if (key) return FIXED[key]!();
  const withK = parseK(q);
  if (withK) return withK;
  if (query.includes(".")) fullKeyGiven(query);
  throw new UnknownMetricError(query, suggestions(q));
}

/** getMetric was given "both.realistic.mrr": name the metric part, which is what it takes. */
function fullKeyGiven(query: string): void {
  let metric: RankMetric;
  try {
    metric = parseMetricKey(query, "query").metric;
  } catch {
    return;
  }
  throw new KgrankInputError(
    "query",
    `${quoted(query)} is a full key (side.rank_type.metric); getMetric takes the metric part, "${metric.key}" ` +
      `(RankResults.get and parseMetricKey take full keys)`,
  );
}

/** A PyKEEN-style full key, split: the side and rank type it names (null where it names none) and the metric. @internal */
export interface ParsedMetricKey {
  side: ResultSide | null;
  rankType: RankType | null;
  metric: RankMetric;
}

const SIDE_NAMES: Record<string, ResultSide> = {
  head: "head",
  left: "head",
  tail: "tail",
  right: "tail",
  both: "both",
  relation: "relation",
};

/** "head", "tail", "both" or "relation" (PyKEEN's "left" and "right" too), case-insensitive. */
export function resultSide(value: unknown, argument = "side"): ResultSide {
  const side = typeof value === "string" ? SIDE_NAMES[value.trim().toLowerCase()] : undefined;
  if (!side)
    throw new KgrankInputError(argument, `must be "head", "tail", "both" or "relation", got ${describe(value)}`);
  return side;
}

/**
 * Splits "both.realistic.hits_at_10", "tail.mrr", "pessimistic.amri" or plain "mrr" into side, rank type and metric
 * (parts in any order, case-insensitive; "left"/"right" for head/tail as in PyKEEN). `argument` names the caller's
 * argument or CLI flag in errors.
 * @internal
 */
export function parseMetricKey(key: MetricQuery, argument = "key"): ParsedMetricKey {
  if (typeof key !== "string" || key.trim() === "") {
    throw new KgrankInputError(
      argument,
      `must be a metric key such as "both.realistic.mrr" or "tail.hits@10", got ${describe(key)}`,
    );
  }
  let side: ResultSide | null = null;
  let rankType: RankType | null = null;
  const rest: string[] = [];
  for (const raw of key.split(".")) {
    const part = raw.trim().toLowerCase();
    if (Object.hasOwn(SIDE_NAMES, part) && side === null) side = SIDE_NAMES[part]!;
    else if ((RANK_TYPES as readonly string[]).includes(part) && rankType === null) rankType = part as RankType;
    else rest.push(raw.trim());
  }
  if (rest.length !== 1) {
    throw new KgrankInputError(
      argument,
      rest.length === 0
        ? `${quoted(key)} names no metric: add one, e.g. "${key}.mrr"`
        : `${quoted(key)} has ${rest.length} parts that are neither a side (${RESULT_SIDES.join(", ")}) nor a rank type ` +
            `(${RANK_TYPES.join(", ")}): ${rest.map(quoted).join(", ")}`,
    );
  }
  return { side, rankType, metric: getMetric(rest[0]!) };
}

/**
 * The metrics a run reports, in catalogue order: the `names` given (metric names or full keys; a metric named twice
 * is reported once), or else every metric, with Hits@k and its adjusted and z-scored forms at each of `ks`.
 * The evaluator and every CLI command take their metric list from here.
 * @internal
 */
export function metricSelection(
  names?: readonly MetricQuery[] | null,
  ks: readonly number[] = DEFAULT_KS,
  argument = "metrics",
): RankMetric[] {
  const seen = new Set<string>();
  const unique = (m: RankMetric) => !seen.has(m.key) && (seen.add(m.key), true);
  if (names && names.length > 0) return names.map((q) => parseMetricKey(q, argument).metric).filter(unique);
  const out: RankMetric[] = Object.values(FIXED).map((make) => make());
  for (const f of K_FAMILIES) if (f.byDefault) for (const k of ks) for (const kind of KINDS) out.push(f.make[kind](k));
  return out.filter(unique);
}

/**
 * The catalogue: every metric, with Hits@k and its adjusted and z-scored forms at k = 1, 3, 5, 10 (by kind), and MRR@k
 * and its forms at k = 10.
 */
export function listMetrics(): RankMetric[] {
  const out: RankMetric[] = Object.values(FIXED).map((make) => make());
  for (const f of K_FAMILIES) for (const kind of KINDS) for (const k of f.listed) out.push(f.make[kind](k));
  return out;
}

function rangeText(r: {
  lower: number | null;
  lowerInclusive: boolean;
  upper: number | null;
  upperInclusive: boolean;
}): string {
  const lo = r.lower === null ? "(-inf" : `${r.lowerInclusive ? "[" : "("}${r.lower}`;
  const hi = r.upper === null ? "inf)" : `${r.upper}${r.upperInclusive ? "]" : ")"}`;
  return `${lo}, ${hi}`;
}

/**
 * The catalogue as a markdown table (docs/metrics.md; test/metrics-docs.test.ts keeps the page in step):
 * key, synonyms, direction, range, closed-form E and Var, weights.
 */
export function metricsMarkdownTable(): string {
  const rows = [
    "| key | synonyms | better | range | closed E | closed Var | weights |",
    "| --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const m of listMetrics()) {
    const syn = m.synonyms.map((s) => `\`${s}\``).join(", ");
    rows.push(
      `| \`${m.key}\` | ${syn} | ${m.increasing ? "higher" : "lower"} | ${rangeText(m.valueRange)} | ` +
        `${m.closedExpectation ? "yes" : "no"} | ${m.closedVariance ? "yes" : "no"} | ${m.supportsWeights ? "yes" : "no"} |`,
    );
  }
  return rows.join("\n");
}
