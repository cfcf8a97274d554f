// What the layer-wise CUDA variants (naive, shared_planes) share: the ReLU, pool, FC and softmax kernels, the
// ping-pong activation buffers in global memory, and per-layer CUDA-event timing. A variant supplies only
// its convolution.
#pragma once

#include "common/kernels/cuda/cuda_device_session.hpp"
#include "common/kernels/cuda/cuda_kernels.cuh"

namespace cnn::cuda::layerwise {

constexpr unsigned kThreads = 256;

static __global__ void relu_kernel(float* v, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) v[i] = fmaxf(v[i], 0.0f);
}

// 2x2 max pool, stride 2: in planes of side S, out planes of side S/2.
static __global__ void pool_kernel(const float* in, float* out, std::size_t planes, int S) {
  const int H = S / 2;
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= planes * H * H) return;
  const int x = int(i % H), y = int(i / H % H);
  const float* p = in + i / (H * H) * S * S + (2 * y) * S + 2 * x;
  out[i] = fmaxf(fmaxf(p[0], p[1]), fmaxf(p[S], p[S + 1]));
}

static __global__ void fc_kernel(const float* in, const float* w, const float* bias, float* out, std::size_t images,
                          int inputs, int outputs) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= images * outputs) return;
  const int o = int(i % outputs);
  const float* x = in + i / outputs * inputs;
  float a = bias[o];
  for (int k = 0; k < inputs; ++k) a += w[o * inputs + k] * x[k];
  out[i] = a;
}

static __global__ void softmax_kernel(float* z, std::size_t images) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < images) softmax_fp32(z + i * kClasses);
}

struct DeviceConv {
  const float* w;
  const float* b;
};

// ConvStep launches one conv layer l (0..2) on a stream:
//   void operator()(int l, const float* in, float* out, std::size_t n, cudaStream_t s) const;
// with the weights given by setup(net, session). Everything else (ReLU, pool, FC, softmax, timing) is shared.
template <typename ConvStep>
class CudaLayerwiseSession final : public DeviceSession {
 public:
  // ConvStep::kLabel: the variant's name in error messages.
  CudaLayerwiseSession(const Network& net, const RunConfig& config) : DeviceSession(ConvStep::kLabel, config, 4096) {
    conv_step_.setup(net, *this);
    fc_ = {to_device(net.fc.weights), to_device(net.fc.bias)};
    // Two ping-pong buffers, each big enough for the largest activation of a chunk (conv1's output).
    const std::size_t largest = std::size_t(kConv1.filters) * kConv1.out_side() * kConv1.out_side();
    a_ = static_cast<float*>(alloc(batch_ * largest * sizeof(float)));
    b_ = static_cast<float*>(alloc(batch_ * largest * sizeof(float)));
  }

 protected:
  bool layerwise() const override { return true; }

  void run(const std::uint8_t* images, float* probs, std::size_t n, cudaStream_t s, LayerEvents* ev) override {
    auto mark = [&](const char* layer) {
      if (ev) ev->mark(layer);
    };
    normalise_kernel<<<blocks_for(n * kImageBytes, kThreads), kThreads, 0, s>>>(images, b_, n * kImageBytes);
    float* in = b_;
    float* out = a_;
    for (int l = 0; l < 3; ++l) {
      const ConvSpec& c = kConvs[l];
      const int S = c.out_side();
      const std::size_t outputs = n * c.filters * S * S;
      conv_step_(l, in, out, n, s);
      mark(kLayers[3 * l].name.data());
      relu_kernel<<<blocks_for(outputs, kThreads), kThreads, 0, s>>>(out, outputs);
      mark(kLayers[3 * l + 1].name.data());
      pool_kernel<<<blocks_for(outputs / 4, kThreads), kThreads, 0, s>>>(out, in, n * c.filters, S);
      mark(kLayers[3 * l + 2].name.data());
    }
    fc_kernel<<<blocks_for(n * kClasses, kThreads), kThreads, 0, s>>>(in, fc_.w, fc_.b, probs, n, kFc.inputs(),
                                                                      kClasses);
    mark("fc");
    softmax_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(probs, n);
    mark("softmax");
  }

 public:
  using DeviceSession::to_device;  // for the ConvStep's setup

 private:
  ConvStep conv_step_;
  DeviceConv fc_;
  float* a_;
  float* b_;
};

}  // namespace cnn::cuda::layerwise
