// AVX-512 VNNI kernel of the int8 screen (screen.h): vpdpbusd multiplies unsigned by signed bytes, so the query goes
// in as a + 128 (ScreenQueries::au) and each accumulator starts at -128 sum_i b_i (ScreenTable::corr): the sum is then
// sum (a_i + 128) b_i - 128 sum b_i = I exactly (no int32 overflow below d = 65000). Blocks of 8 query rows x 2
// panels (32 entities) hold 16 accumulators; the decision is screen.cpp's, lane-wise in float32. Compiled with the
// AVX-512 flags plus the VNNI target attribute; called only when the CPU has AVX512_VNNI (screen_kernel).
#include <immintrin.h>

#include <cstring>
#include <limits>
#include <vector>

#include "screen.h"

namespace kgrank {
namespace {

#if defined(__GNUC__) || defined(__clang__)
#define KGRANK_VNNI __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))
#else
#define KGRANK_VNNI
#endif

// acc += the dot products of unsigned a and signed b bytes, by fours. In inline assembly under GCC: its builtin
// leaves the accumulator in a register of its own and copies it in and out around every vpdpbusd (measured: two
// moves per multiply-add and accumulators spilled to the stack in block<2>'s loop).
KGRANK_VNNI inline __m512i dpbusd(__m512i acc, __m512i a, __m512i b) {
#if defined(__GNUC__) && !defined(__clang__)
  __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
  return acc;
#else
  return _mm512_dpbusd_epi32(acc, a, b);
#endif
}

constexpr size_t kQ = 8;
constexpr size_t kRowBlock = 64;

// The second level's dots K = sum a c + sum a2 b for one query row and one panel (16 entities at jp): two vpdpbusd
// chains each (a and a2 in as unsigned + 128, each chain started at its correction). For a (row, panel) pair alone;
// refine_block does a whole block's pairs with the first level's register blocking.
KGRANK_VNNI __attribute__((noinline)) __m512i refine_one(const ScreenTable& t, const ScreenQueries& q, size_t row,
                                                         size_t jp) {
  const size_t dpad = t.dpad;
  const size_t groups = dpad / 4;
  const size_t off = (jp / kScreenPanel) * dpad * kScreenPanel;
  const int8_t* bp = t.panels.data() + off;
  const int8_t* cp = t.panels2.data() + off;
  const uint8_t* au = q.au.data() + row * dpad;
  const uint8_t* a2u = q.a2u.data() + row * dpad;
  // Eight chains (four per dot) hide vpdpbusd's latency: this runs for one (row, panel) pair at a time.
  __m512i k[8];
  k[0] = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_loadu_si512(t.corr2.data() + jp));
  k[1] = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_loadu_si512(t.corr.data() + jp));
  for (size_t i = 2; i < 8; ++i) k[i] = _mm512_setzero_si512();
  size_t g = 0;
  for (; g + 4 <= groups; g += 4) {
    for (size_t u = 0; u < 4; ++u) {
      int w1, w2;
      std::memcpy(&w1, au + 4 * (g + u), 4);
      std::memcpy(&w2, a2u + 4 * (g + u), 4);
      k[2 * u] = dpbusd(k[2 * u], _mm512_set1_epi32(w1), _mm512_loadu_si512(cp + (g + u) * 64));
      k[2 * u + 1] = dpbusd(k[2 * u + 1], _mm512_set1_epi32(w2), _mm512_loadu_si512(bp + (g + u) * 64));
    }
  }
  for (; g < groups; ++g) {
    int w1, w2;
    std::memcpy(&w1, au + 4 * g, 4);
    std::memcpy(&w2, a2u + 4 * g, 4);
    k[0] = dpbusd(k[0], _mm512_set1_epi32(w1), _mm512_loadu_si512(cp + g * 64));
    k[1] = dpbusd(k[1], _mm512_set1_epi32(w2), _mm512_loadu_si512(bp + g * 64));
  }
  const __m512i s0 = _mm512_add_epi32(_mm512_add_epi32(k[0], k[1]), _mm512_add_epi32(k[2], k[3]));
  const __m512i s1 = _mm512_add_epi32(_mm512_add_epi32(k[4], k[5]), _mm512_add_epi32(k[6], k[7]));
  return _mm512_add_epi32(s0, s1);
}

