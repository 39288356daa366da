// The register-blocked micro-kernel of interaction.h, written once over an ISA's vector traits and compiled per ISA
// (interaction.cpp: scalar; interaction_avx2.cpp; interaction_avx512.cpp; interaction_neon.cpp on aarch64).
// GEMM-style: a chunk of candidate entities is packed into panels of W entities (element-major: panel[k * W + lane]),
// then each group of Q queries x W entities (Q = 8 on AVX-512 and NEON, 6 on AVX2, 4 scalar) is scored in Q x 2
// vector accumulators, element by element, and counted against the true scores in registers (compare masks,
// popcount). Each lane runs exactly the operations of score_one() in interaction.cpp (one correctly rounded FMA / add
// / sqrt per step, in the same order), so a score is the same bit for bit on every level, lane and thread count.
// Distances are computed directly (e - q), never through |a|^2 + |b|^2 - 2ab, whose rounding would change ties. The
// ops are what the interactions reduce to once the query is formed (interaction.cpp op_of): L2Squared serves
// TransE-L2 and PyKEEN's RotatE (RotatE-L2), whose -||h r - t||_2 is ranked by minus the sum of squared moduli, sum_k
// (re_k^2 + im_k^2) over the canonical [re | im] elements: the square root is monotone, so it is never taken (no sqrt
// per dimension, as Modulus needs for OGB's RotatE) and the ranks are those of the norm.
// (The packing + micro-kernel layout follows the usual GEMM structure, e.g. BLIS's "packed panels, MR x NR
// register block"; nothing is copied from it.)
#pragma once
#include <cstddef>
#include <cstdint>
#include <bitset>
#include <type_traits>
#include <utility>

#include "interaction.h"

namespace kgrank {
namespace interaction_detail {

// Whether a level's traits have transpose(src, src_stride, dst, stride): dst[kk * stride + l] = src[l * src_stride +
// kk] for kk, l < L (an L x L block of L rows moved element-major, in registers). Levels without one pack element by
// element.
template <class I, class = void>
struct HasTranspose : std::false_type {};
template <class I>
struct HasTranspose<I, std::void_t<decltype(&I::transpose)>> : std::true_type {};

// A hint to bring the cache line at p closer (no effect on results; nothing where the compiler has no hint).
inline void prefetch(const void* p) {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p, 0, 3);
#else
  (void)p;
#endif
}

// Whether a level's traits have equ(a, b): the lanes where a == b or either is NaN, in one compare.
template <class I, class = void>
struct HasEqu : std::false_type {};
template <class I>
struct HasEqu<I, std::void_t<decltype(&I::equ)>> : std::true_type {};

// Whether a level's traits have transpose_rows(rows, k0, dst, stride): dst[kk * stride + l] = rows[l][k0 + kk] for
// kk, l < L (the same block as transpose, from L rows anywhere).
template <class I, class = void>
struct HasTransposeRows : std::false_type {};
template <class I>
struct HasTransposeRows<I, std::void_t<decltype(&I::transpose_rows)>> : std::true_type {};

template <class I>
inline void transpose_rows_block(const float* const* rows, size_t k0, float* dst, size_t stride) {
  if constexpr (HasTransposeRows<I>::value) I::transpose_rows(rows, k0, dst, stride);
}

template <class I>
inline void transpose_block(const float* src, size_t src_stride, float* dst, size_t stride) {
  if constexpr (HasTranspose<I>::value) I::transpose(src, src_stride, dst, stride);
}

constexpr size_t kQueryBlock = 64;  // queries whose vectors stay in L1/L2 while a chunk's panels pass by

template <class I>
struct Micro {
  using V = typename I::V;
  static constexpr size_t L = I::kLanes;
  static constexpr size_t W = 2 * L;        // entities per panel
  static constexpr size_t Q = I::kQueries;  // queries per register block (Q x 2 accumulators)

