/**
 * A seeded temporal KG shaped like ICEWS14 (7,128 entities, 230 relations, 365 daily timestamps): facts drawn from a
 * pool of distinct (h, r, t) with Zipf-like heads and relations, each pool fact recurring at several timestamps
 * (ICEWS events repeat), so that the static and time-aware filters remove different, sizeable sets.
 */
export const ICEWS14_SHAPE = { numEntities: 7128, numRelations: 230, numTimestamps: 365 } as const;

export interface SeededTemporal {
  train: Int32Array;
  valid: Int32Array;
  test: Int32Array;
}

/** n x 4 (h, r, t, τ) quadruples per split; test holds `testCount` rows, valid a tenth of train. */
export function seededTemporal(trainCount: number, testCount: number, seed: number): SeededTemporal {
  const { numEntities, numRelations, numTimestamps } = ICEWS14_SHAPE;
  let s = seed >>> 0;
  const rnd = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const poolSize = Math.max(1, Math.floor(trainCount / 4));
  const pool = new Int32Array(poolSize * 3);
  for (let i = 0; i < poolSize; i++) {
    pool[3 * i] = Math.floor(numEntities * rnd() ** 3);
    pool[3 * i + 1] = Math.floor(numRelations * rnd() ** 2);
    pool[3 * i + 2] = Math.floor(numEntities * rnd() ** 2);
  }
  const draw = (count: number) => {
    const out = new Int32Array(count * 4);
    for (let i = 0; i < count; i++) {
      const p = Math.floor(poolSize * rnd() ** 2);
      out[4 * i] = pool[3 * p]!;
      out[4 * i + 1] = pool[3 * p + 1]!;
      out[4 * i + 2] = pool[3 * p + 2]!;
      // A few busy days: many facts share a timestamp, as in ICEWS.
      out[4 * i + 3] = Math.floor(numTimestamps * rnd() ** 1.5);
    }
    return out;
  };
  return { train: draw(trainCount), valid: draw(Math.floor(trainCount / 10)), test: draw(testCount) };
}
