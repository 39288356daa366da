// Bindings of ranking from embeddings (native/core/interaction.h) and of the FMA peak probe. Its own file: the job
// copies every id array it indexes with on the JavaScript thread, checks the copies, and runs on them, so nothing
// the caller does to its arrays during an async job can send the core out of bounds.
#include <napi.h>

#include <cmath>
#include <memory>
#include <mutex>
#include <vector>

#include "../core/interaction.h"
#include "args.h"
#include "async.h"
#include "common.h"

namespace kgrank_addon {

namespace {

using kgrank::ComplexLayout;
using kgrank::Interaction;
using kgrank::ScreenMode;
using kgrank::ScreenTable;

// Marks the externals screenTable returns, so no other external is ever taken for one.
const napi_type_tag* screen_table_tag() {
  static const napi_type_tag tag = {0x6b6772616e6b5363ULL, 0x7265656e5461626cULL};  // "kgrankScreenTabl"
  return &tag;
}

// What a screenTable external holds: the quantised table and what it was made from, so that a table is never used
// with another model's entities (screen.h ScreenTable::made_for checks the rows, width and element order; this
// adds the float table's identity).
struct ScreenHandle {
  std::shared_ptr<const ScreenTable> table;
  const void* entity;
  size_t num_entities, entity_width;
  Interaction interaction;
  ComplexLayout layout;
};

// The table one job quantises for itself when it screens without a prepared one: made by its first slice, kept for
// the others (an async job runs its slices one after another).
struct LazyScreenTable {
  std::once_flag once;
  std::shared_ptr<const ScreenTable> table;
};

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
  double* out = nullptr;  // rankEmbeddings: 5 x rows + 2 status slots
  SimdLevel simd;
  unsigned threads;
  // The int8 screen (rankEmbeddings at float32): its mode, the table (prepared, or made by the job's first slice),
  // and where to add what it did (3 values: calls that screened, pairs, pairs rescored), or null.
  ScreenMode screen = ScreenMode::Off;
  std::shared_ptr<const ScreenTable> screen_table;
  std::shared_ptr<LazyScreenTable> lazy_table;
  double* screen_stats = nullptr;

  // The model in the accumulation type T: the one place a kgrank::EmbeddingModel is made from the record's fields.
  template <class T>
  kgrank::EmbeddingModel<T> model() const {
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
    m.anchor_rows = static_cast<const T*>(anchor_rows);
    m.anchor_scale = static_cast<const T*>(anchor_scale);
    return m;
  }

  // Rows [r0, r1) of the batch: each row's counts are integer sums over its own candidates, so any split of the
  // rows gives the same results. A failed status names its row in the whole batch.
  template <class T>
  kgrank::Status go(size_t r0, size_t r1, kgrank::JobControl* control) const {
    kgrank::EmbeddingModel<T> m = model<T>();
    // The rows given apart are per query: this range's start at row r0.
    if (m.anchor_rows != nullptr) m.anchor_rows += r0 * entity_width;
    if (m.anchor_scale != nullptr) m.anchor_scale += r0;
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
    kgrank::ScreenStats stats;
    if constexpr (std::is_same<T, float>::value) {
      q.screen = screen;
      q.screen_stats = &stats;
      q.screen_table = screen_table.get();
      if (q.screen_table == nullptr && lazy_table && total_rows() > r1 - r0) {
        // More than one slice: quantise the table once for all of them.
        std::call_once(lazy_table->once, [&] {
          auto t = std::make_shared<ScreenTable>();
          if (kgrank::screen_prepare(m, simd, threads, t.get()).ok()) lazy_table->table = std::move(t);
        });
        q.screen_table = lazy_table->table.get();
      }
    }
    if (!ids->set_offsets.empty()) {
      q.set_offsets = ids->set_offsets.data();
      q.set_ids = ids->set_ids.data();
    }
    kgrank::EmbeddingCounts c{out + r0, out + rows + r0, out + 2 * rows + r0, out + 3 * rows + r0, out + 4 * rows + r0};
    kgrank::Status s = kgrank::rank_embeddings<T>(m, q, c, simd, threads, control);
    if (!s.ok()) s.index += r0;
    if (screen_stats != nullptr) {
      screen_stats[0] += stats.used ? 1 : 0;
      screen_stats[1] += static_cast<double>(stats.pairs);
      screen_stats[2] += static_cast<double>(stats.rescored);
    }
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

// The field's elements, copied (the job reads the copy); absent, undefined or null: empty.
template <class T>
std::vector<T> copy_of(const Args& args, const char* field, napi_typedarray_type type, bool optional) {
  if (optional && !args.has(field)) return {};
  Napi::TypedArray a = args.typed(field, type);
  const T* p = static_cast<const T*>(raw_data(a));
  return std::vector<T>(p, p + a.ElementLength());
}

void check_range(const Args& args, const std::vector<int32_t>& v, size_t bound, const char* field) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 0 || static_cast<size_t>(v[i]) >= bound) {
      args.range_error(std::string(field) + "[" + std::to_string(i) + "]",
                       "= " + std::to_string(v[i]) + " is outside [0, " + std::to_string(bound) + ")");
    }
  }
}

