// Unit tests of the metric numerics in native/core (harmonic, aggregate, expectation, sampling).
#include <cmath>
#include <cstring>
#include <random>
#include <cstdio>
#include <limits>
#include <algorithm>
#include <map>
#include <vector>

#include "aggregate.h"
#include "check.h"
#include "expectation.h"
#include "harmonic.h"
#include "power_sums.h"
#include "rank_sums.h"
#include "resample.h"
#include "resample_reference.h"
#include "simd.h"
#include "sampling.h"

namespace {

bool close(double a, double b, double rel) { return std::fabs(a - b) <= rel * std::fabs(b); }

void harmonic_numbers() {
  CHECK_EQ(kgrank::harmonic1(1), 1.0);
  CHECK_EQ(kgrank::harmonic2(2), 1.25);
  CHECK(close(kgrank::harmonic1(10), 7381.0 / 2520.0, 1e-15));
  // table/asymptotic seam: H(n+1) - H(n) = 1/(n+1) across the table limit
  const double n = static_cast<double>(kgrank::kHarmonicTableLimit);
  CHECK(close(kgrank::harmonic1(n + 1) - kgrank::harmonic1(n), 1.0 / (n + 1), 1e-9));
  CHECK(close(kgrank::harmonic1(1e8), 18.997896413853898324417110394223982841, 1e-15));
  CHECK(close(kgrank::harmonic2(1e6), 1.6449330668487264363057484999797, 1e-15));
}

void aggregate_sums_and_medians() {
  const std::vector<double> r = {1, 2, 3.5, 10, 4};
  const double k = 3;
  std::vector<double> out(kgrank::kAggregateFixedSlots + 1);
  kgrank::AggregateRequest req;
  req.variance = req.median = req.mad = true;
  kgrank::aggregate_ranks(r.data(), nullptr, r.size(), &k, 1, req, out.data(), 2);
  CHECK_EQ(out[kgrank::kSumWeights], 5.0);
  CHECK_EQ(out[kgrank::kSumRanks], 20.5);
  CHECK(close(out[kgrank::kSumLogRanks], std::log(1.0 * 2 * 3.5 * 10 * 4), 1e-15));
  CHECK(close(out[kgrank::kSumInverseRanks], 1 + 0.5 + 1 / 3.5 + 0.1 + 0.25, 1e-15));
  CHECK(close(out[kgrank::kSumSquaredDev], 49.2, 1e-14));  // mean 4.1
  CHECK_EQ(out[kgrank::kMedian], 3.5);
  CHECK_EQ(out[kgrank::kMad], 1.5 / kgrank::kNormalQuartile);  // |r - 3.5| = 2.5 1.5 0 6.5 0.5
  CHECK_EQ(out[kgrank::kInvalidRanks], 0.0);
  CHECK_EQ(out[kgrank::kAggregateFixedSlots], 2.0);
  const std::vector<double> bad = {1, std::nan(""), 0.5};
  kgrank::aggregate_ranks(bad.data(), nullptr, bad.size(), nullptr, 0, req, out.data(), 1);
  CHECK_EQ(out[kgrank::kInvalidRanks], 2.0);
}

// MRR@k: truncated slots (request.truncated_ks) after the hit slots, and the TruncatedInverse closed moments.
void mrr_at_k_sums_and_moments() {
  const std::vector<double> r = {1, 2, 3.5, 10, 4};
  const std::vector<double> w = {1, 2, 1, 1, 0.5};
  const std::vector<double> ks = {3};
  const std::vector<double> truncated = {3, 4};
  const size_t first = kgrank::kAggregateFixedSlots + ks.size();
  std::vector<double> out(first + truncated.size());
  kgrank::AggregateRequest req;
  req.truncated_ks = truncated.data();
  req.num_truncated = truncated.size();
  kgrank::aggregate_ranks(r.data(), nullptr, r.size(), ks.data(), ks.size(), req, out.data(), 2);
  CHECK_EQ(out[kgrank::kAggregateFixedSlots], 2.0);  // the hit slot is still a hit count
  CHECK_EQ(out[first], 1.5);
  CHECK(close(out[first + 1], 1 + 0.5 + 1 / 3.5 + 0.25, 1e-15));
  kgrank::aggregate_ranks(r.data(), w.data(), r.size(), ks.data(), ks.size(), req, out.data(), 2);
  CHECK_EQ(out[kgrank::kAggregateFixedSlots], 3.0);
  CHECK_EQ(out[first], 2.0);
  CHECK(close(out[first + 1], 2 + 1 / 3.5 + 0.125, 1e-15));
  // No hit k: the truncated slots start right after the fixed ones.
  std::vector<double> alone(kgrank::kAggregateFixedSlots + 1);
  req.num_truncated = 1;
  kgrank::aggregate_ranks(r.data(), nullptr, r.size(), nullptr, 0, req, alone.data(), 1);
  CHECK_EQ(alone[kgrank::kAggregateFixedSlots], 1.5);
  // Over many chunks, 1 and 3 threads give the same bits.
  std::vector<double> big(100000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = 1 + static_cast<double>((i * 7919) % 40) / 2;
  const double k = 10;
  req.truncated_ks = &k;
  std::vector<double> a(kgrank::kAggregateFixedSlots + 1), b(a.size());
  kgrank::aggregate_ranks(big.data(), nullptr, big.size(), nullptr, 0, req, a.data(), 1);
  kgrank::aggregate_ranks(big.data(), nullptr, big.size(), nullptr, 0, req, b.data(), 3);
  CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
  // N = 5, k = 3: E = H_1(3) / 5 = 11/30, Var = H_2(3) / 5 - E^2 = 124/900; N = 2 <= k: MRR's moments.
  const double n5 = 5, n2 = 2;
  const kgrank::Moments m = kgrank::closed_moments(kgrank::ClosedMetric::TruncatedInverse, &n5, nullptr, 1, 3);
  CHECK(close(m.expectation, 11.0 / 30, 1e-15));
  CHECK(close(m.variance, 124.0 / 900, 1e-14));
  const kgrank::Moments m2 = kgrank::closed_moments(kgrank::ClosedMetric::TruncatedInverse, &n2, nullptr, 1, 3);
  const kgrank::Moments mrr = kgrank::closed_moments(kgrank::ClosedMetric::InverseHarmonicMean, &n2, nullptr, 1, 0);
  CHECK(close(m2.expectation, mrr.expectation, 1e-15));
  CHECK(close(m2.variance, mrr.variance, 1e-14));
  // Hits@3 at the same k is still the hit rate 3/5.
  const kgrank::Moments hits = kgrank::closed_moments(kgrank::ClosedMetric::Hits, &n5, nullptr, 1, 3);
  CHECK_EQ(hits.expectation, 0.6);
}

void aggregate_is_thread_count_independent() {
  std::vector<double> r(300000);
  for (size_t i = 0; i < r.size(); ++i) r[i] = 1 + static_cast<double>((i * 7919) % 100000) / 2;
  kgrank::AggregateRequest req;
  req.variance = req.median = req.mad = true;
  std::vector<double> a(kgrank::kAggregateFixedSlots), b(kgrank::kAggregateFixedSlots);
  kgrank::aggregate_ranks(r.data(), nullptr, r.size(), nullptr, 0, req, a.data(), 1);
  kgrank::aggregate_ranks(r.data(), nullptr, r.size(), nullptr, 0, req, b.data(), 5);
  for (size_t i = 0; i < a.size(); ++i) CHECK_EQ(a[i], b[i]);
}

// Unweighted medians come from radix selection over the pass's coarse histogram: its sums, hits and squared
// deviations equal the pass without a median, its median and MAD the sorting-based ones.
void histogram_path_matches_general_path() {
  std::vector<double> r(200001);
  for (size_t i = 0; i < r.size(); ++i) r[i] = 1 + static_cast<double>((i * 7919) % 150000) / 2;
  const double ks[2] = {3, 1000.5};
  std::vector<double> hist(kgrank::kAggregateFixedSlots + 2), plain(kgrank::kAggregateFixedSlots + 2);
  kgrank::AggregateRequest all;
  all.variance = all.median = all.mad = true;
  kgrank::AggregateRequest sums;
  sums.variance = true;
  kgrank::aggregate_ranks(r.data(), nullptr, r.size(), ks, 2, all, hist.data(), 2);
  kgrank::aggregate_ranks(r.data(), nullptr, r.size(), ks, 2, sums, plain.data(), 2);
  for (size_t s : {kgrank::kSumWeights, kgrank::kSumRanks, kgrank::kSumLogRanks, kgrank::kSumInverseRanks,
                   kgrank::kSumSquaredDev}) {
    CHECK(close(hist[s], plain[s], 1e-14));
  }
  CHECK_EQ(hist[kgrank::kAggregateFixedSlots], plain[kgrank::kAggregateFixedSlots]);
  CHECK_EQ(hist[kgrank::kAggregateFixedSlots + 1], plain[kgrank::kAggregateFixedSlots + 1]);
  CHECK_EQ(hist[kgrank::kMedian], kgrank::median(r.data(), nullptr, r.size()));
  CHECK_EQ(hist[kgrank::kMad], kgrank::median_absolute_deviation(r.data(), nullptr, r.size()));
  r.pop_back();  // even n
  kgrank::aggregate_ranks(r.data(), nullptr, r.size(), ks, 2, all, hist.data(), 1);
  CHECK_EQ(hist[kgrank::kMedian], kgrank::median(r.data(), nullptr, r.size()));
  CHECK_EQ(hist[kgrank::kMad], kgrank::median_absolute_deviation(r.data(), nullptr, r.size()));
}

// The int32 fast path of generate_ranks (every N_i < 2^31) gives the bits of 1 + floor(u * N_i); so does the
// general path when one N_i is 2^31 or more.
void generate_ranks_paths_agree() {
  std::vector<double> small_n(5000), big_n(5000);
  for (size_t i = 0; i < small_n.size(); ++i) {
    small_n[i] = 1 + static_cast<double>((i * 2654435761u) % 2147483647u);
    big_n[i] = small_n[i];
  }
  big_n[17] = 9007199254740991.0;
  std::vector<double> a(small_n.size()), b(big_n.size());
  kgrank::generate_ranks(small_n.data(), small_n.size(), 9, 4, a.data());
  kgrank::generate_ranks(big_n.data(), big_n.size(), 9, 4, b.data());
  for (size_t i = 0; i < a.size(); ++i) {
    const double want = 1 + std::floor(kgrank::uniform01(9, 4, static_cast<uint32_t>(i)) * small_n[i]);
    CHECK_EQ(a[i], want);
    if (i != 17) CHECK_EQ(b[i], want);
  }
  CHECK(b[17] >= 1 && b[17] <= big_n[17]);
}

void closed_forms() {
  const std::vector<double> n = {1, 2, 10};
  const kgrank::Moments mr = kgrank::closed_moments(kgrank::ClosedMetric::ArithmeticMean, n.data(), nullptr, 3, 0);
  CHECK(close(mr.expectation, (1 + 1.5 + 5.5) / 3, 1e-15));
  CHECK(close(mr.variance, (0 + 0.25 + 99.0 / 12) / 9, 1e-15));
  const kgrank::Moments hits = kgrank::closed_moments(kgrank::ClosedMetric::Hits, n.data(), nullptr, 3, 1);
  CHECK(close(hits.expectation, (1 + 0.5 + 0.1) / 3, 1e-15));
  // geometric mean of one task with N = 2: G = r, E = 1.5, Var = 0.25
  const double two = 2;
  const kgrank::Moments g = kgrank::closed_moments(kgrank::ClosedMetric::GeometricMean, &two, nullptr, 1, 0);
  CHECK(close(g.expectation, 1.5, 1e-15));
  CHECK(close(g.variance, 0.25, 1e-14));
  const kgrank::Moments one =
      kgrank::closed_moments(kgrank::ClosedMetric::InverseHarmonicMean, n.data(), nullptr, 1, 0);
  CHECK_EQ(one.variance, 0.0);
}

// Centred power sums: the sweep + Euler-Maclaurin tail against term-by-term long double sums, across the sweep
// limit and for exponents from 1e-7 (a = 1/count at WikiKG2 scale) to 1 (one task).
void centred_power_sums_match_direct_sums() {
  const std::vector<double> n = {1, 2, 255, 256, 257, 258, 1000, 65537, 300000};
  for (double a : {1e-7, 1e-4, 0.013, 0.3, 0.5, 1.0}) {
    std::vector<kgrank::PowerSums> got(n.size());
    kgrank::centred_power_sums(a, n.data(), n.size(), got.data(), 2);
    long double s1 = 0, s2 = 0;
    size_t i = 0;
    for (double j = 1; i < n.size(); j += 1) {
      const long double e = std::expm1(static_cast<long double>(a) * std::log(static_cast<long double>(j)));
      s1 += e;
      s2 += e * e;
      if (n[i] == j) {
        CHECK(close(got[i].s1, static_cast<double>(s1), 2e-14));
        CHECK(close(got[i].s2, static_cast<double>(s2), 2e-14));
        ++i;
      }
    }
  }
  CHECK(kgrank::log1p_small(1e-5) == std::log1p(1e-5) || close(kgrank::log1p_small(1e-5), std::log1p(1e-5), 1e-16));
  CHECK(close(kgrank::log1p_small(0.015), std::log1p(0.015), 2e-16));
}

// The dense histogram against a std::map: several buckets of 2^17 values, one of them empty, buckets whose last
// counters are zero and bins that are alone in theirs (the bins of a bucket are written without a branch, up to its
// last distinct value). Then the per-block helpers of the closed forms against their one-value forms, bit for bit.
void dense_histogram_and_block_helpers() {
  std::vector<double> n;
  for (uint32_t i = 0; i < 40000; ++i) {
    const uint32_t v = (i * 2654435761u) >> 15;  // 1..131071, scattered, with repeats and gaps
    n.push_back(v == 0 ? 1.0 : static_cast<double>(v));
  }
  for (double v : {262144.0, 262145.0, 300000.0, 300000.0, 311000.0}) n.push_back(v);  // bucket 1 stays empty
  // max N 311,000 <= 8 x count + 4096: the dense path (a larger max N would send it to the sort)
  std::map<double, double> want;
  for (double v : n) want[v] += 1;
  const kgrank::CandidateHistogram h = kgrank::candidate_histogram(n.data(), nullptr, n.size(), 2);
  CHECK_EQ(h.n.size(), want.size());
  size_t at = 0;
  for (const auto& [v, m] : want) {
    if (at >= h.n.size()) break;
    CHECK_EQ(h.n[at], v);
    CHECK_EQ(h.w1[at], m);
    ++at;
  }
  std::vector<double> values = {1, 2, 100, 65536, 65537, 1e6, 2.5e6};
  std::vector<kgrank::HarmonicPair> pairs(values.size());
  kgrank::harmonic_means_block(values.data(), values.size(), pairs.data());
  for (size_t i = 0; i < values.size(); ++i) {
    CHECK_EQ(pairs[i].h1_over_n, kgrank::harmonic_means(values[i]).h1_over_n);
    CHECK_EQ(pairs[i].h2_over_n, kgrank::harmonic_means(values[i]).h2_over_n);
  }
  for (double a : {1.0 / 1.2e6, 0.3}) {
    const kgrank::PowerSweep sweep =
        kgrank::power_sweep(a, values.data(), values.size(), [](size_t, kgrank::PowerSums) {});
    for (size_t i = sweep.first; i < values.size(); ++i) {
      CHECK_EQ(sweep.at_log(values[i], std::log(values[i])).s1, sweep.at(values[i]).s1);
      CHECK_EQ(sweep.at_log(values[i], std::log(values[i])).s2, sweep.at(values[i]).s2);
    }
  }
}

// The summed Monte-Carlo statistics (mean rank, inverse harmonic, hits: kSampleLanes samples' sums side by side, a
// lane each) against statistic_of over each sample's ranks, bit for bit: every SIMD level, 1 and 2 threads, with
// and without weights, and a sample count that leaves the last group of lanes part empty.
void lane_statistics_match_statistic_of() {
  using kgrank::SimdLevel;
  using kgrank::Statistic;
  const size_t n = 1000, samples = 37;
  std::vector<double> nc(n), w(n), ranks(n), got(samples);
  for (size_t i = 0; i < n; ++i) {
    nc[i] = 1 + static_cast<double>((i * 104729) % 70001);
    w[i] = 0.5 + static_cast<double>(i % 7) / 3;
  }
  for (Statistic stat : {Statistic::Mean, Statistic::InverseHarmonic, Statistic::Hits}) {
    const double k = stat == Statistic::Hits ? 5000 : 0;
    for (const double* weights : {static_cast<const double*>(nullptr), static_cast<const double*>(w.data())}) {
      for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON}) {
        if (!kgrank::simd_supported(level)) continue;
        for (unsigned threads : {1u, 2u}) {
          kgrank::sample_statistic(nc.data(), weights, n, samples, 9, stat, k, got.data(), threads, level);
          for (size_t s = 0; s < samples; ++s) {
            kgrank::generate_ranks(nc.data(), n, 9, static_cast<uint32_t>(s), ranks.data());
            CHECK_EQ(got[s], kgrank::statistic_of(stat, ranks.data(), weights, n, k));
          }
        }
      }
    }
  }
}

