#include "common/kernels/cpu/fast_forward.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/kernels/cpu/simd.hpp"
#include "common/flush_denormals.hpp"
#include "common/fp32_math.hpp"

namespace cnn::fast {
namespace {

using simd::load;
using simd::splat;
using simd::store;
using simd::Vec;
using simd::vmax;

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

// conv (bias + 5x5xC window of the padded input planes) -> 2x2 max pool -> ReLU, into planes of side
// S.pooled_side() + 2 opad (the next layer's padded input).
// Register block: two output rows x 16 pixels (two vectors) x FB filters (2 FB accumulators). Each weight is
// broadcast once into a register and feeds two FMAs, so a tap costs 2 vector loads + FB broadcasts for 2 FB
// FMAs: FMA-bound. (One row x all filters, with the broadcast folded into each FMA, needs a load per FMA
// and runs load-bound.) The two rows are one pooled row: it is pooled straight from the registers, so the
// conv output is never stored.
template <const ConvSpec& S, int FB>
void conv_relu_pool_rows2(const PackedConv& p, const float* in, float* out, int opad) {
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
        constexpr int OP = OUT / 2;
        const int op = OP + 2 * opad;
#pragma GCC unroll 32
        for (int f = 0; f < FB; ++f) {
          using H = Vec<8>::type;
          const V m = vmax(a0[f], a1[f]);  // rows y, y+1
          const H even = __builtin_shufflevector(m, m, 0, 2, 4, 6, 8, 10, 12, 14);
          const H odd = __builtin_shufflevector(m, m, 1, 3, 5, 7, 9, 11, 13, 15);
          store<8>(out + (std::size_t(f0 + f) * op + y / 2 + opad) * op + x0 / 2 + opad, vmax(vmax(even, odd), H{}));
        }
      }
}

// conv3's 8-pixel rows. A 16-float vector holds two rows; loading it from the padded planes would need a
// shuffle per vector (two 8-float loads joined: an extra shuffle-port op per two FMAs' worth of loads,
// which keeps the FMA units from saturating). So the input is first copied once into a kx-expanded layout,
// e[c][kx][r][x] = in[c][r][x + kx] (r over the 12 padded rows, 38 KB, stays in L1): for each tap the rows
// r, r+1, ... are contiguous, and two rows are one plain 16-float load.
template <const ConvSpec& S>
void expand_kx(const float* in, float* e) {
  constexpr int C = S.in_channels, K = S.kernel, OUT = S.out_side(), IN = kPaddedSide<S>;
  for (int c = 0; c < C; ++c)
    for (int kx = 0; kx < K; ++kx)
      for (int r = 0; r < IN; ++r)
        std::memcpy(e + ((std::size_t(c) * K + kx) * IN + r) * OUT, in + (std::size_t(c) * IN + r) * IN + kx,
                    OUT * sizeof(float));
}

// One tap of the 8x8 block: vector j holds output rows 2j, 2j+1; its input rows are ky + 2j, ky + 2j + 1.
// Vectors J0..J1-1 only: for ky = 0 vector 0 reads the two top padding rows, for ky = 4 vector 3 the two
// bottom ones, and both are skipped (10 % of the layer's FMAs).
template <int FB, int J0, int J1>
inline void fma_tap_rows(Vec<16>::type (&a)[4][FB], const float* rows, const float* wp) {
  using V = Vec<16>::type;
  V v[4];
#pragma GCC unroll 4
  for (int j = J0; j < J1; ++j) v[j] = load<16>(rows + 16 * j);
#pragma GCC unroll 32
  for (int f = 0; f < FB; ++f) {
    const V w = splat(wp[f]);
#pragma GCC unroll 4
    for (int j = J0; j < J1; ++j) a[j][f] += w * v[j];
  }
}

// The whole 8x8 output (four vectors) x FB filters in registers (4 FB accumulators): per tap 4 loads and
// FB broadcasts feed 4 FB FMAs. Then pool and ReLU into unpadded 4x4 planes (the FC's input order).
template <const ConvSpec& S, int FB>
void conv_relu_pool_8x8(const PackedConv& p, const float* e, float* out) {
  constexpr int C = S.in_channels, F = S.filters, K = S.kernel, OUT = S.out_side(), IN = kPaddedSide<S>;
  static_assert(OUT == 8 && K == 5 && S.pad == 2 && F % FB == 0, "8x8 output, 5x5 kernel, whole filter blocks");
  using V = Vec<16>::type;
  for (int f0 = 0; f0 < F; f0 += FB) {
    V a[4][FB];
#pragma GCC unroll 32
    for (int f = 0; f < FB; ++f) a[0][f] = a[1][f] = a[2][f] = a[3][f] = V{} + p.bias[f0 + f];
    for (int c = 0; c < C; ++c) {
      const float* wc = p.w.data() + std::size_t(c) * K * K * F + f0;
#pragma GCC unroll 5
      for (int kx = 0; kx < K; ++kx) {
        const float* col = e + (std::size_t(c) * K + kx) * IN * OUT;  // e[c][kx][0][0]
        fma_tap_rows<FB, 1, 4>(a, col + 0 * OUT, wc + (0 * K + kx) * F);
        fma_tap_rows<FB, 0, 4>(a, col + 1 * OUT, wc + (1 * K + kx) * F);
        fma_tap_rows<FB, 0, 4>(a, col + 2 * OUT, wc + (2 * K + kx) * F);
        fma_tap_rows<FB, 0, 4>(a, col + 3 * OUT, wc + (3 * K + kx) * F);
        fma_tap_rows<FB, 0, 3>(a, col + 4 * OUT, wc + (4 * K + kx) * F);
      }
    }
    // Pooled row j of filter f: the max of a[j][f]'s two rows (lanes 0..7 and 8..15), then of column pairs.
#pragma GCC unroll 32
    for (int f = 0; f < FB; ++f)
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        using H = Vec<8>::type;
        using Q = Vec<4>::type;
        const V v = a[j][f];
        const H m = vmax(__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7),
                         __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15));
        const Q pooled = vmax(__builtin_shufflevector(m, m, 0, 2, 4, 6), __builtin_shufflevector(m, m, 1, 3, 5, 7));
        store<4>(out + (std::size_t(f0 + f) * (OUT / 2) + j) * (OUT / 2), vmax(pooled, Q{}));
      }
  }
}

