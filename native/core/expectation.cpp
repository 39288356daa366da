#include "expectation.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "compensated.h"
#include "harmonic.h"

namespace kgrank {

namespace {

// Dense counting when max N is not much larger than the task count; otherwise a sort.
constexpr double kDenseLimit = 1 << 26;

}  // namespace

CandidateHistogram candidate_histogram(const double* num_candidates, const double* weights, size_t count) {
  CandidateHistogram h;
  double max_n = 0;
  for (size_t i = 0; i < count; ++i) max_n = std::max(max_n, num_candidates[i]);
  if (weights == nullptr && max_n <= kDenseLimit && max_n <= 8.0 * static_cast<double>(count) + 4096.0) {
    std::vector<uint32_t> counts(static_cast<size_t>(max_n) + 1, 0);
    for (size_t i = 0; i < count; ++i) ++counts[static_cast<size_t>(num_candidates[i])];
    for (size_t v = 1; v < counts.size(); ++v) {
      if (counts[v] == 0) continue;
      h.n.push_back(static_cast<double>(v));
      h.w1.push_back(counts[v]);
      h.w2.push_back(counts[v]);
    }
    h.total_weight = static_cast<double>(count);
    return h;
  }
  std::vector<std::pair<double, double>> pairs(count);
  for (size_t i = 0; i < count; ++i) pairs[i] = {num_candidates[i], weights ? weights[i] : 1.0};
  std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  CompensatedSum total;
  for (size_t i = 0; i < count;) {
    CompensatedSum s1, s2;
    size_t j = i;
    for (; j < count && pairs[j].first == pairs[i].first; ++j) {
      s1.add(pairs[j].second);
      s2.add(pairs[j].second * pairs[j].second);
    }
    h.n.push_back(pairs[i].first);
    h.w1.push_back(s1.value());
    h.w2.push_back(s2.value());
    total.merge(s1);
    i = j;
  }
  h.total_weight = total.value();
  return h;
}

namespace {

// sum_b w1_b E_b / W and sum_b w2_b V_b / W^2 with per-bin moments from fn(n) -> (E, V).
template <class Fn>
Moments combine(const CandidateHistogram& h, Fn fn) {
  CompensatedSum e, v;
  for (size_t b = 0; b < h.n.size(); ++b) {
    const Moments m = fn(h.n[b]);
    e.add(h.w1[b] * m.expectation);
    v.add(h.w2[b] * m.variance);
  }
  const double w = h.total_weight;
  return {e.value() / w, v.value() / (w * w)};
}

}  // namespace

Moments moments_arithmetic_mean(const CandidateHistogram& h) {
  return combine(h, [](double n) { return Moments{(n + 1) / 2, (n - 1) * (n + 1) / 12}; });
}

Moments moments_inverse_harmonic_mean(const CandidateHistogram& h) {
  return combine(h, [](double n) {
    const double mean = harmonic1(n) / n;
    // Var[1/r] = H_2(n)/n - (H_1(n)/n)^2; for n = 1 both terms are 1 and the difference is exactly 0.
    return Moments{mean, std::max(0.0, harmonic2(n) / n - mean * mean)};
  });
}

Moments moments_hits(const CandidateHistogram& h, double k) {
  return combine(h, [k](double n) {
    const double hit = std::min(k, n);
    const double p = hit / n;
    return Moments{p, p * ((n - hit) / n)};
  });
}

namespace {

struct GeometricGroup {
  double exponent;  // a = w / W
  double n;
  double multiplicity;  // number of tasks with this (a, n)
};

// Accumulates, for one exponent a and sorted distinct n's, sum_c c*log E[r^a] and sum_c c*log1p(Var/E^2).
void sweep_exponent(const GeometricGroup* groups, size_t count, CompensatedSum& log_mean, CompensatedSum& log_ratio) {
  const double a = groups[0].exponent;
  CompensatedSum s1, s2;
  double j = 1;
  for (size_t g = 0; g < count; ++g) {
    const double n = groups[g].n;
    for (; j <= n; j += 1) {
      const double e = std::expm1(a * std::log(j));
      s1.add(e);
      s2.add(e * e);
    }
    const double mean_e = s1.value() / n;                        // E[r^a] - 1
    const double var = std::max(0.0, s2.value() / n - mean_e * mean_e);  // Var[r^a] = Var[r^a - 1]
    const double mu = 1.0 + mean_e;
    log_mean.add(groups[g].multiplicity * std::log1p(mean_e));
    log_ratio.add(groups[g].multiplicity * std::log1p(var / (mu * mu)));
  }
}

}  // namespace

Moments moments_geometric_mean(const double* num_candidates, const double* weights, size_t count) {
  std::vector<GeometricGroup> groups;
  if (weights == nullptr) {
    const CandidateHistogram h = candidate_histogram(num_candidates, nullptr, count);
    const double a = 1.0 / static_cast<double>(count);
    for (size_t b = 0; b < h.n.size(); ++b) groups.push_back({a, h.n[b], h.w1[b]});
  } else {
    CompensatedSum total;
    for (size_t i = 0; i < count; ++i) total.add(weights[i]);
    const double w = total.value();
    std::vector<std::pair<double, double>> pairs(count);
    for (size_t i = 0; i < count; ++i) pairs[i] = {weights[i] / w, num_candidates[i]};
    std::sort(pairs.begin(), pairs.end());
    for (size_t i = 0; i < count;) {
      size_t j = i;
      while (j < count && pairs[j] == pairs[i]) ++j;
      groups.push_back({pairs[i].first, pairs[i].second, static_cast<double>(j - i)});
      i = j;
    }
  }
  CompensatedSum log_mean, log_ratio;
  for (size_t i = 0; i < groups.size();) {
    size_t j = i;
    while (j < groups.size() && groups[j].exponent == groups[i].exponent) ++j;
    sweep_exponent(groups.data() + i, j - i, log_mean, log_ratio);
    i = j;
  }
  const double mean = std::exp(log_mean.value());
  return {mean, mean * mean * std::expm1(log_ratio.value())};
}

Moments closed_moments(ClosedMetric metric, const double* num_candidates, const double* weights, size_t count,
                       double k) {
  switch (metric) {
    case ClosedMetric::ArithmeticMean:
      return moments_arithmetic_mean(candidate_histogram(num_candidates, weights, count));
    case ClosedMetric::InverseHarmonicMean:
      return moments_inverse_harmonic_mean(candidate_histogram(num_candidates, weights, count));
    case ClosedMetric::Hits:
      return moments_hits(candidate_histogram(num_candidates, weights, count), k);
    case ClosedMetric::GeometricMean:
      return moments_geometric_mean(num_candidates, weights, count);
  }
  return {0.0, 0.0};
}

}  // namespace kgrank
