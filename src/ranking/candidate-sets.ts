/**
 * Typed candidates (Krompaß et al., ISWC 2015): per relation, the entities allowed as its heads and as its tails.
 * A task (h, r, ?) is then ranked against allowed_tail(r) (and the true tail, which always stays a candidate), not
 * against every entity; its candidate count, and with it every expectation, adjusted and z-scored metric, follows.
 *
 * Stored per side as compressed rows: relation r's allowed ids are ids[offsets[r] .. offsets[r + 1]), ascending and
 * unique. Memory is 4 bytes per allowed (relation, entity) pair plus 4 per relation and side, never relations x
 * entities. The kernels (FilterIndexHandle.rankTriplesConstrained) read these arrays as they are.
 */
import { createHash } from "node:crypto";

import { KgrankInputError } from "../checks/errors";
import type { ConstrainedSets } from "../contract/kernels";
import { integer, isArrayLike, options, tripleArray } from "../checks/validate";

export type CandidateSide = "head" | "tail";

/** One side's sets: relation r's allowed entity ids are ids[offsets[r] .. offsets[r + 1]). */
export interface CandidateSetArrays {
  offsets: Int32Array;
  ids: Int32Array;
}

/**
 * A set with at least one id per STREAM_RATIO entities is dense: the native kernel counts its rows in one streamed
 * pass under a bit set (ConstrainedSets.bits, at most 8 bytes per allowed id) instead of gathering its columns.
 */
const STREAM_RATIO = 64;

export interface CandidateSetsFromPairsOptions {
  numEntities: number;
  numRelations: number;
  /** Allowed heads as (relation, entity) pairs, flat: [r0, e0, r1, e1, ...]. Duplicates are fine. */
  head: Int32Array | ArrayLike<number>;
  /** Allowed tails as (relation, entity) pairs, flat. */
  tail: Int32Array | ArrayLike<number>;
  /** Where the sets came from, recorded in states and shown in reports (default "pairs"). */
  source?: string;
}

export interface CandidateSetsFromTriplesOptions {
  numEntities: number;
  /** Default: 1 + the largest relation id of the triples. */
  numRelations?: number;
  /** Recorded in states and shown in reports (default "train"). */
  source?: string;
}

export class CandidateSets {
  readonly numEntities: number;
  readonly numRelations: number;
  /** Where the sets came from: "train" (inferred from training triples), a file name, or the caller's label. */
  readonly source: string;
  private readonly sides: Record<CandidateSide, CandidateSetArrays>;
  private digest: string | null = null;
  private readonly bitSets: Partial<Record<CandidateSide, ConstrainedSets>> = {};

  private constructor(
    numEntities: number,
    numRelations: number,
    source: string,
    head: CandidateSetArrays,
    tail: CandidateSetArrays,
  ) {
    this.numEntities = numEntities;
    this.numRelations = numRelations;
    this.source = source;
    this.sides = { head, tail };
  }

  /**
   * The sets seen in training: relation r's allowed heads are the heads of r's training triples, its allowed tails
   * their tails (the domain and range as observed, the usual inference when no schema is given).
   */
  static fromTriples(triples: Int32Array | Int32Array[], opts: CandidateSetsFromTriplesOptions): CandidateSets {
    const o = options("CandidateSets.fromTriples options", opts, ["numEntities", "numRelations", "source"]);
    const numEntities = integer("numEntities", o.numEntities, 1, 2 ** 31 - 1);
    const list = Array.isArray(triples) ? triples : [triples];
    if (list.length === 0) throw new KgrankInputError("triples", "give at least one array of training triples");
    const bound = o.numRelations === undefined ? null : integer("numRelations", o.numRelations, 1, 2 ** 31 - 1);
    let maxRelation = -1;
    const checked = list.map((t, i) => {
      const c = tripleArray(list.length === 1 ? "triples" : `triples[${i}]`, t, numEntities, bound);
      for (let k = 1; k < c.length; k += 3) maxRelation = Math.max(maxRelation, c[k]!);
      return c;
    });
    const numRelations = bound ?? maxRelation + 1;
    if (numRelations === 0) throw new KgrankInputError("triples", "hold no triples: the sets would all be empty");
    const pairs = (col: 0 | 2) => {
      const total = checked.reduce((n, t) => n + t.length / 3, 0);
      const out = new Int32Array(2 * total);
      let at = 0;
      for (const t of checked) {
        for (let k = 0; k < t.length; k += 3) {
          out[at++] = t[k + 1]!;
          out[at++] = t[k + col]!;
        }
      }
      return out;
    };
    return new CandidateSets(
      numEntities,
      numRelations,
      sourceOption(o.source, "train"),
      compress(pairs(0), numRelations),
      compress(pairs(2), numRelations),
    );
  }

