/**
 * The view model of the printed results (src/run/evaluation-view.ts): plain data that says what is shown, read from
 * RankResults once, so that render.ts's writers lay it out without reading RankResults. On this project's backend.
 */
import { describe, expect, it } from "vitest";

import { estimateFromSampledRanks, FrequencyBaseline, loadDataset, RankEvaluator } from "../src/index";
import { evaluationView, sampledEstimatesView } from "../src/run/evaluation-view";
import { fmt } from "../src/run/format";
import type { ReportInfo } from "../src/run/report-info";
import { renderEvaluation, renderSampledEstimates } from "../src/run/render";

const nations = loadDataset("nations");
const n = nations.numEntities;

async function nationsResults(bootstrap: boolean) {
  const b = new FrequencyBaseline(nations.splits.train, n, nations.numRelations);
  const ev = new RankEvaluator({
    numEntities: n,
    numRelations: nations.numRelations,
    filterTriples: [nations.splits.train, nations.splits.valid, nations.splits.test],
  });
  for (const side of ["head", "tail"] as const)
    await ev.add({ triples: nations.splits.test, side, scores: b.scoreBatch(nations.splits.test, side) });
  return ev.finalizeAsync(bootstrap ? { bootstrap: { samples: 20, seed: 3, confidenceLevel: 0.95 } } : {});
}

function report(over: Partial<ReportInfo> = {}): ReportInfo {
  return {
    title: "nations test, filtered, frequency baseline",
    dataset: "nations",
    split: "test",
    numEntities: n,
    triples: nations.splits.test.length / 3,
    dropped: 0,
    setting: "filtered by train+valid+test",
    scorer: "frequency baseline",
    metrics: null,
    ks: null,
    byRelation: true,
    bootstrap: null,
    seed: 0,
    relationLabels: [...nations.relationLabels],
    ...over,
  };
}

type Table = { header: string[]; rows: string[][] };
const tables = (blocks: unknown[]) => blocks.filter((b): b is Table => typeof b === "object" && b !== null);

describe("evaluationView", () => {
  it("is plain data in every format: no RankResults or other class instance inside", async () => {
    const results = await nationsResults(true);
    for (const format of ["table", "markdown", "csv", "json"] as const) {
      const view = evaluationView({ results, report: report({ bootstrap: 20 }), t0: 0 }, format);
      expect(structuredClone(view)).toStrictEqual(view);
    }
  });

  it("table and markdown: the compact table's cells are the results' realistic values, formatted", async () => {
    const results = await nationsResults(false);
    const view = evaluationView({ results, report: report(), t0: 0 }, "table");
    expect(view.kind).toBe("blocks");
    if (view.kind !== "blocks") return;
    const [compact, perRelation] = tables(view.blocks);
    expect(compact!.header).toEqual(["metric", "head", "tail", "both", "random E"]);
    const mrr = compact!.rows.find((r) => r[0] === "MRR")!;
    expect(mrr.slice(1, 4)).toEqual(
      (["head", "tail", "both"] as const).map((s) => fmt(results.get(`${s}.realistic.inverse_harmonic_mean_rank`))),
    );
    expect(mrr[4]).toBe(fmt(results.expected("both.inverse_harmonic_mean_rank")));
    // --by-relation: a row per relation with its task count, in the breakdown's order.
    const groups = results.byRelation();
    expect(perRelation!.rows.map((r) => [r[0], r[1]])).toEqual(
      groups.map((g) => [nations.relationLabels[g.relation], String(g.count)]),
    );
    // The writer lays the blocks out in order: every text block is a line of the output.
    const text = renderEvaluation(results, report(), "table", 0).split("\n");
    for (const b of view.blocks.filter((b): b is string => typeof b === "string" && !b.startsWith("done in")))
      expect(text).toContain(b);
  });

  it("--metrics: RankResults' full table (every rank type) and its footer", async () => {
    const results = await nationsResults(false);
    const view = evaluationView(
      { results, report: report({ metrics: ["all"], byRelation: false }), t0: 0 },
      "markdown",
    );
    if (view.kind !== "blocks") throw new Error(view.kind);
    const full = results.toTable({ format: "markdown" });
    const [t] = tables(view.blocks);
    expect(t!.header[1]).toBe("head opti.");
    expect(full).toContain(view.blocks[view.blocks.indexOf(t!) + 2] as string);
    expect(renderEvaluation(results, report({ metrics: ["all"], byRelation: false }), "markdown", 0)).toContain(full);
  });

  it("json and csv: the document holds the results' values; every 'all' row is one of them", async () => {
    const results = await nationsResults(true);
    const doc = evaluationView({ results, report: report(), t0: 0 }, "json");
    if (doc.kind !== "document") throw new Error(doc.kind);
    expect((doc.document as { results: unknown }).results).toEqual(results.toJSON());
    const rows = evaluationView({ results, report: report(), t0: 0 }, "csv");
    if (rows.kind !== "rows") throw new Error(rows.kind);
    const all = rows.rows.filter((r) => r[0] === "all");
    expect(all.length).toBeGreaterThan(0);
    for (const [, side, rt, metric, value, , lower, upper] of all) {
      expect(value).toBe(results.get(`${side as "both"}.${rt as "realistic"}.${metric as string}`));
      const iv = results.interval(`${side as "both"}.${rt as "realistic"}.${metric as string}`);
      expect([lower, upper]).toEqual([iv?.lower, iv?.upper]);
    }
  });
});

describe("sampledEstimatesView", () => {
  it("estimate-full's estimates: one row per estimator and metric, intervals only with a bootstrap", () => {
    const ranks = Float64Array.from({ length: 50 }, (_, i) => 1 + (i % 6));
    const est = estimateFromSampledRanks({ ranks, numNegatives: 5, numCandidates: 14 });
    const view = sampledEstimatesView(est, "table", false);
    if (view.kind !== "blocks") throw new Error(view.kind);
    const [t] = tables(view.blocks);
    expect(t!.header).toEqual(["estimator", "metric", "estimate"]);
    const expected = Object.entries(est.values).flatMap(([e, m]) =>
      Object.entries(m!).map(([metric, v]) => [e, metric, fmt(v.estimate)]),
    );
    expect(t!.rows).toEqual(expected);
    expect(renderSampledEstimates(est, "table", false)).toContain(view.blocks[0] as string);
    const rows = sampledEstimatesView(est, "csv", false);
    if (rows.kind !== "rows") throw new Error(rows.kind);
    expect(rows.rows.length).toBe(expected.length);
  });
});