// Typed candidates (queries.setOffsets and queries.setIds): copied, then checked on the copies. The offsets must
// cover every relation a row names (relation ids were checked against numRelations first), start at 0, not decrease
// and end within the ids; each relation's ids must be ascending entity ids (no repeat: a repeat would be counted
// twice).
void check_sets(const Args& q, size_t rows, size_t num_entities, Ids* ids) {
  const std::vector<int32_t> offsets = copy_of<int32_t>(q, "setOffsets", napi_int32_array, true);
  ids->set_ids = copy_of<int32_t>(q, "setIds", napi_int32_array, true);
  if (offsets.empty()) {
    if (!ids->set_ids.empty()) q.range_error("setIds", "needs setOffsets");
    return;
  }
  size_t used = 0;
  for (size_t i = 0; i < rows; ++i) used = std::max(used, static_cast<size_t>(ids->relation[i]) + 1);
  if (offsets.size() < used + 1) {
    q.range_error("setOffsets", "must hold an offset per relation the rows name, plus one");
  }
  if (offsets[0] != 0) q.range_error("setOffsets", "must start at 0");
  ids->set_offsets.resize(used + 1);
  for (size_t r = 0; r <= used; ++r) {
    if (offsets[r] < 0 || static_cast<size_t>(offsets[r]) > ids->set_ids.size() ||
        (r > 0 && offsets[r] < offsets[r - 1])) {
      q.range_error("setOffsets[" + std::to_string(r) + "]",
                    "= " + std::to_string(offsets[r]) + " is not an ascending offset within setIds");
    }
    ids->set_offsets[r] = static_cast<uint32_t>(offsets[r]);
  }
  for (size_t r = 0; r < used; ++r) {
    for (uint32_t k = ids->set_offsets[r]; k < ids->set_offsets[r + 1]; ++k) {
      const int32_t v = ids->set_ids[k];
      if (v < 0 || static_cast<size_t>(v) >= num_entities || (k > ids->set_offsets[r] && v <= ids->set_ids[k - 1])) {
        q.range_error("setIds[" + std::to_string(k) + "]",
                      "= " + std::to_string(v) + " (relation " + std::to_string(r) + ") is not an entity id in [0, " +
                          std::to_string(num_entities) + ") above the relation's previous one");
      }
    }
  }
}