void sampling_stream() {
  // Golden values shared with the TypeScript twin (test/estimate.test.ts checks the backends agree bit for bit).
  const double u = kgrank::uniform01(0, 0, 0);
  CHECK(u >= 0 && u < 1);
  CHECK(kgrank::uniform01(1, 2, 3) != kgrank::uniform01(1, 2, 4));
  const std::vector<double> n = {5, 1, 1000000};
  std::vector<double> a(3), b(3);
  kgrank::generate_ranks(n.data(), 3, 7, 0, a.data());
  kgrank::generate_ranks(n.data(), 3, 7, 0, b.data());
  for (size_t i = 0; i < 3; ++i) {
    CHECK_EQ(a[i], b[i]);
    CHECK(a[i] >= 1 && a[i] <= n[i]);
  }
  CHECK_EQ(a[1], 1.0);
}

// Invalid ranks are only counted: -Inf or a rank below -2^63 must never reach the half-integer test's cast of 2r to
// int64 (undefined behaviour; UBSan: "-inf is outside the range of representable values of type 'long'"), a case
// fuzz_aggregate found.
void aggregate_invalid_ranks_are_counted_without_ub() {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> r = {-inf, 2, -1e300, std::numeric_limits<double>::quiet_NaN(), 0.5, inf};
  const double k = 2;
  std::vector<double> out(kgrank::kAggregateFixedSlots + 1);
  kgrank::AggregateRequest req;
  req.median = req.mad = req.variance = true;
  kgrank::aggregate_ranks(r.data(), nullptr, r.size(), &k, 1, req, out.data(), 1);
  CHECK_EQ(out[kgrank::kInvalidRanks], 5.0);
  CHECK(std::isnan(out[kgrank::kMedian]));
  CHECK(std::isnan(out[kgrank::kMad]));
}

}  // namespace

