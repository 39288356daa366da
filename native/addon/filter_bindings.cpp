// Bindings of the filter index (a JavaScript class wrapping kgrank::FilterIndex) and of filtered counting.
#include <napi.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "../core/constrained.h"
#include "../core/count.h"
#include "../core/filter_index.h"
#include "async.h"
#include "common.h"

namespace kgrank_addon {

namespace {

using kgrank::FilterIndex;

// Everything a filtered counting job needs, checked on the JavaScript thread. The ids are the job's own copies,
// checked after copying (the caller's arrays may change under a running job; the kernel indexes with the ids).
// Whole rows (cols = numEntities, thresholds gathered into `thresholds`) or, with `range`, the column slice
// [column_start, column_start + cols) of every row (thresholds given in `thresholds`).
struct FilteredJob : ScoreRowSlices<FilteredJob> {
  napi_typedarray_type type;
  const void* scores;
  size_t rows, cols;
  bool range = false;
  size_t column_start = 0;
  std::vector<int32_t> ids;  // anchor | relation | truth, rows each
  void* thresholds;
  double* out[4];
  const FilterIndex* index;
  CountOptions options;

  // Rows [r0, r1): every row is counted and filtered on its own, so any split of the rows gives the same counts.
  void run_range(size_t r0, size_t r1, kgrank::JobControl* control) const {
    CountOptions options = this->options;
    options.control = control;
    const size_t n = r1 - r0;
    const int32_t* anchor = ids.data() + r0;
    const int32_t* relation = ids.data() + rows + r0;
    const int32_t* truth = ids.data() + 2 * rows + r0;
    double* o[4] = {out[0] + r0, out[1] + r0, out[2] + r0, out[3] + r0};
    if (range) {
      if (type == napi_float32_array) {
        kgrank::count_rows_filtered_range(static_cast<const float*>(scores) + r0 * cols, n, cols, column_start, anchor,
                                          relation, truth, *index, static_cast<const float*>(thresholds) + r0, o[0],
                                          o[1], o[2], o[3], options);
      } else {
        kgrank::count_rows_filtered_range(static_cast<const double*>(scores) + r0 * cols, n, cols, column_start, anchor,
                                          relation, truth, *index, static_cast<const double*>(thresholds) + r0, o[0],
                                          o[1], o[2], o[3], options);
      }
      return;
    }
    if (type == napi_float32_array) {
      kgrank::count_rows_filtered(static_cast<const float*>(scores) + r0 * cols, n, cols, anchor, relation, truth,
                                  *index, static_cast<float*>(thresholds) + r0, o[0], o[1], o[2], o[3], options);
    } else {
      kgrank::count_rows_filtered(static_cast<const double*>(scores) + r0 * cols, n, cols, anchor, relation, truth,
                                  *index, static_cast<double*>(thresholds) + r0, o[0], o[1], o[2], o[3], options);
    }
  }
};

class FilterIndexWrap : public Napi::ObjectWrap<FilterIndexWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(
        env, "FilterIndex",
        {InstanceMethod("answers", &FilterIndexWrap::Guard<&FilterIndexWrap::Answers>),
         InstanceMethod("missing", &FilterIndexWrap::Guard<&FilterIndexWrap::Missing>),
         InstanceMethod("answerCounts", &FilterIndexWrap::Guard<&FilterIndexWrap::AnswerCounts>),
         InstanceMethod("stats", &FilterIndexWrap::Guard<&FilterIndexWrap::Stats>),
         InstanceMethod("countFiltered", &FilterIndexWrap::Guard<&FilterIndexWrap::CountFiltered>),
         InstanceMethod("rankTriples", &FilterIndexWrap::Guard<&FilterIndexWrap::RankTriples>),
         InstanceMethod("rankTriplesConstrained", &FilterIndexWrap::Guard<&FilterIndexWrap::RankTriplesConstrained>),
         InstanceMethod("countFilteredAsync", &FilterIndexWrap::Guard<&FilterIndexWrap::CountFilteredAsync>),
         InstanceMethod("countFilteredRange", &FilterIndexWrap::Guard<&FilterIndexWrap::CountFilteredRange>),
         InstanceMethod("countFilteredRangeAsync",
                        &FilterIndexWrap::Guard<&FilterIndexWrap::CountFilteredRangeAsync>)});
  }

  // new FilterIndex(triplesList: Int32Array[], numEntities, numRelations, side: 0 = head | 1 = tail, threads)
  explicit FilterIndexWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<FilterIndexWrap>(info) {
    // The index's arrays are sized by numEntities and the triple count: a failed allocation is a typed error.
    guarded(info.Env(), "buildFilterIndex", [&] { build(info); });
  }

