#include "aggregate.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "compensated.h"
#include "thread_pool.h"

namespace kgrank {

namespace {

struct ChunkSums {
  CompensatedSum w, wr, wlog, winv;
  std::vector<CompensatedSum> hits;
};

void sum_chunk(const double* r, const double* w, size_t n, const double* ks, size_t num_k, ChunkSums& out) {
  out.hits.assign(num_k, CompensatedSum());
  if (w == nullptr) {
    for (size_t i = 0; i < n; ++i) {
      const double x = r[i];
      out.wr.add(x);
      out.wlog.add(std::log(x));
      out.winv.add(1.0 / x);
      for (size_t j = 0; j < num_k; ++j) out.hits[j].add(x <= ks[j] ? 1.0 : 0.0);
    }
    out.w.add(static_cast<double>(n));
  } else {
    for (size_t i = 0; i < n; ++i) {
      const double x = r[i];
      const double wi = w[i];
      out.w.add(wi);
      out.wr.add(wi * x);
      out.wlog.add(wi * std::log(x));
      out.winv.add(wi / x);
      for (size_t j = 0; j < num_k; ++j) out.hits[j].add(x <= ks[j] ? wi : 0.0);
    }
  }
}

}  // namespace

void aggregate_ranks(const double* ranks, const double* weights, size_t n, const double* ks, size_t num_k,
                     bool want_variance, double* out, unsigned threads) {
  const size_t chunks = (n + kAggregateChunk - 1) / kAggregateChunk;
  std::vector<ChunkSums> parts(chunks);
  parallel_for(chunks, threads, [&](size_t c) {
    const size_t begin = c * kAggregateChunk;
    const size_t len = std::min(kAggregateChunk, n - begin);
    sum_chunk(ranks + begin, weights ? weights + begin : nullptr, len, ks, num_k, parts[c]);
  });
  ChunkSums total;
  total.hits.assign(num_k, CompensatedSum());
  for (const ChunkSums& p : parts) {
    total.w.merge(p.w);
    total.wr.merge(p.wr);
    total.wlog.merge(p.wlog);
    total.winv.merge(p.winv);
    for (size_t j = 0; j < num_k; ++j) total.hits[j].merge(p.hits[j]);
  }
  out[kSumWeights] = total.w.value();
  out[kSumRanks] = total.wr.value();
  out[kSumLogRanks] = total.wlog.value();
  out[kSumInverseRanks] = total.winv.value();
  out[kSumSquaredDev] = 0.0;
  for (size_t j = 0; j < num_k; ++j) out[kAggregateFixedSlots + j] = total.hits[j].value();
  if (want_variance && n > 0) {
    // Second, centred pass (unweighted mean): no cancellation whatever the offset of the ranks.
    CompensatedSum s;
    for (size_t i = 0; i < n; ++i) s.add(ranks[i]);
    const double mean = s.value() / static_cast<double>(n);
    std::vector<CompensatedSum> dev(chunks);
    parallel_for(chunks, threads, [&](size_t c) {
      const size_t begin = c * kAggregateChunk;
      const size_t end = std::min(n, begin + kAggregateChunk);
      for (size_t i = begin; i < end; ++i) {
        const double d = ranks[i] - mean;
        dev[c].add(d * d);
      }
    });
    CompensatedSum d;
    for (const CompensatedSum& p : dev) d.merge(p);
    out[kSumSquaredDev] = d.value();
  }
}

double median(const double* values, const double* weights, size_t n) {
  if (weights == nullptr) {
    std::vector<double> v(values, values + n);
    const size_t mid = n / 2;
    std::nth_element(v.begin(), v.begin() + mid, v.end());
    const double upper = v[mid];
    if (n % 2 == 1) return upper;
    const double lower = *std::max_element(v.begin(), v.begin() + mid);
    return lower + (upper - lower) / 2;
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  CompensatedSum total;
  for (size_t i = 0; i < n; ++i) total.add(weights[i]);
  const double half = total.value() / 2;
  CompensatedSum cum;
  for (size_t i = 0; i < n; ++i) {
    cum.add(weights[order[i]]);
    const double c = cum.value();
    if (c >= half) {
      const double x = values[order[i]];
      if (c == half && i + 1 < n) {
        const double y = values[order[i + 1]];
        return x + (y - x) / 2;
      }
      return x;
    }
  }
  return values[order[n - 1]];
}

double median_absolute_deviation(const double* values, const double* weights, size_t n) {
  const double m = median(values, weights, n);
  std::vector<double> dev(n);
  for (size_t i = 0; i < n; ++i) dev[i] = std::fabs(values[i] - m);
  return median(dev.data(), weights, n) / kNormalQuartile;
}

}  // namespace kgrank
