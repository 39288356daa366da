// Fuzz target: paired resampling (resample.h), compare's replicates, on inputs as compare builds them (ranks >= 1 with
// ties within and between the runs, finite per-task columns, the medians' index arrays from the ranks).
//   definition     every replicate equals the definition written out: the swaps or draws from the keyed stream,
//                  each column summed over them in 32 interleaved lanes folded in halves, and each median by sorting
//                  the replicate's rank vector;
//   invariance     every SIMD level and thread count, and medians' windows of 8 and of 0 standard deviations (every
//                  median then counted in full), give the same bits.
#include "fuzz_common.h"
#include "resample.h"
#include "resample_reference.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  const size_t n = p.ConsumeIntegralInRange<size_t>(1, 300);
  const size_t cols = p.ConsumeIntegralInRange<size_t>(0, 3);
  const int spread = p.ConsumeIntegralInRange<int>(1, 40);
  std::vector<double> a(n), b(n), x(cols * n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = 1 + p.ConsumeIntegralInRange<int>(0, spread) / 2.0;
    b[i] = p.ConsumeBool() ? a[i] : 1 + p.ConsumeIntegralInRange<int>(0, spread) / 2.0;
  }
  for (double& v : x) v = p.ConsumeFloatingPointInRange<double>(-1e6, 1e6);
  const uint32_t key = p.ConsumeIntegral<uint32_t>();
  const uint32_t first = p.ConsumeIntegralInRange<uint32_t>(0, 1u << 30);
  const size_t count = p.ConsumeIntegralInRange<size_t>(1, 12);

  const kgrank_test::PairedFixture f(a, b, x, cols);
  kgrank::PairedColumns c = f.columns();
  const size_t width = cols + 2;
  for (kgrank::Resampling kind : {kgrank::Resampling::Randomization, kgrank::Resampling::Bootstrap}) {
    const std::vector<double> want = f.reference(kind, key, first, count);
    for (kgrank::SimdLevel level : kgrank_fuzz::levels()) {
      for (unsigned threads : {1u, 2u}) {
        for (double window : {8.0, 0.0}) {
          c.window = window;
          std::vector<double> got(count * width, -1.0);
          kgrank::paired_resample(kind, c, key, first, count, got.data(), threads, level);
          FUZZ_CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(double)) == 0);
        }
      }
    }
  }
  return 0;
}
