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
#include <atomic>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <limits>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "except.h"
#include "thread_pool.h"

#if defined(KGRANK_HAVE_NEON) && defined(__linux__)
#include <sys/auxv.h>
#endif
#ifdef KGRANK_HAVE_AMX_KERNEL
#include <sys/syscall.h>
#include <unistd.h>
#endif
#if (defined(__unix__) || defined(__APPLE__)) && !defined(__wasi__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace kgrank {

namespace {
constexpr size_t kHugeFrom = size_t{8} << 20, kHugePage = size_t{2} << 20;
}
void* screen_alloc(size_t bytes) {
  if (bytes < kHugeFrom) return ::operator new (bytes, std::align_val_t{64});
  void* p = ::operator new (bytes, std::align_val_t{kHugePage});
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  ::madvise(p, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);  // whole huge pages of the block; advice only
#endif
  return p;
}
void screen_free(void* p, size_t bytes) {
  if (bytes < kHugeFrom) ::operator delete (p, std::align_val_t{64});
  else ::operator delete (p, std::align_val_t{kHugePage});
}

namespace {

constexpr float kMinMax = kScreenMinMax;
constexpr float kMaxMax = kScreenMaxMax;

// x rounded up to a float, with a relative margin of 2^-40 for the double rounding that computed x.
float up(double x) {
  const double y = x * (1.0 + 9.094947017729282e-13);
  float f = static_cast<float>(y);
  if (static_cast<double>(f) < y) f = std::nextafter(f, std::numeric_limits<float>::infinity());
  return f;
}

// The AVX-512 kernels' per-row margin: |thr| 2^-16 + 2^-100, plus a distance row's slop, rounded up (docs/screen.md,
// steps 5 and 7).
float margin_of(float thr, double slop = 0) {
  return up(std::fabs(static_cast<double>(thr)) * 0x1p-16 + 0x1p-100 + slop);
}

// ||v||^2 in double: the squares of floats are exact there and the sum is within d 2^-53 of itself (distance_row's
// slop covers it).
double sum_squares(const float* v, size_t dim) {
  double s = 0;
  for (size_t k = 0; k < dim; ++k) s += static_cast<double>(v[k]) * v[k];
  return s;
}

double gamma_of(size_t dim) {
  const double nu = static_cast<double>(dim) * 5.9604644775390625e-08;  // d 2^-24
  return nu < 0.5 ? nu / (1.0 - nu) : std::numeric_limits<double>::infinity();
}

// A distance row's decision constants (docs/screen.md, step 7). The float32 path scores -S, S = the chain
// acc = fma(x_k, x_k, acc) of x_k = fl(t_k - q_k): each term is (t_k - q_k)^2 (1 + e)^2 and each step adds one
// rounding, so with D = ||t - q||^2 (exact), |S - D| <= gamma_{d+2} D + d 2^-149 (underflow; below alpha = 2^-120), and
// no step overflows when max|q|, max|t| <= 2^50 (D <= d 2^102). With R = -thr (the threshold score; thr <= 0):
//   S < R (the candidate scores above thr) when D < Ra = (R - alpha) / (1 + gamma),
//   S > R (below)                          when D > Rb = (R + alpha) / (1 - gamma),
// and D = Q2 + X2 - 2 p (Q2 = ||q||^2, X2 = ||t||^2, p = q . t), so above when p - X2 / 2 > (Q2 - Ra) / 2 and below
// when p - X2 / 2 < (Q2 - Rb) / 2: the dot's certified decision against the midpoint of the two, with the half gap
// (Rb - Ra) / 4 in the margin, and the entity's X2 / 2 as its offset (ScreenTable::offset). The slop adds the
// rounding of the midpoint to float and 2^-30 (Q2 + R) for the double arithmetic (Q2 in double is within d 2^-53 of
// itself), all times 1 + 2^-16 for the kernels' roundings of the margin. A positive or non-finite thr (never a
// distance's own score: an external true score) is not screened.
struct DistanceRow {
  bool ok = false;
  float thr = 0;
  double slop = 0;
};
DistanceRow distance_row(double q2, float score, size_t dim) {
  DistanceRow r;
  const double g = gamma_of(dim + 2);
  if (!std::isfinite(score) || score > 0 || !std::isfinite(g) || !std::isfinite(q2)) return r;
  const double big = -static_cast<double>(score), alpha = 0x1p-120;
  const double ra = (big - alpha) / (1 + g), rb = (big + alpha) / (1 - g);
  const double mid = (q2 - (ra + rb) / 2) / 2, gap = (rb - ra) / 4;
  r.ok = true;
  r.thr = static_cast<float>(mid);
  // The 2^-16 excess covers the kernels' own float roundings of the margin that carries the slop (a few u of it).
  r.slop = (gap + std::fabs(mid - static_cast<double>(r.thr)) + (q2 + big) * 0x1p-30) * (1 + 0x1p-16);
  return r;
}

struct RowQuant {
  float scale;  // NaN: never screened
  double norm, resid, qnorm;
  int32_t sum;
};

// The bounds of one quantised row from its sums in units of s (ScreenRowSums): with y_k = fl(v_k fl(1 / s)),
// |y_k - v_k / s| <= 2u 127.5 + 2^-149 < 2^-15, so ||v|| <= s (sqrt(sum y^2) + sqrt(d) 2^-15); e_k = y_k - a_k is
// exact (a_k = 0, or Sterbenz: y_k within [a_k / 2, 2 a_k]), so ||v - s a|| <= s (sqrt(sum e^2) + sqrt(d) 2^-15);
// each float sum of squares (any order) is below its true value by at most gamma_d of it plus d 2^-149 (underflow),
// hence the factor (1 + 2 gamma_d) and the term d 2^-140.
RowQuant finish_row(const ScreenRowSums& r, size_t dim) {
  RowQuant q{std::numeric_limits<float>::quiet_NaN(), 0, 0, 0, 0};
  if (!r.finite) return q;
  if (r.max == 0) {  // every element +-0: the score is +-0 exactly, s = 0 and E = 0 describe it
    q.scale = 0.0f;
    return q;
  }
  if (!(r.max >= kMinMax && r.max <= kMaxMax)) return q;
  const double g = 2 * gamma_of(dim), d = static_cast<double>(dim);
  const double tail = std::sqrt(d) * 3.0517578125e-05, under = d * 7.174648137343064e-43;  // 2^-15, 2^-140
  const double s = r.scale;
  q.scale = r.scale;
  q.norm = s * (std::sqrt(r.y2 * (1 + g) + under) + tail);
  q.resid = s * (std::sqrt(r.e2 * (1 + g) + under) + tail);
  q.qnorm = s * std::sqrt(r.b2 * (1 + g) + under);
  q.sum = r.sum;
  return q;
}

// The second level of one quantised row (v canonical, a its first level, scale s): c_k = round(256 e_k) clamped to
// [-127, 127] with e_k = y_k - a_k, y_k = fl(v_k fl(1 / s)). In double, e_k and f_k = 256 e_k - c_k are exact (y_k
// is a float below 2^7 in magnitude, a_k and c_k integers), so with |y_k - v_k / s| < 2^-15 (finish_row),
//   ||v - s (a + c / 256)|| <= s (||f|| / 256 + sqrt(d) 2^-15),  ||s (a + c / 256)|| = s ||a + c / 256||,
// and ||c|| exactly from integers; each double sum of d squares is within d 2^-53 of itself, inside the factor
// (1 + 2 gamma_d) used for the float sums. A row that is never screened (scale NaN) or all zero gets c = 0 and zero
// terms (its first level already describes it exactly, or never decides).
struct RowRefine {
  double resid2 = 0, norm2 = 0, cnorm = 0;
  int32_t sum = 0;
};
// The second level's terms from its sums: f2 = sum f_k^2, t2 = sum (a_k + c_k / 256)^2, c2 = sum c_k^2 and csum =
// sum c_k, each sum of squares below its true value by at most gamma_d of it plus `under` (scale > 0).
RowRefine refine_terms(double f2, double t2, double c2, int32_t csum, size_t dim, float scale, double under) {
  const double g = 1 + 2 * gamma_of(dim), d = static_cast<double>(dim);
  const double s = scale;
  RowRefine r;
  r.resid2 = s * (std::sqrt(f2 * g + under) * 0.00390625 + std::sqrt(d) * 3.0517578125e-05);
  r.norm2 = s * std::sqrt(t2 * g + under);
  r.cnorm = s * std::sqrt(c2 * g) * 0.00390625;
  r.sum = csum;
  return r;
}
RowRefine refine_row(const float* v, size_t dim, const int8_t* a, float scale, int8_t* c) {
  std::fill(c, c + dim, int8_t{0});
  if (!(scale > 0)) return RowRefine{};
  const float inv = 1.0f / scale;
  double f2 = 0, t2 = 0, c2 = 0;
  int32_t sum = 0;
  for (size_t k = 0; k < dim; ++k) {
    const double e = static_cast<double>(v[k] * inv) - a[k];
    double ck = (256.0 * e + 6755399436890112.0) - 6755399436890112.0;  // nearest (|256 e| < 2^51), no libm call
    ck = ck > 127.0 ? 127.0 : ck < -127.0 ? -127.0 : ck;
    const double f = 256.0 * e - ck;
    const double tk = a[k] + ck * 0.00390625;
    f2 += f * f;
    t2 += tk * tk;
    c2 += ck * ck;
    sum += static_cast<int32_t>(ck);
    c[k] = static_cast<int8_t>(ck);
  }
  return refine_terms(f2, t2, c2, sum, dim, scale, 0.0);  // double sums: no underflow of these squares
}

// The same bounds from a quantiser's float sums of f^2 and t^2 (ScreenRowSums, refined), in any order: f_k and t_k
// are exact in float (|f_k| <= 0.5 or the clamp's excess, a multiple of the ulp of 256 e_k; t_k a multiple of 2^-8
// below 128), so each sum is below its true value by at most gamma_d of it plus d 2^-149 (underflow of f_k^2), which
// the factor (1 + 2 gamma_d) and the term d 2^-140 cover as in finish_row; the sums of c^2 and c are exact integers
// (at most 127^2 d < 2^31).
RowRefine refine_of(const ScreenRowSums& r, size_t dim, float scale) {
  if (!(scale > 0)) return RowRefine{};
  return refine_terms(r.f2, r.t2, static_cast<double>(r.c2), r.csum, dim, scale,
                      static_cast<double>(dim) * 7.174648137343064e-43);  // 2^-140
}

// Quantises v (element k at v[map ? map[k] : k]; `buf` holds dim floats) into out[0 .. dim) and its second level
// into out2[0 .. dim) with the level's kernel: the first level's bounds are returned, the second's in *r2 (the
// kernel's own sums where it makes the second level, else refine_row's).
RowQuant quantise_row(ScreenQuantFn fn, const float* v, const uint32_t* map, size_t dim, int8_t* out, int8_t* out2,
                      float* buf, RowRefine* r2) {
  if (map != nullptr) {
    for (size_t k = 0; k < dim; ++k) buf[k] = v[map[k]];
    v = buf;
  }
  ScreenRowSums r;
  fn(v, dim, out, out2, &r);
  const RowQuant q = finish_row(r, dim);
  *r2 = r.refined ? refine_of(r, dim, q.scale) : refine_row(v, dim, out, q.scale, out2);
  return q;
}

}  // namespace

