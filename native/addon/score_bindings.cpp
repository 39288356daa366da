// Bindings of ranking from embeddings (native/core/interaction.h) and of the FMA peak probe. Its own file: the job
// copies every id array it indexes with on the JavaScript thread, checks the copies, and runs on them, so nothing
// the caller does to its arrays during an async job can send the core out of bounds.
#include <napi.h>

#include <cmath>
#include <memory>
#include <vector>

#include "../core/interaction.h"
#include "async.h"
#include "common.h"

namespace kgrank_addon {

namespace {

using kgrank::ComplexLayout;
using kgrank::Interaction;

// Ids copied and checked: the job reads only these.
struct Ids {
  std::vector<int32_t> anchor, relation, truth, candidates, negatives, exclude_ids;
  std::vector<uint32_t> exclude_offsets;
  std::vector<double> true_scores;
  // Typed candidates by relation (checked: offsets from 0, not decreasing, within set_ids; each relation's ids
  // ascending entity ids); empty for none.
  std::vector<uint32_t> set_offsets;
  std::vector<int32_t> set_ids;
};

struct ScoreJob {
  bool wide;
  const void* entity;
  const void* relation;
  const void* scale;         // or null
  const void* anchor_rows;   // or null: the anchors' rows come from the table
  const void* anchor_scale;  // or null
  size_t entity_offset;
  Interaction interaction;
  ComplexLayout layout;
  size_t num_entities, entity_width, num_relations, relation_width;
  double phase_scale;
  bool head_side;
  size_t negatives_per_row;
  std::shared_ptr<const Ids> ids;
  double* out;  // 5 x rows + 2 status slots
  SimdLevel simd;
  unsigned threads;

  // Rows [r0, r1) of the batch: each row's counts are integer sums over its own candidates, so any split of the
  // rows gives the same results. A failed status names its row in the whole batch.
  template <class T>
  kgrank::Status go(size_t r0, size_t r1, kgrank::JobControl* control) const {
    kgrank::EmbeddingModel<T> m{interaction,
                                layout,
                                static_cast<const T*>(entity),
                                static_cast<const T*>(relation),
                                num_entities,
                                num_relations,
                                entity_width,
                                relation_width,
                                phase_scale,
                                static_cast<const T*>(scale)};
    m.entity_offset = entity_offset;
    // The rows given apart are per query: this range's start at row r0.
    m.anchor_rows = anchor_rows ? static_cast<const T*>(anchor_rows) + r0 * entity_width : nullptr;
    m.anchor_scale = anchor_scale ? static_cast<const T*>(anchor_scale) + r0 : nullptr;
    const size_t rows = ids->anchor.size();
    kgrank::EmbeddingQueries q;
    q.rows = r1 - r0;
    q.head_side = head_side;
    q.anchor = ids->anchor.data() + r0;
    q.relation = ids->relation.data() + r0;
    q.truth = ids->truth.data() + r0;
    if (!ids->candidates.empty()) {
      q.candidates = ids->candidates.data();
      q.num_candidates = ids->candidates.size();
    }
    if (negatives_per_row > 0) {
      q.negatives = ids->negatives.data() + r0 * negatives_per_row;
      q.negatives_per_row = negatives_per_row;
    }
    if (!ids->exclude_offsets.empty()) {
      q.exclude_offsets = ids->exclude_offsets.data() + r0;  // offsets index the whole exclude_ids
      q.exclude_ids = ids->exclude_ids.data();
    }
    if (!ids->true_scores.empty()) q.true_scores = ids->true_scores.data() + r0;
    if (!ids->set_offsets.empty()) {
      q.set_offsets = ids->set_offsets.data();
      q.set_ids = ids->set_ids.data();
    }
    kgrank::EmbeddingCounts c{out + r0, out + rows + r0, out + 2 * rows + r0, out + 3 * rows + r0, out + 4 * rows + r0};
    kgrank::Status s = kgrank::rank_embeddings<T>(m, q, c, simd, threads, control);
    if (!s.ok()) s.index += r0;
    return s;
  }