// The second level's dots of every (row, panel) pair of a block (rows g .. g + nq of the task, P panels at j0), with
// the first level's blocking: per group of 4 elements, P panels of b and of c loaded once, a and a2 broadcast per row.
template <size_t P>
KGRANK_VNNI __attribute__((noinline)) void refine_block(const ScreenTask& task, size_t g, size_t nq, size_t j0,
                                                        __m512i (*out)[P]) {
  const ScreenTable& t = *task.table;
  const ScreenQueries& q = *task.queries;
  const size_t dpad = t.dpad;
  const size_t groups = dpad / 4;
  const int8_t* bp[P];
  const int8_t* cp[P];
  for (size_t p = 0; p < P; ++p) {
    bp[p] = t.panels.data() + ((j0 / kScreenPanel) + p) * dpad * kScreenPanel;
    cp[p] = t.panels2.data() + ((j0 / kScreenPanel) + p) * dpad * kScreenPanel;
  }
  const uint8_t* a[kQ];
  const uint8_t* a2[kQ];
  for (size_t r = 0; r < kQ; ++r) {
    a[r] = q.au.data() + (task.r0 + g + (r < nq ? r : 0)) * dpad;
    a2[r] = q.a2u.data() + (task.r0 + g + (r < nq ? r : 0)) * dpad;
  }
  __m512i acc[kQ][P];
  for (size_t p = 0; p < P; ++p) {
    const size_t jp = j0 + p * kScreenPanel;
    const __m512i init = _mm512_sub_epi32(
        _mm512_setzero_si512(),
        _mm512_add_epi32(_mm512_loadu_si512(t.corr.data() + jp), _mm512_loadu_si512(t.corr2.data() + jp)));
    for (size_t r = 0; r < kQ; ++r) acc[r][p] = init;
  }
  for (size_t k = 0; k < groups; ++k) {
    __m512i xb[P], xc[P];
    for (size_t p = 0; p < P; ++p) {
      xb[p] = _mm512_loadu_si512(bp[p] + k * 64);
      xc[p] = _mm512_loadu_si512(cp[p] + k * 64);
    }
    for (size_t r = 0; r < kQ; ++r) {
      int w, w2;
      std::memcpy(&w, a[r] + 4 * k, 4);
      std::memcpy(&w2, a2[r] + 4 * k, 4);
      const __m512i qa = _mm512_set1_epi32(w), qa2 = _mm512_set1_epi32(w2);
      for (size_t p = 0; p < P; ++p) acc[r][p] = dpbusd(dpbusd(acc[r][p], qa, xc[p]), qa2, xb[p]);
    }
  }
  for (size_t r = 0; r < kQ; ++r) {
    for (size_t p = 0; p < P; ++p) out[r][p] = acc[r][p];
  }
}

// Either level's decision (the one-FMA form above `block`'s decision loop derives) on the lanes `live` of one
// (row, panel) pair: d = fl(x c - thr) with c = fl(s_t s_q), m = fl(err (1 + 2^-16) + margin); certified above
// where d > m, below where d < -m.
// A distance table's offsets `off` (ScreenTable::offset at the panel; null for the dot product) move the threshold to
// fl(thr + off), whose rounding (u of |thr| + off) the margin's |thr| 2^-16 and the added off 2^-16 cover.
KGRANK_VNNI inline void certify(__m512 x, __m512 st, const ScreenQueries& q, size_t row, __m512 err, __mmask16 live,
                                const float* off, __mmask16* gt, __mmask16* lt) {
  const __m512 c = _mm512_mul_ps(st, _mm512_set1_ps(q.scale[row]));
  __m512 thr = _mm512_set1_ps(q.threshold[row]), margin = _mm512_set1_ps(q.margin[row]);
  if (off != nullptr) {
    const __m512 o = _mm512_loadu_ps(off);
    thr = _mm512_add_ps(thr, o);
    margin = _mm512_fmadd_ps(o, _mm512_set1_ps(kScreenRel), margin);
  }
  const __m512 d = _mm512_fmsub_ps(x, c, thr);
  const __m512 m = _mm512_fmadd_ps(err, _mm512_set1_ps(1.0f + kScreenRel), margin);
  *gt = _mm512_mask_cmp_ps_mask(live, d, m, _CMP_GT_OQ);
  *lt = _mm512_mask_cmp_ps_mask(live, d, _mm512_sub_ps(_mm512_setzero_ps(), m), _CMP_LT_OQ);
}

