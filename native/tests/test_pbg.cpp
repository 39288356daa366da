// Unit tests of native/core/pbg: pbg_adjust and pbg_compare against the plain reference (pbg_reference.h), bit for
// bit, at every SIMD level this CPU has and 1 and 3 threads: every operator and comparator, bias on either side,
// float32 and float64 rows, widths and candidate counts around every level's panel and task, special values (NaN,
// infinities, signed zeros, subnormals, huge values), exact ties, and the gaps of a strided output left untouched.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <vector>

#include "check.h"
#include "pbg.h"
#include "pbg_reference.h"
#include "simd.h"

using namespace kgrank;

namespace {

uint64_t g_state = 0x9e3779b97f4a7c15ull;
uint32_t next() {
  g_state = g_state * 6364136223846793005ull + 1442695040888963407ull;
  return static_cast<uint32_t>(g_state >> 33);
}
double uniform() { return next() / 4294967296.0; }

double value(bool special) {
  if (special && next() % 40 == 0) {
    const double palette[] = {0.0,
                              -0.0,
                              std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity(),
                              std::numeric_limits<double>::quiet_NaN(),
                              std::numeric_limits<double>::denorm_min(),
                              1e300,
                              -1e-300};
    return palette[next() % 8];
  }
  return uniform() * 2.6 - 1.3;
}

std::vector<double> values(size_t n, bool special) {
  std::vector<double> v(n);
  for (auto& x : v) x = value(special);
  return v;
}

std::vector<SimdLevel> levels() {
  std::vector<SimdLevel> out;
  for (SimdLevel l : {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON})
    if (simd_supported(l)) out.push_back(l);
  return out;
}

const PbgComparator kComparators[] = {PbgComparator::Dot, PbgComparator::Cos, PbgComparator::L2,
                                      PbgComparator::SquaredL2};

void adjust_cases() {
  int cases = 0;
  for (size_t d : {1, 2, 7, 33}) {
    for (int op = 0; op <= 5; ++op) {
      for (PbgComparator c : kComparators) {
        for (bool bias : {false, true}) {
          PbgAdjustJob job;
          job.comparison = {c, bias, d};
          job.op = static_cast<PbgOperator>(op);
          job.count = 1 + next() % 600;
          const bool special = next() % 2 == 0;
          const std::vector<double> rows = values(job.count * d, special);
          std::vector<float> rows32(rows.begin(), rows.end());
          const std::vector<double> translation = values(d, false), diagonal = values(d, false),
                                    linear = values(d * d, false), real = values(d / 2 + 1, false),
                                    imag = values(d / 2 + 1, false), global = values(d, false);
          job.translation = translation.data();
          job.diagonal = diagonal.data();
          job.linear = linear.data();
          job.real = real.data();
          job.imag = imag.data();
          job.global = next() % 2 ? global.data() : nullptr;
          for (bool f32 : {false, true}) {
            job.rows_f32 = f32 ? rows32.data() : nullptr;
            job.rows_f64 = f32 ? nullptr : rows.data();
            const std::vector<double> want =
                f32 ? kgrank_pbg::adjust(job, rows32.data()) : kgrank_pbg::adjust(job, rows.data());
            for (unsigned threads : {1u, 3u}) {
              std::vector<double> got(job.count * d, 42.0);
              CHECK(pbg_adjust(job, got.data(), threads).ok());
              size_t bad = 0;
              for (size_t i = 0; i < got.size(); ++i) bad += !kgrank_pbg::same(got[i], want[i]);
              if (bad)
                std::fprintf(stderr, "adjust d=%zu op=%d comparator=%d bias=%d f32=%d: %zu values differ\n", d, op,
                             static_cast<int>(c), bias, f32, bad);
              CHECK(bad == 0);
            }
            ++cases;
          }
        }
      }
    }
  }
  CHECK(cases == 4 * 6 * 4 * 2 * 2);
}

void compare_cases() {
  const std::vector<SimdLevel> simd = levels();
  int cases = 0;
  for (size_t d : {1, 2, 3, 8, 17, 64, 101}) {
    for (PbgComparator c : kComparators) {
      for (bool bias : {false, true}) {
        for (bool query_first : {false, true}) {
          PbgCompareJob job;
          job.comparison = {c, bias, d};
          job.num_queries = 1 + next() % 12;
          const size_t counts[] = {1, 7, 8, 9, 15, 16, 17, 31, 33, 511, 513, 1100};
          job.num_candidates = counts[next() % 12];
          const bool special = next() % 2 == 0;
          std::vector<double> queries = values(job.num_queries * d, special);
          std::vector<double> candidates = values(job.num_candidates * d, special);
          // Exact ties: candidate 1 is query 0, candidate 3 is candidate 2.
          if (job.num_candidates > 1)
            for (size_t k = 0; k < d; ++k) candidates[d + k] = queries[k];
          if (job.num_candidates > 3)
            for (size_t k = 0; k < d; ++k) candidates[3 * d + k] = candidates[2 * d + k];
          job.queries = queries.data();
          job.candidates = candidates.data();
          job.query_first = query_first;
          job.out_offset = next() % 5;
          job.out_stride = job.out_offset + job.num_candidates + next() % 3;
          std::vector<double> want(job.num_queries * job.out_stride, 42.0);
          for (size_t j = 0; j < job.num_queries; ++j)
            for (size_t i = 0; i < job.num_candidates; ++i)
              want[j * job.out_stride + job.out_offset + i] =
                  kgrank_pbg::compare_one(job.comparison, &queries[j * d], &candidates[i * d], query_first);
          // The same rows as float32 (and the reference on their exact double values): the stored-rows path.
          const std::vector<float> candidates32(candidates.begin(), candidates.end());
          std::vector<double> want32(want.size(), 42.0);
          for (size_t j = 0; j < job.num_queries; ++j) {
            for (size_t i = 0; i < job.num_candidates; ++i) {
              std::vector<double> c(candidates32.begin() + i * d, candidates32.begin() + (i + 1) * d);
              want32[j * job.out_stride + job.out_offset + i] =
                  kgrank_pbg::compare_one(job.comparison, &queries[j * d], c.data(), query_first);
            }
          }
          for (SimdLevel level : simd) {
            for (unsigned threads : {1u, 3u}) {
              PbgCompareJob job32 = job;
              job32.candidates = nullptr;
              job32.candidates_f32 = candidates32.data();
              std::vector<double> got32(want.size(), 42.0);
              CHECK(pbg_compare(job32, got32.data(), level, threads).ok());
              size_t bad32 = 0;
              for (size_t i = 0; i < got32.size(); ++i) bad32 += !kgrank_pbg::same(got32[i], want32[i]);
              CHECK(bad32 == 0);
              std::vector<double> got(want.size(), 42.0);
              CHECK(pbg_compare(job, got.data(), level, threads).ok());
              size_t bad = 0;
              for (size_t i = 0; i < got.size(); ++i) bad += !kgrank_pbg::same(got[i], want[i]);
              if (bad)
                std::fprintf(stderr, "compare %s d=%zu comparator=%d bias=%d query_first=%d n=%zu: %zu values differ\n",
                             simd_name(level), d, static_cast<int>(c), bias, query_first, job.num_candidates, bad);
              CHECK(bad == 0);
            }
          }
          ++cases;
        }
      }
    }
  }
  CHECK(cases == 7 * 4 * 2 * 2);
  std::printf("simd levels tested: %zu\n", simd.size());
}

void refused() {
  PbgCompareJob job;
  double out = 0;
  CHECK(!pbg_compare(job, &out, SimdLevel::Scalar, 1).ok());  // dimension 0
  PbgAdjustJob adjust;
  adjust.comparison.dimension = 2;
  adjust.op = PbgOperator::Linear;
  const double row[2] = {1, 2};
  adjust.rows_f64 = row;
  adjust.count = 1;
  double two[2];
  CHECK(!pbg_adjust(adjust, two, 1).ok());  // linear without its matrix
}

}  // namespace

int main() {
  adjust_cases();
  compare_cases();
  refused();
  TEST_MAIN_END();
}
