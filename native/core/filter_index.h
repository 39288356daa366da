// Index of known triples for the filtered setting. One FilterIndex serves one side:
//   side "tail": anchor = head, answers = the tails t' of every known (head, relation, t')
//   side "head": anchor = tail, answers = the heads h' of every known (h', relation, tail)
// Layout: per anchor a segment of entries, each entry the packed pair (relation << answer_bits) | answer, sorted
// and unique; offsets[a] .. offsets[a+1] is anchor a's segment. The answers of (anchor, relation) are the entries
// of the segment between (relation << bits) and ((relation + 1) << bits), found by binary search. Entries are 32
// bits when bits(numRelations - 1) + bits(numEntities - 1) <= 32 (FB15k-237, WN18RR, WikiKG2 all fit), else 64.
// Memory: 4 (or 8) bytes per unique answer plus 4 bytes per entity, per side.
// Built by a counting sort over anchors, then a sort of each anchor's entries.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "status.h"

namespace kgrank {

struct TripleSpan {
  const int32_t* data;  // row-major (head, relation, tail)
  size_t count;         // number of triples
};

class FilterIndex {
 public:
  enum class Side { Head, Tail };

  // Builds the index from one or more triple arrays (duplicates are fine). InvalidInput when an id is out of range
  // (the message names the array, the row and the value), there are 2^32 or more triples, or the triples changed
  // during the build (their memory may be written by another thread: every id is checked where it is used).
  static Status build(const std::vector<TripleSpan>& spans, int32_t num_entities, int32_t num_relations, Side side,
                      unsigned threads, FilterIndex* out);

  // Calls f(answer) for every known answer of (anchor, relation), in ascending order. Out-of-range ids: none.
  template <typename F>
  void for_each_answer(int32_t anchor, int32_t relation, F f) const {
    if (wide_) {
      visit(entries64_, anchor, relation, f);
    } else {
      visit(entries32_, anchor, relation, f);
    }
  }

  // Calls f(answer) for every known answer of (anchor, relation) in [lo, hi), in ascending order (a column slice of
  // the filtered count): a binary search for the first, then a walk to the first answer >= hi. Requires
  // 0 <= lo <= hi <= num_entities(); out-of-range anchor or relation: none.
  template <typename F>
  void for_each_answer_in(int32_t anchor, int32_t relation, int32_t lo, int32_t hi, F f) const {
    if (lo >= hi) return;
    if (wide_) {
      visit_in(entries64_, anchor, relation, lo, hi, f);
    } else {
      visit_in(entries32_, anchor, relation, lo, hi, f);
    }
  }

  // The packed 32-bit entries of (anchor, relation) and the mask that extracts an answer id from one; false when
  // the index uses 64-bit entries (then use for_each_answer). *count is 0 when there are none.
  bool packed_answers(int32_t anchor, int32_t relation, const uint32_t** first, size_t* count, uint32_t* mask) const {
    *count = 0;
    if (wide_) return false;
    const uint32_t* last = nullptr;
    *mask = (uint32_t{1} << answer_bits_) - 1;
    if (range(entries32_, anchor, relation, first, &last)) *count = static_cast<size_t>(last - *first);
    return true;
  }

  // packed_answers() for n keys at once: the lower-bound searches of up to 16 keys advance in lockstep, so their
  // cache misses overlap instead of queueing (a search is ~log2(segment) dependent loads), and each run's end is
  // found by walking the run, which the caller reads next anyway. False when the index uses 64-bit entries.
  // Out-of-range keys get count 0.
  bool packed_answers_many(const int32_t* anchor, const int32_t* relation, size_t n, const uint32_t** first,
                           size_t* count, uint32_t* mask) const;

