/**
 * Scorers: anything that produces score batches for (triples, side). `FrequencyBaseline` needs no training: in
 * the spirit of PyKEEN's marginal-distribution baseline, the score of a candidate tail e for (h, r, ?) is the
 * number of training triples (·, r, e), and of a candidate head e for (?, r, t) the number of (e, r, ·). It is
 * deterministic and ties many candidates, which is why the rank type matters. For relation prediction a relation r
 * of (h, ?, t) scores the training triples (h, r, ·) plus (·, r, t).
 */
import { KgrankInputError } from "../checks/errors";
import type { Side } from "../contract/kernels";
import { allocateTable, checkTableLength } from "../checks/alloc";
import { describe, integer, tripleArray } from "../checks/validate";

export interface Scorer {
  readonly numEntities: number;
  /**
   * Row-major b x numEntities scores for the b triples (b x 3): column e scores e as the `side` entity. `into`, when
   * given, receives them (at least b x numEntities cells) and a view of its first b x numEntities is returned: a
   * caller scoring batch after batch reuses one buffer instead of faulting in fresh pages for each.
   */
  scoreBatch(triples: Int32Array, side: Side, into?: Float32Array): Float32Array;
}

export class FrequencyBaseline implements Scorer {
  readonly numEntities: number;
  readonly numRelations: number;
  readonly #head: Float32Array;
  readonly #tail: Float32Array;

  constructor(train: Int32Array, numEntities: number, numRelations: number) {
    integer("numEntities", numEntities, 1, 2 ** 31 - 1);
    integer("numRelations", numRelations, 1, 2 ** 31 - 1);
    train = tripleArray("train", train, numEntities, numRelations);
    if (train.length === 0) throw new KgrankInputError("train", "is empty: the baseline counts training triples");
    this.numEntities = numEntities;
    this.numRelations = numRelations;
    // Two count tables of numRelations x numEntities float32 cells: refuse a length no typed array can have, and an
    // allocation the machine cannot make is a KgrankMemoryError (a bare RangeError before).
    const cells = numRelations * numEntities;
    checkTableLength("numEntities", `numRelations x numEntities (${numRelations} x ${numEntities})`, cells, 4);
    [this.#head, this.#tail] = allocateTable("FrequencyBaseline", "numEntities", 8 * cells, () => [
      new Float32Array(cells),
      new Float32Array(cells),
    ]);
    for (let i = 0; i < train.length; i += 3) {
      const h = train[i]!;
      const r = train[i + 1]!;
      const t = train[i + 2]!;
      if (h < 0 || t < 0 || h >= numEntities || t >= numEntities || r < 0 || r >= numRelations) {
        throw new KgrankInputError(
          "train",
          `row ${i / 3}: (${h}, ${r}, ${t}) has an id outside ${numEntities} entities / ${numRelations} relations`,
        );
      }
      this.#head[r * numEntities + h]! += 1;
      this.#tail[r * numEntities + t]! += 1;
    }
  }

  scoreBatch(triples: Int32Array, side: Side, into?: Float32Array): Float32Array {
    if (side !== "head" && side !== "tail")
      throw new KgrankInputError("side", `must be "head" or "tail", got ${describe(side)}`);
    const n = this.numEntities;
    const rows = Math.floor(triples.length / 3);
    const table = side === "head" ? this.#head : this.#tail;
    checkTableLength("triples", `rows x numEntities (${rows} x ${n})`, rows * n, 4);
    if (into !== undefined && (!(into instanceof Float32Array) || into.length < rows * n)) {
      throw new KgrankInputError(
        "into",
        `must be a Float32Array of at least rows x numEntities = ${rows * n} cells, got ${describe(into)}; omit it for a new array`,
      );
    }
    const out = into
      ? into.subarray(0, rows * n)
      : allocateTable("FrequencyBaseline.scoreBatch", "triples", 4 * rows * n, () => new Float32Array(rows * n));
    for (let i = 0; i < rows; i++) {
      const r = triples[3 * i + 1]!;
      if (r < 0 || r >= this.numRelations)
        throw new KgrankInputError("triples", `row ${i}: relation ${r} is not in [0, ${this.numRelations})`);
      out.set(table.subarray(r * n, (r + 1) * n), i * n);
    }
    return out;
  }

  /**
   * Row-major b x numRelations relation scores for the b triples (b x 3; the relation column is not read): column r
   * scores (h, r, t) as the training triples (h, r, ·) plus (·, r, t), i.e. how often r leaves h and reaches t.
   */
  scoreRelations(triples: Int32Array | ArrayLike<number>): Float32Array {
    const checked = tripleArray("triples", triples, this.numEntities, this.numRelations);
    const n = this.numEntities;
    const m = this.numRelations;
    const rows = checked.length / 3;
    checkTableLength("triples", `rows x numRelations (${rows} x ${m})`, rows * m, 4);
    const out = allocateTable(
      "FrequencyBaseline.scoreRelations",
      "triples",
      4 * rows * m,
      () => new Float32Array(rows * m),
    );
    for (let i = 0; i < rows; i++) {
      const h = checked[3 * i]!;
      const t = checked[3 * i + 2]!;
      for (let r = 0; r < m; r++) out[i * m + r] = this.#head[r * n + h]! + this.#tail[r * n + t]!;
    }
    return out;
  }
}