  // Scores Q queries x W entities of one panel element by element, then counts in registers: for each query a,
  // lanes scoring > / == its threshold and NaN lanes, among the first `valid` lanes. A distance op accumulates the
  // distance d and scores -d; -d > t is d < -t exactly (negation is exact), so the sign never needs applying.
  template <ScoreOp OP>
  static void run(const float* const q[Q], const float* const c[Q], const float* panel, size_t dim, const float* t,
                  size_t nq, size_t valid, uint32_t* greater, uint32_t* equal, uint32_t* nan) {
    V acc[Q][2];
    for (size_t a = 0; a < Q; ++a) acc[a][0] = acc[a][1] = I::zero();
    if (OP == ScoreOp::Modulus) {
      const size_t half = dim / 2;
      for (size_t k = 0; k < half; ++k) {
        const V xr0 = I::load(panel + k * W), xr1 = I::load(panel + k * W + L);
        const V xi0 = I::load(panel + (k + half) * W), xi1 = I::load(panel + (k + half) * W + L);
        for (size_t a = 0; a < Q; ++a) {
          const V qr = I::set1(q[a][k]), qi = I::set1(q[a][k + half]);
          const V dr0 = I::sub(xr0, qr), di0 = I::sub(xi0, qi);
          const V dr1 = I::sub(xr1, qr), di1 = I::sub(xi1, qi);
          acc[a][0] = I::add(acc[a][0], I::sqrt(I::fma(dr0, dr0, I::mul(di0, di0))));
          acc[a][1] = I::add(acc[a][1], I::sqrt(I::fma(dr1, dr1, I::mul(di1, di1))));
        }
      }
    } else {
      for (size_t k = 0; k < dim; ++k) {
        const V x0 = I::load(panel + k * W), x1 = I::load(panel + k * W + L);
        for (size_t a = 0; a < Q; ++a) {
          const V qv = I::set1(q[a][k]);
          if (OP == ScoreOp::Dot) {
            acc[a][0] = I::fma(qv, x0, acc[a][0]);
            acc[a][1] = I::fma(qv, x1, acc[a][1]);
          } else if (OP == ScoreOp::L1) {
            acc[a][0] = I::add(acc[a][0], I::abs(I::sub(x0, qv)));
            acc[a][1] = I::add(acc[a][1], I::abs(I::sub(x1, qv)));
          } else if (OP == ScoreOp::L2Squared) {
            const V d0 = I::sub(x0, qv), d1 = I::sub(x1, qv);
            acc[a][0] = I::fma(d0, d0, acc[a][0]);
            acc[a][1] = I::fma(d1, d1, acc[a][1]);
          } else {  // PairL1: |q - x * c|, one rounding (fnmadd)
            const V cv = I::set1(c[a][k]);
            acc[a][0] = I::add(acc[a][0], I::abs(I::fnmadd(x0, cv, qv)));
            acc[a][1] = I::add(acc[a][1], I::abs(I::fnmadd(x1, cv, qv)));
          }
        }
      }
    }
    const unsigned full = L >= 32 ? ~0u : (1u << L) - 1;
    const unsigned m0 = valid >= L ? full : (1u << valid) - 1;
    const unsigned m1 = valid >= W ? full : valid > L ? (1u << (valid - L)) - 1 : 0u;
    count_block<OP>(acc, std::make_index_sequence<Q>{}, t, nq, m0, m1, greater, equal, nan);
  }

  // The counting of run(), over the Q accumulator pairs by a fold (constant indices, so they stay in registers): for
  // query a, `g` holds the lanes above its threshold (an ordered compare). A lane equal to it or NaN (the threshold
  // is never NaN) is one that scores almost never give, so the equal and NaN counts run only for a block that has
  // one: a level with I::equ (equal or unordered, one compare) finds such lanes directly, others as the lanes
  // neither above nor below. Lanes past `valid` (zero padding) may only send a block to that slower count, which
  // masks them. One popcount per query counts both vectors (2 L <= 32 bits).
  template <ScoreOp OP, size_t A>
  static unsigned count_greater(const V (&acc)[Q][2], const float* t, unsigned m0, unsigned m1, uint32_t* greater) {
    const V tv = I::set1(OP == ScoreOp::Dot ? t[A] : -t[A]);
    const V lo0 = OP == ScoreOp::Dot ? tv : acc[A][0], hi0 = OP == ScoreOp::Dot ? acc[A][0] : tv;
    const V lo1 = OP == ScoreOp::Dot ? tv : acc[A][1], hi1 = OP == ScoreOp::Dot ? acc[A][1] : tv;
    const unsigned g0 = I::gt(hi0, lo0) & m0, g1 = I::gt(hi1, lo1) & m1;
    greater[A] += I::popcount(g0 | (g1 << L));
    if constexpr (HasEqu<I>::value) {
      return I::equ(acc[A][0], tv) | I::equ(acc[A][1], tv);
    } else {
      return (m0 & ~(g0 | I::gt(lo0, hi0))) | (m1 & ~(g1 | I::gt(lo1, hi1)));
    }
  }

