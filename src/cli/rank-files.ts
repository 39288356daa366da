/**
 * The runs `kgrank compare` (and `kgrank report`) read: evaluator states (`--save-state`) or the per-task rank files
 * `--ranks-out` writes (ranks-out.ts): `.npz` (ids) and `.tsv` (labels where the run had them, else ids). A rank
 * file becomes a RankEvaluator through addRanks with each task's triple, so tasks() keeps every task's identity and
 * the comparison can check that runs cover the same tasks. A `.tsv` run carries its labels: tasks are matched by
 * label, so two `.tsv` files of one dataset compare, and a `.tsv` whose labels are ids compares with a state.
 */
import * as path from "node:path";

import type { TaskLabels } from "../compare/paired";
import { KgrankInputError } from "../checks/errors";
import { RankEvaluator } from "../evaluation/evaluator";
import type { TaskSide } from "../evaluation/types";
import { readRegularFile } from "../io/files";
import { readNpz } from "../io/npz";
import { PLAIN_DECIMAL } from "../run/arrays";

/** A run read from a file: its results (finalized), its evaluator, its labels (.tsv only) and what kind of file. */
export interface LoadedRun {
  name: string;
  file: string;
  kind: "state" | "npz" | "tsv";
  evaluator: RankEvaluator;
  labels: TaskLabels | null;
}

/** The columns of a rank file, one entry per task (ids -1 where unknown). */
interface RankColumns {
  side: TaskSide[];
  head: Int32Array;
  relation: Int32Array;
  tail: Int32Array;
  optimistic: Float64Array;
  realistic: Float64Array;
  pessimistic: Float64Array;
  numCandidates: Float64Array;
}

const NPZ_ARRAYS = [
  "side",
  "head",
  "relation",
  "tail",
  "optimistic",
  "realistic",
  "pessimistic",
  "num_candidates",
] as const;
const TSV_HEADER = "side\thead\trelation\ttail\toptimistic\trealistic\tpessimistic\tnum_candidates";
/** The library's argument names for the rank file's columns. */
const COLUMN_OF: Record<string, string> = {
  optimistic: "optimistic",
  realistic: "realistic",
  pessimistic: "pessimistic",
  numCandidates: "num_candidates",
  ranks: "optimistic, realistic, pessimistic",
};

function notRanksOut(file: string, why: string): KgrankInputError {
  return new KgrankInputError(
    file,
    `${why}: not a rank file written by kgrank evaluate --ranks-out (or a state from --save-state)`,
  );
}

const SIDE_CODES: readonly TaskSide[] = ["head", "tail", "relation"];

function fromNpz(file: string): RankColumns {
  const z = readNpz(file, file);
  const missing = NPZ_ARRAYS.filter((k) => !(k in z));
  if (missing.length) throw notRanksOut(file, `has no array ${missing.map((k) => `"${k}"`).join(", ")}`);
  const n = z.side!.data.length;
  for (const k of NPZ_ARRAYS) {
    if (z[k]!.data.length !== n) throw notRanksOut(file, `array "${k}" has ${z[k]!.data.length} entries, "side" ${n}`);
  }
  const side = Array.from(z.side!.data as ArrayLike<number>, (s, i) => {
    if (s !== 0 && s !== 1 && s !== 2) throw notRanksOut(file, `side[${i}] is ${s} (0 head, 1 tail, 2 relation)`);
    return SIDE_CODES[s]!;
  });
  const ints = (k: string) => Int32Array.from(z[k]!.data as ArrayLike<number>, Number);
  const floats = (k: string) => Float64Array.from(z[k]!.data as ArrayLike<number>, Number);
  return {
    side,
    head: ints("head"),
    relation: ints("relation"),
    tail: ints("tail"),
    optimistic: floats("optimistic"),
    realistic: floats("realistic"),
    pessimistic: floats("pessimistic"),
    numCandidates: floats("num_candidates"),
  };
}

