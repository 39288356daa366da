// The chunk kernel's float32 FMA loop at AVX-512 (native/core/interaction_kernel.h Micro::run's Dot case), shared
// by bench/fma_block.cpp and bench/screen_dots.cpp so that both time the same loop.
#pragma once

#include <immintrin.h>

#include <cstddef>

namespace fma_bench {

// Q queries against every panel of the pack (32 entities each, element-major: panel[k * 32 + lane]).
template <int Q>
__attribute__((noinline)) unsigned block(const float* const* q, const float* pack, size_t dim, size_t panels) {
  unsigned count = 0;
  for (size_t pi = 0; pi < panels; ++pi) {
    const float* panel = pack + pi * dim * 32;
    __m512 acc[Q][2];
    for (int a = 0; a < Q; ++a) acc[a][0] = acc[a][1] = _mm512_setzero_ps();
    for (size_t k = 0; k < dim; ++k) {
      const __m512 x0 = _mm512_loadu_ps(panel + k * 32), x1 = _mm512_loadu_ps(panel + k * 32 + 16);
      for (int a = 0; a < Q; ++a) {
        const __m512 qv = _mm512_set1_ps(q[a][k]);
        acc[a][0] = _mm512_fmadd_ps(qv, x0, acc[a][0]);
        acc[a][1] = _mm512_fmadd_ps(qv, x1, acc[a][1]);
      }
    }
    for (int a = 0; a < Q; ++a) {
      count +=
          static_cast<unsigned>(__builtin_popcount(_mm512_cmp_ps_mask(acc[a][0], _mm512_setzero_ps(), _CMP_GT_OQ)));
      count +=
          static_cast<unsigned>(__builtin_popcount(_mm512_cmp_ps_mask(acc[a][1], _mm512_setzero_ps(), _CMP_GT_OQ)));
    }
  }
  return count;
}

}  // namespace fma_bench