// The second level's decision (screen.h) for the lanes `und` of one (row, panel) pair from its dots I (first level)
// and K: the first level's one-FMA form with x = fl(float(K) 2^-8 + float(I)) for float(I) and E2 for E, on the lanes
// whose |I| and |K| are below 2^24. Adds the lanes certified above to *above and returns those still undecided.
KGRANK_VNNI inline __mmask16 decide2(const ScreenTable& t, const ScreenQueries& q, size_t row, size_t jp, __m512i i1,
                                     __m512i kk, __mmask16 und, __mmask16* above) {
  const __m512i lim = _mm512_set1_epi32(kScreenExact);
  const __mmask16 exact = static_cast<__mmask16>(_mm512_cmplt_epi32_mask(_mm512_abs_epi32(i1), lim) &
                                                 _mm512_cmplt_epi32_mask(_mm512_abs_epi32(kk), lim));
  const __m512 x = _mm512_fmadd_ps(_mm512_cvtepi32_ps(kk), _mm512_set1_ps(0.00390625f), _mm512_cvtepi32_ps(i1));
  const __m512 err = _mm512_fmadd_ps(
      _mm512_set1_ps(q.norm[row]), _mm512_loadu_ps(t.slack2.data() + jp),
      _mm512_fmadd_ps(_mm512_set1_ps(q.resid2[row]), _mm512_loadu_ps(t.qnorm2.data() + jp),
                      _mm512_mul_ps(_mm512_set1_ps(q.anorm2[row]), _mm512_loadu_ps(t.cnorm.data() + jp))));
  __mmask16 gt, lt;
  certify(x, _mm512_loadu_ps(t.scale.data() + jp), q, row, err, static_cast<__mmask16>(und & exact),
          t.distance() ? t.offset.data() + jp : nullptr, &gt, &lt);
  *above = static_cast<__mmask16>(*above | gt);
  return static_cast<__mmask16>(und & ~(gt | lt));
}

// Pairs of a block (of kQ x P) the second level refines together, from this many (row, panel) pairs with an
// undecided lane up: below it, each such pair alone (refine_one).
constexpr size_t kBlockRefine = 8;

template <size_t P>
KGRANK_VNNI void block(const ScreenTask& task, size_t g, size_t nq, size_t j0) {
  const ScreenTable& t = *task.table;
  const ScreenQueries& q = *task.queries;
  const size_t dpad = t.dpad;
  const size_t groups = dpad / 4;
  const int8_t* panel[P];
  for (size_t p = 0; p < P; ++p) panel[p] = t.panels.data() + ((j0 / kScreenPanel) + p) * dpad * kScreenPanel;
  const uint8_t* a[kQ];
  for (size_t r = 0; r < kQ; ++r) a[r] = q.au.data() + (task.r0 + g + (r < nq ? r : 0)) * dpad;
  __m512i acc[kQ][P];
  for (size_t p = 0; p < P; ++p) {
    const __m512i init =
        _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_loadu_si512(t.corr.data() + j0 + p * kScreenPanel));
    for (size_t r = 0; r < kQ; ++r) acc[r][p] = init;
  }
  for (size_t k = 0; k < groups; ++k) {
    __m512i x[P];
    for (size_t p = 0; p < P; ++p) x[p] = _mm512_loadu_si512(panel[p] + k * 64);
    for (size_t r = 0; r < kQ; ++r) {
      int w;
      std::memcpy(&w, a[r] + 4 * k, 4);
      const __m512i qa = _mm512_set1_epi32(w);
      for (size_t p = 0; p < P; ++p) acc[r][p] = dpbusd(acc[r][p], qa, x[p]);
    }
  }
  // The decision with one rounding fewer than screen.cpp's (screen.h): per pair, with c = fl(s_t s_q) and
  // x = float(I) (exact below 2^24, else within u), d = fl(x c - thr) by one FMA. Then x c = I s_t s_q (1 + e),
  // |e| <= 2.0001 u, and |d - (a - thr)| <= 4.01 u |d| + 3.01 u |thr| for a = I s_t s_q, so d > m with
  // m = fl(E' (1 + 2^-16) + margin), margin >= |thr| 2^-16 + 2^-100 (ScreenQueries::margin, rounded up), gives
  // a - thr > E: E' is E's first two terms in float (relative error below 3u), every rounding of m and of the error
  // terms is below u times them, far inside the 2^-16 margins, and 2^-100 covers the absolute ones. Below: d < -m.
  __mmask16 und[kQ][P], above[kQ][P];
  size_t open = 0;
  for (size_t p = 0; p < P; ++p) {
    const size_t jp = j0 + p * kScreenPanel;
    for (size_t r = 0; r < kQ; ++r) und[r][p] = above[r][p] = 0;
    if (jp >= task.end) continue;
    const size_t valid = task.end - jp < kScreenPanel ? task.end - jp : kScreenPanel;
    const __mmask16 vm = static_cast<__mmask16>(valid >= 16 ? 0xFFFFu : (1u << valid) - 1u);
    const __m512 st = _mm512_loadu_ps(t.scale.data() + jp);
    const __m512 ut = _mm512_loadu_ps(t.slack.data() + jp);
    const __m512 th = _mm512_loadu_ps(t.qnorm.data() + jp);
    const float* off = t.distance() ? t.offset.data() + jp : nullptr;
    for (size_t r = 0; r < nq; ++r) {
      const size_t row = task.r0 + g + r;
      const __m512 err =
          _mm512_fmadd_ps(_mm512_set1_ps(q.norm[row]), ut, _mm512_mul_ps(_mm512_set1_ps(q.resid[row]), th));
      __mmask16 gt, lt;
      certify(_mm512_cvtepi32_ps(acc[r][p]), st, q, row, err, vm, off, &gt, &lt);
      und[r][p] = static_cast<__mmask16>(~(gt | lt) & vm);
      above[r][p] = gt;
      // A query row that is never screened (scale NaN) is not refined: the second level cannot decide it either.
      open += und[r][p] != 0 && q.scale[row] == q.scale[row];
    }
  }
  // The second level for the pairs the first left undecided: the whole block's dots at once when enough of its
  // (row, panel) pairs need them, else one pair at a time.
  uint64_t refined = 0;
  if (open != 0) {
    __m512i kk[kQ][P];
    const bool whole = open >= kBlockRefine;
    if (whole) {
      refine_block<P>(task, g, nq, j0, kk);
      for (size_t p = 0; p < P; ++p) refined += j0 + p * kScreenPanel < task.end ? kScreenPanel * nq : 0;
    }
    for (size_t p = 0; p < P; ++p) {
      const size_t jp = j0 + p * kScreenPanel;
      for (size_t r = 0; r < nq; ++r) {
        const size_t row = task.r0 + g + r;
        if (und[r][p] == 0 || q.scale[row] != q.scale[row]) continue;
        if (!whole) {
          kk[r][p] = refine_one(t, q, row, jp);
          refined += kScreenPanel;
        }
        und[r][p] = decide2(t, q, row, jp, acc[r][p], kk[r][p], und[r][p], &above[r][p]);
      }
    }
  }
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (size_t p = 0; p < P; ++p) {
    const size_t jp = j0 + p * kScreenPanel;
    const __m512i ids = _mm512_add_epi32(iota, _mm512_set1_epi32(static_cast<int>(jp)));
    for (size_t r = 0; r < nq; ++r) {
      const size_t k = g + r;
      // Certified above: counted, or listed with the undecided (ScreenTask::list_above).
      __mmask16 list = und[r][p];
      if (task.list_above) {
        list = static_cast<__mmask16>(list | above[r][p]);
      } else {
        task.greater[k] += static_cast<uint32_t>(_mm_popcnt_u32(above[r][p]));
      }
      if (list == 0) continue;
      // Compress in a register, then a full store (cap leaves 16 spare entries): the memory form of vpcompressd
      // is microcoded on Zen 4 and cost more than the rest of the decision.
      _mm512_storeu_si512(task.und + k * task.cap + task.und_n[k], _mm512_maskz_compress_epi32(list, ids));
      task.und_n[k] += static_cast<uint32_t>(_mm_popcnt_u32(list));
    }
  }
  if (task.refined != nullptr) *task.refined += refined;
}

