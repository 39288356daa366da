/**
 * The metric aggregate of ranks (compensated sums of w r, w log r, w / r, hit counts per k, MRR@k's truncated
 * reciprocal sums per truncated k, centred sum of squares, invalid ranks) and the conventional (weighted) median and
 * scaled MAD. Twin of native/core/aggregate.{h,cpp} (single threaded: one chunk); the slot layout is AGGREGATE_SLOTS'.
 */
import { AGGREGATE_FLAGS, AGGREGATE_SLOTS } from "../contract/kernels";
import { CompensatedSum } from "../numeric/compensated";

export function aggregateRanks(
  ranks: Float64Array,
  weights: Float64Array | null,
  ks: Float64Array,
  truncatedKs: Float64Array,
  flags: number,
) {
  const n = ranks.length;
  const numK = ks.length;
  const numT = truncatedKs.length;
  const w = new CompensatedSum();
  const wr = new CompensatedSum();
  const wlog = new CompensatedSum();
  const winv = new CompensatedSum();
  const hits = Array.from({ length: numK }, () => new CompensatedSum());
  const truncated = Array.from({ length: numT }, () => new CompensatedSum());
  for (let i = 0; i < n; i++) {
    const x = ranks[i]!;
    const wi = weights ? weights[i]! : 1;
    if (weights) w.add(wi);
    wr.add(wi * x);
    wlog.add(wi * Math.log(x));
    winv.add(wi / x);
    for (let j = 0; j < numK; j++) hits[j]!.add(x <= ks[j]! ? wi : 0);
    // MRR@k's truncated reciprocal sum (truncated_inverse_sum).
    for (let j = 0; j < numT; j++) truncated[j]!.add(x <= truncatedKs[j]! ? wi / x : 0);
  }
  if (!weights) w.add(n);
  const out = new Float64Array(AGGREGATE_SLOTS.fixed + numK + numT);
  out[AGGREGATE_SLOTS.sumWeights] = w.value();
  out[AGGREGATE_SLOTS.sumRanks] = wr.value();
  out[AGGREGATE_SLOTS.sumLogRanks] = wlog.value();
  out[AGGREGATE_SLOTS.sumInverseRanks] = winv.value();
  for (let j = 0; j < numK; j++) out[AGGREGATE_SLOTS.fixed + j] = hits[j]!.value();
  for (let j = 0; j < numT; j++) out[AGGREGATE_SLOTS.fixed + numK + j] = truncated[j]!.value();
  if (flags & AGGREGATE_FLAGS.variance && n > 0) out[AGGREGATE_SLOTS.sumSquaredDeviations] = squaredDeviations(ranks);
  let invalid = 0;
  for (let i = 0; i < n; i++) if (!(ranks[i]! >= 1 && ranks[i]! <= Number.MAX_VALUE)) invalid++;
  out[AGGREGATE_SLOTS.invalid] = invalid;
  const medians = invalid === 0 && n > 0;
  out[AGGREGATE_SLOTS.median] =
    medians && flags & (AGGREGATE_FLAGS.median | AGGREGATE_FLAGS.mad) ? median(ranks, weights) : NaN;
  out[AGGREGATE_SLOTS.mad] = medians && flags & AGGREGATE_FLAGS.mad ? medianAbsoluteDeviation(ranks, weights) : NaN;
  return out;
}

export function squaredDeviations(r: ArrayLike<number>): number {
  const s = new CompensatedSum();
  for (let i = 0; i < r.length; i++) s.add(r[i]!);
  const mean = s.value() / r.length;
  const d = new CompensatedSum();
  for (let i = 0; i < r.length; i++) d.add((r[i]! - mean) * (r[i]! - mean));
  return d.value();
}

const NORMAL_QUARTILE = 0.6744897501960817; // Phi^-1(3/4)

export function median(values: Float64Array, weights: Float64Array | null): number {
  const n = values.length;
  if (!weights) {
    const v = Float64Array.from(values).sort();
    const mid = n >> 1;
    if (n % 2 === 1) return v[mid]!;
    const lower = v[mid - 1]!;
    const upper = v[mid]!;
    return lower + (upper - lower) / 2;
  }
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => values[a]! - values[b]!);
  const total = new CompensatedSum();
  for (let i = 0; i < n; i++) total.add(weights[i]!);
  const half = total.value() / 2;
  const cum = new CompensatedSum();
  for (let i = 0; i < n; i++) {
    cum.add(weights[order[i]!]!);
    const c = cum.value();
    if (c >= half) {
      const x = values[order[i]!]!;
      // Exactly half the weight lies at or below x: the median is midway to the next task that weighs anything.
      let j = i + 1;
      if (c === half) while (j < n && weights[order[j]!] === 0) j++;
      if (c === half && j < n) {
        const y = values[order[j]!]!;
        return x + (y - x) / 2;
      }
      return x;
    }
  }
  return values[order[n - 1]!]!;
}

export function medianAbsoluteDeviation(values: Float64Array, weights: Float64Array | null): number {
  const m = median(values, weights);
  const dev = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) dev[i] = Math.abs(values[i]! - m);
  return median(dev, weights) / NORMAL_QUARTILE;
}
