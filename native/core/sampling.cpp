// Seeded rank generation and Monte Carlo estimates (sampling.h). Fallback twin: src/fallback/sampling.ts.

#include "sampling.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "aggregate.h"
#include "compensated.h"
#include "thread_pool.h"

namespace kgrank {

namespace {

void generate_ranks_general(const double* num_candidates, size_t n, uint32_t key, double* out) {
  for (size_t i = 0; i < n; ++i) {
    // u * N >= 0 and < 2^53: truncation is floor (and avoids a libm call in the baseline build).
    out[i] = 1.0 + static_cast<double>(
                       static_cast<uint64_t>(uniform01_keyed(key, static_cast<uint32_t>(i)) * num_candidates[i]));
  }
}

bool all_below_2_31(const double* num_candidates, size_t n) {
  double mx = 0;
  for (size_t i = 0; i < n; ++i) mx = num_candidates[i] > mx ? num_candidates[i] : mx;
  return mx < 2147483648.0 && n <= UINT32_MAX;
}

}  // namespace

void generate_ranks(const double* num_candidates, size_t n, uint32_t seed, uint32_t sample, double* out,
                    SimdLevel simd) {
  const uint32_t key = stream_key(seed, sample);
  if (all_below_2_31(num_candidates, n)) {
    dispatch(simd, KernelFamily::GenerateRanks)
        .generate_ranks_small(num_candidates, static_cast<uint32_t>(n), key, out);
  } else {
    generate_ranks_general(num_candidates, n, key, out);
  }
}

double statistic_of(Statistic stat, const double* r, const double* w, size_t n, double k) {
  switch (stat) {
    case Statistic::Median: return median(r, w, n);
    case Statistic::Mad: return median_absolute_deviation(r, w, n);
    case Statistic::Count: return static_cast<double>(n);
    case Statistic::Variance: {
      CompensatedSum s;
      for (size_t i = 0; i < n; ++i) s.add(r[i]);
      const double mean = s.value() / static_cast<double>(n);
      CompensatedSum d;
      for (size_t i = 0; i < n; ++i) d.add((r[i] - mean) * (r[i] - mean));
      return d.value() / static_cast<double>(n);
    }
    default: break;
  }
  // Plain sequential sums in index order (the fallback uses the same order and operations, so the values are
  // bit-identical for the rational statistics): at <= 1e-16 * n relative they are far below Monte-Carlo noise.
  double num = 0, den = 0;
  if (w == nullptr) {
    switch (stat) {
      case Statistic::Mean:
        for (size_t i = 0; i < n; ++i) num += r[i];
        break;
      case Statistic::GeometricMean:
        for (size_t i = 0; i < n; ++i) num += std::log(r[i]);
        break;
      case Statistic::InverseHarmonic:
        for (size_t i = 0; i < n; ++i) num += 1.0 / r[i];
        break;
      default:
        for (size_t i = 0; i < n; ++i) num += r[i] <= k ? 1.0 : 0.0;
        break;
    }
    den = static_cast<double>(n);
  } else {
    for (size_t i = 0; i < n; ++i) {
      double x;
      switch (stat) {
        case Statistic::Mean: x = r[i]; break;
        case Statistic::GeometricMean: x = std::log(r[i]); break;
        case Statistic::InverseHarmonic: x = 1.0 / r[i]; break;
        default: x = r[i] <= k ? 1.0 : 0.0; break;
      }
      num += w[i] * x;
      den += w[i];
    }
  }
  const double mean = num / den;
  return stat == Statistic::GeometricMean ? std::exp(mean) : mean;
}

void sample_statistic(const double* num_candidates, const double* weights, size_t n, size_t num_samples, uint32_t seed,
                      Statistic stat, double k, double* out, unsigned threads, SimdLevel simd) {
  const bool small = all_below_2_31(num_candidates, n);
  const KernelTable& kernels = dispatch(simd, KernelFamily::GenerateRanks);
  const bool summed = stat == Statistic::Mean || stat == Statistic::InverseHarmonic || stat == Statistic::Hits;
  if (small && n > 0 && summed) {
    // statistic_of's sums for kSampleLanes samples per kernel call (sampling.h lane_statistic_sums_body), then its
    // division by the weights' total, summed here in task order as statistic_of does; samples past num_samples
    // are drawn and dropped.
    double den = static_cast<double>(n);
    if (weights != nullptr) {
      den = 0;
      for (size_t i = 0; i < n; ++i) den += weights[i];
    }
    const LaneTerm term = stat == Statistic::Mean              ? LaneTerm::Rank
                          : stat == Statistic::InverseHarmonic ? LaneTerm::Inverse
                                                               : LaneTerm::Hit;
    parallel_for((num_samples + kSampleLanes - 1) / kSampleLanes, threads, [&](size_t g) {
      const size_t s0 = g * kSampleLanes;
      uint32_t keys[kSampleLanes];
      double sums[kSampleLanes] = {};
      for (size_t l = 0; l < kSampleLanes; ++l) keys[l] = stream_key(seed, static_cast<uint32_t>(s0 + l));
      kernels.lane_statistic_sums(num_candidates, weights, static_cast<uint32_t>(n), keys, term, k, sums);
      for (size_t l = 0; l < kSampleLanes && s0 + l < num_samples; ++l) out[s0 + l] = sums[l] / den;
    });
    return;
  }
  const GenerateRanksSmallFn generate_small = kernels.generate_ranks_small;
  parallel_for(num_samples, threads, [&](size_t s) {
    thread_local std::vector<double> ranks;
    ranks.resize(n);
    const uint32_t key = stream_key(seed, static_cast<uint32_t>(s));
    if (small) {
      generate_small(num_candidates, static_cast<uint32_t>(n), key, ranks.data());
    } else {
      generate_ranks_general(num_candidates, n, key, ranks.data());
    }
    out[s] = statistic_of(stat, ranks.data(), weights, n, k);
  });
}

}  // namespace kgrank
