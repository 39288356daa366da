// The int8 screen (native/core/screen.h) against the float32 path: rank_embeddings with the screen off and on, paired
// and alternated (off first in even rounds, on first in odd ones), median of the rounds, for DistMult and ComplEx at
// d = 100 and d = 500, on random Gaussian embeddings and on a structured set (each query's true answer planted near
// its query direction, as a trained model's is). Prints per configuration the medians, their ratio, the median of
// the per-round ratios, the rescored fraction, and the float32 path's multiply-add rate against the FMA probe's peak.
// Counts of the two runs are compared every round (a mismatch exits 1).
//   cmake -S native -B build-bench -DKGRANK_BUILD_ADDON=OFF -DKGRANK_BUILD_TESTS=OFF -DKGRANK_BUILD_BENCH=ON
//   cmake --build build-bench -j 2 && build-bench/screen_bench [--entities 250000] [--rows 512] [--rounds 5]
//     [--threads 2] [--level avx512|avx2|scalar] [--dims 100,500] [--sets random,structured]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "interaction.h"
#include "screen.h"
#include "simd.h"

using namespace kgrank;

namespace {

struct Args {
  size_t entities = 250000, rows = 512, rounds = 5;
  unsigned threads = 2;
  SimdLevel level = best_simd();
  std::vector<size_t> dims{100, 500};
  bool random = true, structured = true;
  ScreenMode mode = ScreenMode::Auto;  // --mode auto|int8
};

struct Set {
  Interaction in;
  size_t n, d, nr, rows;
  std::vector<float> ent, rel;
  std::vector<int32_t> anchor, relation, truth;
};

Set make(Interaction in, size_t n, size_t d, size_t rows, bool structured, uint32_t seed) {
  Set s{in, n, d, 8, rows, {}, {}, {}, {}, {}};
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  s.ent.resize(n * d);
  s.rel.resize(s.nr * d);
  for (auto& v : s.ent) v = g(rng);
  for (size_t r = 0; r < s.nr; ++r) {
    for (size_t k = 0; k < d; ++k) {
      const bool im = in == Interaction::ComplEx && k >= d / 2;  // halves layout
      s.rel[r * d + k] = structured ? (im ? 0.0f : 1.0f) + 0.2f * g(rng) : g(rng);
    }
  }
  s.anchor.resize(rows);
  s.relation.resize(rows);
  s.truth.resize(rows);
  for (size_t i = 0; i < rows; ++i) {
    s.anchor[i] = static_cast<int32_t>(rng() % n);
    s.relation[i] = static_cast<int32_t>(rng() % s.nr);
    s.truth[i] = static_cast<int32_t>(rng() % n);
    if (structured && s.truth[i] != s.anchor[i]) {  // the answer near the query direction, plus noise
      float* t = s.ent.data() + static_cast<size_t>(s.truth[i]) * d;
      const float* a = s.ent.data() + static_cast<size_t>(s.anchor[i]) * d;
      for (size_t k = 0; k < d; ++k) t[k] = 0.6f * a[k] + 0.8f * g(rng);
    }
  }
  return s;
}

struct Run {
  double seconds;
  std::vector<double> counts;
  ScreenStats stats;
};

Run run(const Set& s, ScreenMode mode, const Args& a, const ScreenTable* table) {
  const EmbeddingModel<float> m{s.in,   ComplexLayout::Halves, s.ent.data(), s.rel.data(), s.n, s.nr, s.d, s.d, 0.0,
                                nullptr};
  EmbeddingQueries q{s.rows, false, s.anchor.data(), s.relation.data(), s.truth.data()};
  q.screen = mode;
  q.screen_table = table;
  Run r;
  q.screen_stats = &r.stats;
  r.counts.assign(4 * s.rows, 0.0);
  const size_t R = s.rows;
  const EmbeddingCounts out{r.counts.data(), r.counts.data() + R, r.counts.data() + 2 * R, nullptr,
                            r.counts.data() + 3 * R};
  const auto t0 = std::chrono::steady_clock::now();
  const Status st = rank_embeddings<float>(m, q, out, a.level, a.threads);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!st.ok()) {
    std::fprintf(stderr, "rank_embeddings failed: %s\n", st.message.c_str());
    std::exit(1);
  }
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--entities") a.entities = std::stoul(v);
    else if (k == "--rows") a.rows = std::stoul(v);
    else if (k == "--rounds") a.rounds = std::stoul(v);
    else if (k == "--mode") a.mode = v == "int8" ? ScreenMode::Int8 : ScreenMode::Auto;
    else if (k == "--threads") a.threads = static_cast<unsigned>(std::stoul(v));
    else if (k == "--level") {
      if (!parse_simd(v, &a.level) || !simd_supported(a.level)) {
        std::fprintf(stderr, "--level %s: not supported here (supported: %s)\n", v.c_str(),
                     supported_simd_list().c_str());
        return 2;
      }
    } else if (k == "--dims") {
      a.dims.clear();
      for (size_t p = 0; p < v.size();) {
        const size_t c = v.find(',', p);
        a.dims.push_back(std::stoul(v.substr(p, c == std::string::npos ? std::string::npos : c - p)));
        p = c == std::string::npos ? v.size() : c + 1;
      }
    } else if (k == "--sets") {
      a.random = v.find("random") != std::string::npos;
      a.structured = v.find("structured") != std::string::npos;
    } else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  double sink = 0;
  const size_t iters = 20000000;
  const auto p0 = std::chrono::steady_clock::now();
  const double fmas = fma_probe(a.level, a.threads, iters, &sink);
  const double peak = fmas / std::chrono::duration<double>(std::chrono::steady_clock::now() - p0).count();
  std::printf("level %s, %u threads, %zu entities x %zu queries, %zu rounds; FMA probe %.1f G multiply-adds/s%s\n",
              simd_name(a.level), a.threads, a.entities, a.rows, a.rounds, peak * 1e-9, sink == 0 ? " " : "");
  std::printf("%-10s %-4s %-10s %9s %9s %7s %7s %9s %9s %8s %8s\n", "model", "d", "set", "off ms", "screen ms", "ratio",
              "paired", "screened", "rescored", "table ms", "off/peak");
  int bad = 0;
  for (Interaction in : {Interaction::DistMult, Interaction::ComplEx}) {
    for (size_t d : a.dims) {
      for (bool structured : {false, true}) {
        if ((structured && !a.structured) || (!structured && !a.random)) continue;
        const Set s = make(in, a.entities, d, a.rows, structured, 7 + static_cast<uint32_t>(d));
        std::vector<double> off, on, ratio;
        double rescored = 0, screened = 0;
        // The table quantised once, as an evaluation does (screen_prepare); its time is the "table ms" column.
        ScreenTable prepared;
        const EmbeddingModel<float> pm{
            in, ComplexLayout::Halves, s.ent.data(), s.rel.data(), s.n, s.nr, s.d, s.d, 0.0, nullptr};
        if (!screen_prepare(pm, a.level, a.threads, &prepared).ok()) return 1;
        for (size_t r = 0; r < a.rounds; ++r) {
          Run x, y;
          if (r % 2 == 0) {
            x = run(s, ScreenMode::Off, a, nullptr);
            y = run(s, a.mode, a, &prepared);
          } else {
            y = run(s, a.mode, a, &prepared);
            x = run(s, ScreenMode::Off, a, nullptr);
          }
          if (x.counts != y.counts || !y.stats.used) {
            std::fprintf(stderr, "MISMATCH: the screen's counts differ from the float32 path's\n");
            bad = 1;
          }
          off.push_back(x.seconds);
          on.push_back(y.seconds);
          ratio.push_back(x.seconds / y.seconds);
          rescored = static_cast<double>(y.stats.rescored) / static_cast<double>(y.stats.pairs);
          screened = static_cast<double>(y.stats.pairs) / (static_cast<double>(s.n) * static_cast<double>(s.rows));
        }
        // The screen's own set-up: quantising the table (once per evaluation), timed apart.
        std::vector<double> prep;
        std::vector<uint32_t> map(d);
        for (size_t k = 0; k < d; ++k) map[k] = static_cast<uint32_t>(k);
        for (size_t r = 0; r < 3; ++r) {
          ScreenTable t;
          const auto t0 = std::chrono::steady_clock::now();
          screen_quantise_table(s.ent.data(), s.n, d, map.data(), d, a.level, a.threads, &t);
          prep.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        const double mo = median(off), ms = median(on);
        const double rate = static_cast<double>(a.entities) * a.rows * d / mo;
        std::printf("%-10s %-4zu %-10s %9.1f %9.1f %7.2f %7.2f %8.2f%% %8.3f%% %8.1f %7.0f%%\n",
                    in == Interaction::DistMult ? "DistMult" : "ComplEx", d, structured ? "structured" : "random",
                    mo * 1e3, ms * 1e3, mo / ms, median(ratio), screened * 100, rescored * 100, median(prep) * 1e3,
                    100 * rate / peak);
        std::fflush(stdout);
      }
    }
  }
  return bad;
}
