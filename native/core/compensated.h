// Neumaier (improved Kahan) summation: the running error term keeps sums of up to 1e7 terms within a few ulps.
// Twin: src/numeric/compensated.ts.
#pragma once
#include <cmath>

namespace kgrank {

struct CompensatedSum {
  double sum = 0.0;
  double error = 0.0;
  void add(double x) {
    const double t = sum + x;
    if (std::fabs(sum) >= std::fabs(x)) {
      error += (sum - t) + x;
    } else {
      error += (x - t) + sum;
    }
    sum = t;
  }
  void merge(const CompensatedSum& other) {
    add(other.sum);
    add(other.error);
  }
  double value() const { return sum + error; }
};

}  // namespace kgrank
