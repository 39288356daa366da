// AVX2 kernels (compiled with -mavx2 -mfma -mbmi2 -mpopcnt; only called when CPUID and XCR0 allow it).
// Compare masks are all-ones lanes (-1); subtracting them from lane accumulators counts matches, which needs
// two instructions per compare (compare + subtract) instead of compare + movemask + popcount + add.
#include <immintrin.h>
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels.h"
#include "rank_sums.h"
#include "sampling.h"

namespace kgrank {
namespace isa {

namespace {
// Software prefetch distance for the counting loops: 6 KiB, as the AVX-512 kernel. The read probe gets slower with
// the same prefetch, so it stays a plain read. Measured (1, 3 and 6 KiB): BENCHMARKS.md, "Notes moved from the kernel
// sources", kernels_avx2.cpp kPrefetchBytes.
constexpr size_t kPrefetchBytes = 6144;

inline uint64_t hsum_epi32(__m256i v) {
  // Lanes hold counts below 2^31; widen to 64 bits before adding.
  const __m256i lo = _mm256_cvtepu32_epi64(_mm256_castsi256_si128(v));
  const __m256i hi = _mm256_cvtepu32_epi64(_mm256_extracti128_si256(v, 1));
  const __m256i s = _mm256_add_epi64(lo, hi);
  alignas(32) uint64_t out[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(out), s);
  return out[0] + out[1] + out[2] + out[3];
}

inline uint64_t hsum_epi64(__m256i v) {
  alignas(32) uint64_t out[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(out), v);
  return out[0] + out[1] + out[2] + out[3];
}

// No side work in the counting loop (count_f32_avx2).
struct NoSide {
  void step(size_t) {}
};

// A row's known answers taken out eight at a time, at most one block per step of the counting loop that streams the
// same row (count_answers_f32_avx2): answers_f32_avx2's block; the last (fewer than eight) answers as
// answers_f32_scalar.
class AnswerSide {
 public:
  explicit AnswerSide(const AnswerJob& job)
      : job_(job),
        mask_(_mm256_set1_epi32(static_cast<int>(job.mask))),
        own_(_mm256_set1_epi32(job.own)),
        t_(_mm256_set1_ps(job.t)) {}

  // The loop has loaded columns [0, done) before its current step: a block runs once its last answer lies among them
  // (one step behind the loads in flight, so its gathers hit L1).
  void step(size_t done) {
    if (k_ + 8 <= job_.count && (job_.entries[k_ + 7] & job_.mask) < done) block();
  }

  // The blocks the loop left, the tail, then the lane sums; *own_found: whether the own answer is among the entries.
  Counts finish(bool* own_found) {
    while (k_ + 8 <= job_.count) block();
    Counts c = answers_f32_scalar(job_.row, job_.entries + k_, job_.count - k_, job_.mask, job_.own, job_.t);
    for (size_t k = k_; k < job_.count; ++k) own_seen_ |= static_cast<int32_t>(job_.entries[k] & job_.mask) == job_.own;
    *own_found = own_seen_ != 0;
    c.greater += hsum_epi32(g_);
    c.equal += hsum_epi32(e_);
    c.nan += hsum_epi32(u_);
    return c;
  }

 private:
  void block() {
    const __m256i idx =
        _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(job_.entries + k_)), mask_);
    const __m256 v = _mm256_i32gather_ps(job_.row, idx, 4);
    const __m256i is_own = _mm256_cmpeq_epi32(idx, own_);
    own_seen_ |= static_cast<unsigned>(_mm256_movemask_epi8(is_own));
    const __m256i keep = _mm256_xor_si256(is_own, _mm256_set1_epi32(-1));
    g_ = _mm256_sub_epi32(g_, _mm256_and_si256(keep, _mm256_castps_si256(_mm256_cmp_ps(v, t_, _CMP_GT_OQ))));
    e_ = _mm256_sub_epi32(e_, _mm256_and_si256(keep, _mm256_castps_si256(_mm256_cmp_ps(v, t_, _CMP_EQ_OQ))));
    u_ = _mm256_sub_epi32(u_, _mm256_and_si256(keep, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_ORD_Q))));
    k_ += 8;
  }

  const AnswerJob& job_;
  const __m256i mask_, own_;
  const __m256 t_;
  // Lane counts: each lane gains at most one per block, and a row has fewer than 2^31 answers.
  __m256i g_ = _mm256_setzero_si256(), e_ = _mm256_setzero_si256(), u_ = _mm256_setzero_si256();
  size_t k_ = 0;
  unsigned own_seen_ = 0;
};