  // Rows [r0, r1); writes the status slots when it fails or reaches the last row, and returns whether to go on.
  bool run_range(size_t r0, size_t r1, kgrank::JobControl* control) const {
    kgrank::Status s;
    try {
      s = wide ? go<double>(r0, r1, control) : go<float>(r0, r1, control);
    } catch (const std::bad_alloc&) {
      s = kgrank::Status::invalid("out of memory");
    }
    const size_t rows = ids->anchor.size();
    if (s.ok() && r1 < rows) return true;
    out[5 * rows] = static_cast<double>(static_cast<int>(s.code));
    out[5 * rows + 1] = static_cast<double>(s.index);
    return s.ok();
  }

  void run() const { run_range(0, ids->anchor.size(), nullptr); }

  // The async runner's interface (async.h): slices of about kSliceBytes multiply-adds (the rows' candidates times
  // the width), in whole blocks of 256 rows, the block the scoring kernel shares one pass over the entities among.
  size_t total_rows() const { return ids->anchor.size(); }
  size_t slice_rows() const {
    // Typed candidates: the largest set bounds a row's.
    size_t set_max = 0;
    for (size_t r = 0; r + 1 < ids->set_offsets.size(); ++r) {
      set_max = std::max<size_t>(set_max, ids->set_offsets[r + 1] - ids->set_offsets[r]);
    }
    const size_t per_row = std::max<size_t>(1, (negatives_per_row > 0       ? negatives_per_row
                                                : !ids->set_offsets.empty() ? set_max
                                                : ids->candidates.empty()   ? num_entities
                                                                            : ids->candidates.size()) *
                                                   entity_width);
    const size_t block = 256;
    const size_t want = std::max<size_t>(1, kSliceBytes / per_row);
    return (want + block - 1) / block * block;
  }
  bool run_rows(size_t r0, size_t r1) const { return run_range(r0, r1, nullptr); }
};

template <class T>
std::vector<T> copy_ids(const Napi::CallbackInfo& info, size_t index, const char* name, napi_typedarray_type type) {
  Napi::TypedArray a = typed_array_arg(info, index, name);
  if (a.TypedArrayType() != type) throw_type(info.Env(), std::string(name) + " has the wrong element type");
  const T* p = static_cast<const T*>(raw_data(a));
  return std::vector<T>(p, p + a.ElementLength());
}

void check_range(Napi::Env env, const std::vector<int32_t>& v, size_t bound, const char* name) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 0 || static_cast<size_t>(v[i]) >= bound) {
      throw_range(env, std::string(name) + "[" + std::to_string(i) + "] = " + std::to_string(v[i]) +
                           " is outside [0, " + std::to_string(bound) + ")");
    }
  }
}

