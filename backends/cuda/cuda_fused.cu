// cuda:fused, the whole network in one kernel. A block takes one image at a time (grid-stride over the
// images): it reads the 3072 uint8 pixels once, keeps every activation in shared memory (73 KB with the
// conv2 weights: 3 blocks per SM), and writes 10 probabilities. No activation ever touches global memory,
// and there is one launch per forward.
// - conv+ReLU+pool are fused per layer: each thread computes the 2x2 conv outputs under one pooled output
//   (for several filters), keeping the 6x6 input patch of a channel in registers;
// - conv1 weights live in constant memory; its 3 channels are unrolled (offsets are immediates) but the two
//   filter halves are not: unrolling those too doubled conv1's code and the instruction-cache misses
//   ("no instruction" stalls) cost more than the loads they saved;
// - conv2 weights (32 KB, different per warp, too many for the 8 KB constant cache) are staged once per
//   block in shared memory as [channel][tap][group] float4 + float, so a warp reads its 5 filters' weights
//   of a tap with two broadcast loads;
// - conv3 weights are in constant memory (a warp reads 2 addresses); FC weights come through __ldg;
// - activations are stored padded, so the 5x5 windows need no bounds checks; conv3's input aliases conv1's
//   (dead by then), which keeps shared memory at 3 blocks per SM.
#include <algorithm>

#include "common/kernels/cuda/cuda_device_session.hpp"
#include "backends/cuda/cuda_fused_parts.cuh"
#include "common/kernels/cuda/cuda_kernels.cuh"
#include "common/registry.hpp"

namespace cnn::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int P1 = kConv1.padded_side(), P2 = kConv2.padded_side(), P3 = kConv3.padded_side();
constexpr int kIn1 = kConv1.in_channels * P1 * P1, kIn2 = kConv2.in_channels * P2 * P2;
constexpr int kIn3 = kConv3.in_channels * P3 * P3, kPooled = kFc.inputs();
constexpr int kFilterGroups2 = 4, kNF2 = kConv2.filters / kFilterGroups2;  // conv2: 4 filter groups of 5
constexpr int kW2Count = int(kConv2.weight_count());
constexpr int kW2Quad = kConv2.in_channels * kTaps * kFilterGroups2 * 4;  // first 4 filters of each group
constexpr int kW2Rest = kConv2.in_channels * kTaps * kFilterGroups2;      // the fifth
constexpr std::size_t kSharedBytes = std::size_t(kIn1 + kIn2 + kPooled + 16 + kW2Quad + kW2Rest) * sizeof(float);
static_assert(kIn3 <= kIn1, "conv3 input aliases conv1 input");
// conv3's threads: one per pooled output and pair of filters.
constexpr int kConv3Items = kConv3.pooled_side() * kConv3.pooled_side() * kConv3.filters / 2;
static_assert(kConv3Items <= kThreads && kConv3.pooled_side() == 4, "q / 4, q % 4 below");
static_assert((kIn1 + kIn2 + kPooled + 16) % 4 == 0, "conv2 weights start float4-aligned");
static_assert(kNF2 == 5 && kConv2.kernel == 5 && kConv1.kernel == 5 && kConv3.kernel == 5, "5x5, 5 filters/group");
static_assert(kConv1.pooled_side() * kConv1.pooled_side() == kThreads, "conv1: a thread per pooled output");
static_assert(kConv2.pooled_side() * kConv2.pooled_side() * 4 == kThreads && kConv2.filters % 4 == 0,
              "conv2: 4 filter groups of the 64 pooled outputs");
static_assert(kConv3.pooled_side() * kConv3.pooled_side() * kConv3.filters / 2 <= kThreads,
              "conv3: two filters per thread");

__constant__ float c_w1[kConv1.weight_count()];
__constant__ float c_b1[kConv1.filters];
__constant__ float c_b2[kConv2.filters];
__constant__ float c_w3[kConv3.weight_count()];
__constant__ float c_b3[kConv3.filters];

