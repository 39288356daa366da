// The plain reference of PyTorch-BigGraph's scores for test_pbg and fuzz_pbg: one pair, one row at a time, in the
// order src/fallback/pbg.ts states (a multiply, then an add; sums from coordinate 0), written without the core's
// panels, transposes or tasks. Built, as the core is, with -ffp-contract=off.
#pragma once
#include <cmath>
#include <cstddef>
#include <vector>

#include "pbg.h"

namespace kgrank_pbg {

inline double compare_one(const kgrank::PbgComparison& s, const double* a, const double* b, bool query_first) {
  const size_t from = s.bias ? 1 : 0;
  double acc = 0;
  if (s.comparator == kgrank::PbgComparator::Dot || s.comparator == kgrank::PbgComparator::Cos) {
    for (size_t k = from; k < s.dimension; ++k) acc = acc + a[k] * b[k];
  } else {
    for (size_t k = from; k < s.dimension; ++k) {
      const double x = a[k] - b[k];
      acc = acc + x * x;
    }
    if (s.comparator == kgrank::PbgComparator::L2) {
      acc = -std::sqrt(std::isnan(acc) ? acc : std::fmax(acc, 1e-30));
    } else {
      acc = -acc;
    }
  }
  if (s.bias) acc = query_first ? (acc + a[0]) + b[0] : (acc + b[0]) + a[0];
  return acc;
}

template <class T>
std::vector<double> adjust(const kgrank::PbgAdjustJob& job, const T* rows) {
  const size_t d = job.comparison.dimension, h = d / 2;
  std::vector<double> out(job.count * d, 0.0), v(d);
  using Op = kgrank::PbgOperator;
  for (size_t i = 0; i < job.count; ++i) {
    double* o = out.data() + i * d;
    for (size_t k = 0; k < d; ++k)
      v[k] = job.global ? static_cast<double>(rows[i * d + k]) + job.global[k] : rows[i * d + k];
    for (size_t r = 0; r < d; ++r) {
      switch (job.op) {
        case Op::None: o[r] = v[r]; break;
        case Op::Translation: o[r] = v[r] + job.translation[r]; break;
        case Op::Diagonal: o[r] = job.diagonal[r] * v[r]; break;
        case Op::Linear:
        case Op::Affine: {
          double acc = 0;
          for (size_t k = 0; k < d; ++k) acc = acc + job.linear[r * d + k] * v[k];
          o[r] = job.op == Op::Affine ? acc + job.translation[r] : acc;
          break;
        }
        case Op::ComplexDiagonal:
          if (r < h) {
            o[r] = v[r] * job.real[r] - v[r + h] * job.imag[r];
          } else if (r < 2 * h) {
            o[r] = v[r - h] * job.imag[r - h] + v[r] * job.real[r - h];
          }
          break;
      }
    }
    if (job.comparison.comparator == kgrank::PbgComparator::Cos) {
      const size_t from = job.comparison.bias ? 1 : 0;
      double sq = 0;
      for (size_t k = from; k < d; ++k) sq = sq + o[k] * o[k];
      const double inv = 1 / std::sqrt(sq);
      for (size_t k = from; k < d; ++k) o[k] = o[k] * inv;
    }
  }
  return out;
}

// Bits equal, or both NaN (a NaN's payload and sign are not part of a score's meaning).
inline bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::signbit(a) == std::signbit(b) && a == b;
}

}  // namespace kgrank_pbg
