/**
 * Expectation and variance of the median rank when every rank r_i ~ Uniform{1..N_i} independently (N_i may
 * differ). The median is the conventional one: r_(k) with k = (n+1)/2 for odd n, (r_(k) + r_(k+1))/2 with
 * k = n/2 for even n (r_(1) <= ... <= r_(n) the order statistics).
 *
 * With C_x = #{i : r_i <= x}, a sum of independent Bernoulli(p_i(x) = min(x, N_i)/N_i):
 *   P(r_(k) > x) = P(C_x <= k-1),  P(r_(k+1) > x) = P(C_x <= k),
 *   E[A] = sum_{x>=0} P(A > x),  E[(A-c)^2] = sum_{x<c} (2(c-x)-1) P(A <= x) + sum_{x>=c} (2(x-c)+1) P(A > x)
 * (c an integer near E[A], so no large terms cancel), and for even n the cross moment
 *   E[AB] = sum_x (x+1) P(A > x) + sum_y y P(B > y) - sum_{x<y} P(C_x = k, no r_i in (x, y]),
 * the last probability being [z^k] prod_i (p_i(x) z + 1 - p_i(y)).
 *
 * Two methods:
 *  - "exact": the Poisson-binomial distribution of C_x by dynamic programming over the tasks, truncated at k+1
 *    (tasks with p_i = 1 shift it, tasks with p_i = 0 are skipped): O(max N * n * k) for E and odd-n Var,
 *    O(max N^2 * n * k) for even-n Var. Used while that work is at most EXACT_WORK.
 *  - "normal": the refined normal approximation of the Poisson-binomial CDF (continuity and skewness corrected,
 *    P(C <= c) ~ Phi(z) + kappa3 (1 - z^2) phi(z) / (6 sigma^3), z = (c + 1/2 - mu) / sigma), with mu, sigma^2 and
 *    kappa3 of C_x for every x in O(1) from prefix sums over the sorted N_i: O(max N + n log n) in all. Its CDF
 *    error is O(1/sigma^2), sigma^2 = sum p_i (1 - p_i) ~ n/4 near the median; measured against the exact method
 *    (test/median-moments.test.ts) the relative error of E is below 1e-6 and of Var below 1e-2 from n = 200 on.
 *    For even n it takes Var[(A+B)/2] = (Var A + Var B)/2 - Var(B-A)/4 without the last term, which is O(1/n)
 *    relative (the gap B - A is O(1/(n f)) while the spread of A is O(1/(sqrt(n) f))).
 */
import { KgrankInputError } from "../errors";

/** Exact dynamic programming while its number of inner steps stays below this. */
export const EXACT_WORK = 4e7;

export interface MedianMoments {
  expectation: number;
  variance: number;
  method: "exact" | "normal";
}

/** P(A > x) and P(A <= x) for x = 0..len-1 (both given so that neither is formed as 1 - the other). */
interface Tails {
  above: Float64Array;
  below: Float64Array;
}

function centredMoments(t: Tails): { mean: number; second: number; centre: number } {
  // E[A] = sum_x P(A > x); centre c = integer part of a first estimate.
  let e = 0;
  for (let x = 0; x < t.above.length; x++) e += t.above[x]!;
  const c = Math.floor(e);
  let shift = 0; // E[A] - c
  let sq = 0; // E[(A - c)^2]
  for (let x = 0; x < t.above.length; x++) {
    if (x < c) {
      shift -= t.below[x]!;
      sq += (2 * (c - x) - 1) * t.below[x]!;
    } else {
      shift += t.above[x]!;
      sq += (2 * (x - c) + 1) * t.above[x]!;
    }
  }
  // Beyond max N, P(A > x) = 0 and P(A <= x) = 1: nothing more for x >= c; for c > length (impossible: E <= max N).
  return { mean: c + shift, second: sq, centre: c };
}

/** Poisson-binomial P(C <= k-1) and P(C <= k) ... computed exactly, truncated at k. */
function exactTails(n: Float64Array, k: number, maxN: number, want: number[]): Tails[] {
  const out = want.map(() => ({ above: new Float64Array(maxN), below: new Float64Array(maxN) }));
  const q = new Float64Array(k + 2);
  for (let x = 0; x < maxN; x++) {
    q.fill(0);
    q[0] = 1;
    let shift = 0;
    for (let i = 0; i < n.length; i++) {
      const N = n[i]!;
      if (N <= x) {
        shift++;
        continue;
      }
      const p = x / N;
      if (p === 0) continue;
      for (let c = k + 1; c >= 1; c--) q[c] = q[c]! * (1 - p) + q[c - 1]! * p;
      q[0] = q[0]! * (1 - p);
    }
    want.forEach((c, j) => {
      // P(C <= c) with C = shift + D, D ~ q.
      let le = 0;
      for (let d = 0; d <= c - shift; d++) le += q[d]!;
      le = Math.min(1, le);
      out[j]!.above[x] = le;
      // P(C > c): sum of the rest of the truncated pmf is not available, so 1 - le (exact path: small n)
      out[j]!.below[x] = Math.max(0, 1 - le);
    });
  }
  return out;
}

/** sum_{x<y} [z^k] prod_i (p_i(x) z + 1 - p_i(y)). */
function exactJoint(n: Float64Array, k: number, maxN: number): number {
  const q = new Float64Array(k + 1);
  let total = 0;
  for (let x = 0; x < maxN; x++) {
    for (let y = x + 1; y < maxN; y++) {
      q.fill(0);
      q[0] = 1;
      let ok = true;
      for (let i = 0; i < n.length && ok; i++) {
        const N = n[i]!;
        const px = Math.min(x, N) / N;
        const rest = 1 - Math.min(y, N) / N;
        if (px === 0) {
          if (rest === 0) ok = false;
          else for (let c = 0; c <= k; c++) q[c] = q[c]! * rest;
          continue;
        }
        for (let c = k; c >= 1; c--) q[c] = q[c]! * rest + q[c - 1]! * px;
        q[0] = q[0]! * rest;
      }
      if (ok) total += q[k]!;
    }
  }
  return total;
}

