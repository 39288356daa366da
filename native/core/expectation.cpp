// Closed-form E and Var of MR, MRR, Hits and GMR from candidate-count histograms. Fallback twin:
// src/fallback/expectation.ts.

#include "expectation.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "compensated.h"
#include "harmonic.h"
#include "power_sums.h"
#include "thread_pool.h"

namespace kgrank {

namespace {

// Dense counting when max N is not much larger than the task count; otherwise a sort.
constexpr double kDenseLimit = 1 << 26;
// Below this many tasks the sort is cheaper than the dense path's fixed costs (its part counters, 16 parts on the
// pool, a counter block per bucket): measured: BENCHMARKS.md, "Notes moved from the kernel sources", expectation.cpp
// KGRANK_HISTOGRAM_SORT_BELOW. Both give the same histogram.
#ifndef KGRANK_HISTOGRAM_SORT_BELOW
#define KGRANK_HISTOGRAM_SORT_BELOW 2048
#endif
constexpr size_t kSortBelow = KGRANK_HISTOGRAM_SORT_BELOW;

// The dense path's scatter buffer: per thread, kept between calls.
std::vector<uint32_t>& scattered_values() {
  thread_local std::vector<uint32_t> scattered;
  return scattered;
}

}  // namespace

CandidateHistogram candidate_histogram(const double* num_candidates, const double* weights, size_t count,
                                       unsigned threads) {
  CandidateHistogram h;
  // Unweighted: dense counting, cache-sized. Values are scattered into buckets of kBucketWidth consecutive values
  // (sequential writes), then each bucket is counted in a counter block that stays in L2, so no increment misses
  // the cache. The input is cut into fixed parts: each part's bucket sizes and maximum come from one parallel pass,
  // and each part scatters its values into its own slice of every bucket (bucket-major, part-minor: the layout, and
  // so the result, does not depend on the thread count). Scratch buffers are per thread and kept.
  constexpr unsigned kBucketShift = 17;
  constexpr size_t kBucketWidth = size_t{1} << kBucketShift;
  constexpr size_t kMaxBuckets = (static_cast<size_t>(kDenseLimit) >> kBucketShift) + 1;
  constexpr size_t kParts = 16;
  bool dense = weights == nullptr && count >= kSortBelow && count > 0;
  double max_n = 0;
  std::vector<size_t> sizes;  // [part][bucket]
  if (dense) {
    sizes.assign(kParts * kMaxBuckets, 0);
    std::vector<double> part_max(kParts, 0.0);
    std::vector<unsigned char> part_ok(kParts, 1);
    parallel_for(kParts, threads, [&](size_t p) {
      const size_t begin = count * p / kParts, end = count * (p + 1) / kParts;
      size_t* c = sizes.data() + p * kMaxBuckets;
      double mx = 0;
      bool ok = true;
      for (size_t i = begin; i < end; ++i) {
        const double v = num_candidates[i];
        // Only integers in [1, kDenseLimit] are counted densely; anything else sends the input to the sort below
        // (and is counted as kDenseLimit meanwhile, so the counting stays in bounds). The range test comes first:
        // casting NaN or a huge value to an integer is undefined.
        const bool range = v >= 1.0 && v <= kDenseLimit;
        const int64_t iv = static_cast<int64_t>(range ? v : kDenseLimit);
        const bool in = range && static_cast<double>(iv) == v;
        ok &= in;
        const int64_t u = in ? iv : static_cast<int64_t>(kDenseLimit);
        mx = std::max(mx, static_cast<double>(u));
        ++c[static_cast<uint64_t>(u) >> kBucketShift];
      }
      part_max[p] = mx;
      part_ok[p] = ok;
    });
    for (size_t p = 0; p < kParts; ++p) {
      max_n = std::max(max_n, part_max[p]);
      dense = dense && part_ok[p];
    }
    dense = dense && max_n <= 8.0 * static_cast<double>(count) + 4096.0;
  }
  std::vector<size_t> start;
  if (dense) {
    const size_t buckets = (static_cast<size_t>(max_n) >> kBucketShift) + 1;
    std::vector<uint32_t>& scattered = scattered_values();
    if (scattered.size() < count) scattered.resize(count);
    start.assign(buckets + 1, 0);
    std::vector<size_t> part_start(kParts * buckets);
    {
      size_t at = 0;
      for (size_t b = 0; b < buckets; ++b) {
        start[b] = at;
        for (size_t p = 0; p < kParts; ++p) {
          part_start[p * buckets + b] = at;
          at += sizes[p * kMaxBuckets + b];
        }
      }
      start[buckets] = at;
    }
    uint32_t* const out = scattered.data();
    // Each part's slice of each bucket ends where the next begins; the values are read a second time here, so each
    // is checked again as it is read: values that changed since the first pass (memory another thread writes) would
    // otherwise be cast out of range or overflow a slice. Then the sort below, over a copy, takes over.
    std::vector<size_t> part_end(kParts * buckets);
    for (size_t p = 0; p < kParts; ++p) {
      for (size_t b = 0; b < buckets; ++b)
        part_end[p * buckets + b] = part_start[p * buckets + b] + sizes[p * kMaxBuckets + b];
    }
    std::vector<unsigned char> part_changed(kParts, 0);
    parallel_for(kParts, threads, [&](size_t p) {
      const size_t begin = count * p / kParts, end = count * (p + 1) / kParts;
      size_t* fill = part_start.data() + p * buckets;
      const size_t* fill_end = part_end.data() + p * buckets;
      for (size_t i = begin; i < end; ++i) {
        const double d = num_candidates[i];
        if (!(d >= 1.0 && d <= max_n) || static_cast<double>(static_cast<int64_t>(d)) != d) {
          part_changed[p] = 1;
          return;
        }
        const uint32_t v = static_cast<uint32_t>(static_cast<int64_t>(d));
        const size_t b = v >> kBucketShift;
        if (fill[b] == fill_end[b]) {
          part_changed[p] = 1;
          return;
        }
        out[fill[b]++] = v;
      }
    });
    for (unsigned char changed : part_changed) dense = dense && changed == 0;
  }
  if (dense) {
    const size_t buckets = (static_cast<size_t>(max_n) >> kBucketShift) + 1;
    const std::vector<uint32_t>& scattered = scattered_values();
    // Buckets in parallel, twice: first the number of distinct values of each (offsets), then the bins written at
    // those offsets. Counting a bucket is cheap (its counters stay in L2), so counting it twice costs less than
    // writing the bins once more through a buffer.
    std::vector<size_t> distinct(buckets, 0);
    const uint32_t* sc = scattered.data();
    auto count_bucket = [&](size_t b, uint32_t* c) {
      const uint32_t base = static_cast<uint32_t>(b << kBucketShift);
      for (size_t i = start[b]; i < start[b + 1]; ++i) ++c[sc[i] - base];
    };
    // Values of bucket b lie in [base, base + width(b)): the last bucket ends at max N, so its counters are scanned
    // only that far (a histogram of N <= 15,000 scanned all 131,072 counters twice).
    const size_t top = static_cast<size_t>(max_n);
    auto width = [&](size_t b) { return std::min(kBucketWidth, top + 1 - (b << kBucketShift)); };
    parallel_for(buckets, threads, [&](size_t b) {
      thread_local std::vector<uint32_t> local(kBucketWidth);
      uint32_t* c = local.data();
      count_bucket(b, c);
      size_t d = 0;
      const size_t w = width(b);
      for (size_t v = 0; v < w; ++v) {
        d += c[v] != 0;
        c[v] = 0;
      }
      distinct[b] = d;
    });
    std::vector<size_t> offset(buckets + 1, 0);
    for (size_t b = 0; b < buckets; ++b) offset[b + 1] = offset[b] + distinct[b];
    h.n.resize(offset[buckets]);
    h.w1.resize(offset[buckets]);
    parallel_for(buckets, threads, [&](size_t b) {
      thread_local std::vector<uint32_t> local(kBucketWidth);
      uint32_t* c = local.data();
      count_bucket(b, c);
      const uint32_t base = static_cast<uint32_t>(b << kBucketShift);
      // Without a branch per counter (zero counters fall at unpredictable places): every counter is written at `at`,
      // which moves on past the non-zero ones only. The loop ends with the bucket's last distinct value, so it
      // writes inside the bucket's own bins [offset[b], offset[b + 1]); the counters after that one are zero.
      double* const hn = h.n.data();
      double* const hw = h.w1.data();
      size_t at = offset[b];
      const size_t end = offset[b + 1];
      for (size_t v = 0; at < end; ++v) {
        const uint32_t cv = c[v];
        hn[at] = static_cast<double>(base + v);
        hw[at] = cv;
        at += cv != 0;
        c[v] = 0;
      }
    });
    // h.w2 stays empty: unweighted, the squared-weight sums are the counts (w1).
    h.total_weight = static_cast<double>(count);
    return h;
  }
  if (count == 0) return h;
  if (weights == nullptr) {
    // Unweighted: the sorted copy's runs are the bins; w1 = run lengths (exact), w2 left empty (= w1).
    std::vector<double> v(num_candidates, num_candidates + count);
    std::sort(v.begin(), v.end(), [](double a, double b) { return a < b || (b != b && a == a); });
    for (size_t i = 0; i < count;) {
      size_t j = i + 1;
      while (j < count && v[j] == v[i]) ++j;
      h.n.push_back(v[i]);
      h.w1.push_back(static_cast<double>(j - i));
      i = j;
    }
    h.total_weight = static_cast<double>(count);
    return h;
  }
  std::vector<std::pair<double, double>> pairs(count);
  for (size_t i = 0; i < count; ++i) pairs[i] = {num_candidates[i], weights ? weights[i] : 1.0};
  // Sorted as copied, in a strict weak order even with NaN (last): `<` alone is not one, and std::sort may then
  // read out of bounds (validated input has no NaN; a second line).
  std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) {
    return a.first < b.first || (b.first != b.first && a.first == a.first);
  });
  CompensatedSum total;
  for (size_t i = 0; i < count;) {
    CompensatedSum s1, s2;
    size_t j = i;
    for (; j < count && pairs[j].first == pairs[i].first; ++j) {
      s1.add(pairs[j].second);
      s2.add(pairs[j].second * pairs[j].second);
    }
    h.n.push_back(pairs[i].first);
    h.w1.push_back(s1.value());
    if (weights != nullptr) h.w2.push_back(s2.value());  // unweighted: w2 = w1, left empty as by the dense path
    total.merge(s1);
    i = j;
  }
  h.total_weight = total.value();
  return h;
}

