// Per-element device functions shared by the directive-based GPU backends (OpenACC and OpenMP target
// offload, both GCC nvptx): each backend writes its own loops and directives (that is the programming
// model), and the loop bodies call these. Header-only, not a backend.
//
// Layouts are the canonical ones (common/network.hpp): images uint8 planar, activations per image
// channel-major (c, y, x), conv weights (f, c, ky, kx), FC weights (o, c*16 + y*4 + x).
//
// Everything is forced inline: GCC 12 otherwise emits device functions as PTX calls (and fmaxf as a libm
// call), which keeps the 6x6 patch and the accumulators from staying in registers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/fp32_math.hpp"  // normalise_pixel_fp32, softmax_fp32 (OpenACC: `acc routine`; OpenMP: implicitly
                                 // declare target, as functions defined here and called from target regions)
#include "common/network_spec.hpp"

// Functions called from compute regions must be compiled for the device: OpenACC marks each one
// (`acc routine seq`), OpenMP takes the whole header (`declare target`).
#if defined(_OPENACC)
#define OFFLOAD_ROUTINE _Pragma("acc routine seq")
#else
#define OFFLOAD_ROUTINE
#endif
#if defined(_OPENMP)
#pragma omp declare target
#endif

namespace cnn::offload {

// Every conv layer is 5x5, pad 2, stride 1 (hard-coded so the compiler can unroll the window).
inline constexpr int kK = kConv1.kernel;
inline constexpr int kPad = kConv1.pad;
static_assert(kConv2.kernel == kK && kConv3.kernel == kK && kConv2.pad == kPad && kConv3.pad == kPad);
static_assert(kK == 2 * kPad + 1, "same-size convolution");
inline constexpr int kPatch = kK + 1;  // input rows/columns under one 2x2 pooling window of conv outputs
inline constexpr int kFcIn = kFc.inputs();
static_assert(kFc.outputs == kClasses);

OFFLOAD_ROUTINE
[[gnu::always_inline]] inline float max_of(float a, float b) { return a > b ? a : b; }

OFFLOAD_ROUTINE
[[gnu::always_inline]] inline float activation(float v) { return v; }
OFFLOAD_ROUTINE
[[gnu::always_inline]] inline float activation(std::uint8_t p) { return normalise_pixel_fp32(p); }

// One conv output (before bias) as the thesis computes it: the 5x5 window over every input channel,
// out-of-image taps skipped (zero padding).
OFFLOAD_ROUTINE
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
// pixel (py, px), before bias, into best[0..G). Each input value is loaded once per channel into a 6x6
// register patch and used for 4 outputs x G filters; the G x 4 accumulators stay in registers (all loops
// unrolled). (GCC's OpenMP offload cannot use it: that backend's kernels file says why.)
OFFLOAD_ROUTINE
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

// One 2x2 max-pool output: `at` points to the top-left input of a plane `side` wide.
OFFLOAD_ROUTINE
[[gnu::always_inline]] inline float pool_at(const float* at, int side) {
  return max_of(max_of(at[0], at[1]), max_of(at[side], at[side + 1]));
}

// One FC output o of one image: b[o] + w[o] . x (320 terms, in order).
OFFLOAD_ROUTINE
[[gnu::always_inline]] inline float fc_output(const float* x, const float* w, const float* b, int o) {
  float a = b[o];
  for (int k = 0; k < kFcIn; ++k) a += w[o * kFcIn + k] * x[k];
  return a;
}

// FC (320 -> 10) and softmax of one image: x -> probs.
OFFLOAD_ROUTINE
[[gnu::always_inline]] inline void fc_softmax_image(const float* x, const float* w, const float* b, float* probs) {
  float a[kClasses];
#pragma GCC unroll 10
  for (int o = 0; o < kClasses; ++o) a[o] = b[o];
  for (int k = 0; k < kFcIn; ++k) {
    const float xk = x[k];
#pragma GCC unroll 10
    for (int o = 0; o < kClasses; ++o) a[o] += w[o * kFcIn + k] * xk;
  }
  softmax_fp32(a);
#pragma GCC unroll 10
  for (int o = 0; o < kClasses; ++o) probs[o] = a[o];
}

}  // namespace cnn::offload

#if defined(_OPENMP)
#pragma omp end declare target
#endif
#undef OFFLOAD_ROUTINE
