/**
 * One self-contained HTML report of one or more runs (nothing is fetched: styles, SVG plots and a few lines of
 * script are inline), readable on a laptop screen: per run the main metrics with their random expectation,
 * adjusted index and bootstrap intervals, the mean rank width, the rank distribution, the Hits@k curve and MRR per
 * relation, and (given the training triples) MRR per relation category and per degree bin; a relation-prediction
 * section where the run ranked relations (h, ?, t); with several runs, first a summary (what was compared, each
 * metric's values, differences and best run) and their paired comparison with significance marks (of the relation
 * tasks apart, when every run has them), then the runs.
 */
import { type Comparison, compareRunsAsync } from "../compare/paired";
import type { RankResults } from "../evaluation/results";
import type { TemporalProtocol, TemporalSetting } from "../evaluation/types";
import type { CandidateProtocol } from "../ranking/candidate-sets";
import { categoryRows, degreeRows, type GroupRow, type PlotName, plotSpec, renderSvg } from "./plots";
import { getMetric } from "../metrics/index";
import { markupLabel } from "../text/labels";
import { fmt } from "../text/table";

export interface ReportRun {
  name: string;
  results: RankResults;
  relationLabels?: readonly string[] | null;
  /** Training triples of the run's dataset: with them, the relation-category and degree breakdowns appear. */
  trainTriples?: Int32Array | null;
  /** The dataset they come from (named in the sections). */
  dataset?: string | null;
  /** Why there are no breakdowns, when there are none (shown in their place). */
  breakdownNote?: string | null;
}

function groupTable(first: string, rows: GroupRow[], withRelations: boolean): string {
  const body = rows.map(
    (r) =>
      `<tr><th scope="row">${label(r.label)}</th>${withRelations ? `<td>${r.relations}</td>` : ""}<td>${r.tasks}</td><td>${r.head}</td><td>${r.tail}</td>` +
      `<td>${fmt(r.mrr)}</td><td>${fmt(r.hits10)}</td></tr>`,
  );
  return (
    `<table><thead><tr><th>${first}</th>${withRelations ? "<th>relations</th>" : ""}<th>tasks</th><th>head</th><th>tail</th>` +
    `<th>MRR</th><th>Hits@10</th></tr></thead><tbody>${body.join("")}</tbody></table>`
  );
}

/** The relation-category and degree sections of a run (tables and plots), or the note saying why they are absent. */
async function breakdowns(run: ReportRun): Promise<string> {
  const train = run.trainTriples;
  if (!train)
    return run.breakdownNote
      ? `<p class="meta note">Relation-category and degree breakdowns: ${escape(run.breakdownNote)}</p>`
      : "";
  const from = run.dataset ? ` of ${escape(run.dataset)}` : "";
  const plot = async (name: PlotName) =>
    `<figure class="plot" data-plot="${name}">${await renderSvg(plotSpec(name, run.results, { trainTriples: train }))}</figure>`;
  return (
    `<h3>By relation category</h3><p class="meta">Bordes et al. (2013) from the training triples${from}: a side is "N" when its ` +
    `relation has on average 1.5 or more answers per anchor there (1-N: one head, many tails); "unseen": not in training. ` +
    `Realistic ranks, both sides.</p>` +
    groupTable("category", categoryRows(run.results, train), true) +
    (await plot("categories")) +
    `<h3>By degree</h3><p class="meta">Degree of the entity to predict: the training triples${from} it occurs in (as head or ` +
    `tail), in bins 0, 1, 2–3, 4–7, …. Realistic ranks, both sides.</p>` +
    groupTable("degree", degreeRows(run.results, train), false) +
    (await plot("degrees"))
  );
}

const MAIN = [
  ["inverse_harmonic_mean_rank", "MRR"],
  ["hits_at_1", "Hits@1"],
  ["hits_at_3", "Hits@3"],
  ["hits_at_10", "Hits@10"],
  ["arithmetic_mean_rank", "MR"],
  ["adjusted_arithmetic_mean_rank_index", "AMRI (adjusted index)"],
  ["adjusted_inverse_harmonic_mean_rank", "adjusted MRR"],
  ["z_inverse_harmonic_mean_rank", "z-MRR"],
  ["median_rank", "median rank"],
] as const;

/** Text for HTML; labels from the user's files go through `label` (their direction isolated, what XML forbids escaped). */
const escape = (s: string) =>
  s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);

const label = (s: string) => escape(markupLabel(s));