  /** Sets from (relation, entity) pairs per side, e.g. read from a file (readCandidateFile). */
  static fromPairs(opts: CandidateSetsFromPairsOptions): CandidateSets {
    const o = options("CandidateSets.fromPairs options", opts, [
      "numEntities",
      "numRelations",
      "head",
      "tail",
      "source",
    ]);
    const numEntities = integer("numEntities", o.numEntities, 1, 2 ** 31 - 1);
    const numRelations = integer("numRelations", o.numRelations, 1, 2 ** 31 - 1);
    const side = (name: CandidateSide) => {
      const given = o[name];
      if (!isArrayLike(given) || given.length % 2 !== 0)
        throw new KgrankInputError(name, "must be a flat array of (relation, entity) pairs, of even length");
      const p = given as ArrayLike<number>;
      const out = Int32Array.from(p);
      for (let k = 0; k < out.length; k += 2) {
        if (!(out[k]! >= 0 && out[k]! < numRelations && out[k] === p[k]))
          throw new KgrankInputError(
            name,
            `pair ${k / 2}: relation ${String(p[k])} is not an id in [0, ${numRelations})`,
          );
        if (!(out[k + 1]! >= 0 && out[k + 1]! < numEntities && out[k + 1] === p[k + 1]))
          throw new KgrankInputError(
            name,
            `pair ${k / 2}: entity ${String(p[k + 1])} is not an id in [0, ${numEntities})`,
          );
      }
      return compress(out, numRelations);
    };
    return new CandidateSets(numEntities, numRelations, sourceOption(o.source, "pairs"), side("head"), side("tail"));
  }

  /**
   * One side's arrays as the kernels read them (do not modify): the ids, and the dense relations' bit sets (built on
   * first use, kept with the sets).
   * @internal
   */
  arrays(side: CandidateSide): ConstrainedSets {
    const built = this.bitSets[side];
    if (built) return built;
    const { offsets, ids } = this.sides[side];
    const words = Math.ceil(this.numEntities / 16);
    const bitsAt = new Int32Array(this.numRelations).fill(-1);
    let dense = 0;
    for (let r = 0; r < this.numRelations; r++) {
      // Offsets stay Int32 (the kernel's bitsAt): past 2^31 words, the rest are gathered.
      if ((offsets[r + 1]! - offsets[r]!) * STREAM_RATIO >= this.numEntities && (dense + 1) * words <= 0x7fffffff)
        bitsAt[r] = dense++ * words;
    }
    const bits = new Uint16Array(dense * words);
    for (let r = 0; r < this.numRelations; r++) {
      if (bitsAt[r]! < 0) continue;
      for (let k = offsets[r]!; k < offsets[r + 1]!; k++) bits[bitsAt[r]! + (ids[k]! >>> 4)]! |= 1 << (ids[k]! & 15);
    }
    return (this.bitSets[side] = { offsets, ids, bits, bitsAt });
  }

  /**
   * One side's sets as they are stored (do not modify): relation r's allowed ids are ids[offsets[r] .. offsets[r +
   * 1]), ascending. What the embedding kernels gather per relation (EmbeddingRankInput.candidateSets).
   */
  lists(side: CandidateSide): CandidateSetArrays {
    return this.sides[side];
  }

