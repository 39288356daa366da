// Pins the memory of a pending async job's arrays: the job holds a reference to each backing store until it settles.
//
// A reference to a typed array (ObjectReference) keeps the JavaScript object alive, not its memory: detaching the
// buffer - structuredClone(buf, {transfer: [buf]}), postMessage(x, [buf]), ArrayBuffer.prototype.transfer() -
// moves the backing store out, and once the receiving buffer is collected the memory was freed under the running
// job (a use-after-free: test/async-safety.test.ts segfaulted without this). Node-API has no way to hold memory,
// so this takes V8's std::shared_ptr<BackingStore> (the addon is compiled against the running Node's headers at
// install): a detach then moves a store the job still co-owns, and the memory is freed when both let go.
// A detach key (ArrayBuffer::SetDetachKey) would instead refuse the detach, but Node 20's postMessage aborts the
// process when a detach fails (Detach(...).Check() in node::worker::Message::Serialize): measured, not used.
// SharedArrayBuffers are held the same way. Pins are taken and released on the JavaScript thread.
#pragma once
#include <napi.h>
#if !__has_include(<v8.h>)
#error "kgrank's async bindings need V8's headers (v8.h) to keep job inputs alive: build against full Node headers (node-gyp does; for cmake-js, point it at the Node installation's include/node)"
#endif
#include <v8.h>

#include <cstring>
#include <memory>
#include <vector>

namespace kgrank_addon {

class BufferPins {
 public:
  // Holds the backing store under `value` when it is a typed array; anything else is ignored.
  void add(napi_env env, napi_value value) {
    bool is_typed = false;
    if (napi_is_typedarray(env, value, &is_typed) != napi_ok || !is_typed) return;
    napi_value buffer;
    if (napi_get_typedarray_info(env, value, nullptr, nullptr, nullptr, &buffer, nullptr) != napi_ok) return;
    const v8::Local<v8::Value> local = to_local(buffer);
    if (local->IsSharedArrayBuffer()) {
      stores_.push_back(local.As<v8::SharedArrayBuffer>()->GetBackingStore());
    } else if (local->IsArrayBuffer()) {
      stores_.push_back(local.As<v8::ArrayBuffer>()->GetBackingStore());
    }
  }

  // Lets go of the stores (JavaScript thread: a store may be freed here).
  void release() { stores_.clear(); }

  // True when `value` is a typed array over a resizable (non-shared) ArrayBuffer. Co-owning does not protect those:
  // resize() shrinks the same store in place (V8 takes the tail pages away), so a job reading them crashes
  // (test/async-safety.test.ts). Async bindings refuse them; the TypeScript layer passes copies instead.
  static bool resizable(napi_env env, napi_value value) {
    bool is_typed = false;
    if (napi_is_typedarray(env, value, &is_typed) != napi_ok || !is_typed) return false;
    napi_value buffer;
    if (napi_get_typedarray_info(env, value, nullptr, nullptr, nullptr, &buffer, nullptr) != napi_ok) return false;
    const v8::Local<v8::Value> local = to_local(buffer);
    if (!local->IsArrayBuffer()) return false;  // growable SharedArrayBuffers only grow: safe
    const std::shared_ptr<v8::BackingStore> store = local.As<v8::ArrayBuffer>()->GetBackingStore();
    return store && store->IsResizableByUserJavaScript();
  }

 private:
  // napi_value is a v8::Local<v8::Value> in Node's implementation (js_native_api_v8.h does the same copy).
  static v8::Local<v8::Value> to_local(napi_value v) {
    v8::Local<v8::Value> local;
    static_assert(sizeof(local) == sizeof(v), "napi_value and v8::Local differ in size");
    std::memcpy(static_cast<void*>(&local), &v, sizeof v);
    return local;
  }

  std::vector<std::shared_ptr<v8::BackingStore>> stores_;
};

}  // namespace kgrank_addon
