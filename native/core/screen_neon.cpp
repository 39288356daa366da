// NEON kernel of the int8 screen (screen.h) for AArch64 CPUs with the dot-product extension (sdot, FEAT_DotProd):
// vdotq_s32 adds to each int32 lane the dot product of 4 signed bytes of each operand, so a panel's 16 bytes of
// a group (4 entities x 4 elements, screen.h's layout) against the query's 4 bytes broadcast to every lane give 4
// entities' partial dots at once, signed by signed: I exactly, no offset or correction (|I| <= 16129 d). Blocks of
// 4 query rows x 1 panel (16 entities, 4 vectors) hold 16 accumulators. The decision is screen.cpp's scalar form,
// 4 lanes at a time (every rounding as the derivation allows: vfmaq_f32 rounds once); the second level's dots
// K = sum a c + sum a2 b for a (row, panel) pair that the first leaves open, by sdot too, and its decision in the same
// form with x = fl(float(I) + float(K) 2^-8) on the lanes whose |I| and |K| are below 2^24. Compiled for aarch64 only
// (native/sources.gypi kgrank_neon_sources), the dot-product functions with the target attribute; called only when
// the CPU reports FEAT_DotProd (screen_kernel: HWCAP_ASIMDDP).
#include <arm_neon.h>

#include <cstring>

#include "screen.h"

// The dot-product intrinsics under a function's target attribute need GCC 10 or clang 16 (their arm_neon.h declares
// them per feature from then on); with an older compiler this file keeps the scalar screen kernel.
#if (defined(__clang__) && __clang_major__ >= 16) || (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 10)
#define KGRANK_SCREEN_NEON_DOT 1
#endif

