// Bindings of the filter index (a JavaScript class wrapping kgrank::FilterIndex) and of filtered counting.
#include <napi.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "../core/constrained.h"
#include "../core/count.h"
#include "../core/filter_index.h"
#include "args.h"
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

  // new FilterIndex({ triples: Int32Array[], numEntities, numRelations, side: 0 = head | 1 = tail, threads })
  explicit FilterIndexWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<FilterIndexWrap>(info) {
    // The index's arrays are sized by numEntities and the triple count: a failed allocation is a typed error.
    guarded(info.Env(), "buildFilterIndex", [&] { build(Args(info, "FilterIndex")); });
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

  void build(const Args& args) {
    Napi::Env env = args.env();
    std::vector<kgrank::TripleSpan> spans;
    const std::vector<Napi::TypedArray> lists = args.typed_list("triples", napi_int32_array);
    for (size_t i = 0; i < lists.size(); ++i) {
      if (lists[i].ElementLength() % 3 != 0) {
        args.range_error("triples[" + std::to_string(i) + "]", "length must be a multiple of 3");
      }
      spans.push_back({static_cast<const int32_t*>(raw_data(lists[i])), lists[i].ElementLength() / 3});
    }
    const size_t entities = args.size("numEntities", 1);
    const size_t relations = args.size("numRelations", 1);
    if (entities > 2147483647u) args.range_error("numEntities", "must be < 2^31");
    if (relations > 2147483647u) args.range_error("numRelations", "must be < 2^31");
    const size_t side = args.size("side", 0);
    if (side > 1) args.range_error("side", "must be 0 (head) or 1 (tail)");
    const unsigned threads = args.threads();
    check_status(env,
                 FilterIndex::build(spans, static_cast<int32_t>(entities), static_cast<int32_t>(relations),
                                    side == 1 ? FilterIndex::Side::Tail : FilterIndex::Side::Head, threads, &index_));
    // Tell V8 how much native memory this object holds, so it collects large indexes promptly.
    external_ = static_cast<int64_t>(index_.bytes());
    Napi::MemoryManagement::AdjustExternalMemory(env, external_);
  }

  // answers({ anchor, relation }) -> the known answers of the key (none when an id is out of range).
  Napi::Value Answers(const Napi::CallbackInfo& info) {
    const Args args(info, "answers");
    const size_t anchor = args.size("anchor", 0);
    const size_t relation = args.size("relation", 0);
    const int32_t a = anchor < static_cast<size_t>(index_.num_entities()) ? static_cast<int32_t>(anchor) : -1;
    const int32_t r = relation < static_cast<size_t>(index_.num_relations()) ? static_cast<int32_t>(relation) : -1;
    Napi::Int32Array out = Napi::Int32Array::New(info.Env(), index_.count(a, r));
    size_t k = 0;
    index_.for_each_answer(a, r, [&](int32_t b) { out[k++] = b; });
    return out;
  }

  // missing({ anchor, relation, answer: Int32Array each }) -> index of the first row whose answer is not a known
  // answer of its (anchor, relation), or -1 when every row's is. Ids must be in range (checked).
  Napi::Value Missing(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const Args args(info, "missing");
    const int32_t* ids[3];
    size_t rows = 0;
    const char* names[3] = {"anchor", "relation", "answer"};
    for (size_t k = 0; k < 3; ++k) {
      Napi::TypedArray a = args.typed(names[k], napi_int32_array);
      if (k == 0) rows = a.ElementLength();
      expect_length(args, names[k], a, rows, "as many ids as anchor");
      ids[k] = static_cast<const int32_t*>(raw_data(a));
    }
    for (size_t r = 0; r < rows; ++r) {
      if (!index_.contains(ids[0][r], ids[1][r], ids[2][r])) return Napi::Number::New(env, static_cast<double>(r));
    }
    return Napi::Number::New(env, -1);
  }

  // answerCounts({ triples: Int32Array (rows x 3), out: Float64Array (rows) }) -> undefined: out[i] = the number of
  // known answers of triple i's key (FilterIndex::answer_counts). An id out of range is a failed status (IdOutOfRange,
  // index = its flat index into triples), thrown as every one is (common.h); src/backend/filter-index.ts returns it.
  Napi::Value AnswerCounts(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const Args args(info, "answerCounts");
    Napi::TypedArray triples = args.typed("triples", napi_int32_array);
    if (triples.ElementLength() % 3 != 0) args.range_error("triples", "must hold (head, relation, tail) rows");
    const size_t rows = triples.ElementLength() / 3;
    Napi::TypedArray out = args.typed("out", napi_float64_array);
    expect_length(args, "out", out, rows, "one element per triple");
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

  // countFiltered({ scores (rows x numEntities), anchor, relation, truth (Int32Array each), thresholds (written,
  // scores' type), greater, equal, nan, removed (Float64Array each), simd, threads }).
  FilteredJob job(const Args& args) {
    Napi::TypedArray scores = args.floats("scores");
    FilteredJob j;
    j.cols = static_cast<size_t>(index_.num_entities());
    fill_job(args, scores, &j);
    return j;
  }

  // countFilteredRange: the column slice [columnStart, columnStart + width) of every row; the record of
  // countFiltered plus columnStart and width, scores being rows x width and thresholds given.
  FilteredJob range_job(const Args& args) {
    Napi::TypedArray scores = args.floats("scores");
    const size_t start = args.size("columnStart", 0);
    const size_t width = args.size("width", 1);
    const size_t entities = static_cast<size_t>(index_.num_entities());
    if (start > entities || width > entities - start) {
      args.range_error("width", "makes columns [" + std::to_string(start) + ", " + std::to_string(start + width) +
                                    ") that run past the index's numEntities " + std::to_string(entities));
    }
    FilteredJob j;
    j.cols = width;
    j.range = true;
    j.column_start = start;
    fill_job(args, scores, &j);
    return j;
  }

  // The fields both jobs share: anchor, relation, truth, thresholds, greater, equal, nan, removed, simd, threads.
  // Rows = scores.length / j->cols.
  void fill_job(const Args& args, const Napi::TypedArray& scores, FilteredJob* j) {
    const napi_typedarray_type type = scores.TypedArrayType();
    const size_t cols = j->cols;
    if (scores.ElementLength() % cols != 0) args.range_error("scores", "length must be a multiple of the row width");
    const size_t rows = scores.ElementLength() / cols;
    j->type = type;
    j->scores = raw_data(scores);
    j->rows = rows;
    const char* names[3] = {"anchor", "relation", "truth"};
    const size_t entities = static_cast<size_t>(index_.num_entities());
    const size_t bounds[3] = {entities, static_cast<size_t>(index_.num_relations()), entities};
    j->ids.resize(3 * rows);
    for (size_t k = 0; k < 3; ++k) {
      Napi::TypedArray a = args.typed(names[k], napi_int32_array);
      expect_length(args, names[k], a, rows, "one element per row");
      const auto* src = static_cast<const int32_t*>(raw_data(a));
      int32_t* own = j->ids.data() + k * rows;
      std::copy(src, src + rows, own);
      for (size_t r = 0; r < rows; ++r) {
        if (own[r] < 0 || static_cast<size_t>(own[r]) >= bounds[k]) {
          args.range_error(std::string(names[k]) + "[" + std::to_string(r) + "]",
                           "is " + std::to_string(own[r]) + ", out of range");
        }
      }
    }
    Napi::TypedArray th = args.typed("thresholds", type);
    expect_length(args, "thresholds", th, rows, "one element per row");
    j->thresholds = raw_data(th);
    const char* outs[4] = {"greater", "equal", "nan", "removed"};
    for (size_t k = 0; k < 4; ++k) {
      Napi::TypedArray o = args.typed(outs[k], napi_float64_array);
      expect_length(args, outs[k], o, rows, "one element per row");
      j->out[k] = static_cast<double*>(raw_data(o));
    }
    j->index = &index_;
    j->options = args.options();
  }

  Napi::Value CountFiltered(const Napi::CallbackInfo& info) {
    job(Args(info, "countFiltered")).run();
    return info.Env().Undefined();
  }

  // The batch of a one-call rank (rankTriples, rankTriplesConstrained): scores of whole entity rows, triples of 3
  // ids per row.
  struct OneCallBatch {
    Napi::TypedArray scores;
    napi_typedarray_type type;
    size_t rows;
    const int32_t* triples;
  };
  OneCallBatch one_call_batch(const Args& args) {
    OneCallBatch b;
    b.scores = args.floats("scores");
    b.type = b.scores.TypedArrayType();
    const size_t cols = static_cast<size_t>(index_.num_entities());
    if (b.scores.ElementLength() % cols != 0) args.range_error("scores", "length must be a multiple of numEntities");
    b.rows = b.scores.ElementLength() / cols;
    Napi::TypedArray triples = args.typed("triples", napi_int32_array);
    expect_length(args, "triples", triples, 3 * b.rows, "3 ids per score row");
    b.triples = static_cast<const int32_t*>(raw_data(triples));
    return b;
  }

  // Its outputs: keys (3 x rows), thresholds (scores' type, one per row), out (6 x rows), then simd and threads.
  struct OneCallOut {
    int32_t* keys;
    void* thresholds;
    double* out;
    CountOptions options;
  };
  OneCallOut one_call_out(const Args& args, const OneCallBatch& b) {
    Napi::TypedArray keys = args.typed("keys", napi_int32_array);
    expect_length(args, "keys", keys, 3 * b.rows, "3 x rows ids");
    Napi::TypedArray th = args.typed("thresholds", b.type);
    expect_length(args, "thresholds", th, b.rows, "one element per row");
    Napi::TypedArray out = args.typed("out", napi_float64_array);
    expect_length(args, "out", out, 6 * b.rows, "6 x rows values");
    return {static_cast<int32_t*>(raw_data(keys)), raw_data(th), static_cast<double*>(raw_data(out)), args.options()};
  }

  // rankTriples({ scores, triples, keys, thresholds, out, simd, threads }) -> undefined
  // A whole evaluator batch in one call (kgrank::rank_triples, count.h): keys = [relation | anchor | truth],
  // out = [optimistic | pessimistic | realistic | numCandidates | weight = NaN | scratch]. A triple id out of range,
  // a NaN true score or an evaluated triple not in the index is a failed status, thrown as every one is (common.h);
  // src/backend/filter-index.ts turns it back into the FilterIndexHandle's problem code.
  Napi::Value RankTriples(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const Args args(info, "rankTriples");
    const OneCallBatch b = one_call_batch(args);
    const OneCallOut o = one_call_out(args, b);
    check_status(env, b.type == napi_float32_array
                          ? kgrank::rank_triples(static_cast<const float*>(raw_data(b.scores)), b.rows, b.triples,
                                                 index_, o.keys, static_cast<float*>(o.thresholds), o.out, o.options)
                          : kgrank::rank_triples(static_cast<const double*>(raw_data(b.scores)), b.rows, b.triples,
                                                 index_, o.keys, static_cast<double*>(o.thresholds), o.out, o.options));
    return env.Undefined();
  }

  // rankTriplesConstrained({ scores, triples, filtered, sets: { offsets, ids, bits?, bitsAt? }, keys, thresholds,
  // out, simd, threads })
  // rankTriples with each task's candidates cut to its relation's allowed set (kgrank::rank_triples_constrained,
  // constrained.h): offsets (numRelations + 1) and ids are Int32Arrays, relation r's set ids[offsets[r] ..
  // offsets[r + 1]); bits (Uint16Array) and bitsAt (Int32Array, numRelations) the dense relations' bit sets, or both
  // absent; the core checks them (a broken set is InvalidInput) before it reads a score through them.
  Napi::Value RankTriplesConstrained(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const Args args(info, "rankTriplesConstrained");
    const OneCallBatch b = one_call_batch(args);
    const bool filtered = args.boolean("filtered");
    const Args set_args = args.record("sets");
    Napi::TypedArray offsets = set_args.typed("offsets", napi_int32_array);
    expect_length(set_args, "offsets", offsets, static_cast<size_t>(index_.num_relations()) + 1,
                  "numRelations + 1 entries");
    Napi::TypedArray ids = set_args.typed("ids", napi_int32_array);
    kgrank::CandidateSets sets;
    sets.offsets = static_cast<const uint32_t*>(raw_data(offsets));
    sets.ids = static_cast<const uint32_t*>(raw_data(ids));
    sets.size = ids.ElementLength();
    Napi::TypedArray bits = set_args.optional_typed("bits", napi_uint16_array);
    Napi::TypedArray bits_at = set_args.optional_typed("bitsAt", napi_int32_array);
    if (bits.IsEmpty() != bits_at.IsEmpty()) {
      set_args.range_error(bits.IsEmpty() ? "bitsAt" : "bits", "needs the other of bits and bitsAt");
    }
    if (!bits.IsEmpty()) {
      expect_length(set_args, "bitsAt", bits_at, static_cast<size_t>(index_.num_relations()), "numRelations entries");
      sets.bits = static_cast<const uint16_t*>(raw_data(bits));
      sets.bits_at = static_cast<const int32_t*>(raw_data(bits_at));
      sets.bits_size = bits.ElementLength();
    }
    const OneCallOut o = one_call_out(args, b);
    check_status(env, b.type == napi_float32_array
                          ? kgrank::rank_triples_constrained(static_cast<const float*>(raw_data(b.scores)), b.rows,
                                                             b.triples, index_, filtered, sets, o.keys,
                                                             static_cast<float*>(o.thresholds), o.out, o.options)
                          : kgrank::rank_triples_constrained(static_cast<const double*>(raw_data(b.scores)), b.rows,
                                                             b.triples, index_, filtered, sets, o.keys,
                                                             static_cast<double*>(o.thresholds), o.out, o.options));
    return env.Undefined();
  }

  // countFiltered's record, then an optional job control; its arrays are held until the promise settles, and this
  // index with them (it must outlive the job).
  Napi::Value CountFilteredAsync(const Napi::CallbackInfo& info) {
    const Args args(info, "countFilteredAsync");
    return queue_job(info, args, job(args), 1, info.This());
  }

  Napi::Value CountFilteredRange(const Napi::CallbackInfo& info) {
    range_job(Args(info, "countFilteredRange")).run();
    return info.Env().Undefined();
  }

  Napi::Value CountFilteredRangeAsync(const Napi::CallbackInfo& info) {
    const Args args(info, "countFilteredRangeAsync");
    return queue_job(info, args, range_job(args), 1, info.This());
  }

  FilterIndex index_;
  int64_t external_ = 0;
};

}  // namespace

void register_filter(Napi::Env env, Napi::Object exports) { exports.Set("FilterIndex", FilterIndexWrap::Define(env)); }

}  // namespace kgrank_addon
