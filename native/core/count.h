// Row-wise counting of scores against per-row thresholds: the heart of rank computation.
// For row i of a row-major rows x cols matrix and threshold t_i:
//   greater[i] = #{j : s_ij > t_i},  equal[i] = #{j : s_ij == t_i},  nan[i] = #{j : s_ij is NaN}.
// Outputs are doubles (exact up to 2^53) so they can be handed to JavaScript as Float64Array without a copy.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels.h"
#include "simd.h"
#include "status.h"
#include "thread_pool.h"

namespace kgrank {

class FilterIndex;

struct CountOptions {
  SimdLevel simd = SimdLevel::Scalar;  // must satisfy simd_supported()
  unsigned threads = 0;                // 0 = hardware_threads()
  // An async job's cancellation flag and progress counter, or null. With one, the rows are cut into tasks of about
  // 1 MB even on one thread (so a cancel is seen at the next task boundary), the counting loops throw Cancelled
  // (thread_pool.h) when it is cancelled, and progress is counted in tasks' rows (or in row pieces, for rows longer
  // than a task). Results do not depend on it.
  JobControl* control = nullptr;
};

void count_rows(const float* scores, size_t rows, size_t cols, const float* thresholds, double* greater, double* equal,
                double* nan, const CountOptions& options);
void count_rows(const double* scores, size_t rows, size_t cols, const double* thresholds, double* greater,
                double* equal, double* nan, const CountOptions& options);

// As count_rows, with each row's threshold read from the row itself at column true_index[r] (the true
// candidate's own score), on the worker that streams that row; the thresholds are written to thresholds_out.
// Every true_index[r] must be in [0, cols).
void count_rows_by_index(const float* scores, size_t rows, size_t cols, const int32_t* true_index,
                         float* thresholds_out, double* greater, double* equal, double* nan,
                         const CountOptions& options);
void count_rows_by_index(const double* scores, size_t rows, size_t cols, const int32_t* true_index,
                         double* thresholds_out, double* greater, double* equal, double* nan,
                         const CountOptions& options);

// Filtered setting: as count_rows_by_index (truth[r] is the true answer's column), then every other known answer
// b of (anchor[r], relation[r]) in `index` is taken out of the counts: greater / equal lose its contribution and
// removed[r] counts the removed non-NaN candidates, so numCandidates = cols - nan - removed; it is -1 when the task's
// own (anchor, relation, truth) is not in the index (an evaluated triple must be one of the filter triples). Columns
// are entity ids: cols must equal index.num_entities(); anchor, relation and truth must be valid ids.
void count_rows_filtered(const float* scores, size_t rows, size_t cols, const int32_t* anchor, const int32_t* relation,
                         const int32_t* truth, const FilterIndex& index, float* thresholds_out, double* greater,
                         double* equal, double* nan, double* removed, const CountOptions& options);
void count_rows_filtered(const double* scores, size_t rows, size_t cols, const int32_t* anchor, const int32_t* relation,
                         const int32_t* truth, const FilterIndex& index, double* thresholds_out, double* greater,
                         double* equal, double* nan, double* removed, const CountOptions& options);

// A column slice of the filtered count (a chunked batch, whose scores arrive in slices of the entity axis): scores
// is rows x width, the columns [column_start, column_start + width) of the index's entity axis, and thresholds[r] is
// row r's true score, given (its column may lie in another slice). The slice is counted as count_rows, then every
// other known answer b of (anchor[r], relation[r]) inside the slice is taken out (its score is column
// b - column_start); answers outside the slice are left to their own slice. removed[r] counts the slice's removed
// non-NaN candidates, or is -1 when the task's own triple is not in the index. Over slices that tile
// [0, num_entities) the sums equal count_rows_filtered's with the same thresholds. column_start + width must be
// <= index.num_entities(); anchor, relation and truth must be valid ids (truth may lie outside the slice).
void count_rows_filtered_range(const float* scores, size_t rows, size_t width, size_t column_start,
                               const int32_t* anchor, const int32_t* relation, const int32_t* truth,
                               const FilterIndex& index, const float* thresholds, double* greater, double* equal,
                               double* nan, double* removed, const CountOptions& options);
void count_rows_filtered_range(const double* scores, size_t rows, size_t width, size_t column_start,
                               const int32_t* anchor, const int32_t* relation, const int32_t* truth,
                               const FilterIndex& index, const double* thresholds, double* greater, double* equal,
                               double* nan, double* removed, const CountOptions& options);

// A whole filtered evaluator batch in one call: triples (rows x 3 ids, row-major head, relation, tail, one score row
// each; cols = index.num_entities()) are checked against the index's id ranges and split into keys = [relation |
// anchor | truth] (rows each; anchor and truth by the index's side), counted as count_rows_filtered, and turned into
// ranks in out (6 x rows): [optimistic | pessimistic | realistic | numCandidates | weight = NaN | scratch].
// Statuses: IdOutOfRange (index = flat index into triples; nothing counted), NanTrueScore (index = first such row),
// NotInIndex (index = first row whose own triple is not among the filter triples). Each id of `triples` is read once
// and counting uses a private copy of the keys, so triples and keys may be memory another thread writes.
Status rank_triples(const float* scores, size_t rows, const int32_t* triples, const FilterIndex& index, int32_t* keys,
                    float* thresholds_out, double* out, const CountOptions& options);
Status rank_triples(const double* scores, size_t rows, const int32_t* triples, const FilterIndex& index, int32_t* keys,
                    double* thresholds_out, double* out, const CountOptions& options);

// The keys of an evaluator batch: triples (rows x 3, row-major head, relation, tail) checked against the index's id
// ranges and split into keys = [relation | anchor | truth] (rows each; anchor and truth by the index's side). Each id
// is read once and checked as it is read, so `triples` may be memory another thread writes. IdOutOfRange at the first
// id outside its range (index = flat index into triples; the keys before it are written).
Status split_triple_keys(const int32_t* triples, size_t rows, const FilterIndex& index, int32_t* keys);

// One contiguous run at the given level (single-threaded); the building block of count_rows.
Counts count_run(const float* x, size_t n, float t, SimdLevel simd);
Counts count_run(const double* x, size_t n, double t, SimdLevel simd);

// Streaming read of a buffer (the machine's memory-bandwidth probe): the counting kernels' thread split, the level's
// vector width with aligned loads, and no work per element beyond an add. Returns a checksum so the read cannot be
// elided. `streaming`: with the level's non-temporal loads (the plain ones where it has none).
uint64_t bandwidth_read(const void* data, size_t bytes, const CountOptions& options, bool streaming = false);

}  // namespace kgrank