// The chunk kernel gives the same bits at every SIMD level (lanes see the same operations in the same order), for
// every remainder length, with invalid and non-half-integer ranks among them.
void rank_chunk_sums_levels_agree() {
  std::mt19937_64 g(7);
  std::vector<double> x(1000);
  for (size_t i = 0; i < x.size(); ++i) {
    const uint64_t u = g();
    x[i] = u % 7 == 0 ? 1 + static_cast<double>(u % 1000) / 3 : 1 + static_cast<double>(u % 100000) / 2;
  }
  x[17] = std::numeric_limits<double>::quiet_NaN();
  x[400] = 0.25;
  x[401] = 1e300;
  const double ks[3] = {1, 10.5, 3000};
  for (size_t n : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{263}, size_t{1000}}) {
    for (bool centred : {false, true}) {
      kgrank::RankChunkSums a, b;
      std::vector<uint64_t> ha(3, 0), hb(3, 0);
      std::vector<uint32_t> ca(kgrank::kRankBuckets, 0), cb(kgrank::kRankBuckets, 0);
      kgrank::isa::rank_chunk_sums_scalar(x.data(), n, ks, 3, ha.data(), ca.data(), centred, &a);
#ifdef KGRANK_HAVE_AVX2
      if (!kgrank::simd_supported(kgrank::SimdLevel::AVX2)) continue;
      kgrank::isa::rank_chunk_sums_avx2(x.data(), n, ks, 3, hb.data(), cb.data(), centred, &b);
      CHECK(std::memcmp(&a, &b, sizeof a) == 0);
      CHECK(ha == hb);
      CHECK(ca == cb);
#else
      (void)b;
#endif
    }
  }
}

