/**
 * Harmonic numbers H_1(n), H_2(n) (table up to HARMONIC_TABLE_LIMIT, asymptotic series above) and H_p(n) for real
 * p. Twin of native/core/harmonic.{h,cpp}: the same table, the same series (each written once), the same order.
 */
import { CompensatedSum } from "../numeric/compensated";

const HARMONIC_TABLE_LIMIT = 1 << 16;
let tables: { h1: Float64Array; h2: Float64Array } | null = null;

function harmonicTables(): { h1: Float64Array; h2: Float64Array } {
  if (tables) return tables;
  const h1 = new Float64Array(HARMONIC_TABLE_LIMIT + 1);
  const h2 = new Float64Array(HARMONIC_TABLE_LIMIT + 1);
  const s1 = new CompensatedSum();
  const s2 = new CompensatedSum();
  for (let j = 1; j <= HARMONIC_TABLE_LIMIT; j++) {
    const inv = 1 / j;
    s1.add(inv);
    s2.add(inv * inv);
    h1[j] = s1.value();
    h2[j] = s2.value();
  }
  tables = { h1, h2 };
  return tables;
}

const EULER_GAMMA = 0.5772156649015329;
const PI2_OVER_6 = 1.6449340668482264;

/** H_1(n) = ln n + gamma + 1/(2n) - sum_k B_2k / (2k n^2k), x = 1/n (harmonic1_series). */
function harmonic1Series(n: number, x: number): number {
  const x2 = x * x;
  const tail = x2 * (1 / 12 - x2 * (1 / 120 - x2 * (1 / 252 - x2 * (1 / 240 - x2 * (1 / 132)))));
  return Math.log(n) + EULER_GAMMA + 0.5 * x - tail;
}

/** H_2(n) = pi^2/6 - psi'(n+1), x = 1/n (harmonic2_series). */
function harmonic2Series(x: number): number {
  const x2 = x * x;
  const series = x + 0.5 * x2 + x * x2 * (1 / 6 - x2 * (1 / 30 - x2 * (1 / 42 - x2 * (1 / 30))));
  return PI2_OVER_6 - (series - x2);
}

export function harmonic1(n: number): number {
  return n <= HARMONIC_TABLE_LIMIT ? harmonicTables().h1[n]! : harmonic1Series(n, 1 / n);
}

export function harmonic2(n: number): number {
  return n <= HARMONIC_TABLE_LIMIT ? harmonicTables().h2[n]! : harmonic2Series(1 / n);
}

/** [H_1(n)/n, H_2(n)/n] with one log and one division above the table (harmonic_means). */
export function harmonicMeans(n: number): [number, number] {
  if (n <= HARMONIC_TABLE_LIMIT) {
    const t = harmonicTables();
    return [t.h1[n]! / n, t.h2[n]! / n];
  }
  const x = 1 / n;
  return [harmonic1Series(n, x) * x, harmonic2Series(x) * x];
}

/** H_p(n) for real p (harmonic_real). */
export function generalizedHarmonic(n: number, p: number): number {
  const M = 256;
  const s = new CompensatedSum();
  const top = Math.min(n, M);
  for (let j = 1; j <= top; j++) s.add(Math.exp(-p * Math.log(j)));
  if (n <= M) return s.value();
  const logRatio = Math.log(n / M);
  const q = 1 - p;
  const integral = q === 0 ? logRatio : (Math.exp(q * Math.log(M)) * Math.expm1(q * logRatio)) / q;
  const c1 = -p;
  const c3 = -p * (p + 1) * (p + 2);
  const c5 = c3 * (p + 3) * (p + 4);
  const em = (x: number) => {
    const fx = Math.exp(-p * Math.log(x));
    const inv = 1 / x;
    const inv2 = inv * inv;
    return fx / 2 + fx * inv * (c1 / 12 + inv2 * (-c3 / 720 + inv2 * (c5 / 30240)));
  };
  s.add(integral);
  s.add(em(n) - em(M));
  return s.value();
}
