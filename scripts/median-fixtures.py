#!/usr/bin/env python3
"""Exact E and Var of the median rank for small n (odd or even, any N up to 2^31-1) -> test/fixtures/median-reference.json.

Rational arithmetic (fractions.Fraction), no floating point. With C_x = #{i : r_i <= x} and k the lower middle
index, P(r_(k) > x) = P(C_x <= k-1) and P(r_(k+1) > x) = P(C_x <= k) are, on each run of x between consecutive
distinct N_i, polynomials in x (Poisson-binomial with p_i = x/N_i or 1), built coefficient by coefficient; sums of
x^e over a run come from Faulhaber's formula with exact Bernoulli numbers. E[A] = sum_x P(A > x),
E[A^2] = sum_x (2x+1) P(A > x). For even n the median is (A + B)/2 with A = r_(k), B = r_(k+1), and
E[AB] = sum_x (x+1) P(A > x) + sum_x x P(B > x) - J, J = sum_{x<y} P(C_x = k, C_y = k), where
P(C_x = k, C_y = k) = [z^k] prod_i f_i with f_i = z (N_i <= x), (x/N_i) z (x < N_i <= y), (x/N_i) z + 1 - y/N_i
(N_i > y): a polynomial in (x, y) on each cell (x-run, y-run), summed over the lattice exactly (on the diagonal cell
sum_{y=x+1}^{hi-1} y^b = T_b(hi) - T_b(x+1) with T_b Faulhaber's polynomial). Values are exact; the JSON holds
them rounded to 17 significant digits (mpmath, 40 digits, only for the decimal rounding of the exact rationals).
Run: python3 scripts/median-fixtures.py
"""
import json
import os
from fractions import Fraction
from math import comb

import mpmath

mpmath.mp.dps = 40


def bernoulli(m):
    B = [Fraction(0)] * (m + 1)
    B[0] = Fraction(1)
    for n in range(1, m + 1):
        B[n] = -sum(comb(n + 1, k) * B[k] for k in range(n)) / (n + 1)
    return B


BERN = bernoulli(60)


def faulhaber(e):
    """Coefficients c[j] with sum_{t=0}^{n-1} t^e = sum_j c[j] n^j."""
    c = [Fraction(0)] * (e + 2)
    for j in range(e + 1):
        c[e + 1 - j] += comb(e + 1, j) * BERN[j] / (e + 1)
    return c


def power_sum(e, lo, hi):
    """sum_{t=lo}^{hi-1} t^e (exact)."""
    if hi <= lo:
        return Fraction(0)
    return sum(cj * (Fraction(hi) ** j - Fraction(lo) ** j) for j, cj in enumerate(faulhaber(e)))


def poly_mul(a, b):
    """Product of bivariate polynomials {(i, j): coefficient of x^i y^j}."""
    out = {}
    for (i, j), u in a.items():
        for (k, l), v in b.items():
            out[(i + k, j + l)] = out.get((i + k, j + l), 0) + u * v
    return out


def generating(factors):
    """prod of (c0 + c1 z) over the factors (c0, c1 bivariate polynomials): list over powers of z."""
    gen = [{(0, 0): Fraction(1)}]
    for c0, c1 in factors:
        new = [dict() for _ in range(len(gen) + 1)]
        for c, p in enumerate(gen):
            for dz, f in ((0, c0), (1, c1)):
                if f:
                    for key, v in poly_mul(p, f).items():
                        new[c + dz][key] = new[c + dz].get(key, 0) + v
        gen = new
    return gen


