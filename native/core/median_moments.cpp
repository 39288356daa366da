// E and Var of the conventional median rank under independent uniform ranks r_i ~ Uniform{1..N_i}.
// TypeScript twin: src/fallback/median-moments.ts (same steps, same constants, same order of operations).
//
// Quantities. C_x = #{i : r_i <= x} is a sum of independent Bernoulli(p_i(x) = min(x, N_i)/N_i). With k the lower
// middle index (k = (n+1)/2 for odd n, n/2 for even n), A = r_(k), B = r_(k+1):
//   P(A > x) = P(C_x <= k-1),  P(B > x) = P(C_x <= k),
//   P(A <= x, B > y) = P(C_x = k, C_y = k)  (x < y: exactly k ranks <= x and none in (x, y]).
// Outside a band [X0, X1) of x, P(A > x) is 1 and P(B > x) is 0 to 1e-20; X0 and X1 come from bisection on the exact
// tail values (monotone in x). Shifted by X0 (so no large terms cancel):
//   E[A - X0] = S0A = sum_{X0<=x<X1} P(A > x),   E[(A - X0)^2] = sum (2(x - X0) + 1) P(A > x)  (same for B),
//   E[(A - X0)(B - X0)] = sum (x - X0 + 1) P(A > x) + sum (y - X0) P(B > y) - J,  J = sum_{X0<=x<y} P(C_x=k, C_y=k)
// (J = E[G(G-1)/2] for the gap G = B - A). Odd n needs only A; even n E = X0 + (S0A + S0B)/2 and
// Var = (E[A'^2] + E[B'^2] + 2 E[A'B'] - (S0A + S0B)^2) / 4. n = 2 is the mean of the two ranks (closed form).
//
// Tail values at one x (and the joint at (x, y = x + d)): tasks with N_i <= x are certainly below (a shift), tasks
// with x < N_i <= y must be below (factor x/N_i), the others have the generating factor 1 + (x(z-1) - d)/N_i. The
// count of the last group, D, is recovered from its generating function on the unit circle: a DFT of odd size M over
// the window [mu - t, mu + t] of D (Bernstein: P(|D - mu| >= t) <= 2 exp(-t^2 / (2 (s^2 + t/3))) <= 2e-20 for the t
// used, so aliasing costs at most that), keeping only the frequencies where |psi(w)| <= psi(0) exp(-s^2 (1 - cos w))
// is above e^-46 (the dropped ones cost at most psi(0) e^-46 in any CDF value). log psi(w) comes either from the
// power series sum_s (-1)^(s-1) u^s P_s(y) / s, u = (x(e^{iw} - 1) - d)/y, P_s(y) = sum_{N_i > y} (y/N_i)^s (used
// when |u| <= 1/2; terms to 1e-18 absolute, at most 40), with the P_s read from block suffix sums (64 distinct N per
// block, scaled by the block's first N so that nothing under- or overflows), so one evaluation costs
// O(64 * 40 + frequencies * terms) whatever n and max N are; or, when the series would converge slowly (few tasks,
// small variance), directly from the per-distinct-N factors (O(groups * frequencies): their (1 + v)^m multiplied in
// complex arithmetic, one log and atan2 per frequency). The series covers the groups above r * rho * y (r = 1, 2, 4, 8)
// with its ratio bounded by rho * y / N of the first of them. CDFs are summed in closed form (geometric sums of the
// DFT basis), upper and lower tails separately (no 1 - p); sin and cos of 2 pi j / M come from tables kept per M
// (M >= 128 rounded up by at most 1/16 so that consecutive evaluations share them).
//
// Sums over x. A band of at most 4096 integers is summed point by point. Wider bands (large N) are cut at the
// distinct N_i (inside each run the tail is a polynomial in x); a run of >= 1024 integers on which the smoothness
// scale s(x) = max(1, sd(C_x)) / (2 sum_{N_i > x} 1/N_i) is >= 256 is summed by Euler-Maclaurin,
//   sum_{x=a}^{b-1} f = int_a^b f + (f(a) - f(b))/2 + (f'(b) - f'(a))/12 + R,  |R| ~ |f'''| / 720 ~ 1/(720 s^3),
// the integral by 20-point Gauss-Legendre panels of width s and f' by 3-point one-sided differences (error f'''/3);
// runs of >= 64 with s >= 16 by panels 4 s wide with the endpoint terms through f^(5) from 9-point one-sided
// differences (sum_run); other runs point by point. So the work does not grow with max N: 3 tasks of N = 2^31-1 take
// ~100 evaluations. J (even n): one row J(x) = sum_{x<y<X1} P(C_x = k, C_y = k) per x (joint_row: cut at the distinct N
// above x, long smooth runs of y by Gauss-Legendre panels of width 12/lambda, lambda the rows' decay rate, with
// Euler-Maclaurin endpoint terms through f^(5); consecutive such runs separated by single-task kinks are chained: the
// panels run through the kinks and each kink adds the exact jump term of h', -P(C_x = k+1, C_c = k+1) B2(theta) / (2x),
// for one evaluation, with the neglected h''' jump bounded and checked per kink; see joint_row). Over x: point by point
// for bands up to 1024; with at most 64 distinct N inside the band, cut at them (J(x) is a polynomial between them;
// non-integer nodes use the row's polynomial continuation); with more (large n), Euler-Maclaurin over the whole band
// with kinks not cut (each changes J's slope by O(1/n) and J enters Var with weight O(1/n): at n = 1.2 M, N_i uniform
// on 1..2.5 M, Var is within 2.5e-12 of J summed point by point over x). So the cost of J does not grow with N/n.
// Still dear: (a) short runs of y (kink spacing below 64, e.g. n = 1,000 with N to 2,500 or 20,000: rows summed point
// by point); (b) the sum over x with at most 64 kinks in a wide band (small n, e.g. n = 40-100 with N to 1e6), whose
// runs close with endpoint differences and a point-by-point tail. Times and evaluation counts: BENCHMARKS.md, "Notes
// moved from the kernel sources", median_moments.cpp.
//
// Accuracy (test/median-moments.test.ts, native/tests/test_median_moments.cpp): against BigInt enumeration of every
// rank vector (n <= 7) and against an independent O(n^2) DP over the full distribution at n = 1,000, 1,001, 5,000 with
// mixed N: relative error of E and Var below 1e-12; against mpmath (50 digits) at n = 3, 5, 6 with N up to 1e8: below
// 1e-12; against exact rationals (scripts/median-fixtures.py) for even n = 4..20 with N up to 2^31-1 and the DP at
// even n = 6, 8, 12 with N up to 2,500: Var below 5e-14; the two backends agree within 1e-12 (bit-identical on most
// inputs; 4e-14 at n = 1.2 M). The chained rows against the same rows summed point by point over y (n = 200, N to
// 2e4; n = 1,000, N to 1e5): equal to the 17 digits printed; exact rationals for n = 12 and 14 distinct N to 2^31-1:
// below 2e-15. (The B2(theta) factor matters: without it, at non-integer x, Var is off by 7e-10 at n = 200.)
#include "median_moments.h"

