// A certified int8 screen for ranking from embeddings (dot-product interactions: DistMult, ComplEx), float32 path.
// Each (query, candidate) pair gets a cheap integer score with a proven bound on its distance from the float32 score
// the exact path computes (interaction_kernel.h, score_one); the pair is counted from the cheap score only when the
// bound puts the float32 score strictly above or strictly below the true answer's float32 score, and is otherwise
// scored exactly by the float32 path's own lane operations. Counts are therefore those of the float32 path bit for
// bit (exact ties are always rescored, but for the true answer's own pair, which is its threshold's score by the same
// lanes: rank_embeddings counts it equal, drop_truth). The derivation of the bound is in docs/screen.md and, in short,
// in screen.cpp beside the code that computes it.
//
// Layout (one per call of rank_embeddings): every entity row quantised per vector, b_i = round(t_i / s_t) in
// [-127, 127] with s_t = max|t| / 127 (a float), stored in panels of 16 entities, element groups of 4 bytes:
// byte (p * dpad / 4 + g) * 64 + lane * 4 + r is element 4 g + r of entity 16 p + lane (dpad: the width rounded up
// to 4, padding 0). A second level, the residual c_i = round(256 (t_i / s_t - b_i)), in the same layout, refines the
// pairs the first level leaves undecided (t ~ s_t (b + c / 256), a bound about 150 times tighter). Memory: 2 dpad
// bytes + 32 per entity (half the float32 table plus 32 bytes a row).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "simd.h"
#include "status.h"

