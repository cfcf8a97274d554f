// The network, specified once. Every backend derives its sizes from here (constexpr), so a change to the
// network shows up as a compile error or a failed static_assert, never as a silent mismatch.
//
// ConvNetJS CIFAR-10 net: input 32x32x3 -> [conv5x5 pad2 -> ReLU -> maxpool2x2] x3 -> FC 320->10 -> softmax.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace cnn {

inline constexpr int kImageSide = 32;
inline constexpr int kImageChannels = 3;
inline constexpr int kImagePlane = kImageSide * kImageSide;  // pixels of one colour plane
inline constexpr int kImageBytes = kImagePlane * kImageChannels;  // planar R, G, B
inline constexpr int kClasses = 10;

// x = pixel / 255 - 0.5, as ConvNetJS' CIFAR-10 demo normalises.
template <typename T>
constexpr T normalise_pixel(unsigned char p) {
  return static_cast<T>(p) / static_cast<T>(255) - static_cast<T>(0.5);
}

struct ConvSpec {
  int in_channels, in_side;  // square input
  int filters, kernel, pad;  // stride 1, output side == input side
  std::string_view weight_file;
  constexpr int out_side() const { return in_side + 2 * pad - kernel + 1; }
  constexpr int padded_side() const { return in_side + 2 * pad; }  // the input plane with its zero padding
  constexpr int taps() const { return kernel * kernel; }
  constexpr int pooled_side() const { return out_side() / 2; }
  constexpr std::size_t weight_count() const {
    return std::size_t(filters) * in_channels * kernel * kernel;
  }
  constexpr double flops() const {  // multiply + add per tap
    return 2.0 * filters * out_side() * out_side() * in_channels * kernel * kernel;
  }
};

struct FcSpec {
  int in_channels, in_side, outputs;
  std::string_view weight_file;
  constexpr int inputs() const { return in_channels * in_side * in_side; }
  constexpr double flops() const { return 2.0 * inputs() * outputs; }
};

inline constexpr ConvSpec kConv1{kImageChannels, kImageSide, 16, 5, 2, "layer1_conv.txt"};
inline constexpr ConvSpec kConv2{kConv1.filters, kConv1.pooled_side(), 20, 5, 2, "layer4_conv.txt"};
inline constexpr ConvSpec kConv3{kConv2.filters, kConv2.pooled_side(), 20, 5, 2, "layer7_conv.txt"};
inline constexpr FcSpec kFc{kConv3.filters, kConv3.pooled_side(), kClasses, "layer10_fc.txt"};
inline constexpr std::array<ConvSpec, 3> kConvs{kConv1, kConv2, kConv3};

static_assert(kConv1.out_side() == 32 && kConv2.in_side == 16 && kConv3.in_side == 8);
static_assert(kConv1.padded_side() == 36 && kConv2.padded_side() == 20 && kConv3.padded_side() == 12);

// Every conv layer has the same window, so tuned kernels share one kernel side and tap count.
inline constexpr int kKernel = kConv1.kernel;
inline constexpr int kTaps = kConv1.taps();
static_assert(kConv2.kernel == kKernel && kConv3.kernel == kKernel && kTaps == 25);
static_assert(kFc.inputs() == 320);

// 7.84 MFLOP per image (ReLU, pool and softmax are not counted, as is customary).
inline constexpr double kFlopsPerImage = kConv1.flops() + kConv2.flops() + kConv3.flops() + kFc.flops();

enum class LayerKind { conv, relu, pool, fc, softmax };

struct LayerSpec {
  std::string_view name;
  LayerKind kind;
};

// The thesis numbers layers 1..11 (the weight files are named after them: layer1_conv, layer4_conv, ...).
inline constexpr std::array<LayerSpec, 11> kLayers{{
    {"conv1", LayerKind::conv},
    {"relu1", LayerKind::relu},
    {"pool1", LayerKind::pool},
    {"conv2", LayerKind::conv},
    {"relu2", LayerKind::relu},
    {"pool2", LayerKind::pool},
    {"conv3", LayerKind::conv},
    {"relu3", LayerKind::relu},
    {"pool3", LayerKind::pool},
    {"fc", LayerKind::fc},
    {"softmax", LayerKind::softmax},
}};

constexpr std::string_view kind_name(LayerKind k) {
  switch (k) {
    case LayerKind::conv: return "conv";
    case LayerKind::relu: return "relu";
    case LayerKind::pool: return "pool";
    case LayerKind::fc: return "fc";
    case LayerKind::softmax: return "softmax";
  }
  return "?";
}

}  // namespace cnn
