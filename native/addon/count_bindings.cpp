// Bindings of the counting kernel and the memory-bandwidth probe.
#include <napi.h>

#include <algorithm>
#include <vector>

#include "../core/count.h"
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

// Arguments: scores, numColumns, thresholds, greater, equal, nan, simd, threads; with by_index:
// scores, numColumns, trueIndex (Int32Array), thresholdsOut, greater, equal, nan, simd, threads.
CountJob count_job(const Napi::CallbackInfo& info, bool by_index) {
  Napi::Env env = info.Env();
  const size_t shift = by_index ? 1 : 0;
  Napi::TypedArray scores = typed_array_arg(info, 0, "scores");
  const napi_typedarray_type type = scores.TypedArrayType();
  if (type != napi_float32_array && type != napi_float64_array) {
    throw_type(env, "scores must be a Float32Array or Float64Array");
  }
  const size_t cols = size_arg(info, 1, "numColumns", 1);
  Napi::TypedArray thresholds = typed_array_arg(info, 2 + shift, "thresholds");
  if (thresholds.TypedArrayType() != type) throw_type(env, "thresholds must have the same element type as scores");
  const size_t length = scores.ElementLength();
  if (length % cols != 0) throw_range(env, "scores.length must be a multiple of numColumns");
  const size_t rows = length / cols;
  if (thresholds.ElementLength() != rows) throw_range(env, "thresholds.length must equal the number of rows");
  double* outs[3];
  const char* names[3] = {"greater", "equal", "nan"};
  for (size_t k = 0; k < 3; ++k) {
    Napi::TypedArray out = typed_array_arg(info, 3 + shift + k, names[k]);
    if (out.TypedArrayType() != napi_float64_array || out.ElementLength() != rows) {
      throw_type(env, std::string(names[k]) + " must be a Float64Array with one element per row");
    }
    outs[k] = static_cast<double*>(raw_data(out));
  }
  CountJob job;
  job.type = type;
  job.rows = rows;
  job.cols = cols;
  job.greater = outs[0];
  job.equal = outs[1];
  job.nan = outs[2];
  job.options = options_arg(info, 6 + shift, 7 + shift);
  job.scores = raw_data(scores);
  job.thresholds = raw_data(thresholds);
  if (by_index) {
    Napi::TypedArray index = typed_array_arg(info, 2, "trueIndex");
    if (index.TypedArrayType() != napi_int32_array || index.ElementLength() != rows) {
      throw_type(env, "trueIndex must be an Int32Array with one element per row");
    }
    const auto* idx = static_cast<const int32_t*>(raw_data(index));
    job.true_index.assign(idx, idx + rows);
    for (size_t r = 0; r < rows; ++r) {
      const int32_t i = job.true_index[r];
      if (i < 0 || static_cast<size_t>(i) >= cols) {
        throw_range(env, "trueIndex[" + std::to_string(r) + "] is " + std::to_string(i) + ", outside [0, numColumns)");
      }
    }
  }
  return job;
}

Napi::Value CountScores(const Napi::CallbackInfo& info) {
  count_job(info, false).run();
  return info.Env().Undefined();
}

Napi::Value CountScoresByIndex(const Napi::CallbackInfo& info) {
  count_job(info, true).run();
  return info.Env().Undefined();
}

// Every argument before the trailing simd and threads numbers is held (async.h; numColumns, a number, is ignored by
// the pins); an optional job control follows threads.
Napi::Value queue_count(const Napi::CallbackInfo& info, bool by_index) {
  const size_t arrays = by_index ? 7 : 6;
  return queue_job(info, by_index ? "countScoresByIndexAsync" : "countScoresAsync", count_job(info, by_index), arrays,
                   arrays + 2);
}

Napi::Value CountScoresAsync(const Napi::CallbackInfo& info) { return queue_count(info, false); }
Napi::Value CountScoresByIndexAsync(const Napi::CallbackInfo& info) { return queue_count(info, true); }

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
