/**
 * Monte Carlo: seeded random rank vectors and the statistic of one vector. Twin of native/core/sampling.{h,cpp};
 * the random stream itself is src/numeric/random.ts (shared with the facade).
 */
import { StatisticCode } from "../contract/kernels";
import { streamKey, uniform01Keyed } from "../numeric/random";
import { median, medianAbsoluteDeviation, squaredDeviations } from "./aggregate";

export function generateRanksInto(
  numCandidates: Float64Array,
  seed: number,
  sample: number,
  out: Float64Array,
): Float64Array {
  const key = streamKey(seed, sample);
  for (let i = 0; i < numCandidates.length; i++) out[i] = 1 + Math.floor(uniform01Keyed(key, i) * numCandidates[i]!);
  return out;
}

function statisticOf(stat: StatisticCode, r: Float64Array, w: Float64Array | null, k: number): number {
  const n = r.length;
  switch (stat) {
    case StatisticCode.Median:
      return median(r, w);
    case StatisticCode.Mad:
      return medianAbsoluteDeviation(r, w);
    case StatisticCode.Count:
      return n;
    case StatisticCode.Variance:
      return squaredDeviations(r) / n;
    default:
      break;
  }
  // Plain sums in index order, as native/core/sampling.cpp.
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    const x = r[i]!;
    let v: number;
    if (stat === StatisticCode.Mean) v = x;
    else if (stat === StatisticCode.GeometricMean) v = Math.log(x);
    else if (stat === StatisticCode.InverseHarmonic) v = 1 / x;
    else v = x <= k ? 1 : 0;
    if (w) {
      num += w[i]! * v;
      den += w[i]!;
    } else {
      num += v;
    }
  }
  if (!w) den = n;
  const mean = num / den;
  return stat === StatisticCode.GeometricMean ? Math.exp(mean) : mean;
}

/** The statistic of `numSamples` seeded random rank vectors (sample_statistic, single threaded). */
export function sampleStatistic(
  numCandidates: Float64Array,
  weights: Float64Array | null,
  numSamples: number,
  seed: number,
  statistic: StatisticCode,
  k: number,
): Float64Array {
  const out = new Float64Array(numSamples);
  const ranks = new Float64Array(numCandidates.length);
  for (let s = 0; s < numSamples; s++) {
    out[s] = statisticOf(statistic, generateRanksInto(numCandidates, seed, s, ranks), weights, k);
  }
  return out;
}
