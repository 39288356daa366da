// The definition of typed-candidates ranking (rank_triples_constrained, constrained.h) written out, for the ctest
// (test_constrained.cpp) and the fuzzer (fuzz_constrained.cpp): the statuses checked one by one in the order the
// header gives them, then each row's candidates built as sets - the relation's allowed ids, plus the true answer,
// less the other known answers of (anchor, relation) when filtered, less NaN scores - and counted one by one.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "constrained.h"
#include "filter_index.h"
#include "status.h"

namespace kgrank_test {

// One ranking problem: the index's dimensions and side, its known triples, the candidate sets, the batch.
struct ConstrainedProblem {
  int32_t num_entities = 0;
  int32_t num_relations = 0;
  bool tail_side = true;               // FilterIndex::Side::Tail: the tail is ranked, the head is the anchor
  std::vector<int32_t> known;          // the filter index's triples, row-major (head, relation, tail)
  std::vector<uint32_t> offsets, ids;  // the candidate sets (CandidateSets): num_relations + 1 offsets
  size_t size = 0;                     // CandidateSets::size (ids.size(), unless a test says otherwise)
  std::vector<uint16_t> bits;          // the caller's bit sets (CandidateSets::bits), or none: the kernel builds them
  std::vector<int32_t> bits_at;        // CandidateSets::bits_at, num_relations entries when bits are given
  std::vector<int32_t> triples;        // rows x 3
  size_t rows() const { return triples.size() / 3; }
};

// What the kernel must return: the status (code, index) and, when it is Ok, keys, thresholds and the four rank
// columns of rank_triples' out layout.
template <typename T>
struct ConstrainedExpected {
  kgrank::StatusCode code = kgrank::StatusCode::Ok;
  size_t index = 0;
  std::vector<int32_t> keys;  // [relation | anchor | truth]
  std::vector<T> thresholds;
  std::vector<double> optimistic, pessimistic, realistic, candidates;
};

template <typename T>
ConstrainedExpected<T> constrained_reference(const ConstrainedProblem& p, const std::vector<T>& scores, bool filtered) {
  using kgrank::StatusCode;
  ConstrainedExpected<T> want;
  const size_t rows = p.rows();
  const size_t n = static_cast<size_t>(p.num_entities);
  const auto fail = [&](StatusCode code, size_t index) {
    want.code = code;
    want.index = index;
    return want;
  };
  // 1. Ids: the first one outside its range, by its flat index (head, relation, tail of each row in turn).
  for (size_t i = 0; i < 3 * rows; ++i) {
    const int32_t v = p.triples[i];
    const int32_t bound = i % 3 == 1 ? p.num_relations : p.num_entities;
    if (v < 0 || v >= bound) return fail(StatusCode::IdOutOfRange, i);
  }
  // 2. The sets: offsets start at 0, never decrease, never pass size; a relation some row uses has ids in range and
  // strictly ascending. A relation no row uses may hold anything.
  const size_t R = static_cast<size_t>(p.num_relations);
  if (p.offsets[0] != 0) return fail(StatusCode::InvalidInput, 0);
  for (size_t r = 0; r < R; ++r) {
    if (p.offsets[r + 1] < p.offsets[r] || p.offsets[r + 1] > p.size) return fail(StatusCode::InvalidInput, 0);
  }
  std::set<int32_t> used;
  for (size_t i = 0; i < rows; ++i) used.insert(p.triples[3 * i + 1]);
  const size_t words = (n + 15) / 16;
  for (int32_t r : used) {
    // A set the caller gives as bits (the same set as its ids): the bits must lie within the words; its ids are
    // not read.
    if (!p.bits_at.empty() && p.bits_at[static_cast<size_t>(r)] >= 0) {
      const size_t at = static_cast<size_t>(p.bits_at[static_cast<size_t>(r)]);
      if (at > p.bits.size() || p.bits.size() - at < words) return fail(StatusCode::InvalidInput, 0);
      continue;
    }
    for (uint32_t k = p.offsets[r]; k < p.offsets[r + 1]; ++k) {
      if (p.ids[k] >= n || (k > p.offsets[r] && p.ids[k] <= p.ids[k - 1])) return fail(StatusCode::InvalidInput, 0);
    }
  }
  // 3. Per row, from the definition.
  std::set<std::tuple<int32_t, int32_t, int32_t>> known;
  for (size_t i = 0; i + 2 < p.known.size(); i += 3) known.insert({p.known[i], p.known[i + 1], p.known[i + 2]});
  want.keys.resize(3 * rows);
  want.thresholds.resize(rows);
  want.optimistic.resize(rows);
  want.pessimistic.resize(rows);
  want.realistic.resize(rows);
  want.candidates.resize(rows);
  std::map<int32_t, std::set<int32_t>> allowed_of;  // each used relation's allowed set, built once
  size_t nan_row = rows, unknown_row = rows;
  for (size_t i = 0; i < rows; ++i) {
    const int32_t h = p.triples[3 * i], rel = p.triples[3 * i + 1], tl = p.triples[3 * i + 2];
    const int32_t anchor = p.tail_side ? h : tl;
    const int32_t truth = p.tail_side ? tl : h;
    want.keys[i] = rel;
    want.keys[rows + i] = anchor;
    want.keys[2 * rows + i] = truth;
    const T* row = scores.data() + i * n;
    const T t = row[truth];
    want.thresholds[i] = t;
    if (t != t && nan_row == rows) nan_row = i;
    if (filtered && known.count({h, rel, tl}) == 0 && unknown_row == rows) unknown_row = i;
    // The candidates: the allowed set and the true answer, less the other known answers of (anchor, rel) when
    // filtered, less NaN scores. The true answer is the 1 of each rank and of numCandidates.
    auto allowed = allowed_of.find(rel);
    if (allowed == allowed_of.end()) {
      allowed =
          allowed_of.emplace(rel, std::set<int32_t>(p.ids.begin() + p.offsets[rel], p.ids.begin() + p.offsets[rel + 1]))
              .first;
    }
    std::set<int32_t> others;
    if (filtered) {
      for (const auto& [kh, kr, kt] : known) {
        if (kr == rel && (p.tail_side ? kh : kt) == anchor) others.insert(p.tail_side ? kt : kh);
      }
    }
    double greater = 0, equal = 0, count = 0;
    for (int32_t c : allowed->second) {
      if (c == truth || others.count(c) > 0 || row[c] != row[c]) continue;
      greater += row[c] > t;
      equal += row[c] == t;
      count += 1;
    }
    want.optimistic[i] = 1 + greater;
    want.pessimistic[i] = 1 + greater + equal;
    want.realistic[i] = 0.5 * (want.optimistic[i] + want.pessimistic[i]);
    want.candidates[i] = 1 + count;
  }
  // 4. Row statuses: a NaN true score first, then (filtered only) a triple that is not a filter triple.
  if (nan_row < rows) return fail(StatusCode::NanTrueScore, nan_row);
  if (unknown_row < rows) return fail(StatusCode::NotInIndex, unknown_row);
  return want;
}

// One call of the kernel on a problem, into buffers filled with sentinels (keys -7, thresholds 42, out -7).
template <typename T>
struct ConstrainedRun {
  kgrank::Status status;
  std::vector<int32_t> keys;
  std::vector<T> thresholds;
  std::vector<double> out;
};

template <typename T>
ConstrainedRun<T> run_constrained(const ConstrainedProblem& p, const std::vector<T>& scores,
                                  const kgrank::FilterIndex& index, bool filtered, const kgrank::CountOptions& opt) {
  const size_t rows = p.rows();
  ConstrainedRun<T> got;
  got.keys.assign(3 * rows, -7);
  got.thresholds.assign(rows, T(42));
  got.out.assign(6 * rows, -7.0);
  kgrank::CandidateSets sets;
  sets.offsets = p.offsets.data();
  sets.ids = p.ids.data();
  sets.size = p.size;
  if (!p.bits_at.empty()) {
    sets.bits = p.bits.data();
    sets.bits_at = p.bits_at.data();
    sets.bits_size = p.bits.size();
  }
  got.status = kgrank::rank_triples_constrained(scores.data(), rows, p.triples.data(), index, filtered, sets,
                                                got.keys.data(), got.thresholds.data(), got.out.data(), opt);
  return got;
}

// The kernel's results against the reference: the status code always, its index for the statuses that carry one;
// when Ok, keys, thresholds (bit for bit), the four rank columns and weight = NaN; when the input was rejected
// before counting (IdOutOfRange, InvalidInput), the buffers untouched. Returns the number of mismatches (0 = equal)
// and, when `why` is given, the first one's description.
template <typename T>
int constrained_mismatches(const ConstrainedExpected<T>& want, const ConstrainedRun<T>& got,
                           const char** why = nullptr) {
  using kgrank::StatusCode;
  int bad = 0;
  const auto note = [&](const char* what) {
    if (bad++ == 0 && why) *why = what;
  };
  if (got.status.code != want.code) note("status code");
  if (want.code != StatusCode::Ok && want.code != StatusCode::InvalidInput && got.status.index != want.index) {
    note("status index");
  }
  if (got.status.code != want.code) return bad;
  if (want.code == StatusCode::IdOutOfRange || want.code == StatusCode::InvalidInput) {
    for (int32_t k : got.keys) {
      if (k != -7) note("keys written before counting");
    }
    for (T t : got.thresholds) {
      if (t != T(42)) note("thresholds written before counting");
    }
    for (double v : got.out) {
      if (v != -7.0) note("out written before counting");
    }
    return bad;
  }
  if (want.code != StatusCode::Ok) return bad;
  const size_t rows = want.thresholds.size();
  if (got.keys != want.keys) note("keys");
  if (rows > 0 && std::memcmp(got.thresholds.data(), want.thresholds.data(), rows * sizeof(T)) != 0) {
    note("thresholds");
  }
  const std::vector<double>& out = got.out;
  for (size_t i = 0; i < rows; ++i) {
    if (out[i] != want.optimistic[i]) note("optimistic");
    if (out[rows + i] != want.pessimistic[i]) note("pessimistic");
    if (out[2 * rows + i] != want.realistic[i]) note("realistic");
    if (out[3 * rows + i] != want.candidates[i]) note("numCandidates");
    if (out[4 * rows + i] == out[4 * rows + i]) note("weight is not NaN");
  }
  return bad;
}

// The filter index of the problem's known triples (filtered), or of none (unfiltered).
inline kgrank::Status build_index(const ConstrainedProblem& p, bool with_known, kgrank::FilterIndex* out) {
  std::vector<kgrank::TripleSpan> spans;
  if (with_known) spans.push_back({p.known.data(), p.known.size() / 3});
  return kgrank::FilterIndex::build(spans, p.num_entities, p.num_relations,
                                    p.tail_side ? kgrank::FilterIndex::Side::Tail : kgrank::FilterIndex::Side::Head, 2,
                                    out);
}

}  // namespace kgrank_test
