// cuda:winograd: the three convolutions as Winograd F(4x4, 5x5) on the FP32 units (the tables and transforms
// of common/kernels/cpu/winograd_f4x5.hpp: 64 multiplies per 4x4 output tile and channel pair instead of
// 400), one persistent kernel per layer (one block per SM), FC + softmax in conv3's kernel.
// Why one kernel per layer and not the whole network in one (cuda:fused_persistent): the transformed
// weights U = G g GT take 64 floats per (channel, filter) pair, 192 KB for the three layers, and a tile's
// transformed input V = BT d B is 4x the input it covers (conv2: 4 KB per tile). One layer's U and a round of
// V fit one SM's shared memory; all three U beside the network's activations do not. The pooled outputs of
// conv1 and conv2 go through device memory (21 KB per image), in chunks of images small enough to stay in
// the L2 cache between the kernels.
// Per round of images a block: loads its input into padded planes; transforms every (tile, channel)
// window into V[tile][position][channel]; then per chunk of tiles the element-wise stage, a thread per
// (Winograd position, filter group, tile subset) with its U[position][channel][filters] in registers
// (loaded once per kernel): M[tile][filter][position] = sum over channels of V * U; and the output stage, a
// thread per (tile, filter): Y = AT M A, 2x2 max pool, bias, ReLU.
#include <cuda_runtime.h>

#include <array>
#include <vector>

#include "backends/cuda/cuda_fused_parts.cuh"
#include "common/kernels/cpu/winograd_f4x5.hpp"
#include "common/kernels/cuda/cuda_device_session.hpp"
#include "common/kernels/cuda/cuda_kernels.cuh"
#include "common/registry.hpp"

