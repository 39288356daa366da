// Seeded Monte Carlo of rank vectors r_i ~ Uniform{1..N_i}. The random stream is counter-based: the uniform
// number of (seed, sample s, task i) is a pure function of those three 32-bit integers (murmur3 finalisers over
// 32-bit words), so samples are identical whatever the thread count, and the TypeScript fallback reproduces them
// bit for bit (it uses the same 32-bit operations).
// Twins: src/numeric/random.ts (the stream), src/fallback/sampling.ts.
#pragma once
#include <cstddef>
#include <cstdint>

#include "simd.h"

namespace kgrank {

// The stream, with internal linkage: the ISA kernels (generate_ranks_small_body below, compiled into
// kernels_scalar.cpp, kernels_avx2.cpp and kernels_avx512.cpp) use it, and an inline function with external linkage
// compiled with -mavx2 in one unit could be the copy the linker keeps for every unit (the hazard rank_sums.h
// describes).
namespace {

inline uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

inline uint32_t mix32(uint32_t a, uint32_t b) { return fmix32(a ^ (b * 0x9e3779b1u + 0x7f4a7c15u)); }

// Key of one stream (seed, sample): computed once per sample.
inline uint32_t stream_key(uint32_t seed, uint32_t sample) { return mix32(seed, sample); }

// Uniform double in [0, 1) with 53 random bits: element `index` of the stream `key`.
inline double uniform01_keyed(uint32_t key, uint32_t index) {
  const uint32_t h = mix32(key, index);
  const uint32_t hi = h >> 5;                        // 27 bits
  const uint32_t lo = fmix32(h + 0x63d83595u) >> 6;  // 26 bits
  return (static_cast<double>(hi) * 67108864.0 + static_cast<double>(lo)) * (1.0 / 9007199254740992.0);
}

inline double uniform01(uint32_t seed, uint32_t sample, uint32_t index) {
  return uniform01_keyed(stream_key(seed, sample), index);
}

// uniform01_keyed's value from the hash h = mix32(key, index), its halves converted through int32 (which
// vectorises; uint32 does not, before AVX-512): the same bits.
inline double small_uniform(uint32_t h) {
  const int32_t hi = static_cast<int32_t>(h >> 5);                        // 27 bits
  const int32_t lo = static_cast<int32_t>(fmix32(h + 0x63d83595u) >> 6);  // 26 bits
  return (static_cast<double>(hi) * 67108864.0 + static_cast<double>(lo)) * (1.0 / 9007199254740992.0);
}

// The rank generator's kernel when every N_i < 2^31 (and n < 2^32): u * N_i < 2^31 then truncates through int32,
// which vectorises (a double -> int64/uint64 conversion does not, before AVX-512), and the loop has no branch.
// Bit-identical to the general loop 1 + floor(u * N_i). isa::generate_ranks_small_* (kernels.h) compile it per ISA.
// out[i] is the rank of task i (stream index i, count num_candidates[i]).
inline double small_rank(uint32_t h, double num_candidates) {
  return 1.0 + static_cast<double>(static_cast<int32_t>(small_uniform(h) * num_candidates));
}

inline void generate_ranks_small_body(const double* num_candidates, uint32_t n, uint32_t key, double* out) {
  for (uint32_t i = 0; i < n; ++i) out[i] = small_rank(mix32(key, i), num_candidates[i]);
}

// A Monte-Carlo statistic's sums for kSampleLanes samples at once, on the int32 fast path: lane l draws the ranks of
// stream keys[l] (task i: stream index i) and adds each task's term to sums[l] in task order - the rank (Mean), its
// inverse (InverseHarmonic) or a hit r <= k (Hits), times the task's weight when weights are given (a rounded
// product, then a rounded add). Those are statistic_of's sums over generate_ranks' vector, bit for bit; a sample's
// terms are a vector lane here, so the samples' chains of adds run side by side and the hash of a task's index is
// shared by its lanes. isa::lane_statistic_sums_* (kernels.h) compile it per ISA.
constexpr size_t kSampleLanes = 16;

template <LaneTerm Term, bool Weighted>
inline void lane_statistic_sums_body(const double* num_candidates, const double* weights, uint32_t n,
                                     const uint32_t* keys, double k, double* sums) {
  double acc[kSampleLanes];
  uint32_t key[kSampleLanes];
  for (size_t l = 0; l < kSampleLanes; ++l) {
    acc[l] = sums[l];
    key[l] = keys[l];
  }
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t m = i * 0x9e3779b1u + 0x7f4a7c15u;  // mix32(key, i) = fmix32(key ^ m)
    const double count = num_candidates[i];
    for (size_t l = 0; l < kSampleLanes; ++l) {
      const double r = small_rank(fmix32(key[l] ^ m), count);
      const double x = Term == LaneTerm::Rank ? r : Term == LaneTerm::Inverse ? 1.0 / r : (r <= k ? 1.0 : 0.0);
      acc[l] += Weighted ? weights[i] * x : x;
    }
  }
  for (size_t l = 0; l < kSampleLanes; ++l) sums[l] = acc[l];
}

inline void lane_statistic_sums_any(const double* num_candidates, const double* weights, uint32_t n,
                                    const uint32_t* keys, LaneTerm term, double k, double* sums) {
  switch (term) {
    case LaneTerm::Rank:
      return weights ? lane_statistic_sums_body<LaneTerm::Rank, true>(num_candidates, weights, n, keys, k, sums)
                     : lane_statistic_sums_body<LaneTerm::Rank, false>(num_candidates, weights, n, keys, k, sums);
    case LaneTerm::Inverse:
      return weights ? lane_statistic_sums_body<LaneTerm::Inverse, true>(num_candidates, weights, n, keys, k, sums)
                     : lane_statistic_sums_body<LaneTerm::Inverse, false>(num_candidates, weights, n, keys, k, sums);
    case LaneTerm::Hit:
      return weights ? lane_statistic_sums_body<LaneTerm::Hit, true>(num_candidates, weights, n, keys, k, sums)
                     : lane_statistic_sums_body<LaneTerm::Hit, false>(num_candidates, weights, n, keys, k, sums);
  }
}

// The draws of compare's paired resampling (resample.h), per ISA like the rank generator (isa::keyed_swaps_* and
// isa::keyed_picks_* in kernels.h). Swaps: out[i] = 1 when task first + i of stream `key` swaps its two ranks, i.e.
// its uniform is below 1/2 (bit 31 of its hash clear, exactly that comparison: see uniform01_keyed). Picks: out[i] =
// floor(u * n) for the uniform u of index first + i, n < 2^31 (u * n < 2^31 truncates through int32 as floor does).
inline void keyed_swaps_body(uint32_t key, uint32_t first, uint32_t count, uint8_t* out) {
  for (uint32_t i = 0; i < count; ++i) out[i] = static_cast<uint8_t>((mix32(key, first + i) >> 31) ^ 1u);
}

inline void keyed_picks_body(uint32_t key, uint32_t first, uint32_t count, double n, int32_t* out) {
  for (uint32_t i = 0; i < count; ++i) out[i] = static_cast<int32_t>(small_uniform(mix32(key, first + i)) * n);
}

// The sums of paired resampling, in kResampleLanes interleaved lanes: task i adds to lanes[i mod kResampleLanes], in
// task order, so the result is the same at every ISA (a lane is a SIMD element; no reassociation) and in the twin
// (src/fallback/resample.ts). `first` is a multiple of kResampleLanes. Masked: lanes += z where mask is set (else
// + 0.0). Weighted: lanes += counts * x (a rounded product, then a rounded add: no contraction).
constexpr size_t kResampleLanes = 32;

inline void masked_lane_sums_body(const uint8_t* mask, const double* z, size_t len, double* lanes) {
  double a[kResampleLanes];
  for (size_t j = 0; j < kResampleLanes; ++j) a[j] = lanes[j];
  size_t i = 0;
  for (; i + kResampleLanes <= len; i += kResampleLanes) {
    for (size_t j = 0; j < kResampleLanes; ++j) {
      const double v = z[i + j];  // loaded whatever the mask: a select, not a branch
      a[j] += mask[i + j] ? v : 0.0;
    }
  }
  for (size_t j = 0; i < len; ++i, ++j) a[j] += mask[i] ? z[i] : 0.0;
  for (size_t j = 0; j < kResampleLanes; ++j) lanes[j] = a[j];
}

inline void weighted_lane_sums_body(const uint32_t* counts, const double* x, size_t len, double* lanes) {
  double a[kResampleLanes];
  for (size_t j = 0; j < kResampleLanes; ++j) a[j] = lanes[j];
  size_t i = 0;
  for (; i + kResampleLanes <= len; i += kResampleLanes) {
    // A count is at most n < 2^31: converted through int32, which is one instruction (uint32 is not, before AVX-512).
    for (size_t j = 0; j < kResampleLanes; ++j) {
      a[j] += static_cast<double>(static_cast<int32_t>(counts[i + j])) * x[i + j];
    }
  }
  for (size_t j = 0; i < len; ++i, ++j) a[j] += static_cast<double>(counts[i]) * x[i];
  for (size_t j = 0; j < kResampleLanes; ++j) lanes[j] = a[j];
}

}  // namespace

