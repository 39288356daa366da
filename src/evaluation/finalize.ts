/**
 * From an evaluator's recorded tasks to RankResults: one tabulation of every task (with the bootstrap run at once,
 * or in slices between event-loop turns for finalizeAsync), and the breakdown source the results tabulate subsets
 * with.
 */
import { SLICE_MS, turn } from "../contract/event-loop";
import type { RankMetric } from "../metrics/types";
import { RankResults, type BreakdownSource } from "./results";
import { type BootstrapRun, finishRun, subsetPart, type Tabulated, tabulate } from "./tabulate";
import { TaskBuffer } from "./task-buffer";
import type { BootstrapOptions, EvaluationInfo, SidePart, SideParts } from "./types";

export interface FinalizeRun {
  /** Tabulates every task; with `defer` the bootstrap is left in `runs` for finishRun(). */
  table(defer: boolean): Tabulated & { runs: BootstrapRun[] };
  results(t: Tabulated): RankResults;
}

export function finalizeRun(
  metrics: RankMetric[],
  info: EvaluationInfo & { backend: string },
  all: SideParts,
  bootstrap: Required<BootstrapOptions> | null,
): FinalizeRun {
  const keys = metrics.map((m) => m.key);
  const make = (
    t: Tabulated,
    notes: string[],
    boot: typeof bootstrap,
    tasks: BreakdownSource,
    group?: string,
  ): RankResults =>
    new RankResults(
      {
        values: t.values,
        expected: t.expected,
        meanRankWidth: t.meanRankWidth,
        keys,
        info: {
          ...structuredClone(info),
          tasks: {
            head: t.tasks.head,
            tail: t.tasks.tail,
            ...(info.sides.includes("relation") ? { relation: t.tasks.relation } : {}),
          },
          notes,
          ...(group ? { group } : {}),
        },
        intervals: t.intervals,
        bootstrap: boot,
      },
      tasks,
    );
  // A group's results hold the group's tasks (its tasks() and its own breakdowns are of those); the breakdowns group
  // entity tasks, so a group holds no relation task.
  const none: SidePart = { cols: new TaskBuffer().columns(), weights: null };
  const sourceOf = (parts: SideParts): BreakdownSource => ({
    ...parts,
    subset: subsetPart,
    tabulate: (gh, gt, label) => {
      const notes: string[] = [];
      const group = { head: gh, tail: gt, relation: none };
      return make(tabulate(metrics, group, notes, null, []), notes, null, sourceOf(group), label);
    },
  });
  const source = sourceOf(all);
  const notes: string[] = [];
  return {
    table: (defer) => tabulate(metrics, all, notes, bootstrap, info.sides, defer),
    results: (t) => make(t, notes, bootstrap, source),
  };
}

/** Runs the table and its bootstrap in slices of about 10 ms, yielding to the event loop between them. */
export async function finishAsync(run: FinalizeRun, signal: AbortSignal | undefined): Promise<RankResults> {
  signal?.throwIfAborted();
  const table = run.table(true);
  for (const r of table.runs) {
    while (!finishRun(table, r, performance.now() + SLICE_MS)) {
      await turn();
      signal?.throwIfAborted();
    }
  }
  return run.results(table);
}
