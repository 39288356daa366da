/**
 * `kgrank compare A B [C ...]`: runs saved by `kgrank evaluate --save-state` (each the state of a whole run or a
 * merged queue run) or their per-task rank files (`--ranks-out` .npz / .tsv), compared over the same tasks with
 * compareRuns(): every later run against the first.
 */
import { type Comparison, compareRunsAsync } from "../compare/paired";
import { KgrankInputError } from "../checks/errors";

import { csv, type Format, fmt, fmtP, json, table } from "../run/format";
import { loadRun } from "./rank-files";
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
  let cmp: Comparison;
  let progress: Progress | null = null;
  try {
    // Between event-loop turns, so that SIGINT (the CLI's handler: exit 130, nothing written) is handled at once.
    cmp = await compareRunsAsync(
      runs,
      { metrics: opts.metrics, samples: opts.samples, seed: opts.seed, correction: opts.correction },
      undefined,
      ({ done, total }) => {
        progress ??= new Progress(
          `comparing ${runs.length - 1} run${runs.length > 2 ? "s" : ""} with ${runs[0]!.name} (${total / 2 / (runs.length - 1)} samples)`,
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
  const correction = { holm: "Holm-Bonferroni", bh: "Benjamini-Hochberg", none: "none" }[cmp.correction];
  let text: string;
  if (opts.format === "json") text = json(cmp);
  else {
    const header = [
      "metric",
      "run",
      "baseline",
      "value",
      "difference",
      `${Math.round(cmp.confidenceLevel * 100)}% interval`,
      "p (randomization)",
      `p adjusted`,
      "p (t-test)",
      "p (Wilcoxon)",
      "d_z",
    ];
    const rows = cmp.rows.map((r) => [
      r.metric,
      cmp.names[r.run]!,
      fmt(r.valueA),
      fmt(r.valueB),
      fmt(r.difference),
      `[${fmt(r.lower)}, ${fmt(r.upper)}]`,
      fmtP(r.pRandomization),
      fmtP(r.pAdjusted),
      r.pTTest === null ? "" : fmtP(r.pTTest),
      r.pWilcoxon === null ? "" : fmtP(r.pWilcoxon),
      r.effectSize === null ? "" : fmt(r.effectSize, 3),
    ]);
    if (opts.format === "csv") {
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
        cmp.rows.map((r) => [
          r.metric,
          cmp.names[r.run]!,
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
      );
    } else {
      text = [
        `${cmp.names.slice(1).join(", ")} against ${cmp.names[0]}: ${cmp.tasks} paired tasks, realistic ranks`,
        "",
        table(opts.format, header, rows, 2),
        "",
        `randomization test and paired bootstrap: ${cmp.samples} samples, seed ${cmp.seed}; p adjusted over all ${cmp.rows.length} rows: ${correction}; ` +
          "t-test and Wilcoxon only for means of per-task values",
      ].join("\n");
    }
  }
  emit(out, text, opts.output, opts.quiet);
}
