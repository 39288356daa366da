// Scoring a trained model from its embeddings and ranking in the same pass: per query (anchor, relation, side) the
// query vector is formed once, entity embeddings are streamed in packed panels that stay in cache, each (query,
// entity) score is computed in registers and compared with the true score at once; only the counts are kept.
// Memory beyond the embeddings: the query vectors of a job and one packed chunk per running task.
//
// Twin: src/fallback/interaction.ts (same operations in the same order, float32 emulated exactly). Formulas and sign
// conventions are written out in interaction.cpp (form_query) and in the README ("Evaluating a model from its
// embeddings"). Higher score = better everywhere: distance models score the negated distance.
#pragma once
#include <cstddef>
#include <cstdint>

#include "screen.h"
#include "simd.h"
#include "status.h"
#include "thread_pool.h"

namespace kgrank {

// Codes shared with src/scoring/embedding-model.ts INTERACTION_CODES (test/enums.test.ts compares the two). RotatE is
// OGB's (sum of the moduli per complex dimension), RotatEL2 PyKEEN's (the L2 norm of the complex vector h r - t): same
// query, same relation rows, another distance.
enum class Interaction : int {
  TransEL1 = 0,
  TransEL2 = 1,
  DistMult = 2,
  ComplEx = 3,
  RotatE = 4,
  PairRE = 5,
  RotatEL2 = 6
};

// How a complex entity (or relation) row of 2c numbers is stored: [re_0..re_{c-1} | im_0..im_{c-1}] (OGB's
// KnowledgeGraphEmbedding code, torch.chunk(x, 2)) or [re_0, im_0, re_1, im_1, ...] (torch.view_as_real, PyKEEN).
enum class ComplexLayout : int { Halves = 0, Interleaved = 1 };

// The per-element operation the kernel runs (what the interaction reduces to once the query is formed).
enum class ScoreOp : int { Dot = 0, L1 = 1, L2Squared = 2, Modulus = 3, PairL1 = 4 };

// A model's embeddings in the accumulation type T (float: the default; double: the wide option). Checked by the
// caller: sizes, finite values.
template <class T>
struct EmbeddingModel {
  Interaction interaction;
  ComplexLayout layout;  // of complex entity rows (ComplEx, RotatE, RotatEL2) and complex relation rows
  const T* entity;       // num_entities x entity_width
  const T* relation;     // num_relations x relation_width
  size_t num_entities;
  size_t num_relations;
  size_t entity_width;
  size_t relation_width;
  // RotatE, RotatEL2: when relation_width is half the entity width the relation rows are phases, angle = value *
  // phase_scale (OGB: pi / embedding_range); otherwise they are complex numbers, normalised to modulus 1.
  double phase_scale;
  const T* entity_scale;  // PairRE: per-entity factor applied to every element (1 / ||e||), or null
  // A slice of a bigger table (an entity table read from disk in chunks, an entity shard): row j of `entity` is
  // entity entity_offset + j. Filter ids are then global ids; those outside the slice belong to another slice and
  // are skipped. Candidates and negatives (ids into `entity`) need entity_offset = 0.
  size_t entity_offset = 0;
  // Query rows given apart from the table (the slice need not hold the anchors): row i's anchor vector is
  // anchor_rows[i * entity_width ...], with PairRE's factor anchor_scale[i] (null: 1); queries.anchor is then unused.
  const T* anchor_rows = nullptr;
  const T* anchor_scale = nullptr;
};

// One job's queries. The candidates of a row are: negatives[row*K .. row*K+K) when negatives is set (OGB protocol;
// the true answer is not among the columns), else the shared list `candidates` (entity restriction), else every
// entity (the true answer is then one of the columns and is counted as equal, as countScoresByIndex does).
struct EmbeddingQueries {
  size_t rows;
  bool head_side;  // true: score (e, r, t) for every e; false: (h, r, e)
  const int32_t* anchor;
  const int32_t* relation;
  const int32_t* truth;
  const int32_t* candidates = nullptr;
  size_t num_candidates = 0;
  const int32_t* negatives = nullptr;
  size_t negatives_per_row = 0;
  // Typed candidates (constrained.h's sets, by relation): row i's candidates are
  // set_ids[set_offsets[relation[i]] .. set_offsets[relation[i] + 1]), a candidate gather per relation; the true
  // answer is a column only where its relation's set holds it (then counted as equal, as with `candidates`). The
  // rows of one relation share the kernel's passes over their set (chunks of kChunk ids x blocks of rows), so every
  // (query, entity) score is the lane's score of the whole-table path bit for bit. set_offsets has one entry per
  // relation the rows name, plus one; null for none. Excludes `candidates`, `negatives` and an entity_offset.
  const uint32_t* set_offsets = nullptr;
  const int32_t* set_ids = nullptr;
  // Filter: for row i, exclude_ids[exclude_offsets[i] .. exclude_offsets[i+1]) are scored individually (by the code
  // that scores their columns) and taken out of the counts. Null for none.
  const uint32_t* exclude_offsets = nullptr;
  const int32_t* exclude_ids = nullptr;
  // The true scores, computed earlier (by this code, from the true answer's row wherever it was): the counts of a
  // slice are then taken against them and truth is unused. A slice's counts add up, over slices that partition the
  // table, to the counts of the whole table: each (query, entity) score is the same whichever slice holds the row.
  const double* true_scores = nullptr;
  // Top-k only: per row, a score its list already holds k entries at or above, from candidates of smaller ids (an
  // earlier chunk or range); only scores strictly above it are listed, and rows with nothing above it cost no
  // rescoring. NaN, or a null array: no floor.
  const double* floor = nullptr;
  // The certified int8 screen (screen.h; docs/screen.md) for DistMult, ComplEx, TransE-L2 and RotatE-L2 at float32
  // over every entity: the counts are the float32 path's bit for bit whatever the mode. screen_stats, when set,
  // receives what the screen did (pairs seen, pairs rescored by the float32 path).
  ScreenMode screen = ScreenMode::Off;
  ScreenStats* screen_stats = nullptr;
  // The entity table quantised once (screen_prepare) for many calls; null: each call that screens quantises the
  // table itself. One made from another table (rows, width or element order) is not used.
  const ScreenTable* screen_table = nullptr;
};

// Per row: candidates scoring > / == the true score, NaN scores, non-NaN excluded answers, and the true score.
struct EmbeddingCounts {
  double* greater;
  double* equal;
  double* nan;
  double* removed;  // may be null when nothing is excluded
  double* true_score;
};

// Ranks a job. Every id must be valid (the caller checked); returns NanTrueScore (index = row) when a true score is
// NaN. Each (query, entity) score is computed by one fixed sequence of operations whatever the thread count or SIMD
// level, so results are bit-identical across both. With a `control` (thread_pool.h) the job stops at the next task
// boundary once it is cancelled (Cancelled is thrown, every buffer released) and counts its progress: one unit per
// row of each candidate chunk of 512 (its tasks then take blocks of 256 rows), plus one per row of the filter pass
// (one per row of the OGB pass).
template <class T>
Status rank_embeddings(const EmbeddingModel<T>& model, const EmbeddingQueries& queries, const EmbeddingCounts& out,
                       SimdLevel simd, unsigned threads, JobControl* control = nullptr);

// Whether the int8 screen applies to an interaction (DistMult, ComplEx: the dot product; TransE-L2, RotatE-L2: the
// squared distance, through its expanded form).
bool screen_applies(Interaction i);
// Quantises the model's entity table for the int8 screen once (EmbeddingQueries::screen_table), as rank_embeddings
// would per call. Invalid when the screen does not apply to the model (screen_applies; an entity_scale; rows wider
// than kScreenMaxDim) or when the table does not fit in memory.
Status screen_prepare(const EmbeddingModel<float>& m, SimdLevel simd, unsigned threads, ScreenTable* out);
// Writes a table screen_prepare made from m to `path` (screen.h screen_table_write), keyed to m's entity table: its
// rows, width, interaction, layout and a digest of its values.
Status screen_save(const EmbeddingModel<float>& m, const ScreenTable& t, const char* path);
// Reads a table screen_save wrote into *out, refusing one made from another entity table (rows, width,
// interaction, layout, or values: the digest) or a damaged file, with a message naming the difference.
Status screen_load(const EmbeddingModel<float>& m, const char* path, ScreenTable* out);

// Top-k candidates of each query over the entities [begin, end) of the model's table (rows of `entity`; a slice of
// a bigger table lists them as global ids, entity_offset + row, and its anchors may come as anchor_rows). Reads the
// model and, of `queries`, rows, head_side, anchor, relation and the exclusion lists (exclude_offsets / exclude_ids:
// global ids never listed for that row; null for none); truth, candidates and negatives are not read. Writes per row k
// entity ids and their scores (row-major, rows x k): the k best by score descending, equal scores by the smaller id
// first; a NaN score is never listed; a row with fewer than k listed candidates is padded with id -1 and score NaN.
// Each score is score_one's, the value rank_embeddings compares for the same pair. The list is a set defined by the
// order above whatever the task split, so results are bit-identical across thread counts and SIMD levels. Every id
// must be valid and begin <= end <= num_entities (the caller checked).
template <class T>
Status top_k_embeddings(const EmbeddingModel<T>& model, const EmbeddingQueries& queries, size_t k, size_t begin,
                        size_t end, int32_t* ids, double* scores, SimdLevel simd, unsigned threads);

// Relation prediction from embeddings: for each of `rows` pairs (heads[i], tails[i]) the score of (h, r, t) for
// every relation r, written to out[i * num_relations + r] in the accumulation type T. Each score is the tail-side
// query of (h, r) as form_query forms it (the same double expressions, rounded once to T; the relation side resolved
// once per call) scored against t by score_one's operations in score_one's order, the relations in the vector lanes
// (interaction_kernel.h Micro::columns; float64: plain loops), so it equals score_triple(model, h, r, t, false) and
// the entity kernel's score of t for (h, r, ?) bit for bit (no other rounding: the bound is 0), whatever the SIMD
// level and thread count. O(rows x num_relations x width) work, split into fixed tasks of pairs. Every id must be
// valid, and the model's entity_offset 0 with no anchor_rows (the caller checked). Fails only when its buffers do not
// fit in memory.
template <class T>
Status score_relations(const EmbeddingModel<T>& model, size_t rows, const int32_t* heads, const int32_t* tails, T* out,
                       SimdLevel simd, unsigned threads);

// The score of one (query, entity) pair with exactly the operations of a kernel lane (tests, benchmarks).
template <class T>
double score_triple(const EmbeddingModel<T>& model, int32_t head, int32_t relation, int32_t tail, bool head_side);

// cos(x) and sin(x) by one fixed sequence of double additions and multiplications (twin: cosSin in
// src/fallback/interaction.ts), so that RotatE's phase relations give the same rotation, bit for bit, on every
// backend: libm's cos / sin and JavaScript's Math.cos / Math.sin are not correctly rounded and disagree in the last
// bit for a few percent of arguments. Accurate to a few units in the last place for |x| < 2^20 pi / 2; beyond,
// still deterministic, less accurate.
void cos_sin(double x, double* c, double* s);

// The index of the first value of values[0 .. n) that is NaN or infinite, or n when all are finite: the check of an
// entity table's chunk as it is read from disk (twin: firstNonFinite in src/fallback/interaction.ts). Works on the
// bits (exponent all ones), in blocks the compiler vectorizes; at memory speed.
size_t first_non_finite(const float* values, size_t n);
size_t first_non_finite(const double* values, size_t n);

// Peak-rate probe for the benchmarks: `iterations` rounds of independent float32 FMAs per thread at `simd`; returns
// the number of multiply-adds performed (the caller times it). The sum of the results is written to *sink.
double fma_probe(SimdLevel simd, unsigned threads, size_t iterations, double* sink);

// ---- internal: what one chunk task needs (interaction_kernel.h); the per-ISA entry points ----------------------
struct ChunkPlan {
  ScoreOp op;
  size_t dim;              // elements per query / packed entity column (Modulus: 2c, halves)
  const float* query;      // rows x dim, canonical order
  const float* coeff;      // PairL1: rows x dim (the entity-side relation factor), else null
  const float* threshold;  // rows: the true scores (float)
  size_t rows;
  // Element k of entity e in canonical order (complex: halves) is entity[e * width + map[k]], times scale[e].
  const float* entity;
  size_t width;
  const uint32_t* map;
  const float* scale;
  const int32_t* candidates;  // null: candidate j is entity j
  size_t num_candidates;
};

namespace isa {
// Scores of plan row `row` against the n entities the same level's rank_chunk last packed into `pack`
// (interaction_kernel.h Micro::packed): top_k_embeddings' rescoring of a chunk.
void packed_scores_scalar(const ChunkPlan& plan, size_t row, const float* pack, size_t n, float* out);
void relation_columns_scalar(ScoreOp op, const float* qt, const float* ct, size_t stride, const float* x, size_t dim,
                             size_t n, float* out);
void rank_chunk_scalar(const ChunkPlan& plan, size_t begin, size_t end, uint32_t* greater, uint32_t* equal,
                       uint32_t* nan, float* pack);
#ifdef KGRANK_HAVE_AVX2
void packed_scores_avx2(const ChunkPlan& plan, size_t row, const float* pack, size_t n, float* out);
// Packs entities ids[0 .. n) (rows of plan.entity) as rank_chunk_avx2 packs a candidate chunk (Micro::pack_list).
void pack_list_avx2(const ChunkPlan& plan, const uint32_t* ids, size_t n, float* pack);
// Dot scores of (query row, entity) pairs, L to a vector (Micro::pair_dots): identity map, no scale, dim >= 8.
void pair_dots_avx2(const float* q, size_t dim, const float* entity, size_t width, const uint32_t* rows,
                    const uint32_t* ids, size_t n, float* out);
// The same pairs' L2Squared scores (TransE-L2, RotatE-L2: minus the chained sum of squared differences).
void pair_l2_avx2(const float* q, size_t dim, const float* entity, size_t width, const uint32_t* rows,
                  const uint32_t* ids, size_t n, float* out);
void relation_columns_avx2(ScoreOp op, const float* qt, const float* ct, size_t stride, const float* x, size_t dim,
                           size_t n, float* out);
void rank_chunk_avx2(const ChunkPlan& plan, size_t begin, size_t end, uint32_t* greater, uint32_t* equal, uint32_t* nan,
                     float* pack);
double fma_probe_avx2(size_t iterations);
#endif
#ifdef KGRANK_HAVE_AVX512
void packed_scores_avx512(const ChunkPlan& plan, size_t row, const float* pack, size_t n, float* out);
// Packs entities ids[0 .. n) (rows of plan.entity) as rank_chunk_avx512 packs a candidate chunk (Micro::pack_list).
void pack_list_avx512(const ChunkPlan& plan, const uint32_t* ids, size_t n, float* pack);
// Dot scores of (query row, entity) pairs, 16 to a vector (Micro::pair_dots): identity map, no scale, dim >= 16.
void pair_dots_avx512(const float* q, size_t dim, const float* entity, size_t width, const uint32_t* rows,
                      const uint32_t* ids, size_t n, float* out);
// The same pairs' L2Squared scores (TransE-L2, RotatE-L2: minus the chained sum of squared differences).
void pair_l2_avx512(const float* q, size_t dim, const float* entity, size_t width, const uint32_t* rows,
                    const uint32_t* ids, size_t n, float* out);
void relation_columns_avx512(ScoreOp op, const float* qt, const float* ct, size_t stride, const float* x, size_t dim,
                             size_t n, float* out);
void rank_chunk_avx512(const ChunkPlan& plan, size_t begin, size_t end, uint32_t* greater, uint32_t* equal,
                       uint32_t* nan, float* pack);
double fma_probe_avx512(size_t iterations);
#endif
#ifdef KGRANK_HAVE_WASM_SIMD128
void packed_scores_wasm(const ChunkPlan& plan, size_t row, const float* pack, size_t n, float* out);
void relation_columns_wasm(ScoreOp op, const float* qt, const float* ct, size_t stride, const float* x, size_t dim,
                           size_t n, float* out);
void rank_chunk_wasm(const ChunkPlan& plan, size_t begin, size_t end, uint32_t* greater, uint32_t* equal, uint32_t* nan,
                     float* pack);
#endif
#ifdef KGRANK_HAVE_NEON
void packed_scores_neon(const ChunkPlan& plan, size_t row, const float* pack, size_t n, float* out);
void relation_columns_neon(ScoreOp op, const float* qt, const float* ct, size_t stride, const float* x, size_t dim,
                           size_t n, float* out);
void rank_chunk_neon(const ChunkPlan& plan, size_t begin, size_t end, uint32_t* greater, uint32_t* equal, uint32_t* nan,
                     float* pack);
double fma_probe_neon(size_t iterations);
#endif
}  // namespace isa

}  // namespace kgrank
