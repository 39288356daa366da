/**
 * `kgrank compare A B [C ...]`: runs saved by `kgrank evaluate --save-state` (each the state of a whole run or a
 * merged queue run) or their per-task rank files (`--ranks-out` .npz / .tsv), compared over the same tasks with
 * compareRuns(): every later run against the first. The head and tail tasks are compared, and the relation tasks
 * (h, ?, t) apart when every run has them (a run of relation tasks alone compares those only).
 */
import { type Comparison, compareRunsAsync, type NamedRun } from "../compare/paired";
import { KgrankInputError } from "../checks/errors";

import { csv, type Format, fmt, fmtP, json, table } from "../run/format";
import { type LoadedRun, loadRun } from "./rank-files";
import { emit, type Out } from "../run/out";
import { Progress } from "../run/progress";

export interface CompareCliOptions {
  metrics?: string[];
  samples: number;
  seed: number;
  correction: "holm" | "bh" | "none";
  format: Format;
  output?: string;
  quiet?: boolean;
}

export async function compareCommand(files: string[], opts: CompareCliOptions, out: Out): Promise<void> {
  if (files.length < 2)
    throw new KgrankInputError(
      "FILE",
      "give at least two saved runs (kgrank evaluate ... --save-state FILE, or --ranks-out FILE.npz / .tsv)",
    );
  const loaded = files.map(loadRun);
  const runs = loaded.map((r) => ({ name: r.name, results: r.evaluator.finalize(), labels: r.labels }));
  const counts = runs.map((r) => r.results.info.tasks);
  const entity = counts.some((t) => t.head + t.tail > 0);
  const relation = counts.every((t) => (t.relation ?? 0) > 0);
  const cmp = await compareSide(runs, loaded, opts, out, entity || !relation ? "both" : "relation");
  const cmpRelation = entity && relation ? await compareSide(runs, loaded, opts, out, "relation") : null;
  const correction = { holm: "Holm-Bonferroni", bh: "Benjamini-Hochberg", none: "none" }[cmp.correction];
  const relationOnly = !entity && relation;
  /** Relation rows are named relation.METRIC in CSV, apart from the head and tail rows. */
  const sections = [
    { cmp, prefix: relationOnly ? "relation." : "" },
    ...(cmpRelation ? [{ cmp: cmpRelation, prefix: "relation." }] : []),
  ];
  let text: string;
  // JSON: the relation comparison under "relation" (beside the head and tail one, or alone).
  if (opts.format === "json")
    text = json(cmpRelation ? { ...cmp, relation: cmpRelation } : relationOnly ? { relation: cmp } : cmp);
  else if (opts.format === "csv") {
    text = csv(
      [
        "metric",
        "run",
        "baseline",
        "value",
        "difference",
        "lower",
        "upper",
        "p_randomization",
        "p_adjusted",
        "p_ttest",
        "p_wilcoxon",
        "d_z",
      ],
      sections.flatMap(({ cmp: c, prefix }) =>
        c.rows.map((r) => [
          prefix + r.metric,
          c.names[r.run]!,
          r.valueA,
          r.valueB,
          r.difference,
          r.lower,
          r.upper,
          r.pRandomization,
          r.pAdjusted,
          r.pTTest ?? undefined,
          r.pWilcoxon ?? undefined,
          r.effectSize ?? undefined,
        ]),
      ),
    );
  } else {
    text = sections
      .map(({ cmp: c, prefix }) => {
        const what = prefix ? "relation tasks (h, ?, t)" : "paired tasks";
        return [
          `${c.names.slice(1).join(", ")} against ${c.names[0]}: ${c.tasks} ${what}, realistic ranks`,
          "",
          table(opts.format as "table" | "markdown", HEADER(c), c.rows.map(rowText(c)), 2),
          "",
          `randomization test and paired bootstrap: ${c.samples} samples, seed ${c.seed}; p adjusted over all ${c.rows.length} rows: ${correction}; ` +
            "t-test and Wilcoxon only for means of per-task values",
        ].join("\n");
      })
      .join("\n\n");
  }
  emit(out, text, opts.output, opts.quiet);
}

const HEADER = (c: Comparison) => [
  "metric",
  "run",
  "baseline",
  "value",
  "difference",
  `${Math.round(c.confidenceLevel * 100)}% interval`,
  "p (randomization)",
  `p adjusted`,
  "p (t-test)",
  "p (Wilcoxon)",
  "d_z",
];

const rowText = (c: Comparison) => (r: Comparison["rows"][number]) => [
  r.metric,
  c.names[r.run]!,
  fmt(r.valueA),
  fmt(r.valueB),
  fmt(r.difference),
  `[${fmt(r.lower)}, ${fmt(r.upper)}]`,
  fmtP(r.pRandomization),
  fmtP(r.pAdjusted),
  r.pTTest === null ? "" : fmtP(r.pTTest),
  r.pWilcoxon === null ? "" : fmtP(r.pWilcoxon),
  r.effectSize === null ? "" : fmt(r.effectSize, 3),
];

/** One comparison (head and tail tasks, or relation tasks) with its progress line; errors name what differs. */
async function compareSide(
  runs: NamedRun[],
  loaded: LoadedRun[],
  opts: CompareCliOptions,
  out: Out,
  side: "both" | "relation",
): Promise<Comparison> {
  let progress: Progress | null = null;
  try {
    // Between event-loop turns, so that SIGINT (the CLI's handler: exit 130, nothing written) is handled at once.
    return await compareRunsAsync(
      runs,
      { metrics: opts.metrics, samples: opts.samples, seed: opts.seed, correction: opts.correction, side },
      undefined,
      ({ done, total }) => {
        progress ??= new Progress(
          `comparing ${side === "relation" ? "relation tasks of " : ""}${runs.length - 1} run${runs.length > 2 ? "s" : ""} with ${runs[0]!.name} (${total / 2 / (runs.length - 1)} samples)`,
          total,
          { quiet: opts.quiet, report: out.progress, line: (t) => out.stderr(t) },
        );
        progress.tick();
        if (done === total) progress.done();
      },
    );
  } catch (e) {
    (progress as Progress | null)?.stop();
    // A .tsv names entities by label, states and .npz by id: say so when such a mix is what differs.
    const kinds = new Set(loaded.map((r) => (r.kind === "tsv" ? "labels" : "ids")));
    if (e instanceof KgrankInputError && /^runs: task \d+ differs/.test(e.message) && kinds.size > 1) {
      throw new KgrankInputError(
        "runs",
        `${e.message.replace(/^runs: /, "")} (a .tsv rank file names tasks by label, a state or .npz by id: compare like with like)`,
      );
    }
    throw e;
  }
}