// side.step() runs once per step of 32 columns.
template <typename Side>
Counts count_f32_body(const float* x, size_t n, float t, Side& side) {
  Counts c;
  const __m256 vt = _mm256_set1_ps(t);
  size_t i = 0;
  // Each lane gains at most 4 per 32-element step; 2^21 steps per block keeps lanes far below 2^31.
  constexpr size_t kBlock = size_t{1} << 26;
  while (i + 32 <= n) {
    const size_t block_end = (n - i > kBlock ? i + kBlock : n);
    __m256i g = _mm256_setzero_si256(), e = _mm256_setzero_si256(), u = _mm256_setzero_si256();
    for (; i + 32 <= block_end; i += 32) {
      _mm_prefetch(reinterpret_cast<const char*>(x + i) + kPrefetchBytes, _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(x + i) + kPrefetchBytes + 64, _MM_HINT_T0);
      const __m256 a = _mm256_loadu_ps(x + i);
      const __m256 b = _mm256_loadu_ps(x + i + 8);
      const __m256 cc = _mm256_loadu_ps(x + i + 16);
      const __m256 d = _mm256_loadu_ps(x + i + 24);
      const __m256i gab = _mm256_add_epi32(_mm256_castps_si256(_mm256_cmp_ps(a, vt, _CMP_GT_OQ)),
                                           _mm256_castps_si256(_mm256_cmp_ps(b, vt, _CMP_GT_OQ)));
      const __m256i gcd = _mm256_add_epi32(_mm256_castps_si256(_mm256_cmp_ps(cc, vt, _CMP_GT_OQ)),
                                           _mm256_castps_si256(_mm256_cmp_ps(d, vt, _CMP_GT_OQ)));
      const __m256i eab = _mm256_add_epi32(_mm256_castps_si256(_mm256_cmp_ps(a, vt, _CMP_EQ_OQ)),
                                           _mm256_castps_si256(_mm256_cmp_ps(b, vt, _CMP_EQ_OQ)));
      const __m256i ecd = _mm256_add_epi32(_mm256_castps_si256(_mm256_cmp_ps(cc, vt, _CMP_EQ_OQ)),
                                           _mm256_castps_si256(_mm256_cmp_ps(d, vt, _CMP_EQ_OQ)));
      const __m256i uab = _mm256_add_epi32(_mm256_castps_si256(_mm256_cmp_ps(a, a, _CMP_UNORD_Q)),
                                           _mm256_castps_si256(_mm256_cmp_ps(b, b, _CMP_UNORD_Q)));
      const __m256i ucd = _mm256_add_epi32(_mm256_castps_si256(_mm256_cmp_ps(cc, cc, _CMP_UNORD_Q)),
                                           _mm256_castps_si256(_mm256_cmp_ps(d, d, _CMP_UNORD_Q)));
      g = _mm256_sub_epi32(g, _mm256_add_epi32(gab, gcd));
      e = _mm256_sub_epi32(e, _mm256_add_epi32(eab, ecd));
      u = _mm256_sub_epi32(u, _mm256_add_epi32(uab, ucd));
      side.step(i);
    }
    c.greater += hsum_epi32(g);
    c.equal += hsum_epi32(e);
    c.nan += hsum_epi32(u);
  }
  // Up to three 8-wide steps before the scalar tail: short rows (e.g. 500 sampled negatives) keep most of their
  // elements on the vector path.
  if (i + 8 <= n) {
    __m256i g = _mm256_setzero_si256(), e = _mm256_setzero_si256(), u = _mm256_setzero_si256();
    for (; i + 8 <= n; i += 8) {
      const __m256 a = _mm256_loadu_ps(x + i);
      g = _mm256_sub_epi32(g, _mm256_castps_si256(_mm256_cmp_ps(a, vt, _CMP_GT_OQ)));
      e = _mm256_sub_epi32(e, _mm256_castps_si256(_mm256_cmp_ps(a, vt, _CMP_EQ_OQ)));
      u = _mm256_sub_epi32(u, _mm256_castps_si256(_mm256_cmp_ps(a, a, _CMP_UNORD_Q)));
    }
    c.greater += hsum_epi32(g);
    c.equal += hsum_epi32(e);
    c.nan += hsum_epi32(u);
  }
  for (; i < n; ++i) {
    const float v = x[i];
    c.greater += v > t;
    c.equal += v == t;
    c.nan += v != v;
  }
  return c;
}

}  // namespace