bool screen_quantise_table(const float* rows, size_t n, size_t width, const uint32_t* map, size_t dim, SimdLevel level,
                           unsigned threads, ScreenTable* t, bool distance) {
  const ScreenQuantFn quant = screen_quantiser(level);
  t->n = n;
  t->dim = dim;
  t->dpad = (dim + 3) / 4 * 4;
  t->level = level;
  const size_t panels = (n + kScreenPanel - 1) / kScreenPanel;
  const size_t padded = panels * kScreenPanel;
  KGRANK_TRY {
    // kScreenTileSlack bytes past the last panel: the AMX kernel reads whole 64-element steps (screen_avx512.cpp).
    // The panels are written by the tasks below (first touched in parallel); the slack is zeroed here.
    t->panels.allocate(panels * t->dpad * kScreenPanel + kScreenTileSlack);
    t->scale.assign(padded, 0.0f);
    t->slack.assign(padded, 0.0f);
    t->qnorm.assign(padded, 0.0f);
    t->corr.assign(padded, 0);
    t->panels2.allocate(panels * t->dpad * kScreenPanel + kScreenTileSlack);
    t->slack2.assign(padded, 0.0f);
    t->qnorm2.assign(padded, 0.0f);
    t->cnorm.assign(padded, 0.0f);
    t->corr2.assign(padded, 0);
    if (distance) t->offset.assign(padded, 0.0f);
    else t->offset.clear();
  }
  KGRANK_CATCH(const std::bad_alloc&) { return false; }
  const double gamma = gamma_of(dim);
  const size_t dpad = t->dpad;
  std::memset(t->panels.mutable_data() + panels * dpad * kScreenPanel, 0, kScreenTileSlack);
  std::memset(t->panels2.mutable_data() + panels * dpad * kScreenPanel, 0, kScreenTileSlack);
  bool identity = true;
  for (size_t k = 0; k < dim; ++k) identity = identity && map[k] == k;
  KGRANK_TRY {
    if (identity) t->map.clear();
    else t->map.assign(map, map + dim);
  }
  KGRANK_CATCH(const std::bad_alloc&) { return false; }
  if (identity) map = nullptr;
  constexpr size_t kPanelsPerTask = 64;
  const size_t tasks = (panels + kPanelsPerTask - 1) / kPanelsPerTask;
  std::atomic<bool> ok{true};
  parallel_for(tasks, threads, [&](size_t task) {
    std::vector<int8_t> buf, buf2;
    std::vector<float> row;
    KGRANK_TRY {
      buf.assign(dpad, int8_t{0});
      buf2.assign(dpad, int8_t{0});
      row.assign(dim, 0.0f);
    }
    KGRANK_CATCH(const std::bad_alloc&) {
      ok.store(false);
      return;
    }
    const size_t p_end = std::min(panels, (task + 1) * kPanelsPerTask);
    for (size_t p = task * kPanelsPerTask; p < p_end; ++p) {
      int8_t* panel = t->panels.mutable_data() + p * dpad * kScreenPanel;
      int8_t* panel2 = t->panels2.mutable_data() + p * dpad * kScreenPanel;
      if ((p + 1) * kScreenPanel > n) {  // the last panel, part padding: its missing lanes are zero
        std::memset(panel, 0, dpad * kScreenPanel);
        std::memset(panel2, 0, dpad * kScreenPanel);
      }
      for (size_t lane = 0; lane < kScreenPanel; ++lane) {
        const size_t e = p * kScreenPanel + lane;
        if (e >= n) break;
        RowRefine r2;
        const RowQuant r = quantise_row(quant, rows + e * width, map, dim, buf.data(), buf2.data(), row.data(), &r2);
        for (size_t k = 0; k < dpad; k += 4) {
          std::memcpy(panel + (k / 4) * 64 + lane * 4, buf.data() + k, 4);
          std::memcpy(panel2 + (k / 4) * 64 + lane * 4, buf2.data() + k, 4);
        }
        const bool screened = r.scale == r.scale;
        t->scale[e] = std::isfinite(gamma) ? r.scale : std::numeric_limits<float>::quiet_NaN();
        t->slack[e] = screened ? up(r.resid + gamma * r.norm) : 0.0f;  // gamma_d: the float32 chain
        t->qnorm[e] = screened ? up(r.qnorm) : 0.0f;
        t->corr[e] = 128 * r.sum;
        t->slack2[e] = screened ? up(r2.resid2 + gamma * r.norm) : 0.0f;
        t->qnorm2[e] = screened ? up(r2.norm2) : 0.0f;
        t->cnorm[e] = screened ? up(r2.cnorm) : 0.0f;
        t->corr2[e] = 128 * r2.sum;
        if (distance && screened) {
          // In canonical order, as quantise_row read it (the double sum's rounding depends on the order).
          const float* canon = map != nullptr ? row.data() : rows + e * width;
          t->offset[e] = static_cast<float>(sum_squares(canon, dim) / 2);
        }
      }
    }
  });
  return ok.load();
}