#ifdef KGRANK_HAVE_AMX_KERNEL
// The AMX kernel (Intel AMX-INT8: tdpbusd, a 16 x 64 unsigned-byte tile times a 16 x 64 signed-byte tile into 16 x 16
// int32, 16384 multiply-adds per instruction). A panel's 16 element groups of 4 bytes x 16 lanes are exactly a B tile
// (row g: group g of the 16 lanes), so the table is read as it is; the task's query rows are copied once into rows
// padded to whole 64-byte steps with 0 (a + 128 and a2 + 128 on the real elements, 0 past them: a padded element
// multiplies whatever bytes follow the panel by 0). Integer work is cheap enough here that both levels run for every
// pair: per 32 rows x 2 panels, I = sum (a + 128) b in one pass and K = sum (a + 128) c + sum (a2 + 128) b in a
// second, each accumulator started at its correction (-128 sum b, -128 (sum b + sum c)). The decision is the second
// level's (decide2's operations) first; a lane it leaves open (|I| or |K| >= 2^24, or inside its interval) gets the
// first level's, which is sound on any lane; what remains is listed. Tile numbers are immediates: 0-3 the
// accumulators (row tile r, panel h: tile 2 r + h; I in the first pass, K in the second), 4-5 the two row tiles,
// 6-7 the two panel tiles of one 64-element step.
#define KGRANK_AMX __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,amx-tile,amx-int8")))

struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// A query row's decision constants, gathered once per task (the decision loop then holds no table pointers).
struct AmxRow {
  float sq, thr, margin, norm, resid, resid2, anorm2, pad;
};

