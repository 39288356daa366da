// Paired resampling (resample.h). Twin: src/fallback/resample.ts.
#include "resample.h"

#include <algorithm>
#include <vector>

#include "sampling.h"
#include "thread_pool.h"

namespace kgrank {

namespace {

// Tasks per block of draws (a multiple of kResampleLanes): the block's swaps or picks stay in L1 while the columns
// read them.
constexpr uint32_t kBlock = 2048;
constexpr size_t kLanes = kResampleLanes;
static_assert(kBlock % kLanes == 0, "blocks keep every task in its lane");

// The lanes folded in halves (resample.h).
double fold(double* l) {
  for (size_t width = kLanes / 2; width >= 1; width /= 2) {
    for (size_t j = 0; j < width; ++j) l[j] += l[j + width];
  }
  return l[0];
}

// The two middle values' midpoint, from the (total - 1) / 2-th and total / 2-th smallest.
struct Middle {
  size_t k_lo, k_hi;
  explicit Middle(size_t total) : k_lo((total - 1) / 2), k_hi(total / 2) {}
};

// Median of the values counted in hist (count_of(v) = how many equal values[v]).
template <class CountOf>
double median_by_value(CountOf count_of, const double* values, size_t num_values, Middle m) {
  size_t seen = 0;
  double lo = 0;
  for (size_t v = 0; v < num_values; ++v) {
    const size_t next = seen + count_of(v);
    if (seen <= m.k_lo && m.k_lo < next) lo = values[v];
    if (m.k_hi < next) return lo + (values[v] - lo) / 2;
    seen = next;
  }
  return lo;  // not reached: the counts add up to the total
}

// Median of the drawn tasks: the run's tasks in rank order, each counted as often as it was drawn.
double median_by_order(const uint32_t* counts, const uint32_t* order, const double* sorted, size_t n, Middle m) {
  size_t seen = 0;
  double lo = 0;
  for (size_t k = 0; k < n; ++k) {
    const size_t next = seen + counts[order[k]];
    if (seen <= m.k_lo && m.k_lo < next) lo = sorted[k];
    if (m.k_hi < next) return lo + (sorted[k] - lo) / 2;
    seen = next;
  }
  return lo;
}

// What every replicate of a call shares: for the randomization's medians, run a's histogram and both runs'.
struct Shared {
  std::vector<uint32_t> hist_a, hist_ab;
};

// Per-thread scratch.
struct Scratch {
  std::vector<uint8_t> swaps;
  std::vector<int32_t> picks;
  std::vector<uint32_t> counts;
  std::vector<double> lanes;
  std::vector<uint32_t> hist;
};

void randomization_replicate(const PairedColumns& c, const Shared& shared, uint32_t key, const KernelTable& k,
                             Scratch& s, double* out) {
  const size_t n = c.n;
  std::fill(s.lanes.begin(), s.lanes.end(), 0.0);
  if (c.medians) std::copy(shared.hist_a.begin(), shared.hist_a.end(), s.hist.begin());
  for (size_t b0 = 0; b0 < n; b0 += kBlock) {
    const uint32_t len = static_cast<uint32_t>(std::min<size_t>(kBlock, n - b0));
    k.keyed_swaps(key, static_cast<uint32_t>(b0), len, s.swaps.data());
    const uint8_t* sw = s.swaps.data();
    for (size_t col = 0; col < c.cols; ++col) {
      k.masked_lane_sums(sw, c.x + col * n + b0, len, s.lanes.data() + col * kLanes);
    }
    if (c.medians) {
      // Run a's histogram with each swapped task's rank moved from a's value to b's (a no-op when they are equal).
      const uint32_t* ia = c.index_a + b0;
      const uint32_t* ib = c.index_b + b0;
      uint32_t* h = s.hist.data();
      for (uint32_t i = 0; i < len; ++i) {
        const uint32_t w = sw[i];
        h[ia[i]] -= w;
        h[ib[i]] += w;
      }
    }
  }
  for (size_t col = 0; col < c.cols; ++col) out[col] = fold(s.lanes.data() + col * kLanes);
  if (c.medians) {
    const Middle m(n);
    const uint32_t* h = s.hist.data();
    const uint32_t* ab = shared.hist_ab.data();
    out[c.cols] = median_by_value([h](size_t v) { return h[v]; }, c.values, c.num_values, m);
    out[c.cols + 1] = median_by_value([h, ab](size_t v) { return ab[v] - h[v]; }, c.values, c.num_values, m);
  }
}

void bootstrap_replicate(const PairedColumns& c, uint32_t key, const KernelTable& k, Scratch& s, double* out) {
  const size_t n = c.n;
  std::fill(s.counts.begin(), s.counts.end(), 0u);
  const double dn = static_cast<double>(n);
  uint32_t* cnt = s.counts.data();
  for (size_t b0 = 0; b0 < n; b0 += kBlock) {
    const uint32_t len = static_cast<uint32_t>(std::min<size_t>(kBlock, n - b0));
    k.keyed_picks(key, static_cast<uint32_t>(b0), len, dn, s.picks.data());
    // floor(u * n) < n for every u < 1 and n < 2^31; the clamp only guards the counts against a broken stream.
    for (uint32_t i = 0; i < len; ++i) ++cnt[std::min(static_cast<size_t>(s.picks[i]), n - 1)];
  }
  std::fill(s.lanes.begin(), s.lanes.end(), 0.0);
  for (size_t col = 0; col < c.cols; ++col) {
    double* l = s.lanes.data() + col * kLanes;
    k.weighted_lane_sums(cnt, c.x + col * n, n, l);
    out[col] = fold(l);
  }
  if (c.medians) {
    const Middle m(n);
    out[c.cols] = median_by_order(cnt, c.order_a, c.sorted_a, n, m);
    out[c.cols + 1] = median_by_order(cnt, c.order_b, c.sorted_b, n, m);
  }
}

}  // namespace

void paired_resample(Resampling kind, const PairedColumns& columns, uint32_t key, uint32_t first, size_t count,
                     double* out, unsigned threads, SimdLevel simd, JobControl* control) {
  if (columns.n == 0 || count == 0) return;
  const KernelTable& k = dispatch(simd, KernelFamily::GenerateRanks);
  const size_t width = paired_width(columns);
  const bool randomization = kind == Resampling::Randomization;
  Shared shared;
  if (randomization && columns.medians) {
    shared.hist_a.assign(columns.num_values, 0);
    shared.hist_ab.assign(columns.num_values, 0);
    for (size_t i = 0; i < columns.n; ++i) {
      ++shared.hist_a[columns.index_a[i]];
      ++shared.hist_ab[columns.index_a[i]];
      ++shared.hist_ab[columns.index_b[i]];
    }
  }
  // Replicates in groups, so each task of the pool sets up its scratch once.
  constexpr size_t kGroup = 4;
  const size_t groups = (count + kGroup - 1) / kGroup;
  parallel_for(
      groups, threads,
      [&](size_t g) {
        Scratch s;
        s.lanes.assign(columns.cols * kLanes, 0.0);
        if (randomization) {
          s.swaps.resize(kBlock);
          if (columns.medians) s.hist.resize(columns.num_values);
        } else {
          s.picks.resize(kBlock);
          s.counts.resize(columns.n);
        }
        const size_t end = std::min(count, (g + 1) * kGroup);
        for (size_t r = g * kGroup; r < end; ++r) {
          const uint32_t replicate_key = stream_key(key, static_cast<uint32_t>(first + r));
          if (randomization) {
            randomization_replicate(columns, shared, replicate_key, k, s, out + r * width);
          } else {
            bootstrap_replicate(columns, replicate_key, k, s, out + r * width);
          }
        }
        if (control != nullptr) control->advance(end - g * kGroup);
      },
      control);
}

}  // namespace kgrank
