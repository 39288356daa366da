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
  static uint32_t popcount(unsigned m) { return static_cast<uint32_t>(_mm_popcnt_u32(m)); }
  // The zero-masked form with every lane selected is the same vsqrtps; _mm512_sqrt_ps passes an undefined vector
  // as its (unused) merge source, which GCC reports as -Wmaybe-uninitialized once inlined.
  static V sqrt(V a) { return _mm512_maskz_sqrt_ps(static_cast<__mmask16>(0xFFFF), a); }
};
}  // namespace

namespace isa {
void packed_scores_avx512(const ChunkPlan& plan, size_t row, const float* pack, size_t n, float* out) {
  interaction_detail::Micro<Avx512>::packed_dispatch(plan, row, pack, n, out);
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
