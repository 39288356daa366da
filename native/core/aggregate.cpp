// The fused metric aggregate of ranks (sums, hits, median, MAD). Fallback twin: src/fallback/aggregate.ts.

#include "aggregate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "compensated.h"
#include "rank_sums.h"
#include "simd.h"
#include "thread_pool.h"

namespace kgrank {

namespace {

constexpr int kLanes = 4;

// Not finite or below 1 (NaN included).
inline bool invalid_rank(double x) { return !(x >= 1.0 && x <= 1.7976931348623157e308); }

// Kahan sums in independent lanes (vectorisable); positive or mixed terms alike, merged with Neumaier at the end.
struct LaneSum {
  double s[kLanes] = {0, 0, 0, 0};
  double c[kLanes] = {0, 0, 0, 0};
  inline void add(int lane, double x) {
    const double y = x - c[lane];
    const double t = s[lane] + y;
    c[lane] = (t - s[lane]) - y;
    s[lane] = t;
  }
  CompensatedSum total() const {
    CompensatedSum out;
    for (int l = 0; l < kLanes; ++l) {
      out.add(s[l]);
      out.add(-c[l]);
    }
    return out;
  }
};

struct ChunkResult {
  CompensatedSum w, wr, wlog, winv;
  std::vector<double> hits;
  double count = 0, mean = 0, m2 = 0;
  double invalid = 0;
};

// Weighted ranks: compensated sums in lanes, hits, invalid count and (when asked) the chunk's centred squares.
void sum_chunk(const double* r, const double* w, size_t n, const double* ks, size_t num_k, bool want_m2,
               ChunkResult& out) {
  LaneSum winv, wsum, wlog, wr;
  out.hits.assign(num_k, 0.0);
  for (size_t i = 0; i < n; ++i) {
    const int l = static_cast<int>(i % kLanes);
    const double x = r[i];
    const double wi = w[i];
    wsum.add(l, wi);
    wr.add(l, wi * x);
    wlog.add(l, wi * std::log(x));
    winv.add(l, wi / x);
  }
  for (size_t j = 0; j < num_k; ++j) {
    CompensatedSum h;
    for (size_t t = 0; t < n; ++t) h.add(r[t] <= ks[j] ? w[t] : 0.0);
    out.hits[j] = h.value();
  }
  out.w = wsum.total();
  out.wlog = wlog.total();
  out.wr = wr.total();
  out.winv = winv.total();
  size_t bad = 0;
  for (size_t t = 0; t < n; ++t) bad += invalid_rank(r[t]);
  out.invalid = static_cast<double>(bad);
  out.count = static_cast<double>(n);
  if (want_m2 && n > 0) {
    // The chunk is still in cache: centre on its own (unweighted) mean.
    CompensatedSum s;
    for (size_t i = 0; i < n; ++i) s.add(r[i]);
    const double mean = s.value() / static_cast<double>(n);
    LaneSum m2;
    size_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      for (int l = 0; l < kLanes; ++l) {
        const double d = r[i + l] - mean;
        m2.add(l, d * d);
      }
    }
    for (; i < n; ++i) m2.add(0, (r[i] - mean) * (r[i] - mean));
    out.mean = mean;
    out.m2 = m2.total().value();
  }
}

// ---- Unweighted ranks: chunk kernels (rank_sums.h) and medians by radix selection ------------------------------

// Chunks are processed in blocks; each block owns a coarse histogram (when a median is asked for). Block and chunk
// boundaries are fixed by n alone, so results do not depend on the thread count.
constexpr size_t kChunksPerBlock = 32;

// Smallest value of rank bucket k (rank_key() in rank_sums.h: the top 16 bits of the value, from the bucket of 1.0).
// Non-negative doubles are ordered as their bit patterns, so the buckets are ordered like their values.
inline double bucket_start(size_t k) { return bits_to_double(static_cast<uint64_t>(k + kRankKeyBase) << 48); }

// A strict weak order of all doubles: the usual one, NaN after everything (std::sort and std::nth_element may read
// outside the range when the order is not strict weak, as `<` is not with NaN).
inline bool before(double a, double b) { return a < b || (b != b && a == a); }

// The j-th and (j + 1)-th smallest of `values` (the second only when both are asked for): the two middle values of
// a median, once the values around them are all that is left. Sets both to NaN when `values` is too short, which
// happens only when the ranks changed between the passes that counted and copied them (memory another thread
// writes: the result is then meaningless, but nothing is read out of bounds).
void two_smallest_from(std::vector<double>& values, size_t j, bool both, double* lo, double* hi) {
  if (j >= values.size() || (both && j + 1 >= values.size())) {
    *lo = *hi = std::numeric_limits<double>::quiet_NaN();
    return;
  }
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(j), values.end(), before);
  *lo = values[j];
  *hi = both ? *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(j) + 1, values.end(), before) : *lo;
}

