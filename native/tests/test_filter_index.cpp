// FilterIndex against a std::set reference, and filtered counting against "mask the known answers with NaN, then
// count": both sides, duplicates, several triple arrays, every SIMD level and both thread splits.
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "check.h"
#include "count.h"
#include "filter_index.h"

using kgrank::FilterIndex;
using kgrank::SimdLevel;

int main() {
  std::mt19937_64 rng(99);
  const int32_t n = 50, R = 4;
  std::uniform_int_distribution<int32_t> ent(0, n - 1), rel(0, R - 1);
  std::vector<int32_t> a(3 * 400), b(3 * 150);
  for (auto* v : {&a, &b}) {
    for (size_t i = 0; i < v->size(); i += 3) {
      (*v)[i] = ent(rng) % 12;  // few heads: many answers per key
      (*v)[i + 1] = rel(rng);
      (*v)[i + 2] = ent(rng);
    }
  }
  // Duplicates across arrays.
  for (int k = 0; k < 3; ++k)
    b[3 * static_cast<size_t>(k) + 0] = a[0], b[3 * static_cast<size_t>(k) + 1] = a[1],
                                   b[3 * static_cast<size_t>(k) + 2] = a[2];
  std::vector<kgrank::TripleSpan> spans = {{a.data(), a.size() / 3}, {b.data(), b.size() / 3}};

  for (FilterIndex::Side side : {FilterIndex::Side::Tail, FilterIndex::Side::Head}) {
    FilterIndex idx;
    CHECK(FilterIndex::build(spans, n, R, side, 2, &idx).ok());
    std::map<std::pair<int32_t, int32_t>, std::set<int32_t>> ref;
    for (const auto& s : spans) {
      for (size_t i = 0; i < s.count; ++i) {
        const int32_t* t = s.data + 3 * i;
        if (side == FilterIndex::Side::Tail) ref[{t[0], t[1]}].insert(t[2]);
        else ref[{t[2], t[1]}].insert(t[0]);
      }
    }
    size_t total = 0;
    for (int32_t anchor = 0; anchor < n; ++anchor) {
      for (int32_t r = 0; r < R; ++r) {
        std::vector<int32_t> got;
        idx.for_each_answer(anchor, r, [&](int32_t v) { got.push_back(v); });
        auto it = ref.find({anchor, r});
        const std::vector<int32_t> want =
            it == ref.end() ? std::vector<int32_t>() : std::vector<int32_t>(it->second.begin(), it->second.end());
        CHECK(got == want);
        CHECK_EQ(idx.count(anchor, r), want.size());
        for (int32_t e = 0; e < n; ++e)
          CHECK_EQ(idx.contains(anchor, r, e), it != ref.end() && it->second.count(e) > 0);
        total += got.size();
      }
    }
    CHECK_EQ(idx.num_answers(), total);
    CHECK_EQ(idx.num_keys(), ref.size());

    // answer_counts over every (anchor, relation) pair as triples (known and unknown keys), the third id a random one.
    {
      std::vector<int32_t> keys;
      for (int32_t anchor = 0; anchor < n; ++anchor) {
        for (int32_t r = 0; r < R; ++r) {
          const int32_t other = ent(rng);
          const bool tail = side == FilterIndex::Side::Tail;
          keys.push_back(tail ? anchor : other);
          keys.push_back(r);
          keys.push_back(tail ? other : anchor);
        }
      }
      const size_t rows = keys.size() / 3;
      std::vector<double> counts(rows, -1.0);
      CHECK(idx.answer_counts(keys.data(), rows, counts.data()).ok());
      for (size_t i = 0; i < rows; ++i) {
        const int32_t anchor = keys[3 * i + (side == FilterIndex::Side::Tail ? 0 : 2)];
        auto it = ref.find({anchor, keys[3 * i + 1]});
        CHECK_EQ(counts[i], static_cast<double>(it == ref.end() ? 0 : it->second.size()));
      }
      // An id out of range in any column: IdOutOfRange at its flat index, the rows before it written.
      for (size_t col = 0; col < 3; ++col) {
        for (int32_t bad : {-1, col == 1 ? R : n}) {
          std::vector<int32_t> t = {0, 0, 0, 0, 0, 0};
          t[3 + col] = bad;
          std::vector<double> out(2, -1.0);
          const kgrank::Status st = idx.answer_counts(t.data(), 2, out.data());
          CHECK(st.code == kgrank::StatusCode::IdOutOfRange);
          CHECK_EQ(st.index, 3 + col);
          CHECK_EQ(out[0], static_cast<double>(idx.count(0, 0)));
          CHECK_EQ(out[1], -1.0);
        }
      }
    }

    // Filtered counting == masking the other known answers with NaN and counting.
    const size_t rows = 40;
    std::vector<float> scores(rows * static_cast<size_t>(n));
    std::uniform_int_distribution<int> small(-3, 3);
    for (auto& v : scores) v = static_cast<float>(small(rng));
    for (size_t i = 0; i < scores.size(); i += 17) scores[i] = std::numeric_limits<float>::quiet_NaN();
    std::vector<int32_t> anchor(rows), relation(rows), truth(rows);
    for (size_t r = 0; r < rows; ++r) {
      const int32_t* t = a.data() + 3 * r;  // evaluation triples drawn from the filter set
      anchor[r] = side == FilterIndex::Side::Tail ? t[0] : t[2];
      relation[r] = t[1];
      truth[r] = side == FilterIndex::Side::Tail ? t[2] : t[0];
      float& own = scores[r * static_cast<size_t>(n) + static_cast<size_t>(truth[r])];
      if (std::isnan(own)) own = 0.5f;
    }
    for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON}) {
      if (!kgrank::simd_supported(level)) continue;
      for (unsigned threads : {1u, 2u}) {
        kgrank::CountOptions opt;
        opt.simd = level;
        opt.threads = threads;
        std::vector<float> th(rows);
        std::vector<double> g(rows), e(rows), u(rows), removed(rows);
        kgrank::count_rows_filtered(scores.data(), rows, static_cast<size_t>(n), anchor.data(), relation.data(),
                                    truth.data(), idx, th.data(), g.data(), e.data(), u.data(), removed.data(), opt);
        for (size_t r = 0; r < rows; ++r) {
          std::vector<float> row(scores.begin() + static_cast<long>(r * static_cast<size_t>(n)),
                                 scores.begin() + static_cast<long>((r + 1) * static_cast<size_t>(n)));
          const float t = row[static_cast<size_t>(truth[r])];
          for (int32_t known : ref[{anchor[r], relation[r]}]) {
            if (known != truth[r]) row[static_cast<size_t>(known)] = std::numeric_limits<float>::quiet_NaN();
          }
          double wg = 0, we = 0, candidates = 0;
          for (float v : row) {
            wg += v > t;
            we += v == t;
            candidates += !std::isnan(v);
          }
          CHECK_EQ(th[r], t);
          CHECK_EQ(g[r], wg);
          CHECK_EQ(e[r], we);
          CHECK_EQ(static_cast<double>(n) - u[r] - removed[r], candidates);
        }
      }
    }
  }
  // Packed entries that fill exactly 32 bits (2^22 entities, 2^10 relations): the last relation's upper bound is
  // 2^32 and must not wrap around.
  {
    const int32_t big_n = 1 << 22, big_r = 1 << 10;
    std::vector<int32_t> edge = {5, big_r - 1, big_n - 1, 5, big_r - 1, 7, 5, 0, 3, big_n - 1, big_r - 1, 5};
    FilterIndex tails;
    CHECK(FilterIndex::build({{edge.data(), 4}}, big_n, big_r, FilterIndex::Side::Tail, 2, &tails).ok());
    CHECK(!tails.wide());
    std::vector<int32_t> got;
    tails.for_each_answer(5, big_r - 1, [&](int32_t v) { got.push_back(v); });
    CHECK(got == std::vector<int32_t>({7, big_n - 1}));
    CHECK(tails.contains(5, big_r - 1, big_n - 1));
    CHECK(tails.contains(big_n - 1, big_r - 1, 5));
    CHECK_EQ(tails.count(5, 0), size_t{1});
    // One more relation bit forces 64-bit entries; answers stay the same.
    FilterIndex wide;
    CHECK(FilterIndex::build({{edge.data(), 4}}, big_n, big_r + 1, FilterIndex::Side::Tail, 2, &wide).ok());
    CHECK(wide.wide());
    got.clear();
    wide.for_each_answer(5, big_r - 1, [&](int32_t v) { got.push_back(v); });
    CHECK(got == std::vector<int32_t>({7, big_n - 1}));
    // answer_counts of the edge triples on both layouts: keys (5, R-1), (5, R-1), (5, 0), (N-1, R-1).
    for (const FilterIndex* index : {&tails, &wide}) {
      std::vector<double> counts(4, -1.0);
      CHECK(index->answer_counts(edge.data(), 4, counts.data()).ok());
      CHECK(counts == std::vector<double>({2, 2, 1, 1}));
    }
  }
  // Out-of-range ids are refused with a message.
  std::vector<int32_t> bad = {0, 0, 50};
  FilterIndex idx;
  const kgrank::Status status = FilterIndex::build({{bad.data(), 1}}, n, R, FilterIndex::Side::Tail, 1, &idx);
  CHECK(status.code == kgrank::StatusCode::InvalidInput);
  CHECK(status.message.find("row 0") != std::string::npos);

  // Triples changed by another thread during the build (a SharedArrayBuffer in Node): the build reads them in two
  // passes (count per anchor, then fill), so every id is checked again where it is used. Each build either fails
  // with InvalidInput or gives an index whose answers are all valid ids. Before, a changed anchor overflowed its
  // bucket (under ASan: heap-buffer-overflow in fill(); plain builds corrupted the heap).
  {
    const int32_t ents = 64;
    std::vector<std::atomic<int32_t>> shared(3 * 4096);
    for (size_t i = 0; i < shared.size(); i += 3) {
      shared[i].store(static_cast<int32_t>(i % ents));
      shared[i + 1].store(static_cast<int32_t>(i % 3));
      shared[i + 2].store(static_cast<int32_t>((i * 7) % ents));
    }
    // std::atomic<int32_t> is lock-free and laid out as int32_t here: the core reads the array as plain ints.
    static_assert(sizeof(std::atomic<int32_t>) == sizeof(int32_t), "atomic int32 must be 4 bytes");
    const auto* data = reinterpret_cast<const int32_t*>(shared.data());
    std::atomic<bool> stop{false};
    std::thread writer([&] {
      std::mt19937 w(7);
      const int32_t values[] = {ents - 1, 0, ents, -1, 1 << 30};
      while (!stop.load(std::memory_order_relaxed)) {
        const size_t i = 3 * (w() % 4096);
        const int32_t keep = shared[i].load(std::memory_order_relaxed);
        shared[i].store(values[w() % 5], std::memory_order_relaxed);
        shared[i].store(w() % 2 ? keep : static_cast<int32_t>(w() % ents), std::memory_order_relaxed);
      }
    });
    int built = 0, refused = 0;
    for (int round = 0; round < 400; ++round) {
      FilterIndex changing;
      const kgrank::Status st = FilterIndex::build({{data, 4096}}, ents, 3, FilterIndex::Side::Tail, 2, &changing);
      if (!st.ok()) {
        CHECK(st.code == kgrank::StatusCode::InvalidInput);
        ++refused;
        continue;
      }
      ++built;
      for (int32_t a = 0; a < ents; ++a) {
        for (int32_t r = 0; r < 3; ++r) changing.for_each_answer(a, r, [&](int32_t b) { CHECK(b >= 0 && b < ents); });
      }
    }
    stop.store(true);
    writer.join();
    CHECK_EQ(built + refused, 400);
  }
  TEST_MAIN_END();
}
