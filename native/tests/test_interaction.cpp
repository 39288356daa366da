// Ranking from embeddings: at every SIMD level and thread count the kernel's counts equal a plain loop over
// score_triple() (the single-pair code), which checks that every vector lane computes each score bit for bit as the
// scalar code does (a rank counts the true candidate as equal exactly once), for every interaction and both complex
// layouts, with filter exclusions, a candidate subset and OGB negatives; and float64 agrees with float32 closely.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "check.h"
#include "interaction.h"

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
  std::vector<int32_t> anchor(rows), relation(rows), truth(rows), cand, neg;
  for (size_t i = 0; i < rows; ++i) {
    anchor[i] = static_cast<int32_t>(rng() % n);
    relation[i] = static_cast<int32_t>(rng() % nr);
    truth[i] = i == 0 ? 3 : static_cast<int32_t>(rng() % n);
  }
  for (size_t e = 0; e < n; e += 3) cand.push_back(static_cast<int32_t>(e));
  const size_t K = 9;
  for (size_t i = 0; i < rows * K; ++i) neg.push_back(static_cast<int32_t>(rng() % n));
  std::vector<uint32_t> off(rows + 1, 0);
  std::vector<int32_t> excl;
  for (size_t i = 0; i < rows; ++i) {
    for (int j = 0; j < 4; ++j) excl.push_back(static_cast<int32_t>((truth[i] + 11 * (j + 1)) % n));
    off[i + 1] = static_cast<uint32_t>(excl.size());
  }
  for (bool head : {false, true}) {
    for (int mode = 0; mode < 3; ++mode) {  // 0: all entities + filter, 1: candidate subset, 2: negatives
      // Expected counts from score_triple, one pair at a time.
      std::vector<double> g(rows, 0), e(rows, 0), rem(rows, 0);
      for (size_t i = 0; i < rows; ++i) {
        auto score = [&](int32_t x) {
          return head ? score_triple(m, x, relation[i], anchor[i], true) : score_triple(m, anchor[i], relation[i], x, false);
        };
        const double t = score(truth[i]);
        auto count = [&](int32_t x, double sign) {
          const double s = score(x);
          if (s > t) g[i] += sign;
          else if (s == t) e[i] += sign;
        };
        if (mode == 0) {
          for (size_t x = 0; x < n; ++x) count(static_cast<int32_t>(x), 1);
          for (uint32_t j = off[i]; j < off[i + 1]; ++j) {
            count(excl[j], -1);
            rem[i] += 1;
          }
        } else if (mode == 1) {
          for (int32_t x : cand) count(x, 1);
        } else {
          for (size_t j = 0; j < K; ++j) count(neg[i * K + j], 1);
        }
      }
      for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON}) {
        if (!simd_supported(level)) continue;
        for (unsigned threads : {1u, 2u, 3u}) {
          EmbeddingQueries q;
          q.rows = rows;
          q.head_side = head;
          q.anchor = anchor.data();
          q.relation = relation.data();
          q.truth = truth.data();
          if (mode == 0) {
            q.exclude_offsets = off.data();
            q.exclude_ids = excl.data();
          } else if (mode == 1) {
            q.candidates = cand.data();
            q.num_candidates = cand.size();
          } else {
            q.negatives = neg.data();
            q.negatives_per_row = K;
          }
          std::vector<double> out(5 * rows, -1);
          EmbeddingCounts c{out.data(), out.data() + rows, out.data() + 2 * rows, out.data() + 3 * rows, out.data() + 4 * rows};
          // Three threads run with a job control (same counts, progress ends at done == total); a cancelled control
          // stops the job with Cancelled.
          kgrank::JobControl control;
          CHECK(rank_embeddings<T>(m, q, c, level, threads, threads == 3 ? &control : nullptr).ok());
          if (threads == 3) {
            CHECK(control.total() > 0);
            CHECK_EQ(control.done(), control.total());
          }
          if (threads == 2) {
            std::vector<double> scratch(5 * rows, -1);
            EmbeddingCounts sc{scratch.data(), scratch.data() + rows, scratch.data() + 2 * rows, scratch.data() + 3 * rows,
                               scratch.data() + 4 * rows};
            kgrank::JobControl cancelled;
            cancelled.cancel();
            bool threw = false;
            try {
              (void)rank_embeddings<T>(m, q, sc, level, threads, &cancelled);
            } catch (const kgrank::Cancelled&) {
              threw = true;
            }
            CHECK(threw);
          }
          for (size_t i = 0; i < rows; ++i) {
            CHECK_EQ(out[i], g[i]);
            CHECK_EQ(out[rows + i], e[i]);
            CHECK_EQ(out[2 * rows + i], 0.0);
            if (mode == 0) CHECK_EQ(out[3 * rows + i], rem[i]);
          }
        }
      }
    }
  }
}