template <const ConvSpec& S>
std::size_t padded_floats() {
  return std::size_t(S.in_channels) * kPaddedSide<S> * kPaddedSide<S>;
}
template <const ConvSpec& S>
std::size_t expanded_floats() {  // expand_kx's layout: [c][kx][padded row][x]
  return std::size_t(S.in_channels) * S.kernel * kPaddedSide<S> * S.out_side();
}

}  // namespace

PackedNetwork::PackedNetwork(const Network& net)
    : conv{pack(net.conv1), pack(net.conv2), pack(net.conv3)}, fc_w(net.fc.weights), fc_b(net.fc.bias) {}

// Padding stays zero for the life of the scratch: only the interior is ever written.
Scratch::Scratch()
    : in1(padded_floats<kConv1>()),
      in2(padded_floats<kConv2>()),
      in3(padded_floats<kConv3>()),
      e3(expanded_floats<kConv3>()),
      pooled(std::size_t(kFc.inputs())) {}

void load_image(const std::uint8_t* pixels, Scratch& s) {
  constexpr int IN = kPaddedSide<kConv1>, P = kConv1.pad;
  for (int c = 0; c < kImageChannels; ++c)
    for (int y = 0; y < kImageSide; ++y) {
      const std::uint8_t* src = pixels + (c * kImageSide + y) * kImageSide;
      float* dst = s.in1.data() + (std::size_t(c) * IN + y + P) * IN + P;
      for (int x = 0; x < kImageSide; ++x) dst[x] = normalise_pixel_fp32(src[x]);
    }
}

void conv_relu_pool1(const PackedNetwork& n, Scratch& s) {
  conv_relu_pool_rows2<kConv1, 8>(n.conv[0], s.in1.data(), s.in2.data(), kConv2.pad);
}
void conv_relu_pool2(const PackedNetwork& n, Scratch& s) {
  conv_relu_pool_rows2<kConv2, 10>(n.conv[1], s.in2.data(), s.in3.data(), kConv3.pad);
}
void conv_relu_pool3(const PackedNetwork& n, Scratch& s) {
  expand_kx<kConv3>(s.in3.data(), s.e3.data());
  conv_relu_pool_8x8<kConv3, 5>(n.conv[2], s.e3.data(), s.pooled.data());
}

void fc_softmax(const PackedNetwork& n, const Scratch& s, float* probs) {
  // 16 partial sums per class in a vector, then a horizontal sum: GCC may not reorder a float sum by itself,
  // so a scalar loop stays scalar.
  constexpr int IN = kFc.inputs();
  static_assert(IN % 16 == 0, "whole vectors");
  using V = Vec<16>::type;
  // All classes at once, so that their chains of dependent adds (16 scalar adds each) overlap instead of
  // running one after another; each class's sum keeps its order, so the result is unchanged.
  V acc[kClasses] = {};
  for (int i = 0; i < IN; i += 16) {
    const V x = load<16>(s.pooled.data() + i);
#pragma GCC unroll 10
    for (int o = 0; o < kClasses; ++o) acc[o] += load<16>(n.fc_w.data() + std::size_t(o) * IN + i) * x;
  }
  float z[kClasses] = {};
  for (int k = 0; k < 16; ++k)
#pragma GCC unroll 10
    for (int o = 0; o < kClasses; ++o) z[o] += acc[o][k];
  for (int o = 0; o < kClasses; ++o) z[o] += n.fc_b[o];
  softmax_fp32(z);
  std::copy(z, z + kClasses, probs);
}

void forward_image(const PackedNetwork& n, const std::uint8_t* pixels, Scratch& s, float* probs) {
  const FlushDenormals ftz;  // common/flush_denormals.hpp says why
  load_image(pixels, s);
  conv_relu_pool1(n, s);
  conv_relu_pool2(n, s);
  conv_relu_pool3(n, s);
  fc_softmax(n, s, probs);
}

}  // namespace cnn::fast
