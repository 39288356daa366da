#include "count.h"

#include <algorithm>
#include <atomic>
#include <type_traits>
#include <vector>

#include "filter_index.h"
#include "thread_pool.h"

namespace kgrank {

namespace {

using CountF32 = Counts (*)(const float*, size_t, float);
using CountF64 = Counts (*)(const double*, size_t, double);
using ReadFn = uint64_t (*)(const unsigned char*, size_t);

CountF32 pick_f32(SimdLevel level) {
  switch (level) {
#ifdef KGRANK_HAVE_AVX2
    case SimdLevel::AVX2: return isa::count_f32_avx2;
#endif
#ifdef KGRANK_HAVE_AVX512
    case SimdLevel::AVX512: return isa::count_f32_avx512;
#endif
#ifdef KGRANK_HAVE_NEON
    case SimdLevel::NEON: return isa::count_f32_neon;
#endif
    default: return isa::count_f32_scalar;
  }
}

CountF64 pick_f64(SimdLevel level) {
  switch (level) {
#ifdef KGRANK_HAVE_AVX2
    case SimdLevel::AVX2: return isa::count_f64_avx2;
#endif
#ifdef KGRANK_HAVE_AVX512
    case SimdLevel::AVX512: return isa::count_f64_avx512;
#endif
#ifdef KGRANK_HAVE_NEON
    case SimdLevel::NEON: return isa::count_f64_neon;
#endif
    default: return isa::count_f64_scalar;
  }
}

ReadFn pick_read(SimdLevel level) {
  switch (level) {
#ifdef KGRANK_HAVE_AVX2
    case SimdLevel::AVX2: return isa::read_avx2;
#endif
#ifdef KGRANK_HAVE_AVX512
    case SimdLevel::AVX512: return isa::read_avx512;
#endif
#ifdef KGRANK_HAVE_NEON
    case SimdLevel::NEON: return isa::read_neon;
#endif
    default: return isa::read_scalar;
  }
}

SimdLevel usable(SimdLevel level) { return simd_supported(level) ? level : SimdLevel::Scalar; }

// Thresholds read from random columns of rows [r0, r1) (the true answers' own scores): fetched together before the
// rows are counted, so rows not in cache yet cost one overlapped wait, not one stall per row.
template <typename T>
void prefetch_true_scores(const T* scores, size_t cols, const int32_t* true_index, size_t r0, size_t r1) {
  for (size_t r = r0; r < r1; ++r) __builtin_prefetch(scores + r * cols + static_cast<size_t>(true_index[r]), 0, 3);
}

// Work is cut into pieces of about this many bytes: large enough to amortise scheduling, small enough to balance.
constexpr size_t kPieceBytes = size_t{1} << 20;
// Below this many bytes in total, threads cost more than they save.
constexpr size_t kParallelBytes = size_t{1} << 18;

// Leaves a row's counts as they are.
struct NoAdjust {
  template <typename T>
  void operator()(size_t, T, Counts&) const {}
};

// Does nothing before a run of rows.
struct NoPrepare {
  void operator()(size_t, size_t) const {}
};

// threshold(r) gives row r's threshold; it is called once per row, on the thread that counts the row (or, for
// rows split into column pieces, once per row before the pieces are counted). adjust(r, t, counts) may correct a
// row's counts before they are stored (the filtered setting), on the thread that counted the row. prepare(r0, r1)
// runs before rows [r0, r1) are counted, on the thread that counts them (batched index lookups, prefetches).
template <typename T, typename Fn, typename ThresholdFn, typename AdjustFn = NoAdjust, typename PrepareFn = NoPrepare>
void count_rows_impl(const T* scores, size_t rows, size_t cols, ThresholdFn threshold, double* greater, double* equal,
                     double* nan, const CountOptions& options, Fn kernel, AdjustFn adjust = AdjustFn(),
                     PrepareFn prepare = PrepareFn()) {
  if (rows == 0) return;
  const size_t total_bytes = rows * cols * sizeof(T);
  const unsigned threads = total_bytes < kParallelBytes ? 1u : options.threads;
  const size_t piece = std::max<size_t>(1, kPieceBytes / sizeof(T));
  if (cols <= piece || threads == 1) {
    // Whole rows per task: results are written directly, no reduction.
    const size_t rows_per_task = threads == 1 ? rows : std::max<size_t>(1, piece / std::max<size_t>(cols, 1));
    const size_t tasks = (rows + rows_per_task - 1) / rows_per_task;
    parallel_for(tasks, threads, [&](size_t task) {
      const size_t r0 = task * rows_per_task;
      const size_t r1 = std::min(rows, r0 + rows_per_task);
      prepare(r0, r1);
      for (size_t r = r0; r < r1; ++r) {
        const T t = threshold(r);
        Counts c = kernel(scores + r * cols, cols, t);
        adjust(r, t, c);
        greater[r] = static_cast<double>(c.greater);
        equal[r] = static_cast<double>(c.equal);
        nan[r] = static_cast<double>(c.nan);
      }
    });
    return;
  }
  // Long rows: split each row into column pieces, count them in parallel, then add the pieces up per row.
  const size_t pieces_per_row = (cols + piece - 1) / piece;
  std::vector<T> row_threshold(rows);
  for (size_t r = 0; r < rows; ++r) row_threshold[r] = threshold(r);
  std::vector<Counts> partial(rows * pieces_per_row);
  parallel_for(rows * pieces_per_row, threads, [&](size_t task) {
    const size_t r = task / pieces_per_row;
    const size_t c0 = (task % pieces_per_row) * piece;
    const size_t len = std::min(piece, cols - c0);
    partial[task] = kernel(scores + r * cols + c0, len, row_threshold[r]);
  });
  prepare(0, rows);
  for (size_t r = 0; r < rows; ++r) {
    Counts sum;
    for (size_t p = 0; p < pieces_per_row; ++p) {
      const Counts& c = partial[r * pieces_per_row + p];
      sum.greater += c.greater;
      sum.equal += c.equal;
      sum.nan += c.nan;
    }
    adjust(r, row_threshold[r], sum);
    greater[r] = static_cast<double>(sum.greater);
    equal[r] = static_cast<double>(sum.equal);
    nan[r] = static_cast<double>(sum.nan);
  }
}

}  // namespace

Counts count_run(const float* x, size_t n, float t, SimdLevel simd) { return pick_f32(usable(simd))(x, n, t); }
Counts count_run(const double* x, size_t n, double t, SimdLevel simd) { return pick_f64(usable(simd))(x, n, t); }

void count_rows(const float* scores, size_t rows, size_t cols, const float* thresholds, double* greater,
                double* equal, double* nan, const CountOptions& options) {
  count_rows_impl(scores, rows, cols, [=](size_t r) { return thresholds[r]; }, greater, equal, nan, options,
                  pick_f32(usable(options.simd)));
}

void count_rows(const double* scores, size_t rows, size_t cols, const double* thresholds, double* greater,
                double* equal, double* nan, const CountOptions& options) {
  count_rows_impl(scores, rows, cols, [=](size_t r) { return thresholds[r]; }, greater, equal, nan, options,
                  pick_f64(usable(options.simd)));
}

namespace {
template <typename T, typename Fn>
void by_index(const T* scores, size_t rows, size_t cols, const int32_t* true_index, T* thresholds_out, double* greater,
              double* equal, double* nan, const CountOptions& options, Fn kernel) {
  const auto gather = [=](size_t r) {
    const T t = scores[r * cols + static_cast<size_t>(true_index[r])];
    thresholds_out[r] = t;
    return t;
  };
  const auto prepare = [=](size_t r0, size_t r1) { prefetch_true_scores(scores, cols, true_index, r0, r1); };
  count_rows_impl(scores, rows, cols, gather, greater, equal, nan, options, kernel, NoAdjust(), prepare);
}
template <typename T, typename Fn>
void filtered(const T* scores, size_t rows, size_t cols, const int32_t* anchor, const int32_t* relation,
              const int32_t* truth, const FilterIndex& index, T* thresholds_out, double* greater, double* equal,
              double* nan, double* removed, const CountOptions& options, Fn kernel) {
  const auto gather = [=](size_t r) {
    const T t = scores[r * cols + static_cast<size_t>(truth[r])];
    thresholds_out[r] = t;
    return t;
  };
  // Take every other known answer of the task out of the counts: its greater / equal contribution, and one
  // candidate if its score is not NaN (NaN scores were never candidates).
  using AnswersFn = Counts (*)(const float*, const uint32_t*, size_t, uint32_t, int32_t, float);
  AnswersFn answers_f32 = isa::answers_f32_scalar;
  const SimdLevel level = usable(options.simd);
  (void)level;
#ifdef KGRANK_HAVE_AVX2
  if (level == SimdLevel::AVX2) answers_f32 = isa::answers_f32_avx2;
#endif
#ifdef KGRANK_HAVE_AVX512
  if (level == SimdLevel::AVX512) answers_f32 = isa::answers_f32_avx512;
#endif
  // Index lookups for a run of rows are batched (packed_answers_many) before the run is counted; float32 scores
  // with 32-bit entries then go to the ISA kernel (AVX2 gathers eight answers' scores at a time, AVX-512 sixteen).
  const bool packed = std::is_same<T, float>::value && !index.wide();
  std::vector<const uint32_t*> first(packed ? rows : 0);
  std::vector<size_t> count(packed ? rows : 0);
  uint32_t mask = 0;
  const auto prepare = [&](size_t r0, size_t r1) {
    prefetch_true_scores(scores, cols, truth, r0, r1);
    if (packed) index.packed_answers_many(anchor + r0, relation + r0, r1 - r0, first.data() + r0, count.data() + r0, &mask);
  };
  const auto adjust = [&](size_t r, T t, Counts& c) {
    const T* row = scores + r * cols;
    const int32_t own = truth[r];
    Counts known;
    bool found = false;
    if (packed) {
      known = answers_f32(reinterpret_cast<const float*>(row), first[r], count[r], mask, own, static_cast<float>(t));
      // The task's own triple must be among the answers: a binary search in entries the gather just touched.
      if (count[r] > 0 && own >= 0) {
        const uint32_t key = (first[r][0] & ~mask) | static_cast<uint32_t>(own);
        found = std::binary_search(first[r], first[r] + count[r], key);
      }
    } else {
      index.for_each_answer(anchor[r], relation[r], [&](int32_t b) {
        if (b == own) {
          found = true;
          return;
        }
        const T v = row[b];
        known.greater += v > t;
        known.equal += v == t;
        known.nan += v == v;
      });
    }
    c.greater -= known.greater;
    c.equal -= known.equal;
    // -1 flags a task whose own triple is not in the index (the caller reports it).
    removed[r] = found ? static_cast<double>(known.nan) : -1.0;
  };
  count_rows_impl(scores, rows, cols, gather, greater, equal, nan, options, kernel, adjust, prepare);
}

}  // namespace

void count_rows_filtered(const float* scores, size_t rows, size_t cols, const int32_t* anchor,
                         const int32_t* relation, const int32_t* truth, const FilterIndex& index, float* thresholds_out,
                         double* greater, double* equal, double* nan, double* removed, const CountOptions& options) {
  filtered(scores, rows, cols, anchor, relation, truth, index, thresholds_out, greater, equal, nan, removed, options,
           pick_f32(usable(options.simd)));
}

void count_rows_filtered(const double* scores, size_t rows, size_t cols, const int32_t* anchor,
                         const int32_t* relation, const int32_t* truth, const FilterIndex& index,
                         double* thresholds_out, double* greater, double* equal, double* nan, double* removed,
                         const CountOptions& options) {
  filtered(scores, rows, cols, anchor, relation, truth, index, thresholds_out, greater, equal, nan, removed, options,
           pick_f64(usable(options.simd)));
}

void count_rows_by_index(const float* scores, size_t rows, size_t cols, const int32_t* true_index,
                         float* thresholds_out, double* greater, double* equal, double* nan, const CountOptions& options) {
  by_index(scores, rows, cols, true_index, thresholds_out, greater, equal, nan, options, pick_f32(usable(options.simd)));
}

void count_rows_by_index(const double* scores, size_t rows, size_t cols, const int32_t* true_index,
                         double* thresholds_out, double* greater, double* equal, double* nan,
                         const CountOptions& options) {
  by_index(scores, rows, cols, true_index, thresholds_out, greater, equal, nan, options, pick_f64(usable(options.simd)));
}

uint64_t bandwidth_read(const void* data, size_t bytes, const CountOptions& options) {
  const ReadFn read = pick_read(usable(options.simd));
  const auto* p = static_cast<const unsigned char*>(data);
  const unsigned threads = bytes < kParallelBytes ? 1u : options.threads;
  const size_t pieces = (bytes + kPieceBytes - 1) / kPieceBytes;
  std::atomic<uint64_t> sum{0};
  parallel_for(pieces, threads, [&](size_t i) {
    const size_t off = i * kPieceBytes;
    sum.fetch_add(read(p + off, std::min(kPieceBytes, bytes - off)), std::memory_order_relaxed);
  });
  return sum.load();
}

}  // namespace kgrank
