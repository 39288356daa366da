// Fuzz target: row-wise counting as the addon runs it, against the plain loop per row:
//   count_rows           thresholds given per row (sampled negatives: positives vs their negatives; RankCounter
//                        chunks of columns),
//   count_rows_by_index  id-taking: each row's threshold is its own score at column trueIndex[r], written out.
// Every SIMD level, thread counts 1, 2 and 0 (= hardware); a size byte can grow the matrix past the parallel
// threshold (256 KiB) and rows past one piece (1 MiB), so the threaded row split and the column-piece split with
// its per-row reduction both run.
#include <cstring>

#include "count.h"
#include "fuzz_common.h"

namespace {

template <typename T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

template <typename T>
void run(FuzzedDataProvider& p) {
  size_t rows = p.ConsumeIntegralInRange<size_t>(0, 12);
  size_t cols = p.ConsumeIntegralInRange<size_t>(1, 70);
  const uint8_t grow = p.ConsumeIntegral<uint8_t>();
  if (grow >= 250) {
    cols = (size_t{1} << 20) / sizeof(T) + p.ConsumeIntegralInRange<size_t>(0, 40);  // > one piece
    rows = std::min<size_t>(rows, 3);
  } else if (grow >= 235) cols = p.ConsumeIntegralInRange<size_t>(3000, 9000), rows = std::max<size_t>(rows, 11);
  // Scores: a fuzzed pattern repeated over the matrix, so large matrices cost no more input.
  const size_t pattern_len = p.ConsumeIntegralInRange<size_t>(1, 97);
  std::vector<T> pattern(pattern_len);
  for (T& v : pattern) v = kgrank_fuzz::score<T>(p);
  std::vector<T> scores(rows * cols);
  for (size_t i = 0; i < scores.size(); ++i) scores[i] = pattern[i % pattern_len];
  std::vector<int32_t> truth(rows);
  std::vector<T> thresholds(rows);
  for (size_t r = 0; r < rows; ++r) {
    truth[r] = static_cast<int32_t>(p.ConsumeIntegralInRange<size_t>(0, cols - 1));
    thresholds[r] = p.ConsumeBool() ? scores[r * cols + static_cast<size_t>(truth[r])] : kgrank_fuzz::score<T>(p);
  }
  const unsigned thread_choices[3] = {1, 2, 0};
  const unsigned threads = thread_choices[p.ConsumeIntegralInRange<int>(0, 2)];

  std::vector<kgrank::Counts> want(rows), want_idx(rows);
  for (size_t r = 0; r < rows; ++r) {
    want[r] = kgrank_fuzz::reference(scores.data() + r * cols, cols, thresholds[r]);
    want_idx[r] =
        kgrank_fuzz::reference(scores.data() + r * cols, cols, scores[r * cols + static_cast<size_t>(truth[r])]);
  }
  std::vector<double> g(rows), e(rows), u(rows);
  std::vector<T> th_out(rows);
  for (kgrank::SimdLevel level : kgrank_fuzz::levels()) {
    kgrank::CountOptions opt;
    opt.simd = level;
    opt.threads = threads;
    std::fill(g.begin(), g.end(), -1.0);
    kgrank::count_rows(scores.data(), rows, cols, thresholds.data(), g.data(), e.data(), u.data(), opt);
    for (size_t r = 0; r < rows; ++r) {
      FUZZ_CHECK(g[r] == static_cast<double>(want[r].greater));
      FUZZ_CHECK(e[r] == static_cast<double>(want[r].equal));
      FUZZ_CHECK(u[r] == static_cast<double>(want[r].nan));
    }
    std::fill(g.begin(), g.end(), -1.0);
    kgrank::count_rows_by_index(scores.data(), rows, cols, truth.data(), th_out.data(), g.data(), e.data(), u.data(),
                                opt);
    for (size_t r = 0; r < rows; ++r) {
      FUZZ_CHECK(same_bits(th_out[r], scores[r * cols + static_cast<size_t>(truth[r])]));
      FUZZ_CHECK(g[r] == static_cast<double>(want_idx[r].greater));
      FUZZ_CHECK(e[r] == static_cast<double>(want_idx[r].equal));
      FUZZ_CHECK(u[r] == static_cast<double>(want_idx[r].nan));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  if (p.ConsumeBool()) {
    run<float>(p);
  } else {
    run<double>(p);
  }
  return 0;
}