Counts count_f32_avx2(const float* x, size_t n, float t) {
  NoSide none;
  return count_f32_body(x, n, t, none);
}

Counts count_answers_f32_avx2(const float* x, size_t n, float t, const AnswerJob& job, Counts* known, bool* own_found) {
  AnswerSide side(job);
  const Counts c = count_f32_body(x, n, t, side);
  *known = side.finish(own_found);
  return c;
}

Counts count_f64_avx2(const double* x, size_t n, double t) {
  Counts c;
  const __m256d vt = _mm256_set1_pd(t);
  __m256i g = _mm256_setzero_si256(), e = _mm256_setzero_si256(), u = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_prefetch(reinterpret_cast<const char*>(x + i) + kPrefetchBytes, _MM_HINT_T0);
    const __m256d a = _mm256_loadu_pd(x + i);
    const __m256d b = _mm256_loadu_pd(x + i + 4);
    const __m256i ga = _mm256_castpd_si256(_mm256_cmp_pd(a, vt, _CMP_GT_OQ));
    const __m256i gb = _mm256_castpd_si256(_mm256_cmp_pd(b, vt, _CMP_GT_OQ));
    const __m256i ea = _mm256_castpd_si256(_mm256_cmp_pd(a, vt, _CMP_EQ_OQ));
    const __m256i eb = _mm256_castpd_si256(_mm256_cmp_pd(b, vt, _CMP_EQ_OQ));
    const __m256i ua = _mm256_castpd_si256(_mm256_cmp_pd(a, a, _CMP_UNORD_Q));
    const __m256i ub = _mm256_castpd_si256(_mm256_cmp_pd(b, b, _CMP_UNORD_Q));
    g = _mm256_sub_epi64(g, _mm256_add_epi64(ga, gb));
    e = _mm256_sub_epi64(e, _mm256_add_epi64(ea, eb));
    u = _mm256_sub_epi64(u, _mm256_add_epi64(ua, ub));
  }
  c.greater = hsum_epi64(g);
  c.equal = hsum_epi64(e);
  c.nan = hsum_epi64(u);
  for (; i < n; ++i) {
    const double v = x[i];
    c.greater += v > t;
    c.equal += v == t;
    c.nan += v != v;
  }
  return c;
}

Counts answers_f32_avx2(const float* row, const uint32_t* entries, size_t n, uint32_t mask, int32_t own, float t) {
  // Eight answers at a time (AnswerSide's blocks): decode the ids, gather their scores, compare; the true answer's own
  // lane is masked out; the tail (fewer than eight) as answers_f32_scalar.
  const AnswerJob job{row, entries, n, mask, own, t};
  AnswerSide side(job);
  bool own_found = false;
  return side.finish(&own_found);
}

