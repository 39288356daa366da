/**
 * Plots of a run, as Vega-Lite specifications rendered to SVG in Node by Vega's headless view (no browser):
 *  - "ranks": the distribution of realistic ranks per side, in log2 bins (1, 2-3, 4-7, ...);
 *  - "hits": Hits@k for k = 1..max N on a log axis, against its expectation under random ranking
 *    (E[Hits@k] = mean over tasks of min(k, N_i) / N_i);
 *  - "relations": MRR per relation, sorted, each bar labelled with its task count;
 *  - "categories": MRR per relation category (1-1, 1-N, N-1, N-N from the training triples), with task counts;
 *  - "degrees": MRR per degree bin of the entity to predict (0, 1, 2-3, 4-7, ... triples in training), with counts;
 * Colours are the Okabe–Ito pair blue / orange (distinct for colour-blind readers) with different lightness (so
 * they survive greyscale printing); the random baseline is dashed, not only differently coloured.
 */
import * as path from "node:path";
import { pathToFileURL } from "node:url";

import { KgrankInputError } from "../checks/errors";
import { protocolTasks, type RankResults } from "../evaluation/results";
import { markupLabel } from "../text/labels";

/** Bars kept at each end of the per-relation plot when there are more than twice as many relations. */
export const RELATION_ENDS = 20;
/**
 * Characters of a relation label on the per-relation axis; longer ones keep their start and their end around an
 * ellipsis (FB15k-237's labels differ at either end: "/film/film/…" and "…/film_release_region"), the full label in
 * the axis label's SVG title.
 */
const RELATION_LABEL_CHARS = 36;

export const PLOT_NAMES = ["ranks", "hits", "relations", "categories", "degrees"] as const;
export type PlotName = (typeof PLOT_NAMES)[number];
/** Plots that need the run's training triples (relation categories and entity degrees are defined by them). */
export const TRAIN_PLOTS: readonly PlotName[] = ["categories", "degrees"];

/** What a plot may need besides the results. */
export interface PlotContext {
  /** Relation labels by id. */
  relationLabels?: readonly string[] | null;
  /** The training triples of the run's dataset (categories, degrees). */
  trainTriples?: Int32Array | null;
}

/** One group of a breakdown as the report shows it. */
export interface GroupRow {
  label: string;
  tasks: number;
  head: number;
  tail: number;
  mrr: number;
  hits10: number | undefined;
  /** Relations in the group (relation categories only). */
  relations?: number;
}

const safe = (r: RankResults, key: string) => {
  try {
    return r.get(key);
  } catch {
    return undefined;
  }
};

function groupRow(
  label: string,
  g: { count: number; tasks: { head: number; tail: number }; results: RankResults },
): GroupRow {
  return {
    label,
    tasks: g.count,
    head: g.tasks.head,
    tail: g.tasks.tail,
    mrr: g.results.get("both.realistic.inverse_harmonic_mean_rank"),
    hits10: safe(g.results, "both.realistic.hits_at_10"),
  };
}

/** MRR per relation category (1-1, 1-N, N-1, N-N by Bordes et al. 2013 from the training triples; "unseen"). */
export function categoryRows(results: RankResults, train: Int32Array): GroupRow[] {
  return results.byRelationCategory(train).map((g) => ({ ...groupRow(g.category, g), relations: g.relations.length }));
}

/** MRR per degree bin of the entity to predict (its triples in training; bins 0, 1, 2-3, 4-7, ...). */
export function degreeRows(results: RankResults, train: Int32Array): GroupRow[] {
  return results.byDegree(train).map((g) => groupRow(g.label, g));
}

/** A bar chart of MRR per group, in the groups' order, each bar labelled with its task count. */
function groupBars(title: string, rows: GroupRow[]): Record<string, unknown> {
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title,
    width: 460,
    height: { step: 22 },
    config: CONFIG,
    data: { values: rows.map((r, order) => ({ group: `${markupLabel(r.label)} (${r.tasks})`, mrr: r.mrr, order })) },
    mark: { type: "bar", color: BLUE },
    encoding: {
      // No axis title: rotated, it would be taller than a few bars and stretch the plot.
      y: { field: "group", type: "nominal", sort: { field: "order" }, title: null },
      x: { field: "mrr", type: "quantitative", scale: { domain: [0, 1] }, title: "MRR (realistic ranks, both sides)" },
    },
  };
}