// Radix-selected median and MAD over several blocks: arbitrary reals, and degenerate inputs where more than half the
// ranks share one value (the median's bucket holds one value; most deviations are 0).
void radix_median_and_mad_match_sorting() {
  std::mt19937_64 g(11);
  std::vector<std::vector<double>> cases(3, std::vector<double>(600001));
  for (size_t i = 0; i < cases[0].size(); ++i) {
    cases[0][i] = 1 + std::ldexp(static_cast<double>(g() >> 11), -40);           // reals in [1, 2^13)
    cases[1][i] = g() % 10 < 6 ? 1.0 : 1 + static_cast<double>(g() % 5000) / 2;  // 60 % ranks of 1
    cases[2][i] = g() % 10 < 6 ? 3.5 : 1 + static_cast<double>(g() % 90);        // 60 % ties at 3.5
  }
  kgrank::AggregateRequest req;
  req.median = req.mad = true;
  std::vector<double> out(kgrank::kAggregateFixedSlots);
  for (std::vector<double>& r : cases) {
    for (int even = 0; even < 2; ++even) {
      if (even) r.pop_back();
      kgrank::aggregate_ranks(r.data(), nullptr, r.size(), nullptr, 0, req, out.data(), 2);
      CHECK_EQ(out[kgrank::kMedian], kgrank::median(r.data(), nullptr, r.size()));
      CHECK_EQ(out[kgrank::kMad], kgrank::median_absolute_deviation(r.data(), nullptr, r.size()));
    }
  }
}

