// The one way a binding reads its arguments: every addon call takes one record (a plain object; its TypeScript
// interface is in src/contract/addon.ts), read here field by field by name. One reader per field type; each throws a
// TypeError or RangeError (code "KGRANK_INPUT", common.h) whose message names the call and the field:
// `rankEmbeddings: "queries.anchor" must be an Int32Array`. An async binding reads the same record with the same
// code as its sync twin; the typed arrays a record yielded (arrays()) are what its job holds and watches (async.h).
//
// Adding a field: add it to the call's interface in src/contract/addon.ts, read it here with the reader of its type
// (optional_* when it may be absent, undefined or null), and add it to test/addon-boundary.test.ts's table.
#pragma once
#include <napi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common.h"
#include "enums.h"

namespace kgrank_addon {

inline const char* typed_array_kind(napi_typedarray_type type) {
  switch (type) {
    case napi_int8_array: return "Int8Array";
    case napi_uint8_array: return "Uint8Array";
    case napi_uint8_clamped_array: return "Uint8ClampedArray";
    case napi_int16_array: return "Int16Array";
    case napi_uint16_array: return "Uint16Array";
    case napi_int32_array: return "Int32Array";
    case napi_uint32_array: return "Uint32Array";
    case napi_float32_array: return "Float32Array";
    case napi_float64_array: return "Float64Array";
    default: return "typed array";
  }
}

// "an Int32Array", "a Float64Array".
inline std::string typed_array_name(napi_typedarray_type type) {
  const char* kind = typed_array_kind(type);
  return std::string(kind[0] == 'I' ? "an " : "a ") + kind;
}

// A typed array a record yielded, with its field's path ("queries.anchor").
struct ReadArray {
  std::string field;
  napi_value value;
};

class Args {
 public:
  // The record passed as info[index] to the binding `call`.
  Args(const Napi::CallbackInfo& info, const char* call, size_t index = 0)
      : env_(info.Env()), call_(call), arrays_(std::make_shared<std::vector<ReadArray>>()) {
    if (info.Length() <= index || !info[index].IsObject() || info[index].IsArray() || info[index].IsTypedArray()) {
      throw_type(env_, std::string(call) + ": takes one record (an object of named fields; see " +
                           "src/contract/addon.ts), got " + (info.Length() <= index ? "nothing" : "something else"));
    }
    obj_ = info[index].As<Napi::Object>();
  }

  Napi::Env env() const { return env_; }
  const char* call() const { return call_; }
  // The typed arrays read so far, this record's and its nested records', in the order they were read.
  const std::vector<ReadArray>& arrays() const { return *arrays_; }

  // `call: "path.field" what`, as a TypeError / RangeError.
  [[noreturn]] void type_error(const std::string& field, const std::string& what) const {
    throw_type(env_, message(field, what));
  }
  [[noreturn]] void range_error(const std::string& field, const std::string& what) const {
    throw_range(env_, message(field, what));
  }
  std::string message(const std::string& field, const std::string& what) const {
    return std::string(call_) + ": \"" + prefix_ + field + "\" " + what;
  }

  // True when the field is there and neither undefined nor null.
  bool has(const char* field) const {
    const Napi::Value v = obj_.Get(field);
    return !v.IsUndefined() && !v.IsNull();
  }

  // A typed array of exactly `type`.
  Napi::TypedArray typed(const char* field, napi_typedarray_type type) const {
    const Napi::Value v = obj_.Get(field);
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != type) {
      type_error(field, std::string("must be ") + typed_array_name(type));
    }
    return keep(field, v.As<Napi::TypedArray>());
  }
  // The same, or an empty handle (IsEmpty()) when the field is absent, undefined or null.
  Napi::TypedArray optional_typed(const char* field, napi_typedarray_type type) const {
    return has(field) ? typed(field, type) : Napi::TypedArray();
  }
  // A Float32Array or a Float64Array.
  Napi::TypedArray floats(const char* field) const {
    const Napi::Value v = obj_.Get(field);
    if (!v.IsTypedArray()) type_error(field, "must be a Float32Array or a Float64Array");
    const napi_typedarray_type type = v.As<Napi::TypedArray>().TypedArrayType();
    if (type != napi_float32_array && type != napi_float64_array) {
      type_error(field, "must be a Float32Array or a Float64Array");
    }
    return keep(field, v.As<Napi::TypedArray>());
  }
  // Any typed array.
  Napi::TypedArray any_typed(const char* field) const {
    const Napi::Value v = obj_.Get(field);
    if (!v.IsTypedArray()) type_error(field, "must be a typed array");
    return keep(field, v.As<Napi::TypedArray>());
  }

