// AVX-512 kernels (compiled with -mavx512f -mavx512bw -mavx512dq -mavx512vl; only called when CPUID and XCR0
// allow it).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels.h"
#include "sampling.h"

namespace kgrank {
namespace isa {

namespace {
// Software prefetch distance: 6 KiB, chosen by the time of the counting pass against the read probe's over
// distances from 1 to 12 KiB (and none), both standalone and through the library's thread pool. Measured:
// BENCHMARKS.md, "Notes moved from the kernel sources", kernels_avx512.cpp kPrefetchBytes.
constexpr size_t kPrefetchBytes = 6144;
// Each 32-bit lane gains at most 2 per step of 32 floats (16 doubles): reduce to 64 bits every 2^26 elements.
constexpr size_t kBlock = size_t{1} << 26;

// Lane sums through memory: GCC 12 warns (falsely) about its own extract intrinsics.
inline uint64_t hsum(__m512i v) {
  alignas(64) uint32_t lanes[16];
  _mm512_store_si512(lanes, v);
  uint64_t s = 0;
  for (uint32_t x : lanes) s += x;
  return s;
}

inline uint64_t hsum64(__m512i v) {
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, v);
  uint64_t s = 0;
  for (uint64_t x : lanes) s += x;
  return s;
}

inline void prefetch_line_pair(const void* p) {
  _mm_prefetch(static_cast<const char*>(p) + kPrefetchBytes, _MM_HINT_T0);
  _mm_prefetch(static_cast<const char*>(p) + kPrefetchBytes + 64, _MM_HINT_T0);
}
}  // namespace

namespace {

// No side work in the counting loop (count_f32_avx512).
struct NoSide {
  void step(size_t) {}
};

// A row's known answers taken out sixteen at a time, at most one block per step of the counting loop that streams the
// same row (count_answers_f32_avx512): answers_f32_avx512's block, its counts in vector lanes.
class AnswerSide {
 public:
  explicit AnswerSide(const AnswerJob& job)
      : job_(job),
        mask_(_mm512_set1_epi32(static_cast<int>(job.mask))),
        own_(_mm512_set1_epi32(job.own)),
        t_(_mm512_set1_ps(job.t)) {}

  // The loop has loaded columns [0, done) before its current step: a block runs once its last answer lies among them
  // (one step behind the loads in flight, so its gathers hit L1).
  void step(size_t done) {
    if (k_ + 16 <= job_.count && (job_.entries[k_ + 15] & job_.mask) < done) block();
  }

  // The blocks the loop left, then the lane sums; *own_found: whether the own answer is among the entries.
  Counts finish(bool* own_found) {
    while (k_ < job_.count) block();
    *own_found = own_seen_ != 0;
    Counts c;
    c.greater = hsum(g_);
    c.equal = hsum(e_);
    c.nan = hsum(u_);
    return c;
  }

 private:
  void block() {
    const size_t left = job_.count - k_;
    const __mmask16 live = left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
    const __m512i idx = _mm512_and_si512(_mm512_maskz_loadu_epi32(live, job_.entries + k_), mask_);
    const __mmask16 keep = _mm512_mask_cmpneq_epi32_mask(live, idx, own_);
    own_seen_ |= static_cast<unsigned>(live & ~keep);
    const __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), keep, idx, job_.row, 4);
    const __m512i one = _mm512_set1_epi32(1);
    g_ = _mm512_mask_add_epi32(g_, _mm512_mask_cmp_ps_mask(keep, v, t_, _CMP_GT_OQ), g_, one);
    e_ = _mm512_mask_add_epi32(e_, _mm512_mask_cmp_ps_mask(keep, v, t_, _CMP_EQ_OQ), e_, one);
    u_ = _mm512_mask_add_epi32(u_, _mm512_mask_cmp_ps_mask(keep, v, v, _CMP_ORD_Q), u_, one);
    k_ += 16;
  }

  const AnswerJob& job_;
  const __m512i mask_, own_;
  const __m512 t_;
  // Lane counts: each lane gains at most one per block, and a row has fewer than 2^31 answers.
  __m512i g_ = _mm512_setzero_si512(), e_ = _mm512_setzero_si512(), u_ = _mm512_setzero_si512();
  size_t k_ = 0;
  unsigned own_seen_ = 0;
};