namespace {

// ---- one routine per formula --------------------------------------------------------------------------------------

// Per-task moments of the additive closed forms for r ~ Uniform{1..n}.
Moments arithmetic_moments(double n) { return {(n + 1) / 2, (n - 1) * (n + 1) / 12}; }

// From h = harmonic_means(n).
Moments inverse_harmonic_moments(const HarmonicPair& h) {
  // Var[1/r] = H_2(n)/n - (H_1(n)/n)^2; for n = 1 both terms are 1 and the difference is exactly 0.
  return {h.h1_over_n, std::max(0.0, h.h2_over_n - h.h1_over_n * h.h1_over_n)};
}

Moments hits_moments(double n, double k) {
  const double hit = std::min(k, n);
  const double p = hit / n;
  return {p, p * ((n - hit) / n)};
}

// MRR@k, one task: X = 1/r for r <= k, else 0, r uniform on 1..n; with m = min(floor(k), n), E[X] = H_1(m)/n and
// E[X^2] = H_2(m)/n. For n = 1 both are 1 and the variance is exactly 0.
Moments truncated_inverse_moments(double n, double k) {
  const double m = std::min(std::floor(k), n);
  const double mean = harmonic1(m) / n;
  return {mean, std::max(0.0, harmonic2(m) / n - mean * mean)};
}

// Geometric mean, one bin: adds m log E[r^a] and m log1p(Var[r^a] / E[r^a]^2) from the centred power sums at n.
void add_geometric_logs(double n, double m, PowerSums s, CompensatedSum& log_mean, CompensatedSum& log_ratio) {
  const double inv = 1 / n;
  const double mean_e = s.s1 * inv;                                // E[r^a] - 1
  const double var = std::max(0.0, s.s2 * inv - mean_e * mean_e);  // Var[r^a] = Var[r^a - 1]
  const double mu = 1.0 + mean_e;
  log_mean.add(m * log1p_small(mean_e));
  log_ratio.add(m * log1p_small(var / (mu * mu)));
}

// ---- the one parallel combine ---------------------------------------------------------------------------------
// Fixed blocks of kBinBlock bins, in parallel, each with its own compensated sums, merged in block order: the
// result does not depend on the thread count.
constexpr size_t kBinBlock = 4096;

struct SumPair {
  CompensatedSum a, b;
};

// Adds bin(i, pair) for bins [begin, end) into `into`, block by block.
template <class Bin>
void blocked_sum(size_t begin, size_t end, unsigned threads, SumPair& into, Bin bin) {
  const size_t blocks = (end - begin + kBinBlock - 1) / kBinBlock;
  std::vector<SumPair> partial(blocks);
  parallel_for(blocks, threads, [&](size_t c) {
    const size_t from = begin + c * kBinBlock, to = std::min(end, from + kBinBlock);
    SumPair local;  // local: no false sharing between threads
    for (size_t i = from; i < to; ++i) bin(i, local);
    partial[c] = local;
  });
  for (size_t c = 0; c < blocks; ++c) {
    into.a.merge(partial[c].a);
    into.b.merge(partial[c].b);
  }
}

// blocked_sum whose blocks first run prepare(from, to, scratch) (the library calls of the block, e.g. its logs, into
// a per-thread scratch of kBinBlock values of type T), then bin(i, scratch[i - from], pair): the per-bin arithmetic
// and the sums then run without a call that would spill them to memory. Same blocks, same order, same bits.
template <class T, class Prepare, class Bin>
void blocked_sum_prepared(size_t begin, size_t end, unsigned threads, SumPair& into, Prepare prepare, Bin bin) {
  const size_t blocks = (end - begin + kBinBlock - 1) / kBinBlock;
  std::vector<SumPair> partial(blocks);
  parallel_for(blocks, threads, [&](size_t c) {
    thread_local std::vector<T> scratch(kBinBlock);
    const size_t from = begin + c * kBinBlock, to = std::min(end, from + kBinBlock);
    T* const prepared = scratch.data();
    prepare(from, to, prepared);
    SumPair local;
    for (size_t i = from; i < to; ++i) bin(i, prepared[i - from], local);
    partial[c] = local;
  });
  for (size_t c = 0; c < blocks; ++c) {
    into.a.merge(partial[c].a);
    into.b.merge(partial[c].b);
  }
}

// sum_b w1_b E_b / W and sum_b w2_b V_b / W^2 with per-bin moments fn(n) -> (E, V).
template <class Fn>
Moments combine(const double* n, const double* w1, const double* w2, size_t bins, double total, unsigned threads,
                Fn fn) {
  SumPair sums;
  blocked_sum(0, bins, threads, sums, [&](size_t i, SumPair& s) {
    const Moments m = fn(n[i]);
    s.a.add(w1[i] * m.expectation);
    s.b.add(w2[i] * m.variance);
  });
  return {sums.a.value() / total, sums.b.value() / (total * total)};
}

// Adds the geometric-mean log terms of one exponent a over sorted distinct n with multiplicities: bins inside the
// sweep limit serially as the sweep reaches them, the rest (one tail evaluation each) in fixed blocks.
void geometric_logs(double a, const double* n, const double* mult, size_t bins, unsigned threads, SumPair& logs) {
  const PowerSweep sweep =
      power_sweep(a, n, bins, [&](size_t i, PowerSums s) { add_geometric_logs(n[i], mult[i], s, logs.a, logs.b); });
  blocked_sum_prepared<double>(
      sweep.first, bins, threads, logs,
      [&](size_t from, size_t to, double* log_n) {
        for (size_t i = from; i < to; ++i) log_n[i - from] = std::log(n[i]);
      },
      [&](size_t i, double log_n, SumPair& s) {
        add_geometric_logs(n[i], mult[i], sweep.at_log(n[i], log_n), s.a, s.b);
      });
}

Moments geometric_finish(const SumPair& logs) {
  const double mean = std::exp(logs.a.value());
  return {mean, mean * mean * std::expm1(logs.b.value())};
}

// Weighted geometric mean: exponents a_i = w_i / W, tasks grouped by (a, n), one sweep per distinct exponent.
Moments weighted_geometric_moments(const double* num_candidates, const double* weights, size_t count,
                                   unsigned threads) {
  CompensatedSum total;
  for (size_t i = 0; i < count; ++i) total.add(weights[i]);
  const double w = total.value();
  std::vector<std::pair<double, double>> pairs(count);
  for (size_t i = 0; i < count; ++i) pairs[i] = {weights[i] / w, num_candidates[i]};
  std::sort(pairs.begin(), pairs.end());
  std::vector<double> n, mult;
  SumPair logs;
  for (size_t i = 0; i < count;) {
    // One exponent: its distinct n with multiplicities.
    n.clear();
    mult.clear();
    size_t j = i;
    while (j < count && pairs[j].first == pairs[i].first) {
      size_t e = j;
      while (e < count && pairs[e] == pairs[j]) ++e;
      n.push_back(pairs[j].second);
      mult.push_back(static_cast<double>(e - j));
      j = e;
    }
    geometric_logs(pairs[i].first, n.data(), mult.data(), n.size(), threads, logs);
    i = j;
  }
  return geometric_finish(logs);
}

}  // namespace

