/**
 * Seeded random triples (an LCG), heads drawn with a Zipf-like popularity (uniform^power) so that a filter built on
 * them has heavy keys, relations and tails uniform.
 */
export function seededTriples(
  count: number,
  seed: number,
  numEntities: number,
  numRelations: number,
  headPower: number,
): Int32Array {
  let s = seed >>> 0;
  const rnd = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const out = new Int32Array(3 * count);
  for (let i = 0; i < count; i++) {
    out[3 * i] = Math.floor(numEntities * rnd() ** headPower);
    out[3 * i + 1] = Math.floor(numRelations * rnd());
    out[3 * i + 2] = Math.floor(numEntities * rnd());
  }
  return out;
}
