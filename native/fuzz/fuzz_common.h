// Shared helpers of the libFuzzer targets (native/fuzz/fuzz_<name>.cpp, one target each; see native/CMakeLists.txt
// and scripts/fuzz.sh). A target decodes its input with FuzzedDataProvider, runs the core, compares with a plain
// oracle and calls FUZZ_CHECK, which aborts (a libFuzzer crash, saved as an artifact) on any mismatch.
#pragma once
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels.h"
#include "simd.h"

#define FUZZ_CHECK(cond)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

namespace kgrank_fuzz {

// Every SIMD level this binary and CPU support, scalar first.
inline const std::vector<kgrank::SimdLevel>& levels() {
  static const std::vector<kgrank::SimdLevel> out = [] {
    std::vector<kgrank::SimdLevel> v;
    for (kgrank::SimdLevel l :
         {kgrank::SimdLevel::Scalar, kgrank::SimdLevel::AVX2, kgrank::SimdLevel::AVX512, kgrank::SimdLevel::NEON}) {
      if (kgrank::simd_supported(l)) v.push_back(l);
    }
    return v;
  }();
  return out;
}

// A score: mostly from a small palette (ties, NaN, +-Inf, +-0, subnormals, extremes), else raw bits (any NaN
// payload, any value).
template <typename T>
T score(FuzzedDataProvider& p) {
  using L = std::numeric_limits<T>;
  const uint8_t pick = p.ConsumeIntegral<uint8_t>();
  switch (pick % 16) {
    case 0: return T(0);
    case 1: return -T(0);
    case 2: return L::infinity();
    case 3: return -L::infinity();
    case 4: return L::quiet_NaN();
    case 5: return -L::quiet_NaN();
    case 6: return L::denorm_min();
    case 7: return L::max();
    case 8: return L::lowest();
    case 9: {
      using U = typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type;
      const U bits = p.ConsumeIntegral<U>();
      T v;
      std::memcpy(&v, &bits, sizeof v);
      return v;
    }
    default: return static_cast<T>(static_cast<int>(pick >> 4) - 4);  // small integers: many ties
  }
}

// Plain oracle of one run: > t, == t (IEEE), NaN.
template <typename T>
kgrank::Counts reference(const T* x, size_t n, T t) {
  kgrank::Counts c;
  for (size_t i = 0; i < n; ++i) {
    c.greater += x[i] > t;
    c.equal += x[i] == t;
    c.nan += std::isnan(x[i]);
  }
  return c;
}

inline bool same(const kgrank::Counts& a, const kgrank::Counts& b) {
  return a.greater == b.greater && a.equal == b.equal && a.nan == b.nan;
}

}  // namespace kgrank_fuzz
