#include "backends/cpu_kernels/fast_forward.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace cnn::fast {
namespace {

// GCC/Clang vector extensions: the compiler emits AVX-512 (or whatever -march allows) without intrinsics.
template <int W>
struct Vec;
template <>
struct Vec<16> {
  typedef float type __attribute__((vector_size(64)));
};
template <>
struct Vec<8> {
  typedef float type __attribute__((vector_size(32)));
};

template <int W>
inline typename Vec<W>::type load(const float* p) {
  typename Vec<W>::type v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <int W>
inline void store(float* p, typename Vec<W>::type v) {
  std::memcpy(p, &v, sizeof v);
}

PackedConv pack(const ConvLayer& L) {
  const ConvSpec& s = L.spec;
  PackedConv p{std::vector<float>(L.weights.size()), L.bias};
  for (int f = 0; f < s.filters; ++f)
    for (int c = 0; c < s.in_channels; ++c)
      for (int ky = 0; ky < s.kernel; ++ky)
        for (int kx = 0; kx < s.kernel; ++kx)
          p.w[((std::size_t(c) * s.kernel + ky) * s.kernel + kx) * s.filters + f] = L.w(f, c, ky, kx);
  return p;
}

// out[f][y][x] (unpadded, side S.out_side()) = bias + 5x5xC window of the padded input planes.
// W output pixels of one row times all F filters are accumulated in registers.
template <const ConvSpec& S, int W>
void conv(const PackedConv& p, const float* in, float* out) {
  constexpr int C = S.in_channels, F = S.filters, K = S.kernel, OUT = S.out_side(), IN = kPaddedSide<S>;
  static_assert(OUT % W == 0, "a row is a whole number of vectors");
  using V = typename Vec<W>::type;
  for (int y = 0; y < OUT; ++y) {
    for (int x0 = 0; x0 < OUT; x0 += W) {
      V acc[F];
#pragma GCC unroll 32
      for (int f = 0; f < F; ++f) acc[f] = V{} + p.bias[f];
      for (int c = 0; c < C; ++c) {
        for (int ky = 0; ky < K; ++ky) {
          const float* row = in + (std::size_t(c) * IN + y + ky) * IN + x0;
          const float* wrow = p.w.data() + (std::size_t(c) * K + ky) * K * F;
#pragma GCC unroll 5
          for (int kx = 0; kx < K; ++kx) {
            const V v = load<W>(row + kx);
            const float* wp = wrow + kx * F;
#pragma GCC unroll 32
            for (int f = 0; f < F; ++f) acc[f] += wp[f] * v;
          }
        }
      }
#pragma GCC unroll 32
      for (int f = 0; f < F; ++f) store<W>(out + (std::size_t(f) * OUT + y) * OUT + x0, acc[f]);
    }
  }
}

// max over 2x2 then ReLU, from unpadded planes of side `side` into planes padded by `pad`.
void relu_pool(const float* in, int channels, int side, float* out, int pad) {
  const int half = side / 2, stride = half + 2 * pad;
  for (int c = 0; c < channels; ++c) {
    const float* plane = in + std::size_t(c) * side * side;
    float* o = out + std::size_t(c) * stride * stride;
    for (int y = 0; y < half; ++y) {
      const float* r0 = plane + (2 * y) * side;
      const float* r1 = r0 + side;
      float* orow = o + (y + pad) * stride + pad;
      for (int x = 0; x < half; ++x) {
        const float m = std::max(std::max(r0[2 * x], r0[2 * x + 1]), std::max(r1[2 * x], r1[2 * x + 1]));
        orow[x] = std::max(m, 0.0f);
      }
    }
  }
}

template <const ConvSpec& S>
std::size_t padded_floats() {
  return std::size_t(S.in_channels) * kPaddedSide<S> * kPaddedSide<S>;
}
template <const ConvSpec& S>
std::size_t out_floats() {
  return std::size_t(S.filters) * S.out_side() * S.out_side();
}

}  // namespace

PackedNetwork::PackedNetwork(const Network& net)
    : conv{pack(net.conv1), pack(net.conv2), pack(net.conv3)}, fc_w(net.fc.weights), fc_b(net.fc.bias) {}

// Padding stays zero for the life of the scratch: only the interior is ever written.
Scratch::Scratch()
    : in1(padded_floats<kConv1>()),
      out1(out_floats<kConv1>()),
      in2(padded_floats<kConv2>()),
      out2(out_floats<kConv2>()),
      in3(padded_floats<kConv3>()),
      out3(out_floats<kConv3>()),
      pooled(std::size_t(kFc.inputs())) {}

void load_image(const std::uint8_t* pixels, Scratch& s) {
  constexpr int IN = kPaddedSide<kConv1>, P = kConv1.pad;
  constexpr float scale = 1.0f / 255.0f;
  for (int c = 0; c < kImageChannels; ++c)
    for (int y = 0; y < kImageSide; ++y) {
      const std::uint8_t* src = pixels + (c * kImageSide + y) * kImageSide;
      float* dst = s.in1.data() + (std::size_t(c) * IN + y + P) * IN + P;
      for (int x = 0; x < kImageSide; ++x) dst[x] = float(src[x]) * scale - 0.5f;
    }
}

void conv1(const PackedNetwork& n, Scratch& s) { conv<kConv1, 16>(n.conv[0], s.in1.data(), s.out1.data()); }
void conv2(const PackedNetwork& n, Scratch& s) { conv<kConv2, 16>(n.conv[1], s.in2.data(), s.out2.data()); }
void conv3(const PackedNetwork& n, Scratch& s) { conv<kConv3, 8>(n.conv[2], s.in3.data(), s.out3.data()); }
void relu_pool1(Scratch& s) { relu_pool(s.out1.data(), kConv1.filters, kConv1.out_side(), s.in2.data(), kConv2.pad); }
void relu_pool2(Scratch& s) { relu_pool(s.out2.data(), kConv2.filters, kConv2.out_side(), s.in3.data(), kConv3.pad); }
void relu_pool3(Scratch& s) { relu_pool(s.out3.data(), kConv3.filters, kConv3.out_side(), s.pooled.data(), 0); }

void fc_softmax(const PackedNetwork& n, const Scratch& s, float* probs) {
  constexpr int IN = kFc.inputs();
  float z[kClasses];
  for (int o = 0; o < kClasses; ++o) {
    float acc = 0;
    const float* w = n.fc_w.data() + std::size_t(o) * IN;
    for (int i = 0; i < IN; ++i) acc += w[i] * s.pooled[i];
    z[o] = acc + n.fc_b[o];
  }
  const float zmax = *std::max_element(z, z + kClasses);
  float sum = 0;
  for (int o = 0; o < kClasses; ++o) sum += (z[o] = std::exp(z[o] - zmax));
  for (int o = 0; o < kClasses; ++o) probs[o] = z[o] / sum;
}

void forward_image(const PackedNetwork& n, const std::uint8_t* pixels, Scratch& s, float* probs) {
  load_image(pixels, s);
  conv1(n, s);
  relu_pool1(s);
  conv2(n, s);
  relu_pool2(s);
  conv3(n, s);
  relu_pool3(s);
  fc_softmax(n, s, probs);
}

}  // namespace cnn::fast
