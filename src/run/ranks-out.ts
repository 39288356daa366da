/**
 * `--ranks-out FILE`: every task's ranks (RankResults.tasks()) as `.npz` (arrays side (0 head, 1 tail, 2 relation), head,
 * relation, tail as int32 ids; optimistic, realistic, pessimistic, num_candidates as float64) or `.tsv` (a header,
 * then one line per task with entity and relation labels where known, else ids).
 */
import * as path from "node:path";

import { KgrankInputError } from "../checks/errors";
import type { RankResults } from "../evaluation/results";
import { writeFileAtomic } from "../io/atomic";
import { writeNpz } from "../io/npz-write";

export function writeRanksOut(
  file: string,
  results: RankResults,
  labels: { entities?: readonly string[] | null; relations?: readonly string[] | null } = {},
): void {
  const ext = path.extname(file).toLowerCase();
  if (ext !== ".npz" && ext !== ".tsv")
    throw new KgrankInputError("--ranks-out", `must end in .npz or .tsv, got "${path.basename(file).slice(0, 60)}"`);
  const t = results.tasks();
  const n = t.side.length;
  if (ext === ".npz") {
    writeNpz(
      file,
      {
        side: { data: Int8Array.from(t.side, (s) => (s === "head" ? 0 : s === "tail" ? 1 : 2)) },
        head: { data: t.head },
        relation: { data: t.relation },
        tail: { data: t.tail },
        optimistic: { data: t.optimistic },
        realistic: { data: t.realistic },
        pessimistic: { data: t.pessimistic },
        num_candidates: { data: t.numCandidates },
      },
      "--ranks-out",
    );
    return;
  }
  const entity = (id: number) => (id < 0 ? "" : (labels.entities?.[id] ?? String(id)));
  const relation = (id: number) => (id < 0 ? "" : (labels.relations?.[id] ?? String(id)));
  const lines = ["side\thead\trelation\ttail\toptimistic\trealistic\tpessimistic\tnum_candidates"];
  for (let i = 0; i < n; i++) {
    lines.push(
      [
        t.side[i],
        entity(t.head[i]!),
        relation(t.relation[i]!),
        entity(t.tail[i]!),
        t.optimistic[i],
        t.realistic[i],
        t.pessimistic[i],
        t.numCandidates[i],
      ].join("\t"),
    );
  }
  writeFileAtomic(file, lines.join("\n") + "\n", "--ranks-out");
}