// Compares write opmask registers, and each mask adds one to the lanes it selects in a vector counter (a masked
// add): two vector instructions per compare and no mask moves, shifts or popcounts on the scalar side. The
// popcount form (compare, kmov, shift, or, popcnt, add) kept fewer loads in flight (measured: BENCHMARKS.md, "Notes
// moved from the kernel sources", kernels_avx512.cpp count_f32_body). side.step() runs once per step of 32.
template <typename Side>
Counts count_f32_body(const float* x, size_t n, float t, Side& side) {
  Counts c;
  const __m512 vt = _mm512_set1_ps(t);
  const __m512i one = _mm512_set1_epi32(1);
  size_t i = 0;
  while (i + 32 <= n) {
    const size_t block_end = n - i > kBlock ? i + kBlock : n;
    __m512i g = _mm512_setzero_si512(), e = _mm512_setzero_si512(), u = _mm512_setzero_si512();
    for (; i + 32 <= block_end; i += 32) {
      prefetch_line_pair(x + i);
      const __m512 a = _mm512_loadu_ps(x + i);
      const __m512 b = _mm512_loadu_ps(x + i + 16);
      g = _mm512_mask_add_epi32(g, _mm512_cmp_ps_mask(a, vt, _CMP_GT_OQ), g, one);
      e = _mm512_mask_add_epi32(e, _mm512_cmp_ps_mask(a, vt, _CMP_EQ_OQ), e, one);
      u = _mm512_mask_add_epi32(u, _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), u, one);
      g = _mm512_mask_add_epi32(g, _mm512_cmp_ps_mask(b, vt, _CMP_GT_OQ), g, one);
      e = _mm512_mask_add_epi32(e, _mm512_cmp_ps_mask(b, vt, _CMP_EQ_OQ), e, one);
      u = _mm512_mask_add_epi32(u, _mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q), u, one);
      side.step(i);
    }
    c.greater += hsum(g);
    c.equal += hsum(e);
    c.nan += hsum(u);
  }
  // The tail (fewer than 32) with masked loads: no scalar remainder loop.
  for (; i < n; i += 16) {
    const size_t left = n - i;
    const __mmask16 k = left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
    const __m512 a = _mm512_maskz_loadu_ps(k, x + i);
    c.greater += static_cast<uint64_t>(_mm_popcnt_u32(_mm512_mask_cmp_ps_mask(k, a, vt, _CMP_GT_OQ)));
    c.equal += static_cast<uint64_t>(_mm_popcnt_u32(_mm512_mask_cmp_ps_mask(k, a, vt, _CMP_EQ_OQ)));
    c.nan += static_cast<uint64_t>(_mm_popcnt_u32(_mm512_mask_cmp_ps_mask(k, a, a, _CMP_UNORD_Q)));
  }
  return c;
}

}  // namespace

Counts count_f32_avx512(const float* x, size_t n, float t) {
  NoSide none;
  return count_f32_body(x, n, t, none);
}

Counts count_answers_f32_avx512(const float* x, size_t n, float t, const AnswerJob& job, Counts* known,
                                bool* own_found) {
  AnswerSide side(job);
  const Counts c = count_f32_body(x, n, t, side);
  *known = side.finish(own_found);
  return c;
}

Counts count_f64_avx512(const double* x, size_t n, double t) {
  Counts c;
  const __m512d vt = _mm512_set1_pd(t);
  const __m512i one = _mm512_set1_epi64(1);
  size_t i = 0;
  // 64-bit lanes: no overflow to guard against.
  __m512i g = _mm512_setzero_si512(), e = _mm512_setzero_si512(), u = _mm512_setzero_si512();
  for (; i + 16 <= n; i += 16) {
    prefetch_line_pair(x + i);
    const __m512d a = _mm512_loadu_pd(x + i);
    const __m512d b = _mm512_loadu_pd(x + i + 8);
    g = _mm512_mask_add_epi64(g, _mm512_cmp_pd_mask(a, vt, _CMP_GT_OQ), g, one);
    e = _mm512_mask_add_epi64(e, _mm512_cmp_pd_mask(a, vt, _CMP_EQ_OQ), e, one);
    u = _mm512_mask_add_epi64(u, _mm512_cmp_pd_mask(a, a, _CMP_UNORD_Q), u, one);
    g = _mm512_mask_add_epi64(g, _mm512_cmp_pd_mask(b, vt, _CMP_GT_OQ), g, one);
    e = _mm512_mask_add_epi64(e, _mm512_cmp_pd_mask(b, vt, _CMP_EQ_OQ), e, one);
    u = _mm512_mask_add_epi64(u, _mm512_cmp_pd_mask(b, b, _CMP_UNORD_Q), u, one);
  }
  c.greater = hsum64(g);
  c.equal = hsum64(e);
  c.nan = hsum64(u);
  for (; i < n; i += 8) {
    const size_t left = n - i;
    const __mmask8 k = left >= 8 ? static_cast<__mmask8>(0xFF) : static_cast<__mmask8>((1u << left) - 1u);
    const __m512d a = _mm512_maskz_loadu_pd(k, x + i);
    c.greater += static_cast<uint64_t>(_mm_popcnt_u32(_mm512_mask_cmp_pd_mask(k, a, vt, _CMP_GT_OQ)));
    c.equal += static_cast<uint64_t>(_mm_popcnt_u32(_mm512_mask_cmp_pd_mask(k, a, vt, _CMP_EQ_OQ)));
    c.nan += static_cast<uint64_t>(_mm_popcnt_u32(_mm512_mask_cmp_pd_mask(k, a, a, _CMP_UNORD_Q)));
  }
  return c;
}