def moments(N):
    n = len(N)
    k = (n + 1) // 2 if n % 2 else n // 2
    bps = sorted(set(N))
    edges = [0] + bps  # run j: x in [edges[j], edges[j+1])
    one = {(0, 0): Fraction(1)}
    ea = eb = ea2 = eb2 = eab = Fraction(0)
    for j in range(len(bps)):
        lo, hi = edges[j], edges[j + 1]
        gen = generating([({}, one) if Ni <= lo else ({(0, 0): Fraction(1), (1, 0): Fraction(-1, Ni)}, {(1, 0): Fraction(1, Ni)})
                          for Ni in N])
        FA, FB = {}, {}
        for c in range(k + 1):
            for key, v in gen[c].items():
                if c < k:
                    FA[key] = FA.get(key, 0) + v
                FB[key] = FB.get(key, 0) + v
        for (a, _), v in FA.items():
            s0, s1 = power_sum(a, lo, hi), power_sum(a + 1, lo, hi)
            ea += v * s0
            ea2 += v * (2 * s1 + s0)
            eab += v * (s1 + s0)
        for (a, _), v in FB.items():
            s0, s1 = power_sum(a, lo, hi), power_sum(a + 1, lo, hi)
            eb += v * s0
            eb2 += v * (2 * s1 + s0)
            eab += v * s1
    if n % 2:
        return ea, ea2 - ea * ea
    J = Fraction(0)
    for j in range(len(bps)):
        xlo, xhi = edges[j], edges[j + 1]
        for l in range(j, len(bps)):
            ylo, yhi = edges[l], edges[l + 1]
            factors = []
            for Ni in N:
                if Ni <= xlo:
                    factors.append(({}, one))
                elif Ni <= ylo:
                    factors.append(({}, {(1, 0): Fraction(1, Ni)}))
                else:
                    factors.append(({(0, 0): Fraction(1), (0, 1): Fraction(-1, Ni)}, {(1, 0): Fraction(1, Ni)}))
            for (a, b), v in generating(factors)[k].items():
                if l > j:
                    J += v * power_sum(a, xlo, xhi) * power_sum(b, ylo, yhi)
                    continue
                # sum_{x=xlo}^{xhi-1} x^a sum_{y=x+1}^{xhi-1} y^b, T_b(x+1) = sum_m c_m (x+1)^m
                tot = power_sum(a, xlo, xhi) * power_sum(b, 0, xhi)
                for m, cm in enumerate(faulhaber(b)):
                    if cm:
                        for r in range(m + 1):
                            tot -= cm * comb(m, r) * power_sum(a + r, xlo, xhi)
                J += v * tot
    eab -= J
    return (ea + eb) / 2, (ea2 + eb2 + 2 * eab - (ea + eb) ** 2) / 4


CASES = [
    [1e8, 1e8, 1e8],
    [2147483647, 2147483647, 2147483647],
    [3, 100000000, 2147483647],
    [1, 1, 5],
    [10, 1000, 100000, 10000000, 1000000000],
    [7, 7, 7, 7, 7],
    [1, 2, 3, 1000000, 1000000, 1000000, 2147483647],
    [5000, 10000, 20000, 40000, 80000, 160000, 320000, 640000, 1280000],
    # even n with N far above n: the joint law of the two middle ranks (J) over long gaps
    [2, 3, 5, 7],
    [1e8, 1e8, 1e8, 1e8],
    [2147483647, 2147483647, 2147483647, 2147483647],
    [1, 1, 5, 2147483647],
    [3000, 3000, 5000, 8000, 8000, 20000],
    [10, 1000, 100000, 10000000, 1000000000, 2147483647],
    [2971, 420, 776, 270, 2072, 1313, 2036, 95, 184, 2],
    [5000, 10000, 20000, 40000, 80000, 160000, 320000, 640000, 1280000, 2560000],
    [1000] * 7 + [1500] * 6 + [4000] * 7,
    # even n, distinct N spread widely (single-task kinks): the joint rows' chains through the kinks
    [1000003, 37000011, 90000049, 150000001, 260000003, 400000009, 555000001, 700000001, 866000003, 1000000007,
     1300000003, 1600000009, 1900000043, 2147483647],
    [40009, 61007, 83003, 97001, 120011, 131009, 150001, 171007, 190027, 230003, 260003, 290011],
]


def main():
    out = {"description": "Exact (rational) E and Var of the conventional median rank for small n; values rounded "
                          "to 17 significant digits. Generated by scripts/median-fixtures.py.", "cases": []}
    for N in CASES:
        Ni = [int(v) for v in N]
        e, v = moments(Ni)
        out["cases"].append({"N": Ni, "expectation": mpmath.nstr(mpmath.mpf(e.numerator) / e.denominator, 17),
                             "variance": mpmath.nstr(mpmath.mpf(v.numerator) / v.denominator, 17)})
        print(Ni, out["cases"][-1]["expectation"], out["cases"][-1]["variance"])
    path = os.path.join(os.path.dirname(__file__), "..", "test", "fixtures", "median-reference.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
