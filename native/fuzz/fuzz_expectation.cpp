// Fuzz target: the closed-form expectations / variances under random ranking and the seeded Monte Carlo, on
// validated inputs (integer candidate counts N_i >= 1, positive finite weights, integer k >= 1).
//   closed forms   histogram_moments (1 vs 2 threads bit-identical; equal to closed_moments) against a brute force
//                  over every rank 1..N_i in long double, for MR, MRR, Hits@k and GMR;
//   histogram      candidate_histogram (dense and sorted paths) against a std::map;
//   Monte Carlo    generate_ranks gives integers in [1, N_i]; sample_statistic is bit-identical on 1 and 2 threads
//                  and equals statistic_of on the regenerated sample.
#include <map>

#include "expectation.h"
#include "fuzz_common.h"
#include "sampling.h"

namespace {

using kgrank::ClosedMetric;
using kgrank::Moments;

// E[f(r)] and Var[f(r)] for r ~ Uniform{1..n}, by enumeration.
template <typename F>
void enumerate(double n, F f, long double* e, long double* v) {
  long double s = 0, s2 = 0;
  for (double j = 1; j <= n; ++j) {
    const long double x = f(j);
    s += x;
    s2 += x * x;
  }
  *e = s / n;
  *v = s2 / n - (*e) * (*e);
}

bool close(double got, long double want, long double rel) {
  const long double scale = std::max<long double>(std::fabs(want), 1e-300L);
  return std::fabs(static_cast<long double>(got) - want) <= rel * scale + 1e-15L;
}

bool same_bits(const Moments& a, const Moments& b) {
  return std::memcmp(&a.expectation, &b.expectation, sizeof(double)) == 0 &&
         std::memcmp(&a.variance, &b.variance, sizeof(double)) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  const size_t count = p.ConsumeIntegralInRange<size_t>(1, 64);
  const double max_n = p.ConsumeBool() ? 12 : 3000;
  std::vector<double> n(count), w(count);
  for (size_t i = 0; i < count; ++i) {
    n[i] = static_cast<double>(p.ConsumeIntegralInRange<int>(1, static_cast<int>(max_n)));
    w[i] = p.ConsumeBool() ? static_cast<double>(p.ConsumeIntegralInRange<int>(1, 8)) / 4
                           : p.ConsumeFloatingPointInRange<double>(1e-3, 1e3);
  }
  const bool weighted = p.ConsumeBool();
  const double* wp = weighted ? w.data() : nullptr;
  const double k = static_cast<double>(p.ConsumeIntegralInRange<int>(1, 20));

  // Histogram against a map.
  const kgrank::CandidateHistogram h = kgrank::candidate_histogram(n.data(), wp, count);
  std::map<double, std::pair<long double, long double>> ref;
  long double total = 0;
  for (size_t i = 0; i < count; ++i) {
    const long double wi = weighted ? w[i] : 1.0L;
    ref[n[i]].first += wi;
    ref[n[i]].second += wi * wi;
    total += wi;
  }
  FUZZ_CHECK(h.n.size() == ref.size());
  // Unweighted, w2 is left empty: the squared-weight sums are then the counts, w1.
  FUZZ_CHECK(weighted ? h.w2.size() == h.n.size() : h.w2.empty());
  const kgrank::HistogramColumn& w2 = h.w2.empty() ? h.w1 : h.w2;
  size_t b = 0;
  for (const auto& kv : ref) {
    FUZZ_CHECK(h.n[b] == kv.first);
    FUZZ_CHECK(close(h.w1[b], kv.second.first, 1e-14L));
    FUZZ_CHECK(close(w2[b], kv.second.second, 1e-14L));
    ++b;
  }
  FUZZ_CHECK(close(h.total_weight, total, 1e-14L));

  // Brute-force moments per metric.
  for (ClosedMetric metric : {ClosedMetric::ArithmeticMean, ClosedMetric::InverseHarmonicMean, ClosedMetric::Hits,
                              ClosedMetric::GeometricMean, ClosedMetric::TruncatedInverse}) {
    if (metric == ClosedMetric::GeometricMean && weighted) continue;  // histogram path needs unweighted tasks
    const Moments m1 = kgrank::histogram_moments(metric, h.n.data(), h.w1.data(), w2.data(), h.n.size(), h.total_weight,
                                                 static_cast<double>(count), k, 1);
    const Moments m2 = kgrank::histogram_moments(metric, h.n.data(), h.w1.data(), w2.data(), h.n.size(), h.total_weight,
                                                 static_cast<double>(count), k, 2);
    FUZZ_CHECK(same_bits(m1, m2));
    long double e = 0, v = 0;
    if (metric == ClosedMetric::GeometricMean) {
      // G = prod r_i^(1/count): E[G] = prod E[r_i^a], Var[G] = prod E[r_i^2a] - E[G]^2.
      const long double a = 1.0L / static_cast<long double>(count);
      long double eg = 1, eg2 = 1;
      for (size_t i = 0; i < count; ++i) {
        long double ei, vi;
        enumerate(
            n[i], [&](double j) { return std::pow(static_cast<long double>(j), a); }, &ei, &vi);
        eg *= ei;
        eg2 *= vi + ei * ei;
      }
      e = eg;
      v = eg2 - eg * eg;
    } else {
      for (size_t i = 0; i < count; ++i) {
        long double ei, vi;
        const long double wi = weighted ? w[i] : 1.0L;
        if (metric == ClosedMetric::ArithmeticMean)
          enumerate(
              n[i], [](double j) { return static_cast<long double>(j); }, &ei, &vi);
        else if (metric == ClosedMetric::InverseHarmonicMean)
          enumerate(
              n[i], [](double j) { return 1.0L / j; }, &ei, &vi);
        else if (metric == ClosedMetric::TruncatedInverse)
          enumerate(
              n[i], [&](double j) { return j <= k ? 1.0L / j : 0.0L; }, &ei, &vi);
        else
          enumerate(
              n[i], [&](double j) { return j <= k ? 1.0L : 0.0L; }, &ei, &vi);
        e += wi * ei;
        v += wi * wi * vi;
      }
      e /= total;
      v /= total * total;
    }
    if (!close(m1.expectation, e, 1e-9L) || !close(m1.variance, v, 1e-6L)) {
      std::fprintf(stderr, "metric %d: got E=%.17g V=%.17g, want E=%.17Lg V=%.17Lg\n", static_cast<int>(metric),
                   m1.expectation, m1.variance, e, v);
      FUZZ_CHECK(false);
    }
  }

  // Monte Carlo.
  const uint32_t seed = p.ConsumeIntegral<uint32_t>();
  const size_t samples = p.ConsumeIntegralInRange<size_t>(1, 24);
  const auto stat = static_cast<kgrank::Statistic>(p.ConsumeIntegralInRange<int>(0, 7));
  std::vector<double> s1(samples), s2(samples), ranks(count);
  kgrank::sample_statistic(n.data(), wp, count, samples, seed, stat, k, s1.data(), 1);
  kgrank::sample_statistic(n.data(), wp, count, samples, seed, stat, k, s2.data(), 2);
  FUZZ_CHECK(std::memcmp(s1.data(), s2.data(), samples * sizeof(double)) == 0);
  for (size_t s = 0; s < samples; ++s) {
    kgrank::generate_ranks(n.data(), count, seed, static_cast<uint32_t>(s), ranks.data());
    for (size_t i = 0; i < count; ++i)
      FUZZ_CHECK(ranks[i] >= 1 && ranks[i] <= n[i] && ranks[i] == std::floor(ranks[i]));
    const double want = kgrank::statistic_of(stat, ranks.data(), wp, count, k);
    FUZZ_CHECK(std::memcmp(&want, &s1[s], sizeof want) == 0);
  }
  return 0;
}
