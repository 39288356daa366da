/**
 * The standard normal upper tail Q(z) = P(Z >= z), accurate to ~1e-14 relative from z = -38 to the underflow of
 * double precision (z ~ 38.5), never formed as 1 - cdf. The one normal tail of the package: z-score p-values
 * (src/metrics/pvalue.ts) and the paired tests' normal approximation (src/compare/distributions.ts) both use it.
 *   z < 0:      1 - Q(-z)                       (Q(-z) < 1/2, no cancellation)
 *   0 <= z < 3: 1/2 - phi(z) * sum_n z^(2n+1) / (1*3*...*(2n+1))   (positive series; cancellation < 3 digits)
 *   z >= 3:     phi(z) / (z + 1/(z + 2/(z + 3/(z + ...))))  (Mills-ratio continued fraction, evaluated backwards)
 */

const INV_SQRT_2PI = 0.3989422804014327;

function density(z: number): number {
  // exp(-z^2/2) with z^2 split so its rounding error does not grow with z.
  const hi = Math.round(z * 65536) / 65536;
  const lo = z - hi;
  return INV_SQRT_2PI * Math.exp(-0.5 * hi * hi) * Math.exp(-lo * (hi + 0.5 * lo));
}

/** Q(z) for finite z >= 0. */
function upperTail(z: number): number {
  if (z < 3) {
    let term = z;
    let sum = z;
    const z2 = z * z;
    for (let n = 1; n < 200 && Math.abs(term) > 1e-17 * Math.abs(sum); n++) {
      term *= z2 / (2 * n + 1);
      sum += term;
    }
    return 0.5 - density(z) * sum;
  }
  let fraction = z;
  for (let n = 200; n >= 1; n--) fraction = z + n / fraction;
  return density(z) / fraction;
}

/** P(Z >= z) for a standard normal Z: 0 at +Infinity, 1 at -Infinity, NaN for NaN. */
export function normalUpperTail(z: number): number {
  if (Number.isNaN(z)) return NaN;
  if (z === Infinity) return 0;
  if (z === -Infinity) return 1;
  return z < 0 ? 1 - upperTail(-z) : upperTail(z);
}
