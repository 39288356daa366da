import type { FilteredCountBuffers, FilterIndexHandle, FloatArray, Side } from "../kernels";
import { countScoresByIndex } from "./count";

const TWO32 = 4294967296;

/** The fallback's twin of native/core/filter_index.cpp: counting sort by anchor, sort within anchors, dedupe. */
export class TsFilterIndex implements FilterIndexHandle {
  readonly side: Side;
  readonly numEntities: number;
  readonly numRelations: number;
  private readonly anchorOffsets: Uint32Array;
  private readonly keyRelation: Int32Array;
  private readonly keyOffsets: Uint32Array;
  private readonly answerIds: Int32Array;

  /** Ids must be validated by the caller. */
  constructor(triples: Int32Array[], numEntities: number, numRelations: number, side: Side) {
    this.side = side;
    this.numEntities = numEntities;
    this.numRelations = numRelations;
    const anchorCol = side === "tail" ? 0 : 2;
    const answerCol = side === "tail" ? 2 : 0;
    const offsets = new Uint32Array(numEntities + 1);
    let total = 0;
    for (const t of triples) {
      for (let i = 0; i < t.length; i += 3) offsets[t[i + anchorCol]! + 1]!++;
      total += t.length / 3;
    }
    for (let a = 0; a < numEntities; a++) offsets[a + 1]! += offsets[a]!;
    // (relation, answer) packed exactly in a double: relation * 2^32 + answer.
    const pairs = new Float64Array(total);
    const cursor = offsets.slice(0, numEntities);
    for (const t of triples) {
      for (let i = 0; i < t.length; i += 3) pairs[cursor[t[i + anchorCol]!]!++] = t[i + 1]! * TWO32 + t[i + answerCol]!;
    }
    const keysPer = new Uint32Array(numEntities + 1);
    const answersPer = new Uint32Array(numEntities + 1);
    for (let a = 0; a < numEntities; a++) {
      const seg = pairs.subarray(offsets[a]!, offsets[a + 1]!);
      seg.sort();
      let keys = 0;
      let unique = 0;
      for (let p = 0; p < seg.length; p++) {
        if (p > 0 && seg[p] === seg[p - 1]) continue;
        unique++;
        if (p === 0 || Math.floor(seg[p]! / TWO32) !== Math.floor(seg[p - 1]! / TWO32)) keys++;
      }
      keysPer[a + 1] = keysPer[a]! + keys;
      answersPer[a + 1] = answersPer[a]! + unique;
    }
    this.anchorOffsets = keysPer;
    this.keyRelation = new Int32Array(keysPer[numEntities]!);
    this.keyOffsets = new Uint32Array(keysPer[numEntities]! + 1);
    this.answerIds = new Int32Array(answersPer[numEntities]!);
    this.keyOffsets[keysPer[numEntities]!] = answersPer[numEntities]!;
    for (let a = 0; a < numEntities; a++) {
      let k = keysPer[a]!;
      let j = answersPer[a]!;
      for (let p = offsets[a]!; p < offsets[a + 1]!; p++) {
        if (p > offsets[a]! && pairs[p] === pairs[p - 1]) continue;
        const rel = Math.floor(pairs[p]! / TWO32);
        if (p === offsets[a]! || rel !== Math.floor(pairs[p - 1]! / TWO32)) {
          this.keyRelation[k] = rel;
          this.keyOffsets[k] = j;
          k++;
        }
        this.answerIds[j++] = pairs[p]! - rel * TWO32;
      }
    }
  }

  private range(anchor: number, relation: number): [number, number] {
    if (relation < 0 || relation >= this.numRelations) return [0, 0];
    let lo = this.anchorOffsets[anchor]!;
    let hi = this.anchorOffsets[anchor + 1]!;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.keyRelation[mid]! < relation) lo = mid + 1;
      else hi = mid;
    }
    if (lo === this.anchorOffsets[anchor + 1]! || this.keyRelation[lo] !== relation) return [0, 0];
    return [this.keyOffsets[lo]!, this.keyOffsets[lo + 1]!];
  }

  answers(anchor: number, relation: number): Int32Array {
    const [a, b] = this.range(anchor, relation);
    return this.answerIds.slice(a, b);
  }

  missing(anchor: Int32Array, relation: Int32Array, answer: Int32Array): number {
    for (let r = 0; r < anchor.length; r++) {
      const [start, end] = this.range(anchor[r]!, relation[r]!);
      const want = answer[r]!;
      let lo = start;
      let hi = end;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (this.answerIds[mid]! < want) lo = mid + 1;
        else hi = mid;
      }
      if (lo >= end || this.answerIds[lo] !== want) return r;
    }
    return -1;
  }

  stats() {
    const bytes = 4 * (this.anchorOffsets.length + this.keyRelation.length + this.keyOffsets.length + this.answerIds.length);
    return { keys: this.keyRelation.length, answers: this.answerIds.length, bytes };
  }

  countFiltered(
    scores: FloatArray, anchor: Int32Array, relation: Int32Array, truth: Int32Array, thresholdsOut: FloatArray,
    out: FilteredCountBuffers,
  ): void {
    const cols = this.numEntities;
    countScoresByIndex(scores, cols, truth, thresholdsOut, out);
    for (let r = 0; r < truth.length; r++) {
      const [a, b] = this.range(anchor[r]!, relation[r]!);
      const t = thresholdsOut[r]!;
      const base = r * cols;
      let g = 0;
      let e = 0;
      let gone = 0;
      for (let k = a; k < b; k++) {
        const col = this.answerIds[k]!;
        if (col === truth[r]) continue;
        const v = scores[base + col]!;
        g += v > t ? 1 : 0;
        e += v === t ? 1 : 0;
        gone += v === v ? 1 : 0;
      }
      out.greater[r]! -= g;
      out.equal[r]! -= e;
      out.removed[r] = gone;
    }
  }

  async countFilteredAsync(
    scores: FloatArray, anchor: Int32Array, relation: Int32Array, truth: Int32Array, thresholdsOut: FloatArray,
    out: FilteredCountBuffers,
  ): Promise<void> {
    this.countFiltered(scores, anchor, relation, truth, thresholdsOut, out);
  }
}
