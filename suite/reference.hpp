// The FP64 reference forward pass: the ground truth every backend is validated against.
// Written for clarity and for being obviously right, then made reasonably quick (padded planes,
// contiguous inner loops), because it runs once per distinct image in every suite invocation.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "common/network.hpp"
#include "suite/dataset.hpp"

namespace cnn {

// conv1 output (before ReLU) of one image, 16 x 32 x 32 in channel, y, x order (the gold file's order).
std::vector<double> reference_conv1(const Network& net, const std::uint8_t* image);

// Softmax probabilities of one image.
std::array<double, kClasses> reference_forward(const Network& net, const std::uint8_t* image);

// Probabilities of the first n images of `data` (n <= data.size()), n x 10, in parallel where OpenMP is on:
// on `threads` threads (--threads), or OpenMP's default number when 0. Throws UsageError when the
// address-space limit cannot hold those threads' stacks (suite/thread_stacks.hpp).
std::vector<double> reference_probs(const Network& net, const Dataset& data, std::size_t n, int threads = 0);

}  // namespace cnn