// The k_lo-th and k_hi-th smallest ranks (0-based, k_hi = k_lo or k_lo + 1), given the per-block histograms of their
// keys and the merged counts. When both lie in one bucket that can hold only one value (`single(bucket, &v)` says
// so), that value is the answer; otherwise the ranks in the buckets between are copied out (each block at the offset
// its histogram gives it) and selected there.
template <typename SingleFn>
void select_ranks(const double* r, size_t n, size_t blocks, size_t block_len, const std::vector<uint32_t>& hist,
                  const std::vector<uint64_t>& total, size_t k_lo, size_t k_hi, SingleFn single, unsigned threads,
                  double* lo_out, double* hi_out) {
  uint64_t cum = 0, below = 0;
  size_t b_lo = kRankBuckets, b_hi = kRankBuckets;
  for (size_t k = 0; k < kRankBuckets && b_hi == kRankBuckets; ++k) {
    if (b_lo == kRankBuckets && cum + total[k] > k_lo) {
      b_lo = k;
      below = cum;
    }
    if (cum + total[k] > k_hi) b_hi = k;
    cum += total[k];
  }
  double value_single = 0;
  if (b_lo == b_hi && single(b_lo, &value_single)) {
    *lo_out = *hi_out = value_single;
    return;
  }
  std::vector<size_t> offset(blocks + 1, 0);
  for (size_t b = 0; b < blocks; ++b) {
    const uint32_t* h = hist.data() + b * kRankBuckets;
    size_t in = 0;
    for (size_t k = b_lo; k <= b_hi; ++k) in += h[k];
    offset[b + 1] = offset[b] + in;
  }
  // Kept values are those whose bit patterns lie in [first, first + span]: one subtraction and compare per value.
  const uint64_t first = static_cast<uint64_t>(b_lo + kRankKeyBase) << 48;
  const uint64_t span = ((static_cast<uint64_t>(b_hi + kRankKeyBase) + 1) << 48) - 1 - first;
  std::vector<double> picked(offset[blocks]);
  double* const dst0 = picked.data();
  const size_t* const offs = offset.data();
  parallel_for(blocks, threads, [=](size_t b) {
    const size_t begin = b * block_len, end = std::min(n, begin + block_len);
    double* dst = dst0 + offs[b];
    double* const dst_end = dst0 + offs[b + 1];
    for (size_t i = begin; i < end; ++i) {
      const double v = r[i];
      // Rarely taken: only values in the median's buckets. The block's slot holds what its histogram counted; more
      // can come only if the ranks changed since (another thread writing them): never write past the slot.
      if (rank_bits(v) - first <= span && dst != dst_end) *dst++ = v;
    }
  });
  two_smallest_from(picked, static_cast<size_t>(k_lo - below), k_hi != k_lo, lo_out, hi_out);
}