// The aggregate's chunk kernel (rank_sums.h): lane l of the scalar version is element l % 4 of vector l / 4 here,
// every lane sees the same operations in the same order, so the results are the same bits.
void rank_chunk_sums_avx2(const double* x, size_t n, const double* ks, size_t num_k, uint64_t* hits, uint32_t* hist,
                          bool centred, RankChunkSums* out) {
  RankChunkSums& o = *out;
  rank_sums_init(o);
  const size_t full = n - n % kSumLanes;
  const __m256d one = _mm256_set1_pd(1.0), dmax = _mm256_set1_pd(1.7976931348623157e308);
  const __m256d two52 = _mm256_set1_pd(kTwo52);
  const __m256i mant = _mm256_set1_epi64x(static_cast<long long>(kMantissaBits));
  const __m256i onebits = _mm256_set1_epi64x(static_cast<long long>(kOneBits));
  const __m256i bias = _mm256_set1_epi64x(1023), ones = _mm256_set1_epi64x(1);
  __m256d s[4], c[4], si[4], ci[4], m[4];
  for (int j = 0; j < 4; ++j) {
    s[j] = c[j] = si[j] = ci[j] = _mm256_setzero_pd();
    m[j] = one;
  }
  __m256i e = _mm256_setzero_si256(), bad = _mm256_setzero_si256(), nothalf = _mm256_setzero_si256();
  size_t groups = 0;
  for (size_t i = 0; i < full; i += kSumLanes) {
    for (int j = 0; j < 4; ++j) {
      const __m256d v = _mm256_loadu_pd(x + i + 4 * j);
      const __m256d y = _mm256_sub_pd(v, c[j]);
      const __m256d t = _mm256_add_pd(s[j], y);
      c[j] = _mm256_sub_pd(_mm256_sub_pd(t, s[j]), y);
      s[j] = t;
      const __m256d inv = _mm256_div_pd(one, v);
      const __m256d yi = _mm256_sub_pd(inv, ci[j]);
      const __m256d ti = _mm256_add_pd(si[j], yi);
      ci[j] = _mm256_sub_pd(_mm256_sub_pd(ti, si[j]), yi);
      si[j] = ti;
      const __m256i b = _mm256_castpd_si256(v);
      e = _mm256_add_epi64(e, _mm256_sub_epi64(_mm256_srli_epi64(b, 52), bias));
      m[j] = _mm256_mul_pd(m[j], _mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(b, mant), onebits)));
      const __m256d valid = _mm256_and_pd(_mm256_cmp_pd(v, one, _CMP_GE_OQ), _mm256_cmp_pd(v, dmax, _CMP_LE_OQ));
      bad = _mm256_add_epi64(bad, _mm256_add_epi64(ones, _mm256_castpd_si256(valid)));  // 1 + (-1 or 0)
      const __m256d d = _mm256_add_pd(v, v);
      const __m256d r = _mm256_sub_pd(_mm256_add_pd(d, two52), two52);
      const __m256d half = _mm256_or_pd(_mm256_cmp_pd(d, two52, _CMP_GE_OQ), _mm256_cmp_pd(r, d, _CMP_EQ_OQ));
      nothalf = _mm256_add_epi64(nothalf, _mm256_add_epi64(ones, _mm256_castpd_si256(half)));
    }
    if (++groups == kRenormaliseGroups) {
      for (int j = 0; j < 4; ++j) {
        const __m256i b = _mm256_castpd_si256(m[j]);
        e = _mm256_add_epi64(e, _mm256_sub_epi64(_mm256_srli_epi64(b, 52), bias));
        m[j] = _mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(b, mant), onebits));
      }
      groups = 0;
    }
  }
  for (int j = 0; j < 4; ++j) {
    _mm256_storeu_pd(o.s + 4 * j, s[j]);
    _mm256_storeu_pd(o.c + 4 * j, c[j]);
    _mm256_storeu_pd(o.si + 4 * j, si[j]);
    _mm256_storeu_pd(o.ci + 4 * j, ci[j]);
    _mm256_storeu_pd(o.m + 4 * j, m[j]);
  }
  o.e = static_cast<int64_t>(hsum_epi64(e));
  o.invalid = hsum_epi64(bad);
  o.not_half = hsum_epi64(nothalf);
  for (size_t i = full; i < n; ++i) rank_step(o, static_cast<int>(i - full), x[i]);
  rank_renormalise(o);
  const size_t full4 = n - n % 4;
  for (size_t j = 0; j < num_k; ++j) {
    const __m256d vk = _mm256_set1_pd(ks[j]);
    __m256i h = _mm256_setzero_si256();
    for (size_t i = 0; i < full4; i += 4) {
      h = _mm256_sub_epi64(h, _mm256_castpd_si256(_mm256_cmp_pd(_mm256_loadu_pd(x + i), vk, _CMP_LE_OQ)));
    }
    uint64_t count = hsum_epi64(h);
    for (size_t i = full4; i < n; ++i) count += x[i] <= ks[j];
    hits[j] += count;
  }
  if (hist != nullptr) {
    for (size_t i = 0; i < n; ++i) ++hist[rank_key(rank_bits(x[i]))];
  }
  if (centred && n > 0) {
    const double mean = rank_lanes_mean(o, n);
    o.mean = mean;
    const __m256d vm = _mm256_set1_pd(mean);
    __m256d q[4], qc[4];
    for (int j = 0; j < 4; ++j) q[j] = qc[j] = _mm256_setzero_pd();
    for (size_t i = 0; i < full; i += kSumLanes) {
      for (int j = 0; j < 4; ++j) {
        const __m256d d = _mm256_sub_pd(_mm256_loadu_pd(x + i + 4 * j), vm);
        __m256d sq = _mm256_mul_pd(d, d);
        KGRANK_UNFUSED(sq);
        const __m256d y = _mm256_sub_pd(sq, qc[j]);
        const __m256d t = _mm256_add_pd(q[j], y);
        qc[j] = _mm256_sub_pd(_mm256_sub_pd(t, q[j]), y);
        q[j] = t;
      }
    }
    for (int j = 0; j < 4; ++j) {
      _mm256_storeu_pd(o.m2 + 4 * j, q[j]);
      _mm256_storeu_pd(o.m2c + 4 * j, qc[j]);
    }
    for (size_t i = full; i < n; ++i) centred_step(o, static_cast<int>(i - full), x[i], mean);
  }
}