bool ScreenTable::made_for(size_t rows, size_t d, const uint32_t* order, bool dist) const {
  if (rows != n || d != dim || dist != distance()) return false;
  for (size_t k = 0; k < d; ++k) {
    if (order[k] != (map.empty() ? k : map[k])) return false;
  }
  return true;
}

bool screen_quantise_queries(const float* query, size_t rows, size_t dim, const float* threshold, SimdLevel level,
                             ScreenQueries* q, bool distance) {
  const ScreenQuantFn quant = screen_quantiser(level);
  q->rows = rows;
  q->dpad = (dim + 3) / 4 * 4;
  q->dim = dim;
  q->distance = distance;
  KGRANK_TRY {
    q->a.assign(rows * q->dpad, int8_t{0});
    q->au.assign(rows * q->dpad, uint8_t{128});
    q->scale.assign(rows, 0.0f);
    q->norm.assign(rows, 0.0f);
    q->resid.assign(rows, 0.0f);
    q->threshold.assign(threshold, threshold + rows);
    q->margin.assign(rows, 0.0f);
    q->absm.assign(rows, 0.0f);
    q->q2.assign(distance ? rows : 0, 0.0);
    q->a2.assign(rows * q->dpad, int8_t{0});
    q->a2u.assign(rows * q->dpad, uint8_t{128});
    q->resid2.assign(rows, 0.0f);
    q->anorm2.assign(rows, 0.0f);
  }
  KGRANK_CATCH(const std::bad_alloc&) { return false; }
  for (size_t i = 0; i < rows; ++i) {
    int8_t* a = q->a.data() + i * q->dpad;
    int8_t* a2 = q->a2.data() + i * q->dpad;
    RowRefine r2;
    const RowQuant r = quantise_row(quant, query + i * dim, nullptr, dim, a, a2, nullptr, &r2);
    const bool ok = r.scale == r.scale;
    q->resid2[i] = ok ? up(r2.resid2) : 0.0f;
    q->anorm2[i] = ok ? up(r2.cnorm) : 0.0f;
    q->norm[i] = ok ? up(r.norm) : 0.0f;
    q->resid[i] = ok ? up(r.resid) : 0.0f;
    if (distance) q->q2[i] = sum_squares(query + i * dim, dim);
    screen_set_threshold(q, i, threshold[i], ok ? r.scale : std::numeric_limits<float>::quiet_NaN());
    for (size_t k = 0; k < q->dpad; ++k) {
      q->au[i * q->dpad + k] = static_cast<uint8_t>(static_cast<int>(a[k]) + 128);
      q->a2u[i * q->dpad + k] = static_cast<uint8_t>(static_cast<int>(a2[k]) + 128);
    }
  }
  return true;
}