// With a job control the chunk pass runs in blocks of 256 rows: a batch of several blocks (and a partial one) gets
// exactly the counts of the unblocked run, at every level, for float32 (the ISA kernels) and float64.
template <class T>
void check_row_blocks(std::mt19937& rng) {
  const size_t n = 700, nr = 3, d = 24, rows = 600;
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<T> ent(n * d), rel(nr * d);
  for (auto& v : ent) v = static_cast<T>(u(rng));
  for (auto& v : rel) v = static_cast<T>(u(rng));
  EmbeddingModel<T> m{Interaction::TransEL2, ComplexLayout::Halves, ent.data(), rel.data(), n, nr, d, d, 1.0, nullptr};
  std::vector<int32_t> anchor(rows), relation(rows), truth(rows);
  std::vector<uint32_t> off(rows + 1, 0);
  std::vector<int32_t> excl;
  for (size_t i = 0; i < rows; ++i) {
    anchor[i] = static_cast<int32_t>(rng() % n);
    relation[i] = static_cast<int32_t>(rng() % nr);
    truth[i] = static_cast<int32_t>(rng() % n);
    excl.push_back(static_cast<int32_t>((truth[i] + 5) % n));
    off[i + 1] = static_cast<uint32_t>(excl.size());
  }
  EmbeddingQueries q;
  q.rows = rows;
  q.head_side = false;
  q.anchor = anchor.data();
  q.relation = relation.data();
  q.truth = truth.data();
  q.exclude_offsets = off.data();
  q.exclude_ids = excl.data();
  for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON}) {
    if (!simd_supported(level)) continue;
    for (unsigned threads : {1u, 2u}) {
      std::vector<double> a(5 * rows, -1), b(5 * rows, -2);
      EmbeddingCounts ca{a.data(), a.data() + rows, a.data() + 2 * rows, a.data() + 3 * rows, a.data() + 4 * rows};
      EmbeddingCounts cb{b.data(), b.data() + rows, b.data() + 2 * rows, b.data() + 3 * rows, b.data() + 4 * rows};
      CHECK(rank_embeddings<T>(m, q, ca, level, threads).ok());
      kgrank::JobControl control;
      CHECK(rank_embeddings<T>(m, q, cb, level, threads, &control).ok());
      CHECK(a == b);
      CHECK_EQ(control.done(), control.total());
    }
  }
}

}  // namespace

int main() {
  std::mt19937 rng(42);
  const Fixture fixtures[] = {
      {Interaction::TransEL1, ComplexLayout::Halves, 37, 37},
      {Interaction::TransEL2, ComplexLayout::Halves, 37, 37},
      {Interaction::DistMult, ComplexLayout::Halves, 37, 37},
      {Interaction::ComplEx, ComplexLayout::Halves, 36, 36},
      {Interaction::ComplEx, ComplexLayout::Interleaved, 36, 36},
      {Interaction::RotatE, ComplexLayout::Halves, 36, 18},
      {Interaction::RotatE, ComplexLayout::Interleaved, 36, 36},
      {Interaction::PairRE, ComplexLayout::Halves, 37, 74},
  };
  for (const Fixture& f : fixtures) {
    check_model<float>(f, rng);
    check_model<double>(f, rng);
  }
  check_row_blocks<float>(rng);
  check_row_blocks<double>(rng);
  // The probe counts what it did.
  double sink = 0;
  CHECK_EQ(fma_probe(SimdLevel::Scalar, 1, 10, &sink), 10.0 * 12.0);
  TEST_MAIN_END();
}