// The decisions of rows [0, nq) of a block against the panel at jp (lanes vm), from the stored accumulators
// (16 int32 per row: I at ci, K at ck, corrections included): the second level's form (decide2's operations) on every
// lane, then the first level's (sound on any lane) on the lanes it leaves open; what remains is listed. `exact`: every
// |I|, |K| is below 2^24 (dpad <= 512), else lanes past it skip the second level. The operations are decide2's and
// certify's, written out with the row's constants gathered (AmxRow) and the panel's loaded once: calling decide2 and
// certify per row measured 2.06x instead of 2.33x at d = 100 (build-bench/screen_bench, structured, one thread).
// kDist: a distance table, whose offsets move each lane's threshold as in certify.
template <bool kDist>
KGRANK_AMX inline void amx_panel(const ScreenTask& task, const AmxRow* rc, size_t k0, size_t nq, size_t jp,
                                 __mmask16 vm, const int32_t* ci, const int32_t* ck, size_t tile_of_16, bool exact,
                                 uint32_t* greater) {
  const ScreenTable& t = *task.table;
  const __m512 st = _mm512_loadu_ps(t.scale.data() + jp);
  const __m512 slack2 = _mm512_loadu_ps(t.slack2.data() + jp);
  const __m512 qnorm2 = _mm512_loadu_ps(t.qnorm2.data() + jp);
  const __m512 cnorm = _mm512_loadu_ps(t.cnorm.data() + jp);
  const __m512 rel = _mm512_set1_ps(1.0f + kScreenRel);
  const __m512 step = _mm512_set1_ps(0.00390625f);
  const __m512i lim = _mm512_set1_epi32(kScreenExact);
  const __m512i ids = _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                       _mm512_set1_epi32(static_cast<int>(jp)));
  __m512 offv = _mm512_setzero_ps(), offm = _mm512_setzero_ps();
  if constexpr (kDist) {
    offv = _mm512_loadu_ps(t.offset.data() + jp);
    offm = _mm512_mul_ps(offv, _mm512_set1_ps(kScreenRel));
  }
  for (size_t r = 0; r < nq; ++r) {
    const AmxRow& q = rc[r];
    __m512 thr = _mm512_set1_ps(q.thr), margin = _mm512_set1_ps(q.margin);
    if constexpr (kDist) {
      thr = _mm512_add_ps(thr, offv);
      margin = _mm512_add_ps(margin, offm);
    }
    const size_t at = (r / 16) * tile_of_16 + 16 * (r % 16);
    const __m512i i1 = _mm512_load_si512(ci + at);
    const __m512i kk = _mm512_load_si512(ck + at);
    __mmask16 live = vm;
    if (!exact) {
      live = static_cast<__mmask16>(live & _mm512_cmplt_epi32_mask(_mm512_abs_epi32(i1), lim) &
                                    _mm512_cmplt_epi32_mask(_mm512_abs_epi32(kk), lim));
    }
    const __m512 x = _mm512_fmadd_ps(_mm512_cvtepi32_ps(kk), step, _mm512_cvtepi32_ps(i1));
    const __m512 err = _mm512_fmadd_ps(
        _mm512_set1_ps(q.norm), slack2,
        _mm512_fmadd_ps(_mm512_set1_ps(q.resid2), qnorm2, _mm512_mul_ps(_mm512_set1_ps(q.anorm2), cnorm)));
    const __m512 d = _mm512_fmsub_ps(x, _mm512_mul_ps(st, _mm512_set1_ps(q.sq)), thr);
    const __m512 m = _mm512_fmadd_ps(err, rel, margin);
    __mmask16 gt = _mm512_mask_cmp_ps_mask(live, d, m, _CMP_GT_OQ);
    __mmask16 lt = _mm512_mask_cmp_ps_mask(live, d, _mm512_sub_ps(_mm512_setzero_ps(), m), _CMP_LT_OQ);
    __mmask16 above = gt;
    __mmask16 und = static_cast<__mmask16>(vm & ~(gt | lt));
    if (und != 0) {
      const __m512 err1 = _mm512_fmadd_ps(_mm512_set1_ps(q.norm), _mm512_loadu_ps(t.slack.data() + jp),
                                          _mm512_mul_ps(_mm512_set1_ps(q.resid), _mm512_loadu_ps(t.qnorm.data() + jp)));
      const __m512 d1 = _mm512_fmsub_ps(_mm512_cvtepi32_ps(i1), _mm512_mul_ps(st, _mm512_set1_ps(q.sq)), thr);
      const __m512 m1 = _mm512_fmadd_ps(err1, rel, margin);
      gt = _mm512_mask_cmp_ps_mask(und, d1, m1, _CMP_GT_OQ);
      lt = _mm512_mask_cmp_ps_mask(und, d1, _mm512_sub_ps(_mm512_setzero_ps(), m1), _CMP_LT_OQ);
      above = static_cast<__mmask16>(above | gt);
      und = static_cast<__mmask16>(und & ~(gt | lt));
    }
    // Certified above: counted, or listed with the undecided (ScreenTask::list_above).
    if (task.list_above) {
      und = static_cast<__mmask16>(und | above);
    } else {
      greater[r] += _mm_popcnt_u32(above);
    }
    if (und != 0) {
      const size_t k = k0 + r;
      _mm512_storeu_si512(task.und + k * task.cap + task.und_n[k], _mm512_maskz_compress_epi32(und, ids));
      task.und_n[k] += static_cast<uint32_t>(_mm_popcnt_u32(und));
    }
  }
}

