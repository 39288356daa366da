// NEON (AArch64 Advanced SIMD) traits of the interaction micro-kernel (interaction_kernel.h); compiled for aarch64
// only (native/sources.gypi kgrank_neon_sources), where Advanced SIMD is part of the base ISA. 4 float lanes; a panel
// is 8 entities; blocks of 8 queries (16 of the 32 vector registers accumulate). Each trait is one IEEE operation
// with the scalar traits' rounding: vfmaq_f32 / vfmsq_f32 are fused (one rounding, as std::fma in the scalar
// traits and the FMA intrinsics on x86-64), vsqrtq_f32 is correctly rounded, AArch64 SIMD keeps subnormals (FPCR.FZ
// is 0 under Linux and macOS), and the core is built with -ffp-contract=off, so the compiler fuses nothing the
// kernel did not ask for: every lane computes a score bit for bit as score_one() does (test_interaction,
// fuzz_interaction and the arm64 ctest under qemu check it).
#include <arm_neon.h>

#include <bitset>

#include "interaction_kernel.h"

namespace kgrank {
namespace {
struct Neon {
  using V = float32x4_t;
  static constexpr size_t kLanes = 4;
  static V zero() { return vdupq_n_f32(0.0f); }
  static V set1(float x) { return vdupq_n_f32(x); }
  static V load(const float* p) { return vld1q_f32(p); }
  static void store(float* p, V v) { vst1q_f32(p, v); }
  static V add(V a, V b) { return vaddq_f32(a, b); }
  static V sub(V a, V b) { return vsubq_f32(a, b); }
  static V mul(V a, V b) { return vmulq_f32(a, b); }
  static V fma(V a, V b, V c) { return vfmaq_f32(c, a, b); }     // c + a * b, one rounding
  static V fnmadd(V a, V b, V c) { return vfmsq_f32(c, a, b); }  // c - a * b, one rounding
  static V abs(V a) { return vabsq_f32(a); }
  static V sqrt(V a) { return vsqrtq_f32(a); }
  static constexpr size_t kQueries = 8;
  // A lane mask (all-ones / zero per lane) as bits 0..3, as _mm256_movemask_ps gives them.
  static unsigned bits(uint32x4_t m) {
    static const uint32_t weights[4] = {1, 2, 4, 8};
    return vaddvq_u32(vandq_u32(m, vld1q_u32(weights)));
  }
  static unsigned gt(V a, V b) { return bits(vcgtq_f32(a, b)); }  // ordered: false with a NaN, as _CMP_GT_OQ
  static unsigned eq(V a, V b) { return bits(vceqq_f32(a, b)); }
  static unsigned unord(V a, V b) { return bits(vmvnq_u32(vandq_u32(vceqq_f32(a, a), vceqq_f32(b, b)))); }
  static uint32_t popcount(unsigned m) { return static_cast<uint32_t>(std::bitset<32>(m).count()); }
};
}  // namespace

namespace isa {
void packed_scores_neon(const ChunkPlan& plan, size_t row, const float* pack, size_t n, float* out) {
  interaction_detail::Micro<Neon>::packed_dispatch(plan, row, pack, n, out);
}
void relation_columns_neon(ScoreOp op, const float* qt, const float* ct, size_t stride, const float* x, size_t dim,
                           size_t n, float* out) {
  interaction_detail::Micro<Neon>::columns_dispatch(op, qt, ct, stride, x, dim, n, out);
}
void rank_chunk_neon(const ChunkPlan& plan, size_t begin, size_t end, uint32_t* greater, uint32_t* equal, uint32_t* nan,
                     float* pack) {
  interaction_detail::Micro<Neon>::dispatch(plan, begin, end, greater, equal, nan, pack);
}
double fma_probe_neon(size_t iterations) { return interaction_detail::Micro<Neon>::probe(iterations); }
}  // namespace isa
}  // namespace kgrank
