#include "backends/cpu_kernels/fast_forward.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/flush_denormals.hpp"

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

// s in every lane. (V{} + s would cost an extra scalar add: 0 + s is not s for s = -0, so GCC keeps it;
// s - 0 is always s and folds away.)
inline Vec<16>::type splat(float s) { return s - Vec<16>::type{}; }

// a0 += w * v0, a1 += w * v1 for the FB filters of one tap (weights wp[0..FB)): each weight broadcast once.
template <int FB>
inline void fma_tap(Vec<16>::type (&a0)[FB], Vec<16>::type (&a1)[FB], const float* wp, Vec<16>::type v0,
                    Vec<16>::type v1) {
#pragma GCC unroll 32
  for (int f = 0; f < FB; ++f) {
    const Vec<16>::type w = splat(wp[f]);
    a0[f] += w * v0;
    a1[f] += w * v1;
  }
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
// Register block: two output rows x 16 pixels (two vectors) x FB filters (2 FB accumulators). Each weight is
// broadcast once into a register and feeds two FMAs, so a tap costs 2 vector loads + FB broadcasts for 2 FB
// FMAs: FMA-bound. (One row x all filters, with the broadcast folded into each FMA, needed a load per FMA
// and ran load-bound: 10-15 % slower on the Xeon.)
template <const ConvSpec& S, int FB>
void conv_rows2(const PackedConv& p, const float* in, float* out) {
  constexpr int C = S.in_channels, F = S.filters, K = S.kernel, OUT = S.out_side(), IN = kPaddedSide<S>;
  static_assert(OUT % 16 == 0 && F % FB == 0, "whole blocks");
  using V = Vec<16>::type;
  for (int y = 0; y < OUT; y += 2)
    for (int x0 = 0; x0 < OUT; x0 += 16)
      for (int f0 = 0; f0 < F; f0 += FB) {
        V a0[FB], a1[FB];
#pragma GCC unroll 32
        for (int f = 0; f < FB; ++f) a0[f] = a1[f] = V{} + p.bias[f0 + f];
        // Taps whose two input rows are both zero padding add nothing: skip them (first and last row pair).
        const int ky_lo = std::max(0, S.pad - 1 - y), ky_hi = std::min(K, IN - S.pad - y);
        for (int c = 0; c < C; ++c)
          for (int ky = ky_lo; ky < ky_hi; ++ky) {
            const float* row = in + (std::size_t(c) * IN + y + ky) * IN + x0;
            const float* wrow = p.w.data() + (std::size_t(c) * K + ky) * K * F + f0;
#pragma GCC unroll 5
            for (int kx = 0; kx < K; ++kx) {
              const V v0 = load<16>(row + kx), v1 = load<16>(row + IN + kx);
              fma_tap<FB>(a0, a1, wrow + kx * F, v0, v1);
            }
          }
#pragma GCC unroll 32
        for (int f = 0; f < FB; ++f) {
          store<16>(out + (std::size_t(f0 + f) * OUT + y) * OUT + x0, a0[f]);
          store<16>(out + (std::size_t(f0 + f) * OUT + y + 1) * OUT + x0, a1[f]);
        }
      }
}

// The same for 8-pixel rows (conv3): a 16-float vector holds two rows, so a block is four output rows
// (two vectors) x FB filters, built from 8-float loads.
template <const ConvSpec& S, int FB>
void conv_rows4_w8(const PackedConv& p, const float* in, float* out) {
  constexpr int C = S.in_channels, F = S.filters, K = S.kernel, OUT = S.out_side(), IN = kPaddedSide<S>;
  static_assert(OUT == 8 && F % FB == 0, "8-pixel rows, whole filter blocks");
  using V = Vec<16>::type;
  using H = Vec<8>::type;
  for (int y = 0; y < OUT; y += 4)
    for (int f0 = 0; f0 < F; f0 += FB) {
      V a0[FB], a1[FB];
#pragma GCC unroll 32
      for (int f = 0; f < FB; ++f) a0[f] = a1[f] = V{} + p.bias[f0 + f];
      for (int c = 0; c < C; ++c)
        for (int ky = 0; ky < K; ++ky) {
          const float* row = in + (std::size_t(c) * IN + y + ky) * IN;
          const float* wrow = p.w.data() + (std::size_t(c) * K + ky) * K * F + f0;
#pragma GCC unroll 5
          for (int kx = 0; kx < K; ++kx) {
            const H r0 = load<8>(row + kx), r1 = load<8>(row + IN + kx), r2 = load<8>(row + 2 * IN + kx),
                    r3 = load<8>(row + 3 * IN + kx);
            const V v0 = __builtin_shufflevector(r0, r1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
            const V v1 = __builtin_shufflevector(r2, r3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
            fma_tap<FB>(a0, a1, wrow + kx * F, v0, v1);
          }
        }
#pragma GCC unroll 32
      for (int f = 0; f < FB; ++f) {  // rows y, y+1 in a0; y+2, y+3 in a1: contiguous in the output plane
        store<16>(out + (std::size_t(f0 + f) * OUT + y) * OUT, a0[f]);
        store<16>(out + (std::size_t(f0 + f) * OUT + y + 2) * OUT, a1[f]);
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

void conv1(const PackedNetwork& n, Scratch& s) { conv_rows2<kConv1, 8>(n.conv[0], s.in1.data(), s.out1.data()); }
void conv2(const PackedNetwork& n, Scratch& s) { conv_rows2<kConv2, 10>(n.conv[1], s.in2.data(), s.out2.data()); }
void conv3(const PackedNetwork& n, Scratch& s) { conv_rows4_w8<kConv3, 10>(n.conv[2], s.in3.data(), s.out3.data()); }
void relu_pool1(Scratch& s) { relu_pool(s.out1.data(), kConv1.filters, kConv1.out_side(), s.in2.data(), kConv2.pad); }
void relu_pool2(Scratch& s) { relu_pool(s.out2.data(), kConv2.filters, kConv2.out_side(), s.in3.data(), kConv3.pad); }
void relu_pool3(Scratch& s) { relu_pool(s.out3.data(), kConv3.filters, kConv3.out_side(), s.pooled.data(), 0); }

void fc_softmax(const PackedNetwork& n, const Scratch& s, float* probs) {
  // 16 partial sums per class in a vector, then a horizontal sum: a scalar loop (GCC may not reorder a
  // float sum by itself) took 1.45 us per image, 3 % of the whole network.
  constexpr int IN = kFc.inputs();
  static_assert(IN % 16 == 0, "whole vectors");
  using V = Vec<16>::type;
  float z[kClasses];
  for (int o = 0; o < kClasses; ++o) {
    V acc{};
    const float* w = n.fc_w.data() + std::size_t(o) * IN;
    for (int i = 0; i < IN; i += 16) acc += load<16>(w + i) * load<16>(s.pooled.data() + i);
    float sum = 0;
    for (int k = 0; k < 16; ++k) sum += acc[k];
    z[o] = sum + n.fc_b[o];
  }
  const float zmax = *std::max_element(z, z + kClasses);
  float sum = 0;
  for (int o = 0; o < kClasses; ++o) sum += (z[o] = std::exp(z[o] - zmax));
  for (int o = 0; o < kClasses; ++o) probs[o] = z[o] / sum;
}

void forward_image(const PackedNetwork& n, const std::uint8_t* pixels, Scratch& s, float* probs) {
  const FlushDenormals ftz;  // common/flush_denormals.hpp says why
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