// Typed candidates (arguments 14 and 15): copied, then checked on the copies. The offsets must cover every relation
// a row names (relation ids were checked against numRelations first), start at 0, not decrease and end within the
// ids; each relation's ids must be ascending entity ids (no repeat: a repeat would be counted twice).
void check_sets(Napi::Env env, const Napi::CallbackInfo& info, size_t rows, size_t num_entities, Ids* ids) {
  const std::vector<int32_t> offsets = copy_ids<int32_t>(info, 14, "setOffsets", napi_int32_array);
  ids->set_ids = copy_ids<int32_t>(info, 15, "setIds", napi_int32_array);
  if (offsets.empty()) {
    if (!ids->set_ids.empty()) throw_range(env, "setIds needs setOffsets");
    return;
  }
  size_t used = 0;
  for (size_t i = 0; i < rows; ++i) used = std::max(used, static_cast<size_t>(ids->relation[i]) + 1);
  if (offsets.size() < used + 1) {
    throw_range(env, "setOffsets must hold an offset per relation the rows name, plus one");
  }
  if (offsets[0] != 0) throw_range(env, "setOffsets must start at 0");
  ids->set_offsets.resize(used + 1);
  for (size_t r = 0; r <= used; ++r) {
    if (offsets[r] < 0 || static_cast<size_t>(offsets[r]) > ids->set_ids.size() ||
        (r > 0 && offsets[r] < offsets[r - 1])) {
      throw_range(env, "setOffsets[" + std::to_string(r) + "] = " + std::to_string(offsets[r]) +
                           " is not an ascending offset within setIds");
    }
    ids->set_offsets[r] = static_cast<uint32_t>(offsets[r]);
  }
  for (size_t r = 0; r < used; ++r) {
    for (uint32_t k = ids->set_offsets[r]; k < ids->set_offsets[r + 1]; ++k) {
      const int32_t v = ids->set_ids[k];
      if (v < 0 || static_cast<size_t>(v) >= num_entities || (k > ids->set_offsets[r] && v <= ids->set_ids[k - 1])) {
        throw_range(env, "setIds[" + std::to_string(k) + "] = " + std::to_string(v) + " (relation " +
                             std::to_string(r) + ") is not an entity id in [0, " + std::to_string(num_entities) +
                             ") above the relation's previous one");
      }
    }
  }
}

