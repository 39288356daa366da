/**
 * Independent references for the metric tests: exact rationals (BigInt) and brute-force enumeration with plain
 * loops. Nothing here is shared with src/.
 */

/** An exact rational number num/den with den > 0. */
export class Fraction {
  readonly num: bigint;
  readonly den: bigint;
  constructor(num: bigint, den: bigint = 1n) {
    if (den < 0n) {
      num = -num;
      den = -den;
    }
    const g = gcd(num < 0n ? -num : num, den);
    this.num = g === 0n ? 0n : num / g;
    this.den = g === 0n ? 1n : den / g;
  }
  static of(x: number): Fraction {
    // exact for integers and half-integers
    if (Number.isInteger(x)) return new Fraction(BigInt(x));
    if (Number.isInteger(2 * x)) return new Fraction(BigInt(2 * x), 2n);
    throw new Error(`Fraction.of(${x}) expects an integer or half-integer`);
  }
  add(o: Fraction): Fraction {
    return new Fraction(this.num * o.den + o.num * this.den, this.den * o.den);
  }
  sub(o: Fraction): Fraction {
    return new Fraction(this.num * o.den - o.num * this.den, this.den * o.den);
  }
  mul(o: Fraction): Fraction {
    return new Fraction(this.num * o.num, this.den * o.den);
  }
  div(o: Fraction): Fraction {
    return new Fraction(this.num * o.den, this.den * o.num);
  }
  /** The nearest double (within an ulp or so). */
  toNumber(): number {
    if (this.num === 0n) return 0;
    const neg = this.num < 0n;
    const n = neg ? -this.num : this.num;
    const shift = 80 - (n.toString(2).length - this.den.toString(2).length);
    const q = shift >= 0 ? (n << BigInt(shift)) / this.den : n / (this.den << BigInt(-shift));
    const v = Number(q) * 2 ** -shift;
    return neg ? -v : v;
  }
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

const sumF = (xs: Fraction[]) => xs.reduce((a, b) => a.add(b), new Fraction(0n));

/** H_p(n) exactly. */
export function harmonicExact(n: number, p = 1): Fraction {
  let s = new Fraction(0n);
  for (let j = 1; j <= n; j++) s = s.add(new Fraction(1n, BigInt(j) ** BigInt(p)));
  return s;
}

/** Exact E and Var of a weighted mean of per-task statistics with per-task exact (E_i, V_i). */
export function weightedMoments(parts: [Fraction, Fraction][], weights: number[]): [Fraction, Fraction] {
  const w = weights.map((x) => Fraction.of(x));
  const W = sumF(w);
  const e = sumF(parts.map(([ei], i) => ei.mul(w[i]!))).div(W);
  const v = sumF(parts.map(([, vi], i) => vi.mul(w[i]!).mul(w[i]!))).div(W.mul(W));
  return [e, v];
}

export function exactMoments(
  kind: "mr" | "mrr" | "hits",
  numCandidates: number[],
  weights?: number[],
  k = 1,
): [Fraction, Fraction] {
  const parts = numCandidates.map((n): [Fraction, Fraction] => {
    const N = BigInt(n);
    if (kind === "mr") return [new Fraction(N + 1n, 2n), new Fraction(N * N - 1n, 12n)];
    if (kind === "mrr") {
      const e = harmonicExact(n).div(new Fraction(N));
      return [e, harmonicExact(n, 2).div(new Fraction(N)).sub(e.mul(e))];
    }
    const p = new Fraction(BigInt(Math.min(k, n)), N);
    return [p, p.mul(new Fraction(1n).sub(p))];
  });
  return weightedMoments(parts, weights ?? numCandidates.map(() => 1));
}

// ---- plain reference values -------------------------------------------------------------------------------------
function sortedCopy(xs: number[]): number[] {
  return [...xs].sort((a, b) => a - b);
}

export function refMedian(xs: number[], ws?: number[]): number {
  if (!ws) {
    const s = sortedCopy(xs);
    const n = s.length;
    return n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
  }
  const idx = xs.map((_, i) => i).sort((a, b) => xs[a]! - xs[b]!);
  const total = ws.reduce((a, b) => a + b, 0);
  let cum = 0;
  for (let j = 0; j < idx.length; j++) {
    cum += ws[idx[j]!]!;
    if (cum >= total / 2) {
      if (cum === total / 2 && j + 1 < idx.length) return (xs[idx[j]!]! + xs[idx[j + 1]!]!) / 2;
      return xs[idx[j]!]!;
    }
  }
  return xs[idx[idx.length - 1]!]!;
}

/** Reference values of every base metric by its key (plain sums; no compensation). */
export function refValue(key: string, r: number[], w?: number[]): number {
  const ws = w ?? r.map(() => 1);
  const W = ws.reduce((a, b) => a + b, 0);
  const wmean = (f: (x: number) => number) => r.reduce((a, x, i) => a + ws[i]! * f(x), 0) / W;
  const hits = /^hits_at_(\d+)$/.exec(key);
  if (hits) return wmean((x) => (x <= Number(hits[1]) ? 1 : 0));
  const mean = r.reduce((a, b) => a + b, 0) / r.length;
  const variance = r.reduce((a, x) => a + (x - mean) ** 2, 0) / r.length;
  switch (key) {
    case "arithmetic_mean_rank":
      return wmean((x) => x);
    case "inverse_arithmetic_mean_rank":
      return 1 / wmean((x) => x);
    case "geometric_mean_rank":
      return Math.exp(wmean(Math.log));
    case "inverse_geometric_mean_rank":
      return Math.exp(-wmean(Math.log));
    case "harmonic_mean_rank":
      return 1 / wmean((x) => 1 / x);
    case "inverse_harmonic_mean_rank":
      return wmean((x) => 1 / x);
    case "median_rank":
      return refMedian(r, w);
    case "inverse_median_rank":
      return 1 / refMedian(r, w);
    case "standard_deviation":
      return Math.sqrt(variance);
    case "variance":
      return variance;
    case "median_absolute_deviation": {
      const m = refMedian(r, w);
      return (
        refMedian(
          r.map((x) => Math.abs(x - m)),
          w,
        ) / 0.6744897501960817
      );
    }
    case "count":
      return r.length;
  }
  throw new Error(`no reference for ${key}`);
}

/**
 * E and Var of any metric by enumerating every rank vector (r_i in 1..N_i), each with probability prod 1/N_i.
 * Feasible when prod N_i is small.
 */
export function bruteForceMoments(value: (ranks: number[]) => number, numCandidates: number[]): [number, number] {
  const n = numCandidates.length;
  const r = numCandidates.map(() => 1);
  const values: number[] = [];
  for (;;) {
    values.push(value([...r]));
    let i = 0;
    while (i < n && r[i] === numCandidates[i]) r[i++] = 1;
    if (i === n) break;
    r[i]!++;
  }
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const variance = values.reduce((a, x) => a + (x - mean) ** 2, 0) / values.length;
  return [mean, variance];
}

export function relErr(actual: number, expected: number): number {
  if (expected === 0) return Math.abs(actual);
  return Math.abs(actual - expected) / Math.abs(expected);
}