// The aggregate goes through the one dispatch table: at each level it runs that level's rank kernel (the scalar
// level the scalar one, whatever the CPU), and every level gives the same bits.
void aggregate_honours_the_simd_level() {
  std::vector<double> r(3 * kgrank::kAggregateChunk + 5);
  for (size_t i = 0; i < r.size(); ++i) r[i] = 1 + static_cast<double>((i * 7919) % 4099) / 2;
  const double k = 10;
  using kgrank::SimdLevel;
  CHECK(kgrank::kernel_table(SimdLevel::Scalar).rank_chunk_sums == &kgrank::isa::rank_chunk_sums_scalar);
  std::vector<double> scalar(kgrank::kAggregateFixedSlots + 1), other(kgrank::kAggregateFixedSlots + 1);
  for (SimdLevel level : {SimdLevel::AVX512, SimdLevel::AVX2, SimdLevel::NEON, SimdLevel::Scalar}) {
    if (!kgrank::simd_supported(level)) continue;
    kgrank::AggregateRequest req;
    req.variance = req.median = req.mad = true;
    req.simd = SimdLevel::AVX512;  // a different level first, so the hook cannot pass by default
    kgrank::aggregate_ranks(r.data(), nullptr, r.size(), &k, 1, req, other.data(), 2);
    req.simd = level;
    kgrank::aggregate_ranks(r.data(), nullptr, r.size(), &k, 1, req, other.data(), 2);
    const kgrank::KernelTable& table = kgrank::kernel_table(level);
    CHECK(kgrank::last_dispatched(kgrank::KernelFamily::RankSums) == table.variant[3]);
    if (level == SimdLevel::Scalar) {
      CHECK(kgrank::last_dispatched(kgrank::KernelFamily::RankSums) == SimdLevel::Scalar);
      scalar = other;
    }
  }
  // Scalar ran last; compare every level with it.
  for (SimdLevel level : {SimdLevel::AVX512, SimdLevel::AVX2, SimdLevel::NEON}) {
    if (!kgrank::simd_supported(level)) continue;
    kgrank::AggregateRequest req;
    req.variance = req.median = req.mad = true;
    req.simd = level;
    kgrank::aggregate_ranks(r.data(), nullptr, r.size(), &k, 1, req, other.data(), 2);
    CHECK(std::memcmp(scalar.data(), other.data(), scalar.size() * sizeof(double)) == 0);
  }
  // The rank generator too: each level's kernel, the same bits.
  std::vector<double> n(1000), g_scalar(1000), g_level(1000);
  for (size_t i = 0; i < n.size(); ++i) n[i] = 1 + static_cast<double>((i * 104729) % 1000003);
  kgrank::generate_ranks(n.data(), n.size(), 5, 3, g_scalar.data(), SimdLevel::Scalar);
  CHECK(kgrank::last_dispatched(kgrank::KernelFamily::GenerateRanks) == SimdLevel::Scalar);
  for (SimdLevel level : {SimdLevel::AVX512, SimdLevel::AVX2, SimdLevel::NEON}) {
    if (!kgrank::simd_supported(level)) continue;
    kgrank::generate_ranks(n.data(), n.size(), 5, 3, g_level.data(), level);
    CHECK(kgrank::last_dispatched(kgrank::KernelFamily::GenerateRanks) == kgrank::kernel_table(level).variant[4]);
    CHECK(g_level == g_scalar);
  }
  // An unsupported level falls back to the scalar table.
  CHECK(kgrank::kernel_table(static_cast<SimdLevel>(7)).count_f32 == kgrank::kernel_table(SimdLevel::Scalar).count_f32);
}

