// The optimised CPU forward pass of one image, used by the CPU backends' register-tile steps (on one thread,
// or with threads over images). What it changes against the thesis' loops, and why (figures in the README of
// the backend folder that runs it on threads):
// - planar activations [channel][y][x] with the zero padding stored, so the 5x5 loops have no bounds checks;
// - weights re-laid once to [channel][ky][kx][filter], so the filters of one tap are contiguous;
// - register blocking: two output rows x 16 pixels (two SIMD vectors) times 8-10 filters stay in registers
//   over the whole 5x5xC window (16-20 accumulators); each tap's weight is broadcast once and feeds two
//   FMAs, so the loop is FMA-bound, not load-bound (one vector x all filters needs a load per FMA);
//   conv3 (8x8) keeps its whole output, two rows per vector,
//   x 5 filters in registers, reading a kx-expanded copy of its input so that no load needs a shuffle;
// - taps whose input rows are all zero padding are skipped (conv1 2.5 %, conv2 5 %, conv3 10 % of FMAs);
// - the 2x2 max pool and ReLU (max then ReLU == ReLU then max) run on the accumulators of each block (its two
//   rows are one pooled row), which go straight into the next layer's padded planes: conv outputs are
//   never stored; all buffers of one image (~80 KB) stay in L2 through the network.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "common/network.hpp"

namespace cnn::fast {

// Padded plane geometry of a conv input: side + 2 * pad.
template <const ConvSpec& S>
inline constexpr int kPaddedSide = S.padded_side();

struct PackedConv {
  std::vector<float> w;  // [c][ky][kx][f]
  std::vector<float> bias;
};

struct PackedNetwork {
  std::array<PackedConv, 3> conv;
  std::vector<float> fc_w, fc_b;  // canonical [o][c][y][x]: pool3's planar order is the FC's order
  explicit PackedNetwork(const Network& net);
};

// Every intermediate buffer of one image; one per thread.
struct Scratch {
  std::vector<float> in1, in2, in3, e3, pooled;  // e3: conv3's kx-expanded input
  Scratch();
};

// The layers, exposed for the micro-benchmarks.
void load_image(const std::uint8_t* pixels, Scratch& s);  // normalise into padded planes
void conv_relu_pool1(const PackedNetwork& n, Scratch& s);  // in1 -> in2
void conv_relu_pool2(const PackedNetwork& n, Scratch& s);  // in2 -> in3
void conv_relu_pool3(const PackedNetwork& n, Scratch& s);  // in3 -> pooled
void fc_softmax(const PackedNetwork& n, const Scratch& s, float* probs);

// The whole network for one image: 10 probabilities into probs.
void forward_image(const PackedNetwork& n, const std::uint8_t* pixels, Scratch& s, float* probs);

}  // namespace cnn::fast
