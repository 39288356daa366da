/**
 * The runs compareRuns compares, as tasks: which tasks of a run are compared (head and tail, or relation), how a task
 * is named in messages, and the checks that the runs rank the same tasks against the same candidate sets.
 */
import { KgrankInputError } from "../checks/errors";
import { protocolTasks, type RankResults, type TaskTable } from "../evaluation/results";

/** How a run names its entities and relations (by id when absent). */
export interface TaskLabels {
  entities?: readonly string[] | null;
  relations?: readonly string[] | null;
}

/** A task's identity as text: side and triple, in labels where the run has them, else ids (-1: unknown). */
function taskName(t: TaskTable, i: number, labels: TaskLabels | undefined): string {
  const e = (id: number) => (id >= 0 ? (labels?.entities?.[id] ?? String(id)) : "?");
  const r = (id: number) => (id >= 0 ? (labels?.relations?.[id] ?? String(id)) : "?");
  return `${t.side[i]} (${e(t.head[i]!)}, ${r(t.relation[i]!)}, ${e(t.tail[i]!)})`;
}

/** The tasks of a run's table on the compared side: head and tail ("both"), or relation. */
export function sideTasks(t: TaskTable, side: "both" | "relation", name: string): TaskTable {
  const kept = protocolTasks(t, side === "relation");
  if (kept.side.length === 0) {
    throw new KgrankInputError(
      "runs",
      side === "relation"
        ? `${name} has no relation task: compare relation tasks of runs evaluated with sides including "relation"`
        : `${name} has no head or tail task: compare its relation tasks with side "relation"`,
    );
  }
  return kept;
}

/**
 * Runs ranked against other typed candidates (or one with, one without), or in other temporal settings, rank other
 * candidate sets: refused.
 */
export function sameCandidates(runs: NamedRun[]): void {
  const of = (r: NamedRun) => {
    const { candidates: c, temporal: t } = r.results.info;
    return (
      (c ? `typed candidates ${c.source} (fingerprint ${c.fingerprint})` : "every entity") +
      (t ? ` in the ${t.setting} temporal setting (${t.numTimestamps} timestamps)` : "")
    );
  };
  // Equal sets are equal fingerprints, whatever their source's label (a path).
  const key = (r: NamedRun) => {
    const { candidates: c, temporal: t } = r.results.info;
    return `${c?.fingerprint ?? ""}|${t ? `${t.setting} ${t.numTimestamps}` : ""}`;
  };
  const first = of(runs[0]!);
  for (const r of runs.slice(1)) {
    if (key(r) !== key(runs[0]!)) {
      throw new KgrankInputError(
        "runs",
        `${r.name} was ranked against ${of(r)}, ${runs[0]!.name} against ${first}: the candidate sets change every ` +
          "rank and expectation; compare runs of one protocol (the states of the same --constrain-candidates, or none; " +
          "of the same temporal setting)",
      );
    }
  }
}

export function sameTasks(
  a: TaskTable,
  b: TaskTable,
  names: [string, string],
  labels: [TaskLabels | undefined, TaskLabels | undefined],
): void {
  if (a.side.length !== b.side.length) {
    throw new KgrankInputError(
      "runs",
      `${names[1]} has ${b.side.length} tasks, ${names[0]} ${a.side.length}: the runs must be over the same tasks`,
    );
  }
  const byId = !labels[0] && !labels[1];
  for (let i = 0; i < a.side.length; i++) {
    const same = byId
      ? a.side[i] === b.side[i] && a.head[i] === b.head[i] && a.relation[i] === b.relation[i] && a.tail[i] === b.tail[i]
      : taskName(a, i, labels[0]) === taskName(b, i, labels[1]);
    const sa = same ? "" : taskName(a, i, labels[0]);
    if (!same) {
      const sb = taskName(b, i, labels[1]);
      throw new KgrankInputError(
        "runs",
        `task ${i} differs: ${names[0]} has ${sa}, ${names[1]} has ${sb}; the runs must be over the same tasks in the same order`,
      );
    }
    if (a.numCandidates[i] !== b.numCandidates[i]) {
      throw new KgrankInputError(
        "runs",
        `task ${i} ${taskName(a, i, labels[0])} has ${a.numCandidates[i]} candidates in ${names[0]}, ${b.numCandidates[i]} in ${names[1]}: evaluated with other filter settings`,
      );
    }
    if (Number.isNaN(a.realistic[i]!) || Number.isNaN(b.realistic[i]!)) {
      throw new KgrankInputError(
        "runs",
        `task ${i} ${taskName(a, i, labels[0])} has no realistic rank: compare runs that record realistic ranks`,
      );
    }
  }
}

/** A run for compareRuns: its results, a name for messages and tables, and optionally its labels. */
export interface NamedRun {
  name: string;
  results: RankResults;
  /**
   * Entity and relation labels by id. With labels, tasks are matched by label (side, head, relation, tail), so runs
   * whose ids differ (e.g. rank files read with their own label maps) compare; without, by id.
   */
  labels?: TaskLabels | null;
}
