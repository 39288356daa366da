// What the binding files share: the error conventions, the one way a core Status reaches JavaScript (throw_status),
// the guard around every binding, and the positional readers of the few calls of one or two plain values (the
// probes, dispatchInfo, firstNonFinite, the parser); every other call reads one record by name (args.h). Errors thrown
// here reach JavaScript as TypeError / RangeError with code "KGRANK_INPUT"; the TypeScript facade validates first, so
// the argument checks are a second line.
#pragma once
#include <napi.h>

#include <cstdint>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "../core/count.h"
#include "../core/simd.h"
#include "../core/status.h"
#include "enums.h"

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
// `status` (StatusCode) and `index` properties; src/backend/native-call.ts statusOf() reads them back for the facade's
// typed errors. The only way the addon reports what the core rejected.
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

// A file the core could not read or write, or one it refused (a screen table made from another table, damaged): an
// Error with code "KGRANK_FILE" and the core's message, which the facade turns into an error naming its path argument.
inline void check_file(Napi::Env env, const kgrank::Status& status) {
  if (status.ok()) return;
  Napi::Error err = Napi::Error::New(env, status.message);
  err.Set("code", Napi::String::New(env, "KGRANK_FILE"));
  throw err;
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
  if (info.Length() <= index || !info[index].IsNumber())
    throw_type(info.Env(), std::string(name) + " must be a number");
  const double v = info[index].As<Napi::Number>().DoubleValue();
  if (!(v >= static_cast<double>(min_value)) || v > 9007199254740991.0 ||
      v != static_cast<double>(static_cast<uint64_t>(v))) {
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
  if (level >= enum_count<SimdLevel>() || !kgrank::simd_supported(static_cast<SimdLevel>(level))) {
    throw_range(info.Env(), "simd level " + std::to_string(level) +
                                " is not supported here (supported: " + kgrank::supported_simd_list() + ")");
  }
  opt.simd = static_cast<SimdLevel>(level);
  opt.threads = threads_arg(info, threads_index);
  return opt;
}

// The message of an allocation that failed in `what` (a binding's name): the input needs more memory than the
// process may have. src/backend/backend.ts raises it as KgrankMemoryError (code KGRANK_MEMORY).
inline std::string memory_message(const char* what) {
  return std::string(what) + ": not enough memory for this input (a native allocation failed); pass a smaller " +
         "input (fewer rows, entities or triples per call) or give the process more memory";
}

// A JavaScript Error with `code`, made with the plain C calls and throwing nothing: nullptr when the environment
// cannot make one (it is being torn down).
inline napi_value make_error(napi_env env, const std::string& message, const char* code) noexcept {
  napi_value m = nullptr, c = nullptr, e = nullptr;
  if (napi_create_string_utf8(env, message.data(), message.size(), &m) != napi_ok) return nullptr;
  if (napi_create_string_utf8(env, code, NAPI_AUTO_LENGTH, &c) != napi_ok) return nullptr;
  if (napi_create_error(env, c, m, &e) != napi_ok) return nullptr;
  return e;
}

// Runs a binding's body; a C++ exception other than a Napi::Error (std::bad_alloc of an input-sized allocation,
// std::length_error of an impossible size) becomes a JavaScript error with code KGRANK_MEMORY or KGRANK_NATIVE
// instead of escaping into Node-API, which would abort the process.
template <class Body>
auto guarded(Napi::Env env, const char* what, Body body) -> decltype(body()) {
  try {
    return body();
  } catch (const Napi::Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    Napi::Error err = Napi::Error::New(env, memory_message(what));
    err.Set("code", Napi::String::New(env, "KGRANK_MEMORY"));
    throw err;
  } catch (const std::length_error&) {
    Napi::Error err = Napi::Error::New(env, memory_message(what));
    err.Set("code", Napi::String::New(env, "KGRANK_MEMORY"));
    throw err;
  } catch (const std::exception& e) {
    Napi::Error err = Napi::Error::New(env, std::string(what) + ": " + e.what());
    err.Set("code", Napi::String::New(env, "KGRANK_NATIVE"));
    throw err;
  }
}

// Exports `Fn` as `name`, guarded: its C++ exceptions reach JavaScript as typed errors naming it.
template <Napi::Value (*Fn)(const Napi::CallbackInfo&)>
void export_function(Napi::Env env, Napi::Object exports, const char* name) {
  const auto call = [](const Napi::CallbackInfo& info) -> Napi::Value {
    return guarded(info.Env(), static_cast<const char*>(info.Data()), [&] { return Fn(info); });
  };
  exports.Set(name, Napi::Function::New(env, call, name, const_cast<char*>(name)));
}

}  // namespace kgrank_addon
