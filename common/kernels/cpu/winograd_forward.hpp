// The CPU forward pass with Winograd F(4x4, 5x5) convolutions (winograd_f4x5.hpp), used by the CPU
// backends' winograd variants (on one thread, or with threads over groups of images). Image loading and the FC + softmax are
// fast_forward's.
//
// A Winograd layer runs in three steps over a group of images, all SIMD lanes over (image, tile) pairs:
//   1. input transform: each 8x8 input tile of each channel is gathered from the padded planes (vector
//      loads and in-register transposes) and transformed, V[lv][c][e][16 lanes] = (BT d B)[e] (64 elements e);
//   2. element-wise stage as 64 small GEMMs, M[f][e][lane] = sum_c U[e][c][f] V[c][e][lane], with a block
//      of lane vectors x filters in registers (U = G g GT, computed once at setup in FP64);
//   3. output transform, bias, 2x2 max pool and ReLU on registers, Y = AT M A, scattered into the next
//      layer's padded planes (conv3: the FC's input).
// conv1 (3 channels) fuses steps 2 and 3: its sums over channels are too short to pay for storing M.
// Images go through in groups of kImageGroup (conv3 has only 4 tiles per image: 4 images fill a 16-lane vector).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "common/kernels/cpu/fast_forward.hpp"

namespace cnn::winograd {

inline constexpr int kImageGroup = 4;   // images per forward_group
inline constexpr int kImageGroup2 = 1;  // images per pass through conv2's three steps (its 16 tiles fill a vector)

// Transformed weights of one conv layer: U[e][c][f], so that one (e, c)'s filters are contiguous.
struct WinogradConv {
  std::vector<float> u, bias;
  explicit WinogradConv(const ConvLayer& layer);
};

struct PackedNetwork {
  fast::PackedNetwork direct;  // the FC
  WinogradConv conv1, conv2, conv3;
  explicit PackedNetwork(const Network& net);
};

// A float buffer aligned to 64 bytes (one cache line, one AVX-512 vector).
class AlignedFloats {
 public:
  explicit AlignedFloats(std::size_t n) : raw_(n + 16) {
    const auto misalign = reinterpret_cast<std::uintptr_t>(raw_.data()) % 64;
    data_ = raw_.data() + (misalign ? (64 - misalign) / sizeof(float) : 0);
  }
  float* data() { return data_; }
  const float* data() const { return data_; }

 private:
  std::vector<float> raw_;
  float* data_;
};

// Every buffer of one group; one per thread.
struct Scratch {
  std::array<fast::Scratch, kImageGroup> image;  // per image: padded planes (fast_forward's layout), FC input
  AlignedFloats v, m;                        // transformed inputs, element-wise products
  Scratch();
};

// The steps, exposed for the micro-benchmarks. Single steps of conv1 run on the group's first image, of conv2
// on its first kImageGroup2 images, of conv3 on the whole group; conv_relu_poolN on the whole group.
void input_transform1(const PackedNetwork& n, Scratch& s);   // image[0].in1 -> v
void elementwise_output_transform1(const PackedNetwork& n, Scratch& s);  // v -> image[0].in2 (steps 2+3 fused)
void conv_relu_pool1(const PackedNetwork& n, Scratch& s);    // all three, every image
void input_transform2(const PackedNetwork& n, Scratch& s);   // image[].in2 -> v
void elementwise2(const PackedNetwork& n, Scratch& s);       // v -> m
void output_transform2(const PackedNetwork& n, Scratch& s);  // m -> image[].in3
void conv_relu_pool2(const PackedNetwork& n, Scratch& s);    // all three, every sub-group
void input_transform3(const PackedNetwork& n, Scratch& s);
void elementwise3(const PackedNetwork& n, Scratch& s);
void output_transform3(const PackedNetwork& n, Scratch& s);  // m -> image[].pooled
void conv_relu_pool3(const PackedNetwork& n, Scratch& s);

// kImageGroup images: pixels[g] -> probs[g] (10 each). Callers with fewer images repeat one.
void forward_group(const PackedNetwork& n, const std::uint8_t* const (&pixels)[kImageGroup], Scratch& s,
                   float* const (&probs)[kImageGroup]);

// n images (any n >= 0), kImageGroup at a time on this thread, the last group padded by repeating an image.
void forward_images(const PackedNetwork& net, const std::uint8_t* pixels, std::size_t n, Scratch& s,
                    float* probs);

}  // namespace cnn::winograd
