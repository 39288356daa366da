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
    : a(a_), small(small_), f1(1 / (1 + a_)), f2(1 / ((1 + a_) * (1 + 2 * a_))), d1(a_ / 12),
      d3(-falling3(a_) / 720), d5(falling5(a_) / 30240), e3(-falling3(2 * a_) / 720), e5(falling5(2 * a_) / 30240) {}

PowerSums PowerTail::operator()(double x) const {
  const double e = centred_power(a, x, small);  // x^a - 1
  const double p = 1 + e;                       // x^a
  const double inv = 1 / x;
  const double inv2 = inv * inv;
  const double inv3 = inv2 * inv;
  const double inv5 = inv3 * inv2;
  // f1 = x^a - 1: F1 = x (e - a)/(1 + a), f1^(k) = c_k(a) x^a / x^k
  const double t1 = x * (e - a) * f1 + 0.5 * e + p * (d1 * inv + d3 * inv3 + d5 * inv5);
  // f2 = x^2a - 2 x^a + 1: f2' = 2 a x^a e / x, f2^(k) = (c_k(2a) x^2a - 2 c_k(a) x^a) / x^k
  const double t2 = x * (e * e * (1 + a) - 2 * a * e + 2 * a * a) * f2 + 0.5 * e * e + 2 * d1 * p * e * inv +
                    (e3 * p * p - 2 * d3 * p) * inv3 + (e5 * p * p - 2 * d5 * p) * inv5;
  return {t1, t2};
}

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
