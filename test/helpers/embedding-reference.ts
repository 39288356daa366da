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

/** Index of the real and imaginary part of complex dimension k of a stored row (`halves` or `interleaved`). */
function re(m: RefModel, row: number, k: number): number {
  return row * m.width + (m.interleaved ? 2 * k : k);
}
function im(m: RefModel, row: number, k: number): number {
  return row * m.width + (m.interleaved ? 2 * k + 1 : m.width / 2 + k);
}

/** Per-model values that depend on one row only, computed once: RotatE's r_k, PairRE's entity norms. */
const rotationCache = new WeakMap<RefModel, Map<number, Float64Array>>();
const normCache = new WeakMap<RefModel, Float64Array>();

/** RotatE's r_k = (cos, sin) pairs: a phase (angle = value x phaseScale) or a complex number scaled to modulus 1. */
function rotation(m: RefModel, r: number): Float64Array {
  let byRel = rotationCache.get(m);
  if (!byRel) rotationCache.set(m, (byRel = new Map()));
  let out = byRel.get(r);
  if (!out) {
    const c = m.width / 2;
    out = new Float64Array(2 * c);
    for (let k = 0; k < c; k++) {
      if (m.relWidth === c) {
        const phase = m.rel[r * m.relWidth + k]! * m.phaseScale;
        out[2 * k] = Math.cos(phase);
        out[2 * k + 1] = Math.sin(phase);
      } else {
        const x = m.rel[re(m, r, k)]!;
        const y = m.rel[im(m, r, k)]!;
        const mod = Math.hypot(x, y); // a rotation: |r_k| = 1 (PyKEEN constrains it; the kernel normalises)
        out[2 * k] = x / mod;
        out[2 * k + 1] = y / mod;
      }
    }
    byRel.set(r, out);
  }
  return out;
}

/** ||e||_2 of every entity row (PairRE divides by it, as F.normalize: at least 1e-12). */
function norms(m: RefModel): Float64Array {
  let out = normCache.get(m);
  if (!out) {
    const d = m.width;
    out = new Float64Array(m.ent.length / d);
    for (let e = 0; e < out.length; e++) {
      let s = 0;
      for (let k = 0; k < d; k++) s += m.ent[e * d + k]! ** 2;
      out[e] = Math.max(Math.sqrt(s), 1e-12);
    }
    normCache.set(m, out);
  }
  return out;
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
        const a = E[re(m, h, k)]!,
          b = E[im(m, h, k)]!;
        const c = R[re(m, r, k)]!,
          e = R[im(m, r, k)]!;
        const x = E[re(m, t, k)]!,
          y = E[im(m, t, k)]!;
        const pr = a * c - b * e;
        const pi = a * e + b * c;
        s += pr * x + pi * y;
      }
      return s;
    case "rotate":
    case "rotate-l2": {
      // rotate: sum_k |h_k r_k - t_k| (OGB); rotate-l2: ||h r - t||_2^2 = sum_k |h_k r_k - t_k|^2 (PyKEEN)
      const rot = rotation(m, r);
      for (let k = 0; k < d / 2; k++) {
        const a = E[re(m, h, k)]!,
          b = E[im(m, h, k)]!;
        const c = rot[2 * k]!,
          e = rot[2 * k + 1]!;
        const x = E[re(m, t, k)]!,
          y = E[im(m, t, k)]!;
        const dr = a * c - b * e - x;
        const di = a * e + b * c - y;
        s += m.name === "rotate" ? Math.sqrt(dr * dr + di * di) : dr * dr + di * di;
      }
      return -s;
    }
    case "pairre": {
      const n = norms(m);
      const nh = n[h]!;
      const nt = n[t]!;
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
        s +=
          m.name === "transe-l1"
            ? x
            : 2 * x * Math.abs(E[h * d + k]! + R[r * d + k]! - E[t * d + k]!) + x * x * 2 ** -20;
      }
      return s;
    }
    case "distmult":
      for (let k = 0; k < d; k++) s += Math.abs(E[h * d + k]! * R[r * d + k]! * E[t * d + k]!);
      return s;
    case "pairre": {
      const n = norms(m);
      const nh = n[h]!;
      const nt = n[t]!;
      for (let k = 0; k < d; k++) {
        s +=
          Math.abs((E[h * d + k]! / nh) * R[r * 2 * d + k]!) + Math.abs((E[t * d + k]! / nt) * R[r * 2 * d + d + k]!);
      }
      return 2 * s;
    }
    default: {
      // complex, rotate, rotate-l2: moduli per complex dimension
      const rot = m.name === "complex" ? null : rotation(m, r);
      for (let k = 0; k < d / 2; k++) {
        const a = E[re(m, h, k)]!,
          b = E[im(m, h, k)]!;
        const x = E[re(m, t, k)]!,
          y = E[im(m, t, k)]!;
        const hm = Math.abs(a) + Math.abs(b);
        const tm = Math.abs(x) + Math.abs(y);
        if (m.name === "rotate") s += 2 * (hm + tm);
        else if (rot) {
          // rotate-l2, as TransE-L2 per real part: 2 x |d| + x^2 2^-20 with x = hm + tm bounding each part of the
          // query (|r| = 1) and of the candidate, and |d_re| + |d_im| <= 2 |d_k| for d = e - q on either side (q
          // rotates with r).
          const c = rot[2 * k]!,
            e = rot[2 * k + 1]!;
          const dk = Math.sqrt((a * c - b * e - x) ** 2 + (a * e + b * c - y) ** 2);
          s += 2 * (hm + tm) * 2 * dk + 2 * (hm + tm) ** 2 * 2 ** -20;
        } else {
          s += 2 * hm * (Math.abs(R[re(m, r, k)]!) + Math.abs(R[im(m, r, k)]!)) * tm;
        }
      }
      return s;
    }
  }
}

/** An interaction with its storage options, as the embedding tests run it. */
export interface EmbeddingCase {
  name: Name;
  layout?: "halves" | "interleaved";
  phases?: boolean;
}

/** Every interaction and each complex layout and relation form it takes. */
export const EMBEDDING_CASES: EmbeddingCase[] = [
  { name: "transe-l1" },
  { name: "transe-l2" },
  { name: "distmult" },
  { name: "complex", layout: "halves" },
  { name: "complex", layout: "interleaved" },
  { name: "rotate", layout: "halves", phases: true },
  { name: "rotate", layout: "interleaved", phases: false },
  { name: "rotate", layout: "interleaved", phases: true },
  { name: "pairre" },
  // PyKEEN's RotatE (rotate_interaction, the L2 norm over complex dimensions): its complex tensors are interleaved.
  { name: "rotate-l2", layout: "interleaved", phases: false },
  { name: "rotate-l2", layout: "halves", phases: true },
];
