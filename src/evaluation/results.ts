/**
 * RankResults: every metric for sides head, tail, both (head and tail pooled), relation and rank types optimistic, realistic, pessimistic, with the
 * expectation under uniformly random ranking next to each metric that has one, and the evaluation's provenance.
 */
import { KgrankInputError, KgrankStateError } from "../checks/errors";
import { parseMetricKey, resultSide } from "../metrics/catalogue";
import type { MetricQuery } from "../metrics/names";
import { type Interval, RANK_TYPES, type RankType, RESULT_SIDES, type ResultSide } from "../metrics/types";
import { fmt, table } from "../text/table";
import { describe, integer, optionKeys, options, tripleArray } from "../checks/validate";
import type { EvaluationInfo, IntervalTable, SidePart, TaskSide } from "./types";

export type { ResultSide };
export type ResultRankType = RankType;
export { RESULT_SIDES };
export const RESULT_RANK_TYPES: readonly ResultRankType[] = RANK_TYPES;

/** side -> rank type -> metric key -> value. */
export type ResultTable = Record<ResultSide, Record<ResultRankType, Record<string, number>>>;

/** A table per side; the relation side's may be left out (results without relation tasks). */
type PerSide<T> = Record<Exclude<ResultSide, "relation">, T> & { relation?: T };

export interface RankResultsData {
  values: PerSide<Record<ResultRankType, Record<string, number>>>;
  /** side -> metric key -> expected value under uniformly random ranks (closed forms only). */
  expected: PerSide<Record<string, number>>;
  /** side -> mean of (pessimistic - optimistic) rank: how much ties widen ranks (https://github.com/pykeen/pykeen/issues/851). */
  meanRankWidth: PerSide<number>;
  /** Display order of metric keys. */
  keys: string[];
  /** Provenance, the backend, and notes on metrics that are undefined for these tasks (NaN in the table). */
  info: EvaluationInfo & { backend: string; notes: string[]; group?: string };
  /** Bootstrap percentile intervals (finalize({ bootstrap })), or null. */
  intervals?: IntervalTable | null;
  /** Bootstrap settings when intervals were computed. */
  bootstrap?: { samples: number; seed: number; confidenceLevel: number } | null;
}

/** The recorded tasks behind a RankResults and how to tabulate a subset of them (for the breakdowns). */
export interface BreakdownSource {
  head: SidePart;
  tail: SidePart;
  /** Relation tasks (h, ?, t): in tasks(), never in a breakdown group. */
  relation: SidePart;
  /** Results of a subset of the tasks; `label` describes the subset in the results' info. */
  tabulate(head: SidePart, tail: SidePart, label: string): RankResults;
  /** Keeps the tasks whose flag is set. */
  subset(part: SidePart, indices: Uint32Array): SidePart;
}

/** Per-task columns of RankResults.tasks(): one entry per task, head-side tasks first, relation tasks last. */
export interface TaskTable {
  side: TaskSide[];
  /** The task's triple in entity / relation ids; -1 where it is unknown (ranks added without triples). */
  head: Int32Array;
  relation: Int32Array;
  tail: Int32Array;
  /** Ranks of each type; NaN where that type was not given (addRanks with only some types). */
  optimistic: Float64Array;
  realistic: Float64Array;
  pessimistic: Float64Array;
  numCandidates: Float64Array;
  /** Explicit weight (addRanks({ weights })), NaN when none was given. */
  weight: Float64Array;
}

/**
 * The rows of a task table of one protocol: the relation tasks (`relation`), or the head and tail tasks; the table
 * itself when it holds no other.
 */
export function protocolTasks(t: TaskTable, relation: boolean): TaskTable {
  const at = t.side.flatMap((s, i) => ((s === "relation") === relation ? [i] : []));
  if (at.length === t.side.length) return t;
  const ints = (a: Int32Array) => Int32Array.from(at, (i) => a[i]!);
  const floats = (a: Float64Array) => Float64Array.from(at, (i) => a[i]!);
  return {
    side: at.map((i) => t.side[i]!),
    head: ints(t.head),
    relation: ints(t.relation),
    tail: ints(t.tail),
    optimistic: floats(t.optimistic),
    realistic: floats(t.realistic),
    pessimistic: floats(t.pessimistic),
    numCandidates: floats(t.numCandidates),
    weight: floats(t.weight),
  };
}

