#include "backends/openacc/openacc_kernels.hpp"

#include "common/kernels/offload/patch_conv.hpp"
#include "common/fp32_math.hpp"

namespace cnn::openacc {
namespace {

using offload::conv_at;
using offload::fc_output;
using offload::kFcIn;
using offload::kK;
using offload::max_of;
using offload::pool_at;
using offload::pooled_conv_group;
static_assert(kConv1.filters % kFilterGroup == 0 && kConv2.filters % kFilterGroup == 0 &&
              kConv3.filters % kFilterGroup == 0);

template <typename In>
void conv_layer(const In* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) {
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
        for (int px = 0; px < P; ++px)
          out[((std::size_t(i) * C + c) * P + py) * P + px] =
              pool_at(in + ((std::size_t(i) * C + c) * S + 2 * py) * S + 2 * px, S);
}

void fc_layer(const float* in, int n, const float* w, const float* b, float* out) {
  const std::size_t in_len = std::size_t(n) * kFcIn, out_len = std::size_t(n) * kClasses;
#pragma acc parallel loop gang worker vector collapse(2) \
    present(in[0:in_len], w[0:kClasses * kFcIn], b[0:kClasses], out[0:out_len])
  for (int i = 0; i < n; ++i)
    for (int o = 0; o < kClasses; ++o)
      out[std::size_t(i) * kClasses + o] = fc_output(in + std::size_t(i) * kFcIn, w, b, o);
}

void softmax_layer(float* a, int n) {
  const std::size_t len = std::size_t(n) * kClasses;
#pragma acc parallel loop gang worker vector present(a[0:len])
  for (int i = 0; i < n; ++i) softmax_fp32(a + std::size_t(i) * kClasses);
}

}  // namespace

const offload::LayerRegions kLayerRegions{conv_layer<std::uint8_t>, conv_layer<float>, relu_layer,
                                          pool_layer, fc_layer, softmax_layer};

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
  for (int i = 0; i < n; ++i)
    offload::fc_softmax_image(in + std::size_t(i) * kFcIn, w, b, probs + std::size_t(i) * kClasses);
}

}  // namespace cnn::openacc
