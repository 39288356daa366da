// How an async job stays safe on the caller's memory with nothing but Node-API: it touches that memory only while
// the JavaScript thread is inside a call into the addon, and it looks at every input again before each time.
//
// Node-API can keep an object alive (a reference) but cannot co-own an ArrayBuffer's memory: detaching the buffer -
// structuredClone(buf, {transfer: [buf]}), postMessage(x, [buf]), ArrayBuffer.prototype.transfer() - moves the
// memory out, and once the receiving buffer is collected the memory is freed; a resizable ArrayBuffer's resize()
// takes its tail pages away. Every one of these runs on the JavaScript thread. So an async job (async.h) runs in
// slices of rows, each slice a synchronous call made from the event loop (setImmediate), the JavaScript thread
// taking part in it and the pool threads (native/core/thread_pool.h) working only until the slice returns. Between
// two slices no native code runs on the inputs; before each slice, InputWatch reads every input's data pointer and
// byte length again (napi_get_typedarray_info) and the job stops when one changed. A detach or a shrink can
// therefore never happen under native code, with no V8 API (the addon is a Node-API binary that loads in every Node
// version and in Bun).
//
// Slices rather than the whole job off-thread (that needs memory nothing can detach, a SharedArrayBuffer, and the
// facade's outputs are plain arrays) or a copy of the inputs (a second matrix of memory, slower than the count
// itself); the numbers: BENCHMARKS.md, "Notes moved from the kernel sources", watch.h.
//
// A SharedArrayBuffer another thread writes is read while it changes: the core checks every index it reads from the
// caller's memory or indexes with its own checked copy (ARCHITECTURE.md), so that yields garbage in, garbage out,
// never a fault.
#pragma once
#include <napi.h>

#include <cstddef>
#include <vector>

namespace kgrank_addon {

class InputWatch {
 public:
  // Records argument `index`'s data pointer and byte length when it is a typed array with at least one element;
  // anything else (a number, an empty array: nothing is read from it) is not watched.
  void add(napi_env env, napi_value value, size_t index) {
    Seen s;
    if (!view(env, value, &s) || s.bytes == 0) return;
    seen_.push_back(s);
    indices_.push_back(index);
  }

  enum class State { Same, Shrunk, Moved };

  // Compares the watched arguments (`args(k)` gives argument k again) with what add() saw. Shrunk: a byte length
  // changed (detached views have length 0): the caller gave the data away, and the facade, which watches the same
  // arrays, reports it (KgrankDetachedError). Moved: the same length at another address, which no engine does to
  // a live buffer; the job fails rather than read the old address.
  template <class Args>
  State check(napi_env env, Args args) const {
    for (size_t i = 0; i < seen_.size(); ++i) {
      Seen now;
      if (!view(env, args(indices_[i]), &now) || now.bytes != seen_[i].bytes) return State::Shrunk;
      if (now.data != seen_[i].data) return State::Moved;
    }
    return State::Same;
  }

  // True when `value` is a typed array over a resizable (non-shared) ArrayBuffer, read from the buffer's own
  // `resizable` property (ES2024; absent on older engines and on SharedArrayBuffer, whose `growable` ones only grow).
  static bool resizable(napi_env env, napi_value value) {
    bool is_typed = false;
    if (napi_is_typedarray(env, value, &is_typed) != napi_ok || !is_typed) return false;
    napi_value buffer = nullptr, flag = nullptr;
    if (napi_get_typedarray_info(env, value, nullptr, nullptr, nullptr, &buffer, nullptr) != napi_ok) return false;
    bool result = false;
    if (napi_get_named_property(env, buffer, "resizable", &flag) != napi_ok) return false;
    if (napi_get_value_bool(env, flag, &result) != napi_ok) return false;
    return result;
  }

 private:
  struct Seen {
    void* data = nullptr;
    size_t bytes = 0;
  };

  static size_t element_size(napi_typedarray_type type) {
    switch (type) {
      case napi_int8_array:
      case napi_uint8_array:
      case napi_uint8_clamped_array: return 1;
      case napi_int16_array:
      case napi_uint16_array: return 2;
      case napi_int32_array:
      case napi_uint32_array:
      case napi_float32_array: return 4;
      default: return 8;
    }
  }

  static bool view(napi_env env, napi_value value, Seen* out) {
    bool is_typed = false;
    if (value == nullptr || napi_is_typedarray(env, value, &is_typed) != napi_ok || !is_typed) return false;
    napi_typedarray_type type;
    size_t length = 0;
    void* data = nullptr;
    if (napi_get_typedarray_info(env, value, &type, &length, &data, nullptr, nullptr) != napi_ok) return false;
    out->data = data;
    out->bytes = length * element_size(type);
    return true;
  }

  std::vector<Seen> seen_;
  std::vector<size_t> indices_;
};

}  // namespace kgrank_addon
