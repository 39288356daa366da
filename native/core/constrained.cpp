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
// Sets with at least one id per kStreamRatio columns are read as a stream first (below).
constexpr size_t kStreamRatio = 64;
// How many rows ahead the lines of a sparse set are requested.
constexpr size_t kPrefetchRows = 2;

// The sets of the relations the rows use, checked as they are read (offsets monotone and within size; ids in range
// and ascending; a caller's bit set within its words): a sparse set is copied as its ids into memory of our own, so
// a caller who changes its arrays meanwhile (shared memory) cannot move an id out of range after it was checked. A
// dense set (at least one id per kStreamRatio columns, or the caller's bits_at says so) is a bit set of the columns,
// (E + 15) / 16 words, at most 8 bytes per allowed id: the caller's (any bits are in range), or built here. Unused
// relations get neither.
struct OwnSets {
  bool dense(int32_t rel) const { return bit_rows[rel] != nullptr; }
  const uint16_t* bits(int32_t rel) const { return bit_rows[rel]; }
  const uint32_t* first(int32_t rel) const { return ids.data() + offsets[rel]; }
  const uint32_t* last(int32_t rel) const { return ids.data() + offsets[rel + 1]; }

  std::vector<uint32_t> offsets;
  std::vector<uint32_t> ids;
  std::vector<const uint16_t*> bit_rows;
  std::vector<uint16_t> masks;  // bit sets built here
};

Status own_sets(const CandidateSets& sets, size_t num_relations, size_t num_entities, const int32_t* relation,
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
  const size_t words = (num_entities + 15) / 16;
  own->offsets.assign(num_relations + 1, 0);
  own->bit_rows.assign(num_relations, nullptr);
  std::vector<size_t> built(num_relations, ~size_t{0});
  for (size_t r = 0; r < num_relations; ++r) {
    own->offsets[r + 1] = static_cast<uint32_t>(own->ids.size());
    if (!used[r]) continue;
    if (sets.bits != nullptr) {
      const int64_t at = sets.bits_at[r];
      if (at >= 0) {
        if (static_cast<uint64_t>(at) > sets.bits_size || sets.bits_size - static_cast<uint64_t>(at) < words) {
          return Status::invalid("candidate bit set of relation " + std::to_string(r) + " ends past the bit words");
        }
        own->bit_rows[r] = sets.bits + at;
        continue;
      }
    }
    const size_t n = begin[r + 1] - begin[r];
    const bool dense = sets.bits == nullptr && n * kStreamRatio >= num_entities;
    uint16_t* bits = nullptr;
    if (dense) {
      built[r] = own->masks.size();
      own->masks.resize(own->masks.size() + words, 0);
      bits = own->masks.data() + built[r];
    }
    uint32_t previous = 0;
    for (uint32_t k = begin[r]; k < begin[r + 1]; ++k) {
      const uint32_t id = sets.ids[k];
      if (id >= num_entities || (k > begin[r] && id <= previous)) {
        return Status::invalid("candidate set of relation " + std::to_string(r) +
                               " has ids out of range or not ascending");
      }
      previous = id;
      if (dense) {
        bits[id / 16] = static_cast<uint16_t>(bits[id / 16] | (1u << (id % 16)));
      } else {
        own->ids.push_back(id);
      }
    }
    own->offsets[r + 1] = static_cast<uint32_t>(own->ids.size());
  }
  // Pointers into masks once it no longer grows.
  for (size_t r = 0; r < num_relations; ++r) {
    if (built[r] != ~size_t{0}) own->bit_rows[r] = own->masks.data() + built[r];
  }
  return Status::success();
}

