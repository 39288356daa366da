// Inputs built to break the int8 screen's bound (screen.h), shared by test_screen.cpp and the fuzz target
// fuzz_screen.cpp, and the oracles both use: rank_embeddings and top_k_embeddings with the screen off. A case is drawn
// from a stream of random words (a PRNG in the test, the fuzzer's bytes in the target): exact ties (copied rows, the
// true answer's copies), near-ties one ulp apart, huge dynamic range within a row, a single huge coordinate, all-equal
// rows, zero rows and queries, NaN and infinities, subnormals, values at and beyond the screen's [2^-50, 2^50] range.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "interaction.h"

namespace kgrank_screen {

struct Case {
  kgrank::Interaction interaction = kgrank::Interaction::DistMult;
  kgrank::ComplexLayout layout = kgrank::ComplexLayout::Halves;
  size_t n = 0, nr = 0, width = 0, rows = 0;
  bool head = false;
  std::vector<float> ent, rel;
  std::vector<int32_t> anchor, relation, truth;
  std::vector<uint32_t> off;  // exclusions (filter), empty for none
  std::vector<int32_t> excl;
  size_t entity_offset = 0;  // the table as a slice (EmbeddingModel::entity_offset); truth stays a row of `ent`
};

using Next = std::function<uint32_t()>;

inline float uniform(const Next& next) { return static_cast<float>(next() >> 8) * (2.0f / 16777216.0f) - 1.0f; }

// One value of a row of `kind` (0 plain, 1 wide range, 2 special values).
inline float value(const Next& next, int kind) {
  using L = std::numeric_limits<float>;
  if (kind == 0) return uniform(next);
  if (kind == 1) return uniform(next) * std::ldexp(1.0f, static_cast<int>(next() % 200) - 100);
  switch (next() % 20) {
    case 0: return 0.0f;
    case 1: return -0.0f;
    case 2: return L::denorm_min();
    case 3: return -L::denorm_min() * static_cast<float>(next() % 1000);
    case 4: return L::min();
    case 5: return std::ldexp(1.0f, 50);
    case 6: return std::ldexp(1.0f, 51);
    case 7: return std::ldexp(1.0f, -50);
    case 8: return std::ldexp(1.0f, -51);
    case 9: return 1e30f;
    case 10: return next() % 8 == 0 ? L::quiet_NaN() : 1.0f;
    case 11: return next() % 8 == 0 ? L::infinity() : -1.0f;
    case 12: return next() % 8 == 0 ? -L::infinity() : 0.5f;
    case 13: return L::max() * 0.5f;
    case 14: return 1.0f + L::epsilon();
    default: return uniform(next);
  }
}

// A case of n entities, width w (even for ComplEx), `rows` queries; `special` in [-1, 8]: how hostile (-1: plain
// random rows; 0: random rows with exact ties, near-ties, all-equal, zero rows and rows with one huge coordinate).
// `distance`: TransE-L2 (RotatE-L2 where complex) in place of DistMult (ComplEx).
inline Case make_case(const Next& next, size_t n, size_t w, size_t rows, bool complex, int special,
                      bool distance = false) {
  Case c;
  c.interaction = distance ? (complex ? kgrank::Interaction::RotatEL2 : kgrank::Interaction::TransEL2)
                           : (complex ? kgrank::Interaction::ComplEx : kgrank::Interaction::DistMult);
  c.layout = next() % 2 ? kgrank::ComplexLayout::Interleaved : kgrank::ComplexLayout::Halves;
  c.n = n;
  c.nr = 1 + next() % 4;
  c.width = complex ? (w + 1) / 2 * 2 : w;
  c.rows = rows;
  c.head = next() % 2 == 1;
  const size_t W = c.width;
  c.ent.resize(n * W);
  c.rel.resize(c.nr * W);
  for (size_t e = 0; e < n; ++e) {
    const uint32_t shape = special < 0 ? 16 : next() % 16;
    float* row = c.ent.data() + e * W;
    const int kind = special > 0 && static_cast<int>(next() % 9) < special ? static_cast<int>(1 + next() % 2) : 0;
    for (size_t k = 0; k < W; ++k) row[k] = value(next, kind);
    if (e > 0 && shape == 0) std::memcpy(row, c.ent.data() + (next() % e) * W, W * sizeof(float));  // exact tie
    if (e > 0 && shape == 1) {  // one ulp from another row in one element
      std::memcpy(row, c.ent.data() + (next() % e) * W, W * sizeof(float));
      const size_t k = next() % W;
      row[k] = std::nextafter(row[k], next() % 2 ? 1e38f : -1e38f);
    }
    if (shape == 2) {  // all equal
      const float v = value(next, kind);
      for (size_t k = 0; k < W; ++k) row[k] = v;
    }
    if (shape == 3) {  // one huge coordinate
      for (size_t k = 0; k < W; ++k) row[k] *= 1e-6f;
      row[next() % W] = 1e6f;
    }
    if (shape == 4) {
      for (size_t k = 0; k < W; ++k) row[k] = 0.0f;
    }
    if (shape == 5 && special > 0) {  // subnormals
      for (size_t k = 0; k < W; ++k)
        row[k] = std::numeric_limits<float>::denorm_min() * static_cast<float>(next() % 64);
    }
  }
  for (size_t r = 0; r < c.nr; ++r) {
    for (size_t k = 0; k < W; ++k) c.rel[r * W + k] = next() % 8 == 0 && special > 0 ? value(next, 2) : uniform(next);
  }
  c.anchor.resize(rows);
  c.relation.resize(rows);
  c.truth.resize(rows);
  for (size_t i = 0; i < rows; ++i) {
    c.anchor[i] = static_cast<int32_t>(next() % n);
    c.relation[i] = static_cast<int32_t>(next() % c.nr);
    c.truth[i] = static_cast<int32_t>(next() % n);
  }
  if (next() % 2) {
    c.off.assign(rows + 1, 0);
    for (size_t i = 0; i < rows; ++i) {
      const size_t k = next() % 4;
      for (size_t j = 0; j < k; ++j) c.excl.push_back(static_cast<int32_t>(next() % n));
      c.off[i + 1] = static_cast<uint32_t>(c.excl.size());
    }
  }
  return c;
}

// A "trained-like" case: each query's true answer scores clearly above most entities (its row is the query
// direction plus noise), the rest random: what a screen decides for most pairs.
inline Case make_structured(const Next& next, size_t n, size_t w, size_t rows, bool complex, bool distance = false) {
  Case c = make_case(next, n, w, rows, complex, -1, distance);
  c.off.clear();
  c.excl.clear();
  const size_t W = c.width;
  // Near-identity relations: DistMult 1 + noise; ComplEx and RotatE-L2 re 1 + noise, im noise (in the case's
  // layout); TransE-L2 a short translation (noise).
  for (size_t r = 0; r < c.nr; ++r) {
    for (size_t k = 0; k < W; ++k) {
      const bool im = complex && (c.layout == kgrank::ComplexLayout::Halves ? k >= W / 2 : k % 2 == 1);
      const bool shift = distance && !complex;
      c.rel[r * W + k] = (im || shift ? 0.0f : 1.0f) + 0.1f * uniform(next);
    }
  }
  for (size_t i = 0; i < rows; ++i) {
    float* t = c.ent.data() + static_cast<size_t>(c.truth[i]) * W;
    const float* a = c.ent.data() + static_cast<size_t>(c.anchor[i]) * W;
    if (c.truth[i] == c.anchor[i]) continue;
    for (size_t k = 0; k < W; ++k) t[k] = 0.8f * a[k] + 0.2f * uniform(next);
  }
  return c;
}

struct Result {
  kgrank::Status status = kgrank::Status::success();
  std::vector<double> counts;  // greater, equal, nan, removed, true score: rows each
  kgrank::ScreenStats stats;
};

// The case's model, and its queries with the screen's mode and table (stats: where what the screen did goes).
inline kgrank::EmbeddingModel<float> model_of(const Case& c) {
  kgrank::EmbeddingModel<float> m{c.interaction, c.layout, c.ent.data(), c.rel.data(), c.n,
                                  c.nr,          c.width,  c.width,      0.0,          nullptr};
  m.entity_offset = c.entity_offset;
  return m;
}
inline kgrank::EmbeddingQueries queries_of(const Case& c, kgrank::ScreenMode mode, const kgrank::ScreenTable* table,
                                           kgrank::ScreenStats* stats) {
  kgrank::EmbeddingQueries q{c.rows, c.head, c.anchor.data(), c.relation.data(), c.truth.data()};
  if (!c.off.empty()) {
    q.exclude_offsets = c.off.data();
    q.exclude_ids = c.excl.data();
  }
  q.screen = mode;
  q.screen_table = table;
  q.screen_stats = stats;
  return q;
}

inline Result rank(const Case& c, kgrank::ScreenMode mode, kgrank::SimdLevel level, unsigned threads,
                   const kgrank::ScreenTable* table = nullptr, kgrank::JobControl* control = nullptr) {
  const kgrank::EmbeddingModel<float> m = model_of(c);
  Result r;
  const kgrank::EmbeddingQueries q = queries_of(c, mode, table, &r.stats);
  r.counts.assign(5 * c.rows, -1.0);
  const size_t R = c.rows;
  const kgrank::EmbeddingCounts out{r.counts.data(), r.counts.data() + R, r.counts.data() + 2 * R,
                                    r.counts.data() + 3 * R, r.counts.data() + 4 * R};
  r.status = kgrank::rank_embeddings<float>(m, q, out, level, threads, control);
  return r;
}

// The k best candidates of [begin, end) per row (top_k_embeddings; the case's truth is not read), with a floor per
// row when `floor` is not empty: ids then scores (as doubles), rows x k each, in `counts`.
inline Result top_k(const Case& c, kgrank::ScreenMode mode, kgrank::SimdLevel level, unsigned threads, size_t k,
                    size_t begin, size_t end, const std::vector<double>& floor,
                    const kgrank::ScreenTable* table = nullptr) {
  const kgrank::EmbeddingModel<float> m = model_of(c);
  Result r;
  kgrank::EmbeddingQueries q = queries_of(c, mode, table, &r.stats);
  q.floor = floor.empty() ? nullptr : floor.data();
  std::vector<int32_t> ids(c.rows * k);
  std::vector<double> scores(c.rows * k);
  r.status = kgrank::top_k_embeddings<float>(m, q, k, begin, end, ids.data(), scores.data(), level, threads);
  r.counts.assign(ids.begin(), ids.end());
  r.counts.insert(r.counts.end(), scores.begin(), scores.end());
  return r;
}

// The bits of the two results agree (NaN true scores included); the status codes and indices agree.
inline bool same(const Result& a, const Result& b) {
  if (a.status.code != b.status.code || a.status.index != b.status.index) return false;
  if (!a.status.ok()) return true;
  return a.counts.size() == b.counts.size() &&
         std::memcmp(a.counts.data(), b.counts.data(), a.counts.size() * sizeof(double)) == 0;
}

}  // namespace kgrank_screen
