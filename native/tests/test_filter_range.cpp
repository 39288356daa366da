// The filtered count over a column slice (count_rows_filtered_range, the chunked batch's kernel) against a plain
// loop: for random tilings of the entity axis, each slice's counts equal "count the slice's columns, then take out
// every other known answer inside the slice", removed = -1 exactly when the task's own triple is unknown, and the
// sums over a tiling equal count_rows_filtered's counts of the whole row. Both sides, float32 and float64, 32- and
// 64-bit index entries, rows split into column pieces (rows longer than one 1 MiB piece), every SIMD level, 1 and 2
// threads.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "check.h"
#include "count.h"
#include "filter_index.h"

using kgrank::FilterIndex;
using kgrank::SimdLevel;
using Key = std::pair<int32_t, int32_t>;

namespace {

// Random cut points of [0, n), in random order: slices may arrive in any order. The first tiling of each run cuts
// only near the start, so one slice is nearly the whole row (long enough to be counted in column pieces).
std::vector<std::pair<size_t, size_t>> tiling(std::mt19937_64& rng, size_t n, bool first) {
  std::set<size_t> cuts = {0, n};
  if (first) {
    cuts.insert(1 + rng() % 5);
  } else {
    const size_t k = 1 + rng() % 6;
    for (size_t i = 0; i < k; ++i) cuts.insert(rng() % n);
  }
  std::vector<std::pair<size_t, size_t>> out;
  for (auto it = cuts.begin(); std::next(it) != cuts.end(); ++it) out.push_back({*it, *std::next(it)});
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}

template <typename T>
void check_index(std::mt19937_64& rng, const FilterIndex& idx, const std::map<Key, std::set<int32_t>>& ref,
                 const std::vector<Key>& keys, size_t rows, int tilings) {
  const size_t n = static_cast<size_t>(idx.num_entities());
  std::uniform_int_distribution<int> small(-3, 3);
  std::vector<T> scores(rows * n);
  for (auto& v : scores) v = static_cast<T>(small(rng)) / 2;
  for (size_t i = 0; i < scores.size(); i += 13) scores[i] = std::numeric_limits<T>::quiet_NaN();
  std::vector<int32_t> anchor(rows), relation(rows), truth(rows);
  std::vector<T> th(rows);
  for (size_t r = 0; r < rows; ++r) {
    const Key& k = keys[rng() % keys.size()];
    anchor[r] = k.first;
    relation[r] = k.second;
    const std::set<int32_t>& s = ref.at(k);
    auto it = s.begin();
    std::advance(it, static_cast<long>(rng() % s.size()));
    // Every seventh task's own triple is unknown (removed must be -1 in every slice).
    truth[r] = r % 7 == 3 ? static_cast<int32_t>(rng() % n) : *it;
    // The true score is given: the own column's score, or (as a chunked batch may have it) any other value.
    const T own = scores[r * n + static_cast<size_t>(truth[r])];
    th[r] = r % 5 == 1 || std::isnan(own) ? static_cast<T>(small(rng)) / 2 + static_cast<T>(0.25) : own;
  }
  const auto known = [&](size_t r) {
    auto it = ref.find({anchor[r], relation[r]});
    return it == ref.end() ? std::set<int32_t>() : it->second;
  };
  for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON}) {
    if (!kgrank::simd_supported(level)) continue;
    for (unsigned threads : {1u, 2u}) {
      kgrank::CountOptions opt;
      opt.simd = level;
      opt.threads = threads;
      for (int round = 0; round < tilings; ++round) {
        std::vector<double> sg(rows, 0), se(rows, 0), sn(rows, 0), sr(rows, 0);
        for (const auto& [a, b] : tiling(rng, n, round == 0)) {
          const size_t w = b - a;
          std::vector<T> slice(rows * w);
          for (size_t r = 0; r < rows; ++r) {
            std::copy(scores.begin() + static_cast<long>(r * n + a), scores.begin() + static_cast<long>(r * n + b),
                      slice.begin() + static_cast<long>(r * w));
          }
          std::vector<double> g(rows), e(rows), u(rows), removed(rows, -7);
          kgrank::count_rows_filtered_range(slice.data(), rows, w, a, anchor.data(), relation.data(), truth.data(), idx,
                                            th.data(), g.data(), e.data(), u.data(), removed.data(), opt);
          for (size_t r = 0; r < rows; ++r) {
            // The plain loop: every column of the slice, minus the other known answers inside it.
            const std::set<int32_t> answers = known(r);
            const T t = th[r];
            double wg = 0, we = 0, wn = 0, wr = 0;
            for (size_t j = a; j < b; ++j) {
              const T v = scores[r * n + j];
              const bool other = answers.count(static_cast<int32_t>(j)) > 0 && static_cast<int32_t>(j) != truth[r];
              if (std::isnan(v)) {
                wn += 1;
              } else if (other) {
                wr += 1;
              } else {
                wg += v > t;
                we += v == t;
              }
            }
            if (answers.count(truth[r]) == 0) wr = -1;
            CHECK_EQ(g[r], wg);
            CHECK_EQ(e[r], we);
            CHECK_EQ(u[r], wn);
            CHECK_EQ(removed[r], wr);
            sg[r] += g[r], se[r] += e[r], sn[r] += u[r], sr[r] += removed[r];
          }
        }
        // Summed over the tiling: the whole row's filtered count against the same thresholds (the true column's
        // own score; rows whose given threshold differs are skipped here, checked above).
        std::vector<T> whole_th(rows);
        std::vector<double> g(rows), e(rows), u(rows), removed(rows);
        kgrank::count_rows_filtered(scores.data(), rows, n, anchor.data(), relation.data(), truth.data(), idx,
                                    whole_th.data(), g.data(), e.data(), u.data(), removed.data(), opt);
        for (size_t r = 0; r < rows; ++r) {
          if (!(whole_th[r] == th[r]) || removed[r] < 0) continue;
          CHECK_EQ(sg[r], g[r]);
          CHECK_EQ(se[r], e[r]);
          CHECK_EQ(sn[r], u[r]);
          CHECK_EQ(sr[r], removed[r]);
        }
      }
    }
  }
}

