/**
 * RankResults: every metric for sides head, tail, both and rank types optimistic, realistic, pessimistic, with the
 * expectation under uniformly random ranking next to each metric that has one, and the evaluation's provenance.
 */
import { KgrankInputError } from "../errors";
import type { EvaluationInfo } from "./evaluator";

export type ResultSide = "head" | "tail" | "both";
export type ResultRankType = "optimistic" | "realistic" | "pessimistic";
export const RESULT_SIDES: readonly ResultSide[] = ["head", "tail", "both"];
export const RESULT_RANK_TYPES: readonly ResultRankType[] = ["optimistic", "realistic", "pessimistic"];

/** side -> rank type -> metric key -> value. */
export type ResultTable = Record<ResultSide, Record<ResultRankType, Record<string, number>>>;

const SIDE_NAMES: Record<string, ResultSide> = { head: "head", left: "head", tail: "tail", right: "tail", both: "both" };
const RANK_TYPE_NAMES: Record<string, ResultRankType> = {
  optimistic: "optimistic", realistic: "realistic", pessimistic: "pessimistic",
};

export interface RankResultsData {
  values: ResultTable;
  /** side -> metric key -> expected value under uniformly random ranks (closed forms only). */
  expected: Record<ResultSide, Record<string, number>>;
  /** side -> mean of (pessimistic - optimistic) rank: how much ties widen ranks (PyKEEN issue 851). */
  meanRankWidth: Record<ResultSide, number>;
  /** Display order of metric keys. */
  keys: string[];
  /** Provenance, the backend, and notes on metrics that are undefined for these tasks (NaN in the table). */
  info: EvaluationInfo & { backend: string; notes: string[] };
}

export class RankResults {
  readonly #data: RankResultsData;
  readonly #resolve: (query: string) => string;

  /** `resolve` maps a metric query (key, synonym, "hits@10", ...) to its canonical key or throws. */
  constructor(data: RankResultsData, resolve: (query: string) => string) {
    this.#data = data;
    this.#resolve = resolve;
  }

  /** Provenance: filter sizes, tasks and skipped tasks per side, restriction, weighting, backend. */
  get info(): RankResultsData["info"] {
    return structuredClone(this.#data.info);
  }

  /**
   * A value by PyKEEN-style key: "both.realistic.inverse_harmonic_mean_rank", "mrr", "tail.hits@10",
   * "head.pessimistic.amri". Parts in any order; the side defaults to both, the rank type to realistic.
   */
  get(key: string): number {
    const { side, rankType, metric } = this.parse(key);
    const table = this.#data.values[side][rankType];
    if (!(metric in table)) {
      const where = Object.keys(this.#data.values[side]).filter((t) => metric in this.#data.values[side][t as ResultRankType]);
      throw new KgrankInputError(
        "key",
        `${metric} was not computed for ${side}.${rankType}` +
          (where.length ? ` (it is reported for rank types ${where.join(", ")})` : " (not among the evaluator's metrics)"),
      );
    }
    return table[metric]!;
  }

  /** The expectation of a metric under uniformly random ranking, for a side ("both" by default). */
  expected(key: string): number | undefined {
    const { side, metric } = this.parse(key);
    return this.#data.expected[side][metric];
  }

  /** Mean (pessimistic - optimistic) rank of a side: the average width of tie groups around the true answer. */
  meanRankWidth(side: ResultSide = "both"): number {
    return this.#data.meanRankWidth[SIDE_NAMES[side] ?? "both"];
  }

  private parse(key: string): { side: ResultSide; rankType: ResultRankType; metric: string } {
    if (typeof key !== "string" || key.trim() === "") {
      throw new KgrankInputError("key", `must be a metric key such as "both.realistic.mrr" or "tail.hits@10", got ${String(key)}`);
    }
    let side: ResultSide | null = null;
    let rankType: ResultRankType | null = null;
    const rest: string[] = [];
    for (const raw of key.split(".")) {
      const part = raw.trim().toLowerCase();
      if (part in SIDE_NAMES && side === null) side = SIDE_NAMES[part]!;
      else if (part in RANK_TYPE_NAMES && rankType === null) rankType = RANK_TYPE_NAMES[part]!;
      else rest.push(raw.trim());
    }
    if (rest.length !== 1) {
      throw new KgrankInputError(
        "key",
        rest.length === 0
          ? `"${key}" names no metric: add one, e.g. "${key}.mrr"`
          : `"${key}" has ${rest.length} parts that are neither a side (head, tail, both) nor a rank type ` +
            `(optimistic, realistic, pessimistic): ${rest.join(", ")}`,
      );
    }
    return { side: side ?? "both", rankType: rankType ?? "realistic", metric: this.#resolve(rest[0]!) };
  }

  /** side -> rank type -> key -> value (PyKEEN's nesting). */
  toJSON(): ResultTable {
    return structuredClone(this.#data.values);
  }

  /** "side.rank_type.key" -> value. */
  toFlatObject(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const side of RESULT_SIDES) {
      for (const rt of RESULT_RANK_TYPES) {
        for (const [k, v] of Object.entries(this.#data.values[side][rt])) out[`${side}.${rt}.${k}`] = v;
      }
    }
    return out;
  }

  /** A table a person reads: one row per metric, a column per side and rank type, expectations alongside. */
  toMarkdown(options: { digits?: number } = {}): string {
    const digits = options.digits ?? 4;
    const fmt = (v: number | undefined) => (v === undefined ? "" : Number.isInteger(v) ? String(v) : v.toFixed(digits));
    const cols: [ResultSide, ResultRankType][] = [];
    for (const side of RESULT_SIDES) for (const rt of RESULT_RANK_TYPES) cols.push([side, rt]);
    const header = ["metric", ...cols.map(([s, r]) => `${s} ${r.slice(0, 4)}.`), "both: random E"];
    const lines = [`| ${header.join(" | ")} |`, `| ${header.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`];
    for (const key of this.#data.keys) {
      const cells = cols.map(([s, r]) => fmt(this.#data.values[s][r][key]));
      lines.push(`| ${key} | ${cells.join(" | ")} | ${fmt(this.#data.expected.both[key])} |`);
    }
    const w = this.#data.meanRankWidth;
    lines.push(`| mean_rank_width (pess. - opt.) | ${RESULT_SIDES.map((s) => [fmt(w[s]), "", ""].join(" | ")).join(" | ")} |  |`);
    const i = this.#data.info;
    lines.push(
      "",
      `${i.tasks.head} head and ${i.tasks.tail} tail tasks (${i.skipped.head + i.skipped.tail} skipped by restriction); ` +
        `${i.filtered ? `filtered by ${i.filterTriples.reduce((a, b) => a + b, 0)} known triples` : "unfiltered"}; ` +
        `${i.weighting} weighting; backend ${i.backend}.`,
    );
    return lines.join("\n");
  }
}
