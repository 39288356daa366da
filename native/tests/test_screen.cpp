// The int8 screen (screen.h): rank_embeddings with the screen (Int8, and Auto) gives every count (greater, equal,
// NaN, removed) and true score bit for bit as with the screen off, at every SIMD level the CPU has and 1 and 2
// threads, for DistMult and ComplEx (both layouts, both sides, with and without a filter), on inputs built to break
// its bound (screen_cases.h: exact ties, one-ulp near-ties, huge dynamic range, a single huge coordinate, all-equal
// and zero rows, NaN, infinities, subnormals) and on random and structured embeddings. It also checks that the
// screen decides most pairs of a structured set itself (so a screen that rescored everything would fail), that rows
// it must never screen (NaN) are all rescored, and that it stays off where it does not apply.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "check.h"
#include "interaction.h"
#include "screen_cases.h"

using namespace kgrank;
using kgrank_screen::Case;

namespace {

const char* name_of(Interaction i) {
  switch (i) {
    case Interaction::DistMult: return "DistMult";
    case Interaction::ComplEx: return "ComplEx";
    case Interaction::TransEL2: return "TransE-L2";
    case Interaction::RotatEL2: return "RotatE-L2";
    default: return "other";
  }
}

std::vector<SimdLevel> levels() {
  std::vector<SimdLevel> v;
  for (SimdLevel l : {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON}) {
    if (simd_supported(l)) v.push_back(l);
  }
  return v;
}

// Every level and 1, 2 threads: Int8 and Auto equal Off at that level (and Off equals Off at the scalar level).
size_t check_case(const Case& c, const char* what) {
  size_t screened = 0;
  const auto base = kgrank_screen::rank(c, ScreenMode::Off, SimdLevel::Scalar, 1);
  for (SimdLevel level : levels()) {
    for (unsigned threads : {1u, 2u}) {
      const auto off = kgrank_screen::rank(c, ScreenMode::Off, level, threads);
      CHECK(kgrank_screen::same(off, base));
      CHECK(!off.stats.used);
      for (ScreenMode mode : {ScreenMode::Int8, ScreenMode::Auto}) {
        const auto on = kgrank_screen::rank(c, mode, level, threads);
        const bool ok = kgrank_screen::same(on, off);
        CHECK(ok);
        if (!ok) {
          std::fprintf(stderr, "  %s: level %s, %u threads, mode %d, n %zu, width %zu, rows %zu\n", what,
                       simd_name(level), threads, static_cast<int>(mode), c.n, c.width, c.rows);
          for (size_t i = 0; i < c.rows && on.status.ok(); ++i) {
            std::fprintf(stderr, "    row %zu: greater %g vs %g, equal %g vs %g, nan %g vs %g\n", i, on.counts[i],
                         off.counts[i], on.counts[c.rows + i], off.counts[c.rows + i], on.counts[2 * c.rows + i],
                         off.counts[2 * c.rows + i]);
          }
        }
        if (mode == ScreenMode::Int8 && on.status.ok()) {
          CHECK(on.stats.used);
          CHECK(on.stats.rescored <= on.stats.pairs);
          CHECK_EQ(on.stats.pairs, static_cast<uint64_t>(c.rows) * c.n);
          screened += on.stats.pairs - on.stats.rescored;
        }
      }
    }
  }
  return screened;
}

void adversarial(std::mt19937& rng) {
  const kgrank_screen::Next next = [&] { return static_cast<uint32_t>(rng()); };
  const size_t ns[] = {1, 17, 300, 1100};
  const size_t ws[] = {1, 2, 3, 8, 33, 64};
  int cases = 0;
  for (int rep = 0; rep < 3; ++rep) {
    for (size_t n : ns) {
      for (size_t w : ws) {
        for (bool complex : {false, true}) {
          for (bool distance : {false, true}) {
            const int special = static_cast<int>(rng() % 9);
            const size_t rows = 1 + rng() % 40;
            check_case(kgrank_screen::make_case(next, n, w, rows, complex, special, distance), "adversarial");
            ++cases;
          }
        }
      }
    }
  }
  std::printf("adversarial: %d cases\n", cases);
}

// Rows with the true answer planted: the screen must decide most pairs itself, and still agree everywhere.
void structured(std::mt19937& rng) {
  const kgrank_screen::Next next = [&] { return static_cast<uint32_t>(rng()); };
  for (bool distance : {false, true}) {
    for (bool complex : {false, true}) {
      for (size_t w : {size_t{16}, size_t{100}}) {
        const Case c = kgrank_screen::make_structured(next, 1500, w, 48, complex, distance);
        check_case(c, "structured");
        for (SimdLevel level : levels()) {
          const auto on = kgrank_screen::rank(c, ScreenMode::Int8, level, 2);
          CHECK(on.stats.used);
          // Uniform random rows against a planted answer: most pairs lie far below it.
          CHECK(on.stats.rescored * 4 < on.stats.pairs);
          std::printf("structured %s d=%zu %s (%s kernel): rescored %.4f\n", name_of(c.interaction), c.width,
                      simd_name(level), screen_kernel_name(level),
                      static_cast<double>(on.stats.rescored) / static_cast<double>(on.stats.pairs));
        }
      }
    }
  }
}

// The table's bound terms hold at every level, checked in long double against the bytes it stores: for each screened
// entity, slack >= ||t - s b|| + gamma_d ||t|| and qnorm >= ||s b|| (the first level), slack2, qnorm2 and cnorm the
// same for b + c / 256 and s ||c|| / 256 (the second), corr and corr2 128 times the sums of b and c, and the bytes of
// both levels the same whichever quantiser made them (AVX2 and AVX-512 make the second level in their first pass,
// the scalar one in double). Rows: Gaussian, a huge dynamic range, one huge coordinate, subnormal values beside a
// coordinate of 1 (y and f subnormal), all equal, 2^40 beside values of 1e-30 (f^2 underflows), and zero; widths 1
// to 130.
void bounds(std::mt19937& rng) {
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::uniform_real_distribution<float> u(-40.0f, 40.0f);
  size_t checked = 0;
  for (size_t dim : {1u, 3u, 16u, 17u, 64u, 100u, 130u}) {
    const size_t n = 53;
    std::vector<float> ent(n * dim);
    for (size_t e = 0; e < n; ++e) {
      for (size_t k = 0; k < dim; ++k) {
        float& x = ent[e * dim + k];
        switch (e % 6) {
          case 0: x = g(rng); break;
          case 1: x = g(rng) * std::exp2(u(rng)); break;
          case 2: x = k == e % dim ? 3e9f : g(rng) * 1e-3f; break;
          case 3: x = k == e % dim ? 1.0f : g(rng) * 1e-41f; break;
          case 4: x = 0.75f; break;
          default: x = e == 5 ? 0.0f : k == e % dim ? 1099511627776.0f : g(rng) * 1e-30f; break;
        }
      }
    }
    std::vector<uint32_t> map(dim);
    for (size_t k = 0; k < dim; ++k) map[k] = static_cast<uint32_t>(k);
    const long double gamma = dim * 0x1p-24L / (1 - dim * 0x1p-24L);
    std::vector<int8_t> first, second;
    for (SimdLevel level : levels()) {
      ScreenTable t;
      CHECK(screen_quantise_table(ent.data(), n, dim, map.data(), dim, level, 1, &t));
      const std::vector<int8_t> p1(t.panels.data(), t.panels.data() + t.panels.size());
      const std::vector<int8_t> p2(t.panels2.data(), t.panels2.data() + t.panels2.size());
      if (first.empty()) {
        first = p1;
        second = p2;
      }
      CHECK(p1 == first);
      CHECK(p2 == second);
      for (size_t e = 0; e < n; ++e) {
        const long double s = t.scale[e];
        if (!(s > 0)) continue;
        long double r1 = 0, n1 = 0, r2 = 0, n2 = 0, cc = 0, tt = 0;
        int64_t sb = 0, sc = 0;
        for (size_t k = 0; k < dim; ++k) {
          const size_t at = ((e / 16) * t.dpad / 4 + k / 4) * 64 + (e % 16) * 4 + k % 4;
          const long double b = p1[at], c = p2[at], v = ent[e * dim + k];
          const long double x1 = s * b, x2 = s * (b + c / 256);
          r1 += (v - x1) * (v - x1);
          n1 += x1 * x1;
          r2 += (v - x2) * (v - x2);
          n2 += x2 * x2;
          cc += c * c;
          tt += v * v;
          sb += p1[at];
          sc += p2[at];
        }
        const long double slop = 1 + 1e-15L;
        CHECK(std::sqrt(r1) + gamma * std::sqrt(tt) <= t.slack[e] * slop);
        CHECK(std::sqrt(n1) <= t.qnorm[e] * slop);
        CHECK(std::sqrt(r2) + gamma * std::sqrt(tt) <= t.slack2[e] * slop);
        CHECK(std::sqrt(n2) <= t.qnorm2[e] * slop);
        CHECK(s * std::sqrt(cc) / 256 <= t.cnorm[e] * slop);
        CHECK_EQ(static_cast<int64_t>(t.corr[e]), 128 * sb);
        CHECK_EQ(static_cast<int64_t>(t.corr2[e]), 128 * sc);
        ++checked;
      }
    }
  }
  CHECK(checked >= 350 * levels().size());  // every row but the zero one, at every level
  std::printf("bounds: %zu rows checked\n", checked);
}

// Entities with a NaN are never screened: every pair against them is rescored (and counted as NaN, as the path does).
void never_screened(std::mt19937& rng) {
  const kgrank_screen::Next next = [&] { return static_cast<uint32_t>(rng()); };
  Case c = kgrank_screen::make_case(next, 200, 24, 10, false, 0);
  c.off.clear();
  c.excl.clear();
  for (size_t i = 0; i < c.rows; ++i) {
    c.truth[i] = 0;
    c.anchor[i] = c.anchor[i] / 2 * 2;  // finite rows: the true scores are not NaN
  }
  for (size_t e = 1; e < c.n; e += 2) c.ent[e * c.width + 5] = std::numeric_limits<float>::quiet_NaN();
  check_case(c, "nan rows");
  for (SimdLevel level : levels()) {
    const auto on = kgrank_screen::rank(c, ScreenMode::Int8, level, 1);
    CHECK(on.status.ok());
    CHECK(on.stats.rescored >= c.rows * (c.n / 2));
    for (size_t i = 0; i < c.rows; ++i) CHECK_EQ(on.counts[2 * c.rows + i], static_cast<double>(c.n / 2));
  }
  // Where it does not apply (an L1 distance; a candidate subset) the screen stays off, counts unchanged.
  Case t = c;
  t.interaction = Interaction::TransEL1;
  const auto r = kgrank_screen::rank(t, ScreenMode::Int8, SimdLevel::Scalar, 1);
  CHECK(!r.stats.used);
  CHECK(kgrank_screen::same(r, kgrank_screen::rank(t, ScreenMode::Off, SimdLevel::Scalar, 1)));
}

// Auto gives up the screen for a block of 64 rows whose rescoring cost more than the screen saved (rows whose every
// pair ties its threshold exactly, which neither level ever decides), block by block as the chunks are ranked (two
// threads: a flag may be set while another chunk of the block runs): counts equal the float32 path's whatever the mix,
// with the table prepared once (screen_prepare), with and without a job control (blocks of 256 rows per task); a
// call below kScreenAutoWork does not quantise the table for itself, one at it does.
void give_up(std::mt19937& rng) {
  const kgrank_screen::Next next = [&] { return static_cast<uint32_t>(rng()); };
  for (int kind = 0; kind < 3; ++kind) {
    const bool complex = kind == 1;
    Case c = kgrank_screen::make_structured(next, 2600, 64, 330, complex, kind == 2);
    // Entity 0 all zero. Rows 0-63 and from 200 on, and every other row of 128-199, take it as their anchor: their
    // query is zero, every score +-0 and equal to the threshold (crowded); the other rows are the structured ones.
    std::fill(c.ent.begin(), c.ent.begin() + static_cast<std::ptrdiff_t>(c.width), 0.0f);
    for (size_t i = 0; i < c.rows; ++i) {
      if (i < 64 || i >= 200 || (i >= 128 && i % 2 == 0)) c.anchor[i] = 0;
    }
    const EmbeddingModel<float> m{c.interaction, c.layout, c.ent.data(), c.rel.data(), c.n,
                                  c.nr,          c.width,  c.width,      0.0,          nullptr};
    for (SimdLevel level : levels()) {
      ScreenTable table;
      CHECK(screen_prepare(m, level, 2, &table).ok());
      const auto off = kgrank_screen::rank(c, ScreenMode::Off, level, 2);
      for (const ScreenTable* t : {static_cast<const ScreenTable*>(nullptr), static_cast<const ScreenTable*>(&table)}) {
        for (unsigned threads : {1u, 2u}) {
          JobControl control;
          for (JobControl* ctl : {static_cast<JobControl*>(nullptr), &control}) {
            const auto on = kgrank_screen::rank(c, ScreenMode::Auto, level, threads, t, ctl);
            CHECK(kgrank_screen::same(on, off));
            const auto all = kgrank_screen::rank(c, ScreenMode::Int8, level, threads, t, ctl);
            CHECK(kgrank_screen::same(all, off));
            const bool vector = screen_auto_kernel(level);
            if (vector && t == nullptr) {
              // 330 rows x 64: below kScreenAutoWork, Auto does not quantise the table for the call.
              CHECK(!on.stats.used);
            } else if (vector && kind != 2) {
              // Auto saw fewer pairs than Int8 (blocks gave up after their first chunks) but did screen. (TransE-L2's
              // zero anchor still translates by its relation: no crowd, nothing to give up; its counts still agree.)
              CHECK(on.stats.used);
              CHECK(on.stats.pairs > 0);
              CHECK(on.stats.pairs < all.stats.pairs);
            }
          }
        }
      }
    }
  }
  // Auto screens with every vector kernel but AVX2's without VNNI (screen_auto_kernel).
  for (SimdLevel level : levels()) {
    bool vector = false;
    screen_kernel(level, &vector);
    CHECK_EQ(screen_auto_kernel(level), vector && std::strcmp(screen_kernel_name(level), "avx2") != 0);
  }
  // Auto quantises the table for a call from rows x dim >= kScreenAutoWork on (with a kernel that pays), and uses a
  // prepared table for any call (with such a kernel: a table prepared at the AVX2 level without VNNI is not used).
  for (size_t rows : {size_t{1023}, size_t{1024}}) {
    Case big = kgrank_screen::make_structured(next, 300, kScreenAutoWork / 1024, rows, false);
    const EmbeddingModel<float> mb{
        big.interaction, big.layout, big.ent.data(), big.rel.data(), big.n, big.nr, big.width, big.width, 0.0, nullptr};
    for (SimdLevel level : levels()) {
      const bool vector = screen_auto_kernel(level);
      ScreenTable table;
      CHECK(screen_prepare(mb, level, 1, &table).ok());
      const auto off = kgrank_screen::rank(big, ScreenMode::Off, level, 2);
      const auto own = kgrank_screen::rank(big, ScreenMode::Auto, level, 2);
      const auto ahead = kgrank_screen::rank(big, ScreenMode::Auto, level, 2, &table);
      CHECK(kgrank_screen::same(own, off));
      CHECK(kgrank_screen::same(ahead, off));
      CHECK_EQ(own.stats.used, vector && rows == 1024);
      CHECK_EQ(ahead.stats.used, vector);
    }
  }
  // A table made from another table's shape is not used (the call quantises its own), counts unchanged.
  Case c = kgrank_screen::make_structured(next, 700, 16, 40, false);
  Case other = kgrank_screen::make_structured(next, 701, 16, 40, false);
  const EmbeddingModel<float> mo{
      other.interaction, other.layout, other.ent.data(), other.rel.data(), other.n, other.nr, other.width,
      other.width,       0.0,          nullptr};
  ScreenTable wrong;
  CHECK(screen_prepare(mo, SimdLevel::Scalar, 1, &wrong).ok());
  CHECK(!wrong.made_for(c.n, c.width, std::vector<uint32_t>(16, 0).data(), false));
  CHECK(kgrank_screen::same(kgrank_screen::rank(c, ScreenMode::Int8, SimdLevel::Scalar, 1, &wrong),
                            kgrank_screen::rank(c, ScreenMode::Off, SimdLevel::Scalar, 1)));
  // A dot-product table is not a distance table (nor the reverse), and is not used for one.
  CHECK(!wrong.made_for(other.n, other.width, std::vector<uint32_t>(16, 0).data(), true));
  Case d = other;
  d.interaction = Interaction::TransEL2;
  CHECK(kgrank_screen::same(kgrank_screen::rank(d, ScreenMode::Int8, SimdLevel::Scalar, 1, &wrong),
                            kgrank_screen::rank(d, ScreenMode::Off, SimdLevel::Scalar, 1)));
  // screen_prepare refuses what the screen does not apply to.
  Case t = c;
  t.interaction = Interaction::TransEL1;
  const EmbeddingModel<float> mt{t.interaction, t.layout, t.ent.data(), t.rel.data(), t.n,
                                 t.nr,          t.width,  t.width,      0.0,          nullptr};
  CHECK(!screen_prepare(mt, SimdLevel::Scalar, 1, &wrong).ok());
  std::printf("give up: ok\n");
}

// A table that is a slice (entity_offset != 0) with the true answers scored from its rows (no true_scores): the
// true answer's own pair is counted equal without rescoring, and it must be the row `truth` names, not truth minus
// the offset. Each row's entity truth - offset is made a near-tie (the true answer's row times 1 + 2^-18: a score
// apart from the threshold by far less than the second level's bound), so that pair is undecided and must be
// rescored: counting it equal instead changes the counts.
void shard_truth(std::mt19937& rng) {
  const kgrank_screen::Next next = [&] { return static_cast<uint32_t>(rng()); };
  Case c = kgrank_screen::make_structured(next, 1500, 100, 48, false);
  c.entity_offset = 5;
  for (size_t i = 0; i < c.rows; ++i) {
    const size_t e = static_cast<size_t>(c.truth[i]);
    if (e < c.entity_offset) continue;
    float* near = c.ent.data() + (e - c.entity_offset) * c.width;
    for (size_t k = 0; k < c.width; ++k) near[k] = c.ent[e * c.width + k] * (1.0f + 0x1p-18f);
  }
  check_case(c, "shard truth");
  // The near-ties are not exact ties: the float32 path counts them above or below, never equal.
  const auto off = kgrank_screen::rank(c, ScreenMode::Off, SimdLevel::Scalar, 1);
  double equal = 0;
  for (size_t i = 0; i < c.rows; ++i) equal += off.counts[c.rows + i];
  CHECK(equal < 2.0 * static_cast<double>(c.rows));
  std::printf("shard truth: %zu rows, %.0f equal pairs\n", c.rows, equal);
}

// Top-k lists (top_k_embeddings) with the screen on give every id and score bit for bit as with it off, at every
// level and 1, 2 threads, over a range that starts inside a panel, with floors (a score, NaN: none, -inf), with the
// table quantised per call and prepared once; returns the pairs the screen decided itself.
size_t check_top_k(const Case& c, size_t k, size_t begin, size_t end, const char* what) {
  const EmbeddingModel<float> m{c.interaction, c.layout, c.ent.data(), c.rel.data(), c.n,
                                c.nr,          c.width,  c.width,      0.0,          nullptr};
  const auto base = kgrank_screen::top_k(c, ScreenMode::Off, SimdLevel::Scalar, 1, k, begin, end, {});
  CHECK(base.status.ok());
  // Floors: row i's j-th best score for a few j, none, or -inf (every finite score lies above it).
  std::vector<double> floor(c.rows);
  for (size_t i = 0; i < c.rows; ++i) {
    const double s = base.counts[c.rows * k + i * k + (i * 7) % k];
    floor[i] = i % 4 == 1 ? std::nan("") : i % 4 == 2 ? -std::numeric_limits<double>::infinity() : s;
  }
  size_t decided = 0;
  for (const std::vector<double>* fl :
       {static_cast<const std::vector<double>*>(nullptr), static_cast<const std::vector<double>*>(&floor)}) {
    const std::vector<double> none;
    const std::vector<double>& f = fl != nullptr ? *fl : none;
    const auto base_f = kgrank_screen::top_k(c, ScreenMode::Off, SimdLevel::Scalar, 1, k, begin, end, f);
    for (SimdLevel level : levels()) {
      ScreenTable table;
      CHECK(screen_prepare(m, level, 2, &table).ok());
      for (unsigned threads : {1u, 2u}) {
        const auto off = kgrank_screen::top_k(c, ScreenMode::Off, level, threads, k, begin, end, f);
        CHECK(kgrank_screen::same(off, base_f));
        CHECK(!off.stats.used);
        for (ScreenMode mode : {ScreenMode::Int8, ScreenMode::Auto}) {
          for (const ScreenTable* t :
               {static_cast<const ScreenTable*>(nullptr), static_cast<const ScreenTable*>(&table)}) {
            const auto on = kgrank_screen::top_k(c, mode, level, threads, k, begin, end, f, t);
            const bool ok = kgrank_screen::same(on, off);
            CHECK(ok);
            if (!ok) {
              std::fprintf(stderr, "  top-k %s: level %s, %u threads, mode %d, table %d, n %zu, k %zu, [%zu, %zu)\n",
                           what, simd_name(level), threads, static_cast<int>(mode), t != nullptr, c.n, k, begin, end);
            }
            if (mode == ScreenMode::Int8) {
              CHECK(on.stats.used);
              CHECK(on.stats.rescored <= on.stats.pairs);
              decided += on.stats.pairs - on.stats.rescored;
            }
          }
        }
      }
    }
  }
  return decided;
}

void top_k(std::mt19937& rng) {
  const kgrank_screen::Next next = [&] { return static_cast<uint32_t>(rng()); };
  int cases = 0;
  for (size_t n : {size_t{40}, size_t{1100}, size_t{2600}}) {
    for (size_t w : {size_t{3}, size_t{33}}) {
      for (bool complex : {false, true}) {
        const bool distance = rng() % 2 == 1;
        const Case c =
            kgrank_screen::make_case(next, n, w, 1 + rng() % 30, complex, static_cast<int>(rng() % 9), distance);
        const size_t k = 1 + rng() % 12;
        check_top_k(c, k, 0, n, "adversarial");
        if (n > 40) check_top_k(c, k, 5 + rng() % 11, n - rng() % 20, "adversarial range");
        ++cases;
      }
    }
  }
  // Planted answers: the k-th best lies far above most candidates, so the screen decides most pairs itself.
  for (int kind = 0; kind < 4; ++kind) {
    const bool complex = kind % 2 == 1;
    // 40 chunks of 512 and k = 2: a row's list changes in about k (1 + ln(40 / k)) of them.
    Case c = kgrank_screen::make_structured(next, 20000, 64, 24, complex, kind >= 2);
    const size_t decided = check_top_k(c, 2, 0, c.n, "structured");
    CHECK(decided > 0);
    for (SimdLevel level : levels()) {
      const auto on = kgrank_screen::top_k(c, ScreenMode::Int8, level, 2, 2, 0, c.n, {});
      // The pairs certified above are listed and scored alone (ScreenTask::list_above), not their rows' chunks.
      CHECK(on.stats.rescored * 100 < on.stats.pairs);
      std::printf("top-k structured %s %s: rescored %.4f\n", name_of(c.interaction), simd_name(level),
                  static_cast<double>(on.stats.rescored) / static_cast<double>(on.stats.pairs));
    }
    // A slice of the table (entity_offset): global ids listed, the same lists.
    c.entity_offset = 21;
    check_top_k(c, 5, 3, c.n - 7, "structured slice");
    ++cases;
  }
  std::printf("top-k: %d cases\n", cases);
}

// A table on disk (screen_save, screen_load): read back it ranks as the screen off does; a file made from another
// table (other values, rows, interaction) or damaged (a flipped byte, cut, extended) is refused with a message.
void table_file(std::mt19937& rng, bool distance) {
  const kgrank_screen::Next next = [&] { return static_cast<uint32_t>(rng()); };
  const Case c = kgrank_screen::make_structured(next, 700, 24, 30, true, distance);
  const EmbeddingModel<float> m{c.interaction, c.layout, c.ent.data(), c.rel.data(), c.n,
                                c.nr,          c.width,  c.width,      0.0,          nullptr};
  const std::string path = "/tmp/kgrank-test-screen-table.kgq";
  ScreenTable made, back;
  CHECK(screen_prepare(m, SimdLevel::Scalar, 1, &made).ok());
  CHECK(screen_save(m, made, path.c_str()).ok());
  CHECK(screen_load(m, path.c_str(), &back).ok());
  const auto off = kgrank_screen::rank(c, ScreenMode::Off, SimdLevel::Scalar, 1);
  for (SimdLevel level : levels()) {
    const auto on = kgrank_screen::rank(c, ScreenMode::Int8, level, 2, &back);
    CHECK(kgrank_screen::same(on, off));
    CHECK(on.stats.rescored * 4 < on.stats.pairs);
  }
  const auto refused = [&](const EmbeddingModel<float>& model, const char* file, const char* words) {
    ScreenTable t;
    const Status s = screen_load(model, file, &t);
    CHECK(!s.ok());
    CHECK(s.message.find(words) != std::string::npos);
    if (s.ok() || s.message.find(words) == std::string::npos) std::fprintf(stderr, "  got: %s\n", s.message.c_str());
  };
  std::vector<float> other = c.ent;
  other[100] = std::nextafter(other[100], 2.0f);
  EmbeddingModel<float> mo = m;
  mo.entity = other.data();
  refused(mo, path.c_str(), "other values");
  EmbeddingModel<float> fewer = m;
  fewer.num_entities = c.n - 1;
  refused(fewer, path.c_str(), "rows of");
  EmbeddingModel<float> dist = m;
  dist.interaction = distance ? Interaction::ComplEx : Interaction::RotatEL2;
  refused(dist, path.c_str(), "another interaction");
  std::vector<char> bytes;
  if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    int ch;
    while ((ch = std::fgetc(f)) != EOF) bytes.push_back(static_cast<char>(ch));
    std::fclose(f);
  }
  const auto write = [&](const std::vector<char>& b) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    std::fwrite(b.data(), 1, b.size(), f);
    std::fclose(f);
  };
  std::vector<char> flipped = bytes;
  flipped[bytes.size() / 2] ^= 4;
  write(flipped);
  refused(m, path.c_str(), "damaged");
  write(std::vector<char>(bytes.begin(), bytes.end() - 1));
  refused(m, path.c_str(), "cut short");
  std::vector<char> longer = bytes;
  longer.push_back(0);
  write(longer);
  refused(m, path.c_str(), "bytes follow");
  std::vector<char> header = bytes;
  header[0] = 'X';
  write(header);
  refused(m, path.c_str(), "KGRANKQ1");
  std::remove(path.c_str());
  refused(m, path.c_str(), "cannot open");
  std::printf("table file: ok\n");
}

