// The AVX-512 level of pbg_compare's panel kernel (pbg_kernel.h): 4 vectors of 8 doubles, 32 candidates.
#include <immintrin.h>

#include "pbg_kernel.h"

namespace kgrank {
namespace {

struct Avx512Ops {
  using V = __m512d;
  static constexpr size_t N = 8;
  static V zero() { return _mm512_setzero_pd(); }
  static V set1(double x) { return _mm512_set1_pd(x); }
  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static void store(double* p, V v) { _mm512_storeu_pd(p, v); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static V sub(V a, V b) { return _mm512_sub_pd(a, b); }
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
};
static_assert(Avx512Ops::N * 4 == kPbgLanesAvx512, "the AVX-512 panel's width");

}  // namespace

namespace isa {

void pbg_panel_avx512(const PbgCompareJob& job, const double* panel, const double* bias, size_t first, size_t lanes,
                      double* out) {
  pbg_detail::panel<Avx512Ops, 4>(job, panel, bias, first, lanes, out);
}

}  // namespace isa
}  // namespace kgrank