namespace kgrank {

// EmbeddingQueries::screen. Off: the float32 path for every pair. Int8: the screen wherever it applies (float32
// accumulation, DistMult or ComplEx, no entity_scale, every entity a candidate: no candidate list, typed sets or
// negatives), at any SIMD level (the scalar one too). Auto (the library's default): as Int8 where the level has a
// screen kernel that pays (screen_auto_kernel: AMX, AVX-512 VNNI, AVX-VNNI, NEON with sdot) and either the table was
// quantised ahead (screen_prepare, a file) or the call has rows x dim >= kScreenAutoWork, so that quantising the table
// itself pays.
enum class ScreenMode : int { Off = 0, Auto = 1, Int8 = 2 };

constexpr size_t kScreenPanel = 16;      // entities per panel
constexpr size_t kScreenMaxDim = 65000;  // wider rows keep the float32 path: |I|, |K| <= 32258 d must fit int32
// Auto: a call that would quantise its table itself screens only with rows x dim >= this. Quantising a row costs
// about what the screen saves on 1,400 query rows at d = 64, 740 at d = 100 and 200 at d = 500 (AMX, 2.5 M rows on
// huge pages; docs/screen.md), about 90,000 / d; this asks for about 1.5 times that.
constexpr size_t kScreenAutoWork = size_t{1} << 17;
constexpr size_t kScreenTileSlack = 1024;  // bytes after the last panel of each level (the AMX kernel's over-read)

// What the screen did in one call (EmbeddingQueries::screen_stats, optional).
struct ScreenStats {
  bool used = false;      // the screen ran (else every pair took the float32 path)
  uint64_t pairs = 0;     // (row, candidate) pairs it saw
  uint64_t rescored = 0;  // of those, pairs whose interval held the threshold: scored by the float32 path
};

// Bytes on a 64-byte boundary (std::bad_alloc when out of memory); from 8 MiB on, on a 2 MiB boundary with Linux's
// transparent huge pages asked for (madvise), since the first touch of fresh 4 KiB pages costs more than quantising
// into them on the VMs measured (docs/screen.md). screen_free takes the size given.
void* screen_alloc(size_t bytes);
void screen_free(void* p, size_t bytes);

// Storage on 64-byte boundaries: the AMX kernel loads 64-byte tile rows, which cost about 2.5 times as much when each
// straddles two cache lines (measured on Sapphire Rapids), and the vector kernels' loads line up too.
template <class T>
struct Aligned64 {
  using value_type = T;
  Aligned64() = default;
  template <class U>
  Aligned64(const Aligned64<U>&) {}  // NOLINT(google-explicit-constructor): the allocator requirements
  T* allocate(size_t n) { return static_cast<T*>(screen_alloc(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { screen_free(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const Aligned64<U>&) const {
    return true;
  }
  template <class U>
  bool operator!=(const Aligned64<U>&) const {
    return false;
  }
};
template <class T>
using AlignedVector = std::vector<T, Aligned64<T>>;
// The same, with resize(n) leaving new elements uninitialised (default-initialised): the quantiser writes every byte
// of a table's panels from its threads, so their pages are first touched in parallel, not zeroed by one thread first.
template <class T>
struct Aligned64NoInit : Aligned64<T> {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = Aligned64NoInit<U>;
  };
  Aligned64NoInit() = default;
  template <class U>
  Aligned64NoInit(const Aligned64NoInit<U>&) {}  // NOLINT(google-explicit-constructor): the allocator requirements
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};

// The quantised table's panels: bytes on 64-byte boundaries, either owned (quantised here) or a read-only view of a
// file's pages (screen_table_read maps the file: no copy, and no fresh pages to fault in), kept alive by `keep`.
class ScreenBytes {
 public:
  ScreenBytes() = default;
  ScreenBytes(const ScreenBytes&) = default;
  ScreenBytes& operator=(const ScreenBytes&) = default;
  ScreenBytes(ScreenBytes&& o) noexcept { *this = std::move(o); }
  ScreenBytes& operator=(ScreenBytes&& o) noexcept {  // the source is left empty
    own_ = std::move(o.own_);
    view_ = o.view_;
    size_ = o.size_;
    keep_ = std::move(o.keep_);
    o.own_.clear();
    o.view_ = nullptr;
    o.size_ = 0;
    return *this;
  }
  void assign(size_t n, int8_t v) {
    own_.assign(n, v);
    view_ = nullptr;
    keep_.reset();
    size_ = n;
  }
  // n owned bytes left uninitialised, for a writer that sets every one of them (screen_quantise_table).
  void allocate(size_t n) {
    own_.clear();
    own_.resize(n);
    view_ = nullptr;
    keep_.reset();
    size_ = n;
  }
  void view(const int8_t* p, size_t n, std::shared_ptr<const void> keep) {
    own_.clear();
    own_.shrink_to_fit();
    view_ = p;
    size_ = n;
    keep_ = std::move(keep);
  }
  const int8_t* data() const { return view_ != nullptr ? view_ : own_.data(); }
  // The owned bytes, for the quantiser to write (after assign); null for a view.
  int8_t* mutable_data() { return view_ != nullptr ? nullptr : own_.data(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  std::vector<int8_t, Aligned64NoInit<int8_t>> own_;
  const int8_t* view_ = nullptr;
  size_t size_ = 0;
  std::shared_ptr<const void> keep_;
};

// The quantised candidate table. scale[e] is NaN for a row that is never screened (a NaN or infinite value, or
// max|t| outside [2^-50, 2^50] and not 0), which makes every decision on it "undecided".
struct ScreenTable {
  size_t n = 0, dim = 0, dpad = 0;
  std::vector<uint32_t> map;  // the element order it was made in (screen_quantise_table's map); empty: identity
  SimdLevel level = SimdLevel::Scalar;  // the quantiser that made it
  ScreenBytes panels;                   // ceil(n / 16) panels x dpad x 16 bytes (+ kScreenTileSlack)
  std::vector<float> scale;             // s_t, padded to whole panels (padding 0)
  std::vector<float> slack;             // upward rounded ||t - s_t b||_2 + gamma_d ||t||_2
  std::vector<float> qnorm;             // upward rounded ||s_t b||_2
  std::vector<int32_t> corr;            // 128 * sum_i b_i (the AVX-512 kernel's unsigned-offset correction)
  // The second level (refinement of undecided pairs): c = round(256 (y - b)) clamped to [-127, 127], y the row in
  // units of s_t, in the layout of `panels`, and the bound's per-entity terms (screen.cpp refine_row).
  ScreenBytes panels2;
  std::vector<float> slack2;   // upward rounded ||t - s_t (b + c / 256)||_2 + gamma_d ||t||_2
  std::vector<float> qnorm2;   // upward rounded ||s_t (b + c / 256)||_2
  std::vector<float> cnorm;    // upward rounded s_t ||c||_2 / 256
  std::vector<int32_t> corr2;  // 128 * sum_i c_i
  // A distance table (TransE-L2, RotatE-L2: screen_quantise_table's `distance`): fl(||t||_2^2 / 2) per entity
  // (||t||^2 in double, rounded to nearest; 0 for a row never screened and for padding). Empty: the dot product.
  std::vector<float> offset;

  bool distance() const { return !offset.empty(); }
  // Whether this table was made from a table of n rows of dim elements in this element order (map, dim entries), for
  // a distance interaction or the dot product.
  bool made_for(size_t rows, size_t d, const uint32_t* order, bool dist) const;
};

// The quantised queries (rows x dpad int8, padding 0) and their per-row decision constants; scale[i] NaN: row i is
// never screened (a non-finite value, max|q| outside [2^-50, 2^50] and not 0, or a non-finite threshold).
struct ScreenQueries {
  size_t rows = 0, dpad = 0;
  std::vector<int8_t> a;
  AlignedVector<uint8_t> au;     // a + 128 (the AVX-512 kernel's unsigned operand)
  std::vector<float> scale;      // s_q
  std::vector<float> norm;       // upward rounded ||q||_2
  std::vector<float> resid;      // upward rounded ||q - s_q a||_2
  std::vector<float> threshold;  // the true answer's float32 score; distance rows: the dot's threshold (below)
  std::vector<float> margin;     // upward rounded |threshold| 2^-16 + 2^-100 + slop (the AVX-512 kernels' decision)
  std::vector<float> absm;       // upward rounded 2^-100 + slop (the other kernels' absolute margin term)
  // Distance rows (screen_quantise_queries' `distance`): the float32 path scores -S, S the chained sum of squared
  // differences, and the screen decides the dot p = q . t against a per-row threshold plus the entity's offset
  // (ScreenTable::offset), slop the half-width of the gap between its two thresholds and their roundings
  // (screen.cpp distance_row). q2 = ||q||^2 in double per row; empty for the dot product.
  bool distance = false;
  size_t dim = 0;
  std::vector<double> q2;
  // The second level: a2 = round(256 (y - a)) clamped to [-127, 127] (y the row in units of s_q), its bound terms.
  std::vector<int8_t> a2;
  AlignedVector<uint8_t> a2u;  // a2 + 128
  std::vector<float> resid2;   // upward rounded ||q - s_q (a + a2 / 256)||_2
  std::vector<float> anorm2;   // upward rounded s_q ||a2||_2 / 256
};

// Quantises rows [0, n) of a float table (element k of row e is rows[e * width + map[k]]) with the level's
// quantiser, with each row's offset for a distance interaction (L2Squared: `distance`); false when out of memory.
bool screen_quantise_table(const float* rows, size_t n, size_t width, const uint32_t* map, size_t dim, SimdLevel level,
                           unsigned threads, ScreenTable* out, bool distance = false);
// Quantises query vectors (rows x dim, canonical order) with their thresholds (the float32 scores to decide
// against; for a distance interaction the negated sums of squares, converted to the dot's thresholds); false when out
// of memory.
bool screen_quantise_queries(const float* query, size_t rows, size_t dim, const float* threshold, SimdLevel level,
                             ScreenQueries* out, bool distance = false);

// Moves row i's threshold to the score thr (top_k_embeddings: the k-th best score so far changes from chunk to
// chunk) with its margins (a distance row's converted as screen_quantise_queries does); `scale` is the row's scale as
// quantised (screen_quantise_queries' output, kept by the caller). A row whose new threshold is not finite gets scale
// NaN, so every pair of it is undecided until a finite threshold comes back.
void screen_set_threshold(ScreenQueries* q, size_t i, float thr, float scale);

// A quantised table on disk (kgrank quantize; docs/screen.md "A quantised table on disk"), in the machine's byte
// order (little-endian on x86-64 and AArch64; another order fails the version check):
//   "KGRANKQ1", u32 version (3), u32 rules (screen.cpp kScreenRules), then u64 n, dim, dpad, width, interaction,
//   layout, float_digest, payload_digest, map entries (0: identity, else dim), distance (0 or 1), the map (u32 each),
//   then each array as u64 byte count, zero bytes up to the next 64-byte boundary of the file, and its bytes: panels,
//   scale, slack, qnorm, corr, panels2, slack2, qnorm2, cnorm, corr2, offset (empty unless distance). The reader maps
//   the file where the system can and keeps the panels in its pages (ScreenBytes::view).
// float_digest is screen_digest of the float32 table it was made from (rows x width floats as stored), so a table is
// never read against other values; payload_digest covers the arrays in order, so a damaged file is refused.
struct ScreenFileKey {
  uint64_t n = 0, dim = 0, width = 0, interaction = 0, layout = 0, float_digest = 0;
};
// A 64-bit digest of `bytes` bytes (not cryptographic: it tells tables apart and finds damage): the digest of the
// digests of its 16 MiB blocks, computed on `threads` threads (0: all), the same for any thread count.
uint64_t screen_digest(const void* data, size_t bytes, unsigned threads = 0);
// Writes the table with its key to `path` (the caller renames it into place); a failed status names what failed.
Status screen_table_write(const ScreenTable& t, const ScreenFileKey& key, const char* path);
// Reads a table `path` holds, checking its layout, sizes and payload digest; *key receives its key (the caller
// compares it with the model's). A failed status says what is wrong with the file.
Status screen_table_read(const char* path, ScreenFileKey* key, ScreenTable* t);

// One row's quantisation in units of its scale s = screen_scale(max): y_k = fl(v_k fl(1 / s)), a_k = round(y_k)
// clamped to [-127, 127], e_k = y_k - a_k; float sums (any order) of y^2, e^2, a^2, and the integer sum of a.
// Computed only when the row is finite with max in [2^-50, 2^50] (else the sums are 0 and out, and out2 where the
// quantiser makes the second level, are all zero).
// A quantiser that also makes the second level (the AVX2 and AVX-512 ones) writes c_k = round(256 e_k) clamped to
// [-127, 127] into out2 and sets `refined` with the second level's sums: float sums (any order) of f^2 (f_k = 256 e_k -
// c_k, exact) and t^2 (t_k = a_k + c_k / 256, exact), the integer sums of c^2 and c (screen.cpp refine_of). The others
// leave refined false and out2 untouched, and screen.cpp refine_row makes the second level in double.
struct ScreenRowSums {
  float max = 0, scale = 0;
  bool finite = true;
  float y2 = 0, e2 = 0, b2 = 0;
  int32_t sum = 0;
  bool refined = false;
  float f2 = 0, t2 = 0;
  int32_t c2 = 0, csum = 0;
};
using ScreenQuantFn = void (*)(const float* v, size_t dim, int8_t* out, int8_t* out2, ScreenRowSums* sums);
ScreenQuantFn screen_quantiser(SimdLevel level);
inline float screen_scale(float max) { return static_cast<float>(static_cast<double>(max) / 127.0); }
constexpr float kScreenMinMax = 8.881784197001252e-16f;  // 2^-50
constexpr float kScreenMaxMax = 1125899906842624.0f;     // 2^50

// One task of the screen: query rows [r0, r0 + nr) against entities [begin, end) (begin a multiple of 16).
// Adds to greater[k] the pairs of row r0 + k certified above the threshold (by the first level, or by the second
// where the first left a pair undecided and the kernel refines: screen_refine); lists the undecided ones:
// und[k * cap + u] (u < und_n[k]) are their entity indices (cap >= end - begin + 16: a kernel may write 16 entries
// past a row's list; und_n is set, not added to).
struct ScreenTask {
  const ScreenTable* table;
  const ScreenQueries* queries;
  size_t r0, nr, begin, end;
  uint32_t* greater;
  uint32_t* und;
  uint32_t* und_n;
  size_t cap;
  uint64_t* refined = nullptr;  // optional: adds the pairs the second level saw (16 per refined row and panel)
  // Lists the pairs certified above the threshold too (in the undecided lists, in entity order), instead of adding them
  // to greater: top_k_embeddings scores every pair not certified below.
  bool list_above = false;
};
using ScreenChunkFn = void (*)(const ScreenTask& task);

// The screen kernel of a level: AVX-512 with VNNI (vpdpbusd), AVX2 with AVX-VNNI (256-bit vpdpbusd) or without
// (vpmaddubsw on |b| and sign(a, b), then vpmaddwd; no int16 saturation as |a|, |b| <= 127), NEON with the dot-product
// extension (sdot), else scalar. `vector` is set when the level has a vector kernel.
ScreenChunkFn screen_kernel(SimdLevel level, bool* vector);
// Whether Auto screens at `level` at all: a vector kernel other than AVX2's without VNNI (vpmaddubsw / vpmaddwd), which
// measured 0.93-0.96x the float32 path at d = 100 and at most 1.2x at d = 500 on rows the screen decides at once
// (build-bench/screen_bench, structured; docs/screen.md), so that a model's own rows would gain nothing.
bool screen_auto_kernel(SimdLevel level);
// Whether Auto quantises a table for a call of `rows` query rows of `dim` elements at `level`: screen_auto_kernel and
// rows x dim >= kScreenAutoWork (screen_setup for one call, the addon for a job run in slices).
bool screen_auto_quantises(SimdLevel level, size_t rows, size_t dim);

// How the AVX2 and NEON kernels walk a task: und_n cleared, then blocks of 64 query rows, in each every panel of 16
// entities against groups of Q rows: block(task, first row of the group, rows in it, first entity of the panel).
template <size_t Q>
void screen_walk(const ScreenTask& task, void (*block)(const ScreenTask&, size_t, size_t, size_t)) {
  constexpr size_t kRows = 64;
  for (size_t k = 0; k < task.nr; ++k) task.und_n[k] = 0;
  const size_t panels = (task.end - task.begin + kScreenPanel - 1) / kScreenPanel;
  for (size_t qb = 0; qb < task.nr; qb += kRows) {
    const size_t qe = qb + kRows < task.nr ? qb + kRows : task.nr;
    for (size_t p = 0; p < panels; ++p) {
      for (size_t g = qb; g < qe; g += Q) block(task, g, qe - g < Q ? qe - g : Q, task.begin + p * kScreenPanel);
    }
  }
}

// Appends to row k's undecided list the entities jp + l of the set bits l of `und` (lowest first).
inline void screen_list(const ScreenTask& task, size_t k, size_t jp, unsigned und) {
  uint32_t* out = task.und + k * task.cap;
  uint32_t n = task.und_n[k];
  for (unsigned l = 0; und != 0; ++l, und >>= 1) {
    if (und & 1u) out[n++] = static_cast<uint32_t>(jp + l);
  }
  task.und_n[k] = n;
}

namespace isa {
void screen_quantise_scalar(const float* v, size_t dim, int8_t* out, int8_t* out2, ScreenRowSums* sums);
void screen_chunk_scalar(const ScreenTask& task);
#ifdef KGRANK_HAVE_AVX2
void screen_quantise_avx2(const float* v, size_t dim, int8_t* out, int8_t* out2, ScreenRowSums* sums);
void screen_chunk_avx2(const ScreenTask& task);
void screen_chunk_avx2_vnni(const ScreenTask& task);
#endif
#ifdef KGRANK_HAVE_AVX512
void screen_quantise_avx512(const float* v, size_t dim, int8_t* out, int8_t* out2, ScreenRowSums* sums);
void screen_chunk_avx512_vnni(const ScreenTask& task);
// Linux on x86-64 with a compiler that has the AMX intrinsics (GCC 11+, clang 12+): the AMX-INT8 kernel, chosen at the
// AVX-512 level where the CPU has AMX-TILE and AMX-INT8 and Linux grants the tile state at the first screened call
// (screen.cpp amx_granted).
#if defined(__linux__) && defined(__x86_64__) && \
    ((defined(__clang__) && __clang_major__ >= 12) || (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 11))
#define KGRANK_HAVE_AMX_KERNEL 1
void screen_chunk_amx(const ScreenTask& task);
#endif
#endif
#ifdef KGRANK_HAVE_NEON
void screen_chunk_neon_dot(const ScreenTask& task);  // AArch64 with the dot-product extension (sdot)
bool screen_neon_dot_built();                        // false: the compiler lacked it (screen_neon.cpp)
#endif
}  // namespace isa

// Which kernel screen_kernel picks for a level ("amx", "avx512-vnni", "avx-vnni", "avx2", "neon-sdot", "scalar"), for
// the benchmarks and the tests' reports.
const char* screen_kernel_name(SimdLevel level);

// The AVX-512 kernel decides with one rounding fewer (screen_avx512.cpp): d = fl(float(I) fl(s_t s_q) - thr) by one
// FMA, above when d > m and below when d < -m, m = fl(E' (1 + 2^-16) + margin_q), margin_q >= |thr| 2^-16 + 2^-100.
// The decision constants the other kernels use (screen.cpp explains them): a pair is certified above the threshold when
// fl(approx - M) > thr and below when fl(approx + M) < thr, approx = fl(fl(float(I) s_t) s_q),
// M = (nq slack_t + resid_q qnorm_t) (1 + 2^-16) + (|approx| + |thr|) 2^-16 + 2^-100.
constexpr float kScreenRel = 1.52587890625e-05f;      // 2^-16
constexpr float kScreenAbs = 7.888609052210118e-31f;  // 2^-100

// The second level decides as the first does, with X = I + K / 256 in place of I (K = sum a c + sum a2 b) and
// E2 = nq slack2 + resid2 qnorm2 + anorm2 cnorm in place of E (screen.cpp derives both): x = fl(float(K) 2^-8 +
// float(I)) is X within u, exactly as float(I) is I within u beyond 2^24, so every margin of the first level's
// forms covers it. The kernels refine a pair only when |I| and |K| are below 2^24 (float(I), float(K) exact; always
// so below d = 520, and beyond it unless a row is extreme); otherwise the pair stays undecided and is rescored.
constexpr int32_t kScreenExact = 16777216;  // 2^24

}  // namespace kgrank