// Rows x panels in 2 x 2 tiles (Intel's recommended blocking: four independent accumulators, each loaded tile used
// twice): tiles 0-3 accumulate rows [0, 16) and [16, 32) of the block against panels 0 and 1, tiles 4-5 hold the two
// row tiles and 6-7 the two panel tiles of one 64-element step. Pass one: I from a and b. Pass two: K from a and c,
// then a2 and b (a dot product twice as long into the same accumulators).
#define KGRANK_AMX_STEP(B0, B1, ROW0, ROW1) \
  _tile_loadd(4, ROW0, stride);             \
  _tile_loadd(5, ROW1, stride);             \
  _tile_loadd(6, B0, 64);                   \
  _tile_loadd(7, B1, 64);                   \
  _tile_dpbusd(0, 4, 6);                    \
  _tile_dpbusd(1, 4, 7);                    \
  _tile_dpbusd(2, 5, 6);                    \
  _tile_dpbusd(3, 5, 7)
// The accumulators started at a panel pair's corrections (P0, P1: 16 int32 each, every row the same by row stride 0),
// and stored to O[0 .. 4) (16 x 16 int32 each).
#define KGRANK_AMX_START(P0, P1) \
  _tile_loadd(0, P0, 0);         \
  _tile_loadd(1, P1, 0);         \
  _tile_loadd(2, P0, 0);         \
  _tile_loadd(3, P1, 0)
#define KGRANK_AMX_STORE(O)  \
  _tile_stored(0, O[0], 64); \
  _tile_stored(1, O[1], 64); \
  _tile_stored(2, O[2], 64); \
  _tile_stored(3, O[3], 64)

// The padded query rows of a task (a + 128 and a2 + 128, `stride` bytes a row, `steps` 64-element steps) and the
// bytes of one panel of the table.
struct AmxOperands {
  const uint8_t* a;
  const uint8_t* a2;
  size_t stride, steps, pbytes;
};

// The tiles of one block: rows [qb, qb + 32) of the task against panels p and p + 1 of the task's range (p alone when
// it is the last), I into oi and K into ok (accumulator 2 r + h: row tile r, panel h), corrections included.
KGRANK_AMX inline void amx_tiles(const ScreenTable& t, const AmxOperands& o, size_t begin, size_t qb, size_t p,
                                 size_t panels, const int32_t* ci0, const int32_t* ck0, int32_t (*oi)[256],
                                 int32_t (*ok)[256]) {
  const size_t stride = o.stride;
  const size_t half = 16 * stride;
  const uint8_t* a = o.a + qb * stride;
  const uint8_t* a2 = o.a2 + qb * stride;
  const size_t np = panels - p < 2 ? panels - p : 2;
  const size_t pi = begin / kScreenPanel + p;
  const int8_t* b0 = t.panels.data() + pi * o.pbytes;
  const int8_t* c0 = t.panels2.data() + pi * o.pbytes;
  const int8_t* b1 = np == 2 ? b0 + o.pbytes : b0;
  const int8_t* c1 = np == 2 ? c0 + o.pbytes : c0;
  const size_t second = np == 2 ? kScreenPanel : 0;  // a lone last panel fills both panel tiles, decided once
  KGRANK_AMX_START(ci0 + p * kScreenPanel, ci0 + p * kScreenPanel + second);
  for (size_t s = 0; s < o.steps; ++s) {
    KGRANK_AMX_STEP(b0 + s * 1024, b1 + s * 1024, a + s * 64, a + half + s * 64);
  }
  KGRANK_AMX_STORE(oi);
  KGRANK_AMX_START(ck0 + p * kScreenPanel, ck0 + p * kScreenPanel + second);
  for (size_t s = 0; s < o.steps; ++s) {
    KGRANK_AMX_STEP(c0 + s * 1024, c1 + s * 1024, a + s * 64, a + half + s * 64);
    KGRANK_AMX_STEP(b0 + s * 1024, b1 + s * 1024, a2 + s * 64, a2 + half + s * 64);
  }
  KGRANK_AMX_STORE(ok);
}

