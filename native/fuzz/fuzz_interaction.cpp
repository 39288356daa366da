// Ranking from embeddings (rank_embeddings): for a fuzzed interaction, complex layout, width, model, queries and
// candidate mode (every entity with filter exclusions, a candidate subset, OGB negatives), at every SIMD level and
// 1 / 2 / 3 threads, float32 and float64, the kernel's counts must equal a plain loop over score_triple() (the
// single-pair code): each vector lane computes each score bit for bit as the scalar code. Values are finite and
// bounded (the loaders refuse non-finite embeddings), with many exact ties (small multiples of 1/4).
#include <algorithm>
#include <cmath>

#include "fuzz_common.h"
#include "interaction.h"

using namespace kgrank;

namespace {

template <class T>
T value(FuzzedDataProvider& p) {
  const uint8_t pick = p.ConsumeIntegral<uint8_t>();
  if (pick < 160) return static_cast<T>(static_cast<int>(pick % 17) - 8) / T(4);  // ties: -2 .. 2 in quarters
  if (pick < 200) return static_cast<T>(p.ConsumeFloatingPointInRange<float>(-8.0f, 8.0f));
  if (pick < 220) return std::numeric_limits<T>::denorm_min() * static_cast<T>(pick % 3);
  return pick % 2 ? T(0) : -T(0);
}

template <class T>
void run(FuzzedDataProvider& p) {
  const auto interaction = static_cast<Interaction>(p.ConsumeIntegralInRange<int>(0, 5));
  const auto layout = static_cast<ComplexLayout>(p.ConsumeIntegralInRange<int>(0, 1));
  const bool complex = interaction == Interaction::ComplEx || interaction == Interaction::RotatE;
  size_t width = p.ConsumeIntegralInRange<size_t>(1, 40);
  if (complex) width = 2 * ((width + 1) / 2);
  size_t rel_width = width;
  if (interaction == Interaction::PairRE) rel_width = 2 * width;
  if (interaction == Interaction::RotatE && p.ConsumeBool()) rel_width = width / 2;  // phases
  if (interaction == Interaction::RotatE && rel_width == width / 2 && layout == ComplexLayout::Interleaved) rel_width = width;
  const size_t n = p.ConsumeIntegralInRange<size_t>(1, 90), nr = p.ConsumeIntegralInRange<size_t>(1, 4);
  const size_t rows = p.ConsumeIntegralInRange<size_t>(1, 14);
  std::vector<T> ent(n * width), rel(nr * rel_width), scale;
  for (auto& v : ent) v = value<T>(p);
  for (auto& v : rel) v = value<T>(p);
  if (interaction == Interaction::PairRE) {
    scale.resize(n);
    for (size_t e = 0; e < n; ++e) {
      double s = 0;
      for (size_t k = 0; k < width; ++k) s += static_cast<double>(ent[e * width + k]) * ent[e * width + k];
      scale[e] = static_cast<T>(1 / std::max(std::sqrt(s), 1e-12));  // as the loader: F.normalize's eps
    }
  }
  const double phase = p.ConsumeFloatingPointInRange<double>(-4.0, 4.0);
  EmbeddingModel<T> m{interaction, layout, ent.data(), rel.data(), n, nr, width, rel_width, phase, scale.empty() ? nullptr : scale.data()};
  std::vector<int32_t> anchor(rows), relation(rows), truth(rows), cand, neg;
  for (size_t i = 0; i < rows; ++i) {
    anchor[i] = p.ConsumeIntegralInRange<int32_t>(0, static_cast<int32_t>(n - 1));
    relation[i] = p.ConsumeIntegralInRange<int32_t>(0, static_cast<int32_t>(nr - 1));
    truth[i] = p.ConsumeIntegralInRange<int32_t>(0, static_cast<int32_t>(n - 1));
  }
  const bool head = p.ConsumeBool();
  const int mode = p.ConsumeIntegralInRange<int>(0, 2);
  std::vector<uint32_t> off(rows + 1, 0);
  std::vector<int32_t> excl;
  const size_t K = p.ConsumeIntegralInRange<size_t>(1, 12);
  if (mode == 0) {
    for (size_t i = 0; i < rows; ++i) {
      // Distinct known answers other than the true one, sorted (as the filter index gives them).
      std::vector<char> seen(n, 0);
      const size_t count = p.ConsumeIntegralInRange<size_t>(0, 5);
      for (size_t j = 0; j < count; ++j) {
        const int32_t x = p.ConsumeIntegralInRange<int32_t>(0, static_cast<int32_t>(n - 1));
        if (x != truth[i]) seen[x] = 1;
      }
      for (size_t x = 0; x < n; ++x) if (seen[x]) excl.push_back(static_cast<int32_t>(x));
      off[i + 1] = static_cast<uint32_t>(excl.size());
    }
  } else if (mode == 1) {
    for (size_t e = 0; e < n; ++e) if (p.ConsumeBool()) cand.push_back(static_cast<int32_t>(e));
    if (cand.empty()) cand.push_back(0);
  } else {
    for (size_t i = 0; i < rows * K; ++i) neg.push_back(p.ConsumeIntegralInRange<int32_t>(0, static_cast<int32_t>(n - 1)));
  }
  std::vector<double> g(rows, 0), e(rows, 0), rem(rows, 0);
  bool nan_true = false;
  size_t first_nan = rows;
  for (size_t i = 0; i < rows; ++i) {
    auto score = [&](int32_t x) {
      return head ? score_triple(m, x, relation[i], anchor[i], true) : score_triple(m, anchor[i], relation[i], x, false);
    };
    const double t = score(truth[i]);
    if (t != t) {
      nan_true = true;
      first_nan = std::min(first_nan, i);
      continue;
    }
    auto count = [&](int32_t x, double sign) {
      const double s = score(x);
      if (s > t) g[i] += sign;
      else if (s == t) e[i] += sign;
    };
    if (mode == 0) {
      for (size_t x = 0; x < n; ++x) count(static_cast<int32_t>(x), 1);
      for (uint32_t j = off[i]; j < off[i + 1]; ++j) {
        count(excl[j], -1);
        rem[i] += 1;
      }
    } else if (mode == 1) {
      for (int32_t x : cand) count(x, 1);
    } else {
      for (size_t j = 0; j < K; ++j) count(neg[i * K + j], 1);
    }
  }
  for (SimdLevel level : kgrank_fuzz::levels()) {
    for (unsigned threads : {1u, 2u, 3u}) {
      EmbeddingQueries q;
      q.rows = rows;
      q.head_side = head;
      q.anchor = anchor.data();
      q.relation = relation.data();
      q.truth = truth.data();
      if (mode == 0) {
        q.exclude_offsets = off.data();
        q.exclude_ids = excl.data();
      } else if (mode == 1) {
        q.candidates = cand.data();
        q.num_candidates = cand.size();
      } else {
        q.negatives = neg.data();
        q.negatives_per_row = K;
      }
      std::vector<double> out(5 * rows, -1);
      EmbeddingCounts c{out.data(), out.data() + rows, out.data() + 2 * rows, out.data() + 3 * rows, out.data() + 4 * rows};
      const Status st = rank_embeddings<T>(m, q, c, level, threads);
      if (nan_true) {
        FUZZ_CHECK(!st.ok());
        continue;
      }
      FUZZ_CHECK(st.ok());
      for (size_t i = 0; i < rows; ++i) {
        FUZZ_CHECK(out[i] == g[i]);
        FUZZ_CHECK(out[rows + i] == e[i]);
        if (mode == 0) FUZZ_CHECK(out[3 * rows + i] == rem[i]);
      }
    }
  }
  (void)first_nan;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  if (p.ConsumeBool()) run<float>(p);
  else run<double>(p);
  return 0;
}
