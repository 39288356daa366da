// Bindings of the counting kernel and the memory-bandwidth probe.
#include <napi.h>

#include <algorithm>
#include <vector>

#include "../core/count.h"
#include "args.h"
#include "async.h"
#include "common.h"

namespace kgrank_addon {

namespace {

// Everything a counting job needs, gathered and checked on the JavaScript thread. The true indices are the job's own
// copy, checked after copying: the caller's array may change the moment it is read (a SharedArrayBuffer written by
// another thread, or any array once an async call has returned), and the kernel indexes the rows with them.
struct CountJob : ScoreRowSlices<CountJob> {
  napi_typedarray_type type;
  const void* scores;
  // Thresholds: read from here, or, when true_index is set, gathered from the rows and written here.
  void* thresholds;
  std::vector<int32_t> true_index;  // empty: thresholds are given
  size_t rows;
  size_t cols;
  double* greater;
  double* equal;
  double* nan;
  CountOptions options;

  // Rows [r0, r1): the kernels count each row on its own, so any split of the rows gives the same counts.
  void run_range(size_t r0, size_t r1, kgrank::JobControl* control) const {
    CountOptions options = this->options;
    options.control = control;
    const size_t n = r1 - r0;
    if (!true_index.empty()) {
      if (type == napi_float32_array) {
        kgrank::count_rows_by_index(static_cast<const float*>(scores) + r0 * cols, n, cols, true_index.data() + r0,
                                    static_cast<float*>(thresholds) + r0, greater + r0, equal + r0, nan + r0, options);
      } else {
        kgrank::count_rows_by_index(static_cast<const double*>(scores) + r0 * cols, n, cols, true_index.data() + r0,
                                    static_cast<double*>(thresholds) + r0, greater + r0, equal + r0, nan + r0, options);
      }
      return;
    }
    if (type == napi_float32_array) {
      kgrank::count_rows(static_cast<const float*>(scores) + r0 * cols, n, cols,
                         static_cast<const float*>(thresholds) + r0, greater + r0, equal + r0, nan + r0, options);
    } else {
      kgrank::count_rows(static_cast<const double*>(scores) + r0 * cols, n, cols,
                         static_cast<const double*>(thresholds) + r0, greater + r0, equal + r0, nan + r0, options);
    }
  }
};

// countScores({ scores, numColumns, thresholds, greater, equal, nan, simd, threads }); countScoresByIndex: the same
// plus trueIndex (Int32Array), thresholds then being written (src/contract/addon.ts CountScoresArgs).
CountJob count_job(const Args& args, bool by_index) {
  Napi::TypedArray scores = args.floats("scores");
  const napi_typedarray_type type = scores.TypedArrayType();
  const size_t cols = args.size("numColumns", 1);
  const size_t length = scores.ElementLength();
  if (length % cols != 0) args.range_error("scores", "length must be a multiple of numColumns");
  const size_t rows = length / cols;
  Napi::TypedArray thresholds = args.typed("thresholds", type);
  expect_length(args, "thresholds", thresholds, rows, "one element per row");
  double* outs[3];
  const char* names[3] = {"greater", "equal", "nan"};
  for (size_t k = 0; k < 3; ++k) {
    Napi::TypedArray out = args.typed(names[k], napi_float64_array);
    expect_length(args, names[k], out, rows, "one element per row");
    outs[k] = static_cast<double*>(raw_data(out));
  }
  CountJob job;
  job.type = type;
  job.rows = rows;
  job.cols = cols;
  job.greater = outs[0];
  job.equal = outs[1];
  job.nan = outs[2];
  job.options = args.options();
  job.scores = raw_data(scores);
  job.thresholds = raw_data(thresholds);
  if (by_index) {
    Napi::TypedArray index = args.typed("trueIndex", napi_int32_array);
    expect_length(args, "trueIndex", index, rows, "one element per row");
    const auto* idx = static_cast<const int32_t*>(raw_data(index));
    job.true_index.assign(idx, idx + rows);
    for (size_t r = 0; r < rows; ++r) {
      const int32_t i = job.true_index[r];
      if (i < 0 || static_cast<size_t>(i) >= cols) {
        args.range_error("trueIndex[" + std::to_string(r) + "]",
                         "is " + std::to_string(i) + ", outside [0, numColumns)");
      }
    }
  }
  return job;
}

Napi::Value CountScores(const Napi::CallbackInfo& info) {
  count_job(Args(info, "countScores"), false).run();
  return info.Env().Undefined();
}

Napi::Value CountScoresByIndex(const Napi::CallbackInfo& info) {
  count_job(Args(info, "countScoresByIndex"), true).run();
  return info.Env().Undefined();
}

// The sync form's record, then an optional job control (async.h); every array of the record is held until the
// promise settles.
Napi::Value CountScoresAsync(const Napi::CallbackInfo& info) {
  const Args args(info, "countScoresAsync");
  return queue_job(info, args, count_job(args, false), 1);
}

Napi::Value CountScoresByIndexAsync(const Napi::CallbackInfo& info) {
  const Args args(info, "countScoresByIndexAsync");
  return queue_job(info, args, count_job(args, true), 1);
}

// Arguments: data (any typed array), simd, threads. Returns a checksum (mod 2^53) of the 64-bit words read.
Napi::Value BandwidthRead(const Napi::CallbackInfo& info) {
  Napi::TypedArray data = typed_array_arg(info, 0, "data");
  const CountOptions opt = options_arg(info, 1, 2);
  // Optional fourth argument: non-temporal loads.
  const bool streaming = info.Length() > 3 && info[3].IsBoolean() && info[3].As<Napi::Boolean>().Value();
  const auto* base = static_cast<const uint8_t*>(raw_data(data));
  const uint64_t sum = kgrank::bandwidth_read(base, data.ByteLength(), opt, streaming);
  return Napi::Number::New(info.Env(), static_cast<double>(sum & ((uint64_t{1} << 53) - 1)));
}

}  // namespace

void register_count(Napi::Env env, Napi::Object exports) {
  export_function<CountScores>(env, exports, "countScores");
  export_function<CountScoresAsync>(env, exports, "countScoresAsync");
  export_function<CountScoresByIndex>(env, exports, "countScoresByIndex");
  export_function<CountScoresByIndexAsync>(env, exports, "countScoresByIndexAsync");
  export_function<BandwidthRead>(env, exports, "bandwidthRead");
}

}  // namespace kgrank_addon