KGRANK_AMX void chunk_amx(const ScreenTask& task) {
  const ScreenTable& t = *task.table;
  const ScreenQueries& q = *task.queries;
  const size_t dpad = t.dpad;
  const size_t steps = (dpad + 63) / 64;
  const size_t stride = steps * 64;
  const size_t rows = (task.nr + 31) / 32 * 32;
  thread_local AlignedVector<uint8_t> qa, qa2;
  qa.assign(rows * stride, uint8_t{0});
  qa2.assign(rows * stride, uint8_t{0});
  for (size_t k = 0; k < task.nr; ++k) {
    std::memcpy(qa.data() + k * stride, q.au.data() + (task.r0 + k) * dpad, dpad);
    std::memcpy(qa2.data() + k * stride, q.a2u.data() + (task.r0 + k) * dpad, dpad);
    task.und_n[k] = 0;
  }
  if (task.nr == 0 || task.end <= task.begin) return;
  thread_local AlignedVector<AmxRow> rc;
  rc.resize(task.nr);
  for (size_t k = 0; k < task.nr; ++k) {
    const size_t row = task.r0 + k;
    rc[k] = AmxRow{q.scale[row], q.threshold[row], q.margin[row], q.norm[row],
                   q.resid[row], q.resid2[row],    q.anorm2[row], 0.0f};
  }
  // The accumulators start at the corrections, every row the same (a tile load with row stride 0): -128 sum b for I,
  // -128 (sum b + sum c) for K.
  const size_t lanes = (task.end - task.begin + 31) / 32 * 32;
  thread_local AlignedVector<int32_t> ci0, ck0;
  ci0.resize(lanes);
  ck0.resize(lanes);
  for (size_t j = 0; j < lanes; ++j) {
    const size_t e = task.begin + j < t.corr.size() ? task.begin + j : 0;
    ci0[j] = task.begin + j < t.corr.size() ? -t.corr[e] : 0;
    ck0[j] = task.begin + j < t.corr.size() ? -(t.corr[e] + t.corr2[e]) : 0;
  }
  const bool exact = dpad <= 512;
  // The tile state from here to _tile_release: nothing below allocates (or throws).
  TileConfig cfg;
  for (size_t i = 0; i < 8; ++i) {
    cfg.colsb[i] = 64;
    cfg.rows[i] = 16;
  }
  _tile_loadconfig(&cfg);
  // Two sets of stored accumulators: the tiles of the next (rows, panels) block are issued before the decisions of
  // this one, so the tile unit works while the vector ports decide (the stores and the decision's loads touch
  // different buffers).
  alignas(64) int32_t out[2][2][4][256];
  const size_t panels = (task.end - task.begin + kScreenPanel - 1) / kScreenPanel;
  const size_t pairs = (panels + 1) / 2;
  const size_t blocks = (task.nr + 31) / 32 * pairs;
  const AmxOperands ops{qa.data(), qa2.data(), stride, steps, dpad * kScreenPanel};
  const auto issue = [&](size_t b) { return b / pairs * 32; };
  amx_tiles(t, ops, task.begin, issue(0), 0, panels, ci0.data(), ck0.data(), out[0][0], out[0][1]);
  for (size_t b = 0; b < blocks; ++b) {
    if (b + 1 < blocks) {
      amx_tiles(t, ops, task.begin, issue(b + 1), 2 * ((b + 1) % pairs), panels, ci0.data(), ck0.data(),
                out[(b + 1) & 1][0], out[(b + 1) & 1][1]);
    }
    const size_t qb = issue(b);
    const size_t p = 2 * (b % pairs);
    const size_t nq = task.nr - qb < 32 ? task.nr - qb : 32;
    const size_t np = panels - p < 2 ? panels - p : 2;
    for (size_t h = 0; h < np; ++h) {
      const size_t jp = task.begin + (p + h) * kScreenPanel;
      const size_t valid = task.end - jp < kScreenPanel ? task.end - jp : kScreenPanel;
      const __mmask16 vm = static_cast<__mmask16>(valid >= 16 ? 0xFFFFu : (1u << valid) - 1u);
      // Accumulator 2 r + h holds rows [16 r, 16 r + 16) against panel h.
      const int32_t* ci = &out[b & 1][0][0][0] + 256 * h;
      const int32_t* ck = &out[b & 1][1][0][0] + 256 * h;
      if (t.distance()) {
        amx_panel<true>(task, rc.data() + qb, qb, nq, jp, vm, ci, ck, 2 * 256, exact, task.greater + qb);
      } else {
        amx_panel<false>(task, rc.data() + qb, qb, nq, jp, vm, ci, ck, 2 * 256, exact, task.greater + qb);
      }
    }
  }
  _tile_release();
}
#undef KGRANK_AMX_STEP
#undef KGRANK_AMX_START
#undef KGRANK_AMX_STORE
#endif

}  // namespace

