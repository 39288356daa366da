/**
 * Ranking from embeddings, the fallback. Twin of native/core/interaction.{h,cpp} and interaction_kernel.h: the same
 * query vectors (formed in double, rounded once), the same per-element operations in the same order, the same
 * counts. Float32 models are computed in emulated float32: every add, subtract, multiply and square root is one
 * double operation rounded by Math.fround (exact: double has more than 2 x 24 + 2 bits), and the fused multiply-add
 * is emulated exactly (fma32), so a float32 score is the native score bit for bit. Float64 models use plain double
 * multiply then add, as the native wide path does. Formulas and sign conventions: native/core/interaction.cpp.
 *
 * Candidates are streamed in chunks of 512 entities, each scored against every query of the batch and counted at
 * once: nothing of size batch x entities exists.
 */
import {
  embeddingReads,
  embeddingRows as rowsOf,
  type EmbeddingRankInput,
  type FloatArray,
  type KernelControl,
  type TopKRange,
} from "../contract/kernels";
import { inSlices } from "./slices";

const fround = Math.fround;

/**
 * fmaf(a, b, c) for float32 a, b, c: a * b is exact in double, the sum is rounded once to double and then to
 * float32; the two roundings differ from one only when the double sum lies exactly halfway between two float32
 * values and the sum was inexact, in which case the exact remainder (TwoSum) picks the side.
 */
function fma32(a: number, b: number, c: number): number {
  const p = a * b;
  const s = p + c;
  const r = fround(s);
  if (s === r || s !== s) return r;
  const m = 2 * s - r; // the other float32 neighbour when s is a midpoint (exact: Sterbenz)
  if (fround(m) !== m) return r;
  const bb = s - p;
  const err = p - (s - bb) + (c - bb);
  if (err === 0) return r;
  return err > 0 === m > r ? m : r;
}

/**
 * cos(x), sin(x) by the fixed sequence of double operations of native/core/interaction.cpp cos_sin (its twin), so
 * RotatE's phase relations rotate by the same numbers, bit for bit, on both backends (Math.cos / Math.sin and libm
 * disagree in the last bit for a few percent of arguments). Cody-Waite reduction by pi/2 in three 33-bit parts, then
 * the Taylor series of sin and cos to r^17 / r^18 in Horner form.
 */
function cosSin(x: number): [number, number] {
  const p1 = 1.57079632673412561417;
  const p2 = 6.0771005063039659766e-11;
  const p3 = 2.0222662487111664558e-21;
  const n = Math.floor(x * 0.63661977236758134308 + 0.5);
  const r = x - n * p1 - n * p2 - n * p3;
  const z = r * r;
  const sr =
    r +
    r *
      z *
      (-1 / 6 +
        z *
          (1 / 120 +
            z *
              (-1 / 5040 +
                z *
                  (1 / 362880 +
                    z *
                      (-1 / 39916800 + z * (1 / 6227020800 + z * (-1 / 1307674368000 + z * (1 / 355687428096000))))))));
  const cr =
    1 +
    z *
      (-1 / 2 +
        z *
          (1 / 24 +
            z *
              (-1 / 720 +
                z *
                  (1 / 40320 +
                    z *
                      (-1 / 3628800 +
                        z *
                          (1 / 479001600 +
                            z * (-1 / 87178291200 + z * (1 / 20922789888000 + z * (-1 / 6402373705728000)))))))));
  const q = n - 4 * Math.floor(n * 0.25);
  if (q !== q) return [q, q];
  return q === 0 ? [cr, sr] : q === 1 ? [-sr, cr] : q === 2 ? [-cr, -sr] : [sr, -cr];
}

/** Codes shared with native/core/interaction.h. */
const enum Op {
  Dot = 0,
  L1 = 1,
  L2Squared = 2,
  Modulus = 3,
  PairL1 = 4,
}

/** The op each interaction code reduces to (RotatE-L2, 6: the sum of squared moduli = L2Squared over [re | im]). */
function opOf(interaction: number): Op {
  return ([Op.L1, Op.L2Squared, Op.Dot, Op.Dot, Op.Modulus, Op.PairL1, Op.L2Squared] as const)[interaction]!;
}

function isRotate(interaction: number): boolean {
  return interaction === 4 || interaction === 6;
}

function isComplex(interaction: number): boolean {
  return interaction === 3 || isRotate(interaction);
}

