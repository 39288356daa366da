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
  bool dense = weights == nullptr && count > 0;
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
  if (dense) {
    const size_t buckets = (static_cast<size_t>(max_n) >> kBucketShift) + 1;
    thread_local std::vector<uint32_t> scattered;
    if (scattered.size() < count) scattered.resize(count);
    std::vector<size_t> start(buckets + 1, 0);
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
    parallel_for(kParts, threads, [&](size_t p) {
      const size_t begin = count * p / kParts, end = count * (p + 1) / kParts;
      size_t* fill = part_start.data() + p * buckets;
      for (size_t i = begin; i < end; ++i) {
        const uint32_t v = static_cast<uint32_t>(static_cast<int64_t>(num_candidates[i]));
        out[fill[v >> kBucketShift]++] = v;
      }
    });
    // Buckets in parallel, twice: first the number of distinct values of each (offsets), then the bins written at
    // those offsets. Counting a bucket is cheap (its counters stay in L2), so counting it twice costs less than
    // writing the bins once more through a buffer.
    std::vector<size_t> distinct(buckets, 0);
    const uint32_t* sc = scattered.data();
    auto count_bucket = [&](size_t b, uint32_t* c) {
      const uint32_t base = static_cast<uint32_t>(b << kBucketShift);
      for (size_t i = start[b]; i < start[b + 1]; ++i) ++c[sc[i] - base];
    };
    parallel_for(buckets, threads, [&](size_t b) {
      thread_local std::vector<uint32_t> local(kBucketWidth);
      uint32_t* c = local.data();
      count_bucket(b, c);
      size_t d = 0;
      for (size_t v = 0; v < kBucketWidth; ++v) {
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
      size_t at = offset[b];
      for (size_t v = 0; v < kBucketWidth; ++v) {
        if (c[v] == 0) continue;
        h.n[at] = static_cast<double>(base + v);
        h.w1[at++] = c[v];
        c[v] = 0;
      }
    });
    // h.w2 stays empty: unweighted, the squared-weight sums are the counts (w1).
    h.total_weight = static_cast<double>(count);
    return h;
  }
  if (count == 0) return h;
  std::vector<std::pair<double, double>> pairs(count);
  for (size_t i = 0; i < count; ++i) pairs[i] = {num_candidates[i], weights ? weights[i] : 1.0};
  std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
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
    h.w2.push_back(s2.value());
    total.merge(s1);
    i = j;
  }
  h.total_weight = total.value();
  return h;
}

namespace {

// sum_b w1_b E_b / W and sum_b w2_b V_b / W^2 with per-bin moments from fn(n) -> (E, V).
template <class Fn>
Moments combine(const CandidateHistogram& h, Fn fn) {
  CompensatedSum e, v;
  for (size_t b = 0; b < h.n.size(); ++b) {
    const Moments m = fn(h.n[b]);
    e.add(h.w1[b] * m.expectation);
    v.add((h.w2.empty() ? h.w1[b] : h.w2[b]) * m.variance);
  }
  const double w = h.total_weight;
  return {e.value() / w, v.value() / (w * w)};
}

}  // namespace

Moments moments_arithmetic_mean(const CandidateHistogram& h) {
  return combine(h, [](double n) { return Moments{(n + 1) / 2, (n - 1) * (n + 1) / 12}; });
}

Moments moments_inverse_harmonic_mean(const CandidateHistogram& h) {
  return combine(h, [](double n) {
    const double mean = harmonic1(n) / n;
    // Var[1/r] = H_2(n)/n - (H_1(n)/n)^2; for n = 1 both terms are 1 and the difference is exactly 0.
    return Moments{mean, std::max(0.0, harmonic2(n) / n - mean * mean)};
  });
}

Moments moments_hits(const CandidateHistogram& h, double k) {
  return combine(h, [k](double n) {
    const double hit = std::min(k, n);
    const double p = hit / n;
    return Moments{p, p * ((n - hit) / n)};
  });
}