void screen_set_threshold(ScreenQueries* q, size_t i, float thr, float scale) {
  bool ok = std::isfinite(thr);
  double slop = 0;
  if (q->distance) {
    const DistanceRow d = distance_row(q->q2[i], thr, q->dim);
    ok = d.ok;
    thr = d.ok ? d.thr : thr;
    slop = d.slop;
  }
  q->threshold[i] = thr;
  q->margin[i] = ok ? margin_of(thr, slop) : 0.0f;
  q->absm[i] = !ok ? 0.0f : q->distance ? up(0x1p-100 + slop) : kScreenAbs;
  q->scale[i] = ok ? scale : std::numeric_limits<float>::quiet_NaN();
}

// ---- A quantised table on disk (screen.h ScreenFileKey) ----

namespace {
uint64_t digest_of(const void* data, size_t bytes) {
  // Four independent lanes of eight bytes each (so their multiply chains overlap): multiply, rotate, multiply (the
  // 64-bit mixing of well-known non-cryptographic hashes); then the lanes, the tail bytes and the length folded in,
  // and a final avalanche.
  constexpr uint64_t k1 = 0x9E3779B185EBCA87ULL, k2 = 0xC2B2AE3D27D4EB4FULL;
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h[4] = {0x27D4EB2F165667C5ULL, 0x165667B19E3779F9ULL, 0x85EBCA77C2B2AE63ULL, 0x9E3779B97F4A7C15ULL};
  const auto round = [&](uint64_t acc, uint64_t w) {
    w *= k2;
    w = (w << 31) | (w >> 33);
    acc ^= w * k1;
    return ((acc << 27) | (acc >> 37)) * k1 + 0x85EBCA77C2B2AE63ULL;
  };
  size_t i = 0;
  for (; i + 32 <= bytes; i += 32) {
    uint64_t w[4];
    std::memcpy(w, p + i, 32);
    for (size_t j = 0; j < 4; ++j) h[j] = round(h[j], w[j]);
  }
  uint64_t out = round(round(round(round(0, h[0]), h[1]), h[2]), h[3]);
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    out = round(out, w);
  }
  for (; i < bytes; ++i) out = (out ^ (p[i] * k1)) * k2;
  out ^= static_cast<uint64_t>(bytes);
  out ^= out >> 33;
  out *= k2;
  out ^= out >> 29;
  out *= 0x165667B19E3779F9ULL;
  out ^= out >> 32;
  return out;
}
}  // namespace

uint64_t screen_digest(const void* data, size_t bytes, unsigned threads) {
  constexpr size_t kBlock = size_t{16} << 20;
  const size_t blocks = (bytes + kBlock - 1) / kBlock;
  std::vector<uint64_t> parts(blocks + 1);
  parts[blocks] = bytes;
  const auto* p = static_cast<const unsigned char*>(data);
  parallel_for(blocks, threads,
               [&](size_t b) { parts[b] = digest_of(p + b * kBlock, b + 1 < blocks ? kBlock : bytes - b * kBlock); });
  return digest_of(parts.data(), parts.size() * sizeof(uint64_t));
}

