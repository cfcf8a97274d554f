// cuda:fused_persistent, the whole network in one kernel, one block per SM working on a group of kImageGroup
// images at a time. What it changes against cuda:fused (a block per image, 3 blocks per SM), and why:
// - Every weight lives in shared memory once per SM (77 KB), not once per block: cuda:fused could keep only
//   conv2's there and read conv1/conv3 from constant memory, whose cache missed (conv3: 40 KB).
// - All warps of an SM run the same layer at the same time, so only one layer's code is hot: cuda:fused's
//   three blocks ran different layers and thrashed the instruction cache ("no instruction" stalls).
// - Work per layer is split into equal warp items (image, filter group, rows) with 20-40 accumulators per
//   thread, and weights are warp-uniform (shared-memory broadcasts): conv3 uses every warp (its channel
//   halves are summed with a shuffle), where cuda:fused left 96 of 256 threads idle.
// - 4 barriers per group of 3 images instead of 6 per image.
// Shared memory (204 KB): weights, then per image the padded conv1 input (conv3's input aliases it), the
// padded conv2 input, the 320 pooled values. Padding is stored, so the 5x5 windows need no bounds checks.
#include <algorithm>

#include "common/kernels/cuda/cuda_device_session.hpp"
#include "backends/cuda/cuda_fused_parts.cuh"
#include "common/kernels/cuda/cuda_kernels.cuh"
#include "common/registry.hpp"