Counts answers_f32_avx512(const float* row, const uint32_t* entries, size_t n, uint32_t mask, int32_t own, float t) {
  // Sixteen answers at a time (AnswerSide's blocks): decode the ids, gather their scores, compare under a mask that
  // drops the true answer's own lane; the tail (fewer than 16) is a masked load and a masked gather.
  const AnswerJob job{row, entries, n, mask, own, t};
  AnswerSide side(job);
  bool own_found = false;
  return side.finish(&own_found);
}

Counts masked_count_f32_avx512(const float* x, const uint16_t* bits, size_t n, float t) {
  // count_f32_avx512's loop with each compare under its 16 bits of the set: 32 columns per step, counts in vector
  // lanes (32-bit, flushed every kBlock columns), no branch on the bits.
  Counts c;
  const __m512 vt = _mm512_set1_ps(t);
  const __m512i one = _mm512_set1_epi32(1);
  size_t i = 0;
  while (i + 32 <= n) {
    const size_t block_end = n - i > kBlock ? i + kBlock : n;
    __m512i g = _mm512_setzero_si512(), e = _mm512_setzero_si512(), u = _mm512_setzero_si512();
    for (; i + 32 <= block_end; i += 32) {
      prefetch_line_pair(x + i);
      const __mmask16 ka = static_cast<__mmask16>(bits[i / 16]);
      const __mmask16 kb = static_cast<__mmask16>(bits[i / 16 + 1]);
      const __m512 a = _mm512_loadu_ps(x + i);
      const __m512 b = _mm512_loadu_ps(x + i + 16);
      g = _mm512_mask_add_epi32(g, _mm512_mask_cmp_ps_mask(ka, a, vt, _CMP_GT_OQ), g, one);
      e = _mm512_mask_add_epi32(e, _mm512_mask_cmp_ps_mask(ka, a, vt, _CMP_EQ_OQ), e, one);
      u = _mm512_mask_add_epi32(u, _mm512_mask_cmp_ps_mask(ka, a, a, _CMP_ORD_Q), u, one);
      g = _mm512_mask_add_epi32(g, _mm512_mask_cmp_ps_mask(kb, b, vt, _CMP_GT_OQ), g, one);
      e = _mm512_mask_add_epi32(e, _mm512_mask_cmp_ps_mask(kb, b, vt, _CMP_EQ_OQ), e, one);
      u = _mm512_mask_add_epi32(u, _mm512_mask_cmp_ps_mask(kb, b, b, _CMP_ORD_Q), u, one);
    }
    c.greater += hsum(g);
    c.equal += hsum(e);
    c.nan += hsum(u);
  }
  // The tail (fewer than 32) with masked loads.
  for (; i < n; i += 16) {
    const size_t left = n - i;
    const __mmask16 live = left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
    const __mmask16 k = static_cast<__mmask16>(bits[i / 16] & live);
    const __m512 a = _mm512_maskz_loadu_ps(k, x + i);
    c.greater += static_cast<uint64_t>(_mm_popcnt_u32(_mm512_mask_cmp_ps_mask(k, a, vt, _CMP_GT_OQ)));
    c.equal += static_cast<uint64_t>(_mm_popcnt_u32(_mm512_mask_cmp_ps_mask(k, a, vt, _CMP_EQ_OQ)));
    c.nan += static_cast<uint64_t>(_mm_popcnt_u32(_mm512_mask_cmp_ps_mask(k, a, a, _CMP_ORD_Q)));
  }
  return c;
}