namespace isa {
// screen.h ScreenRowSums at 16 lanes, both levels in one pass: the sums' order differs from the scalar one, which
// the bound allows (any order). The second level's c_k, f_k and t_k are exact in float (screen.cpp refine_of), and
// cvtps rounds 256 e_k to nearest even as refine_row's double does, so out2 holds refine_row's bytes.
void screen_quantise_avx512(const float* v, size_t dim, int8_t* out, int8_t* out2, ScreenRowSums* r) {
  *r = ScreenRowSums{};
  const __m512 inf = _mm512_set1_ps(std::numeric_limits<float>::infinity());
  __m512 mx = _mm512_setzero_ps();
  __mmask16 bad = 0;
  for (size_t k = 0; k < dim; k += 16) {
    const __mmask16 m = static_cast<__mmask16>(dim - k >= 16 ? 0xFFFFu : (1u << (dim - k)) - 1u);
    const __m512 x = _mm512_abs_ps(_mm512_maskz_loadu_ps(m, v + k));
    bad = static_cast<__mmask16>(bad | _mm512_cmp_ps_mask(x, inf, _CMP_NLT_UQ));  // NaN or infinite
    mx = _mm512_max_ps(mx, x);
  }
  r->finite = bad == 0;
  r->max = _mm512_reduce_max_ps(mx);
  r->refined = true;
  if (!r->finite || !(r->max >= kScreenMinMax && r->max <= kScreenMaxMax)) {
    std::memset(out, 0, dim);
    std::memset(out2, 0, dim);
    return;
  }
  r->scale = screen_scale(r->max);
  const __m512 inv = _mm512_set1_ps(1.0f / r->scale);
  const __m512 x256 = _mm512_set1_ps(256.0f), by256 = _mm512_set1_ps(0.00390625f);
  const __m512i lo = _mm512_set1_epi32(-127), hi = _mm512_set1_epi32(127);
  __m512 y2 = _mm512_setzero_ps(), e2 = _mm512_setzero_ps(), b2 = _mm512_setzero_ps();
  __m512 f2 = _mm512_setzero_ps(), t2 = _mm512_setzero_ps();
  __m512i sum = _mm512_setzero_si512(), csum = _mm512_setzero_si512(), c2 = _mm512_setzero_si512();
  for (size_t k = 0; k < dim; k += 16) {
    const __mmask16 m = static_cast<__mmask16>(dim - k >= 16 ? 0xFFFFu : (1u << (dim - k)) - 1u);
    const __m512 y = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, v + k), inv);
    const __m512i a = _mm512_min_epi32(hi, _mm512_max_epi32(lo, _mm512_cvtps_epi32(y)));  // nearest even
    const __m512 af = _mm512_cvtepi32_ps(a);
    const __m512 e = _mm512_sub_ps(y, af);
    y2 = _mm512_fmadd_ps(y, y, y2);
    e2 = _mm512_fmadd_ps(e, e, e2);
    b2 = _mm512_fmadd_ps(af, af, b2);
    sum = _mm512_add_epi32(sum, a);
    _mm512_mask_cvtepi32_storeu_epi8(out + k, m, a);
    const __m512 e256 = _mm512_mul_ps(e, x256);
    const __m512i c = _mm512_min_epi32(hi, _mm512_max_epi32(lo, _mm512_cvtps_epi32(e256)));
    const __m512 cf = _mm512_cvtepi32_ps(c);
    const __m512 f = _mm512_sub_ps(e256, cf);
    const __m512 t = _mm512_fmadd_ps(cf, by256, af);
    f2 = _mm512_fmadd_ps(f, f, f2);
    t2 = _mm512_fmadd_ps(t, t, t2);
    csum = _mm512_add_epi32(csum, c);
    c2 = _mm512_add_epi32(c2, _mm512_mullo_epi32(c, c));
    _mm512_mask_cvtepi32_storeu_epi8(out2 + k, m, c);
  }
  r->y2 = _mm512_reduce_add_ps(y2);
  r->e2 = _mm512_reduce_add_ps(e2);
  r->b2 = _mm512_reduce_add_ps(b2);
  r->sum = _mm512_reduce_add_epi32(sum);
  r->f2 = _mm512_reduce_add_ps(f2);
  r->t2 = _mm512_reduce_add_ps(t2);
  r->csum = _mm512_reduce_add_epi32(csum);
  r->c2 = _mm512_reduce_add_epi32(c2);
}

KGRANK_VNNI void screen_chunk_avx512_vnni(const ScreenTask& task) {
  for (size_t k = 0; k < task.nr; ++k) task.und_n[k] = 0;
  const size_t panels = (task.end - task.begin + kScreenPanel - 1) / kScreenPanel;
  for (size_t qb = 0; qb < task.nr; qb += kRowBlock) {
    const size_t qe = qb + kRowBlock < task.nr ? qb + kRowBlock : task.nr;
    size_t p = 0;
    for (; p + 2 <= panels; p += 2) {
      for (size_t g = qb; g < qe; g += kQ) block<2>(task, g, qe - g < kQ ? qe - g : kQ, task.begin + p * kScreenPanel);
    }
    for (; p < panels; ++p) {
      for (size_t g = qb; g < qe; g += kQ) block<1>(task, g, qe - g < kQ ? qe - g : kQ, task.begin + p * kScreenPanel);
    }
  }
}

#ifdef KGRANK_HAVE_AMX_KERNEL
void screen_chunk_amx(const ScreenTask& task) { chunk_amx(task); }
#endif
}  // namespace isa
}  // namespace kgrank
