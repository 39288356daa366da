// See intern.h. Twin: src/io/triple-table.ts (TsTripleTable); test/io.test.ts checks both against labelMaps and
// mapTriples.
#include "intern.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "parse.h"

namespace kgrank {

namespace {

uint32_t hash_bytes(const uint8_t* b, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, b + i, 8);
    h = (h ^ w) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
  }
  uint64_t w = 0;
  std::memcpy(&w, b + i, n - i);
  h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 29;
  h *= 0xFF51AFD7ED558CCDull;
  return static_cast<uint32_t>(h ^ (h >> 32));
}

}  // namespace

namespace {

void load_prefix(const uint8_t* b, size_t n, uint64_t prefix[2]) {
  uint8_t tmp[16] = {0};
  std::memcpy(tmp, b, std::min<size_t>(n, 16));
  std::memcpy(prefix, tmp, 16);
}

// Eight label bytes as an integer that orders as the bytes do.
uint64_t be_key(uint64_t w) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return w;
#else
  return __builtin_bswap64(w);
#endif
}

}  // namespace

void TripleInterner::Table::grow() {
  const size_t cap = slots.empty() ? 1024 : slots.size() * 2;
  std::vector<Slot> next(cap, Slot{{0, 0}, 0, 0});
  const size_t mask = cap - 1;
  for (const Slot& e : slots) {
    if (e.index1 == 0) continue;
    const size_t k = e.index1 - 1;
    size_t s = hash_bytes(reinterpret_cast<const uint8_t*>(arena.data()) + start[k], start[k + 1] - start[k]) & mask;
    while (next[s].index1 != 0) s = (s + 1) & mask;
    next[s] = e;
  }
  slots.swap(next);
}

int32_t TripleInterner::Table::intern(const uint8_t* b, size_t n, uint32_t hash, bool train) {
  if ((size + 1) * 10 > slots.size() * 7) grow();
  uint64_t prefix[2];
  load_prefix(b, n, prefix);
  const size_t mask = slots.size() - 1;
  for (size_t s = hash & mask;; s = (s + 1) & mask) {
    Slot& e = slots[s];
    if (e.index1 == 0) {
      const size_t k = size++;
      e.prefix[0] = prefix[0];
      e.prefix[1] = prefix[1];
      e.len_train = static_cast<uint32_t>(n) | (train ? kTrain : 0);
      e.index1 = static_cast<uint32_t>(k + 1);
      arena.append(reinterpret_cast<const char*>(b), n);
      start.push_back(arena.size());
      return static_cast<int32_t>(k);
    }
    if ((e.len_train & ~kTrain) == n && e.prefix[0] == prefix[0] && e.prefix[1] == prefix[1]) {
      const size_t k = e.index1 - 1;
      if (n <= 16 || std::memcmp(arena.data() + start[k] + 16, b + 16, n - 16) == 0) {
        if (train) e.len_train |= kTrain;
        return static_cast<int32_t>(k);
      }
    }
  }
}

Status TripleInterner::add(int split, const uint8_t* bytes, size_t len) {
  offsets_.clear();
  Status s = split_tsv_triples(bytes, len, offsets_);
  if (!s.ok()) return s;
  const bool train = split == 0;
  std::vector<int32_t>& out = provisional_[split];
  const size_t n = offsets_.size() / 6;
  if (tables_[0].size + 2 * n > 0x7FFFFFFFu) return Status::invalid("more than 2^31 - 1 distinct entity labels");
  if (out.size() + 3 * n > out.capacity()) out.reserve(std::max(out.capacity() * 2, out.size() + 3 * n));
  // The hashes of every field first, so each lookup can prefetch a slot a few fields ahead (the table is far larger
  // than the caches at WikiKG2 size: a lookup is one miss, overlapped with the next ones).
  hashes_.resize(3 * n);
  for (size_t f = 0; f < 3 * n; ++f) {
    const size_t* o = offsets_.data() + 2 * f;
    hashes_[f] = hash_bytes(bytes + o[0], o[1] - o[0]);
  }
  constexpr size_t kAhead = 12;
  for (size_t f = 0; f < 3 * n; ++f) {
    if (f + kAhead < 3 * n) {
      const Table& t = tables_[(f + kAhead) % 3 == 1 ? 1 : 0];
      if (!t.slots.empty()) __builtin_prefetch(&t.slots[hashes_[f + kAhead] & (t.slots.size() - 1)]);
    }
    const size_t* o = offsets_.data() + 2 * f;
    out.push_back(tables_[f % 3 == 1 ? 1 : 0].intern(bytes + o[0], o[1] - o[0], hashes_[f], train));
  }
  return Status::success();
}

void TripleInterner::finish() {
  std::vector<int32_t> remap[2];
  for (int kind = 0; kind < 2; ++kind) {
    Table& t = tables_[kind];
    // Sorted by the labels' first 16 bytes as big-endian keys (zero padding sorts a shorter label first, as byte
    // order does), ties by the rest of the bytes and the length.
    struct Key {
      uint64_t k0, k1;
      uint32_t index;
    };
    std::vector<Key> keys;
    keys.reserve(t.size);
    for (const Slot& e : t.slots) {
      if (e.index1 != 0 && (e.len_train & kTrain))
        keys.push_back({be_key(e.prefix[0]), be_key(e.prefix[1]), e.index1 - 1});
    }
    const char* a = t.arena.data();
    std::sort(keys.begin(), keys.end(), [&](const Key& x, const Key& y) {
      if (x.k0 != y.k0) return x.k0 < y.k0;
      if (x.k1 != y.k1) return x.k1 < y.k1;
      const size_t nx = t.start[x.index + 1] - t.start[x.index], ny = t.start[y.index + 1] - t.start[y.index];
      const size_t m = std::min(nx, ny);
      const int c = m > 16 ? std::memcmp(a + t.start[x.index] + 16, a + t.start[y.index] + 16, m - 16) : 0;
      return c != 0 ? c < 0 : nx < ny;
    });
    std::vector<uint32_t> order(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) order[i] = keys[i].index;
    keys = std::vector<Key>();
    remap[kind].assign(t.size, -1);
    Sorted& out = sorted_[kind];
    for (size_t id = 0; id < order.size(); ++id) {
      const uint32_t k = order[id];
      remap[kind][k] = static_cast<int32_t>(id);
      out.bytes.append(a + t.start[k], t.start[k + 1] - t.start[k]);
      out.offsets.push_back(out.bytes.size());
    }
    // The table is not needed after this: free it before the rows are mapped.
    t = Table();
  }
  for (int split = 0; split < kSplits; ++split) {
    std::vector<int32_t>& v = provisional_[split];
    size_t w = 0;
    for (size_t i = 0; i + 3 <= v.size(); i += 3) {
      const int32_t h = remap[0][v[i]], r = remap[1][v[i + 1]], t = remap[0][v[i + 2]];
      if (h < 0 || r < 0 || t < 0) continue;
      v[w++] = h;
      v[w++] = r;
      v[w++] = t;
    }
    dropped_[split] = (v.size() - w) / 3;
    v.resize(w);
  }
}

}  // namespace kgrank