// Accumulates the 2x2 conv outputs at (2py, 2px) of NF filters from the padded planes `in` (side P).
// w(f, c, tap) gives weight tap (ky * 5 + kx) of filter f, channel c.
// kUnrollC unrolls the channels fully (constant weights at immediate offsets); otherwise by 2, so the next
// channel's patch loads overlap this channel's FMAs (by 4 was slower: code size).
template <int C, int P, int NF, bool kUnrollC, typename Weights>
__device__ __forceinline__ void conv_2x2(const float* in, int py, int px, int f0, Weights w, float (&acc)[NF][4]) {
#pragma unroll(kUnrollC ? C : 2)
  for (int c = 0; c < C; ++c) {
    float patch[6][6];
    load_patch<P>(in + (c * P + 2 * py) * P + 2 * px, patch);
#pragma unroll
    for (int f = 0; f < NF; ++f)
#pragma unroll
      for (int tap = 0; tap < kTaps; ++tap) fma_2x2(acc[f], w(f0 + f, c, tap), patch, tap / kKernel, tap % kKernel);
  }
}

// conv2's 2x2 outputs of the 5 filters of group g; weights from shared memory (see header).
template <int C, int P>
__device__ __forceinline__ void conv2_2x2(const float* in, int py, int px, int g, const float4* wq, const float* wr,
                                          float (&acc)[5][4]) {
#pragma unroll 2  // as in conv_2x2
  for (int c = 0; c < C; ++c) {
    float patch[6][6];
    load_patch<P>(in + (c * P + 2 * py) * P + 2 * px, patch);
    accumulate_taps(acc, patch, [&](int tap, float (&wt)[5]) {
      const int i = (c * kTaps + tap) * kFilterGroups2 + g;
      const float4 q4 = wq[i];
      wt[0] = q4.x, wt[1] = q4.y, wt[2] = q4.z, wt[3] = q4.w, wt[4] = wr[i];
    });
  }
}

__global__ void __launch_bounds__(kThreads, 3) fused_kernel(const std::uint8_t* __restrict__ images,
                                                         const float* __restrict__ w2,
                                                         const float* __restrict__ wfc,
                                                         const float* __restrict__ bfc, float* __restrict__ probs,
                                                         int count) {
  extern __shared__ float smem[];
  float* in1 = smem;
  float* in2 = in1 + kIn1;
  float* in3 = in1;  // conv1's input is dead once conv2 writes this
  float* pooled = in2 + kIn2;
  float* logits = pooled + kPooled;
  float4* w2q = reinterpret_cast<float4*>(logits + 16);
  float* w2r = reinterpret_cast<float*>(w2q + kW2Quad / 4);
  const int t = threadIdx.x;
  // in2's padding is zero for the life of the block (only its interior is written below); in1 and in3 share
  // memory, so their padding is rewritten for every image.
  for (int i = t; i < kIn2; i += kThreads) in2[i] = 0.0f;
  // conv2 weights, canonical [f][c][tap] -> [c][tap][group][first four] and [c][tap][group] (fifth).
  for (int i = t; i < kW2Count; i += kThreads) {
    const int f = i / (kConv2.in_channels * kTaps), rest = i % (kConv2.in_channels * kTaps);
    const int g = f / kNF2, j = f % kNF2, slot = rest * kFilterGroups2 + g;
    const float v = __ldg(w2 + i);
    if (j < 4)
      reinterpret_cast<float*>(w2q)[slot * 4 + j] = v;
    else
      w2r[slot] = v;
  }

  for (int img = blockIdx.x; img < count; img += gridDim.x) {
    __syncthreads();  // the previous image is done with every buffer
    // Pixels: 768 32-bit words of 4 uint8 each; then in1's padding (conv3 wrote over it).
    const std::uint32_t* px4 = reinterpret_cast<const std::uint32_t*>(images + std::size_t(img) * kImageBytes);
    for (int i = t; i < kImageBytes / 4; i += kThreads) {
      const std::uint32_t word = __ldg(px4 + i);
      const int p = 4 * i, c = p / kImagePlane, y = p / kImageSide % kImageSide, x = p % kImageSide;
      float* dst = in1 + (c * P1 + y + kConv1.pad) * P1 + x + kConv1.pad;
#pragma unroll
      for (int b = 0; b < 4; ++b) dst[b] = normalise_pixel_fp32(std::uint8_t(word >> (8 * b)));
    }
    for (int i = t; i < kIn1; i += kThreads) {
      const int y = i / P1 % P1, x = i % P1;
      if (y < 2 || y >= P1 - 2 || x < 2 || x >= P1 - 2) in1[i] = 0.0f;
    }
    __syncthreads();

    // conv1 + ReLU + pool: thread t -> pooled (t / 16, t % 16); the 16 filters in two halves, so that 32
    // accumulators, not 64, hold the registers (3 blocks per SM instead of 2).
#pragma unroll 1  // code size, see the header
    for (int f0 = 0; f0 < kConv1.filters; f0 += kConv1.filters / 2) {
      float acc[kConv1.filters / 2][4] = {};
      conv_2x2<kConv1.in_channels, P1, kConv1.filters / 2, true>(
          in1, t / 16, t % 16, f0,
          [](int f, int c, int tap) { return c_w1[(f * kConv1.in_channels + c) * kTaps + tap]; }, acc);
#pragma unroll
      for (int f = 0; f < kConv1.filters / 2; ++f)
        in2[((f0 + f) * P2 + t / 16 + 2) * P2 + t % 16 + 2] = pool_relu(acc[f], c_b1[f0 + f]);
    }
    __syncthreads();

    {  // conv2 + ReLU + pool: pooled (q / 8, q % 8), filters 5g .. 5g + 4; a warp shares g (broadcast)
      constexpr int NF = kNF2;
      const int q = t % 64, g = t / 64, f0 = g * NF;
      float acc[NF][4] = {};
      conv2_2x2<kConv2.in_channels, P2>(in2, q / 8, q % 8, g, w2q, w2r, acc);
      // in3's padding (disjoint from every thread's interior writes).
      for (int i = t; i < kIn3; i += kThreads) {
        const int y = i / P3 % P3, x = i % P3;
        if (y < 2 || y >= P3 - 2 || x < 2 || x >= P3 - 2) in3[i] = 0.0f;
      }
#pragma unroll
      for (int f = 0; f < NF; ++f) in3[((f0 + f) * P3 + q / 8 + 2) * P3 + q % 8 + 2] = pool_relu(acc[f], c_b2[f0 + f]);
    }
    __syncthreads();

    if (t < kConv3Items) {  // conv3 + ReLU + pool: pooled (q / 4, q % 4), filters 2g, 2g + 1
      const int q = t % 16, f0 = t / 16 * 2;
      float acc[2][4] = {};
      conv_2x2<kConv3.in_channels, P3, 2, false>(
          in3, q / 4, q % 4, f0, [](int f, int c, int tap) { return c_w3[(f * kConv3.in_channels + c) * kTaps + tap]; },
          acc);
#pragma unroll
      for (int f = 0; f < 2; ++f) pooled[(f0 + f) * 16 + q] = pool_relu(acc[f], c_b3[f0 + f]);
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
      softmax_fp32(logits);
#pragma unroll
      for (int k = 0; k < kClasses; ++k) probs[std::size_t(img) * kClasses + k] = logits[k];
    }
  }
}