namespace {

constexpr char kFileMagic[8] = {'K', 'G', 'R', 'A', 'N', 'K', 'Q', '1'};
// 2: the distance offsets (a header word, an array); 3: each array on a 64-byte boundary of the file.
constexpr uint32_t kFileVersion = 3;
// The screen's rules a table was made under: the quantiser, the residual level and the bound's terms (slack, qnorm,
// corr and their second-level twins). Raise it with any change to them, so that older files are refused.
constexpr uint32_t kScreenRules = 1;

// The table's sizes from its header, in 64 bits whatever size_t is (at most about 2^58 for n <= 2^40 and
// dpad <= 65000): n rows padded to whole panels, and the bytes of one level's panels.
uint64_t padded_rows(uint64_t n) { return (n + kScreenPanel - 1) / kScreenPanel * kScreenPanel; }
uint64_t panel_bytes(uint64_t n, uint64_t dpad) { return padded_rows(n) * dpad + kScreenTileSlack; }

// The table's arrays in file order, as (pointer, bytes) pairs.
std::vector<std::pair<const void*, size_t>> arrays_of(const ScreenTable& t) {
  return {{t.panels.data(), t.panels.size()},     {t.scale.data(), t.scale.size() * 4},
          {t.slack.data(), t.slack.size() * 4},   {t.qnorm.data(), t.qnorm.size() * 4},
          {t.corr.data(), t.corr.size() * 4},     {t.panels2.data(), t.panels2.size()},
          {t.slack2.data(), t.slack2.size() * 4}, {t.qnorm2.data(), t.qnorm2.size() * 4},
          {t.cnorm.data(), t.cnorm.size() * 4},   {t.corr2.data(), t.corr2.size() * 4},
          {t.offset.data(), t.offset.size() * 4}};
}

constexpr size_t kHeadBytes = 8 + 8 + 10 * 8;  // magic, version and rules, the ten header words
constexpr size_t kArrays = 11;

// Where array i's bytes start in the file: each array is its u64 byte count, zero bytes up to a 64-byte boundary,
// then its bytes (so a mapped file's panels lie on 64-byte boundaries, as the kernels read them).
uint64_t aligned64(uint64_t at) { return (at + 63) / 64 * 64; }

// Closes the file on every path out.
struct File {
  std::FILE* f = nullptr;
  ~File() {
    if (f != nullptr) std::fclose(f);
  }
};

std::string error_of(const char* what, const char* path) {
  return std::string(what) + " " + path + ": " + std::strerror(errno);
}

}  // namespace

Status screen_table_write(const ScreenTable& t, const ScreenFileKey& key, const char* path) {
  const auto parts = arrays_of(t);
  uint64_t payload = 0x51ULL;
  for (const auto& [ptr, bytes] : parts) payload = payload * 0x100000001B3ULL ^ screen_digest(ptr, bytes);
  File out;
  out.f = std::fopen(path, "wb");
  if (out.f == nullptr) return Status::invalid(error_of("cannot create", path));
  const uint32_t version[2] = {kFileVersion, kScreenRules};
  const uint64_t head[10] = {t.n,
                             t.dim,
                             t.dpad,
                             key.width,
                             key.interaction,
                             key.layout,
                             key.float_digest,
                             payload,
                             t.map.size(),
                             t.distance() ? 1u : 0u};
  bool ok = std::fwrite(kFileMagic, 1, 8, out.f) == 8 && std::fwrite(version, 4, 2, out.f) == 2 &&
            std::fwrite(head, 8, 10, out.f) == 10;
  if (ok && !t.map.empty()) ok = std::fwrite(t.map.data(), 4, t.map.size(), out.f) == t.map.size();
  uint64_t at = kHeadBytes + 4 * t.map.size();
  static const char zeros[64] = {};
  for (const auto& [ptr, bytes] : parts) {
    if (!ok) break;
    const uint64_t b = bytes;
    const size_t pad = static_cast<size_t>(aligned64(at + 8) - (at + 8));
    ok = std::fwrite(&b, 8, 1, out.f) == 1 && std::fwrite(zeros, 1, pad, out.f) == pad &&
         std::fwrite(ptr, 1, bytes, out.f) == bytes;
    at += 8 + pad + bytes;
  }
  if (!ok || std::fflush(out.f) != 0) return Status::invalid(error_of("cannot write", path));
  if (std::fclose(out.f) != 0) {
    out.f = nullptr;
    return Status::invalid(error_of("cannot write", path));
  }
  out.f = nullptr;
  return Status::success();
}

namespace {
// A file's bytes in memory: mapped read-only where the system can (POSIX, not WASI), else read whole into an owned
// buffer. `keep` holds them for as long as a table views them.
struct FileBytes {
  const unsigned char* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> keep;
};

Status file_bytes(const char* path, FileBytes* out) {
#if (defined(__unix__) || defined(__APPLE__)) && !defined(__wasi__)
  // O_NONBLOCK: a FIFO without a writer is refused below, not waited on (no effect on a regular file).
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::invalid(error_of("cannot open", path));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const Status s = Status::invalid(error_of("cannot read", path));
    ::close(fd);
    return s;
  }
  if (!S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) > SIZE_MAX) {
    ::close(fd);
    return Status::invalid(std::string("cannot read ") + path +
                           (S_ISREG(st.st_mode) ? ": larger than this build can map" : ": not a regular file"));
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    out->size = 0;
    return Status::success();
  }
  void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);
  if (m == MAP_FAILED) {
    errno = err;
    return Status::invalid(error_of("cannot read", path));
  }
  out->data = static_cast<const unsigned char*>(m);
  out->size = size;
  out->keep = std::shared_ptr<const void>(m, [size](const void* p) { ::munmap(const_cast<void*>(p), size); });
  return Status::success();
