#include "backends/omptarget/omptarget_kernels.hpp"

#include "backends/offload_kernels/patch_conv.hpp"

namespace cnn::omptarget {
namespace {

using offload::conv_at;
using offload::kFcIn;
using offload::kK;
using offload::max_of;
using offload::pool_at;
static_assert(kConv1.filters % kFilterGroup == 0 && kConv2.filters % kFilterGroup == 0 &&
              kConv3.filters % kFilterGroup == 0);

template <typename In>
void conv_layer_impl(const In* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) {
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

template <typename In>
void conv_relu_pool_impl(const In* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) {
  constexpr int G = kFilterGroup;
  const int C = s.in_channels, S = s.in_side, F = s.filters, P = s.pooled_side();
  const std::size_t in_len = std::size_t(n) * C * S * S, out_len = std::size_t(n) * F * P * P;
  const std::size_t w_len = s.weight_count();
  const int groups = F / G;
  const std::size_t items = std::size_t(n) * groups * P * P;
  // One loop over (image, filter group, y, x), flattened by hand: GCC 12 runs a `simd` loop on the 32
  // lanes of a warp (SIMT) only without collapse() (with collapse(4) its PTX has no lane code: each
  // OpenMP thread, a warp, would use one lane).
#pragma omp target teams distribute parallel for simd map(to : in[0:in_len], w[0:w_len], b[0:F]) \
    map(from : out[0:out_len])
  for (std::size_t k = 0; k < items; ++k) {
    const int px = int(k % P), py = int(k / P % P), fg = int(k / (std::size_t(P) * P) % groups);
    const std::size_t i = k / (std::size_t(P) * P * groups);
    const int f0 = fg * G;
    offload::pooled_conv_group_to<G>(in + i * C * S * S, C, S, w + f0 * C * kK * kK, py, px,
                                     offload::BiasReluStore{b + f0, out + ((i * F + f0) * P + py) * P + px,
                                                            std::size_t(P) * P});
  }
}

}  // namespace

void conv_layer(const std::uint8_t* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) {
  conv_layer_impl(in, n, s, w, b, out);
}
void conv_layer(const float* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) {
  conv_layer_impl(in, n, s, w, b, out);
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
    for (int o = 0; o < kClasses; ++o) {
      float a = b[o];
      for (int k = 0; k < kFcIn; ++k) a += w[o * kFcIn + k] * in[std::size_t(i) * kFcIn + k];
      out[std::size_t(i) * kClasses + o] = a;
    }
}

void softmax_layer(float* a, int n) {
  const std::size_t len = std::size_t(n) * kClasses;
#pragma omp target teams distribute parallel for map(tofrom : a[0:len])
  for (int i = 0; i < n; ++i) {
    float* v = a + std::size_t(i) * kClasses;
    float amax = v[0];
    for (int o = 1; o < kClasses; ++o) amax = max_of(amax, v[o]);
    float sum = 0.0f;
    for (int o = 0; o < kClasses; ++o) sum += (v[o] = expf(v[o] - amax));
    for (int o = 0; o < kClasses; ++o) v[o] /= sum;
  }
}

void conv_relu_pool(const std::uint8_t* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) {
  conv_relu_pool_impl(in, n, s, w, b, out);
}
void conv_relu_pool(const float* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) {
  conv_relu_pool_impl(in, n, s, w, b, out);
}

void fc_softmax(const float* in, int n, const float* w, const float* b, float* probs) {
  const std::size_t in_len = std::size_t(n) * kFcIn, out_len = std::size_t(n) * kClasses;
#pragma omp target teams distribute parallel for simd \
    map(to : in[0:in_len], w[0:kClasses * kFcIn], b[0:kClasses]) map(from : probs[0:out_len])
  for (int i = 0; i < n; ++i)
    offload::fc_softmax_image(in + std::size_t(i) * kFcIn, w, b, probs + std::size_t(i) * kClasses);
}

}  // namespace cnn::omptarget
