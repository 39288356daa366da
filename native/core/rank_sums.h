// The per-chunk kernel of the unweighted metric aggregate: one read of a run of ranks gives compensated sums of r
// and 1 / r, the product of the ranks as mantissa x 2^exponent (sum log r without a log per rank), the number of
// invalid ranks (not finite or < 1) and of ranks that are not half-integers, hit counts for each k, optionally the
// centred sum of squares about the run's own mean, and optionally a coarse histogram of the ranks' top 16 bits
// (sign, exponent and four mantissa bits: monotone in the value, so the median can be found by radix selection).
//
// Lanes: element i of the run goes to lane i % kSumLanes, and every lane sees the same sequence of IEEE operations
// (no fused multiply-add) at every SIMD level, so the scalar and vector versions give the same bits.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace kgrank {

constexpr int kSumLanes = 16;
// Products of this many mantissas in [1, 2) stay below 2^16 before they are renormalised.
constexpr size_t kRenormaliseGroups = 16;

// Buckets of the coarse histogram of ranks: key(x) = ((bits(x) >> 48) - 0x3FF0) mod 2^14, which is monotone for x in
// [1, DBL_MAX] (values outside land anywhere in the table; they make the aggregate invalid anyway).
constexpr uint32_t kRankKeyBase = 0x3FF0;
constexpr size_t kRankBuckets = 0x4000;

struct RankChunkSums {
  double s[kSumLanes];  // Kahan sums of r: sum and compensation per lane
  double c[kSumLanes];
  double si[kSumLanes];  // Kahan sums of 1 / r
  double ci[kSumLanes];
  double m[kSumLanes];   // product of the mantissas per lane, in [1, 2) after the last renormalisation
  int64_t e;             // sum of the binary exponents taken out of the products
  uint64_t invalid;      // ranks that are not finite or < 1 (NaN included)
  uint64_t not_half;     // ranks r with 2 r not an integer
  double m2[kSumLanes];  // Kahan sums of (r - mean)^2 about the run's own mean (when asked for)
  double m2c[kSumLanes];
  double mean;  // the run's mean (when asked for)
};

// x: the run; hits[j] += #{r <= ks[j]}; hist: kRankBuckets counters to add the run's keys to, or null. The kernels'
// type is RankChunkSumsFn (simd.h), which picks one of them per level.

namespace isa {
void rank_chunk_sums_scalar(const double* x, size_t n, const double* ks, size_t num_k, uint64_t* hits, uint32_t* hist,
                            bool centred, RankChunkSums* out);
#ifdef KGRANK_HAVE_AVX2
void rank_chunk_sums_avx2(const double* x, size_t n, const double* ks, size_t num_k, uint64_t* hits, uint32_t* hist,
                          bool centred, RankChunkSums* out);
#endif
}  // namespace isa

// Shared pieces, compiled into each ISA translation unit with internal linkage (an inline function with external
// linkage compiled with -mavx2 in one unit could be the one the linker keeps for the scalar unit).
namespace {

inline uint64_t rank_bits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

inline double bits_to_double(uint64_t b) {
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

inline uint32_t rank_key(uint64_t bits) {
  return (static_cast<uint32_t>(bits >> 48) - kRankKeyBase) & static_cast<uint32_t>(kRankBuckets - 1);
}

constexpr uint64_t kMantissaBits = 0x000FFFFFFFFFFFFFull;
constexpr uint64_t kOneBits = 0x3FF0000000000000ull;
constexpr double kTwo52 = 4503599627370496.0;

// One element into lane l: the scalar step both versions use (the vector one for its remainder).
inline void rank_step(RankChunkSums& o, int l, double x) {
  const double y = x - o.c[l];
  const double t = o.s[l] + y;
  o.c[l] = (t - o.s[l]) - y;
  o.s[l] = t;
  const double inv = 1.0 / x;
  const double yi = inv - o.ci[l];
  const double ti = o.si[l] + yi;
  o.ci[l] = (ti - o.si[l]) - yi;
  o.si[l] = ti;
  const uint64_t b = rank_bits(x);
  o.e += static_cast<int64_t>(b >> 52) - 1023;
  o.m[l] *= bits_to_double((b & kMantissaBits) | kOneBits);
  o.invalid += !(x >= 1.0 && x <= 1.7976931348623157e308);
  const double d = x + x;
  o.not_half += !(d >= kTwo52 || ((d + kTwo52) - kTwo52) == d);
}

// Takes the exponent out of each lane's product (products of mantissas are >= 1, so they are normal).
inline void rank_renormalise(RankChunkSums& o) {
  for (int l = 0; l < kSumLanes; ++l) {
    const uint64_t b = rank_bits(o.m[l]);
    o.e += static_cast<int64_t>(b >> 52) - 1023;
    o.m[l] = bits_to_double((b & kMantissaBits) | kOneBits);
  }
}

inline void rank_sums_init(RankChunkSums& o) {
  for (int l = 0; l < kSumLanes; ++l) {
    o.s[l] = o.c[l] = o.si[l] = o.ci[l] = o.m2[l] = o.m2c[l] = 0.0;
    o.m[l] = 1.0;
  }
  o.e = 0;
  o.invalid = o.not_half = 0;
  o.mean = 0.0;
}

// The run's mean from its lanes (Neumaier over the lanes in order), the same code in every unit.
inline double rank_lanes_mean(const RankChunkSums& o, size_t n) {
  double sum = 0.0, err = 0.0;
  const auto add = [&](double x) {
    const double t = sum + x;
    err += (sum >= 0 ? sum : -sum) >= (x >= 0 ? x : -x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  };
  for (int l = 0; l < kSumLanes; ++l) {
    add(o.s[l]);
    add(-o.c[l]);
  }
  return (sum + err) / static_cast<double>(n);
}

// Keeps a product from being fused with the following subtraction (units compiled with -mfma would otherwise be free
// to emit a fused multiply-subtract, and give other bits than the scalar unit).
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define KGRANK_UNFUSED(v) __asm__("" : "+x"(v))
#else
#define KGRANK_UNFUSED(v) ((void)0)
#endif

inline void centred_step(RankChunkSums& o, int l, double x, double mean) {
  const double d = x - mean;
  double sq = d * d;
  KGRANK_UNFUSED(sq);
  const double y = sq - o.m2c[l];
  const double t = o.m2[l] + y;
  o.m2c[l] = (t - o.m2[l]) - y;
  o.m2[l] = t;
}

}  // namespace

}  // namespace kgrank