function cell(r: RankResults, side: string, key: string): number | undefined {
  try {
    return r.get(`${side}.realistic.${key}`);
  } catch {
    return undefined;
  }
}

function metricTable(r: RankResults): string {
  const boot = bootstrapColumn(r, "both");
  const rows = MAIN.filter(([key]) => cell(r, "both", key) !== undefined).map(([key, title]) => {
    const iv = r.interval(`both.realistic.${key}`);
    const e = (() => {
      try {
        return r.expected(`both.${key}`);
      } catch {
        return undefined;
      }
    })();
    return (
      `<tr><th scope="row">${title}</th>${["head", "tail", "both"].map((s) => `<td>${fmt(cell(r, s, key))}</td>`).join("")}` +
      `<td>${e === undefined ? "" : fmt(e)}</td>${boot ? `<td>${iv ? `[${fmt(iv.lower)}, ${fmt(iv.upper)}]` : ""}</td>` : ""}</tr>`
    );
  });
  return (
    `<table><thead><tr><th>metric (realistic ranks)</th><th>head</th><th>tail</th><th>both</th><th>random E (both)</th>` +
    `${boot ? `<th>${boot}</th>` : ""}</tr></thead><tbody>${rows.join("")}</tbody></table>`
  );
}

/** The heading of the bootstrap interval column, or null when the results have no intervals (no --bootstrap). */
function bootstrapColumn(r: RankResults, of: string): string | null {
  return r.intervals() ? `bootstrap interval (${of})` : null;
}

/** The relation side's main metrics (realistic, optimistic and pessimistic ranks), E and bootstrap interval. */
function relationSection(r: RankResults): string {
  const boot = bootstrapColumn(r, "realistic");
  const rows = MAIN.filter(([key]) => cell(r, "relation", key) !== undefined).map(([key, title]) => {
    const iv = r.interval(`relation.realistic.${key}`);
    const e = r.expected(`relation.${key}`);
    const at = (rt: string) => {
      try {
        return fmt(r.get(`relation.${rt}.${key}`));
      } catch {
        return "";
      }
    };
    return (
      `<tr><th scope="row">${title}</th><td>${at("realistic")}</td><td>${at("optimistic")}</td><td>${at("pessimistic")}</td>` +
      `<td>${e === undefined ? "" : fmt(e)}</td>${boot ? `<td>${iv ? `[${fmt(iv.lower)}, ${fmt(iv.upper)}]` : ""}</td>` : ""}</tr>`
    );
  });
  return (
    `<h3>Relation prediction</h3><p class="meta">${r.info.tasks.relation} tasks (h, ?, t), each ranking its relation among ` +
    `the ${r.info.numRelations} relations${r.info.filtered ? ", the other known relations of (h, t) filtered" : ""}; ` +
    `never pooled into "both". Mean rank width ${fmt(r.meanRankWidth("relation"))}.</p>` +
    `<table><thead><tr><th>metric</th><th>realistic</th><th>optimistic</th><th>pessimistic</th><th>random E</th>` +
    `${boot ? `<th>${boot}</th>` : ""}</tr></thead><tbody>${rows.join("")}</tbody></table>`
  );
}

/** The typed-candidate protocol of a run (kgrank evaluate --constrain-candidates), above its tables. */
function candidatesNote(c: CandidateProtocol): string {
  const source = c.source === "train" ? "the heads and tails each relation has in train" : c.source;
  return (
    `<h3>Typed candidates</h3><p class="meta">Each head or tail task ranked against its relation's allowed entities ` +
    `and its true answer: ${label(source)}, ${c.pairs} allowed relation-entity pairs (fingerprint ${c.fingerprint}). ` +
    "Candidate counts, random expectations and adjusted metrics follow these sets.</p>"
  );
}

const TEMPORAL_WORDS: Record<TemporalSetting, string> = {
  raw: "raw: no known fact removed",
  static: "static filter: every known (h, r, t) removed, whatever its time",
  timeAware: "time-aware filter: only the facts known at the task's own timestamp removed",
};

/** The temporal setting of a run (a TemporalEvaluator's evaluator), above its tables. */
function temporalNote(t: TemporalProtocol): string {
  return (
    `<h3>Time-aware evaluation</h3><p class="meta">Quadruples (h, r, t, τ) over ${t.numTimestamps} timestamps, ` +
    `${TEMPORAL_WORDS[t.setting]}.${t.setting === "timeAware" ? " Relation ids here are r × timestamps + τ." : ""}</p>`
  );
}