// One rank vector (sample number `sample`) for the given candidate counts.
// `simd`: the level whose kernel runs the int32 fast path (simd.h dispatch; the bits are the same at every level).
void generate_ranks(const double* num_candidates, size_t n, uint32_t seed, uint32_t sample, double* out,
                    SimdLevel simd = SimdLevel::Scalar);

// Statistics of a rank vector that the metrics are functions of. Mirrored by src/contract/kernels.ts StatisticCode
// (test/enums.test.ts compares the two).
enum class Statistic : int {
  Mean = 0,             // weighted arithmetic mean
  GeometricMean = 1,    // exp(weighted mean of log r)
  InverseHarmonic = 2,  // weighted mean of 1/r (MRR)
  Median = 3,
  Hits = 4,      // weighted fraction of r <= k
  Variance = 5,  // population variance (unweighted)
  Mad = 6,       // scaled median absolute deviation
  Count = 7,
};

// The statistic of one rank vector, single-threaded, sequential order (the same order as the fallback).
double statistic_of(Statistic stat, const double* ranks, const double* weights, size_t n, double k);

// out[s] = statistic of sample s, for s < num_samples; samples run in parallel, each sequentially.
void sample_statistic(const double* num_candidates, const double* weights, size_t n, size_t num_samples, uint32_t seed,
                      Statistic stat, double k, double* out, unsigned threads, SimdLevel simd = SimdLevel::Scalar);

}  // namespace kgrank