// Arguments: entity, relation, entityScale (same type; length 0 = none), meta (Float64Array: interaction, layout,
// numEntities, entityWidth, numRelations, relationWidth, phaseScale, headSide, entityOffset), anchor, relation ids,
// truth, candidates (length 0 = all), negatives (length 0 = none), excludeOffsets (Uint32Array, length 0 = none),
// excludeIds, anchorRows (entity's type, rows x entityWidth; length 0 = from the table), anchorScale (length 0 =
// none), trueScores (Float64Array, rows; length 0 = computed from truth), setOffsets and setIds (Int32Array each,
// typed candidates: relation r's candidates are setIds[setOffsets[r] .. setOffsets[r + 1]), ascending; length 0 =
// none), out (Float64Array, 5 x rows + 2: greater | equal | nan | removed | trueScore | status, index),
// negativesPerRow, simd, threads; the async binding takes an optional job control after threads (async.h).
ScoreJob score_job(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::TypedArray ent = typed_array_arg(info, 0, "entity");
  Napi::TypedArray rel = typed_array_arg(info, 1, "relation");
  Napi::TypedArray scale = typed_array_arg(info, 2, "entityScale");
  const napi_typedarray_type type = ent.TypedArrayType();
  if (type != napi_float32_array && type != napi_float64_array)
    throw_type(env, "entity must be a Float32Array or Float64Array");
  if (rel.TypedArrayType() != type || scale.TypedArrayType() != type) {
    throw_type(env, "relation and entityScale must have the element type of entity");
  }
  const std::vector<double> meta = copy_ids<double>(info, 3, "meta", napi_float64_array);
  if (meta.size() != 9) throw_range(env, "meta must hold 9 numbers");
  ScoreJob job{};
  job.wide = type == napi_float64_array;
  const double code = meta[0];
  if (!(code >= 0 && code <= 6 && code == std::floor(code))) throw_range(env, "interaction code must be 0..6");
  job.interaction = static_cast<Interaction>(static_cast<int>(code));
  job.layout = meta[1] == 1 ? ComplexLayout::Interleaved : ComplexLayout::Halves;
  for (size_t k : {2, 3, 4, 5}) {
    if (!(meta[k] >= 1 && meta[k] < 9007199254740992.0 && meta[k] == std::floor(meta[k]))) {
      throw_range(env, "meta sizes must be integers >= 1");
    }
  }
  job.num_entities = static_cast<size_t>(meta[2]);
  job.entity_width = static_cast<size_t>(meta[3]);
  job.num_relations = static_cast<size_t>(meta[4]);
  job.relation_width = static_cast<size_t>(meta[5]);
  job.phase_scale = meta[6];
  job.head_side = meta[7] != 0;
  if (!(meta[8] >= 0 && meta[8] < 2147483648.0 && meta[8] == std::floor(meta[8]))) {
    throw_range(env, "entityOffset must be an integer in [0, 2^31)");
  }
  job.entity_offset = static_cast<size_t>(meta[8]);
  const size_t d = job.entity_width;
  if (ent.ElementLength() / d != job.num_entities || ent.ElementLength() % d != 0) {
    throw_range(env, "entity.length must be numEntities x entityWidth");
  }
  if (rel.ElementLength() / job.relation_width != job.num_relations || rel.ElementLength() % job.relation_width != 0) {
    throw_range(env, "relation.length must be numRelations x relationWidth");
  }
  size_t want_rel = d;
  switch (job.interaction) {
    case Interaction::ComplEx:
    case Interaction::RotatE:
    case Interaction::RotatEL2:
      if (d % 2 != 0) throw_range(env, "complex entity rows need an even width");
      if (job.interaction != Interaction::ComplEx && job.relation_width == d / 2) want_rel = d / 2;
      break;
    case Interaction::PairRE: want_rel = 2 * d; break;
    default: break;
  }
  if (job.relation_width != want_rel) throw_range(env, "relationWidth does not fit the interaction and entityWidth");
  const bool pair = job.interaction == Interaction::PairRE;
  if (scale.ElementLength() != 0 && (!pair || scale.ElementLength() != job.num_entities)) {
    throw_range(env, "entityScale must be empty, or (PairRE) hold one factor per entity");
  }
  auto ids = std::make_shared<Ids>();
  ids->anchor = copy_ids<int32_t>(info, 4, "anchor", napi_int32_array);
  ids->relation = copy_ids<int32_t>(info, 5, "relationIds", napi_int32_array);
  ids->truth = copy_ids<int32_t>(info, 6, "truth", napi_int32_array);
  ids->candidates = copy_ids<int32_t>(info, 7, "candidates", napi_int32_array);
  ids->negatives = copy_ids<int32_t>(info, 8, "negatives", napi_int32_array);
  ids->exclude_offsets = copy_ids<uint32_t>(info, 9, "excludeOffsets", napi_uint32_array);
  ids->exclude_ids = copy_ids<int32_t>(info, 10, "excludeIds", napi_int32_array);
  ids->true_scores = copy_ids<double>(info, 13, "trueScores", napi_float64_array);
  const size_t rows = ids->anchor.size();
  if (rows == 0 || ids->relation.size() != rows || ids->truth.size() != rows) {
    throw_range(env, "anchor, relationIds and truth must have the same non-zero length");
  }
  Napi::TypedArray anchor_rows = typed_array_arg(info, 11, "anchorRows");
  Napi::TypedArray anchor_scale = typed_array_arg(info, 12, "anchorScale");
  if (anchor_rows.TypedArrayType() != type || anchor_scale.TypedArrayType() != type) {
    throw_type(env, "anchorRows and anchorScale must have the element type of entity");
  }
  const bool given_anchors = anchor_rows.ElementLength() != 0;
  if (given_anchors && anchor_rows.ElementLength() != rows * d)
    throw_range(env, "anchorRows must hold rows x entityWidth");
  if (anchor_scale.ElementLength() != 0 && (!given_anchors || !pair || anchor_scale.ElementLength() != rows)) {
    throw_range(env, "anchorScale must be empty, or (PairRE with anchorRows) hold one factor per row");
  }
  if (!ids->true_scores.empty() && ids->true_scores.size() != rows)
    throw_range(env, "trueScores must hold one score per row");
  if (!given_anchors) check_range(env, ids->anchor, job.num_entities, "anchor");
  if (ids->true_scores.empty()) check_range(env, ids->truth, job.num_entities, "truth");
  check_range(env, ids->relation, job.num_relations, "relationIds");
  check_range(env, ids->candidates, job.num_entities, "candidates");
  check_range(env, ids->negatives, job.num_entities, "negatives");
  // Filter ids are global ids (entityOffset): those outside this slice belong to another and are skipped by the core.
  check_range(env, ids->exclude_ids, size_t{1} << 31, "excludeIds");
  if (job.entity_offset != 0 && (!ids->candidates.empty() || !ids->negatives.empty())) {
    throw_range(env, "candidates and negatives need entityOffset 0");
  }
  job.negatives_per_row = size_arg(info, 17, "negativesPerRow", 0);
  if (ids->negatives.size() != rows * job.negatives_per_row)
    throw_range(env, "negatives.length must be rows x negativesPerRow");
  if (!ids->exclude_offsets.empty()) {
    const auto& o = ids->exclude_offsets;
    if (o.size() != rows + 1 || o[0] != 0 || o[rows] != ids->exclude_ids.size()) {
      throw_range(env, "excludeOffsets must hold rows + 1 offsets from 0 to excludeIds.length");
    }
    for (size_t i = 0; i < rows; ++i) {
      if (o[i] > o[i + 1]) throw_range(env, "excludeOffsets must not decrease");
    }
  }
  check_sets(env, info, rows, job.num_entities, ids.get());
  if (!ids->set_offsets.empty() && (!ids->candidates.empty() || !ids->negatives.empty() || job.entity_offset != 0)) {
    throw_range(env, "setOffsets (typed candidates) take no candidates, negatives or entityOffset");
  }
  Napi::TypedArray out = typed_array_arg(info, 16, "out");
  if (out.TypedArrayType() != napi_float64_array || out.ElementLength() != 5 * rows + 2) {
    throw_type(env, "out must be a Float64Array of 5 x rows + 2");
  }
  const CountOptions opt = options_arg(info, 18, 19);
  job.simd = opt.simd;
  job.threads = opt.threads;
  job.entity = raw_data(ent);
  job.relation = raw_data(rel);
  job.scale = scale.ElementLength() ? raw_data(scale) : nullptr;
  job.anchor_rows = given_anchors ? raw_data(anchor_rows) : nullptr;
  job.anchor_scale = anchor_scale.ElementLength() ? raw_data(anchor_scale) : nullptr;
  job.out = static_cast<double*>(raw_data(out));
  job.ids = std::move(ids);
  return job;
}

