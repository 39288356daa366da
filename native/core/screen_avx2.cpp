// AVX2 kernel of the int8 screen (screen.h): per 4 elements of 8 entities, vpmaddubsw(|b|, sign(a, b)) gives the
// 16-bit sums a_i b_i + a_j b_j (|a|, |b| <= 127: at most 32258, no saturation) and vpmaddwd with ones widens them
// to int32, so the accumulator is I exactly. Blocks of 4 query rows x 1 panel (16 entities, two vectors); the
// decision is screen.cpp's, lane-wise in float32. Where the CPU has AVX-VNNI, the 256-bit vpdpbusd does both steps
// in one (screen_chunk_avx2_vnni, the AVX-512 kernel's unsigned-offset form).
#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "screen.h"

namespace kgrank {
namespace {

constexpr size_t kQ = 4;

// The second level's dots K = sum a c + sum a2 b of one query row against one panel (16 entities at jp), two halves of
// 8 lanes, by vpmaddubsw on |x| and sign(q, x) then vpmaddwd with ones (no int16 saturation: |.| <= 127 throughout).
void refine_dots(const ScreenTable& t, const ScreenQueries& q, size_t row, size_t jp, __m256i* k) {
  const size_t dpad = t.dpad;
  const size_t groups = dpad / 4;
  const size_t off = (jp / kScreenPanel) * dpad * kScreenPanel;
  const int8_t* bp = t.panels.data() + off;
  const int8_t* cp = t.panels2.data() + off;
  const int8_t* a = q.a.data() + row * dpad;
  const int8_t* a2 = q.a2.data() + row * dpad;
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i k0 = _mm256_setzero_si256(), k1 = _mm256_setzero_si256();
  for (size_t g = 0; g < groups; ++g) {
    int w, w2;
    std::memcpy(&w, a + 4 * g, 4);
    std::memcpy(&w2, a2 + 4 * g, 4);
    const __m256i qa = _mm256_set1_epi32(w), qa2 = _mm256_set1_epi32(w2);
    const __m256i c0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(cp + g * 64));
    const __m256i c1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(cp + g * 64 + 32));
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + g * 64));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + g * 64 + 32));
    const __m256i s0 = _mm256_maddubs_epi16(_mm256_abs_epi8(c0), _mm256_sign_epi8(qa, c0));
    const __m256i s1 = _mm256_maddubs_epi16(_mm256_abs_epi8(c1), _mm256_sign_epi8(qa, c1));
    const __m256i u0 = _mm256_maddubs_epi16(_mm256_abs_epi8(b0), _mm256_sign_epi8(qa2, b0));
    const __m256i u1 = _mm256_maddubs_epi16(_mm256_abs_epi8(b1), _mm256_sign_epi8(qa2, b1));
    k0 = _mm256_add_epi32(k0, _mm256_add_epi32(_mm256_madd_epi16(s0, ones), _mm256_madd_epi16(u0, ones)));
    k1 = _mm256_add_epi32(k1, _mm256_add_epi32(_mm256_madd_epi16(s1, ones), _mm256_madd_epi16(u1, ones)));
  }
  k[0] = k0;
  k[1] = k1;
}

