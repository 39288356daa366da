/** Independent brute-force references for the tests: plain loops, no shared code with src/. */

export interface RefCounts {
  greater: number[];
  equal: number[];
  nan: number[];
}

/** Counts by sorting each row (a different algorithm from the kernels' single pass). */
export function referenceCounts(
  scores: ArrayLike<number>,
  numColumns: number,
  thresholds: ArrayLike<number>,
): RefCounts {
  const rows = thresholds.length;
  const out: RefCounts = { greater: [], equal: [], nan: [] };
  for (let r = 0; r < rows; r++) {
    const row = Array.from({ length: numColumns }, (_, j) => scores[r * numColumns + j]!);
    const t = thresholds[r]!;
    const numbers = row.filter((v) => !Number.isNaN(v)).sort((a, b) => b - a);
    let g = 0;
    while (g < numbers.length && numbers[g]! > t) g++;
    let e = 0;
    while (g + e < numbers.length && numbers[g + e] === t) e++;
    out.greater.push(g);
    out.equal.push(e);
    out.nan.push(row.length - numbers.length);
  }
  return out;
}

/** Small deterministic PRNG (mulberry32) for reproducible test data. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Values that stress comparisons: NaN, signed zeros, infinities, subnormals, extremes, ties. */
export const SPECIAL_F32 = [
  0,
  -0,
  1,
  -1,
  Infinity,
  -Infinity,
  NaN,
  1.401298464324817e-45,
  -1.401298464324817e-45,
  1.1754943508222875e-38,
  3.4028234663852886e38,
  -3.4028234663852886e38,
  0.5,
  2,
];
export const SPECIAL_F64 = [
  0,
  -0,
  1,
  -1,
  Infinity,
  -Infinity,
  NaN,
  5e-324,
  -5e-324,
  2.2250738585072014e-308,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  0.5,
  2,
];

export interface RefRanks {
  optimistic: number[];
  pessimistic: number[];
  realistic: number[];
  numCandidates: number[];
}

/**
 * Ranks by sorting each row's candidates in descending order and locating the true score among them. With
 * `trueIndex` the true candidate is one of the row's entries; with `trueScore` it is an extra candidate.
 */
export function referenceRanks(
  scores: ArrayLike<number>,
  numColumns: number,
  truth: { trueIndices: ArrayLike<number> } | { trueScores: ArrayLike<number> },
): RefRanks {
  const rows = scores.length / numColumns;
  const out: RefRanks = { optimistic: [], pessimistic: [], realistic: [], numCandidates: [] };
  for (let r = 0; r < rows; r++) {
    const row = Array.from({ length: numColumns }, (_, j) => scores[r * numColumns + j]!);
    let t: number;
    const candidates = row.filter((v) => !Number.isNaN(v));
    if ("trueIndices" in truth) {
      t = row[truth.trueIndices[r]!]!;
    } else {
      t = truth.trueScores[r]!;
      candidates.push(t);
    }
    candidates.sort((a, b) => b - a);
    const firstTie = candidates.findIndex((v) => v === t); // 0-based position of the first candidate equal to t
    let lastTie = firstTie;
    while (lastTie + 1 < candidates.length && candidates[lastTie + 1] === t) lastTie++;
    out.optimistic.push(firstTie + 1);
    out.pessimistic.push(lastTie + 1);
    out.realistic.push((firstTie + lastTie + 2) / 2);
    out.numCandidates.push(candidates.length);
  }
  return out;
}

/**
 * Brute-force known answers of the filtered setting, from plain Sets: for side "tail" the key "h,r" maps to every t
 * with (h, r, t) in one of `filter`'s triple arrays; for "head" the key "t,r" to every h.
 */
export function knownAnswers(filter: readonly Int32Array[], side: "head" | "tail"): Map<string, Set<number>> {
  const known = new Map<string, Set<number>>();
  for (const t of filter) {
    for (let i = 0; i < t.length; i += 3) {
      const key = side === "tail" ? `${t[i]},${t[i + 1]}` : `${t[i + 2]},${t[i + 1]}`;
      let s = known.get(key);
      if (!s) known.set(key, (s = new Set()));
      s.add(side === "tail" ? t[i + 2]! : t[i]!);
    }
  }
  return known;
}
