// WebAssembly SIMD128 traits of the interaction micro-kernel (interaction_kernel.h); compiled only into the
// WebAssembly build (scripts/build-wasm.mjs, -msimd128), where they are the scalar level's kernel (the build has
// that one level). 4 float lanes; a panel is 8 entities; blocks of 4 queries. Each trait is one IEEE operation with
// the scalar traits' rounding: add, sub, mul and sqrt are SIMD128's own (correctly rounded, subnormals kept), and
// the fused multiply-add SIMD128 lacks is computed exactly as one rounding: in float64 the product of two floats is
// exact, and the sum with the third rounds to float as the exact value does unless it lies on a float rounding
// boundary (then it is recomputed rounded to odd: an inexact result with an even significand steps one unit toward
// the exact value, found by TwoSum), which gives the correctly rounded fma - the result of
// std::fma and of the FMA instructions of the x86-64 and NEON kernels, bit for bit (round to odd needs 2 more bits
// than the target's 24; float64 has 53). So every lane computes a score as score_one() does (the parity, embedding
// and top-k tests compare it with the native levels).
#include <wasm_simd128.h>

#include "interaction_kernel.h"

namespace kgrank {
namespace {

// a * b + c in float64 for two lanes of floats widened to float64 (a * b exact), rounded to odd.
inline v128_t fma_odd(v128_t a, v128_t b, v128_t c) {
  const v128_t p = wasm_f64x2_mul(a, b);
  const v128_t s = wasm_f64x2_add(p, c);
  const v128_t bb = wasm_f64x2_sub(s, p);
  const v128_t err = wasm_f64x2_add(wasm_f64x2_sub(p, wasm_f64x2_sub(s, bb)), wasm_f64x2_sub(c, bb));
  // Inexact, finite and even: one step toward the error (away from zero when it has the sum's sign).
  const v128_t inexact = wasm_f64x2_ne(err, wasm_f64x2_splat(0.0));
  const v128_t finite = wasm_f64x2_lt(wasm_f64x2_abs(s), wasm_f64x2_splat(__builtin_inf()));
  const v128_t even = wasm_i64x2_eq(wasm_v128_and(s, wasm_i64x2_splat(1)), wasm_i64x2_splat(0));
  const v128_t step = wasm_v128_or(wasm_i64x2_shr(wasm_v128_xor(err, s), 63), wasm_i64x2_splat(1));  // +1 or -1
  return wasm_i64x2_add(s, wasm_v128_and(step, wasm_v128_and(wasm_v128_and(inexact, finite), even)));
}

inline v128_t low(v128_t v) { return wasm_f64x2_promote_low_f32x4(v); }
inline v128_t high(v128_t v) { return wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(v, v, 2, 3, 2, 3)); }

// Lanes where rounding the float64 sum s to float may differ from rounding the exact sum: s exactly halfway between
// two normal floats (its low 29 significand bits 1 followed by zeros; also the overflow threshold) or in the
// subnormal float range (fewer bits; 0 is exact). Elsewhere no float rounding boundary lies between s and the exact
// sum (s is the nearest float64 to it, and every boundary is a float64), so both round alike.
inline v128_t doubtful(v128_t s) {
  const v128_t mid = wasm_i64x2_eq(wasm_v128_and(s, wasm_i64x2_splat(0x1FFFFFFF)), wasm_i64x2_splat(0x10000000));
  const v128_t a = wasm_f64x2_abs(s);
  const v128_t tiny =
      wasm_v128_and(wasm_f64x2_lt(a, wasm_f64x2_splat(0x1p-126)), wasm_f64x2_gt(a, wasm_f64x2_splat(0.0)));
  return wasm_v128_or(mid, tiny);
}

// fma(a, b, c) per float lane, one rounding: the float64 sum, rounded to odd only when a lane is doubtful (rare).
inline v128_t fused(v128_t a, v128_t b, v128_t c) {
  const v128_t al = low(a), bl = low(b), cl = low(c), ah = high(a), bh = high(b), ch = high(c);
  v128_t sl = wasm_f64x2_add(wasm_f64x2_mul(al, bl), cl);
  v128_t sh = wasm_f64x2_add(wasm_f64x2_mul(ah, bh), ch);
  if (wasm_v128_any_true(wasm_v128_or(doubtful(sl), doubtful(sh)))) {
    sl = fma_odd(al, bl, cl);
    sh = fma_odd(ah, bh, ch);
  }
  return wasm_i32x4_shuffle(wasm_f32x4_demote_f64x2_zero(sl), wasm_f32x4_demote_f64x2_zero(sh), 0, 1, 4, 5);
}

struct Wasm128 {
  using V = v128_t;
  static constexpr size_t kLanes = 4;
  static V zero() { return wasm_f32x4_splat(0.0f); }
  static V set1(float x) { return wasm_f32x4_splat(x); }
  static V load(const float* p) { return wasm_v128_load(p); }
  static void store(float* p, V v) { wasm_v128_store(p, v); }
  static V add(V a, V b) { return wasm_f32x4_add(a, b); }
  static V sub(V a, V b) { return wasm_f32x4_sub(a, b); }
  static V mul(V a, V b) { return wasm_f32x4_mul(a, b); }
  static V fma(V a, V b, V c) { return fused(a, b, c); }
  static V fnmadd(V a, V b, V c) { return fused(wasm_f32x4_neg(a), b, c); }  // c - a * b, one rounding
  static V abs(V a) { return wasm_f32x4_abs(a); }
  static V sqrt(V a) { return wasm_f32x4_sqrt(a); }
  static constexpr size_t kQueries = 4;
  static unsigned gt(V a, V b) { return static_cast<unsigned>(wasm_i32x4_bitmask(wasm_f32x4_gt(a, b))); }
  static unsigned eq(V a, V b) { return static_cast<unsigned>(wasm_i32x4_bitmask(wasm_f32x4_eq(a, b))); }
  static unsigned unord(V a, V b) {
    return static_cast<unsigned>(
        wasm_i32x4_bitmask(wasm_v128_not(wasm_v128_and(wasm_f32x4_eq(a, a), wasm_f32x4_eq(b, b)))));
  }
  static uint32_t popcount(unsigned m) { return static_cast<uint32_t>(__builtin_popcount(m)); }
};

}  // namespace

namespace isa {
void packed_scores_wasm(const ChunkPlan& plan, size_t row, const float* pack, size_t n, float* out) {
  interaction_detail::Micro<Wasm128>::packed_dispatch(plan, row, pack, n, out);
}
void relation_columns_wasm(ScoreOp op, const float* qt, const float* ct, size_t stride, const float* x, size_t dim,
                           size_t n, float* out) {
  interaction_detail::Micro<Wasm128>::columns_dispatch(op, qt, ct, stride, x, dim, n, out);
}
void rank_chunk_wasm(const ChunkPlan& plan, size_t begin, size_t end, uint32_t* greater, uint32_t* equal, uint32_t* nan,
                     float* pack) {
  interaction_detail::Micro<Wasm128>::dispatch(plan, begin, end, greater, equal, nan, pack);
}
}  // namespace isa
}  // namespace kgrank
