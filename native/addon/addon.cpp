// Node-API bindings for kgrank's native core. This layer converts and checks arguments and nothing else: all
// numerics live in native/core. The TypeScript facade validates user input first and raises typed errors; the
// checks here are a second line so that no call from JavaScript can crash the process.
#include <napi.h>

#include <cstdint>
#include <string>

#include "../core/count.h"
#include "../core/simd.h"
#include "../core/thread_pool.h"

#ifndef KGRANK_VERSION
#define KGRANK_VERSION "0.0.0"
#endif

namespace {

using kgrank::CountOptions;
using kgrank::SimdLevel;

[[noreturn]] void throw_type(Napi::Env env, const std::string& msg) {
  Napi::TypeError err = Napi::TypeError::New(env, msg);
  err.Set("code", Napi::String::New(env, "KGRANK_INPUT"));
  throw err;
}

[[noreturn]] void throw_range(Napi::Env env, const std::string& msg) {
  Napi::RangeError err = Napi::RangeError::New(env, msg);
  err.Set("code", Napi::String::New(env, "KGRANK_INPUT"));
  throw err;
}

// Start of a typed array's elements; works for ArrayBuffer- and SharedArrayBuffer-backed arrays alike.
void* raw_data(const Napi::TypedArray& array) {
  napi_typedarray_type type;
  size_t length = 0;
  void* data = nullptr;
  napi_value buffer;
  size_t offset = 0;
  const napi_status status = napi_get_typedarray_info(array.Env(), array, &type, &length, &data, &buffer, &offset);
  if (status != napi_ok) throw Napi::Error::New(array.Env(), "could not read typed array");
  return data;
}

Napi::TypedArray typed_array_arg(const Napi::CallbackInfo& info, size_t index, const char* name) {
  if (info.Length() <= index || !info[index].IsTypedArray()) {
    throw_type(info.Env(), std::string(name) + " must be a typed array");
  }
  return info[index].As<Napi::TypedArray>();
}

// A non-negative integer argument that fits in size_t and in a double exactly.
size_t size_arg(const Napi::CallbackInfo& info, size_t index, const char* name, size_t min_value) {
  if (info.Length() <= index || !info[index].IsNumber()) throw_type(info.Env(), std::string(name) + " must be a number");
  const double v = info[index].As<Napi::Number>().DoubleValue();
  if (!(v >= static_cast<double>(min_value)) || v > 9007199254740991.0 || v != static_cast<double>(static_cast<uint64_t>(v))) {
    throw_range(info.Env(), std::string(name) + " must be an integer >= " + std::to_string(min_value));
  }
  return static_cast<size_t>(v);
}

CountOptions options_arg(const Napi::CallbackInfo& info, size_t simd_index, size_t threads_index) {
  CountOptions opt;
  const size_t level = size_arg(info, simd_index, "simd", 0);
  if (level > 3 || !kgrank::simd_supported(static_cast<SimdLevel>(level))) {
    throw_range(info.Env(), "simd level " + std::to_string(level) + " is not supported here (supported: " +
                                kgrank::supported_simd_list() + ")");
  }
  opt.simd = static_cast<SimdLevel>(level);
  const size_t threads = size_arg(info, threads_index, "threads", 0);
  opt.threads = static_cast<unsigned>(threads > 4096 ? 4096 : threads);
  return opt;
}

// Everything a counting job needs, gathered and checked on the JavaScript thread.
struct CountJob {
  napi_typedarray_type type;
  const void* scores;
  const void* thresholds;
  size_t rows;
  size_t cols;
  double* greater;
  double* equal;
  double* nan;
  CountOptions options;