Napi::Value RankEmbeddings(const Napi::CallbackInfo& info) {
  score_job(info).run();
  return info.Env().Undefined();
}

Napi::Value RankEmbeddingsAsync(const Napi::CallbackInfo& info) {
  const ScoreJob job = score_job(info);
  return queue_job(info, "kgrank:rankEmbeddings", job, 17, 20);
}

// Arguments: a Float32Array or Float64Array. Returns the index of its first NaN or infinite value, or -1.
Napi::Value FirstNonFinite(const Napi::CallbackInfo& info) {
  Napi::TypedArray a = typed_array_arg(info, 0, "values");
  const size_t n = a.ElementLength();
  size_t at = n;
  if (a.TypedArrayType() == napi_float32_array) {
    at = kgrank::first_non_finite(static_cast<const float*>(raw_data(a)), n);
  } else if (a.TypedArrayType() == napi_float64_array) {
    at = kgrank::first_non_finite(static_cast<const double*>(raw_data(a)), n);
  } else {
    throw_type(info.Env(), "values must be a Float32Array or Float64Array");
  }
  return Napi::Number::New(info.Env(), at == n ? -1.0 : static_cast<double>(at));
}

template <class T>
kgrank::Status top_k_go(const ScoreJob& job, size_t k, size_t begin, size_t end, const double* floor, int32_t* ids,
                        double* scores) {
  kgrank::EmbeddingModel<T> m{job.interaction,
                              job.layout,
                              static_cast<const T*>(job.entity),
                              static_cast<const T*>(job.relation),
                              job.num_entities,
                              job.num_relations,
                              job.entity_width,
                              job.relation_width,
                              job.phase_scale,
                              static_cast<const T*>(job.scale)};
  m.entity_offset = job.entity_offset;
  m.anchor_rows = static_cast<const T*>(job.anchor_rows);
  m.anchor_scale = static_cast<const T*>(job.anchor_scale);
  kgrank::EmbeddingQueries q;
  q.rows = job.ids->anchor.size();
  q.head_side = job.head_side;
  q.anchor = job.ids->anchor.data();
  q.relation = job.ids->relation.data();
  q.truth = job.ids->truth.data();
  if (!job.ids->exclude_offsets.empty()) {
    q.exclude_offsets = job.ids->exclude_offsets.data();
    q.exclude_ids = job.ids->exclude_ids.data();
  }
  q.floor = floor;
  return kgrank::top_k_embeddings<T>(m, q, k, begin, end, ids, scores, job.simd, job.threads);
}

