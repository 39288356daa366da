/**
 * Filtered candidate counts of a split without scores: for the tail task of (h, r, t) every entity is a candidate
 * except the other known tails t' of (h, r, ·) in the filter triples; the same for heads. These are the N_i the
 * expectations of `kgrank adjust` and `kgrank expectations` are computed over (PyKEEN's filtered setting, with the
 * evaluated split always part of the filter).
 */
export function filteredCandidateCounts(
  evaluated: Int32Array,
  filter: Int32Array[],
  numEntities: number,
  numRelations: number,
): { head: Float64Array; tail: Float64Array } {
  const safe = Number.isSafeInteger(numEntities * numRelations * numEntities);
  const seen = new Set<number | string>();
  const tailsOf = new Map<number, number>(); // (h, r) -> distinct known tails
  const headsOf = new Map<number, number>(); // (r, t) -> distinct known heads
  for (const triples of [...filter, evaluated]) {
    for (let i = 0; i + 2 < triples.length; i += 3) {
      const h = triples[i]!;
      const r = triples[i + 1]!;
      const t = triples[i + 2]!;
      const key = safe ? (h * numRelations + r) * numEntities + t : `${h},${r},${t}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const hr = h * numRelations + r;
      const rt = r * numEntities + t;
      tailsOf.set(hr, (tailsOf.get(hr) ?? 0) + 1);
      headsOf.set(rt, (headsOf.get(rt) ?? 0) + 1);
    }
  }
  const n = evaluated.length / 3;
  const head = new Float64Array(n);
  const tail = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const h = evaluated[3 * i]!;
    const r = evaluated[3 * i + 1]!;
    const t = evaluated[3 * i + 2]!;
    tail[i] = numEntities - (tailsOf.get(h * numRelations + r)! - 1);
    head[i] = numEntities - (headsOf.get(r * numEntities + t)! - 1);
  }
  return { head, tail };
}