// Unweighted ranks: one pass of the chunk kernel over every rank (sums, product, counts, hits, centred squares and,
// when a median is asked for, the coarse histogram), then the median and MAD by radix selection: a second pass
// copies out the few values in the median's buckets (none when the bucket holds a single half-integer), and the MAD
// takes one more pass, over a bracket of deviations the same histogram gives.
void aggregate_unweighted(const double* r, size_t n, const double* ks, size_t num_k, const AggregateRequest& request,
                          double* out, unsigned threads) {
  const size_t chunks = (n + kAggregateChunk - 1) / kAggregateChunk;
  const size_t blocks = (chunks + kChunksPerBlock - 1) / kChunksPerBlock;
  const size_t block_len = kChunksPerBlock * kAggregateChunk;
  const bool medians = request.median || request.mad;
  const RankChunkSumsFn sums = dispatch(request.simd, KernelFamily::RankSums).rank_chunk_sums;
  std::vector<RankChunkSums> parts(chunks);
  std::vector<uint64_t> hits(chunks * num_k, 0);
  std::vector<uint32_t> hist(medians ? blocks * kRankBuckets : 0, 0);
  parallel_for(blocks, threads, [&](size_t b) {
    const size_t c1 = std::min(chunks, (b + 1) * kChunksPerBlock);
    for (size_t c = b * kChunksPerBlock; c < c1; ++c) {
      const size_t begin = c * kAggregateChunk, len = std::min(kAggregateChunk, n - begin);
      sums(r + begin, len, ks, num_k, hits.data() + c * num_k, medians ? hist.data() + b * kRankBuckets : nullptr,
           request.variance, &parts[c]);
    }
  });
  CompensatedSum wr, winv, m2;
  uint64_t invalid = 0, not_half = 0;
  int64_t exponent = 0;
  double mantissa = 1.0;
  double count = 0, mean = 0;
  std::vector<uint64_t> hit_total(num_k, 0);
  for (size_t c = 0; c < chunks; ++c) {
    const RankChunkSums& p = parts[c];
    for (int l = 0; l < kSumLanes; ++l) {
      wr.add(p.s[l]);
      wr.add(-p.c[l]);
      winv.add(p.si[l]);
      winv.add(-p.ci[l]);
      int e = 0;
      mantissa = std::frexp(mantissa * p.m[l], &e);
      exponent += e;
    }
    exponent += p.e;
    invalid += p.invalid;
    not_half += p.not_half;
    for (size_t j = 0; j < num_k; ++j) hit_total[j] += hits[c * num_k + j];
    if (request.variance) {
      // Chan et al.: merge (count, mean, M2) of the chunk into the running totals.
      const double len = static_cast<double>(std::min(kAggregateChunk, n - c * kAggregateChunk));
      CompensatedSum q;
      for (int l = 0; l < kSumLanes; ++l) {
        q.add(p.m2[l]);
        q.add(-p.m2c[l]);
      }
      const double total = count + len;
      const double delta = p.mean - mean;
      m2.merge(q);
      m2.add(delta * delta * (count * len / total));
      mean += delta * (len / total);
      count = total;
    }
  }
  out[kSumWeights] = static_cast<double>(n);
  out[kSumRanks] = wr.value();
  out[kSumLogRanks] = n > 0 ? std::log(mantissa) + static_cast<double>(exponent) * 0.69314718055994530942 : 0.0;
  out[kSumInverseRanks] = winv.value();
  out[kSumSquaredDev] = request.variance ? m2.value() : 0.0;
  out[kMedian] = std::numeric_limits<double>::quiet_NaN();
  out[kMad] = std::numeric_limits<double>::quiet_NaN();
  out[kInvalidRanks] = static_cast<double>(invalid);
  for (size_t j = 0; j < num_k; ++j) out[kAggregateFixedSlots + j] = static_cast<double>(hit_total[j]);
  if (invalid > 0 || !medians || n == 0) return;

  // The blocks' histograms merged once, for the median and the MAD.
  std::vector<uint64_t> total(kRankBuckets, 0);
  for (size_t b = 0; b < blocks; ++b) {
    const uint32_t* h = hist.data() + b * kRankBuckets;
    for (size_t k = 0; k < kRankBuckets; ++k) total[k] += h[k];
  }
  const size_t k_lo = (n - 1) / 2, k_hi = n / 2;
  // With half-integer ranks, a bucket no wider than 1/2 holds one possible value: the half-integer in it.
  const bool half = not_half == 0;
  const auto rank_single = [&](size_t k, double* v) {
    const double lo = bucket_start(k), width = bucket_start(k + 1) - lo;
    if (!half || width > 0.5) return false;
    *v = std::ceil(2 * lo) / 2;
    return true;
  };
  double lower = 0, upper = 0;
  select_ranks(r, n, blocks, block_len, hist, total, k_lo, k_hi, rank_single, threads, &lower, &upper);
  const double med = lower + (upper - lower) / 2;
  out[kMedian] = med;
  if (!request.mad) return;
  // The MAD without a histogram of deviations: the rank histogram bounds F(d) = #{|r - med| <= d} from below (buckets
  // wholly inside [med - d, med + d]) and above (buckets touching it), with a few ulps of slack for the rounding of
  // |r - med|. d1 = a distance with F(d1) <= k_lo for sure, d2 = one with F(d2) >= k_hi + 1 for sure; one pass counts
  // deviations <= d1 and copies those in (d1, d2], where the two middle deviations must be.
  std::vector<uint64_t> prefix(kRankBuckets + 1, 0);
  for (size_t k = 0; k < kRankBuckets; ++k) prefix[k + 1] = prefix[k] + total[k];
  size_t top = kRankBuckets;  // one past the last non-empty bucket
  while (top > 0 && prefix[top] == prefix[top - 1]) --top;
  const double max_dev = std::max(med - 1.0, bucket_start(top) - med);
  // Bucket of v among the rank buckets, with values below 1 in bucket 0 and beyond the table after its end.
  const auto bucket_of = [&](double v) -> size_t {
    if (!(v >= 1.0)) return 0;
    if (v >= bucket_start(top)) return top;
    return rank_key(rank_bits(v));
  };
  const auto slack = [&](double d) { return 8 * std::numeric_limits<double>::epsilon() * (med + d); };
  const auto upper_count = [&](double d) -> uint64_t {  // >= F(d)
    const double e = slack(d);
    const size_t lo = bucket_of(med - d - e), hi = bucket_of(med + d + e);
    return prefix[std::min(hi + 1, top)] - prefix[std::min(lo, top)];
  };
  const auto lower_count = [&](double d) -> uint64_t {  // <= F(d)
    const double e = slack(d);
    const double a = med - d + e, z = med + d - e;
    if (!(a <= z)) return 0;
    size_t lo = bucket_of(a);
    if (lo < top && a > 1.0 && bucket_start(lo) < a) ++lo;  // bucket of a is partly outside
    const size_t hi = bucket_of(z);                         // the bucket of z may be partly outside: excluded
    return hi > lo ? prefix[hi] - prefix[lo] : 0;
  };
  // Bisection for the largest d1 with upper_count(d1) <= k_lo (-1 when even d = 0 is too many) and the smallest d2
  // with lower_count(d2) >= k_hi + 1 (max_dev + slack always qualifies).
  double d1 = -1.0;
  if (upper_count(0.0) <= k_lo) {
    double lo = 0.0, hi = max_dev;
    for (int it = 0; it < 80 && lo < hi; ++it) {
      const double mid = lo + (hi - lo) / 2;
      if (mid == lo || mid == hi) break;  // adjacent doubles: no further progress
      if (upper_count(mid) <= k_lo) lo = mid;
      else hi = mid;
    }
    d1 = lo;
  }
  double d2 = max_dev + slack(max_dev);
  {
    double lo = std::max(d1, 0.0), hi = d2;
    for (int it = 0; it < 80 && lo < hi; ++it) {
      const double mid = lo + (hi - lo) / 2;
      if (mid == lo || mid == hi) break;  // adjacent doubles: no further progress
      if (lower_count(mid) >= k_hi + 1) hi = mid;
      else lo = mid;
    }
    if (lower_count(hi) >= k_hi + 1) d2 = hi;
  }
  // One pass: count deviations <= d1 and keep those in (d1, d2], each block into its own list. Deviations are >= 0,
  // so their bit patterns are ordered like their values: two integer compares per rank, and the rarely taken copy
  // is the only branch.
  const uint64_t first = d1 < 0 ? 0 : rank_bits(d1) + 1;
  const uint64_t span = rank_bits(d2) - first;
  std::vector<std::vector<double>> kept(blocks);
  std::vector<uint64_t> below_count(blocks);
  std::vector<double>* const kp = kept.data();
  uint64_t* const bc = below_count.data();
  parallel_for(blocks, threads, [=](size_t b) {
    const size_t begin = b * block_len, end = std::min(n, begin + block_len);
    uint64_t nb = 0;
    std::vector<double>& out = kp[b];
    for (size_t i = begin; i < end; ++i) {
      const double d = std::fabs(r[i] - med);
      const uint64_t bits = rank_bits(d);
      nb += bits < first;
      if (bits - first <= span) out.push_back(d);
    }
    bc[b] = nb;
  });
  uint64_t below = 0;
  size_t total_kept = 0;
  for (size_t b = 0; b < blocks; ++b) {
    below += below_count[b];
    total_kept += kept[b].size();
  }
  std::vector<double> picked;
  picked.reserve(total_kept);
  for (const std::vector<double>& k : kept) picked.insert(picked.end(), k.begin(), k.end());
  // below <= k_lo unless the ranks changed since the histogram was taken (then: NaN, nothing read out of bounds).
  two_smallest_from(picked, below <= k_lo ? static_cast<size_t>(k_lo - below) : picked.size(), k_hi != k_lo, &lower,
                    &upper);
  out[kMad] = (lower + (upper - lower) / 2) / kNormalQuartile;
}

