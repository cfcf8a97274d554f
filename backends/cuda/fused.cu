// cuda:fused, the whole network in one kernel. A block takes one image at a time (grid-stride over the
// images): it reads the 3072 uint8 pixels once, keeps every activation in shared memory (54 KB), and
// writes 10 probabilities. No activation ever touches global memory, and there is one launch per forward.
// - conv+ReLU+pool are fused per layer: each thread computes the 2x2 conv outputs under one pooled output
//   (for several filters), keeping the 6x6 input patch of a channel in registers;
// - conv1 and conv2 weights live in constant memory: every thread of a warp reads the same weight, so it is
//   a broadcast operand of the FMA; conv3 and FC weights (which would overflow the 64 KB of constant memory)
//   come through the read-only data cache;
// - activations are stored padded, so the 5x5 windows need no bounds checks.
#include <algorithm>

#include "backends/cuda/device_session.hpp"
#include "backends/cuda/kernels_common.cuh"
#include "backends/cuda/variants.hpp"

namespace cnn::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int P1 = kConv1.in_side + 2 * kConv1.pad;  // 36: padded input planes
constexpr int P2 = kConv2.in_side + 2 * kConv2.pad;  // 20
constexpr int P3 = kConv3.in_side + 2 * kConv3.pad;  // 12
constexpr int kIn1 = kConv1.in_channels * P1 * P1, kIn2 = kConv2.in_channels * P2 * P2;
constexpr int kIn3 = kConv3.in_channels * P3 * P3, kPooled = kFc.inputs();
constexpr std::size_t kSharedBytes = std::size_t(kIn1 + kIn2 + kIn3 + kPooled + 16) * sizeof(float);
static_assert(kConv1.pooled_side() * kConv1.pooled_side() == kThreads, "conv1: a thread per pooled output");
static_assert(kConv2.pooled_side() * kConv2.pooled_side() * 4 == kThreads && kConv2.filters % 4 == 0,
              "conv2: 4 filter groups of the 64 pooled outputs");
static_assert(kConv3.pooled_side() * kConv3.pooled_side() * kConv3.filters / 2 <= kThreads,
              "conv3: two filters per thread");

__constant__ float c_w1[kConv1.weight_count()];
__constant__ float c_b1[kConv1.filters];
__constant__ float c_w2[kConv2.weight_count()];
__constant__ float c_b2[kConv2.filters];

// Accumulates the 2x2 conv outputs at (2py, 2px) of NF filters from the padded planes `in` (side P).
// w(f, c, tap) gives weight tap (ky * 5 + kx) of filter f, channel c.
template <int C, int P, int NF, typename Weights>
__device__ __forceinline__ void conv_2x2(const float* in, int py, int px, int f0, Weights w, float (&acc)[NF][4]) {
  for (int c = 0; c < C; ++c) {
    float patch[6][6];
    const float* src = in + (c * P + 2 * py) * P + 2 * px;
#pragma unroll
    for (int r = 0; r < 6; ++r)
#pragma unroll
      for (int q = 0; q < 6; ++q) patch[r][q] = src[r * P + q];
#pragma unroll
    for (int f = 0; f < NF; ++f)
#pragma unroll
      for (int ky = 0; ky < 5; ++ky)
#pragma unroll
        for (int kx = 0; kx < 5; ++kx) {
          const float wt = w(f0 + f, c, ky * 5 + kx);
          acc[f][0] += wt * patch[ky][kx];
          acc[f][1] += wt * patch[ky][kx + 1];
          acc[f][2] += wt * patch[ky + 1][kx];
          acc[f][3] += wt * patch[ky + 1][kx + 1];
        }
  }
}

// max of the 2x2 outputs, + bias (same for all four), then ReLU.
__device__ __forceinline__ float pool_relu(const float (&a)[4], float bias) {
  return fmaxf(fmaxf(fmaxf(a[0], a[1]), fmaxf(a[2], a[3])) + bias, 0.0f);
}

