/**
 * Per-side storage of ranking tasks: ranks of the three types, candidate counts, and task keys. Appended columns are
 * adopted, not copied (callers hand over arrays they no longer change); columns() joins the pieces once, on demand.
 */

export interface TaskColumns {
  optimistic: Float64Array;
  pessimistic: Float64Array;
  realistic: Float64Array;
  numCandidates: Float64Array;
  /** Relation of each task (-1 when unknown, e.g. ranks added without relations). */
  relation: Int32Array;
  /** Anchor entity of each task (head for tail prediction, tail for head prediction; -1 when unknown). */
  anchor: Int32Array;
  /** True answer of each task (-1 when unknown). */
  truth: Int32Array;
  /** Explicit weight of each task (NaN when none was given). */
  weight: Float64Array;
}

export const COLUMN_NAMES = [
  "optimistic",
  "pessimistic",
  "realistic",
  "numCandidates",
  "relation",
  "anchor",
  "truth",
  "weight",
] as const;

const F64 = ["optimistic", "pessimistic", "realistic", "numCandidates", "weight"] as const;
const I32 = ["relation", "anchor", "truth"] as const;

function pick<T extends Float64Array | Int32Array>(values: T, keep: Uint8Array, kept: number): T {
  const out = new (values.constructor as new (n: number) => T)(kept);
  for (let i = 0, k = 0; i < keep.length; i++) if (keep[i]) out[k++] = values[i]!;
  return out;
}

/**
 * A copy of `cols` whose eight columns are views of one fresh ArrayBuffer (52 bytes per task): what the evaluator
 * hands out (RankEvaluator.taskColumns), so a caller may keep, change or transfer it (postMessage with a transfer
 * list) without touching the recorded tasks, whose columns may share a buffer with other batches' (ColumnArena).
 */
export function copyColumns(cols: TaskColumns): TaskColumns {
  const n = cols.optimistic.length;
  const buffer = new ArrayBuffer(52 * n);
  const out = {} as TaskColumns;
  let at = 0;
  for (const k of F64) {
    out[k] = new Float64Array(buffer, at, n);
    out[k].set(cols[k]);
    at += 8 * n;
  }
  for (const k of I32) {
    out[k] = new Int32Array(buffer, at, n);
    out[k].set(cols[k]);
    at += 4 * n;
  }
  return out;
}

export class TaskBuffer {
  private pieces: TaskColumns[] = [];
  private count = 0;

  get length(): number {
    return this.count;
  }

  /** Appends the tasks whose keep flag is set (all when keep is null). The arrays are adopted: do not change them. */
  append(cols: TaskColumns, keep: Uint8Array | null = null): void {
    const n = cols.optimistic.length;
    for (const k of COLUMN_NAMES) {
      if (cols[k].length !== n)
        throw new Error(`TaskBuffer.append: column ${k} has ${cols[k].length} entries, not ${n}`);
    }
    if (!keep) {
      if (n === 0) return;
      this.pieces.push({ ...cols });
      this.count += n;
      return;
    }
    let kept = 0;
    for (let i = 0; i < n; i++) kept += keep[i] ? 1 : 0;
    if (kept === 0) return;
    const piece = {} as TaskColumns;
    for (const k of F64) piece[k] = pick(cols[k], keep, kept);
    for (const k of I32) piece[k] = pick(cols[k], keep, kept);
    this.pieces.push(piece);
    this.count += kept;
  }

  /** append() without the checks, for columns built here (same length, adopted as they are). */
  adopt(cols: TaskColumns): void {
    const n = cols.optimistic.length;
    if (n === 0) return;
    this.pieces.push(cols);
    this.count += n;
  }

  /** Every task's columns, contiguous (views; do not modify). */
  columns(): TaskColumns {
    if (this.pieces.length === 1) return this.pieces[0]!;
    const out = {} as TaskColumns;
    for (const k of F64) out[k] = new Float64Array(this.count);
    for (const k of I32) out[k] = new Int32Array(this.count);
    let at = 0;
    for (const p of this.pieces) {
      for (const k of COLUMN_NAMES) out[k].set(p[k], at);
      at += p.optimistic.length;
    }
    this.pieces = this.count > 0 ? [out] : [];
    return out;
  }
}