class CudaFusedSession final : public DeviceSession {
 public:
  CudaFusedSession(const Network& net, const RunConfig& config) : DeviceSession("cuda:fused", config, 1 << 20) {
    check(cudaMemcpyToSymbol(c_w1, net.conv1.weights.data(), sizeof(c_w1)), "conv1 weights");
    check(cudaMemcpyToSymbol(c_b1, net.conv1.bias.data(), sizeof(c_b1)), "conv1 bias");
    check(cudaMemcpyToSymbol(c_b2, net.conv2.bias.data(), sizeof(c_b2)), "conv2 bias");
    check(cudaMemcpyToSymbol(c_w3, net.conv3.weights.data(), sizeof(c_w3)), "conv3 weights");
    check(cudaMemcpyToSymbol(c_b3, net.conv3.bias.data(), sizeof(c_b3)), "conv3 bias");
    w2_ = to_device(net.conv2.weights);
    wfc_ = to_device(net.fc.weights);
    bfc_ = to_device(net.fc.bias);
    allow_shared_memory(fused_kernel, kSharedBytes);
    int per_sm = 0, sms = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fused_kernel, kThreads, kSharedBytes), "occupancy");
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "SM count");
    resident_blocks_ = std::max(1, per_sm * sms);
  }

 protected:
  void run(const std::uint8_t* images, float* probs, std::size_t n, cudaStream_t s, LayerEvents*) override {
    const int blocks = int(std::min<std::size_t>(n, std::size_t(resident_blocks_)));
    fused_kernel<<<blocks, kThreads, kSharedBytes, s>>>(images, w2_, wfc_, bfc_, probs, int(n));
  }

 private:
  const float *w2_, *wfc_, *bfc_;
  int resident_blocks_ = 1;
};

const VariantRegistration kFused{"cuda", 3, open_session<CudaFusedSession>,
    {"fused", "the whole network in one kernel: a block per image at a time, every activation in shared memory, uint8 "
              "pixels in, 10 probabilities out", false}};

}  // namespace
}  // namespace cnn::cuda