namespace {

struct GeometricGroup {
  double exponent;  // a = w / W
  double n;
  double multiplicity;  // number of tasks with this (a, n)
};

// Accumulates, for one exponent a and sorted distinct n's, sum_c c*log E[r^a] and sum_c c*log1p(Var/E^2).
void sweep_exponent(const GeometricGroup* groups, size_t count, CompensatedSum& log_mean, CompensatedSum& log_ratio) {
  const double a = groups[0].exponent;
  std::vector<double> n(count);
  for (size_t g = 0; g < count; ++g) n[g] = groups[g].n;
  std::vector<PowerSums> sums(count);
  centred_power_sums(a, n.data(), count, sums.data(), 1);
  for (size_t g = 0; g < count; ++g) {
    const double mean_e = sums[g].s1 / n[g];                              // E[r^a] - 1
    const double var = std::max(0.0, sums[g].s2 / n[g] - mean_e * mean_e);  // Var[r^a] = Var[r^a - 1]
    const double mu = 1.0 + mean_e;
    log_mean.add(groups[g].multiplicity * log1p_small(mean_e));
    log_ratio.add(groups[g].multiplicity * log1p_small(var / (mu * mu)));
  }
}

}  // namespace

Moments moments_geometric_mean(const double* num_candidates, const double* weights, size_t count) {
  std::vector<GeometricGroup> groups;
  if (weights == nullptr) {
    const CandidateHistogram h = candidate_histogram(num_candidates, nullptr, count);
    const double a = 1.0 / static_cast<double>(count);
    for (size_t b = 0; b < h.n.size(); ++b) groups.push_back({a, h.n[b], h.w1[b]});
  } else {
    CompensatedSum total;
    for (size_t i = 0; i < count; ++i) total.add(weights[i]);
    const double w = total.value();
    std::vector<std::pair<double, double>> pairs(count);
    for (size_t i = 0; i < count; ++i) pairs[i] = {weights[i] / w, num_candidates[i]};
    std::sort(pairs.begin(), pairs.end());
    for (size_t i = 0; i < count;) {
      size_t j = i;
      while (j < count && pairs[j] == pairs[i]) ++j;
      groups.push_back({pairs[i].first, pairs[i].second, static_cast<double>(j - i)});
      i = j;
    }
  }
  CompensatedSum log_mean, log_ratio;
  for (size_t i = 0; i < groups.size();) {
    size_t j = i;
    while (j < groups.size() && groups[j].exponent == groups[i].exponent) ++j;
    sweep_exponent(groups.data() + i, j - i, log_mean, log_ratio);
    i = j;
  }
  const double mean = std::exp(log_mean.value());
  return {mean, mean * mean * std::expm1(log_ratio.value())};
}

Moments closed_moments(ClosedMetric metric, const double* num_candidates, const double* weights, size_t count,
                       double k) {
  switch (metric) {
    case ClosedMetric::ArithmeticMean:
      return moments_arithmetic_mean(candidate_histogram(num_candidates, weights, count));
    case ClosedMetric::InverseHarmonicMean:
      return moments_inverse_harmonic_mean(candidate_histogram(num_candidates, weights, count));
    case ClosedMetric::Hits:
      return moments_hits(candidate_histogram(num_candidates, weights, count), k);
    case ClosedMetric::GeometricMean:
      return moments_geometric_mean(num_candidates, weights, count);
  }
  return {0.0, 0.0};
}

}  // namespace kgrank