// The truncated reciprocal sum of MRR@k, sum of w_i / r_i over r_i <= k (w_i = 1 without weights): compensated per
// fixed chunk, the chunks merged in order, so the bits do not depend on the thread count.
double truncated_inverse_sum(const double* r, const double* w, size_t n, double k, unsigned threads) {
  const size_t chunks = (n + kAggregateChunk - 1) / kAggregateChunk;
  std::vector<CompensatedSum> parts(chunks);
  parallel_for(chunks, threads, [&](size_t c) {
    const size_t begin = c * kAggregateChunk, end = std::min(n, begin + kAggregateChunk);
    CompensatedSum s;
    for (size_t i = begin; i < end; ++i) s.add(r[i] <= k ? (w != nullptr ? w[i] : 1.0) / r[i] : 0.0);
    parts[c] = s;
  });
  CompensatedSum total;
  for (const CompensatedSum& p : parts) total.merge(p);
  return total.value();
}

// The truncated slots (MRR@k), after the num_k hit slots.
void truncated_inverse_slots(const double* r, const double* w, size_t n, size_t num_k, const AggregateRequest& request,
                             double* out, unsigned threads) {
  for (size_t j = 0; j < request.num_truncated; ++j) {
    out[kAggregateFixedSlots + num_k + j] = truncated_inverse_sum(r, w, n, request.truncated_ks[j], threads);
  }
}

}  // namespace

