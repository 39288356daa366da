// Fuzz target: typed candidates (rank_triples_constrained, constrained.h) against the definition written out
// (native/tests/constrained_reference.h, shared with test_constrained.cpp).
//   problem     up to 40 entities and 6 relations (32-bit index entries), or, one input in 32, 2^16 + 1 entities
//               and 2^15 + 1 relations (64-bit entries; the rows then use a few relations, first, last, middle);
//               known triples on either side; per used relation an empty set, every entity (wide: a run of 256), or
//               fuzzed ids; up to 140 rows (several tasks of 64; wide: 4) of known or arbitrary triples, one input
//               in sixteen with an id out of range; scores from the fuzz palette (NaN of any payload, +-Inf, +-0,
//               subnormals, ties, raw bits);
//   broken      one input in four breaks its sets (offsets[0], an offset decreasing or past size, an id out of range,
//               repeated or descending), in a relation the rows may or may not use;
//   oracle      the status (code and index) and, when Ok, keys, thresholds bit for bit and the four rank columns
//               equal the reference's, filtered (the known triples' index) and unfiltered (an index of no triples,
//               and the full index, which must then be ignored), float32 and float64, every SIMD level, 1 and 2
//               threads (wide: filtered only, one thread).
#include <algorithm>

#include "constrained.h"
#include "constrained_reference.h"
#include "filter_index.h"
#include "fuzz_common.h"