// The first element >= key in [first, last) (ascending), searched from first in doubling steps: the known answers
// of a task mostly lie in its allowed set, close together, so each is found a few steps after the previous one.
// Positions are indices, so no pointer is formed past the end (or from an empty set's null data).
const uint32_t* gallop(const uint32_t* first, const uint32_t* last, uint32_t key) {
  const size_t n = static_cast<size_t>(last - first);
  if (n == 0) return last;
  size_t lo = 0;
  size_t step = 1;
  while (lo + step < n && first[lo + step] < key) {
    lo += step;
    step *= 2;
  }
  return std::lower_bound(first + lo, first + std::min(lo + step + 1, n), key);
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

// Counts over the columns the bit set selects (masked_count_f32's contract), float64: a plain loop.
Counts masked_counts(const double* x, const uint16_t* bits, size_t n, double t, MaskedCountF32Fn) {
  Counts c;
  for (size_t i = 0; i < n; ++i) {
    if (!((bits[i / 16] >> (i % 16)) & 1u)) continue;
    const double v = x[i];
    c.greater += v > t;
    c.equal += v == t;
    c.nan += v == v;
  }
  return c;
}

Counts masked_counts(const float* x, const uint16_t* bits, size_t n, float t, MaskedCountF32Fn masked) {
  return masked(x, bits, n, t);
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
  Status split = split_triple_keys(t, rows, index, own_keys.data());
  if (!split.ok()) return split;
  const uint32_t entities = static_cast<uint32_t>(index.num_entities());
  const uint32_t relations = static_cast<uint32_t>(index.num_relations());
  OwnSets own;
  Status checked = own_sets(sets, relations, entities, relation, rows, &own);
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
  // Rows of a dense set are counted in one sequential pass under its bit set (the hardware prefetcher streams the row
  // at the memory bus's rate). A sparse set's columns are gathered; they are scattered over the row, which no
  // hardware prefetcher follows, so the lines of a later row's allowed columns are requested before this row is
  // counted (one request per line) and their misses overlap.
  const MaskedCountF32Fn masked = dispatch(options.simd, KernelFamily::Answers).masked_count_f32;
  const auto prefetch_row = [&](size_t r) {
    const int32_t rel = relation[r];
    if (own.dense(rel)) return;
    const T* row = scores + r * cols;
    constexpr uint32_t kPerLine = 64 / sizeof(T);
    uint32_t line = ~uint32_t{0};
    for (const uint32_t* p = own.first(rel); p != own.last(rel); ++p) {
      if (*p / kPerLine != line) {
        line = *p / kPerLine;
        __builtin_prefetch(row + *p, 0, 2);
      }
    }
  };
  const bool packed = filtered && !index.wide();
  parallel_for(
      tasks, threads,
      [&](size_t task) {
        const size_t r0 = task * kRowsPerTask;
        const size_t r1 = std::min(rows, (task + 1) * kRowsPerTask);
        // The known answers of the task's rows, looked up together (their index searches overlap).
        const uint32_t* known_first[kRowsPerTask];
        size_t known_count[kRowsPerTask];
        uint32_t mask = 0;
        if (packed) index.packed_answers_many(anchor + r0, relation + r0, r1 - r0, known_first, known_count, &mask);
        for (size_t r = r0; r < r1; ++r) __builtin_prefetch(scores + r * cols + truth[r], 0, 3);
        for (size_t r = r0; r < r1 && r < r0 + kPrefetchRows; ++r) prefetch_row(r);
        for (size_t r = r0; r < r1; ++r) {
          if (r + kPrefetchRows < r1) prefetch_row(r + kPrefetchRows);
          const T* row = scores + r * cols;
          const int32_t truth_id = truth[r];
          const int32_t rel = relation[r];
          const uint32_t* first = own.first(rel);
          const uint32_t* last = own.last(rel);
          const uint16_t* bits = own.dense(rel) ? own.bits(rel) : nullptr;
          const T th = row[truth_id];
          thresholds[r] = th;
          Counts c;
          if (bits) {
            c = masked_counts(row, bits, cols, th, masked);
            // The true answer is no other candidate: out of the counts when its bit is set (it equals itself).
            if ((bits[truth_id / 16] >> (truth_id % 16)) & 1u) {
              c.equal -= th == th;
              c.nan -= th == th;
            }
          } else {
            c = allowed_counts(row, first, static_cast<size_t>(last - first), truth_id, th, answers);
          }
          bool known = !filtered;
          // The other known answers leave the candidates, where the set allowed them: a bit test, or (both lists
          // ascend) a search a few steps after the previous answer's place.
          const uint32_t* at = first;
          const auto allowed = [&](uint32_t b) {
            if (bits) return ((bits[b / 16] >> (b % 16)) & 1u) != 0;
            at = gallop(at, last, b);
            return at != last && *at == b;
          };
          const auto take_out = [&](int32_t b) {
            if (b == truth_id) {
              known = true;
            } else if (allowed(static_cast<uint32_t>(b))) {
              const T v = row[b];
              c.greater -= v > th;
              c.equal -= v == th;
              c.nan -= v == v;
            }
          };
          if (packed) {
            const uint32_t* e = known_first[r - r0];
            for (size_t k = 0; k < known_count[r - r0]; ++k) take_out(static_cast<int32_t>(e[k] & mask));
          } else if (filtered) {
            index.for_each_answer(anchor[r], rel, take_out);
          }
          greater[r] = static_cast<double>(c.greater);
          equal[r] = static_cast<double>(c.equal);
          candidates[r] = static_cast<double>(c.nan);
          found[r] = known ? 1.0 : -1.0;
        }
      },
      options.control);
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
