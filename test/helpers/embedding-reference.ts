/**
 * Independent float64 reference of the interactions, written in the test from the formulas (not from the kernels):
 * complex numbers as (re, im) pairs read straight from the stored layout, PairRE's normalisation recomputed here.
 * Higher = better; distances negated, gamma dropped, TransE-L2 and RotatE-L2 (PyKEEN's RotatE, -||h r - t||_2)
 * without the square root (the kernel ranks by the squared distance; sqrt is monotone). Also a seeded generator of random embeddings and the rank oracle.
 */
export type Name = "transe-l1" | "transe-l2" | "distmult" | "complex" | "rotate" | "rotate-l2" | "pairre";

export interface RefModel {
  name: Name;
  ent: Float64Array; // exact values of the stored (float32) embeddings
  rel: Float64Array;
  width: number;
  relWidth: number;
  interleaved: boolean;
  phaseScale: number;
}

/** mulberry32: a small seeded generator, uniform in [-1, 1). */
export function randomValues(n: number, seed: number, scale = 1): Float32Array {
  let a = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = scale * ((((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1);
  }
  return out;
}

function cplx(v: Float64Array, row: number, width: number, k: number, interleaved: boolean): [number, number] {
  const c = width / 2;
  const base = row * width;
  return interleaved ? [v[base + 2 * k]!, v[base + 2 * k + 1]!] : [v[base + k]!, v[base + c + k]!];
}

/** RotatE's r_k: a phase (angle = value x phaseScale) or a complex number scaled to modulus 1. */
function rotation(m: RefModel, r: number, k: number): [number, number] {
  if (m.relWidth === m.width / 2) {
    const phase = m.rel[r * m.relWidth + k]! * m.phaseScale;
    return [Math.cos(phase), Math.sin(phase)];
  }
  const [c, e] = cplx(m.rel, r, m.width, k, m.interleaved);
  const mod = Math.hypot(c, e); // a rotation: |r_k| = 1 (PyKEEN constrains it; the kernel normalises)
  return [c / mod, e / mod];
}

/** f(h, r, t) from the formulas. */
export function refScore(m: RefModel, h: number, r: number, t: number): number {
  const d = m.width;
  const E = m.ent;
  const R = m.rel;
  let s = 0;
  switch (m.name) {
    case "transe-l1":
      for (let k = 0; k < d; k++) s += Math.abs(E[h * d + k]! + R[r * d + k]! - E[t * d + k]!);
      return -s;
    case "transe-l2":
      for (let k = 0; k < d; k++) s += (E[h * d + k]! + R[r * d + k]! - E[t * d + k]!) ** 2;
      return -s;
    case "distmult":
      for (let k = 0; k < d; k++) s += E[h * d + k]! * R[r * d + k]! * E[t * d + k]!;
      return s;
    case "complex":
      // Re(h r conj(t))
      for (let k = 0; k < d / 2; k++) {
        const [a, b] = cplx(E, h, d, k, m.interleaved);
        const [c, e] = cplx(R, r, d, k, m.interleaved);
        const [x, y] = cplx(E, t, d, k, m.interleaved);
        const pr = a * c - b * e;
        const pi = a * e + b * c;
        s += pr * x + pi * y;
      }
      return s;
    case "rotate":
    case "rotate-l2":
      // rotate: sum_k |h_k r_k - t_k| (OGB); rotate-l2: ||h r - t||_2^2 = sum_k |h_k r_k - t_k|^2 (PyKEEN)
      for (let k = 0; k < d / 2; k++) {
        const [a, b] = cplx(E, h, d, k, m.interleaved);
        const [c, e] = rotation(m, r, k);
        const [x, y] = cplx(E, t, d, k, m.interleaved);
        const re = a * c - b * e - x;
        const im = a * e + b * c - y;
        s += m.name === "rotate" ? Math.hypot(re, im) : re * re + im * im;
      }
      return -s;
    case "pairre": {
      const norm = (e: number) => Math.max(Math.hypot(...E.subarray(e * d, e * d + d)), 1e-12);
      const nh = norm(h);
      const nt = norm(t);
      for (let k = 0; k < d; k++) {
        s += Math.abs((E[h * d + k]! / nh) * R[r * 2 * d + k]! - (E[t * d + k]! / nt) * R[r * 2 * d + d + k]!);
      }
      return -s;
    }
  }
}

/**
 * Sum over dimensions of the magnitudes a float32 evaluation of f(h, r, t) rounds: the terms and the parts of the
 * query vector (h + r, h * r, ...), which the kernel rounds once before use.
 */
export function refMagnitude(m: RefModel, h: number, r: number, t: number): number {
  const d = m.width;
  const E = m.ent;
  const R = m.rel;
  let s = 0;
  switch (m.name) {
    case "transe-l1":
    case "transe-l2": {
      for (let k = 0; k < d; k++) {
        const x = Math.abs(E[h * d + k]!) + Math.abs(R[r * d + k]!) + Math.abs(E[t * d + k]!);
        s += m.name === "transe-l1" ? x : 2 * x * Math.abs(E[h * d + k]! + R[r * d + k]! - E[t * d + k]!) + x * x * 2 ** -20;
      }
      return s;
    }
    case "distmult":
      for (let k = 0; k < d; k++) s += Math.abs(E[h * d + k]! * R[r * d + k]! * E[t * d + k]!);
      return s;
    case "pairre": {
      const nh = Math.hypot(...E.subarray(h * d, h * d + d));
      const nt = Math.hypot(...E.subarray(t * d, t * d + d));
      for (let k = 0; k < d; k++) {
        s += Math.abs((E[h * d + k]! / nh) * R[r * 2 * d + k]!) + Math.abs((E[t * d + k]! / nt) * R[r * 2 * d + d + k]!);
      }
      return 2 * s;
    }
    default: {
      // complex, rotate, rotate-l2: moduli per complex dimension
      for (let k = 0; k < d / 2; k++) {
        const [a, b] = cplx(E, h, d, k, m.interleaved);
        const [x, y] = cplx(E, t, d, k, m.interleaved);
        const hm = Math.abs(a) + Math.abs(b);
        const tm = Math.abs(x) + Math.abs(y);
        if (m.name === "rotate") s += 2 * (hm + tm);
        else if (m.name === "rotate-l2") {
          // As TransE-L2 per real part: 2 x |d| + x^2 2^-20 with x = hm + tm bounding each part of the query (|r| = 1)
          // and of the candidate, and |d_re| + |d_im| <= 2 |d_k| for d = e - q on either side (|q| rotates with r).
          const [c, e] = rotation(m, r, k);
          const dk = Math.hypot(a * c - b * e - x, a * e + b * c - y);
          s += 2 * (hm + tm) * 2 * dk + 2 * (hm + tm) ** 2 * 2 ** -20;
        } else {
          const [c, e] = cplx(R, r, d, k, m.interleaved);
          s += 2 * hm * (Math.abs(c) + Math.abs(e)) * tm;
        }
      }
      return s;
    }
  }
}