namespace cnn::cuda {
namespace {

constexpr int kImageGroup = 3;  // images a block works on at a time; 4 would not leave room for the weights
constexpr int kWarps = 12, kThreads = 32 * kWarps;
// Channel-loop unrolling per layer, the fastest on the H200 (backends/cuda/README.md): conv2 unrolled by 2
// has a body too large for the instruction cache ("no instruction" stalls); conv1 fully unrolled is slower.
constexpr int kUnroll1 = 1, kUnroll2 = 1, kUnroll3 = 2;
constexpr int P1 = kConv1.padded_side(), P2 = kConv2.padded_side(), P3 = kConv3.padded_side();
// Row stride of conv2's input: 24, not 20, so that the two pooled rows a half-warp reads are 16 banks
// apart and its 64-bit patch loads never conflict.
constexpr int S2 = 24;
constexpr int C1 = kConv1.in_channels, C2 = kConv2.in_channels, C3 = kConv3.in_channels;
constexpr int F1 = kConv1.filters, F2 = kConv2.filters, F3 = kConv3.filters;
static_assert(S2 >= P2, "conv2's input rows hold their padding");
static_assert(F1 == 16 && F2 == 20 && F3 == 20 && C3 == 20 && kConv1.kernel == 5 && kConv2.kernel == 5 &&
                  kConv3.kernel == 5,
              "the warp items below are laid out for this network");

// Shared memory, in floats.
constexpr int kW1 = C1 * kTaps * F1;          // [c][tap][16]
constexpr int kW2 = C2 * kTaps * F2;          // [c][tap][20], two groups of 10 interleaved (see stage_weights)
constexpr int kW3Half = C3 / 2 * kTaps * 16;  // [half][c'][tap][group][4]: the first 4 filters of each group of 5
constexpr int kW3HalfStride = kW3Half + 4;    // + 4: the halves' float4s fall in different banks
constexpr int kW3RestHalf = C3 / 2 * kTaps * 4;  // [half][c'][tap][group]: the fifth filter
constexpr int kIn1 = C1 * P1 * P1;            // 3888
constexpr int kIn2 = C2 * P2 * S2;            // 7680
constexpr int kIn3 = C3 * P3 * P3;            // 2880
constexpr int kPooled = kFc.inputs();
constexpr int kImage = kIn1 + kIn2 + kPooled;  // per image
constexpr int kOffW2 = kW1, kOffW3 = kOffW2 + kW2, kOffW3Rest = kOffW3 + 2 * kW3HalfStride;
constexpr int kOffImages = kOffW3Rest + 2 * kW3RestHalf;
constexpr std::size_t kSharedBytes = std::size_t(kOffImages + kImageGroup * kImage) * sizeof(float);
static_assert(kIn3 <= kIn1, "conv3 input aliases conv1 input");
static_assert(kOffW2 % 4 == 0 && kOffW3 % 4 == 0 && kW3HalfStride % 4 == 0, "float4 alignment");
static_assert(kOffImages % 2 == 0 && kImage % 2 == 0 && kIn1 % 2 == 0, "patches are read as float2");
constexpr int kPixelWords = (kImageGroup * kImageBytes / 4 + kThreads - 1) / kThreads;  // per thread and group
static_assert(kSharedBytes <= 227 * 1024, "fits one SM's shared memory");

__constant__ float c_b1[F1];
__constant__ float c_b2[F2];
__constant__ float c_b3[F3];

// conv3's input, padded 12x12 planes.
__device__ __forceinline__ int in3_at(int c, int y, int x) { return (c * P3 + y) * P3 + x; }

// Canonical weights [f][c][tap] -> the shared-memory layouts above. Once per block.
__device__ void stage_weights(float* s, const float* w1, const float* w2, const float* w3) {
  const int t = threadIdx.x;
  for (int i = t; i < F1 * C1 * kTaps; i += kThreads) {
    const int f = i / (C1 * kTaps), ct = i % (C1 * kTaps);
    s[ct * F1 + f] = __ldg(w1 + i);
  }
  // conv2, per (c, tap), 20 floats: [g0 f0-3][g1 f0-3][g0 f4-7][g1 f4-7][g0 f8-9][g1 f8-9] for groups
  // g = f / 10, so a warp of group g reads its 10 weights of a tap as float4 + float4 + float2.
  for (int i = t; i < F2 * C2 * kTaps; i += kThreads) {
    const int f = i / (C2 * kTaps), ct = i % (C2 * kTaps), g = f / 10, j = f % 10;
    const int slot = j < 4 ? 4 * g + j : j < 8 ? 8 + 4 * g + (j - 4) : 16 + 2 * g + (j - 8);
    s[kOffW2 + ct * F2 + slot] = __ldg(w2 + i);
  }
  // conv3: groups of 5 filters; channel half h = c / 10.
  for (int i = t; i < F3 * C3 * kTaps; i += kThreads) {
    const int f = i / (C3 * kTaps), c = i % (C3 * kTaps) / kTaps, tap = i % kTaps;
    const int g = f / 5, j = f % 5, h = c / (C3 / 2), ct = (c % (C3 / 2)) * kTaps + tap;
    if (j < 4)
      s[kOffW3 + h * kW3HalfStride + (ct * 4 + g) * 4 + j] = __ldg(w3 + i);
    else
      s[kOffW3Rest + h * kW3RestHalf + ct * 4 + g] = __ldg(w3 + i);
  }
  // conv2's input padding is never written again (only interiors are); conv1's is, every group (conv3's
  // input aliases it).
  for (int i = t; i < kImageGroup * kIn2; i += kThreads) s[kOffImages + i / kIn2 * kImage + kIn1 + i % kIn2] = 0.0f;
}

__global__ void __launch_bounds__(kThreads, 1)
    fused_persistent_kernel(const std::uint8_t* __restrict__ images, const float* __restrict__ w1,
                       const float* __restrict__ w2, const float* __restrict__ w3, const float* __restrict__ wfc,
                       const float* __restrict__ bfc, float* __restrict__ probs, int count) {
  extern __shared__ __align__(16) float smem[];
  const float4* w1s = reinterpret_cast<const float4*>(smem);
  const float* w2s = smem + kOffW2;
  const float* w3q = smem + kOffW3;
  const float* w3r = smem + kOffW3Rest;
  float* img_base = smem + kOffImages;
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  // The group's pixels, 4 uint8 per word, loaded one group ahead (before conv3 of the previous group), so
  // the DRAM latency hides behind conv3 and the FC layer.
  std::uint32_t pixels[kPixelWords];
  const auto fetch = [&](int first) {
    fetch_pixel_words<kThreads>(images, first, min(kImageGroup, count - first), pixels);
  };
  if (blockIdx.x * kImageGroup < count) fetch(blockIdx.x * kImageGroup);
  stage_weights(smem, w1, w2, w3);

  for (int first = blockIdx.x * kImageGroup; first < count; first += gridDim.x * kImageGroup) {
    const int valid = min(kImageGroup, count - first);  // images of this group
    __syncthreads();  // weights staged / the previous group is done with conv1's input

    // Pixels -> conv1's padded input; then its border (conv3 wrote over it).
#pragma unroll
    for (int k = 0; k < kPixelWords; ++k) {
      const int i = t + k * kThreads;
      if (i >= valid * (kImageBytes / 4)) break;
      const int b = i / (kImageBytes / 4), p = 4 * (i % (kImageBytes / 4));
      const int c = p / kImagePlane, y = p / kImageSide % kImageSide, x = p % kImageSide, pad = kConv1.pad;
      float* dst = img_base + b * kImage + (c * P1 + y + pad) * P1 + x + pad;
#pragma unroll
      for (int j = 0; j < 4; ++j) dst[j] = normalise_pixel_fp32(std::uint8_t(pixels[k] >> (8 * j)));
    }
    for (int i = t; i < valid * C1 * kBorder<P1>; i += kThreads) {
      const int b = i / (C1 * kBorder<P1>), c = i / kBorder<P1> % C1;
      img_base[b * kImage + c * P1 * P1 + border_at<P1>(i % kBorder<P1>)] = 0.0f;
    }
    __syncthreads();

    // conv1 + ReLU + pool. Warp item (image, filter half, pair of pooled rows): lane -> pooled (py, px),
    // 8 filters x 2x2 outputs in registers.
    for (int item = warp; item < valid * 2 * 8; item += kWarps) {
      const int b = item / 16, half = item / 8 % 2, py = 2 * (item % 8) + lane / 16, px = lane % 16;
      const float* in = img_base + b * kImage;
      float acc[8][4] = {};
#pragma unroll kUnroll1
      for (int c = 0; c < C1; ++c) {
        float patch[6][6];
        load_patch2<P1>(in + (c * P1 + 2 * py) * P1 + 2 * px, patch);
        accumulate_taps(acc, patch, [&](int tap, float (&w)[8]) {
          const float4 a = w1s[((c * kTaps + tap) * F1 + 8 * half) / 4];
          const float4 d = w1s[((c * kTaps + tap) * F1 + 8 * half) / 4 + 1];
          w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w, w[4] = d.x, w[5] = d.y, w[6] = d.z, w[7] = d.w;
        });
      }
      float* out = img_base + b * kImage + kIn1;
#pragma unroll
      for (int f = 0; f < 8; ++f)
        out[((8 * half + f) * P2 + py + 2) * S2 + px + 2] = pool_relu(acc[f], c_b1[8 * half + f]);
    }
    __syncthreads();

    // conv2 + ReLU + pool. Warp item (image, group of 10 filters, half of the 64 pooled outputs): 40
    // accumulators per thread. Then conv3's input border (conv1's input is dead).
    for (int item = warp; item < valid * 4; item += kWarps) {
      const int b = item / 4, g = item / 2 % 2, q = 32 * (item % 2) + lane, py = q / 8, px = q % 8;
      const float* in = img_base + b * kImage + kIn1;
      float acc[10][4] = {};
#pragma unroll kUnroll2
      for (int c = 0; c < C2; ++c) {
        float patch[6][6];
        load_patch2<S2>(in + (c * P2 + 2 * py) * S2 + 2 * px, patch);
        accumulate_taps(acc, patch, [&](int tap, float (&w)[10]) {
          const float* ws = w2s + (c * kTaps + tap) * F2;
          const float4 a = *reinterpret_cast<const float4*>(ws + 4 * g);
          const float4 d = *reinterpret_cast<const float4*>(ws + 8 + 4 * g);
          const float2 e = *reinterpret_cast<const float2*>(ws + 16 + 2 * g);
          w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w, w[4] = d.x, w[5] = d.y, w[6] = d.z, w[7] = d.w;
          w[8] = e.x, w[9] = e.y;
        });
      }
      float* out = img_base + b * kImage;  // conv3's input
#pragma unroll
      for (int f = 0; f < 10; ++f) out[in3_at(10 * g + f, py + 2, px + 2)] = pool_relu(acc[f], c_b2[10 * g + f]);
    }
    for (int i = t; i < valid * C3 * kBorder<P3>; i += kThreads) {
      const int b = i / (C3 * kBorder<P3>), c = i / kBorder<P3> % C3, at = border_at<P3>(i % kBorder<P3>);
      img_base[b * kImage + in3_at(c, at / P3, at % P3)] = 0.0f;
    }
    __syncthreads();

    if (first + gridDim.x * kImageGroup < count) fetch(first + gridDim.x * kImageGroup);

    // conv3 + ReLU + pool. Warp item (image, group of 5 filters): lanes 0-15 the 16 pooled outputs over
    // channels 0-9, lanes 16-31 the same over channels 10-19; a shuffle adds the halves.
    for (int item = warp; item < valid * 4; item += kWarps) {
      const int b = item / 4, g = item % 4, h = lane / 16, q = lane % 16, py = q / 4, px = q % 4;
      const float* in = img_base + b * kImage;
      const float4* wq = reinterpret_cast<const float4*>(w3q + h * kW3HalfStride);
      const float* wr = w3r + h * kW3RestHalf;
      float acc[5][4] = {};
#pragma unroll kUnroll3
      for (int c = 0; c < C3 / 2; ++c) {
        float patch[6][6];
        load_patch2<P3>(in + in3_at(h * (C3 / 2) + c, 2 * py, 2 * px), patch);
        accumulate_taps(acc, patch, [&](int tap, float (&w)[5]) {
          const float4 a = wq[(c * kTaps + tap) * 4 + g];
          w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w, w[4] = wr[(c * kTaps + tap) * 4 + g];
        });
      }
#pragma unroll
      for (int f = 0; f < 5; ++f)
#pragma unroll
        for (int k = 0; k < 4; ++k) acc[f][k] += __shfl_xor_sync(0xffffffffu, acc[f][k], 16);
      if (h == 0) {
        float* pooled = img_base + b * kImage + kIn1 + kIn2;
#pragma unroll
        for (int f = 0; f < 5; ++f) pooled[(5 * g + f) * 16 + q] = pool_relu(acc[f], c_b3[5 * g + f]);
      }
    }
    __syncthreads();

    // FC + softmax: warp b takes image b.
    if (warp < valid)
      fc_softmax_warp(img_base + warp * kImage + kIn1 + kIn2, wfc, bfc, probs + std::size_t(first + warp) * kClasses,
                      lane);
  }
}

class CudaFusedPersistentSession final : public DeviceSession {
 public:
  CudaFusedPersistentSession(const Network& net, const RunConfig& config)
      : DeviceSession("cuda:fused_persistent", config, 1 << 20) {
    check(cudaMemcpyToSymbol(c_b1, net.conv1.bias.data(), sizeof(c_b1)), "conv1 bias");
    check(cudaMemcpyToSymbol(c_b2, net.conv2.bias.data(), sizeof(c_b2)), "conv2 bias");
    check(cudaMemcpyToSymbol(c_b3, net.conv3.bias.data(), sizeof(c_b3)), "conv3 bias");
    w1_ = to_device(net.conv1.weights);
    w2_ = to_device(net.conv2.weights);
    w3_ = to_device(net.conv3.weights);
    wfc_ = to_device(net.fc.weights);
    bfc_ = to_device(net.fc.bias);
    allow_shared_memory(fused_persistent_kernel, kSharedBytes);
    check(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, 0), "SM count");
  }

 protected:
  void run(const std::uint8_t* images, float* probs, std::size_t n, cudaStream_t s, LayerEvents*) override {
    const int blocks = persistent_blocks(n, kImageGroup, sms_);
    fused_persistent_kernel<<<blocks, kThreads, kSharedBytes, s>>>(images, w1_, w2_, w3_, wfc_, bfc_, probs, int(n));
  }

 private:
  const float *w1_, *w2_, *w3_, *wfc_, *bfc_;
  int sms_ = 1;
};

const VariantRegistration kFusedPersistent{"cuda", 4, open_session<CudaFusedPersistentSession>,
    {"fused_persistent", "the whole network in one kernel: a block per SM on 3 images at a time, all weights and "
                         "activations in shared memory, every warp busy in every layer", false}};

}  // namespace
}  // namespace cnn::cuda
