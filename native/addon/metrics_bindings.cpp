// Bindings of the metric numerics (aggregate, expectation, sampling). Argument conversion and checks only; the
// TypeScript facade validates values (finite, ranges) before calling, these checks guard shapes and types.
#include <napi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>
#include <string>

#include "../core/aggregate.h"
#include "../core/expectation.h"
#include "../core/harmonic.h"
#include "../core/median_moments.h"
#include "../core/resample.h"
#include "../core/sampling.h"
#include "common.h"

namespace kgrank_addon {

namespace {

struct F64 {
  const double* data = nullptr;
  size_t length = 0;
};

F64 f64_arg(const Napi::CallbackInfo& info, size_t index, const char* name, bool optional) {
  if (optional && (info.Length() <= index || info[index].IsUndefined() || info[index].IsNull())) return {};
  Napi::TypedArray a = typed_array_arg(info, index, name);
  if (a.TypedArrayType() != napi_float64_array) throw_type(info.Env(), std::string(name) + " must be a Float64Array");
  return {static_cast<const double*>(raw_data(a)), a.ElementLength()};
}

double number_arg(const Napi::CallbackInfo& info, size_t index, const char* name) {
  if (info.Length() <= index || !info[index].IsNumber())
    throw_type(info.Env(), std::string(name) + " must be a number");
  return info[index].As<Napi::Number>().DoubleValue();
}

void same_length(Napi::Env env, const F64& a, const F64& b, const char* name) {
  if (b.data != nullptr && b.length != a.length)
    throw_range(env, std::string(name) + " must have one element per rank");
}

// info[index]: a Float64Array named `name`; info[index + 1]: its optional weights, one per element.
struct Weighted {
  F64 values, weights;
};
Weighted weighted_arg(const Napi::CallbackInfo& info, size_t index, const char* name) {
  const Weighted w{f64_arg(info, index, name, false), f64_arg(info, index + 1, "weights", true)};
  same_length(info.Env(), w.values, w.weights, "weights");
  return w;
}

kgrank::ClosedMetric metric_arg(const Napi::CallbackInfo& info, size_t index) {
  const size_t metric = size_arg(info, index, "metric", 0);
  if (metric > 3) throw_range(info.Env(), "metric must be 0..3");
  return static_cast<kgrank::ClosedMetric>(metric);
}

// [E, Var] as the Float64Array both moment bindings return.
Napi::Float64Array moments_array(Napi::Env env, const kgrank::Moments& m) {
  Napi::Float64Array out = Napi::Float64Array::New(env, 2);
  out[0] = m.expectation;
  out[1] = m.variance;
  return out;
}

// aggregateRanks(ranks, weights?, ks, flags, simd, threads) -> Float64Array(8 + ks.length); flags: 1 variance,
// 2 median, 4 median absolute deviation
Napi::Value AggregateRanks(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto [ranks, weights] = weighted_arg(info, 0, "ranks");
  const F64 ks = f64_arg(info, 2, "ks", false);
  const size_t flags = size_arg(info, 3, "flags", 0);
  kgrank::AggregateRequest request;
  request.variance = (flags & 1) != 0;
  request.median = (flags & 2) != 0;
  request.mad = (flags & 4) != 0;
  const CountOptions options = options_arg(info, 4, 5);
  request.simd = options.simd;
  Napi::Float64Array out = Napi::Float64Array::New(env, kgrank::kAggregateFixedSlots + ks.length);
  kgrank::aggregate_ranks(ranks.data, weights.data, ranks.length, ks.data, ks.length, request, out.Data(),
                          options.threads);
  return out;
}

// medianRanks(values, weights?, mad: boolean) -> number
Napi::Value MedianRanks(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto [values, weights] = weighted_arg(info, 0, "values");
  if (values.length == 0) throw_range(env, "values must not be empty");
  const bool mad = info.Length() > 2 && info[2].ToBoolean().Value();
  const double m = mad ? kgrank::median_absolute_deviation(values.data, weights.data, values.length)
                       : kgrank::median(values.data, weights.data, values.length);
  return Napi::Number::New(env, m);
}

// closedMoments(metric, numCandidates, weights?, k) -> Float64Array [E, Var]
Napi::Value ClosedMoments(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const kgrank::ClosedMetric metric = metric_arg(info, 0);
  const auto [n, w] = weighted_arg(info, 1, "numCandidates");
  if (n.length == 0) throw_range(env, "numCandidates must not be empty");
  const double k = number_arg(info, 3, "k");
  const kgrank::Moments m = kgrank::closed_moments(metric, n.data, w.data, n.length, k);
  return moments_array(env, m);
}

// medianMoments(numCandidates, wantVariance) -> Float64Array [E, Var, evaluations] of the conventional median rank
// (validated integers >= 1); Var is NaN when wantVariance is false and n is even (the joint sum is skipped);
// evaluations is the kernel's cost (tests bound it)
Napi::Value MedianMoments(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const F64 n = f64_arg(info, 0, "numCandidates", false);
  if (n.length == 0) throw_range(env, "numCandidates must not be empty");
  const bool want_variance = info.Length() < 2 || info[1].IsUndefined() || info[1].ToBoolean().Value();
  const kgrank::MedianMomentsResult m = kgrank::median_moments(n.data, n.length, want_variance);
  Napi::Float64Array out = Napi::Float64Array::New(env, 3);
  out[0] = m.expectation;
  out[1] = m.variance;
  out[2] = m.evaluations;
  return out;
}

// Columns up to this size are copied into memory V8 allocates; larger ones are handed over without a copy.
constexpr size_t kAdoptBytes = size_t{1} << 20;

// A column as a Float64Array. Large ones (histograms of ~1e6 bins) are adopted: a Float64Array over the vector's
// memory, freed by a finalizer. But Node runs such finalizers only when the event loop turns (SetImmediate), so a
// loop of small calls kept every column and its finalizer record alive: 1e5 expectation calls on 10 tasks grew RSS by
// 66 MiB and never shrank until the loop turned. Small columns are therefore copied (a few hundred bytes at most),
// and V8 frees them with the array.
template <typename Column>
Napi::Float64Array adopt(Napi::Env env, Column&& v) {
  using Vector = std::decay_t<Column>;
  if (v.size() * sizeof(double) <= kAdoptBytes) {
    Napi::Float64Array copy = Napi::Float64Array::New(env, v.size());
    if (!v.empty()) std::memcpy(copy.Data(), v.data(), v.size() * sizeof(double));
    return copy;
  }
  auto* owned = new Vector(std::move(v));
  Napi::ArrayBuffer buffer = Napi::ArrayBuffer::New(
      env, owned->data(), owned->size() * sizeof(double), [](Napi::Env, void*, Vector* hint) { delete hint; }, owned);
  return Napi::Float64Array::New(env, owned->size(), buffer, 0);
}

// candidateHistogram(numCandidates, weights?, threads?) -> { values, w1, w2, totalWeight } (unweighted: w2 is w1)
Napi::Value CandidateHistogram(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto [n, w] = weighted_arg(info, 0, "numCandidates");
  const unsigned threads = info.Length() > 2 && info[2].IsNumber() ? threads_arg(info, 2) : 0;
  kgrank::CandidateHistogram h = kgrank::candidate_histogram(n.data, w.data, n.length, threads);
  Napi::Object out = Napi::Object::New(env);
  out.Set("values", adopt(env, std::move(h.n)));
  Napi::Float64Array w1 = adopt(env, std::move(h.w1));
  out.Set("w1", w1);
  out.Set("w2", w.data == nullptr ? w1 : adopt(env, std::move(h.w2)));
  out.Set("totalWeight", h.total_weight);
  return out;
}

// histogramMoments(metric, values, w1, w2, totalWeight, count, k, threads) -> Float64Array [E, Var]
Napi::Value HistogramMoments(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const kgrank::ClosedMetric metric = metric_arg(info, 0);
  const F64 values = f64_arg(info, 1, "values", false);
  const F64 w1 = f64_arg(info, 2, "w1", false);
  const F64 w2 = f64_arg(info, 3, "w2", false);
  if (w1.length != values.length || w2.length != values.length || values.length == 0) {
    throw_range(env, "values, w1 and w2 must have the same non-zero length");
  }
  const double total = number_arg(info, 4, "totalWeight");
  const double count = number_arg(info, 5, "count");
  const double k = number_arg(info, 6, "k");
  const unsigned threads = threads_arg(info, 7);
  const kgrank::Moments m =
      kgrank::histogram_moments(metric, values.data, w1.data, w2.data, values.length, total, count, k, threads);
  return moments_array(env, m);
}

uint32_t seed_arg(const Napi::CallbackInfo& info, size_t index) {
  const size_t s = size_arg(info, index, "seed", 0);
  if (s > UINT32_MAX) throw_range(info.Env(), "seed must be an integer from 0 to 2^32-1");
  return static_cast<uint32_t>(s);
}

// sampleStatistic(numCandidates, weights?, numSamples, seed, statistic, k, simd, threads) -> Float64Array(numSamples)
Napi::Value SampleStatistic(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto [n, w] = weighted_arg(info, 0, "numCandidates");
  if (n.length == 0 || n.length > UINT32_MAX) throw_range(env, "numCandidates must have 1 to 2^32-1 elements");
  const size_t samples = size_arg(info, 2, "numSamples", 1);
  if (samples > UINT32_MAX) throw_range(env, "numSamples must be below 2^32");
  const uint32_t seed = seed_arg(info, 3);
  const size_t stat = size_arg(info, 4, "statistic", 0);
  if (stat > 7) throw_range(env, "statistic must be 0..7");
  const double k = number_arg(info, 5, "k");
  const CountOptions options = options_arg(info, 6, 7);
  Napi::Float64Array out = Napi::Float64Array::New(env, samples);
  kgrank::sample_statistic(n.data, w.data, n.length, samples, seed, static_cast<kgrank::Statistic>(stat), k, out.Data(),
                           options.threads, options.simd);
  return out;
}

// generateRanks(numCandidates, seed, sample, simd, threads) -> Float64Array (threads: checked, unused)
Napi::Value GenerateRanks(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const F64 n = f64_arg(info, 0, "numCandidates", false);
  if (n.length > UINT32_MAX) throw_range(env, "numCandidates must have at most 2^32-1 elements");
  const uint32_t seed = seed_arg(info, 1);
  const uint32_t sample = seed_arg(info, 2);
  const SimdLevel simd = options_arg(info, 3, 4).simd;
  Napi::Float64Array out = Napi::Float64Array::New(env, n.length);
  kgrank::generate_ranks(n.data, n.length, seed, sample, out.Data(), simd);
  return out;
}

// pairedResample(kind, key, first, count, n, x, medians?, simd, threads) -> Float64Array(count x width): replicates
// first .. first + count - 1 of compare's randomization (kind 0) or bootstrap (kind 1); see core/resample.h. x holds
// cols x n doubles; medians, when given, is [indexA, indexB, values, orderA, orderB, sortedA, sortedB].
Napi::Value PairedResample(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const size_t kind = size_arg(info, 0, "kind", 0);
  if (kind > 1) throw_range(env, "kind must be 0 (randomization) or 1 (bootstrap)");
  const uint32_t key = seed_arg(info, 1);
  const uint32_t first = seed_arg(info, 2);
  const size_t count = size_arg(info, 3, "count", 0);
  const size_t n = size_arg(info, 4, "n", 1);
  if (n > INT32_MAX) throw_range(env, "n must be below 2^31");
  if (count > UINT32_MAX - first) throw_range(env, "first + count must be below 2^32");
  const F64 x = f64_arg(info, 5, "x", false);
  if (x.length % n != 0) throw_range(env, "x must hold whole columns of n values");
  kgrank::PairedColumns c;
  c.n = n;
  c.cols = x.length / n;
  c.x = x.data;
  if (info.Length() > 6 && !info[6].IsUndefined() && !info[6].IsNull()) {
    if (!info[6].IsArray() || info[6].As<Napi::Array>().Length() != 7) {
      throw_type(env, "medians must be [indexA, indexB, values, orderA, orderB, sortedA, sortedB]");
    }
    const Napi::Array m = info[6].As<Napi::Array>();
    // The arrays stay referenced by `m` (and so alive) until the call returns.
    Napi::TypedArray values = m.Get(2u).As<Napi::TypedArray>();
    if (!m.Get(2u).IsTypedArray() || values.TypedArrayType() != napi_float64_array) {
      throw_type(env, "values must be a Float64Array");
    }
    c.values = static_cast<const double*>(raw_data(values));
    c.num_values = values.ElementLength();
    const auto u32 = [&](uint32_t at, const char* name, size_t bound) -> const uint32_t* {
      const Napi::Value v = m.Get(at);
      if (!v.IsTypedArray()) throw_type(env, std::string(name) + " must be a Uint32Array of n elements");
      Napi::TypedArray a = v.As<Napi::TypedArray>();
      if (a.TypedArrayType() != napi_uint32_array || a.ElementLength() != n) {
        throw_type(env, std::string(name) + " must be a Uint32Array of n elements");
      }
      const uint32_t* p = static_cast<const uint32_t*>(raw_data(a));
      for (size_t i = 0; i < n; ++i) {
        if (p[i] >= bound) throw_range(env, std::string(name) + " holds an index out of range");
      }
      return p;
    };
    const auto f64 = [&](uint32_t at, const char* name) -> const double* {
      const Napi::Value v = m.Get(at);
      if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array ||
          v.As<Napi::TypedArray>().ElementLength() != n) {
        throw_type(env, std::string(name) + " must be a Float64Array of n elements");
      }
      return static_cast<const double*>(raw_data(v.As<Napi::TypedArray>()));
    };
    c.index_a = u32(0, "indexA", c.num_values);
    c.index_b = u32(1, "indexB", c.num_values);
    c.order_a = u32(3, "orderA", n);
    c.order_b = u32(4, "orderB", n);
    c.sorted_a = f64(5, "sortedA");
    c.sorted_b = f64(6, "sortedB");
    c.medians = true;
  }
  const CountOptions options = options_arg(info, 7, 8);
  const size_t width = kgrank::paired_width(c);
  if (width != 0 && count > SIZE_MAX / sizeof(double) / width) throw_range(env, "count x width is too large");
  Napi::Float64Array out = Napi::Float64Array::New(env, count * width);
  kgrank::paired_resample(kind == 0 ? kgrank::Resampling::Randomization : kgrank::Resampling::Bootstrap, c, key, first,
                          count, out.Data(), options.threads, options.simd);
  return out;
}

// harmonic(n, order) -> H_order(n), order 1 or 2 (exposed for tests and tools).
Napi::Value Harmonic(const Napi::CallbackInfo& info) {
  const size_t n = size_arg(info, 0, "n", 0);
  const size_t order = size_arg(info, 1, "order", 1);
  if (order > 2) throw_range(info.Env(), "order must be 1 or 2");
  const double x = static_cast<double>(n);
  return Napi::Number::New(info.Env(), order == 1 ? kgrank::harmonic1(x) : kgrank::harmonic2(x));
}

// generalizedHarmonic(n, p) -> H_p(n) = sum_{j<=n} j^-p for real p.
Napi::Value GeneralizedHarmonic(const Napi::CallbackInfo& info) {
  const size_t n = size_arg(info, 0, "n", 0);
  const double p = number_arg(info, 1, "p");
  return Napi::Number::New(info.Env(), kgrank::harmonic_real(static_cast<double>(n), p));
}

}  // namespace

void register_metrics(Napi::Env env, Napi::Object exports) {
  export_function<AggregateRanks>(env, exports, "aggregateRanks");
  export_function<MedianRanks>(env, exports, "medianRanks");
  export_function<ClosedMoments>(env, exports, "closedMoments");
  export_function<MedianMoments>(env, exports, "medianMoments");
  export_function<CandidateHistogram>(env, exports, "candidateHistogram");
  export_function<HistogramMoments>(env, exports, "histogramMoments");
  export_function<SampleStatistic>(env, exports, "sampleStatistic");
  export_function<GenerateRanks>(env, exports, "generateRanks");
  export_function<PairedResample>(env, exports, "pairedResample");
  export_function<Harmonic>(env, exports, "harmonic");
  export_function<GeneralizedHarmonic>(env, exports, "generalizedHarmonic");
}

}  // namespace kgrank_addon