// ---- normal approximation ----------------------------------------------------------------------------------------
/** erfc(x) to ~1e-15 relative: series for |x| < 2, Lentz continued fraction above. */
export function erfc(x: number): number {
  if (x < 0) return 2 - erfc(-x);
  if (x < 2) {
    // erf(x) = 2/sqrt(pi) sum_n (-1)^n x^(2n+1) / (n! (2n+1))
    let term = x;
    let sum = x;
    const x2 = x * x;
    for (let n = 1; n < 60; n++) {
      term *= -x2 / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
    }
    return 1 - (2 / Math.sqrt(Math.PI)) * sum;
  }
  // erfc(x) = exp(-x^2)/sqrt(pi) * 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + ...)))))
  const tiny = 1e-300;
  let f = x;
  let C = x;
  let D = 0;
  for (let n = 1; n < 300; n++) {
    const a = n / 2;
    D = x + a * D;
    D = Math.abs(D) < tiny ? tiny : D;
    C = x + a / C;
    C = Math.abs(C) < tiny ? tiny : C;
    D = 1 / D;
    const delta = C * D;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return Math.exp(-x * x) / Math.sqrt(Math.PI) / f;
}

const INV_SQRT_2PI = 0.3989422804014327;

/** Refined normal approximation of P(C <= c) and P(C > c) for every x, for each c in `want`. */
function normalTails(sorted: Float64Array, maxN: number, want: number[]): Tails[] {
  const out = want.map(() => ({ above: new Float64Array(maxN), below: new Float64Array(maxN) }));
  const m = sorted.length;
  // Suffix sums of 1/N, 1/N^2, 1/N^3 over tasks with N > x.
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  for (let i = 0; i < m; i++) {
    const inv = 1 / sorted[i]!;
    s1 += inv;
    s2 += inv * inv;
    s3 += inv * inv * inv;
  }
  let done = 0; // tasks with N <= x
  for (let x = 0; x < maxN; x++) {
    while (done < m && sorted[done]! <= x) {
      const inv = 1 / sorted[done]!;
      s1 -= inv;
      s2 -= inv * inv;
      s3 -= inv * inv * inv;
      done++;
    }
    if (done === m) {
      s1 = s2 = s3 = 0;
    }
    const mu = done + x * s1;
    const variance = Math.max(0, x * s1 - x * x * s2);
    const k3 = x * s1 - 3 * x * x * s2 + 2 * x * x * x * s3;
    const sigma = Math.sqrt(variance);
    want.forEach((c, j) => {
      let le: number;
      let gt: number;
      if (sigma < 1e-12) {
        le = mu <= c + 0.5 ? 1 : 0;
        gt = 1 - le;
      } else {
        const z = (c + 0.5 - mu) / sigma;
        const skew = (k3 / (6 * sigma * sigma * sigma)) * (1 - z * z) * INV_SQRT_2PI * Math.exp(-0.5 * z * z);
        le = 0.5 * erfc(-z / Math.SQRT2) + skew;
        gt = 0.5 * erfc(z / Math.SQRT2) - skew;
      }
      out[j]!.above[x] = Math.min(1, Math.max(0, le));
      out[j]!.below[x] = Math.min(1, Math.max(0, gt));
    });
  }
  return out;
}

/** E and Var of the (conventional) median rank for validated candidate counts (integers >= 1). */
export function medianMoments(numCandidates: Float64Array, method?: "exact" | "normal"): MedianMoments {
  const n = numCandidates.length;
  if (n === 0) throw new KgrankInputError("numCandidates", "is empty: a metric needs at least one ranking task");
  const sorted = Float64Array.from(numCandidates).sort();
  const maxN = sorted[n - 1]!;
  const even = n % 2 === 0;
  const k = even ? n / 2 : (n + 1) / 2;
  const exactWork = maxN * n * (k + 1) * (even ? Math.max(1, maxN / 2) : 1);
  const use = method ?? (exactWork <= EXACT_WORK ? "exact" : "normal");
  // P(A > x) = P(C_x <= k-1); P(B > x) = P(C_x <= k).
  const want = even ? [k - 1, k] : [k - 1];
  const tails = use === "exact" ? exactTails(sorted, k, maxN, want) : normalTails(sorted, maxN, want);
  const a = centredMoments(tails[0]!);
  if (!even) {
    const d = a.mean - a.centre;
    return { expectation: a.mean, variance: Math.max(0, a.second - d * d), method: use };
  }
  const b = centredMoments(tails[1]!);
  const mean = (a.mean + b.mean) / 2;
  const varA = Math.max(0, a.second - (a.mean - a.centre) ** 2);
  const varB = Math.max(0, b.second - (b.mean - b.centre) ** 2);
  if (use === "normal") return { expectation: mean, variance: (varA + varB) / 2, method: use };
  // Exact cross moment: Cov(A, B) = E[AB] - E[A]E[B], from the identity in the header (raw moments: small n).
  let eAB = 0;
  for (let x = 0; x < maxN; x++) eAB += (x + 1) * tails[0]!.above[x]! + x * tails[1]!.above[x]!;
  eAB -= exactJoint(sorted, k, maxN);
  const cov = eAB - a.mean * b.mean;
  return { expectation: mean, variance: Math.max(0, (varA + varB + 2 * cov) / 4), method: use };
}
