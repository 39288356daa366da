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
#include "args.h"
#include "common.h"

namespace kgrank_addon {

namespace {

struct F64 {
  const double* data = nullptr;
  size_t length = 0;
};

F64 f64(const Args& args, const char* field) {
  Napi::TypedArray a = args.typed(field, napi_float64_array);
  return {static_cast<const double*>(raw_data(a)), a.ElementLength()};
}

// Absent, undefined or null: none (data null).
F64 optional_f64(const Args& args, const char* field) { return args.has(field) ? f64(args, field) : F64{}; }

// `field` (a Float64Array) and its optional "weights", one per element.
struct Weighted {
  F64 values, weights;
};
Weighted weighted(const Args& args, const char* field) {
  const Weighted w{f64(args, field), optional_f64(args, "weights")};
  if (w.weights.data != nullptr && w.weights.length != w.values.length) {
    args.range_error("weights", std::string("must hold one weight per element of ") + field);
  }
  return w;
}

// [E, Var] as the Float64Array both moment bindings return.
Napi::Float64Array moments_array(Napi::Env env, const kgrank::Moments& m) {
  Napi::Float64Array out = Napi::Float64Array::New(env, 2);
  out[0] = m.expectation;
  out[1] = m.variance;
  return out;
}

// aggregateRanks({ ranks, weights?, ks, truncatedKs?, flags, simd, threads })
// -> Float64Array(kAggregateFixedSlots + ks.length + truncatedKs.length): the hit slots of ks, then the truncated
// reciprocal slots (MRR@k) of truncatedKs (aggregate.h); flags: 1 variance, 2 median, 4 median absolute deviation
Napi::Value AggregateRanks(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Args args(info, "aggregateRanks");
  const auto [ranks, weights] = weighted(args, "ranks");
  const F64 ks = f64(args, "ks");
  const F64 truncated = optional_f64(args, "truncatedKs");
  const size_t flags = args.size("flags", 0);
  if (flags > 7) args.range_error("flags", "must be a sum of 1 (variance), 2 (median) and 4 (mad)");
  kgrank::AggregateRequest request;
  request.variance = (flags & 1) != 0;
  request.median = (flags & 2) != 0;
  request.mad = (flags & 4) != 0;
  const CountOptions options = args.options();
  request.simd = options.simd;
  request.truncated_ks = truncated.data;
  request.num_truncated = truncated.length;
  Napi::Float64Array out = Napi::Float64Array::New(env, kgrank::kAggregateFixedSlots + ks.length + truncated.length);
  kgrank::aggregate_ranks(ranks.data, weights.data, ranks.length, ks.data, ks.length, request, out.Data(),
                          options.threads);
  return out;
}

// medianRanks({ values, weights?, mad }) -> number
Napi::Value MedianRanks(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Args args(info, "medianRanks");
  const auto [values, weights] = weighted(args, "values");
  if (values.length == 0) args.range_error("values", "must not be empty");
  const bool mad = args.boolean("mad");
  const double m = mad ? kgrank::median_absolute_deviation(values.data, weights.data, values.length)
                       : kgrank::median(values.data, weights.data, values.length);
  return Napi::Number::New(env, m);
}

// closedMoments({ metric, numCandidates, weights?, k }) -> Float64Array [E, Var]
Napi::Value ClosedMoments(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Args args(info, "closedMoments");
  const auto metric = args.code<kgrank::ClosedMetric>("metric");
  const auto [n, w] = weighted(args, "numCandidates");
  if (n.length == 0) args.range_error("numCandidates", "must not be empty");
  const double k = args.number("k");
  const kgrank::Moments m = kgrank::closed_moments(metric, n.data, w.data, n.length, k);
  return moments_array(env, m);
}

// medianMoments({ numCandidates, wantVariance? (default true) }) -> Float64Array [E, Var, evaluations] of the
// conventional median rank (validated integers >= 1); Var is NaN when wantVariance is false and n is even (the joint
// sum is skipped); evaluations is the kernel's cost (tests bound it)
Napi::Value MedianMoments(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Args args(info, "medianMoments");
  const F64 n = f64(args, "numCandidates");
  if (n.length == 0) args.range_error("numCandidates", "must not be empty");
  const bool want_variance = args.optional_boolean("wantVariance", true);
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

// candidateHistogram({ numCandidates, weights?, threads }) -> { values, w1, w2, totalWeight } (unweighted: w2 is w1)
Napi::Value CandidateHistogram(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Args args(info, "candidateHistogram");
  const auto [n, w] = weighted(args, "numCandidates");
  const unsigned threads = args.threads();
  kgrank::CandidateHistogram h = kgrank::candidate_histogram(n.data, w.data, n.length, threads);
  Napi::Object out = Napi::Object::New(env);
  out.Set("values", adopt(env, std::move(h.n)));
  Napi::Float64Array w1 = adopt(env, std::move(h.w1));
  out.Set("w1", w1);
  out.Set("w2", w.data == nullptr ? w1 : adopt(env, std::move(h.w2)));
  out.Set("totalWeight", h.total_weight);
  return out;
}

// histogramMoments({ metric, values, w1, w2, totalWeight, count, k, threads }) -> Float64Array [E, Var]
Napi::Value HistogramMoments(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Args args(info, "histogramMoments");
  const auto metric = args.code<kgrank::ClosedMetric>("metric");
  const F64 values = f64(args, "values");
  const F64 w1 = f64(args, "w1");
  const F64 w2 = f64(args, "w2");
  if (values.length == 0) args.range_error("values", "must not be empty");
  if (w1.length != values.length) args.range_error("w1", "must hold one weight sum per value");
  if (w2.length != values.length) args.range_error("w2", "must hold one weight sum per value");
  const double total = args.number("totalWeight");
  const double count = args.number("count");
  const double k = args.number("k");
  const unsigned threads = args.threads();
  const kgrank::Moments m =
      kgrank::histogram_moments(metric, values.data, w1.data, w2.data, values.length, total, count, k, threads);
  return moments_array(env, m);
}

// sampleStatistic({ numCandidates, weights?, numSamples, seed, statistic, k, simd, threads })
// -> Float64Array(numSamples)
Napi::Value SampleStatistic(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Args args(info, "sampleStatistic");
  const auto [n, w] = weighted(args, "numCandidates");
  if (n.length == 0 || n.length > UINT32_MAX) args.range_error("numCandidates", "must have 1 to 2^32-1 elements");
  const size_t samples = args.size("numSamples", 1);
  if (samples > UINT32_MAX) args.range_error("numSamples", "must be below 2^32");
  const uint32_t seed = args.uint32("seed");
  const auto stat = args.code<kgrank::Statistic>("statistic");
  const double k = args.number("k");
  const CountOptions options = args.options();
  Napi::Float64Array out = Napi::Float64Array::New(env, samples);
  kgrank::sample_statistic(n.data, w.data, n.length, samples, seed, stat, k, out.Data(), options.threads, options.simd);
  return out;
}

// generateRanks({ numCandidates, seed, sample, simd, threads }) -> Float64Array (threads: checked, unused)
Napi::Value GenerateRanks(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Args args(info, "generateRanks");
  const F64 n = f64(args, "numCandidates");
  if (n.length > UINT32_MAX) args.range_error("numCandidates", "must have at most 2^32-1 elements");
  const uint32_t seed = args.uint32("seed");
  const uint32_t sample = args.uint32("sample");
  const SimdLevel simd = args.options().simd;
  Napi::Float64Array out = Napi::Float64Array::New(env, n.length);
  kgrank::generate_ranks(n.data, n.length, seed, sample, out.Data(), simd);
  return out;
}

// pairedResample({ kind, key, first, count, n, x, medians?, simd, threads }) -> Float64Array(count x width):
// replicates first .. first + count - 1 of compare's randomization (kind 0) or bootstrap (kind 1); see
// core/resample.h. x holds cols x n doubles; medians, when given, is { indexA, indexB, values, orderA, orderB,
// sortedA, sortedB }.
Napi::Value PairedResample(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Args args(info, "pairedResample");
  const auto kind = args.code<kgrank::Resampling>("kind");
  const uint32_t key = args.uint32("key");
  const uint32_t first = args.uint32("first");
  const size_t count = args.size("count", 0);
  const size_t n = args.size("n", 1);
  if (n > INT32_MAX) args.range_error("n", "must be below 2^31");
  if (count > UINT32_MAX - first) args.range_error("count", "makes first + count reach 2^32");
  const F64 x = f64(args, "x");
  if (x.length % n != 0) args.range_error("x", "must hold whole columns of n values");
  kgrank::PairedColumns c;
  c.n = n;
  c.cols = x.length / n;
  c.x = x.data;
  if (args.has("medians")) {
    const Args m = args.record("medians");
    Napi::TypedArray values = m.typed("values", napi_float64_array);
    c.values = static_cast<const double*>(raw_data(values));
    c.num_values = values.ElementLength();
    const auto u32 = [&](const char* field, size_t bound) -> const uint32_t* {
      Napi::TypedArray a = m.typed(field, napi_uint32_array);
      expect_length(m, field, a, n, "n elements");
      const uint32_t* p = static_cast<const uint32_t*>(raw_data(a));
      for (size_t i = 0; i < n; ++i) {
        if (p[i] >= bound) m.range_error(field, "holds an index out of range");
      }
      return p;
    };
    const auto sorted = [&](const char* field) -> const double* {
      Napi::TypedArray a = m.typed(field, napi_float64_array);
      expect_length(m, field, a, n, "n elements");
      return static_cast<const double*>(raw_data(a));
    };
    c.index_a = u32("indexA", c.num_values);
    c.index_b = u32("indexB", c.num_values);
    c.order_a = u32("orderA", n);
    c.order_b = u32("orderB", n);
    c.sorted_a = sorted("sortedA");
    c.sorted_b = sorted("sortedB");
    c.medians = true;
  }
  const CountOptions options = args.options();
  const size_t width = kgrank::paired_width(c);
  if (width != 0 && count > SIZE_MAX / sizeof(double) / width) args.range_error("count", "x width is too large");
  Napi::Float64Array out = Napi::Float64Array::New(env, count * width);
  kgrank::paired_resample(kind, c, key, first, count, out.Data(), options.threads, options.simd);
  return out;
}

// harmonic({ n, order }) -> H_order(n), order 1 or 2 (exposed for tests and tools).
Napi::Value Harmonic(const Napi::CallbackInfo& info) {
  const Args args(info, "harmonic");
  const size_t n = args.size("n", 0);
  const size_t order = args.size("order", 1);
  if (order > 2) args.range_error("order", "must be 1 or 2");
  const double x = static_cast<double>(n);
  return Napi::Number::New(info.Env(), order == 1 ? kgrank::harmonic1(x) : kgrank::harmonic2(x));
}

// generalizedHarmonic({ n, p }) -> H_p(n) = sum_{j<=n} j^-p for real p.
Napi::Value GeneralizedHarmonic(const Napi::CallbackInfo& info) {
  const Args args(info, "generalizedHarmonic");
  const size_t n = args.size("n", 0);
  const double p = args.number("p");
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
