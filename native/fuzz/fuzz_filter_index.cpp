// Fuzz target: the filter index and filtered counting against brute force.
//   build      1-3 triple arrays (duplicates, sometimes an out-of-range id: build must fail exactly then), both
//              sides, entity/relation counts that give 32-bit entries, 32-bit entries whose packed bits fill all 32
//              (the last relation's upper bound is 2^32), and 64-bit entries;
//   lookups    for_each_answer / count / contains / packed_answers / packed_answers_many (in-range and
//              out-of-range keys) against a std::set per (anchor, relation); answer_counts over the keys as
//              triples (a fuzzed third id, sometimes out of range): the set's size up to the first id out of range,
//              IdOutOfRange at its flat index, the rows after it untouched;
//   counting   count_rows_filtered (float32 and float64, every SIMD level, 1 or 2 threads) against "count the row,
//              then take every other known answer out", with removed = -1 when the task's triple is not known;
//   slices     count_rows_filtered_range over a fuzzed column slice [start, start + width) (the whole axis
//              included) with given thresholds (the true column's score or a fuzzed one) against "count the slice's
//              columns, then take out every other known answer inside the slice", removed = -1 as above.
#include <map>
#include <set>
#include <string>

#include "count.h"
#include "filter_index.h"
#include "fuzz_common.h"

