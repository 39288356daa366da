// The WebAssembly build's C ABI (wasm32-wasi, one thread, no exceptions, no Node-API): the hot kernels of native/core
// as extern "C" functions over pointers into the instance's memory. The caller (src/backend/wasm.ts) checked every
// argument as the addon's bindings do (native/addon/score_bindings.cpp, count_bindings.cpp), copied the inputs into
// memory it allocated with kg_alloc and reads the outputs back; nothing here checks again. Every kernel runs the
// scalar level of the core's dispatch table (-msimd128 lets the compiler vectorise it), on one thread, so each
// result is the one the native scalar level gives, bit for bit.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "../core/count.h"
#include "../core/interaction.h"

#define KG_EXPORT(name) extern "C" __attribute__((export_name(#name)))

namespace {

kgrank::CountOptions one_thread() {
  kgrank::CountOptions o;
  o.simd = kgrank::SimdLevel::Scalar;
  o.threads = 1;
  return o;
}

// meta: interaction, layout, numEntities, entityWidth, numRelations, relationWidth, phaseScale, headSide,
// entityOffset (the addon's meta argument). ptr: the addresses (0 = none) and counts below, in this order.
enum Ptr : int {
  kEntity,
  kRelation,
  kEntityScale,
  kAnchorRows,
  kAnchorScale,
  kAnchor,
  kRelationIds,
  kTruth,
  kCandidates,
  kNumCandidates,
  kNegatives,
  kNegativesPerRow,
  kExcludeOffsets,
  kExcludeIds,
  kTrueScores,
  kRows,
  kSetOffsets,
  kSetIds,
  kPtrCount
};

template <class T>
const T* at(const uint32_t* ptr, int i) {
  return reinterpret_cast<const T*>(static_cast<uintptr_t>(ptr[i]));
}

template <class T>
kgrank::EmbeddingModel<T> model_of(const double* meta, const uint32_t* ptr) {
  kgrank::EmbeddingModel<T> m{static_cast<kgrank::Interaction>(static_cast<int>(meta[0])),
                              meta[1] == 1 ? kgrank::ComplexLayout::Interleaved : kgrank::ComplexLayout::Halves,
                              at<T>(ptr, kEntity),
                              at<T>(ptr, kRelation),
                              static_cast<size_t>(meta[2]),
                              static_cast<size_t>(meta[4]),
                              static_cast<size_t>(meta[3]),
                              static_cast<size_t>(meta[5]),
                              meta[6],
                              at<T>(ptr, kEntityScale)};
  m.entity_offset = static_cast<size_t>(meta[8]);
  m.anchor_rows = at<T>(ptr, kAnchorRows);
  m.anchor_scale = at<T>(ptr, kAnchorScale);
  return m;
}

kgrank::EmbeddingQueries queries_of(const double* meta, const uint32_t* ptr) {
  kgrank::EmbeddingQueries q;
  q.rows = ptr[kRows];
  q.head_side = meta[7] != 0;
  q.anchor = at<int32_t>(ptr, kAnchor);
  q.relation = at<int32_t>(ptr, kRelationIds);
  q.truth = at<int32_t>(ptr, kTruth);
  q.candidates = at<int32_t>(ptr, kCandidates);
  q.num_candidates = ptr[kNumCandidates];
  q.negatives = at<int32_t>(ptr, kNegatives);
  q.negatives_per_row = ptr[kNegativesPerRow];
  q.exclude_offsets = at<uint32_t>(ptr, kExcludeOffsets);
  q.exclude_ids = at<int32_t>(ptr, kExcludeIds);
  q.true_scores = at<double>(ptr, kTrueScores);
  q.set_offsets = at<uint32_t>(ptr, kSetOffsets);  // typed candidates (the facade's checked sets), or none
  q.set_ids = at<int32_t>(ptr, kSetIds);
  return q;
}

template <class T>
kgrank::Status rank(const double* meta, const uint32_t* ptr, double* out) {
  const kgrank::EmbeddingModel<T> m = model_of<T>(meta, ptr);
  const kgrank::EmbeddingQueries q = queries_of(meta, ptr);
  const size_t rows = q.rows;
  const kgrank::EmbeddingCounts c{out, out + rows, out + 2 * rows, out + 3 * rows, out + 4 * rows};
  return kgrank::rank_embeddings<T>(m, q, c, kgrank::SimdLevel::Scalar, 1);
}

}  // namespace

// The core's float fused multiply-add (std::fma: the scalar score of a pair, score_one, and the scalar traits):
// wasi-libc's fmaf rounds twice (the float64 sum, then to float), which differs from one rounding where the float64
// sum falls exactly halfway between two floats. This one is exact: the product of two floats is exact in float64,
// the sum is rounded to odd (an inexact sum with an even significand steps one unit toward the exact value, found
// by TwoSum), and float64's 53 bits are more than the 24 + 2 that rounding to odd then to float needs - the
// correctly rounded fma of the native FMA instructions and of interaction_wasm.cpp's lanes.
extern "C" float fmaf(float a, float b, float c) {
  const double p = static_cast<double>(a) * static_cast<double>(b);
  double s = p + static_cast<double>(c);
  const double bb = s - p;
  const double err = (p - (s - bb)) + (static_cast<double>(c) - bb);
  if (err != 0 && std::isfinite(s)) {
    uint64_t bits;
    std::memcpy(&bits, &s, sizeof bits);
    if ((bits & 1) == 0) bits += (err < 0) == (s < 0) ? 1 : static_cast<uint64_t>(-1);
    std::memcpy(&s, &bits, sizeof bits);
  }
  return static_cast<float>(s);
}