  template <ScoreOp OP, size_t A>
  static void count_rest(const V (&acc)[Q][2], const float* t, unsigned m0, unsigned m1, uint32_t* equal,
                         uint32_t* nan) {
    const V tv = I::set1(OP == ScoreOp::Dot ? t[A] : -t[A]);
    equal[A] += I::popcount((I::eq(acc[A][0], tv) & m0) | ((I::eq(acc[A][1], tv) & m1) << L));
    nan[A] += I::popcount((I::unord(acc[A][0], acc[A][0]) & m0) | ((I::unord(acc[A][1], acc[A][1]) & m1) << L));
  }

  template <ScoreOp OP, size_t... A>
  static void count_block(const V (&acc)[Q][2], std::index_sequence<A...>, const float* t, size_t nq, unsigned m0,
                          unsigned m1, uint32_t* greater, uint32_t* equal, uint32_t* nan) {
    unsigned rest = 0;
    ((rest |= A < nq ? count_greater<OP, A>(acc, t, m0, m1, greater) : 0u), ...);
    if (rest != 0) ((A < nq ? count_rest<OP, A>(acc, t, m0, m1, equal, nan) : void()), ...);
  }

  template <ScoreOp OP>
  static void chunk(const ChunkPlan& p, size_t begin, size_t end, uint32_t* greater, uint32_t* equal, uint32_t* nan,
                    float* pack) {
    const size_t dim = p.dim;
    const size_t n = end - begin;
    const size_t panels = (n + W - 1) / W;
    // Pack: panel-major, element-major within a panel; padding lanes are zero and never counted. A level with an
    // in-register transpose (I::transpose) moves L x L blocks of a full panel when its rows are consecutive entities
    // (every entity or an entity range, not a candidate list), read in their stored order and unscaled (every
    // interaction but PairRE and interleaved complex rows); element by element, the pack took about a tenth of the
    // chunk's time at d = 100 and 512 queries. Values are moved, never computed, so the panel is the same either way.
    // A panel is packed just before the first query block uses it, while the next panel's rows are prefetched: the
    // rows come from a table far larger than the caches (WikiKG2: 1 GB).
    bool direct = HasTranspose<I>::value && p.scale == nullptr && p.candidates == nullptr;
    for (size_t k = 0; direct && k < dim; ++k) direct = p.map[k] == k;
    auto entity_of = [&](size_t j) { return p.candidates ? static_cast<size_t>(p.candidates[j]) : j; };
    auto pack_panel = [&](size_t pi) {
      float* panel = pack + pi * dim * W;
      const size_t first = begin + pi * W;
      if (direct && first + W <= end) {
        const float* base = p.entity + first * p.width;  // row l of the panel: base + l * width
        size_t k0 = 0;
        for (; k0 + L <= dim; k0 += L) {
          transpose_block<I>(base + k0, p.width, panel + k0 * W, W);
          transpose_block<I>(base + L * p.width + k0, p.width, panel + k0 * W + L, W);
        }
        if (k0 < dim && dim >= L) {  // the last L elements again: the overlap is rewritten with the same values
          k0 = dim - L;
          transpose_block<I>(base + k0, p.width, panel + k0 * W, W);
          transpose_block<I>(base + L * p.width + k0, p.width, panel + k0 * W + L, W);
          k0 = dim;
        }
        for (; k0 < dim; ++k0) {
          for (size_t l = 0; l < W; ++l) panel[k0 * W + l] = base[l * p.width + k0];
        }
        return;
      }
      for (size_t l = 0; l < W; ++l) {
        const size_t j = first + l;
        if (j >= end) {
          for (size_t k = 0; k < dim; ++k) panel[k * W + l] = 0.0f;
          continue;
        }
        const size_t e = entity_of(j);
        const float* row = p.entity + e * p.width;
        if (p.scale) {
          const float s = p.scale[e];
          for (size_t k = 0; k < dim; ++k) panel[k * W + l] = row[p.map[k]] * s;
        } else {
          for (size_t k = 0; k < dim; ++k) panel[k * W + l] = row[p.map[k]];
        }
      }
    };
    if (p.rows == 0) {  // nothing to count; the pack is still the chunk's (top_k_embeddings reads it)
      for (size_t pi = 0; pi < panels; ++pi) pack_panel(pi);
      return;
    }
    for (size_t qb = 0; qb < p.rows; qb += kQueryBlock) {
      const size_t qe = qb + kQueryBlock < p.rows ? qb + kQueryBlock : p.rows;
      for (size_t pi = 0; pi < panels; ++pi) {
        if (qb == 0) pack_panel(pi);
        const float* panel = pack + pi * dim * W;
        const size_t valid = n - pi * W < W ? n - pi * W : W;
        const size_t next = begin + (pi + 1) * W, groups = (qe - qb + Q - 1) / Q;
        for (size_t g = qb; g < qe; g += Q) {
          if (qb == 0) {
            // The next panel's rows, spread over this panel's query groups (a burst of them all waited on the
            // core's few outstanding misses). Written here, not in a helper: GCC takes a function that only
            // prefetches for one without side effects and drops the call.
            for (size_t l = (g - qb) / Q; l < W && next + l < end; l += groups) {
              const char* row = reinterpret_cast<const char*>(p.entity + entity_of(next + l) * p.width);
              for (size_t b = 0; b < p.width * sizeof(float); b += 64) prefetch(row + b);
            }
          }
          const size_t nq = qe - g < Q ? qe - g : Q;
          const float* q[Q];
          const float* c[Q];
          for (size_t a = 0; a < Q; ++a) {
            const size_t row = g + (a < nq ? a : 0);
            q[a] = p.query + row * dim;
            c[a] = p.coeff ? p.coeff + row * dim : nullptr;
          }
          run<OP>(q, c, panel, dim, p.threshold + g, nq, valid, greater + g, equal + g, nan + g);
        }
      }
    }
  }

