// Checks a backend's N x 10 FP32 probabilities against the FP64 reference, image by image.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cnn {

// FP32 through three 5x5 convolutions and a softmax stays within ~1e-6 of FP64 on these weights;
// 1e-4 leaves room for other summation orders (FMA, tree reductions, cuDNN's algorithms) while catching
// any real bug, which moves probabilities by far more.
inline constexpr double kDefaultProbTolerance = 1e-4;

struct Validation {
  std::size_t compared = 0;
  std::size_t top1_mismatches = 0;  // different argmax where the reference is not a tie within tolerance
  std::size_t near_ties = 0;        // different argmax, but the reference's two classes are within tolerance
  double max_abs_prob_diff = 0;
  std::size_t worst_image = 0;
  double tolerance = kDefaultProbTolerance;
  bool passed = false;
};

// probs: n x 10 from the backend; ref: distinct x 10 from the reference; image i is compared with
// reference image i % distinct (the suite cycles through the data set).
Validation validate(const float* probs, std::size_t n, const std::vector<double>& ref, std::size_t distinct,
                    double tolerance = kDefaultProbTolerance);

// Adds a second validation of the same run's images (its end-to-end pass) to `into`: the run passes only if
// both did; mismatches and near ties are the worse pass's, the largest difference (and its image) is kept.
// `compared` stays the run's images, and no count exceeds it.
void merge(Validation& into, const Validation& other);

// Fraction of the n images whose argmax equals the label (label of image i is labels[i % labels.size()]).
double accuracy(const float* probs, std::size_t n, const std::vector<std::uint8_t>& labels);

template <typename T>
int argmax10(const T* p) {
  int best = 0;
  for (int k = 1; k < 10; ++k)
    if (p[k] > p[best]) best = k;
  return best;
}

}  // namespace cnn
