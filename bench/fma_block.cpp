// The chunk kernel's FMA loop alone against the FMA probe, on one thread: what the float32 path of ranking from
// embeddings could reach if packing and counting cost nothing (BENCHMARKS.md, "The float32 path at WikiKG2 size").
// The loop is native/core/interaction_kernel.h Micro::run's Dot case at AVX-512 (Q queries x 2 vectors of 16 entities,
// the query value broadcast, element by element over d = 100), over a packed chunk of 512 entities (200 KB, in L2)
// and 512 queries; each block ends with one compare per accumulator so that nothing is optimised away. The probe is
// Micro::probe (12 independent FMA chains). Best of 20 passes each (a shared machine slows some of them), both in
// this process, seconds apart.
//   g++ -O3 -std=c++17 -mavx512f -mavx512vl -mavx512bw -mavx512dq bench/fma_block.cpp -o /tmp/fma_block &&
//   /tmp/fma_block
#include <immintrin.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "fma_loop.h"

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

__attribute__((noinline)) float probe(size_t iterations) {
  __m512 acc[12];
  for (int a = 0; a < 12; ++a) acc[a] = _mm512_set1_ps(1.0f + 1e-7f * static_cast<float>(a));
  const __m512 m = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (size_t it = 0; it < iterations; ++it) {
    for (int a = 0; a < 12; ++a) acc[a] = _mm512_fmadd_ps(acc[a], m, b);
  }
  alignas(64) float out[16];
  float s = 0;
  for (int a = 0; a < 12; ++a) {
    _mm512_store_ps(out, acc[a]);
    for (float v : out) s += v;
  }
  return s;
}

template <int Q>
double rate(const std::vector<float>& pack, const std::vector<float>& queries, size_t dim, size_t rows,
            unsigned* sink) {
  const size_t panels = pack.size() / (dim * 32);
  double best = 1e30;
  for (int rep = 0; rep < 20; ++rep) {
    const double t0 = now();
    for (size_t g = 0; g + Q <= rows; g += Q) {
      const float* q[Q];
      for (int a = 0; a < Q; ++a) q[a] = queries.data() + (g + a) * dim;
      *sink += fma_bench::block<Q>(q, pack.data(), dim, panels);
    }
    const double t = now() - t0;
    if (t < best) best = t;
  }
  return static_cast<double>(rows / Q * Q) * static_cast<double>(panels * 32) * static_cast<double>(dim) / best;
}

}  // namespace

int main() {
  const size_t dim = 100, entities = 512, rows = 512;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  std::vector<float> pack(entities * dim), queries(rows * dim);
  for (float& x : pack) x = u(rng);
  for (float& x : queries) x = u(rng);
  unsigned sink = 0;
  for (int round = 0; round < 3; ++round) {
    const size_t iterations = 2000000;
    double best = 1e30;
    for (int rep = 0; rep < 20; ++rep) {
      const double t0 = now();
      volatile float keep = probe(iterations);
      (void)keep;
      const double t = now() - t0;
      if (t < best) best = t;
    }
    const double peak = static_cast<double>(iterations) * 12 * 16 / best;
    const double r8 = rate<8>(pack, queries, dim, rows, &sink);
    std::printf("round %d: probe %.1f G/s; FMA loop, 8 queries x 32 entities: %.1f G/s = %.1f %% of the probe\n",
                round + 1, peak / 1e9, r8 / 1e9, 100 * r8 / peak);
  }
  std::printf("(checksum %u)\n", sink);
  return 0;
}
