#include "filter_index.h"

#include <algorithm>

#include "thread_pool.h"

namespace kgrank {

namespace {
inline uint64_t pack(int32_t relation, int32_t answer) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(relation)) << 32) | static_cast<uint32_t>(answer);
}
inline int32_t relation_of(uint64_t p) { return static_cast<int32_t>(p >> 32); }
inline int32_t answer_of(uint64_t p) { return static_cast<int32_t>(p & 0xffffffffu); }
}  // namespace

bool FilterIndex::build(const std::vector<TripleSpan>& spans, int32_t num_entities, int32_t num_relations, Side side,
                        unsigned threads, FilterIndex* out, std::string* error) {
  const int anchor_col = side == Side::Tail ? 0 : 2;
  const int answer_col = side == Side::Tail ? 2 : 0;
  size_t total = 0;
  // Validate ids and count triples per anchor.
  std::vector<uint32_t> offsets(static_cast<size_t>(num_entities) + 1, 0);
  for (size_t s = 0; s < spans.size(); ++s) {
    const int32_t* t = spans[s].data;
    for (size_t i = 0; i < spans[s].count; ++i, t += 3) {
      if (t[0] < 0 || t[0] >= num_entities || t[2] < 0 || t[2] >= num_entities || t[1] < 0 || t[1] >= num_relations) {
        *error = "triple array " + std::to_string(s) + ", row " + std::to_string(i) + ": (" + std::to_string(t[0]) + ", " +
                 std::to_string(t[1]) + ", " + std::to_string(t[2]) + ") has an id outside [0, numEntities) / [0, numRelations)";
        return false;
      }
      ++offsets[static_cast<size_t>(t[anchor_col]) + 1];
    }
    total += spans[s].count;
  }
  if (total >= (size_t{1} << 32)) {
    *error = "more than 2^32 - 1 filter triples";
    return false;
  }
  for (size_t a = 0; a < static_cast<size_t>(num_entities); ++a) offsets[a + 1] += offsets[a];

  // Counting sort by anchor: each anchor's (relation, answer) pairs land in its bucket.
  std::vector<uint64_t> pairs(total);
  {
    std::vector<uint32_t> cursor(offsets.begin(), offsets.end() - 1);
    for (const TripleSpan& span : spans) {
      const int32_t* t = span.data;
      for (size_t i = 0; i < span.count; ++i, t += 3) {
        pairs[cursor[static_cast<size_t>(t[anchor_col])]++] = pack(t[1], t[answer_col]);
      }
    }
  }

  // Sort each bucket, then count its unique keys and answers (in parallel over blocks of anchors).
  const size_t n = static_cast<size_t>(num_entities);
  constexpr size_t kBlock = 4096;
  const size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<uint32_t> keys_per_anchor(n + 1, 0), answers_per_anchor(n + 1, 0);
  parallel_for(blocks, threads, [&](size_t b) {
    const size_t a0 = b * kBlock, a1 = std::min(n, a0 + kBlock);
    for (size_t a = a0; a < a1; ++a) {
      uint64_t* first = pairs.data() + offsets[a];
      uint64_t* last = pairs.data() + offsets[a + 1];
      std::sort(first, last);
      uint32_t keys = 0, unique = 0;
      for (uint64_t* p = first; p != last; ++p) {
        if (p != first && *p == p[-1]) continue;
        ++unique;
        if (p == first || relation_of(*p) != relation_of(p[-1])) ++keys;
      }
      keys_per_anchor[a + 1] = keys;
      answers_per_anchor[a + 1] = unique;
    }
  });
  for (size_t a = 0; a < n; ++a) {
    keys_per_anchor[a + 1] += keys_per_anchor[a];
    answers_per_anchor[a + 1] += answers_per_anchor[a];
  }

  FilterIndex idx;
  idx.side_ = side;
  idx.num_entities_ = num_entities;
  idx.num_relations_ = num_relations;
  idx.anchor_offsets_ = keys_per_anchor;
  idx.key_relation_.resize(keys_per_anchor[n]);
  idx.key_offsets_.resize(static_cast<size_t>(keys_per_anchor[n]) + 1);
  idx.answers_.resize(answers_per_anchor[n]);
  idx.key_offsets_[keys_per_anchor[n]] = answers_per_anchor[n];
  parallel_for(blocks, threads, [&](size_t b) {
    const size_t a0 = b * kBlock, a1 = std::min(n, a0 + kBlock);
    for (size_t a = a0; a < a1; ++a) {
      const uint64_t* first = pairs.data() + offsets[a];
      const uint64_t* last = pairs.data() + offsets[a + 1];
      uint32_t k = keys_per_anchor[a];
      uint32_t j = answers_per_anchor[a];
      for (const uint64_t* p = first; p != last; ++p) {
        if (p != first && *p == p[-1]) continue;
        if (p == first || relation_of(*p) != relation_of(p[-1])) {
          idx.key_relation_[k] = relation_of(*p);
          idx.key_offsets_[k] = j;
          ++k;
        }
        idx.answers_[j++] = answer_of(*p);
      }
    }
  });
  *out = std::move(idx);
  return true;
}

const int32_t* FilterIndex::answers(int32_t anchor, int32_t relation, size_t* count) const {
  *count = 0;
  if (anchor < 0 || anchor >= num_entities_ || relation < 0 || relation >= num_relations_) return nullptr;
  const int32_t* first = key_relation_.data() + anchor_offsets_[static_cast<size_t>(anchor)];
  const int32_t* last = key_relation_.data() + anchor_offsets_[static_cast<size_t>(anchor) + 1];
  const int32_t* it = std::lower_bound(first, last, relation);
  if (it == last || *it != relation) return nullptr;
  const size_t k = static_cast<size_t>(it - key_relation_.data());
  *count = key_offsets_[k + 1] - key_offsets_[k];
  return answers_.data() + key_offsets_[k];
}

size_t FilterIndex::bytes() const {
  return anchor_offsets_.size() * sizeof(uint32_t) + key_relation_.size() * sizeof(int32_t) +
         key_offsets_.size() * sizeof(uint32_t) + answers_.size() * sizeof(int32_t);
}

}  // namespace kgrank
