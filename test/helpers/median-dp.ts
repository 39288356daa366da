/**
 * The median's E and Var by an independent float64 DP over the full distribution, for n in the thousands (odd and
 * even n, mixed N): the cases of median-moments.test.ts, and their values in test/fixtures/median-dp-reference.json.
 * The DP does not depend on the backend and costs seconds, so the fixture holds its values and the "once" project's
 * references.test.ts recomputes them and checks the file (KGRANK_WRITE_FIXTURES=1 rewrites it).
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";

export const MEDIAN_DP_FIXTURE = path.join(__dirname, "..", "fixtures", "median-dp-reference.json");

export function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

export interface DpCase {
  name: string;
  N: number[];
  /** Var tolerance (relative) against the DP, which sums ~1e5 float64 terms; E is held to 1e-12. */
  varTolerance: number;
}

/** The DP cases: N drawn by an LCG from fixed seeds. */
export function medianDpCases(): DpCase[] {
  const out: DpCase[] = [];
  for (const [n, maxN, seed] of [
    [1001, 60, 1],
    [1000, 30, 2],
    [5001, 20, 3],
    [400, 200, 4],
    [200, 80, 5],
  ] as const) {
    const rnd = lcg(seed);
    const N = Array.from({ length: n }, () => 1 + Math.floor(rnd() * maxN));
    out.push({ name: `n = ${n}, N_i uniform on 1..${maxN}`, N, varTolerance: 1e-10 });
  }
  // Even n with N far above n: the band of x and each row's sum over y are long and cut by the distinct N.
  for (const [n, maxN, seed, distinct] of [
    [8, 1500, 31, 0],
    [12, 1200, 32, 3],
    [6, 2500, 33, 0],
  ] as const) {
    const rnd = lcg(seed);
    const pool = Array.from({ length: distinct }, () => 1 + Math.floor(rnd() * maxN));
    const N = Array.from({ length: n }, () =>
      distinct ? pool[Math.floor(rnd() * distinct)]! : 1 + Math.floor(rnd() * maxN),
    );
    const what = distinct ? `${distinct} distinct values` : "uniform";
    out.push({ name: `even n = ${n}, N_i ${what} up to ${maxN} (N >> n)`, N, varTolerance: 1e-9 });
  }
  // N_i = 1 mixtures (saturated tasks shift the count).
  const rnd = lcg(9);
  for (const frac of [0.3, 0.5, 0.7]) {
    const N = Array.from({ length: 301 }, () => (rnd() < frac ? 1 : 1 + Math.floor(rnd() * 50)));
    out.push({ name: `n = 301, N_i = 1 with probability ${frac}, else uniform on 1..50`, N, varTolerance: 1e-10 });
  }
  return out;
}

/** The fixture: each case's name and the DP's E and Var, in the order of medianDpCases(). */
export function readMedianDpFixture(): { name: string; e: number; v: number }[] {
  return (JSON.parse(readFileSync(MEDIAN_DP_FIXTURE, "utf8")) as { cases: { name: string; e: number; v: number }[] })
    .cases;
}

/**
 * Independent reference: the full Poisson-binomial distribution of C_x by DP for every x (O(max N * n^2)), and for
 * even n the joint P(C_x = k, C_y = k) = [z^k] prod_i (p_i(x) z + 1 - p_i(y)) for every x < y; raw moment sums.
 */
export function dpReference(N: number[]): { e: number; v: number } {
  const n = N.length;
  const k = n % 2 ? (n + 1) / 2 : n / 2;
  const maxN = Math.max(...N);
  const q = new Float64Array(n + 1);
  const pb = (x: number, y: number) => {
    q.fill(0);
    q[0] = 1;
    for (let i = 0; i < n; i++) {
      const a = Math.min(x, N[i]!) / N[i]!;
      const b = 1 - Math.min(y, N[i]!) / N[i]!;
      for (let c = i + 1; c >= 1; c--) q[c] = q[c]! * b + q[c - 1]! * a;
      q[0] = q[0]! * b;
    }
  };
  let ea = 0;
  let ea2 = 0;
  let eb = 0;
  let eb2 = 0;
  let eab = 0;
  for (let x = 0; x < maxN; x++) {
    pb(x, x);
    let fa = 0;
    for (let c = 0; c < k; c++) fa += q[c]!;
    const fb = fa + q[k]!;
    ea += fa;
    ea2 += (2 * x + 1) * fa;
    eb += fb;
    eb2 += (2 * x + 1) * fb;
    eab += (x + 1) * fa + x * fb;
  }
  if (n % 2) return { e: ea, v: ea2 - ea * ea };
  for (let x = 0; x < maxN; x++) {
    for (let y = x + 1; y < maxN; y++) {
      pb(x, y);
      eab -= q[k]!;
    }
  }
  return { e: (ea + eb) / 2, v: (ea2 + eb2 + 2 * eab - (ea + eb) ** 2) / 4 };
}
