/**
 * Monte-Carlo estimation shared by every metric: the kernels draw `numSamples` seeded rank vectors and return the
 * statistic of each; the metric maps the statistic to its value; a seeded bootstrap over the sample values gives
 * percentile intervals for the mean and the variance. The bootstrap's replicates are the kernels' paired resampling
 * (pairedResample: the same draws and sums on every backend), over the sample values centred on their mean.
 */
import { kernels } from "../backend/backend";
import { KgrankInputError } from "../checks/errors";
import { ResamplingKind } from "../contract/kernels";
import { CompensatedSum } from "../numeric/compensated";
import { quantile } from "../numeric/quantile";
import { streamKey, uniform01Keyed } from "../numeric/random";
import { confidenceLevelArg, describe, optionKeys, options, seedArg } from "../checks/validate";
import type { EstimateOptions, Interval } from "./types";

const BOOTSTRAP_STREAM = 0x5bd1e995;
/**
 * The most sample values whose bootstrap runs as pairedResample: it takes 16 bytes per value for its two columns and
 * 4 per value for each replicate's draw counts; past 2^24 values the draws are summed one value at a time instead.
 */
const MAX_RESAMPLED = 1 << 24;

function meanAndVariance(values: Float64Array, pick?: Uint32Array): [number, number] {
  const n = values.length;
  const s = new CompensatedSum();
  for (let i = 0; i < n; i++) s.add(values[pick ? pick[i]! : i]!);
  const mean = s.value() / n;
  const d = new CompensatedSum();
  for (let i = 0; i < n; i++) {
    const x = values[pick ? pick[i]! : i]! - mean;
    d.add(x * x);
  }
  return [mean, d.value() / (n - 1)];
}

const ESTIMATE_KEYS = optionKeys<EstimateOptions>({
  numCandidates: 1,
  weights: 1,
  numSamples: 1,
  seed: 1,
  confidenceLevel: 1,
  numBootstrap: 1,
});

export function checkEstimateOptions(value: unknown) {
  const {
    numSamples,
    seed = 0,
    confidenceLevel = 0.95,
    numBootstrap = 1000,
  } = options("options", value, ESTIMATE_KEYS);
  if (typeof numSamples !== "number" || !Number.isInteger(numSamples) || numSamples < 2 || numSamples > 0xffffffff) {
    throw new KgrankInputError("numSamples", `must be an integer from 2 to 2^32-1, got ${describe(numSamples)}`);
  }
  seedArg("seed", seed);
  confidenceLevelArg("confidenceLevel", confidenceLevel);
  if (typeof numBootstrap !== "number" || !Number.isInteger(numBootstrap) || numBootstrap < 1 || numBootstrap > 1e6) {
    throw new KgrankInputError("numBootstrap", `must be an integer from 1 to 1e6, got ${describe(numBootstrap)}`);
  }
  return { numSamples, seed: seed as number, confidenceLevel: confidenceLevel as number, numBootstrap };
}

/** Mean and (unbiased) variance of `values` with bootstrap percentile intervals. */
export function bootstrap(values: Float64Array, seed: number, confidenceLevel: number, numBootstrap: number) {
  const n = values.length;
  const [mean, variance] = meanAndVariance(values);
  const means = new Float64Array(numBootstrap);
  const variances = new Float64Array(numBootstrap);
  const stream = (seed ^ BOOTSTRAP_STREAM) >>> 0;
  // A non-finite value (an infinite sample) makes every centred column NaN, also for resamples that never drew it:
  // those go one value at a time too.
  if (n <= MAX_RESAMPLED && Number.isFinite(mean)) {
    // Resample b draws n values with replacement, value floor(u_i * n) for the uniforms u_i of stream
    // streamKey(stream, b); with d = value - mean and c_i draws of value i, its mean is mean + sum(c d) / n and its
    // variance (sum(c d^2) - sum(c d)^2 / n) / (n - 1). Centred, the two sums lose nothing to cancellation.
    const x = new Float64Array(2 * n);
    for (let i = 0; i < n; i++) {
      const d = values[i]! - mean;
      x[i] = d;
      x[n + i] = d * d;
    }
    const out = kernels().pairedResample(ResamplingKind.Bootstrap, { n, x, medians: null }, stream, 0, numBootstrap);
    for (let b = 0; b < numBootstrap; b++) {
      const s1 = out[2 * b]!;
      means[b] = mean + s1 / n;
      variances[b] = Math.max(0, (out[2 * b + 1]! - (s1 * s1) / n) / (n - 1));
    }
  } else {
    // The same draws, one value at a time.
    const pick = new Uint32Array(n);
    for (let b = 0; b < numBootstrap; b++) {
      const key = streamKey(stream, b);
      for (let i = 0; i < n; i++) pick[i] = Math.floor(uniform01Keyed(key, i) * n);
      [means[b], variances[b]] = meanAndVariance(values, pick);
    }
  }
  means.sort();
  variances.sort();
  const alpha = (1 - confidenceLevel) / 2;
  const interval = (value: number, sorted: Float64Array): Interval => ({
    value,
    lower: quantile(sorted, alpha),
    upper: quantile(sorted, 1 - alpha),
    confidenceLevel,
  });
  return { expectedValue: interval(mean, means), variance: interval(variance, variances), numSamples: n };
}
