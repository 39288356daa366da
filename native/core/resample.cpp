// Paired resampling (resample.h). Twin: src/fallback/resample.ts.
#include "resample.h"

#include <algorithm>
#include <cmath>
#include <cstring>
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
  Middle(size_t lo, size_t hi) : k_lo(lo), k_hi(hi) {}
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

// What every replicate of a call shares, for the randomization's medians: run a's histogram and both runs' (the full
// count, when a median falls outside the window), and the window of value indices [lo, lo + width) that holds both
// medians of almost every replicate.
struct Shared {
  std::vector<uint32_t> hist_a, hist_ab;
  uint32_t lo = 0, width = 0;
  std::vector<uint32_t> window_ab;  // both runs' count inside the window
  size_t below_ab = 0;              // and below it
  std::vector<uint8_t> under;       // per task: bit 0 (1) set when its rank in run a (b) lies below the window
  // The tasks whose rank in a or in b lies inside the window, ascending, with both ranks' value indices relative to
  // the window (wrapped, so one unsigned comparison tests membership); block k's lie at [near_first[k],
  // near_first[k + 1]).
  std::vector<uint32_t> near, near_a, near_b, near_first;
  // The bootstrap's medians: per task, bit 0 (1) set when its position in run a's (b's) rank order lies below that
  // run's window of positions [from, from + span) around the middle.
  std::vector<uint8_t> below_window;
  size_t from = 0, span = 0;
};

// Per-thread scratch.
struct Scratch {
  std::vector<uint8_t> swaps;
  std::vector<int32_t> picks;
  std::vector<uint32_t> counts;
  std::vector<double> lanes;
  std::vector<uint32_t> window;  // run a's vector's count inside the window, per replicate of the group
  std::vector<uint32_t> hist;    // its full count, when the window misses a median
  std::vector<size_t> below;     // values below the window(s), per replicate (the bootstrap: per run too)
};

// The randomization's two medians. Run a's vector takes each task's rank from a or, swapped, from b, and b's vector
// takes the other one, so b's count of any value is both runs' count minus a's: one count serves both. A median is
// the k-th smallest value, so the values below the window and the count inside it find it whenever it lies inside;
// a replicate whose median does not (the window spans 8 standard deviations of a median's position on each side,
// so hardly ever) counts run a's vector in full.
// One block's part of that count, from the block's swaps: run a's values below the window (added to *below) and
// inside it (counted in `window`). Whether a task's rank from a or from b lies below or inside the window does not
// depend on the replicate, so the tasks with either inside are listed once (Shared::near); a replicate visits those
// and counts the rest below the window from one flag byte per task.
void count_window(const Shared& sh, const uint8_t* sw, size_t block, size_t b0, uint32_t len, uint32_t* window,
                  size_t* below) {
  const uint32_t width = sh.width;
  const uint8_t* under = sh.under.data() + b0;
  // Branch-free, so it vectorises: bit 0 of under[i] for a's rank below the window, bit 1 for b's.
  uint32_t count = 0;
  for (uint32_t i = 0; i < len; ++i) count += sw[i] ? (under[i] >> 1) : (under[i] & 1u);
  *below += count;
  for (uint32_t j = sh.near_first[block]; j < sh.near_first[block + 1]; ++j) {
    const uint32_t v = sw[sh.near[j] - b0] ? sh.near_b[j] : sh.near_a[j];
    if (v < width) ++window[v];
  }
}

