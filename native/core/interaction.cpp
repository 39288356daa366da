// Ranking from embeddings (interaction.h): query formation, the scalar score of one pair, the chunked driver on the
// thread pool, and the scalar traits of the micro-kernel. Twin: src/fallback/interaction.ts.
//
// The interactions, higher = better (the formulas as PyKEEN's pykeen/nn/functional.py and OGB's
// examples/linkproppred/wikikg2/model.py (snap-stanford/ogb, the KnowledgeGraphEmbedding code) define them; the
// constant gamma of OGB's distance models, score = gamma - distance, does not change ranks and is dropped):
//   TransE-L1  f(h,r,t) = -sum_k |h_k + r_k - t_k|                 tail: q = h + r, f = -sum |e - q|
//   TransE-L2  f(h,r,t) = -||h + r - t||_2, ranked by -sum (.)^2   head: q = t - r, f = -sum |e - q|  (sqrt is
//              monotone: dropping it changes no order, only merges no ties)
//   DistMult   f = sum_k h_k r_k t_k                               tail: q = h * r; head: q = r * t; f = q . e
//   ComplEx    f = Re(sum_k h_k r_k conj(t_k))                     tail: q = h r (complex product), f = q_re.e_re +
//              q_im.e_im; head: q = conj(r) t ... written out: q_re = r_re t_re + r_im t_im, q_im = r_re t_im -
//              r_im t_re, f = e_re.q_re + e_im.q_im (OGB's head-batch form)
//   RotatE     f = -sum_k |h_k r_k - t_k| (complex modulus per dimension, summed: OGB / the RotatE authors' code;
//              PyKEEN's rotate_interaction takes the L2 norm over dimensions instead: RotatE-L2 below), |r_k| = 1.
//              Relation rows of half the entity width are phases: r_k = exp(i * value * phase_scale), OGB:
//              phase_scale = pi / embedding_range, embedding_range = (gamma + 2) / hidden_dim. tail: q = h r,
//              f = -sum |e - q|; head: q = conj(r) t, f = -sum |e - q| (|h r - t| = |h - conj(r) t| since |r| = 1);
//              relation rows given as complex numbers are normalised to |r_k| = 1 (PyKEEN keeps them so by a
//              constraint)
//   RotatE-L2  f = -||h r - t||_2 = -sqrt(sum_k |h_k r_k - t_k|^2), PyKEEN's RotatE (pykeen/nn/functional.py
//              rotate_interaction: negative_norm(h * r - t, p=2) on complex tensors), ranked by
//              -sum_k |h_k r_k - t_k|^2 (sqrt is monotone: dropping it changes no order, only merges no ties). Query
//              and relation rows exactly as RotatE (|h r - t| = |h - conj(r) t| per dimension, so the head side is
//              the same distance); the sum of squared moduli is the sum of squares of the 2c real and imaginary
//              parts of e - q, so it runs as TransE-L2's op (L2Squared) over the canonical [re | im] elements
//   PairRE     f = -sum_k |h'_k rh_k - t'_k rt_k|, relation row [rh | rt], h' = h / ||h||_2 (entities normalised
//              as the PairRE authors' OGB code does, F.normalize); tail: q = h' * rh, c = rt; head: q = t' * rt,
//              c = rh; f = -sum |q - e' c|
// Queries are formed in double from the stored values and rounded once to the accumulation type.
//
// Accumulation (float32, the default): each step is one correctly rounded float operation (fma, add, sqrt), so a
// score differs from the exact value of the formula on the float32 embeddings by at most about dim * 2^-24 *
// sum_k |term_k| (the standard recursive-summation bound, gamma_n = n u / (1 - n u)), plus the query's one
// rounding, 2^-24 |q_k| per element. Ranks can differ from an exact evaluation only where the true score and a
// candidate's are that close. The wide option accumulates in float64 (plain multiply, then add: no FMA).
#include "interaction.h"

#include <algorithm>
#include <atomic>
#include <bitset>
#include <utility>
#include <cmath>
#include <cstring>
#include <exception>
#include <string>
#include <limits>
#include <vector>

#include "except.h"
#include "interaction_kernel.h"
#include "thread_pool.h"

namespace kgrank {
namespace {

struct Scalar {
  using V = float;
  static constexpr size_t kLanes = 1;
  static V zero() { return 0.0f; }
  static V set1(float x) { return x; }
  static V load(const float* p) { return *p; }
  static void store(float* p, V v) { *p = v; }
  static V add(V a, V b) { return a + b; }
  static V sub(V a, V b) { return a - b; }
  static V mul(V a, V b) { return a * b; }
  static V fma(V a, V b, V c) { return std::fma(a, b, c); }
  static V fnmadd(V a, V b, V c) { return std::fma(-a, b, c); }
  static V abs(V a) { return std::fabs(a); }
  static V sqrt(V a) { return std::sqrt(a); }
  static constexpr size_t kQueries = 4;
  static unsigned gt(V a, V b) { return a > b ? 1u : 0u; }
  static unsigned eq(V a, V b) { return a == b ? 1u : 0u; }
  static unsigned unord(V a, V b) { return (a != a || b != b) ? 1u : 0u; }
  static uint32_t popcount(unsigned m) { return static_cast<uint32_t>(std::bitset<32>(m).count()); }
};

// One multiply-add of the accumulation type: fused for float (as the vector kernels), separate for double.
inline float madd(float a, float b, float c) { return std::fma(a, b, c); }
inline double madd(double a, double b, double c) {
  const double p = a * b;
  return p + c;
}

bool is_rotate(Interaction i) { return i == Interaction::RotatE || i == Interaction::RotatEL2; }
bool is_complex(Interaction i) { return i == Interaction::ComplEx || is_rotate(i); }

// The ops the int8 screen decides (screen.h): the dot product, and the squared distance through its expanded form.
bool screens(ScoreOp op) { return op == ScoreOp::Dot || op == ScoreOp::L2Squared; }

ScoreOp op_of(Interaction i) {
  switch (i) {
    case Interaction::TransEL1: return ScoreOp::L1;
    case Interaction::TransEL2:
    case Interaction::RotatEL2: return ScoreOp::L2Squared;  // sum of squared moduli = sum of squared re, im parts
    case Interaction::DistMult:
    case Interaction::ComplEx: return ScoreOp::Dot;
    case Interaction::RotatE: return ScoreOp::Modulus;
    case Interaction::PairRE: return ScoreOp::PairL1;
  }
  return ScoreOp::Dot;
}

// Canonical element k (complex: re halves then im halves) of a row stored in `layout`.
inline size_t canonical(size_t k, size_t width, bool complex, ComplexLayout layout) {
  if (!complex || layout == ComplexLayout::Halves) return k;
  const size_t c = width / 2;
  return k < c ? 2 * k : 2 * (k - c) + 1;
}

// Row i's anchor vector and PairRE factor: from the query rows given apart, or from the table.
template <class T>
std::pair<const T*, T> anchor_of(const EmbeddingModel<T>& m, size_t i, int32_t anchor) {
  if (m.anchor_rows != nullptr) {
    return {m.anchor_rows + i * m.entity_width, m.anchor_scale ? m.anchor_scale[i] : T(1)};
  }
  const size_t a = static_cast<size_t>(anchor);
  return {m.entity + a * m.entity_width, m.entity_scale ? m.entity_scale[a] : T(1)};
}

// The query vector (and PairRE's coefficient vector) of (anchor, relation, side), in canonical order. The anchor's
// row is `a`, its PairRE factor `s` (1 when entities are not normalised).
template <class T>
void form_query(const EmbeddingModel<T>& m, const std::vector<uint32_t>& map, const T* a, T s, int32_t rel,
                bool head_side, T* q, T* c) {
  const size_t d = m.entity_width;
  const T* r = m.relation + static_cast<size_t>(rel) * m.relation_width;
  auto A = [&](size_t k) { return static_cast<double>(a[map[k]]); };
  switch (m.interaction) {
    case Interaction::TransEL1:
    case Interaction::TransEL2:
      for (size_t k = 0; k < d; ++k) q[k] = static_cast<T>(head_side ? A(k) - r[k] : A(k) + r[k]);
      return;
    case Interaction::DistMult:
      for (size_t k = 0; k < d; ++k) q[k] = static_cast<T>(A(k) * r[k]);
      return;
    case Interaction::ComplEx:
    case Interaction::RotatE:
    case Interaction::RotatEL2: {
      const size_t h = d / 2;
      const bool phases = is_rotate(m.interaction) && m.relation_width == h;
      for (size_t k = 0; k < h; ++k) {
        double rr, ri;
        if (phases) {
          cos_sin(static_cast<double>(r[k]) * m.phase_scale, &rr, &ri);
        } else {
          rr = r[canonical(k, d, true, m.layout)];
          ri = r[canonical(k + h, d, true, m.layout)];
          if (is_rotate(m.interaction)) {  // a rotation: |r_k| = 1 (PyKEEN's constraint, applied here)
            const double mod = std::sqrt(rr * rr + ri * ri);
            rr /= mod;
            ri /= mod;
          }
        }
        const double ar = A(k), ai = A(k + h);
        if (head_side) {  // conj(r) * t
          q[k] = static_cast<T>(rr * ar + ri * ai);
          q[k + h] = static_cast<T>(rr * ai - ri * ar);
        } else {  // h * r
          q[k] = static_cast<T>(ar * rr - ai * ri);
          q[k + h] = static_cast<T>(ar * ri + ai * rr);
        }
      }
      return;
    }
    case Interaction::PairRE: {
      for (size_t k = 0; k < d; ++k) {
        const T an = static_cast<T>(a[k] * s);  // rounded as the packed entity elements are
        const double rh = r[k], rt = r[d + k];
        q[k] = static_cast<T>(static_cast<double>(an) * (head_side ? rt : rh));
        c[k] = static_cast<T>(head_side ? rh : rt);
      }
      return;
    }
  }
}

// Every row's query vector (and PairRE's coefficient vector), canonical order: what both drivers score against.
template <class T>
struct Queries {
  ScoreOp op;
  size_t dim;
  std::vector<uint32_t> map;  // element k of a canonical row is element map[k] of a stored row
  std::vector<T> query;       // rows x dim
  std::vector<T> coeff;       // PairRE: rows x dim; else empty