// Counts and lists one block's pairs from their integer dots (the decision of screen.cpp, 8 lanes at a time).
void decide(const ScreenTask& task, size_t g, size_t nq, size_t jp, const __m256i (*acc)[2]) {
  const ScreenTable& t = *task.table;
  const ScreenQueries& q = *task.queries;
  const size_t valid = task.end - jp < kScreenPanel ? task.end - jp : kScreenPanel;
  const unsigned vm = valid >= 16 ? 0xFFFFu : (1u << valid) - 1u;
  const __m256 one_rel = _mm256_set1_ps(1.0f + kScreenRel), rel = _mm256_set1_ps(kScreenRel);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const bool dist = t.distance();
  for (size_t r = 0; r < nq; ++r) {
    const size_t row = task.r0 + g + r;
    const __m256 sq = _mm256_set1_ps(q.scale[row]), nq_v = _mm256_set1_ps(q.norm[row]);
    const __m256 dq = _mm256_set1_ps(q.resid[row]);
    const __m256 absk = _mm256_set1_ps(q.absm[row]);
    const float thr_s = q.threshold[row];
    const __m256 thr_q = _mm256_set1_ps(thr_s);
    // Either level's decision on half h (8 lanes) from x (float(I), or fl(float(I) + float(K) 2^-8)) and its error
    // bound: the lanes certified above and below the threshold, as bits 8 h .. 8 h + 7. A distance table's offset
    // moves the threshold as in the scalar kernel (screen.cpp).
    const auto side = [&](size_t h, __m256 x, __m256 err, unsigned* gt, unsigned* lt) {
      const __m256 approx = _mm256_mul_ps(_mm256_mul_ps(x, _mm256_loadu_ps(t.scale.data() + jp + 8 * h)), sq);
      __m256 thr = thr_q, mag = _mm256_andnot_ps(sign, approx);
      if (dist) {
        const __m256 off = _mm256_loadu_ps(t.offset.data() + jp + 8 * h);
        thr = _mm256_add_ps(thr_q, off);
        mag = _mm256_add_ps(mag, off);
      }
      mag = _mm256_add_ps(mag, _mm256_andnot_ps(sign, thr));
      const __m256 m = _mm256_fmadd_ps(err, one_rel, _mm256_fmadd_ps(mag, rel, absk));
      *gt = static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(_mm256_sub_ps(approx, m), thr, _CMP_GT_OQ)))
            << (8 * h);
      *lt = static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(_mm256_add_ps(approx, m), thr, _CMP_LT_OQ)))
            << (8 * h);
    };
    unsigned gt = 0, lt = 0;
    for (size_t h = 0; h < 2; ++h) {
      const __m256 ut = _mm256_loadu_ps(t.slack.data() + jp + 8 * h);
      const __m256 th = _mm256_loadu_ps(t.qnorm.data() + jp + 8 * h);
      unsigned g1, l1;
      side(h, _mm256_cvtepi32_ps(acc[r][h]), _mm256_fmadd_ps(nq_v, ut, _mm256_mul_ps(dq, th)), &g1, &l1);
      gt |= g1;
      lt |= l1;
    }
    const size_t k = g + r;
    // Certified above: counted, or listed with the undecided (ScreenTask::list_above).
    unsigned above = gt & vm;
    unsigned und = ~(gt | lt) & vm;
    if (und != 0 && q.scale[row] == q.scale[row]) {
      // The second level (screen.h): the first level's form with x = fl(float(I) + float(K) 2^-8) for float(I)
      // and E2 for E, on the lanes whose |I| and |K| are below 2^24.
      __m256i kk[2];
      refine_dots(t, q, row, jp, kk);
      if (task.refined != nullptr) *task.refined += kScreenPanel;
      const __m256i lim = _mm256_set1_epi32(kScreenExact - 1);
      const __m256 r2 = _mm256_set1_ps(q.resid2[row]), an = _mm256_set1_ps(q.anorm2[row]);
      unsigned gt2 = 0, lt2 = 0;
      for (size_t h = 0; h < 2; ++h) {
        const __m256i big = _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_abs_epi32(acc[r][h]), lim),
                                            _mm256_cmpgt_epi32(_mm256_abs_epi32(kk[h]), lim));
        const unsigned inexact = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(big)));
        const __m256 x = _mm256_add_ps(_mm256_cvtepi32_ps(acc[r][h]),
                                       _mm256_mul_ps(_mm256_cvtepi32_ps(kk[h]), _mm256_set1_ps(0.00390625f)));
        const __m256 err =
            _mm256_fmadd_ps(nq_v, _mm256_loadu_ps(t.slack2.data() + jp + 8 * h),
                            _mm256_fmadd_ps(r2, _mm256_loadu_ps(t.qnorm2.data() + jp + 8 * h),
                                            _mm256_mul_ps(an, _mm256_loadu_ps(t.cnorm.data() + jp + 8 * h))));
        unsigned g2, l2;
        side(h, x, err, &g2, &l2);
        gt2 |= g2 & ~(inexact << (8 * h));
        lt2 |= l2 & ~(inexact << (8 * h));
      }
      gt2 &= und;
      above |= gt2;
      und &= ~(gt2 | lt2);
    }
    if (task.list_above) {
      und |= above;
    } else {
      task.greater[k] += static_cast<uint32_t>(_mm_popcnt_u32(above));
    }
    screen_list(task, k, jp, und);
  }
}

void block(const ScreenTask& task, size_t g, size_t nq, size_t jp) {
  const ScreenTable& t = *task.table;
  const ScreenQueries& q = *task.queries;
  const size_t dpad = t.dpad;
  const size_t groups = dpad / 4;
  const int8_t* panel = t.panels.data() + (jp / kScreenPanel) * dpad * kScreenPanel;
  const int8_t* a[kQ];
  for (size_t r = 0; r < kQ; ++r) a[r] = q.a.data() + (task.r0 + g + (r < nq ? r : 0)) * dpad;
  __m256i acc[kQ][2];
  for (size_t r = 0; r < kQ; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  const __m256i ones = _mm256_set1_epi16(1);
  for (size_t k = 0; k < groups; ++k) {
    const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + k * 64));
    const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + k * 64 + 32));
    const __m256i ax0 = _mm256_abs_epi8(x0), ax1 = _mm256_abs_epi8(x1);
    for (size_t r = 0; r < kQ; ++r) {
      uint32_t w;
      std::memcpy(&w, a[r] + 4 * k, 4);
      const __m256i qa = _mm256_set1_epi32(static_cast<int>(w));
      const __m256i p0 = _mm256_maddubs_epi16(ax0, _mm256_sign_epi8(qa, x0));
      const __m256i p1 = _mm256_maddubs_epi16(ax1, _mm256_sign_epi8(qa, x1));
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(p0, ones));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(p1, ones));
    }
  }
  decide(task, g, nq, jp, acc);
}