  static void dispatch(const ChunkPlan& p, size_t begin, size_t end, uint32_t* greater, uint32_t* equal, uint32_t* nan,
                       float* pack) {
    switch (p.op) {
      case ScoreOp::Dot: return chunk<ScoreOp::Dot>(p, begin, end, greater, equal, nan, pack);
      case ScoreOp::L1: return chunk<ScoreOp::L1>(p, begin, end, greater, equal, nan, pack);
      case ScoreOp::L2Squared: return chunk<ScoreOp::L2Squared>(p, begin, end, greater, equal, nan, pack);
      case ScoreOp::Modulus: return chunk<ScoreOp::Modulus>(p, begin, end, greater, equal, nan, pack);
      case ScoreOp::PairL1: return chunk<ScoreOp::PairL1>(p, begin, end, greater, equal, nan, pack);
    }
  }

  // The Dot (or L2Squared) scores of n (query row, entity) pairs: out[j] is row rows[j] of q (rows of dim floats)
  // against entity ids[j] (rows of `entity`, `width` apart, element k at k: the identity map, no scale). Lane l of
  // each L pairs runs score_one's chain from 0 for its own pair (acc = fma(q_k, t_k, acc); L2Squared: x = t_k - q_k,
  // acc = fma(x, x, acc), the score -acc), so every score is the chunk kernel's bit for bit however the pairs are
  // grouped; both sides are moved element-major L x L at a time by the level's in-register transposes. Needs
  // transpose_rows (AVX2, AVX-512) and dim >= L (pair_dots_of says where it applies).
  template <ScoreOp OP>
  static V pair_step(V q, V t, V acc) {
    if constexpr (OP == ScoreOp::Dot) {
      return I::fma(q, t, acc);
    } else {
      const V x = I::sub(t, q);
      return I::fma(x, x, acc);
    }
  }