/** A metric key as the report's tables name it (MRR, Hits@10, ...), else the key itself. */
function metricTitle(key: string): string {
  const named = MAIN.find(([k]) => k === key);
  if (named) return named[1].replace(/ \(adjusted index\)$/, "");
  const hits = /^hits_at_(\d+)$/.exec(key);
  return hits ? `Hits@${hits[1]}` : key;
}

/**
 * The report's first screen with several runs: which runs were compared (the first is the baseline), over how many
 * paired tasks, and per metric every run's value, its difference from the baseline with the significance mark, and
 * the best run.
 */
function summarySection(cmp: Comparison, side: "both" | "relation"): string {
  const mark = (p: number) => (p < 0.01 ? "**" : p < 0.05 ? "*" : "");
  const names = cmp.names;
  const metrics = [...new Set(cmp.rows.map((r) => r.metric))];
  const wins = new Map<string, number>();
  const body = metrics.map((key) => {
    const rows = cmp.rows.filter((r) => r.metric === key);
    const values = [rows[0]!.valueA, ...names.slice(1).map((_, j) => rows.find((r) => r.run === j + 1)?.valueB ?? NaN)];
    const increasing = (() => {
      try {
        return getMetric(key).increasing;
      } catch {
        return true;
      }
    })();
    let best = 0;
    values.forEach((v, i) => {
      if (increasing ? v > values[best]! : v < values[best]!) best = i;
    });
    const tie = values.every((v) => v === values[0]);
    if (!tie) wins.set(names[best]!, (wins.get(names[best]!) ?? 0) + 1);
    const cells = values.map((v, i) => {
      const row = i === 0 ? null : rows.find((r) => r.run === i);
      const diff = row
        ? ` <span class="diff">(${row.difference >= 0 ? "+" : ""}${fmt(row.difference)}<span class="sig">${mark(row.pAdjusted)}</span>)</span>`
        : "";
      return `<td${!tie && i === best ? ' class="best"' : ""}>${fmt(v)}${diff}</td>`;
    });
    return `<tr><th scope="row">${escape(metricTitle(key))} <span class="dir">${increasing ? "↑" : "↓"}</span></th>${cells.join("")}<td>${tie ? "tie" : label(names[best]!)}</td></tr>`;
  });
  const leader = [...wins.entries()].sort((a, b) => b[1] - a[1])[0];
  return (
    `<section class="summary"><h2>Summary: ${names.map((n) => label(n)).join(" vs ")}</h2>` +
    `<p class="meta">${names.length} runs over the same ${cmp.tasks} ${side === "relation" ? "relation " : ""}tasks (realistic ranks${side === "both" ? ", head and tail" : ""}); ` +
    `baseline ${label(names[0]!)}: the differences are each run's value minus the baseline's, * p &lt; 0.05, ** p &lt; 0.01 ` +
    `(adjusted, ${cmp.samples} samples); the best value of each metric in bold.` +
    `${leader ? ` Best on most metrics: <b>${label(leader[0])}</b> (${leader[1]} of ${metrics.length}).` : ""}</p>` +
    `<table><thead><tr><th>metric</th>${names.map((n, i) => `<th>${label(n)}${i === 0 ? " (baseline)" : ""}</th>`).join("")}<th>best</th></tr></thead>` +
    `<tbody>${body.join("")}</tbody></table></section>`
  );
}

/** A comparison's table with its note; `what` says which tasks. */
function comparisonSection(cmp: Comparison, what: string): string {
  const mark = (p: number) => (p < 0.01 ? "**" : p < 0.05 ? "*" : "");
  const rows = cmp.rows.map(
    (row) =>
      `<tr><th scope="row">${row.metric}</th><td>${label(cmp.names[row.run]!)}</td><td>${fmt(row.valueA)}</td><td>${fmt(row.valueB)}</td>` +
      `<td>${fmt(row.difference)}<span class="sig">${mark(row.pAdjusted)}</span></td><td>[${fmt(row.lower)}, ${fmt(row.upper)}]</td>` +
      `<td>${row.pAdjusted.toPrecision(3)}</td></tr>`,
  );
  return (
    `<section><h2>${what} with ${label(cmp.names[0]!)}</h2><p class="meta">${cmp.tasks} paired tasks; randomization test and paired ` +
    `bootstrap with ${cmp.samples} samples (seed ${cmp.seed}); p adjusted by ${cmp.correction === "holm" ? "Holm–Bonferroni" : cmp.correction}; ` +
    `* p &lt; 0.05, ** p &lt; 0.01 (adjusted).</p><table><thead><tr><th>metric</th><th>run</th><th>${label(cmp.names[0]!)}</th><th>run value</th>` +
    `<th>difference</th><th>${Math.round(cmp.confidenceLevel * 100)}% interval</th><th>p (adjusted)</th></tr></thead><tbody>${rows.join("")}</tbody></table></section>`
  );
}