  void run() const {
    if (type == napi_float32_array) {
      kgrank::count_rows(static_cast<const float*>(scores), rows, cols, static_cast<const float*>(thresholds), greater,
                         equal, nan, options);
    } else {
      kgrank::count_rows(static_cast<const double*>(scores), rows, cols, static_cast<const double*>(thresholds),
                         greater, equal, nan, options);
    }
  }
};

// Arguments: scores, numColumns, thresholds, greater, equal, nan, simd, threads.
CountJob count_job(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::TypedArray scores = typed_array_arg(info, 0, "scores");
  const napi_typedarray_type type = scores.TypedArrayType();
  if (type != napi_float32_array && type != napi_float64_array) {
    throw_type(env, "scores must be a Float32Array or Float64Array");
  }
  const size_t cols = size_arg(info, 1, "numColumns", 1);
  Napi::TypedArray thresholds = typed_array_arg(info, 2, "thresholds");
  if (thresholds.TypedArrayType() != type) throw_type(env, "thresholds must have the same element type as scores");
  const size_t length = scores.ElementLength();
  if (length % cols != 0) throw_range(env, "scores.length must be a multiple of numColumns");
  const size_t rows = length / cols;
  if (thresholds.ElementLength() != rows) throw_range(env, "thresholds.length must equal the number of rows");
  double* outs[3];
  const char* names[3] = {"greater", "equal", "nan"};
  for (size_t k = 0; k < 3; ++k) {
    Napi::TypedArray out = typed_array_arg(info, 3 + k, names[k]);
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
  job.options = options_arg(info, 6, 7);
  job.scores = raw_data(scores);
  job.thresholds = raw_data(thresholds);
  return job;
}

Napi::Value CountScores(const Napi::CallbackInfo& info) {
  count_job(info).run();
  return info.Env().Undefined();
}

// Runs a counting job on a libuv worker thread (which fans out to kgrank's own pool). Every JavaScript array the
// job reads or writes is held by a reference until the promise settles, so none can be collected meanwhile.
class CountWorker : public Napi::AsyncWorker {
 public:
  CountWorker(Napi::Env env, const CountJob& job, const Napi::CallbackInfo& info)
      : Napi::AsyncWorker(env, "kgrank:countScores"), job_(job), deferred_(Napi::Promise::Deferred::New(env)) {
    keep_ = Napi::Persistent(Napi::Object::New(env));
    for (size_t k = 0; k < 6; ++k) keep_.Value().Set(static_cast<uint32_t>(k), info[k]);
  }
  Napi::Promise promise() const { return deferred_.Promise(); }
  void Execute() override { job_.run(); }
  void OnOK() override {
    keep_.Reset();
    deferred_.Resolve(Env().Undefined());
  }
  void OnError(const Napi::Error& e) override {
    keep_.Reset();
    deferred_.Reject(e.Value());
  }

 private:
  CountJob job_;
  Napi::Promise::Deferred deferred_;
  Napi::ObjectReference keep_;
};

Napi::Value CountScoresAsync(const Napi::CallbackInfo& info) {
  const CountJob job = count_job(info);
  auto* worker = new CountWorker(info.Env(), job, info);
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

// Arguments: data (any typed array), simd, threads. Returns a checksum (mod 2^53) of the 64-bit words read.
Napi::Value BandwidthRead(const Napi::CallbackInfo& info) {
  Napi::TypedArray data = typed_array_arg(info, 0, "data");
  const CountOptions opt = options_arg(info, 1, 2);
  const auto* base = static_cast<const uint8_t*>(raw_data(data));
  const uint64_t sum = kgrank::bandwidth_read(base, data.ByteLength(), opt);
  return Napi::Number::New(info.Env(), static_cast<double>(sum & ((uint64_t{1} << 53) - 1)));
}

Napi::Value Info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  out.Set("version", KGRANK_VERSION);
  out.Set("bestSimd", static_cast<int>(kgrank::best_simd()));
  Napi::Array levels = Napi::Array::New(env);
  uint32_t k = 0;
  for (int level = 0; level <= 3; ++level) {
    if (kgrank::simd_supported(static_cast<SimdLevel>(level))) {
      Napi::Object entry = Napi::Object::New(env);
      entry.Set("name", kgrank::simd_name(static_cast<SimdLevel>(level)));
      entry.Set("level", level);
      levels.Set(k++, entry);
    }
  }
  out.Set("simdLevels", levels);
  out.Set("hardwareThreads", kgrank::hardware_threads());
  out.Set("napiVersion", NAPI_VERSION);
  return out;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("info", Napi::Function::New(env, Info, "info"));
  exports.Set("countScores", Napi::Function::New(env, CountScores, "countScores"));
  exports.Set("countScoresAsync", Napi::Function::New(env, CountScoresAsync, "countScoresAsync"));
  exports.Set("bandwidthRead", Napi::Function::New(env, BandwidthRead, "bandwidthRead"));
  return exports;
}

}  // namespace

NODE_API_MODULE(kgrank, Init)