// The two medians of a replicate from its window count (count_window over every block); a median outside the
// window is counted in full, the replicate's swaps drawn again for that.
void randomization_medians(const PairedColumns& c, const Shared& sh, uint32_t key, const KernelTable& k, Scratch& s,
                           const uint32_t* w, size_t below, double* out) {
  const size_t n = c.n;
  const Middle m(n);
  const uint32_t lo = sh.lo, width = sh.width;
  const double* window_values = c.values + lo;
  const uint32_t* pooled = sh.window_ab.data();
  size_t inside_a = 0, inside_ab = 0;
  for (uint32_t v = 0; v < width; ++v) {
    inside_a += w[v];
    inside_ab += pooled[v];
  }
  const size_t below_b = sh.below_ab - below;
  const size_t inside_b = inside_ab - inside_a;
  const bool found_a = below <= m.k_lo && m.k_hi < below + inside_a;
  const bool found_b = below_b <= m.k_lo && m.k_hi < below_b + inside_b;
  if (found_a) {
    out[0] =
        median_by_value([w](size_t v) { return w[v]; }, window_values, width, Middle(m.k_lo - below, m.k_hi - below));
  }
  if (found_b) {
    out[1] = median_by_value([w, pooled](size_t v) { return pooled[v] - w[v]; }, window_values, width,
                             Middle(m.k_lo - below_b, m.k_hi - below_b));
  }
  if (found_a && found_b) return;
  // The full count of run a's vector (b's is both runs' counts minus it).
  std::copy(sh.hist_a.begin(), sh.hist_a.end(), s.hist.begin());
  for (size_t b0 = 0; b0 < n; b0 += kBlock) {
    const uint32_t len = static_cast<uint32_t>(std::min<size_t>(kBlock, n - b0));
    k.keyed_swaps(key, static_cast<uint32_t>(b0), len, s.swaps.data());
    for (uint32_t i = 0; i < len; ++i) {
      if (s.swaps[i]) {
        --s.hist[c.index_a[b0 + i]];
        ++s.hist[c.index_b[b0 + i]];
      }
    }
  }
  const uint32_t* h = s.hist.data();
  const uint32_t* ab = sh.hist_ab.data();
  if (!found_a) out[0] = median_by_value([h](size_t v) { return h[v]; }, c.values, c.num_values, m);
  if (!found_b) out[1] = median_by_value([h, ab](size_t v) { return ab[v] - h[v]; }, c.values, c.num_values, m);
}

// Column sums of a group of replicates, block by block of tasks: each block of a column is read once for the whole
// group (from cache), not once per replicate (from memory: the columns of 40,000 tasks outgrow the L2 cache).
void randomization_group(const PairedColumns& c, const Shared& shared, const uint32_t* keys, size_t group,
                         const KernelTable& k, Scratch& s, double* out, size_t width) {
  const size_t n = c.n;
  std::fill(s.lanes.begin(), s.lanes.end(), 0.0);
  std::fill(s.window.begin(), s.window.end(), 0u);
  std::fill(s.below.begin(), s.below.end(), size_t{0});
  for (size_t b0 = 0; b0 < n && (c.cols > 0 || c.medians); b0 += kBlock) {
    const uint32_t len = static_cast<uint32_t>(std::min<size_t>(kBlock, n - b0));
    for (size_t r = 0; r < group; ++r) k.keyed_swaps(keys[r], static_cast<uint32_t>(b0), len, &s.swaps[r * kBlock]);
    for (size_t col = 0; col < c.cols; ++col) {
      const double* x = c.x + col * n + b0;
      for (size_t r = 0; r < group; ++r) {
        k.masked_lane_sums(&s.swaps[r * kBlock], x, len, &s.lanes[(r * c.cols + col) * kLanes]);
      }
    }
    if (c.medians) {
      for (size_t r = 0; r < group; ++r) {
        count_window(shared, &s.swaps[r * kBlock], b0 / kBlock, b0, len, &s.window[r * shared.width], &s.below[r]);
      }
    }
  }
  for (size_t r = 0; r < group; ++r) {
    for (size_t col = 0; col < c.cols; ++col) out[r * width + col] = fold(&s.lanes[(r * c.cols + col) * kLanes]);
    if (c.medians) {
      randomization_medians(c, shared, keys[r], k, s, &s.window[r * shared.width], s.below[r],
                            out + r * width + c.cols);
    }
  }
}

