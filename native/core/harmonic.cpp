// Harmonic numbers H_1(n), H_2(n) and generalised H_p(n) (harmonic.h). Fallback twin: src/fallback/harmonic.ts.

#include "harmonic.h"

#include <cmath>
#include <vector>

#include "compensated.h"

namespace kgrank {

namespace {

struct Tables {
  std::vector<double> h1, h2;
  Tables() : h1(kHarmonicTableLimit + 1), h2(kHarmonicTableLimit + 1) {
    CompensatedSum s1, s2;
    h1[0] = h2[0] = 0.0;
    // Sum from the largest term down would be more accurate per prefix, but prefixes must be cumulative; the
    // compensated sum keeps every prefix within an ulp or so.
    for (size_t j = 1; j <= kHarmonicTableLimit; ++j) {
      const double inv = 1.0 / static_cast<double>(j);
      s1.add(inv);
      s2.add(inv * inv);
      h1[j] = s1.value();
      h2[j] = s2.value();
    }
  }
};

const Tables& tables() {
  static const Tables t;  // thread-safe one-time initialisation (C++11 magic statics)
  return t;
}

constexpr double kEulerGamma = 0.57721566490153286061;
constexpr double kPi2Over6 = 1.64493406684822643647;

// The asymptotic series above the table, once each; x = 1/n.
// H_1(n) = ln n + gamma + 1/(2n) - sum_k B_2k / (2k n^2k)
inline double harmonic1_series(double n, double x) {
  const double x2 = x * x;
  const double tail = x2 * (1.0 / 12 - x2 * (1.0 / 120 - x2 * (1.0 / 252 - x2 * (1.0 / 240 - x2 * (1.0 / 132)))));
  return std::log(n) + kEulerGamma + 0.5 * x - tail;
}

// H_2(n) = pi^2/6 - psi'(n+1), psi'(n+1) = psi'(n) - 1/n^2 with psi'(n) = 1/n + 1/(2n^2) + sum_k B_2k / n^(2k+1)
inline double harmonic2_series(double x) {
  const double x2 = x * x;
  const double series = x + 0.5 * x2 + x * x2 * (1.0 / 6 - x2 * (1.0 / 30 - x2 * (1.0 / 42 - x2 * (1.0 / 30))));
  return kPi2Over6 - (series - x2);
}

inline bool in_table(double n) { return n <= static_cast<double>(kHarmonicTableLimit); }

}  // namespace

double harmonic1(double n) { return in_table(n) ? tables().h1[static_cast<size_t>(n)] : harmonic1_series(n, 1.0 / n); }

double harmonic2(double n) { return in_table(n) ? tables().h2[static_cast<size_t>(n)] : harmonic2_series(1.0 / n); }

HarmonicPair harmonic_means(double n) {
  if (in_table(n)) {
    const Tables& t = tables();
    const size_t i = static_cast<size_t>(n);
    return {t.h1[i] / n, t.h2[i] / n};
  }
  const double x = 1.0 / n;
  return {harmonic1_series(n, x) * x, harmonic2_series(x) * x};
}

void harmonic_means_block(const double* n, size_t count, HarmonicPair* out) {
  for (size_t i = 0; i < count; ++i) out[i] = harmonic_means(n[i]);
}

double harmonic_real(double n, double p) {
  constexpr double kM = 256;
  CompensatedSum s;
  const double top = std::min(n, kM);
  for (double j = 1; j <= top; j += 1) s.add(std::exp(-p * std::log(j)));
  if (n <= kM) return s.value();
  const double log_ratio = std::log(n / kM);
  const double q = 1 - p;
  const double integral = q == 0 ? log_ratio : std::exp(q * std::log(kM)) * std::expm1(q * log_ratio) / q;
  // f = x^-p; f^(k) = (-p)(-p-1)...(-p-k+1) x^(-p-k)
  auto f = [p](double x) { return std::exp(-p * std::log(x)); };
  const double c1 = -p, c3 = -p * (p + 1) * (p + 2), c5 = c3 * (p + 3) * (p + 4);
  auto em = [&](double x) {
    const double fx = f(x), inv = 1 / x, inv2 = inv * inv;
    return fx / 2 + fx * inv * (c1 / 12 + inv2 * (-c3 / 720 + inv2 * (c5 / 30240)));
  };
  s.add(integral);
  s.add(em(n) - em(kM));
  return s.value();
}

}  // namespace kgrank
