#include "backends/omptarget/omptarget_kernels.hpp"

#include <stdexcept>
#include <type_traits>

#include "common/kernels/offload/patch_conv.hpp"

namespace cnn::omptarget {
namespace {

using offload::conv_at;
using offload::fc_output;
using offload::kFcIn;
using offload::kK;
using offload::max_of;
using offload::pool_at;

template <typename In>
void conv_layer(const In* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) {
  const int C = s.in_channels, S = s.in_side, F = s.filters;
  const std::size_t in_len = std::size_t(n) * C * S * S, out_len = std::size_t(n) * F * S * S;
  const std::size_t w_len = s.weight_count();
#pragma omp target teams distribute parallel for collapse(4) \
    map(to : in[0:in_len], w[0:w_len], b[0:F]) map(from : out[0:out_len])
  for (int i = 0; i < n; ++i)
    for (int f = 0; f < F; ++f)
      for (int y = 0; y < S; ++y)
        for (int x = 0; x < S; ++x)
          out[((std::size_t(i) * F + f) * S + y) * S + x] =
              conv_at(in + std::size_t(i) * C * S * S, C, S, w + f * C * kK * kK, y, x) + b[f];
}

// One iteration of the fused loop: the pooled, biased, ReLU'd outputs at (py, px) of G filters, as
// offload::pooled_conv_group computes them (same taps, same order of summation), written with scalars
// only. GCC 12 gives every local that is not a register (any array or struct), when inlined into a `simd`
// loop's body, a per-lane slot in the SIMT stack, i.e. local memory: the shared helper's 6x6 patch and
// G x 4 accumulators made about 480 loads and stores there per iteration for G = 4
// (`-foffload-options=nvptx-none=-save-temps`: every access goes through `%simtstack_ar`). A function left
// uninlined is no way out: inside the SIMT region the lanes would call it one at a time.
// So: named accumulators (four per filter, for at most kMaxGroup filters; those of filters g >= G are never
// touched and vanish), and the patch a row (q0..q5) at a time.
constexpr int kMaxGroup = 20;
#define OMPT_FILTERS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) \
  X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17) X(18) X(19)
#define OMPT_ACC(g) float a##g##0 = 0.0f, a##g##1 = 0.0f, a##g##2 = 0.0f, a##g##3 = 0.0f;
#define OMPT_TAPS(acc, w, qa, qb, qc, qd, qe) \
  acc += (w)[0] * (qa); acc += (w)[1] * (qb); acc += (w)[2] * (qc); acc += (w)[3] * (qd); acc += (w)[4] * (qe)
// Input row r of the patch into filter g: kernel row r for the top two outputs, r - 1 for the bottom two.
#define OMPT_ROW(g)                                                          \
  if ((g) < G) {                                                             \
    const float* wg = wc + (g) * channels * kK * kK;                         \
    if (r < kK) {                                                            \
      OMPT_TAPS(a##g##0, wg + r * kK, q0, q1, q2, q3, q4);                   \
      OMPT_TAPS(a##g##1, wg + r * kK, q1, q2, q3, q4, q5);                   \
    }                                                                        \
    if (r > 0) {                                                             \
      OMPT_TAPS(a##g##2, wg + (r - 1) * kK, q0, q1, q2, q3, q4);             \
      OMPT_TAPS(a##g##3, wg + (r - 1) * kK, q1, q2, q3, q4, q5);             \
    }                                                                        \
  }
#define OMPT_STORE(g) \
  if ((g) < G) out[(g) * stride] = max_of(max_of(max_of(a##g##0, a##g##1), max_of(a##g##2, a##g##3)) + bias[g], 0.0f);

#pragma omp declare target
// Patch column q of a row starting at input column x0 (zero outside the image). Scalars in, scalar out.
template <typename In>
[[gnu::always_inline]] inline float patch_value(const In* row, int q, bool row_in, int x0, int side) {
  return row_in && x0 + q >= 0 && x0 + q < side ? offload::activation(row[q]) : 0.0f;
}
template <int G, typename In>
[[gnu::always_inline]] inline void pooled_group(const In* img, int channels, int side, const float* wf, int py,
                                                int px, const float* bias, float* out, int stride) {
  static_assert(G >= 1 && G <= kMaxGroup);
  OMPT_FILTERS(OMPT_ACC)
  const int y0 = 2 * py - offload::kPad, x0 = 2 * px - offload::kPad;
  for (int c = 0; c < channels; ++c) {
    const In* plane = img + c * side * side;
    const float* wc = wf + c * kK * kK;
#pragma GCC unroll 6
    for (int r = 0; r < offload::kPatch; ++r) {
      const int y = y0 + r;
      const bool row_in = y >= 0 && y < side;
      const In* row = plane + y * side + x0;
      const float q0 = patch_value(row, 0, row_in, x0, side), q1 = patch_value(row, 1, row_in, x0, side),
                  q2 = patch_value(row, 2, row_in, x0, side), q3 = patch_value(row, 3, row_in, x0, side),
                  q4 = patch_value(row, 4, row_in, x0, side), q5 = patch_value(row, 5, row_in, x0, side);
      OMPT_FILTERS(OMPT_ROW)
    }
  }
  OMPT_FILTERS(OMPT_STORE)
}
#pragma omp end declare target
#undef OMPT_FILTERS
#undef OMPT_ACC
#undef OMPT_TAPS
#undef OMPT_ROW
#undef OMPT_STORE

// Layer L's sizes are template constants, so the decomposition of the flat index below is 32-bit
// multiplications by constants rather than 64-bit divisions (each about 70 instructions on the GPU).
// Every iteration computes all F filters: every OpenMP kernel gets 254 registers anyway (README.md), and
// more accumulators mean more work per loaded value.
template <int L, typename In>
void conv_relu_pool_impl(const In* in, int n, const float* w, const float* b, float* out) {
  constexpr ConvSpec s = kConvs[L];
  constexpr int C = s.in_channels, S = s.in_side, F = s.filters, P = s.pooled_side();
  const std::size_t in_len = std::size_t(n) * C * S * S, out_len = std::size_t(n) * F * P * P;
  const std::size_t w_len = s.weight_count();
  // One loop over (image, y, x), flattened by hand: GCC 12 runs a `simd` loop on the 32 lanes of a warp
  // (SIMT) only without collapse() (with collapse(4) over the loop nest its PTX had no lane code: each
  // OpenMP thread, a warp, would use one lane). int: a chunk of images keeps the count below 2^31.
  const int items = n * P * P;
#pragma omp target teams distribute parallel for simd map(to : in[0:in_len], w[0:w_len], b[0:F]) \
    map(from : out[0:out_len])
  for (int k = 0; k < items; ++k) {
    const unsigned u = unsigned(k);
    const int px = int(u % P), py = int(u / P % P), i = int(u / (P * P));
    pooled_group<F>(in + std::size_t(i) * C * S * S, C, S, w, py, px, b, out + std::size_t(i) * F * P * P + py * P + px,
                    P * P);
  }
}

// The layer index of `s` among the network's conv layers.
int layer_of(const ConvSpec& s) {
  for (int l = 0; l < 3; ++l)
    if (kConvs[l].in_channels == s.in_channels && kConvs[l].in_side == s.in_side && kConvs[l].filters == s.filters)
      return l;
  return -1;
}

template <typename In>
void conv_relu_pool_any(const In* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) {
  // Pixels feed conv1 only and activations conv2/conv3: only those three regions are compiled (each is
  // compiled twice, for the host and, at link time, for the GPU).
  const int layer = layer_of(s);
  if constexpr (std::is_same_v<In, std::uint8_t>) {
    if (layer == 0) return conv_relu_pool_impl<0>(in, n, w, b, out);
  } else {
    if (layer == 1) return conv_relu_pool_impl<1>(in, n, w, b, out);
    if (layer == 2) return conv_relu_pool_impl<2>(in, n, w, b, out);
  }
  throw std::logic_error("omptarget: conv_relu_pool for a layer and input type the network does not have");
}

void relu_layer(float* a, std::size_t count) {
#pragma omp target teams distribute parallel for map(tofrom : a[0:count])
  for (std::size_t k = 0; k < count; ++k) a[k] = max_of(a[k], 0.0f);
}

void pool_layer(const float* in, int n, const ConvSpec& s, float* out) {
  const int C = s.filters, S = s.out_side(), P = s.pooled_side();
  const std::size_t in_len = std::size_t(n) * C * S * S, out_len = std::size_t(n) * C * P * P;
#pragma omp target teams distribute parallel for collapse(4) map(to : in[0:in_len]) map(from : out[0:out_len])
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < C; ++c)
      for (int py = 0; py < P; ++py)
        for (int px = 0; px < P; ++px)
          out[((std::size_t(i) * C + c) * P + py) * P + px] =
              pool_at(in + ((std::size_t(i) * C + c) * S + 2 * py) * S + 2 * px, S);
}

void fc_layer(const float* in, int n, const float* w, const float* b, float* out) {
  const std::size_t in_len = std::size_t(n) * kFcIn, out_len = std::size_t(n) * kClasses;
#pragma omp target teams distribute parallel for collapse(2) \
    map(to : in[0:in_len], w[0:kClasses * kFcIn], b[0:kClasses]) map(from : out[0:out_len])
  for (int i = 0; i < n; ++i)
    for (int o = 0; o < kClasses; ++o)
      out[std::size_t(i) * kClasses + o] = fc_output(in + std::size_t(i) * kFcIn, w, b, o);
}

void softmax_layer(float* a, int n) {
  const std::size_t len = std::size_t(n) * kClasses;
#pragma omp target teams distribute parallel for map(tofrom : a[0:len])
  for (int i = 0; i < n; ++i) softmax_fp32(a + std::size_t(i) * kClasses);
}

}  // namespace

const offload::LayerRegions kLayerRegions{conv_layer<std::uint8_t>, conv_layer<float>, relu_layer,
                                          pool_layer, fc_layer, softmax_layer};

void conv_relu_pool(const std::uint8_t* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) {
  conv_relu_pool_any(in, n, s, w, b, out);
}
void conv_relu_pool(const float* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) {
  conv_relu_pool_any(in, n, s, w, b, out);
}

// FC + softmax of one image with ten named accumulators, for the reason given at pooled_group (the shared
// offload::fc_softmax_image keeps them in an array); same order of summation.
#define OMPT_CLASSES(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9)
static_assert(kClasses == 10, "OMPT_CLASSES names ten classes");
#pragma omp declare target
[[gnu::always_inline]] inline void fc_softmax_scalars(const float* x, const float* w, const float* b, float* probs) {
#define OMPT_INIT(o) float a##o = b[o];
  OMPT_CLASSES(OMPT_INIT)
  for (int k = 0; k < kFcIn; ++k) {
    const float xk = x[k];
#define OMPT_FMA(o) a##o += w[(o) * kFcIn + k] * xk;
    OMPT_CLASSES(OMPT_FMA)
  }
  float amax = a0;
#define OMPT_MAX(o) amax = max_of(amax, a##o);
  OMPT_CLASSES(OMPT_MAX)
  float sum = 0.0f;
#define OMPT_EXP(o) sum += (a##o = expf(a##o - amax));
  OMPT_CLASSES(OMPT_EXP)
#define OMPT_OUT(o) probs[o] = a##o / sum;
  OMPT_CLASSES(OMPT_OUT)
}
#pragma omp end declare target
#undef OMPT_CLASSES
#undef OMPT_INIT
#undef OMPT_FMA
#undef OMPT_MAX
#undef OMPT_EXP
#undef OMPT_OUT

void fc_softmax(const float* in, int n, const float* w, const float* b, float* probs) {
  const std::size_t in_len = std::size_t(n) * kFcIn, out_len = std::size_t(n) * kClasses;
#pragma omp target teams distribute parallel for simd \
    map(to : in[0:in_len], w[0:kClasses * kFcIn], b[0:kClasses]) map(from : probs[0:out_len])
  for (int i = 0; i < n; ++i)
    fc_softmax_scalars(in + std::size_t(i) * kFcIn, w, b, probs + std::size_t(i) * kClasses);
}

}  // namespace cnn::omptarget
