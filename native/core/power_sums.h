// Centred power sums of the geometric-mean moments: for an exponent a and integer N >= 1,
//   S1(N) = sum_{j<=N} e_j,  S2(N) = sum_{j<=N} e_j^2,  e_j = j^a - 1 = expm1(a log j),
// so E[r^a] = 1 + S1/N and Var[r^a] = S2/N - (S1/N)^2 for r ~ Uniform{1..N}, without forming differences of
// nearly equal powers. Up to kPowerSweepLimit the sums are taken term by term (one sweep per exponent, shared by
// all N of that exponent); above it, S(N) = S(M) + T(N) - T(M) with the Euler-Maclaurin expansion
//   T(x) = F(x) + f(x)/2 + f'(x)/12 - f'''(x)/720 + f^(5)(x)/30240,  F' = f,
// in closed forms that stay free of cancellation for tiny a (F1 = x (e - a)/(1 + a),
// F2 = x (e^2 (1 + a) - 2 a e + 2 a^2) / ((1 + a)(1 + 2 a)), e = expm1(a log x)). For 0 < a <= 1 and
// M = 256 the first omitted term, B_8/8! (f^(7)(N) - f^(7)(M)), is below 1e-19 of S(M) <= S(N): the
// expansion is exact to double rounding. Cost: O(min(N, M)) once per exponent, then O(1) (one log) per N.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>

#include "compensated.h"

namespace kgrank {

constexpr double kPowerSweepLimit = 256;

struct PowerSums {
  double s1;
  double s2;
};

// e = expm1(a log x) from log_x = std::log(x), with a Taylor polynomial when `small` (|a log x| < 0.02: truncation
// < 1e-17 relative).
inline double centred_power_of_log(double a, double log_x, bool small) {
  const double u = a * log_x;
  if (!small) return std::expm1(u);
  return u *
         (1 + u * (1.0 / 2 + u * (1.0 / 6 + u * (1.0 / 24 + u * (1.0 / 120 + u * (1.0 / 720 + u * (1.0 / 5040)))))));
}

inline double centred_power(double a, double x, bool small) { return centred_power_of_log(a, std::log(x), small); }

// log1p(x), by its Taylor polynomial for |x| < 0.02: to x^5 below 1e-4 (first omitted term < 2e-21 relative),
// to x^12 otherwise (< 3e-22 relative); std::log1p above.
inline double log1p_small(double x) {
  const double ax = std::fabs(x);
  if (ax < 1e-4) return x * (1 + x * (-1.0 / 2 + x * (1.0 / 3 + x * (-1.0 / 4 + x * (1.0 / 5)))));
  if (!(ax < 0.02)) return std::log1p(x);
  return x *
         (1 +
          x * (-1.0 / 2 +
               x * (1.0 / 3 +
                    x * (-1.0 / 4 +
                         x * (1.0 / 5 +
                              x * (-1.0 / 6 +
                                   x * (1.0 / 7 +
                                        x * (-1.0 / 8 +
                                             x * (1.0 / 9 + x * (-1.0 / 10 + x * (1.0 / 11 + x * (-1.0 / 12))))))))))));
}

// Euler-Maclaurin part T(x) of S1 and S2 (see above), x >= M, with the coefficients of one exponent
// precomputed (no division per call apart from 1/x).
struct PowerTail {
  double a;
  bool small;
  double f1, f2;      // 1/(1+a), 1/((1+a)(1+2a))
  double d1, d3, d5;  // a/12, -c3(a)/720, c5(a)/30240 (c_k: falling products)
  double e3, e5;      // -c3(2a)/720, c5(2a)/30240
  PowerTail(double a, bool small);
  // T(x) from log_x = std::log(x) (a caller can take the logs of a block apart, so the arithmetic here runs without
  // a library call that spills its registers; the same operations, so the same bits).
  PowerSums of_log(double x, double log_x) const {
    const double e = centred_power_of_log(a, log_x, small);  // x^a - 1
    const double p = 1 + e;                                  // x^a
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
  PowerSums operator()(double x) const { return of_log(x, std::log(x)); }
};

// The sweep of one exponent a in (0, 1] over sorted distinct values n[0..count) (integers >= 1, count >= 1): the
// sums at the bins up to the sweep limit are taken term by term and handed to head(i, PowerSums) in bin order;
// bins from `first` on lie above the limit, and at(n[i]) gives their sums from the Euler-Maclaurin tail (O(1) each,
// const, so callable from any thread). The one sweep behind every use of the centred power sums
// (centred_power_sums below and the geometric-mean moments in expectation.cpp).
struct PowerSweep {
  size_t first;
  double base1, base2;  // S1, S2 at the sweep limit M
  PowerTail tail;
  PowerSums tail_at_limit;  // T(M)
  PowerSums at(double x) const { return at_log(x, std::log(x)); }
  // at(x) from log_x = std::log(x).
  PowerSums at_log(double x, double log_x) const {
    const PowerSums t = tail.of_log(x, log_x);
    return {base1 + (t.s1 - tail_at_limit.s1), base2 + (t.s2 - tail_at_limit.s2)};
  }
};

template <class Head>
PowerSweep power_sweep(double a, const double* n, size_t count, Head head) {
  const double max_n = n[count - 1];
  const bool small = a * std::log(std::max(max_n, 2.0)) < 0.02;
  const double limit = std::min(max_n, kPowerSweepLimit);
  CompensatedSum s1, s2;
  size_t i = 0;
  for (double j = 1; j <= limit; j += 1) {
    const double e = centred_power(a, j, small);
    s1.add(e);
    s2.add(e * e);
    for (; i < count && n[i] == j; ++i) head(i, PowerSums{s1.value(), s2.value()});
  }
  const PowerTail tail(a, small);
  return PowerSweep{i, s1.value(), s2.value(), tail, tail(kPowerSweepLimit)};
}

// S1, S2 at each of the sorted distinct values n[0..count) (integers >= 1) for one exponent a in (0, 1]:
// out[i] = {S1(n[i]), S2(n[i])}. `threads` parallelises the part above the sweep limit (fixed blocks: the
// result does not depend on the thread count).
void centred_power_sums(double a, const double* n, size_t count, PowerSums* out, unsigned threads);

}  // namespace kgrank