  // An array of typed arrays of `type` (each held as "field[i]").
  std::vector<Napi::TypedArray> typed_list(const char* field, napi_typedarray_type type) const {
    const Napi::Value v = obj_.Get(field);
    if (!v.IsArray()) type_error(field, std::string("must be an array of ") + typed_array_kind(type) + "s");
    const Napi::Array list = v.As<Napi::Array>();
    std::vector<Napi::TypedArray> out;
    for (uint32_t i = 0; i < list.Length(); ++i) {
      const Napi::Value e = list.Get(i);
      const std::string at = std::string(field) + "[" + std::to_string(i) + "]";
      if (!e.IsTypedArray() || e.As<Napi::TypedArray>().TypedArrayType() != type) {
        type_error(at, std::string("must be ") + typed_array_name(type));
      }
      out.push_back(keep(at.c_str(), e.As<Napi::TypedArray>()));
    }
    return out;
  }

  double number(const char* field) const {
    const Napi::Value v = obj_.Get(field);
    if (!v.IsNumber()) type_error(field, "must be a number");
    return v.As<Napi::Number>().DoubleValue();
  }
  // A non-negative integer >= min_value that a double holds exactly.
  size_t size(const char* field, size_t min_value = 0) const {
    const double v = number(field);
    if (!(v >= static_cast<double>(min_value)) || v > 9007199254740991.0 ||
        v != static_cast<double>(static_cast<uint64_t>(v))) {
      range_error(field, "must be an integer >= " + std::to_string(min_value));
    }
    return static_cast<size_t>(v);
  }
  // An integer in [0, 2^32).
  uint32_t uint32(const char* field) const {
    const size_t v = size(field, 0);
    if (v > UINT32_MAX) range_error(field, "must be an integer from 0 to 2^32-1");
    return static_cast<uint32_t>(v);
  }
  bool boolean(const char* field) const {
    const Napi::Value v = obj_.Get(field);
    if (!v.IsBoolean()) type_error(field, "must be a boolean");
    return v.As<Napi::Boolean>().Value();
  }
  bool optional_boolean(const char* field, bool absent) const { return has(field) ? boolean(field) : absent; }
  // A non-empty string without NUL characters (a file path).
  std::string text(const char* field) const {
    const Napi::Value v = obj_.Get(field);
    if (!v.IsString()) type_error(field, "must be a string");
    const std::string s = v.As<Napi::String>().Utf8Value();
    if (s.empty() || s.find('\0') != std::string::npos) range_error(field, "must be a non-empty path without NUL");
    return s;
  }

  // A member of E, given as its code: an integer below E's member count (enums.h).
  template <class E>
  E code(const char* field) const {
    const size_t v = size(field, 0);
    if (v >= enum_count<E>()) range_error(field, "must be " + enum_names<E>());
    return static_cast<E>(v);
  }

  // A thread count (0 = hardware threads), capped at 4096.
  unsigned threads(const char* field = "threads") const {
    const size_t t = size(field, 0);
    return static_cast<unsigned>(t > 4096 ? 4096 : t);
  }
  // "simd" (a level this machine and build run) and "threads".
  CountOptions options() const {
    CountOptions opt;
    const SimdLevel level = code<SimdLevel>("simd");
    if (!kgrank::simd_supported(level)) {
      range_error("simd", "is level " + std::to_string(static_cast<int>(level)) +
                              ", which is not supported here (supported: " + kgrank::supported_simd_list() + ")");
    }
    opt.simd = level;
    opt.threads = threads();
    return opt;
  }

  // The field's value as it is (absent: undefined), for a reader of its own (an external handle).
  Napi::Value value(const char* field) const { return obj_.Get(field); }

  // A nested record ("model", "queries"): its fields' paths start with "field.".
  Args record(const char* field) const {
    const Napi::Value v = obj_.Get(field);
    if (!v.IsObject() || v.IsArray() || v.IsTypedArray()) type_error(field, "must be a record (an object)");
    return Args(*this, field, v.As<Napi::Object>());
  }

 private:
  Args(const Args& parent, const char* field, Napi::Object obj)
      : env_(parent.env_),
        obj_(obj),
        call_(parent.call_),
        prefix_(parent.prefix_ + field + "."),
        arrays_(parent.arrays_) {}

  Napi::TypedArray keep(const std::string& field, Napi::TypedArray a) const {
    arrays_->push_back({prefix_ + field, a});
    return a;
  }

  Napi::Env env_;
  Napi::Object obj_;
  const char* call_;
  std::string prefix_;
  std::shared_ptr<std::vector<ReadArray>> arrays_;
};

// Checks a typed array's length: `what` ("one element per row") in the message.
inline void expect_length(const Args& args, const std::string& field, const Napi::TypedArray& a, size_t length,
                          const char* what) {
  if (a.ElementLength() != length) args.range_error(field, std::string("must hold ") + what);
}

}  // namespace kgrank_addon
