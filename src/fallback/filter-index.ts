/**
 * Known answers per (anchor, relation) and filtered counting, the fallback. Twin of native/core/filter_index.{h,cpp}
 * (and of count_rows_filtered, count_rows_filtered_range and rank_triples in native/core/count.cpp, and of
 * rank_triples_constrained in native/core/constrained.cpp).
 */
import {
  type AnswerCountsProblem,
  type ConstrainedSets,
  type FilteredCountBuffers,
  type FilterIndexHandle,
  type FloatArray,
  type KernelControl,
  type RankTriplesProblem,
  type Side,
  StatusCode,
} from "../contract/kernels";
import { countScores, countScoresByIndex } from "./count";
import { bufferRows, inSlices } from "./slices";

/** Bits needed for values 0 .. maxValue. */
function bitsFor(maxValue: number): number {
  let b = 1;
  while (b < 53 && 2 ** b <= maxValue) b++;
  return b;
}

/**
 * The fallback's twin of native/core/filter_index.cpp: per anchor a sorted, unique segment of packed entries
 * relation * 2^answerBits + answer (exact in a double), found by counting sort over anchors.
 */
export class TsFilterIndex implements FilterIndexHandle {
  readonly side: Side;
  readonly numEntities: number;
  readonly numRelations: number;
  private readonly scale: number;
  private readonly offsets: Uint32Array;
  private readonly entries: Float64Array;
  private readonly keys: number;

  /** Ids must be validated by the caller. */
  constructor(triples: Int32Array[], numEntities: number, numRelations: number, side: Side) {
    this.side = side;
    this.numEntities = numEntities;
    this.numRelations = numRelations;
    this.scale = 2 ** bitsFor(numEntities - 1);
    const anchorCol = side === "tail" ? 0 : 2;
    const answerCol = side === "tail" ? 2 : 0;
    const counts = new Uint32Array(numEntities + 1);
    let total = 0;
    for (const t of triples) {
      for (let i = 0; i < t.length; i += 3) counts[t[i + anchorCol]! + 1]!++;
      total += t.length / 3;
    }
    for (let a = 0; a < numEntities; a++) counts[a + 1]! += counts[a]!;
    const raw = new Float64Array(total);
    const cursor = counts.slice(0, numEntities);
    for (const t of triples) {
      for (let i = 0; i < t.length; i += 3)
        raw[cursor[t[i + anchorCol]!]!++] = t[i + 1]! * this.scale + t[i + answerCol]!;
    }
    const offsets = new Uint32Array(numEntities + 1);
    let keys = 0;
    let out = 0;
    for (let a = 0; a < numEntities; a++) {
      const seg = raw.subarray(counts[a]!, counts[a + 1]!);
      seg.sort();
      for (let p = 0; p < seg.length; p++) {
        if (p > 0 && seg[p] === seg[p - 1]) continue;
        if (p === 0 || Math.floor(seg[p]! / this.scale) !== Math.floor(seg[p - 1]! / this.scale)) keys++;
        raw[out++] = seg[p]!; // compacting in place: out never passes the segment being read
      }
      offsets[a + 1] = out;
    }
    this.offsets = offsets;
    this.entries = raw.slice(0, out);
    this.keys = keys;
  }

  /** First index in [lo, hi) whose entry is >= value. */
  private lowerBound(lo: number, hi: number, value: number): number {
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.entries[mid]! < value) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private range(anchor: number, relation: number): [number, number] {
    if (anchor < 0 || anchor >= this.numEntities || relation < 0 || relation >= this.numRelations) return [0, 0];
    const first = this.lowerBound(this.offsets[anchor]!, this.offsets[anchor + 1]!, relation * this.scale);
    const last = this.lowerBound(first, this.offsets[anchor + 1]!, (relation + 1) * this.scale);
    return [first, last];
  }

  answers(anchor: number, relation: number): Int32Array {
    const [a, b] = this.range(anchor, relation);
    const base = relation * this.scale;
    return Int32Array.from(this.entries.subarray(a, b), (v) => v - base);
  }

  missing(anchor: Int32Array, relation: Int32Array, answer: Int32Array): number {
    for (let r = 0; r < anchor.length; r++) {
      const [a, b] = this.range(anchor[r]!, relation[r]!);
      const want = relation[r]! * this.scale + answer[r]!;
      const at = this.lowerBound(a, b, want);
      if (at >= b || this.entries[at] !== want) return r;
    }
    return -1;
  }