// Arguments: rankEmbeddings' (score_job checks them; truth is not read, out is not written), then, as the last
// four: topK (Float64Array: k, begin, end), ids (Int32Array, rows x k), scores (Float64Array, rows x k) and floor
// (Float64Array: one score per row, NaN for none; or empty).
Napi::Value TopKEmbeddings(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const size_t n = info.Length();
  if (n < 21) throw_range(env, "topKEmbeddings takes rankEmbeddings' arguments, then topK, ids, scores and floor");
  const ScoreJob job = score_job(info);
  // A slice of a table (entityOffset, the anchors' rows given apart) lists global ids; there is no true score.
  if (!job.ids->true_scores.empty()) throw_range(env, "topKEmbeddings takes no trueScores");
  if (!job.ids->set_offsets.empty()) throw_range(env, "topKEmbeddings takes no setOffsets");
  const std::vector<double> meta = copy_ids<double>(info, n - 4, "topK", napi_float64_array);
  const std::vector<double> floor = copy_ids<double>(info, n - 1, "floor", napi_float64_array);
  if (meta.size() != 3) throw_range(env, "topK must hold 3 numbers: k, begin, end");
  for (double v : meta) {
    if (!(v >= 0 && v < 9007199254740992.0 && v == std::floor(v))) throw_range(env, "topK must hold integers >= 0");
  }
  const size_t k = static_cast<size_t>(meta[0]);
  const size_t begin = static_cast<size_t>(meta[1]), end = static_cast<size_t>(meta[2]);
  if (k < 1) throw_range(env, "k must be >= 1");
  if (begin > end || end > job.num_entities) {
    throw_range(env, "the entity range must satisfy begin <= end <= numEntities");
  }
  const size_t rows = job.ids->anchor.size();
  if (!floor.empty() && floor.size() != rows) throw_range(env, "floor must be empty or hold one score per row");
  Napi::TypedArray ids = typed_array_arg(info, n - 3, "ids");
  Napi::TypedArray scores = typed_array_arg(info, n - 2, "scores");
  if (ids.TypedArrayType() != napi_int32_array || ids.ElementLength() != rows * k) {
    throw_type(env, "ids must be an Int32Array of rows x k");
  }
  if (scores.TypedArrayType() != napi_float64_array || scores.ElementLength() != rows * k) {
    throw_type(env, "scores must be a Float64Array of rows x k");
  }
  int32_t* id = static_cast<int32_t*>(raw_data(ids));
  double* sc = static_cast<double*>(raw_data(scores));
  const double* fl = floor.empty() ? nullptr : floor.data();
  const kgrank::Status s =
      job.wide ? top_k_go<double>(job, k, begin, end, fl, id, sc) : top_k_go<float>(job, k, begin, end, fl, id, sc);
  check_status(env, s);
  return env.Undefined();
}