// ---- histogram-based, parallel ---------------------------------------------------------------------------------
namespace kgrank {

namespace {

constexpr size_t kBinBlock = 4096;

template <class Fn>
Moments combine_parallel(const double* n, const double* w1, const double* w2, size_t bins, double total,
                         unsigned threads, Fn fn) {
  const size_t blocks = (bins + kBinBlock - 1) / kBinBlock;
  std::vector<CompensatedSum> e(blocks), v(blocks);
  parallel_for(blocks, threads, [&](size_t b) {
    const size_t end = std::min(bins, (b + 1) * kBinBlock);
    CompensatedSum el, vl;  // local: no false sharing between threads
    for (size_t i = b * kBinBlock; i < end; ++i) {
      const Moments m = fn(n[i]);
      el.add(w1[i] * m.expectation);
      vl.add(w2[i] * m.variance);
    }
    e[b] = el;
    v[b] = vl;
  });
  CompensatedSum es, vs;
  for (size_t b = 0; b < blocks; ++b) {
    es.merge(e[b]);
    vs.merge(v[b]);
  }
  return {es.value() / total, vs.value() / (total * total)};
}

// Unweighted geometric mean: exponent a = 1/count, bins with multiplicities. Bins up to the sweep limit take
// their centred power sums from one term-by-term sweep; bins above it from the Euler-Maclaurin tail (one log per
// bin), in fixed blocks of bins merged in block order.
Moments geometric_parallel(const double* n, const double* mult, size_t bins, double count, unsigned threads) {
  const double a = 1.0 / count;
  const double max_n = n[bins - 1];
  const bool small = a * std::log(std::max(max_n, 2.0)) < 0.02;
  const double limit = std::min(max_n, kPowerSweepLimit);
  CompensatedSum head_mean, head_ratio;
  CompensatedSum s1, s2;
  size_t first = 0;
  auto accumulate = [&](double x, double m, double sum1, double sum2, CompensatedSum& lm, CompensatedSum& lr) {
    const double inv = 1 / x;
    const double mean_e = sum1 * inv;
    const double var = std::max(0.0, sum2 * inv - mean_e * mean_e);
    const double mu = 1.0 + mean_e;
    lm.add(m * log1p_small(mean_e));
    lr.add(m * log1p_small(var / (mu * mu)));
  };
  for (double j = 1; j <= limit; j += 1) {
    const double e = centred_power(a, j, small);
    s1.add(e);
    s2.add(e * e);
    for (; first < bins && n[first] == j; ++first) accumulate(j, mult[first], s1.value(), s2.value(), head_mean, head_ratio);
  }
  const double base1 = s1.value(), base2 = s2.value();
  const PowerTail tail(a, small);
  const PowerSums tm = tail(kPowerSweepLimit);
  const size_t chunks = (bins - first + kBinBlock - 1) / kBinBlock;
  std::vector<CompensatedSum> lm(chunks), lr(chunks);
  parallel_for(chunks, threads, [&](size_t c) {
    const size_t begin = first + c * kBinBlock, end = std::min(bins, begin + kBinBlock);
    CompensatedSum lm_local, lr_local;
    for (size_t i = begin; i < end; ++i) {
      const PowerSums t = tail(n[i]);
      accumulate(n[i], mult[i], base1 + (t.s1 - tm.s1), base2 + (t.s2 - tm.s2), lm_local, lr_local);
    }
    lm[c] = lm_local;
    lr[c] = lr_local;
  });
  CompensatedSum log_mean = head_mean, log_ratio = head_ratio;
  for (size_t c = 0; c < chunks; ++c) {
    log_mean.merge(lm[c]);
    log_ratio.merge(lr[c]);
  }
  const double mean = std::exp(log_mean.value());
  return {mean, mean * mean * std::expm1(log_ratio.value())};
}

}  // namespace

Moments histogram_moments(ClosedMetric metric, const double* n, const double* w1, const double* w2, size_t bins,
                          double total_weight, double count, double k, unsigned threads) {
  switch (metric) {
    case ClosedMetric::ArithmeticMean:
      return combine_parallel(n, w1, w2, bins, total_weight, threads,
                              [](double x) { return Moments{(x + 1) / 2, (x - 1) * (x + 1) / 12}; });
    case ClosedMetric::InverseHarmonicMean:
      return combine_parallel(n, w1, w2, bins, total_weight, threads, [](double x) {
        const HarmonicPair h = harmonic_means(x);
        return Moments{h.h1_over_n, std::max(0.0, h.h2_over_n - h.h1_over_n * h.h1_over_n)};
      });
    case ClosedMetric::Hits:
      return combine_parallel(n, w1, w2, bins, total_weight, threads, [k](double x) {
        const double hit = std::min(k, x);
        const double p = hit / x;
        return Moments{p, p * ((x - hit) / x)};
      });
    case ClosedMetric::GeometricMean:
      return geometric_parallel(n, w1, bins, count, threads);
  }
  return {0.0, 0.0};
}

}  // namespace kgrank