// The record every embedding call shares (src/contract/addon.ts EmbeddingArgs): { model, queries, simd, threads }.
// model: { interaction, layout, entity (Float32Array or Float64Array: the accumulation type), relation and
// entityScale? (entity's type), numEntities, entityWidth, numRelations, relationWidth, phaseScale, entityOffset };
// queries: { headSide, anchor, relation, truth (Int32Array each, rows), candidates? (all when absent), negatives?
// (rows x negativesPerRow), negativesPerRow, excludeOffsets? (Uint32Array, rows + 1) with excludeIds?, anchorRows?
// (entity's type, rows x entityWidth; the anchors' rows given apart), anchorScale?, trueScores? (Float64Array,
// rows), setOffsets? and setIds? (typed candidates: relation r's candidates are setIds[setOffsets[r] ..
// setOffsets[r + 1]), ascending) }. Optional fields may be absent, undefined or null.
// The model record alone (and simd, threads): what score_job and screenTable share.
ScoreJob model_job(const Args& args) {
  const Args model = args.record("model");
  Napi::TypedArray ent = model.floats("entity");
  const napi_typedarray_type type = ent.TypedArrayType();
  Napi::TypedArray rel = model.typed("relation", type);
  Napi::TypedArray scale = model.optional_typed("entityScale", type);
  ScoreJob job{};
  job.wide = type == napi_float64_array;
  job.interaction = model.code<Interaction>("interaction");
  job.layout = model.code<ComplexLayout>("layout");
  job.num_entities = model.size("numEntities", 1);
  job.entity_width = model.size("entityWidth", 1);
  job.num_relations = model.size("numRelations", 1);
  job.relation_width = model.size("relationWidth", 1);
  job.phase_scale = model.number("phaseScale");
  job.entity_offset = model.size("entityOffset", 0);
  if (job.entity_offset >= size_t{1} << 31) model.range_error("entityOffset", "must be an integer in [0, 2^31)");
  const size_t d = job.entity_width;
  if (ent.ElementLength() / d != job.num_entities || ent.ElementLength() % d != 0) {
    model.range_error("entity", "length must be numEntities x entityWidth");
  }
  if (rel.ElementLength() / job.relation_width != job.num_relations || rel.ElementLength() % job.relation_width != 0) {
    model.range_error("relation", "length must be numRelations x relationWidth");
  }
  size_t want_rel = d;
  switch (job.interaction) {
    case Interaction::ComplEx:
    case Interaction::RotatE:
    case Interaction::RotatEL2:
      if (d % 2 != 0) model.range_error("entityWidth", "must be even for complex entity rows");
      if (job.interaction != Interaction::ComplEx && job.relation_width == d / 2) want_rel = d / 2;
      break;
    case Interaction::PairRE: want_rel = 2 * d; break;
    default: break;
  }
  if (job.relation_width != want_rel)
    model.range_error("relationWidth", "does not fit the interaction and entityWidth");
  const bool pair = job.interaction == Interaction::PairRE;
  const bool has_scale = !scale.IsEmpty() && scale.ElementLength() != 0;
  if (has_scale && (!pair || scale.ElementLength() != job.num_entities)) {
    model.range_error("entityScale", "must be absent, or (PairRE) hold one factor per entity");
  }
  const CountOptions opt = args.options();
  job.simd = opt.simd;
  job.threads = opt.threads;
  job.entity = raw_data(ent);
  job.relation = raw_data(rel);
  job.scale = has_scale ? raw_data(scale) : nullptr;
  return job;
}