/** Position of canonical element k (complex: real halves, then imaginary halves) in a stored row. */
function canonicalMap(width: number, complex: boolean, interleaved: boolean): Uint32Array {
  const map = new Uint32Array(width);
  const c = width / 2;
  for (let k = 0; k < width; k++) map[k] = !complex || !interleaved ? k : k < c ? 2 * k : 2 * (k - c) + 1;
  return map;
}

/** Query (and PairRE coefficient) vectors of every row, canonical order, rounded to the model's type. */
function formQueries(
  input: EmbeddingRankInput,
  map: Uint32Array,
  wide: boolean,
): { q: FloatArray; c: FloatArray | null } {
  const round = wide ? (x: number) => x : fround;
  const rows = input.anchor.length;
  const d = input.entityWidth;
  const E = input.entityEmbeddings;
  const R = input.relationEmbeddings;
  const rw = input.relationWidth;
  const q = wide ? new Float64Array(rows * d) : new Float32Array(rows * d);
  const pair = input.interaction === 5;
  const c = pair ? (wide ? new Float64Array(rows * d) : new Float32Array(rows * d)) : null;
  const head = input.headSide;
  const relMap = canonicalMap(d, true, input.layout === 1);
  // Row i's anchor vector: from the rows given apart (anchorRows, row i) or from the table (the anchor's row).
  const given = input.anchorRows ?? null;
  const A = given ?? E;
  for (let i = 0; i < rows; i++) {
    const a = given ? i * d : input.anchor[i]! * d;
    const r = input.relationIds[i]! * rw;
    const o = i * d;
    switch (input.interaction) {
      case 0:
      case 1:
        for (let k = 0; k < d; k++) q[o + k] = head ? A[a + k]! - R[r + k]! : A[a + k]! + R[r + k]!;
        break;
      case 2:
        for (let k = 0; k < d; k++) q[o + k] = A[a + k]! * R[r + k]!;
        break;
      case 3:
      case 4:
      case 6: {
        const h = d / 2;
        const phases = isRotate(input.interaction) && rw === h;
        for (let k = 0; k < h; k++) {
          let rr: number;
          let ri: number;
          if (phases) {
            [rr, ri] = cosSin(R[r + k]! * input.phaseScale);
          } else {
            rr = R[r + relMap[k]!]!;
            ri = R[r + relMap[k + h]!]!;
            if (isRotate(input.interaction)) {
              const mod = Math.sqrt(rr * rr + ri * ri);
              rr /= mod;
              ri /= mod;
            }
          }
          const ar = A[a + map[k]!]!;
          const ai = A[a + map[k + h]!]!;
          if (head) {
            q[o + k] = rr * ar + ri * ai;
            q[o + k + h] = rr * ai - ri * ar;
          } else {
            q[o + k] = ar * rr - ai * ri;
            q[o + k + h] = ar * ri + ai * rr;
          }
        }
        break;
      }
      case 5: {
        const s = given
          ? input.anchorScale
            ? input.anchorScale[i]!
            : 1
          : input.entityScale
            ? input.entityScale[input.anchor[i]!]!
            : 1;
        for (let k = 0; k < d; k++) {
          const an = round(A[a + k]! * s);
          const rh = R[r + k]!;
          const rt = R[r + d + k]!;
          q[o + k] = an * (head ? rt : rh);
          c![o + k] = head ? rh : rt;
        }
        break;
      }
    }
  }
  return { q, c };
}

/** The score of entity e for query row i: the operations of a native kernel lane, in order. */
function makeScorer(input: EmbeddingRankInput, map: Uint32Array, q: FloatArray, c: FloatArray | null, wide: boolean) {
  const E = input.entityEmbeddings;
  const d = input.entityWidth;
  const op = opOf(input.interaction);
  const scale = input.entityScale;
  const f = wide ? (x: number) => x : fround;
  const madd = wide ? (a: number, b: number, z: number) => a * b + z : fma32;
  return (i: number, e: number): number => {
    const o = i * d;
    const row = e * d;
    let acc = 0;
    switch (op) {
      case Op.Dot:
        for (let k = 0; k < d; k++) acc = madd(q[o + k]!, E[row + map[k]!]!, acc);
        return acc;
      case Op.L1:
        for (let k = 0; k < d; k++) acc = f(acc + Math.abs(f(E[row + map[k]!]! - q[o + k]!)));
        return -acc;
      case Op.L2Squared:
        for (let k = 0; k < d; k++) {
          const x = f(E[row + map[k]!]! - q[o + k]!);
          acc = madd(x, x, acc);
        }
        return -acc;
      case Op.Modulus: {
        const h = d / 2;
        for (let k = 0; k < h; k++) {
          const dr = f(E[row + map[k]!]! - q[o + k]!);
          const di = f(E[row + map[k + h]!]! - q[o + k + h]!);
          acc = f(acc + f(Math.sqrt(madd(dr, dr, f(di * di)))));
        }
        return -acc;
      }
      case Op.PairL1: {
        const s = scale ? scale[e]! : 1;
        for (let k = 0; k < d; k++) {
          const x = scale ? f(E[row + map[k]!]! * s) : E[row + map[k]!]!;
          acc = f(acc + Math.abs(madd(-x, c![o + k]!, q[o + k]!)));
        }
        return -acc;
      }
    }
  };
}