  template <ScoreOp OP = ScoreOp::Dot>
  static void pair_dots(const float* q, size_t dim, const float* entity, size_t width, const uint32_t* rows,
                        const uint32_t* ids, size_t n, float* out) {
    if constexpr (HasTransposeRows<I>::value) {
      alignas(64) float qt[L * L];
      alignas(64) float et[L * L];
      alignas(64) float tmp[L];
      const float* qr[L];
      const float* er[L];
      for (size_t first = 0; first < n; first += L) {
        const size_t np = n - first < L ? n - first : L;
        for (size_t l = 0; l < L; ++l) {
          const size_t j = first + (l < np ? l : 0);
          qr[l] = q + static_cast<size_t>(rows[j]) * dim;
          er[l] = entity + static_cast<size_t>(ids[j]) * width;
        }
        V acc = I::zero();
        size_t k0 = 0;
        for (; k0 + L <= dim; k0 += L) {
          transpose_rows_block<I>(qr, k0, qt, L);
          transpose_rows_block<I>(er, k0, et, L);
          for (size_t kk = 0; kk < L; ++kk) acc = pair_step<OP>(I::load(qt + kk * L), I::load(et + kk * L), acc);
        }
        if (k0 < dim) {  // the last L elements, of which the first L - (dim - k0) are done already
          const size_t s = dim - L;
          transpose_rows_block<I>(qr, s, qt, L);
          transpose_rows_block<I>(er, s, et, L);
          for (size_t kk = k0 - s; kk < L; ++kk) {
            acc = pair_step<OP>(I::load(qt + kk * L), I::load(et + kk * L), acc);
          }
        }
        I::store(tmp, acc);
        for (size_t l = 0; l < np; ++l) out[first + l] = OP == ScoreOp::Dot ? tmp[l] : -tmp[l];
      }
    } else {
      (void)q, (void)dim, (void)entity, (void)width, (void)rows, (void)ids, (void)n, (void)out;
    }
  }

  // Packs entities ids[0 .. n) (rows of p.entity) as chunk() packs a candidate list: panels of W, element-major,
  // canonical order, times p.scale when set; the same values in the same places, so packed() scores them as the
  // chunk kernel scores their columns. Rows in stored order and unscaled go through L x L in-register transposes
  // (element by element, the pack cost more than the scoring: most of a filtered FB15k-237 evaluation's filter
  // pass); others element by element. The lanes of the last panel past n hold copies of its first row, never read.
  static void pack_list(const ChunkPlan& p, const uint32_t* ids, size_t n, float* pack) {
    const size_t dim = p.dim;
    bool direct = HasTransposeRows<I>::value && p.scale == nullptr && dim >= L;
    for (size_t k = 0; direct && k < dim; ++k) direct = p.map[k] == k;
    const float* rows[W];
    for (size_t first = 0; first < n; first += W) {
      const size_t np = n - first < W ? n - first : W;
      for (size_t l = 0; l < W; ++l) rows[l] = p.entity + static_cast<size_t>(ids[first + (l < np ? l : 0)]) * p.width;
      for (size_t l = first + W; l < first + 2 * W && l < n; ++l) {  // the next panel's rows, while this one packs
        const char* row = reinterpret_cast<const char*>(p.entity + static_cast<size_t>(ids[l]) * p.width);
        for (size_t b = 0; b < p.width * sizeof(float); b += 64) prefetch(row + b);
      }
      float* panel = pack + (first / W) * dim * W;
      if (direct) {
        size_t k0 = 0;
        for (; k0 + L <= dim; k0 += L) {
          transpose_rows_block<I>(rows, k0, panel + k0 * W, W);
          transpose_rows_block<I>(rows + L, k0, panel + k0 * W + L, W);
        }
        if (k0 < dim) {  // the last L elements again: the overlap is rewritten with the same values
          k0 = dim - L;
          transpose_rows_block<I>(rows, k0, panel + k0 * W, W);
          transpose_rows_block<I>(rows + L, k0, panel + k0 * W + L, W);
        }
        continue;
      }
      for (size_t k = 0; k < dim; ++k) {
        float* col = panel + k * W;
        const size_t at = p.map[k];
        if (p.scale != nullptr) {
          for (size_t l = 0; l < np; ++l) col[l] = rows[l][at] * p.scale[ids[first + l]];
        } else {
          for (size_t l = 0; l < np; ++l) col[l] = rows[l][at];
        }
      }
    }
  }