function fromTsv(file: string): { columns: RankColumns; labels: TaskLabels } {
  const lines = readRegularFile(file, file)
    .toString("utf8")
    .replace(/^\uFEFF/, "")
    .split("\n");
  while (lines.length && lines[lines.length - 1]!.trim() === "") lines.pop();
  if (lines[0]?.replace(/\r$/, "") !== TSV_HEADER)
    throw notRanksOut(file, `line 1 is not the header "${TSV_HEADER.replaceAll("\t", "<TAB>")}"`);
  const n = lines.length - 1;
  const entities = new Map<string, number>();
  const relations = new Map<string, number>();
  const id = (map: Map<string, number>, label: string) => {
    if (label === "") return -1;
    let v = map.get(label);
    if (v === undefined) map.set(label, (v = map.size));
    return v;
  };
  const c: RankColumns = {
    side: new Array<TaskSide>(n),
    head: new Int32Array(n),
    relation: new Int32Array(n),
    tail: new Int32Array(n),
    optimistic: new Float64Array(n),
    realistic: new Float64Array(n),
    pessimistic: new Float64Array(n),
    numCandidates: new Float64Array(n),
  };
  for (let i = 0; i < n; i++) {
    const f = lines[i + 1]!.replace(/\r$/, "").split("\t");
    if (f.length !== 8) throw notRanksOut(file, `line ${i + 2} has ${f.length} fields, not 8`);
    if (!SIDE_CODES.includes(f[0] as TaskSide))
      throw notRanksOut(file, `line ${i + 2}: side "${f[0]!.slice(0, 20)}" is not head, tail or relation`);
    c.side[i] = f[0] as TaskSide;
    c.head[i] = id(entities, f[1]!);
    c.relation[i] = id(relations, f[2]!);
    c.tail[i] = id(entities, f[3]!);
    const bad = f.slice(4).findIndex((v) => v !== "NaN" && !PLAIN_DECIMAL.test(v));
    if (bad >= 0)
      throw notRanksOut(
        file,
        `line ${i + 2}, column ${NPZ_ARRAYS[4 + bad]}: "${f[4 + bad]!.slice(0, 20)}" is not a plain decimal number (like 2 or 2.5) or NaN`,
      );
    const nums = f.slice(4).map(Number);
    [c.optimistic[i], c.realistic[i], c.pessimistic[i], c.numCandidates[i]] = nums as [number, number, number, number];
  }
  return { columns: c, labels: { entities: [...entities.keys()], relations: [...relations.keys()] } };
}

/**
 * An evaluator holding a rank file's tasks (head-side tasks first, each side in file order). `where(row, column)`
 * names a task's place in the file (a .tsv's line and column, an .npz's array and entry).
 */