void aggregate_ranks(const double* ranks, const double* weights, size_t n, const double* ks, size_t num_k,
                     const AggregateRequest& request, double* out, unsigned threads) {
  if (weights == nullptr) {
    aggregate_unweighted(ranks, n, ks, num_k, request, out, threads);
    truncated_inverse_slots(ranks, nullptr, n, num_k, request, out, threads);
    return;
  }
  const size_t chunks = (n + kAggregateChunk - 1) / kAggregateChunk;
  std::vector<ChunkResult> parts(chunks);
  parallel_for(chunks, threads, [&](size_t c) {
    const size_t begin = c * kAggregateChunk;
    const size_t len = std::min(kAggregateChunk, n - begin);
    sum_chunk(ranks + begin, weights + begin, len, ks, num_k, request.variance, parts[c]);
  });
  CompensatedSum w, wr, wlog, winv;
  std::vector<CompensatedSum> hits(num_k);
  double count = 0, mean = 0;
  CompensatedSum m2;
  double invalid = 0;
  for (const ChunkResult& p : parts) {
    invalid += p.invalid;
    w.merge(p.w);
    wr.merge(p.wr);
    wlog.merge(p.wlog);
    winv.merge(p.winv);
    for (size_t j = 0; j < num_k; ++j) hits[j].add(p.hits[j]);
    if (request.variance && p.count > 0) {
      // Chan et al.: merge (count, mean, M2) of two parts.
      const double total = count + p.count;
      const double delta = p.mean - mean;
      m2.add(p.m2);
      m2.add(delta * delta * (count * p.count / total));
      mean += delta * (p.count / total);
      count = total;
    }
  }
  out[kSumWeights] = w.value();
  out[kSumRanks] = wr.value();
  out[kSumLogRanks] = wlog.value();
  out[kSumInverseRanks] = winv.value();
  out[kSumSquaredDev] = request.variance ? m2.value() : 0.0;
  out[kMedian] = std::numeric_limits<double>::quiet_NaN();
  out[kMad] = std::numeric_limits<double>::quiet_NaN();
  out[kInvalidRanks] = invalid;
  for (size_t j = 0; j < num_k; ++j) out[kAggregateFixedSlots + j] = hits[j].value();
  truncated_inverse_slots(ranks, weights, n, num_k, request, out, threads);
  if (invalid > 0) return;  // the caller reports the bad ranks; medians of garbage are not computed
  if ((request.median || request.mad) && n > 0) {
    out[kMedian] = median(ranks, weights, n);
    if (request.mad) out[kMad] = median_absolute_deviation(ranks, weights, n);
  }
}