ScoreJob score_job(const Args& args) {
  ScoreJob job = model_job(args);
  const Args model = args.record("model");
  const napi_typedarray_type type = job.wide ? napi_float64_array : napi_float32_array;
  const size_t d = job.entity_width;
  const bool pair = job.interaction == Interaction::PairRE;

  const Args q = args.record("queries");
  job.head_side = q.boolean("headSide");
  auto ids = std::make_shared<Ids>();
  ids->anchor = copy_of<int32_t>(q, "anchor", napi_int32_array, false);
  ids->relation = copy_of<int32_t>(q, "relation", napi_int32_array, false);
  ids->truth = copy_of<int32_t>(q, "truth", napi_int32_array, false);
  ids->candidates = copy_of<int32_t>(q, "candidates", napi_int32_array, true);
  ids->negatives = copy_of<int32_t>(q, "negatives", napi_int32_array, true);
  ids->exclude_offsets = copy_of<uint32_t>(q, "excludeOffsets", napi_uint32_array, true);
  ids->exclude_ids = copy_of<int32_t>(q, "excludeIds", napi_int32_array, true);
  ids->true_scores = copy_of<double>(q, "trueScores", napi_float64_array, true);
  const size_t rows = ids->anchor.size();
  if (rows == 0) q.range_error("anchor", "must not be empty");
  if (ids->relation.size() != rows) q.range_error("relation", "must hold one id per row (anchor.length)");
  if (ids->truth.size() != rows) q.range_error("truth", "must hold one id per row (anchor.length)");
  Napi::TypedArray anchor_rows = q.optional_typed("anchorRows", type);
  Napi::TypedArray anchor_scale = q.optional_typed("anchorScale", type);
  const bool given_anchors = !anchor_rows.IsEmpty() && anchor_rows.ElementLength() != 0;
  const bool given_anchor_scale = !anchor_scale.IsEmpty() && anchor_scale.ElementLength() != 0;
  if (given_anchors && anchor_rows.ElementLength() != rows * d) {
    q.range_error("anchorRows", "must hold rows x entityWidth");
  }
  if (given_anchor_scale && (!given_anchors || !pair || anchor_scale.ElementLength() != rows)) {
    q.range_error("anchorScale", "must be absent, or (PairRE with anchorRows) hold one factor per row");
  }
  if (!ids->true_scores.empty() && ids->true_scores.size() != rows) {
    q.range_error("trueScores", "must hold one score per row");
  }
  if (!given_anchors) check_range(q, ids->anchor, job.num_entities, "anchor");
  if (ids->true_scores.empty()) check_range(q, ids->truth, job.num_entities, "truth");
  check_range(q, ids->relation, job.num_relations, "relation");
  check_range(q, ids->candidates, job.num_entities, "candidates");
  check_range(q, ids->negatives, job.num_entities, "negatives");
  // Filter ids are global ids (entityOffset): those outside this slice belong to another and are skipped by the core.
  check_range(q, ids->exclude_ids, size_t{1} << 31, "excludeIds");
  if (job.entity_offset != 0 && (!ids->candidates.empty() || !ids->negatives.empty())) {
    q.range_error(ids->candidates.empty() ? "negatives" : "candidates", "needs model.entityOffset 0");
  }
  job.negatives_per_row = q.size("negativesPerRow", 0);
  if (ids->negatives.size() != rows * job.negatives_per_row) {
    q.range_error("negatives", "length must be rows x negativesPerRow");
  }
  if (!ids->exclude_ids.empty() && ids->exclude_offsets.empty()) q.range_error("excludeIds", "needs excludeOffsets");
  if (!ids->exclude_offsets.empty()) {
    const auto& o = ids->exclude_offsets;
    if (o.size() != rows + 1 || o[0] != 0 || o[rows] != ids->exclude_ids.size()) {
      q.range_error("excludeOffsets", "must hold rows + 1 offsets from 0 to excludeIds.length");
    }
    for (size_t i = 0; i < rows; ++i) {
      if (o[i] > o[i + 1]) q.range_error("excludeOffsets", "must not decrease");
    }
  }
  check_sets(q, rows, job.num_entities, ids.get());
  if (!ids->set_offsets.empty() && (!ids->candidates.empty() || !ids->negatives.empty() || job.entity_offset != 0)) {
    q.range_error("setOffsets", "(typed candidates) takes no candidates, negatives or model.entityOffset");
  }
  (void)model;
  job.anchor_rows = given_anchors ? raw_data(anchor_rows) : nullptr;
  job.anchor_scale = given_anchor_scale ? raw_data(anchor_scale) : nullptr;
  job.ids = std::move(ids);
  return job;
}

