// Portable kernels: plain C++ compiled for the baseline target (the compiler may auto-vectorize them, e.g. SSE2).
#include <cstring>

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
}  // namespace

Counts count_f32_scalar(const float* x, size_t n, float t) { return count_generic(x, n, t); }
Counts count_f64_scalar(const double* x, size_t n, double t) { return count_generic(x, n, t); }

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

}  // namespace isa
}  // namespace kgrank