// A table of rows wider than kScreenMaxDim is never made (every call keeps the float32 path for them, and the
// quantiser's int32 sums of c^2 could overflow): screen_prepare refuses it, and a table of the widest rows is made.
void too_wide() {
  for (size_t width : {kScreenMaxDim, kScreenMaxDim + 1}) {
    std::vector<float> ent(2 * width, 0.5f), rel(width, 1.0f);
    const EmbeddingModel<float> m{
        Interaction::DistMult, ComplexLayout::Halves, ent.data(), rel.data(), 2, 1, width, width, 0.0, nullptr};
    ScreenTable table;
    CHECK_EQ(screen_prepare(m, SimdLevel::Scalar, 1, &table).ok(), width <= kScreenMaxDim);
  }
  std::printf("too wide: ok\n");
}

// Linux's permission for AMX's tile state is asked by the first call that screens, never by one that does not (the
// default auto on a call too small to quantise a table for, a kernel name for backendInfo): once granted, every
// later sigaltstack of the process must hold the tile state. Run first, before any call has asked.
void amx_asked_only_by_screening(std::mt19937& rng) {
#if defined(__linux__) && defined(__x86_64__)
  if (!simd_supported(SimdLevel::AVX512) || std::strcmp(screen_kernel_name(SimdLevel::AVX512), "amx") != 0) {
    std::printf("amx permission: skipped (no AMX kernel here)\n");
    return;
  }
  unsigned long long features = 0;
  if (syscall(SYS_arch_prctl, 0x1022, &features) != 0) {  // ARCH_GET_XCOMP_PERM
    std::printf("amx permission: skipped (this kernel does not report it)\n");
    return;
  }
  const auto tile_data_permitted = [] {
    unsigned long long now = 0;
    CHECK_EQ(syscall(SYS_arch_prctl, 0x1022, &now), 0L);
    return (now >> 18) & 1u;  // XFEATURE_XTILEDATA
  };
  CHECK_EQ(tile_data_permitted(), 0u);
  const kgrank_screen::Next next = [&] { return static_cast<uint32_t>(rng()); };
  const Case small = kgrank_screen::make_structured(next, 300, 64, 16, false);
  CHECK(screen_auto_kernel(SimdLevel::AVX512));
  const auto off = kgrank_screen::rank(small, ScreenMode::Off, SimdLevel::AVX512, 1);
  const auto automatic = kgrank_screen::rank(small, ScreenMode::Auto, SimdLevel::AVX512, 1);
  CHECK(!automatic.stats.used);
  CHECK(kgrank_screen::same(automatic, off));
  CHECK_EQ(tile_data_permitted(), 0u);
  const auto screened = kgrank_screen::rank(small, ScreenMode::Int8, SimdLevel::AVX512, 1);
  CHECK(screened.stats.used);
  CHECK(kgrank_screen::same(screened, off));
  // Granted, or refused (a signal stack too small for the tile state): then the VNNI kernel screened.
  const bool amx = std::strcmp(screen_kernel_name(SimdLevel::AVX512), "amx") == 0;
  CHECK_EQ(tile_data_permitted(), amx ? 1u : 0u);
  std::printf("amx permission: ok\n");
#else
  (void)rng;
#endif
}

}  // namespace

int main() {
  std::mt19937 rng(20261202);
  amx_asked_only_by_screening(rng);
  bounds(rng);
  adversarial(rng);
  structured(rng);
  never_screened(rng);
  give_up(rng);
  too_wide();
  shard_truth(rng);
  top_k(rng);
  table_file(rng, false);
  table_file(rng, true);
  TEST_MAIN_END();
}