Counts masked_count_f32_avx2(const float* x, const uint16_t* bits, size_t n, float t) {
  // count_f32_avx2's way (a compare is all-ones, so subtracting it counts) under the set's bits: each byte of bits
  // becomes a lane mask (broadcast, AND with the lane's bit, compare equal). 16 columns per step, no branch; the
  // 32-bit lane counts are flushed every 2^26 columns.
  const __m256 vt = _mm256_set1_ps(t);
  const __m256i lane_bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  const auto lanes = [&](unsigned byte) {
    const __m256i b = _mm256_and_si256(_mm256_set1_epi32(static_cast<int>(byte)), lane_bit);
    return _mm256_cmpeq_epi32(b, lane_bit);
  };
  Counts c;
  size_t i = 0;
  while (i + 16 <= n) {
    const size_t block_end = n - i > (size_t{1} << 26) ? i + (size_t{1} << 26) : n;
    __m256i g = _mm256_setzero_si256(), e = _mm256_setzero_si256(), u = _mm256_setzero_si256();
    for (; i + 16 <= block_end; i += 16) {
      const unsigned word = bits[i / 16];
      const __m256i m0 = lanes(word & 0xFFu);
      const __m256i m1 = lanes(word >> 8);
      const __m256 a = _mm256_loadu_ps(x + i);
      const __m256 b = _mm256_loadu_ps(x + i + 8);
      const auto under = [](__m256 cmp, __m256i m) { return _mm256_and_si256(_mm256_castps_si256(cmp), m); };
      g = _mm256_sub_epi32(g, _mm256_add_epi32(under(_mm256_cmp_ps(a, vt, _CMP_GT_OQ), m0),
                                               under(_mm256_cmp_ps(b, vt, _CMP_GT_OQ), m1)));
      e = _mm256_sub_epi32(e, _mm256_add_epi32(under(_mm256_cmp_ps(a, vt, _CMP_EQ_OQ), m0),
                                               under(_mm256_cmp_ps(b, vt, _CMP_EQ_OQ), m1)));
      u = _mm256_sub_epi32(
          u, _mm256_add_epi32(under(_mm256_cmp_ps(a, a, _CMP_ORD_Q), m0), under(_mm256_cmp_ps(b, b, _CMP_ORD_Q), m1)));
    }
    alignas(32) uint32_t lg[8], le[8], lu[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lg), g);
    _mm256_store_si256(reinterpret_cast<__m256i*>(le), e);
    _mm256_store_si256(reinterpret_cast<__m256i*>(lu), u);
    for (int k = 0; k < 8; ++k) {
      c.greater += lg[k];
      c.equal += le[k];
      c.nan += lu[k];
    }
  }
  if (i < n) {
    // The last partial step: its bits start at bit 0 of its word.
    const Counts r = masked_count_f32_scalar(x + i, bits + i / 16, n - i, t);
    c.greater += r.greater;
    c.equal += r.equal;
    c.nan += r.nan;
  }
  return c;
}