#include <limits>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "compensated.h"

namespace kgrank {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kTailLog = 46.0;      // dropped frequencies: each below e^-46 of psi(0)
constexpr double kBernstein = 46.7;    // window: 2 exp(-46.7) = 1e-20
constexpr double kBandTail = 1e-20;    // band ends
constexpr size_t kBlock = 64;          // distinct N per block of the power-sum suffixes
constexpr int kMaxS = 40;              // power sums P_1..P_40
constexpr double kDirectWidth = 4096;  // bands up to this many integers: point by point
constexpr double kRunQuad = 1024;      // shortest run summed by Euler-Maclaurin
constexpr double kScaleQuad = 256;     // smallest smoothness scale for Euler-Maclaurin
constexpr double kJointDirect = 1024;  // J: bands up to this many integers point by point
constexpr double kRowQuad = 64;        // J's rows: shortest run of y summed by panels (and lambda <= 8/64)
constexpr double kRowPanel = 12;       // J's rows: panel width times the decay rate lambda
constexpr double kChainMult = 1;       // J's rows: kinks of at most this many tasks are crossed by a chain
constexpr double kJointKinks = 64;     // J over x: at most this many distinct N inside the band are cut at
constexpr double kJointPanel = 4;      // J over x, kinks not cut: panel width in units of the scale
constexpr double kRunPanel = 8;        // J over x, on a run between kinks: the same
constexpr double kScaleRun = 16;
constexpr double kMarginalPanel = 4;  // marginal runs between 64 and 1024 (or scale below 256): panel width in scales
                                      // // J over x: smallest smoothness scale for panels on a run
// One-sided 9-point differences (unit step) for f'(a), f'''(a), f^(5)(a): errors O(f^(9)), O(f^(9)), O(f^(9)).
constexpr double kD1[9] = {-761.0 / 280, 8, -14, 56.0 / 3, -35.0 / 2, 56.0 / 5, -14.0 / 3, 8.0 / 7, -1.0 / 8};
constexpr double kD3[9] = {-801.0 / 80, 349.0 / 6,  -18353.0 / 120, 2391.0 / 10, -1457.0 / 6,
                           4891.0 / 30, -561.0 / 8, 527.0 / 30,     -469.0 / 240};
constexpr double kD5[9] = {-27.0 / 2,  575.0 / 6, -895.0 / 3, 1065.0 / 2, -1790.0 / 3,
                           2581.0 / 6, -195,      305.0 / 6,  -35.0 / 6};
constexpr int kGauss = 20;
// 4-point Gauss-Legendre (J's chains: the piece from a kink's last lattice point to the kink, width < 1).
constexpr double kGauss4X[4] = {-0.8611363115940526, -0.3399810435848563, 0.3399810435848563, 0.8611363115940526};
constexpr double kGauss4W[4] = {0.3478548451374538, 0.6521451548625461, 0.6521451548625461, 0.3478548451374538};
constexpr double kRescale = 8.749002899132048e+99;  // 2^332 (exact)
constexpr double kTiny = 1.142987391282275e-100;    // 2^-332 (exact)
constexpr double kLogRescale = 332 * 0.6931471805599453;

struct GaussRule {
  double x[kGauss];
  double w[kGauss];
};

const GaussRule& gauss_rule() {
  static const GaussRule rule = [] {
    GaussRule r{};
    for (int i = 0; i < kGauss; ++i) {
      double z = std::cos(kPi * (i + 0.75) / (kGauss + 0.5));
      double dp = 1;
      for (int it = 0; it < 100; ++it) {
        double p0 = 1, p1 = z;
        for (int j = 2; j <= kGauss; ++j) {
          const double p2 = ((2 * j - 1) * z * p1 - (j - 1) * p0) / j;
          p0 = p1;
          p1 = p2;
        }
        dp = kGauss * (z * p1 - p0) / (z * z - 1);
        const double dz = p1 / dp;
        z -= dz;
        if (std::fabs(dz) < 1e-16) break;
      }
      r.x[i] = z;
      r.w[i] = 2 / ((1 - z * z) * dp * dp);
    }
    return r;
  }();
  return rule;
}

// sin(w) - w without cancellation.
double sin_minus(double w) {
  if (std::fabs(w) < 0.5) {
    const double w2 = w * w;
    return -w * w2 / 6 * (1 - w2 / 20 * (1 - w2 / 42 * (1 - w2 / 72 * (1 - w2 / 110 * (1 - w2 / 156)))));
  }
  return std::sin(w) - w;
}

class MedianModel {
 public:
  MedianModel(const double* nc, size_t count) : n_(static_cast<double>(count)) {
    std::vector<double> sorted(nc, nc + count);
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < count;) {
      size_t j = i;
      while (j < count && sorted[j] == sorted[i]) ++j;
      N_.push_back(sorted[i]);
      m_.push_back(static_cast<double>(j - i));
      i = j;
    }
    G_ = N_.size();
    cum_m_.assign(G_ + 1, 0);
    cum_log_.assign(G_ + 1, 0);
    CompensatedSum lg;
    for (size_t g = 0; g < G_; ++g) {
      cum_m_[g + 1] = cum_m_[g] + m_[g];
      lg.add(m_[g] * std::log(N_[g]));
      cum_log_[g + 1] = lg.value();
    }
    const size_t blocks = (G_ + kBlock - 1) / kBlock;
    suffix_.assign(blocks * kMaxS, 0);
    for (size_t b = blocks; b-- > 0;) {
      const size_t start = b * kBlock, end = std::min(G_, start + kBlock);
      double* s = &suffix_[b * kMaxS];
      for (size_t g = start; g < end; ++g) {
        const double q = N_[start] / N_[g];
        double t = m_[g];
        for (int j = 0; j < kMaxS; ++j) {
          t *= q;
          s[j] += t;
        }
        // s[j] = sum m (N_start/N_g)^(j+1); the first group contributes m exactly.
      }
      if (end < G_) {
        const double q = N_[start] / N_[end];
        const double* next = &suffix_[(b + 1) * kMaxS];
        double t = 1;
        for (int j = 0; j < kMaxS; ++j) {
          t *= q;
          s[j] += t * next[j];
        }
      }
    }
    CompensatedSum inv;
    cum_rate_.assign(G_ + 1, 0);
    for (size_t g = 0; g < G_; ++g) {
      inv.add(m_[g] / N_[g]);
      cum_rate_[g + 1] = inv.value();
    }
    total_rate_ = inv.value();
    re_.resize(1);
    im_.resize(1);
  }