  /** Whether `relation` allows `entity` on `side` (a binary search of its ascending ids). */
  has(side: CandidateSide, relation: number, entity: number): boolean {
    const { offsets, ids } = this.sides[side];
    let lo = offsets[relation]!;
    let hi = offsets[relation + 1]!;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ids[mid]! < entity) lo = mid + 1;
      else hi = mid;
    }
    return lo < offsets[relation + 1]! && ids[lo] === entity;
  }

  /** The allowed entities of `relation` on `side` (a copy, ascending). */
  allowed(side: CandidateSide, relation: number): Int32Array {
    const { offsets, ids } = this.sides[side];
    return ids.slice(offsets[relation], offsets[relation + 1]);
  }

  /** How many entities `relation` allows on `side`. */
  size(side: CandidateSide, relation: number): number {
    const { offsets } = this.sides[side];
    return offsets[relation + 1]! - offsets[relation]!;
  }

  /** Allowed (relation, entity) pairs over both sides: the constraint's size. */
  get pairs(): number {
    return this.sides.head.ids.length + this.sides.tail.ids.length;
  }

  /** Bytes held by the ids and offsets: 4 per pair and per relation and side (the kernels' bit sets apart). */
  get bytes(): number {
    const { head, tail } = this.sides;
    return head.ids.byteLength + tail.ids.byteLength + head.offsets.byteLength + tail.offsets.byteLength;
  }

  /** Bytes of the dense relations' bit sets built so far (arrays()): at most 8 per allowed pair of those relations. */
  get bitSetBytes(): number {
    return Object.values(this.bitSets).reduce((n, s) => n + s.bits.byteLength + s.bitsAt.byteLength, 0);
  }

  /** SHA-256 (hex, first 16 digits) of the sets: states record it, and only states of equal sets merge. */
  get fingerprint(): string {
    if (this.digest === null) {
      const h = createHash("sha256");
      h.update(`${this.numEntities} ${this.numRelations}`);
      for (const side of ["head", "tail"] as const) {
        const { offsets, ids } = this.sides[side];
        h.update(new Uint8Array(offsets.buffer, offsets.byteOffset, offsets.byteLength));
        h.update(new Uint8Array(ids.buffer, ids.byteOffset, ids.byteLength));
      }
      this.digest = h.digest("hex").slice(0, 16);
    }
    return this.digest;
  }

  /** What a state records of the constraint (its protocol). */
  describe(): CandidateProtocol {
    return { source: this.source, fingerprint: this.fingerprint, pairs: this.pairs };
  }
}

/** A state's record of the candidate sets its tasks were ranked against. */
export interface CandidateProtocol {
  source: string;
  fingerprint: string;
  pairs: number;
}

function sourceOption(v: unknown, fallback: string): string {
  if (v === undefined) return fallback;
  if (typeof v !== "string" || v.length === 0 || v.length > 1000)
    throw new KgrankInputError("source", "must be a non-empty string (at most 1000 characters)");
  return v;
}

/** Flat (relation, entity) pairs (ids valid) into offsets + ids, each relation's ids ascending and unique. */
function compress(pairs: Int32Array, numRelations: number): CandidateSetArrays {
  const n = pairs.length / 2;
  const start = new Int32Array(numRelations + 1);
  for (let k = 0; k < n; k++) start[pairs[2 * k]! + 1]!++;
  for (let r = 0; r < numRelations; r++) start[r + 1]! += start[r]!;
  const sorted = new Int32Array(n);
  const cursor = start.slice(0, numRelations);
  for (let k = 0; k < n; k++) sorted[cursor[pairs[2 * k]!]!++] = pairs[2 * k + 1]!;
  const offsets = new Int32Array(numRelations + 1);
  let at = 0;
  for (let r = 0; r < numRelations; r++) {
    const seg = sorted.subarray(start[r], start[r + 1]);
    seg.sort();
    for (let k = 0; k < seg.length; k++) if (k === 0 || seg[k] !== seg[k - 1]) sorted[at++] = seg[k]!;
    offsets[r + 1] = at;
  }
  return { offsets, ids: sorted.slice(0, at) };
}