const BLUE = "#0072B2";
const ORANGE = "#E69F00";
const FONT = "Helvetica, Arial, sans-serif";
const CONFIG = {
  font: FONT,
  axis: { labelFontSize: 11, titleFontSize: 12 },
  legend: { labelFontSize: 11, titleFontSize: 12 },
  view: { stroke: null },
};

/** Vega-Lite specification of one plot of `results`; "categories" and "degrees" need `context.trainTriples`. */
export function plotSpec(name: PlotName, results: RankResults, context: PlotContext = {}): Record<string, unknown> {
  const relationLabels = context.relationLabels;
  if (name === "categories" || name === "degrees") {
    const train = context.trainTriples;
    if (!train)
      throw new KgrankInputError("trainTriples", `the ${name} plot needs the training triples of the run's dataset`);
    return name === "categories"
      ? groupBars(
          "MRR per relation category from the training triples (task count in brackets)",
          categoryRows(results, train),
        )
      : groupBars(
          "MRR by training degree of the entity to predict (task count in brackets)",
          degreeRows(results, train),
        );
  }
  // The rank and Hits@k plots are of the head and tail tasks: relation tasks have candidates of another kind.
  const t = protocolTasks(results.tasks(), false);
  const n = t.side.length;
  if (name === "ranks") {
    const counts = new Map<string, number>();
    let maxBin = 0;
    for (let i = 0; i < n; i++) {
      const r = t.realistic[i]!;
      if (!(r >= 1)) continue;
      const bin = Math.floor(Math.log2(r));
      maxBin = Math.max(maxBin, bin);
      counts.set(`${t.side[i]}:${bin}`, (counts.get(`${t.side[i]}:${bin}`) ?? 0) + 1);
    }
    const label = (b: number) => (b === 0 ? "1" : `${2 ** b}–${2 ** (b + 1) - 1}`);
    const values: { side: string; bin: string; order: number; tasks: number }[] = [];
    for (const side of ["head", "tail"]) {
      for (let b = 0; b <= maxBin; b++)
        values.push({ side: `${side} prediction`, bin: label(b), order: b, tasks: counts.get(`${side}:${b}`) ?? 0 });
    }
    return {
      $schema: "https://vega.github.io/schema/vega-lite/v6.json",
      title: "Distribution of realistic ranks (log2 bins)",
      width: 560,
      height: 260,
      config: CONFIG,
      data: { values },
      mark: { type: "bar" },
      encoding: {
        x: {
          field: "bin",
          type: "ordinal",
          sort: { field: "order" },
          title: "realistic rank (bin)",
          // Past 2^8 the bin labels ("2048–4095") are wider than their band: slanted, they do not overlap.
          axis: { labelAngle: maxBin > 8 ? -40 : 0 },
        },
        xOffset: { field: "side" },
        y: { field: "tasks", type: "quantitative", title: "tasks (count)" },
        color: {
          field: "side",
          type: "nominal",
          scale: { range: [BLUE, ORANGE] },
          title: null,
          legend: { orient: "top-right" },
        },
      },
    };
  }
  if (name === "hits") {
    let maxN = 1;
    for (let i = 0; i < n; i++) maxN = Math.max(maxN, t.numCandidates[i]!);
    const ks = new Set<number>([1]);
    for (let k = 1; k <= maxN; k = Math.ceil(k * 1.15)) ks.add(k);
    ks.add(maxN);
    const sorted = Float64Array.from(t.realistic).sort();
    const values: { k: number; hits: number; curve: string }[] = [];
    let at = 0;
    for (const k of [...ks].sort((a, b) => a - b)) {
      while (at < n && sorted[at]! <= k) at++;
      let expected = 0;
      for (let i = 0; i < n; i++) expected += Math.min(k, t.numCandidates[i]!) / t.numCandidates[i]!;
      values.push({ k, hits: at / n, curve: "model" }, { k, hits: expected / n, curve: "random ranking (expected)" });
    }
    return {
      $schema: "https://vega.github.io/schema/vega-lite/v6.json",
      title: "Hits@k against its random expectation",
      width: 560,
      height: 260,
      config: CONFIG,
      data: { values },
      mark: { type: "line", strokeWidth: 2 },
      encoding: {
        x: {
          field: "k",
          type: "quantitative",
          scale: { type: "log", domain: [1, maxN], nice: false },
          title: "k (candidates, log scale)",
        },
        y: { field: "hits", type: "quantitative", scale: { domain: [0, 1] }, title: "Hits@k (fraction of tasks)" },
        color: {
          field: "curve",
          type: "nominal",
          scale: { range: [BLUE, ORANGE] },
          title: null,
          legend: { orient: "bottom-right", labelLimit: 400 },
        },
        strokeDash: {
          field: "curve",
          type: "nominal",
          scale: {
            range: [
              [1, 0],
              [6, 4],
            ],
          },
          title: null,
        },
      },
    };
  }
  const groups = results.byRelation();
  // Long labels (FB15k-237's "/olympics/olympic_games/sports") keep their start and end and the task count; a
  // shortened label that collides with another gets its id, so that two relations never share a bar.
  const seen = new Set<string>();
  const values = groups
    .map((g) => {
      const full = relationLabels?.[g.relation] ?? String(g.relation);
      // Shortened first, then made safe for SVG text, so the isolating marks around the label are never cut off.
      const head = Math.floor((RELATION_LABEL_CHARS - 1) / 2);
      const shortened =
        full.length > RELATION_LABEL_CHARS
          ? `${full.slice(0, head)}…${full.slice(-(RELATION_LABEL_CHARS - 1 - head))}`
          : full;
      let relation = `${markupLabel(shortened)} (${g.count})`;
      if (seen.has(relation)) relation = `${relation} #${g.relation}`;
      seen.add(relation);
      return { relation, full: markupLabel(full), mrr: g.results.get("both.realistic.inverse_harmonic_mean_rank") };
    })
    .sort((a, b) => b.mrr - a.mrr);
  // A laptop screen holds about 40 bars: past that, the best and the worst RELATION_ENDS (FB15k-237 has 237 relations).
  const shown =
    values.length > 2 * RELATION_ENDS ? [...values.slice(0, RELATION_ENDS), ...values.slice(-RELATION_ENDS)] : values;
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title:
      shown.length < values.length
        ? `MRR per relation: the ${RELATION_ENDS} best and ${RELATION_ENDS} worst of ${values.length} (task count in brackets)`
        : "MRR per relation (task count in brackets)",
    width: 460,
    height: { step: 14 },
    config: CONFIG,
    data: { values: shown },
    // The full labels, which renderSvg puts into each axis label's <title> (a tooltip in a browser).
    usermeta: { fullLabels: Object.fromEntries(shown.map((v) => [v.relation, v.full])) },
    mark: { type: "bar", color: BLUE },
    encoding: {
      y: { field: "relation", type: "nominal", sort: "-x", title: null, axis: { labelLimit: 0 } }, // shortened above; Vega in Node over-estimates text width
      x: { field: "mrr", type: "quantitative", scale: { domain: [0, 1] }, title: "MRR (realistic ranks, both sides)" },
    },
  };
}

