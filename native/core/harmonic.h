// Harmonic numbers H_1(n) = sum_{j<=n} 1/j and H_2(n) = sum_{j<=n} 1/j^2 for integer n >= 0.
// n <= kHarmonicTableLimit: a table built once per process with compensated prefix sums (exact to ~1 ulp).
// n above it: asymptotic expansions (digamma / trigamma series), whose truncation error there is below 1e-40
// relative, so the cost per call is O(1) and memory is independent of n.
#pragma once
#include <cstddef>

namespace kgrank {

constexpr size_t kHarmonicTableLimit = size_t{1} << 16;

double harmonic1(double n);
double harmonic2(double n);

// H_1(n) / n and H_2(n) / n together (one log and one division above the table): the MRR moments per bin.
struct HarmonicPair {
  double h1_over_n;
  double h2_over_n;
};
HarmonicPair harmonic_means(double n);

}  // namespace kgrank