  // Number of known answers of (anchor, relation): two binary searches in the anchor's segment. Out-of-range ids: 0.
  size_t count(int32_t anchor, int32_t relation) const;
  // count() of every triple's key: out[i] = the number of known answers of row i's (anchor, relation), 0 for an
  // unknown key, for `rows` row-major (head, relation, tail) triples; the anchor is the head (side Tail) or the tail
  // (side Head). Each id is read once and checked as read (the triples may be memory another thread writes), the
  // tail too, though the count does not use it: IdOutOfRange at the first id outside [0, numEntities) /
  // [0, numRelations), index = its flat index into triples (ids in the order head, relation, tail of each row); the
  // rows before it are written then, the rest of out is left as it was.
  Status answer_counts(const int32_t* triples, size_t rows, double* out) const;
  // True when `answer` is a known answer of (anchor, relation).
  bool contains(int32_t anchor, int32_t relation, int32_t answer) const;

  Side side() const { return side_; }
  int32_t num_entities() const { return num_entities_; }
  int32_t num_relations() const { return num_relations_; }
  size_t num_keys() const { return num_keys_; }
  size_t num_answers() const { return wide_ ? entries64_.size() : entries32_.size(); }
  bool wide() const { return wide_; }
  // Bytes held by the index arrays.
  size_t bytes() const;

 private:
  // The entries of (anchor, relation): the part of the anchor's sorted segment between the packed bounds.
  template <typename E>
  bool range(const std::vector<E>& entries, int32_t anchor, int32_t relation, const E** first, const E** last) const {
    if (anchor < 0 || anchor >= num_entities_ || relation < 0 || relation >= num_relations_) return false;
    const E* seg_first = entries.data() + offsets_[static_cast<size_t>(anchor)];
    const E* seg_last = entries.data() + offsets_[static_cast<size_t>(anchor) + 1];
    const E lo = static_cast<E>(relation) << answer_bits_;
    *first = std::lower_bound(seg_first, seg_last, lo);
    // The upper bound can be 2^32 for 32-bit entries (the last relation when bits fill all 32): then it is the end.
    const uint64_t hi = (static_cast<uint64_t>(relation) + 1) << answer_bits_;
    *last = hi > static_cast<uint64_t>(static_cast<E>(~E{0})) ? seg_last
                                                              : std::lower_bound(*first, seg_last, static_cast<E>(hi));
    return *first != *last;
  }

  template <typename E, typename F>
  void visit(const std::vector<E>& entries, int32_t anchor, int32_t relation, F& f) const {
    const E* first;
    const E* last;
    if (!range(entries, anchor, relation, &first, &last)) return;
    const E mask = (E{1} << answer_bits_) - 1;
    for (const E* p = first; p != last; ++p) f(static_cast<int32_t>(*p & mask));
  }

  // lo < hi <= num_entities_, so lo fits in the answer bits and (relation << bits) | lo is the packed key of lo.
  template <typename E, typename F>
  void visit_in(const std::vector<E>& entries, int32_t anchor, int32_t relation, int32_t lo, int32_t hi, F& f) const {
    const E* first;
    const E* last;
    if (!range(entries, anchor, relation, &first, &last)) return;
    const E mask = (E{1} << answer_bits_) - 1;
    const E* p = std::lower_bound(first, last, (static_cast<E>(relation) << answer_bits_) | static_cast<E>(lo));
    for (; p != last && static_cast<int32_t>(*p & mask) < hi; ++p) f(static_cast<int32_t>(*p & mask));
  }

  // False when the triples no longer match the counts of the first pass (changed meanwhile).
  template <typename E>
  static bool fill(const std::vector<TripleSpan>& spans, int anchor_col, int answer_col, unsigned bits,
                   int32_t num_entities, int32_t num_relations, const std::vector<uint32_t>& offsets, unsigned threads,
                   std::vector<E>* entries, std::vector<uint32_t>* unique_offsets, size_t* keys);

  Side side_ = Side::Tail;
  int32_t num_entities_ = 0;
  int32_t num_relations_ = 0;
  unsigned answer_bits_ = 0;
  bool wide_ = false;
  size_t num_keys_ = 0;
  std::vector<uint32_t> offsets_;
  std::vector<uint32_t> entries32_;
  std::vector<uint64_t> entries64_;
};

}  // namespace kgrank