namespace kgrank {
#ifdef KGRANK_SCREEN_NEON_DOT
namespace {

#if defined(__clang__)
#define KGRANK_DOTPROD __attribute__((target("dotprod")))
#else
#define KGRANK_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
#endif

constexpr size_t kQ = 4;

// Bits 0..3 of a lane mask (all-ones / zero per lane).
inline unsigned bits(uint32x4_t m) {
  static const uint32_t weights[4] = {1, 2, 4, 8};
  return vaddvq_u32(vandq_u32(m, vld1q_u32(weights)));
}

inline int32x4_t dup4(const int8_t* p) {
  int32_t w;
  std::memcpy(&w, p, 4);
  return vdupq_n_s32(w);
}

// The second level's dots of one query row against one panel (16 entities at jp): 4 vectors of 4 lanes.
KGRANK_DOTPROD void refine_dots(const ScreenTable& t, const ScreenQueries& q, size_t row, size_t jp, int32x4_t* k) {
  const size_t dpad = t.dpad;
  const size_t groups = dpad / 4;
  const size_t off = (jp / kScreenPanel) * dpad * kScreenPanel;
  const int8_t* bp = t.panels.data() + off;
  const int8_t* cp = t.panels2.data() + off;
  const int8_t* a = q.a.data() + row * dpad;
  const int8_t* a2 = q.a2.data() + row * dpad;
  for (size_t v = 0; v < 4; ++v) k[v] = vdupq_n_s32(0);
  for (size_t g = 0; g < groups; ++g) {
    const int8x16_t qa = vreinterpretq_s8_s32(dup4(a + 4 * g));
    const int8x16_t qa2 = vreinterpretq_s8_s32(dup4(a2 + 4 * g));
    for (size_t v = 0; v < 4; ++v) {
      k[v] = vdotq_s32(k[v], vld1q_s8(cp + g * 64 + 16 * v), qa);
      k[v] = vdotq_s32(k[v], vld1q_s8(bp + g * 64 + 16 * v), qa2);
    }
  }
}

// Counts and lists one block's pairs from their integer dots (screen.cpp's scalar decision, 4 lanes at a time), and
// refines the pairs it leaves open.
KGRANK_DOTPROD void decide(const ScreenTask& task, size_t g, size_t nq, size_t jp, const int32x4_t (*acc)[4]) {
  const ScreenTable& t = *task.table;
  const ScreenQueries& q = *task.queries;
  const size_t valid = task.end - jp < kScreenPanel ? task.end - jp : kScreenPanel;
  const unsigned vm = valid >= 16 ? 0xFFFFu : (1u << valid) - 1u;
  const float32x4_t one_rel = vdupq_n_f32(1.0f + kScreenRel), rel = vdupq_n_f32(kScreenRel);
  const int32x4_t lim = vdupq_n_s32(kScreenExact);
  const bool dist = t.distance();
  for (size_t r = 0; r < nq; ++r) {
    const size_t row = task.r0 + g + r;
    const float32x4_t sq = vdupq_n_f32(q.scale[row]), nq_v = vdupq_n_f32(q.norm[row]);
    const float32x4_t dq = vdupq_n_f32(q.resid[row]);
    const float32x4_t absk = vdupq_n_f32(q.absm[row]);
    const float32x4_t thr_q = vdupq_n_f32(q.threshold[row]);
    // The decision of one level on 4 lanes (entities j ..) from x (I, or I + K / 256) and the error terms; a distance
    // table's offset moves the threshold as in the scalar kernel (screen.cpp).
    const auto side = [&](float32x4_t x, float32x4_t st, float32x4_t err, size_t j, unsigned* gt, unsigned* lt) {
      const float32x4_t approx = vmulq_f32(vmulq_f32(x, st), sq);
      float32x4_t thr = thr_q, mag = vabsq_f32(approx);
      if (dist) {
        const float32x4_t off = vld1q_f32(t.offset.data() + j);
        thr = vaddq_f32(thr_q, off);
        mag = vaddq_f32(mag, off);
      }
      mag = vaddq_f32(mag, vabsq_f32(thr));
      const float32x4_t m = vfmaq_f32(vfmaq_f32(absk, mag, rel), err, one_rel);
      *gt = bits(vcgtq_f32(vsubq_f32(approx, m), thr));
      *lt = bits(vcltq_f32(vaddq_f32(approx, m), thr));
    };
    unsigned gt = 0, lt = 0;
    for (size_t v = 0; v < 4; ++v) {
      const size_t j = jp + 4 * v;
      const float32x4_t err =
          vfmaq_f32(vmulq_f32(dq, vld1q_f32(t.qnorm.data() + j)), nq_v, vld1q_f32(t.slack.data() + j));
      unsigned g1, l1;
      side(vcvtq_f32_s32(acc[r][v]), vld1q_f32(t.scale.data() + j), err, j, &g1, &l1);
      gt |= g1 << (4 * v);
      lt |= l1 << (4 * v);
    }
    const size_t k = g + r;
    // Certified above: counted, or listed with the undecided (ScreenTask::list_above).
    unsigned above = gt & vm;
    unsigned und = ~(gt | lt) & vm;
    if (und != 0 && q.scale[row] == q.scale[row]) {
      int32x4_t kk[4];
      refine_dots(t, q, row, jp, kk);
      if (task.refined != nullptr) *task.refined += kScreenPanel;
      const float32x4_t r2 = vdupq_n_f32(q.resid2[row]), an = vdupq_n_f32(q.anorm2[row]);
      unsigned gt2 = 0, lt2 = 0;
      for (size_t v = 0; v < 4; ++v) {
        const size_t j = jp + 4 * v;
        const uint32x4_t small = vandq_u32(vcltq_s32(vabsq_s32(acc[r][v]), lim), vcltq_s32(vabsq_s32(kk[v]), lim));
        const unsigned exact = bits(small);
        const float32x4_t x =
            vaddq_f32(vcvtq_f32_s32(acc[r][v]), vmulq_f32(vcvtq_f32_s32(kk[v]), vdupq_n_f32(0.00390625f)));
        const float32x4_t err =
            vfmaq_f32(vfmaq_f32(vmulq_f32(an, vld1q_f32(t.cnorm.data() + j)), r2, vld1q_f32(t.qnorm2.data() + j)), nq_v,
                      vld1q_f32(t.slack2.data() + j));
        unsigned g2, l2;
        side(x, vld1q_f32(t.scale.data() + j), err, j, &g2, &l2);
        gt2 |= (g2 & exact) << (4 * v);
        lt2 |= (l2 & exact) << (4 * v);
      }
      gt2 &= und;
      above |= gt2;
      und &= ~(gt2 | lt2);
    }
    if (task.list_above) {
      und |= above;
    } else {
      task.greater[k] += static_cast<uint32_t>(__builtin_popcount(above));
    }
    screen_list(task, k, jp, und);
  }
}

KGRANK_DOTPROD void block(const ScreenTask& task, size_t g, size_t nq, size_t jp) {
  const ScreenTable& t = *task.table;
  const ScreenQueries& q = *task.queries;
  const size_t dpad = t.dpad;
  const size_t groups = dpad / 4;
  const int8_t* panel = t.panels.data() + (jp / kScreenPanel) * dpad * kScreenPanel;
  const int8_t* a[kQ];
  for (size_t r = 0; r < kQ; ++r) a[r] = q.a.data() + (task.r0 + g + (r < nq ? r : 0)) * dpad;
  int32x4_t acc[kQ][4];
  for (size_t r = 0; r < kQ; ++r) {
    for (size_t v = 0; v < 4; ++v) acc[r][v] = vdupq_n_s32(0);
  }
  for (size_t k = 0; k < groups; ++k) {
    int8x16_t x[4];
    for (size_t v = 0; v < 4; ++v) x[v] = vld1q_s8(panel + k * 64 + 16 * v);
    for (size_t r = 0; r < kQ; ++r) {
      const int8x16_t qa = vreinterpretq_s8_s32(dup4(a[r] + 4 * k));
      for (size_t v = 0; v < 4; ++v) acc[r][v] = vdotq_s32(acc[r][v], x[v], qa);
    }
  }
  decide(task, g, nq, jp, acc);
}

}  // namespace

namespace isa {
bool screen_neon_dot_built() { return true; }
void screen_chunk_neon_dot(const ScreenTask& task) { screen_walk<kQ>(task, block); }
}  // namespace isa
#else
namespace isa {
bool screen_neon_dot_built() { return false; }
void screen_chunk_neon_dot(const ScreenTask& task) { screen_chunk_scalar(task); }
}  // namespace isa
#endif
}  // namespace kgrank