  /** Twin of FilterIndex::answer_counts (native/core/filter_index.cpp): each key's number of known answers. */
  answerCounts(triples: Int32Array, out: Float64Array): AnswerCountsProblem | null {
    const tail = this.side === "tail";
    for (let r = 0; r < out.length; r++) {
      const h = triples[3 * r]!;
      const rel = triples[3 * r + 1]!;
      const t = triples[3 * r + 2]!;
      if (h >>> 0 >= this.numEntities) return { status: StatusCode.IdOutOfRange, index: 3 * r };
      if (rel >>> 0 >= this.numRelations) return { status: StatusCode.IdOutOfRange, index: 3 * r + 1 };
      if (t >>> 0 >= this.numEntities) return { status: StatusCode.IdOutOfRange, index: 3 * r + 2 };
      const [a, b] = this.range(tail ? h : t, rel);
      out[r] = b - a;
    }
    return null;
  }

  stats() {
    return { keys: this.keys, answers: this.entries.length, bytes: 4 * this.offsets.length + 8 * this.entries.length };
  }

  countFiltered(
    scores: FloatArray,
    anchor: Int32Array,
    relation: Int32Array,
    truth: Int32Array,
    thresholdsOut: FloatArray,
    out: FilteredCountBuffers,
  ): void {
    countScoresByIndex(scores, this.numEntities, truth, thresholdsOut, out);
    this.takeOutKnown(scores, 0, this.numEntities, anchor, relation, truth, thresholdsOut, out);
  }

  /** Twin of count_rows_filtered_range (native/core/count.cpp): the column slice [columnStart, columnStart + width). */
  countFilteredRange(
    scores: FloatArray,
    columnStart: number,
    width: number,
    anchor: Int32Array,
    relation: Int32Array,
    truth: Int32Array,
    thresholds: FloatArray,
    out: FilteredCountBuffers,
  ): void {
    countScores(scores, width, thresholds, out);
    this.takeOutKnown(scores, columnStart, width, anchor, relation, truth, thresholds, out);
  }

  async countFilteredRangeAsync(
    scores: FloatArray,
    columnStart: number,
    width: number,
    anchor: Int32Array,
    relation: Int32Array,
    truth: Int32Array,
    thresholds: FloatArray,
    out: FilteredCountBuffers,
    _threads?: number,
    control?: KernelControl,
  ): Promise<void> {
    if (!control) return this.countFilteredRange(scores, columnStart, width, anchor, relation, truth, thresholds, out);
    await inSlices(truth.length, width, control, [scores, anchor, relation, truth], (r0, r1) =>
      this.countFilteredRange(
        scores.subarray(r0 * width, r1 * width),
        columnStart,
        width,
        anchor.subarray(r0, r1),
        relation.subarray(r0, r1),
        truth.subarray(r0, r1),
        thresholds.subarray(r0, r1),
        bufferRows(out, r0, r1),
      ),
    );
  }

  /**
   * Takes every other known answer of each row's task inside columns [start, start + width) out of the row's counts
   * (rows of `scores` are `width` long; answer b is at column b - start), and sets removed (-1: the task's own triple
   * is not in the index). The filter part of count_rows_filtered and count_rows_filtered_range alike.
   */
  private takeOutKnown(
    scores: FloatArray,
    start: number,
    width: number,
    anchor: Int32Array,
    relation: Int32Array,
    truth: Int32Array,
    thresholds: FloatArray,
    out: FilteredCountBuffers,
  ): void {
    const end = start + width;
    for (let r = 0; r < truth.length; r++) {
      const [a, b] = this.range(anchor[r]!, relation[r]!);
      const base = relation[r]! * this.scale;
      const t = thresholds[r]!;
      const row = r * width;
      const own = truth[r]!;
      let g = 0;
      let e = 0;
      let gone = 0;
      let found = false;
      // The answers inside the slice: from the first >= start to the first >= end.
      for (let k = start === 0 ? a : this.lowerBound(a, b, base + start); k < b; k++) {
        const col = this.entries[k]! - base;
        if (col >= end) break;
        if (col === own) {
          found = true;
          continue;
        }
        const v = scores[row + col - start]!;
        g += v > t ? 1 : 0;
        e += v === t ? 1 : 0;
        gone += v === v ? 1 : 0;
      }
      // The own answer outside the slice: is it a known answer all the same?
      if (!found && (own < start || own >= end)) {
        const at = this.lowerBound(a, b, base + own);
        found = at < b && this.entries[at] === base + own;
      }
      out.greater[r]! -= g;
      out.equal[r]! -= e;
      // -1 flags a task whose own triple is not in the index (the evaluator reports it).
      out.removed[r] = found ? gone : -1;
    }
  }