// The median of a run's drawn ranks: `below` draws lie below the run's window of rank positions, so walking the
// window's positions (their tasks' draw counts) finds it whenever it lies inside; else the whole order is walked.
double drawn_median(const uint32_t* counts, const uint32_t* order, const double* sorted, size_t n, const Shared& shared,
                    size_t below) {
  const Middle m(n);
  if (below <= m.k_lo) {
    size_t seen = below;
    double lo = 0;
    for (size_t k = shared.from; k < shared.from + shared.span; ++k) {
      const size_t next = seen + counts[order[k]];
      if (seen <= m.k_lo && m.k_lo < next) lo = sorted[k];
      if (m.k_hi < next) return lo + (sorted[k] - lo) / 2;
      seen = next;
    }
  }
  return median_by_order(counts, order, sorted, n, m);
}

void bootstrap_group(const PairedColumns& c, const Shared& shared, const uint32_t* keys, size_t group,
                     const KernelTable& k, Scratch& s, double* out, size_t width) {
  const size_t n = c.n;
  const double dn = static_cast<double>(n);
  std::fill(s.counts.begin(), s.counts.begin() + static_cast<std::ptrdiff_t>(group * n), 0u);
  const uint8_t* below_window = shared.below_window.data();
  for (size_t r = 0; r < group; ++r) {
    uint32_t* cnt = &s.counts[r * n];
    for (size_t b0 = 0; b0 < n; b0 += kBlock) {
      const uint32_t len = static_cast<uint32_t>(std::min<size_t>(kBlock, n - b0));
      k.keyed_picks(keys[r], static_cast<uint32_t>(b0), len, dn, s.picks.data());
      // floor(u * n) < n for every u < 1 and n < 2^31; the clamp only guards the counts against a broken stream.
      for (uint32_t i = 0; i < len; ++i) ++cnt[std::min(static_cast<size_t>(s.picks[i]), n - 1)];
    }
    if (c.medians) {
      // Draws below each run's window, from the counts in task order (a pass that vectorises) rather than per draw
      // (a second random load after each count's increment). At most n draws in all, so 32 bits hold the sums.
      uint32_t below_a = 0, below_b = 0;
      for (size_t i = 0; i < n; ++i) {
        below_a += cnt[i] & (0u - (below_window[i] & 1u));
        below_b += cnt[i] & (0u - static_cast<uint32_t>(below_window[i] >> 1));
      }
      s.below[2 * r] = below_a;
      s.below[2 * r + 1] = below_b;
    }
  }
  std::fill(s.lanes.begin(), s.lanes.end(), 0.0);
  for (size_t b0 = 0; b0 < n && c.cols > 0; b0 += kBlock) {
    const size_t len = std::min<size_t>(kBlock, n - b0);
    for (size_t col = 0; col < c.cols; ++col) {
      const double* x = c.x + col * n + b0;
      for (size_t r = 0; r < group; ++r) {
        k.weighted_lane_sums(&s.counts[r * n + b0], x, len, &s.lanes[(r * c.cols + col) * kLanes]);
      }
    }
  }
  for (size_t r = 0; r < group; ++r) {
    for (size_t col = 0; col < c.cols; ++col) out[r * width + col] = fold(&s.lanes[(r * c.cols + col) * kLanes]);
    if (c.medians) {
      const uint32_t* cnt = &s.counts[r * n];
      out[r * width + c.cols] = drawn_median(cnt, c.order_a, c.sorted_a, n, shared, s.below[2 * r]);
      out[r * width + c.cols + 1] = drawn_median(cnt, c.order_b, c.sorted_b, n, shared, s.below[2 * r + 1]);
    }
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
    // Each vector draws every task's rank from a or b with probability 1/2, so its values follow the pooled
    // distribution of both runs' 2n ranks, and its middle lies within sqrt(n) / 2 positions (a standard deviation,
    // in the vector's n) of the pooled middle: the window spans 8 of them on each side, in the pooled 2n.
    const size_t n = columns.n;
    const double spread = columns.window * std::sqrt(static_cast<double>(n));
    const size_t from = n > spread ? static_cast<size_t>(static_cast<double>(n) - spread) : 0;
    const size_t to = std::min(2 * n, n + static_cast<size_t>(spread) + 1);
    size_t seen = 0, v = 0;
    while (v < columns.num_values && seen + shared.hist_ab[v] <= from) seen += shared.hist_ab[v++];
    shared.lo = static_cast<uint32_t>(v);
    while (v < columns.num_values && seen < to) seen += shared.hist_ab[v++];
    shared.width = static_cast<uint32_t>(v) - shared.lo;
    shared.window_ab.assign(shared.hist_ab.begin() + shared.lo, shared.hist_ab.begin() + v);
    for (size_t u = 0; u < shared.lo; ++u) shared.below_ab += shared.hist_ab[u];
    shared.under.resize(n);
    shared.near_first.assign((n + kBlock - 1) / kBlock + 1, 0);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t a = columns.index_a[i] - shared.lo, b = columns.index_b[i] - shared.lo;
      shared.under[i] = static_cast<uint8_t>((columns.index_a[i] < shared.lo) | (columns.index_b[i] < shared.lo) << 1);
      if (a < shared.width || b < shared.width) {
        shared.near.push_back(static_cast<uint32_t>(i));
        shared.near_a.push_back(a);
        shared.near_b.push_back(b);
      }
      shared.near_first[i / kBlock + 1] = static_cast<uint32_t>(shared.near.size());
    }
  }
  if (!randomization && columns.medians) {
    // A run's drawn ranks below a position follow a binomial of n draws: within sqrt(n) / 2 (a standard deviation)
    // of its expected count, so the window spans 8 of them on each side of the middle position.
    const size_t n = columns.n;
    const size_t half = std::min(n, static_cast<size_t>(columns.window / 2 * std::sqrt(static_cast<double>(n))) + 1);
    shared.from = n / 2 > half ? n / 2 - half : 0;
    shared.span = std::min(n, n / 2 + half + 1) - shared.from;
    shared.below_window.assign(n, 0);
    for (size_t k = 0; k < shared.from; ++k) {
      shared.below_window[columns.order_a[k]] |= 1;
      shared.below_window[columns.order_b[k]] |= 2;
    }
  }
  // Replicates in groups: a group reads each block of the columns once, and each task of the pool sets up its
  // scratch once. The bootstrap's group holds a draw count per task and replicate: at most 8 replicates, and about
  // 32 MiB of counts.
  const size_t group = std::max<size_t>(1, std::min<size_t>(8, (size_t{32} << 20) / (4 * columns.n)));
  const size_t groups = (count + group - 1) / group;
  parallel_for(
      groups, threads,
      [&](size_t g) {
        const size_t begin = g * group, end = std::min(count, begin + group), size = end - begin;
        Scratch s;
        s.lanes.assign(size * columns.cols * kLanes, 0.0);
        if (randomization) {
          s.swaps.resize(size * kBlock);
          if (columns.medians) {
            s.hist.resize(columns.num_values);
            s.window.resize(size * shared.width);
            s.below.resize(size);
          }
        } else {
          s.picks.resize(kBlock);
          s.counts.resize(size * columns.n);
          s.below.resize(2 * size);
        }
        uint32_t keys[8];
        for (size_t r = 0; r < size; ++r) keys[r] = stream_key(key, static_cast<uint32_t>(first + begin + r));
        if (randomization) {
          randomization_group(columns, shared, keys, size, k, s, out + begin * width, width);
        } else {
          bootstrap_group(columns, shared, keys, size, k, s, out + begin * width, width);
        }
        if (control != nullptr) control->advance(size);
      },
      control);
}

}  // namespace kgrank