// The bundle is an ES module; a plain import() survives the CommonJS build this way.
const importEsm = new Function("specifier", "return import(specifier)") as (s: string) => Promise<unknown>;

/** What the report uses of Vega and Vega-Lite: dist/vendor/vega.mjs, bundled from them at build time. */
interface VegaBundle {
  parse: typeof import("vega").parse;
  View: typeof import("vega").View;
  compile(spec: unknown): { spec: import("vega").Spec };
}

/**
 * Vega and Vega-Lite are not dependencies of the package (about 75 packages, 20 MB, for two commands):
 * scripts/build-vega.mjs bundles the parts the plots use into dist/vendor/vega.mjs, beside dist/cjs/ where this file
 * runs. The same code as the packages', so the same bytes.
 */
const VEGA_BUNDLE = path.resolve(__dirname, "..", "..", "vendor", "vega.mjs");

/** SVG text of a Vega-Lite specification, rendered headlessly. */
export async function renderSvg(spec: Record<string, unknown>): Promise<string> {
  const vega = (await importEsm(pathToFileURL(VEGA_BUNDLE).href)) as VegaBundle;
  const compiled = vega.compile(spec as never).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none" });
  const svg = await view.toSVG();
  view.finalize();
  const full = (spec.usermeta as { fullLabels?: Record<string, string> } | undefined)?.fullLabels;
  return full ? withTitles(svg, full) : svg;
}

const xmlText = (s: string) => s.replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]!);

/** Each <text> whose content is a key of `full` gets a <title> with its value: the label before it was shortened. */
function withTitles(svg: string, full: Record<string, string>): string {
  const byText = new Map(Object.entries(full).map(([shown, label]) => [xmlText(shown), xmlText(label)]));
  return svg.replace(/(<text\b[^>]*>)([^<]*)(<\/text>)/g, (m, open: string, text: string, close: string) => {
    const title = byText.get(text);
    return title === undefined ? m : `${open}<title>${title}</title>${text}${close}`;
  });
}