// From the first 32-byte boundary on, so no load splits a cache line; four independent sums. Streaming: the same
// with non-temporal loads (vmovntdqa), which some CPUs stream faster from memory (the probe takes the best of both).
template <bool Streaming>
uint64_t read_body_avx2(const unsigned char* p, size_t bytes) {
  const size_t head = std::min(bytes, static_cast<size_t>((32 - reinterpret_cast<uintptr_t>(p) % 32) % 32));
  uint64_t acc = read_scalar(p, head);
  const auto load = [p](size_t at) {
    const auto* v = reinterpret_cast<const __m256i*>(p + at);
    return Streaming ? _mm256_stream_load_si256(v) : _mm256_load_si256(v);
  };
  __m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256();
  __m256i a2 = _mm256_setzero_si256(), a3 = _mm256_setzero_si256();
  size_t i = head;
  for (; i + 128 <= bytes; i += 128) {
    a0 = _mm256_add_epi64(a0, load(i));
    a1 = _mm256_add_epi64(a1, load(i + 32));
    a2 = _mm256_add_epi64(a2, load(i + 64));
    a3 = _mm256_add_epi64(a3, load(i + 96));
  }
  acc += hsum_epi64(_mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3)));
  return acc + read_scalar(p + i, bytes - i);
}

uint64_t read_avx2(const unsigned char* p, size_t bytes) { return read_body_avx2<false>(p, bytes); }
uint64_t read_stream_avx2(const unsigned char* p, size_t bytes) { return read_body_avx2<true>(p, bytes); }

void generate_ranks_small_avx2(const double* num_candidates, uint32_t n, uint32_t key, double* out) {
  generate_ranks_small_body(num_candidates, n, key, out);
}

void lane_statistic_sums_avx2(const double* num_candidates, const double* weights, uint32_t n, const uint32_t* keys,
                              LaneTerm term, double k, double* sums) {
  lane_statistic_sums_any(num_candidates, weights, n, keys, term, k, sums);
}

void keyed_swaps_avx2(uint32_t key, uint32_t first, uint32_t count, uint8_t* out) {
  keyed_swaps_body(key, first, count, out);
}

void keyed_picks_avx2(uint32_t key, uint32_t first, uint32_t count, double n, int32_t* out) {
  keyed_picks_body(key, first, count, n, out);
}

// masked_lane_sums_body with the mask widened to 64-bit lanes: z where set, +0.0 where not, added to eight vectors of
// four lanes.
void masked_lane_sums_avx2(const uint8_t* mask, const double* z, size_t len, double* lanes) {
  static_assert(kResampleLanes == 32, "eight vectors of four lanes");
  __m256d a[8];
  for (int v = 0; v < 8; ++v) a[v] = _mm256_loadu_pd(lanes + 4 * v);
  const __m256i zero = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 32 <= len; i += 32) {
    for (int v = 0; v < 8; ++v) {
      int32_t four;
      std::memcpy(&four, mask + i + 4 * v, 4);
      const __m256i wide = _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(four));
      const __m256d keep = _mm256_castsi256_pd(_mm256_cmpgt_epi64(wide, zero));
      a[v] = _mm256_add_pd(a[v], _mm256_and_pd(keep, _mm256_loadu_pd(z + i + 4 * v)));
    }
  }
  for (int v = 0; v < 8; ++v) _mm256_storeu_pd(lanes + 4 * v, a[v]);
  for (size_t j = 0; i < len; ++i, ++j) lanes[j] += mask[i] ? z[i] : 0.0;
}

void weighted_lane_sums_avx2(const uint32_t* counts, const double* x, size_t len, double* lanes) {
  weighted_lane_sums_body(counts, x, len, lanes);
}

}  // namespace isa
}  // namespace kgrank