#if defined(__GNUC__) || defined(__clang__)
#define KGRANK_HAVE_AVX_VNNI_KERNEL 1
// AVX-VNNI (256-bit vpdpbusd, VEX): the query as a + 128 and the accumulators from -128 sum b, as the AVX-512 kernel.
// acc += unsigned a times signed b by fours (VEX vpdpbusd). Inline assembly under GCC, whose builtin copies the
// accumulator in and out around every instruction (screen_avx512.cpp dpbusd).
__attribute__((target("avx2,fma,avxvnni"))) inline __m256i dpbusd_vex(__m256i acc, __m256i a, __m256i b) {
#if !defined(__clang__)
  __asm__("%{vex%} vpdpbusd %2, %1, %0" : "+x"(acc) : "x"(a), "x"(b));
  return acc;
#else
  return _mm256_dpbusd_avx_epi32(acc, a, b);
#endif
}

__attribute__((target("avx2,fma,avxvnni"))) void block_vnni(const ScreenTask& task, size_t g, size_t nq, size_t jp) {
  const ScreenTable& t = *task.table;
  const ScreenQueries& q = *task.queries;
  const size_t dpad = t.dpad;
  const size_t groups = dpad / 4;
  const int8_t* panel = t.panels.data() + (jp / kScreenPanel) * dpad * kScreenPanel;
  const uint8_t* a[kQ];
  for (size_t r = 0; r < kQ; ++r) a[r] = q.au.data() + (task.r0 + g + (r < nq ? r : 0)) * dpad;
  __m256i acc[kQ][2];
  for (size_t h = 0; h < 2; ++h) {
    const __m256i init = _mm256_sub_epi32(
        _mm256_setzero_si256(), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.corr.data() + jp + 8 * h)));
    for (size_t r = 0; r < kQ; ++r) acc[r][h] = init;
  }
  for (size_t k = 0; k < groups; ++k) {
    const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + k * 64));
    const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + k * 64 + 32));
    for (size_t r = 0; r < kQ; ++r) {
      int w;
      std::memcpy(&w, a[r] + 4 * k, 4);
      const __m256i qa = _mm256_set1_epi32(w);
      acc[r][0] = dpbusd_vex(acc[r][0], qa, x0);
      acc[r][1] = dpbusd_vex(acc[r][1], qa, x1);
    }
  }
  decide(task, g, nq, jp, acc);
}
#endif

}  // namespace

