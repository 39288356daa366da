// Top-k from embeddings (interaction.h top_k_embeddings): at every SIMD level and thread count each row's list is
// the brute force over score_triple() (score_one, the kernel lane's operations): candidates of the range not
// excluded and not NaN, sorted by score descending then id ascending, the first k, padded with -1 / NaN. Entity
// rows come in equal pairs (ties), the range spans four candidate chunks, and (a table of 300,000 entities) several
// segments whose lists are merged. A slice of the table (entity_offset, the anchors' rows given apart) lists what
// the whole table lists over its range; with a floor, exactly that list's entries above it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "check.h"
#include "interaction.h"

using namespace kgrank;

namespace {

template <class T>
void check(Interaction interaction, size_t width, size_t rel_width, std::mt19937& rng, size_t n = 2000,
           size_t rows = 300) {
  const size_t nr = 3, k = 7, begin = 5, end = n - 10;
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  std::vector<T> ent(n * width), rel(nr * rel_width);
  for (auto& v : ent) v = static_cast<T>(u(rng));
  for (size_t e = 1; e < n; e += 2) std::copy_n(ent.begin() + (e - 1) * width, width, ent.begin() + e * width);
  for (auto& v : rel) v = static_cast<T>(u(rng));
  EmbeddingModel<T> m{interaction, ComplexLayout::Halves, ent.data(), rel.data(), n, nr, width, rel_width, 1.0,
                      nullptr};
  std::vector<int32_t> anchor(rows), relation(rows), excl;
  std::vector<uint32_t> off(rows + 1, 0);
  for (size_t i = 0; i < rows; ++i) {
    anchor[i] = static_cast<int32_t>(rng() % n);
    relation[i] = static_cast<int32_t>(rng() % nr);
    for (int j = 0; j < 3; ++j) excl.push_back(static_cast<int32_t>(rng() % n));
    off[i + 1] = static_cast<uint32_t>(excl.size());
  }
  for (bool head : {false, true}) {
    EmbeddingQueries q{};
    q.rows = rows;
    q.head_side = head;
    q.anchor = anchor.data();
    q.relation = relation.data();
    q.truth = anchor.data();
    q.exclude_offsets = off.data();
    q.exclude_ids = excl.data();
    std::vector<int32_t> want_id(rows * k);
    std::vector<double> want_score(rows * k);
    for (size_t i = 0; i < rows; ++i) {
      std::vector<std::pair<double, int32_t>> all;
      for (size_t e = begin; e < end; ++e) {
        const int32_t ei = static_cast<int32_t>(e);
        if (std::find(excl.begin() + off[i], excl.begin() + off[i + 1], ei) != excl.begin() + off[i + 1]) continue;
        const double s = head ? score_triple<T>(m, ei, relation[i], anchor[i], true)
                              : score_triple<T>(m, anchor[i], relation[i], ei, false);
        if (s == s) all.emplace_back(s, ei);
      }
      std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
        return a.first > b.first || (a.first == b.first && a.second < b.second);
      });
      for (size_t j = 0; j < k; ++j) {
        want_id[i * k + j] = j < all.size() ? all[j].second : -1;
        want_score[i * k + j] = j < all.size() ? all[j].first : std::nan("");
      }
    }
    for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON}) {
      if (level != SimdLevel::Scalar && !simd_supported(level)) continue;
      for (unsigned threads : {1u, 2u, 3u}) {
        std::vector<int32_t> id(rows * k);
        std::vector<double> score(rows * k);
        CHECK(top_k_embeddings<T>(m, q, k, begin, end, id.data(), score.data(), level, threads).ok());
        CHECK(id == want_id);
        for (size_t j = 0; j < rows * k; ++j) {
          CHECK(score[j] == want_score[j] || (score[j] != score[j] && want_score[j] != want_score[j]));
        }
      }
    }
  }
}

