/** Growable per-side storage of ranking tasks: ranks of the three types, candidate counts, and task keys. */

class Grow<T extends Float64Array | Int32Array> {
  private buf: T;
  length = 0;
  constructor(private readonly Ctor: new (n: number) => T, capacity = 1024) {
    this.buf = new Ctor(capacity);
  }
  append(values: ArrayLike<number>, keep?: Uint8Array | null): void {
    const n = values.length;
    if (this.length + n > this.buf.length) {
      const next = new this.Ctor(Math.max(this.buf.length * 2, this.length + n));
      next.set(this.buf.subarray(0, this.length));
      this.buf = next;
    }
    if (!keep) {
      this.buf.set(values as ArrayLike<number>, this.length);
      this.length += n;
      return;
    }
    for (let i = 0; i < n; i++) if (keep[i]) this.buf[this.length++] = values[i]!;
  }
  view(): T {
    return this.buf.subarray(0, this.length) as T;
  }
}

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
  "optimistic", "pessimistic", "realistic", "numCandidates", "relation", "anchor", "truth", "weight",
] as const;

export class TaskBuffer {
  private readonly f64 = {
    optimistic: new Grow(Float64Array),
    pessimistic: new Grow(Float64Array),
    realistic: new Grow(Float64Array),
    numCandidates: new Grow(Float64Array),
    weight: new Grow(Float64Array),
  };
  private readonly i32 = {
    relation: new Grow(Int32Array),
    anchor: new Grow(Int32Array),
    truth: new Grow(Int32Array),
  };

  get length(): number {
    return this.f64.optimistic.length;
  }

  /** Appends the tasks whose keep flag is set (all when keep is null). */
  append(cols: TaskColumns, keep: Uint8Array | null = null): void {
    for (const k of ["optimistic", "pessimistic", "realistic", "numCandidates", "weight"] as const) {
      this.f64[k].append(cols[k], keep);
    }
    for (const k of ["relation", "anchor", "truth"] as const) this.i32[k].append(cols[k], keep);
  }

  columns(): TaskColumns {
    return {
      optimistic: this.f64.optimistic.view(),
      pessimistic: this.f64.pessimistic.view(),
      realistic: this.f64.realistic.view(),
      numCandidates: this.f64.numCandidates.view(),
      weight: this.f64.weight.view(),
      relation: this.i32.relation.view(),
      anchor: this.i32.anchor.view(),
      truth: this.i32.truth.view(),
    };
  }
}
