// Known answers per (anchor, relation), CSR, one index per side. Fallback twin: src/fallback/filter-index.ts.

#include "filter_index.h"

#include <algorithm>

#include "thread_pool.h"

namespace kgrank {

namespace {
unsigned bits_for(int64_t max_value) {
  unsigned b = 1;
  while (b < 63 && (int64_t{1} << b) <= max_value) ++b;
  return b;
}
}  // namespace

template <typename E>
bool FilterIndex::fill(const std::vector<TripleSpan>& spans, int anchor_col, int answer_col, unsigned bits,
                       int32_t num_entities, int32_t num_relations, const std::vector<uint32_t>& offsets,
                       unsigned threads, std::vector<E>* entries, std::vector<uint32_t>* unique_offsets, size_t* keys) {
  const size_t n = offsets.size() - 1;
  std::vector<E> raw(offsets[n]);
  {
    // Counting sort by anchor: each anchor's packed (relation, answer) entries land in its bucket. The triples are
    // read a second time here (the first pass counted them): each id is read once into a local and checked again,
    // and a bucket that would overflow stops the build. Memory another thread writes meanwhile (a SharedArrayBuffer)
    // then fails the build instead of writing past a bucket or packing an id out of range.
    std::vector<uint32_t> cursor(offsets.begin(), offsets.end() - 1);
    for (const TripleSpan& span : spans) {
      const int32_t* t = span.data;
      for (size_t i = 0; i < span.count; ++i, t += 3) {
        const int32_t a = t[anchor_col], rel = t[1], b = t[answer_col];
        if (a < 0 || a >= num_entities || b < 0 || b >= num_entities || rel < 0 || rel >= num_relations) return false;
        uint32_t& at = cursor[static_cast<size_t>(a)];
        if (at == offsets[static_cast<size_t>(a) + 1]) return false;
        raw[at++] = (static_cast<E>(rel) << bits) | static_cast<E>(b);
      }
    }
  }
  // Sort each bucket and count its unique entries and keys, in parallel over blocks of anchors.
  constexpr size_t kBlock = 4096;
  const size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<uint32_t> unique(n + 1, 0);
  std::vector<size_t> block_keys(blocks, 0);
  parallel_for(blocks, threads, [&](size_t b) {
    const size_t a0 = b * kBlock, a1 = std::min(n, a0 + kBlock);
    size_t k = 0;
    for (size_t a = a0; a < a1; ++a) {
      E* first = raw.data() + offsets[a];
      E* last = raw.data() + offsets[a + 1];
      std::sort(first, last);
      E* end = std::unique(first, last);
      unique[a + 1] = static_cast<uint32_t>(end - first);
      for (E* p = first; p != end; ++p) {
        if (p == first || (*p >> bits) != (p[-1] >> bits)) ++k;
      }
    }
    block_keys[b] = k;
  });
  for (size_t a = 0; a < n; ++a) unique[a + 1] += unique[a];
  *keys = 0;
  for (size_t k : block_keys) *keys += k;
  entries->resize(unique[n]);
  parallel_for(blocks, threads, [&](size_t b) {
    const size_t a0 = b * kBlock, a1 = std::min(n, a0 + kBlock);
    for (size_t a = a0; a < a1; ++a) {
      std::copy(raw.data() + offsets[a], raw.data() + offsets[a] + (unique[a + 1] - unique[a]),
                entries->data() + unique[a]);
    }
  });
  *unique_offsets = std::move(unique);
  return true;
}

Status FilterIndex::build(const std::vector<TripleSpan>& spans, int32_t num_entities, int32_t num_relations, Side side,
                          unsigned threads, FilterIndex* out) {
  const int anchor_col = side == Side::Tail ? 0 : 2;
  const int answer_col = side == Side::Tail ? 2 : 0;
  size_t total = 0;
  // Validate ids and count triples per anchor.
  std::vector<uint32_t> offsets(static_cast<size_t>(num_entities) + 1, 0);
  for (size_t s = 0; s < spans.size(); ++s) {
    const int32_t* t = spans[s].data;
    for (size_t i = 0; i < spans[s].count; ++i, t += 3) {
      const int32_t h = t[0], rel = t[1], tl = t[2];  // each id read once: checked and used as read
      if (h < 0 || h >= num_entities || tl < 0 || tl >= num_entities || rel < 0 || rel >= num_relations) {
        return Status::invalid("triple array " + std::to_string(s) + ", row " + std::to_string(i) + ": (" +
                               std::to_string(h) + ", " + std::to_string(rel) + ", " + std::to_string(tl) +
                               ") has an id outside [0, numEntities) / [0, numRelations)");
      }
      ++offsets[static_cast<size_t>(anchor_col == 0 ? h : tl) + 1];
    }
    total += spans[s].count;
  }
  if (static_cast<uint64_t>(total) >= (uint64_t{1} << 32)) {  // size_t may be 32 bits (wasm32)
    return Status::invalid("more than 2^32 - 1 filter triples");
  }
  for (size_t a = 0; a < static_cast<size_t>(num_entities); ++a) offsets[a + 1] += offsets[a];

  FilterIndex idx;
  idx.side_ = side;
  idx.num_entities_ = num_entities;
  idx.num_relations_ = num_relations;
  idx.answer_bits_ = bits_for(num_entities - 1);
  idx.wide_ = idx.answer_bits_ + bits_for(num_relations - 1) > 32;
  const bool filled = idx.wide_ ? fill(spans, anchor_col, answer_col, idx.answer_bits_, num_entities, num_relations,
                                       offsets, threads, &idx.entries64_, &idx.offsets_, &idx.num_keys_)
                                : fill(spans, anchor_col, answer_col, idx.answer_bits_, num_entities, num_relations,
                                       offsets, threads, &idx.entries32_, &idx.offsets_, &idx.num_keys_);
  if (!filled) {
    return Status::invalid(
        "the triples changed while the index was built (another thread wrote to their memory?): "
        "pass arrays that stay unchanged during the call, e.g. a copy");
  }
  *out = std::move(idx);
  return Status::success();
}

bool FilterIndex::packed_answers_many(const int32_t* anchor, const int32_t* relation, size_t n, const uint32_t** first,
                                      size_t* count, uint32_t* mask) const {
  if (wide_) return false;
  *mask = (uint32_t{1} << answer_bits_) - 1;
  constexpr size_t kGroup = 16;
  const uint32_t* data = entries32_.data();
  for (size_t g0 = 0; g0 < n; g0 += kGroup) {
    const size_t g1 = std::min(n, g0 + kGroup);
    // One lower-bound search per key (the relation's first packed value) as base + length narrowed branch-free:
    // base moves past the probe when the probe is below the key. The end of the run is then found by galloping from
    // its start (probes 1, 2, 4, ... entries on, then a binary search between the last two): O(log run) compares
    // where walking the run took one per answer (measured: BENCHMARKS.md, "Notes moved from the kernel sources",
    // filter_index.cpp FilterIndex answer runs). The caller reads every entry of the run next (the answers' scores), so
    // the probes touch no line it would not.
    const uint32_t* base[kGroup];
    const uint32_t* seg_end[kGroup];
    size_t len[kGroup];
    uint64_t key[kGroup];
    size_t max_len = 0;
    for (size_t i = g0; i < g1; ++i) {
      const size_t j = i - g0;
      const int32_t a = anchor[i];
      const int32_t r = relation[i];
      if (a < 0 || a >= num_entities_ || r < 0 || r >= num_relations_) {
        base[j] = seg_end[j] = data;
        len[j] = 0;
        key[j] = 0;
        continue;
      }
      const uint32_t s0 = offsets_[static_cast<size_t>(a)];
      const uint32_t s1 = offsets_[static_cast<size_t>(a) + 1];
      base[j] = data + s0;
      seg_end[j] = data + s1;
      len[j] = s1 - s0;
      key[j] = static_cast<uint64_t>(r) << answer_bits_;
      max_len = std::max<size_t>(max_len, s1 - s0);
    }
    const size_t m = g1 - g0;
    // lower_bound as "find the first element >= key" over [base, base + len): halve len each round.
    for (size_t span = max_len; span > 0; span >>= 1) {
      for (size_t j = 0; j < m; ++j) {
        if (len[j] == 0) continue;
        const size_t half = len[j] >> 1;
        const uint32_t* probe = base[j] + half;
        const bool below = static_cast<uint64_t>(*probe) < key[j];
        base[j] = below ? probe + 1 : base[j];
        len[j] = below ? len[j] - half - 1 : half;
        if (len[j]) __builtin_prefetch(base[j] + (len[j] >> 1));
      }
    }
    for (size_t i = g0; i < g1; ++i) {
      const size_t j = i - g0;
      // The run of this relation: entries whose relation bits equal the key's, up to the next relation's values or
      // the segment's end.
      // The run is [base, base + n): entries below the next relation's first value (answer_bits_ <= 31: ids are
      // int32, so that value fits in 64 bits). Every entry at or after base is >= key (lower bound above).
      const uint64_t next = key[j] + (uint64_t{1} << answer_bits_);
      const uint32_t* b = base[j];
      const size_t avail = static_cast<size_t>(seg_end[j] - b);
      size_t lo = 0;  // b[lo - 1] < next (vacuous for lo = 0)
      size_t hi = 1;  // gallop until b[hi - 1] >= next or past the segment
      while (hi <= avail && b[hi - 1] < next) {
        lo = hi;
        hi <<= 1;
      }
      hi = std::min(hi, avail + 1);
      // The run's length n is in [lo, hi): the first index in [lo, hi - 1) whose entry is >= next, else hi - 1.
      size_t n_lo = lo, n_hi = hi - 1;
      while (n_lo < n_hi) {
        const size_t mid = n_lo + ((n_hi - n_lo) >> 1);
        if (b[mid] < next) {
          n_lo = mid + 1;
        } else {
          n_hi = mid;
        }
      }
      first[i] = b;
      count[i] = n_lo;
    }
  }
  return true;
}

size_t FilterIndex::count(int32_t anchor, int32_t relation) const {
  if (wide_) {
    const uint64_t* first;
    const uint64_t* last;
    return range(entries64_, anchor, relation, &first, &last) ? static_cast<size_t>(last - first) : 0;
  }
  const uint32_t* first;
  const uint32_t* last;
  return range(entries32_, anchor, relation, &first, &last) ? static_cast<size_t>(last - first) : 0;
}

Status FilterIndex::answer_counts(const int32_t* triples, size_t rows, double* out) const {
  const uint32_t entities = static_cast<uint32_t>(num_entities_);
  const uint32_t relations = static_cast<uint32_t>(num_relations_);
  const bool tail = side_ == Side::Tail;
  const int32_t* t = triples;
  for (size_t r = 0; r < rows; ++r, t += 3) {
    const int32_t h = t[0], rel = t[1], tl = t[2];  // each id read once: checked and used as read
    if (static_cast<uint32_t>(h) >= entities)
      return Status::at(StatusCode::IdOutOfRange, 3 * r, "head id out of range");
    if (static_cast<uint32_t>(rel) >= relations) {
      return Status::at(StatusCode::IdOutOfRange, 3 * r + 1, "relation id out of range");
    }
    if (static_cast<uint32_t>(tl) >= entities) {
      return Status::at(StatusCode::IdOutOfRange, 3 * r + 2, "tail id out of range");
    }
    out[r] = static_cast<double>(count(tail ? h : tl, rel));
  }
  return Status::success();
}

bool FilterIndex::contains(int32_t anchor, int32_t relation, int32_t answer) const {
  if (answer < 0 || answer >= num_entities_ || relation < 0 || relation >= num_relations_) return false;
  if (anchor < 0 || anchor >= num_entities_) return false;
  const size_t a = static_cast<size_t>(anchor);
  if (wide_) {
    const uint64_t key = (static_cast<uint64_t>(relation) << answer_bits_) | static_cast<uint64_t>(answer);
    return std::binary_search(entries64_.data() + offsets_[a], entries64_.data() + offsets_[a + 1], key);
  }
  const uint32_t key = (static_cast<uint32_t>(relation) << answer_bits_) | static_cast<uint32_t>(answer);
  return std::binary_search(entries32_.data() + offsets_[a], entries32_.data() + offsets_[a + 1], key);
}

size_t FilterIndex::bytes() const {
  return offsets_.size() * sizeof(uint32_t) + entries32_.size() * sizeof(uint32_t) +
         entries64_.size() * sizeof(uint64_t);
}

}  // namespace kgrank
