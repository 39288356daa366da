/**
 * Tail probabilities the paired tests need, written from their definitions: the regularized incomplete beta
 * function (Student's t), the normal tail (src/numeric/normal.ts, shared with the z-score p-values), and the exact
 * null distribution of the Wilcoxon signed-rank statistic. Relative accuracy ~1e-14 in the ranges the tests
 * use; test/compare.test.ts checks them against SciPy and against closed forms.
 */
import { normalUpperTail } from "../numeric";

const EPS = 1e-16;
const TINY = 1e-300;

/** ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9; relative error below 1e-15). */
function logGamma(x: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const z = x - 1;
  let a = c[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += c[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Continued fraction of the incomplete beta function (modified Lentz). */
function betaFraction(a: number, b: number, x: number): number {
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < TINY) d = TINY;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 10000; m++) {
    const m2 = 2 * m;
    let num = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + num * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + num / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    h *= d * c;
    num = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + num * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + num / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const step = d * c;
    h *= step;
    if (Math.abs(step - 1) < EPS) break;
  }
  return h;
}

/** Regularized incomplete beta I_x(a, b). */
function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x));
  // The fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry otherwise.
  if (x < (a + 1) / (a + b + 2)) return (front * betaFraction(a, b, x)) / a;
  return 1 - (front * betaFraction(b, a, 1 - x)) / b;
}

/** Two-sided p-value of Student's t statistic with `df` degrees of freedom: P(|T| >= |t|). */
export function studentTwoSided(t: number, df: number): number {
  if (Number.isNaN(t)) return NaN;
  if (!Number.isFinite(t)) return 0;
  return incompleteBeta(df / (df + t * t), df / 2, 0.5);
}

/** Two-sided normal p-value P(|Z| >= |z|) = 2 Q(|z|) (src/numeric/normal.ts normalUpperTail). */
export function normalTwoSided(z: number): number {
  return 2 * normalUpperTail(Math.abs(z));
}

/**
 * Exact two-sided p-value of the Wilcoxon signed-rank statistic T+ for n pairs without ties or zeros: the count
 * of subsets of {1..n} by rank sum (a subset-sum table), P = min(1, 2 · P(T+ <= min(t, n(n+1)/2 - t))).
 */
export function wilcoxonExactTwoSided(tPlus: number, n: number): number {
  const max = (n * (n + 1)) / 2;
  const counts = new Float64Array(max + 1);
  counts[0] = 1;
  for (let k = 1; k <= n; k++) {
    for (let s = (k * (k + 1)) / 2; s >= k; s--) counts[s]! += counts[s - k]!;
  }
  const low = Math.min(tPlus, max - tPlus);
  let tail = 0;
  for (let s = 0; s <= Math.floor(low); s++) tail += counts[s]!;
  return Math.min(1, (2 * tail) / 2 ** n);
}
