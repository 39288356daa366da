// AVX-512 kernels (compiled with -mavx512f -mavx512bw -mavx512dq -mavx512vl; only called when CPUID and XCR0
// allow it). Compares write opmask registers; popcount of the mask counts matches. The tail uses masked loads,
// so there is no scalar remainder loop.
#include <immintrin.h>

#include "kernels.h"

namespace kgrank {
namespace isa {

Counts count_f32_avx512(const float* x, size_t n, float t) {
  Counts c;
  const __m512 vt = _mm512_set1_ps(t);
  uint64_t g = 0, e = 0, u = 0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    _mm_prefetch(reinterpret_cast<const char*>(x + i) + 1024, _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(x + i) + 1088, _MM_HINT_T0);
    const __m512 a = _mm512_loadu_ps(x + i);
    const __m512 b = _mm512_loadu_ps(x + i + 16);
    const uint32_t ga = _mm512_cmp_ps_mask(a, vt, _CMP_GT_OQ), gb = _mm512_cmp_ps_mask(b, vt, _CMP_GT_OQ);
    const uint32_t ea = _mm512_cmp_ps_mask(a, vt, _CMP_EQ_OQ), eb = _mm512_cmp_ps_mask(b, vt, _CMP_EQ_OQ);
    const uint32_t ua = _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), ub = _mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q);
    g += static_cast<uint64_t>(_mm_popcnt_u32(ga | (gb << 16)));
    e += static_cast<uint64_t>(_mm_popcnt_u32(ea | (eb << 16)));
    u += static_cast<uint64_t>(_mm_popcnt_u32(ua | (ub << 16)));
  }
  for (; i < n; i += 16) {
    const size_t left = n - i;
    const __mmask16 k = left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
    const __m512 a = _mm512_maskz_loadu_ps(k, x + i);
    g += static_cast<uint64_t>(_mm_popcnt_u32(_mm512_mask_cmp_ps_mask(k, a, vt, _CMP_GT_OQ)));
    e += static_cast<uint64_t>(_mm_popcnt_u32(_mm512_mask_cmp_ps_mask(k, a, vt, _CMP_EQ_OQ)));
    u += static_cast<uint64_t>(_mm_popcnt_u32(_mm512_mask_cmp_ps_mask(k, a, a, _CMP_UNORD_Q)));
  }
  c.greater = g;
  c.equal = e;
  c.nan = u;
  return c;
}

Counts count_f64_avx512(const double* x, size_t n, double t) {
  Counts c;
  const __m512d vt = _mm512_set1_pd(t);
  uint64_t g = 0, e = 0, u = 0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm_prefetch(reinterpret_cast<const char*>(x + i) + 1024, _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(x + i) + 1088, _MM_HINT_T0);
    const __m512d a = _mm512_loadu_pd(x + i);
    const __m512d b = _mm512_loadu_pd(x + i + 8);
    const uint32_t ga = _mm512_cmp_pd_mask(a, vt, _CMP_GT_OQ), gb = _mm512_cmp_pd_mask(b, vt, _CMP_GT_OQ);
    const uint32_t ea = _mm512_cmp_pd_mask(a, vt, _CMP_EQ_OQ), eb = _mm512_cmp_pd_mask(b, vt, _CMP_EQ_OQ);
    const uint32_t ua = _mm512_cmp_pd_mask(a, a, _CMP_UNORD_Q), ub = _mm512_cmp_pd_mask(b, b, _CMP_UNORD_Q);
    g += static_cast<uint64_t>(_mm_popcnt_u32(ga | (gb << 8)));
    e += static_cast<uint64_t>(_mm_popcnt_u32(ea | (eb << 8)));
    u += static_cast<uint64_t>(_mm_popcnt_u32(ua | (ub << 8)));
  }
  for (; i < n; i += 8) {
    const size_t left = n - i;
    const __mmask8 k = left >= 8 ? static_cast<__mmask8>(0xFF) : static_cast<__mmask8>((1u << left) - 1u);
    const __m512d a = _mm512_maskz_loadu_pd(k, x + i);
    g += static_cast<uint64_t>(_mm_popcnt_u32(_mm512_mask_cmp_pd_mask(k, a, vt, _CMP_GT_OQ)));
    e += static_cast<uint64_t>(_mm_popcnt_u32(_mm512_mask_cmp_pd_mask(k, a, vt, _CMP_EQ_OQ)));
    u += static_cast<uint64_t>(_mm_popcnt_u32(_mm512_mask_cmp_pd_mask(k, a, a, _CMP_UNORD_Q)));
  }
  c.greater = g;
  c.equal = e;
  c.nan = u;
  return c;
}

uint64_t read_avx512(const unsigned char* p, size_t bytes) {
  __m512i a0 = _mm512_setzero_si512(), a1 = _mm512_setzero_si512();
  size_t i = 0;
  for (; i + 128 <= bytes; i += 128) {
    a0 = _mm512_add_epi64(a0, _mm512_loadu_si512(p + i));
    a1 = _mm512_add_epi64(a1, _mm512_loadu_si512(p + i + 64));
  }
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, _mm512_add_epi64(a0, a1));
  uint64_t acc = 0;
  for (uint64_t lane : lanes) acc += lane;
  return acc + read_scalar(p + i, bytes - i);
}

}  // namespace isa
}  // namespace kgrank