__global__ void __launch_bounds__(kThreads, 3) fused_kernel(const std::uint8_t* __restrict__ images,
                                                         const float* __restrict__ w3, const float* __restrict__ b3,
                                                         const float* __restrict__ wfc,
                                                         const float* __restrict__ bfc, float* __restrict__ probs,
                                                         int count) {
  extern __shared__ float smem[];
  float* in1 = smem;
  float* in2 = in1 + kIn1;
  float* in3 = in2 + kIn2;
  float* pooled = in3 + kIn3;
  float* logits = pooled + kPooled;
  const int t = threadIdx.x;
  // The padding is zero for the life of the block: only interiors are written below.
  for (int i = t; i < kIn1 + kIn2 + kIn3; i += kThreads) smem[i] = 0.0f;

  for (int img = blockIdx.x; img < count; img += gridDim.x) {
    __syncthreads();  // the previous image is done with every buffer
    // Pixels: 768 32-bit words of 4 uint8 each.
    const std::uint32_t* px4 = reinterpret_cast<const std::uint32_t*>(images + std::size_t(img) * kImageBytes);
    for (int i = t; i < kImageBytes / 4; i += kThreads) {
      const std::uint32_t word = __ldg(px4 + i);
      const int p = 4 * i, c = p / 1024, y = p / 32 % 32, x = p % 32;
      float* dst = in1 + (c * P1 + y + 2) * P1 + x + 2;
#pragma unroll
      for (int b = 0; b < 4; ++b) dst[b] = normalise(std::uint8_t(word >> (8 * b)));
    }
    __syncthreads();

    // conv1 + ReLU + pool: thread t -> pooled (t / 16, t % 16); the 16 filters in two halves, so that 32
    // accumulators, not 64, hold the registers (3 blocks per SM instead of 2).
    for (int f0 = 0; f0 < kConv1.filters; f0 += kConv1.filters / 2) {
      float acc[kConv1.filters / 2][4] = {};
      conv_2x2<kConv1.in_channels, P1, kConv1.filters / 2>(
          in1, t / 16, t % 16, f0,
          [](int f, int c, int tap) { return c_w1[(f * kConv1.in_channels + c) * 25 + tap]; }, acc);
#pragma unroll
      for (int f = 0; f < kConv1.filters / 2; ++f)
        in2[((f0 + f) * P2 + t / 16 + 2) * P2 + t % 16 + 2] = pool_relu(acc[f], c_b1[f0 + f]);
    }
    __syncthreads();

    {  // conv2 + ReLU + pool: pooled (q / 8, q % 8), filters 5g .. 5g + 4; a warp shares g (broadcast)
      constexpr int NF = kConv2.filters / 4;
      const int q = t % 64, f0 = t / 64 * NF;
      float acc[NF][4] = {};
      conv_2x2<kConv2.in_channels, P2, NF>(
          in2, q / 8, q % 8, f0, [](int f, int c, int tap) { return c_w2[(f * kConv2.in_channels + c) * 25 + tap]; },
          acc);
#pragma unroll
      for (int f = 0; f < NF; ++f) in3[((f0 + f) * P3 + q / 8 + 2) * P3 + q % 8 + 2] = pool_relu(acc[f], c_b2[f0 + f]);
    }
    __syncthreads();

    if (t < 160) {  // conv3 + ReLU + pool: pooled (q / 4, q % 4), filters 2g, 2g + 1
      const int q = t % 16, f0 = t / 16 * 2;
      float acc[2][4] = {};
      conv_2x2<kConv3.in_channels, P3, 2>(
          in3, q / 4, q % 4, f0,
          [w3](int f, int c, int tap) { return __ldg(w3 + (f * kConv3.in_channels + c) * 25 + tap); }, acc);
#pragma unroll
      for (int f = 0; f < 2; ++f) pooled[(f0 + f) * 16 + q] = pool_relu(acc[f], __ldg(b3 + f0 + f));
    }
    __syncthreads();

    // FC: each warp computes logits warp, warp + 8 (lanes split the 320 inputs), then one thread does the
    // softmax.
    const int warp = t / 32, lane = t % 32;
    for (int o = warp; o < kClasses; o += kThreads / 32) {
      float a = 0;
      for (int i = lane; i < kPooled; i += 32) a += __ldg(wfc + o * kPooled + i) * pooled[i];
#pragma unroll
      for (int off = 16; off > 0; off /= 2) a += __shfl_down_sync(0xffffffffu, a, off);
      if (lane == 0) logits[o] = a + __ldg(bfc + o);
    }
    __syncthreads();
    if (t == 0) {
      softmax10(logits);
#pragma unroll
      for (int k = 0; k < kClasses; ++k) probs[std::size_t(img) * kClasses + k] = logits[k];
    }
  }
}

class FusedSession final : public DeviceSession {
 public:
  FusedSession(const Network& net, const RunConfig& config) : DeviceSession("cuda:fused", config, 1 << 20) {
    check(cudaMemcpyToSymbol(c_w1, net.conv1.weights.data(), sizeof(c_w1)), "conv1 weights");
    check(cudaMemcpyToSymbol(c_b1, net.conv1.bias.data(), sizeof(c_b1)), "conv1 bias");
    check(cudaMemcpyToSymbol(c_w2, net.conv2.weights.data(), sizeof(c_w2)), "conv2 weights");
    check(cudaMemcpyToSymbol(c_b2, net.conv2.bias.data(), sizeof(c_b2)), "conv2 bias");
    w3_ = to_device(net.conv3.weights);
    b3_ = to_device(net.conv3.bias);
    wfc_ = to_device(net.fc.weights);
    bfc_ = to_device(net.fc.bias);
    check(cudaFuncSetAttribute(fused_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSharedBytes)),
          "shared memory size");
    int per_sm = 0, sms = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fused_kernel, kThreads, kSharedBytes), "occupancy");
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "SM count");
    resident_blocks_ = std::max(1, per_sm * sms);
  }

 protected:
  void run(const std::uint8_t* images, float* probs, std::size_t n, cudaStream_t s, LayerEvents*) override {
    const int blocks = int(std::min<std::size_t>(n, std::size_t(resident_blocks_)));
    fused_kernel<<<blocks, kThreads, kSharedBytes, s>>>(images, w3_, b3_, wfc_, bfc_, probs, int(n));
  }

 private:
  const float *w3_, *b3_, *wfc_, *bfc_;
  int resident_blocks_ = 1;
};

}  // namespace

std::unique_ptr<Session> open_fused(const Network& net, const RunConfig& config) {
  return std::make_unique<FusedSession>(net, config);
}

}  // namespace cnn::cuda
