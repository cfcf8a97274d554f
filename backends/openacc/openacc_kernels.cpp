#include "backends/openacc/openacc_kernels.hpp"

#include "common/fp32_math.hpp"

namespace cnn::openacc {
namespace {

// Every conv layer is 5x5, pad 2, stride 1 (hard-coded so the compiler can unroll the window).
constexpr int kK = kConv1.kernel;
constexpr int kPad = kConv1.pad;
static_assert(kConv2.kernel == kK && kConv3.kernel == kK && kConv2.pad == kPad && kConv3.pad == kPad);
static_assert(kK == 2 * kPad + 1, "same-size convolution");
constexpr int kPatch = kK + 1;  // input rows/columns under one 2x2 pooling window of conv outputs
constexpr int kFcIn = kFc.inputs();
static_assert(kFc.outputs == kClasses);
static_assert(kConv1.filters % kFilterGroup == 0 && kConv2.filters % kFilterGroup == 0 &&
              kConv3.filters % kFilterGroup == 0);

// Device helpers are forced inline: GCC 12 otherwise emits `acc routine` functions as PTX calls (and
// fmaxf as a libm call), which keeps the 6x6 patch and the accumulators from staying in registers.
#pragma acc routine seq
[[gnu::always_inline]] inline float max_of(float a, float b) { return a > b ? a : b; }

#pragma acc routine seq
[[gnu::always_inline]] inline float activation(float v) { return v; }
#pragma acc routine seq
[[gnu::always_inline]] inline float activation(std::uint8_t p) { return normalise_pixel_fp32(p); }

// One conv output (before bias) as the thesis computes it: the 5x5 window over every input channel,
// out-of-image taps skipped (zero padding).
#pragma acc routine seq
template <typename In>
[[gnu::always_inline]] inline float conv_at(const In* img, int channels, int side, const float* wf, int y, int x) {
  float a = 0.0f;
  for (int c = 0; c < channels; ++c)
    for (int ky = 0; ky < kK; ++ky) {
      const int iy = y + ky - kPad;
      if (iy < 0 || iy >= side) continue;
      for (int kx = 0; kx < kK; ++kx) {
        const int ix = x + kx - kPad;
        if (ix >= 0 && ix < side)
          a += wf[(c * kK + ky) * kK + kx] * activation(img[(c * side + iy) * side + ix]);
      }
    }
  return a;
}

// For G filters f0..f0+G-1 (weights from wf = filter f0), the max over the 2x2 conv outputs under pooled
// pixel (py, px), before bias. Each input value is loaded once per channel into a 6x6 register patch and
// used for 4 outputs x G filters; the G x 4 accumulators stay in registers (all loops unrolled).
#pragma acc routine seq
template <int G, typename In>
[[gnu::always_inline]] inline void pooled_conv_group(const In* img, int channels, int side, const float* wf,
                                                     int py, int px, float* best) {
  float a[G][4] = {};
  const int y0 = 2 * py - kPad, x0 = 2 * px - kPad;
  for (int c = 0; c < channels; ++c) {
    const In* plane = img + c * side * side;
    float p[kPatch][kPatch];
#pragma GCC unroll 6
    for (int r = 0; r < kPatch; ++r) {
#pragma GCC unroll 6
      for (int q = 0; q < kPatch; ++q) {
        const int y = y0 + r, x = x0 + q;
        p[r][q] = (y >= 0 && y < side && x >= 0 && x < side) ? activation(plane[y * side + x]) : 0.0f;
      }
    }
#pragma GCC unroll 4
    for (int g = 0; g < G; ++g) {
      const float* wc = wf + (g * channels + c) * kK * kK;
#pragma GCC unroll 5
      for (int ky = 0; ky < kK; ++ky) {
#pragma GCC unroll 5
        for (int kx = 0; kx < kK; ++kx) {
          const float w = wc[ky * kK + kx];
          a[g][0] += w * p[ky][kx];
          a[g][1] += w * p[ky][kx + 1];
          a[g][2] += w * p[ky + 1][kx];
          a[g][3] += w * p[ky + 1][kx + 1];
        }
      }
    }
  }
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) best[g] = max_of(max_of(a[g][0], a[g][1]), max_of(a[g][2], a[g][3]));
}

template <typename In>
void conv_layer_impl(const In* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) {
  const int C = s.in_channels, S = s.in_side, F = s.filters;
  const std::size_t in_len = std::size_t(n) * C * S * S, out_len = std::size_t(n) * F * S * S;
  const std::size_t w_len = s.weight_count();
#pragma acc parallel loop gang worker vector collapse(4) \
    present(in[0:in_len], w[0:w_len], b[0:F], out[0:out_len])
  for (int i = 0; i < n; ++i)
    for (int f = 0; f < F; ++f)
      for (int y = 0; y < S; ++y)
        for (int x = 0; x < S; ++x)
          out[((std::size_t(i) * F + f) * S + y) * S + x] =
              conv_at(in + std::size_t(i) * C * S * S, C, S, w + f * C * kK * kK, y, x) + b[f];
}

// Flat mapping: one gang-worker-vector loop over (image, filter group, y, x), G filters per iteration.
template <int G, typename In>
void conv_relu_pool_flat(const In* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) {
  const int C = s.in_channels, S = s.in_side, F = s.filters, P = s.pooled_side();
  const std::size_t in_len = std::size_t(n) * C * S * S, out_len = std::size_t(n) * F * P * P;
  const std::size_t w_len = s.weight_count();
  const int groups = F / G;
#pragma acc parallel loop gang worker vector collapse(4) \
    present(in[0:in_len], w[0:w_len], b[0:F], out[0:out_len])
  for (int i = 0; i < n; ++i)
    for (int fg = 0; fg < groups; ++fg)
      for (int py = 0; py < P; ++py)
        for (int px = 0; px < P; ++px) {
          const int f0 = fg * G;
          float best[G];
          pooled_conv_group<G>(in + std::size_t(i) * C * S * S, C, S, w + f0 * C * kK * kK, py, px, best);
#pragma GCC unroll 4
          for (int g = 0; g < G; ++g)
            out[((std::size_t(i) * F + f0 + g) * P + py) * P + px] = max_of(best[g] + b[f0 + g], 0.0f);
        }
}

// Hierarchical mapping: a gang per image, its workers and vector lanes over (filter, y, x).
template <typename In>
void conv_relu_pool_gangs(const In* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) {
  const int C = s.in_channels, S = s.in_side, F = s.filters, P = s.pooled_side();
  const std::size_t in_len = std::size_t(n) * C * S * S, out_len = std::size_t(n) * F * P * P;
  const std::size_t w_len = s.weight_count();
#pragma acc parallel loop gang num_workers(8) vector_length(32) \
    present(in[0:in_len], w[0:w_len], b[0:F], out[0:out_len])
  for (int i = 0; i < n; ++i) {
#pragma acc loop worker vector collapse(3)
    for (int f = 0; f < F; ++f)
      for (int py = 0; py < P; ++py)
        for (int px = 0; px < P; ++px) {
          float best[1];
          pooled_conv_group<1>(in + std::size_t(i) * C * S * S, C, S, w + f * C * kK * kK, py, px, best);
          out[((std::size_t(i) * F + f) * P + py) * P + px] = max_of(best[0] + b[f], 0.0f);
        }
  }
}

template <typename In>
void conv_relu_pool_impl(const In* in, int n, const ConvSpec& s, const float* w, const float* b, float* out,
                         Mapping m) {
  if (m == Mapping::gang_images)
    conv_relu_pool_gangs(in, n, s, w, b, out);
  else
    conv_relu_pool_flat<kFilterGroup>(in, n, s, w, b, out);
}

}  // namespace

