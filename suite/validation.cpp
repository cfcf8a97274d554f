#include "suite/validation.hpp"

#include <algorithm>
#include <cmath>

#include "common/network_spec.hpp"

namespace cnn {

Validation validate(const float* probs, std::size_t n, const std::vector<double>& ref, std::size_t distinct,
                    double tolerance) {
  Validation v;
  v.tolerance = tolerance;
  bool finite = true;
  for (std::size_t i = 0; i < n; ++i) {
    const float* p = probs + i * kClasses;
    const double* r = ref.data() + (i % distinct) * kClasses;
    for (int k = 0; k < kClasses; ++k) {
      if (!std::isfinite(p[k])) finite = false;
      const double d = std::fabs(double(p[k]) - r[k]);
      if (!(d <= v.max_abs_prob_diff)) {  // also takes NaN, so a NaN output can never pass
        v.max_abs_prob_diff = std::isfinite(d) ? d : INFINITY;
        v.worst_image = i;
      }
    }
    const int got = argmax10(p), want = argmax10(r);
    if (got != want) {
      if (r[want] - r[got] <= tolerance) ++v.near_ties;
      else ++v.top1_mismatches;
    }
  }
  v.compared = n;
  v.passed = finite && n > 0 && v.top1_mismatches == 0 && v.max_abs_prob_diff <= tolerance;
  return v;
}

void merge(Validation& into, const Validation& other) {
  into.passed = into.passed && other.passed;
  // The same images twice: the worse pass's count, so that a report never shows more mismatches than images
  // (summed, a wrong build's 1200 images read "2204 top-1 mismatches").
  into.top1_mismatches = std::max(into.top1_mismatches, other.top1_mismatches);
  into.near_ties = std::max(into.near_ties, other.near_ties);
  if (!(other.max_abs_prob_diff <= into.max_abs_prob_diff)) {  // NaN/Inf included
    into.max_abs_prob_diff = other.max_abs_prob_diff;
    into.worst_image = other.worst_image;
  }
}

double accuracy(const float* probs, std::size_t n, const std::vector<std::uint8_t>& labels) {
  if (n == 0 || labels.empty()) return 0;
  std::size_t right = 0;
  for (std::size_t i = 0; i < n; ++i) right += argmax10(probs + i * kClasses) == labels[i % labels.size()];
  return double(right) / double(n);
}

}  // namespace cnn
