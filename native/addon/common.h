// Argument conversion and checks shared by the binding files, and the one way a core Status reaches JavaScript
// (throw_status). Errors thrown here reach JavaScript as TypeError / RangeError with code "KGRANK_INPUT"; the
// TypeScript facade validates first, so the argument checks are a second line.
#pragma once
#include <napi.h>

#include <cstdint>
#include <string>

#include "../core/count.h"
#include "../core/simd.h"
#include "../core/status.h"

namespace kgrank_addon {

using kgrank::CountOptions;
using kgrank::SimdLevel;

[[noreturn]] inline void throw_type(Napi::Env env, const std::string& msg) {
  Napi::TypeError err = Napi::TypeError::New(env, msg);
  err.Set("code", Napi::String::New(env, "KGRANK_INPUT"));
  throw err;
}

[[noreturn]] inline void throw_range(Napi::Env env, const std::string& msg) {
  Napi::RangeError err = Napi::RangeError::New(env, msg);
  err.Set("code", Napi::String::New(env, "KGRANK_INPUT"));
  throw err;
}

// A failed core Status (native/core/status.h) as a RangeError with code "KGRANK_INPUT", the status's message, and
// `status` (StatusCode) and `index` properties; src/backend.ts statusOf() reads them back for the facade's typed
// errors. The only way the addon reports what the core rejected.
[[noreturn]] inline void throw_status(Napi::Env env, const kgrank::Status& status) {
  Napi::RangeError err = Napi::RangeError::New(env, status.message);
  err.Set("code", Napi::String::New(env, "KGRANK_INPUT"));
  err.Set("status", Napi::Number::New(env, static_cast<double>(static_cast<int>(status.code))));
  err.Set("index", Napi::Number::New(env, static_cast<double>(status.index)));
  throw err;
}

inline void check_status(Napi::Env env, const kgrank::Status& status) {
  if (!status.ok()) throw_status(env, status);
}

// Start of a typed array's elements; works for ArrayBuffer- and SharedArrayBuffer-backed arrays alike.
inline void* raw_data(const Napi::TypedArray& array) {
  napi_typedarray_type type;
  size_t length = 0;
  void* data = nullptr;
  napi_value buffer;
  size_t offset = 0;
  const napi_status status = napi_get_typedarray_info(array.Env(), array, &type, &length, &data, &buffer, &offset);
  if (status != napi_ok) throw Napi::Error::New(array.Env(), "could not read typed array");
  return data;
}

inline Napi::TypedArray typed_array_arg(const Napi::CallbackInfo& info, size_t index, const char* name) {
  if (info.Length() <= index || !info[index].IsTypedArray()) {
    throw_type(info.Env(), std::string(name) + " must be a typed array");
  }
  return info[index].As<Napi::TypedArray>();
}

// A non-negative integer argument that fits in size_t and in a double exactly.
inline size_t size_arg(const Napi::CallbackInfo& info, size_t index, const char* name, size_t min_value) {
  if (info.Length() <= index || !info[index].IsNumber()) throw_type(info.Env(), std::string(name) + " must be a number");
  const double v = info[index].As<Napi::Number>().DoubleValue();
  if (!(v >= static_cast<double>(min_value)) || v > 9007199254740991.0 || v != static_cast<double>(static_cast<uint64_t>(v))) {
    throw_range(info.Env(), std::string(name) + " must be an integer >= " + std::to_string(min_value));
  }
  return static_cast<size_t>(v);
}

// A thread count (0 = hardware threads), capped at 4096.
inline unsigned threads_arg(const Napi::CallbackInfo& info, size_t index) {
  const size_t t = size_arg(info, index, "threads", 0);
  return static_cast<unsigned>(t > 4096 ? 4096 : t);
}

inline CountOptions options_arg(const Napi::CallbackInfo& info, size_t simd_index, size_t threads_index) {
  CountOptions opt;
  const size_t level = size_arg(info, simd_index, "simd", 0);
  if (level > 3 || !kgrank::simd_supported(static_cast<SimdLevel>(level))) {
    throw_range(info.Env(), "simd level " + std::to_string(level) + " is not supported here (supported: " +
                                kgrank::supported_simd_list() + ")");
  }
  opt.simd = static_cast<SimdLevel>(level);
  opt.threads = threads_arg(info, threads_index);
  return opt;
}

}  // namespace kgrank_addon
