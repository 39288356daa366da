// Node-API entry point of kgrank's native core. Each binding file registers its functions; this layer converts
// and checks arguments and nothing else: all numerics live in native/core.
#include <napi.h>

#if defined(_WIN32)
#include <windows.h>
#else
#include <dlfcn.h>
#endif

#include "../core/simd.h"
#include "../core/screen.h"
#include "../core/thread_pool.h"
#include "async.h"
#include "common.h"
#include "enums.h"

#ifndef KGRANK_VERSION
#define KGRANK_VERSION "0.0.0"
#endif

namespace kgrank_addon {
void register_count(Napi::Env env, Napi::Object exports);
void register_filter(Napi::Env env, Napi::Object exports);
void register_metrics(Napi::Env env, Napi::Object exports);
void register_parse(Napi::Env env, Napi::Object exports);
void register_pbg(Napi::Env env, Napi::Object exports);
void register_score(Napi::Env env, Napi::Object exports);
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
  for (int level = 0; level < static_cast<int>(kgrank_addon::enum_count<SimdLevel>()); ++level) {
    if (kgrank::simd_supported(static_cast<SimdLevel>(level))) {
      Napi::Object entry = Napi::Object::New(env);
      entry.Set("name", kgrank::simd_name(static_cast<SimdLevel>(level)));
      entry.Set("level", level);
      // The int8 screen's kernel at this level (screen.h screen_kernel_name), e.g. "amx" or "avx512-vnni".
      entry.Set("screenKernel", kgrank::screen_kernel_name(static_cast<SimdLevel>(level)));
      levels.Set(k++, entry);
    }
  }
  out.Set("simdLevels", levels);
  out.Set("hardwareThreads", kgrank::hardware_threads());
  out.Set("napiVersion", NAPI_VERSION);
  // The enums shared with TypeScript, name -> value (enums.h; test/enums.test.ts compares them with both sides).
  out.Set("enums", kgrank_addon::enum_tables(env));
  return out;
}

// dispatchInfo(simd) -> { variants, last }: per kernel family ("count", "read", "answers", "rankSums"), the ISA
// variant the dispatch table (native/core/simd.h) holds for that level, and the variant its most recent call ran.
// A debug hook for tests: it proves that a level's calls (KGRANK_SIMD) run that level's kernels.
Napi::Value DispatchInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const size_t level = kgrank_addon::size_arg(info, 0, "simd", 0);
  if (level >= kgrank_addon::enum_count<SimdLevel>()) {
    kgrank_addon::throw_range(env, "simd must be " + kgrank_addon::enum_names<SimdLevel>());
  }
  Napi::Object variants = Napi::Object::New(env);
  Napi::Object last = Napi::Object::New(env);
  const kgrank::KernelTable& table = kgrank::kernel_table(static_cast<SimdLevel>(level));
  for (int f = 0; f < kgrank::kKernelFamilies; ++f) {
    const auto family = static_cast<kgrank::KernelFamily>(f);
    variants.Set(kgrank::kernel_family_name(family), kgrank::simd_name(table.variant[f]));
    last.Set(kgrank::kernel_family_name(family), kgrank::simd_name(kgrank::last_dispatched(family)));
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("variants", variants);
  out.Set("last", last);
  return out;
}

// Keeps this library loaded until the process exits. Node unloads an addon (dlclose) when the last environment
// that loaded it goes away - a Worker that was the only one to require kgrank, terminated - but kgrank's thread pool
// (native/core/thread_pool.cpp) is process-wide and its threads live on in this library's code: once unmapped,
// the next job or wake-up of a pool thread jumped into freed pages (SIGSEGV, test/async-safety.test.ts). Pinned, a
// later require() in any thread gets the same instance and the same pool.
void pin_library() {
  static const bool pinned = [] {
#if defined(_WIN32)
    HMODULE self = nullptr;
    return GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_PIN,
                              reinterpret_cast<LPCWSTR>(&pin_library), &self) != 0;
#else
    Dl_info where;
    if (dladdr(reinterpret_cast<void*>(&pin_library), &where) == 0 || where.dli_fname == nullptr) return false;
    // RTLD_NOLOAD: the library is already loaded (this code runs in it); RTLD_NODELETE: never unload it. The handle
    // is deliberately never closed.
    return dlopen(where.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != nullptr;
#endif
  }();
  (void)pinned;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  pin_library();
  kgrank_addon::init_async(env);
  exports.Set("info", Napi::Function::New(env, Info, "info"));
  exports.Set("dispatchInfo", Napi::Function::New(env, DispatchInfo, "dispatchInfo"));
  kgrank_addon::export_function<kgrank_addon::JobControlNew>(env, exports, "kernelControl");
  kgrank_addon::export_function<kgrank_addon::CancelJob>(env, exports, "cancelKernel");
  kgrank_addon::export_function<kgrank_addon::JobProgress>(env, exports, "kernelProgress");
  kgrank_addon::register_count(env, exports);
  kgrank_addon::register_filter(env, exports);
  kgrank_addon::register_metrics(env, exports);
  kgrank_addon::register_parse(env, exports);
  kgrank_addon::register_pbg(env, exports);
  kgrank_addon::register_score(env, exports);
  return exports;
}

}  // namespace

NODE_API_MODULE(kgrank, Init)
