// The dot-product loops a screen could be built on, side by side on one thread in the shape of the chunk kernel's
// float32 loop (bench/fma_block.cpp): 8 queries x 32 entities per block, the query broadcast, over a packed chunk of
// 512 entities (in L2) and 512 queries, each block ending in one compare per accumulator.
//   float32: vfmadd231ps, one multiply-add per lane and instruction (the float32 path);
//   int8:    vpdpbusd, four per lane (the screen's first level at AVX-512 VNNI);
//   bf16:    vdpbf16ps, two per lane (an AVX512_BF16 screen).
// First the three instructions alone (16 independent register chains each), then the loops.
// Prints each loop's multiply-adds per second (best of 20 passes each, in one process, seconds apart) and its ratio to
// the float32 loop, at d = 100 and d = 500. The work of a screen per pair is these dots plus the same decision;
// BENCHMARKS.md
// ("A bf16 screen, measured") sets these rates beside the share of pairs each bound leaves undecided
// (bench/screen_bounds.py).
//   g++ -O3 -std=c++17 -march=sapphirerapids bench/screen_dots.cpp -o /tmp/screen_dots && /tmp/screen_dots
// (any -march with avx512f, avx512bw, avx512vnni and avx512bf16; exits 2 on a CPU without them).
#include <immintrin.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "fma_loop.h"

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// GCC 12's builtins copy the accumulator in and out of a register of its own around every instruction (as
// native/core/screen_avx512.cpp notes for vpdpbusd); the instructions are written out so that each loop is the
// instruction and its loads alone.
inline __m512i dpbusd(__m512i acc, __m512i a, __m512i b) {
  __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
  return acc;
}
inline __m512 dpbf16(__m512 acc, __m512i a, __m512i b) {
  __asm__("vdpbf16ps %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
  return acc;
}

constexpr int Q = 8;

// int8 and bf16: groups of G elements (4 bytes, 2 bf16) per 32-bit lane; panel[(g * 2 + half) * 64 bytes]; the query
// as one 32-bit word per group.
template <bool Bf16>
__attribute__((noinline)) unsigned packed_loop(const uint32_t* const* q, const uint32_t* pack, size_t groups,
                                               size_t panels) {
  unsigned count = 0;
  for (size_t pi = 0; pi < panels; ++pi) {
    const uint32_t* panel = pack + pi * groups * 32;
    if constexpr (Bf16) {
      __m512 acc[Q][2];
      for (int a = 0; a < Q; ++a) acc[a][0] = acc[a][1] = _mm512_setzero_ps();
      for (size_t g = 0; g < groups; ++g) {
        const __m512i x0 = _mm512_loadu_si512(panel + g * 32), x1 = _mm512_loadu_si512(panel + g * 32 + 16);
        for (int a = 0; a < Q; ++a) {
          const __m512i qv = _mm512_set1_epi32(static_cast<int>(q[a][g]));
          acc[a][0] = dpbf16(acc[a][0], qv, x0);
          acc[a][1] = dpbf16(acc[a][1], qv, x1);
        }
      }
      for (int a = 0; a < Q; ++a)
        for (int h = 0; h < 2; ++h)
          count += static_cast<unsigned>(__builtin_popcount(_mm512_cmp_ps_mask(acc[a][h], _mm512_setzero_ps(), 14)));
    } else {
      __m512i acc[Q][2];
      for (int a = 0; a < Q; ++a) acc[a][0] = acc[a][1] = _mm512_setzero_si512();
      for (size_t g = 0; g < groups; ++g) {
        const __m512i x0 = _mm512_loadu_si512(panel + g * 32), x1 = _mm512_loadu_si512(panel + g * 32 + 16);
        for (int a = 0; a < Q; ++a) {
          const __m512i qv = _mm512_set1_epi32(static_cast<int>(q[a][g]));
          acc[a][0] = dpbusd(acc[a][0], qv, x0);
          acc[a][1] = dpbusd(acc[a][1], qv, x1);
        }
      }
      for (int a = 0; a < Q; ++a)
        for (int h = 0; h < 2; ++h)
          count +=
              static_cast<unsigned>(__builtin_popcount(_mm512_cmpgt_epi32_mask(acc[a][h], _mm512_setzero_si512())));
    }
  }
  return count;
}

// Register-bound: 16 independent accumulators, one instruction each per iteration, no loads (the instruction's own
// rate on this core, as the FMA probe is the FMA's).
#define KGRANK_CHAINS(INS)                                                                                     \
  for (size_t it = 0; it < n; ++it) {                                                                          \
    __asm__ volatile(INS " %%zmm30, %%zmm31, %%zmm0\n\t" INS " %%zmm30, %%zmm31, %%zmm1\n\t" INS               \
                         " %%zmm30, %%zmm31, %%zmm2\n\t" INS " %%zmm30, %%zmm31, %%zmm3\n\t" INS               \
                         " %%zmm30, %%zmm31, %%zmm4\n\t" INS " %%zmm30, %%zmm31, %%zmm5\n\t" INS               \
                         " %%zmm30, %%zmm31, %%zmm6\n\t" INS " %%zmm30, %%zmm31, %%zmm7\n\t" INS               \
                         " %%zmm30, %%zmm31, %%zmm8\n\t" INS " %%zmm30, %%zmm31, %%zmm9\n\t" INS               \
                         " %%zmm30, %%zmm31, %%zmm10\n\t" INS " %%zmm30, %%zmm31, %%zmm11\n\t" INS             \
                         " %%zmm30, %%zmm31, %%zmm12\n\t" INS " %%zmm30, %%zmm31, %%zmm13\n\t" INS             \
                         " %%zmm30, %%zmm31, %%zmm14\n\t" INS " %%zmm30, %%zmm31, %%zmm15\n\t" ::              \
                             : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", \
                               "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");                          \
  }
__attribute__((noinline)) void chains_fma(size_t n) { KGRANK_CHAINS("vfmadd231ps") }
__attribute__((noinline)) void chains_bf16(size_t n) { KGRANK_CHAINS("vdpbf16ps") }
__attribute__((noinline)) void chains_int8(size_t n) { KGRANK_CHAINS("vpdpbusd") }

template <typename Pass>
double best_of(Pass pass) {
  double best = 1e30;
  for (int rep = 0; rep < 20; ++rep) {
    const double t0 = now();
    pass();
    const double t = now() - t0;
    if (t < best) best = t;
  }
  return best;
}

}  // namespace

int main() {
  if (!__builtin_cpu_supports("avx512vnni") || !__builtin_cpu_supports("avx512bf16")) {
    std::fprintf(stderr, "this CPU lacks avx512_vnni or avx512_bf16\n");
    return 2;
  }
  const size_t entities = 512, rows = 512;
  std::mt19937 rng(7);
  unsigned sink = 0;
  for (int round = 0; round < 3; ++round) {
    const size_t n = 2000000;
    const double f = best_of([&] { chains_fma(n); }), b = best_of([&] { chains_bf16(n); }),
                 i = best_of([&] { chains_int8(n); });
    const double ops = static_cast<double>(n) * 16;
    std::printf(
        "chains, round %d: vfmadd231ps %.2f G/s (%.1f G multiply-adds/s); vdpbf16ps %.2f G/s (%.1f, %.2fx); "
        "vpdpbusd %.2f G/s (%.1f, %.2fx)\n",
        round + 1, ops / f / 1e9, ops * 16 / f / 1e9, ops / b / 1e9, ops * 32 / b / 1e9, f * 2 / b, ops / i / 1e9,
        ops * 64 / i / 1e9, f * 4 / i);
  }
  for (size_t dim : {100, 500}) {
    std::vector<float> pack(entities * dim), queries(rows * dim);
    std::vector<uint32_t> words_i8(entities * dim / 4), q_i8(rows * dim / 4);
    std::vector<uint32_t> words_bf(entities * dim / 2), q_bf(rows * dim / 2);
    for (float& x : pack) x = std::uniform_real_distribution<float>(-0.5f, 0.5f)(rng);
    for (float& x : queries) x = std::uniform_real_distribution<float>(-0.5f, 0.5f)(rng);
    for (auto& w : words_i8) w = static_cast<uint32_t>(rng()) & 0x7f7f7f7fu;
    for (auto& w : q_i8) w = static_cast<uint32_t>(rng());
    for (auto& w : words_bf) w = 0x3f003f00u | (static_cast<uint32_t>(rng()) & 0x007f007fu);  // bf16 in [0.5, 1)
    for (auto& w : q_bf) w = 0x3f003f00u | (static_cast<uint32_t>(rng()) & 0x007f007fu);
    const double madds = static_cast<double>(rows / Q * Q) * static_cast<double>(entities) * static_cast<double>(dim);
    for (int round = 0; round < 3; ++round) {
      const double t_fma = best_of([&] {
        for (size_t g = 0; g + Q <= rows; g += Q) {
          const float* q[Q];
          for (int a = 0; a < Q; ++a) q[a] = queries.data() + (g + a) * dim;
          sink += fma_bench::block<Q>(q, pack.data(), dim, entities / 32);
        }
      });
      const double t_i8 = best_of([&] {
        for (size_t g = 0; g + Q <= rows; g += Q) {
          const uint32_t* q[Q];
          for (int a = 0; a < Q; ++a) q[a] = q_i8.data() + (g + a) * (dim / 4);
          sink += packed_loop<false>(q, words_i8.data(), dim / 4, entities / 32);
        }
      });
      const double t_bf = best_of([&] {
        for (size_t g = 0; g + Q <= rows; g += Q) {
          const uint32_t* q[Q];
          for (int a = 0; a < Q; ++a) q[a] = q_bf.data() + (g + a) * (dim / 2);
          sink += packed_loop<true>(q, words_bf.data(), dim / 2, entities / 32);
        }
      });
      std::printf(
          "d = %zu, round %d: float32 %.1f G/s; int8 vpdpbusd %.1f G/s (%.2fx); bf16 vdpbf16ps %.1f G/s (%.2fx)\n", dim,
          round + 1, madds / t_fma / 1e9, madds / t_i8 / 1e9, t_fma / t_i8, madds / t_bf / 1e9, t_fma / t_bf);
    }
  }
  std::printf("(checksum %u)\n", sink);
  return 0;
}