/** Index of the first NaN or infinite value, or -1 (twin of first_non_finite in native/core/interaction.cpp). */
export function firstNonFinite(values: FloatArray): number {
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v - v !== 0) return i;
  }
  return -1;
}

const CHUNK = 512;

/**
 * Fills out (5 x rows + 2): greater | equal | nan | removed | trueScore per row, then a status code and index
 * (0 = ok, 3 = NaN true score at that row), as the addon's rankEmbeddings does. Ids must be checked by the caller.
 */
export function rankEmbeddings(input: EmbeddingRankInput, out: Float64Array): void {
  const rows = input.anchor.length;
  const wide = input.entityEmbeddings instanceof Float64Array;
  const map = canonicalMap(input.entityWidth, isComplex(input.interaction), input.layout === 1);
  const { q, c } = formQueries(input, map, wide);
  const score = makeScorer(input, map, q, c, wide);
  const greater = out.subarray(0, rows);
  const equal = out.subarray(rows, 2 * rows);
  const nan = out.subarray(2 * rows, 3 * rows);
  const removed = out.subarray(3 * rows, 4 * rows);
  const truth = out.subarray(4 * rows, 5 * rows);
  out.fill(0);
  const given = input.trueScores ?? null;
  for (let i = 0; i < rows; i++) {
    const t = given ? (wide ? given[i]! : fround(given[i]!)) : score(i, input.truth[i]!);
    if (t !== t) {
      out[5 * rows] = 3;
      out[5 * rows + 1] = i;
      return;
    }
    truth[i] = t;
  }
  const tally = (i: number, s: number, t: number) => {
    if (s > t) greater[i]!++;
    else if (s === t) equal[i]!++;
    else if (s !== s) nan[i]!++;
  };
  if (input.negatives) {
    const K = input.negativesPerRow;
    for (let i = 0; i < rows; i++) {
      const t = truth[i]!;
      for (let j = 0; j < K; j++) tally(i, score(i, input.negatives[i * K + j]!), t);
    }
    return;
  }
  const sets = input.candidateSets ?? null;
  if (sets) {
    // Typed candidates: each row against its relation's set (the native driver's candidate gather per relation).
    for (let i = 0; i < rows; i++) {
      const t = truth[i]!;
      const r = input.relationIds[i]!;
      for (let j = sets.offsets[r]!; j < sets.offsets[r + 1]!; j++) tally(i, score(i, sets.ids[j]!), t);
    }
  }
  const cand = input.candidates;
  const n = sets ? 0 : cand ? cand.length : input.numEntities;
  for (let begin = 0; begin < n; begin += CHUNK) {
    const end = Math.min(begin + CHUNK, n);
    for (let i = 0; i < rows; i++) {
      const t = truth[i]!;
      for (let j = begin; j < end; j++) tally(i, score(i, cand ? cand[j]! : j), t);
    }
  }
  const off = input.excludeOffsets;
  const base = input.entityOffset ?? 0;
  if (off) {
    for (let i = 0; i < rows; i++) {
      const t = truth[i]!;
      let kept = 0;
      for (let j = off[i]!; j < off[i + 1]!; j++) {
        // A global id: its row in this slice, if the slice holds it.
        const e = input.excludeIds![j]! - base;
        if (e < 0 || e >= input.numEntities) continue;
        const s = score(i, e);
        if (s > t) greater[i]!--;
        else if (s === t) equal[i]!--;
        if (s === s) kept++;
      }
      removed[i] = kept;
    }
  }
}

/**
 * rankEmbeddings in row slices between event-loop turns (src/fallback/slices.ts), stopping at the input's stop. Each
 * row's counts depend on that row alone, and the first row with a NaN true score lies in the first slice that has
 * one, so the output equals rankEmbeddings' (the status row included).
 */