export async function buildReport(
  runs: ReportRun[],
  opts: {
    samples?: number;
    seed?: number;
    /** Hears of each run's section as it is done, then of every replicate of the comparison. */
    onProgress?: (stage: "sections" | "comparison", done: number, total: number) => void;
  } = {},
): Promise<string> {
  const sections: string[] = [];
  const comparisons: string[] = [];
  for (const run of runs) {
    const r = run.results;
    const info = r.info;
    const plots = [];
    const entity = info.tasks.head + info.tasks.tail > 0;
    const names: PlotName[] = entity
      ? ["ranks", "hits", ...(r.tasks().relation.some((x) => x >= 0) ? (["relations"] as const) : [])]
      : [];
    for (const name of names) {
      plots.push(
        `<figure class="plot" data-plot="${name}">${await renderSvg(plotSpec(name, r, { relationLabels: run.relationLabels }))}</figure>`,
      );
    }
    sections.push(
      `<section><h2>${label(run.name)}</h2>` +
        `<p class="meta">${info.tasks.head} head and ${info.tasks.tail} tail tasks, ${info.numEntities} entities, ` +
        `${info.filtered ? `filtered (${info.knownTriples ?? info.filterTriples.reduce((a, b) => a + b, 0)} known triples)` : "unfiltered"}, ` +
        `backend ${escape(info.backend)}. Mean rank width (pessimistic − optimistic, ties): head ${fmt(r.meanRankWidth("head"))}, ` +
        `tail ${fmt(r.meanRankWidth("tail"))}, both ${fmt(r.meanRankWidth("both"))}.</p>` +
        (info.candidates ? candidatesNote(info.candidates) : "") +
        (info.temporal ? temporalNote(info.temporal) : "") +
        (entity ? metricTable(r) : "") +
        plots.join("") +
        (entity ? await breakdowns(run) : "") +
        (info.tasks.relation ? relationSection(r) : "") +
        `</section>`,
    );
    opts.onProgress?.("sections", sections.length, runs.length);
  }
  if (runs.length >= 2) {
    // The head and tail tasks when every run has them; the relation tasks apart when every run has them.
    const has = (side: "entity" | "relation") =>
      runs.every((x) =>
        side === "entity"
          ? x.results.info.tasks.head + x.results.info.tasks.tail > 0
          : (x.results.info.tasks.relation ?? 0) > 0,
      );
    const sides = [...(has("entity") ? (["both"] as const) : []), ...(has("relation") ? (["relation"] as const) : [])];
    for (const [k, side] of sides.entries()) {
      const cmp = await compareRunsAsync(
        runs.map((x) => ({ name: x.name, results: x.results })),
        { samples: opts.samples ?? 2000, seed: opts.seed ?? 0, side },
        undefined,
        ({ done, total }) => opts.onProgress?.("comparison", done + k * total, total * sides.length),
      );
      if (comparisons.length === 0) comparisons.push(summarySection(cmp, side));
      comparisons.push(comparisonSection(cmp, side === "relation" ? "Relation prediction compared" : "Comparison"));
    }
  }
  // What was compared and who won first, then the comparison in full, then each run.
  sections.unshift(...comparisons);
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>kgrank report</title>
<style>
body { font-family: Helvetica, Arial, sans-serif; max-width: 1100px; margin: 1.5em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid #ccc; padding: 0.25em 0.7em; text-align: right; }
th[scope=row], thead th:first-child { text-align: left; }
.meta { color: #555; } h3 { margin-top: 1.5em; } .sig { font-weight: bold; } figure.plot { margin: 1.5em 0; } svg { max-width: 100%; height: auto; }
td.best { font-weight: bold; } .diff { color: #555; } .dir { color: #888; font-weight: normal; }
</style></head><body>
<h1>kgrank report</h1>
${sections.join("\n")}
<script>
// Marks drawn per plot, for a reader's sanity and the report's browser test.
const marks = [...document.querySelectorAll("figure.plot")].map((f) => f.dataset.plot + ":" + f.querySelectorAll("g.role-mark path, g.role-mark rect, g.role-mark line").length);
document.body.dataset.marks = marks.join(",");
</script>
</body></html>
`;
}
