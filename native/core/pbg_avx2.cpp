// The AVX2 level of pbg_compare's panel kernel (pbg_kernel.h): 4 vectors of 4 doubles, 16 candidates.
#include <immintrin.h>

#include "pbg_kernel.h"

namespace kgrank {
namespace {

struct Avx2Ops {
  using V = __m256d;
  static constexpr size_t N = 4;
  static V zero() { return _mm256_setzero_pd(); }
  static V set1(double x) { return _mm256_set1_pd(x); }
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static V sub(V a, V b) { return _mm256_sub_pd(a, b); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
};
static_assert(Avx2Ops::N * 4 == kPbgLanesAvx2, "the AVX2 panel's width");

}  // namespace

namespace isa {

void pbg_panel_avx2(const PbgCompareJob& job, const double* panel, const double* bias, size_t first, size_t lanes,
                    double* out) {
  pbg_detail::panel<Avx2Ops, 4>(job, panel, bias, first, lanes, out);
}

}  // namespace isa
}  // namespace kgrank
