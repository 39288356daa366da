// Portable kernels: plain C++ compiled for the baseline target (the compiler may auto-vectorize them, e.g. SSE2).
#include <cstring>
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

#include "kernels.h"
#include "rank_sums.h"
#include "sampling.h"

namespace kgrank {
namespace isa {

namespace {
template <typename T>
Counts count_generic(const T* x, size_t n, T t) {
  Counts c;
  // 32-bit block counters let the compiler vectorize; flushed before they could overflow.
  constexpr size_t kBlock = size_t{1} << 20;
  for (size_t start = 0; start < n; start += kBlock) {
    const size_t end = start + kBlock < n ? start + kBlock : n;
    uint32_t g = 0, e = 0, u = 0;
    for (size_t i = start; i < end; ++i) {
      const T v = x[i];
      g += v > t;
      e += v == t;
      u += v != v;
    }
    c.greater += g;
    c.equal += e;
    c.nan += u;
  }
  return c;
}
#if defined(__wasm_simd128__)
// The WebAssembly build (native/wasm/): the same counts with SIMD128 compares, 4 (float) or 2 (double) lanes, four
// vectors a step; a lane mask is -1, so subtracting it counts. Integer counts: any order gives the same numbers.
template <typename T, size_t L, typename Gt, typename Eq, typename Ne, typename Splat>
Counts count_wasm(const T* x, size_t n, T t, Gt gt, Eq eq, Ne ne, Splat splat) {
  Counts c;
  const v128_t vt = splat(t);
  constexpr size_t kBlock = size_t{1} << 20;  // 32-bit lanes flushed before they could overflow
  for (size_t start = 0; start < n; start += kBlock) {
    const size_t end = start + kBlock < n ? start + kBlock : n;
    v128_t g = wasm_i32x4_splat(0), e = g, u = g;
    size_t i = start;
    for (; i + 4 * L <= end; i += 4 * L) {
      for (size_t k = 0; k < 4; ++k) {
        const v128_t v = wasm_v128_load(x + i + k * L);
        g = wasm_i32x4_sub(g, gt(v, vt));
        e = wasm_i32x4_sub(e, eq(v, vt));
        u = wasm_i32x4_sub(u, ne(v, v));
      }
    }
    uint32_t lanes[3][4];
    wasm_v128_store(lanes[0], g);
    wasm_v128_store(lanes[1], e);
    wasm_v128_store(lanes[2], u);
    uint64_t gs = 0, es = 0, us = 0;
    for (int k = 0; k < 4; ++k) {
      gs += lanes[0][k];
      es += lanes[1][k];
      us += lanes[2][k];
    }
    // A 64-bit lane mask (double) is two 32-bit -1s: each lane was counted twice.
    if (L == 2) {
      gs /= 2;
      es /= 2;
      us /= 2;
    }
    for (; i < end; ++i) {
      const T v = x[i];
      gs += v > t;
      es += v == t;
      us += v != v;
    }
    c.greater += gs;
    c.equal += es;
    c.nan += us;
  }
  return c;
}
#endif

}  // namespace

#if defined(__wasm_simd128__)
Counts count_f32_scalar(const float* x, size_t n, float t) {
  return count_wasm<float, 4>(
      x, n, t, [](v128_t a, v128_t b) { return wasm_f32x4_gt(a, b); },
      [](v128_t a, v128_t b) { return wasm_f32x4_eq(a, b); }, [](v128_t a, v128_t b) { return wasm_f32x4_ne(a, b); },
      [](float v) { return wasm_f32x4_splat(v); });
}
Counts count_f64_scalar(const double* x, size_t n, double t) {
  return count_wasm<double, 2>(
      x, n, t, [](v128_t a, v128_t b) { return wasm_f64x2_gt(a, b); },
      [](v128_t a, v128_t b) { return wasm_f64x2_eq(a, b); }, [](v128_t a, v128_t b) { return wasm_f64x2_ne(a, b); },
      [](double v) { return wasm_f64x2_splat(v); });
}
#else
Counts count_f32_scalar(const float* x, size_t n, float t) { return count_generic(x, n, t); }
Counts count_f64_scalar(const double* x, size_t n, double t) { return count_generic(x, n, t); }
#endif

Counts answers_f32_scalar(const float* row, const uint32_t* entries, size_t n, uint32_t mask, int32_t own, float t) {
  Counts c;
  for (size_t k = 0; k < n; ++k) {
    const uint32_t b = entries[k] & mask;
    if (static_cast<int32_t>(b) == own) continue;
    const float v = row[b];
    c.greater += v > t;
    c.equal += v == t;
    c.nan += v == v;
  }
  return c;
}

Counts masked_count_f32_scalar(const float* x, const uint16_t* bits, size_t n, float t) {
  // Only the selected columns are compared: the set bits of each word, lowest first (a dense set's bits are a few per
  // word). The columns still ascend, so the hardware prefetcher streams the row. Counts fit 32 bits: n < 2^32.
  uint32_t g = 0, e = 0, u = 0;
  const size_t words = (n + 15) / 16;
  for (size_t w = 0; w < words; ++w) {
    // The last word's bits past n select nothing.
    uint32_t word = bits[w];
    if (16 * w + 16 > n) word &= (1u << (n - 16 * w)) - 1u;
    const float* v = x + 16 * w;
    while (word != 0) {
      const float y = v[__builtin_ctz(word)];
      word &= word - 1;
      g += y > t;
      e += y == t;
      u += y == y;
    }
  }
  Counts c;
  c.greater = g;
  c.equal = e;
  c.nan = u;
  return c;
}

void rank_chunk_sums_scalar(const double* x, size_t n, const double* ks, size_t num_k, uint64_t* hits, uint32_t* hist,
                            bool centred, RankChunkSums* out) {
  RankChunkSums& o = *out;
  rank_sums_init(o);
  const size_t full = n - n % kSumLanes;
  size_t groups = 0;
  for (size_t i = 0; i < full; i += kSumLanes) {
    for (int l = 0; l < kSumLanes; ++l) rank_step(o, l, x[i + l]);
    if (++groups == kRenormaliseGroups) {
      rank_renormalise(o);
      groups = 0;
    }
  }
  for (size_t i = full; i < n; ++i) rank_step(o, static_cast<int>(i - full), x[i]);
  rank_renormalise(o);
  for (size_t j = 0; j < num_k; ++j) {
    uint64_t h = 0;
    for (size_t i = 0; i < n; ++i) h += x[i] <= ks[j];
    hits[j] += h;
  }
  if (hist != nullptr) {
    for (size_t i = 0; i < n; ++i) ++hist[rank_key(rank_bits(x[i]))];
  }
  if (centred && n > 0) {
    const double mean = rank_lanes_mean(o, n);
    o.mean = mean;
    for (size_t i = 0; i < full; i += kSumLanes) {
      for (int l = 0; l < kSumLanes; ++l) centred_step(o, l, x[i + l], mean);
    }
    for (size_t i = full; i < n; ++i) centred_step(o, static_cast<int>(i - full), x[i], mean);
  }
}

uint64_t read_scalar(const unsigned char* p, size_t bytes) {
  uint64_t acc = 0;
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    acc += w;
  }
  for (; i < bytes; ++i) acc += p[i];
  return acc;
}

void generate_ranks_small_scalar(const double* num_candidates, uint32_t n, uint32_t key, double* out) {
  generate_ranks_small_body(num_candidates, n, key, out);
}

void lane_statistic_sums_scalar(const double* num_candidates, const double* weights, uint32_t n, const uint32_t* keys,
                                LaneTerm term, double k, double* sums) {
  lane_statistic_sums_any(num_candidates, weights, n, keys, term, k, sums);
}

void keyed_swaps_scalar(uint32_t key, uint32_t first, uint32_t count, uint8_t* out) {
  keyed_swaps_body(key, first, count, out);
}

void keyed_picks_scalar(uint32_t key, uint32_t first, uint32_t count, double n, int32_t* out) {
  keyed_picks_body(key, first, count, n, out);
}

void masked_lane_sums_scalar(const uint8_t* mask, const double* z, size_t len, double* lanes) {
  masked_lane_sums_body(mask, z, len, lanes);
}

void weighted_lane_sums_scalar(const uint32_t* counts, const double* x, size_t len, double* lanes) {
  weighted_lane_sums_body(counts, x, len, lanes);
}

}  // namespace isa
}  // namespace kgrank
