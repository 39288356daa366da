// Ranking from embeddings: at every SIMD level and thread count the kernel's counts equal a plain loop over
// score_triple() (the single-pair code; the oracle is interaction_oracle.h, shared with the fuzz target), which
// checks that every vector lane computes each score bit for bit as the scalar code does (a rank counts the true
// candidate as equal exactly once), for every interaction and both complex layouts, with filter exclusions, a
// candidate subset and OGB negatives; relation scores (score_relations) are score_triple's; and float64 agrees with
// float32 closely.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
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

// PairRE's entity scale: 1 / ||row|| of each of the n rows (width values each), the norm in double.
template <class T>
std::vector<T> inverse_norms(const std::vector<T>& ent, size_t n, size_t width) {
  std::vector<T> scale(n);
  for (size_t e = 0; e < n; ++e) {
    double s = 0;
    for (size_t k = 0; k < width; ++k) s += static_cast<double>(ent[e * width + k]) * ent[e * width + k];
    scale[e] = static_cast<T>(1 / std::sqrt(s));
  }
  return scale;
}

template <class T>
void check_model(const Fixture& f, std::mt19937& rng) {
  const size_t n = 301, nr = 5, rows = 23;
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<T> ent(n * f.width), rel(nr * f.rel_width), scale;
  for (auto& v : ent) v = static_cast<T>(u(rng));
  for (auto& v : rel) v = static_cast<T>(u(rng));
  // Force exact ties: entity 7 is a copy of entity 3.
  for (size_t k = 0; k < f.width; ++k) ent[7 * f.width + k] = ent[3 * f.width + k];
  if (f.interaction == Interaction::PairRE) scale = inverse_norms(ent, n, f.width);
  EmbeddingModel<T> m{f.interaction,
                      f.layout,
                      ent.data(),
                      rel.data(),
                      n,
                      nr,
                      f.width,
                      f.rel_width,
                      0.7,
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
  // Typed candidates: relation r allows every (r + 2)-th entity from r (3 and 7, the tie, in relation 1's set),
  // relation 4 nothing; the exclusions of AllEntities apply to every set alike.
  job.set_off.assign(nr + 1, 0);
  for (size_t r = 0; r < nr; ++r) {
    for (size_t e = r; e < n && r != 4; e += r + 2) job.set_ids.push_back(static_cast<int32_t>(e));
    job.set_off[r + 1] = static_cast<uint32_t>(job.set_ids.size());
  }
  job.K = 9;
  for (size_t i = 0; i < rows * job.K; ++i) job.neg.push_back(static_cast<int32_t>(rng() % n));
  job.off.assign(rows + 1, 0);
  for (size_t i = 0; i < rows; ++i) {
    for (int j = 0; j < 4; ++j) job.excl.push_back(static_cast<int32_t>((job.truth[i] + 11 * (j + 1)) % n));
    job.off[i + 1] = static_cast<uint32_t>(job.excl.size());
  }
  // Relation scores: every (h, r, t) of the rows' pairs, for every relation, is score_triple's tail-side score bit
  // for bit (the entity kernel's score of t for (h, r, ?)), at every level, 1 and 3 threads.
  for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON}) {
    if (!simd_supported(level)) continue;
    for (unsigned threads : {1u, 3u}) {
      std::vector<T> rs(rows * nr, T(-12345));
      CHECK(score_relations<T>(m, rows, job.anchor.data(), job.truth.data(), rs.data(), level, threads).ok());
      for (size_t i = 0; i < rows; ++i) {
        for (size_t r = 0; r < nr; ++r) {
          const double want = score_triple<T>(m, job.anchor[i], static_cast<int32_t>(r), job.truth[i], false);
          CHECK_EQ(static_cast<double>(rs[i * nr + r]), want);
        }
      }
    }
  }
  for (bool head : {false, true}) {
    for (auto mode : {kgrank_oracle::Job::AllEntities, kgrank_oracle::Job::Subset, kgrank_oracle::Job::Negatives,
                      kgrank_oracle::Job::Typed}) {
      job.head = head;
      job.mode = mode;
      const kgrank_oracle::Expected want = kgrank_oracle::expected_counts(m, job);
      CHECK(!want.nan_true);
      for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON}) {
        if (!simd_supported(level)) continue;
        for (unsigned threads : {1u, 2u, 3u}) {
          // Three threads run with a job control (same counts, progress ends at done == total); a cancelled control
          // stops the job with Cancelled.
          kgrank::JobControl control;
          std::vector<double> out;
          CHECK(kgrank_oracle::run_kernel(m, job, level, threads, out, threads == 3 ? &control : nullptr).ok());
          if (threads == 3) {
            CHECK(control.total() > 0);
            CHECK_EQ(control.done(), control.total());
          }
          if (threads == 2) {
            std::vector<double> scratch;
            kgrank::JobControl cancelled;
            cancelled.cancel();
            bool threw = false;
            try {
              (void)kgrank_oracle::run_kernel(m, job, level, threads, scratch, &cancelled);
            } catch (const kgrank::Cancelled&) {
              threw = true;
            }
            CHECK(threw);
          }
          for (size_t i = 0; i < rows; ++i) {
            CHECK_EQ(out[i], want.greater[i]);
            CHECK_EQ(out[rows + i], want.equal[i]);
            CHECK_EQ(out[2 * rows + i], 0.0);
            if (mode == kgrank_oracle::Job::AllEntities || mode == kgrank_oracle::Job::Typed) {
              CHECK_EQ(out[3 * rows + i], want.removed[i]);
            }
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
  // Typed candidates: relation 0's set spans two candidate chunks (600 ids), relation 1's one partial chunk,
  // relation 2's is empty; the rows of each relation are grouped apart from their order in the batch. Blocked and
  // unblocked runs agree, and both equal the plain loop.
  kgrank_oracle::Job job;
  job.anchor = anchor;
  job.relation = relation;
  job.truth = truth;
  job.off = off;
  job.excl = excl;
  job.mode = kgrank_oracle::Job::Typed;
  job.set_off.assign(nr + 1, 0);
  for (size_t r = 0; r < nr; ++r) {
    for (size_t e = 0; e < n && r != 2; ++e) {
      if (r == 0 ? e % 7 != 3 : e % 9 == 1) job.set_ids.push_back(static_cast<int32_t>(e));
    }
    job.set_off[r + 1] = static_cast<uint32_t>(job.set_ids.size());
  }
  CHECK(job.set_off[1] > 512);
  const kgrank_oracle::Expected want = kgrank_oracle::expected_counts(m, job);
  for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON}) {
    if (!simd_supported(level)) continue;
    for (unsigned threads : {1u, 2u}) {
      std::vector<double> a, b;
      kgrank::JobControl control;
      CHECK(kgrank_oracle::run_kernel(m, job, level, threads, a).ok());
      CHECK(kgrank_oracle::run_kernel(m, job, level, threads, b, &control).ok());
      CHECK(a == b);
      CHECK_EQ(control.done(), control.total());
      for (size_t i = 0; i < rows; ++i) {
        CHECK_EQ(a[i], want.greater[i]);
        CHECK_EQ(a[rows + i], want.equal[i]);
        CHECK_EQ(a[3 * rows + i], want.removed[i]);
      }
    }
  }
}