// thread_local objects with destructors register them here; the one thread of an instance never exits (the instance
// lives until it is dropped, memory and all), so there is nothing to run.
extern "C" int __cxa_thread_atexit(void (*)(void*), void*, void*) { return 0; }

// Memory for the caller's copies: null when the instance cannot grow that far.
KG_EXPORT(kg_alloc) void* kg_alloc(size_t bytes) { return std::malloc(bytes == 0 ? 1 : bytes); }
KG_EXPORT(kg_free) void kg_free(void* p) { std::free(p); }
KG_EXPORT(kg_ptr_count) int kg_ptr_count() { return kPtrCount; }

KG_EXPORT(kg_count_f32)
void kg_count_f32(const float* s, size_t rows, size_t cols, const float* t, double* g, double* e, double* n) {
  kgrank::count_rows(s, rows, cols, t, g, e, n, one_thread());
}
KG_EXPORT(kg_count_f64)
void kg_count_f64(const double* s, size_t rows, size_t cols, const double* t, double* g, double* e, double* n) {
  kgrank::count_rows(s, rows, cols, t, g, e, n, one_thread());
}
KG_EXPORT(kg_count_by_index_f32)
void kg_count_by_index_f32(const float* s, size_t rows, size_t cols, const int32_t* idx, float* t, double* g, double* e,
                           double* n) {
  kgrank::count_rows_by_index(s, rows, cols, idx, t, g, e, n, one_thread());
}
KG_EXPORT(kg_count_by_index_f64)
void kg_count_by_index_f64(const double* s, size_t rows, size_t cols, const int32_t* idx, double* t, double* g,
                           double* e, double* n) {
  kgrank::count_rows_by_index(s, rows, cols, idx, t, g, e, n, one_thread());
}

// The index of the first NaN or infinite value, or -1.
KG_EXPORT(kg_first_non_finite_f32) double kg_first_non_finite_f32(const float* v, size_t n) {
  const size_t at = kgrank::first_non_finite(v, n);
  return at == n ? -1.0 : static_cast<double>(at);
}
KG_EXPORT(kg_first_non_finite_f64) double kg_first_non_finite_f64(const double* v, size_t n) {
  const size_t at = kgrank::first_non_finite(v, n);
  return at == n ? -1.0 : static_cast<double>(at);
}

// rank_embeddings into out (5 x rows + 2), the status code and index in the last two slots (as the addon writes
// them); returns the status code.
KG_EXPORT(kg_rank_embeddings) int kg_rank_embeddings(int wide, const double* meta, const uint32_t* ptr, double* out) {
  const kgrank::Status s = wide ? rank<double>(meta, ptr, out) : rank<float>(meta, ptr, out);
  const size_t rows = ptr[kRows];
  out[5 * rows] = static_cast<double>(static_cast<int>(s.code));
  out[5 * rows + 1] = static_cast<double>(s.index);
  return static_cast<int>(s.code);
}

// top_k_embeddings of [begin, end) into ids and scores (rows x k); returns the status code.
KG_EXPORT(kg_top_k)
int kg_top_k(int wide, const double* meta, const uint32_t* ptr, size_t k, size_t begin, size_t end, int32_t* ids,
             double* scores) {
  const kgrank::EmbeddingQueries q = queries_of(meta, ptr);
  const kgrank::Status s = wide ? kgrank::top_k_embeddings<double>(model_of<double>(meta, ptr), q, k, begin, end, ids,
                                                                   scores, kgrank::SimdLevel::Scalar, 1)
                                : kgrank::top_k_embeddings<float>(model_of<float>(meta, ptr), q, k, begin, end, ids,
                                                                  scores, kgrank::SimdLevel::Scalar, 1);
  return static_cast<int>(s.code);
}

// score_relations of the pairs (anchor[i], truth[i]) into scores (rows x numRelations, the model's type); returns
// the status code.
KG_EXPORT(kg_score_relations) int kg_score_relations(int wide, const double* meta, const uint32_t* ptr, void* scores) {
  const size_t rows = ptr[kRows];
  const int32_t* heads = at<int32_t>(ptr, kAnchor);
  const int32_t* tails = at<int32_t>(ptr, kTruth);
  const kgrank::Status s =
      wide ? kgrank::score_relations<double>(model_of<double>(meta, ptr), rows, heads, tails,
                                             static_cast<double*>(scores), kgrank::SimdLevel::Scalar, 1)
           : kgrank::score_relations<float>(model_of<float>(meta, ptr), rows, heads, tails, static_cast<float*>(scores),
                                            kgrank::SimdLevel::Scalar, 1);
  return static_cast<int>(s.code);
}