#else
  File in;
  in.f = std::fopen(path, "rb");
  if (in.f == nullptr) return Status::invalid(error_of("cannot open", path));
  if (std::fseek(in.f, 0, SEEK_END) != 0) return Status::invalid(error_of("cannot read", path));
  const long have = std::ftell(in.f);
  if (have < 0 || std::fseek(in.f, 0, SEEK_SET) != 0) return Status::invalid(error_of("cannot read", path));
  auto buf = std::make_shared<AlignedVector<unsigned char>>();
  KGRANK_TRY { buf->resize(static_cast<size_t>(have)); }
  KGRANK_CATCH(const std::bad_alloc&) { return Status::invalid(std::string("out of memory for the table ") + path); }
  if (std::fread(buf->data(), 1, buf->size(), in.f) != buf->size()) {
    return Status::invalid(error_of("cannot read", path));
  }
  out->data = buf->data();
  out->size = buf->size();
  out->keep = buf;
  return Status::success();
#endif
}
}  // namespace

Status screen_table_read(const char* path, ScreenFileKey* key, ScreenTable* t) {
  FileBytes file;
  Status opened = file_bytes(path, &file);
  if (!opened.ok()) return opened;
  const unsigned char* p = file.data;
  const size_t have = file.size;
  const auto bad = [&](const std::string& why) {
    return Status::invalid(std::string(path) + " is not a quantised table kgrank quantize wrote (" + why +
                           "): write it again with kgrank quantize");
  };
  uint32_t version[2];
  uint64_t head[10];
  if (have < 8 || std::memcmp(p, kFileMagic, 8) != 0) return bad("no KGRANKQ1 header");
  if (have < 16) return bad("its header is cut short");
  std::memcpy(version, p + 8, 8);
  if (version[0] != kFileVersion) return bad("another format version");
  if (version[1] != kScreenRules) return bad("made under other rules of the screen: another release");
  if (have < kHeadBytes) return bad("its header is cut short");
  std::memcpy(head, p + 16, sizeof head);
  const uint64_t n = head[0], dim = head[1], dpad = head[2], map_n = head[8], dist = head[9];
  if (dim == 0 || dim > kScreenMaxDim || dpad != (dim + 3) / 4 * 4 || (map_n != 0 && map_n != dim) ||
      n > (uint64_t{1} << 40) || dist > 1) {
    return bad("its sizes do not fit together");
  }
  // The arrays' sizes from the header, and the file's size from them, in 64 bits: checked before anything past the
  // header is read or allocated.
  const uint64_t panel = panel_bytes(n, dpad), row4 = 4 * padded_rows(n);
  const uint64_t want[kArrays] = {panel, row4, row4, row4, row4, panel, row4, row4, row4, row4, dist == 1 ? row4 : 0};
  uint64_t begin[kArrays];
  uint64_t at = kHeadBytes + 4 * map_n;
  for (size_t i = 0; i < kArrays; ++i) {
    begin[i] = aligned64(at + 8);
    at = begin[i] + want[i];
  }
  if (static_cast<uint64_t>(have) < at) return bad("it is cut short");
  if (static_cast<uint64_t>(have) > at) return bad("bytes follow its last array");
  // Now every offset lies inside the file, so inside size_t.
  size_t sizes[kArrays], starts[kArrays];
  for (size_t i = 0; i < kArrays; ++i) {
    sizes[i] = static_cast<size_t>(want[i]);
    starts[i] = static_cast<size_t>(begin[i]);
  }
  key->n = n;
  key->dim = dim;
  key->width = head[3];
  key->interaction = head[4];
  key->layout = head[5];
  key->float_digest = head[6];
  const uint64_t payload = head[7];
  size_t prev = kHeadBytes + 4 * map_n;
  for (size_t i = 0; i < kArrays; ++i) {
    uint64_t b = 0;
    std::memcpy(&b, p + prev, 8);
    if (b != sizes[i]) return bad("an array's size word does not match its header: the file is damaged");
    for (size_t z = prev + 8; z < starts[i]; ++z) {
      if (p[z] != 0) return bad("bytes between its arrays are not zero: the file is damaged");
    }
    prev = starts[i] + sizes[i];
  }
  uint64_t check = 0x51ULL;
  for (size_t i = 0; i < kArrays; ++i) check = check * 0x100000001B3ULL ^ screen_digest(p + starts[i], sizes[i]);
  if (check != payload) return bad("its contents do not match their digest: the file is damaged");
  t->n = n;
  t->dim = dim;
  t->dpad = dpad;
  const auto floats = [&](size_t i, std::vector<float>* v) {
    v->resize(sizes[i] / 4);
    if (sizes[i] != 0) std::memcpy(v->data(), p + starts[i], sizes[i]);
  };
  const auto ints = [&](size_t i, std::vector<int32_t>* v) {
    v->resize(sizes[i] / 4);
    if (sizes[i] != 0) std::memcpy(v->data(), p + starts[i], sizes[i]);
  };
  KGRANK_TRY {
    t->map.resize(map_n);
    if (map_n != 0) std::memcpy(t->map.data(), p + kHeadBytes, 4 * map_n);
    floats(1, &t->scale);
    floats(2, &t->slack);
    floats(3, &t->qnorm);
    ints(4, &t->corr);
    floats(6, &t->slack2);
    floats(7, &t->qnorm2);
    floats(8, &t->cnorm);
    ints(9, &t->corr2);
    floats(10, &t->offset);
  }
  KGRANK_CATCH(const std::bad_alloc&) { return Status::invalid(std::string("out of memory for the table ") + path); }
  for (size_t k = 0; k < t->map.size(); ++k) {
    if (t->map[k] >= dim) return bad("its element order is not one");
  }
  // The panels stay in the file's pages: a view, not a copy.
  t->panels.view(reinterpret_cast<const int8_t*>(p + starts[0]), sizes[0], file.keep);
  t->panels2.view(reinterpret_cast<const int8_t*>(p + starts[5]), sizes[5], file.keep);
  return Status::success();
}

