#include "aggregate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "compensated.h"
#include "thread_pool.h"

namespace kgrank {

namespace {

constexpr int kLanes = 4;

// 2x is an integer in [0, 2^53). A cast, not std::floor: without SSE4.1 in the baseline build, floor is a library
// call. This runs before the pass has validated the ranks, so the range test comes first: casting -Inf, NaN or a
// value below -2^63 to int64 is undefined behaviour (found by fuzz_aggregate).
inline bool is_half_integer(double x) {
  const double t = 2 * x;
  return t >= 0.0 && t < 9007199254740992.0 && t == static_cast<double>(static_cast<int64_t>(t));
}

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

// Product of doubles as mantissa * 2^exponent, renormalised before it can overflow: sum log r = log(product).
struct LogProduct {
  double mantissa[kLanes] = {1, 1, 1, 1};
  int64_t exponent = 0;
  void renormalise() {
    for (int l = 0; l < kLanes; ++l) {
      int e = 0;
      mantissa[l] = std::frexp(mantissa[l], &e);
      exponent += e;
    }
  }
  double log_value() const {
    double m = 1.0;
    int64_t e = exponent;
    for (int l = 0; l < kLanes; ++l) {
      int k = 0;
      m = std::frexp(m * mantissa[l], &k);
      e += k;
    }
    return std::log(m) + static_cast<double>(e) * 0.69314718055994530942;
  }
};

struct ChunkResult {
  CompensatedSum w, wr, wlog, winv;
  std::vector<double> hits;  // exact integer counts when unweighted, compensated otherwise
  double count = 0, mean = 0, m2 = 0;
  bool half_integers = true;
  double max_rank = 0;
  double invalid = 0;
};

void sum_chunk(const double* r, const double* w, size_t n, const double* ks, size_t num_k, bool want_m2,
               ChunkResult& out) {
  LaneSum wr, winv, wsum, wlog;
  out.hits.assign(num_k, 0.0);
  bool half = true;
  double mx = 0;
  if (w == nullptr) {
    LogProduct prod;
    size_t i = 0;
    std::vector<int64_t> hit(num_k, 0);
    // blocks of 32 ranks between renormalisations: 32 * 4 lanes... each lane sees 8 factors < 2^53 -> < 2^424
    for (; i < n;) {
      const size_t end = std::min(n, i + 32);
      for (; i + kLanes <= end; i += kLanes) {
        for (int l = 0; l < kLanes; ++l) {
          const double x = r[i + l];
          wr.add(l, x);
          winv.add(l, 1.0 / x);
          prod.mantissa[l] *= x;
          mx = std::max(mx, x);
          half &= is_half_integer(x);
        }
      }
      for (; i < end; ++i) {
        const double x = r[i];
        wr.add(0, x);
        winv.add(0, 1.0 / x);
        prod.mantissa[0] *= x;
        mx = std::max(mx, x);
        half &= is_half_integer(x);
      }
      prod.renormalise();
    }
    for (size_t j = 0; j < num_k; ++j) {
      const double k = ks[j];
      int64_t c = 0;
      for (size_t t = 0; t < n; ++t) c += r[t] <= k;
      hit[j] = c;
      out.hits[j] = static_cast<double>(c);
    }
    out.w.add(static_cast<double>(n));
    out.wlog.add(prod.log_value());
  } else {
    for (size_t i = 0; i < n; ++i) {
      const int l = static_cast<int>(i % kLanes);
      const double x = r[i];
      const double wi = w[i];
      wsum.add(l, wi);
      wr.add(l, wi * x);
      wlog.add(l, wi * std::log(x));
      winv.add(l, wi / x);
      mx = std::max(mx, x);
      half &= is_half_integer(x);
    }
    for (size_t j = 0; j < num_k; ++j) {
      CompensatedSum h;
      for (size_t t = 0; t < n; ++t) h.add(r[t] <= ks[j] ? w[t] : 0.0);
      out.hits[j] = h.value();
    }
    out.w = wsum.total();
    out.wlog = wlog.total();
  }
  out.wr = wr.total();
  out.winv = winv.total();
  size_t bad = 0;
  for (size_t t = 0; t < n; ++t) bad += invalid_rank(r[t]);
  out.invalid = static_cast<double>(bad);
  out.half_integers = half;
  out.max_rank = mx;
  out.count = static_cast<double>(n);
  if (want_m2 && n > 0) {
    // The chunk is still in cache: centre on its own (unweighted) mean, from the compensated sum of this pass.
    double mean;
    if (w == nullptr) {
      mean = out.wr.value() / static_cast<double>(n);
    } else {
      CompensatedSum s;
      for (size_t i = 0; i < n; ++i) s.add(r[i]);
      mean = s.value() / static_cast<double>(n);
    }
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

// Counting histogram of 2 r over half-integer ranks r <= max_rank: counts[v] = #{i : 2 r_i = v}.
std::vector<uint32_t> doubled_histogram(const double* r, size_t n, double max_rank, unsigned threads) {
  const size_t size = static_cast<size_t>(2 * max_rank) + 1;
  const size_t parts = 2;  // fixed split; counts are integers, so the merge is exact whatever the threads
  std::vector<std::vector<uint32_t>> partial(parts);
  parallel_for(parts, threads, [&](size_t p) {
    std::vector<uint32_t>& c = partial[p];
    c.assign(size, 0);
    const size_t begin = n * p / parts, end = n * (p + 1) / parts;
    for (size_t i = begin; i < end; ++i) ++c[static_cast<size_t>(2 * r[i])];
  });
  std::vector<uint32_t>& counts = partial[0];
  for (size_t p = 1; p < parts; ++p) {
    for (size_t v = 0; v < size; ++v) counts[v] += partial[p][v];
  }
  return std::move(partial[0]);
}

// Median and MAD of n half-integer ranks from their doubled histogram.
void median_from_histogram(const std::vector<uint32_t>& counts, size_t n, bool want_mad, double* med, double* mad) {
  const size_t size = counts.size();
  // k-th smallest (0-based) of the values 2r.
  auto kth = [&](size_t k) {
    size_t cum = 0;
    for (size_t v = 0; v < size; ++v) {
      cum += counts[v];
      if (cum > k) return v;
    }
    return size - 1;
  };
  const size_t mid = n / 2;
  const size_t upper = kth(mid);
  const size_t lower = n % 2 ? upper : kth(mid - 1);
  const double m = (static_cast<double>(lower) + static_cast<double>(upper)) / 4;  // mean of halves, exact
  *med = m;
  if (!want_mad) return;
  // Distances |4r - 4m| (integers: r and m are half-integers or quarter-integers) in increasing order by walking
  // outward from m over the histogram of 2r, merging the two sides; no second histogram is built.
  const int64_t c4 = static_cast<int64_t>(4 * m);
  const int64_t top = static_cast<int64_t>(size);
  int64_t left = std::min<int64_t>(c4 / 2, top - 1), right = left + 1;  // left: largest v with 2v <= 4m
  const size_t k_lo = n % 2 ? mid : mid - 1;
  constexpr int64_t kFar = INT64_MAX;
  size_t cum = 0, dl = 0, du = 0;
  bool have_lo = false;
  while (left >= 0 || right < top) {
    const int64_t dist_left = left >= 0 ? c4 - 2 * left : kFar;
    const int64_t dist_right = right < top ? 2 * right - c4 : kFar;
    int64_t d;
    size_t c;
    if (dist_left <= dist_right) {
      d = dist_left;
      c = counts[static_cast<size_t>(left--)];
    } else {
      d = dist_right;
      c = counts[static_cast<size_t>(right++)];
    }
    if (c == 0) continue;
    if (!have_lo && cum + c > k_lo) {
      dl = static_cast<size_t>(d);
      have_lo = true;
    }
    if (cum + c > mid) {
      du = static_cast<size_t>(d);
      break;
    }
    cum += c;
  }
  *mad = ((static_cast<double>(dl) + static_cast<double>(du)) / 8) / kNormalQuartile;
}

// Unweighted ranks with a median asked for, when they are half-integers with 2 max <= 4 n: every statistic from the
// doubled histogram the median needs anyway (one validation pass and one counting pass over the ranks, then
// O(max rank) work over the bins), instead of the per-rank fused pass plus the histogram. Returns false (nothing
// written) when the ranks do not qualify; the caller then takes the general path.
bool histogram_aggregate(const double* r, size_t n, const double* ks, size_t num_k, const AggregateRequest& request,
                         double* out, unsigned threads) {
  const size_t chunks = (n + kAggregateChunk - 1) / kAggregateChunk;
  std::vector<double> maxima(chunks);
  std::vector<unsigned char> ok(chunks);
  parallel_for(chunks, threads, [&](size_t c) {
    const size_t begin = c * kAggregateChunk, end = std::min(n, begin + kAggregateChunk);
    double mx = 0;
    bool good = true;
    for (size_t i = begin; i < end; ++i) {
      const double x = r[i];
      good &= !invalid_rank(x) && is_half_integer(x);
      mx = std::max(mx, x);
    }
    maxima[c] = mx;
    ok[c] = good;
  });
  double mx = 0;
  for (size_t c = 0; c < chunks; ++c) {
    if (!ok[c]) return false;
    mx = std::max(mx, maxima[c]);
  }
  if (2 * mx > 4.0 * static_cast<double>(n)) return false;
  const std::vector<uint32_t> counts = doubled_histogram(r, n, mx, threads);
  const size_t size = counts.size();
  // Sums over the bins in fixed blocks, merged in order: the same bits on any thread count.
  constexpr size_t kBinBlock = size_t{1} << 16;
  const size_t blocks = (size + kBinBlock - 1) / kBinBlock;
  struct Part {
    CompensatedSum sr, sinv, slog;
    std::vector<double> hits;
  };
  std::vector<Part> parts(blocks);
  parallel_for(blocks, threads, [&](size_t b) {
    Part& p = parts[b];
    p.hits.assign(num_k, 0.0);
    const size_t end = std::min(size, (b + 1) * kBinBlock);
    for (size_t v = b * kBinBlock; v < end; ++v) {
      const uint32_t c = counts[v];
      if (c == 0) continue;
      const double x = static_cast<double>(v) / 2, w = static_cast<double>(c);
      p.sr.add(w * x);
      p.sinv.add(w / x);
      p.slog.add(w * std::log(x));
      for (size_t j = 0; j < num_k; ++j) p.hits[j] += x <= ks[j] ? w : 0.0;  // integers: exact
    }
  });
  CompensatedSum sr, sinv, slog;
  std::vector<double> hits(num_k, 0.0);
  for (const Part& p : parts) {
    sr.merge(p.sr);
    sinv.merge(p.sinv);
    slog.merge(p.slog);
    for (size_t j = 0; j < num_k; ++j) hits[j] += p.hits[j];
  }
  const double count = static_cast<double>(n);
  out[kSumWeights] = count;
  out[kSumRanks] = sr.value();
  out[kSumLogRanks] = slog.value();
  out[kSumInverseRanks] = sinv.value();
  out[kSumSquaredDev] = 0.0;
  if (request.variance) {
    const double mean = sr.value() / count;
    std::vector<CompensatedSum> dev(blocks);
    parallel_for(blocks, threads, [&](size_t b) {
      const size_t end = std::min(size, (b + 1) * kBinBlock);
      CompensatedSum d;
      for (size_t v = b * kBinBlock; v < end; ++v) {
        if (counts[v] == 0) continue;
        const double e = static_cast<double>(v) / 2 - mean;
        d.add(static_cast<double>(counts[v]) * (e * e));
      }
      dev[b] = d;
    });
    CompensatedSum m2;
    for (const CompensatedSum& d : dev) m2.merge(d);
    out[kSumSquaredDev] = m2.value();
  }
  out[kInvalidRanks] = 0;
  out[kMedian] = std::numeric_limits<double>::quiet_NaN();
  out[kMad] = std::numeric_limits<double>::quiet_NaN();
  for (size_t j = 0; j < num_k; ++j) out[kAggregateFixedSlots + j] = hits[j];
  median_from_histogram(counts, n, request.mad, &out[kMedian], &out[kMad]);
  return true;
}

}  // namespace

void aggregate_ranks(const double* ranks, const double* weights, size_t n, const double* ks, size_t num_k,
                     const AggregateRequest& request, double* out, unsigned threads) {
  if (weights == nullptr && (request.median || request.mad) && n >= (size_t{1} << 16) &&
      histogram_aggregate(ranks, n, ks, num_k, request, out, threads)) {
    return;
  }
  const size_t chunks = (n + kAggregateChunk - 1) / kAggregateChunk;
  std::vector<ChunkResult> parts(chunks);
  parallel_for(chunks, threads, [&](size_t c) {
    const size_t begin = c * kAggregateChunk;
    const size_t len = std::min(kAggregateChunk, n - begin);
    sum_chunk(ranks + begin, weights ? weights + begin : nullptr, len, ks, num_k, request.variance, parts[c]);
  });
  CompensatedSum w, wr, wlog, winv;
  std::vector<CompensatedSum> hits(num_k);
  double count = 0, mean = 0;
  CompensatedSum m2;
  bool half = true;
  double mx = 0;
  double invalid = 0;
  for (const ChunkResult& p : parts) {
    invalid += p.invalid;
    w.merge(p.w);
    wr.merge(p.wr);
    wlog.merge(p.wlog);
    winv.merge(p.winv);
    for (size_t j = 0; j < num_k; ++j) hits[j].add(p.hits[j]);
    half &= p.half_integers;
    mx = std::max(mx, p.max_rank);
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
  if (invalid > 0) return;  // the caller reports the bad ranks; medians of garbage are not computed
  if ((request.median || request.mad) && n > 0) {
    if (weights == nullptr && half && 2 * mx <= static_cast<double>(std::max<size_t>(4 * n, size_t{1} << 22))) {
      median_from_histogram(doubled_histogram(ranks, n, mx, threads), n, request.mad, &out[kMedian], &out[kMad]);
    } else {
      out[kMedian] = median(ranks, weights, n);
      if (request.mad) out[kMad] = median_absolute_deviation(ranks, weights, n);
    }
  }
}

double median(const double* values, const double* weights, size_t n) {
  if (weights == nullptr) {
    std::vector<double> v(values, values + n);
    const size_t mid = n / 2;
    std::nth_element(v.begin(), v.begin() + mid, v.end());
    const double upper = v[mid];
    if (n % 2 == 1) return upper;
    const double lower = *std::max_element(v.begin(), v.begin() + mid);
    return lower + (upper - lower) / 2;
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  CompensatedSum total;
  for (size_t i = 0; i < n; ++i) total.add(weights[i]);
  const double half = total.value() / 2;
  CompensatedSum cum;
  for (size_t i = 0; i < n; ++i) {
    cum.add(weights[order[i]]);
    const double c = cum.value();
    if (c >= half) {
      const double x = values[order[i]];
      if (c == half && i + 1 < n) {
        const double y = values[order[i + 1]];
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