  const T* coeff_row(size_t i) const { return coeff.empty() ? nullptr : coeff.data() + i * dim; }
};

// Forms the queries of `qs`; false when they do not fit in memory.
template <class T>
bool form_queries(const EmbeddingModel<T>& m, const EmbeddingQueries& qs, Queries<T>* q) {
  q->dim = m.entity_width;
  q->op = op_of(m.interaction);
  const bool complex = is_complex(m.interaction);
  KGRANK_TRY {
    q->map.resize(q->dim);
    for (size_t k = 0; k < q->dim; ++k) q->map[k] = static_cast<uint32_t>(canonical(k, q->dim, complex, m.layout));
    q->query.resize(qs.rows * q->dim);
    if (q->op == ScoreOp::PairL1) q->coeff.resize(qs.rows * q->dim);
  }
  KGRANK_CATCH(const std::bad_alloc&) { return false; }
  for (size_t i = 0; i < qs.rows; ++i) {
    const auto a = anchor_of(m, i, qs.anchor[i]);
    form_query<T>(m, q->map, a.first, a.second, qs.relation[i], qs.head_side, q->query.data() + i * q->dim,
                  q->coeff.empty() ? nullptr : q->coeff.data() + i * q->dim);
  }
  return true;
}

// The score of entity e against one query: exactly the operations of a micro-kernel lane.
template <class T>
T score_one(ScoreOp op, const T* q, const T* c, size_t dim, const T* row, const uint32_t* map, const T* scale,
            size_t e) {
  T acc = 0;
  const T s = scale ? scale[e] : T(1);
  switch (op) {
    case ScoreOp::Dot:
      for (size_t k = 0; k < dim; ++k) acc = madd(q[k], row[map[k]], acc);
      return acc;
    case ScoreOp::L1:
      for (size_t k = 0; k < dim; ++k) acc = acc + std::fabs(row[map[k]] - q[k]);
      return -acc;
    case ScoreOp::L2Squared:
      for (size_t k = 0; k < dim; ++k) {
        const T x = row[map[k]] - q[k];
        acc = madd(x, x, acc);
      }
      return -acc;
    case ScoreOp::Modulus: {
      const size_t h = dim / 2;
      for (size_t k = 0; k < h; ++k) {
        const T dr = row[map[k]] - q[k];
        const T di = row[map[k + h]] - q[k + h];
        const T di2 = di * di;
        acc = acc + std::sqrt(madd(dr, dr, di2));
      }
      return -acc;
    }
    case ScoreOp::PairL1:
      for (size_t k = 0; k < dim; ++k) {
        const T x = scale ? static_cast<T>(row[map[k]] * s) : row[map[k]];
        acc = acc + std::fabs(madd(-x, c[k], q[k]));
      }
      return -acc;
  }
  return acc;
}

using ChunkFn = void (*)(const ChunkPlan&, size_t, size_t, uint32_t*, uint32_t*, uint32_t*, float*);

ChunkFn chunk_kernel(SimdLevel level) {
#ifdef KGRANK_HAVE_NEON
  if (level == SimdLevel::NEON && simd_supported(level)) return isa::rank_chunk_neon;
#endif
#ifdef KGRANK_HAVE_AVX512
  if (level == SimdLevel::AVX512 && simd_supported(level)) return isa::rank_chunk_avx512;
#endif
#ifdef KGRANK_HAVE_AVX2
  if ((level == SimdLevel::AVX2 || level == SimdLevel::AVX512) && simd_supported(SimdLevel::AVX2)) {
    return isa::rank_chunk_avx2;
  }
#endif
  (void)level;
#ifdef KGRANK_HAVE_WASM_SIMD128
  return isa::rank_chunk_wasm;  // the WebAssembly build's one level
#else
  return isa::rank_chunk_scalar;
#endif
}

using PackedFn = void (*)(const ChunkPlan&, size_t, const float*, size_t, float*);

// The packed-chunk scorer of the level whose chunk kernel is `kernel` (the same panel width).
PackedFn packed_scores_of(ChunkFn kernel) {
#ifdef KGRANK_HAVE_NEON
  if (kernel == isa::rank_chunk_neon) return isa::packed_scores_neon;
#endif
#ifdef KGRANK_HAVE_AVX512
  if (kernel == isa::rank_chunk_avx512) return isa::packed_scores_avx512;
#endif
#ifdef KGRANK_HAVE_AVX2
  if (kernel == isa::rank_chunk_avx2) return isa::packed_scores_avx2;
#endif
  (void)kernel;
#ifdef KGRANK_HAVE_WASM_SIMD128
  if (kernel == isa::rank_chunk_wasm) return isa::packed_scores_wasm;
#endif
  return isa::packed_scores_scalar;
}

using PackListFn = void (*)(const ChunkPlan&, const uint32_t*, size_t, float*);

// The listed-entity pack of the level whose chunk kernel is `kernel` (interaction_kernel.h Micro::pack_list), or null
// where it has none (pack_entities then).
PackListFn pack_list_of(ChunkFn kernel) {
#ifdef KGRANK_HAVE_AVX512
  if (kernel == isa::rank_chunk_avx512) return isa::pack_list_avx512;
#endif
#ifdef KGRANK_HAVE_AVX2
  if (kernel == isa::rank_chunk_avx2) return isa::pack_list_avx2;
#endif
  (void)kernel;
  return nullptr;
}

// Entities per panel of the level whose chunk kernel is `kernel` (interaction_kernel.h Micro::W = 2 lanes).
size_t panel_width_of(ChunkFn kernel) {
#ifdef KGRANK_HAVE_NEON
  if (kernel == isa::rank_chunk_neon) return 8;
#endif
#ifdef KGRANK_HAVE_AVX512
  if (kernel == isa::rank_chunk_avx512) return 32;
#endif
#ifdef KGRANK_HAVE_AVX2
  if (kernel == isa::rank_chunk_avx2) return 16;
#endif
#ifdef KGRANK_HAVE_WASM_SIMD128
  if (kernel == isa::rank_chunk_wasm) return 8;
#endif
  (void)kernel;
  return 2;
}

// Packs entities ids[0 .. cnt) (rows of plan.entity) as the chunk kernel of panel width pw packs a chunk's
// candidates (interaction_kernel.h Micro::chunk: panels of pw entities, element-major, canonical order, times
// plan.scale when set), so that the level's packed_scores score them with the chunk kernel's lanes, bit for bit. The
// lanes of the last panel past cnt keep whatever they held: lanes are independent and their scores are never read.
void pack_entities(const ChunkPlan& plan, size_t pw, const uint32_t* ids, size_t cnt, float* out) {
  const size_t dim = plan.dim;
  // Panel by panel, element by element across its rows: the stores run contiguous (an entity's elements are pw
  // floats apart, a cache line each at AVX2), while the panel's pw rows stay in L1.
  const float* rows[32];  // pw <= 32 (AVX-512)
  float s[32];
  for (size_t first = 0; first < cnt; first += pw) {
    const size_t np = cnt - first < pw ? cnt - first : pw;
    for (size_t l = 0; l < np; ++l) {
      const size_t e = ids[first + l];
      rows[l] = plan.entity + e * plan.width;
      s[l] = plan.scale != nullptr ? plan.scale[e] : 1.0f;
    }
    // The next panel's rows, brought closer while this one is packed: listed entities are scattered over the table,
    // and without it the pack waited on their cache misses one panel at a time (most of the filter pass's time).
    for (size_t l = first + pw; l < first + 2 * pw && l < cnt; ++l) {
      const char* row = reinterpret_cast<const char*>(plan.entity + static_cast<size_t>(ids[l]) * plan.width);
      for (size_t b = 0; b < plan.width * sizeof(float); b += 64) interaction_detail::prefetch(row + b);
    }
    float* panel = out + (first / pw) * dim * pw;
    for (size_t kk = 0; kk < dim; ++kk) {
      const size_t at = plan.map[kk];
      float* col = panel + kk * pw;
      if (plan.scale != nullptr) {
        for (size_t l = 0; l < np; ++l) col[l] = rows[l][at] * s[l];
      } else {
        for (size_t l = 0; l < np; ++l) col[l] = rows[l][at];
      }
    }
  }
}

// Packs the entities ids[0 .. cnt) into `out` as the level's chunk kernel packs a chunk (its pack_list, list_fn,
// where it has one, else pack_entities with its panel width pw), for the level's packed_scores.
void pack_listed(const ChunkPlan& part, PackListFn list_fn, size_t pw, const uint32_t* ids, size_t cnt, float* out) {
  if (list_fn != nullptr) {
    list_fn(part, ids, cnt, out);
  } else {
    pack_entities(part, pw, ids, cnt, out);
  }
}

// Entities per packing of score_listed: a multiple of every panel width; 256 x d floats stay in L2.
constexpr size_t kListPiece = 256;

// The screen's kernel and table for a call of rank_embeddings or top_k_embeddings whose query and table make the
// screen apply (float32 Dot over plain rows): where qs.screen asks for it (Int8; Auto where the level's kernel pays,
// screen_auto_kernel, and either the table was prepared or the call has rows x dim >= kScreenAutoWork, so that
// quantising the table pays), the prepared table if it was made from this one (n rows of dim elements in the order
// `map`), else rows [base, end) of `entity` quantised into *own. Null (and *table null) where the screen does not run:
// the float32 path.
ScreenChunkFn screen_setup(const EmbeddingQueries& qs, const float* entity, size_t n, size_t width, const uint32_t* map,
                           size_t dim, size_t rows, size_t base, size_t end, SimdLevel simd, unsigned threads,
                           bool dist, ScreenTable* own, const ScreenTable** table) {
  *table = nullptr;
  const bool prepared = qs.screen_table != nullptr && qs.screen_table->made_for(n, dim, map, dist);
  if (qs.screen == ScreenMode::Off ||
      (qs.screen == ScreenMode::Auto &&
       !(screen_auto_kernel(simd) && (prepared || screen_auto_quantises(simd, rows, dim))))) {
    return nullptr;
  }
  if (prepared) {
    *table = qs.screen_table;
  } else if (screen_quantise_table(entity + base * width, end - base, width, map, dim, simd, threads, own, dist)) {
    *table = own;
  }
  if (*table == nullptr) return nullptr;
  // Only a call that screens picks its kernel (and may ask Linux for AMX's tile state: screen_kernel).
  bool vector = false;
  return screen_kernel(simd, &vector);
}

// `part` restricted to its rows `rows`, their queries and thresholds gathered contiguous into `query` and
// `threshold` (a Dot plan: no coeff): the chunk kernel over a few rows of a task, one packing of the chunk for them.
ChunkPlan gather_rows(const ChunkPlan& part, const std::vector<uint32_t>& rows, std::vector<float>* query,
                      std::vector<float>* threshold) {
  const size_t h = rows.size(), dim = part.dim;
  query->resize(h * dim);
  threshold->resize(h);
  for (size_t j = 0; j < h; ++j) {
    std::copy_n(part.query + rows[j] * dim, dim, query->data() + j * dim);
    (*threshold)[j] = part.threshold[rows[j]];
  }
  ChunkPlan g = part;
  g.query = query->data();
  g.threshold = threshold->data();
  g.rows = h;
  return g;
}

using PairDotsFn = void (*)(const float*, size_t, const float*, size_t, const uint32_t*, const uint32_t*, size_t,
                            float*);

// The pair scorer (interaction_kernel.h Micro::pair_dots) of the level whose chunk kernel is `kernel`, for op (Dot or
// L2Squared) over rows of `dim` elements; null where it does not apply (another op, no in-register transposes, or
// rows narrower than a vector).
PairDotsFn pair_dots_of(ChunkFn kernel, size_t dim, ScoreOp op) {
  if (op != ScoreOp::Dot && op != ScoreOp::L2Squared) return nullptr;
  const bool dot = op == ScoreOp::Dot;
#ifdef KGRANK_HAVE_AVX512
  if (kernel == isa::rank_chunk_avx512) return dim < 16 ? nullptr : dot ? isa::pair_dots_avx512 : isa::pair_l2_avx512;
#endif
#ifdef KGRANK_HAVE_AVX2
  if (kernel == isa::rank_chunk_avx2) return dim < 8 ? nullptr : dot ? isa::pair_dots_avx2 : isa::pair_l2_avx2;
#endif
  (void)kernel;
  (void)dim;
  (void)dot;
  return nullptr;
}

// Scores plan row `row` against the listed entities ids[0 .. n) (rows of plan.entity) by the level's own lanes
// (packed: the level's packed_scores, pw its panel width): each score is the chunk kernel's for that pair, so
// score_one's bit for bit, where score_one called one by one runs libm's fmaf per element in a translation unit built
// without FMA. The pack is the level's own (pack_list: rows moved by in-register transposes) where it has one, else
// pack_entities: the same values in the same places. Calls each(score) in list order. `pack` holds kListPiece x dim
// floats, `scores` kListPiece.
template <class F>
void score_listed(const ChunkPlan& plan, PackedFn packed, PackListFn pack_list, size_t pw, size_t row,
                  const uint32_t* ids, size_t n, float* pack, float* scores, F&& each) {
  for (size_t p = 0; p < n; p += kListPiece) {
    const size_t cnt = n - p < kListPiece ? n - p : kListPiece;
    if (pack_list != nullptr) {
      pack_list(plan, ids + p, cnt, pack);
    } else {
      pack_entities(plan, pw, ids + p, cnt, pack);
    }
    packed(plan, row, pack, cnt, scores);
    for (size_t j = 0; j < cnt; ++j) each(scores[j]);
  }
}

constexpr size_t kChunk = 512;       // candidates per task (a multiple of every panel width)
constexpr size_t kRowsPerTask = 64;  // rows per task of the per-row passes (filter, sampled negatives)
// The filter pass numbers a row group's distinct known answers through a dense entity -> slot map (4 bytes an
// entity, per thread) up to this many entities in the slice, else by sorting them.
constexpr size_t kDenseSlots = size_t{1} << 22;
constexpr size_t kDenseMinList = 256;  // ... and when the group's lists hold this many ids
// Rows per task of the chunk pass when the job may be cancelled (a control is given): a chunk of every row of a big
// batch is seconds of work on one scalar thread, too coarse a boundary for a cancel. A multiple of the kernel's
// query block (64), so queries are grouped as without blocks; counts are integer sums, so results do not change.
constexpr size_t kRowBlock = 256;
constexpr size_t kScreenRowBlock = 64;  // rows that give up the screen together (Auto); divides kRowBlock

}  // namespace

namespace isa {
void relation_columns_scalar(ScoreOp op, const float* qt, const float* ct, size_t stride, const float* x, size_t dim,
                             size_t n, float* out) {
  interaction_detail::Micro<Scalar>::columns_dispatch(op, qt, ct, stride, x, dim, n, out);
}
void packed_scores_scalar(const ChunkPlan& plan, size_t row, const float* pack, size_t n, float* out) {
  interaction_detail::Micro<Scalar>::packed_dispatch(plan, row, pack, n, out);
}
void rank_chunk_scalar(const ChunkPlan& plan, size_t begin, size_t end, uint32_t* greater, uint32_t* equal,
                       uint32_t* nan, float* pack) {
  interaction_detail::Micro<Scalar>::dispatch(plan, begin, end, greater, equal, nan, pack);
}
}  // namespace isa

template <class T>
Status rank_embeddings(const EmbeddingModel<T>& m, const EmbeddingQueries& qs, const EmbeddingCounts& out,
                       SimdLevel simd, unsigned threads, JobControl* control) {
  const size_t rows = qs.rows;
  if (qs.screen_stats != nullptr) *qs.screen_stats = ScreenStats{};
  Queries<T> q;
  std::vector<float> threshold;
  bool fits = form_queries(m, qs, &q);
  KGRANK_TRY { threshold.resize(rows); }
  KGRANK_CATCH(const std::bad_alloc&) { fits = false; }
  if (!fits) return Status::invalid("out of memory for the query vectors of this batch: pass fewer triples per call");
  const size_t dim = q.dim;
  const ScoreOp op = q.op;
  const std::vector<uint32_t>& map = q.map;
  const std::vector<T>& query = q.query;
  const std::vector<T>& coeff = q.coeff;
  const T* entity = m.entity;
  const size_t width = m.entity_width;
  auto score_of = [&](size_t row, size_t e) {
    return score_one<T>(op, query.data() + row * dim, q.coeff_row(row), dim, entity + e * width, map.data(),
                        m.entity_scale, e);
  };
  // The scores of row `row` against the entities ids[0 .. n) (rows of `entity`), each(score) once per entry: the
  // true scores, the OGB negatives and the filter's known answers. float32 by the level's own lanes (score_listed:
  // the chunk kernel's values, which are score_one's), float64 by score_one (plain multiply and add, no libm call).
  // Throws std::bad_alloc when its buffers do not fit (callers catch it).
  const ChunkFn list_kernel = chunk_kernel(simd);
  const PackedFn list_packed = packed_scores_of(list_kernel);
  const size_t list_pw = panel_width_of(list_kernel);
  const PackListFn list_pack_fn = pack_list_of(list_kernel);
  auto score_ids = [&](size_t row, const uint32_t* ids, size_t n, auto&& each) {
    if constexpr (std::is_same<T, float>::value) {
      thread_local std::vector<float> list_pack, list_scores;
      if (list_pack.size() < kListPiece * dim) list_pack.assign(kListPiece * dim, 0.0f);
      if (list_scores.size() < kListPiece) list_scores.assign(kListPiece, 0.0f);
      const ChunkPlan flat{op,           dim,
                           query.data(), coeff.empty() ? nullptr : coeff.data(),
                           nullptr,      rows,
                           entity,       width,
                           map.data(),   m.entity_scale,
                           nullptr,      0};
      score_listed(flat, list_packed, list_pack_fn, list_pw, row, ids, n, list_pack.data(), list_scores.data(), each);
    } else {
      for (size_t j = 0; j < n; ++j) each(score_of(row, ids[j]));
    }
  };
  // Float32 Dot (DistMult, ComplEx) and L2Squared (TransE-L2, RotatE-L2) scores of plain entity rows: pairs of
  // different rows share a vector's lanes (pair_dots), so the true scores and the screen's rescoring score many rows'
  // pairs at once; each lane is its pair's own chain, so every value is score_ids' bit for bit.
  bool identity = true;
  for (size_t k = 0; k < map.size(); ++k) identity = identity && map[k] == k;
  const PairDotsFn pair_fn = std::is_same<T, float>::value && m.entity_scale == nullptr && identity && map.size() == dim
                                 ? pair_dots_of(list_kernel, dim, op)
                                 : nullptr;
  // The true scores at once where pair_fn applies, in parallel blocks of rows; the loop below reads them.
  std::vector<float> true_dots;
  if constexpr (std::is_same<T, float>::value) {
    if (pair_fn != nullptr && !qs.true_scores) {
      std::vector<uint32_t> pair_rows, pair_ids;
      KGRANK_TRY {
        true_dots.resize(rows);
        pair_rows.resize(rows);
        pair_ids.resize(rows);
      }
      KGRANK_CATCH(const std::bad_alloc&) {
        return Status::invalid("out of memory for the buffers that score the true answers: free memory and retry");
      }
      for (size_t i = 0; i < rows; ++i) {
        pair_rows[i] = static_cast<uint32_t>(i);
        pair_ids[i] = static_cast<uint32_t>(qs.truth[i]);
      }
      constexpr size_t kTrueBlock = 1024;
      parallel_for((rows + kTrueBlock - 1) / kTrueBlock, threads, [&](size_t b) {
        const size_t at = b * kTrueBlock;
        const size_t cnt = rows - at < kTrueBlock ? rows - at : kTrueBlock;
        pair_fn(query.data(), dim, entity, width, pair_rows.data() + at, pair_ids.data() + at, cnt,
                true_dots.data() + at);
      });
    }
  }
  bool buffers = true;
  for (size_t i = 0; i < rows; ++i) {
    T t = 0;
    if (qs.true_scores) {
      t = static_cast<T>(qs.true_scores[i]);
    } else if (!true_dots.empty()) {
      t = static_cast<T>(true_dots[i]);
    } else {
      const uint32_t truth = static_cast<uint32_t>(qs.truth[i]);
      KGRANK_TRY {
        score_ids(i, &truth, 1, [&](T s) { t = s; });
      }
      KGRANK_CATCH(const std::bad_alloc&) { buffers = false; }
      if (!buffers) {  // one thread's buffers (this loop runs on the calling thread): fewer threads would not help
        return Status::invalid("out of memory for the buffers that score the true answers: free memory and retry");
      }
    }
    if (t != t) return Status::at(StatusCode::NanTrueScore, i, "the true triple's score is NaN");
    out.true_score[i] = static_cast<double>(t);
    threshold[i] = static_cast<float>(t);
    out.greater[i] = out.equal[i] = out.nan[i] = 0;
    if (out.removed) out.removed[i] = 0;
  }
  std::atomic<bool> failed{false};
  const size_t row_tasks = (rows + kRowsPerTask - 1) / kRowsPerTask;

  if (qs.negatives) {  // OGB protocol: K given candidates per row, scored one by one
    const size_t K = qs.negatives_per_row;
    if (control != nullptr) control->add_total(rows);
    parallel_for(
        row_tasks, threads,
        [&](size_t task) {
          const size_t end = (task + 1) * kRowsPerTask < rows ? (task + 1) * kRowsPerTask : rows;
          KGRANK_TRY {
            thread_local std::vector<uint32_t> ids;
            ids.resize(K);
            for (size_t i = task * kRowsPerTask; i < end; ++i) {
              const T t = static_cast<T>(out.true_score[i]);
              for (size_t j = 0; j < K; ++j) ids[j] = static_cast<uint32_t>(qs.negatives[i * K + j]);
              double g = 0, e = 0, n = 0;
              score_ids(i, ids.data(), K, [&](T s) {
                g += s > t;
                e += s == t;
                n += s != s;
              });
              out.greater[i] = g;
              out.equal[i] = e;
              out.nan[i] = n;
            }
          }
          KGRANK_CATCH(...) { failed.store(true); }
          if (control != nullptr) control->advance(end - task * kRowsPerTask);
        },
        control);
    if (failed.load()) return Status::invalid("out of memory for the scoring buffers: use fewer threads");
    return Status::success();
  }

  // Candidate groups: every row against one list (every entity, or the shared `candidates`), or, with typed
  // candidates, the rows of each relation (in row order) against that relation's set. Positions [r0, r1) of a group
  // are rows order[r0 .. r1) (identity without typed candidates); the grouped query rows lie contiguous, so a task
  // is the same kernel call over a candidate chunk and a block of query rows as without groups.
  struct Group {
    size_t r0, r1;
    const int32_t* cand;  // null: candidate j is entity j
    size_t n;
  };
  struct Task {
    size_t group, begin, r0, nr;  // candidates [begin, begin + kChunk) of the group's list, positions r0 .. r0 + nr
  };
  std::vector<Group> groups;
  std::vector<Task> task_list;
  std::vector<uint32_t> order;  // position -> row; empty: the identity
  std::vector<T> grouped_query, grouped_coeff;
  std::vector<float> grouped_threshold;
  KGRANK_TRY {
    if (qs.set_offsets) {
      int32_t top = 0;
      for (size_t i = 0; i < rows; ++i) top = qs.relation[i] > top ? qs.relation[i] : top;
      std::vector<size_t> at(static_cast<size_t>(top) + 2, 0);
      for (size_t i = 0; i < rows; ++i) ++at[static_cast<size_t>(qs.relation[i]) + 1];
      for (size_t r = 1; r < at.size(); ++r) at[r] += at[r - 1];
      for (size_t r = 0; r + 1 < at.size(); ++r) {
        if (at[r + 1] > at[r]) {
          groups.push_back(
              {at[r], at[r + 1], qs.set_ids + qs.set_offsets[r], qs.set_offsets[r + 1] - qs.set_offsets[r]});
        }
      }
      order.resize(rows);
      for (size_t i = 0; i < rows; ++i) order[at[static_cast<size_t>(qs.relation[i])]++] = static_cast<uint32_t>(i);
      if constexpr (std::is_same<T, float>::value) {
        grouped_query.resize(rows * dim);
        if (!coeff.empty()) grouped_coeff.resize(rows * dim);
        grouped_threshold.resize(rows);
        for (size_t k = 0; k < rows; ++k) {
          std::copy_n(query.data() + order[k] * dim, dim, grouped_query.data() + k * dim);
          if (!coeff.empty()) std::copy_n(coeff.data() + order[k] * dim, dim, grouped_coeff.data() + k * dim);
          grouped_threshold[k] = threshold[order[k]];
        }
      }
    } else {
      groups.push_back({0, rows, qs.candidates, qs.candidates ? qs.num_candidates : m.num_entities});
    }
    // Tasks: each group's candidate chunks, each for a block of its rows (all of them unless the job may be
    // cancelled), chunk by chunk.
    for (size_t g = 0; g < groups.size(); ++g) {
      const size_t n_rows = groups[g].r1 - groups[g].r0;
      const size_t row_block = control != nullptr ? kRowBlock : n_rows;
      for (size_t begin = 0; begin < groups[g].n; begin += kChunk) {
        for (size_t r0 = 0; r0 < n_rows; r0 += row_block) {
          task_list.push_back({g, begin, groups[g].r0 + r0, r0 + row_block < n_rows ? row_block : n_rows - r0});
        }
      }
    }
  }
  KGRANK_CATCH(const std::bad_alloc&) {
    return Status::invalid("out of memory for the candidate groups of this batch: pass fewer triples per call");
  }
  const auto row_at = [&](size_t pos) { return order.empty() ? pos : static_cast<size_t>(order[pos]); };
  const size_t tasks = task_list.size();
  std::vector<std::atomic<uint64_t>> totals(3 * rows);
  for (auto& v : totals) v.store(0, std::memory_order_relaxed);
  size_t units = qs.exclude_offsets ? rows : 0;
  for (const Task& t : task_list) units += t.nr;
  if (control != nullptr) control->add_total(units);

  if constexpr (std::is_same<T, float>::value) {
    const bool grouped = !order.empty();
    const ChunkPlan plan{op,
                         dim,
                         grouped ? grouped_query.data() : query.data(),
                         coeff.empty() ? nullptr
                         : grouped     ? grouped_coeff.data()
                                       : coeff.data(),
                         grouped ? grouped_threshold.data() : threshold.data(),
                         rows,
                         entity,
                         width,
                         map.data(),
                         m.entity_scale,
                         nullptr,
                         0};
    const ChunkFn kernel = chunk_kernel(simd);
    // The int8 screen (screen.h): every pair is decided from its integer score where a certified bound allows and
    // otherwise scored by this level's own lanes (packed_scores), so the counts are the float32 path's bit for bit.
    // It needs the plain dot product of every entity against ungrouped queries.
    ScreenTable own_table;
    const ScreenTable* screen_table = nullptr;
    ScreenQueries screen_queries;
    ScreenChunkFn screen_fn = nullptr;
    if (qs.screen != ScreenMode::Off && screens(op) && m.entity_scale == nullptr && !grouped && dim <= kScreenMaxDim &&
        groups.size() == 1 && groups[0].cand == nullptr) {
      const bool dist = op == ScoreOp::L2Squared;
      const ScreenChunkFn fn = screen_setup(qs, entity, m.num_entities, width, map.data(), dim, rows, 0, m.num_entities,
                                            simd, threads, dist, &own_table, &screen_table);
      if (fn != nullptr) {
        if (screen_quantise_queries(query.data(), rows, dim, threshold.data(), simd, &screen_queries, dist)) {
          screen_fn = fn;
        }
      }
    }
    const PackedFn rescore = packed_scores_of(kernel);
    const size_t pw = panel_width_of(kernel);
    std::atomic<uint64_t> screen_pairs{0}, screen_rescored{0};
    // Per block of kScreenRowBlock rows: whether it gave up the screen (Auto only; see the task loop).
    std::vector<std::atomic<uint8_t>> screen_gave_up(screen_fn != nullptr ? rows / kScreenRowBlock + 1 : 0);
    for (auto& g : screen_gave_up) g.store(0, std::memory_order_relaxed);
    parallel_for(
        tasks, threads,
        [&](size_t t) {
          const Task& task = task_list[t];
          const Group& g = groups[task.group];
          const size_t r0 = task.r0;
          const size_t nr = task.nr;
          KGRANK_TRY {
            thread_local std::vector<float> pack;
            thread_local std::vector<uint32_t> local;
            if (pack.size() < kChunk * dim) pack.assign(kChunk * dim, 0.0f);
            local.assign(3 * nr, 0);
            ChunkPlan part = plan;
            part.query += r0 * dim;
            if (part.coeff != nullptr) part.coeff += r0 * dim;
            part.threshold += r0;
            part.rows = nr;
            part.candidates = g.cand;
            part.num_candidates = g.n;
            const size_t begin = task.begin;
            const size_t end = begin + kChunk < g.n ? begin + kChunk : g.n;
            if (screen_fn != nullptr) {
              thread_local std::vector<uint32_t> und, und_n;
              thread_local std::vector<float> scores;
              constexpr size_t cap = kChunk + 16;  // screen.h ScreenTask::cap: 16 spare entries per row
              if (und.size() < nr * cap) und.assign(nr * cap, 0);
              if (und_n.size() < nr) und_n.assign(nr, 0);
              if (scores.size() < kChunk) scores.assign(kChunk, 0.0f);
              uint64_t rescored = 0, screened = 0;
              const size_t n = end - begin;
              thread_local std::vector<float> compact, heavy_query, heavy_threshold;
              thread_local std::vector<uint32_t> heavy, heavy_counts, pair_rows, pair_ids;
              if (compact.size() < kChunk * dim) compact.assign(kChunk * dim, 0.0f);
              // The level's chunk packing of candidates ids[0 .. cnt) into `compact`, which its packed_scores
              // score exactly as the chunk kernel does (the level's pack_list, else pack_entities).
              const auto pack_ids = [&](const uint32_t* ids, size_t cnt) {
                pack_listed(part, list_pack_fn, pw, ids, cnt, compact.data());
              };
              // One exact score s of row k counted into local: above its threshold, equal to it, NaN.
              const auto tally = [&](size_t k, float s) {
                const float th = part.threshold[k];
                local[k] += s > th;
                local[nr + k] += s == th;
                local[2 * nr + k] += s != s;
              };
              // Row k's exact counts over the packed candidates (cnt of them), added to local.
              const auto count_packed = [&](size_t k, size_t cnt) {
                rescore(part, k, compact.data(), cnt, scores.data());
                for (size_t j = 0; j < cnt; ++j) tally(k, scores[j]);
              };
              // The true answer's own pair ties its threshold exactly: the threshold is that pair's score by these
              // lanes' operations (score_ids above, which reads truth as a row of `entity`, whatever the slice's
              // entity_offset). Where it was scored so (no slice's true_scores), it is counted equal from row k's
              // undecided list (nu entries, each entity at most once) without rescoring; returns the entries left,
              // the true answer swapped out.
              const auto drop_truth = [&](size_t k, size_t nu) {
                if (qs.true_scores != nullptr) return nu;
                const int64_t truth = qs.truth[r0 + k];
                uint32_t* list = und.data() + k * cap;
                for (size_t u = 0; u < nu; ++u) {
                  if (static_cast<int64_t>(list[u]) == truth) {
                    list[u] = list[nu - 1];
                    local[nr + k] += 1;
                    return nu - 1;
                  }
                }
                return nu;
              };
              // Blocks of kScreenRowBlock rows: under Auto, a block whose rescoring cost more than the screen saved in
              // an earlier chunk has given up, and takes the float32 path (the same counts) for the rest of the call:
              // all such rows of the task in one chunk-kernel call (one packing of the chunk).
              // The flags read once: another task may set one meanwhile, and each block must take exactly one path.
              thread_local std::vector<uint8_t> skip;
              skip.assign((nr + kScreenRowBlock - 1) / kScreenRowBlock, 0);
              heavy.clear();
              for (size_t sb = 0; sb < nr; sb += kScreenRowBlock) {
                if (screen_gave_up[(r0 + sb) / kScreenRowBlock].load(std::memory_order_relaxed) == 0) continue;
                skip[sb / kScreenRowBlock] = 1;
                const size_t snr = nr - sb < kScreenRowBlock ? nr - sb : kScreenRowBlock;
                for (size_t k = sb; k < sb + snr; ++k) heavy.push_back(static_cast<uint32_t>(k));
              }
              const size_t gave_up_rows = heavy.size();
              if (gave_up_rows == nr) {
                kernel(part, begin, end, local.data(), local.data() + nr, local.data() + 2 * nr, pack.data());
              } else {
                for (size_t sb = 0; sb < nr; sb += kScreenRowBlock) {
                  if (skip[sb / kScreenRowBlock] != 0) continue;
                  std::atomic<uint8_t>& gave_up = screen_gave_up[(r0 + sb) / kScreenRowBlock];
                  const size_t snr = nr - sb < kScreenRowBlock ? nr - sb : kScreenRowBlock;
                  uint64_t refined = 0;  // this block's pairs the second level saw (Auto's estimate)
                  const ScreenTask st{screen_table,      &screen_queries,       r0 + sb,           snr, begin,   end,
                                      local.data() + sb, und.data() + sb * cap, und_n.data() + sb, cap, &refined};
                  screen_fn(st);
                  screened += static_cast<uint64_t>(snr) * n;
                  size_t crowded = 0, light = 0;
                  pair_rows.clear();
                  pair_ids.clear();
                  for (size_t k = sb; k < sb + snr; ++k) {
                    const size_t nu = und_n[k];
                    if (nu == 0) continue;
                    if (nu * 32 > n) {  // many undecided pairs: the whole row by the chunk kernel, below
                      heavy.push_back(static_cast<uint32_t>(k));
                      ++crowded;
                      continue;
                    }
                    const size_t left = drop_truth(k, nu);
                    if (left != 0 && pair_fn != nullptr) {
                      for (size_t u = 0; u < left; ++u) {
                        pair_rows.push_back(static_cast<uint32_t>(k));
                        pair_ids.push_back(und[k * cap + u]);
                      }
                    } else if (left != 0) {
                      pack_ids(und.data() + k * cap, left);
                      count_packed(k, left);
                    }
                    rescored += left;
                    light += left;
                  }
                  // The block's undecided pairs of every light row at once, lanes shared across rows.
                  if (!pair_rows.empty()) {
                    const size_t np = pair_rows.size();
                    if (scores.size() < np) scores.resize(np);
                    pair_fn(part.query, dim, entity, width, pair_rows.data(), pair_ids.data(), np, scores.data());
                    for (size_t j = 0; j < np; ++j) tally(pair_rows[j], scores[j]);
                  }
                  rescored += static_cast<uint64_t>(crowded) * n;
                  // Auto: the block's cost this chunk in units of one float32-path pair (the screen itself about
                  // 0.25 + 25 / d of one, measured at d = 100 and 500; a pair the second level saw about 2.5 times
                  // that, as it runs two dots for one (row, panel) at a time; a crowded row one more per pair; an
                  // undecided pair gathered, packed and scored alone about 100, as profiled on a trained FB15k-237
                  // DistMult; with pair_dots, pairs of many rows to a vector, about 10: two transposes per L elements
                  // of L pairs against one FMA per element of each) against the float32 path's snr x n: the block
                  // gives up when the screen did not save a tenth.
                  if (qs.screen == ScreenMode::Auto) {
                    const double light_cost = pair_fn != nullptr ? 10.0 : 100.0;
                    const double pairs = static_cast<double>(snr) * static_cast<double>(n);
                    const double unit = 0.25 + 25.0 / static_cast<double>(dim);
                    const double units = pairs * unit + 2.5 * unit * static_cast<double>(refined) +
                                         static_cast<double>(crowded) * static_cast<double>(n) +
                                         light_cost * static_cast<double>(light);
                    if (units > 0.9 * pairs) gave_up.store(1, std::memory_order_relaxed);
                  }
                }
                // The rows of blocks that gave up and the rows that crowded their threshold in this chunk: the chunk
                // kernel itself over the chunk, for those rows gathered contiguous (one packing of the chunk); their
                // screen counts, if any, are dropped.
                if (!heavy.empty()) {
                  const size_t h = heavy.size();
                  heavy_counts.assign(3 * h, 0);
                  const ChunkPlan hp = gather_rows(part, heavy, &heavy_query, &heavy_threshold);
                  kernel(hp, begin, end, heavy_counts.data(), heavy_counts.data() + h, heavy_counts.data() + 2 * h,
                         pack.data());
                  for (size_t i = 0; i < h; ++i) {
                    local[heavy[i]] = heavy_counts[i];
                    local[nr + heavy[i]] = heavy_counts[h + i];
                    local[2 * nr + heavy[i]] = heavy_counts[2 * h + i];
                  }
                }
              }
              screen_pairs.fetch_add(screened, std::memory_order_relaxed);
              screen_rescored.fetch_add(rescored, std::memory_order_relaxed);
            } else {
              kernel(part, begin, end, local.data(), local.data() + nr, local.data() + 2 * nr, pack.data());
            }
            for (size_t c = 0; c < 3; ++c) {
              for (size_t k = 0; k < nr; ++k) {
                if (local[c * nr + k] != 0) {
                  totals[c * rows + row_at(r0 + k)].fetch_add(local[c * nr + k], std::memory_order_relaxed);
                }
              }
            }
          }
          KGRANK_CATCH(...) { failed.store(true); }
          if (control != nullptr) control->advance(nr);
        },
        control);
    if (qs.screen_stats != nullptr) {
      qs.screen_stats->used = screen_fn != nullptr;
      qs.screen_stats->pairs = screen_pairs.load();
      qs.screen_stats->rescored = screen_rescored.load();
    }
  } else {  // wide: the scalar pair loop in double, the same chunks
    parallel_for(
        tasks, threads,
        [&](size_t t) {
          const Task& task = task_list[t];
          const Group& g = groups[task.group];
          const size_t begin = task.begin;
          const size_t end = begin + kChunk < g.n ? begin + kChunk : g.n;
          for (size_t pos = task.r0; pos < task.r0 + task.nr; ++pos) {
            const size_t i = row_at(pos);
            const T t = static_cast<T>(out.true_score[i]);
            uint64_t gt = 0, e = 0, n = 0;
            for (size_t j = begin; j < end; ++j) {
              const size_t ent = g.cand ? static_cast<size_t>(g.cand[j]) : j;
              const T s = score_of(i, ent);
              gt += s > t;
              e += s == t;
              n += s != s;
            }
            totals[i].fetch_add(gt, std::memory_order_relaxed);
            totals[rows + i].fetch_add(e, std::memory_order_relaxed);
            totals[2 * rows + i].fetch_add(n, std::memory_order_relaxed);
          }
          if (control != nullptr) control->advance(task.nr);
        },
        control);
  }
  if (failed.load()) return Status::invalid("out of memory for the scoring tiles: use fewer threads");
  for (size_t i = 0; i < rows; ++i) {
    out.greater[i] = static_cast<double>(totals[i].load());
    out.equal[i] = static_cast<double>(totals[rows + i].load());
    out.nan[i] = static_cast<double>(totals[2 * rows + i].load());
  }
  if (qs.exclude_offsets) {  // the filter: known answers scored by the same lanes (score_ids), taken out
    // Rows with the same anchor and relation have the same query vector bit for bit (form_queries is a function of
    // them and the call's side), and a pair's score does not depend on where it is packed: such a group scores the
    // distinct entities of its rows' lists once, and each row looks its own list's scores up and counts them against
    // its own threshold (FB15k-237's test rows list 9.7 M known answers, of 0.3 M distinct (query, answer) pairs:
    // (?, gender, male) repeats for every such test triple, each row leaving out its own true answer).
    std::vector<uint32_t> by_query, group_at, task_at;
    KGRANK_TRY {
      by_query.resize(rows);
      for (size_t i = 0; i < rows; ++i) by_query[i] = static_cast<uint32_t>(i);
      const auto key_less = [&](uint32_t x, uint32_t y) {
        return qs.anchor[x] != qs.anchor[y] ? qs.anchor[x] < qs.anchor[y] : qs.relation[x] < qs.relation[y];
      };
      std::stable_sort(by_query.begin(), by_query.end(), key_less);
      // Anchors given as rows (an entity shard's; queries.anchor is then not read by form_queries): a row joins
      // its group only with the same anchor vector and scale, bit for bit, as the group's first row.
      const auto same_anchor = [&](uint32_t x, uint32_t y) {
        if (m.anchor_rows == nullptr) return true;
        const size_t w = m.entity_width;
        if (m.anchor_scale != nullptr && std::memcmp(m.anchor_scale + x, m.anchor_scale + y, sizeof(T)) != 0) {
          return false;
        }
        return std::memcmp(m.anchor_rows + x * w, m.anchor_rows + y * w, w * sizeof(T)) == 0;
      };
      for (size_t k = 0; k < rows; ++k) {
        if (k == 0 || key_less(by_query[k - 1], by_query[k]) || !same_anchor(by_query[group_at.back()], by_query[k])) {
          group_at.push_back(static_cast<uint32_t>(k));
        }
      }
      group_at.push_back(static_cast<uint32_t>(rows));
      // Tasks of whole groups, about kRowsPerTask rows each.
      task_at.push_back(0);
      for (size_t gi = 0; gi + 1 < group_at.size(); ++gi) {
        if (group_at[gi + 1] - group_at[task_at.back()] >= kRowsPerTask)
          task_at.push_back(static_cast<uint32_t>(gi + 1));
      }
      if (task_at.back() != group_at.size() - 1) task_at.push_back(static_cast<uint32_t>(group_at.size() - 1));
    }
    KGRANK_CATCH(const std::bad_alloc&) {
      return Status::invalid("out of memory for the filter's row groups: pass fewer triples per call");
    }
    parallel_for(
        task_at.size() - 1, threads,
        [&](size_t task) {
          KGRANK_TRY {
            thread_local std::vector<uint32_t> ids;
            thread_local std::vector<T> scores;
            thread_local std::vector<uint32_t> slot;
            // Set while `slot` holds a group's entries: an exception between marking and the reset leaves it set,
            // and the next group on this thread then clears the whole map first.
            thread_local bool slot_dirty = false;
            // Known answer j (a global id, >= 0: checked by the caller) as a row of this slice, if the slice holds it.
            const auto slice_row = [&](uint32_t j, uint32_t* row) {
              const size_t id = static_cast<size_t>(qs.exclude_ids[j]);
              if (id < m.entity_offset || id - m.entity_offset >= m.num_entities) return false;
              *row = static_cast<uint32_t>(id - m.entity_offset);
              return true;
            };
            // Row i's known answers held by this slice, as slice rows.
            const auto list_of = [&](uint32_t i, std::vector<uint32_t>* to) {
              uint32_t e_row;
              for (uint32_t j = qs.exclude_offsets[i]; j < qs.exclude_offsets[i + 1]; ++j) {
                if (slice_row(j, &e_row)) to->push_back(e_row);
              }
            };
            const auto take = [&](uint32_t i, double g, double e, double kept) {
              out.greater[i] -= g;
              out.equal[i] -= e;
              if (out.removed) out.removed[i] = kept;
            };
            for (size_t gi = task_at[task]; gi < task_at[task + 1]; ++gi) {
              const size_t k0 = group_at[gi], k1 = group_at[gi + 1];
              ids.clear();
              if (k1 - k0 == 1) {  // a query of its own: its list scored in list order
                const uint32_t i = by_query[k0];
                list_of(i, &ids);
                const T t = static_cast<T>(out.true_score[i]);
                double g = 0, e = 0, kept = 0;
                score_ids(i, ids.data(), ids.size(), [&](T s) {
                  g += s > t;
                  e += s == t;
                  kept += s == s;
                });
                take(i, g, e, kept);
                continue;
              }
              // The group's distinct entities, numbered in first-seen order through `slot` (entity -> index + 1,
              // 0: not seen; a slice row each, reset after the group) where the slice is small enough for a dense
              // map and the lists long enough to pay for it, else sorted and looked up by binary search.
              size_t listed = 0;
              for (size_t k = k0; k < k1; ++k) {
                listed += qs.exclude_offsets[by_query[k] + 1] - qs.exclude_offsets[by_query[k]];
              }
              const bool dense = m.num_entities <= kDenseSlots && listed >= kDenseMinList;
              if (dense && slot.size() < m.num_entities) {
                slot.assign(m.num_entities, 0);
                slot_dirty = false;
              }
              if (dense && slot_dirty) std::fill(slot.begin(), slot.end(), 0u);
              slot_dirty = dense;
              for (size_t k = k0; k < k1; ++k) {
                const size_t before = ids.size();
                list_of(by_query[k], &ids);
                if (!dense) continue;
                size_t w = before;
                for (size_t r = before; r < ids.size(); ++r) {
                  if (slot[ids[r]] == 0) {
                    ids[w++] = ids[r];
                    slot[ids[r]] = static_cast<uint32_t>(w);
                  }
                }
                ids.resize(w);
              }
              if (!dense) {
                std::sort(ids.begin(), ids.end());
                ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
              }
              scores.clear();
              score_ids(by_query[k0], ids.data(), ids.size(), [&](T s) { scores.push_back(s); });
              for (size_t k = k0; k < k1; ++k) {
                const uint32_t i = by_query[k];
                const T t = static_cast<T>(out.true_score[i]);
                double g = 0, e = 0, kept = 0;
                uint32_t e_row;
                for (uint32_t j = qs.exclude_offsets[i]; j < qs.exclude_offsets[i + 1]; ++j) {
                  if (!slice_row(j, &e_row)) continue;
                  const size_t at =
                      dense ? slot[e_row] - 1
                            : static_cast<size_t>(std::lower_bound(ids.begin(), ids.end(), e_row) - ids.begin());
                  const T s = scores[at];
                  g += s > t;
                  e += s == t;
                  kept += s == s;
                }
                take(i, g, e, kept);
              }
              if (dense) {
                for (const uint32_t e_row : ids) slot[e_row] = 0;
                slot_dirty = false;
              }
            }
          }
          KGRANK_CATCH(...) { failed.store(true); }
          if (control != nullptr) control->advance(group_at[task_at[task + 1]] - group_at[task_at[task]]);
        },
        control);
    if (failed.load()) return Status::invalid("out of memory for the scoring buffers: use fewer threads");
  }
  return Status::success();
}

namespace {

// Candidate chunks per task of top_k_embeddings (a segment of the range): from kTopKMinSegment to kTopKMaxSegment,
// enough segments for a task per thread. Segments let a few queries against a big table give every thread
// work; their lists merge exactly (a top-k list is a set defined by its order), so the split never changes a result.
// A segment's list starts empty, and about k (1 + ln(chunks / k)) of its chunks change it, each costing a rescoring
// of that chunk for that row: long segments keep that small.
constexpr size_t kTopKMinSegment = 512;
constexpr size_t kTopKMaxSegment = 2048;
// Rows per task of top_k_embeddings: a multiple of the kernel's query block (64); a chunk is packed once per task,
// so more rows share its packing.
constexpr size_t kTopKRows = 1024;

// (s, e) comes before (s2, e2) in a top-k list: the higher score, then the smaller entity id.
template <class T>
inline bool ahead(T s, int32_t e, T s2, int32_t e2) {
  return s > s2 || (s == s2 && e < e2);
}

// Whether (s, e) enters a list of n <= k entries kept in list order: never NaN; into a full list only ahead of its
// last entry.
template <class T>
inline bool enters(const T* sc, const int32_t* id, size_t n, size_t k, T s, int32_t e) {
  return s == s && (n < k || ahead(s, e, sc[k - 1], id[k - 1]));
}

// Puts (s, e), which enters (above), in its place; returns the new length.
template <class T>
size_t insert_entry(T* sc, int32_t* id, size_t n, size_t k, T s, int32_t e) {
  size_t pos = n < k ? n : k - 1;
  while (pos > 0 && ahead(s, e, sc[pos - 1], id[pos - 1])) {
    sc[pos] = sc[pos - 1];
    id[pos] = id[pos - 1];
    --pos;
  }
  sc[pos] = s;
  id[pos] = e;
  return n < k ? n + 1 : n;
}

// score_one of entities e0 .. e0 + count - 1 into out: per entity exactly score_one's operations in its order (so
// the same values), eight entities' independent chains interleaved so that their latencies overlap.
template <class T>
void score_block(ScoreOp op, const T* q, const T* c, size_t dim, const T* entity, size_t width, const uint32_t* map,
                 const T* scale, size_t e0, size_t count, T* out) {
  constexpr size_t J = 8;
  size_t b = 0;
  for (; b + J <= count; b += J) {
    const T* row[J];
    T acc[J], s[J];
    for (size_t j = 0; j < J; ++j) {
      row[j] = entity + (e0 + b + j) * width;
      s[j] = scale ? scale[e0 + b + j] : T(1);
      acc[j] = 0;
    }
    switch (op) {
      case ScoreOp::Dot:
        for (size_t k = 0; k < dim; ++k) {
          for (size_t j = 0; j < J; ++j) acc[j] = madd(q[k], row[j][map[k]], acc[j]);
        }
        for (size_t j = 0; j < J; ++j) out[b + j] = acc[j];
        continue;
      case ScoreOp::L1:
        for (size_t k = 0; k < dim; ++k) {
          for (size_t j = 0; j < J; ++j) acc[j] = acc[j] + std::fabs(row[j][map[k]] - q[k]);
        }
        break;
      case ScoreOp::L2Squared:
        for (size_t k = 0; k < dim; ++k) {
          for (size_t j = 0; j < J; ++j) {
            const T x = row[j][map[k]] - q[k];
            acc[j] = madd(x, x, acc[j]);
          }
        }
        break;
      case ScoreOp::Modulus: {
        const size_t h = dim / 2;
        for (size_t k = 0; k < h; ++k) {
          for (size_t j = 0; j < J; ++j) {
            const T dr = row[j][map[k]] - q[k];
            const T di = row[j][map[k + h]] - q[k + h];
            const T di2 = di * di;
            acc[j] = acc[j] + std::sqrt(madd(dr, dr, di2));
          }
        }
        break;
      }
      case ScoreOp::PairL1:
        for (size_t k = 0; k < dim; ++k) {
          for (size_t j = 0; j < J; ++j) {
            const T x = scale ? static_cast<T>(row[j][map[k]] * s[j]) : row[j][map[k]];
            acc[j] = acc[j] + std::fabs(madd(-x, c[k], q[k]));
          }
        }
        break;
    }
    for (size_t j = 0; j < J; ++j) out[b + j] = -acc[j];
  }
  for (; b < count; ++b) out[b] = score_one<T>(op, q, c, dim, entity + (e0 + b) * width, map, scale, e0 + b);
}

}  // namespace

template <class T>
Status top_k_embeddings(const EmbeddingModel<T>& m, const EmbeddingQueries& qs, size_t k, size_t begin, size_t end,
                        int32_t* ids, double* scores, SimdLevel simd, unsigned threads) {
  const size_t rows = qs.rows;
  const size_t n = end > begin ? end - begin : 0;
  const size_t blocks = (rows + kTopKRows - 1) / kTopKRows;
  const size_t chunks = (n + kChunk - 1) / kChunk;
  const size_t want_tasks = static_cast<size_t>(threads == 0 ? hardware_threads() : threads);
  size_t per_segment = blocks >= want_tasks ? kTopKMaxSegment : (chunks * blocks + want_tasks - 1) / want_tasks;
  if (per_segment < kTopKMinSegment) per_segment = kTopKMinSegment;
  if (per_segment > kTopKMaxSegment) per_segment = kTopKMaxSegment;
  const size_t segment = per_segment * kChunk;  // entities
  const size_t segments = n == 0 ? 0 : (n + segment - 1) / segment;
  Queries<T> q;
  bool fits = form_queries(m, qs, &q);
  std::vector<T> seg_score;
  std::vector<int32_t> excl, seg_id;
  std::vector<uint32_t> seg_len;
  KGRANK_TRY {
    if (qs.exclude_offsets) {  // each row's excluded ids, sorted for a binary search
      excl.assign(qs.exclude_ids, qs.exclude_ids + qs.exclude_offsets[rows]);
      for (size_t i = 0; i < rows; ++i) {
        std::sort(excl.begin() + qs.exclude_offsets[i], excl.begin() + qs.exclude_offsets[i + 1]);
      }
    }
    seg_score.resize(segments * rows * k);
    seg_id.resize(segments * rows * k);
    seg_len.resize(segments * rows);
  }
  KGRANK_CATCH(const std::bad_alloc&) { fits = false; }
  if (!fits) {
    return Status::invalid(
        "out of memory for the top-k lists of this batch: pass fewer queries per call or a smaller k");
  }
  const T* entity = m.entity;
  const size_t width = m.entity_width;

  auto is_excluded = [&](size_t row, int32_t e) {
    return qs.exclude_offsets != nullptr &&
           std::binary_search(excl.begin() + qs.exclude_offsets[row], excl.begin() + qs.exclude_offsets[row + 1], e);
  };
  const size_t dim = q.dim;
  const ScoreOp op = q.op;
  const std::vector<uint32_t>& map = q.map;
  const std::vector<T>& query = q.query;
  const std::vector<T>& coeff = q.coeff;
  // The int8 screen (screen.h) in place of the counting kernel, where it applies as in rank_embeddings (float32 Dot
  // over plain rows): per chunk, each row's threshold is its list's entry to beat; the kernel lists every candidate
  // not certified below it (ScreenTask::list_above), those are scored exactly and offered, and a row with many listed
  // takes the float32 path's scoring of the whole chunk.
  ScreenTable own_table;
  const ScreenTable* screen_table = nullptr;
  size_t table_base = 0;  // the screen table's row 0 is entity row table_base (a multiple of 16)
  ScreenChunkFn screen_fn = nullptr;
  PairDotsFn pair_fn = nullptr;
  std::atomic<uint64_t> screen_pairs{0}, screen_rescored{0};
  if (qs.screen_stats != nullptr) *qs.screen_stats = ScreenStats{};
  if constexpr (std::is_same<T, float>::value) {
    if (qs.screen != ScreenMode::Off && screens(op) && m.entity_scale == nullptr && dim <= kScreenMaxDim && n > 0) {
      // A table quantised here covers the range alone, from a whole panel.
      screen_fn =
          screen_setup(qs, entity, m.num_entities, width, map.data(), dim, rows, begin / kScreenPanel * kScreenPanel,
                       end, simd, threads, op == ScoreOp::L2Squared, &own_table, &screen_table);
      if (screen_table == &own_table) table_base = begin / kScreenPanel * kScreenPanel;
      bool identity = true;
      for (size_t j = 0; j < map.size(); ++j) identity = identity && map[j] == j;
      if (identity && map.size() == dim) pair_fn = pair_dots_of(chunk_kernel(simd), dim, op);
    }
  }
  std::atomic<bool> failed{false};
  // Tasks: (segment, block of rows), each the segment's sub-chunks of kChunk in order. Float: the counting kernel
  // finds the rows with a candidate scoring above their list's last entry (or whose list is not full); only those
  // rows' scores of the sub-chunk are computed (from the panels the kernel just packed, by its lane operations: the
  // same values) and offered to their list. An equal score never enters a full list here, since candidates come in
  // ascending ids.
  parallel_for(segments * blocks, threads, [&](size_t t) {
    const size_t seg = t / blocks;
    const size_t r0 = (t % blocks) * kTopKRows;
    const size_t nr = r0 + kTopKRows < rows ? kTopKRows : rows - r0;
    const size_t s0 = begin + seg * segment;
    const size_t s1 = s0 + segment < end ? s0 + segment : end;
    T* sc = seg_score.data() + (seg * rows + r0) * k;
    int32_t* id = seg_id.data() + (seg * rows + r0) * k;
    uint32_t* len = seg_len.data() + seg * rows + r0;
    T block[kChunk];
    // Row i's floor (queries.floor; NaN: none) in T: a float score converted back exactly.
    auto floor_of = [&](size_t i) { return qs.floor != nullptr ? static_cast<T>(qs.floor[r0 + i]) : std::nan(""); };
    // Offers the candidates [c0, c1), scored into `block`, to row i's list (excluded ids and scores not above the
    // row's floor never enter).
    // Offers candidate e (a row of `entity`) scored s to row i's list, whose floor is f (NaN: none).
    auto offer_one = [&](size_t i, T s, size_t e, T f) {
      const int32_t ei = static_cast<int32_t>(e + m.entity_offset);
      if (enters(sc + i * k, id + i * k, len[i], k, s, ei) && (f != f || s > f) && !is_excluded(r0 + i, ei)) {
        len[i] = static_cast<uint32_t>(insert_entry(sc + i * k, id + i * k, len[i], k, s, ei));
      }
    };
    auto offer = [&](size_t i, size_t c0, size_t c1) {
      const T f = static_cast<T>(floor_of(i));
      for (size_t e = c0; e < c1; ++e) offer_one(i, block[e - c0], e, f);
    };
    KGRANK_TRY {
      for (size_t i = 0; i < nr; ++i) len[i] = 0;
      if constexpr (std::is_same<T, float>::value) {
        thread_local std::vector<float> pack;
        if (pack.size() < kChunk * dim) pack.assign(kChunk * dim, 0.0f);
        std::vector<float> threshold(nr);
        std::vector<uint32_t> local(3 * nr);
        const ChunkPlan part{op,
                             dim,
                             query.data() + r0 * dim,
                             coeff.empty() ? nullptr : coeff.data() + r0 * dim,
                             threshold.data(),
                             nr,
                             entity,
                             width,
                             map.data(),
                             m.entity_scale,
                             nullptr,
                             end};
        const ChunkFn kernel = chunk_kernel(simd);
        const PackedFn packed = packed_scores_of(kernel);
        std::vector<float> floor(nr);
        for (size_t i = 0; i < nr; ++i) floor[i] = static_cast<float>(floor_of(i));
        // The screen: this task's rows quantised once (thresholds set per chunk).
        ScreenQueries sq;
        const bool screened = screen_fn != nullptr && screen_quantise_queries(query.data() + r0 * dim, nr, dim,
                                                                              std::vector<float>(nr, 0.0f).data(), simd,
                                                                              &sq, op == ScoreOp::L2Squared);
        const std::vector<float> scale0 = screened ? sq.scale : std::vector<float>();
        constexpr size_t cap = kChunk + 2 * kScreenPanel;  // ScreenTask::cap for a chunk from a whole panel
        std::vector<uint32_t> und(screened ? kScreenRowBlock * cap : 0), und_n(kScreenRowBlock);
        std::vector<uint32_t> heavy, check, check_counts, chunk_ids, pair_rows, pair_ids;
        std::vector<float> pair_scores, check_query, check_threshold;
        const PackListFn pack_list_fn = pack_list_of(kernel);
        const size_t pw = panel_width_of(kernel);
        std::vector<uint8_t> wants(nr);
        uint64_t screened_pairs = 0, rescored = 0;
        for (size_t c0 = s0; screened && c0 < s1;) {
          // Chunks end on the table's whole panels (only a segment's first chunk starts inside one).
          const size_t next = table_base + ((c0 - table_base) / kChunk + 1) * kChunk;
          const size_t c1 = next < s1 ? next : s1;
          const size_t cn = c1 - c0;
          heavy.clear();
          check.clear();
          pair_rows.clear();
          pair_ids.clear();
          // Per row: screened (kScreened); every candidate scored (kAll: a list not full and no floor, as on the
          // float32 path, or a threshold of -inf); the float32 path's own check (kCheck: a query row the screen
          // cannot quantise); nothing (kNone: a threshold of +inf, which no candidate can pass).
          enum : uint8_t { kNone, kAll, kCheck, kScreened };
          for (size_t i = 0; i < nr; ++i) {
            const float full = len[i] == k ? sc[i * k + k - 1] : -std::numeric_limits<float>::infinity();
            threshold[i] =
                floor[i] == floor[i] && (len[i] < k || floor[i] > full) ? floor[i] : (len[i] == k ? full : 0.0f);
            const float th = threshold[i];
            wants[i] = !(len[i] == k || floor[i] == floor[i]) || th == -std::numeric_limits<float>::infinity() ? kAll
                       : th == std::numeric_limits<float>::infinity()                                          ? kNone
                       : scale0[i] != scale0[i]                                                                ? kCheck
                                                : kScreened;
            screen_set_threshold(&sq, i, wants[i] == kScreened ? th : 0.0f, scale0[i]);
          }
          // Rows of [b, e) that are not screened, into their lists.
          const auto sort_rows = [&](size_t b, size_t e) {
            for (size_t i = b; i < e; ++i) {
              if (wants[i] == kAll) heavy.push_back(static_cast<uint32_t>(i));
              if (wants[i] == kCheck) check.push_back(static_cast<uint32_t>(i));
            }
          };
          const size_t tb = (c0 - table_base) / kScreenPanel * kScreenPanel;
          for (size_t sb = 0; sb < nr; sb += kScreenRowBlock) {
            const size_t snr = nr - sb < kScreenRowBlock ? nr - sb : kScreenRowBlock;
            size_t want = 0;
            for (size_t i = sb; i < sb + snr; ++i) want += wants[i] == kScreened;
            sort_rows(sb, sb + snr);
            if (want == 0) continue;
            // Every pair not certified below the threshold is listed (list_above), in entity order.
            ScreenTask st{screen_table,      &sq,        sb,           snr, tb, c1 - table_base,
                          local.data() + sb, und.data(), und_n.data(), cap};
            st.list_above = true;
            screen_fn(st);
            screened_pairs += static_cast<uint64_t>(want) * cn;
            for (size_t i = sb; i < sb + snr; ++i) {
              const size_t nu = und_n[i - sb];
              if (wants[i] != kScreened) continue;
              // Many listed (scores crowding the threshold): the whole chunk, below.
              if (nu * 32 > cn) {
                heavy.push_back(static_cast<uint32_t>(i));
                rescored += cn;
                continue;
              }
              const uint32_t* list = und.data() + (i - sb) * cap;
              if (pair_fn != nullptr) {
                for (size_t u = 0; u < nu; ++u) {
                  const size_t e = list[u] + table_base;
                  if (e < c0) continue;  // in the chunk's first panel, before the chunk
                  pair_rows.push_back(static_cast<uint32_t>(i));
                  pair_ids.push_back(static_cast<uint32_t>(e));
                }
                continue;
              }
              // No pair scorer at this level (or a reordered row): the row's listed entities packed as the chunk
              // kernel packs a chunk, scored by its packed_scores.
              chunk_ids.clear();
              for (size_t u = 0; u < nu; ++u) {
                if (list[u] + table_base >= c0) chunk_ids.push_back(static_cast<uint32_t>(list[u] + table_base));
              }
              if (chunk_ids.empty()) continue;
              pack_listed(part, pack_list_fn, pw, chunk_ids.data(), chunk_ids.size(), pack.data());
              packed(part, i, pack.data(), chunk_ids.size(), block);
              for (size_t u = 0; u < chunk_ids.size(); ++u) offer_one(i, block[u], chunk_ids[u], floor[i]);
              rescored += chunk_ids.size();
            }
          }
          // The undecided pairs, many rows' to a vector (each lane its pair's own chain: the chunk kernel's value).
          if (!pair_rows.empty()) {
            const size_t np = pair_rows.size();
            pair_scores.resize(np);
            pair_fn(part.query, dim, entity, width, pair_rows.data(), pair_ids.data(), np, pair_scores.data());
            for (size_t j = 0; j < np; ++j) offer_one(pair_rows[j], pair_scores[j], pair_ids[j], floor[pair_rows[j]]);
            rescored += np;
          }
          // The rows the screen could not quantise, gathered: the float32 path's counting kernel (which packs the
          // chunk) says which have a candidate above their threshold; those rows' scores of the chunk are offered.
          if (!check.empty()) {
            const size_t h = check.size();
            check_counts.assign(3 * h, 0);
            const ChunkPlan hp = gather_rows(part, check, &check_query, &check_threshold);
            kernel(hp, c0, c1, check_counts.data(), check_counts.data() + h, check_counts.data() + 2 * h, pack.data());
            for (size_t j = 0; j < h; ++j) {
              if (check_counts[j] == 0) continue;
              packed(hp, j, pack.data(), cn, block);
              offer(check[j], c0, c1);
            }
          }
          // The heavy rows: the chunk packed as the chunk kernel packs it (by the kernel above, else the level's
          // pack_list or pack_entities), each row's scores of it by the level's packed_scores (the kernel's values).
          if (!heavy.empty()) {
            if (check.empty()) {
              chunk_ids.resize(cn);
              for (size_t j = 0; j < cn; ++j) chunk_ids[j] = static_cast<uint32_t>(c0 + j);
              pack_listed(part, pack_list_fn, pw, chunk_ids.data(), cn, pack.data());
            }
            for (const uint32_t i : heavy) {
              packed(part, i, pack.data(), cn, block);
              offer(i, c0, c1);
            }
          }
          c0 = c1;
        }
        if (screened) {
          screen_pairs.fetch_add(screened_pairs, std::memory_order_relaxed);
          screen_rescored.fetch_add(rescored, std::memory_order_relaxed);
        }
        for (size_t c0 = s0; !screened && c0 < s1; c0 += kChunk) {
          const size_t c1 = c0 + kChunk < s1 ? c0 + kChunk : s1;
          // A row whose list is full, or that has a floor, is rescored only when a candidate scores above the
          // higher of the two.
          for (size_t i = 0; i < nr; ++i) {
            const float full = len[i] == k ? sc[i * k + k - 1] : -std::numeric_limits<float>::infinity();
            threshold[i] =
                floor[i] == floor[i] && (len[i] < k || floor[i] > full) ? floor[i] : (len[i] == k ? full : 0.0f);
          }
          std::fill(local.begin(), local.end(), 0u);
          kernel(part, c0, c1, local.data(), local.data() + nr, local.data() + 2 * nr, pack.data());
          for (size_t i = 0; i < nr; ++i) {
            if ((len[i] == k || floor[i] == floor[i]) && local[i] == 0) continue;
            packed(part, i, pack.data(), c1 - c0, block);  // the chunk the kernel just packed, this row's scores
            offer(i, c0, c1);
          }
        }
      } else {  // wide: every pair scored by score_one's operations, the same chunks
        (void)simd;
        for (size_t i = 0; i < nr; ++i) {
          const size_t row = r0 + i;
          for (size_t c0 = s0; c0 < s1; c0 += kChunk) {
            const size_t c1 = c0 + kChunk < s1 ? c0 + kChunk : s1;
            score_block<T>(op, query.data() + row * dim, coeff.empty() ? nullptr : coeff.data() + row * dim, dim,
                           entity, width, map.data(), m.entity_scale, c0, c1 - c0, block);
            offer(i, c0, c1);
          }
        }
      }
    }
    KGRANK_CATCH(...) { failed.store(true); }
  });
  if (failed.load()) return Status::invalid("out of memory for the scoring tiles: use fewer threads");
  if (qs.screen_stats != nullptr) {
    qs.screen_stats->used = screen_fn != nullptr;
    qs.screen_stats->pairs = screen_pairs.load();
    qs.screen_stats->rescored = screen_rescored.load();
  }
  // Each row's segment lists merged in segment order (any order gives the same list), then padded.
  const size_t row_tasks = (rows + kRowsPerTask - 1) / kRowsPerTask;
  parallel_for(row_tasks, threads, [&](size_t task) {
    const size_t stop = (task + 1) * kRowsPerTask < rows ? (task + 1) * kRowsPerTask : rows;
    std::vector<T> sc(k);
    std::vector<int32_t> id(k);
    for (size_t i = task * kRowsPerTask; i < stop; ++i) {
      size_t l = 0;
      for (size_t seg = 0; seg < segments; ++seg) {
        const T* ss = seg_score.data() + (seg * rows + i) * k;
        const int32_t* si = seg_id.data() + (seg * rows + i) * k;
        for (size_t j = 0; j < seg_len[seg * rows + i]; ++j) {
          if (!enters(sc.data(), id.data(), l, k, ss[j], si[j])) break;  // the rest of a sorted list enters neither
          l = insert_entry(sc.data(), id.data(), l, k, ss[j], si[j]);
        }
      }
      for (size_t j = 0; j < k; ++j) {
        ids[i * k + j] = j < l ? id[j] : -1;
        scores[i * k + j] = j < l ? static_cast<double>(sc[j]) : std::nan("");
      }
    }
  });
  return Status::success();
}

namespace {

using ColumnsFn = void (*)(ScoreOp, const float*, const float*, size_t, const float*, size_t, size_t, float*);

// The relation-scoring kernel of a level (interaction_kernel.h Micro::columns).
ColumnsFn columns_kernel(SimdLevel level) {
#ifdef KGRANK_HAVE_NEON
  if (level == SimdLevel::NEON && simd_supported(level)) return isa::relation_columns_neon;
#endif
#ifdef KGRANK_HAVE_AVX512
  if (level == SimdLevel::AVX512 && simd_supported(level)) return isa::relation_columns_avx512;
#endif
#ifdef KGRANK_HAVE_AVX2
  if ((level == SimdLevel::AVX2 || level == SimdLevel::AVX512) && simd_supported(SimdLevel::AVX2)) {
    return isa::relation_columns_avx2;
  }
#endif
  (void)level;
#ifdef KGRANK_HAVE_WASM_SIMD128
  return isa::relation_columns_wasm;
#else
  return isa::relation_columns_scalar;
#endif
}

// Micro::columns for the wide type: score_one's operations (plain multiply, then add), relations in the inner loop.
void columns_wide(ScoreOp op, const double* qt, const double* ct, size_t stride, const double* x, size_t dim, size_t n,
                  double* acc, double* out) {
  std::fill(acc, acc + n, 0.0);
  if (op == ScoreOp::Modulus) {
    const size_t h = dim / 2;
    for (size_t k = 0; k < h; ++k) {
      const double* qr = qt + k * stride;
      const double* qi = qt + (k + h) * stride;
      for (size_t j = 0; j < n; ++j) {
        const double dr = x[k] - qr[j];
        const double di = x[k + h] - qi[j];
        const double di2 = di * di;
        acc[j] = acc[j] + std::sqrt(madd(dr, dr, di2));
      }
    }
  } else {
    for (size_t k = 0; k < dim; ++k) {
      const double xv = x[k];
      const double* q = qt + k * stride;
      switch (op) {
        case ScoreOp::Dot:
          for (size_t j = 0; j < n; ++j) acc[j] = madd(q[j], xv, acc[j]);
          break;
        case ScoreOp::L1:
          for (size_t j = 0; j < n; ++j) acc[j] = acc[j] + std::fabs(xv - q[j]);
          break;
        case ScoreOp::L2Squared:
          for (size_t j = 0; j < n; ++j) {
            const double d = xv - q[j];
            acc[j] = madd(d, d, acc[j]);
          }
          break;
        default: {  // PairL1
          const double* c = ct + k * stride;
          for (size_t j = 0; j < n; ++j) acc[j] = acc[j] + std::fabs(madd(-xv, c[j], q[j]));
          break;
        }
      }
    }
  }
  for (size_t j = 0; j < n; ++j) out[j] = op == ScoreOp::Dot ? acc[j] : -acc[j];
}

}  // namespace

template <class T>
Status score_relations(const EmbeddingModel<T>& m, size_t rows, const int32_t* heads, const int32_t* tails, T* out,
                       SimdLevel simd, unsigned threads) {
  const size_t dim = m.entity_width;
  const size_t nr = m.num_relations;
  const size_t stride = (nr + 15) / 16 * 16;  // relations per element row, a multiple of every lane count
  const ScoreOp op = op_of(m.interaction);
  const Interaction in = m.interaction;
  const bool complex = is_complex(in);
  const size_t h = dim / 2;
  // What form_query reads of relation r for element k, as the doubles it computes with, element-major
  // (k * stride + r; the padding relations 0): TransE, DistMult: r_k; ComplEx, RotatE: (rr, ri) of complex element
  // k (phases through cos_sin, complex rotations normalised), as form_query resolves them; PairRE: rh_k, and the
  // coefficient rt_k in T. These depend on no pair, so they are resolved once per call.
  std::vector<uint32_t> map;
  std::vector<double> rel, rel_im;
  std::vector<T> coeff;
  KGRANK_TRY {
    map.resize(dim);
    rel.assign((complex ? h : dim) * stride, 0.0);
    if (complex) rel_im.assign(h * stride, 0.0);
    if (op == ScoreOp::PairL1) coeff.assign(dim * stride, T(0));
  }
  KGRANK_CATCH(const std::bad_alloc&) {
    return Status::invalid("out of memory for relation scoring: pass fewer relations or a narrower model");
  }
  for (size_t k = 0; k < dim; ++k) map[k] = static_cast<uint32_t>(canonical(k, dim, complex, m.layout));
  const bool phases = is_rotate(in) && m.relation_width == h;
  for (size_t r = 0; r < nr; ++r) {
    const T* row = m.relation + r * m.relation_width;
    if (complex) {
      for (size_t k = 0; k < h; ++k) {
        double rr, ri;
        if (phases) {
          cos_sin(static_cast<double>(row[k]) * m.phase_scale, &rr, &ri);
        } else {
          rr = row[canonical(k, dim, true, m.layout)];
          ri = row[canonical(k + h, dim, true, m.layout)];
          if (is_rotate(in)) {
            const double mod = std::sqrt(rr * rr + ri * ri);
            rr /= mod;
            ri /= mod;
          }
        }
        rel[k * stride + r] = rr;
        rel_im[k * stride + r] = ri;
      }
    } else {
      for (size_t k = 0; k < dim; ++k) rel[k * stride + r] = row[k];
      if (op == ScoreOp::PairL1) {
        for (size_t k = 0; k < dim; ++k) coeff[k * stride + r] = static_cast<T>(static_cast<double>(row[dim + k]));
      }
    }
  }
  std::atomic<bool> failed{false};
  const size_t tasks = (rows + kRowsPerTask - 1) / kRowsPerTask;
  parallel_for(tasks, threads, [&](size_t task) {
    KGRANK_TRY {
      std::vector<T> q(dim * stride), x(dim), acc(stride);
      std::vector<double> a(dim);
      const size_t end = (task + 1) * kRowsPerTask < rows ? (task + 1) * kRowsPerTask : rows;
      for (size_t i = task * kRowsPerTask; i < end; ++i) {
        const size_t hd = static_cast<size_t>(heads[i]);
        const size_t tl = static_cast<size_t>(tails[i]);
        const T* hrow = m.entity + hd * dim;
        const T* trow = m.entity + tl * dim;
        // The anchor's values as form_query reads them (PairRE: a_k s rounded to T first), and the tail's row as
        // score_one reads it (canonical order; PairRE's factor applied).
        if (op == ScoreOp::PairL1) {
          const T hs = m.entity_scale ? m.entity_scale[hd] : T(1);
          for (size_t k = 0; k < dim; ++k) a[k] = static_cast<double>(static_cast<T>(hrow[k] * hs));
        } else {
          for (size_t k = 0; k < dim; ++k) a[k] = static_cast<double>(hrow[map[k]]);
        }
        if (m.entity_scale && op == ScoreOp::PairL1) {
          const T ts = m.entity_scale[tl];
          for (size_t k = 0; k < dim; ++k) x[k] = static_cast<T>(trow[map[k]] * ts);
        } else {
          for (size_t k = 0; k < dim; ++k) x[k] = trow[map[k]];
        }
        // Every relation's tail-side query, element-major: form_query's expressions, relations in the inner loop.
        switch (in) {
          case Interaction::TransEL1:
          case Interaction::TransEL2:
            for (size_t k = 0; k < dim; ++k) {
              const double ak = a[k];
              const double* rk = rel.data() + k * stride;
              T* qk = q.data() + k * stride;
              for (size_t r = 0; r < stride; ++r) qk[r] = static_cast<T>(ak + rk[r]);
            }
            break;
          case Interaction::DistMult:
          case Interaction::PairRE:
            for (size_t k = 0; k < dim; ++k) {
              const double ak = a[k];
              const double* rk = rel.data() + k * stride;
              T* qk = q.data() + k * stride;
              for (size_t r = 0; r < stride; ++r) qk[r] = static_cast<T>(ak * rk[r]);
            }
            break;
          default:  // ComplEx, RotatE, RotatE-L2: h * r
            for (size_t k = 0; k < h; ++k) {
              const double ar = a[k], ai = a[k + h];
              const double* rr = rel.data() + k * stride;
              const double* ri = rel_im.data() + k * stride;
              T* qr = q.data() + k * stride;
              T* qi = q.data() + (k + h) * stride;
              for (size_t r = 0; r < stride; ++r) {
                qr[r] = static_cast<T>(ar * rr[r] - ai * ri[r]);
                qi[r] = static_cast<T>(ar * ri[r] + ai * rr[r]);
              }
            }
            break;
        }
        const T* c = coeff.empty() ? nullptr : coeff.data();
        if constexpr (std::is_same<T, float>::value) {
          columns_kernel(simd)(op, q.data(), c, stride, x.data(), dim, nr, out + i * nr);
        } else {
          columns_wide(op, q.data(), c, stride, x.data(), dim, nr, acc.data(), out + i * nr);
        }
      }
    }
    KGRANK_CATCH(...) { failed.store(true); }
  });
  if (failed.load()) return Status::invalid("out of memory for relation scoring: use fewer threads");
  return Status::success();
}

template <class T>
double score_triple(const EmbeddingModel<T>& m, int32_t head, int32_t relation, int32_t tail, bool head_side) {
  const size_t dim = m.entity_width;
  const bool complex = is_complex(m.interaction);
  std::vector<uint32_t> map(dim);
  for (size_t k = 0; k < dim; ++k) map[k] = static_cast<uint32_t>(canonical(k, dim, complex, m.layout));
  std::vector<T> q(dim), c(dim);
  const auto a = anchor_of(m, 0, head_side ? tail : head);
  form_query<T>(m, map, a.first, a.second, relation, head_side, q.data(), c.data());
  const size_t e = static_cast<size_t>(head_side ? head : tail);
  return static_cast<double>(
      score_one<T>(op_of(m.interaction), q.data(), c.data(), dim, m.entity + e * dim, map.data(), m.entity_scale, e));
}

namespace {
template <class U>
size_t first_non_finite_bits(const U* bits, size_t n, U exponent) {
  constexpr size_t kBlock = 4096;
  for (size_t b = 0; b < n; b += kBlock) {
    const size_t e = b + kBlock < n ? b + kBlock : n;
    U any = 0;
    for (size_t i = b; i < e; ++i) any |= static_cast<U>((bits[i] & exponent) == exponent);
    if (any != 0) {
      for (size_t i = b; i < e; ++i) {
        if ((bits[i] & exponent) == exponent) return i;
      }
    }
  }
  return n;
}
}  // namespace

size_t first_non_finite(const float* values, size_t n) {
  static_assert(sizeof(float) == sizeof(uint32_t), "float is 32 bits");
  return first_non_finite_bits(reinterpret_cast<const uint32_t*>(values), n, uint32_t{0x7f800000});
}

size_t first_non_finite(const double* values, size_t n) {
  static_assert(sizeof(double) == sizeof(uint64_t), "double is 64 bits");
  return first_non_finite_bits(reinterpret_cast<const uint64_t*>(values), n, uint64_t{0x7ff0000000000000});
}

void cos_sin(double x, double* c, double* s) {
  // x = n pi/2 + r, |r| <= pi/4: Cody-Waite reduction with pi/2 split in three 33-bit parts (n p_i is exact for
  // |n| < 2^20), then the Taylor series of sin and cos to r^17 / r^18 (truncation below 1e-19 on |r| <= pi/4),
  // in Horner form. Every step is a double +, -, * or floor, which JavaScript rounds identically (no contraction:
  // the core is built with -ffp-contract=off).
  const double p1 = 1.57079632673412561417e+00;                   // pi/2 to 33 bits
  const double p2 = 6.07710050630396597660e-11;                   // the next 33 bits
  const double p3 = 2.02226624871116645580e-21;                   // and the next
  const double n = std::floor(x * 0.63661977236758134308 + 0.5);  // 2 / pi
  const double r = ((x - n * p1) - n * p2) - n * p3;
  const double z = r * r;
  const double sr =
      r + r * z *
              (-1.0 / 6 +
               z * (1.0 / 120 +
                    z * (-1.0 / 5040 +
                         z * (1.0 / 362880 +
                              z * (-1.0 / 39916800 + z * (1.0 / 6227020800 + z * (-1.0 / 1307674368000 +
                                                                                  z * (1.0 / 355687428096000))))))));
  const double cr =
      1.0 +
      z * (-1.0 / 2 +
           z * (1.0 / 24 +
                z * (-1.0 / 720 +
                     z * (1.0 / 40320 +
                          z * (-1.0 / 3628800 + z * (1.0 / 479001600 + z * (-1.0 / 87178291200 +
                                                                            z * (1.0 / 20922789888000 +
                                                                                 z * (-1.0 / 6402373705728000)))))))));
  const double q = n - 4.0 * std::floor(n * 0.25);  // n mod 4, exact
  if (q == 0) {
    *c = cr;
    *s = sr;
  } else if (q == 1) {
    *c = -sr;
    *s = cr;
  } else if (q == 2) {
    *c = -cr;
    *s = -sr;
  } else {
    *c = sr;
    *s = -cr;
  }  // q == 3, or NaN (x not finite: both NaN)
  if (q != q) *c = *s = q;
}

double fma_probe(SimdLevel simd, unsigned threads, size_t iterations, double* sink) {
  const unsigned n = threads == 0 ? hardware_threads() : threads;
  std::vector<double> sums(n, 0.0);
  size_t lanes = 1;
  double (*fn)(size_t) = [](size_t it) { return interaction_detail::Micro<Scalar>::probe(it); };
#ifdef KGRANK_HAVE_AVX2
  if (simd == SimdLevel::AVX2 && simd_supported(simd)) {
    fn = isa::fma_probe_avx2;
    lanes = 8;
  }
#endif
#ifdef KGRANK_HAVE_AVX512
  if (simd == SimdLevel::AVX512 && simd_supported(simd)) {
    fn = isa::fma_probe_avx512;
    lanes = 16;
  }
#endif
#ifdef KGRANK_HAVE_NEON
  if (simd == SimdLevel::NEON && simd_supported(simd)) {
    fn = isa::fma_probe_neon;
    lanes = 4;
  }
#endif
  parallel_for(n, n, [&](size_t i) { sums[i] = fn(iterations); });
  double s = 0;
  for (double v : sums) s += v;
  *sink = s;
  return static_cast<double>(n) * static_cast<double>(iterations) * 12.0 * static_cast<double>(lanes);
}

bool screen_applies(Interaction i) { return screens(op_of(i)); }

namespace {
constexpr const char* kScreenOnly = "the int8 screen applies to DistMult, ComplEx, TransE-L2 and RotatE-L2 only";
}  // namespace

Status screen_prepare(const EmbeddingModel<float>& m, SimdLevel simd, unsigned threads, ScreenTable* out) {
  if (!screens(op_of(m.interaction)) || m.entity_scale != nullptr) return Status::invalid(kScreenOnly);
  const size_t dim = m.entity_width;
  // Never ranked through the screen (every call checks the width), and its int32 sums of c^2 could overflow.
  if (dim > kScreenMaxDim) return Status::invalid("the int8 screen applies to rows of at most 65000 elements");
  std::vector<uint32_t> map;
  KGRANK_TRY { map.resize(dim); }
  KGRANK_CATCH(const std::bad_alloc&) { return Status::invalid("out of memory for the screen's table"); }
  const bool complex = is_complex(m.interaction);
  for (size_t k = 0; k < dim; ++k) map[k] = static_cast<uint32_t>(canonical(k, dim, complex, m.layout));
  if (!screen_quantise_table(m.entity, m.num_entities, m.entity_width, map.data(), dim, simd, threads, out,
                             op_of(m.interaction) == ScoreOp::L2Squared)) {
    return Status::invalid("out of memory for the screen's table (half the float32 table plus 32 bytes a row)");
  }
  return Status{};
}

namespace {
// The key of m's entity table (screen.h ScreenFileKey): what a quantised table on disk must have been made from.
ScreenFileKey file_key(const EmbeddingModel<float>& m) {
  ScreenFileKey k;
  k.n = m.num_entities;
  k.dim = m.entity_width;
  k.width = m.entity_width;
  k.interaction = static_cast<uint64_t>(m.interaction);
  k.layout = static_cast<uint64_t>(m.layout);
  k.float_digest = screen_digest(m.entity, m.num_entities * m.entity_width * sizeof(float));
  return k;
}
}  // namespace

Status screen_save(const EmbeddingModel<float>& m, const ScreenTable& t, const char* path) {
  if (!screens(op_of(m.interaction)) || m.entity_scale != nullptr) return Status::invalid(kScreenOnly);
  return screen_table_write(t, file_key(m), path);
}

Status screen_load(const EmbeddingModel<float>& m, const char* path, ScreenTable* out) {
  if (!screens(op_of(m.interaction)) || m.entity_scale != nullptr) return Status::invalid(kScreenOnly);
  ScreenFileKey got;
  Status s = screen_table_read(path, &got, out);
  if (!s.ok()) return s;
  const ScreenFileKey want = file_key(m);
  const std::string file(path);
  if (got.n != want.n || got.width != want.width) {
    return Status::invalid(file + " was made from a table of " + std::to_string(got.n) + " rows of " +
                           std::to_string(got.width) + " floats, and this model's has " + std::to_string(want.n) +
                           " rows of " + std::to_string(want.width) + ": quantise this model's table");
  }
  if (got.interaction != want.interaction || got.layout != want.layout) {
    return Status::invalid(file +
                           " was made for another interaction or ComplEx layout than this model's: quantise "
                           "this model's table");
  }
  std::vector<uint32_t> map(m.entity_width);
  const bool complex = is_complex(m.interaction);
  for (size_t k = 0; k < map.size(); ++k) map[k] = static_cast<uint32_t>(canonical(k, map.size(), complex, m.layout));
  if (got.dim != want.dim ||
      !out->made_for(m.num_entities, m.entity_width, map.data(), op_of(m.interaction) == ScoreOp::L2Squared)) {
    return Status::invalid(file +
                           " orders the elements of a row otherwise than this model: quantise this model's table");
  }
  if (got.float_digest != want.float_digest) {
    return Status::invalid(file +
                           " was made from other values than this model's entity table (same shape): "
                           "quantise this model's table again");
  }
  return Status::success();
}

template Status rank_embeddings<float>(const EmbeddingModel<float>&, const EmbeddingQueries&, const EmbeddingCounts&,
                                       SimdLevel, unsigned, JobControl*);
template Status rank_embeddings<double>(const EmbeddingModel<double>&, const EmbeddingQueries&, const EmbeddingCounts&,
                                        SimdLevel, unsigned, JobControl*);
template Status score_relations<float>(const EmbeddingModel<float>&, size_t, const int32_t*, const int32_t*, float*,
                                       SimdLevel, unsigned);
template Status score_relations<double>(const EmbeddingModel<double>&, size_t, const int32_t*, const int32_t*, double*,
                                        SimdLevel, unsigned);
template double score_triple<float>(const EmbeddingModel<float>&, int32_t, int32_t, int32_t, bool);
template double score_triple<double>(const EmbeddingModel<double>&, int32_t, int32_t, int32_t, bool);
template Status top_k_embeddings<float>(const EmbeddingModel<float>&, const EmbeddingQueries&, size_t, size_t, size_t,
                                        int32_t*, double*, SimdLevel, unsigned);
template Status top_k_embeddings<double>(const EmbeddingModel<double>&, const EmbeddingQueries&, size_t, size_t, size_t,
                                         int32_t*, double*, SimdLevel, unsigned);

}  // namespace kgrank