  /**
   * Twin of split_triple_keys (native/core/count.cpp): triples checked against the index's id ranges (the first id
   * out of range is the problem, by its flat index) and split into keysOut = relation | anchor | truth.
   */
  private splitKeys(triples: Int32Array, rows: number, keysOut: Int32Array): RankTriplesProblem | null {
    const cols = this.numEntities;
    const relation = keysOut.subarray(0, rows);
    const anchor = keysOut.subarray(rows, 2 * rows);
    const truth = keysOut.subarray(2 * rows, 3 * rows);
    const tail = this.side === "tail";
    for (let r = 0; r < rows; r++) {
      const h = triples[3 * r]!;
      const rel = triples[3 * r + 1]!;
      const t = triples[3 * r + 2]!;
      if (h >>> 0 >= cols) return { status: StatusCode.IdOutOfRange, index: 3 * r };
      if (rel >>> 0 >= this.numRelations) return { status: StatusCode.IdOutOfRange, index: 3 * r + 1 };
      if (t >>> 0 >= cols) return { status: StatusCode.IdOutOfRange, index: 3 * r + 2 };
      relation[r] = rel;
      anchor[r] = tail ? h : t;
      truth[r] = tail ? t : h;
    }
    return null;
  }

  /**
   * Twin of the addon's rankTriples (native/addon/filter_bindings.cpp): a filtered batch from its triples in one
   * call. keysOut = relation | anchor | truth columns; out = optimistic | pessimistic | realistic | numCandidates |
   * weight (NaN) | scratch, each `rows` long. Returns null, or the first problem as the core reports it: an id out of
   * range (index = flat index into triples), a NaN true score or an evaluated triple not in the index (index = row).
   * Ids are checked before anything is counted.
   */
  rankTriples(
    scores: FloatArray,
    triples: Int32Array,
    keysOut: Int32Array,
    thresholdsOut: FloatArray,
    out: Float64Array,
  ): RankTriplesProblem | null {
    const cols = this.numEntities;
    const rows = scores.length / cols;
    const relation = keysOut.subarray(0, rows);
    const anchor = keysOut.subarray(rows, 2 * rows);
    const truth = keysOut.subarray(2 * rows, 3 * rows);
    const split = this.splitKeys(triples, rows, keysOut);
    if (split) return split;
    const column = (k: number) => out.subarray(k * rows, (k + 1) * rows);
    const [greater, equal, realistic, nan, weight, removed] = [0, 1, 2, 3, 4, 5].map(column) as Float64Array[];
    this.countFiltered(scores, anchor, relation, truth, thresholdsOut, {
      greater: greater!,
      equal: equal!,
      nan: nan!,
      removed: removed!,
    });
    for (let r = 0; r < rows; r++)
      if (thresholdsOut[r] !== thresholdsOut[r]) return { status: StatusCode.NanTrueScore, index: r };
    for (let r = 0; r < rows; r++) if (removed![r]! < 0) return { status: StatusCode.NotInIndex, index: r };
    for (let r = 0; r < rows; r++) {
      const g = greater![r]!;
      greater![r] = 1 + g;
      equal![r] = g + equal![r]!;
      realistic![r] = 0.5 * (greater![r]! + equal![r]!);
      nan![r] = cols - nan![r]! - removed![r]!;
      weight![r] = NaN;
    }
    return null;
  }

