/**
 * E and Var of the conventional median rank under independent uniform ranks r_i ~ Uniform{1..N_i}: the TypeScript
 * twin of native/core/median_moments.cpp (same steps, same constants, same order of operations; the method, its error
 * bound and the measured errors are in that file's header). Results agree with the native kernel within 1e-12
 * relative (test/median-moments.test.ts); the only differences are the last bits of Math.sin/cos/exp/log.
 *
 * Why one file of ~830 lines: it is read beside native/core/median_moments.cpp (~860 lines), function by function
 * and constant by constant, and any change is made to both; one MedianModel class holds the sorted candidate counts
 * and the quadrature tables every step (the characteristic-function series, the joint and marginal panels, the
 * rescaled products) reads. Split into files, the twins would no longer line up for that side-by-side review, and
 * the steps would have to expose the model's arrays to each other.
 */
import { CompensatedSum } from "../numeric";

const PI = Math.PI;
const TAIL_LOG = 46.0;
const BERNSTEIN = 46.7;
const BAND_TAIL = 1e-20;
const BLOCK = 64;
const MAX_S = 40;
const DIRECT_WIDTH = 4096;
const RUN_QUAD = 1024;
const SCALE_QUAD = 256;
const JOINT_DIRECT = 1024;
const ROW_QUAD = 64;
const ROW_PANEL = 12;
const CHAIN_MULT = 1;
const JOINT_KINKS = 64;
const JOINT_PANEL = 4;
const RUN_PANEL = 8;
const SCALE_RUN = 16;
const MARGINAL_PANEL = 4;
const D1 = [-761 / 280, 8, -14, 56 / 3, -35 / 2, 56 / 5, -14 / 3, 8 / 7, -1 / 8];
const D3 = [-801 / 80, 349 / 6, -18353 / 120, 2391 / 10, -1457 / 6, 4891 / 30, -561 / 8, 527 / 30, -469 / 240];
const D5 = [-27 / 2, 575 / 6, -895 / 3, 1065 / 2, -1790 / 3, 2581 / 6, -195, 305 / 6, -35 / 6];
const GAUSS = 20;
const GAUSS4_X = [-0.8611363115940526, -0.3399810435848563, 0.3399810435848563, 0.8611363115940526];
const GAUSS4_W = [0.3478548451374538, 0.6521451548625461, 0.6521451548625461, 0.3478548451374538];
const RESCALE = 2 ** 332;
const TINY = 2 ** -332;
const LOG_RESCALE = 332 * 0.6931471805599453;

let rule: { x: Float64Array; w: Float64Array } | null = null;

function gaussRule(): { x: Float64Array; w: Float64Array } {
  if (rule) return rule;
  const x = new Float64Array(GAUSS);
  const w = new Float64Array(GAUSS);
  for (let i = 0; i < GAUSS; i++) {
    let z = Math.cos((PI * (i + 0.75)) / (GAUSS + 0.5));
    let dp = 1;
    for (let it = 0; it < 100; it++) {
      let p0 = 1;
      let p1 = z;
      for (let j = 2; j <= GAUSS; j++) {
        const p2 = ((2 * j - 1) * z * p1 - (j - 1) * p0) / j;
        p0 = p1;
        p1 = p2;
      }
      dp = (GAUSS * (z * p1 - p0)) / (z * z - 1);
      const dz = p1 / dp;
      z -= dz;
      if (Math.abs(dz) < 1e-16) break;
    }
    x[i] = z;
    w[i] = 2 / ((1 - z * z) * dp * dp);
  }
  rule = { x, w };
  return rule;
}

/** sin(w) - w without cancellation. */
function sinMinus(w: number): number {
  if (Math.abs(w) < 0.5) {
    const w2 = w * w;
    return ((-w * w2) / 6) * (1 - (w2 / 20) * (1 - (w2 / 42) * (1 - (w2 / 72) * (1 - (w2 / 110) * (1 - w2 / 156)))));
  }
  return Math.sin(w) - w;
}

function seriesTerms(rho: number, nu: number): number {
  if (rho > 0.5) return 0;
  let S = rho > 0 ? Math.ceil(Math.log((1e-18 * (1 - rho)) / Math.max(nu, 1)) / Math.log(rho)) : 1;
  S = Math.max(S, 1);
  return S > MAX_S ? 0 : S;
}