namespace isa {
// screen.h ScreenRowSums at 8 lanes plus a scalar tail, both levels in one pass: the sums' order differs from the
// scalar one, which the bound allows (any order). The second level's c_k, f_k and t_k are exact in float (screen.cpp
// refine_of), and 256 e_k is rounded to nearest even as refine_row's double does, so out2 holds refine_row's bytes.
void screen_quantise_avx2(const float* v, size_t dim, int8_t* out, int8_t* out2, ScreenRowSums* r) {
  *r = ScreenRowSums{};
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 inf = _mm256_set1_ps(std::numeric_limits<float>::infinity());
  __m256 mx = _mm256_setzero_ps();
  int bad = 0;
  size_t k = 0;
  for (; k + 8 <= dim; k += 8) {
    const __m256 x = _mm256_andnot_ps(sign, _mm256_loadu_ps(v + k));
    bad |= _mm256_movemask_ps(_mm256_cmp_ps(x, inf, _CMP_NLT_UQ));  // NaN or infinite
    mx = _mm256_max_ps(mx, x);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, mx);
  float m = 0;
  for (float l : lanes) m = l > m ? l : m;
  for (size_t t = k; t < dim; ++t) {
    const float x = std::fabs(v[t]);
    bad |= !(x <= std::numeric_limits<float>::max());
    m = x > m ? x : m;
  }
  r->finite = bad == 0;
  r->max = m;
  r->refined = true;
  if (!r->finite || !(m >= kScreenMinMax && m <= kScreenMaxMax)) {
    std::memset(out, 0, dim);
    std::memset(out2, 0, dim);
    return;
  }
  r->scale = screen_scale(m);
  const float inv_s = 1.0f / r->scale;
  const __m256 inv = _mm256_set1_ps(inv_s);
  const __m256 x256 = _mm256_set1_ps(256.0f), by256 = _mm256_set1_ps(0.00390625f);
  const __m256i lo = _mm256_set1_epi32(-127), hi = _mm256_set1_epi32(127);
  __m256 y2 = _mm256_setzero_ps(), e2 = _mm256_setzero_ps(), b2 = _mm256_setzero_ps();
  __m256 f2 = _mm256_setzero_ps(), t2 = _mm256_setzero_ps();
  __m256i sum = _mm256_setzero_si256(), csum = _mm256_setzero_si256(), c2 = _mm256_setzero_si256();
  const auto bytes = [](__m256i x, int8_t* to) {  // |x| <= 127: the packs are exact
    const __m128i x16 = _mm_packs_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(to), _mm_packs_epi16(x16, x16));
  };
  for (k = 0; k + 8 <= dim; k += 8) {
    const __m256 y = _mm256_mul_ps(_mm256_loadu_ps(v + k), inv);
    const __m256i a = _mm256_min_epi32(hi, _mm256_max_epi32(lo, _mm256_cvtps_epi32(y)));  // nearest even
    const __m256 af = _mm256_cvtepi32_ps(a);
    const __m256 e = _mm256_sub_ps(y, af);
    y2 = _mm256_fmadd_ps(y, y, y2);
    e2 = _mm256_fmadd_ps(e, e, e2);
    b2 = _mm256_fmadd_ps(af, af, b2);
    sum = _mm256_add_epi32(sum, a);
    bytes(a, out + k);
    const __m256 e256 = _mm256_mul_ps(e, x256);
    const __m256i c = _mm256_min_epi32(hi, _mm256_max_epi32(lo, _mm256_cvtps_epi32(e256)));
    const __m256 cf = _mm256_cvtepi32_ps(c);
    const __m256 f = _mm256_sub_ps(e256, cf);
    const __m256 t = _mm256_fmadd_ps(cf, by256, af);
    f2 = _mm256_fmadd_ps(f, f, f2);
    t2 = _mm256_fmadd_ps(t, t, t2);
    csum = _mm256_add_epi32(csum, c);
    c2 = _mm256_add_epi32(c2, _mm256_mullo_epi32(c, c));
    bytes(c, out2 + k);
  }
  float sy = 0, se = 0, sb = 0, sf = 0, st = 0;
  int32_t si = 0, sc = 0, sc2 = 0;
  for (size_t t = k; t < dim; ++t) {  // the tail as the scalar quantiser, then refine_row's steps in float
    const float y = v[t] * inv_s;
    float a = (y + 12582912.0f) - 12582912.0f;
    a = a > 127.0f ? 127.0f : a < -127.0f ? -127.0f : a;
    const float e = y - a;
    sy += y * y;
    se += e * e;
    sb += a * a;
    si += static_cast<int32_t>(a);
    out[t] = static_cast<int8_t>(a);
    float c = (256.0f * e + 12582912.0f) - 12582912.0f;  // |256 e| < 2^22: nearest even
    c = c > 127.0f ? 127.0f : c < -127.0f ? -127.0f : c;
    const float f = 256.0f * e - c, tt = a + c * 0.00390625f;
    sf += f * f;
    st += tt * tt;
    sc += static_cast<int32_t>(c);
    sc2 += static_cast<int32_t>(c * c);
    out2[t] = static_cast<int8_t>(c);
  }
  alignas(32) int32_t ints[8];
  const auto add = [&](__m256 x, float* to) {
    _mm256_store_ps(lanes, x);
    for (float l : lanes) *to += l;
  };
  const auto addi = [&](__m256i x, int32_t* to) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(ints), x);
    for (int32_t l : ints) *to += l;
  };
  add(y2, &sy);
  add(e2, &se);
  add(b2, &sb);
  add(f2, &sf);
  add(t2, &st);
  addi(sum, &si);
  addi(csum, &sc);
  addi(c2, &sc2);
  r->y2 = sy;
  r->e2 = se;
  r->b2 = sb;
  r->sum = si;
  r->f2 = sf;
  r->t2 = st;
  r->csum = sc;
  r->c2 = sc2;
}

void screen_chunk_avx2(const ScreenTask& task) { screen_walk<kQ>(task, block); }
#ifdef KGRANK_HAVE_AVX_VNNI_KERNEL
void screen_chunk_avx2_vnni(const ScreenTask& task) { screen_walk<kQ>(task, block_vnni); }
#else
void screen_chunk_avx2_vnni(const ScreenTask& task) { screen_walk<kQ>(task, block); }
#endif
}  // namespace isa
}  // namespace kgrank
