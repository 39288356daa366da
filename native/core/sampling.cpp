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
    out[i] = 1.0 + static_cast<double>(static_cast<uint64_t>(uniform01_keyed(key, static_cast<uint32_t>(i)) * num_candidates[i]));
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
    dispatch(simd, KernelFamily::GenerateRanks).generate_ranks_small(num_candidates, static_cast<uint32_t>(n), key, out);
  } else {
    generate_ranks_general(num_candidates, n, key, out);
  }
}

double statistic_of(Statistic stat, const double* r, const double* w, size_t n, double k) {
  switch (stat) {
    case Statistic::Median:
      return median(r, w, n);
    case Statistic::Mad:
      return median_absolute_deviation(r, w, n);
    case Statistic::Count:
      return static_cast<double>(n);
    case Statistic::Variance: {
      CompensatedSum s;
      for (size_t i = 0; i < n; ++i) s.add(r[i]);
      const double mean = s.value() / static_cast<double>(n);
      CompensatedSum d;
      for (size_t i = 0; i < n; ++i) d.add((r[i] - mean) * (r[i] - mean));
      return d.value() / static_cast<double>(n);
    }
    default:
      break;
  }
  // Plain sequential sums in index order (the fallback uses the same order and operations, so the values are
  // bit-identical for the rational statistics): at <= 1e-16 * n relative they are far below Monte-Carlo noise.
  double num = 0, den = 0;
  if (w == nullptr) {
    switch (stat) {
      case Statistic::Mean: for (size_t i = 0; i < n; ++i) num += r[i]; break;
      case Statistic::GeometricMean: for (size_t i = 0; i < n; ++i) num += std::log(r[i]); break;
      case Statistic::InverseHarmonic: for (size_t i = 0; i < n; ++i) num += 1.0 / r[i]; break;
      default: for (size_t i = 0; i < n; ++i) num += r[i] <= k ? 1.0 : 0.0; break;
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

namespace {

// Samples whose sums run together in the inverse-rank path below, and the tasks per slice of their draws.
constexpr size_t kLanes = 8;
constexpr uint32_t kSlice = 256;

// statistic_of's InverseHarmonic for samples [s0, s0 + kLanes) at once (int32 fast path): the inverse ranks of a
// slice of tasks are drawn for each sample (vectorised, division included), then each sample's terms are added in
// task order into its own sums: every sample's value has the bits statistic_of gives, and the kLanes independent
// chains of adds overlap where one sequential sum waits on each add. Samples past num_samples are drawn and dropped.
void inverse_harmonic_lanes(const double* num_candidates, const double* w, uint32_t n, size_t s0, size_t num_samples,
                            uint32_t seed, double* out, GenerateInverseRanksSmallFn generate) {
  thread_local std::vector<double> slice;
  slice.resize(kLanes * kSlice);
  double* const x = slice.data();
  uint32_t key[kLanes];
  double num[kLanes] = {};
  double den = 0;
  for (size_t l = 0; l < kLanes; ++l) key[l] = stream_key(seed, static_cast<uint32_t>(s0 + l));
  for (uint32_t begin = 0; begin < n; begin += kSlice) {
    const uint32_t len = std::min(kSlice, n - begin);
    for (size_t l = 0; l < kLanes; ++l) generate(num_candidates + begin, len, key[l], begin, x + l * kSlice);
    if (w == nullptr) {
      for (uint32_t i = 0; i < len; ++i) {
        for (size_t l = 0; l < kLanes; ++l) num[l] += x[l * kSlice + i];
      }
    } else {
      const double* wb = w + begin;
      for (uint32_t i = 0; i < len; ++i) {
        for (size_t l = 0; l < kLanes; ++l) num[l] += wb[i] * x[l * kSlice + i];
        den += wb[i];
      }
    }
  }
  if (w == nullptr) den = static_cast<double>(n);
  for (size_t l = 0; l < kLanes && s0 + l < num_samples; ++l) out[s0 + l] = num[l] / den;
}

}  // namespace

void sample_statistic(const double* num_candidates, const double* weights, size_t n, size_t num_samples,
                      uint32_t seed, Statistic stat, double k, double* out, unsigned threads, SimdLevel simd) {
  const bool small = all_below_2_31(num_candidates, n);
  const KernelTable& kernels = dispatch(simd, KernelFamily::GenerateRanks);
  if (small && n > 0 && stat == Statistic::InverseHarmonic) {
    const GenerateInverseRanksSmallFn generate = kernels.generate_inverse_ranks_small;
    parallel_for((num_samples + kLanes - 1) / kLanes, threads, [&](size_t g) {
      inverse_harmonic_lanes(num_candidates, weights, static_cast<uint32_t>(n), g * kLanes, num_samples, seed, out,
                             generate);
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
