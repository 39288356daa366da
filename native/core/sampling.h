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
  const uint32_t hi = h >> 5;                          // 27 bits
  const uint32_t lo = fmix32(h + 0x63d83595u) >> 6;  // 26 bits
  return (static_cast<double>(hi) * 67108864.0 + static_cast<double>(lo)) * (1.0 / 9007199254740992.0);
}

inline double uniform01(uint32_t seed, uint32_t sample, uint32_t index) {
  return uniform01_keyed(stream_key(seed, sample), index);
}

// The rank generator's kernel when every N_i < 2^31 (and n < 2^32): u * N_i < 2^31 then truncates through int32,
// which vectorises (a double -> int64/uint64 conversion does not, before AVX-512), and the loop has no branch.
// Bit-identical to the general loop 1 + floor(u * N_i). isa::generate_ranks_small_* (kernels.h) compile it per ISA.
// out[i] is the rank of task first + i (stream index first + i, count num_candidates[i]), or its inverse 1 / r with
// `Inverse` (the same division as the statistic's, vectorised with the draws).
template <bool Inverse>
inline void generate_ranks_small_body(const double* num_candidates, uint32_t n, uint32_t key, uint32_t first,
                                      double* out) {
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t h = mix32(key, first + i);
    const int32_t hi = static_cast<int32_t>(h >> 5);                       // 27 bits
    const int32_t lo = static_cast<int32_t>(fmix32(h + 0x63d83595u) >> 6);  // 26 bits
    const double u = (static_cast<double>(hi) * 67108864.0 + static_cast<double>(lo)) * (1.0 / 9007199254740992.0);
    const double r = 1.0 + static_cast<double>(static_cast<int32_t>(u * num_candidates[i]));
    out[i] = Inverse ? 1.0 / r : r;
  }
}

}  // namespace

// One rank vector (sample number `sample`) for the given candidate counts.
// `simd`: the level whose kernel runs the int32 fast path (simd.h dispatch; the bits are the same at every level).
void generate_ranks(const double* num_candidates, size_t n, uint32_t seed, uint32_t sample, double* out,
                    SimdLevel simd = SimdLevel::Scalar);

// Statistics of a rank vector that the metrics are functions of.
enum class Statistic : int {
  Mean = 0,             // weighted arithmetic mean
  GeometricMean = 1,    // exp(weighted mean of log r)
  InverseHarmonic = 2,  // weighted mean of 1/r (MRR)
  Median = 3,
  Hits = 4,             // weighted fraction of r <= k
  Variance = 5,         // population variance (unweighted)
  Mad = 6,              // scaled median absolute deviation
  Count = 7,
};

// The statistic of one rank vector, single-threaded, sequential order (the same order as the fallback).
double statistic_of(Statistic stat, const double* ranks, const double* weights, size_t n, double k);

// out[s] = statistic of sample s, for s < num_samples; samples run in parallel, each sequentially.
void sample_statistic(const double* num_candidates, const double* weights, size_t n, size_t num_samples,
                      uint32_t seed, Statistic stat, double k, double* out, unsigned threads,
                      SimdLevel simd = SimdLevel::Scalar);

}  // namespace kgrank
