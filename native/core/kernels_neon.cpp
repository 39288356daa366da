// NEON kernels for AArch64 (Advanced SIMD is part of the base ISA there). Compare results are all-ones lanes;
// subtracting them from unsigned lane accumulators counts matches.
#include <arm_neon.h>

#include "kernels.h"

namespace kgrank {
namespace isa {

Counts count_f32_neon(const float* x, size_t n, float t) {
  Counts c;
  const float32x4_t vt = vdupq_n_f32(t);
  size_t i = 0;
  constexpr size_t kBlock = size_t{1} << 26;  // lanes gain at most 2 per 8 elements: far below 2^32
  while (i + 8 <= n) {
    const size_t block_end = (n - i > kBlock ? i + kBlock : n);
    uint32x4_t g = vdupq_n_u32(0), e = vdupq_n_u32(0), u = vdupq_n_u32(0);
    for (; i + 8 <= block_end; i += 8) {
      const float32x4_t a = vld1q_f32(x + i);
      const float32x4_t b = vld1q_f32(x + i + 4);
      g = vsubq_u32(g, vaddq_u32(vcgtq_f32(a, vt), vcgtq_f32(b, vt)));
      e = vsubq_u32(e, vaddq_u32(vceqq_f32(a, vt), vceqq_f32(b, vt)));
      u = vsubq_u32(u, vaddq_u32(vmvnq_u32(vceqq_f32(a, a)), vmvnq_u32(vceqq_f32(b, b))));
    }
    c.greater += vaddlvq_u32(g);
    c.equal += vaddlvq_u32(e);
    c.nan += vaddlvq_u32(u);
  }
  for (; i < n; ++i) {
    const float v = x[i];
    c.greater += v > t;
    c.equal += v == t;
    c.nan += v != v;
  }
  return c;
}

Counts count_f64_neon(const double* x, size_t n, double t) {
  Counts c;
  const float64x2_t vt = vdupq_n_f64(t);
  uint64x2_t g = vdupq_n_u64(0), e = vdupq_n_u64(0), u = vdupq_n_u64(0);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float64x2_t a = vld1q_f64(x + i);
    const float64x2_t b = vld1q_f64(x + i + 2);
    g = vsubq_u64(g, vaddq_u64(vcgtq_f64(a, vt), vcgtq_f64(b, vt)));
    e = vsubq_u64(e, vaddq_u64(vceqq_f64(a, vt), vceqq_f64(b, vt)));
    const uint64x2_t na = veorq_u64(vceqq_f64(a, a), vdupq_n_u64(~uint64_t{0}));
    const uint64x2_t nb = veorq_u64(vceqq_f64(b, b), vdupq_n_u64(~uint64_t{0}));
    u = vsubq_u64(u, vaddq_u64(na, nb));
  }
  c.greater = vaddvq_u64(g);
  c.equal = vaddvq_u64(e);
  c.nan = vaddvq_u64(u);
  for (; i < n; ++i) {
    const double v = x[i];
    c.greater += v > t;
    c.equal += v == t;
    c.nan += v != v;
  }
  return c;
}

uint64_t read_neon(const unsigned char* p, size_t bytes) {
  uint64x2_t a0 = vdupq_n_u64(0), a1 = vdupq_n_u64(0), a2 = vdupq_n_u64(0), a3 = vdupq_n_u64(0);
  size_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    a0 = vaddq_u64(a0, vld1q_u64(reinterpret_cast<const uint64_t*>(p + i)));
    a1 = vaddq_u64(a1, vld1q_u64(reinterpret_cast<const uint64_t*>(p + i + 16)));
    a2 = vaddq_u64(a2, vld1q_u64(reinterpret_cast<const uint64_t*>(p + i + 32)));
    a3 = vaddq_u64(a3, vld1q_u64(reinterpret_cast<const uint64_t*>(p + i + 48)));
  }
  const uint64_t acc = vaddvq_u64(vaddq_u64(vaddq_u64(a0, a1), vaddq_u64(a2, a3)));
  return acc + read_scalar(p + i, bytes - i);
}

}  // namespace isa
}  // namespace kgrank
