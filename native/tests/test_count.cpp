// Unit tests of the counting kernels: every ISA level this CPU supports, against a plain loop, on lengths that hit
// every tail path, special values (NaN, +-0, +-Inf, subnormals), both element types, and both thread splits.
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "check.h"
#include "count.h"
#include "simd.h"
#include "thread_pool.h"

using kgrank::Counts;
using kgrank::SimdLevel;

namespace {

template <typename T>
Counts reference(const T* x, size_t n, T t) {
  Counts c;
  for (size_t i = 0; i < n; ++i) {
    if (x[i] > t) ++c.greater;
    if (x[i] == t) ++c.equal;
    if (std::isnan(x[i])) ++c.nan;
  }
  return c;
}

std::vector<SimdLevel> levels() {
  std::vector<SimdLevel> out;
  for (SimdLevel l : {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON}) {
    if (kgrank::simd_supported(l)) out.push_back(l);
  }
  return out;
}

template <typename T>
std::vector<T> special_values() {
  using L = std::numeric_limits<T>;
  return {T(0),
          -T(0),
          T(1),
          T(-1),
          L::infinity(),
          -L::infinity(),
          L::quiet_NaN(),
          L::denorm_min(),
          -L::denorm_min(),
          L::min(),
          L::max(),
          L::lowest(),
          T(0.5),
          T(2)};
}

template <typename T>
void test_runs(std::mt19937_64& rng) {
  const std::vector<T> specials = special_values<T>();
  std::uniform_int_distribution<size_t> pick(0, specials.size() - 1);
  for (size_t n : {0, 1, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 1000, 4099}) {
    std::vector<T> x(n);
    for (auto& v : x) v = specials[pick(rng)];
    for (T t : specials) {
      const Counts want = reference(x.data(), n, t);
      for (SimdLevel level : levels()) {
        const Counts got = kgrank::count_run(x.data(), n, t, level);
        CHECK_EQ(got.greater, want.greater);
        CHECK_EQ(got.equal, want.equal);
        CHECK_EQ(got.nan, want.nan);
      }
    }
  }
}

// The fused kernel (count_answers_f32, AVX2 and AVX-512) against the two calls it replaces, count_f32 and
// answers_f32, and both against plain loops: rows that end inside and after the loop's steps, answer lists shorter
// and longer than the row's steps (the blocks the loop leaves are taken after it) and of every length modulo 16, the
// own answer in and out of the list, high bits above the mask, NaN, ties and special values.
void test_count_answers(std::mt19937_64& rng) {
  const std::vector<float> specials = special_values<float>();
  std::uniform_int_distribution<size_t> pick(0, specials.size() - 1);
  size_t fused_levels = 0;
  for (SimdLevel level : levels()) {
    const kgrank::KernelTable& k = kgrank::kernel_table(level);
    if (k.count_answers_f32 == nullptr) continue;
    ++fused_levels;
    for (size_t n : {0, 1, 31, 32, 33, 95, 1000, 4099}) {
      std::vector<float> x(n);
      for (auto& v : x) v = specials[pick(rng)];
      const size_t row_len = 300;
      std::vector<float> row(row_len);
      for (auto& v : row) v = specials[pick(rng)];
      // Column row_len - 1 is never an answer: an own answer that is not among them.
      std::uniform_int_distribution<uint32_t> col(0, row_len - 2);
      for (size_t m : {0, 1, 7, 8, 9, 15, 16, 17, 40, 700}) {
        const uint32_t mask = (1u << 9) - 1;  // 300 columns fit 9 bits; the bits above are a relation's
        std::vector<uint32_t> entries(m);
        for (auto& e : entries) e = (5u << 9) | col(rng);
        for (int32_t own :
             {-1, static_cast<int32_t>(row_len - 1), m > 0 ? static_cast<int32_t>(entries[m / 2] & mask) : 3}) {
          for (float t : {0.5f, specials[pick(rng)], std::numeric_limits<float>::quiet_NaN()}) {
            const float tj = specials[pick(rng)];
            Counts want_known;
            for (uint32_t e : entries) {
              const uint32_t b = e & mask;
              if (static_cast<int32_t>(b) == own) continue;
              want_known.greater += row[b] > tj;
              want_known.equal += row[b] == tj;
              want_known.nan += !std::isnan(row[b]);
            }
            const Counts want = reference(x.data(), n, t);
            const kgrank::AnswerJob job{row.data(), entries.data(), m, mask, own, tj};
            Counts known;
            bool found = own < 0;  // must be overwritten
            const Counts got = k.count_answers_f32(x.data(), n, t, job, &known, &found);
            bool want_found = false;
            for (uint32_t e : entries) want_found |= static_cast<int32_t>(e & mask) == own;
            CHECK_EQ(found, want_found);
            CHECK_EQ(got.greater, want.greater);
            CHECK_EQ(got.equal, want.equal);
            CHECK_EQ(got.nan, want.nan);
            CHECK_EQ(known.greater, want_known.greater);
            CHECK_EQ(known.equal, want_known.equal);
            CHECK_EQ(known.nan, want_known.nan);
            const Counts two = k.answers_f32(row.data(), entries.data(), m, mask, own, tj);
            CHECK_EQ(two.greater, known.greater);
            CHECK_EQ(two.equal, known.equal);
            CHECK_EQ(two.nan, known.nan);
          }
        }
      }
    }
  }
  std::printf("fused count + answers kernels tested at %zu levels\n", fused_levels);
  CHECK(fused_levels > 0 || !kgrank::simd_supported(SimdLevel::AVX2));
}

template <typename T>
void test_rows(std::mt19937_64& rng, size_t rows, size_t cols) {
  std::vector<T> scores(rows * cols);
  std::uniform_int_distribution<int> small(-8, 8);
  for (auto& v : scores) v = static_cast<T>(small(rng)) / T(4);
  for (size_t i = 0; i < scores.size(); i += 97) scores[i] = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> thresholds(rows);
  for (auto& t : thresholds) t = static_cast<T>(small(rng)) / T(4);
  for (SimdLevel level : levels()) {
    for (unsigned threads : {1u, 2u, 3u, 0u}) {
      std::vector<double> g(rows, -1), e(rows, -1), u(rows, -1);
      kgrank::CountOptions opt;
      opt.simd = level;
      opt.threads = threads;
      kgrank::count_rows(scores.data(), rows, cols, thresholds.data(), g.data(), e.data(), u.data(), opt);
      for (size_t r = 0; r < rows; ++r) {
        const Counts want = reference(scores.data() + r * cols, cols, thresholds[r]);
        CHECK_EQ(g[r], static_cast<double>(want.greater));
        CHECK_EQ(e[r], static_cast<double>(want.equal));
        CHECK_EQ(u[r], static_cast<double>(want.nan));
      }
    }
  }
}

// n scores among the 13 halves -3, -2.5, ..., 3: many exact ties.
template <typename T>
std::vector<T> tied_scores(std::mt19937_64& rng, size_t n) {
  std::vector<T> scores(n);
  std::uniform_int_distribution<int> small(-6, 6);
  for (auto& v : scores) v = static_cast<T>(small(rng)) / T(2);
  return scores;
}

// count_rows_by_index == count_rows with thresholds gathered beforehand, on both thread splits.
template <typename T>
void test_by_index(std::mt19937_64& rng, size_t rows, size_t cols) {
  const std::vector<T> scores = tied_scores<T>(rng, rows * cols);
  std::vector<int32_t> idx(rows);
  std::vector<T> gathered(rows);
  for (size_t r = 0; r < rows; ++r) {
    idx[r] = static_cast<int32_t>((r * 7919 + 3) % cols);
    gathered[r] = scores[r * cols + static_cast<size_t>(idx[r])];
  }
  for (SimdLevel level : levels()) {
    for (unsigned threads : {1u, 2u}) {
      kgrank::CountOptions opt;
      opt.simd = level;
      opt.threads = threads;
      std::vector<double> g1(rows), e1(rows), u1(rows), g2(rows), e2(rows), u2(rows);
      std::vector<T> th(rows, T(-99));
      kgrank::count_rows(scores.data(), rows, cols, gathered.data(), g1.data(), e1.data(), u1.data(), opt);
      kgrank::count_rows_by_index(scores.data(), rows, cols, idx.data(), th.data(), g2.data(), e2.data(), u2.data(),
                                  opt);
      for (size_t r = 0; r < rows; ++r) {
        CHECK_EQ(th[r], gathered[r]);
        CHECK_EQ(g2[r], g1[r]);
        CHECK_EQ(e2[r], e1[r]);
        CHECK_EQ(u2[r], u1[r]);
        CHECK(e2[r] >= 1);  // the true entry equals itself
      }
    }
  }
}

// With a job control the rows are cut into more tasks (even on one thread): the counts are the same, progress ends
// at done == total, and a control cancelled before the call throws Cancelled, on both thread splits.
template <typename T>
void test_control(std::mt19937_64& rng, size_t rows, size_t cols) {
  const std::vector<T> scores = tied_scores<T>(rng, rows * cols);
  std::vector<int32_t> idx(rows);
  for (size_t r = 0; r < rows; ++r) idx[r] = static_cast<int32_t>((r * 31 + 1) % cols);
  for (unsigned threads : {1u, 2u}) {
    kgrank::CountOptions opt;
    opt.simd = kgrank::best_simd();
    opt.threads = threads;
    std::vector<double> g1(rows), e1(rows), u1(rows), g2(rows), e2(rows), u2(rows);
    std::vector<T> th1(rows), th2(rows);
    kgrank::count_rows_by_index(scores.data(), rows, cols, idx.data(), th1.data(), g1.data(), e1.data(), u1.data(),
                                opt);
    kgrank::JobControl control;
    opt.control = &control;
    kgrank::count_rows_by_index(scores.data(), rows, cols, idx.data(), th2.data(), g2.data(), e2.data(), u2.data(),
                                opt);
    CHECK(g1 == g2);
    CHECK(e1 == e2);
    CHECK(u1 == u2);
    CHECK(th1 == th2);
    CHECK(control.total() > 0);
    CHECK_EQ(control.done(), control.total());
    kgrank::JobControl cancelled;
    cancelled.cancel();
    opt.control = &cancelled;
    bool threw = false;
    try {
      kgrank::count_rows_by_index(scores.data(), rows, cols, idx.data(), th2.data(), g2.data(), e2.data(), u2.data(),
                                  opt);
    } catch (const kgrank::Cancelled&) {
      threw = true;
    }
    CHECK(threw == (rows > 0));
  }
}

void test_bandwidth_read() {
  std::vector<uint64_t> words(1 << 18);
  uint64_t want = 0;
  for (size_t i = 0; i < words.size(); ++i) {
    words[i] = i * 2654435761u;
    want += words[i];
  }
  for (SimdLevel level : levels()) {
    kgrank::CountOptions opt;
    opt.simd = level;
    CHECK_EQ(kgrank::bandwidth_read(words.data(), words.size() * 8, opt), want);
    CHECK_EQ(kgrank::bandwidth_read(words.data(), words.size() * 8, opt, true), want);
  }
}

}  // namespace

int main() {
  // One line naming the levels every test below runs, so a cross run can check it exercised its SIMD kernels.
  std::printf("simd levels tested:");
  for (SimdLevel level : levels()) std::printf(" %s", kgrank::simd_name(level));
  std::printf("\n");
  std::mt19937_64 rng(12345);
  test_runs<float>(rng);
  test_runs<double>(rng);
  test_count_answers(rng);
  test_rows<float>(rng, 37, 1001);    // many short rows: whole rows per task
  test_rows<double>(rng, 5, 300001);  // long rows: split into column pieces and reduced
  test_rows<float>(rng, 1, 700000);
  test_rows<float>(rng, 0, 10);
  test_by_index<float>(rng, 300, 1000);   // whole rows per task
  test_by_index<double>(rng, 3, 400000);  // rows split into column pieces
  test_control<float>(rng, 600, 2000);    // whole rows per task
  test_control<double>(rng, 3, 400000);   // rows split into column pieces
  test_bandwidth_read();
  TEST_MAIN_END();
}
