/**
 * Centred power sums S1(N) = sum_{j<=N} e_j, S2(N) = sum_{j<=N} e_j^2, e_j = expm1(a log j), of the geometric-mean
 * moments: a term-by-term sweep up to POWER_SWEEP_LIMIT, the Euler-Maclaurin tail above it.
 * Twin of native/core/power_sums.{h,cpp} (centred_power, log1p_small, PowerTail, power_sweep).
 */
import { CompensatedSum } from "../numeric/compensated";

/** Term-by-term sweep limit M of the centred power sums; Euler-Maclaurin above it. */
const POWER_SWEEP_LIMIT = 256;

/** expm1(a log x), by its Taylor polynomial when `small` (|a log x| < 0.02). */
function centredPower(a: number, x: number, small: boolean): number {
  const u = a * Math.log(x);
  if (!small) return Math.expm1(u);
  return u * (1 + u * (1 / 2 + u * (1 / 6 + u * (1 / 24 + u * (1 / 120 + u * (1 / 720 + u * (1 / 5040)))))));
}

/** log1p(x) by its Taylor polynomial for |x| < 0.02 (to x^5 below 1e-4), Math.log1p above. */
export function log1pSmall(x: number): number {
  const ax = Math.abs(x);
  if (ax < 1e-4) return x * (1 + x * (-1 / 2 + x * (1 / 3 + x * (-1 / 4 + x * (1 / 5)))));
  if (!(ax < 0.02)) return Math.log1p(x);
  return (
    x *
    (1 +
      x *
        (-1 / 2 +
          x *
            (1 / 3 +
              x *
                (-1 / 4 +
                  x *
                    (1 / 5 +
                      x *
                        (-1 / 6 +
                          x * (1 / 7 + x * (-1 / 8 + x * (1 / 9 + x * (-1 / 10 + x * (1 / 11 + x * (-1 / 12))))))))))))
  );
}

const falling3 = (b: number) => b * (b - 1) * (b - 2);
const falling5 = (b: number) => b * (b - 1) * (b - 2) * (b - 3) * (b - 4);

/** Euler-Maclaurin part T(x) = F + f/2 + f'/12 - f'''/720 + f^(5)/30240 of S1 = sum e_j and S2 = sum e_j^2. */
class PowerTail {
  readonly f1: number;
  readonly f2: number;
  readonly d1: number;
  readonly d3: number;
  readonly d5: number;
  readonly e3: number;
  readonly e5: number;
  constructor(
    readonly a: number,
    readonly small: boolean,
  ) {
    this.f1 = 1 / (1 + a);
    this.f2 = 1 / ((1 + a) * (1 + 2 * a));
    this.d1 = a / 12;
    this.d3 = -falling3(a) / 720;
    this.d5 = falling5(a) / 30240;
    this.e3 = -falling3(2 * a) / 720;
    this.e5 = falling5(2 * a) / 30240;
  }
  at(x: number): [number, number] {
    const a = this.a;
    const e = centredPower(a, x, this.small);
    const p = 1 + e;
    const inv = 1 / x;
    const inv2 = inv * inv;
    const inv3 = inv2 * inv;
    const inv5 = inv3 * inv2;
    const t1 = x * (e - a) * this.f1 + 0.5 * e + p * (this.d1 * inv + this.d3 * inv3 + this.d5 * inv5);
    const t2 =
      x * (e * e * (1 + a) - 2 * a * e + 2 * a * a) * this.f2 +
      0.5 * e * e +
      2 * this.d1 * p * e * inv +
      (this.e3 * p * p - 2 * this.d3 * p) * inv3 +
      (this.e5 * p * p - 2 * this.d5 * p) * inv5;
    return [t1, t2];
  }
}

/** What power_sweep leaves: bins from `first` on lie above the sweep limit; at(x) gives their sums. */
export interface PowerSweep {
  first: number;
  at(x: number): [number, number];
}

/**
 * The sweep of one exponent a over sorted distinct n[0..count): head(i, S1, S2) for the bins up to the sweep limit,
 * in bin order; the rest through at() (power_sweep).
 */
export function powerSweep(
  a: number,
  n: ArrayLike<number>,
  count: number,
  head: (i: number, s1: number, s2: number) => void,
): PowerSweep {
  const maxN = n[count - 1]!;
  const small = a * Math.log(Math.max(maxN, 2)) < 0.02;
  const limit = Math.min(maxN, POWER_SWEEP_LIMIT);
  const s1 = new CompensatedSum();
  const s2 = new CompensatedSum();
  let i = 0;
  for (let j = 1; j <= limit; j += 1) {
    const e = centredPower(a, j, small);
    s1.add(e);
    s2.add(e * e);
    for (; i < count && n[i] === j; i++) head(i, s1.value(), s2.value());
  }
  const base1 = s1.value();
  const base2 = s2.value();
  const tail = new PowerTail(a, small);
  const [m1, m2] = tail.at(POWER_SWEEP_LIMIT);
  return {
    first: i,
    at(x: number): [number, number] {
      const [t1, t2] = tail.at(x);
      return [base1 + (t1 - m1), base2 + (t2 - m2)];
    },
  };
}