void conv_layer(const std::uint8_t* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) {
  conv_layer_impl(in, n, s, w, b, out);
}
void conv_layer(const float* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) {
  conv_layer_impl(in, n, s, w, b, out);
}

void relu_layer(float* a, std::size_t count) {
#pragma acc parallel loop gang worker vector present(a[0:count])
  for (std::size_t k = 0; k < count; ++k) a[k] = max_of(a[k], 0.0f);
}

void pool_layer(const float* in, int n, const ConvSpec& s, float* out) {
  const int C = s.filters, S = s.out_side(), P = s.pooled_side();
  const std::size_t in_len = std::size_t(n) * C * S * S, out_len = std::size_t(n) * C * P * P;
#pragma acc parallel loop gang worker vector collapse(4) present(in[0:in_len], out[0:out_len])
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < C; ++c)
      for (int py = 0; py < P; ++py)
        for (int px = 0; px < P; ++px) {
          const float* p = in + ((std::size_t(i) * C + c) * S + 2 * py) * S + 2 * px;
          out[((std::size_t(i) * C + c) * P + py) * P + px] = max_of(max_of(p[0], p[1]), max_of(p[S], p[S + 1]));
        }
}

void fc_layer(const float* in, int n, const float* w, const float* b, float* out) {
  const std::size_t in_len = std::size_t(n) * kFcIn, out_len = std::size_t(n) * kClasses;
#pragma acc parallel loop gang worker vector collapse(2) \
    present(in[0:in_len], w[0:kClasses * kFcIn], b[0:kClasses], out[0:out_len])
  for (int i = 0; i < n; ++i)
    for (int o = 0; o < kClasses; ++o) {
      float a = b[o];
      for (int k = 0; k < kFcIn; ++k) a += w[o * kFcIn + k] * in[std::size_t(i) * kFcIn + k];
      out[std::size_t(i) * kClasses + o] = a;
    }
}

void softmax_layer(float* a, int n) {
  const std::size_t len = std::size_t(n) * kClasses;
#pragma acc parallel loop gang worker vector present(a[0:len])
  for (int i = 0; i < n; ++i) {
    softmax_fp32(a + std::size_t(i) * kClasses);
  }
}

void conv_relu_pool(const std::uint8_t* in, int n, const ConvSpec& s, const float* w, const float* b, float* out,
                    Mapping m) {
  conv_relu_pool_impl(in, n, s, w, b, out, m);
}
void conv_relu_pool(const float* in, int n, const ConvSpec& s, const float* w, const float* b, float* out,
                    Mapping m) {
  conv_relu_pool_impl(in, n, s, w, b, out, m);
}

void fc_softmax(const float* in, int n, const float* w, const float* b, float* probs) {
  const std::size_t in_len = std::size_t(n) * kFcIn, out_len = std::size_t(n) * kClasses;
#pragma acc parallel loop gang worker vector \
    present(in[0:in_len], w[0:kClasses * kFcIn], b[0:kClasses], probs[0:out_len])
  for (int i = 0; i < n; ++i) {
    const float* x = in + std::size_t(i) * kFcIn;
    float a[kClasses];
#pragma GCC unroll 10
    for (int o = 0; o < kClasses; ++o) a[o] = b[o];
    for (int k = 0; k < kFcIn; ++k) {
      const float xk = x[k];
#pragma GCC unroll 10
      for (int o = 0; o < kClasses; ++o) a[o] += w[o * kFcIn + k] * xk;
    }
    softmax_fp32(a);
    float* out = probs + std::size_t(i) * kClasses;
#pragma GCC unroll 10
    for (int o = 0; o < kClasses; ++o) out[o] = a[o];
  }
}

}  // namespace cnn::openacc
