// Row-wise counting (plain, by index, filtered; one engine, count_rows_impl) split over the thread pool, and the
// one-call filtered batch rank_triples. Fallback twins: src/fallback/count.ts, src/fallback/filter-index.ts.

#include "count.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <type_traits>
#include <vector>

#include "filter_index.h"
#include "thread_pool.h"

namespace kgrank {

namespace {

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

// An adjust whose correction can be computed by the kernel that streams the row (filtered's Adjust): it has
// job(r, t) (the row's answers, for the fused kernel), settle(r, c, known, found) (the correction, as adjust's) and
// fused (the level's count_answers_f32, or null: then it is called as a plain adjust).
template <typename AdjustFn, typename = void>
struct Fusable : std::false_type {};
template <typename AdjustFn>
struct Fusable<AdjustFn, std::void_t<decltype(&AdjustFn::settle)>> : std::true_type {};

// threshold(r) gives row r's threshold; it is called once per row, on the thread that counts the row (or, for
// rows split into column pieces, once per row before the pieces are counted). adjust(r, t, counts) may correct a
// row's counts before they are stored (the filtered setting), on the thread that counted the row. prepare(r0, r1)
// runs before rows [r0, r1) are counted, on the thread that counts them (batched index lookups, prefetches). A
// Fusable adjust with a fused kernel replaces kernel + adjust for float32 whole rows (the kernel takes the answers out
// as it streams the row); rows split into column pieces still get kernel + adjust.
template <typename T, typename Fn, typename ThresholdFn, typename AdjustFn = NoAdjust, typename PrepareFn = NoPrepare>
void count_rows_impl(const T* scores, size_t rows, size_t cols, ThresholdFn threshold, double* greater, double* equal,
                     double* nan, const CountOptions& options, Fn kernel, AdjustFn adjust = AdjustFn(),
                     PrepareFn prepare = PrepareFn()) {
  if (rows == 0) return;
  const size_t total_bytes = rows * cols * sizeof(T);
  const unsigned threads = total_bytes < kParallelBytes ? 1u : options.threads;
  const size_t piece = std::max<size_t>(1, kPieceBytes / sizeof(T));
  JobControl* const control = options.control;
  if (cols <= piece || threads == 1) {
    // Whole rows per task: results are written directly, no reduction. One thread takes all rows as one task, unless
    // the job may be cancelled (then tasks of about a piece each, so the cancel is seen between them).
    const size_t rows_per_task =
        threads == 1 && control == nullptr ? rows : std::max<size_t>(1, piece / std::max<size_t>(cols, 1));
    const size_t tasks = (rows + rows_per_task - 1) / rows_per_task;
    if (control != nullptr) control->add_total(rows);
    parallel_for(
        tasks, threads,
        [&](size_t task) {
          const size_t r0 = task * rows_per_task;
          const size_t r1 = std::min(rows, r0 + rows_per_task);
          prepare(r0, r1);
          const auto store = [&](size_t r, const Counts& c) {
            greater[r] = static_cast<double>(c.greater);
            equal[r] = static_cast<double>(c.equal);
            nan[r] = static_cast<double>(c.nan);
          };
          bool done = false;
          if constexpr (Fusable<AdjustFn>::value && std::is_same<T, float>::value) {
            if (adjust.fused != nullptr) {
              // A row's answers are taken out by the kernel that streams it, each block of them once the stream has
              // passed it (the gathers hit lines just loaded, in L1).
              for (size_t r = r0; r < r1; ++r) {
                const T t = threshold(r);
                Counts known;
                bool found = false;
                Counts c = adjust.fused(scores + r * cols, cols, t, adjust.job(r, t), &known, &found);
                adjust.settle(r, c, known, found);
                store(r, c);
              }
              done = true;
            }
          }
          if (!done) {
            for (size_t r = r0; r < r1; ++r) {
              const T t = threshold(r);
              Counts c = kernel(scores + r * cols, cols, t);
              adjust(r, t, c);
              store(r, c);
            }
          }
          if (control != nullptr) control->advance(r1 - r0);
        },
        control);
    return;
  }
  // Long rows: split each row into column pieces, count them in parallel, then add the pieces up per row.
  const size_t pieces_per_row = (cols + piece - 1) / piece;
  std::vector<T> row_threshold(rows);
  for (size_t r = 0; r < rows; ++r) row_threshold[r] = threshold(r);
  std::vector<Counts> partial(rows * pieces_per_row);
  if (control != nullptr) control->add_total(rows * pieces_per_row);
  parallel_for(
      rows * pieces_per_row, threads,
      [&](size_t task) {
        const size_t r = task / pieces_per_row;
        const size_t c0 = (task % pieces_per_row) * piece;
        const size_t len = std::min(piece, cols - c0);
        partial[task] = kernel(scores + r * cols + c0, len, row_threshold[r]);
        if (control != nullptr) control->advance(1);
      },
      control);
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

namespace {
CountF32Fn count_kernel(const float*, SimdLevel level) { return dispatch(level, KernelFamily::Count).count_f32; }
CountF64Fn count_kernel(const double*, SimdLevel level) { return dispatch(level, KernelFamily::Count).count_f64; }
}  // namespace

Counts count_run(const float* x, size_t n, float t, SimdLevel simd) { return count_kernel(x, simd)(x, n, t); }
Counts count_run(const double* x, size_t n, double t, SimdLevel simd) { return count_kernel(x, simd)(x, n, t); }

void count_rows(const float* scores, size_t rows, size_t cols, const float* thresholds, double* greater, double* equal,
                double* nan, const CountOptions& options) {
  count_rows_impl(
      scores, rows, cols, [=](size_t r) { return thresholds[r]; }, greater, equal, nan, options,
      count_kernel(scores, options.simd));
}

void count_rows(const double* scores, size_t rows, size_t cols, const double* thresholds, double* greater,
                double* equal, double* nan, const CountOptions& options) {
  count_rows_impl(
      scores, rows, cols, [=](size_t r) { return thresholds[r]; }, greater, equal, nan, options,
      count_kernel(scores, options.simd));
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

// The filtered count of columns [column_start, column_start + width) of the entity axis (the whole axis, or one slice
// of a chunked batch): rows are `width` long; threshold(r) gives row r's true score (gathered from the row, or given).
template <typename T, typename Fn, typename ThresholdFn, typename PrefetchFn>
void filtered(const T* scores, size_t rows, size_t width, size_t column_start, const int32_t* anchor,
              const int32_t* relation, const int32_t* truth, const FilterIndex& index, ThresholdFn threshold,
              PrefetchFn prefetch, double* greater, double* equal, double* nan, double* removed,
              const CountOptions& options, Fn kernel) {
  // Take every other known answer of the task out of the counts: its greater / equal contribution, and one
  // candidate if its score is not NaN (NaN scores were never candidates).
  const AnswersF32Fn answers_f32 = dispatch(options.simd, KernelFamily::Answers).answers_f32;
  const bool whole = column_start == 0 && width == static_cast<size_t>(index.num_entities());
  // Index lookups for a run of rows are batched (packed_answers_many) before the run is counted; float32 scores
  // with 32-bit entries then go to the ISA kernel (AVX2 gathers eight answers' scores at a time, AVX-512 sixteen).
  // A slice visits only the answers inside it (FilterIndex::for_each_answer_in): a few per row and slice.
  const bool packed = whole && std::is_same<T, float>::value && !index.wide();
  std::vector<const uint32_t*> first(packed ? rows : 0);
  std::vector<size_t> count(packed ? rows : 0);
  // The entries' id mask, set once here: tasks on other threads read it while prepare() runs.
  uint32_t mask = 0;
  if (packed) index.packed_answers_many(anchor, relation, 0, nullptr, nullptr, &mask);
  const auto prepare = [&](size_t r0, size_t r1) {
    prefetch(r0, r1);
    uint32_t same_mask = 0;
    if (packed)
      index.packed_answers_many(anchor + r0, relation + r0, r1 - r0, first.data() + r0, count.data() + r0, &same_mask);
  };
  const int32_t lo = static_cast<int32_t>(column_start);
  const int32_t hi = static_cast<int32_t>(column_start + width);
  // count_rows_impl's adjust, or the fused kernel's settle where the level has one (packed answers only).
  struct Adjust {
    const T* scores;
    size_t width;
    const int32_t* anchor;
    const int32_t* relation;
    const int32_t* truth;
    const FilterIndex& index;
    bool packed, whole;
    int32_t lo, hi;
    const std::vector<const uint32_t*>& first;
    const std::vector<size_t>& count;
    uint32_t mask;
    AnswersF32Fn answers_f32;
    CountAnswersF32Fn fused;
    double* removed;

    // Packed answers only: row r's answers for answers_f32 / the fused kernel.
    AnswerJob job(size_t r, T t) const {
      return AnswerJob{reinterpret_cast<const float*>(scores + r * width),
                       first[r],
                       count[r],
                       mask,
                       truth[r],
                       static_cast<float>(t)};
    }

    // Takes row r's known answers (their counts) out of c; found: the task's own triple is among them.
    void settle(size_t r, Counts& c, const Counts& known, bool found) const {
      c.greater -= known.greater;
      c.equal -= known.equal;
      // -1 flags a task whose own triple is not in the index (the caller reports it).
      removed[r] = found ? static_cast<double>(known.nan) : -1.0;
    }

    void operator()(size_t r, T t, Counts& c) const {
      if (packed) {
        const AnswerJob j = job(r, t);
        // The task's own triple must be among the answers: a binary search in the run of entries (the gathers
        // read the same run next).
        bool found = false;
        if (count[r] > 0 && j.own >= 0) {
          const uint32_t key = (first[r][0] & ~mask) | static_cast<uint32_t>(j.own);
          found = std::binary_search(first[r], first[r] + count[r], key);
        }
        settle(r, c, answers_f32(j.row, j.entries, j.count, j.mask, j.own, j.t), found);
        return;
      }
      const T* row = scores + r * width;
      const int32_t own = truth[r];
      Counts known;
      bool found = false;
      const auto take_out = [&](int32_t b) {
        if (b == own) {
          found = true;
          return;
        }
        const T v = row[b - lo];
        known.greater += v > t;
        known.equal += v == t;
        known.nan += v == v;
      };
      if (whole) {
        index.for_each_answer(anchor[r], relation[r], take_out);
      } else {
        index.for_each_answer_in(anchor[r], relation[r], lo, hi, take_out);
        // The own answer outside the slice: is it a known answer all the same?
        if (!found && (own < lo || own >= hi)) found = index.contains(anchor[r], relation[r], own);
      }
      settle(r, c, known, found);
    }
  };
  const Adjust adjust{
      scores,   width,       anchor,
      relation, truth,       index,
      packed,   whole,       lo,
      hi,       first,       count,
      mask,     answers_f32, packed ? dispatch(options.simd, KernelFamily::Count).count_answers_f32 : nullptr,
      removed};
  count_rows_impl(scores, rows, width, threshold, greater, equal, nan, options, kernel, adjust, prepare);
}

template <typename T, typename Fn>
void filtered_whole(const T* scores, size_t rows, size_t cols, const int32_t* anchor, const int32_t* relation,
                    const int32_t* truth, const FilterIndex& index, T* thresholds_out, double* greater, double* equal,
                    double* nan, double* removed, const CountOptions& options, Fn kernel) {
  const auto gather = [=](size_t r) {
    const T t = scores[r * cols + static_cast<size_t>(truth[r])];
    thresholds_out[r] = t;
    return t;
  };
  const auto prefetch = [=](size_t r0, size_t r1) { prefetch_true_scores(scores, cols, truth, r0, r1); };
  filtered(scores, rows, cols, 0, anchor, relation, truth, index, gather, prefetch, greater, equal, nan, removed,
           options, kernel);
}

template <typename T, typename Fn>
void filtered_range(const T* scores, size_t rows, size_t width, size_t column_start, const int32_t* anchor,
                    const int32_t* relation, const int32_t* truth, const FilterIndex& index, const T* thresholds,
                    double* greater, double* equal, double* nan, double* removed, const CountOptions& options,
                    Fn kernel) {
  const auto given = [=](size_t r) { return thresholds[r]; };
  filtered(scores, rows, width, column_start, anchor, relation, truth, index, given, NoPrepare(), greater, equal, nan,
           removed, options, kernel);
}

}  // namespace

void count_rows_filtered(const float* scores, size_t rows, size_t cols, const int32_t* anchor, const int32_t* relation,
                         const int32_t* truth, const FilterIndex& index, float* thresholds_out, double* greater,
                         double* equal, double* nan, double* removed, const CountOptions& options) {
  filtered_whole(scores, rows, cols, anchor, relation, truth, index, thresholds_out, greater, equal, nan, removed,
                 options, count_kernel(scores, options.simd));
}

void count_rows_filtered(const double* scores, size_t rows, size_t cols, const int32_t* anchor, const int32_t* relation,
                         const int32_t* truth, const FilterIndex& index, double* thresholds_out, double* greater,
                         double* equal, double* nan, double* removed, const CountOptions& options) {
  filtered_whole(scores, rows, cols, anchor, relation, truth, index, thresholds_out, greater, equal, nan, removed,
                 options, count_kernel(scores, options.simd));
}

void count_rows_filtered_range(const float* scores, size_t rows, size_t width, size_t column_start,
                               const int32_t* anchor, const int32_t* relation, const int32_t* truth,
                               const FilterIndex& index, const float* thresholds, double* greater, double* equal,
                               double* nan, double* removed, const CountOptions& options) {
  filtered_range(scores, rows, width, column_start, anchor, relation, truth, index, thresholds, greater, equal, nan,
                 removed, options, count_kernel(scores, options.simd));
}

void count_rows_filtered_range(const double* scores, size_t rows, size_t width, size_t column_start,
                               const int32_t* anchor, const int32_t* relation, const int32_t* truth,
                               const FilterIndex& index, const double* thresholds, double* greater, double* equal,
                               double* nan, double* removed, const CountOptions& options) {
  filtered_range(scores, rows, width, column_start, anchor, relation, truth, index, thresholds, greater, equal, nan,
                 removed, options, count_kernel(scores, options.simd));
}

Status split_triple_keys(const int32_t* t, size_t rows, const FilterIndex& index, int32_t* keys) {
  int32_t* relation = keys;
  int32_t* anchor = keys + rows;
  int32_t* truth = keys + 2 * rows;
  const uint32_t entities = static_cast<uint32_t>(index.num_entities());
  const uint32_t relations = static_cast<uint32_t>(index.num_relations());
  const bool tail = index.side() == FilterIndex::Side::Tail;
  for (size_t r = 0; r < rows; ++r) {
    const int32_t h = t[3 * r], rel = t[3 * r + 1], tl = t[3 * r + 2];
    if (static_cast<uint32_t>(h) >= entities)
      return Status::at(StatusCode::IdOutOfRange, 3 * r, "head id out of range");
    if (static_cast<uint32_t>(rel) >= relations) {
      return Status::at(StatusCode::IdOutOfRange, 3 * r + 1, "relation id out of range");
    }
    if (static_cast<uint32_t>(tl) >= entities) {
      return Status::at(StatusCode::IdOutOfRange, 3 * r + 2, "tail id out of range");
    }
    relation[r] = rel;
    anchor[r] = tail ? h : tl;
    truth[r] = tail ? tl : h;
  }
  return Status::success();
}

namespace {
template <typename T>
Status rank_triples_impl(const T* scores, size_t rows, const int32_t* t, const FilterIndex& index, int32_t* keys,
                         T* thresholds, double* out, const CountOptions& options) {
  // The keys are split into memory of our own and counted from there; `keys` (the caller's) only receives a copy.
  // Reading them back from `keys` let a caller who changes that array meanwhile (shared memory) move an id out of
  // range after it was checked: each triple id is read exactly once, here, and checked as it is read.
  std::vector<int32_t> own(3 * rows);
  int32_t* relation = own.data();
  int32_t* anchor = relation + rows;
  int32_t* truth = relation + 2 * rows;
  Status split = split_triple_keys(t, rows, index, own.data());
  if (!split.ok()) return split;
  const size_t cols = static_cast<size_t>(index.num_entities());
  double* greater = out;
  double* equal = out + rows;
  double* realistic = out + 2 * rows;
  double* nan = out + 3 * rows;
  double* weight = out + 4 * rows;
  double* removed = out + 5 * rows;
  count_rows_filtered(scores, rows, cols, anchor, relation, truth, index, thresholds, greater, equal, nan, removed,
                      options);
  std::copy(own.begin(), own.end(), keys);
  for (size_t r = 0; r < rows; ++r) {
    if (thresholds[r] != thresholds[r]) return Status::at(StatusCode::NanTrueScore, r, "the true score is NaN");
  }
  for (size_t r = 0; r < rows; ++r) {
    if (removed[r] < 0) return Status::at(StatusCode::NotInIndex, r, "the triple is not among the filter triples");
  }
  // The counts become ranks in place (as the evaluator's JavaScript path computes them): the true candidate is a
  // column, so optimistic = 1 + greater, pessimistic = greater + equal, candidates = columns - NaN - removed.
  const double n = static_cast<double>(cols);
  for (size_t r = 0; r < rows; ++r) {
    const double g = greater[r];
    const double opt = 1 + g;
    const double pess = g + equal[r];
    greater[r] = opt;
    equal[r] = pess;
    realistic[r] = 0.5 * (opt + pess);
    nan[r] = n - nan[r] - removed[r];
    weight[r] = std::numeric_limits<double>::quiet_NaN();
  }
  return Status::success();
}
}  // namespace

Status rank_triples(const float* scores, size_t rows, const int32_t* triples, const FilterIndex& index, int32_t* keys,
                    float* thresholds_out, double* out, const CountOptions& options) {
  return rank_triples_impl(scores, rows, triples, index, keys, thresholds_out, out, options);
}

Status rank_triples(const double* scores, size_t rows, const int32_t* triples, const FilterIndex& index, int32_t* keys,
                    double* thresholds_out, double* out, const CountOptions& options) {
  return rank_triples_impl(scores, rows, triples, index, keys, thresholds_out, out, options);
}

void count_rows_by_index(const float* scores, size_t rows, size_t cols, const int32_t* true_index,
                         float* thresholds_out, double* greater, double* equal, double* nan,
                         const CountOptions& options) {
  by_index(scores, rows, cols, true_index, thresholds_out, greater, equal, nan, options,
           count_kernel(scores, options.simd));
}

void count_rows_by_index(const double* scores, size_t rows, size_t cols, const int32_t* true_index,
                         double* thresholds_out, double* greater, double* equal, double* nan,
                         const CountOptions& options) {
  by_index(scores, rows, cols, true_index, thresholds_out, greater, equal, nan, options,
           count_kernel(scores, options.simd));
}

uint64_t bandwidth_read(const void* data, size_t bytes, const CountOptions& options, bool streaming) {
  const KernelTable& kernels = dispatch(options.simd, KernelFamily::Read);
  const ReadFn read = streaming ? kernels.read_stream : kernels.read;
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