namespace isa {
void screen_quantise_scalar(const float* v, size_t dim, int8_t* out, int8_t* /*out2: refine_row's*/, ScreenRowSums* r) {
  float mx = 0;
  bool finite = true;
  for (size_t k = 0; k < dim; ++k) {
    const float x = std::fabs(v[k]);
    finite = finite && x <= std::numeric_limits<float>::max();  // false for NaN and infinities
    mx = x > mx ? x : mx;
  }
  *r = ScreenRowSums{};
  r->max = mx;
  r->finite = finite;
  std::fill(out, out + dim, int8_t{0});
  if (!finite || !(mx >= kMinMax && mx <= kMaxMax)) return;
  r->scale = screen_scale(mx);
  const float inv = 1.0f / r->scale;
  for (size_t k = 0; k < dim; ++k) {
    const float y = v[k] * inv;
    // Round to nearest by adding and subtracting 1.5 2^23 (|y| < 128: exact float steps; no libm call, which the
    // baseline x86-64 build would make for nearbyint).
    float a = (y + 12582912.0f) - 12582912.0f;
    a = a > 127.0f ? 127.0f : a < -127.0f ? -127.0f : a;
    const float e = y - a;
    r->y2 += y * y;
    r->e2 += e * e;
    r->b2 += a * a;
    r->sum += static_cast<int32_t>(a);
    out[k] = static_cast<int8_t>(a);
  }
}

void screen_chunk_scalar(const ScreenTask& task) {
  const ScreenTable& t = *task.table;
  const ScreenQueries& q = *task.queries;
  const size_t dpad = t.dpad;
  uint64_t refined = 0;
  for (size_t k = 0; k < task.nr; ++k) {
    const size_t row = task.r0 + k;
    const int8_t* a = q.a.data() + row * dpad;
    const int8_t* a2 = q.a2.data() + row * dpad;
    const float sq = q.scale[row], nq = q.norm[row], dq = q.resid[row], thr_q = q.threshold[row];
    const float absm = q.absm[row];
    const bool screened = sq == sq, dist = t.distance();
    // Either level's decision for candidate j from x (float(I), or fl(float(I) + float(K) 2^-8)) and its error
    // bound: +1 certified above the threshold, -1 below, 0 undecided. A distance table's offset moves the threshold
    // to fl(thr + offset), whose rounding (u of it) and the offset's own (u of it) the offset's 2^-16 covers.
    const auto side = [&](float x, size_t j, float err) {
      const float approx = (x * t.scale[j]) * sq;
      const float off = dist ? t.offset[j] : 0.0f;
      const float thr = dist ? thr_q + off : thr_q;
      const float m = err * (1.0f + kScreenRel) + (std::fabs(approx) + std::fabs(thr) + off) * kScreenRel + absm;
      return approx - m > thr ? 1 : approx + m < thr ? -1 : 0;
    };
    uint32_t g = 0, u = 0;
    for (size_t j = task.begin; j < task.end; ++j) {
      const size_t base = (j / kScreenPanel) * dpad * kScreenPanel + (j % kScreenPanel) * 4;
      const int8_t* b = t.panels.data() + base;
      int32_t dot = 0;
      for (size_t e = 0; e < dpad; ++e) dot += int32_t{a[e]} * int32_t{b[(e / 4) * 64 + (e % 4)]};
      const int first = side(static_cast<float>(dot), j, nq * t.slack[j] + dq * t.qnorm[j]);
      if (first > 0 && task.list_above) {
        task.und[k * task.cap + u++] = static_cast<uint32_t>(j);
        continue;
      }
      g += first > 0;
      if (first != 0) continue;
      if (screened && dot < kScreenExact && dot > -kScreenExact) {  // the second level (screen.h)
        const int8_t* c = t.panels2.data() + base;
        int32_t k2 = 0;
        for (size_t e = 0; e < dpad; ++e) {
          const size_t at = (e / 4) * 64 + (e % 4);
          k2 += int32_t{a[e]} * int32_t{c[at]} + int32_t{a2[e]} * int32_t{b[at]};
        }
        ++refined;
        if (k2 < kScreenExact && k2 > -kScreenExact) {
          const float x = static_cast<float>(dot) + static_cast<float>(k2) * 0.00390625f;
          const int second = side(x, j, nq * t.slack2[j] + q.resid2[row] * t.qnorm2[j] + q.anorm2[row] * t.cnorm[j]);
          g += second > 0 && !task.list_above;
          if (second < 0 || (second > 0 && !task.list_above)) continue;
        }
      }
      task.und[k * task.cap + u++] = static_cast<uint32_t>(j);
    }
    task.greater[k] += g;
    task.und_n[k] = u;
  }
  if (task.refined != nullptr) *task.refined += refined;
}
}  // namespace isa

