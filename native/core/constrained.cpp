// Typed candidates: rank_triples over each relation's allowed set (constrained.h). Fallback twin:
// src/fallback/filter-index.ts rankTriplesConstrained.

#include "constrained.h"

#include <algorithm>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels.h"
#include "simd.h"
#include "thread_pool.h"

namespace kgrank {

namespace {

// Rows per task: a row costs its allowed set's length in random reads, which is not known per row up front.
constexpr size_t kRowsPerTask = 64;

// The sets of the relations the rows use, copied into memory of our own and checked as they are copied (offsets
// monotone and within size; ids in range and ascending), so a caller who changes its arrays meanwhile (shared
// memory) cannot move an id out of range after it was checked. Unused relations get empty sets.
struct OwnSets {
  std::vector<uint32_t> offsets;
  std::vector<uint32_t> ids;
};

Status copy_sets(const CandidateSets& sets, size_t num_relations, size_t num_entities, const int32_t* relation,
                 size_t rows, OwnSets* own) {
  std::vector<uint32_t> begin(num_relations + 1);
  for (size_t r = 0; r <= num_relations; ++r) begin[r] = sets.offsets[r];
  if (begin[0] != 0) return Status::invalid("candidate set offsets must start at 0");
  for (size_t r = 0; r < num_relations; ++r) {
    if (begin[r + 1] < begin[r] || begin[r + 1] > sets.size) {
      return Status::invalid("candidate set offsets of relation " + std::to_string(r) +
                             " are not ascending within the ids");
    }
  }
  std::vector<uint8_t> used(num_relations, 0);
  for (size_t i = 0; i < rows; ++i) used[static_cast<size_t>(relation[i])] = 1;
  own->offsets.assign(num_relations + 1, 0);
  for (size_t r = 0; r < num_relations; ++r) {
    if (used[r]) {
      for (uint32_t k = begin[r]; k < begin[r + 1]; ++k) {
        const uint32_t id = sets.ids[k];
        if (id >= num_entities || (k > begin[r] && id <= own->ids.back())) {
          return Status::invalid("candidate set of relation " + std::to_string(r) +
                                 " has ids out of range or not ascending");
        }
        own->ids.push_back(id);
      }
    }
    own->offsets[r + 1] = static_cast<uint32_t>(own->ids.size());
  }
  return Status::success();
}

// Counts over the allowed ids other than `own`: greater, equal, and non-NaN in the nan field.
Counts allowed_counts(const float* row, const uint32_t* ids, size_t n, int32_t own, float t, AnswersF32Fn answers) {
  return answers(row, ids, n, ~uint32_t{0}, own, t);
}

Counts allowed_counts(const double* row, const uint32_t* ids, size_t n, int32_t own, double t, AnswersF32Fn) {
  Counts c;
  for (size_t k = 0; k < n; ++k) {
    const double v = row[ids[k]];
    const bool keep = static_cast<int32_t>(ids[k]) != own;
    c.greater += keep && v > t;
    c.equal += keep && v == t;
    c.nan += keep && v == v;
  }
  return c;
}

template <typename T>
Status constrained_impl(const T* scores, size_t rows, const int32_t* t, const FilterIndex& index, bool filtered,
                        const CandidateSets& sets, int32_t* keys, T* thresholds, double* out,
                        const CountOptions& options) {
  // Each id is read once, into memory of our own, and checked as it is read (as rank_triples does).
  std::vector<int32_t> own_keys(3 * rows);
  int32_t* relation = own_keys.data();
  int32_t* anchor = relation + rows;
  int32_t* truth = relation + 2 * rows;
  const uint32_t entities = static_cast<uint32_t>(index.num_entities());
  const uint32_t relations = static_cast<uint32_t>(index.num_relations());
  const bool tail = index.side() == FilterIndex::Side::Tail;
  for (size_t r = 0; r < rows; ++r) {
    const int32_t h = t[3 * r], rel = t[3 * r + 1], tl = t[3 * r + 2];
    if (static_cast<uint32_t>(h) >= entities) return Status::at(StatusCode::IdOutOfRange, 3 * r, "head id out of range");
    if (static_cast<uint32_t>(rel) >= relations) {
      return Status::at(StatusCode::IdOutOfRange, 3 * r + 1, "relation id out of range");
    }
    if (static_cast<uint32_t>(tl) >= entities) {
      return Status::at(StatusCode::IdOutOfRange, 3 * r + 2, "tail id out of range");
    }
    relation[r] = rel;
    anchor[r] = tail ? h : tl;
    truth[r] = tail ? tl : h;
  }
  OwnSets own_sets;
  Status checked = copy_sets(sets, relations, entities, relation, rows, &own_sets);
  if (!checked.ok()) return checked;
  const size_t cols = entities;
  double* greater = out;
  double* equal = out + rows;
  double* realistic = out + 2 * rows;
  double* candidates = out + 3 * rows;
  double* weight = out + 4 * rows;
  double* found = out + 5 * rows;
  const AnswersF32Fn answers = dispatch(options.simd, KernelFamily::Answers).answers_f32;
  const size_t tasks = (rows + kRowsPerTask - 1) / kRowsPerTask;
  const unsigned threads = rows * cols * sizeof(T) < (size_t{1} << 18) ? 1u : options.threads;
  parallel_for(tasks, threads, [&](size_t task) {
    const size_t r1 = std::min(rows, (task + 1) * kRowsPerTask);
    for (size_t r = task * kRowsPerTask; r < r1; ++r) {
      const T* row = scores + r * cols;
      const int32_t own = truth[r];
      const int32_t rel = relation[r];
      const T th = row[own];
      thresholds[r] = th;
      const uint32_t* first = own_sets.ids.data() + own_sets.offsets[rel];
      const uint32_t* last = own_sets.ids.data() + own_sets.offsets[rel + 1];
      Counts c = allowed_counts(row, first, static_cast<size_t>(last - first), own, th, answers);
      bool known = !filtered;
      if (filtered) {
        // The other known answers leave the candidates, where the set allowed them.
        index.for_each_answer(anchor[r], rel, [&](int32_t b) {
          if (b == own) {
            known = true;
          } else if (std::binary_search(first, last, static_cast<uint32_t>(b))) {
            const T v = row[b];
            c.greater -= v > th;
            c.equal -= v == th;
            c.nan -= v == v;
          }
        });
      }
      greater[r] = static_cast<double>(c.greater);
      equal[r] = static_cast<double>(c.equal);
      candidates[r] = static_cast<double>(c.nan);
      found[r] = known ? 1.0 : -1.0;
    }
  }, options.control);
  std::copy(own_keys.begin(), own_keys.end(), keys);
  for (size_t r = 0; r < rows; ++r) {
    if (thresholds[r] != thresholds[r]) return Status::at(StatusCode::NanTrueScore, r, "the true score is NaN");
  }
  for (size_t r = 0; r < rows; ++r) {
    if (found[r] < 0) return Status::at(StatusCode::NotInIndex, r, "the triple is not among the filter triples");
  }
  // The true answer was left out of the counts: optimistic = 1 + greater, pessimistic = 1 + greater + equal.
  for (size_t r = 0; r < rows; ++r) {
    const double opt = 1 + greater[r];
    const double pess = opt + equal[r];
    greater[r] = opt;
    equal[r] = pess;
    realistic[r] = 0.5 * (opt + pess);
    candidates[r] = 1 + candidates[r];
    weight[r] = std::numeric_limits<double>::quiet_NaN();
  }
  return Status::success();
}

}  // namespace

Status rank_triples_constrained(const float* scores, size_t rows, const int32_t* triples, const FilterIndex& index,
                                bool filtered, const CandidateSets& sets, int32_t* keys, float* thresholds_out,
                                double* out, const CountOptions& options) {
  return constrained_impl(scores, rows, triples, index, filtered, sets, keys, thresholds_out, out, options);
}

Status rank_triples_constrained(const double* scores, size_t rows, const int32_t* triples, const FilterIndex& index,
                                bool filtered, const CandidateSets& sets, int32_t* keys, double* thresholds_out,
                                double* out, const CountOptions& options) {
  return constrained_impl(scores, rows, triples, index, filtered, sets, keys, thresholds_out, out, options);
}

}  // namespace kgrank
