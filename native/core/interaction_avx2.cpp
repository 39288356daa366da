// AVX2 + FMA traits of the interaction micro-kernel (interaction_kernel.h); compiled with -mavx2 -mfma, called only
// when the CPU and OS allow it (simd.cpp). 8 float lanes; a panel is 16 entities; blocks of 6 queries (12 of the 16
// registers accumulate).
#include <immintrin.h>

#include "interaction_kernel.h"

namespace kgrank {
namespace {
struct Avx2 {
  using V = __m256;
  static constexpr size_t kLanes = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V fnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
  static V abs(V a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static constexpr size_t kQueries = 6;
  static unsigned gt(V a, V b) { return static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ))); }
  static unsigned eq(V a, V b) { return static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_EQ_OQ))); }
  static unsigned unord(V a, V b) {
    return static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_UNORD_Q)));
  }
  static unsigned equ(V a, V b) {  // equal or unordered
    return static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_EQ_UQ)));
  }
  static uint32_t popcount(unsigned m) { return static_cast<uint32_t>(_mm_popcnt_u32(m)); }
  static V sqrt(V a) { return _mm256_sqrt_ps(a); }
  // dst[kk * stride + l] = src[l * src_stride + kk] for kk, l < 8: transpose_rows of 8 consecutive rows, for the
  // chunk's pack (interaction_kernel.h).
  static void transpose(const float* src, size_t src_stride, float* dst, size_t stride) {
    const float* rows[8];
    for (size_t i = 0; i < 8; ++i) rows[i] = src + i * src_stride;
    transpose_rows(rows, 0, dst, stride);
  }
  // dst[kk * stride + l] = rows[l][k0 + kk] for kk, l < 8, from 8 rows anywhere: the 8 x 8 block in registers
  // (interleave pairs of rows, then pairs of pairs, then 128-bit halves), for transpose and Micro::pack_list.
  static void transpose_rows(const float* const* rows, size_t k0, float* dst, size_t stride) {
    __m256 r[8], t[8];
    for (size_t i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(rows[i] + k0);
    for (size_t i = 0; i < 8; i += 2) {
      t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);      // a0 b0 a1 b1 | a4 b4 a5 b5
      t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);  // a2 b2 a3 b3 | a6 b6 a7 b7
    }
    for (size_t i = 0; i < 8; i += 4) {
      r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);          // element 0 (4) of rows i .. i + 3
      r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);      // element 1 (5)
      r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);  // element 2 (6)
      r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);  // element 3 (7)
    }
    for (size_t c = 0; c < 4; ++c) {
      _mm256_storeu_ps(dst + c * stride, _mm256_permute2f128_ps(r[c], r[4 + c], 0x20));
      _mm256_storeu_ps(dst + (4 + c) * stride, _mm256_permute2f128_ps(r[c], r[4 + c], 0x31));
    }
  }
};
}  // namespace

namespace isa {
void packed_scores_avx2(const ChunkPlan& plan, size_t row, const float* pack, size_t n, float* out) {
  interaction_detail::Micro<Avx2>::packed_dispatch(plan, row, pack, n, out);
}
void pair_dots_avx2(const float* q, size_t dim, const float* entity, size_t width, const uint32_t* rows,
                    const uint32_t* ids, size_t n, float* out) {
  interaction_detail::Micro<Avx2>::pair_dots(q, dim, entity, width, rows, ids, n, out);
}
void pair_l2_avx2(const float* q, size_t dim, const float* entity, size_t width, const uint32_t* rows,
                  const uint32_t* ids, size_t n, float* out) {
  interaction_detail::Micro<Avx2>::pair_dots<ScoreOp::L2Squared>(q, dim, entity, width, rows, ids, n, out);
}
void pack_list_avx2(const ChunkPlan& plan, const uint32_t* ids, size_t n, float* pack) {
  interaction_detail::Micro<Avx2>::pack_list(plan, ids, n, pack);
}
void relation_columns_avx2(ScoreOp op, const float* qt, const float* ct, size_t stride, const float* x, size_t dim,
                           size_t n, float* out) {
  interaction_detail::Micro<Avx2>::columns_dispatch(op, qt, ct, stride, x, dim, n, out);
}
void rank_chunk_avx2(const ChunkPlan& plan, size_t begin, size_t end, uint32_t* greater, uint32_t* equal, uint32_t* nan,
                     float* pack) {
  interaction_detail::Micro<Avx2>::dispatch(plan, begin, end, greater, equal, nan, pack);
}
double fma_probe_avx2(size_t iterations) { return interaction_detail::Micro<Avx2>::probe(iterations); }
}  // namespace isa
}  // namespace kgrank