  double evaluations() const { return evaluations_; }

  MedianMomentsResult run(bool want_variance) {
    const double n = n_;
    if (n == 2) {
      // The median of two ranks is their mean: E = (E r1 + E r2)/2, Var = (Var r1 + Var r2)/4.
      const double a = N_.front(), b = N_.back();
      return {(a + b + 2) / 4, ((a * a - 1) + (b * b - 1)) / 48};
    }
    const bool even = std::fmod(n, 2.0) == 0;
    const double k = even ? n / 2 : (n + 1) / 2;
    const double jlo = k - 1, jhi = even ? k : k - 1;
    const double max_n = N_.back();
    // X0: the largest x with P(C_x > k-1) <= 1e-20; X1: the smallest with P(C_x <= jhi) <= 1e-20.
    double lo = 0, hi = max_n;
    while (hi - lo > 1) {
      const double mid = std::floor((lo + hi) / 2);
      eval(mid, 0);
      if (upper(jlo) <= kBandTail) lo = mid;
      else hi = mid;
    }
    const double x0 = lo;
    lo = x0;
    hi = max_n;
    while (hi - lo > 1) {
      const double mid = std::floor((lo + hi) / 2);
      eval(mid, 0);
      if (lower(jhi) <= kBandTail) hi = mid;
      else lo = mid;
    }
    const double x1 = hi;
    // Marginal sums: [sum F_A, sum F_B, sum (x-X0) F_A, sum (x-X0) F_B].
    double sums[4] = {0, 0, 0, 0};
    auto marginal = [&](double x, double* out) {
      eval(x, 0);
      const double fa = lower(jlo), fb = even ? lower(jhi) : 0;
      out[0] = fa;
      out[1] = fb;
      out[2] = (x - x0) * fa;
      out[3] = (x - x0) * fb;
    };
    if (x1 - x0 <= kDirectWidth) {
      direct(x0, x1, 4, marginal, sums);
    } else {
      double r0 = x0;
      size_t g = static_cast<size_t>(std::upper_bound(N_.begin(), N_.end(), x0) - N_.begin());
      while (r0 < x1) {
        const double r1 = g < G_ ? std::min(N_[g], x1) : x1;
        ++g;
        if (r1 <= r0) continue;
        double part[4] = {0, 0, 0, 0};
        if (r1 - r0 >= kRunQuad && std::min({scale(r0), scale(std::floor((r0 + r1) / 2)), scale(r1)}) >= kScaleQuad) {
          euler_maclaurin(r0, r1, 4, marginal, part);
        } else if (r1 - r0 >= kRowQuad &&
                   std::min({scale(r0), scale(std::floor((r0 + r1) / 2)), scale(r1)}) >= kScaleRun) {
          // Shorter or less smooth runs: panels of width 4 scales with endpoint terms through f^(5).
          sum_run(
              r0, r1, 4, marginal, [&](double x) { return kMarginalPanel * scale(x); }, part);
        } else {
          direct(r0, r1, 4, marginal, part);
        }
        for (int i = 0; i < 4; ++i) sums[i] += part[i];
        r0 = r1;
      }
    }
    const double s0a = sums[0], s1a = sums[2];
    if (!even) {
      return {x0 + s0a, std::max(0.0, 2 * s1a + s0a - s0a * s0a)};
    }
    const double s0b = sums[1], s1b = sums[3];
    if (!want_variance) return {x0 + (s0a + s0b) / 2, std::numeric_limits<double>::quiet_NaN()};
    // J = sum_{x<y} P(C_x = k, C_y = k).
    auto joint = [&](double x, double* out) { out[0] = joint_row(x, x1, k, false); };
    double jsum = 0;
    const size_t kx0 = static_cast<size_t>(std::upper_bound(N_.begin(), N_.end(), x0) - N_.begin());
    const size_t kx1 = static_cast<size_t>(std::lower_bound(N_.begin(), N_.end(), x1) - N_.begin());
    if (x1 - x0 <= kJointDirect) {
      direct(x0, x1, 1, joint, &jsum);
    } else if (kx1 - kx0 > kJointKinks) {
      // Many distinct N inside the band (large n): each kink changes J's slope by O(1/n) and J enters Var with
      // weight O(1/n), so the kinks are not cut (measured in the header).
      euler_maclaurin(x0, x1, 1, joint, &jsum, kJointPanel);
    } else {
      // J(x) is a polynomial in x between kinks: runs summed as the rows are (panels with Euler-Maclaurin endpoint
      // terms through f^(5)) when long and smooth, else point by point.
      CompensatedSum acc;
      double r0 = x0;
      for (size_t g = kx0; r0 < x1; ++g) {
        const double r1 = g < kx1 ? N_[g] : x1;
        if (r1 <= r0) continue;
        double part = 0;
        if (r1 - r0 >= kRowQuad && std::min({scale(r0), scale(std::floor((r0 + r1) / 2)), scale(r1)}) >= kScaleRun) {
          auto row = [&](double x, double* out) { out[0] = joint_row(x, x1, k, true); };
          sum_run(
              r0, r1, 1, row, [&](double x) { return kRunPanel * scale(x); }, &part);
        } else {
          direct(r0, r1, 1, joint, &part);
        }
        acc.add(part);
        r0 = r1;
      }
      jsum = acc.value();
    }
    const double ea2 = 2 * s1a + s0a, eb2 = 2 * s1b + s0b;
    const double eab = (s1a + s0a) + s1b - jsum;
    const double t = s0a + s0b;
    return {x0 + t / 2, std::max(0.0, (ea2 + eb2 + 2 * eab - t * t) / 4)};
  }

