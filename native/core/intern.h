// Labelled triples to PyKEEN's ids without a string per row: the TSV bytes of train, valid and test are split
// (split_tsv_triples, so the same inputs are accepted and refused with the same messages) and each label interned
// in a hash table of its bytes; finish() sorts the training labels and maps every row. Ids follow PyKEEN: entities
// are the sorted distinct heads and tails of train, relations the sorted distinct relations of train (UTF-8 byte
// order is code-point order, Python's sorted() on str); a valid or test row with a label not in those tables is
// dropped and counted. Twin of the TypeScript loader in src/io/triple-table.ts. Memory: the label bytes once, 32 to
// 64 bytes of table per distinct label, and 12 bytes per row.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "status.h"

namespace kgrank {

class TripleInterner {
 public:
  static constexpr int kSplits = 3;  // 0 = train (defines the ids), 1 = valid, 2 = test

  // Splits bytes[0, len) (whole lines; a piece of a file after its first must not start with a BOM) and appends its
  // rows to `split`. On a malformed line the status is split_tsv_triples's, line numbers counted from the piece.
  Status add(int split, const uint8_t* bytes, size_t len);
  // Rows added to `split` so far.
  size_t rows(int split) const { return provisional_[split].size() / 3; }
  // Sorts the training labels and maps every split to ids (in place; add() must not follow). Returns the split's
  // id rows, 3 per triple, and `dropped` rows per split.
  void finish();
  std::vector<int32_t>& triples(int split) { return provisional_[split]; }
  size_t dropped(int split) const { return dropped_[split]; }
  // Sorted labels: kind 0 = entities, 1 = relations; bytes and n + 1 offsets.
  const std::string& label_bytes(int kind) const { return sorted_[kind].bytes; }
  const std::vector<uint64_t>& label_offsets(int kind) const { return sorted_[kind].offsets; }

 private:
  // Open addressing with linear probing; a slot holds a label's first 16 bytes (zero-padded), its length, whether it
  // occurs in train (in its role) and its index + 1 (0 = empty), so a lookup of a label of at most 16 bytes touches
  // one slot and no other memory.
  struct Slot {
    uint64_t prefix[2];
    uint32_t len_train;  // length | kTrain
    uint32_t index1;
  };
  static constexpr uint32_t kTrain = 0x80000000u;
  struct Table {
    std::string arena;            // every label's bytes
    std::vector<uint64_t> start;  // label k is arena[start[k], start[k + 1])
    std::vector<Slot> slots;
    size_t size = 0;
    Table() : start{0} {}
    int32_t intern(const uint8_t* b, size_t n, uint32_t hash, bool train);
    void grow();
  };
  struct Sorted {
    std::string bytes;
    std::vector<uint64_t> offsets{0};
  };
  Table tables_[2];
  std::vector<int32_t> provisional_[kSplits];
  size_t dropped_[kSplits] = {0, 0, 0};
  Sorted sorted_[2];
  std::vector<size_t> offsets_;   // scratch of split_tsv_triples
  std::vector<uint32_t> hashes_;  // scratch: a hash per field
};

}  // namespace kgrank
