// Index of known triples for the filtered setting. One FilterIndex serves one side:
//   side "tail": anchor = head, answers = the tails t' of every known (head, relation, t')
//   side "head": anchor = tail, answers = the heads h' of every known (h', relation, tail)
// Layout (CSR, answers sorted and unique per key):
//   anchor_offsets[a] .. anchor_offsets[a+1]  -> the keys (relations) of anchor a, sorted
//   key_relation[k]                            -> relation id of key k
//   key_offsets[k] .. key_offsets[k+1]         -> answers of key k in `answers`
// Built by a counting sort over anchors, then a sort of each anchor's (relation, answer) pairs.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kgrank {

struct TripleSpan {
  const int32_t* data;  // row-major (head, relation, tail)
  size_t count;         // number of triples
};

class FilterIndex {
 public:
  enum class Side { Head, Tail };

  // Builds the index from one or more triple arrays (duplicates are fine). Returns false and sets *error when an
  // id is out of range (the message names the array, the row and the value).
  static bool build(const std::vector<TripleSpan>& spans, int32_t num_entities, int32_t num_relations, Side side,
                    unsigned threads, FilterIndex* out, std::string* error);

  // Known answers of (anchor, relation), sorted ascending; empty when none.
  const int32_t* answers(int32_t anchor, int32_t relation, size_t* count) const;

  Side side() const { return side_; }
  int32_t num_entities() const { return num_entities_; }
  int32_t num_relations() const { return num_relations_; }
  size_t num_keys() const { return key_relation_.size(); }
  size_t num_answers() const { return answers_.size(); }
  // Bytes held by the index arrays.
  size_t bytes() const;

 private:
  Side side_ = Side::Tail;
  int32_t num_entities_ = 0;
  int32_t num_relations_ = 0;
  std::vector<uint32_t> anchor_offsets_;
  std::vector<int32_t> key_relation_;
  std::vector<uint32_t> key_offsets_;
  std::vector<int32_t> answers_;
};

}  // namespace kgrank
