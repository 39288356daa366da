#!/usr/bin/env python3
"""High-precision references for the metric tests (mpmath, 80 digits). CI never runs this: its output is committed
as test/fixtures/metrics-reference.json. Regenerate with: python3 scripts/metrics-fixtures.py"""
import json
import os

from mpmath import erfc, harmonic, mp, mpf, sqrt, zeta

mp.dps = 80


def h1(n):
    return harmonic(n)


def h2(n):
    return zeta(2) - zeta(2, n + 1)


def power_sum(a, n):
    """sum_{j=1..n} j^a via the Hurwitz zeta function."""
    return zeta(-a) - zeta(-a, n + 1)


def s(x):
    return mp.nstr(x, 30, strip_zeros=False)


def weighted(parts, counts, weights):
    """E = sum c w E_i / sum c w, Var = sum c w^2 V_i / (sum c w)^2 over groups."""
    W = sum(mpf(c) * mpf(w) for c, w in zip(counts, weights))
    e = sum(mpf(c) * mpf(w) * p[0] for p, c, w in zip(parts, counts, weights)) / W
    v = sum(mpf(c) * mpf(w) ** 2 * p[1] for p, c, w in zip(parts, counts, weights)) / W**2
    return e, v


def mrr_case(ns, ws):
    parts = []
    for n in ns:
        e = h1(n) / n
        parts.append((e, h2(n) / n - e * e))
    e, v = weighted(parts, [1] * len(ns), ws)
    return {"numCandidates": ns, "weights": ws, "expectation": s(e), "variance": s(v)}


def gmr_case(groups, weights=None):
    """groups: list of (N, count); weights: per group weight (each task of the group has it)."""
    ws = weights or [1] * len(groups)
    W = sum(mpf(c) * mpf(w) for (n, c), w in zip(groups, ws))
    log_e1 = mpf(0)
    log_e2 = mpf(0)
    for (n, c), w in zip(groups, ws):
        a = mpf(w) / W
        log_e1 += c * mp.log(power_sum(a, n) / n)
        log_e2 += c * mp.log(power_sum(2 * a, n) / n)
    e = mp.exp(log_e1)
    v = mp.exp(log_e2) - e * e
    return {"groups": groups, "weights": weights, "expectation": s(e), "variance": s(v)}


out = {
    "harmonic": [{"n": n, "h1": s(h1(n)), "h2": s(h2(n))}
                 for n in [1, 2, 3, 10, 100, 65535, 65536, 65537, 100000, 1000000, 12345678, 100000000, 10**12]],
    "mrr": [
        mrr_case([1000000, 100000000, 3, 77777777, 65537], [1, 2.5, 0.5, 3, 1]),
        mrr_case([1000000, 100000000, 3, 77777777, 65537], [1, 1, 1, 1, 1]),
        mrr_case([2, 65536, 65537, 999999], [1, 1, 1, 1]),
    ],
    "gmr": [
        gmr_case([(3, 1), (7, 1), (10, 1)]),
        gmr_case([(5, 1), (1000, 1), (1000000, 1)], [1, 2, 3]),
        # m = 1e6 ranks: N cycles over 2, 10, 1000, 100000, 1000000 (200000 tasks each)
        gmr_case([(2, 200000), (10, 200000), (1000, 200000), (100000, 200000), (1000000, 200000)]),
        gmr_case([(1000000, 1000000)]),
    ],
    "pvalue": [{"z": z, "p": s(erfc(mpf(z) / sqrt(2)) / 2)}
               for z in [-8, -3, -1, -0.25, 0, 0.1, 0.5, 1, 1.96, 2.5, 2.999, 3, 3.001, 4, 5, 8, 10, 15, 20, 30, 37, 38]],
}
path = os.path.join(os.path.dirname(__file__), "..", "test", "fixtures", "metrics-reference.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1)
print("wrote", path)