namespace cnn::cuda {
namespace {

namespace wg = cnn::winograd;

constexpr int kThreads = 256;
constexpr int kE = wg::kElems;  // Winograd positions of a tile

// One layer's shapes and shared-memory layout. kImages: images per round; kFg: filters per element-wise
// thread; kChunk: tiles per element-wise chunk (M holds one chunk).
template <const ConvSpec& L, int kImagesPerRound, int kFiltersPerThread, int kTilesPerChunk, bool kPooledHere>
struct Layer {
  static constexpr int kImages = kImagesPerRound, kFg = kFiltersPerThread, kChunk = kTilesPerChunk;
  static constexpr int C = L.in_channels, F = L.filters, P = L.padded_side(), IS = L.in_side;
  static constexpr int TS = L.out_side() / wg::kOut, T = TS * TS;  // tiles per image: side, count
  static constexpr int kTiles = kImages * T;
  static constexpr int kPooled = L.pooled_side();
  // V[tile][position][channel], a position's channels padded to kPs floats: a multiple of 4 (float4 loads)
  // that is an odd multiple of 4, so the 8 lanes of a quarter-warp reading 8 consecutive positions as float4
  // hit 32 different banks.
  static constexpr int kPs = (C + 3) / 4 % 2 == 1 ? (C + 3) / 4 * 4 : (C + 3) / 4 * 4 + 4;
  static constexpr int kVTile = kE * kPs;
  // M[tile][filter][position], rows of 68: the output stage's lanes (consecutive filters) read their rows as
  // float4 in different banks; the element-wise stage's lanes (consecutive positions) write one row.
  static constexpr int kMs = kE + 4;
  static constexpr int kGroups = F / kFg;                     // filter groups
  static constexpr int kSubsets = kThreads / (kE * kGroups);  // tile subsets of a chunk
  // Shared memory, in floats.
  static constexpr int kPlane = P * P, kIn = kImages * C * kPlane;
  static constexpr int kOffV = (kIn + 3) / 4 * 4, kOffM = kOffV + kTiles * kVTile;
  static constexpr int kOffPooled = kOffM + kChunk * F * kMs;
  static constexpr int kPooledFloats = kPooledHere ? kImages * F * kPooled * kPooled : 0;  // conv3: for the FC
  static constexpr std::size_t kSharedBytes = std::size_t(kOffPooled + kPooledFloats) * sizeof(float);
  static_assert(F % kFg == 0 && kThreads % (kE * kGroups) == 0 && kChunk % kSubsets == 0, "even work split");
  static_assert(kTiles % kChunk == 0, "whole chunks");
  static_assert(kPs >= C && kPs % 8 == 4, "float4 rows in distinct banks");
  static_assert(kSharedBytes <= 227 * 1024, "fits one SM's shared memory");
  static_assert(L.kernel == kKernel && L.pad == 2 && L.out_side() % wg::kOut == 0, "5x5, pad 2, whole tiles");
};

// Images per round, filters per element-wise thread, tiles per chunk, pooled output kept in shared memory.
using Conv1 = Layer<kConv1, 1, 16, 16, false>;
using Conv2 = Layer<kConv2, 1, 5, 16, false>;
using Conv3 = Layer<kConv3, 4, 5, 16, true>;

__constant__ float c_bias1[kConv1.filters];
__constant__ float c_bias2[kConv2.filters];
__constant__ float c_bias3[kConv3.filters];

template <int kLayer>
__device__ __forceinline__ float bias_of(int f) {
  if constexpr (kLayer == 1) return c_bias1[f];
  if constexpr (kLayer == 2) return c_bias2[f];
  return c_bias3[f];
}

// V = BT d B of the 8x8 window at src (row stride S): BT on the columns, then on the rows.
template <int S>
__device__ __forceinline__ void input_transform(const float* src, float (&v)[kE]) {
  float x[wg::kIn][wg::kIn];
#pragma unroll
  for (int j = 0; j < wg::kIn; ++j) {
    float col[wg::kIn], r[wg::kIn];
#pragma unroll
    for (int i = 0; i < wg::kIn; ++i) col[i] = src[i * S + j];
    wg::bt_apply(col, r);
#pragma unroll
    for (int k = 0; k < wg::kIn; ++k) x[k][j] = r[k];
  }
#pragma unroll
  for (int k = 0; k < wg::kIn; ++k) {
    float r[wg::kIn];
    wg::bt_apply(x[k], r);
#pragma unroll
    for (int l = 0; l < wg::kIn; ++l) v[k * wg::kIn + l] = r[l];
  }
}

// Y = AT M A of one tile's 64 values m (row-major), then the 2x2 max pools of Y: pooled[a][b].
__device__ __forceinline__ void output_transform_pool(const float (&m)[kE], float (&pooled)[2][2]) {
  float z[wg::kOut][wg::kIn];
#pragma unroll
  for (int j = 0; j < wg::kIn; ++j) {
    float col[wg::kIn], r[wg::kOut];
#pragma unroll
    for (int i = 0; i < wg::kIn; ++i) col[i] = m[i * wg::kIn + j];
    wg::at_apply(col, r);
#pragma unroll
    for (int a = 0; a < wg::kOut; ++a) z[a][j] = r[a];
  }
  float y[wg::kOut][wg::kOut];
#pragma unroll
  for (int a = 0; a < wg::kOut; ++a) wg::at_apply(z[a], y[a]);
#pragma unroll
  for (int a = 0; a < 2; ++a)
#pragma unroll
    for (int b = 0; b < 2; ++b)
      pooled[a][b] = fmaxf(fmaxf(y[2 * a][2 * b], y[2 * a][2 * b + 1]), fmaxf(y[2 * a + 1][2 * b], y[2 * a + 1][2 * b + 1]));
}

// One layer over `count` images. kLayer 1: uint8 images in, conv2's input (pooled [n][16][16][16]) out;
// 2: that in, conv3's input ([n][20][8][8]) out; 3: that in, FC + softmax, probabilities out.
// u: U[position][channel][filter] (host-transformed, FP32).
template <int kLayer, class Lay>
__global__ void __launch_bounds__(kThreads, 1)
    winograd_layer_kernel(const void* __restrict__ input, const float* __restrict__ u, float* __restrict__ output,
                          const float* __restrict__ wfc, const float* __restrict__ bfc, int count) {
  constexpr int C = Lay::C, F = Lay::F, P = Lay::P, IS = Lay::IS, TS = Lay::TS, T = Lay::T, kFg = Lay::kFg;
  constexpr int kImages = Lay::kImages, kPs = Lay::kPs, kMs = Lay::kMs, kChunk = Lay::kChunk, kPooledSide = Lay::kPooled;
  extern __shared__ __align__(16) float smem[];
  float* in = smem;
  float* vbuf = smem + Lay::kOffV;
  float* mbuf = smem + Lay::kOffM;
  float* pooled_buf = smem + Lay::kOffPooled;
  const int t = threadIdx.x;

  // This thread's element-wise role, fixed for the kernel: position p, filter group g, tile subset s, and
  // its U in registers.
  const int p = t % kE, g = t / kE % Lay::kGroups, s = t / (kE * Lay::kGroups);
  float uw[C][kFg];
#pragma unroll
  for (int c = 0; c < C; ++c)
#pragma unroll
    for (int f = 0; f < kFg; ++f) uw[c][f] = __ldg(u + (p * C + c) * F + g * kFg + f);

  // The padding of the input planes: only interiors are written below.
  for (int i = t; i < Lay::kIn; i += kThreads) in[i] = 0.0f;

  for (int first = blockIdx.x * kImages; first < count; first += gridDim.x * kImages) {
    const int valid = min(kImages, count - first);
    __syncthreads();  // the previous round is done with the input planes and V

    // Input -> padded planes.
    if constexpr (kLayer == 1) {
      const auto* words = reinterpret_cast<const std::uint32_t*>(static_cast<const std::uint8_t*>(input) +
                                                                 std::size_t(first) * kImageBytes);
      for (int i = t; i < valid * kImageBytes / 4; i += kThreads) {
        const std::uint32_t w = __ldg(words + i);
        const int b = i / (kImageBytes / 4), q = 4 * (i % (kImageBytes / 4));
        const int c = q / kImagePlane, y = q / kImageSide % kImageSide, x = q % kImageSide;
        float* dst = in + (b * C + c) * Lay::kPlane + (y + 2) * P + x + 2;
#pragma unroll
        for (int j = 0; j < 4; ++j) dst[j] = normalise_pixel_fp32(std::uint8_t(w >> (8 * j)));
      }
    } else {
      const float4* src = reinterpret_cast<const float4*>(static_cast<const float*>(input) +
                                                          std::size_t(first) * C * IS * IS);
      for (int i = t; i < valid * C * IS * IS / 4; i += kThreads) {
        const float4 w = __ldcg(src + i);  // written by the previous kernel: L2, not a stale L1 line
        const int q = 4 * i, bc = q / (IS * IS), y = q / IS % IS, x = q % IS;
        float* dst = in + bc * Lay::kPlane + (y + 2) * P + x + 2;
        dst[0] = w.x, dst[1] = w.y, dst[2] = w.z, dst[3] = w.w;
      }
    }
    __syncthreads();

    // Input transform: a thread per (tile, channel).
    for (int i = t; i < valid * T * C; i += kThreads) {
      const int c = i % C, tile = i / C, b = tile / T, ty = tile % T / TS, tx = tile % TS;
      float v[kE];
      input_transform<P>(in + (b * C + c) * Lay::kPlane + wg::kOut * ty * P + wg::kOut * tx, v);
      float* dst = vbuf + tile * Lay::kVTile + c;
#pragma unroll
      for (int e = 0; e < kE; ++e) dst[e * kPs] = v[e];
    }

    for (int chunk = 0; chunk * kChunk < valid * T; ++chunk) {
      __syncthreads();  // V is complete / the previous chunk's output stage is done with M

      // Element-wise: M[tile][g kFg + f][p] over this thread's tiles of the chunk.
      for (int lt = s; lt < kChunk; lt += Lay::kSubsets) {
        const float* v = vbuf + (chunk * kChunk + lt) * Lay::kVTile + p * kPs;
        float acc[kFg] = {};
#pragma unroll
        for (int c0 = 0; c0 < C; c0 += 4) {
          const float4 x4 = *reinterpret_cast<const float4*>(v + c0);
          const float x[4] = {x4.x, x4.y, x4.z, x4.w};
#pragma unroll
          for (int k = 0; k < 4; ++k)
            if (c0 + k < C)
#pragma unroll
              for (int f = 0; f < kFg; ++f) acc[f] += x[k] * uw[c0 + k][f];
        }
        float* m = mbuf + (lt * F + g * kFg) * kMs + p;
#pragma unroll
        for (int f = 0; f < kFg; ++f) m[f * kMs] = acc[f];
      }
      __syncthreads();

      // Output: a thread per (tile, filter) of the chunk.
      for (int i = t; i < kChunk * F; i += kThreads) {
        const int lt = i / F, f = i % F, tile = chunk * kChunk + lt;
        if (tile >= valid * T) break;
        float m[kE];
        const float4* src = reinterpret_cast<const float4*>(mbuf + i * kMs);
#pragma unroll
        for (int e = 0; e < kE / 4; ++e) {
          const float4 q = src[e];
          m[4 * e] = q.x, m[4 * e + 1] = q.y, m[4 * e + 2] = q.z, m[4 * e + 3] = q.w;
        }
        float pooled[2][2];
        output_transform_pool(m, pooled);
        const int b = tile / T, ty = tile % T / TS, tx = tile % TS;
        const float bias = bias_of<kLayer>(f);
#pragma unroll
        for (int a = 0; a < 2; ++a)
#pragma unroll
          for (int c = 0; c < 2; ++c) {
            const float val = fmaxf(pooled[a][c] + bias, 0.0f);
            const int at = (f * kPooledSide + 2 * ty + a) * kPooledSide + 2 * tx + c;
            if constexpr (kLayer == 3)
              pooled_buf[b * F * kPooledSide * kPooledSide + at] = val;
            else
              output[(std::size_t(first) + b) * F * kPooledSide * kPooledSide + at] = val;
          }
      }
    }

    if constexpr (kLayer == 3) {
      __syncthreads();
      const int warp = t / 32, lane = t % 32;
      if (warp < valid)
        fc_softmax_warp(pooled_buf + warp * kFc.inputs(), wfc, bfc, output + (std::size_t(first) + warp) * kClasses,
                        lane);
    }
  }
}

// U = G g GT of every (channel, filter) pair, in FP64 (winograd_f4x5.hpp), as U[position][channel][filter].
std::vector<float> transformed_weights(const ConvSpec& spec, const std::vector<float>& w) {
  const int C = spec.in_channels, F = spec.filters;
  std::vector<float> u(std::size_t(kE) * C * F);
  for (int f = 0; f < F; ++f)
    for (int c = 0; c < C; ++c) {
      double g[kTaps];
      for (int tap = 0; tap < kTaps; ++tap) g[tap] = w[(std::size_t(f) * C + c) * kTaps + tap];
      for (int k = 0; k < wg::kIn; ++k)
        for (int l = 0; l < wg::kIn; ++l)
          u[(std::size_t(k * wg::kIn + l) * C + c) * F + f] = float(wg::transformed_weight(g, k, l));
    }
  return u;
}

template <int kLayer, class Lay>
void allow_shared_memory() {
  check(cudaFuncSetAttribute(winograd_layer_kernel<kLayer, Lay>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             int(Lay::kSharedBytes)),
        "shared memory size");
}

class CudaWinogradSession final : public DeviceSession {
 public:
  // Chunks of 2048 images: conv1's and conv2's pooled outputs (44 MB) stay in the 50 MB L2 between kernels.
  CudaWinogradSession(const Network& net, const RunConfig& config)
      : DeviceSession("cuda:winograd", config, 2048) {
    check(cudaMemcpyToSymbol(c_bias1, net.conv1.bias.data(), sizeof(c_bias1)), "conv1 bias");
    check(cudaMemcpyToSymbol(c_bias2, net.conv2.bias.data(), sizeof(c_bias2)), "conv2 bias");
    check(cudaMemcpyToSymbol(c_bias3, net.conv3.bias.data(), sizeof(c_bias3)), "conv3 bias");
    u1_ = to_device(transformed_weights(kConv1, net.conv1.weights));
    u2_ = to_device(transformed_weights(kConv2, net.conv2.weights));
    u3_ = to_device(transformed_weights(kConv3, net.conv3.weights));
    wfc_ = to_device(net.fc.weights);
    bfc_ = to_device(net.fc.bias);
    allow_shared_memory<1, Conv1>();
    allow_shared_memory<2, Conv2>();
    allow_shared_memory<3, Conv3>();
    check(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, 0), "SM count");
    // The intermediate activations: one set per slot. end_to_end() runs chunks on several streams at once;
    // a chunk takes the next slot and first waits until the last chunk that used it is done.
    for (Slot& slot : slots_) {
      slot.act2 = static_cast<float*>(alloc(batch_ * kAct2 * sizeof(float)));
      slot.act3 = static_cast<float*>(alloc(batch_ * kAct3 * sizeof(float)));
      check(cudaEventCreateWithFlags(&slot.done, cudaEventDisableTiming), "cudaEventCreate");
    }
  }
  ~CudaWinogradSession() override {
    for (Slot& slot : slots_) cudaEventDestroy(slot.done);
  }

