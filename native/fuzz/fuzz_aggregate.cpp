// Fuzz target: the metric aggregate (one value pass over ranks, aggregate_ranks) on ranks that include invalid
// ones (NaN, +-Inf, 0, negatives, huge values), half-integers (the one-value-bucket shortcut of the radix median)
// and arbitrary reals, with and without weights, over several chunks. Oracles: the invalid-rank count and unweighted
// hit counts are exact; sums are close to a long double sum; the result is bit-identical on 1 and 2 threads (the
// determinism contract); the radix-selected median / MAD equal the sorting-based median / MAD.
#include <algorithm>
#include <cstring>

#include "aggregate.h"
#include "fuzz_common.h"

namespace {

double rank(FuzzedDataProvider& p) {
  const uint8_t pick = p.ConsumeIntegral<uint8_t>();
  switch (pick % 16) {
    case 0: return std::numeric_limits<double>::quiet_NaN();
    case 1: return std::numeric_limits<double>::infinity();
    case 2: return -std::numeric_limits<double>::infinity();
    case 3: return 0.0;
    case 4: return -p.ConsumeFloatingPoint<double>() * 1e300;  // large negative
    case 5: return p.ConsumeFloatingPointInRange<double>(1.0, 1e300);
    case 6: {
      uint64_t bits = p.ConsumeIntegral<uint64_t>();
      double v;
      std::memcpy(&v, &bits, sizeof v);
      return v;
    }
    case 7: return 1.0 + static_cast<double>(p.ConsumeIntegral<uint32_t>());
    case 8:
    case 9: return 1.0 + static_cast<double>(pick >> 4) / 2;  // half-integers 1 .. 8.5
    default: return 1.0 + static_cast<double>(pick >> 4);     // small integer ranks: ties
  }
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  const size_t pattern_len = p.ConsumeIntegralInRange<size_t>(1, 64);
  std::vector<double> pattern(pattern_len), wpattern(pattern_len);
  const bool only_valid = p.ConsumeBool();
  for (double& r : pattern) {
    r = rank(p);
    if (only_valid && !(r >= 1.0 && r <= 1.7976931348623157e308)) r = 1.0;
  }
  const bool weighted = p.ConsumeBool();
  for (double& w : wpattern)
    w = p.ConsumeIntegral<uint8_t>() < 250 ? static_cast<double>(p.ConsumeIntegralInRange<int>(0, 9)) / 4
                                           : p.ConsumeFloatingPoint<double>();
  size_t n = p.ConsumeIntegralInRange<size_t>(0, 3 * kgrank::kAggregateChunk + 5);
  if (p.ConsumeBool()) n %= 200;
  std::vector<double> ranks(n), weights(n);
  for (size_t i = 0; i < n; ++i)
    ranks[i] = pattern[(i * 5 + i / 13) % pattern_len], weights[i] = wpattern[i % pattern_len];
  std::vector<double> ks(p.ConsumeIntegralInRange<size_t>(0, 4));
  for (double& k : ks) k = p.ConsumeBool() ? static_cast<double>(p.ConsumeIntegralInRange<int>(0, 12)) : rank(p);
  // MRR@k's cut-offs (the facade passes integers >= 1; any double must still be safe here).
  std::vector<double> truncated(p.ConsumeIntegralInRange<size_t>(0, 3));
  for (double& t : truncated) t = p.ConsumeBool() ? static_cast<double>(p.ConsumeIntegralInRange<int>(1, 12)) : rank(p);
  kgrank::AggregateRequest req;
  req.truncated_ks = truncated.data();
  req.num_truncated = truncated.size();
  req.variance = p.ConsumeBool();
  req.median = p.ConsumeBool();
  req.mad = p.ConsumeBool();
  req.simd = kgrank::best_simd();  // the level users get by default (the dispatch table gives each family its kernel)
  const double* w = weighted ? weights.data() : nullptr;

  const size_t first_truncated = kgrank::kAggregateFixedSlots + ks.size();  // the truncated slots follow the hits
  std::vector<double> out1(first_truncated + truncated.size()), out2(out1.size());
  kgrank::aggregate_ranks(ranks.data(), w, n, ks.data(), ks.size(), req, out1.data(), 1);
  kgrank::aggregate_ranks(ranks.data(), w, n, ks.data(), ks.size(), req, out2.data(), 2);
  FUZZ_CHECK(same_bits(out1, out2));

  size_t invalid = 0;
  for (double r : ranks) invalid += !(r >= 1.0 && r <= 1.7976931348623157e308);
  FUZZ_CHECK(out1[kgrank::kInvalidRanks] == static_cast<double>(invalid));
  if (!weighted) {
    FUZZ_CHECK(out1[kgrank::kSumWeights] == static_cast<double>(n));
    for (size_t j = 0; j < ks.size(); ++j) {
      size_t hits = 0;
      for (double r : ranks) hits += r <= ks[j];
      FUZZ_CHECK(out1[kgrank::kAggregateFixedSlots + j] == static_cast<double>(hits));
    }
  }
  if (invalid > 0) {
    FUZZ_CHECK(std::isnan(out1[kgrank::kMedian]) && std::isnan(out1[kgrank::kMad]));
    return 0;
  }
  // Valid ranks: sums against long double (ranks below 1e300 and weights below 2.25 keep this finite).
  bool tame = true;
  for (size_t i = 0; i < n; ++i) tame &= ranks[i] < 1e15 && (!weighted || (weights[i] >= 0 && weights[i] <= 2.25));
  if (tame) {
    long double sr = 0, sw = 0, si = 0;
    for (size_t i = 0; i < n; ++i) {
      const long double wi = weighted ? weights[i] : 1.0L;
      sw += wi;
      sr += wi * ranks[i];
      si += wi / ranks[i];
    }
    auto close = [](double got, long double want) {
      return std::fabs(static_cast<long double>(got) - want) <= 1e-12L * std::max<long double>(1.0L, std::fabs(want));
    };
    FUZZ_CHECK(close(out1[kgrank::kSumWeights], sw));
    FUZZ_CHECK(close(out1[kgrank::kSumRanks], sr));
    FUZZ_CHECK(close(out1[kgrank::kSumInverseRanks], si));
    for (size_t j = 0; j < truncated.size(); ++j) {
      long double st = 0;
      for (size_t i = 0; i < n; ++i) st += ranks[i] <= truncated[j] ? (weighted ? weights[i] : 1.0L) / ranks[i] : 0.0L;
      FUZZ_CHECK(close(out1[first_truncated + j], st));
    }
  }
  if ((req.median || req.mad) && n > 0 && !weighted) {
    // Radix selection (unweighted) and selection by sorting must agree exactly.
    FUZZ_CHECK(out1[kgrank::kMedian] == kgrank::median(ranks.data(), nullptr, n));
    if (req.mad) FUZZ_CHECK(out1[kgrank::kMad] == kgrank::median_absolute_deviation(ranks.data(), nullptr, n));
    std::vector<double> sorted(ranks);
    std::sort(sorted.begin(), sorted.end());
    const double want = n % 2 ? sorted[n / 2] : sorted[n / 2 - 1] + (sorted[n / 2] - sorted[n / 2 - 1]) / 2;
    FUZZ_CHECK(out1[kgrank::kMedian] == want);
  }
  return 0;
}