 private:
  // ---- the joint term: one row J(x) = sum_{x < y < x1} h(y), h(y) = P(C_x = k, C_y = k) ----------------------------
  // On y the summand is a polynomial between consecutive distinct N > x (a task's factor p_x z + 1 - y/N stops
  // changing at y = N) and decays like prod over the tasks above x of (1 - d/(N_i - x)): its log-derivative is at
  // most lambda(y) = sum_{N_g > y} m_g (N_g - x) / (N_g (N_g - y)) in expectation (the tasks with N_g > y weighted by
  // their chance 1 - x/N_g of lying above x). Runs of y between kinks of at least kRowQuad integers are summed by
  // Gauss-Legendre panels of width kRowPanel / lambda (at most half of what is left of the run, so that lambda grows
  // by at most 2 inside a panel) with the Euler-Maclaurin endpoint terms through f^(5) (derivatives from 9-point
  // one-sided differences; lambda <= 1/8 there, so the remainder is below lambda^8/1209600 of f); shorter runs
  // and the last 32 integers before a kink point by point. The row stops where P(no rank in (x, y]) (which bounds h
  // from y on) is below 1e-20 of the running sum (point by point) or its tail estimate bound / lambda is below
  // 1e-18 of it (panels).
  double joint_point(double x, double y, double k, double* bound) {
    eval(x, y - x);
    *bound = zero_ ? 0 : std::exp(logpre_) * psi0_;
    return zero_ ? 0 : std::exp(logpre_) * pmf(k);
  }

  double row_rate(double x, double y) const {
    const size_t g0 = static_cast<size_t>(std::upper_bound(N_.begin(), N_.end(), y) - N_.begin());
    const size_t g1 = std::min(G_, g0 + kBlock);
    double lam = 0;
    for (size_t g = g0; g < g1; ++g) lam += m_[g] * (N_[g] - x) / (N_[g] * (N_[g] - y));
    if (g1 < G_) lam += (total_rate_ - cum_rate_[g1]) * (N_[g1] - x) / (N_[g1] - y);
    return lam;
  }

