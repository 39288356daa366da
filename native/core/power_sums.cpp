// Centred power sums of the geometric-mean moments (power_sums.h). Fallback twin: src/fallback/power-sums.ts.

#include "power_sums.h"

#include <algorithm>
#include <cmath>

#include "thread_pool.h"

namespace kgrank {

namespace {
double falling3(double b) { return b * (b - 1) * (b - 2); }
double falling5(double b) { return b * (b - 1) * (b - 2) * (b - 3) * (b - 4); }
}  // namespace

PowerTail::PowerTail(double a_, bool small_)
    : a(a_),
      small(small_),
      f1(1 / (1 + a_)),
      f2(1 / ((1 + a_) * (1 + 2 * a_))),
      d1(a_ / 12),
      d3(-falling3(a_) / 720),
      d5(falling5(a_) / 30240),
      e3(-falling3(2 * a_) / 720),
      e5(falling5(2 * a_) / 30240) {}

namespace {
constexpr size_t kTailBlock = 4096;
}

void centred_power_sums(double a, const double* n, size_t count, PowerSums* out, unsigned threads) {
  if (count == 0) return;
  const PowerSweep sweep = power_sweep(a, n, count, [out](size_t i, PowerSums s) { out[i] = s; });
  const size_t first = sweep.first;
  const size_t blocks = (count - first + kTailBlock - 1) / kTailBlock;
  parallel_for(blocks, threads, [&](size_t b) {
    const size_t begin = first + b * kTailBlock, end = std::min(count, begin + kTailBlock);
    for (size_t t = begin; t < end; ++t) out[t] = sweep.at(n[t]);
  });
}

}  // namespace kgrank
