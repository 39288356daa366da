// AVX-512 traits of the interaction micro-kernel (interaction_kernel.h); compiled with -mavx512f (+vl, bw, dq), called
// only when the CPU and OS allow it (simd.cpp). 16 float lanes; a panel is 32 entities; blocks of 8 queries (16 of the
// 32 registers accumulate).
#include <immintrin.h>

#include "interaction_kernel.h"

namespace kgrank {
namespace {
struct Avx512 {
  using V = __m512;
  static constexpr size_t kLanes = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V fnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
  static V abs(V a) { return _mm512_abs_ps(a); }
  static constexpr size_t kQueries = 8;
  static unsigned gt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static unsigned eq(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  static unsigned unord(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q); }
  static unsigned equ(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_UQ); }  // equal or unordered
  static uint32_t popcount(unsigned m) { return static_cast<uint32_t>(_mm_popcnt_u32(m)); }
  // The zero-masked form with every lane selected is the same vsqrtps; _mm512_sqrt_ps passes an undefined vector
  // as its (unused) merge source, which GCC reports as -Wmaybe-uninitialized once inlined.
  static V sqrt(V a) { return _mm512_maskz_sqrt_ps(static_cast<__mmask16>(0xFFFF), a); }
  // dst[kk * stride + l] = src[l * src_stride + kk] for kk, l < 16: transpose_rows of 16 consecutive rows, for the
  // chunk's pack (interaction_kernel.h).
  static void transpose(const float* src, size_t src_stride, float* dst, size_t stride) {
    const float* rows[16];
    for (size_t i = 0; i < 16; ++i) rows[i] = src + i * src_stride;
    transpose_rows(rows, 0, dst, stride);
  }
  // dst[kk * stride + l] = rows[l][k0 + kk] for kk, l < 16, from 16 rows anywhere: the 16 x 16 block in registers
  // (interleave pairs of rows, then pairs of pairs, then 128-bit lanes twice), for transpose and Micro::pack_list.
  // The shuffles are the zero-masked forms with every lane selected, as sqrt above (the same instructions, no
  // undefined source).
  static constexpr __mmask16 kAll = 0xFFFF;
  static constexpr __mmask8 kAll8 = 0xFF;
  static void transpose_rows(const float* const* rows, size_t k0, float* dst, size_t stride) {
    __m512 r[16], t[16];
    for (size_t i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(rows[i] + k0);
    for (size_t i = 0; i < 16; i += 2) {
      t[i] = _mm512_maskz_unpacklo_ps(kAll, r[i], r[i + 1]);      // a0 b0 a1 b1 | a4 b4 a5 b5 | ...
      t[i + 1] = _mm512_maskz_unpackhi_ps(kAll, r[i], r[i + 1]);  // a2 b2 a3 b3 | a6 b6 a7 b7 | ...
    }
    for (size_t i = 0; i < 16; i += 4) {
      const __m512d t0 = _mm512_castps_pd(t[i]), t1 = _mm512_castps_pd(t[i + 1]);
      const __m512d t2 = _mm512_castps_pd(t[i + 2]), t3 = _mm512_castps_pd(t[i + 3]);
      r[i] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(kAll8, t0, t2));      // element 0 (4, 8, 12) of rows i .. i + 3
      r[i + 1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(kAll8, t0, t2));  // element 1 (5, 9, 13)
      r[i + 2] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(kAll8, t1, t3));  // element 2 (6, 10, 14)
      r[i + 3] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(kAll8, t1, t3));  // element 3 (7, 11, 15)
    }
    for (size_t c = 0; c < 4; ++c) {  // r[c], r[4 + c], r[8 + c], r[12 + c]: elements c, 4 + c, 8 + c, 12 + c
      const __m512 lo0 = _mm512_maskz_shuffle_f32x4(kAll, r[c], r[4 + c], 0x88),
                   lo1 = _mm512_maskz_shuffle_f32x4(kAll, r[8 + c], r[12 + c], 0x88);
      const __m512 hi0 = _mm512_maskz_shuffle_f32x4(kAll, r[c], r[4 + c], 0xdd),
                   hi1 = _mm512_maskz_shuffle_f32x4(kAll, r[8 + c], r[12 + c], 0xdd);
      _mm512_storeu_ps(dst + c * stride, _mm512_maskz_shuffle_f32x4(kAll, lo0, lo1, 0x88));
      _mm512_storeu_ps(dst + (8 + c) * stride, _mm512_maskz_shuffle_f32x4(kAll, lo0, lo1, 0xdd));
      _mm512_storeu_ps(dst + (4 + c) * stride, _mm512_maskz_shuffle_f32x4(kAll, hi0, hi1, 0x88));
      _mm512_storeu_ps(dst + (12 + c) * stride, _mm512_maskz_shuffle_f32x4(kAll, hi0, hi1, 0xdd));
    }
  }
};
}  // namespace

namespace isa {
void packed_scores_avx512(const ChunkPlan& plan, size_t row, const float* pack, size_t n, float* out) {
  interaction_detail::Micro<Avx512>::packed_dispatch(plan, row, pack, n, out);
}
void pair_dots_avx512(const float* q, size_t dim, const float* entity, size_t width, const uint32_t* rows,
                      const uint32_t* ids, size_t n, float* out) {
  interaction_detail::Micro<Avx512>::pair_dots(q, dim, entity, width, rows, ids, n, out);
}
void pair_l2_avx512(const float* q, size_t dim, const float* entity, size_t width, const uint32_t* rows,
                    const uint32_t* ids, size_t n, float* out) {
  interaction_detail::Micro<Avx512>::pair_dots<ScoreOp::L2Squared>(q, dim, entity, width, rows, ids, n, out);
}
void pack_list_avx512(const ChunkPlan& plan, const uint32_t* ids, size_t n, float* pack) {
  interaction_detail::Micro<Avx512>::pack_list(plan, ids, n, pack);
}
void relation_columns_avx512(ScoreOp op, const float* qt, const float* ct, size_t stride, const float* x, size_t dim,
                             size_t n, float* out) {
  interaction_detail::Micro<Avx512>::columns_dispatch(op, qt, ct, stride, x, dim, n, out);
}
void rank_chunk_avx512(const ChunkPlan& plan, size_t begin, size_t end, uint32_t* greater, uint32_t* equal,
                       uint32_t* nan, float* pack) {
  interaction_detail::Micro<Avx512>::dispatch(plan, begin, end, greater, equal, nan, pack);
}
double fma_probe_avx512(size_t iterations) { return interaction_detail::Micro<Avx512>::probe(iterations); }
}  // namespace isa
}  // namespace kgrank