// rankEmbeddings: the embedding record plus out (Float64Array, 5 x rows + 2: greater | equal | nan | removed |
// trueScore | status, index).
// screen? { mode (ScreenMode code), table? (screenTable's external, made from this model), stats? (Float64Array of
// 3: calls that screened, pairs, pairs rescored, added to) }: absent, or mode Off, is the float32 path alone. A
// float64 model, or one the screen does not apply to, is ranked by the float32 (float64) path whatever the mode.
void read_screen(const Args& args, ScoreJob* job) {
  if (!args.has("screen")) return;
  const Args s = args.record("screen");
  job->screen = s.code<ScreenMode>("mode");
  if (s.has("stats")) {
    Napi::TypedArray st = s.typed("stats", napi_float64_array);
    expect_length(s, "stats", st, 3, "3 values (calls that screened, pairs, pairs rescored)");
    job->screen_stats = static_cast<double*>(raw_data(st));
  }
  if (s.has("table")) {
    const Napi::Value v = s.value("table");
    napi_valuetype type = napi_undefined;
    bool tagged = false;
    void* data = nullptr;
    if (napi_typeof(s.env(), v, &type) != napi_ok || type != napi_external ||
        napi_check_object_type_tag(s.env(), v, screen_table_tag(), &tagged) != napi_ok || !tagged ||
        napi_get_value_external(s.env(), v, &data) != napi_ok) {
      s.type_error("table", "must be what screenTable returned (or absent)");
    }
    const ScreenHandle& h = *static_cast<const ScreenHandle*>(data);
    if (h.entity != job->entity || h.num_entities != job->num_entities || h.entity_width != job->entity_width ||
        h.interaction != job->interaction || h.layout != job->layout || job->wide) {
      s.range_error("table",
                    "was made from another entity table (or interaction, layout): make it with screenTable from this "
                    "model's record, or leave it out");
    }
    job->screen_table = h.table;
  } else if (job->screen != ScreenMode::Off) {
    // A job run in slices quantises the table once for all of them (go); under auto only where a call of all its
    // rows would.
    if (job->screen == ScreenMode::Int8 ||
        kgrank::screen_auto_quantises(job->simd, job->ids->anchor.size(), job->entity_width)) {
      job->lazy_table = std::make_shared<LazyScreenTable>();
    }
  }
}

ScoreJob rank_job(const Args& args) {
  ScoreJob job = score_job(args);
  Napi::TypedArray out = args.typed("out", napi_float64_array);
  expect_length(args, "out", out, 5 * job.ids->anchor.size() + 2, "5 x rows + 2 values");
  job.out = static_cast<double*>(raw_data(out));
  read_screen(args, &job);
  return job;
}

// screenTable({ model, simd, threads, file? }) -> an external holding the model's entity table quantised for the int8
// screen (screen.h), to pass as rankEmbeddings' screen.table for every batch of one evaluation (the table is then
// quantised once, not per call). With `file`, the table is read from a file screenTableSave wrote (screen_load:
// refused with a KGRANK_FILE error when it was made from another table or is damaged). The model record is read as
// rankEmbeddings reads it; a float64 model, or one the screen does not apply to (not DistMult, ComplEx, TransE-L2 or
// RotatE-L2), is a RangeError naming model.interaction. The float table must not change while the handle is used: the
// handle records its identity, not its values.
Napi::Value ScreenTableNew(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Args args(info, "screenTable");
  const ScoreJob job = model_job(args);
  const Args model = args.record("model");
  if (job.wide) model.range_error("entity", "is not a Float32Array: the screen certifies the float32 path only");
  if (!kgrank::screen_applies(job.interaction)) {
    model.range_error("interaction",
                      "is not DistMult, ComplEx, TransE-L2 or RotatE-L2, the interactions the int8 screen applies to");
  }
  auto h = std::make_unique<ScreenHandle>();
  h->entity = job.entity;
  h->num_entities = job.num_entities;
  h->entity_width = job.entity_width;
  h->interaction = job.interaction;
  h->layout = job.layout;
  const kgrank::EmbeddingModel<float> m = job.model<float>();
  auto table = std::make_shared<ScreenTable>();
  if (args.has("file")) {
    check_file(env, kgrank::screen_load(m, args.text("file").c_str(), table.get()));
  } else {
    const kgrank::Status st = kgrank::screen_prepare(m, job.simd, job.threads, table.get());
    if (!st.ok()) throw_range(env, "screenTable: " + st.message);
  }
  h->table = std::move(table);
  napi_value ext = nullptr;
  const auto finalize = [](napi_env, void* data, void*) { delete static_cast<ScreenHandle*>(data); };
  if (napi_create_external(env, h.get(), finalize, nullptr, &ext) != napi_ok) {
    throw Napi::Error::New(env, "screenTable: could not create the handle");
  }
  h.release();
  NAPI_THROW_IF_FAILED(env, napi_type_tag_object(env, ext, screen_table_tag()), Napi::Value());
  return Napi::Value(env, ext);
}

