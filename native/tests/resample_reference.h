// The definition of paired resampling (resample.h) written out, for the ctest (test_metrics.cpp) and the fuzzer
// (fuzz_resample.cpp): two runs' ranks arranged as compare arranges them, and each replicate computed the plain way -
// the swaps or draws from the keyed stream, each column summed over them in 32 interleaved lanes folded in halves,
// each median by sorting the replicate's rank vector.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "resample.h"
#include "sampling.h"

namespace kgrank_test {

// Two runs' ranks with the arrays PairedColumns points into (cols x n columns in x).
struct PairedFixture {
  std::vector<double> a, b, x, values, sorted_a, sorted_b;
  std::vector<uint32_t> index_a, index_b, order_a, order_b;
  size_t cols = 0;

  PairedFixture(std::vector<double> ranks_a, std::vector<double> ranks_b, std::vector<double> columns, size_t c)
      : a(std::move(ranks_a)), b(std::move(ranks_b)), x(std::move(columns)), cols(c) {
    const size_t n = a.size();
    values = a;
    values.insert(values.end(), b.begin(), b.end());
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    const auto at = [&](double v) {
      return static_cast<uint32_t>(std::lower_bound(values.begin(), values.end(), v) - values.begin());
    };
    index_a.resize(n);
    index_b.resize(n);
    order_a.resize(n);
    order_b.resize(n);
    sorted_a.resize(n);
    sorted_b.resize(n);
    for (size_t i = 0; i < n; ++i) {
      index_a[i] = at(a[i]);
      index_b[i] = at(b[i]);
      order_a[i] = order_b[i] = static_cast<uint32_t>(i);
    }
    std::stable_sort(order_a.begin(), order_a.end(), [&](uint32_t i, uint32_t j) { return a[i] < a[j]; });
    std::stable_sort(order_b.begin(), order_b.end(), [&](uint32_t i, uint32_t j) { return b[i] < b[j]; });
    for (size_t k = 0; k < n; ++k) {
      sorted_a[k] = a[order_a[k]];
      sorted_b[k] = b[order_b[k]];
    }
  }

  kgrank::PairedColumns columns() const {
    kgrank::PairedColumns c;
    c.n = a.size();
    c.cols = cols;
    c.x = x.data();
    c.medians = true;
    c.index_a = index_a.data();
    c.index_b = index_b.data();
    c.values = values.data();
    c.num_values = values.size();
    c.order_a = order_a.data();
    c.order_b = order_b.data();
    c.sorted_a = sorted_a.data();
    c.sorted_b = sorted_b.data();
    return c;
  }

  // Replicates first .. first + count - 1 by the definition: count x (cols + 2) values.
  std::vector<double> reference(kgrank::Resampling kind, uint32_t key, uint32_t first, size_t count) const {
    const size_t n = a.size(), width = cols + 2;
    const bool randomization = kind == kgrank::Resampling::Randomization;
    const auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      const double lo = v[(v.size() - 1) / 2], hi = v[v.size() / 2];
      return lo + (hi - lo) / 2;
    };
    std::vector<double> out(count * width);
    for (size_t r = 0; r < count; ++r) {
      const uint32_t k = kgrank::stream_key(key, static_cast<uint32_t>(first + r));
      std::vector<double> lanes(cols * 32, 0.0), ra(n), rb(n);
      std::vector<uint32_t> drawn(n, 0);
      std::vector<bool> swap(n);
      for (size_t i = 0; i < n; ++i) {
        const double u = kgrank::uniform01_keyed(k, static_cast<uint32_t>(i));
        swap[i] = u < 0.5;
        if (randomization) {
          ra[i] = swap[i] ? b[i] : a[i];
          rb[i] = swap[i] ? a[i] : b[i];
        } else {
          const size_t pick = static_cast<size_t>(std::floor(u * static_cast<double>(n)));
          ++drawn[pick];
          ra[i] = a[pick];
          rb[i] = b[pick];
        }
      }
      for (size_t i = 0; i < n; ++i) {
        for (size_t col = 0; col < cols; ++col) {
          const double v = x[col * n + i];
          lanes[col * 32 + i % 32] += randomization ? (swap[i] ? v : 0.0) : static_cast<double>(drawn[i]) * v;
        }
      }
      for (size_t col = 0; col < cols; ++col) {
        double* l = lanes.data() + col * 32;
        for (size_t w = 16; w >= 1; w /= 2) {
          for (size_t j = 0; j < w; ++j) l[j] += l[j + w];
        }
        out[r * width + col] = l[0];
      }
      out[r * width + cols] = median(ra);
      out[r * width + cols + 1] = median(rb);
    }
    return out;
  }
};

}  // namespace kgrank_test