// A slice of the table (rows [a, b) with entity_offset a, the anchors' rows given apart as a chunk read from disk
// has them) lists the same global ids and scores as the whole table over the range [a, b).
template <class T>
void check_slice(Interaction interaction, size_t width, size_t rel_width, std::mt19937& rng) {
  const size_t n = 3000, nr = 4, rows = 70, k = 9, a = 1234, b = 2345;
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  std::vector<T> ent(n * width), rel(nr * rel_width), scale;
  for (auto& v : ent) v = static_cast<T>(u(rng));
  for (size_t e = 1; e < n; e += 2) std::copy_n(ent.begin() + (e - 1) * width, width, ent.begin() + e * width);
  for (auto& v : rel) v = static_cast<T>(u(rng));
  if (interaction == Interaction::PairRE) {
    scale.resize(n);
    for (auto& s : scale) s = static_cast<T>(0.5 + u(rng) / 4);
  }
  EmbeddingModel<T> whole{interaction, ComplexLayout::Halves,
                          ent.data(),  rel.data(),
                          n,           nr,
                          width,       rel_width,
                          1.0,         scale.empty() ? nullptr : scale.data()};
  std::vector<int32_t> anchor(rows), relation(rows), excl;
  std::vector<uint32_t> off(rows + 1, 0);
  std::vector<T> anchor_rows(rows * width), anchor_scale;
  for (size_t i = 0; i < rows; ++i) {
    anchor[i] = static_cast<int32_t>(rng() % n);
    relation[i] = static_cast<int32_t>(rng() % nr);
    std::copy_n(ent.begin() + anchor[i] * width, width, anchor_rows.begin() + i * width);
    if (!scale.empty()) anchor_scale.push_back(scale[anchor[i]]);
    for (int j = 0; j < 40; ++j) excl.push_back(static_cast<int32_t>(rng() % n));  // global ids, most outside
    off[i + 1] = static_cast<uint32_t>(excl.size());
  }
  EmbeddingModel<T> slice = whole;
  slice.entity = ent.data() + a * width;
  slice.num_entities = b - a;
  slice.entity_scale = scale.empty() ? nullptr : scale.data() + a;
  slice.entity_offset = a;
  slice.anchor_rows = anchor_rows.data();
  slice.anchor_scale = anchor_scale.empty() ? nullptr : anchor_scale.data();
  for (bool head : {false, true}) {
    EmbeddingQueries q{};
    q.rows = rows;
    q.head_side = head;
    q.anchor = anchor.data();
    q.relation = relation.data();
    q.truth = anchor.data();
    q.exclude_offsets = off.data();
    q.exclude_ids = excl.data();
    std::vector<int32_t> want_id(rows * k), id(rows * k);
    std::vector<double> want_score(rows * k), score(rows * k);
    CHECK(top_k_embeddings<T>(whole, q, k, a, b, want_id.data(), want_score.data(), SimdLevel::Scalar, 1).ok());
    for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON}) {
      if (level != SimdLevel::Scalar && !simd_supported(level)) continue;
      for (unsigned threads : {1u, 3u}) {
        CHECK(top_k_embeddings<T>(slice, q, k, 0, b - a, id.data(), score.data(), level, threads).ok());
        CHECK(id == want_id);
        CHECK(score == want_score);
      }
    }
    // A floor (the k-th score of the rows' lists over [0, a), NaN where a list is not full) lists exactly the
    // entries of the unfloored list above it: a prefix, then padding.
    std::vector<int32_t> before_id(rows * k);
    std::vector<double> before_score(rows * k), floor(rows);
    CHECK(top_k_embeddings<T>(whole, q, k, 0, a, before_id.data(), before_score.data(), SimdLevel::Scalar, 1).ok());
    for (size_t i = 0; i < rows; ++i) floor[i] = i % 5 == 4 ? std::nan("") : before_score[i * k + k - 1];
    q.floor = floor.data();
    for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON}) {
      if (level != SimdLevel::Scalar && !simd_supported(level)) continue;
      for (unsigned threads : {1u, 3u}) {
        CHECK(top_k_embeddings<T>(slice, q, k, 0, b - a, id.data(), score.data(), level, threads).ok());
        for (size_t i = 0; i < rows; ++i) {
          size_t j = 0;
          for (; j < k && want_id[i * k + j] >= 0 && !(want_score[i * k + j] <= floor[i]); ++j) {
            CHECK(id[i * k + j] == want_id[i * k + j] && score[i * k + j] == want_score[i * k + j]);
          }
          for (; j < k; ++j) CHECK(id[i * k + j] == -1 && score[i * k + j] != score[i * k + j]);
        }
      }
    }
  }
}

// A floor of -inf keeps every finite score: with every score negative, each row lists what it lists without a floor
// (the row's threshold is the floor itself while its list is not full, not 0).
void floor_minus_infinity(std::mt19937& rng) {
  const size_t n = 1500, d = 8, rows = 20, k = 4;
  std::uniform_real_distribution<float> u(0.1f, 1.0f);
  std::vector<float> ent(n * d), rel(d, -1.0f);
  for (auto& v : ent) v = u(rng);
  const EmbeddingModel<float> m{
      Interaction::DistMult, ComplexLayout::Halves, ent.data(), rel.data(), n, 1, d, d, 1.0, nullptr};
  std::vector<int32_t> anchor(rows), relation(rows, 0);
  for (size_t i = 0; i < rows; ++i) anchor[i] = static_cast<int32_t>(rng() % n);
  EmbeddingQueries q{};
  q.rows = rows;
  q.anchor = anchor.data();
  q.relation = relation.data();
  q.truth = anchor.data();
  std::vector<int32_t> want_id(rows * k), id(rows * k);
  std::vector<double> want_score(rows * k), score(rows * k);
  CHECK(top_k_embeddings<float>(m, q, k, 0, n, want_id.data(), want_score.data(), SimdLevel::Scalar, 1).ok());
  for (size_t j = 0; j < rows * k; ++j) CHECK(want_score[j] < 0);
  const std::vector<double> floor(rows, -std::numeric_limits<double>::infinity());
  q.floor = floor.data();
  for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON}) {
    if (level != SimdLevel::Scalar && !simd_supported(level)) continue;
    for (ScreenMode screen : {ScreenMode::Off, ScreenMode::Int8}) {
      q.screen = screen;
      CHECK(top_k_embeddings<float>(m, q, k, 0, n, id.data(), score.data(), level, 2).ok());
      CHECK(id == want_id);
      CHECK(score == want_score);
    }
  }
}

}  // namespace

int main() {
  std::mt19937 rng(20251126);
  check<float>(Interaction::DistMult, 19, 19, rng, 2000, 1100);  // two row blocks of 1024
  check<float>(Interaction::TransEL1, 21, 21, rng);
  check<float>(Interaction::RotatE, 18, 9, rng);
  check<float>(Interaction::PairRE, 17, 34, rng);
  check<double>(Interaction::TransEL2, 11, 11, rng);
  // Over 512 chunks of 512: two or more segments from two threads on, their lists merged.
  check<float>(Interaction::DistMult, 4, 4, rng, 300000, 3);
  check_slice<float>(Interaction::DistMult, 13, 13, rng);
  check_slice<float>(Interaction::PairRE, 9, 18, rng);
  check_slice<float>(Interaction::RotatE, 10, 5, rng);
  check_slice<double>(Interaction::TransEL1, 7, 7, rng);
  floor_minus_infinity(rng);
  TEST_MAIN_END();
}