  /**
   * Twin of the addon's rankTriplesConstrained (native/core/constrained.cpp): rankTriples with each task's candidates
   * cut to its relation's allowed set, ids[offsets[r] .. offsets[r + 1]) (ascending, in range), plus the true answer
   * itself; the other known answers leave them only when `filtered`. Same keys, out layout and problems as
   * rankTriples; a broken set (offsets not ascending within ids, ids out of range or not ascending in a relation a
   * row uses) is an InvalidInput problem, found before anything is counted.
   */
  rankTriplesConstrained(
    scores: FloatArray,
    triples: Int32Array,
    filtered: boolean,
    sets: ConstrainedSets,
    keysOut: Int32Array,
    thresholdsOut: FloatArray,
    out: Float64Array,
  ): RankTriplesProblem | null {
    const { offsets, ids } = sets;
    const cols = this.numEntities;
    const rows = scores.length / cols;
    const relation = keysOut.subarray(0, rows);
    const anchor = keysOut.subarray(rows, 2 * rows);
    const truth = keysOut.subarray(2 * rows, 3 * rows);
    const split = this.splitKeys(triples, rows, keysOut);
    if (split) return split;
    const broken = checkCandidateSets(offsets, ids, this.numRelations, cols, relation);
    if (broken) return broken;
    const column = (k: number) => out.subarray(k * rows, (k + 1) * rows);
    const [greater, equal, realistic, candidates, weight, found] = [0, 1, 2, 3, 4, 5].map(column) as Float64Array[];
    for (let r = 0; r < rows; r++) {
      const row = r * cols;
      const own = truth[r]!;
      const rel = relation[r]!;
      const t = scores[row + own]!;
      thresholdsOut[r] = t;
      const first = offsets[rel]!;
      const last = offsets[rel + 1]!;
      let g = 0;
      let e = 0;
      let live = 0;
      for (let k = first; k < last; k++) {
        const id = ids[k]!;
        if (id === own) continue;
        const v = scores[row + id]!;
        g += v > t ? 1 : 0;
        e += v === t ? 1 : 0;
        live += v === v ? 1 : 0;
      }
      let known = !filtered;
      if (filtered) {
        const [a, b] = this.range(anchor[r]!, rel);
        const base = rel * this.scale;
        for (let k = a; k < b; k++) {
          const answer = this.entries[k]! - base;
          if (answer === own) {
            known = true;
          } else if (sortedHas(ids, first, last, answer)) {
            const v = scores[row + answer]!;
            g -= v > t ? 1 : 0;
            e -= v === t ? 1 : 0;
            live -= v === v ? 1 : 0;
          }
        }
      }
      greater![r] = g;
      equal![r] = e;
      candidates![r] = live;
      found![r] = known ? 1 : -1;
    }
    for (let r = 0; r < rows; r++)
      if (thresholdsOut[r] !== thresholdsOut[r]) return { status: StatusCode.NanTrueScore, index: r };
    for (let r = 0; r < rows; r++) if (found![r]! < 0) return { status: StatusCode.NotInIndex, index: r };
    for (let r = 0; r < rows; r++) {
      const opt = 1 + greater![r]!;
      const pess = opt + equal![r]!;
      greater![r] = opt;
      equal![r] = pess;
      realistic![r] = 0.5 * (opt + pess);
      candidates![r] = 1 + candidates![r]!;
      weight![r] = NaN;
    }
    return null;
  }

  async countFilteredAsync(
    scores: FloatArray,
    anchor: Int32Array,
    relation: Int32Array,
    truth: Int32Array,
    thresholdsOut: FloatArray,
    out: FilteredCountBuffers,
    _threads?: number,
    control?: KernelControl,
  ): Promise<void> {
    if (!control) return this.countFiltered(scores, anchor, relation, truth, thresholdsOut, out);
    const cols = this.numEntities;
    await inSlices(truth.length, cols, control, [scores, anchor, relation, truth], (r0, r1) =>
      this.countFiltered(
        scores.subarray(r0 * cols, r1 * cols),
        anchor.subarray(r0, r1),
        relation.subarray(r0, r1),
        truth.subarray(r0, r1),
        thresholdsOut.subarray(r0, r1),
        bufferRows(out, r0, r1),
      ),
    );
  }
}

/** True when ids[first .. last) (ascending) holds `id`. */
function sortedHas(ids: Int32Array, first: number, last: number, id: number): boolean {
  let lo = first;
  let hi = last;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ids[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < last && ids[lo] === id;
}

/**
 * The checks of native/core/constrained.cpp own_sets, with its messages: offsets start at 0 and ascend within ids;
 * every relation a row uses has ids in [0, numEntities), ascending.
 */
function checkCandidateSets(
  offsets: Int32Array,
  ids: Int32Array,
  numRelations: number,
  numEntities: number,
  relation: Int32Array,
): RankTriplesProblem | null {
  const invalid = (message: string) => ({ status: StatusCode.InvalidInput, index: 0, message }) as RankTriplesProblem;
  if (offsets[0] !== 0) return invalid("candidate set offsets must start at 0");
  for (let r = 0; r < numRelations; r++) {
    if (offsets[r + 1]! < offsets[r]! || offsets[r + 1]! > ids.length)
      return invalid(`candidate set offsets of relation ${r} are not ascending within the ids`);
  }
  const used = new Uint8Array(numRelations);
  for (let i = 0; i < relation.length; i++) used[relation[i]!] = 1;
  for (let r = 0; r < numRelations; r++) {
    if (!used[r]) continue;
    for (let k = offsets[r]!; k < offsets[r + 1]!; k++) {
      const id = ids[k]!;
      if (id >>> 0 >= numEntities || (k > offsets[r]! && id <= ids[k - 1]!))
        return invalid(`candidate set of relation ${r} has ids out of range or not ascending`);
    }
  }
  return null;
}