namespace {

// Filtered (the full index), unfiltered with an index of no triples, and unfiltered with the full index; `none` null
// (a wide input): filtered only (the unfiltered count never reads the index), one thread (its rows fit one task).
template <typename T>
void check(const kgrank_test::ConstrainedProblem& p, const std::vector<T>& scores, const kgrank::FilterIndex& full,
           const kgrank::FilterIndex* none) {
  struct Mode {
    const kgrank::FilterIndex* index;
    bool filtered;
  };
  std::vector<Mode> modes = {{&full, true}};
  if (none) modes.insert(modes.end(), {{none, false}, {&full, false}});
  const std::vector<unsigned> thread_counts = none ? std::vector<unsigned>{1, 2} : std::vector<unsigned>{1};
  for (const Mode& m : modes) {
    const kgrank_test::ConstrainedExpected<T> want = kgrank_test::constrained_reference(p, scores, m.filtered);
    for (kgrank::SimdLevel level : kgrank_fuzz::levels()) {
      for (unsigned threads : thread_counts) {
        kgrank::CountOptions opt;
        opt.simd = level;
        opt.threads = threads;
        const kgrank_test::ConstrainedRun<T> got = kgrank_test::run_constrained(p, scores, *m.index, m.filtered, opt);
        const char* why = "";
        const int bad = kgrank_test::constrained_mismatches(want, got, &why);
        if (bad != 0) {
          std::fprintf(stderr, "mismatch (%s, %u threads, float%zu, filtered %d): %s; status %d at %zu (%s)\n",
                       kgrank::simd_name(level), threads, 8 * sizeof(T), m.filtered ? 1 : 0, why,
                       static_cast<int>(got.status.code), got.status.index, got.status.message.c_str());
        }
        FUZZ_CHECK(bad == 0);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  kgrank_test::ConstrainedProblem q;
  const uint8_t mode = p.ConsumeIntegral<uint8_t>();
  const uint8_t faults = p.ConsumeIntegral<uint8_t>();
  const bool wide = mode % 32 == 31;
  // Wide: 17 entity bits + 16 relation bits, the smallest sum of both that needs 64-bit entries (each call checks
  // every relation's offsets, each index build walks every entity): about 20 ms an input under the sanitizers, so
  // one input in 32.
  q.num_entities = wide ? (1 << 16) + 1 : p.ConsumeIntegralInRange<int32_t>(1, 40);
  q.num_relations = wide ? (1 << 15) + 1 : p.ConsumeIntegralInRange<int32_t>(1, 6);
  q.tail_side = p.ConsumeBool();
  const int32_t n = q.num_entities, R = q.num_relations;
  // The relations the triples use: all of them, or (wide) a few.
  std::vector<int32_t> active;
  if (wide) {
    active = {0, R - 1, R / 2, p.ConsumeIntegralInRange<int32_t>(0, R - 1)};
  } else {
    for (int32_t r = 0; r < R; ++r) active.push_back(r);
  }
  const auto entity = [&] {
    // Ends of the range often: the last entity is where a 64-bit entry's answer bits fill up.
    const uint8_t k = p.ConsumeIntegral<uint8_t>();
    if (k < 16) return k % 2 == 0 ? 0 : n - 1;
    return p.ConsumeIntegralInRange<int32_t>(0, n - 1);
  };
  const auto relation = [&] { return active[p.ConsumeIntegralInRange<size_t>(0, active.size() - 1)]; };

  const size_t triples = p.ConsumeIntegralInRange<size_t>(0, 48);
  const int32_t few = std::min<int32_t>(n, 1 + p.ConsumeIntegralInRange<int32_t>(0, 4));
  for (size_t i = 0; i < triples; ++i) {
    // Anchors among a few entities, so keys have several answers.
    const bool few_heads = p.ConsumeBool();
    const int32_t h = entity(), rel = relation(), t = entity();
    q.known.insert(q.known.end(), {few_heads ? h % few : h, rel, few_heads ? t : t % few});
  }

  // Sets: per active relation empty, every entity, or fuzzed ids (sorted, unique); the rest empty.
  std::vector<std::vector<uint32_t>> sets(static_cast<size_t>(R));
  for (int32_t r : active) {
    std::vector<uint32_t>& s = sets[static_cast<size_t>(r)];
    s.clear();
    switch (p.ConsumeIntegralInRange<int>(0, 3)) {
      case 0: break;
      case 1: {  // every entity (wide: a run of up to 256 of them, ending at the last one or not)
        const int32_t first = wide ? std::max(0, entity() - p.ConsumeIntegralInRange<int32_t>(0, 255)) : 0;
        const int32_t last = wide ? std::min(n, first + 256) : n;
        for (int32_t e = first; e < last; ++e) s.push_back(static_cast<uint32_t>(e));
        break;
      }
      default: {
        const size_t k = p.ConsumeIntegralInRange<size_t>(0, wide ? 64 : static_cast<size_t>(n));
        for (size_t i = 0; i < k; ++i) s.push_back(static_cast<uint32_t>(entity()));
        std::sort(s.begin(), s.end());
        s.erase(std::unique(s.begin(), s.end()), s.end());
      }
    }
  }
  q.offsets.assign(static_cast<size_t>(R) + 1, 0);
  for (size_t r = 0; r < static_cast<size_t>(R); ++r) {
    q.ids.insert(q.ids.end(), sets[r].begin(), sets[r].end());
    q.offsets[r + 1] = static_cast<uint32_t>(q.ids.size());
  }
  q.size = q.ids.size();

  // Rows: known triples (when there are) or arbitrary ones, now and then an id out of range.
  const size_t rows = p.ConsumeIntegralInRange<size_t>(0, wide ? 4 : 140);
  for (size_t r = 0; r < rows; ++r) {
    const uint8_t k = p.ConsumeIntegral<uint8_t>();
    if (triples > 0 && k % 4 != 0) {
      const size_t i = (k / 4) % triples;
      q.triples.insert(q.triples.end(), q.known.begin() + static_cast<long>(3 * i),
                       q.known.begin() + static_cast<long>(3 * i + 3));
    } else {
      q.triples.insert(q.triples.end(), {entity(), relation(), entity()});
    }
  }
  if (rows > 0 && faults % 16 == 1) {
    const int32_t bad[] = {-1, n, R, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    q.triples[p.ConsumeIntegralInRange<size_t>(0, 3 * rows - 1)] = bad[p.ConsumeIntegralInRange<size_t>(0, 4)];
  }

  // Broken sets, one input in four.
  if ((faults >> 4) % 4 == 2) {
    const size_t r = static_cast<size_t>(relation());
    const uint32_t lo = q.offsets[r], hi = q.offsets[r + 1];
    switch (p.ConsumeIntegralInRange<int>(0, 6)) {
      case 0: q.offsets[0] = p.ConsumeIntegralInRange<uint32_t>(1, 3); break;
      case 1:  // relation r's end before its start
        q.offsets[r + 1] = lo > 0 ? lo - 1 : 0;
        q.offsets[r] = std::max<uint32_t>(lo, 1);
        break;
      case 2: q.offsets[r + 1] = static_cast<uint32_t>(q.size) + p.ConsumeIntegralInRange<uint32_t>(1, 3); break;
      case 3: q.size = q.size > 0 ? q.size - 1 : 0; break;
      case 4:
        if (hi > lo) {
          q.ids[p.ConsumeIntegralInRange<uint32_t>(lo, hi - 1)] =
              std::max<uint32_t>(static_cast<uint32_t>(n), p.ConsumeIntegral<uint8_t>() * 0x01010101u);
        }
        break;
      case 5:
        if (hi - lo >= 2) {
          const uint32_t k = p.ConsumeIntegralInRange<uint32_t>(lo, hi - 2);
          q.ids[k + 1] = q.ids[k];
        }
        break;
      default:
        if (hi - lo >= 2) {
          const uint32_t k = p.ConsumeIntegralInRange<uint32_t>(lo, hi - 2);
          std::swap(q.ids[k], q.ids[k + 1]);
        }
    }
  }

  // Scores: every entry from the palette (wide: zeros, the allowed candidates and now and then the true answers from
  // the palette).
  const size_t cols = static_cast<size_t>(n);
  std::vector<float> sf(rows * cols);
  if (wide) {
    for (size_t r = 0; r < rows; ++r) {
      const int32_t rel = q.triples[3 * r + 1];
      if (rel < 0 || rel >= R) continue;
      for (const uint32_t e : sets[static_cast<size_t>(rel)]) sf[r * cols + e] = kgrank_fuzz::score<float>(p);
      for (int c : {0, 2}) {
        const int32_t e = q.triples[3 * r + static_cast<size_t>(c)];
        if (e >= 0 && e < n && p.ConsumeBool()) sf[r * cols + static_cast<size_t>(e)] = kgrank_fuzz::score<float>(p);
      }
    }
  } else {
    for (float& v : sf) v = kgrank_fuzz::score<float>(p);
  }
  std::vector<double> sd(sf.begin(), sf.end());

  kgrank::FilterIndex full, none;
  FUZZ_CHECK(kgrank_test::build_index(q, true, &full).ok());
  FUZZ_CHECK(full.wide() == wide);
  if (!wide) FUZZ_CHECK(kgrank_test::build_index(q, false, &none).ok());
  check(q, sf, full, wide ? nullptr : &none);
  check(q, sd, full, wide ? nullptr : &none);
  return 0;
}