// paired_resample against the definition written out (resample_reference.h), every ISA, thread count and window.
void paired_resample_matches_definition() {
  using kgrank::Resampling;
  using kgrank::SimdLevel;
  for (size_t n : {1u, 2u, 31u, 33u, 4097u, 6000u}) {
    std::vector<double> a(n), b(n), x(2 * n);
    std::mt19937 gen(static_cast<unsigned>(n));
    for (size_t i = 0; i < n; ++i) {
      a[i] = 1 + static_cast<double>(gen() % 80) / 2;
      b[i] = i % 4 == 0 ? a[i] : 1 + static_cast<double>(gen() % 300) / 2;
      x[i] = b[i] - a[i];
      x[n + i] = 1 / b[i] - 1 / a[i];
    }
    const kgrank_test::PairedFixture f(a, b, x, 2);
    kgrank::PairedColumns c = f.columns();
    const uint32_t key = 77, first = 5;
    const size_t count = 6, width = 4;
    for (Resampling kind : {Resampling::Randomization, Resampling::Bootstrap}) {
      const std::vector<double> want = f.reference(kind, key, first, count);
      for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON}) {
        if (!kgrank::simd_supported(level)) continue;
        for (unsigned threads : {1u, 3u}) {
          // The medians' windows as wide as in use, and too narrow to hold them (every median counted in full).
          for (double window : {8.0, 0.0}) {
            c.window = window;
            std::vector<double> got(count * width, -1.0);
            kgrank::paired_resample(kind, c, key, first, count, got.data(), threads, level);
            CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(double)) == 0);
          }
        }
      }
    }
  }
}

int main() {
  harmonic_numbers();
  aggregate_honours_the_simd_level();
  aggregate_sums_and_medians();
  aggregate_is_thread_count_independent();
  mrr_at_k_sums_and_moments();
  closed_forms();
  histogram_path_matches_general_path();
  rank_chunk_sums_levels_agree();
  radix_median_and_mad_match_sorting();
  generate_ranks_paths_agree();
  sampling_stream();
  aggregate_invalid_ranks_are_counted_without_ub();
  centred_power_sums_match_direct_sums();
  dense_histogram_and_block_helpers();
  lane_statistics_match_statistic_of();
  paired_resample_matches_definition();
  TEST_MAIN_END();
}
