/**
 * The counter-based random stream, shared by the fallback backend (src/fallback/sampling.ts) and the facade
 * (src/metrics/estimate.ts, src/metrics/generate.ts, src/evaluation/tabulate.ts). Twin of the stream functions of
 * native/core/sampling.h (fmix32, mix32, stream_key, uniform01_keyed, uniform01): bit-identical.
 */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function mix32(a: number, b: number): number {
  return fmix32(a ^ ((Math.imul(b, 0x9e3779b1) + 0x7f4a7c15) >>> 0));
}

/** Key of the stream (seed, sample). */
export function streamKey(seed: number, sample: number): number {
  return mix32(seed, sample);
}

/** Uniform double in [0, 1): element `index` of stream `key`; bit-identical to native/core/sampling.h. */
export function uniform01Keyed(key: number, index: number): number {
  const h = mix32(key, index);
  const hi = h >>> 5;
  const lo = fmix32((h + 0x63d83595) >>> 0) >>> 6;
  return (hi * 67108864 + lo) * (1 / 9007199254740992);
}

/**
 * uniform01Keyed(key, index) < 0.5, exactly, at half the cost: the uniform is below 1/2 when the top bit of its high
 * 27 bits, bit 31 of mix32(key, index), is clear (the low bits cannot carry past it).
 */
export function lowerHalfKeyed(key: number, index: number): boolean {
  return mix32(key, index) < 0x80000000;
}

export function uniform01(seed: number, sample: number, index: number): number {
  return uniform01Keyed(streamKey(seed, sample), index);
}
