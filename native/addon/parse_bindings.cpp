// Binding of the TSV triple parser (native/core/parse.h). A parse failure is a failed Status, thrown as every core
// status is (common.h throw_status): its message has no "<argument>: " prefix, and src/io wraps it in the same
// KgrankInputError the TypeScript twin throws.
#include <napi.h>

#include <cstring>

#include "../core/intern.h"
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

// A vector's memory as an ArrayBuffer that owns it (no copy of a split's 12 bytes per row).
template <typename T>
Napi::ArrayBuffer adopt_buffer(Napi::Env env, std::vector<T>&& v) {
  if (v.empty()) return Napi::ArrayBuffer::New(env, 0);
  auto* owned = new std::vector<T>(std::move(v));
  return Napi::ArrayBuffer::New(
      env, owned->data(), owned->size() * sizeof(T), [](Napi::Env, void*, std::vector<T>* hint) { delete hint; },
      owned);
}

// new TripleInterner(); add(split: 0 | 1 | 2, bytes: Uint8Array) -> rows added; finish() -> { triples: [Int32Array
// x 3], dropped: [n x 3], entityBytes, entityOffsets, relationBytes, relationOffsets } (labels as UTF-8 bytes and
// n + 1 Float64Array offsets). See native/core/intern.h.
class TripleInternerWrap : public Napi::ObjectWrap<TripleInternerWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "TripleInterner",
                       {InstanceMethod("add", &TripleInternerWrap::Guard<&TripleInternerWrap::Add>),
                        InstanceMethod("finish", &TripleInternerWrap::Guard<&TripleInternerWrap::Finish>)});
  }
  explicit TripleInternerWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<TripleInternerWrap>(info) {}

 private:
  template <Napi::Value (TripleInternerWrap::*Method)(const Napi::CallbackInfo&)>
  Napi::Value Guard(const Napi::CallbackInfo& info) {
    return guarded(info.Env(), "tripleInterner", [&] { return (this->*Method)(info); });
  }

  Napi::Value Add(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (finished_) throw_type(env, "add after finish");
    const size_t split = size_arg(info, 0, "split", 0);
    if (split > 2) throw_range(env, "split must be 0, 1 or 2");
    size_t len = 0;
    const uint8_t* bytes = bytes_arg(info, 1, &len);
    static const uint8_t kEmpty[1] = {0};
    if (bytes == nullptr) bytes = kEmpty;
    const size_t before = interner_.rows(static_cast<int>(split));
    check_status(env, interner_.add(static_cast<int>(split), bytes, len));
    return Napi::Number::New(env, static_cast<double>(interner_.rows(static_cast<int>(split)) - before));
  }

  Napi::Value Finish(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (finished_) throw_type(env, "finish called twice");
    finished_ = true;
    interner_.finish();
    Napi::Object out = Napi::Object::New(env);
    Napi::Array triples = Napi::Array::New(env, 3);
    Napi::Array dropped = Napi::Array::New(env, 3);
    for (int s = 0; s < 3; ++s) {
      std::vector<int32_t>& v = interner_.triples(s);
      const size_t n = v.size();
      triples.Set(static_cast<uint32_t>(s), Napi::Int32Array::New(env, n, adopt_buffer(env, std::move(v)), 0));
      dropped.Set(static_cast<uint32_t>(s), Napi::Number::New(env, static_cast<double>(interner_.dropped(s))));
    }
    out.Set("triples", triples);
    out.Set("dropped", dropped);
    const char* names[2][2] = {{"entityBytes", "entityOffsets"}, {"relationBytes", "relationOffsets"}};
    for (int kind = 0; kind < 2; ++kind) {
      const std::string& b = interner_.label_bytes(kind);
      Napi::Uint8Array bytes = Napi::Uint8Array::New(env, b.size());
      if (!b.empty()) std::memcpy(bytes.Data(), b.data(), b.size());
      const std::vector<uint64_t>& o = interner_.label_offsets(kind);
      Napi::Float64Array offsets = Napi::Float64Array::New(env, o.size());
      for (size_t k = 0; k < o.size(); ++k) offsets[k] = static_cast<double>(o[k]);
      out.Set(names[kind][0], bytes);
      out.Set(names[kind][1], offsets);
    }
    return out;
  }

  kgrank::TripleInterner interner_;
  bool finished_ = false;
};

}  // namespace

void register_parse(Napi::Env env, Napi::Object exports) {
  exports.Set("splitTsvTriples", Napi::Function::New(env, SplitTsvTriples, "splitTsvTriples"));
  exports.Set("TripleInterner", TripleInternerWrap::Define(env));
}

}  // namespace kgrank_addon