/** One group of a breakdown: its tasks' results and how many tasks it holds. */
export interface Breakdown {
  /** Tasks in the group (head + tail). */
  count: number;
  /** Tasks per side. */
  tasks: { head: number; tail: number };
  results: RankResults;
}

export interface RelationBreakdown extends Breakdown {
  relation: number;
}

export type RelationCategory = "1-1" | "1-N" | "N-1" | "N-N";

export interface RelationCategoryBreakdown extends Breakdown {
  category: RelationCategory | "unseen";
  /** Relations of the category that have evaluated tasks. */
  relations: number[];
}

export interface DegreeBreakdown extends Breakdown {
  /** Inclusive degree range of the bucket. */
  low: number;
  high: number;
  label: string;
}

export interface DegreeOptions {
  /** Whose degree buckets the tasks: the entity to predict ("answer", default) or the given one ("anchor"). */
  of?: "answer" | "anchor";
  /**
   * Lower bounds of the buckets, ascending, starting at 0 (default 0, 1, 2, 4, 8, ...: powers of two up to the
   * largest degree).
   */
  bounds?: number[];
}

/**
 * What "both" is when the tasks are of one side (the table's footer says it, so its "both" columns are never read as
 * two sides): NaN when both sides were declared and one got no task; else that side alone (the only side evaluated,
 * `sides: "head"` or `"tail"`, as PyKEEN pools the sides it has; or a group without the other side's tasks).
 */
function bothSidesNote(info: RankResultsData["info"]): string {
  const missing = info.tasks.head === 0 ? "head" : info.tasks.tail === 0 ? "tail" : null;
  // No head and no tail task (relation tasks alone): no "both" column to explain.
  if (!missing || info.tasks.head + info.tasks.tail === 0) return "";
  const entitySides = info.sides.filter((s) => s !== "relation").length;
  if (entitySides === 2 && !info.group)
    return ` "both" is NaN: both sides were declared and no ${missing} task was added.`;
  const why = entitySides === 1 ? "the only side evaluated" : `no ${missing} task in this group`;
  return ` "both" is the ${missing === "head" ? "tail" : "head"} side alone (${why}).`;
}

/** Distinct known triples of a filtered evaluation (summed filter sizes for states that did not record it). */
function knownTriples(info: EvaluationInfo): number {
  return info.knownTriples ?? info.filterTriples.reduce((a, b) => a + b, 0);
}

/** RankResultsData with every side's table present. */
type FullData = RankResultsData & {
  values: ResultTable;
  expected: Record<ResultSide, Record<string, number>>;
  meanRankWidth: Record<ResultSide, number>;
};

export class RankResults {
  readonly #data: FullData;
  readonly #source: BreakdownSource | null;

