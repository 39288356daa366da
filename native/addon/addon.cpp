// Node-API entry point of kgrank's native core. Each binding file registers its functions; this layer converts
// and checks arguments and nothing else: all numerics live in native/core.
#include <napi.h>

#include "../core/simd.h"
#include "../core/thread_pool.h"
#include "common.h"

#ifndef KGRANK_VERSION
#define KGRANK_VERSION "0.0.0"
#endif

namespace kgrank_addon {
void register_count(Napi::Env env, Napi::Object exports);
void register_filter(Napi::Env env, Napi::Object exports);
void register_metrics(Napi::Env env, Napi::Object exports);
void register_parse(Napi::Env env, Napi::Object exports);
}  // namespace kgrank_addon

namespace {

using kgrank::SimdLevel;

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
  kgrank_addon::register_count(env, exports);
  kgrank_addon::register_filter(env, exports);
  kgrank_addon::register_metrics(env, exports);
  kgrank_addon::register_parse(env, exports);
  return exports;
}

}  // namespace

NODE_API_MODULE(kgrank, Init)