  // Also runs while the environment is torn down: the plain call, whose failure is ignored (the Napi:: wrapper
  // throws on failure, and an exception out of a finalizer aborts the process).
  void Finalize(Napi::Env env) override {
    int64_t ignored = 0;
    napi_adjust_external_memory(env, -external_, &ignored);
  }

 private:
  // A method whose C++ exceptions reach JavaScript as typed errors (common.h guarded).
  template <Napi::Value (FilterIndexWrap::*Method)(const Napi::CallbackInfo&)>
  Napi::Value Guard(const Napi::CallbackInfo& info) {
    return guarded(info.Env(), "filterIndex", [&] { return (this->*Method)(info); });
  }

  void build(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 5 || !info[0].IsArray()) throw_type(env, "triples must be an array of Int32Array");
    Napi::Array list = info[0].As<Napi::Array>();
    std::vector<kgrank::TripleSpan> spans;
    for (uint32_t i = 0; i < list.Length(); ++i) {
      Napi::Value v = list.Get(i);
      if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array) {
        throw_type(env, "triples[" + std::to_string(i) + "] must be an Int32Array");
      }
      Napi::TypedArray t = v.As<Napi::TypedArray>();
      if (t.ElementLength() % 3 != 0)
        throw_range(env, "triples[" + std::to_string(i) + "].length must be a multiple of 3");
      spans.push_back({static_cast<const int32_t*>(raw_data(t)), t.ElementLength() / 3});
    }
    const size_t entities = size_arg(info, 1, "numEntities", 1);
    const size_t relations = size_arg(info, 2, "numRelations", 1);
    if (entities > 2147483647u || relations > 2147483647u)
      throw_range(env, "numEntities and numRelations must be < 2^31");
    const size_t side = size_arg(info, 3, "side", 0);
    if (side > 1) throw_range(env, "side must be 0 (head) or 1 (tail)");
    const unsigned threads = threads_arg(info, 4);
    check_status(env,
                 FilterIndex::build(spans, static_cast<int32_t>(entities), static_cast<int32_t>(relations),
                                    side == 1 ? FilterIndex::Side::Tail : FilterIndex::Side::Head, threads, &index_));
    // Tell V8 how much native memory this object holds, so it collects large indexes promptly.
    external_ = static_cast<int64_t>(index_.bytes());
    Napi::MemoryManagement::AdjustExternalMemory(env, external_);
  }

  Napi::Value Answers(const Napi::CallbackInfo& info) {
    const size_t anchor = size_arg(info, 0, "anchor", 0);
    const size_t relation = size_arg(info, 1, "relation", 0);
    const int32_t a = anchor < static_cast<size_t>(index_.num_entities()) ? static_cast<int32_t>(anchor) : -1;
    const int32_t r = relation < static_cast<size_t>(index_.num_relations()) ? static_cast<int32_t>(relation) : -1;
    Napi::Int32Array out = Napi::Int32Array::New(info.Env(), index_.count(a, r));
    size_t k = 0;
    index_.for_each_answer(a, r, [&](int32_t b) { out[k++] = b; });
    return out;
  }

  // missing(anchor, relation, answer: Int32Array) -> index of the first row whose answer is not a known answer of
  // its (anchor, relation), or -1 when every row's is. Ids must be in range (checked).
  Napi::Value Missing(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const int32_t* ids[3];
    size_t rows = 0;
    const char* names[3] = {"anchor", "relation", "answer"};
    for (size_t k = 0; k < 3; ++k) {
      Napi::TypedArray a = typed_array_arg(info, k, names[k]);
      if (a.TypedArrayType() != napi_int32_array) throw_type(env, std::string(names[k]) + " must be an Int32Array");
      if (k == 0) rows = a.ElementLength();
      if (a.ElementLength() != rows) throw_range(env, "anchor, relation and answer must have the same length");
      ids[k] = static_cast<const int32_t*>(raw_data(a));
    }
    for (size_t r = 0; r < rows; ++r) {
      if (!index_.contains(ids[0][r], ids[1][r], ids[2][r])) return Napi::Number::New(env, static_cast<double>(r));
    }
    return Napi::Number::New(env, -1);
  }

  // answerCounts(triples: Int32Array (rows x 3), out: Float64Array (rows)) -> undefined: out[i] = the number of
  // known answers of triple i's key (FilterIndex::answer_counts). An id out of range is a failed status (IdOutOfRange,
  // index = its flat index into triples), thrown as every one is (common.h); src/backend/backend.ts returns it.
  Napi::Value AnswerCounts(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::TypedArray triples = typed_array_arg(info, 0, "triples");
    if (triples.TypedArrayType() != napi_int32_array || triples.ElementLength() % 3 != 0) {
      throw_type(env, "triples must be an Int32Array of (head, relation, tail) rows");
    }
    const size_t rows = triples.ElementLength() / 3;
    Napi::TypedArray out = typed_array_arg(info, 1, "out");
    if (out.TypedArrayType() != napi_float64_array || out.ElementLength() != rows) {
      throw_type(env, "out must be a Float64Array with one element per triple");
    }
    check_status(env, index_.answer_counts(static_cast<const int32_t*>(raw_data(triples)), rows,
                                           static_cast<double*>(raw_data(out))));
    return env.Undefined();
  }

  Napi::Value Stats(const Napi::CallbackInfo& info) {
    Napi::Object out = Napi::Object::New(info.Env());
    out.Set("keys", static_cast<double>(index_.num_keys()));
    out.Set("answers", static_cast<double>(index_.num_answers()));
    out.Set("bytes", static_cast<double>(index_.bytes()));
    out.Set("wide", index_.wide());
    return out;
  }

  // Arguments: scores, numColumns, anchor, relation, truth (Int32Array each), thresholdsOut, greater, equal, nan,
  // removed (Float64Array each), simd, threads.
  FilteredJob job(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::TypedArray scores = typed_array_arg(info, 0, "scores");
    const size_t cols = size_arg(info, 1, "numColumns", 1);
    if (cols != static_cast<size_t>(index_.num_entities()))
      throw_range(env, "numColumns must equal the index's numEntities");
    FilteredJob j;
    j.cols = cols;
    fill_job(info, scores, 2, &j);
    return j;
  }

  // The column slice of every row: scores (rows x width), columnStart, width, anchor, relation, truth (Int32Array
  // each), thresholds (given, scores' type), greater, equal, nan, removed (Float64Array each), simd, threads.
  FilteredJob range_job(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::TypedArray scores = typed_array_arg(info, 0, "scores");
    const size_t start = size_arg(info, 1, "columnStart", 0);
    const size_t width = size_arg(info, 2, "width", 1);
    const size_t entities = static_cast<size_t>(index_.num_entities());
    if (start > entities || width > entities - start) {
      throw_range(env, "columns [" + std::to_string(start) + ", " + std::to_string(start + width) +
                           ") run past the index's numEntities " + std::to_string(entities));
    }
    FilteredJob j;
    j.cols = width;
    j.range = true;
    j.column_start = start;
    fill_job(info, scores, 3, &j);
    return j;
  }

  // The arguments both jobs share, from info[first] on: anchor, relation, truth, thresholds, greater, equal, nan,
  // removed, simd, threads. Rows = scores.length / j->cols.
  void fill_job(const Napi::CallbackInfo& info, const Napi::TypedArray& scores, size_t first, FilteredJob* j) {
    Napi::Env env = info.Env();
    const napi_typedarray_type type = scores.TypedArrayType();
    if (type != napi_float32_array && type != napi_float64_array)
      throw_type(env, "scores must be a Float32Array or Float64Array");
    const size_t cols = j->cols;
    if (scores.ElementLength() % cols != 0) throw_range(env, "scores.length must be a multiple of the row width");
    const size_t rows = scores.ElementLength() / cols;
    j->type = type;
    j->scores = raw_data(scores);
    j->rows = rows;
    const char* names[3] = {"anchor", "relation", "truth"};
    const size_t entities = static_cast<size_t>(index_.num_entities());
    const size_t bounds[3] = {entities, static_cast<size_t>(index_.num_relations()), entities};
    j->ids.resize(3 * rows);
    for (size_t k = 0; k < 3; ++k) {
      Napi::TypedArray a = typed_array_arg(info, first + k, names[k]);
      if (a.TypedArrayType() != napi_int32_array || a.ElementLength() != rows) {
        throw_type(env, std::string(names[k]) + " must be an Int32Array with one element per row");
      }
      const auto* src = static_cast<const int32_t*>(raw_data(a));
      int32_t* own = j->ids.data() + k * rows;
      std::copy(src, src + rows, own);
      for (size_t r = 0; r < rows; ++r) {
        if (own[r] < 0 || static_cast<size_t>(own[r]) >= bounds[k]) {
          throw_range(env, std::string(names[k]) + "[" + std::to_string(r) + "] is " + std::to_string(own[r]) +
                               ", out of range");
        }
      }
    }
    const char* th_name = j->range ? "thresholds" : "thresholdsOut";
    Napi::TypedArray th = typed_array_arg(info, first + 3, th_name);
    if (th.TypedArrayType() != type || th.ElementLength() != rows) {
      throw_type(env, std::string(th_name) + " must match scores' type, one per row");
    }
    j->thresholds = raw_data(th);
    const char* outs[4] = {"greater", "equal", "nan", "removed"};
    for (size_t k = 0; k < 4; ++k) {
      Napi::TypedArray o = typed_array_arg(info, first + 4 + k, outs[k]);
      if (o.TypedArrayType() != napi_float64_array || o.ElementLength() != rows) {
        throw_type(env, std::string(outs[k]) + " must be a Float64Array with one element per row");
      }
      j->out[k] = static_cast<double*>(raw_data(o));
    }
    j->index = &index_;
    j->options = options_arg(info, first + 8, first + 9);
  }

  Napi::Value CountFiltered(const Napi::CallbackInfo& info) {
    job(info).run();
    return info.Env().Undefined();
  }

  // The batch of a one-call rank (rankTriples, rankTriplesConstrained): scores (arguments 0) of whole entity rows,
  // and triples (1) of 3 ids per row.
  struct OneCallBatch {
    Napi::TypedArray scores;
    napi_typedarray_type type;
    size_t rows;
    const int32_t* triples;
  };
  OneCallBatch one_call_batch(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    OneCallBatch b;
    b.scores = typed_array_arg(info, 0, "scores");
    b.type = b.scores.TypedArrayType();
    if (b.type != napi_float32_array && b.type != napi_float64_array)
      throw_type(env, "scores must be a Float32Array or Float64Array");
    const size_t cols = static_cast<size_t>(index_.num_entities());
    if (b.scores.ElementLength() % cols != 0) throw_range(env, "scores.length must be a multiple of numEntities");
    b.rows = b.scores.ElementLength() / cols;
    Napi::TypedArray triples = typed_array_arg(info, 1, "triples");
    if (triples.TypedArrayType() != napi_int32_array || triples.ElementLength() != 3 * b.rows) {
      throw_type(env, "triples must be an Int32Array of 3 ids per score row");
    }
    b.triples = static_cast<const int32_t*>(raw_data(triples));
    return b;
  }

  // Its outputs from argument `first` on: keysOut (3 x rows), thresholdsOut (scores' type, one per row), out
  // (6 x rows), then simd and threads.
  struct OneCallOut {
    int32_t* keys;
    void* thresholds;
    double* out;
    CountOptions options;
  };
  OneCallOut one_call_out(const Napi::CallbackInfo& info, size_t first, const OneCallBatch& b) {
    Napi::Env env = info.Env();
    Napi::TypedArray keys = typed_array_arg(info, first, "keysOut");
    if (keys.TypedArrayType() != napi_int32_array || keys.ElementLength() != 3 * b.rows) {
      throw_type(env, "keysOut must be an Int32Array of 3 x rows");
    }
    Napi::TypedArray th = typed_array_arg(info, first + 1, "thresholdsOut");
    if (th.TypedArrayType() != b.type || th.ElementLength() != b.rows)
      throw_type(env, "thresholdsOut must match scores' type, one per row");
    Napi::TypedArray outArr = typed_array_arg(info, first + 2, "out");
    if (outArr.TypedArrayType() != napi_float64_array || outArr.ElementLength() != 6 * b.rows) {
      throw_type(env, "out must be a Float64Array of 6 x rows");
    }
    return {static_cast<int32_t*>(raw_data(keys)), raw_data(th), static_cast<double*>(raw_data(outArr)),
            options_arg(info, first + 3, first + 4)};
  }

  // rankTriples(scores, triples, keysOut, thresholdsOut, out, simd, threads) -> undefined
  // A whole evaluator batch in one call (kgrank::rank_triples, count.h): keysOut = [relation | anchor | truth],
  // out = [optimistic | pessimistic | realistic | numCandidates | weight = NaN | scratch]. A triple id out of range,
  // a NaN true score or an evaluated triple not in the index is a failed status, thrown as every one is (common.h);
  // src/backend/backend.ts turns it back into the FilterIndexHandle's problem code.
  Napi::Value RankTriples(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const OneCallBatch b = one_call_batch(info);
    const OneCallOut o = one_call_out(info, 2, b);
    check_status(env, b.type == napi_float32_array
                          ? kgrank::rank_triples(static_cast<const float*>(raw_data(b.scores)), b.rows, b.triples,
                                                 index_, o.keys, static_cast<float*>(o.thresholds), o.out, o.options)
                          : kgrank::rank_triples(static_cast<const double*>(raw_data(b.scores)), b.rows, b.triples,
                                                 index_, o.keys, static_cast<double*>(o.thresholds), o.out, o.options));
    return env.Undefined();
  }

  // rankTriplesConstrained(scores, triples, filtered, offsets, ids, bits, bitsAt, keysOut, thresholdsOut, out, simd,
  // threads)
  // rankTriples with each task's candidates cut to its relation's allowed set (kgrank::rank_triples_constrained,
  // constrained.h): offsets (numRelations + 1) and ids are Int32Arrays, relation r's set ids[offsets[r] ..
  // offsets[r + 1]); bits (Uint16Array) and bitsAt (Int32Array, numRelations) the dense relations' bit sets, or both
  // null; the core checks them (a broken set is InvalidInput) before it reads a score through them.
  Napi::Value RankTriplesConstrained(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const OneCallBatch b = one_call_batch(info);
    if (info.Length() <= 2 || !info[2].IsBoolean()) throw_type(env, "filtered must be a boolean");
    const bool filtered = info[2].As<Napi::Boolean>().Value();
    Napi::TypedArray offsets = typed_array_arg(info, 3, "offsets");
    if (offsets.TypedArrayType() != napi_int32_array ||
        offsets.ElementLength() != static_cast<size_t>(index_.num_relations()) + 1) {
      throw_type(env, "offsets must be an Int32Array of numRelations + 1 entries");
    }
    Napi::TypedArray ids = typed_array_arg(info, 4, "ids");
    if (ids.TypedArrayType() != napi_int32_array) throw_type(env, "ids must be an Int32Array");
    kgrank::CandidateSets sets;
    sets.offsets = static_cast<const uint32_t*>(raw_data(offsets));
    sets.ids = static_cast<const uint32_t*>(raw_data(ids));
    sets.size = ids.ElementLength();
    if (info.Length() > 6 && !info[5].IsNull() && !info[6].IsNull()) {
      Napi::TypedArray bits = typed_array_arg(info, 5, "bits");
      if (bits.TypedArrayType() != napi_uint16_array) throw_type(env, "bits must be a Uint16Array");
      Napi::TypedArray bitsAt = typed_array_arg(info, 6, "bitsAt");
      if (bitsAt.TypedArrayType() != napi_int32_array ||
          bitsAt.ElementLength() != static_cast<size_t>(index_.num_relations())) {
        throw_type(env, "bitsAt must be an Int32Array of numRelations entries");
      }
      sets.bits = static_cast<const uint16_t*>(raw_data(bits));
      sets.bits_at = static_cast<const int32_t*>(raw_data(bitsAt));
      sets.bits_size = bits.ElementLength();
    }
    const OneCallOut o = one_call_out(info, 7, b);
    check_status(env, b.type == napi_float32_array
                          ? kgrank::rank_triples_constrained(static_cast<const float*>(raw_data(b.scores)), b.rows,
                                                             b.triples, index_, filtered, sets, o.keys,
                                                             static_cast<float*>(o.thresholds), o.out, o.options)
                          : kgrank::rank_triples_constrained(static_cast<const double*>(raw_data(b.scores)), b.rows,
                                                             b.triples, index_, filtered, sets, o.keys,
                                                             static_cast<double*>(o.thresholds), o.out, o.options));
    return env.Undefined();
  }

  // The ten arrays of countFiltered are held and pinned until the promise settles, and this index with them (it
  // must outlive the job). An optional job control follows threads (argument 12).
  Napi::Value CountFilteredAsync(const Napi::CallbackInfo& info) {
    return queue_job(info, "countFilteredAsync", job(info), 10, 12, info.This());
  }

  Napi::Value CountFilteredRange(const Napi::CallbackInfo& info) {
    range_job(info).run();
    return info.Env().Undefined();
  }

  // The eleven arguments of countFilteredRange (arrays and the two numbers between them) are held, the arrays pinned,
  // until the promise settles, and this index with them. An optional job control follows threads (argument 13).
  Napi::Value CountFilteredRangeAsync(const Napi::CallbackInfo& info) {
    return queue_job(info, "countFilteredRangeAsync", range_job(info), 11, 13, info.This());
  }

  FilterIndex index_;
  int64_t external_ = 0;
};

}  // namespace

void register_filter(Napi::Env env, Napi::Object exports) { exports.Set("FilterIndex", FilterIndexWrap::Define(env)); }

}  // namespace kgrank_addon