// Arguments: rankEmbeddings' (score_job checks them: anchor holds the heads, truth the tails; relationIds and
// headSide are not read, out is not written), then scores (the entity's element type, rows x numRelations), which
// receives score_relations' scores of (anchor[i], r, truth[i]) for every relation r.
Napi::Value ScoreRelations(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const size_t n = info.Length();
  if (n < 21) throw_range(env, "scoreRelations takes rankEmbeddings' arguments, then scores");
  const ScoreJob job = score_job(info);
  const Ids& ids = *job.ids;
  if (!ids.candidates.empty() || !ids.negatives.empty() || !ids.exclude_offsets.empty() || !ids.true_scores.empty() ||
      !ids.set_offsets.empty() || job.anchor_rows != nullptr || job.entity_offset != 0) {
    throw_range(env,
                "scoreRelations takes no candidates, negatives, exclusions, anchorRows, trueScores or entityOffset");
  }
  const size_t rows = ids.anchor.size();
  Napi::TypedArray scores = typed_array_arg(info, n - 1, "scores");
  const napi_typedarray_type want = job.wide ? napi_float64_array : napi_float32_array;
  if (scores.TypedArrayType() != want || scores.ElementLength() != rows * job.num_relations) {
    throw_type(env, "scores must have the element type of entity and hold rows x numRelations values");
  }
  kgrank::Status s;
  if (job.wide) {
    const kgrank::EmbeddingModel<double> m{job.interaction,
                                           job.layout,
                                           static_cast<const double*>(job.entity),
                                           static_cast<const double*>(job.relation),
                                           job.num_entities,
                                           job.num_relations,
                                           job.entity_width,
                                           job.relation_width,
                                           job.phase_scale,
                                           static_cast<const double*>(job.scale)};
    s = kgrank::score_relations<double>(m, rows, ids.anchor.data(), ids.truth.data(),
                                        static_cast<double*>(raw_data(scores)), job.simd, job.threads);
  } else {
    const kgrank::EmbeddingModel<float> m{job.interaction,
                                          job.layout,
                                          static_cast<const float*>(job.entity),
                                          static_cast<const float*>(job.relation),
                                          job.num_entities,
                                          job.num_relations,
                                          job.entity_width,
                                          job.relation_width,
                                          job.phase_scale,
                                          static_cast<const float*>(job.scale)};
    s = kgrank::score_relations<float>(m, rows, ids.anchor.data(), ids.truth.data(),
                                       static_cast<float*>(raw_data(scores)), job.simd, job.threads);
  }
  check_status(env, s);
  return env.Undefined();
}

// Arguments: simd, threads, iterations. Returns [multiply-adds performed, checksum].
Napi::Value FmaProbe(const Napi::CallbackInfo& info) {
  const CountOptions opt = options_arg(info, 0, 1);
  const size_t iterations = size_arg(info, 2, "iterations", 1);
  double sink = 0;
  const double madds = kgrank::fma_probe(opt.simd, opt.threads, iterations, &sink);
  Napi::Array r = Napi::Array::New(info.Env(), 2);
  r.Set(uint32_t{0}, Napi::Number::New(info.Env(), madds));
  r.Set(uint32_t{1}, Napi::Number::New(info.Env(), sink));
  return r;
}

}  // namespace

void register_score(Napi::Env env, Napi::Object exports) {
  exports.Set("rankEmbeddings", Napi::Function::New(env, RankEmbeddings, "rankEmbeddings"));
  exports.Set("rankEmbeddingsAsync", Napi::Function::New(env, RankEmbeddingsAsync, "rankEmbeddingsAsync"));
  export_function<TopKEmbeddings>(env, exports, "topKEmbeddings");
  export_function<ScoreRelations>(env, exports, "scoreRelations");
  exports.Set("fmaProbe", Napi::Function::New(env, FmaProbe, "fmaProbe"));
  exports.Set("firstNonFinite", Napi::Function::New(env, FirstNonFinite, "firstNonFinite"));
}

}  // namespace kgrank_addon
