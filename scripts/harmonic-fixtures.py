import mpmath, json, sys
mpmath.mp.dps = 30
ps = [0.5, 1, 1.5, 2, 2.5, -0.3, 0.999999, 3, 1e-6, 7.25]
ns = [1, 10, 255, 256, 257, 1000, 65536, 1000000, 2500000, 1000000000]
out = []
for p in ps:
    for n in ns:
        if p < 0 and n > 65536: continue
        if p == 1:
            v = mpmath.harmonic(n)
        elif n <= 65536:
            v = mpmath.fsum(mpmath.mpf(j) ** (-mpmath.mpf(p)) for j in range(1, n + 1))
        else:
            v = mpmath.zeta(p) - mpmath.zeta(p, n + 1)
        out.append([n, p, mpmath.nstr(v, 22)])
        print(n, p, file=sys.stderr, flush=True)
print(json.dumps(out))