  // The scores of one query (q, c: its vectors) against the n entities chunk() last packed into `pack`: per lane
  // exactly run()'s operations, so score_one's values; out[j] is candidate j's score (a distance op's is minus the
  // distance, negation being exact). NP panels at a time, so that 2 NP independent accumulator chains overlap.
  template <ScoreOp OP, size_t NP>
  static void packed_group(const float* q, const float* c, const float* pack, size_t dim, size_t n, size_t pi,
                           float* out) {
    V acc[NP][2];
    for (size_t p = 0; p < NP; ++p) acc[p][0] = acc[p][1] = I::zero();
    if (OP == ScoreOp::Modulus) {
      const size_t half = dim / 2;
      for (size_t k = 0; k < half; ++k) {
        const V qr = I::set1(q[k]), qi = I::set1(q[k + half]);
        for (size_t p = 0; p < NP; ++p) {
          const float* panel = pack + (pi + p) * dim * W;
          const V xr0 = I::load(panel + k * W), xr1 = I::load(panel + k * W + L);
          const V xi0 = I::load(panel + (k + half) * W), xi1 = I::load(panel + (k + half) * W + L);
          const V dr0 = I::sub(xr0, qr), di0 = I::sub(xi0, qi);
          const V dr1 = I::sub(xr1, qr), di1 = I::sub(xi1, qi);
          acc[p][0] = I::add(acc[p][0], I::sqrt(I::fma(dr0, dr0, I::mul(di0, di0))));
          acc[p][1] = I::add(acc[p][1], I::sqrt(I::fma(dr1, dr1, I::mul(di1, di1))));
        }
      }
    } else {
      for (size_t k = 0; k < dim; ++k) {
        const V qv = I::set1(q[k]);
        const V cv = OP == ScoreOp::PairL1 ? I::set1(c[k]) : qv;
        for (size_t p = 0; p < NP; ++p) {
          const float* panel = pack + (pi + p) * dim * W;
          const V x0 = I::load(panel + k * W), x1 = I::load(panel + k * W + L);
          if (OP == ScoreOp::Dot) {
            acc[p][0] = I::fma(qv, x0, acc[p][0]);
            acc[p][1] = I::fma(qv, x1, acc[p][1]);
          } else if (OP == ScoreOp::L1) {
            acc[p][0] = I::add(acc[p][0], I::abs(I::sub(x0, qv)));
            acc[p][1] = I::add(acc[p][1], I::abs(I::sub(x1, qv)));
          } else if (OP == ScoreOp::L2Squared) {
            const V d0 = I::sub(x0, qv), d1 = I::sub(x1, qv);
            acc[p][0] = I::fma(d0, d0, acc[p][0]);
            acc[p][1] = I::fma(d1, d1, acc[p][1]);
          } else {
            acc[p][0] = I::add(acc[p][0], I::abs(I::fnmadd(x0, cv, qv)));
            acc[p][1] = I::add(acc[p][1], I::abs(I::fnmadd(x1, cv, qv)));
          }
        }
      }
    }
    alignas(64) float tmp[W];
    for (size_t p = 0; p < NP; ++p) {
      I::store(tmp, acc[p][0]);
      I::store(tmp + L, acc[p][1]);
      const size_t first = (pi + p) * W;
      const size_t valid = n - first < W ? n - first : W;
      for (size_t l = 0; l < valid; ++l) out[first + l] = OP == ScoreOp::Dot ? tmp[l] : -tmp[l];
    }
  }

  template <ScoreOp OP>
  static void packed(const float* q, const float* c, const float* pack, size_t dim, size_t n, float* out) {
    constexpr size_t NP = 4;
    const size_t panels = (n + W - 1) / W;
    size_t pi = 0;
    for (; pi + NP <= panels; pi += NP) packed_group<OP, NP>(q, c, pack, dim, n, pi, out);
    for (; pi < panels; ++pi) packed_group<OP, 1>(q, c, pack, dim, n, pi, out);
  }

  static void packed_dispatch(const ChunkPlan& p, size_t row, const float* pack, size_t n, float* out) {
    const float* q = p.query + row * p.dim;
    const float* c = p.coeff ? p.coeff + row * p.dim : nullptr;
    switch (p.op) {
      case ScoreOp::Dot: return packed<ScoreOp::Dot>(q, c, pack, p.dim, n, out);
      case ScoreOp::L1: return packed<ScoreOp::L1>(q, c, pack, p.dim, n, out);
      case ScoreOp::L2Squared: return packed<ScoreOp::L2Squared>(q, c, pack, p.dim, n, out);
      case ScoreOp::Modulus: return packed<ScoreOp::Modulus>(q, c, pack, p.dim, n, out);
      case ScoreOp::PairL1: return packed<ScoreOp::PairL1>(q, c, pack, p.dim, n, out);
    }
  }