// The filter pass (and the true scores) score listed entities by the level's own lanes (interaction.cpp
// score_listed): its counts are the plain loop's over score_triple() (score_one) for every op, float32 and float64,
// at every level and 1 / 2 threads, with rows of hundreds of known answers (several packings of kListPiece = 256
// and partial panels), duplicates, exact ties with the true answer, rows that share a query with lists of their own
// (rank_embeddings scores a group's union once: short lists sorted, long ones through its dense map), and an entity
// shard (a slice of the table with an entity_offset, anchors given apart, true scores given) whose lists name ids
// outside it.
template <class T>
void check_filter_pass(const Fixture& f, std::mt19937& rng) {
  const size_t n = 997, nr = 4, rows = 19;
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<T> ent(n * f.width), rel(nr * f.rel_width), scale;
  for (auto& v : ent) v = static_cast<T>(u(rng));
  for (auto& v : rel) v = static_cast<T>(u(rng));
  // Entities 500 .. 519 are copies of entity 11 (exact ties with a true answer); entity 600 is NaN throughout (its
  // scores are NaN: counted as NaN by the main pass, neither greater, equal nor removed by the filter's).
  for (size_t e = 500; e < 520; ++e) std::copy_n(ent.data() + 11 * f.width, f.width, ent.data() + e * f.width);
  constexpr size_t kNanEntity = 600;
  std::fill_n(ent.data() + kNanEntity * f.width, f.width, std::numeric_limits<T>::quiet_NaN());
  if (f.interaction == Interaction::PairRE) scale = inverse_norms(ent, n, f.width);
  EmbeddingModel<T> full{f.interaction,
                         f.layout,
                         ent.data(),
                         rel.data(),
                         n,
                         nr,
                         f.width,
                         f.rel_width,
                         0.7,
                         scale.empty() ? nullptr : scale.data()};
  std::vector<int32_t> anchor(rows), relation(rows), truth(rows), excl;
  std::vector<uint32_t> off(rows + 1, 0);
  for (size_t i = 0; i < rows; ++i) {
    anchor[i] = static_cast<int32_t>(rng() % 500);  // never the NaN entity: a NaN query or truth is another test's
    relation[i] = static_cast<int32_t>(rng() % nr);
    if (i >= 9) {  // rows 9-18 share the query of rows 0-4 (a group that scores its lists' union once), own lists
      anchor[i] = anchor[i % 5];
      relation[i] = relation[i % 5];
    }
    truth[i] = i % 3 == 0 ? 11 : static_cast<int32_t>(rng() % 500);
    // 0 to 700 known answers: random ids (duplicates among them), the ties, the truth itself, repeats.
    const size_t count = (i * 131) % 701;
    for (size_t j = 0; j < count; ++j) {
      const size_t pick = rng() % 8;
      int32_t id = static_cast<int32_t>(rng() % n);
      if (pick == 0) id = truth[i];
      if (pick == 1) id = static_cast<int32_t>(500 + rng() % 20);
      if (pick == 3 && j % 5 == 0) id = static_cast<int32_t>(kNanEntity);
      if (pick == 2 && !excl.empty() && excl.size() > off[i]) id = excl[off[i] + rng() % (excl.size() - off[i])];
      excl.push_back(id);
    }
    off[i + 1] = static_cast<uint32_t>(excl.size());
  }
  bool head = false;
  auto score = [&](size_t i, size_t e) {
    return head ? score_triple<T>(full, static_cast<int32_t>(e), relation[i], anchor[i], true)
                : score_triple<T>(full, anchor[i], relation[i], static_cast<int32_t>(e), false);
  };
  // Slices: the whole table, and a shard of entities [300, 800) whose lists hold ids on both sides of it.
  for (const size_t lo : {size_t(0), size_t(300)}) {
    const size_t hi = lo == 0 ? n : 800;
    EmbeddingModel<T> m = full;
    m.entity = ent.data() + lo * f.width;
    m.entity_scale = scale.empty() ? nullptr : scale.data() + lo;
    m.num_entities = hi - lo;
    m.entity_offset = lo;
    std::vector<T> anchor_rows(rows * f.width), anchor_scale(rows, T(1));
    for (size_t i = 0; i < rows; ++i) {
      std::copy_n(ent.data() + static_cast<size_t>(anchor[i]) * f.width, f.width, anchor_rows.data() + i * f.width);
      if (!scale.empty()) anchor_scale[i] = scale[static_cast<size_t>(anchor[i])];
    }
    if (lo != 0) {
      m.anchor_rows = anchor_rows.data();
      m.anchor_scale = scale.empty() ? nullptr : anchor_scale.data();
    }
    for (bool h : {false, true}) {
      head = h;
      std::vector<double> true_scores(rows), want(4 * rows, 0);
      for (size_t i = 0; i < rows; ++i) {
        const double t = score(i, static_cast<size_t>(truth[i]));
        true_scores[i] = t;
        for (size_t e = lo; e < hi; ++e) {
          const double s = score(i, e);
          want[i] += s > t;
          want[rows + i] += s == t;
          want[2 * rows + i] += s != s;
        }
        for (uint32_t j = off[i]; j < off[i + 1]; ++j) {
          const size_t e = static_cast<size_t>(excl[j]);
          if (e < lo || e >= hi) continue;
          const double s = score(i, e);
          want[i] -= s > t;
          want[rows + i] -= s == t;
          want[3 * rows + i] += s == s;
        }
      }
      EmbeddingQueries q;
      q.rows = rows;
      q.head_side = h;
      // The shard's anchors come as rows, and queries.anchor is not read: every id 0 there, so that only the rows'
      // contents may group rows for the filter pass.
      const std::vector<int32_t> no_anchor(rows, 0);
      q.anchor = lo != 0 ? no_anchor.data() : anchor.data();
      q.relation = relation.data();
      q.truth = truth.data();
      q.exclude_offsets = off.data();
      q.exclude_ids = excl.data();
      if (lo != 0) q.true_scores = true_scores.data();  // the shard: truth may lie outside it
      for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON}) {
        if (!simd_supported(level)) continue;
        for (unsigned threads : {1u, 2u}) {
          std::vector<double> got(5 * rows, -1);
          EmbeddingCounts c{got.data(), got.data() + rows, got.data() + 2 * rows, got.data() + 3 * rows,
                            got.data() + 4 * rows};
          CHECK(rank_embeddings<T>(m, q, c, level, threads).ok());
          for (size_t i = 0; i < rows; ++i) {
            CHECK_EQ(got[i], want[i]);
            CHECK_EQ(got[rows + i], want[rows + i]);
            CHECK_EQ(got[2 * rows + i], want[2 * rows + i]);
            CHECK(want[2 * rows + i] == 1.0);  // the NaN entity lies in both slices
            CHECK_EQ(got[3 * rows + i], want[3 * rows + i]);
            CHECK_EQ(got[4 * rows + i], true_scores[i]);
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
    check_filter_pass<float>(f, rng);
    check_filter_pass<double>(f, rng);
  }
  // The filter's gather (Micro::pack_list) at widths around the levels' transpose blocks (8 at AVX2, 16 at AVX-512):
  // below one block (element by element), exactly one or two (no tail), and one past (the tail block overlaps).
  for (const size_t d : {1, 7, 8, 9, 15, 16, 17, 32, 33}) {
    check_filter_pass<float>({Interaction::DistMult, ComplexLayout::Halves, d, d}, rng);
    check_filter_pass<float>({Interaction::TransEL2, ComplexLayout::Halves, d, d}, rng);
  }
  check_row_blocks<float>(rng);
  check_row_blocks<double>(rng);
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