namespace {

using kgrank::FilterIndex;
using Key = std::pair<int32_t, int32_t>;

int32_t id(FuzzedDataProvider& p, int32_t bound, bool* bad) {
  const uint8_t mode = p.ConsumeIntegral<uint8_t>();
  if (mode == 255) {
    *bad = true;
    // Below 0, or at / above the bound where int32 has room (bound may be 2^31 - 1).
    const int32_t k = p.ConsumeIntegralInRange<int32_t>(0, 3);
    return p.ConsumeBool() || bound > INT32_MAX - 3 ? -1 - k : bound + k;
  }
  if (mode >= 200) return bound - 1 - p.ConsumeIntegralInRange<int32_t>(0, std::min<int32_t>(bound - 1, 3));  // top ids
  return static_cast<int32_t>(p.ConsumeIntegralInRange<uint32_t>(0, static_cast<uint32_t>(bound - 1)));
}

template <typename T>
void check_filtered(FuzzedDataProvider& p, const FilterIndex& idx, const std::map<Key, std::set<int32_t>>& ref,
                    const std::vector<Key>& keys) {
  const int32_t E = idx.num_entities();
  const size_t cols = static_cast<size_t>(E);
  const size_t max_rows = cols > 4096 ? 3 : 24;
  const size_t rows = p.ConsumeIntegralInRange<size_t>(0, max_rows);
  const size_t pattern_len = p.ConsumeIntegralInRange<size_t>(1, 61);
  std::vector<T> pattern(pattern_len);
  for (T& v : pattern) v = kgrank_fuzz::score<T>(p);
  std::vector<T> scores(rows * cols);
  for (size_t i = 0; i < scores.size(); ++i) scores[i] = pattern[(i * 7 + i / cols) % pattern_len];
  std::vector<int32_t> anchor(rows), relation(rows), truth(rows);
  for (size_t r = 0; r < rows; ++r) {
    bool unused = false;
    if (!keys.empty() && p.ConsumeBool()) {
      // A known key, usually with one of its own answers as the truth.
      const Key& k = keys[p.ConsumeIntegralInRange<size_t>(0, keys.size() - 1)];
      anchor[r] = k.first;
      relation[r] = k.second;
      const std::set<int32_t>& s = ref.at(k);
      auto it = s.begin();
      std::advance(it, p.ConsumeIntegralInRange<size_t>(0, s.size() - 1));
      truth[r] =
          p.ConsumeIntegral<uint8_t>() < 230 ? *it : static_cast<int32_t>(p.ConsumeIntegralInRange<uint32_t>(0, E - 1));
    } else {
      anchor[r] = static_cast<int32_t>(p.ConsumeIntegralInRange<uint32_t>(0, E - 1));
      relation[r] = static_cast<int32_t>(p.ConsumeIntegralInRange<uint32_t>(0, idx.num_relations() - 1));
      truth[r] = static_cast<int32_t>(p.ConsumeIntegralInRange<uint32_t>(0, E - 1));
    }
    (void)unused;
  }
  // Oracle.
  std::vector<double> wg(rows), we(rows), wn(rows), wr(rows);
  for (size_t r = 0; r < rows; ++r) {
    const T* row = scores.data() + r * cols;
    const T t = row[truth[r]];
    const kgrank::Counts all = kgrank_fuzz::reference(row, cols, t);
    double g = static_cast<double>(all.greater), e = static_cast<double>(all.equal), removed = 0;
    bool found = false;
    auto it = ref.find({anchor[r], relation[r]});
    if (it != ref.end()) {
      for (int32_t b : it->second) {
        if (b == truth[r]) {
          found = true;
          continue;
        }
        g -= row[b] > t;
        e -= row[b] == t;
        removed += !std::isnan(row[b]);
      }
    }
    wg[r] = g;
    we[r] = e;
    wn[r] = static_cast<double>(all.nan);
    wr[r] = found ? removed : -1.0;
  }
  const unsigned threads = p.ConsumeBool() ? 1u : 2u;
  std::vector<double> g(rows), e(rows), n(rows), rm(rows);
  std::vector<T> th(rows);
  for (kgrank::SimdLevel level : kgrank_fuzz::levels()) {
    kgrank::CountOptions opt;
    opt.simd = level;
    opt.threads = threads;
    std::fill(rm.begin(), rm.end(), -7.0);
    kgrank::count_rows_filtered(scores.data(), rows, cols, anchor.data(), relation.data(), truth.data(), idx, th.data(),
                                g.data(), e.data(), n.data(), rm.data(), opt);
    for (size_t r = 0; r < rows; ++r) {
      if (g[r] != wg[r] || e[r] != we[r] || n[r] != wn[r] || rm[r] != wr[r]) {
        std::fprintf(stderr, "%s row %zu (a=%d r=%d t=%d): got (%g %g %g %g), want (%g %g %g %g)\n",
                     kgrank::simd_name(level), r, anchor[r], relation[r], truth[r], g[r], e[r], n[r], rm[r], wg[r],
                     we[r], wn[r], wr[r]);
        FUZZ_CHECK(false);
      }
      FUZZ_CHECK(std::memcmp(&th[r], &scores[r * cols + static_cast<size_t>(truth[r])], sizeof(T)) == 0);
    }
  }

  // A column slice of the same rows (as a chunked batch has them), thresholds given.
  const size_t start = p.ConsumeIntegralInRange<size_t>(0, cols - 1);
  const size_t width = p.ConsumeIntegralInRange<size_t>(1, cols - start);
  std::vector<T> slice(rows * width);
  std::vector<T> given(rows);
  for (size_t r = 0; r < rows; ++r) {
    std::copy(scores.begin() + static_cast<long>(r * cols + start),
              scores.begin() + static_cast<long>(r * cols + start + width),
              slice.begin() + static_cast<long>(r * width));
    given[r] = p.ConsumeBool() ? scores[r * cols + static_cast<size_t>(truth[r])] : kgrank_fuzz::score<T>(p);
  }
  for (size_t r = 0; r < rows; ++r) {
    const T* row = slice.data() + r * width;
    const T t = given[r];
    const kgrank::Counts all = kgrank_fuzz::reference(row, width, t);
    double g = static_cast<double>(all.greater), e = static_cast<double>(all.equal), removed = 0;
    bool found = false;
    auto it = ref.find({anchor[r], relation[r]});
    if (it != ref.end()) {
      for (int32_t b : it->second) {
        if (b == truth[r]) {
          found = true;
          continue;
        }
        if (static_cast<size_t>(b) < start || static_cast<size_t>(b) >= start + width) continue;
        const T v = row[static_cast<size_t>(b) - start];
        g -= v > t;
        e -= v == t;
        removed += !std::isnan(v);
      }
    }
    wg[r] = g;
    we[r] = e;
    wn[r] = static_cast<double>(all.nan);
    wr[r] = found ? removed : -1.0;
  }
  for (kgrank::SimdLevel level : kgrank_fuzz::levels()) {
    kgrank::CountOptions opt;
    opt.simd = level;
    opt.threads = threads;
    std::fill(rm.begin(), rm.end(), -7.0);
    kgrank::count_rows_filtered_range(slice.data(), rows, width, start, anchor.data(), relation.data(), truth.data(),
                                      idx, given.data(), g.data(), e.data(), n.data(), rm.data(), opt);
    for (size_t r = 0; r < rows; ++r) {
      if (g[r] != wg[r] || e[r] != we[r] || n[r] != wn[r] || rm[r] != wr[r]) {
        std::fprintf(stderr, "%s slice [%zu, %zu) row %zu (a=%d r=%d t=%d): got (%g %g %g %g), want (%g %g %g %g)\n",
                     kgrank::simd_name(level), start, start + width, r, anchor[r], relation[r], truth[r], g[r], e[r],
                     n[r], rm[r], wg[r], we[r], wn[r], wr[r]);
        FUZZ_CHECK(false);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  int32_t E, R;
  switch (p.ConsumeIntegralInRange<int>(0, 15)) {
    case 0: E = 65536, R = 65536; break;  // 16 + 16 bits: 32-bit entries, the last relation's bound is 2^32
    case 1: E = 65537, R = 65536; break;  // 17 + 16 bits: 64-bit entries
    case 2: E = 1, R = 1; break;
    case 3: E = 3, R = 2147483647; break;  // 2 + 31 bits: 64-bit entries, relation ids up to 2^31 - 1
    case 4: E = 262151, R = 5; break;      // rows longer than one 1 MiB piece: column-split counting, then adjust
    default: E = p.ConsumeIntegralInRange<int32_t>(1, 300); R = p.ConsumeIntegralInRange<int32_t>(1, 40);
  }
  const FilterIndex::Side side = p.ConsumeBool() ? FilterIndex::Side::Tail : FilterIndex::Side::Head;
  const size_t arrays = p.ConsumeIntegralInRange<size_t>(1, 3);
  std::vector<std::vector<int32_t>> triples(arrays);
  bool bad = false;
  for (auto& t : triples) {
    const size_t count = p.ConsumeIntegralInRange<size_t>(0, 120);
    for (size_t i = 0; i < count; ++i) {
      if (i > 0 && p.ConsumeIntegral<uint8_t>() < 40) {  // a duplicate of the previous triple
        t.push_back(t[t.size() - 3]), t.push_back(t[t.size() - 3]), t.push_back(t[t.size() - 3]);
        continue;
      }
      t.push_back(id(p, E, &bad));
      t.push_back(id(p, R, &bad));
      t.push_back(id(p, E, &bad));
    }
  }
  std::vector<kgrank::TripleSpan> spans;
  for (auto& t : triples) spans.push_back({t.data(), t.size() / 3});
  FilterIndex idx;
  const kgrank::Status status = FilterIndex::build(spans, E, R, side, p.ConsumeBool() ? 1 : 2, &idx);
  const bool ok = status.ok();
  const std::string& error = status.message;
  FUZZ_CHECK(ok == !bad);
  if (!ok) {
    FUZZ_CHECK(!error.empty());
    return 0;
  }
  std::map<Key, std::set<int32_t>> ref;
  for (auto& t : triples) {
    for (size_t i = 0; i + 2 < t.size(); i += 3) {
      if (side == FilterIndex::Side::Tail) ref[{t[i], t[i + 1]}].insert(t[i + 2]);
      else ref[{t[i + 2], t[i + 1]}].insert(t[i]);
    }
  }
  size_t answers = 0;
  std::vector<Key> keys;
  for (auto& kv : ref) answers += kv.second.size(), keys.push_back(kv.first);
  FUZZ_CHECK(idx.num_keys() == ref.size());
  FUZZ_CHECK(idx.num_answers() == answers);
  // 64-bit entries exactly when the packed (relation, answer) needs more than 32 bits.
  const auto bits = [](int64_t max_value) {
    unsigned b = 1;
    while ((int64_t{1} << b) <= max_value) ++b;
    return b;
  };
  FUZZ_CHECK(idx.wide() == (bits(E - 1) + bits(R - 1) > 32));

  // Lookups: every known key, then fuzzed keys (some out of range).
  std::vector<Key> probes = keys;
  const size_t extra = p.ConsumeIntegralInRange<size_t>(0, 40);
  for (size_t i = 0; i < extra; ++i) {
    bool unused = false;
    probes.push_back({id(p, E, &unused), id(p, R, &unused)});
  }
  for (const Key& k : probes) {
    auto it = ref.find(k);
    const std::vector<int32_t> want =
        it == ref.end() ? std::vector<int32_t>() : std::vector<int32_t>(it->second.begin(), it->second.end());
    std::vector<int32_t> got;
    idx.for_each_answer(k.first, k.second, [&](int32_t b) { got.push_back(b); });
    FUZZ_CHECK(got == want);
    FUZZ_CHECK(idx.count(k.first, k.second) == want.size());
    const uint32_t* first = nullptr;
    size_t count = 0;
    uint32_t mask = 0;
    if (idx.packed_answers(k.first, k.second, &first, &count, &mask)) {
      FUZZ_CHECK(count == want.size());
      for (size_t i = 0; i < count; ++i) FUZZ_CHECK(static_cast<int32_t>(first[i] & mask) == want[i]);
    } else {
      FUZZ_CHECK(idx.wide());
    }
    bool unused = false;
    const int32_t answers_to_try[3] = {want.empty() ? 0 : want[0], id(p, E, &unused),
                                       want.empty() ? -1 : want.back() + 1};
    for (int32_t b : answers_to_try) {
      FUZZ_CHECK(idx.contains(k.first, k.second, b) == (it != ref.end() && it->second.count(b) > 0));
    }
  }
  // Batched lookups over the probes (groups of 16 and a tail).
  {
    std::vector<int32_t> a(probes.size()), r(probes.size());
    for (size_t i = 0; i < probes.size(); ++i) a[i] = probes[i].first, r[i] = probes[i].second;
    std::vector<const uint32_t*> first(probes.size());
    std::vector<size_t> count(probes.size());
    uint32_t mask = 0;
    if (idx.packed_answers_many(a.data(), r.data(), probes.size(), first.data(), count.data(), &mask)) {
      for (size_t i = 0; i < probes.size(); ++i) {
        auto it = ref.find(probes[i]);
        const size_t want = it == ref.end() ? 0 : it->second.size();
        FUZZ_CHECK(count[i] == want);
        if (want) {
          auto s = it->second.begin();
          for (size_t j = 0; j < count[i]; ++j, ++s) FUZZ_CHECK(static_cast<int32_t>(first[i][j] & mask) == *s);
        }
      }
    } else {
      FUZZ_CHECK(idx.wide());
    }
  }
  // answer_counts over the probes as triples (anchor in the side's column, a fuzzed id in the other).
  {
    const bool tail = side == FilterIndex::Side::Tail;
    std::vector<int32_t> t;
    for (const Key& k : probes) {
      bool unused = false;
      const int32_t other = id(p, E, &unused);
      t.push_back(tail ? k.first : other);
      t.push_back(k.second);
      t.push_back(tail ? other : k.first);
    }
    const size_t rows = probes.size();
    size_t first_bad = t.size();
    for (size_t i = 0; i < t.size() && first_bad == t.size(); ++i) {
      const int32_t bound = i % 3 == 1 ? R : E;
      if (t[i] < 0 || t[i] >= bound) first_bad = i;
    }
    std::vector<double> out(rows, -7.0);
    const kgrank::Status st = idx.answer_counts(t.data(), rows, out.data());
    if (first_bad == t.size()) {
      FUZZ_CHECK(st.ok());
    } else {
      FUZZ_CHECK(st.code == kgrank::StatusCode::IdOutOfRange && st.index == first_bad);
    }
    for (size_t i = 0; i < rows; ++i) {
      if (3 * i + 2 < first_bad) {
        auto it = ref.find(probes[i]);
        FUZZ_CHECK(out[i] == static_cast<double>(it == ref.end() ? 0 : it->second.size()));
      } else {
        FUZZ_CHECK(out[i] == -7.0);
      }
    }
  }
  if (p.ConsumeBool()) {
    check_filtered<float>(p, idx, ref, keys);
  } else {
    check_filtered<double>(p, idx, ref, keys);
  }
  return 0;
}