/** First index with sorted[i] >= v. */
function lowerBound(sorted: Float64Array, v: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The Euler-Maclaurin endpoint terms (native: add_endpoints). */
function addEndpoints(f0: Float64Array, f1: Float64Array, acc: CompensatedSum): void {
  let d1 = 0;
  let d3 = 0;
  let d5 = 0;
  for (let i = 0; i < 9; i++) {
    d1 -= D1[i]! * (f1[i]! + f0[i]!);
    d3 -= D3[i]! * (f1[i]! + f0[i]!);
    d5 -= D5[i]! * (f1[i]! + f0[i]!);
  }
  acc.add((f0[0]! - f1[0]!) / 2);
  acc.add(d1 / 12);
  acc.add(-d3 / 720);
  acc.add(d5 / 30240);
}

/** First index with sorted[i] > v. */
function upperBound(sorted: Float64Array, v: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

type Fn = (x: number, out: Float64Array) => void;
type TrigTable = { M: number; sh: Float64Array; s1: Float64Array; c1: Float64Array };

class MedianModel {
  readonly n: number;
  readonly N: Float64Array;
  readonly m: Float64Array;
  readonly G: number;
  readonly cumM: Float64Array;
  readonly cumLog: Float64Array;
  readonly cumRate: Float64Array;
  readonly suffix: Float64Array;
  readonly totalRate: number;
  // current evaluation
  shift = 0;
  logpre = 0;
  psi0 = 1;
  L = 0;
  M = 1;
  rate = 0;
  sd = 0;
  zero = false;
  T = 0;
  re = new Float64Array(1);
  im = new Float64Array(1);
  readonly P = new Float64Array(MAX_S);
  bound = 0;
  /** evaluations of the generating function (the kernel's cost, reported for tests) */
  evaluations = 0;
  readonly coef = new Float64Array(MAX_S + 1);
  tables: TrigTable[] = [];
  nextTable = 0;
  tab: TrigTable | null = null;
  // mantissa and log scale of the complex product in eval (native: locals)
  private pr = 1;
  private pi = 0;
  private ls = 0;

  constructor(nc: Float64Array) {
    this.n = nc.length;
    const sorted = Float64Array.from(nc).sort();
    const Ns: number[] = [];
    const ms: number[] = [];
    for (let i = 0; i < sorted.length;) {
      let j = i;
      while (j < sorted.length && sorted[j] === sorted[i]) j++;
      Ns.push(sorted[i]!);
      ms.push(j - i);
      i = j;
    }
    this.N = Float64Array.from(Ns);
    this.m = Float64Array.from(ms);
    const G = (this.G = Ns.length);
    this.cumM = new Float64Array(G + 1);
    this.cumLog = new Float64Array(G + 1);
    const lg = new CompensatedSum();
    for (let g = 0; g < G; g++) {
      this.cumM[g + 1] = this.cumM[g]! + this.m[g]!;
      lg.add(this.m[g]! * Math.log(this.N[g]!));
      this.cumLog[g + 1] = lg.value();
    }
    const blocks = Math.ceil(G / BLOCK);
    const suffix = (this.suffix = new Float64Array(blocks * MAX_S));
    for (let b = blocks - 1; b >= 0; b--) {
      const start = b * BLOCK;
      const end = Math.min(G, start + BLOCK);
      const o = b * MAX_S;
      for (let g = start; g < end; g++) {
        const q = this.N[start]! / this.N[g]!;
        let t = this.m[g]!;
        for (let j = 0; j < MAX_S; j++) {
          t *= q;
          suffix[o + j] = suffix[o + j]! + t;
        }
      }
      if (end < G) {
        const q = this.N[start]! / this.N[end]!;
        const next = (b + 1) * MAX_S;
        let t = 1;
        for (let j = 0; j < MAX_S; j++) {
          t *= q;
          suffix[o + j] = suffix[o + j]! + t * suffix[next + j]!;
        }
      }
    }
    const inv = new CompensatedSum();
    this.cumRate = new Float64Array(G + 1);
    for (let g = 0; g < G; g++) {
      inv.add(this.m[g]! / this.N[g]!);
      this.cumRate[g + 1] = inv.value();
    }
    this.totalRate = inv.value();
  }

  run(wantVariance = true): [number, number] {
    const n = this.n;
    if (n === 2) {
      const a = this.N[0]!;
      const b = this.N[this.G - 1]!;
      return [(a + b + 2) / 4, (a * a - 1 + (b * b - 1)) / 48];
    }
    const even = n % 2 === 0;
    const k = even ? n / 2 : (n + 1) / 2;
    const jlo = k - 1;
    const jhi = even ? k : k - 1;
    const maxN = this.N[this.G - 1]!;
    let lo = 0;
    let hi = maxN;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      this.eval(mid, 0);
      if (this.upper(jlo) <= BAND_TAIL) lo = mid;
      else hi = mid;
    }
    const x0 = lo;
    lo = x0;
    hi = maxN;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      this.eval(mid, 0);
      if (this.lower(jhi) <= BAND_TAIL) hi = mid;
      else lo = mid;
    }
    const x1 = hi;
    const sums = new Float64Array(4);
    const marginal: Fn = (x, out) => {
      this.eval(x, 0);
      const fa = this.lower(jlo);
      const fb = even ? this.lower(jhi) : 0;
      out[0] = fa;
      out[1] = fb;
      out[2] = (x - x0) * fa;
      out[3] = (x - x0) * fb;
    };
    if (x1 - x0 <= DIRECT_WIDTH) {
      this.direct(x0, x1, 4, marginal, sums);
    } else {
      let r0 = x0;
      let g = upperBound(this.N, x0);
      const part = new Float64Array(4);
      while (r0 < x1) {
        const r1 = g < this.G ? Math.min(this.N[g]!, x1) : x1;
        g++;
        if (r1 <= r0) continue;
        part.fill(0);
        if (
          r1 - r0 >= RUN_QUAD &&
          Math.min(this.scale(r0), this.scale(Math.floor((r0 + r1) / 2)), this.scale(r1)) >= SCALE_QUAD
        ) {
          this.eulerMaclaurin(r0, r1, 4, marginal, part);
        } else if (
          r1 - r0 >= ROW_QUAD &&
          Math.min(this.scale(r0), this.scale(Math.floor((r0 + r1) / 2)), this.scale(r1)) >= SCALE_RUN
        ) {
          this.sumRun(r0, r1, 4, marginal, (x) => MARGINAL_PANEL * this.scale(x), part);
        } else {
          this.direct(r0, r1, 4, marginal, part);
        }
        for (let i = 0; i < 4; i++) sums[i] = sums[i]! + part[i]!;
        r0 = r1;
      }
    }
    const s0a = sums[0]!;
    const s1a = sums[2]!;
    if (!even) return [x0 + s0a, Math.max(0, 2 * s1a + s0a - s0a * s0a)];
    const s0b = sums[1]!;
    const s1b = sums[3]!;
    if (!wantVariance) return [x0 + (s0a + s0b) / 2, NaN];
    const joint: Fn = (x, out) => {
      out[0] = this.jointRow(x, x1, k, false);
    };
    const js = new Float64Array(1);
    const kx0 = upperBound(this.N, x0);
    const kx1 = lowerBound(this.N, x1);
    if (x1 - x0 <= JOINT_DIRECT) {
      this.direct(x0, x1, 1, joint, js);
    } else if (kx1 - kx0 > JOINT_KINKS) {
      this.eulerMaclaurin(x0, x1, 1, joint, js, JOINT_PANEL);
    } else {
      const acc = new CompensatedSum();
      const part = new Float64Array(1);
      let r0 = x0;
      for (let g = kx0; r0 < x1; g++) {
        const r1 = g < kx1 ? this.N[g]! : x1;
        if (r1 <= r0) continue;
        part[0] = 0;
        if (
          r1 - r0 >= ROW_QUAD &&
          Math.min(this.scale(r0), this.scale(Math.floor((r0 + r1) / 2)), this.scale(r1)) >= SCALE_RUN
        ) {
          const row: Fn = (x, out) => {
            out[0] = this.jointRow(x, x1, k, true);
          };
          this.sumRun(r0, r1, 1, row, (x) => RUN_PANEL * this.scale(x), part);
        } else {
          this.direct(r0, r1, 1, joint, part);
        }
        acc.add(part[0]!);
        r0 = r1;
      }
      js[0] = acc.value();
    }
    const jsum = js[0]!;
    const ea2 = 2 * s1a + s0a;
    const eb2 = 2 * s1b + s0b;
    const eab = s1a + s0a + s1b - jsum;
    const t = s0a + s0b;
    return [x0 + t / 2, Math.max(0, (ea2 + eb2 + 2 * eab - t * t) / 4)];
  }

  /** h = P(C_x = k, C_y = k); this.bound = P(no rank in (x, y]) (native: joint_point). */
  jointPoint(x: number, y: number, k: number): number {
    this.eval(x, y - x);
    this.bound = this.zero ? 0 : Math.exp(this.logpre) * this.psi0;
    return this.zero ? 0 : Math.exp(this.logpre) * this.pmf(k);
  }

  rowRate(x: number, y: number): number {
    const N = this.N;
    const g0 = upperBound(N, y);
    const g1 = Math.min(this.G, g0 + BLOCK);
    let lam = 0;
    for (let g = g0; g < g1; g++) lam += (this.m[g]! * (N[g]! - x)) / (N[g]! * (N[g]! - y));
    if (g1 < this.G) lam += ((this.totalRate - this.cumRate[g1]!) * (N[g1]! - x)) / (N[g1]! - y);
    return lam;
  }

  /** One row J(x) = sum_{x < y < x1} P(C_x = k, C_y = k) (native: joint_row; the method is described there). */
  jointRow(x: number, x1: number, k: number, continuation: boolean): number {
    const acc = new CompensatedSum();
    const y0 = continuation ? Math.ceil(x + 1) : x + 1;
    if (y0 > x + 1 && y0 + 8 < x1) {
      const dif = new Float64Array(9);
      for (let i = 0; i < 9; i++) dif[i] = this.jointPoint(x, y0 + i, k);
      const theta = y0 - (x + 1);
      let binom = 1;
      for (let j = 0; j < 9; j++) {
        binom *= (-theta - j) / (j + 1);
        acc.add(-dif[0]! * binom);
        for (let i = 0; i + j < 8; i++) dif[i] = dif[i + 1]! - dif[i]!;
      }
    }
    let y = y0;
    let g = upperBound(this.N, y0);
    const f0 = new Float64Array(9);
    const f1 = new Float64Array(9);
    const zeros = new Float64Array(9);
    const N = this.N;
    const m = this.m;
    // Chains of smooth runs summed as one Euler-Maclaurin sum over the lattice y0 + j (native: joint_row, which
    // describes them); while `chain`, y is the kink the chain's integral has reached.
    let chain = false;
    const chainable = (lamRun: number, b: number, gb: number): boolean =>
      lamRun > 0 && lamRun * ROW_QUAD <= ROW_PANEL && (b >= x1 || m[gb]! <= CHAIN_MULT);
    while (y < x1) {
      const gend = g;
      const yb = g < this.G ? Math.min(N[g]!, x1) : x1;
      g++;
      if (yb <= y) continue;
      let lam = yb - y >= ROW_QUAD ? this.rowRate(x, y) : 0;
      const smooth = lam > 0 && lam * ROW_QUAD <= ROW_PANEL;
      if (chain || (x > 0 && chainable(lam, yb, gend))) {
        const gr = gaussRule();
        if (!chain) {
          for (let i = 0; i < 9; i++) f0[i] = this.jointPoint(x, y + i, k);
          addEndpoints(f0, zeros, acc);
          chain = true;
        }
        const kink = yb < x1;
        const e = y0 + Math.floor(yb - y0);
        const endRate = kink ? (m[gend]! * (N[gend]! - x)) / (N[gend]! * (N[gend]! - y)) : 0;
        let p = y;
        let stop = false;
        while (p < e) {
          const w = Math.min(e - p, Math.max(16, Math.floor(ROW_PANEL / lam)));
          const c = p + w / 2;
          const h = w / 2;
          for (let i = 0; i < GAUSS; i++) acc.add(h * gr.w[i]! * this.jointPoint(x, c + h * gr.x[i]!, k));
          p += w;
          if (p >= e) break;
          lam = this.rowRate(x, p) - (kink ? (m[gend]! * (N[gend]! - x)) / (N[gend]! * (N[gend]! - p)) : 0) + endRate;
          if (this.bound <= 1e-18 * lam * acc.value()) {
            stop = true;
            break;
          }
        }
        if (stop) break;
        if (kink) {
          const yn = gend + 1 < this.G ? Math.min(N[gend + 1]!, x1) : x1;
          const lamN = yn - yb >= ROW_QUAD ? this.rowRate(x, yb) : 0;
          if (chainable(lamN, yn, gend + 1)) {
            this.eval(x, yb - x);
            const h2 = this.zero ? 0 : (Math.exp(this.logpre) * this.pmf(k + 1)) / x;
            const boundC = this.zero ? 0 : Math.exp(this.logpre) * this.psi0;
            const big = this.rowRate(0, yb);
            if (((big * big) / 240) * h2 <= 1e-16 * acc.value()) {
              if (e < yb) {
                const c = (e + yb) / 2;
                const h = (yb - e) / 2;
                for (let i = 0; i < 4; i++) acc.add(h * GAUSS4_W[i]! * this.jointPoint(x, c + h * GAUSS4_X[i]!, k));
              }
              const theta = yb - y0 - Math.floor(yb - y0);
              acc.add((-h2 * (theta * theta - theta + 1 / 6)) / 2);
              y = yb;
              if (boundC <= 1e-18 * lamN * acc.value()) break;
              continue;
            }
          }
        }
        for (let i = 0; i < 9; i++) f1[i] = this.jointPoint(x, e - i, k);
        addEndpoints(zeros, f1, acc);
        chain = false;
        y = e;
      } else if (smooth) {
        const gr = gaussRule();
        for (let i = 0; i < 9; i++) f0[i] = this.jointPoint(x, y + i, k);
        let p = y;
        let stop = false;
        while (yb - p > 32) {
          const w = Math.floor(Math.min((yb - p) / 2, ROW_PANEL / lam));
          const c = p + w / 2;
          const h = w / 2;
          for (let i = 0; i < GAUSS; i++) acc.add(h * gr.w[i]! * this.jointPoint(x, c + h * gr.x[i]!, k));
          p += w;
          lam = this.rowRate(x, p);
          if (this.bound <= 1e-18 * lam * acc.value()) {
            stop = true;
            break;
          }
        }
        for (let i = 0; i < 9; i++) f1[i] = this.jointPoint(x, p - i, k);
        addEndpoints(f0, f1, acc);
        if (stop) break;
        y = p;
      }
      let done = false;
      for (; y < yb; y++) {
        acc.add(this.jointPoint(x, y, k));
        if (this.bound <= 1e-20 * Math.max(acc.value(), 1e-280)) {
          done = true;
          break;
        }
      }
      if (done) break;
    }
    return acc.value();
  }

  /** P[j] = sum_{g >= g0} m_g (v/N_g)^(j+1), j < smax. */
  powerSums(v: number, g0: number, smax: number): void {
    const P = this.P;
    P.fill(0, 0, smax);
    if (g0 >= this.G) return;
    const b = Math.floor(g0 / BLOCK);
    const end = Math.min(this.G, (b + 1) * BLOCK);
    for (let g = g0; g < end; g++) {
      const q = v / this.N[g]!;
      let t = this.m[g]!;
      for (let j = 0; j < smax; j++) {
        t *= q;
        P[j] = P[j]! + t;
      }
    }
    if (end < this.G) {
      const q = v / this.N[end]!;
      const o = (b + 1) * MAX_S;
      let t = 1;
      for (let j = 0; j < smax; j++) {
        t *= q;
        P[j] = P[j]! + t * this.suffix[o + j]!;
      }
    }
  }

  eval(x: number, d: number): void {
    this.evaluations++;
    const y = x + d;
    const N = this.N;
    const mm = this.m;
    const gx = upperBound(N, x);
    const gy = upperBound(N, y);
    const sat = this.cumM[gx]!;
    const mid = this.cumM[gy]! - this.cumM[gx]!;
    const nu = this.n - this.cumM[gy]!;
    this.shift = sat + mid;
    this.zero = false;
    this.logpre = 0;
    if (mid > 0) {
      if (x <= 0) this.zero = true;
      else this.logpre = mid * Math.log(x) - (this.cumLog[gy]! - this.cumLog[gx]!);
    }
    const P = this.P;
    const ax = y > 0 ? x / y : 0;
    const dy = y > 0 ? d / y : 0;
    let smom = 2;
    if (d > 0 && dy <= 0.3) smom = Math.min(MAX_S, Math.max(2, Math.ceil(-43.8 / Math.log(dy)) + 1));
    this.powerSums(y, gy, smom);
    let mu = 0;
    let variance = 0;
    let logpsi0 = 0;
    if (d === 0) {
      mu = P[0]!;
      variance = P[0]! - P[1]!;
    } else if (dy <= 0.3) {
      let m1 = 0;
      let m2 = 0;
      let l0 = 0;
      let r = 1;
      for (let j = 0; j < smom; j++) {
        m1 += r * P[j]!;
        if (j >= 1) m2 += j * (r / dy) * P[j]!;
        l0 -= (r * dy * P[j]!) / (j + 1);
        r *= dy;
      }
      mu = ax * m1;
      variance = mu - ax * ax * m2;
      logpsi0 = l0;
    } else {
      for (let g = gy; g < this.G; g++) {
        const p = x / (N[g]! - d);
        mu += mm[g]! * p;
        variance += mm[g]! * p * (1 - p);
        logpsi0 += mm[g]! * Math.log1p(-d / N[g]!);
      }
    }
    variance = Math.max(0, variance);
    this.psi0 = d === 0 ? 1 : Math.exp(logpsi0);
    this.rate = y > 0 ? P[0]! / y : this.totalRate;
    this.sd = Math.sqrt(variance);
    const t = BERNSTEIN / 3 + Math.sqrt((BERNSTEIN * BERNSTEIN) / 9 + 2 * BERNSTEIN * variance);
    const L = Math.max(0, Math.floor(mu - t));
    const U = Math.min(nu, Math.ceil(mu + t));
    let M = Math.max(1, U - L + 1);
    if (M >= 128) {
      let step = 1;
      while (step * 32 <= M) step *= 2;
      M = Math.ceil(M / step) * step;
    }
    if (M % 2 === 0) M += 1;
    this.L = L;
    this.M = M;
    const c = (TAIL_LOG + Math.log(M)) / (2 * variance);
    let T = (M - 1) / 2;
    if (c < 1) T = Math.min(T, Math.floor((M / PI) * Math.asin(Math.sqrt(c))));
    this.T = T;
    if (this.re.length < T + 1) {
      this.re = new Float64Array(T + 1);
      this.im = new Float64Array(T + 1);
    }
    if (T === 0) return;
    const tab = (this.tab = this.table(M));
    const wT = 2 * Math.sin((PI * T) / M);
    const rho = ax * wT + dy;
    let S = gy < this.G ? seriesTerms((rho * y) / N[gy]!, nu) : 0;
    let gs = gy;
    for (let r = 2; S === 0 && r <= 8; r *= 2) {
      gs = Math.max(gy, upperBound(N, r * rho * y));
      if (gs < this.G) S = seriesTerms((rho * y) / N[gs]!, this.n - this.cumM[gs]!);
    }
    if (S === 0) gs = this.G;
    if (S > 0) this.powerSums(y, gs, S);
    else P[0] = 0;
    const P1 = P[0]!;
    const re = this.re;
    const im = this.im;
    const coef = this.coef;
    for (let s = 2; s <= S; s++) coef[s] = ((s % 2 === 0 ? -1.0 : 1.0) * P[s - 1]!) / s;
    for (let ti = 1; ti <= T; ti++) {
      const w = (2 * PI * ti) / M;
      const sh = tab.sh[ti]!;
      const wre = -2 * sh * sh;
      const wim = tab.s1[ti]!;
      let lre = 0;
      let lim = 0;
      this.pr = 1;
      this.pi = 0;
      this.ls = 0;
      const product = gy < gs;
      for (let g = gy; g < gs; g++) {
        const vre = (x * wre - d) / N[g]!;
        const vim = (x * wim) / N[g]!;
        let bre = 1 + vre;
        let bim = vim;
        if (mm[g] === 1) {
          this.mulInto(bre, bim, 0);
          continue;
        }
        let lb = 0;
        for (let e = mm[g]!; ;) {
          if (e % 2 === 1) this.mulInto(bre, bim, lb);
          e = Math.floor(e / 2);
          if (e === 0) break;
          const nre = bre * bre - bim * bim;
          bim = 2 * bre * bim;
          bre = nre;
          lb *= 2;
          if (Math.abs(bre) + Math.abs(bim) < TINY) {
            bre *= RESCALE;
            bim *= RESCALE;
            lb -= LOG_RESCALE;
          }
        }
      }
      if (product) {
        lre += 0.5 * Math.log(this.pr * this.pr + this.pi * this.pi) + this.ls;
        lim += Math.atan2(this.pi, this.pr);
      }
      if (S > 0) {
        lre += (ax * wre - dy) * P1;
        lim += (ax * P1 - L) * wim + L * sinMinus(w);
        const ure = ax * wre - dy;
        const uim = ax * wim;
        let pre = ure;
        let pim = uim;
        for (let s = 2; s <= S; s++) {
          const nre = pre * ure - pim * uim;
          pim = pre * uim + pim * ure;
          pre = nre;
          const f = coef[s]!;
          lre += f * pre;
          lim += f * pim;
        }
      } else {
        lim -= w * L;
      }
      const mag = Math.exp(lre);
      re[ti] = mag * Math.cos(lim);
      im[ti] = mag * Math.sin(lim);
    }
  }

  /** sin(w/2), sin(w), cos(w) at w = 2 pi j / M, j < M, for the last two M (native: table). */
  table(M: number): TrigTable {
    for (const t of this.tables) if (t.M === M) return t;
    const sh = new Float64Array(M);
    const s1 = new Float64Array(M);
    const c1 = new Float64Array(M);
    for (let j = 0; j < M; j++) {
      const w = (2 * PI * j) / M;
      sh[j] = Math.sin(w / 2);
      s1[j] = Math.sin(w);
      c1[j] = Math.cos(w);
    }
    const t = { M, sh, s1, c1 };
    this.tables[this.nextTable] = t;
    this.nextTable ^= 1;
    return t;
  }

  /** The running product of eval times (bre + i bim) e^lb, rescaled by 2^332 when small (native: inline). */
  private mulInto(bre: number, bim: number, lb: number): void {
    const nre = this.pr * bre - this.pi * bim;
    this.pi = this.pr * bim + this.pi * bre;
    this.pr = nre;
    this.ls += lb;
    if (Math.abs(this.pr) + Math.abs(this.pi) < TINY) {
      this.pr *= RESCALE;
      this.pi *= RESCALE;
      this.ls -= LOG_RESCALE;
    }
  }

  geometric(J: number): number {
    let acc = 0;
    const M = this.M;
    const tab = this.tab!;
    for (let ti = 1; ti <= this.T; ti++) {
      const j = (ti * (J + 1)) % M; // th = 2 pi j / M, w = 2 pi t / M
      const sh = tab.sh[j]!;
      const sw = tab.sh[ti]!;
      const nre = 2 * sh * sh;
      const nim = tab.s1[j]!;
      const dre = 2 * sw * sw;
      const dim = tab.s1[ti]!;
      const den = dre * dre + dim * dim;
      const gre = (nre * dre + nim * dim) / den;
      const gim = (nim * dre - nre * dim) / den;
      acc += this.re[ti]! * gre - this.im[ti]! * gim;
    }
    return 2 * acc;
  }

  lower(j: number): number {
    const jj = j - this.shift;
    if (jj < this.L) return 0;
    if (jj >= this.L + this.M - 1) return this.psi0;
    const J = jj - this.L;
    return Math.min(this.psi0, Math.max(0, (this.psi0 * (J + 1) + this.geometric(J)) / this.M));
  }

  upper(j: number): number {
    const jj = j - this.shift;
    if (jj < this.L) return this.psi0;
    if (jj >= this.L + this.M - 1) return 0;
    const J = jj - this.L;
    return Math.min(this.psi0, Math.max(0, (this.psi0 * (this.M - 1 - J) - this.geometric(J)) / this.M));
  }

  pmf(c: number): number {
    const cc = c - this.shift;
    if (cc < this.L || cc >= this.L + this.M) return 0;
    const C = cc - this.L;
    let acc = 0;
    const tab = this.tab!;
    for (let ti = 1; ti <= this.T; ti++) {
      const j = (ti * C) % this.M; // th = 2 pi j / M
      acc += this.re[ti]! * tab.c1[j]! + this.im[ti]! * tab.s1[j]!;
    }
    return Math.max(0, (this.psi0 + 2 * acc) / this.M);
  }

  scale(x: number): number {
    this.eval(x, 0);
    return Math.max(1, this.sd) / (2 * this.rate);
  }

  direct(a: number, b: number, K: number, f: Fn, out: Float64Array): void {
    const acc = Array.from({ length: K }, () => new CompensatedSum());
    const v = new Float64Array(4);
    for (let x = a; x < b; x++) {
      f(x, v);
      for (let i = 0; i < K; i++) acc[i]!.add(v[i]!);
    }
    for (let i = 0; i < K; i++) out[i] = acc[i]!.value();
  }

  /** sum_{a <= x < b} f(x) (K components) by panels and Euler-Maclaurin endpoint terms (native: sum_run). */
  sumRun(a: number, b: number, K: number, f: Fn, width: (x: number) => number, out: Float64Array): void {
    const gr = gaussRule();
    const acc = Array.from({ length: K }, () => new CompensatedSum());
    const f0 = Array.from({ length: K }, () => new Float64Array(9));
    const f1 = Array.from({ length: K }, () => new Float64Array(9));
    const v = new Float64Array(4);
    for (let i = 0; i < 9; i++) {
      f(a + i, v);
      for (let j = 0; j < K; j++) f0[j]![i] = v[j]!;
    }
    let p = a;
    while (b - p > 32) {
      const w = Math.floor(Math.min((b - p) / 2, Math.max(16, width(p))));
      const c = p + w / 2;
      const h = w / 2;
      for (let i = 0; i < GAUSS; i++) {
        f(c + h * gr.x[i]!, v);
        for (let j = 0; j < K; j++) acc[j]!.add(h * gr.w[i]! * v[j]!);
      }
      p += w;
    }
    for (let i = 0; i < 9; i++) {
      f(p - i, v);
      for (let j = 0; j < K; j++) f1[j]![i] = v[j]!;
    }
    for (let j = 0; j < K; j++) addEndpoints(f0[j]!, f1[j]!, acc[j]!);
    for (; p < b; p++) {
      f(p, v);
      for (let j = 0; j < K; j++) acc[j]!.add(v[j]!);
    }
    for (let j = 0; j < K; j++) out[j] = acc[j]!.value();
  }

  eulerMaclaurin(a: number, b: number, K: number, f: Fn, out: Float64Array, panel = 1): void {
    const gr = gaussRule();
    const acc = Array.from({ length: K }, () => new CompensatedSum());
    const v = new Float64Array(4);
    let t = a;
    while (t < b) {
      const w = Math.min(b - t, Math.max(16, panel * this.scale(t)));
      const c = t + w / 2;
      const h = w / 2;
      for (let i = 0; i < GAUSS; i++) {
        f(c + h * gr.x[i]!, v);
        for (let j = 0; j < K; j++) acc[j]!.add(h * gr.w[i]! * v[j]!);
      }
      t += w;
    }
    const pts = [a, a + 1, a + 2, b, b - 1, b - 2].map((x) => {
      const o = new Float64Array(4);
      f(x, o);
      return o;
    });
    const [fa, fa1, fa2, fb, fb1, fb2] = pts as [
      Float64Array,
      Float64Array,
      Float64Array,
      Float64Array,
      Float64Array,
      Float64Array,
    ];
    for (let j = 0; j < K; j++) {
      acc[j]!.add((fa[j]! - fb[j]!) / 2);
      const da = (-3 * fa[j]! + 4 * fa1[j]! - fa2[j]!) / 2;
      const db = (3 * fb[j]! - 4 * fb1[j]! + fb2[j]!) / 2;
      acc[j]!.add((db - da) / 12);
      out[j] = acc[j]!.value();
    }
  }
}

/** E and Var of the conventional median rank for validated candidate counts (integers >= 1). */
export function medianMoments(
  numCandidates: Float64Array,
  wantVariance = true,
): { expectation: number; variance: number; evaluations: number } {
  const model = new MedianModel(numCandidates);
  const [expectation, variance] = model.run(wantVariance);
  return { expectation, variance, evaluations: model.evaluations };
}
