// Binding of the TSV triple parser (native/core/parse.h). A parse failure is a failed Status, thrown as every core
// status is (common.h throw_status): its message has no "<argument>: " prefix, and src/io wraps it in the same
// KgrankInputError the TypeScript twin throws.
#include <napi.h>

#include <cstring>

#include "../core/parse.h"
#include "common.h"

namespace kgrank_addon {

namespace {

const uint8_t* bytes_arg(const Napi::CallbackInfo& info, size_t index, size_t* len) {
  Napi::TypedArray array = typed_array_arg(info, index, "bytes");
  if (array.TypedArrayType() != napi_uint8_array) throw_type(info.Env(), "bytes must be a Uint8Array");
  *len = array.ByteLength();
  return *len == 0 ? nullptr : static_cast<const uint8_t*>(raw_data(array));
}

// splitTsvTriples(bytes: Uint8Array) -> Uint32Array of 6 byte offsets per triple
Napi::Value SplitTsvTriples(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  size_t len = 0;
  const uint8_t* bytes = bytes_arg(info, 0, &len);
  if (len > 0xFFFFFFFFull) throw_range(env, "bytes must be shorter than 4 GiB (offsets are 32-bit)");
  static const uint8_t kEmpty[1] = {0};
  if (bytes == nullptr) bytes = kEmpty;
  std::vector<size_t> offsets;
  check_status(env, kgrank::split_tsv_triples(bytes, len, offsets));
  Napi::Uint32Array out = Napi::Uint32Array::New(env, offsets.size());
  uint32_t* dst = out.Data();
  for (size_t k = 0; k < offsets.size(); ++k) dst[k] = static_cast<uint32_t>(offsets[k]);
  return out;
}

}  // namespace

void register_parse(Napi::Env env, Napi::Object exports) {
  exports.Set("splitTsvTriples", Napi::Function::New(env, SplitTsvTriples, "splitTsvTriples"));
}

}  // namespace kgrank_addon
