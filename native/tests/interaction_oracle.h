// The plain-loop oracle of ranking from embeddings, shared by native/tests/test_interaction.cpp (fixed fixtures)
// and native/fuzz/fuzz_interaction.cpp (fuzzed ones), so that the two check the kernel against one oracle: a job's
// queries and candidate mode, the counts a plain loop over score_triple() (the single-pair code) gives, and the
// kernel's run of the same job. Each caller asserts in its own way (CHECK_EQ, FUZZ_CHECK).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "interaction.h"

namespace kgrank_oracle {

// One job: rows of (anchor, relation, truth) on one side, and which candidates they are ranked against.
struct Job {
  enum Mode { AllEntities = 0, Subset = 1, Negatives = 2, Typed = 3 };
  bool head = false;
  Mode mode = AllEntities;
  std::vector<int32_t> anchor, relation, truth;
  std::vector<uint32_t> off;  // AllEntities, Typed: row i's filter exclusions are excl[off[i] .. off[i+1])
  std::vector<int32_t> excl;
  std::vector<int32_t> cand;  // Subset: the shared candidate list
  std::vector<int32_t> neg;   // Negatives: K ids per row
  size_t K = 0;
  // Typed: relation r's candidates are set_ids[set_off[r] .. set_off[r+1]) (ascending; typed candidates).
  std::vector<uint32_t> set_off;
  std::vector<int32_t> set_ids;
  size_t rows() const { return anchor.size(); }
};

// What the plain loop expects per row; rows whose true score is NaN are left at 0 and flagged.
struct Expected {
  std::vector<double> greater, equal, removed;
  bool nan_true = false;
};

// Counts from score_triple(), one pair at a time: candidates scoring > / == the true score, minus the excluded
// answers' (the filter), and the number of exclusions.
template <class T>
Expected expected_counts(const kgrank::EmbeddingModel<T>& m, const Job& job) {
  const size_t rows = job.rows();
  Expected x{std::vector<double>(rows, 0), std::vector<double>(rows, 0), std::vector<double>(rows, 0), false};
  for (size_t i = 0; i < rows; ++i) {
    auto score = [&](int32_t e) {
      return job.head ? kgrank::score_triple(m, e, job.relation[i], job.anchor[i], true)
                      : kgrank::score_triple(m, job.anchor[i], job.relation[i], e, false);
    };
    const double t = score(job.truth[i]);
    if (t != t) {
      x.nan_true = true;
      continue;
    }
    auto count = [&](int32_t e, double sign) {
      const double s = score(e);
      if (s > t) x.greater[i] += sign;
      else if (s == t) x.equal[i] += sign;
    };
    if (job.mode == Job::AllEntities || job.mode == Job::Typed) {
      if (job.mode == Job::AllEntities) {
        for (size_t e = 0; e < m.num_entities; ++e) count(static_cast<int32_t>(e), 1);
      } else {
        const size_t r = static_cast<size_t>(job.relation[i]);
        for (uint32_t j = job.set_off[r]; j < job.set_off[r + 1]; ++j) count(job.set_ids[j], 1);
      }
      for (uint32_t j = job.off[i]; j < job.off[i + 1]; ++j) {
        count(job.excl[j], -1);
        x.removed[i] += 1;
      }
    } else if (job.mode == Job::Subset) {
      for (int32_t e : job.cand) count(e, 1);
    } else {
      for (size_t j = 0; j < job.K; ++j) count(job.neg[i * job.K + j], 1);
    }
  }
  return x;
}

// The kernel's run of the job: `out` becomes 5 x rows, greater | equal | nan | removed | true score.
template <class T>
kgrank::Status run_kernel(const kgrank::EmbeddingModel<T>& m, const Job& job, kgrank::SimdLevel level, unsigned threads,
                          std::vector<double>& out, kgrank::JobControl* control = nullptr) {
  const size_t rows = job.rows();
  kgrank::EmbeddingQueries q;
  q.rows = rows;
  q.head_side = job.head;
  q.anchor = job.anchor.data();
  q.relation = job.relation.data();
  q.truth = job.truth.data();
  if (job.mode == Job::AllEntities || job.mode == Job::Typed) {
    q.exclude_offsets = job.off.data();
    q.exclude_ids = job.excl.data();
    if (job.mode == Job::Typed) {
      q.set_offsets = job.set_off.data();
      q.set_ids = job.set_ids.data();
    }
  } else if (job.mode == Job::Subset) {
    q.candidates = job.cand.data();
    q.num_candidates = job.cand.size();
  } else {
    q.negatives = job.neg.data();
    q.negatives_per_row = job.K;
  }
  out.assign(5 * rows, -1);
  kgrank::EmbeddingCounts c{out.data(), out.data() + rows, out.data() + 2 * rows, out.data() + 3 * rows,
                            out.data() + 4 * rows};
  return kgrank::rank_embeddings<T>(m, q, c, level, threads, control);
}

}  // namespace kgrank_oracle