// From the first 64-byte boundary on, so no load splits a cache line; four independent sums. Streaming: the same
// with non-temporal loads (vmovntdqa), which some CPUs stream faster from memory (the probe takes the best of both).
template <bool Streaming>
uint64_t read_body_avx512(const unsigned char* p, size_t bytes) {
  const size_t head = std::min(bytes, static_cast<size_t>((64 - reinterpret_cast<uintptr_t>(p) % 64) % 64));
  uint64_t acc = read_scalar(p, head);
  const auto load = [p](size_t at) {
    const void* v = p + at;
    return Streaming ? _mm512_stream_load_si512(const_cast<void*>(v)) : _mm512_load_si512(v);
  };
  __m512i a0 = _mm512_setzero_si512(), a1 = _mm512_setzero_si512(), a2 = a0, a3 = a0;
  size_t i = head;
  for (; i + 256 <= bytes; i += 256) {
    a0 = _mm512_add_epi64(a0, load(i));
    a1 = _mm512_add_epi64(a1, load(i + 64));
    a2 = _mm512_add_epi64(a2, load(i + 128));
    a3 = _mm512_add_epi64(a3, load(i + 192));
  }
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, _mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3)));
  for (uint64_t lane : lanes) acc += lane;
  return acc + read_scalar(p + i, bytes - i);
}

uint64_t read_avx512(const unsigned char* p, size_t bytes) { return read_body_avx512<false>(p, bytes); }
uint64_t read_stream_avx512(const unsigned char* p, size_t bytes) { return read_body_avx512<true>(p, bytes); }

// The same loop as AVX2's, 16 lanes of 32-bit hashes per vector.
void generate_ranks_small_avx512(const double* num_candidates, uint32_t n, uint32_t key, double* out) {
  generate_ranks_small_body(num_candidates, n, key, out);
}

void lane_statistic_sums_avx512(const double* num_candidates, const double* weights, uint32_t n, const uint32_t* keys,
                                LaneTerm term, double k, double* sums) {
  lane_statistic_sums_any(num_candidates, weights, n, keys, term, k, sums);
}

void keyed_swaps_avx512(uint32_t key, uint32_t first, uint32_t count, uint8_t* out) {
  keyed_swaps_body(key, first, count, out);
}

void keyed_picks_avx512(uint32_t key, uint32_t first, uint32_t count, double n, int32_t* out) {
  keyed_picks_body(key, first, count, n, out);
}

// masked_lane_sums_body with a masked add per vector of eight lanes: the same sums, as a lane never holds -0 (it
// starts at +0, and x + y rounds an exact zero to +0), so leaving it unchanged equals adding +0.0 to it.
void masked_lane_sums_avx512(const uint8_t* mask, const double* z, size_t len, double* lanes) {
  static_assert(kResampleLanes == 32, "four vectors of eight lanes");
  __m512d a0 = _mm512_loadu_pd(lanes), a1 = _mm512_loadu_pd(lanes + 8);
  __m512d a2 = _mm512_loadu_pd(lanes + 16), a3 = _mm512_loadu_pd(lanes + 24);
  size_t i = 0;
  for (; i + 32 <= len; i += 32) {
    const __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(mask + i));
    const uint32_t bits = _mm256_test_epi8_mask(m, m);
    a0 = _mm512_mask_add_pd(a0, static_cast<__mmask8>(bits), a0, _mm512_loadu_pd(z + i));
    a1 = _mm512_mask_add_pd(a1, static_cast<__mmask8>(bits >> 8), a1, _mm512_loadu_pd(z + i + 8));
    a2 = _mm512_mask_add_pd(a2, static_cast<__mmask8>(bits >> 16), a2, _mm512_loadu_pd(z + i + 16));
    a3 = _mm512_mask_add_pd(a3, static_cast<__mmask8>(bits >> 24), a3, _mm512_loadu_pd(z + i + 24));
  }
  _mm512_storeu_pd(lanes, a0);
  _mm512_storeu_pd(lanes + 8, a1);
  _mm512_storeu_pd(lanes + 16, a2);
  _mm512_storeu_pd(lanes + 24, a3);
  for (size_t j = 0; i < len; ++i, ++j) lanes[j] += mask[i] ? z[i] : 0.0;
}

void weighted_lane_sums_avx512(const uint32_t* counts, const double* x, size_t len, double* lanes) {
  weighted_lane_sums_body(counts, x, len, lanes);
}

}  // namespace isa
}  // namespace kgrank