  // continuation: at a non-integer x (a quadrature node on a run between kinks, few kinks) the row is its
  // polynomial continuation in x: the sum over the integers y from ceil(x + 1) on plus F(ceil(x + 1)) - F(x + 1),
  // F the discrete antiderivative of the first piece of h, from the Newton form of h at ceil(x + 1) + 0..8:
  // -sum_j Delta^j h * binom(-theta, j + 1). Without it (many kinks, kinks not cut) y runs over x + 1, x + 2, ...,
  // which averages over the dense kinks in y (the Newton form would straddle them): at n = 1.2 M the variance is
  // then within 3.5e-13 of J summed point by point over x, against 1.5e-9 with the continuation.
  double joint_row(double x, double x1, double k, bool continuation) {
    CompensatedSum acc;
    double bound = 0;
    const double y0 = continuation ? std::ceil(x + 1) : x + 1;
    if (y0 > x + 1 && y0 + 8 < x1) {
      double dif[9];
      for (int i = 0; i < 9; ++i) dif[i] = joint_point(x, y0 + i, k, &bound);
      const double theta = y0 - (x + 1);
      double binom = 1;  // binom(-theta, j + 1)
      for (int j = 0; j < 9; ++j) {
        binom *= (-theta - j) / (j + 1);
        acc.add(-dif[0] * binom);
        for (int i = 0; i + j < 8; ++i) dif[i] = dif[i + 1] - dif[i];
      }
    }
    double y = y0;
    size_t g = static_cast<size_t>(std::upper_bound(N_.begin(), N_.end(), y0) - N_.begin());
    // Chains (x > 0; runs of y of >= kRowQuad integers on which the row decays slowly, lambda kRowQuad <= kRowPanel):
    // consecutive such runs whose kinks are single tasks are one Euler-Maclaurin sum over the lattice y0 + j (y0 is
    // not an integer at a quadrature node x): Gauss-Legendre panels of width kRowPanel / lambda run through the kinks
    // (each run's panels end at its kink; lambda there without the end group's growth, whose factor is linear in y),
    // start terms at the chain's first lattice point, end terms at its last, and at each kink c inside, the jump term
    // of h'. With h = h1 + (c - y)_+ h2 (h1, h2 smooth across c), h'(c-) - h'(c+) = -h2(c) = -P(C_x = k+1,
    // C_c = k+1) / x, and its term is that times B2(theta) / 2, theta = frac(c - y0) (1/12 on integer lattices). The
    // jump of h''' is -3 h2''(c), |h2''| <= Lambda^2 h2 (Lambda = sum_{N_g > c} m_g / (N_g - c)), so the neglected term
    // is at most Lambda^2 h2 / 240: the chain goes on past c only when that is below 1e-16 of the row so far, and when
    // the next run qualifies; otherwise it is closed at the last lattice point before c. A kink thus costs one
    // evaluation (and a 4-point panel up to it off the integer lattice) instead of 18 for the endpoint differences
    // and the point-by-point tail next to it.
    bool chain = false;  // while true, y is the kink the chain's integral has reached (not a lattice point)
    double f0[9], f1[9];
    const double zeros[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    auto chainable = [&](double lam_run, double b, size_t gb) {
      return lam_run > 0 && lam_run * kRowQuad <= kRowPanel && (b >= x1 || m_[gb] <= kChainMult);
    };
    while (y < x1) {
      const size_t gend = g;
      const double yb = g < G_ ? std::min(N_[g], x1) : x1;
      ++g;
      if (yb <= y) continue;
      double lam = yb - y >= kRowQuad ? row_rate(x, y) : 0;
      const bool smooth = lam > 0 && lam * kRowQuad <= kRowPanel;
      if (chain || (x > 0 && chainable(lam, yb, gend))) {
        const GaussRule& gr = gauss_rule();
        if (!chain) {
          for (int i = 0; i < 9; ++i) f0[i] = joint_point(x, y + i, k, &bound);
          add_endpoints(f0, zeros, acc);
          chain = true;
        }
        const bool kink = yb < x1;
        const double e = y0 + std::floor(yb - y0);  // the last lattice point <= yb
        const double end_rate = kink ? m_[gend] * (N_[gend] - x) / (N_[gend] * (N_[gend] - y)) : 0;
        double p = y;
        bool stop = false;
        while (p < e) {
          const double w = std::min(e - p, std::max(16.0, std::floor(kRowPanel / lam)));
          const double c = p + w / 2, h = w / 2;
          for (int i = 0; i < kGauss; ++i) acc.add(h * gr.w[i] * joint_point(x, c + h * gr.x[i], k, &bound));
          p += w;
          if (p >= e) break;
          lam = row_rate(x, p) - (kink ? m_[gend] * (N_[gend] - x) / (N_[gend] * (N_[gend] - p)) : 0) + end_rate;
          if (bound <= 1e-18 * lam * acc.value()) {
            stop = true;
            break;
          }
        }
        if (stop) break;
        if (kink) {
          const double yn = gend + 1 < G_ ? std::min(N_[gend + 1], x1) : x1;
          const double lam_n = yn - yb >= kRowQuad ? row_rate(x, yb) : 0;
          if (chainable(lam_n, yn, gend + 1)) {
            eval(x, yb - x);
            const double h2 = zero_ ? 0 : std::exp(logpre_) * pmf(k + 1) / x;
            const double bound_c = zero_ ? 0 : std::exp(logpre_) * psi0_;
            const double big = row_rate(0, yb);
            if (big * big / 240 * h2 <= 1e-16 * acc.value()) {
              if (e < yb) {
                const double c = (e + yb) / 2, h = (yb - e) / 2;
                for (int i = 0; i < 4; ++i) acc.add(h * kGauss4W[i] * joint_point(x, c + h * kGauss4X[i], k, &bound));
              }
              const double theta = (yb - y0) - std::floor(yb - y0);
              acc.add(-h2 * (theta * theta - theta + 1.0 / 6) / 2);
              y = yb;
              if (bound_c <= 1e-18 * lam_n * acc.value()) break;
              continue;
            }
          }
        }
        // Close the chain at the lattice point e: end terms from the left piece, then the lattice points in [e, yb).
        for (int i = 0; i < 9; ++i) f1[i] = joint_point(x, e - i, k, &bound);
        add_endpoints(zeros, f1, acc);
        chain = false;
        y = e;
      } else if (smooth) {
        // Panels on [y, b), b moving towards yb; endpoint terms at y and at b.
        const GaussRule& gr = gauss_rule();
        for (int i = 0; i < 9; ++i) f0[i] = joint_point(x, y + i, k, &bound);
        double p = y;
        bool stop = false;
        while (yb - p > 32) {
          const double w = std::floor(std::min((yb - p) / 2, kRowPanel / lam));  // integer ends: p stays integral
          const double c = p + w / 2, h = w / 2;
          for (int i = 0; i < kGauss; ++i) acc.add(h * gr.w[i] * joint_point(x, c + h * gr.x[i], k, &bound));
          p += w;
          lam = row_rate(x, p);
          if (bound <= 1e-18 * lam * acc.value()) {
            stop = true;
            break;
          }
        }
        for (int i = 0; i < 9; ++i) f1[i] = joint_point(x, p - i, k, &bound);
        add_endpoints(f0, f1, acc);
        if (stop) break;
        y = p;
      }
      bool done = false;
      for (; y < yb; ++y) {
        acc.add(joint_point(x, y, k, &bound));
        if (bound <= 1e-20 * std::max(acc.value(), 1e-280)) {
          done = true;
          break;
        }
      }
      if (done) break;  // y is now the first point of the lattice y0 + integers at or past yb
    }
    return acc.value();
  }

  // ---- one evaluation: the generating function of the free tasks at (x, y = x + d) --------------------------------
  // P[j] = sum_{g >= g0} m_g (v/N_g)^(j+1), j < smax.
  void power_sums(double v, size_t g0, double* P, int smax) const {
    for (int j = 0; j < smax; ++j) P[j] = 0;
    if (g0 >= G_) return;
    const size_t b = g0 / kBlock;
    const size_t end = std::min(G_, (b + 1) * kBlock);
    for (size_t g = g0; g < end; ++g) {
      const double q = v / N_[g];
      double t = m_[g];
      for (int j = 0; j < smax; ++j) {
        t *= q;
        P[j] += t;
      }
    }
    if (end < G_) {
      const double q = v / N_[end];
      const double* s = &suffix_[(b + 1) * kMaxS];
      double t = 1;
      for (int j = 0; j < smax; ++j) {
        t *= q;
        P[j] += t * s[j];
      }
    }
  }

  void eval(double x, double d) {
    ++evaluations_;
    const double y = x + d;
    const size_t gx = static_cast<size_t>(std::upper_bound(N_.begin(), N_.end(), x) - N_.begin());
    const size_t gy = static_cast<size_t>(std::upper_bound(N_.begin(), N_.end(), y) - N_.begin());
    const double sat = cum_m_[gx], mid = cum_m_[gy] - cum_m_[gx], nu = n_ - cum_m_[gy];
    shift_ = sat + mid;
    zero_ = false;
    logpre_ = 0;
    if (mid > 0) {
      if (x <= 0) zero_ = true;
      else logpre_ = mid * std::log(x) - (cum_log_[gy] - cum_log_[gx]);
    }
    // Moments of the free count D (normalised p' = x / (N - d)), log psi(0), rate sum 1/N.
    double P[kMaxS];
    const double ax = y > 0 ? x / y : 0, dy = y > 0 ? d / y : 0;
    // Terms the moment series need (dy^s below 1e-19), 2 for the marginal.
    int smom = 2;
    if (d > 0 && dy <= 0.3) smom = std::min(kMaxS, std::max(2, static_cast<int>(std::ceil(-43.8 / std::log(dy))) + 1));
    power_sums(y, gy, P, smom);
    double mu = 0, var = 0, logpsi0 = 0;
    const bool series_moments = d == 0 || dy <= 0.3;
    if (d == 0) {
      mu = P[0];
      var = P[0] - P[1];
    } else if (series_moments) {
      double m1 = 0, m2 = 0, l0 = 0, r = 1;
      for (int j = 0; j < smom; ++j) {  // r = dy^j
        m1 += r * P[j];
        if (j >= 1) m2 += j * (r / dy) * P[j];
        l0 -= r * dy * P[j] / (j + 1);
        r *= dy;
      }
      mu = ax * m1;
      var = mu - ax * ax * m2;
      logpsi0 = l0;
    } else {
      for (size_t g = gy; g < G_; ++g) {
        const double p = x / (N_[g] - d);
        mu += m_[g] * p;
        var += m_[g] * p * (1 - p);
        logpsi0 += m_[g] * std::log1p(-d / N_[g]);
      }
    }
    var = std::max(0.0, var);
    psi0_ = d == 0 ? 1 : std::exp(logpsi0);
    rate_ = y > 0 ? P[0] / y : total_rate_;
    sd_ = std::sqrt(var);
    // Window [L, L+M) of D, M odd.
    const double t = kBernstein / 3 + std::sqrt(kBernstein * kBernstein / 9 + 2 * kBernstein * var);
    const double L = std::max(0.0, std::floor(mu - t));
    const double U = std::min(nu, std::ceil(mu + t));
    double M = std::max(1.0, U - L + 1);
    if (M >= 128) {
      // M rounded up to a multiple of 2^(floor(log2 M) - 4) (at most 1/16 more): the trigonometric tables of one M
      // serve the next evaluations (a larger window only adds counts of probability zero).
      double step = 1;
      while (step * 32 <= M) step *= 2;
      M = std::ceil(M / step) * step;
    }
    if (std::fmod(M, 2.0) == 0) M += 1;
    L_ = L;
    M_ = M;
    // Kept frequencies t = 1..T: var * 2 sin^2(pi t / M) <= 46 + log M.
    const double c = (kTailLog + std::log(M)) / (2 * var);
    double T = (M - 1) / 2;
    if (c < 1) T = std::min(T, std::floor(M / kPi * std::asin(std::sqrt(c))));
    T_ = static_cast<size_t>(T);
    if (re_.size() < T_ + 1) {
      re_.resize(T_ + 1);
      im_.resize(T_ + 1);
    }
    if (T_ == 0) return;
    tab_ = &table(M);
    const double wT = 2 * std::sin(kPi * T / M);
    const double rho = ax * wT + dy;
    // Series over the groups from gs on (all free groups when it converges fast enough for them, else those with
    // N > 2y, whose |u| y/N is at most half as large; the groups in between are taken one by one).
    // |u| y / N_g <= rho y / N_g bounds the ratio of the series terms of group g, so the groups from gs on need
    // S terms when rho y / N_gs is small enough: all free groups if possible, else those with N >= 2, 4, 8 rho y.
    int S = gy < G_ ? series_terms(rho * y / N_[gy], nu) : 0;
    size_t gs = gy;
    for (double r = 2; S == 0 && r <= 8; r *= 2) {
      gs = std::max(gy, static_cast<size_t>(std::upper_bound(N_.begin(), N_.end(), r * rho * y) - N_.begin()));
      if (gs < G_) S = series_terms(rho * y / N_[gs], n_ - cum_m_[gs]);
    }
    if (S == 0) gs = G_;
    if (S > 0) power_sums(y, gs, P, S);
    else P[0] = 0;
    const double P1 = P[0];
    double coef[kMaxS + 1];
    for (int s = 2; s <= S; ++s) coef[s] = (s % 2 == 0 ? -1.0 : 1.0) * P[s - 1] / s;
    const double* tsh = tab_->sh.data();
    const double* ts1 = tab_->s1.data();
    for (size_t ti = 1; ti <= T_; ++ti) {
      const double w = 2 * kPi * static_cast<double>(ti) / M;
      const double sh = tsh[ti];
      const double wre = -2 * sh * sh, wim = ts1[ti];
      double lre = 0, lim = 0;
      // Groups taken one by one: the product of their factors (1 + v)^m in complex arithmetic (|1 + v| <= 1; m by
      // repeated squaring), kept as mantissa * e^lsc with the mantissa rescaled by 2^332 when it gets small; one log
      // and one atan2 per frequency instead of one per group.
      double pre_ = 1, pim_ = 0, lsc = 0;
      const bool product = gy < gs;
      for (size_t g = gy; g < gs; ++g) {
        const double vre = (x * wre - d) / N_[g], vim = x * wim / N_[g];
        double bre = 1 + vre, bim = vim, lb = 0;
        if (m_[g] == 1) {
          const double nre = pre_ * bre - pim_ * bim;
          pim_ = pre_ * bim + pim_ * bre;
          pre_ = nre;
          rescale(pre_, pim_, lsc);
          continue;
        }
        for (uint64_t mm = static_cast<uint64_t>(m_[g]);;) {
          if (mm & 1) {
            const double nre = pre_ * bre - pim_ * bim;
            pim_ = pre_ * bim + pim_ * bre;
            pre_ = nre;
            lsc += lb;
            rescale(pre_, pim_, lsc);
          }
          mm >>= 1;
          if (mm == 0) break;
          const double nre = bre * bre - bim * bim;
          bim = 2 * bre * bim;
          bre = nre;
          lb *= 2;
          rescale(bre, bim, lb);
        }
      }
      if (product) {
        lre += 0.5 * std::log(pre_ * pre_ + pim_ * pim_) + lsc;
        lim += std::atan2(pim_, pre_);
      }
      if (S > 0) {
        // s = 1 with the phase -wL folded in without cancellation.
        lre += (ax * wre - dy) * P1;
        lim += (ax * P1 - L) * wim + L * sin_minus(w);
        const double ure = ax * wre - dy, uim = ax * wim;
        double pre = ure, pim = uim;
        for (int s = 2; s <= S; ++s) {
          const double nre = pre * ure - pim * uim;
          pim = pre * uim + pim * ure;
          pre = nre;
          const double f = coef[s];
          lre += f * pre;
          lim += f * pim;
        }
      } else {
        lim -= w * L;
      }
      const double mag = std::exp(lre);
      re_[ti] = mag * std::cos(lim);
      im_[ti] = mag * std::sin(lim);
    }
  }

  // sin(w/2), sin(w), cos(w) at w = 2 pi j / M, j < M, for the last two M (the same expressions as computed inline).
  struct TrigTable {
    double M = 0;
    std::vector<double> sh, s1, c1;
  };
  const TrigTable& table(double M) {
    for (const TrigTable& t : tables_) {
      if (t.M == M) return t;
    }
    TrigTable& t = tables_[next_table_];
    next_table_ ^= 1;
    const size_t size = static_cast<size_t>(M);
    t.M = M;
    t.sh.resize(size);
    t.s1.resize(size);
    t.c1.resize(size);
    for (size_t j = 0; j < size; ++j) {
      const double w = 2 * kPi * static_cast<double>(j) / M;
      t.sh[j] = std::sin(w / 2);
      t.s1[j] = std::sin(w);
      t.c1[j] = std::cos(w);
    }
    return t;
  }

  // Keeps a complex mantissa of magnitude <= 1 away from underflow: scaled by 2^332, the log scale lowered.
  static void rescale(double& re, double& im, double& log_scale) {
    if (std::fabs(re) + std::fabs(im) < kTiny) {
      re *= kRescale;
      im *= kRescale;
      log_scale -= kLogRescale;
    }
  }

  static int series_terms(double rho, double nu) {
    if (rho > 0.5) return 0;
    int S = rho > 0 ? static_cast<int>(std::ceil(std::log(1e-18 * (1 - rho) / std::max(nu, 1.0)) / std::log(rho))) : 1;
    S = std::max(S, 1);
    return S > kMaxS ? 0 : S;
  }

  // sum_{c' = 0}^{J} e^{-i w_t c'} summed against psi_t: 2 Re sum_t psi_t G_t.
  double geometric(double J) const {
    double acc = 0;
    for (size_t ti = 1; ti <= T_; ++ti) {
      const double tt = static_cast<double>(ti);
      const size_t j = static_cast<size_t>(std::fmod(tt * (J + 1), M_));  // th = 2 pi j / M, w = 2 pi t / M
      const double sh = tab_->sh[j], sw = tab_->sh[ti];
      const double nre = 2 * sh * sh, nim = tab_->s1[j];   // 1 - e^{-i th}
      const double dre = 2 * sw * sw, dim = tab_->s1[ti];  // 1 - e^{-i w}
      const double den = dre * dre + dim * dim;
      const double gre = (nre * dre + nim * dim) / den, gim = (nim * dre - nre * dim) / den;
      acc += re_[ti] * gre - im_[ti] * gim;
    }
    return 2 * acc;
  }

  // P(C <= j) and P(C > j) of the current evaluation (scaled by psi(0) for the joint).
  double lower(double j) const {
    const double jj = j - shift_;
    if (jj < L_) return 0;
    if (jj >= L_ + M_ - 1) return psi0_;
    const double J = jj - L_;
    return std::min(psi0_, std::max(0.0, (psi0_ * (J + 1) + geometric(J)) / M_));
  }
  double upper(double j) const {
    const double jj = j - shift_;
    if (jj < L_) return psi0_;
    if (jj >= L_ + M_ - 1) return 0;
    const double J = jj - L_;
    return std::min(psi0_, std::max(0.0, (psi0_ * (M_ - 1 - J) - geometric(J)) / M_));
  }
  double pmf(double c) const {
    const double cc = c - shift_;
    if (cc < L_ || cc >= L_ + M_) return 0;
    const double C = cc - L_;
    double acc = 0;
    for (size_t ti = 1; ti <= T_; ++ti) {
      const size_t j = static_cast<size_t>(std::fmod(static_cast<double>(ti) * C, M_));  // th = 2 pi j / M
      acc += re_[ti] * tab_->c1[j] + im_[ti] * tab_->s1[j];
    }
    return std::max(0.0, (psi0_ + 2 * acc) / M_);
  }

  double scale(double x) {
    eval(x, 0);
    return std::max(1.0, sd_) / (2 * rate_);
  }

  // ---- sums over integers -------------------------------------------------------------------------------------------
  // sum_{a <= x < b} f(x) (K components) for f smooth on the scale width(x) (b - a >= 64): Gauss-Legendre panels of
  // width min(width, (b - t)/2) (integers), the last 32 integers point by point, Euler-Maclaurin endpoint terms
  // through f^(5) with 9-point one-sided differences.
  template <typename F, typename W>
  void sum_run(double a, double b, int K, F& f, W width, double* out) {
    const GaussRule& gr = gauss_rule();
    CompensatedSum acc[4];
    double f0[4][9], f1[4][9], v[4];
    for (int i = 0; i < 9; ++i) {
      f(a + i, v);
      for (int j = 0; j < K; ++j) f0[j][i] = v[j];
    }
    double p = a;
    while (b - p > 32) {  // nodes stay 16 below b: J's rows at non-integer x look 10 integers ahead
      const double w = std::floor(std::min((b - p) / 2, std::max(16.0, width(p))));
      const double c = p + w / 2, h = w / 2;
      for (int i = 0; i < kGauss; ++i) {
        f(c + h * gr.x[i], v);
        for (int j = 0; j < K; ++j) acc[j].add(h * gr.w[i] * v[j]);
      }
      p += w;
    }
    for (int i = 0; i < 9; ++i) {
      f(p - i, v);
      for (int j = 0; j < K; ++j) f1[j][i] = v[j];
    }
    for (int j = 0; j < K; ++j) add_endpoints(f0[j], f1[j], acc[j]);
    for (; p < b; ++p) {
      f(p, v);
      for (int j = 0; j < K; ++j) acc[j].add(v[j]);
    }
    for (int j = 0; j < K; ++j) out[j] = acc[j].value();
  }

  // The Euler-Maclaurin endpoint terms of sum_{a <= x < b} f given f(a + i) and f(b - i), i < 9:
  //   int_a^b f + (f(a) - f(b))/2 + (f'(b) - f'(a))/12 - (f'''(b) - f'''(a))/720 + (f^(5)(b) - f^(5)(a))/30240.
  static void add_endpoints(const double* f0, const double* f1, CompensatedSum& acc) {
    double d1 = 0, d3 = 0, d5 = 0;
    for (int i = 0; i < 9; ++i) {
      d1 -= kD1[i] * (f1[i] + f0[i]);
      d3 -= kD3[i] * (f1[i] + f0[i]);
      d5 -= kD5[i] * (f1[i] + f0[i]);
    }
    acc.add((f0[0] - f1[0]) / 2);
    acc.add(d1 / 12);
    acc.add(-d3 / 720);
    acc.add(d5 / 30240);
  }

  template <typename F>
  void direct(double a, double b, int K, F& f, double* out) {
    std::vector<CompensatedSum> acc(K);
    double v[4];
    for (double x = a; x < b; ++x) {
      f(x, v);
      for (int i = 0; i < K; ++i) acc[i].add(v[i]);
    }
    for (int i = 0; i < K; ++i) out[i] = acc[i].value();
  }

  // sum_{x=a}^{b-1} f(x) = int_a^b f + (f(a) - f(b))/2 + (f'(b) - f'(a))/12 (b - a >= 3).
  template <typename F>
  void euler_maclaurin(double a, double b, int K, F& f, double* out, double panel = 1) {
    const GaussRule& gr = gauss_rule();
    std::vector<CompensatedSum> acc(K);
    double v[4];
    double t = a;
    while (t < b) {
      const double w = std::min(b - t, std::max(16.0, panel * scale(t)));
      const double c = t + w / 2, h = w / 2;
      for (int i = 0; i < kGauss; ++i) {
        f(c + h * gr.x[i], v);
        for (int j = 0; j < K; ++j) acc[j].add(h * gr.w[i] * v[j]);
      }
      t += w;
    }
    double fa[4], fa1[4], fa2[4], fb[4], fb1[4], fb2[4];
    f(a, fa);
    f(a + 1, fa1);
    f(a + 2, fa2);
    f(b, fb);
    f(b - 1, fb1);
    f(b - 2, fb2);
    for (int j = 0; j < K; ++j) {
      acc[j].add((fa[j] - fb[j]) / 2);
      const double da = (-3 * fa[j] + 4 * fa1[j] - fa2[j]) / 2, db = (3 * fb[j] - 4 * fb1[j] + fb2[j]) / 2;
      acc[j].add((db - da) / 12);
      out[j] = acc[j].value();
    }
  }

  double n_;
  double evaluations_ = 0;
  size_t G_ = 0;
  std::vector<double> N_, m_, cum_m_, cum_log_, cum_rate_, suffix_;
  double total_rate_ = 0;
  // current evaluation
  double shift_ = 0, logpre_ = 0, psi0_ = 1, L_ = 0, M_ = 1, rate_ = 0, sd_ = 0;
  bool zero_ = false;
  size_t T_ = 0;
  std::vector<double> re_, im_;
  TrigTable tables_[2];
  int next_table_ = 0;
  const TrigTable* tab_ = nullptr;
};

}  // namespace

MedianMomentsResult median_moments(const double* num_candidates, size_t count, bool want_variance) {
  MedianModel model(num_candidates, count);
  MedianMomentsResult r = model.run(want_variance);
  r.evaluations = model.evaluations();
  return r;
}

}  // namespace kgrank