 protected:
  void run(const std::uint8_t* images, float* probs, std::size_t n, cudaStream_t s, LayerEvents*) override {
    Slot& slot = slots_[next_slot_];
    next_slot_ = (next_slot_ + 1) % kSlots;
    check(cudaStreamWaitEvent(s, slot.done, 0), "cudaStreamWaitEvent");
    const int count = int(n);
    winograd_layer_kernel<1, Conv1><<<blocks<Conv1>(n), kThreads, Conv1::kSharedBytes, s>>>(
        images, u1_, slot.act2, nullptr, nullptr, count);
    winograd_layer_kernel<2, Conv2><<<blocks<Conv2>(n), kThreads, Conv2::kSharedBytes, s>>>(
        slot.act2, u2_, slot.act3, nullptr, nullptr, count);
    winograd_layer_kernel<3, Conv3><<<blocks<Conv3>(n), kThreads, Conv3::kSharedBytes, s>>>(
        slot.act3, u3_, probs, wfc_, bfc_, count);
    check(cudaEventRecord(slot.done, s), "cudaEventRecord");
  }

 private:
  static constexpr int kSlots = 4;
  static constexpr std::size_t kAct2 = std::size_t(kConv2.in_channels) * kConv2.in_side * kConv2.in_side;
  static constexpr std::size_t kAct3 = std::size_t(kConv3.in_channels) * kConv3.in_side * kConv3.in_side;
  struct Slot {
    float* act2 = nullptr;  // conv1's pooled output, conv2's input
    float* act3 = nullptr;  // conv2's pooled output, conv3's input
    cudaEvent_t done = nullptr;
  };
  template <class Lay>
  int blocks(std::size_t n) const {
    return persistent_blocks(n, Lay::kImages, sms_);
  }

  const float *u1_ = nullptr, *u2_ = nullptr, *u3_ = nullptr, *wfc_ = nullptr, *bfc_ = nullptr;
  int sms_ = 1;
  std::array<Slot, kSlots> slots_{};
  int next_slot_ = 0;
};

const VariantRegistration kWinograd{"cuda", 7, open_session<CudaWinogradSession>,
    {"winograd", "Winograd F(4x4,5x5) on the FP32 units: a persistent kernel per layer, V and M staged in shared "
                 "memory, U in registers; 6.25x fewer multiplies than the direct convolution", false,
     {"fp32_fma", wg::kExecutedFlopPerImage}}};

}  // namespace
}  // namespace cnn::cuda