// screenTableSave({ model, simd, threads, table, file }): writes `table` (screenTable's external, made from this
// model's entity table) to `file` (screen_save; the caller renames it into place). A table made from another model
// is a RangeError naming table; a write that fails is a KGRANK_FILE error naming the file.
Napi::Value ScreenTableSave(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Args args(info, "screenTableSave");
  const ScoreJob job = model_job(args);
  if (job.wide) args.record("model").range_error("entity", "is not a Float32Array: the screen is float32 only");
  const Napi::Value v = args.value("table");
  napi_valuetype type = napi_undefined;
  bool tagged = false;
  void* data = nullptr;
  if (napi_typeof(env, v, &type) != napi_ok || type != napi_external ||
      napi_check_object_type_tag(env, v, screen_table_tag(), &tagged) != napi_ok || !tagged ||
      napi_get_value_external(env, v, &data) != napi_ok) {
    args.type_error("table", "must be what screenTable returned");
  }
  const ScreenHandle& h = *static_cast<const ScreenHandle*>(data);
  if (h.entity != job.entity || h.num_entities != job.num_entities || h.entity_width != job.entity_width ||
      h.interaction != job.interaction || h.layout != job.layout) {
    args.range_error("table", "was made from another entity table (or interaction, layout) than model's");
  }
  const std::string file = args.text("file");
  check_file(env, kgrank::screen_save(job.model<float>(), *h.table, file.c_str()));
  return env.Undefined();
}

Napi::Value RankEmbeddings(const Napi::CallbackInfo& info) {
  rank_job(Args(info, "rankEmbeddings")).run();
  return info.Env().Undefined();
}

// The sync form's record, then an optional job control (async.h).
Napi::Value RankEmbeddingsAsync(const Napi::CallbackInfo& info) {
  const Args args(info, "rankEmbeddingsAsync");
  return queue_job(info, args, rank_job(args), 1);
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
  const kgrank::EmbeddingModel<T> m = job.model<T>();
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
  kgrank::ScreenStats stats;
  if constexpr (std::is_same<T, float>::value) {
    q.screen = job.screen;
    q.screen_table = job.screen_table.get();
    q.screen_stats = &stats;
  }
  const kgrank::Status s = kgrank::top_k_embeddings<T>(m, q, k, begin, end, ids, scores, job.simd, job.threads);
  if (job.screen_stats != nullptr) {
    job.screen_stats[0] += stats.used ? 1 : 0;
    job.screen_stats[1] += static_cast<double>(stats.pairs);
    job.screen_stats[2] += static_cast<double>(stats.rescored);
  }
  return s;
}

