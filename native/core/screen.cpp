// The int8 screen (screen.h): quantisation, the scalar kernel, the dispatch. docs/screen.md has the full derivation;
// in short, for one pair with query q and candidate t (float32, d elements, canonical order):
//
//   quantisation: a = round(q / s_q), b = round(t / s_t), clamped to [-127, 127], s_q and s_t floats; q^ = s_q a and
//     t^ = s_t b as reals, dq = q - q^, dt = t - t^ (computed exactly in double: both terms are multiples of
//     ulp(s) / 2 below 2^9 s). The integer dot I = sum a_i b_i is exact (int32: |I| <= 16129 d), and
//       S - s_q s_t I = sum q_i dt_i + sum t^_i dq_i,   S = sum q_i t_i (exact),
//     so |S - s_q s_t I| <= ||q|| ||dt|| + ||t^|| ||dq||  (Cauchy-Schwarz; ||.|| the 2-norm, actual residuals).
//   float32 evaluation: the path's score s is the chain acc = fma(q_k, t_k, acc), k = 0 .. d-1, one rounding per
//     step (relative u = 2^-24 in the normal range, absolute 2^-150 in the subnormal range), so
//       |s - S| <= gamma_d sum |q_i t_i| + d 2^-150 (1 + gamma_d) <= gamma_d ||q|| ||t|| + 2^-101,
//     gamma_d = d u / (1 - d u); no step overflows when max|q|, max|t| <= 2^50 (sum |q_i t_i| <= d 2^100).
//   together: |s - s_q s_t I| <= E = nq * slack_t + resid_q * qnorm_t + 2^-101, with nq >= ||q||, resid_q >= ||dq||,
//     slack_t >= ||dt|| + gamma_d ||t||, qnorm_t >= ||t^|| (each computed in double, then rounded up to float).
//   decision, in float32: approx = fl(fl(float(I) s_t) s_q) (relative error below 4u), M = E' (1 + 2^-16) +
//     (|approx| + |thr|) 2^-16 + 2^-100 where E' is E's first two terms in float (relative error below 3u): every
//     rounding of approx, M and of approx -/+ M is below u times the terms, far inside the 2^-16 margins, so
//     fl(approx - M) > thr implies s > thr and fl(approx + M) < thr implies s < thr. Anything else is undecided and
//     scored exactly; s == thr is always undecided (the interval holds s), so exact ties are never screened.
//   rows never screened: a NaN or infinite element, max|v| outside [2^-50, 2^50] (no float overflow of the score or
//     of the decision's terms, no underflow of s_q s_t), a non-finite threshold: their scale is NaN, so every
//     comparison is false and every pair undecided (scored exactly, NaN counted as the path counts it). An all-zero
//     row (max|v| = 0) is screened with s = 0: against a finite vector every step is fma(x, +-0, acc), so its score
//     is +-0 exactly and approx = 0, E = 0 hold.
#include "screen.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>

#include "except.h"
#include "thread_pool.h"

#if defined(__x86_64__) || defined(_M_X64)
#ifdef _MSC_VER
#include <intrin.h>
#else
#include <cpuid.h>
#endif
#endif

