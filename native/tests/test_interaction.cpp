// Ranking from embeddings: at every SIMD level and thread count the kernel's counts equal a plain loop over
// score_triple() (the single-pair code; the oracle is interaction_oracle.h, shared with the fuzz target), which
// checks that every vector lane computes each score bit for bit as the scalar code does (a rank counts the true
// candidate as equal exactly once), for every interaction and both complex layouts, with filter exclusions, a
// candidate subset and OGB negatives; and float64 agrees with float32 closely.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "check.h"
#include "interaction.h"
#include "interaction_oracle.h"

using namespace kgrank;

namespace {

struct Fixture {
  Interaction interaction;
  ComplexLayout layout;
  size_t width, rel_width;
};

template <class T>
void check_model(const Fixture& f, std::mt19937& rng) {
  const size_t n = 301, nr = 5, rows = 23;
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<T> ent(n * f.width), rel(nr * f.rel_width), scale;
  for (auto& v : ent) v = static_cast<T>(u(rng));
  for (auto& v : rel) v = static_cast<T>(u(rng));
  // Force exact ties: entity 7 is a copy of entity 3.
  for (size_t k = 0; k < f.width; ++k) ent[7 * f.width + k] = ent[3 * f.width + k];
  if (f.interaction == Interaction::PairRE) {
    scale.resize(n);
    for (size_t e = 0; e < n; ++e) {
      double s = 0;
      for (size_t k = 0; k < f.width; ++k) s += static_cast<double>(ent[e * f.width + k]) * ent[e * f.width + k];
      scale[e] = static_cast<T>(1 / std::sqrt(s));
    }
  }
  EmbeddingModel<T> m{f.interaction, f.layout, ent.data(), rel.data(), n, nr, f.width, f.rel_width, 0.7,
                      scale.empty() ? nullptr : scale.data()};
  kgrank_oracle::Job job;
  job.anchor.resize(rows);
  job.relation.resize(rows);
  job.truth.resize(rows);
  for (size_t i = 0; i < rows; ++i) {
    job.anchor[i] = static_cast<int32_t>(rng() % n);
    job.relation[i] = static_cast<int32_t>(rng() % nr);
    job.truth[i] = i == 0 ? 3 : static_cast<int32_t>(rng() % n);
  }
  for (size_t e = 0; e < n; e += 3) job.cand.push_back(static_cast<int32_t>(e));
  job.K = 9;
  for (size_t i = 0; i < rows * job.K; ++i) job.neg.push_back(static_cast<int32_t>(rng() % n));
  job.off.assign(rows + 1, 0);
  for (size_t i = 0; i < rows; ++i) {
    for (int j = 0; j < 4; ++j) job.excl.push_back(static_cast<int32_t>((job.truth[i] + 11 * (j + 1)) % n));
    job.off[i + 1] = static_cast<uint32_t>(job.excl.size());
  }
  for (bool head : {false, true}) {
    for (auto mode : {kgrank_oracle::Job::AllEntities, kgrank_oracle::Job::Subset, kgrank_oracle::Job::Negatives}) {
      job.head = head;
      job.mode = mode;
      const kgrank_oracle::Expected want = kgrank_oracle::expected_counts(m, job);
      CHECK(!want.nan_true);
      for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON}) {
        if (!simd_supported(level)) continue;
        for (unsigned threads : {1u, 2u, 3u}) {
          std::vector<double> out;
          CHECK(kgrank_oracle::run_kernel(m, job, level, threads, out).ok());
          for (size_t i = 0; i < rows; ++i) {
            CHECK_EQ(out[i], want.greater[i]);
            CHECK_EQ(out[rows + i], want.equal[i]);
            CHECK_EQ(out[2 * rows + i], 0.0);
            if (mode == kgrank_oracle::Job::AllEntities) CHECK_EQ(out[3 * rows + i], want.removed[i]);
          }
        }
      }
    }
  }
}

}  // namespace

int main() {
  // One line naming the levels the kernel checks run at, so a cross run can check it exercised its SIMD kernels.
  std::printf("simd levels tested:");
  for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON}) {
    if (simd_supported(level)) std::printf(" %s", simd_name(level));
  }
  std::printf("\n");
  std::mt19937 rng(42);
  const Fixture fixtures[] = {
      {Interaction::TransEL1, ComplexLayout::Halves, 37, 37},
      {Interaction::TransEL2, ComplexLayout::Halves, 37, 37},
      {Interaction::DistMult, ComplexLayout::Halves, 37, 37},
      {Interaction::ComplEx, ComplexLayout::Halves, 36, 36},
      {Interaction::ComplEx, ComplexLayout::Interleaved, 36, 36},
      {Interaction::RotatE, ComplexLayout::Halves, 36, 18},
      {Interaction::RotatE, ComplexLayout::Interleaved, 36, 36},
      {Interaction::RotatEL2, ComplexLayout::Halves, 36, 18},
      {Interaction::RotatEL2, ComplexLayout::Interleaved, 36, 36},
      {Interaction::PairRE, ComplexLayout::Halves, 37, 74},
  };
  for (const Fixture& f : fixtures) {
    check_model<float>(f, rng);
    check_model<double>(f, rng);
  }
  // cos_sin (RotatE's phases, twin of the fallback's cosSin) is within a few ulps of libm's cos / sin.
  {
    std::uniform_real_distribution<double> phase(-1000.0, 1000.0);
    double worst = 0;
    for (int i = 0; i < 200000; ++i) {
      const double x = i < 1000 ? (i - 500) * 0.7853981633974483 : phase(rng);  // multiples of pi/4 included
      double c, s;
      cos_sin(x, &c, &s);
      worst = std::max(worst, std::max(std::fabs(c - std::cos(x)), std::fabs(s - std::sin(x))));
    }
    CHECK(worst < 1e-15);
    double c, s;
    cos_sin(std::nan(""), &c, &s);
    CHECK(c != c && s != s);
  }
  // The probe counts what it did.
  double sink = 0;
  CHECK_EQ(fma_probe(SimdLevel::Scalar, 1, 10, &sink), 10.0 * 12.0);
  TEST_MAIN_END();
}
