// The int8 screen (native/core/screen.h): for a fuzzed DistMult, ComplEx, TransE-L2 or RotatE-L2 model (both layouts,
// both sides, with or without a filter) drawn by screen_cases.h (exact ties, one-ulp near-ties, huge dynamic range
// within a row, a single huge coordinate, all-equal and zero rows and queries, NaN, infinities, subnormals, values at
// the screen's range limits), with raw float bits written over a few elements, rank_embeddings with the screen on (Int8
// and Auto) must give every count and true score bit for bit as with the screen off (the oracle), at every SIMD level
// the CPU has and 1 and 2 threads; its stats must account for every pair. Top-k lists over a fuzzed range and floors
// likewise.
#include <cmath>
#include <cstring>
#include <vector>

#include "fuzz_common.h"
#include "interaction.h"
#include "screen_cases.h"  // native/tests: the case generator shared with test_screen

using namespace kgrank;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  const size_t n = p.ConsumeIntegralInRange<size_t>(1, 700);
  const size_t w = p.ConsumeIntegralInRange<size_t>(1, 40);
  const size_t rows = p.ConsumeIntegralInRange<size_t>(1, 40);
  const bool complex = p.ConsumeBool();
  const bool distance = p.ConsumeBool();
  const int special = p.ConsumeIntegralInRange<int>(-1, 8);
  const kgrank_screen::Next next = [&] { return p.ConsumeIntegral<uint32_t>(); };
  kgrank_screen::Case c = kgrank_screen::make_case(next, n, w, rows, complex, special, distance);
  // Raw bits over a few elements (entity or relation rows): any value, near-ties the generator does not make.
  const size_t raw = p.ConsumeIntegralInRange<size_t>(0, 8);
  for (size_t i = 0; i < raw; ++i) {
    const uint32_t bits = p.ConsumeIntegral<uint32_t>();
    float v;
    std::memcpy(&v, &bits, 4);
    if (p.ConsumeBool()) {
      c.ent[p.ConsumeIntegralInRange<size_t>(0, c.ent.size() - 1)] = v;
    } else {
      c.rel[p.ConsumeIntegralInRange<size_t>(0, c.rel.size() - 1)] = v;
    }
  }
  const auto base = kgrank_screen::rank(c, ScreenMode::Off, SimdLevel::Scalar, 1);
  // The table quantised once (screen_prepare), as an evaluation passes it to every call, beside the per-call one.
  const kgrank::EmbeddingModel<float> m{c.interaction, c.layout, c.ent.data(), c.rel.data(), c.n,
                                        c.nr,          c.width,  c.width,      0.0,          nullptr};
  for (SimdLevel level : kgrank_fuzz::levels()) {
    kgrank::ScreenTable table;
    const bool prepared = kgrank::screen_prepare(m, level, 2, &table).ok();
    FUZZ_CHECK(prepared);
    for (unsigned threads : {1u, 2u}) {
      const auto off = kgrank_screen::rank(c, ScreenMode::Off, level, threads);
      FUZZ_CHECK(kgrank_screen::same(off, base));
      for (ScreenMode mode : {ScreenMode::Int8, ScreenMode::Auto}) {
        FUZZ_CHECK(kgrank_screen::same(kgrank_screen::rank(c, mode, level, threads, &table), off));
        const auto on = kgrank_screen::rank(c, mode, level, threads);
        FUZZ_CHECK(kgrank_screen::same(on, off));
        if (mode == ScreenMode::Int8 && on.status.ok()) {
          FUZZ_CHECK(on.stats.used);
          FUZZ_CHECK(on.stats.pairs == static_cast<uint64_t>(c.rows) * c.n);
          FUZZ_CHECK(on.stats.rescored <= on.stats.pairs);
        }
      }
    }
  }
  // Top-k lists over a range (perhaps starting inside a panel), with a floor per row (none, -inf, or a fuzzed score):
  // ids and scores bit for bit as with the screen off.
  const size_t k = p.ConsumeIntegralInRange<size_t>(1, 12);
  const size_t begin = p.ConsumeIntegralInRange<size_t>(0, c.n - 1);
  const size_t end = p.ConsumeIntegralInRange<size_t>(begin + 1, c.n);
  std::vector<double> floor;
  if (p.ConsumeBool()) {
    for (size_t i = 0; i < c.rows; ++i) {
      const int kind = p.ConsumeIntegralInRange<int>(0, 2);
      floor.push_back(kind == 0   ? std::nan("")
                      : kind == 1 ? -HUGE_VAL
                                  : static_cast<double>(p.ConsumeFloatingPoint<float>()));
    }
  }
  const auto top_base = kgrank_screen::top_k(c, ScreenMode::Off, SimdLevel::Scalar, 1, k, begin, end, floor);
  for (SimdLevel level : kgrank_fuzz::levels()) {
    kgrank::ScreenTable table;
    FUZZ_CHECK(kgrank::screen_prepare(m, level, 2, &table).ok());
    for (unsigned threads : {1u, 2u}) {
      FUZZ_CHECK(kgrank_screen::same(kgrank_screen::top_k(c, ScreenMode::Off, level, threads, k, begin, end, floor),
                                     top_base));
      for (ScreenMode mode : {ScreenMode::Int8, ScreenMode::Auto}) {
        const auto on = kgrank_screen::top_k(c, mode, level, threads, k, begin, end, floor);
        FUZZ_CHECK(kgrank_screen::same(on, top_base));
        FUZZ_CHECK(on.stats.rescored <= on.stats.pairs);
        FUZZ_CHECK(
            kgrank_screen::same(kgrank_screen::top_k(c, mode, level, threads, k, begin, end, floor, &table), top_base));
      }
    }
  }
  return 0;
}