Moments histogram_moments(ClosedMetric metric, const double* n, const double* w1, const double* w2, size_t bins,
                          double total_weight, double count, double k, unsigned threads) {
  switch (metric) {
    case ClosedMetric::ArithmeticMean: return combine(n, w1, w2, bins, total_weight, threads, arithmetic_moments);
    case ClosedMetric::InverseHarmonicMean: {
      // combine(..., inverse_harmonic_moments) with the harmonic numbers of a block taken first.
      SumPair sums;
      blocked_sum_prepared<HarmonicPair>(
          0, bins, threads, sums,
          [&](size_t from, size_t to, HarmonicPair* h) { harmonic_means_block(n + from, to - from, h); },
          [&](size_t i, const HarmonicPair& h, SumPair& s) {
            const Moments m = inverse_harmonic_moments(h);
            s.a.add(w1[i] * m.expectation);
            s.b.add(w2[i] * m.variance);
          });
      return {sums.a.value() / total_weight, sums.b.value() / (total_weight * total_weight)};
    }
    case ClosedMetric::TruncatedInverse:
      return combine(n, w1, w2, bins, total_weight, threads, [k](double x) { return truncated_inverse_moments(x, k); });
    case ClosedMetric::Hits:
      return combine(n, w1, w2, bins, total_weight, threads, [k](double x) { return hits_moments(x, k); });
    case ClosedMetric::GeometricMean: {
      SumPair logs;
      geometric_logs(1.0 / count, n, w1, bins, threads, logs);
      return geometric_finish(logs);
    }
  }
  return {0.0, 0.0};
}

Moments closed_moments(ClosedMetric metric, const double* num_candidates, const double* weights, size_t count, double k,
                       unsigned threads) {
  if (metric == ClosedMetric::GeometricMean && weights != nullptr) {
    return weighted_geometric_moments(num_candidates, weights, count, threads);
  }
  const CandidateHistogram h = candidate_histogram(num_candidates, weights, count, threads);
  const double* w2 = h.w2.empty() ? h.w1.data() : h.w2.data();
  return histogram_moments(metric, h.n.data(), h.w1.data(), w2, h.n.size(), h.total_weight, static_cast<double>(count),
                           k, threads);
}

}  // namespace kgrank
