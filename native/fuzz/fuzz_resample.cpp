// Fuzz target: paired resampling (resample.h), compare's replicates, on inputs as compare builds them (ranks >= 1 with
// ties within and between the runs, finite per-task columns, the medians' index arrays from the ranks).
//   definition     every replicate equals the definition written out: the swaps or draws from the keyed stream,
//                  each column summed over them in 32 interleaved lanes folded in halves, and each median by sorting
//                  the replicate's rank vector;
//   invariance     every SIMD level and thread count, and medians' windows of 8 and of 0 standard deviations (every
//                  median then counted in full), give the same bits.
#include <algorithm>

#include "fuzz_common.h"
#include "resample.h"
#include "sampling.h"

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

  std::vector<double> values(a);
  values.insert(values.end(), b.begin(), b.end());
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  const auto at = [&](double v) {
    return static_cast<uint32_t>(std::lower_bound(values.begin(), values.end(), v) - values.begin());
  };
  std::vector<uint32_t> ia(n), ib(n), oa(n), ob(n);
  std::vector<double> sa(n), sb(n);
  for (size_t i = 0; i < n; ++i) {
    ia[i] = at(a[i]);
    ib[i] = at(b[i]);
    oa[i] = ob[i] = static_cast<uint32_t>(i);
  }
  std::stable_sort(oa.begin(), oa.end(), [&](uint32_t i, uint32_t j) { return a[i] < a[j]; });
  std::stable_sort(ob.begin(), ob.end(), [&](uint32_t i, uint32_t j) { return b[i] < b[j]; });
  for (size_t k = 0; k < n; ++k) {
    sa[k] = a[oa[k]];
    sb[k] = b[ob[k]];
  }
  kgrank::PairedColumns c;
  c.n = n;
  c.cols = cols;
  c.x = x.data();
  c.medians = true;
  c.index_a = ia.data();
  c.index_b = ib.data();
  c.values = values.data();
  c.num_values = values.size();
  c.order_a = oa.data();
  c.order_b = ob.data();
  c.sorted_a = sa.data();
  c.sorted_b = sb.data();
  const size_t width = cols + 2;
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const double lo = v[(v.size() - 1) / 2], hi = v[v.size() / 2];
    return lo + (hi - lo) / 2;
  };
  for (kgrank::Resampling kind : {kgrank::Resampling::Randomization, kgrank::Resampling::Bootstrap}) {
    const bool randomization = kind == kgrank::Resampling::Randomization;
    std::vector<double> want(count * width);
    for (size_t r = 0; r < count; ++r) {
      const uint32_t k = kgrank::stream_key(key, static_cast<uint32_t>(first + r));
      std::vector<double> lanes(cols * 32, 0.0), ra(n), rb(n);
      std::vector<uint32_t> drawn(n, 0);
      for (size_t i = 0; i < n; ++i) {
        const double u = kgrank::uniform01_keyed(k, static_cast<uint32_t>(i));
        if (randomization) {
          ra[i] = u < 0.5 ? b[i] : a[i];
          rb[i] = u < 0.5 ? a[i] : b[i];
        } else {
          const size_t pick = static_cast<size_t>(std::floor(u * static_cast<double>(n)));
          ++drawn[pick];
          ra[i] = a[pick];
          rb[i] = b[pick];
        }
      }
      for (size_t i = 0; i < n; ++i) {
        const bool swap = kgrank::uniform01_keyed(k, static_cast<uint32_t>(i)) < 0.5;
        for (size_t col = 0; col < cols; ++col) {
          const double v = x[col * n + i];
          lanes[col * 32 + i % 32] += randomization ? (swap ? v : 0.0) : static_cast<double>(drawn[i]) * v;
        }
      }
      for (size_t col = 0; col < cols; ++col) {
        double* l = lanes.data() + col * 32;
        for (size_t w = 16; w >= 1; w /= 2) {
          for (size_t j = 0; j < w; ++j) l[j] += l[j + w];
        }
        want[r * width + col] = l[0];
      }
      want[r * width + cols] = median(ra);
      want[r * width + cols + 1] = median(rb);
    }
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