namespace kgrank {
namespace {

constexpr double kMinMax = 8.881784197001252e-16;  // 2^-50
constexpr double kMaxMax = 1125899906842624.0;     // 2^50

// x rounded up to a float, with a relative margin of 2^-40 for the double rounding that computed x.
float up(double x) {
  const double y = x * (1.0 + 9.094947017729282e-13);
  float f = static_cast<float>(y);
  if (static_cast<double>(f) < y) f = std::nextafter(f, std::numeric_limits<float>::infinity());
  return f;
}

struct RowQuant {
  float scale;  // NaN: never screened
  double norm, resid, qnorm;
  int32_t sum;
};

// Quantises v (element k at v[map ? map[k] : k]) into out[0 .. dim).
RowQuant quantise_row(const float* v, const uint32_t* map, size_t dim, int8_t* out) {
  RowQuant r{std::numeric_limits<float>::quiet_NaN(), 0, 0, 0, 0};
  double mx = 0;
  bool finite = true;
  for (size_t k = 0; k < dim; ++k) {
    const double x = v[map ? map[k] : k];
    if (!std::isfinite(x)) finite = false;
    mx = std::max(mx, std::fabs(x));
  }
  std::fill(out, out + dim, int8_t{0});
  if (finite && mx == 0) {  // every element +-0: the score is +-0 exactly, s = 0 and E = 0 describe it
    r.scale = 0.0f;
    return r;
  }
  if (!finite || !(mx >= kMinMax && mx <= kMaxMax)) return r;
  const float s = static_cast<float>(mx / 127.0);
  double n2 = 0, d2 = 0;
  int64_t b2 = 0;
  int32_t sum = 0;
  for (size_t k = 0; k < dim; ++k) {
    const double x = v[map ? map[k] : k];
    double a = std::nearbyint(x / s);
    a = std::min(127.0, std::max(-127.0, a));
    const double res = x - static_cast<double>(s) * a;  // exact (see the header comment)
    n2 += x * x;
    d2 += res * res;
    b2 += static_cast<int64_t>(a) * static_cast<int64_t>(a);
    sum += static_cast<int32_t>(a);
    out[k] = static_cast<int8_t>(a);
  }
  r.scale = s;
  r.norm = std::sqrt(n2);
  r.resid = std::sqrt(d2);
  r.qnorm = static_cast<double>(s) * std::sqrt(static_cast<double>(b2));
  r.sum = sum;
  return r;
}

double gamma_of(size_t dim) {
  const double nu = static_cast<double>(dim) * 5.9604644775390625e-08;  // d 2^-24
  return nu < 0.5 ? nu / (1.0 - nu) : std::numeric_limits<double>::infinity();
}

}  // namespace

bool screen_quantise_table(const float* rows, size_t n, size_t width, const uint32_t* map, size_t dim,
                           unsigned threads, ScreenTable* t) {
  t->n = n;
  t->dim = dim;
  t->dpad = (dim + 3) / 4 * 4;
  const size_t panels = (n + kScreenPanel - 1) / kScreenPanel;
  const size_t padded = panels * kScreenPanel;
  KGRANK_TRY {
    t->panels.assign(panels * t->dpad * kScreenPanel, int8_t{0});
    t->scale.assign(padded, 0.0f);
    t->slack.assign(padded, 0.0f);
    t->qnorm.assign(padded, 0.0f);
    t->corr.assign(padded, 0);
  }
  KGRANK_CATCH(const std::bad_alloc&) { return false; }
  const double gamma = gamma_of(dim);
  const size_t dpad = t->dpad;
  constexpr size_t kPanelsPerTask = 64;
  const size_t tasks = (panels + kPanelsPerTask - 1) / kPanelsPerTask;
  bool ok = true;
  parallel_for(tasks, threads, [&](size_t task) {
    std::vector<int8_t> buf;
    KGRANK_TRY { buf.assign(dpad, int8_t{0}); }
    KGRANK_CATCH(const std::bad_alloc&) {
      ok = false;  // benign race: every writer stores false
      return;
    }
    const size_t p_end = std::min(panels, (task + 1) * kPanelsPerTask);
    for (size_t p = task * kPanelsPerTask; p < p_end; ++p) {
      int8_t* panel = t->panels.data() + p * dpad * kScreenPanel;
      for (size_t lane = 0; lane < kScreenPanel; ++lane) {
        const size_t e = p * kScreenPanel + lane;
        if (e >= n) break;
        const RowQuant r = quantise_row(rows + e * width, map, dim, buf.data());
        for (size_t k = 0; k < dpad; ++k) panel[(k / 4) * 64 + lane * 4 + (k % 4)] = buf[k];
        t->scale[e] = std::isfinite(gamma) ? r.scale : std::numeric_limits<float>::quiet_NaN();
        t->slack[e] = r.scale == r.scale ? up(r.resid + gamma * r.norm) : 0.0f;
        t->qnorm[e] = r.scale == r.scale ? up(r.qnorm) : 0.0f;
        t->corr[e] = 128 * r.sum;
      }
    }
  });
  return ok;
}

bool screen_quantise_queries(const float* query, size_t rows, size_t dim, const float* threshold,
                             ScreenQueries* q) {
  q->rows = rows;
  q->dpad = (dim + 3) / 4 * 4;
  KGRANK_TRY {
    q->a.assign(rows * q->dpad, int8_t{0});
    q->scale.assign(rows, 0.0f);
    q->norm.assign(rows, 0.0f);
    q->resid.assign(rows, 0.0f);
    q->threshold.assign(threshold, threshold + rows);
  }
  KGRANK_CATCH(const std::bad_alloc&) { return false; }
  for (size_t i = 0; i < rows; ++i) {
    const RowQuant r = quantise_row(query + i * dim, nullptr, dim, q->a.data() + i * q->dpad);
    const bool ok = r.scale == r.scale && std::isfinite(threshold[i]);
    q->scale[i] = ok ? r.scale : std::numeric_limits<float>::quiet_NaN();
    q->norm[i] = ok ? up(r.norm) : 0.0f;
    q->resid[i] = ok ? up(r.resid) : 0.0f;
  }
  return true;
}

namespace isa {
void screen_chunk_scalar(const ScreenTask& task) {
  const ScreenTable& t = *task.table;
  const ScreenQueries& q = *task.queries;
  const size_t dpad = t.dpad;
  for (size_t k = 0; k < task.nr; ++k) {
    const size_t row = task.r0 + k;
    const int8_t* a = q.a.data() + row * dpad;
    const float sq = q.scale[row], nq = q.norm[row], dq = q.resid[row], thr = q.threshold[row];
    uint32_t g = 0, u = 0;
    for (size_t j = task.begin; j < task.end; ++j) {
      const int8_t* panel = t.panels.data() + (j / kScreenPanel) * dpad * kScreenPanel;
      const size_t lane = j % kScreenPanel;
      int32_t dot = 0;
      for (size_t e = 0; e < dpad; ++e) dot += int32_t{a[e]} * int32_t{panel[(e / 4) * 64 + lane * 4 + (e % 4)]};
      const float approx = (static_cast<float>(dot) * t.scale[j]) * sq;
      const float err = nq * t.slack[j] + dq * t.qnorm[j];
      const float m = err * (1.0f + kScreenRel) + (std::fabs(approx) + std::fabs(thr)) * kScreenRel + kScreenAbs;
      if (approx - m > thr) {
        ++g;
      } else if (!(approx + m < thr)) {
        task.und[k * task.cap + u++] = static_cast<uint32_t>(j);
      }
    }
    task.greater[k] += g;
    task.und_n[k] = u;
  }
}
}  // namespace isa

namespace {
bool has_avx512_vnni() {
#if defined(__x86_64__) || defined(_M_X64)
#ifdef _MSC_VER
  int regs[4];
  __cpuidex(regs, 7, 0);
  return (static_cast<unsigned>(regs[2]) >> 11) & 1u;
#else
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(7, 0, a, b, c, d);
  return (c >> 11) & 1u;
#endif
#else
  return false;
#endif
}
}  // namespace

ScreenChunkFn screen_kernel(SimdLevel level, bool* vector) {
  *vector = false;
#ifdef KGRANK_HAVE_AVX512
  static const bool vnni = has_avx512_vnni();
  if (level == SimdLevel::AVX512 && simd_supported(level) && vnni) {
    *vector = true;
    return isa::screen_chunk_avx512_vnni;
  }
#endif
#ifdef KGRANK_HAVE_AVX2
  if ((level == SimdLevel::AVX2 || level == SimdLevel::AVX512) && simd_supported(SimdLevel::AVX2)) {
    *vector = true;
    return isa::screen_chunk_avx2;
  }
#endif
  (void)level;
  return isa::screen_chunk_scalar;
}

}  // namespace kgrank
