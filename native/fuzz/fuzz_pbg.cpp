// PyTorch-BigGraph's scores (native/core/pbg.h): for a fuzzed comparator, bias, operator, width, row counts and
// values (fuzz_common.h's palette: NaN of either sign, infinities, signed zeros, subnormals, extremes, raw bits; or
// exact copies of other rows, for ties), pbg_adjust and pbg_compare must give the plain reference's values
// (native/tests/pbg_reference.h) bit for bit, at every SIMD level the CPU has and 1 and 2 threads, and leave the
// gaps of a strided output as they were.
#include "fuzz_common.h"
#include "pbg.h"
#include "pbg_reference.h"

using namespace kgrank;

namespace {

std::vector<double> draw(FuzzedDataProvider& p, size_t n, const std::vector<double>* copy_from) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) {
    if (copy_from != nullptr && !copy_from->empty() && p.ConsumeIntegralInRange<int>(0, 7) == 0) {
      v[i] = (*copy_from)[i % copy_from->size()];
    } else {
      v[i] = kgrank_fuzz::score<double>(p);
    }
  }
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  PbgComparison s;
  s.comparator = static_cast<PbgComparator>(p.ConsumeIntegralInRange<int>(0, 3));
  s.bias = p.ConsumeBool();
  s.dimension = p.ConsumeIntegralInRange<size_t>(1, 40);
  const size_t d = s.dimension;

  // adjust
  PbgAdjustJob adjust;
  adjust.comparison = s;
  adjust.op = static_cast<PbgOperator>(p.ConsumeIntegralInRange<int>(0, 5));
  adjust.count = p.ConsumeIntegralInRange<size_t>(0, 300);
  const bool f32 = p.ConsumeBool();
  const std::vector<double> rows = draw(p, adjust.count * d, nullptr);
  const std::vector<float> rows32(rows.begin(), rows.end());
  const std::vector<double> translation = draw(p, d, nullptr), diagonal = draw(p, d, nullptr),
                            linear = draw(p, d * d, nullptr), real = draw(p, d / 2 + 1, nullptr),
                            imag = draw(p, d / 2 + 1, nullptr), global = draw(p, d, nullptr);
  adjust.translation = translation.data();
  adjust.diagonal = diagonal.data();
  adjust.linear = linear.data();
  adjust.real = real.data();
  adjust.imag = imag.data();
  adjust.global = p.ConsumeBool() ? global.data() : nullptr;
  adjust.rows_f32 = f32 ? rows32.data() : nullptr;
  adjust.rows_f64 = f32 ? nullptr : rows.data();
  const std::vector<double> want_rows =
      f32 ? kgrank_pbg::adjust(adjust, rows32.data()) : kgrank_pbg::adjust(adjust, rows.data());
  for (unsigned threads : {1u, 2u}) {
    std::vector<double> got(adjust.count * d + 1, 7.0);
    FUZZ_CHECK(pbg_adjust(adjust, got.data(), threads).ok());
    for (size_t i = 0; i < want_rows.size(); ++i) FUZZ_CHECK(kgrank_pbg::same(got[i], want_rows[i]));
    FUZZ_CHECK(got.back() == 7.0);
  }

  // compare
  PbgCompareJob job;
  job.comparison = s;
  job.num_queries = p.ConsumeIntegralInRange<size_t>(1, 6);
  job.num_candidates = p.ConsumeIntegralInRange<size_t>(1, 600);
  const std::vector<double> queries = draw(p, job.num_queries * d, nullptr);
  const std::vector<double> candidates = draw(p, job.num_candidates * d, &queries);
  job.queries = queries.data();
  job.candidates = candidates.data();
  job.query_first = p.ConsumeBool();
  job.out_offset = p.ConsumeIntegralInRange<size_t>(0, 3);
  job.out_stride = job.out_offset + job.num_candidates + p.ConsumeIntegralInRange<size_t>(0, 3);
  std::vector<double> want(job.num_queries * job.out_stride, 7.0);
  for (size_t j = 0; j < job.num_queries; ++j)
    for (size_t i = 0; i < job.num_candidates; ++i)
      want[j * job.out_stride + job.out_offset + i] =
          kgrank_pbg::compare_one(s, &queries[j * d], &candidates[i * d], job.query_first);
  for (SimdLevel level : kgrank_fuzz::levels()) {
    for (unsigned threads : {1u, 2u}) {
      std::vector<double> got(want.size(), 7.0);
      FUZZ_CHECK(pbg_compare(job, got.data(), level, threads).ok());
      for (size_t i = 0; i < want.size(); ++i) FUZZ_CHECK(kgrank_pbg::same(got[i], want[i]));
    }
  }
  // The stored-rows path: float32 candidates compare as their exact double values do.
  const std::vector<float> candidates32(candidates.begin(), candidates.end());
  const std::vector<double> widened(candidates32.begin(), candidates32.end());
  PbgCompareJob job32 = job;
  job32.candidates = nullptr;
  job32.candidates_f32 = candidates32.data();
  for (size_t j = 0; j < job.num_queries; ++j)
    for (size_t i = 0; i < job.num_candidates; ++i)
      want[j * job.out_stride + job.out_offset + i] =
          kgrank_pbg::compare_one(s, &queries[j * d], &widened[i * d], job.query_first);
  for (SimdLevel level : kgrank_fuzz::levels()) {
    std::vector<double> got(want.size(), 7.0);
    FUZZ_CHECK(pbg_compare(job32, got.data(), level, 2).ok());
    for (size_t i = 0; i < want.size(); ++i) FUZZ_CHECK(kgrank_pbg::same(got[i], want[i]));
  }
  return 0;
}
