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

// Generalised harmonic number H_p(n) = sum_{j<=n} j^-p for real p and integer n >= 0: compensated direct sum up to
// 256 terms, above that the Euler-Maclaurin expansion from M = 256 (terms to f^(5); the first omitted one is below
// 1e-30 relative for |p| <= 20), with F(n) - F(M) = M^(1-p) expm1((1-p) log(n/M)) / (1-p) so p near 1 loses
// nothing. About 1e-15 relative.
double harmonic_real(double n, double p);

// H_1(n) / n and H_2(n) / n together (one log and one division above the table): the MRR moments per bin.
struct HarmonicPair {
  double h1_over_n;
  double h2_over_n;
};
HarmonicPair harmonic_means(double n);
// out[i] = harmonic_means(n[i]) for i < count: a caller's loop over the results then runs without a call.
void harmonic_means_block(const double* n, size_t count, HarmonicPair* out);

}  // namespace kgrank