void run(std::mt19937_64& rng, int32_t n, int32_t num_relations, size_t triples, int32_t anchors, size_t rows,
         int tilings) {
  std::uniform_int_distribution<int32_t> ent(0, n - 1), rel(0, num_relations - 1);
  std::vector<int32_t> t(3 * triples);
  for (size_t i = 0; i < t.size(); i += 3) {
    // One end among few entities, the other anywhere: keys with many answers spread over every slice, on both sides.
    const bool few_heads = (i / 3) % 2 == 0;
    t[i] = few_heads ? ent(rng) % anchors : ent(rng);
    t[i + 1] = rel(rng) % 4;
    t[i + 2] = few_heads ? ent(rng) : ent(rng) % anchors;
  }
  for (FilterIndex::Side side : {FilterIndex::Side::Tail, FilterIndex::Side::Head}) {
    FilterIndex idx;
    CHECK(FilterIndex::build({{t.data(), triples}}, n, num_relations, side, 2, &idx).ok());
    std::map<Key, std::set<int32_t>> ref;
    for (size_t i = 0; i < t.size(); i += 3) {
      if (side == FilterIndex::Side::Tail) ref[{t[i], t[i + 1]}].insert(t[i + 2]);
      else ref[{t[i + 2], t[i + 1]}].insert(t[i]);
    }
    std::vector<Key> keys;
    for (const auto& kv : ref) keys.push_back(kv.first);
    // for_each_answer_in: exactly the known answers inside [lo, hi).
    for (const Key& k : keys) {
      for (int round = 0; round < 4; ++round) {
        int32_t lo = static_cast<int32_t>(rng() % static_cast<uint64_t>(n));
        int32_t hi = static_cast<int32_t>(rng() % static_cast<uint64_t>(n + 1));
        if (lo > hi) std::swap(lo, hi);
        std::vector<int32_t> got, want;
        idx.for_each_answer_in(k.first, k.second, lo, hi, [&](int32_t b) { got.push_back(b); });
        for (int32_t b : ref[k])
          if (b >= lo && b < hi) want.push_back(b);
        CHECK(got == want);
      }
    }
    check_index<float>(rng, idx, ref, keys, rows, tilings);
    check_index<double>(rng, idx, ref, keys, rows, tilings);
  }
}

}  // namespace

int main() {
  std::mt19937_64 rng(2024);
  run(rng, 60, 4, 500, 6, 30, 4);           // 32-bit entries
  run(rng, 60, 2147483647, 500, 6, 30, 4);  // 6 + 31 bits: 64-bit entries
  run(rng, 300007, 4, 4000, 8, 3, 2);       // slices longer than one 1 MiB piece: column-split counting
  TEST_MAIN_END();
}