  // Relation scores (score_relations): the queries of one (h, t) pair, one per relation, stored element-major
  // (qt[k * stride + j]: element k of query j; stride a multiple of L, the padding queries finite), scored against
  // the one entity row x (canonical order, scaled as packed; PairL1's coefficient vectors ct stored as qt). Per lane
  // exactly run()'s operations on the same values, the entity value broadcast and the queries in the lanes, so
  // out[j] (j < n) is score_one's score of query j. NB vectors of queries at a time: NB accumulator chains overlap.
  template <ScoreOp OP, size_t NB>
  static void columns_group(const float* qt, const float* ct, size_t stride, const float* x, size_t dim, size_t n,
                            size_t j0, float* out) {
    V acc[NB];
    for (size_t b = 0; b < NB; ++b) acc[b] = I::zero();
    if (OP == ScoreOp::Modulus) {
      const size_t half = dim / 2;
      for (size_t k = 0; k < half; ++k) {
        const V xr = I::set1(x[k]), xi = I::set1(x[k + half]);
        for (size_t b = 0; b < NB; ++b) {
          const V dr = I::sub(xr, I::load(qt + k * stride + j0 + b * L));
          const V di = I::sub(xi, I::load(qt + (k + half) * stride + j0 + b * L));
          acc[b] = I::add(acc[b], I::sqrt(I::fma(dr, dr, I::mul(di, di))));
        }
      }
    } else {
      for (size_t k = 0; k < dim; ++k) {
        const V xv = I::set1(x[k]);
        for (size_t b = 0; b < NB; ++b) {
          const V qv = I::load(qt + k * stride + j0 + b * L);
          if (OP == ScoreOp::Dot) {
            acc[b] = I::fma(qv, xv, acc[b]);
          } else if (OP == ScoreOp::L1) {
            acc[b] = I::add(acc[b], I::abs(I::sub(xv, qv)));
          } else if (OP == ScoreOp::L2Squared) {
            const V d = I::sub(xv, qv);
            acc[b] = I::fma(d, d, acc[b]);
          } else {  // PairL1: |q - x * c|, one rounding (fnmadd)
            acc[b] = I::add(acc[b], I::abs(I::fnmadd(xv, I::load(ct + k * stride + j0 + b * L), qv)));
          }
        }
      }
    }
    alignas(64) float tmp[L];
    for (size_t b = 0; b < NB; ++b) {
      I::store(tmp, acc[b]);
      for (size_t l = 0; l < L && j0 + b * L + l < n; ++l) out[j0 + b * L + l] = OP == ScoreOp::Dot ? tmp[l] : -tmp[l];
    }
  }

  template <ScoreOp OP>
  static void columns(const float* qt, const float* ct, size_t stride, const float* x, size_t dim, size_t n,
                      float* out) {
    constexpr size_t NB = 4;
    const size_t vectors = (n + L - 1) / L;
    size_t v = 0;
    for (; v + NB <= vectors; v += NB) columns_group<OP, NB>(qt, ct, stride, x, dim, n, v * L, out);
    for (; v < vectors; ++v) columns_group<OP, 1>(qt, ct, stride, x, dim, n, v * L, out);
  }

  static void columns_dispatch(ScoreOp op, const float* qt, const float* ct, size_t stride, const float* x, size_t dim,
                               size_t n, float* out) {
    switch (op) {
      case ScoreOp::Dot: return columns<ScoreOp::Dot>(qt, ct, stride, x, dim, n, out);
      case ScoreOp::L1: return columns<ScoreOp::L1>(qt, ct, stride, x, dim, n, out);
      case ScoreOp::L2Squared: return columns<ScoreOp::L2Squared>(qt, ct, stride, x, dim, n, out);
      case ScoreOp::Modulus: return columns<ScoreOp::Modulus>(qt, ct, stride, x, dim, n, out);
      case ScoreOp::PairL1: return columns<ScoreOp::PairL1>(qt, ct, stride, x, dim, n, out);
    }
  }

  // Peak FMA probe: 12 independent accumulator chains per thread (enough to cover FMA latency x throughput).
  static double probe(size_t iterations) {
    V acc[12];
    for (size_t a = 0; a < 12; ++a) acc[a] = I::set1(1.0f + 1e-7f * static_cast<float>(a));
    const V m = I::set1(0.999999f), b = I::set1(1e-7f);
    for (size_t it = 0; it < iterations; ++it) {
      for (size_t a = 0; a < 12; ++a) acc[a] = I::fma(acc[a], m, b);
    }
    alignas(64) float out[L];
    double s = 0;
    for (size_t a = 0; a < 12; ++a) {
      I::store(out, acc[a]);
      for (size_t l = 0; l < L; ++l) s += out[l];
    }
    return s;
  }
};

}  // namespace interaction_detail
}  // namespace kgrank