double median(const double* values, const double* weights, size_t n) {
  // The values are copied before they are ordered: a sort whose keys change under it (memory another thread
  // writes) may read out of bounds, and so may one ordered by `<` over NaN (`before` puts NaN last).
  std::vector<double> v(values, values + n);
  if (weights == nullptr) {
    const size_t mid = n / 2;
    std::nth_element(v.begin(), v.begin() + mid, v.end(), before);
    const double upper = v[mid];
    if (n % 2 == 1) return upper;
    const double lower = *std::max_element(v.begin(), v.begin() + mid, before);
    return lower + (upper - lower) / 2;
  }
  values = v.data();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return before(values[a], values[b]); });
  CompensatedSum total;
  for (size_t i = 0; i < n; ++i) total.add(weights[i]);
  const double half = total.value() / 2;
  CompensatedSum cum;
  for (size_t i = 0; i < n; ++i) {
    cum.add(weights[order[i]]);
    const double c = cum.value();
    if (c >= half) {
      const double x = values[order[i]];
      // Exactly half the weight lies at or below x: the median is midway to the next task that weighs anything.
      size_t j = i + 1;
      if (c == half)
        while (j < n && weights[order[j]] == 0) ++j;
      if (c == half && j < n) {
        const double y = values[order[j]];
        return x + (y - x) / 2;
      }
      return x;
    }
  }
  return values[order[n - 1]];
}

double median_absolute_deviation(const double* values, const double* weights, size_t n) {
  const double m = median(values, weights, n);
  std::vector<double> dev(n);
  for (size_t i = 0; i < n; ++i) dev[i] = std::fabs(values[i] - m);
  return median(dev.data(), weights, n) / kNormalQuartile;
}

}  // namespace kgrank
