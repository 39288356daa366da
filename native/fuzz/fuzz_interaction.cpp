// Ranking from embeddings (rank_embeddings): for a fuzzed interaction, complex layout, width, model, queries and
// candidate mode (every entity with filter exclusions, a candidate subset, OGB negatives, typed candidates: a set
// per relation, some empty, with filter exclusions), at every SIMD level and
// 1 / 2 / 3 threads, float32 and float64, the kernel's counts must equal a plain loop over score_triple() (the
// single-pair code; the oracle is native/tests/interaction_oracle.h, shared with test_interaction): each vector
// lane computes each score bit for bit as the scalar code. Values are finite and bounded (the loaders refuse
// non-finite embeddings), with many exact ties (small multiples of 1/4). Then top-k over a slice of the table must list
// what the whole table lists over that range, and with a floor per row exactly those entries above it. Relation
// scores (score_relations) of the rows' pairs must be score_triple's for every relation.
#include <algorithm>
#include <cmath>

#include "fuzz_common.h"
#include "interaction.h"
#include "interaction_oracle.h"  // native/tests: the plain-loop oracle shared with test_interaction

using namespace kgrank;

namespace {

template <class T>
T value(FuzzedDataProvider& p) {
  const uint8_t pick = p.ConsumeIntegral<uint8_t>();
  if (pick < 160) return static_cast<T>(static_cast<int>(pick % 17) - 8) / T(4);  // ties: -2 .. 2 in quarters
  if (pick < 200) return static_cast<T>(p.ConsumeFloatingPointInRange<float>(-8.0f, 8.0f));
  if (pick < 220) return std::numeric_limits<T>::denorm_min() * static_cast<T>(pick % 3);
  return pick % 2 ? T(0) : -T(0);
}

template <class T>
void run(FuzzedDataProvider& p) {
  const auto interaction = static_cast<Interaction>(p.ConsumeIntegralInRange<int>(0, 6));
  const auto layout = static_cast<ComplexLayout>(p.ConsumeIntegralInRange<int>(0, 1));
  const bool rotation = interaction == Interaction::RotatE || interaction == Interaction::RotatEL2;
  const bool complex = interaction == Interaction::ComplEx || rotation;
  size_t width = p.ConsumeIntegralInRange<size_t>(1, 40);
  if (complex) width = 2 * ((width + 1) / 2);
  size_t rel_width = width;
  if (interaction == Interaction::PairRE) rel_width = 2 * width;
  if (rotation && p.ConsumeBool()) rel_width = width / 2;  // phases
  if (rotation && rel_width == width / 2 && layout == ComplexLayout::Interleaved) rel_width = width;
  const size_t n = p.ConsumeIntegralInRange<size_t>(1, 90), nr = p.ConsumeIntegralInRange<size_t>(1, 4);
  const size_t rows = p.ConsumeIntegralInRange<size_t>(1, 14);
  std::vector<T> ent(n * width), rel(nr * rel_width), scale;
  for (auto& v : ent) v = value<T>(p);
  for (auto& v : rel) v = value<T>(p);
  if (interaction == Interaction::PairRE) {
    scale.resize(n);
    for (size_t e = 0; e < n; ++e) {
      double s = 0;
      for (size_t k = 0; k < width; ++k) s += static_cast<double>(ent[e * width + k]) * ent[e * width + k];
      scale[e] = static_cast<T>(1 / std::max(std::sqrt(s), 1e-12));  // as the loader: F.normalize's eps
    }
  }
  const double phase = p.ConsumeFloatingPointInRange<double>(-4.0, 4.0);
  EmbeddingModel<T> m{interaction, layout, ent.data(), rel.data(), n,
                      nr,          width,  rel_width,  phase,      scale.empty() ? nullptr : scale.data()};
  kgrank_oracle::Job job;
  job.anchor.resize(rows);
  job.relation.resize(rows);
  job.truth.resize(rows);
  for (size_t i = 0; i < rows; ++i) {
    job.anchor[i] = p.ConsumeIntegralInRange<int32_t>(0, static_cast<int32_t>(n - 1));
    job.relation[i] = p.ConsumeIntegralInRange<int32_t>(0, static_cast<int32_t>(nr - 1));
    job.truth[i] = p.ConsumeIntegralInRange<int32_t>(0, static_cast<int32_t>(n - 1));
  }
  job.head = p.ConsumeBool();
  job.mode = static_cast<kgrank_oracle::Job::Mode>(p.ConsumeIntegralInRange<int>(0, 3));
  job.off.assign(rows + 1, 0);
  job.K = p.ConsumeIntegralInRange<size_t>(1, 12);
  if (job.mode == kgrank_oracle::Job::Typed) {
    job.set_off.assign(nr + 1, 0);
    for (size_t r = 0; r < nr; ++r) {
      for (size_t e = 0; e < n; ++e)
        if (p.ConsumeBool()) job.set_ids.push_back(static_cast<int32_t>(e));
      job.set_off[r + 1] = static_cast<uint32_t>(job.set_ids.size());
    }
  }
  if (job.mode == kgrank_oracle::Job::AllEntities || job.mode == kgrank_oracle::Job::Typed) {
    for (size_t i = 0; i < rows; ++i) {
      // Distinct known answers other than the true one, sorted (as the filter index gives them).
      std::vector<char> seen(n, 0);
      const size_t count = p.ConsumeIntegralInRange<size_t>(0, 5);
      for (size_t j = 0; j < count; ++j) {
        const int32_t x = p.ConsumeIntegralInRange<int32_t>(0, static_cast<int32_t>(n - 1));
        if (x != job.truth[i]) seen[x] = 1;
      }
      for (size_t x = 0; x < n; ++x)
        if (seen[x]) job.excl.push_back(static_cast<int32_t>(x));
      job.off[i + 1] = static_cast<uint32_t>(job.excl.size());
    }
  } else if (job.mode == kgrank_oracle::Job::Subset) {
    for (size_t e = 0; e < n; ++e)
      if (p.ConsumeBool()) job.cand.push_back(static_cast<int32_t>(e));
    if (job.cand.empty()) job.cand.push_back(0);
  } else {
    for (size_t i = 0; i < rows * job.K; ++i)
      job.neg.push_back(p.ConsumeIntegralInRange<int32_t>(0, static_cast<int32_t>(n - 1)));
  }
  const kgrank_oracle::Expected want = kgrank_oracle::expected_counts(m, job);
  for (SimdLevel level : kgrank_fuzz::levels()) {
    for (unsigned threads : {1u, 2u, 3u}) {
      std::vector<double> out;
      const Status st = kgrank_oracle::run_kernel(m, job, level, threads, out);
      if (want.nan_true) {
        FUZZ_CHECK(!st.ok());
        continue;
      }
      FUZZ_CHECK(st.ok());
      for (size_t i = 0; i < rows; ++i) {
        FUZZ_CHECK(out[i] == want.greater[i]);
        FUZZ_CHECK(out[rows + i] == want.equal[i]);
        if (job.mode == kgrank_oracle::Job::AllEntities || job.mode == kgrank_oracle::Job::Typed) {
          FUZZ_CHECK(out[3 * rows + i] == want.removed[i]);
        }
      }
    }
  }
  // Relation scores of the rows' (anchor, truth) pairs: every relation's score is score_triple's tail-side score of
  // (anchor, r, truth) bit for bit (NaN where it is NaN), at every level, 1 and 3 threads.
  for (SimdLevel level : kgrank_fuzz::levels()) {
    for (unsigned threads : {1u, 3u}) {
      std::vector<T> rs(rows * nr);
      FUZZ_CHECK(score_relations<T>(m, rows, job.anchor.data(), job.truth.data(), rs.data(), level, threads).ok());
      for (size_t i = 0; i < rows; ++i) {
        for (size_t r = 0; r < nr; ++r) {
          const double want = score_triple<T>(m, job.anchor[i], static_cast<int32_t>(r), job.truth[i], false);
          const double got = static_cast<double>(rs[i * nr + r]);
          FUZZ_CHECK(got == want || (got != got && want != want));
        }
      }
    }
  }
  if (job.mode != kgrank_oracle::Job::AllEntities) return;
  // Top-k of a slice [a, b) of the table (entity_offset a, the anchors' rows given apart, as a chunk read from disk)
  // lists the global ids and scores the whole table lists over [a, b), at every level and thread count.
  const size_t a = p.ConsumeIntegralInRange<size_t>(0, n - 1);
  const size_t b = p.ConsumeIntegralInRange<size_t>(a + 1, n);
  const size_t k = p.ConsumeIntegralInRange<size_t>(1, 6);
  std::vector<T> anchor_rows(rows * width), anchor_scale;
  for (size_t i = 0; i < rows; ++i) {
    std::copy_n(ent.begin() + job.anchor[i] * width, width, anchor_rows.begin() + i * width);
    if (!scale.empty()) anchor_scale.push_back(scale[job.anchor[i]]);
  }
  EmbeddingModel<T> slice = m;
  slice.entity = ent.data() + a * width;
  slice.num_entities = b - a;
  slice.entity_scale = scale.empty() ? nullptr : scale.data() + a;
  slice.entity_offset = a;
  slice.anchor_rows = anchor_rows.data();
  slice.anchor_scale = anchor_scale.empty() ? nullptr : anchor_scale.data();
  EmbeddingQueries q{};
  q.rows = rows;
  q.head_side = job.head;
  q.anchor = job.anchor.data();
  q.relation = job.relation.data();
  q.truth = job.truth.data();
  q.exclude_offsets = job.off.data();
  q.exclude_ids = job.excl.data();
  std::vector<int32_t> want_id(rows * k), id(rows * k);
  std::vector<double> want_score(rows * k), score(rows * k);
  FUZZ_CHECK(top_k_embeddings<T>(m, q, k, a, b, want_id.data(), want_score.data(), SimdLevel::Scalar, 1).ok());
  for (SimdLevel level : kgrank_fuzz::levels()) {
    for (unsigned threads : {1u, 3u}) {
      FUZZ_CHECK(top_k_embeddings<T>(slice, q, k, 0, b - a, id.data(), score.data(), level, threads).ok());
      FUZZ_CHECK(id == want_id);
      for (size_t j = 0; j < rows * k; ++j) {
        FUZZ_CHECK(score[j] == want_score[j] || (score[j] != score[j] && want_score[j] != want_score[j]));
      }
    }
  }
  // With a floor per row (a listed score, a fuzzed value or none) the list is the unfloored list's entries strictly
  // above it, then padding.
  std::vector<double> floor(rows);
  for (size_t i = 0; i < rows; ++i) {
    const uint8_t pick = p.ConsumeIntegral<uint8_t>();
    floor[i] = pick < 100 ? want_score[i * k + pick % k] : pick < 200 ? static_cast<double>(value<T>(p)) : std::nan("");
  }
  q.floor = floor.data();
  for (SimdLevel level : kgrank_fuzz::levels()) {
    for (unsigned threads : {1u, 3u}) {
      FUZZ_CHECK(top_k_embeddings<T>(slice, q, k, 0, b - a, id.data(), score.data(), level, threads).ok());
      for (size_t i = 0; i < rows; ++i) {
        size_t j = 0;
        for (; j < k && want_id[i * k + j] >= 0 && !(want_score[i * k + j] <= floor[i]); ++j) {
          FUZZ_CHECK(id[i * k + j] == want_id[i * k + j] && score[i * k + j] == want_score[i * k + j]);
        }
        for (; j < k; ++j) FUZZ_CHECK(id[i * k + j] == -1 && score[i * k + j] != score[i * k + j]);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  if (p.ConsumeBool()) run<float>(p);
  else run<double>(p);
  return 0;
}