function evaluatorOf(file: string, c: RankColumns, where: (row: number, column: string) => string): RankEvaluator {
  const n = c.side.length;
  if (n === 0) throw notRanksOut(file, "holds no task");
  let maxEntity = -1;
  let maxRelation = -1;
  let maxCandidates = 1;
  // A relation task's candidates are relations: its count bounds numRelations, not numEntities.
  let maxRelationCandidates = 0;
  for (let i = 0; i < n; i++) {
    const nc = c.numCandidates[i]!;
    if (!(Number.isInteger(nc) && nc >= 1))
      throw new KgrankInputError(
        file,
        `${where(i, "num_candidates")}: ${nc} is not a candidate count (an integer >= 1: the answer and the entities ranked against it)`,
      );
    if (nc > 2147483647)
      throw new KgrankInputError(
        file,
        `${where(i, "num_candidates")}: ${nc} candidates are more than 2147483647 (2^31 - 1), the most entities or relations a run ranks among: the column is not a count kgrank wrote`,
      );
    maxEntity = Math.max(maxEntity, c.head[i]!, c.tail[i]!);
    maxRelation = Math.max(maxRelation, c.relation[i]!);
    if (c.side[i] === "relation") maxRelationCandidates = Math.max(maxRelationCandidates, nc);
    else if (nc > maxCandidates) maxCandidates = nc;
  }
  const sides = SIDE_CODES.filter((s) => c.side.includes(s));
  const numRelations = Math.max(maxRelation + 1, maxRelationCandidates);
  const ev = new RankEvaluator({
    numEntities: Math.max(maxEntity + 1, maxCandidates),
    ...(numRelations > 0 ? { numRelations } : {}),
    sides,
  });
  for (const side of sides) {
    const rows = c.side.flatMap((s, i) => (s === side ? [i] : []));
    const pick = (a: Float64Array | Int32Array) => rows.map((i) => a[i]!);
    const known = rows.map((i) => c.head[i]! >= 0 && c.relation[i]! >= 0 && c.tail[i]! >= 0);
    const withRelation = rows.map((i) => c.relation[i]! >= 0);
    const keys: { triples?: number[]; relations?: number[] } = {};
    if (known.every(Boolean)) keys.triples = rows.flatMap((i) => [c.head[i]!, c.relation[i]!, c.tail[i]!]);
    else if (withRelation.every(Boolean)) keys.relations = pick(c.relation);
    else if (withRelation.some(Boolean)) {
      const at = rows[withRelation.indexOf(false)]!;
      throw new KgrankInputError(
        file,
        `task ${at} (${side}) has no relation while others of its side have: a rank file's tasks are all keyed or none`,
      );
    }
    const ranks: Partial<Record<"optimistic" | "realistic" | "pessimistic", number[]>> = {};
    for (const type of ["optimistic", "realistic", "pessimistic"] as const) {
      const values = pick(c[type]);
      const missing = values.filter((v) => Number.isNaN(v)).length;
      if (missing === 0) ranks[type] = values;
      else if (missing < values.length)
        throw new KgrankInputError(
          file,
          `${type} ranks are NaN for some ${side} tasks but not all: a rank type is given for every task of a side or none`,
        );
    }
    try {
      ev.addRanks({ side, ...ranks, numCandidates: pick(c.numCandidates), ...keys });
    } catch (e) {
      if (!(e instanceof KgrankInputError)) throw e;
      // The library counts tasks of the side and names its arguments; the user knows lines (.tsv) or entries
      // (.npz) of the file and its columns.
      const at = /\[(\d+)\]|^\w+: (?:task|row) (\d+)/.exec(e.message);
      const row = at ? rows[Number(at[1] ?? at[2])] : undefined;
      const column = COLUMN_OF[e.argument] ?? e.argument;
      const detail = e.message
        .replace(/^\w+: (?:(?:task|row) \d+: )?/, "")
        .replace(/\b(\w+)\[\d+\]/g, (m: string, k: string) => COLUMN_OF[k] ?? m);
      throw new KgrankInputError(
        file,
        `${row === undefined ? `${side} tasks, column ${column}` : where(row, column)}: ${detail}`,
      );
    }
  }
  return ev;
}

/** A run from a state file, or from a `--ranks-out` rank file (.npz or .tsv). */
export function loadRun(file: string): LoadedRun {
  const name = path.basename(file);
  const ext = path.extname(file).toLowerCase();
  if (ext === ".npz")
    return {
      name,
      file,
      kind: "npz",
      evaluator: evaluatorOf(file, fromNpz(file), (i, k) => `array ${k}, entry ${i}`),
      labels: null,
    };
  if (ext === ".tsv") {
    const { columns, labels } = fromTsv(file);
    return {
      name,
      file,
      kind: "tsv",
      evaluator: evaluatorOf(file, columns, (i, k) => `line ${i + 2}, column ${k}`),
      labels,
    };
  }
  try {
    return {
      name,
      file,
      kind: "state",
      evaluator: RankEvaluator.deserialize(new Uint8Array(readRegularFile(file, file))),
      labels: null,
    };
  } catch (e) {
    if (e instanceof KgrankInputError && e.argument === file) throw e;
    if (e instanceof KgrankInputError) throw new KgrankInputError(file, e.message.replace(/^states\[0\]: /, ""));
    throw e;
  }
}
