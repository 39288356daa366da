// Fuzz target: the rank-counting kernels at every SIMD level the CPU has, float32 and float64, against the plain
// loop (and so scalar against SIMD). Inputs decode to a run of scores (palette of NaN, +-Inf, -0, subnormals and
// small integers for ties, or raw bits), a start offset (unaligned loads) and a threshold that is either a special
// value or one of the run's own scores (the rank setting: the true candidate's score is in the row).
#include "count.h"
#include "fuzz_common.h"

namespace {

template <typename T>
void run(FuzzedDataProvider& p) {
  const size_t offset = p.ConsumeIntegralInRange<size_t>(0, 7);
  size_t n = p.ConsumeIntegralInRange<size_t>(0, 600);
  std::vector<T> buf(offset + n + 1);
  for (size_t i = 0; i < n; ++i) buf[offset + i] = kgrank_fuzz::score<T>(p);
  // Sometimes tile the run to cross the kernels' 32-wide main loop and block boundaries many times.
  if (n > 0 && p.ConsumeBool()) {
    const size_t times = p.ConsumeIntegralInRange<size_t>(2, 300);
    std::vector<T> tiled(offset + n * times + 1);
    for (size_t k = 0; k < times; ++k)
      std::copy(buf.begin() + offset, buf.begin() + offset + n, tiled.begin() + offset + k * n);
    buf.swap(tiled);
    n *= times;
  }
  const T* x = buf.data() + offset;
  T t;
  if (n > 0 && p.ConsumeBool()) {
    t = x[p.ConsumeIntegralInRange<size_t>(0, n - 1)];
  } else {
    t = kgrank_fuzz::score<T>(p);
  }
  const kgrank::Counts want = kgrank_fuzz::reference(x, n, t);
  for (kgrank::SimdLevel level : kgrank_fuzz::levels()) {
    const kgrank::Counts got = kgrank::count_run(x, n, t, level);
    if (!kgrank_fuzz::same(got, want)) {
      std::fprintf(stderr, "%s n=%zu offset=%zu: got (%llu, %llu, %llu), want (%llu, %llu, %llu)\n",
                   kgrank::simd_name(level), n, offset, (unsigned long long)got.greater, (unsigned long long)got.equal,
                   (unsigned long long)got.nan, (unsigned long long)want.greater, (unsigned long long)want.equal,
                   (unsigned long long)want.nan);
      FUZZ_CHECK(false);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  if (p.ConsumeBool()) {
    run<float>(p);
  } else {
    run<double>(p);
  }
  return 0;
}
