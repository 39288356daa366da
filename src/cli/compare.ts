/**
 * `kgrank compare A B [C ...]`: runs saved by `kgrank evaluate --save-state` (each the state of a whole run or a
 * merged queue run) compared over their common tasks with compareRuns(): every later run against the first.
 */
import * as path from "node:path";

import { compareRuns } from "../compare/paired";
import { KgrankInputError } from "../errors";
import { RankEvaluator } from "../evaluation/evaluator";
import { readRegularFile } from "../io/files";

import { csv, type Format, fmt, fmtP, json, table } from "./format";
import { emit, type Out } from "./shared";

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
  if (files.length < 2) throw new KgrankInputError("FILE", "give at least two saved runs (kgrank evaluate ... --save-state FILE)");
  const runs = files.map((file) => {
    let ev: RankEvaluator;
    try {
      ev = RankEvaluator.deserialize(new Uint8Array(readRegularFile(file, file)));
    } catch (e) {
      if (e instanceof KgrankInputError) throw new KgrankInputError(file, e.message.replace(/^states\[0\]: /, ""));
      throw e;
    }
    return { name: path.basename(file), results: ev.finalize() };
  });
  const cmp = compareRuns(runs, { metrics: opts.metrics, samples: opts.samples, seed: opts.seed, correction: opts.correction });
  const correction = { holm: "Holm-Bonferroni", bh: "Benjamini-Hochberg", none: "none" }[cmp.correction];
  let text: string;
  if (opts.format === "json") text = json(cmp);
  else {
    const header = ["metric", "run", "baseline", "value", "difference", `${Math.round(cmp.confidenceLevel * 100)}% interval`, "p (randomization)", `p adjusted`, "p (t-test)", "p (Wilcoxon)", "d_z"];
    const rows = cmp.rows.map((r) => [
      r.metric, cmp.names[r.run]!, fmt(r.valueA), fmt(r.valueB), fmt(r.difference), `[${fmt(r.lower)}, ${fmt(r.upper)}]`,
      fmtP(r.pRandomization), fmtP(r.pAdjusted), r.pTTest === null ? "" : fmtP(r.pTTest), r.pWilcoxon === null ? "" : fmtP(r.pWilcoxon),
      r.effectSize === null ? "" : fmt(r.effectSize, 3),
    ]);
    if (opts.format === "csv") {
      text = csv(
        ["metric", "run", "baseline", "value", "difference", "lower", "upper", "p_randomization", "p_adjusted", "p_ttest", "p_wilcoxon", "d_z"],
        cmp.rows.map((r) => [r.metric, cmp.names[r.run]!, r.valueA, r.valueB, r.difference, r.lower, r.upper, r.pRandomization, r.pAdjusted, r.pTTest ?? undefined, r.pWilcoxon ?? undefined, r.effectSize ?? undefined]),
      );
    }
    else {
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