  /** `source` (the tasks) enables the breakdowns. @internal */
  constructor(data: RankResultsData, source: BreakdownSource | null = null) {
    this.#data = {
      ...data,
      values: { ...data.values, relation: data.values.relation ?? { optimistic: {}, realistic: {}, pessimistic: {} } },
      expected: { ...data.expected, relation: data.expected.relation ?? {} },
      meanRankWidth: { ...data.meanRankWidth, relation: data.meanRankWidth.relation ?? NaN },
    };
    this.#source = source;
  }

  /**
   * The bootstrap percentile interval of a metric (finalize({ bootstrap }) computes them), e.g. "tail.mrr";
   * undefined when no interval was computed for it.
   */
  interval(key: MetricQuery): Interval | undefined {
    const { side, rankType, metric } = this.parse(key);
    const iv = this.#data.intervals?.[side]?.[rankType][metric];
    return iv ? { ...iv } : undefined;
  }

  /** All bootstrap intervals: side -> rank type -> key -> interval; null without bootstrap. */
  intervals(): IntervalTable | null {
    return this.#data.intervals ? this.withoutRelation(structuredClone(this.#data.intervals)) : null;
  }

  /**
   * Every task behind these results as columns, head-side tasks first, then tail-side, then relation tasks (whose
   * answer is the relation), each in the order added:
   * its side, its triple (ids; -1 where unknown, e.g. addRanks without triples), its ranks of each type (NaN for a
   * type not given), candidate count and explicit weight (NaN when none). A breakdown group's results hold that
   * group's tasks. The arrays are copies.
   */
  tasks(): TaskTable {
    const src = this.source("tasks()");
    const nh = src.head.cols.optimistic.length;
    const nt = src.tail.cols.optimistic.length;
    const n = nh + nt + src.relation.cols.optimistic.length;
    const out: TaskTable = {
      side: new Array<TaskSide>(n),
      head: new Int32Array(n),
      relation: new Int32Array(n),
      tail: new Int32Array(n),
      optimistic: new Float64Array(n),
      realistic: new Float64Array(n),
      pessimistic: new Float64Array(n),
      numCandidates: new Float64Array(n),
      weight: new Float64Array(n),
    };
    for (const side of ["head", "tail", "relation"] as const) {
      const c = src[side].cols;
      const at = side === "head" ? 0 : side === "tail" ? nh : nh + nt;
      out.side.fill(side, at, at + c.optimistic.length);
      // head and tail columns: a head task's answer is its head; tail and relation tasks hold the head as anchor.
      out.head.set(side === "head" ? c.truth : c.anchor, at);
      out.tail.set(side === "head" ? c.anchor : c.truth, at);
      out.relation.set(c.relation, at);
      for (const k of ["optimistic", "realistic", "pessimistic", "numCandidates", "weight"] as const)
        out[k].set(c[k], at);
    }
    return out;
  }

  private source(what: string): BreakdownSource {
    if (!this.#source) throw new KgrankStateError(`${what}: these results hold no tasks to break down`);
    return this.#source;
  }

  /** Groups tasks by a key per task (-1: in no group) and tabulates every group. */
  private groups(
    what: string,
    keyOf: (side: "head" | "tail", i: number) => number,
    labels: Map<number, string>,
  ): { key: number; breakdown: Breakdown }[] {
    const src = this.source(what);
    const keysBySide = {
      head: new Int32Array(src.head.cols.optimistic.length),
      tail: new Int32Array(src.tail.cols.optimistic.length),
    };
    const all = new Set<number>();
    for (const side of ["head", "tail"] as const) {
      const keys = keysBySide[side];
      for (let i = 0; i < keys.length; i++) {
        keys[i] = keyOf(side, i);
        if (keys[i]! >= 0) all.add(keys[i]!);
      }
    }
    // Each side's tasks bucketed by key once (a counting sort over the sorted keys), so a key's subset costs its own
    // tasks, not a pass over all of them.
    const sorted = [...all].sort((a, b) => a - b);
    const slot = new Map(sorted.map((key, j) => [key, j] as const));
    const buckets = (keys: Int32Array) => {
      const start = new Uint32Array(sorted.length + 1);
      for (let i = 0; i < keys.length; i++) if (keys[i]! >= 0) start[slot.get(keys[i]!)! + 1]!++;
      for (let j = 0; j < sorted.length; j++) start[j + 1]! += start[j]!;
      const at = start.slice(0, sorted.length);
      const indices = new Uint32Array(start[sorted.length]!);
      for (let i = 0; i < keys.length; i++) if (keys[i]! >= 0) indices[at[slot.get(keys[i]!)!]!++] = i;
      return (j: number) => indices.subarray(start[j]!, start[j + 1]!);
    };
    const headOf = buckets(keysBySide.head);
    const tailOf = buckets(keysBySide.tail);
    const out: { key: number; breakdown: Breakdown }[] = [];
    for (const [j, key] of sorted.entries()) {
      const head = src.subset(src.head, headOf(j));
      const tail = src.subset(src.tail, tailOf(j));
      const nh = head.cols.optimistic.length;
      const nt = tail.cols.optimistic.length;
      out.push({
        key,
        breakdown: {
          count: nh + nt,
          tasks: { head: nh, tail: nt },
          results: src.tabulate(head, tail, labels.get(key) ?? String(key)),
        },
      });
    }
    return out;
  }

  /**
   * Every metric per relation (relations with evaluated tasks, ascending). Tasks added without relations
   * (addRanks without `relations`) belong to no relation.
   */
  byRelation(): RelationBreakdown[] {
    const src = this.source("byRelation()");
    return this.groups("byRelation()", (side, i) => src[side].cols.relation[i]!, new Map()).map(
      ({ key, breakdown }) => ({
        relation: key,
        ...breakdown,
      }),
    );
  }

  /**
   * Every metric per relation category, as Bordes et al. (2013) define it from `triples` (usually the training
   * triples): for each relation, the mean number of heads per (relation, tail) and of tails per (head, relation);
   * a side is "1" when its mean is below 1.5, "N" otherwise. 1-N: one head, many tails. Relations absent from
   * `triples` form the group "unseen".
   */
  byRelationCategory(triples: Int32Array): RelationCategoryBreakdown[] {
    const t = tripleArray("triples", triples, this.#data.info.numEntities, this.#data.info.numRelations);
    const src = this.source("byRelationCategory()");
    const tails = new Map<number, Map<number, Set<number>>>(); // relation -> head -> tails
    const heads = new Map<number, Map<number, Set<number>>>(); // relation -> tail -> heads
    const add = (m: Map<number, Map<number, Set<number>>>, r: number, a: number, b: number) => {
      let byAnchor = m.get(r);
      if (!byAnchor) m.set(r, (byAnchor = new Map()));
      let s = byAnchor.get(a);
      if (!s) byAnchor.set(a, (s = new Set()));
      s.add(b);
    };
    for (let i = 0; i < t.length; i += 3) {
      add(tails, t[i + 1]!, t[i]!, t[i + 2]!);
      add(heads, t[i + 1]!, t[i + 2]!, t[i]!);
    }
    const mean = (byAnchor: Map<number, Set<number>>) => {
      let total = 0;
      for (const s of byAnchor.values()) total += s.size;
      return total / byAnchor.size;
    };
    const names: (RelationCategory | "unseen")[] = ["1-1", "1-N", "N-1", "N-N", "unseen"];
    const categoryOf = (r: number): number => {
      const tph = tails.get(r);
      if (!tph) return 4;
      const headMany = mean(heads.get(r)!) >= 1.5;
      const tailMany = mean(tph) >= 1.5;
      return (headMany ? 2 : 0) + (tailMany ? 1 : 0);
    };
    const cache = new Map<number, number>();
    const cat = (r: number) => {
      if (r < 0) return -1;
      let c = cache.get(r);
      if (c === undefined) cache.set(r, (c = categoryOf(r)));
      return c;
    };
    const labels = new Map(names.map((n, i) => [i, `relation category ${n}`]));
    return this.groups("byRelationCategory()", (side, i) => cat(src[side].cols.relation[i]!), labels).map(
      ({ key, breakdown }) => {
        const rels = new Set<number>();
        for (const side of ["head", "tail"] as const) {
          for (const r of src[side].cols.relation) if (r >= 0 && cat(r) === key) rels.add(r);
        }
        return { category: names[key]!, relations: [...rels].sort((a, b) => a - b), ...breakdown };
      },
    );
  }

  /**
   * Every metric per degree bucket: the degree of an entity is the number of `triples` (usually the training
   * triples) it occurs in as head or tail (a self-loop counts twice); tasks are bucketed by the degree of the entity
   * to predict (default) or of the given one. Buckets by default: 0, 1, 2-3, 4-7, 8-15, ...
   */
  byDegree(triples: Int32Array, opts: DegreeOptions = {}): DegreeBreakdown[] {
    const t = tripleArray("triples", triples, this.#data.info.numEntities, this.#data.info.numRelations);
    const o = options("options", opts, optionKeys<DegreeOptions>({ of: 1, bounds: 1 }));
    const of = o.of ?? "answer";
    if (of !== "answer" && of !== "anchor")
      throw new KgrankInputError("of", `must be "answer" or "anchor", got ${describe(of)}`);
    const src = this.source("byDegree()");
    const degree = new Map<number, number>();
    let maxDegree = 0;
    for (let i = 0; i < t.length; i += 3) {
      for (const e of [t[i]!, t[i + 2]!]) {
        const d = (degree.get(e) ?? 0) + 1;
        degree.set(e, d);
        if (d > maxDegree) maxDegree = d;
      }
    }
    let bounds: number[];
    if (o.bounds !== undefined) {
      const b = o.bounds as unknown;
      if (
        !Array.isArray(b) ||
        b.length === 0 ||
        b[0] !== 0 ||
        b.some((x, i) => typeof x !== "number" || !Number.isInteger(x) || (i > 0 && x <= b[i - 1]))
      ) {
        throw new KgrankInputError(
          "bounds",
          `must be ascending integers starting at 0, such as [0, 1, 10, 100], got ${describe(b)}`,
        );
      }
      bounds = b as number[];
    } else {
      bounds = [0, 1];
      while (bounds[bounds.length - 1]! * 2 <= maxDegree) bounds.push(bounds[bounds.length - 1]! * 2);
    }
    const bucketOf = (d: number) => {
      let lo = 0;
      let hi = bounds.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (bounds[mid]! <= d) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    };
    const range = (b: number): [number, number] => [bounds[b]!, b + 1 < bounds.length ? bounds[b + 1]! - 1 : Infinity];
    const label = (b: number) => {
      const [lo, hi] = range(b);
      return lo === hi ? `${lo}` : hi === Infinity ? `${lo}+` : `${lo}-${hi}`;
    };
    const labels = new Map(bounds.map((_, b) => [b, `${of} degree ${label(b)}`]));
    return this.groups(
      "byDegree()",
      (side, i) => {
        const cols = src[side].cols;
        const e = of === "answer" ? cols.truth[i]! : cols.anchor[i]!;
        return e < 0 ? -1 : bucketOf(degree.get(e) ?? 0);
      },
      labels,
    ).map(({ key, breakdown }) => {
      const [low, high] = range(key);
      return { low, high, label: label(key), ...breakdown };
    });
  }

  /**
   * What `console.log(results)` shows: the tasks and the headline metrics (both sides, realistic), instead of the
   * empty `RankResults {}` that private fields give.
   */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    const i = this.#data.info;
    const realistic = this.#data.values.both.realistic;
    const headline = ["inverse_harmonic_mean_rank", "arithmetic_mean_rank", "hits_at_1", "hits_at_3", "hits_at_10"]
      .filter((k) => k in realistic)
      .map((k) => `${k}: ${Number(realistic[k]!.toPrecision(6))}`);
    const shown = headline.length
      ? headline
      : Object.entries(realistic)
          .slice(0, 5)
          .map(([k, v]) => `${k}: ${Number(v.toPrecision(6))}`);
    return (
      `RankResults { tasks: { head: ${i.tasks.head}, tail: ${i.tasks.tail} }, ${i.filtered ? "filtered" : "unfiltered"}, ` +
      `both.realistic: { ${shown.join(", ")} }, metrics: ${this.#data.keys.length} (get(key), toJSON(), toMarkdown()) }`
    );
  }

  /** Provenance: filter sizes, tasks and skipped tasks per side, restriction, weighting, backend. */
  get info(): RankResultsData["info"] {
    return structuredClone(this.#data.info);
  }

  /**
   * A value by PyKEEN-style key: "both.realistic.inverse_harmonic_mean_rank", "mrr", "tail.hits@10",
   * "head.pessimistic.amri". Parts in any order; the side defaults to both, the rank type to realistic.
   */
  get(key: MetricQuery): number {
    const { side, rankType, metric } = this.parse(key);
    const table = this.#data.values[side][rankType];
    if (!(metric in table)) {
      const where = Object.keys(this.#data.values[side]).filter(
        (t) => metric in this.#data.values[side][t as ResultRankType],
      );
      throw new KgrankInputError(
        "key",
        `${metric} was not computed for ${side}.${rankType}` +
          (where.length
            ? ` (it is reported for rank types ${where.join(", ")})`
            : " (not among the evaluator's metrics)"),
      );
    }
    return table[metric]!;
  }

  /** The expectation of a metric under uniformly random ranking, for a side ("both" by default). */
  expected(key: MetricQuery): number | undefined {
    const { side, metric } = this.parse(key);
    return this.#data.expected[side][metric];
  }

  /** Mean (pessimistic - optimistic) rank of a side: the average width of tie groups around the true answer. */
  meanRankWidth(side: ResultSide = "both"): number {
    return this.#data.meanRankWidth[resultSide(side)];
  }

  /** Side and rank type default to both and realistic (PyKEEN's defaults). */
  private parse(key: MetricQuery): { side: ResultSide; rankType: ResultRankType; metric: string } {
    const k = parseMetricKey(key);
    return { side: k.side ?? "both", rankType: k.rankType ?? "realistic", metric: k.metric.key };
  }

  /**
   * side -> rank type -> key -> value (PyKEEN's nesting); side "relation" only where the relation side was
   * evaluated.
   */
  toJSON(): ResultTable {
    return this.withoutRelation(structuredClone(this.#data.values));
  }

  /** Whether the relation side was evaluated (sides included "relation"). */
  private get hasRelation(): boolean {
    return this.#data.info.sides.includes("relation");
  }

  /** A side-keyed table without its relation entry when the relation side was not evaluated. */
  private withoutRelation<T extends Record<ResultSide, unknown>>(t: T): T {
    if (!this.hasRelation) delete (t as Partial<Record<ResultSide, unknown>>).relation;
    return t;
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

  /**
   * A table a person reads (what `kgrank evaluate` prints): a row per metric, a column per side and rank type that
   * has tasks, the expectation under random ranking (both sides) last; bootstrap intervals in brackets; the mean
   * rank width; a footer with the tasks, filter, weighting and backend. `format` "table" aligns plain text,
   * "markdown" gives a markdown table; `digits` decimals (4).
   */
  toTable(opts: { format?: "table" | "markdown"; digits?: number } = {}): string {
    const o = options("options", opts, ["format", "digits"]);
    const digits = o.digits === undefined ? 4 : integer("digits", o.digits, 0, 20);
    if (o.format !== undefined && o.format !== "table" && o.format !== "markdown") {
      throw new KgrankInputError("format", `must be "table" or "markdown", got ${describe(o.format)}`);
    }
    const view = this.tableView(digits);
    return `${table(o.format === "markdown" ? "markdown" : "table", view.header, view.rows)}\n\n${view.footer}`;
  }

  /**
   * What toTable() shows, before it is laid out: the header, the rows of formatted cells and the footer. The CLI's
   * views (src/run/evaluation-view.ts) take it apart (digits checked by toTable).
   * @internal
   */
  tableView(digits: number): { header: string[]; rows: string[][]; footer: string } {
    const values = this.#data.values;
    const intervals = this.#data.intervals;
    const cols: [ResultSide, ResultRankType][] = [];
    for (const side of RESULT_SIDES) {
      if (Object.keys(values[side].realistic).length === 0 && Object.keys(values[side].optimistic).length === 0)
        continue;
      for (const rt of RESULT_RANK_TYPES) cols.push([side, rt]);
    }
    const present = this.#data.keys.filter((k) => cols.some(([s, rt]) => k in values[s][rt]));
    const cell = (s: ResultSide, rt: ResultRankType, key: string) => {
      const v = values[s][rt][key];
      const iv = intervals?.[s][rt][key];
      return iv && v !== undefined
        ? `${fmt(v, digits)} [${fmt(iv.lower, digits)}, ${fmt(iv.upper, digits)}]`
        : fmt(v, digits);
    };
    // Relation tasks have candidates of their own (the relations): their expectation gets its own column, and the
    // entity sides' ("random E", both sides) is shown only beside entity columns.
    const relationE = cols.some(([s]) => s === "relation");
    const entityE = cols.some(([s]) => s !== "relation") || !relationE;
    const rows = present.map((k) => [
      k,
      ...cols.map(([s, rt]) => cell(s, rt, k)),
      ...(entityE ? [fmt(this.#data.expected.both[k], digits)] : []),
      ...(relationE ? [fmt(this.#data.expected.relation[k], digits)] : []),
    ]);
    const width = this.#data.meanRankWidth;
    rows.push([
      "mean_rank_width (pess. - opt.)",
      ...cols.map(([s, rt]) => (rt === "optimistic" ? fmt(width[s], digits) : "")),
      ...(entityE ? [""] : []),
      ...(relationE ? [""] : []),
    ]);
    const header = [
      "metric",
      ...cols.map(([s, rt]) => `${s} ${rt.slice(0, 4)}.`),
      ...(entityE ? ["random E"] : []),
      ...(relationE ? ["relation random E"] : []),
    ];
    const i = this.#data.info;
    const boot = this.#data.bootstrap;
    const footer =
      `${i.tasks.head} head and ${i.tasks.tail} tail tasks` +
      (i.tasks.relation !== undefined ? `, ${i.tasks.relation} relation tasks` : "") +
      (i.skipped.head + i.skipped.tail ? ` (${i.skipped.head + i.skipped.tail} skipped by restriction)` : "") +
      `; ${i.filtered ? `filtered by ${knownTriples(i)} known triples` : "unfiltered"}; ${i.weighting} weighting.` +
      (i.group ? ` Group: ${i.group}.` : "") +
      bothSidesNote(i) +
      (entityE
        ? ` "random E": expectation under uniformly random ranking (both sides); empty where no closed form.`
        : ` "relation random E": expectation under uniformly random ranking; empty where no closed form.`) +
      (relationE ? ` "relation": (h, ?, t) tasks ranked among the relations, never pooled into "both".` : "") +
      (boot
        ? ` Brackets: ${boot.confidenceLevel * 100}% bootstrap percentile intervals over tasks (${boot.samples} replicates, seed ${boot.seed}).`
        : "");
    return { header, rows, footer };
  }

  /** toTable() as a markdown table. */
  toMarkdown(opts: { digits?: number } = {}): string {
    options("options", opts, ["digits"]);
    return this.toTable({ ...opts, format: "markdown" });
  }
}
