// cuda:naive, the direct port of the thesis' loops: one thread per output value, one kernel per layer,
// every activation in global memory (NCHW), the zero padding handled by bounds checks, canonical weight
// layout read from global memory. Per-layer times come from CUDA events between the kernels.
#include "backends/cuda/cuda_layerwise.cuh"
#include "common/registry.hpp"

namespace cnn::cuda {
namespace {

// out[n][f][y][x] = bias[f] + sum over c, ky, kx of w[f][c][ky][kx] * in[n][c][y+ky-pad][x+kx-pad]
__global__ void conv_kernel(const float* in, const float* w, const float* bias, float* out, std::size_t images,
                            int C, int F, int S, int K, int pad) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= images * F * S * S) return;
  const int x = int(i % S), y = int(i / S % S), f = int(i / (S * S) % F);
  const std::size_t n = i / (std::size_t(S) * S * F);
  float a = bias[f];
  for (int c = 0; c < C; ++c)
    for (int ky = 0; ky < K; ++ky)
      for (int kx = 0; kx < K; ++kx) {
        const int iy = y + ky - pad, ix = x + kx - pad;
        if (iy >= 0 && iy < S && ix >= 0 && ix < S)
          a += w[((f * C + c) * K + ky) * K + kx] * in[((n * C + c) * S + iy) * S + ix];
      }
  out[i] = a;
}

using layerwise::DeviceConv;

struct NaiveConv {
  static constexpr const char* kLabel = "cuda:naive";
  DeviceConv conv[3];
  template <typename Session>
  void setup(const Network& net, Session& session) {
    for (int l = 0; l < 3; ++l) conv[l] = {session.to_device(net.conv(l).weights), session.to_device(net.conv(l).bias)};
  }
  void operator()(int l, const float* in, float* out, std::size_t n, cudaStream_t s) const {
    const ConvSpec& c = kConvs[l];
    const int S = c.out_side();
    conv_kernel<<<blocks_for(n * c.filters * S * S, layerwise::kThreads), layerwise::kThreads, 0, s>>>(
        in, conv[l].w, conv[l].b, out, n, c.in_channels, c.filters, S, c.kernel, c.pad);
  }
};

const VariantRegistration kNaive{"cuda", 1, open_session<layerwise::CudaLayerwiseSession<NaiveConv>>,
    {"naive", "one thread per output value, layer by layer, global memory (the direct port)", true}};

}  // namespace
}  // namespace cnn::cuda