export async function rankEmbeddingsSliced(
  input: EmbeddingRankInput,
  out: Float64Array,
  control: KernelControl,
): Promise<void> {
  const rows = input.anchor.length;
  const { arrays, perRow } = embeddingReads(input);
  out.fill(0);
  let failed = false;
  await inSlices(rows, perRow, control, arrays, (r0, r1) => {
    if (failed) return;
    const n = r1 - r0;
    const part = new Float64Array(5 * n + 2);
    rankEmbeddings(rowsOf(input, r0, r1), part);
    if (part[5 * n] !== 0) {
      out[5 * rows] = part[5 * n]!;
      out[5 * rows + 1] = r0 + part[5 * n + 1]!;
      failed = true;
      return;
    }
    for (let k = 0; k < 5; k++) out.set(part.subarray(k * n, (k + 1) * n), k * rows + r0);
  });
}

/**
 * Relation prediction from embeddings: twin of native/core/interaction.cpp score_relations. Row i of `scores` (rows
 * x numRelations) receives, for every relation r, the tail-side query of (anchor[i], r) formed and scored against
 * truth[i] by the entity kernel's operations (formQueries, makeScorer): the entity kernels' score of the triple,
 * bit for bit. Reads the model, anchor and truth of `input`; ids must be checked by the caller.
 */
export function scoreRelations(input: EmbeddingRankInput, scores: FloatArray): void {
  const rows = input.anchor.length;
  const R = input.numRelations;
  const wide = input.entityEmbeddings instanceof Float64Array;
  const map = canonicalMap(input.entityWidth, isComplex(input.interaction), input.layout === 1);
  const relations = Int32Array.from({ length: R }, (_, r) => r);
  const anchor = new Int32Array(R);
  // One query per relation, all with the pair's head as anchor (the tail side).
  const pair: EmbeddingRankInput = { ...input, headSide: false, anchor, relationIds: relations, anchorRows: null };
  for (let i = 0; i < rows; i++) {
    anchor.fill(input.anchor[i]!);
    const { q, c } = formQueries(pair, map, wide);
    const score = makeScorer(pair, map, q, c, wide);
    const t = input.truth[i]!;
    for (let r = 0; r < R; r++) scores[i * R + r] = score(r, t);
  }
}

/** (s, e) comes before (s2, e2) in a top-k list: the higher score, then the smaller entity id. */
function ahead(s: number, e: number, s2: number, e2: number): boolean {
  return s > s2 || (s === s2 && e < e2);
}

/**
 * Each query's k best candidates among entities [range.begin, range.end): twin of native/core/interaction.cpp
 * top_k_embeddings. Every pair is scored by the kernel lane's operations (makeScorer), so the scores are the native
 * ones bit for bit, and the list is the set defined by its order (score descending, then id ascending; NaN never
 * listed; the input's excluded ids never listed), whatever the order the candidates come in. Rows are padded with
 * id -1 and score NaN. The input's truth, candidates and negatives are not read.
 */
export function topKEmbeddings(
  input: EmbeddingRankInput,
  range: TopKRange,
  ids: Int32Array,
  scores: Float64Array,
): void {
  const rows = input.anchor.length;
  const { k, begin, end } = range;
  const wide = input.entityEmbeddings instanceof Float64Array;
  const map = canonicalMap(input.entityWidth, isComplex(input.interaction), input.layout === 1);
  const { q, c } = formQueries(input, map, wide);
  const score = makeScorer(input, map, q, c, wide);
  const off = input.excludeOffsets;
  const base = input.entityOffset ?? 0; // a slice of a bigger table lists (and excludes) global ids
  for (let i = 0; i < rows; i++) {
    const excluded = off ? new Set(input.excludeIds!.subarray(off[i]!, off[i + 1]!)) : null;
    const floor = range.floor ? range.floor[i]! : NaN; // only scores above it are listed (NaN: none)
    const sc = scores.subarray(i * k, (i + 1) * k);
    const id = ids.subarray(i * k, (i + 1) * k);
    let n = 0;
    for (let local = begin; local < end; local++) {
      const s = score(i, local);
      const e = base + local;
      if (s !== s || (n === k && !ahead(s, e, sc[k - 1]!, id[k - 1]!)) || !(floor !== floor || s > floor)) continue;
      if (excluded?.has(e)) continue;
      let pos = n < k ? n : k - 1;
      while (pos > 0 && ahead(s, e, sc[pos - 1]!, id[pos - 1]!)) {
        sc[pos] = sc[pos - 1]!;
        id[pos] = id[pos - 1]!;
        pos--;
      }
      sc[pos] = s;
      id[pos] = e;
      if (n < k) n++;
    }
    sc.fill(NaN, n);
    id.fill(-1, n);
  }
}