namespace {
// KGRANK_SCREEN_NO_AVX_VNNI=1 runs the AVX2 level's vpmaddubsw kernel on a CPU with AVX-VNNI (the tests cover both).
bool screen_avx_vnni_disabled() {
  const char* v = std::getenv("KGRANK_SCREEN_NO_AVX_VNNI");
  return v != nullptr && v[0] == '1';
}

#ifdef KGRANK_HAVE_AMX_KERNEL
// AMX-INT8 (simd.h cpu_extensions). KGRANK_SCREEN_NO_AMX=1 keeps the VNNI kernel (the tests cover both kernels on one
// machine).
bool amx_capable() {
  const char* v = std::getenv("KGRANK_SCREEN_NO_AMX");
  return !(v != nullptr && v[0] == '1') && cpu_extensions().amx_int8;
}
// Linux's per-process permission for the tile data (arch_prctl ARCH_REQ_XCOMP_PERM = 0x1023, feature 18), asked once,
// at the first screened call at the AVX-512 level: once granted, every later sigaltstack of the process must hold
// the tile state, so a process that never screens never asks. Refused (an old kernel, or a signal stack too small
// for the tile state) keeps the VNNI kernel.
std::atomic<int> amx_asked{0};  // 0 not asked, 1 granted, 2 refused
bool amx_granted() {
  static const bool granted = [] {
    const bool ok = amx_capable() && syscall(SYS_arch_prctl, 0x1023, 18) == 0;
    amx_asked.store(ok ? 1 : 2);
    return ok;
  }();
  return granted;
}
#endif

#ifdef KGRANK_HAVE_NEON
// FEAT_DotProd (sdot / udot): HWCAP_ASIMDDP, bit 20 of AT_HWCAP on Linux; elsewhere the scalar screen kernel runs.
bool neon_dotprod() {
#if defined(__linux__)
  return (getauxval(AT_HWCAP) >> 20) & 1u;
#else
  return false;
#endif
}
#endif

}  // namespace

ScreenQuantFn screen_quantiser(SimdLevel level) {
#ifdef KGRANK_HAVE_AVX512
  if (level == SimdLevel::AVX512 && simd_supported(level)) return isa::screen_quantise_avx512;
#endif
#ifdef KGRANK_HAVE_AVX2
  if ((level == SimdLevel::AVX2 || level == SimdLevel::AVX512) && simd_supported(SimdLevel::AVX2)) {
    return isa::screen_quantise_avx2;
  }
#endif
  (void)level;
  return isa::screen_quantise_scalar;
}

namespace {
// The screen kernel of a level (screen_kernel). ask: whether AMX may ask Linux for the tile state now; without it,
// AMX counts as usable where the CPU has it and no refusal is known (screen_kernel_name, for backendInfo()).
ScreenChunkFn pick_kernel(SimdLevel level, bool* vector, bool ask) {
  *vector = false;
#ifdef KGRANK_HAVE_AVX512
  if (level == SimdLevel::AVX512 && simd_supported(level) && cpu_extensions().avx512_vnni) {
    *vector = true;
#ifdef KGRANK_HAVE_AMX_KERNEL
    if (ask ? amx_granted() : amx_capable() && amx_asked.load() != 2) return isa::screen_chunk_amx;
#endif
    return isa::screen_chunk_avx512_vnni;
  }
#endif
#ifdef KGRANK_HAVE_AVX2
  static const bool vnni256 = cpu_extensions().avx_vnni && !screen_avx_vnni_disabled();
  if ((level == SimdLevel::AVX2 || level == SimdLevel::AVX512) && simd_supported(SimdLevel::AVX2)) {
    *vector = true;
    return vnni256 ? isa::screen_chunk_avx2_vnni : isa::screen_chunk_avx2;
  }
#endif
#ifdef KGRANK_HAVE_NEON
  static const bool dot = isa::screen_neon_dot_built() && neon_dotprod();
  if (level == SimdLevel::NEON && simd_supported(level) && dot) {
    *vector = true;
    return isa::screen_chunk_neon_dot;
  }
#endif
  (void)level;
  (void)ask;
  return isa::screen_chunk_scalar;
}
}  // namespace

ScreenChunkFn screen_kernel(SimdLevel level, bool* vector) { return pick_kernel(level, vector, true); }

bool screen_auto_kernel(SimdLevel level) {
  // Without asking Linux for AMX's tile state: a process under the default auto that never screens never holds it
  // (AMX and VNNI both pay, so the answer does not depend on whether the request would be granted).
  bool vector = false;
  const ScreenChunkFn fn = pick_kernel(level, &vector, false);
#ifdef KGRANK_HAVE_AVX2
  if (fn == isa::screen_chunk_avx2) return false;
#endif
  (void)fn;
  return vector;
}

bool screen_auto_quantises(SimdLevel level, size_t rows, size_t dim) {
  return screen_auto_kernel(level) && rows * dim >= kScreenAutoWork;
}

const char* screen_kernel_name(SimdLevel level) {
  bool vector = false;
  const ScreenChunkFn fn = pick_kernel(level, &vector, false);
#ifdef KGRANK_HAVE_AMX_KERNEL
  if (fn == isa::screen_chunk_amx) return "amx";
#endif
#ifdef KGRANK_HAVE_AVX512
  if (fn == isa::screen_chunk_avx512_vnni) return "avx512-vnni";
#endif
#ifdef KGRANK_HAVE_AVX2
  if (fn == isa::screen_chunk_avx2_vnni) return "avx-vnni";
  if (fn == isa::screen_chunk_avx2) return "avx2";
#endif
#ifdef KGRANK_HAVE_NEON
  if (fn == isa::screen_chunk_neon_dot) return "neon-sdot";
#endif
  return "scalar";
}

}  // namespace kgrank