// topKEmbeddings: the embedding record (score_job checks it; queries.truth is not read) plus k, begin, end (the
// entity range [begin, end) of the table), ids (Int32Array, rows x k), scores (Float64Array, rows x k), floor?
// (Float64Array: one score per row, NaN for none) and screen? (as rankEmbeddings': the lists are the same whatever
// the mode).
Napi::Value TopKEmbeddings(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Args args(info, "topKEmbeddings");
  ScoreJob job = score_job(args);
  read_screen(args, &job);
  // A slice of a table (entityOffset, the anchors' rows given apart) lists global ids; there is no true score.
  if (!job.ids->true_scores.empty()) args.range_error("queries.trueScores", "must be absent: top-k has no true score");
  if (!job.ids->set_offsets.empty()) args.range_error("queries.setOffsets", "must be absent for top-k");
  const size_t k = args.size("k", 1);
  const size_t begin = args.size("begin", 0);
  const size_t end = args.size("end", 0);
  if (begin > end || end > job.num_entities) args.range_error("end", "must satisfy begin <= end <= numEntities");
  const std::vector<double> floor = copy_of<double>(args, "floor", napi_float64_array, true);
  const size_t rows = job.ids->anchor.size();
  if (!floor.empty() && floor.size() != rows) args.range_error("floor", "must be absent or hold one score per row");
  Napi::TypedArray ids = args.typed("ids", napi_int32_array);
  expect_length(args, "ids", ids, rows * k, "rows x k ids");
  Napi::TypedArray scores = args.typed("scores", napi_float64_array);
  expect_length(args, "scores", scores, rows * k, "rows x k scores");
  int32_t* id = static_cast<int32_t*>(raw_data(ids));
  double* sc = static_cast<double*>(raw_data(scores));
  const double* fl = floor.empty() ? nullptr : floor.data();
  const kgrank::Status s =
      job.wide ? top_k_go<double>(job, k, begin, end, fl, id, sc) : top_k_go<float>(job, k, begin, end, fl, id, sc);
  check_status(env, s);
  return env.Undefined();
}

template <class T>
kgrank::Status relation_scores(const ScoreJob& job, size_t rows, void* out) {
  return kgrank::score_relations<T>(job.model<T>(), rows, job.ids->anchor.data(), job.ids->truth.data(),
                                    static_cast<T*>(out), job.simd, job.threads);
}

// scoreRelations: the embedding record (score_job checks it: queries.anchor holds the heads, queries.truth the
// tails; queries.relation and headSide are not read) plus scores (the entity's element type, rows x numRelations),
// which receives score_relations' scores of (anchor[i], r, truth[i]) for every relation r.
Napi::Value ScoreRelations(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Args args(info, "scoreRelations");
  const ScoreJob job = score_job(args);
  const Ids& ids = *job.ids;
  if (!ids.candidates.empty() || !ids.negatives.empty() || !ids.exclude_offsets.empty() || !ids.true_scores.empty() ||
      !ids.set_offsets.empty() || job.anchor_rows != nullptr || job.entity_offset != 0) {
    args.range_error("queries",
                     "must have no candidates, negatives, exclusions, anchorRows, trueScores or "
                     "setOffsets, and model.entityOffset 0, for scoreRelations");
  }
  const size_t rows = ids.anchor.size();
  Napi::TypedArray scores = args.typed("scores", job.wide ? napi_float64_array : napi_float32_array);
  expect_length(args, "scores", scores, rows * job.num_relations, "rows x numRelations values");
  check_status(env, job.wide ? relation_scores<double>(job, rows, raw_data(scores))
                             : relation_scores<float>(job, rows, raw_data(scores)));
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
  export_function<RankEmbeddings>(env, exports, "rankEmbeddings");
  export_function<RankEmbeddingsAsync>(env, exports, "rankEmbeddingsAsync");
  export_function<TopKEmbeddings>(env, exports, "topKEmbeddings");
  export_function<ScoreRelations>(env, exports, "scoreRelations");
  exports.Set("fmaProbe", Napi::Function::New(env, FmaProbe, "fmaProbe"));
  exports.Set("screenTable", Napi::Function::New(env, ScreenTableNew, "screenTable"));
  exports.Set("screenTableSave", Napi::Function::New(env, ScreenTableSave, "screenTableSave"));
  exports.Set("firstNonFinite", Napi::Function::New(env, FirstNonFinite, "firstNonFinite"));
}

}  // namespace kgrank_addon
