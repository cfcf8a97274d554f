// cuda:winograd: the three convolutions as Winograd F(4x4, 5x5) on the FP32 units (the tables and transforms
// of common/kernels/cpu/winograd_f4x5.hpp: 64 multiplies per 4x4 output tile and channel pair instead of
// 400), one persistent kernel per layer (one block per SM), FC + softmax in conv3's kernel.
// cuda:winograd_conv1_mma: the same with conv1 as a direct implicit GEMM on the tensor cores (conv1_mma below).
// cuda:winograd_mma: conv1 as that GEMM over pixels instead of planes (cuda_conv1_pixels.cuh), and conv2's and
// conv3's element-wise stages on the tensor cores (MmaElementwise).
// Why one kernel per layer and not the whole network in one (cuda:fused_persistent): the transformed
// weights U = G g GT take 64 floats per (channel, filter) pair, 192 KB for the three layers, and a tile's
// transformed input V = BT d B is 4x the input it covers (conv2: 4 KB per tile). Per layer, U fits in the
// registers of the element-wise threads and a round of V and M fits one SM's shared memory; the three layers'
// working sets together do not. The pooled outputs of conv1 and conv2 go through device memory (21 KB per
// image), in chunks of up to 65536 images.
// Per round of images a block: loads its input into padded planes; transforms every (tile, channel) window
// into V[tile][position][channel]; then per chunk of tiles the element-wise stage, a thread per (Winograd
// position, filter group, tile subset) with its U[position][channel][filters] in registers (loaded once per
// kernel): M[filter][tile][position] = sum over channels of V * U; and the output stage, a thread per
// (tile, filter): Y = AT M A, 2x2 max pool, bias, ReLU. conv2 (one image, one chunk a round) runs the next
// image's input transform in the same pass as this image's output stage.
// conv2's and conv3's kernels are launched to start on the SMs that the previous kernel's last rounds leave
// idle (programmatic dependent launch), where they load U, then take the images of the previous kernel's
// earlier rounds before it has finished its last (Handoff, cuda_kernels.cuh).
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <type_traits>
#include <vector>

#include "backends/cuda/cuda_conv1_pixels.cuh"
#include "backends/cuda/cuda_fp16x3.cuh"
#include "backends/cuda/cuda_fused_mma.cuh"
#include "backends/cuda/cuda_fused_parts.cuh"
#include "backends/cuda/cuda_winograd_layer.cuh"
#include "common/kernels/cpu/winograd_f4x5.hpp"
#include "common/kernels/cuda/cuda_device_session.hpp"
#include "common/kernels/cuda/cuda_kernels.cuh"
#include "common/registry.hpp"

namespace cnn::cuda {
namespace {

// Threads, images per round, where the element-wise stage runs (on the FP32 units: filters per element-wise
// thread), tiles per chunk, pooled output kept in shared memory, how the input arrives. conv2: 10 filters per
// element-wise thread (160 of U's floats in registers, 255 registers at 8 warps), so that each V value loaded from
// shared memory feeds 10 FMAs rather than 4: with 4 the stage was bound by shared-memory loads as much as by the
// FMAs (H200, ncu: conv2 158 -> 142 us per 4096 images; 320 threads with 4 filters made the output stage's 16 x 20
// (tile, filter) pairs one pass). conv3 keeps 320 threads and 4 filters: 10 filters spill there (its U is 20
// channels; its kernel 76 -> 89-95 us); it has no registers to spare for a prefetch (168 per thread at 10 warps).
using Conv1 = Layer<kConv1, 512, 1, OnFp32Units<16>, 32, false, kRegisters>;
using Conv2 = Layer<kConv2, 256, 1, OnFp32Units<10>, 16, false, kRegisters, /*kOverlap=*/true>;
using Conv3 = Layer<kConv3, 320, 4, OnFp32Units<4>, 16, true, kAsync>;
using Conv3Small = Layer<kConv3, 320, 2, OnFp32Units<4>, 8, true, kAsync>;  // for few images (CudaWinogradSession::small)
// cuda:winograd_mma: conv2's and conv3's element-wise stages on the tensor cores. conv3 with 8 warps: the
// positions split evenly, and a thread may hold 8 positions' U fragments (144 registers).
using Conv2Mma = Layer<kConv2, 256, 1, OnTensorCores, 16, false, kRegisters, /*kOverlap=*/true>;
// conv3 in 4-image rounds also for few images (unlike Conv3Small): H200, alternating, at 1200 images 0.0815 ->
// 0.0765 ms (results/h200/winograd-mma/conv3-four-images/): with conv2 handing its rounds over, conv3's blocks
// start as conv2's leave the SMs, and 2.27 rounds of 4 images end sooner than 4.55 rounds of 2.
using Conv3Mma = Layer<kConv3, 256, 4, OnTensorCores, 16, true, kAsync, /*kOverlap=*/true>;

__constant__ float c_bias1[kConv1.filters];
__constant__ float c_bias2[kConv2.filters];
__constant__ float c_bias3[kConv3.filters];

template <int kLayer>
__device__ __forceinline__ float bias_of(int f) {
  if constexpr (kLayer == 1) return c_bias1[f];
  if constexpr (kLayer == 2) return c_bias2[f];
  return c_bias3[f];
}

// Images [first, first + kImages) (those below count) into this thread's words: conv1's pixels as the fused
// kernels fetch them, the other layers' activations from L2.
template <int kLayer, class Lay, class Word, int N>
__device__ __forceinline__ void fetch_input(const void* input, int first, int count, const Handoff& from,
                                            Word (&w)[N]) {
  if constexpr (kLayer == 1) {
    fetch_pixel_words<Lay::kThreads>(static_cast<const std::uint8_t*>(input), first,
                                     min(Lay::kImages, count - first), w);
  } else {
    using In = typename Lay::template Input<kLayer>;
    if constexpr (Lay::kHandoff) from.before_reading(first, min(Lay::kImages, count - first));
    const int n = min(Lay::kImages, count - first) * In::kPerImage;
    const Word* src = static_cast<const Word*>(input) + std::size_t(first) * In::kPerImage;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const int i = threadIdx.x + k * Lay::kThreads;
      if (i < n) w[k] = __ldcg(src + i);  // written by the previous kernel: from L2, never a stale L1 line
    }
  }
}

// The words of fetch_input into the interiors of the padded planes.
template <int kLayer, class Lay, class Word, int N>
__device__ __forceinline__ void store_input(const Word (&w)[N], int valid, float* in) {
  using In = typename Lay::template Input<kLayer>;
  constexpr int P = Lay::P, C = Lay::C, IS = Lay::IS;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const int i = threadIdx.x + k * Lay::kThreads;
    if (i >= valid * In::kPerImage) break;
    const int q = 4 * i, bc = q / (IS * IS), y = q / IS % IS, x = q % IS;  // (image, channel), row, column
    float* dst = in + bc * Lay::kPlane + (y + 2) * P + x + 2;
    if constexpr (kLayer == 1) {
#pragma unroll
      for (int j = 0; j < 4; ++j) dst[j] = normalise_pixel_fp32(std::uint8_t(w[k] >> (8 * j)));
    } else {
      dst[0] = w[k].x, dst[1] = w[k].y, dst[2] = w[k].z, dst[3] = w[k].w;
    }
    static_assert(C * IS * IS % 4 == 0, "whole words per image");
  }
}

// Images [first, first + kImages) (those below count) of conv2's or conv3's input (floats) straight into the
// interiors of the padded planes with asynchronous 4- or 8-byte copies (planes an odd number of floats apart
// allow no wider copy): issued once the planes are free, waited for at the next round's start, they cost no
// registers.
template <class Lay>
__device__ __forceinline__ void copy_input_async(const float* __restrict__ input, int first, int count,
                                                 const Handoff& from, float* in) {
  constexpr int P = Lay::P, IS = Lay::IS, kFloats = Lay::C * IS * IS;  // per image
  // Pairs of floats where the planes start 16-byte aligned (kRowQuads): the interiors then start 8 bytes in.
  constexpr int kW = Lay::kRowQuads ? 2 : 1;
  static_assert(kW == 1 || (P % 2 == 0 && IS % 2 == 0 && Lay::kPlane % 2 == 0), "8-byte aligned pairs");
  if constexpr (Lay::kHandoff) from.before_reading(first, min(Lay::kImages, count - first));
  // A thread's copies are kStep floats apart, a whole number of planes: the same row and column of a plane
  // kPlaneStep floats further each time, so that its addresses are worked out once, not per copy (H200: conv3
  // 3 % fewer instructions, winograd_mma 1 % faster, results/ab/h200-conv3-copies/).
  constexpr int kStep = kW * Lay::kThreads, kPlaneStep = kStep / (IS * IS) * Lay::kPlane;
  constexpr int kCopies = (Lay::kImages * kFloats / kW + Lay::kThreads - 1) / Lay::kThreads;  // at most, a thread
  static_assert(Lay::kInput != kAsync || kStep % (IS * IS) == 0, "a thread's copies whole planes apart");
  const int n = min(Lay::kImages, count - first) * kFloats / kW;
  // This thread's first copy: (image, channel), row, column.
  const unsigned q = kW * threadIdx.x, bc = q / (IS * IS), y = q / IS % IS, x = q % IS;
  const float* src = input + std::size_t(first) * kFloats + q;
  const auto dst = static_cast<unsigned>(__cvta_generic_to_shared(in + bc * Lay::kPlane + (y + 2) * P + x + 2));
#pragma unroll
  for (int k = 0; k < kCopies; ++k)
    if (int(threadIdx.x) + k * Lay::kThreads < n)
      asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst + 4 * k * kPlaneStep), "l"(src + k * kStep),
                   "n"(4 * kW) : "memory");
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

__device__ __forceinline__ void wait_async_copies() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

// One layer over `count` images. kLayer 1: uint8 images in, conv2's input (pooled [n][16][16][16]) out;
// 2: that in, conv3's input ([n][20][8][8]) out; 3: that in, FC + softmax, probabilities out.
// u: U[position][channel][filter] (host-transformed, FP32).
template <int kLayer, class Lay>
__global__ void __launch_bounds__(Lay::kThreads, 1)
    winograd_layer_kernel(const void* __restrict__ input, const void* __restrict__ u, float* __restrict__ output,
                          const float* __restrict__ wfc, const float* __restrict__ bfc, int count, Handoff from,
                          Handoff to) {
  constexpr int C = Lay::C, F = Lay::F, P = Lay::P, T = Lay::T;
  constexpr int kThreads = Lay::kThreads, kImages = Lay::kImages, kPs = Lay::kPs, kMs = Lay::kMs;
  constexpr int kChunk = Lay::kChunk, kPooledSide = Lay::kPooled;
  extern __shared__ __align__(16) float smem[];
  float* in = smem;
  float* vbuf = smem + Lay::kOffV;
  float* mbuf = smem + Lay::kOffM;
  float* pooled_buf = smem + Lay::kOffPooled;
  const int t = threadIdx.x;

  // This thread's element-wise role, fixed for the kernel, and its U in registers.
  const typename Lay::Elementwise elementwise(u);

  // The padding of the input planes: only interiors are written below.
  for (int i = t; i < Lay::kPlanesFloats; i += kThreads) in[i] = 0.0f;
  // U and the planes' padding are ready while the previous kernel finishes (launch_after_previous); its output
  // arrives through the hand-off (Handoff): its rounds before the last ones at once, the rest after all of it.
  // Without one (Layer::kHandoff), all of it before the first round.
  if constexpr (Lay::kHandoff)
    if (t == 0) from.await_earlier_rounds();
  __syncthreads();  // zeroed before the first asynchronous copy lands in the interiors; the earlier rounds awaited
  using In = typename Lay::template Input<kLayer>;
  typename In::Word pending[Lay::kInput == kAsync ? 1 : In::kPerThread];
  if constexpr (!Lay::kHandoff) wait_for_previous_kernel();
  if (blockIdx.x * kImages < count) {
    if constexpr (Lay::kInput == kRegisters)
      fetch_input<kLayer, Lay>(input, blockIdx.x * kImages, count, from, pending);
    else if constexpr (Lay::kInput == kAsync)
      copy_input_async<Lay>(static_cast<const float*>(input), blockIdx.x * kImages, count, from, in);
  }

  // kRegisters: the round at `first` from the registers into the padded planes, and the round after it fetched
  // into the registers, its latency hidden behind this round's stages.
  const auto stage_input = [&](int first, int valid) {
    store_input<kLayer, Lay>(pending, valid, in);
    const int next = first + gridDim.x * kImages;
    if (next < count) fetch_input<kLayer, Lay>(input, next, count, from, pending);
  };
  // The stages, item by item. Input transform: item i = (tile, channel) of the round's `tiles` tiles.
  const auto transform_item = [&](int i, int tiles) {
    int tile, c;
    Lay::input_item(i, tiles, tile, c);
    wg::tile_input_transform<P, kPs, Lay::kRowQuads>(in + Lay::window_at(tile, c), vbuf + Lay::v_tile(tile) + c);
  };
  // Output: item i = (tile, filter) of the chunk, consecutive items on consecutive tiles of one filter, so
  // that a warp's pooled values are a few rows of one plane (float2 stores, whole sectors). pooled_item: the
  // 2 x 2 pooled values of chunk tile lt (the round's tile `tile`), filter f (rows a of val), with the bias and the
  // ReLU; b: its image in the round, at: where row 0 goes in that image's pooled output (row a: a plane row on).
  const auto pooled_item = [&](int lt, int tile, int f, float2 (&val)[2], int& b, int& at) {
    float m[kE];
    const float4* src = reinterpret_cast<const float4*>(mbuf + f * Lay::kFs + lt * kMs);
#pragma unroll
    for (int e = 0; e < kE / 4; ++e) {
      const float4 q = src[e];
      m[4 * e] = q.x, m[4 * e + 1] = q.y, m[4 * e + 2] = q.z, m[4 * e + 3] = q.w;
    }
    float pooled[2][2];
    wg::tile_output_pool(m, pooled);
    const float bias = bias_of<kLayer>(f);
    // M's scale back, after the pooling (the max commutes with a positive scale).
    const auto back = [](float v) {
      if constexpr (Lay::Elementwise::kMScale != 1.0f) return v * (1.0f / Lay::Elementwise::kMScale);
      else return v;
    };
    int ty, tx;
    Lay::tile_at(tile, b, ty, tx);
    at = (f * kPooledSide + 2 * ty) * kPooledSide + 2 * tx;
#pragma unroll
    for (int a = 0; a < 2; ++a)
      val[a] = {fmaxf(back(pooled[a][0]) + bias, 0.0f), fmaxf(back(pooled[a][1]) + bias, 0.0f)};
  };
  const auto output_item = [&](int i, int chunk, int first, int valid) {
    const int lt = i % kChunk, f = i / kChunk, tile = chunk * kChunk + lt;
    if (tile >= valid * T) return;
    float2 val[2];
    int b, at;
    pooled_item(lt, tile, f, val, b, at);
    constexpr int kImage = F * kPooledSide * kPooledSide;  // an image's pooled floats
    float* dst = (kLayer == 3 ? pooled_buf : output + std::size_t(first) * kImage) + b * kImage + at;
#pragma unroll
    for (int a = 0; a < 2; ++a) *reinterpret_cast<float2*>(dst + a * kPooledSide) = val[a];
  };

  if constexpr (kLayer == 3 && Lay::kOverlapped) {
    // conv3 on the tensor cores: the FC inside the output stage, and the next round's input transform in the
    // same pass as this round's output stage (as conv2's), so that a round has two barriers and no FC phase.
    // A warp's 32 output items are 2 filters x 16 tiles (4 images x 4 tiles): each lane multiplies its 4 pooled
    // values by their FC weights, the 8 lanes of an image add theirs up (shuffles), and they store the image's
    // 10 partial logits of this warp item in parts[round parity][warp item][image]. In the next round's pass, the
    // last warps (one image each), which have the fewest items, add the parts and the bias up and take the
    // softmax (softmax_round).
    static_assert(kChunk == Lay::kTiles && kChunk == 16 && kImages == 4 && T == 4 && Lay::kInput == kAsync,
                  "one chunk a round, a warp item's 16 tiles 4 images of 4 tiles");
    constexpr int kParts = kChunk * F / 32, kPartFloats = kParts * kImages * kClasses;
    static_assert(kChunk * F % 32 == 0 && Lay::kPooledFloats == 2 * kPartFloats, "whole warp items, 2 rounds' parts");
    const int warp = t / 32, lane = t % 32;
    const auto output_fc_item = [&](int i, int valid, float* part) {
      const int lt = i % kChunk, f = i / kChunk, b = lt / T;
      float z[kClasses] = {};
      if (b < valid) {
        float2 val[2];
        int bb, at;  // at: the FC's input index of row 0
        pooled_item(lt, lt, f, val, bb, at);
#pragma unroll
        for (int a = 0; a < 2; ++a)
#pragma unroll
          for (int o = 0; o < kClasses; ++o) {
            const float2 w = __ldg(reinterpret_cast<const float2*>(wfc + o * kFc.inputs() + a * kPooledSide + at));
            z[o] += w.x * val[a].x, z[o] += w.y * val[a].y;
          }
      }
      // The 8 lanes of image b: its 4 tiles (lane bits 0 and 1) and the warp item's 2 filters (bit 4).
#pragma unroll
      for (int o = 0; o < kClasses; ++o) {
        z[o] += __shfl_xor_sync(0xffffffffu, z[o], 1);
        z[o] += __shfl_xor_sync(0xffffffffu, z[o], 2);
        z[o] += __shfl_xor_sync(0xffffffffu, z[o], 16);
      }
      const int e = (lane & 3) | (lane >> 4 << 2);  // this lane among the 8: it stores classes e and e + 8
      if (b < valid)
#pragma unroll
        for (int o = 0; o < kClasses; ++o)
          if (o % 8 == e) part[(i / 32 * kImages + b) * kClasses + o] = z[o];
    };
    constexpr int kWarps = kThreads / 32;
    const auto softmax_round = [&](const float* part, int round_first, int images) {
      const int b = warp - (kWarps - kImages);
      if (b < 0 || b >= images) return;
      float mine = 0.0f;
      if (lane < kClasses) {
        mine = __ldg(bfc + lane);
#pragma unroll
        for (int j = 0; j < kParts; ++j) mine += part[(j * kImages + b) * kClasses + lane];
      }
      float z[kClasses];
#pragma unroll
      for (int o = 0; o < kClasses; ++o) z[o] = __shfl_sync(0xffffffffu, mine, o);
      softmax_to_lanes(z, output + (std::size_t(round_first) + b) * kClasses, lane);
    };
    int first = blockIdx.x * kImages;
    if (first < count) {
      wait_async_copies();
      __syncthreads();
      const int valid = min(kImages, count - first);
      for (int i = t; i < valid * T * C; i += kThreads) transform_item(i, valid * T);
    }
    int pending_first = 0, pending_images = 0, parity = 0;  // the round whose softmax is pending; this round's
    for (; first < count; first += gridDim.x * kImages, parity ^= 1) {
      const int valid = min(kImages, count - first), next = first + gridDim.x * kImages;
      const int next_valid = next < count ? min(kImages, count - next) : 0;
      if (Lay::kHandoff ? last_two_rounds(first, count, kImages) : next >= count) allow_next_kernel();
      __syncthreads();  // V complete, the previous pass done with M and the planes: the earlier rounds written
      if (Lay::kHandoff && t == 0 && last_round(first, count, kImages)) to.begin_last_round();
      if (next < count) copy_input_async<Lay>(static_cast<const float*>(input), next, count, from, in);
      elementwise(vbuf, mbuf, 0);
      wait_async_copies();
      __syncthreads();  // M complete, the next round's input in the planes
      float* part = pooled_buf + parity * kPartFloats;
      const int items = kChunk * F + next_valid * T * C;
      for (int i = t; i < items; i += kThreads) {
        if (i < kChunk * F) output_fc_item(i, valid, part);
        else transform_item(i - kChunk * F, next_valid * T);
      }
      if (pending_images > 0) softmax_round(pooled_buf + (parity ^ 1) * kPartFloats, pending_first, pending_images);
      pending_first = first, pending_images = valid;
    }
    if (pending_images > 0) {
      __syncthreads();
      softmax_round(pooled_buf + (parity ^ 1) * kPartFloats, pending_first, pending_images);
    }
  } else if constexpr (Lay::kOverlapped) {
    // One image and one chunk a round (conv2): the next image's input transform runs in the same pass as this
    // image's output stage (V is free once the element-wise stage is done, the planes once the input
    // transform is), so that their items share the block's threads: 20 x 16 + 16 x 16 items take 2.25 passes of
    // 256 threads instead of 2 + 1, and a round has two barriers instead of four. H200, ncu: conv2 142 -> 138 us
    // per 4096 images; the whole pass 1.2 % faster (3.50 -> 3.46 ms at 50000 images).
    static_assert(kImages == 1 && kChunk == T && Lay::kInput == kRegisters && kLayer != 3, "one chunk a round");
    int first = blockIdx.x;
    if (first < count) {
      stage_input(first, 1);
      __syncthreads();
      for (int i = t; i < T * C; i += kThreads) transform_item(i, T);
    }
    for (; first < count; first += gridDim.x) {
      const int next = first + gridDim.x;
      if (Lay::kHandoff ? last_two_rounds(first, count, 1) : next >= count) allow_next_kernel();
      __syncthreads();  // V complete, the previous output stage done with M: the earlier rounds written
      if (Lay::kHandoff && t == 0 && last_round(first, count, 1)) to.begin_last_round();
      elementwise(vbuf, mbuf, 0);
      if (next < count) stage_input(next, 1);
      __syncthreads();  // M complete, the next image in the planes
      const int items = kChunk * F + (next < count ? T * C : 0);
      for (int i = t; i < items; i += kThreads) {
        if (i < kChunk * F) output_item(i, 0, first, 1);
        else transform_item(i - kChunk * F, T);
      }
    }
  } else {
    // conv3: FC + softmax of a round's images, a warp per image. It runs in the next round, by the first warps
    // while the others transform that round's input: at the end of its own round the other warps would only
    // wait for it at the next barrier (H200, ncu per 4096 images: conv3 77 us, 67 without any FC, 71.5 so).
    int fc_first = 0, fc_images = 0;  // the round whose FC is pending
    const auto fc_softmax = [&] {
      const int warp = t / 32, lane = t % 32;
      if (warp < fc_images)
        fc_softmax_warp(pooled_buf + warp * kFc.inputs(), wfc, bfc, output + (std::size_t(fc_first) + warp) * kClasses,
                        lane);
    };
    for (int first = blockIdx.x * kImages; first < count; first += gridDim.x * kImages) {
      const int valid = min(kImages, count - first);
      if (Lay::kHandoff ? last_two_rounds(first, count, kImages) : first + gridDim.x * kImages >= count)
        allow_next_kernel();
      // No barrier here: the previous round's last reads of the planes (input transform) and of V (element-wise
      // stage) were each followed by a barrier of its chunk loop.

      // This round's input into the padded planes (see InputMode).
      if constexpr (Lay::kInput == kRegisters) {
        stage_input(first, valid);
      } else if constexpr (Lay::kInput == kAsync) {
        wait_async_copies();
      } else {
        fetch_input<kLayer, Lay>(input, first, count, from, pending);
        store_input<kLayer, Lay>(pending, valid, in);
      }
      __syncthreads();  // the input in the planes; the previous round's outputs complete
      if (Lay::kHandoff && t == 0 && last_round(first, count, kImages)) to.begin_last_round();

      if constexpr (kLayer == 3) {
        const int fc_threads = 32 * fc_images;
        if (t < fc_threads) fc_softmax();
        else
          for (int i = t - fc_threads; i < valid * T * C; i += kThreads - fc_threads) transform_item(i, valid * T);
      } else {
        for (int i = t; i < valid * T * C; i += kThreads) transform_item(i, valid * T);
      }

      const int next = first + gridDim.x * kImages;
      for (int chunk = 0; chunk * kChunk < valid * T; ++chunk) {
        __syncthreads();  // V is complete / the previous chunk's output stage is done with M
        // The planes are free: the next round's input copied in (the same test written two ways: each compiles
        // to the code that was measured, results/h200/winograd-mma/handoff/).
        if constexpr (Lay::kHandoff) {
          if (Lay::kInput == kAsync && chunk == 0 && next < count)
            copy_input_async<Lay>(static_cast<const float*>(input), next, count, from, in);
        } else if (Lay::kInput == kAsync && chunk == 0 && first + gridDim.x * kImages < count) {
          copy_input_async<Lay>(static_cast<const float*>(input), first + gridDim.x * kImages, count, from, in);
        }
        elementwise(vbuf, mbuf, chunk);
        __syncthreads();
        for (int i = t; i < kChunk * F; i += kThreads) output_item(i, chunk, first, valid);
      }

      if constexpr (kLayer == 3) fc_first = first, fc_images = valid;
    }
    if (kLayer == 3 && fc_images > 0) {  // the last round's
      __syncthreads();
      fc_softmax();
    }
  }
  if constexpr (Lay::kHandoff) wait_for_previous_kernel();  // see Handoff
}

// conv1 + bias + ReLU + 2x2 pool as cuda:fused_fp16x3 computes it, for cuda:winograd_conv1_mma: an implicit
// GEMM on the tensor cores (K = 75 taps), the pixel - 127.5 exact in FP16 and the weights split hi/lo, so
// 2 passes give FP32 accuracy. Winograd suits conv1 badly: with 3 input channels its element-wise stage is
// small and the transforms and the M round trip through shared memory are most of its time (cuda:winograd's
// conv1 kernel is about 43 % of that variant). A block takes kImages images per round into padded planes
// (fused_mma's conv1 layout) and writes the pooled output in conv2's input layout [n][16][16][16].
namespace conv1_mma {
using A = Fp16x3;
using Lay = fused_mma::Layout<A>;
using G = Lay::Conv1;
constexpr int kWarps = 8, kThreads = 32 * kWarps, kBlocksPerSm = 2;
constexpr int kOffOffsets = G::kFragWords;                            // words: fragments first
constexpr int kOffImages = kOffOffsets + A::kGroups * G::kOffsets;    // then each lane4's K offsets
constexpr int kIn = Lay::kIn1;                                        // words per image
template <int kImages>
constexpr std::size_t kSharedBytes = std::size_t(kOffImages + kImages * kIn) * 4;
constexpr int kPooledSide = kConv1.pooled_side(), kPooled = kConv1.filters * kPooledSide * kPooledSide;
static_assert(kSharedBytes<4> * kBlocksPerSm <= 227 * 1024, "kBlocksPerSm blocks per SM");
static_assert(G::kFragWords % 4 == 0 && kOffImages % 4 == 0, "16-byte fragments, aligned planes");

template <int kImages>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    conv1_mma_kernel(const std::uint8_t* __restrict__ images, const std::uint32_t* __restrict__ fragments,
                     float* __restrict__ output, int count) {
  extern __shared__ __align__(16) std::uint32_t words[];
  const auto* frag = reinterpret_cast<const uint4*>(words);
  auto* offsets = reinterpret_cast<A::Offsets*>(words + kOffOffsets);
  std::uint32_t* planes = words + kOffImages;
  const int t = threadIdx.x, warp = t / 32, lane = t % 32, g = lane / 4;
  for (int i = t; i < G::kFragWords / 4; i += kThreads)
    reinterpret_cast<uint4*>(words)[i] = __ldg(reinterpret_cast<const uint4*>(fragments) + i);
  fused_mma::stage_offsets<G, kThreads>(offsets);
  // Only interiors are written below: the padding stays zero (split_f16(0) is 0).
  for (int i = t; i < kImages * kIn; i += kThreads) planes[i] = 0u;

  for (int first = blockIdx.x * kImages; first < count; first += gridDim.x * kImages) {
    const int valid = min(kImages, count - first);
    if (first + gridDim.x * kImages >= count) allow_next_kernel();  // this block's last round
    __syncthreads();  // staged / the previous round is done with the planes
    const auto* src = reinterpret_cast<const std::uint32_t*>(images + std::size_t(first) * kImageBytes);
    for (int i = t; i < valid * (kImageBytes / 4); i += kThreads)
      fused_mma::store_pixel_word<A>(__ldg(src + i), i, planes, kIn);
    __syncthreads();

    for (int item = warp; item < valid * Lay::kItems1; item += kWarps) {  // a pooled row of an image
      const int b = item / Lay::kItems1, py = item % Lay::kItems1;
      float* out = output + (std::size_t(first) + b) * kPooled + py * kPooledSide + 2 * g;
      fused_mma::conv1_pooled_row<A>(planes + b * kIn, py, offsets, frag, lane, [&](int f, int h, float v) {
        out[f * kPooledSide * kPooledSide + h] = fmaxf(v * (1.0f / 255.0f) + c_bias1[f], 0.0f);
      });
    }
  }
}

template <int kImages>
void launch(const std::uint8_t* images, const std::uint32_t* fragments, float* output, std::size_t n, int sms,
            cudaStream_t s) {
  const int blocks = persistent_blocks(n, kImages, kBlocksPerSm * sms);
  conv1_mma_kernel<kImages><<<blocks, kThreads, kSharedBytes<kImages>, s>>>(images, fragments, output, int(n));
}
}  // namespace conv1_mma

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

// Where conv1 runs: Winograd on the FP32 units (cuda:winograd), a direct implicit GEMM on the tensor cores over
// planes (conv1_mma above, cuda:winograd_conv1_mma) or over pixels (conv1_pixels, cuda:winograd_mma).
enum class Conv1On { kFp32Winograd, kTensorPlanes, kTensorPixels };
// kEwMma: conv2's and conv3's element-wise stages on the tensor cores (MmaElementwise, cuda:winograd_mma).
// kLanes: a chunk is split over this many side streams, so that one half's kernels fill the SMs that the other
// half's kernel tails leave idle (each kernel holds whole SMs: one block per SM and most of its shared memory).
template <Conv1On kConv1Path, bool kEwMma, int kLanes>
class CudaWinogradSession final : public DeviceSession {
  using Conv2L = std::conditional_t<kEwMma, Conv2Mma, Conv2>;
  using Conv3L = std::conditional_t<kEwMma, Conv3Mma, Conv3>;

 public:
  CudaWinogradSession(const Network& net, const RunConfig& config)
      : DeviceSession(kEwMma ? "cuda:winograd_mma"
                             : kConv1Path == Conv1On::kTensorPlanes ? "cuda:winograd_conv1_mma"
                                                                 : "cuda:winograd", config,
                      chunk_for_free_memory()) {
    check(cudaMemcpyToSymbol(c_bias1, net.conv1.bias.data(), sizeof(c_bias1)), "conv1 bias");
    check(cudaMemcpyToSymbol(c_bias2, net.conv2.bias.data(), sizeof(c_bias2)), "conv2 bias");
    check(cudaMemcpyToSymbol(c_bias3, net.conv3.bias.data(), sizeof(c_bias3)), "conv3 bias");
    if constexpr (kConv1Path == Conv1On::kFp32Winograd) {
      u1_ = to_device(transformed_weights(kConv1, net.conv1.weights));
      allow_shared_memory(winograd_layer_kernel<1, Conv1>, Conv1::kSharedBytes);
    } else if constexpr (kConv1Path == Conv1On::kTensorPlanes) {
      std::vector<std::uint32_t> fragments;
      fused_mma::append_fragments<conv1_mma::A, conv1_mma::G>(fragments, net.conv1.weights);
      fragments1_ = to_device(fragments);
      allow_shared_memory(conv1_mma::conv1_mma_kernel<4>, conv1_mma::kSharedBytes<4>);
      allow_shared_memory(conv1_mma::conv1_mma_kernel<2>, conv1_mma::kSharedBytes<2>);
    } else {
      fragments1_ = to_device(conv1_pixels::fragments(net.conv1.weights));
      std::copy(net.conv1.bias.begin(), net.conv1.bias.end(), bias1_.f);
      allow_shared_memory(conv1_pixels::conv1_pixels_kernel, conv1_pixels::kSharedBytes);
    }
    const std::vector<float> u2 = transformed_weights(kConv2, net.conv2.weights);
    if constexpr (kEwMma) u2_ = to_device(Conv2L::Elementwise::weights(u2));
    else u2_ = to_device(u2);
    const std::vector<float> u3 = transformed_weights(kConv3, net.conv3.weights);
    // One fragment layout for both conv3 kernels: it depends on the channels and filters only.
    if constexpr (kEwMma) u3_ = to_device(Conv3L::Elementwise::weights(u3));
    else u3_ = to_device(u3);
    wfc_ = to_device(net.fc.weights);
    bfc_ = to_device(net.fc.bias);
    allow_shared_memory(winograd_layer_kernel<2, Conv2L>, Conv2L::kSharedBytes);
    allow_shared_memory(winograd_layer_kernel<3, Conv3L>, Conv3L::kSharedBytes);
    if constexpr (!kEwMma) allow_shared_memory(winograd_layer_kernel<3, Conv3Small>, Conv3Small::kSharedBytes);
    check(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, 0), "SM count");
    // The intermediate activations: one set per slot. end_to_end() runs chunks on several streams at once,
    // and a chunk's lanes run at once: each part takes the next slot and first waits until the last part that
    // used it is done.
    for (Slot& slot : slots_) {
      slot.act2 = static_cast<float*>(alloc(batch_ * kAct2 * sizeof(float)));
      slot.act3 = static_cast<float*>(alloc(batch_ * kAct3 * sizeof(float)));
      slot.started = static_cast<unsigned*>(alloc(2 * sizeof(unsigned)));
      check(cudaMemset(slot.started, 0, 2 * sizeof(unsigned)), "cudaMemset");
      check(cudaEventCreateWithFlags(&slot.done, cudaEventDisableTiming), "cudaEventCreate");
    }
    check(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming), "cudaEventCreate");
    for (Lane& lane : lanes_) {
      check(cudaStreamCreateWithFlags(&lane.stream, cudaStreamNonBlocking), "cudaStreamCreate");
      check(cudaEventCreateWithFlags(&lane.joined, cudaEventDisableTiming), "cudaEventCreate");
    }
  }
  ~CudaWinogradSession() override {
    for (Lane& lane : lanes_) {
      cudaStreamSynchronize(lane.stream);
      cudaEventDestroy(lane.joined);
      cudaStreamDestroy(lane.stream);
    }
    cudaEventDestroy(fork_);
    for (Slot& slot : slots_) cudaEventDestroy(slot.done);
  }

 protected:
  void run(const std::uint8_t* images, float* probs, std::size_t n, cudaStream_t s, LayerEvents*) override {
    // Parts only where each would be large (small(n)): the kernels of small parts contend for the same SMs
    // and gain nothing from the other part's tails.
    const int parts = small(n / kLanes) ? 1 : kLanes;
    if (parts > 1) check(cudaEventRecord(fork_, s), "cudaEventRecord");
    std::size_t begin = 0;
    for (int k = 0; k < parts; ++k) {
      const std::size_t end = n * std::size_t(k + 1) / std::size_t(parts);
      cudaStream_t ls = parts > 1 ? lanes_[k].stream : s;
      if (parts > 1) check(cudaStreamWaitEvent(ls, fork_, 0), "cudaStreamWaitEvent");
      run_part(images + begin * kImageBytes, probs + begin * kClasses, end - begin, ls);
      if (parts > 1) {
        check(cudaEventRecord(lanes_[k].joined, ls), "cudaEventRecord");
        check(cudaStreamWaitEvent(s, lanes_[k].joined, 0), "cudaStreamWaitEvent");
      }
      begin = end;
    }
  }

 private:
  static constexpr int kSlots = 4;
  static constexpr std::size_t kAct2 = std::size_t(kConv2.in_channels) * kConv2.in_side * kConv2.in_side;
  static constexpr std::size_t kAct3 = std::size_t(kConv3.in_channels) * kConv3.in_side * kConv3.in_side;
  // Chunks of up to 65536 images, their activations (kSlots slots of 21.5 KB an image: 5.6 GB) within a
  // quarter of the device's free memory, so that a smaller GPU still holds a million images beside them. Each
  // chunk costs its kernels' tails and U loads, and chunks small enough for the L2 to hold their outputs do
  // not win that back. H200, cuda:winograd_mma at 50000 images (results/ab/h200-chunk-size/): 2.97 ms in
  // chunks of 1024, 2.71 of 2048, 2.57 of 4096, 2.50 of 8192, 2.44 of 16384, 2.38 in one chunk.
  static constexpr std::size_t chunk_for(std::size_t free_bytes) {
    const std::size_t images = free_bytes / 4 / (kSlots * (kAct2 + kAct3) * sizeof(float));
    return std::clamp<std::size_t>(images, 1024, 65536);
  }
  static_assert(chunk_for(std::size_t(79) << 30) == 65536 && chunk_for(std::size_t(7) << 30) == 21845 &&
                    chunk_for(0) == 1024,
                "an H100's free memory takes the largest chunk, an 8 GB GPU's about a third of it");
  static std::size_t chunk_for_free_memory() {
    std::size_t free_bytes = 0, total_bytes = 0;
    return cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess ? chunk_for(free_bytes) : 16384;
  }
  struct Slot {
    float* act2 = nullptr;  // conv1's pooled output, conv2's input
    float* act3 = nullptr;  // conv2's pooled output, conv3's input
    // The hand-offs of act2 and act3 (Handoff): producer blocks counted on the device and on the host.
    unsigned* started = nullptr;
    unsigned started_total[2] = {0, 0};
    cudaEvent_t done = nullptr;
  };
  struct Lane {
    cudaStream_t stream = nullptr;
    cudaEvent_t joined = nullptr;
  };
  // One layer's kernel on n images, a block per SM (wfc_, bfc_: read by conv3's only).
  // conv2's and conv3's kernels start while the previous layer's finishes (launch_after_previous): their blocks
  // load U into registers on the SMs its last rounds leave idle.
  template <class Lay>
  int blocks(std::size_t n) const {
    return persistent_blocks(n, Lay::kImages, sms_);
  }
  template <int kLayer, class Lay>
  void launch(const void* input, const void* u, float* output, std::size_t n, const Handoff& from, const Handoff& to,
              cudaStream_t s) const {
    if constexpr (kLayer == 1)
      winograd_layer_kernel<kLayer, Lay><<<blocks<Lay>(n), Lay::kThreads, Lay::kSharedBytes, s>>>(
          input, u, output, wfc_, bfc_, int(n), from, to);
    else
      launch_after_previous(winograd_layer_kernel<kLayer, Lay>, blocks<Lay>(n), Lay::kThreads, Lay::kSharedBytes, s,
                            input, u, output, wfc_, bfc_, int(n), from, to);
  }
  // The hand-off (Handoff) of slot's activations k (0: act2, 1: act3) from a kernel of `producer_blocks`
  // persistent blocks that takes n images `group` at a time: winograd_mma's (its layers' kHandoff). H200,
  // alternating, median of twelve medians of 20: 0.0839 -> 0.0817 ms at 1200 images, 2.578 -> 2.568 at 50000
  // (results/h200/winograd-mma/handoff/).
  static Handoff handoff(Slot& slot, int k, std::size_t n, int group, int producer_blocks) {
    slot.started_total[k] += unsigned(producer_blocks);
    return {slot.started + k, slot.started_total[k], last_rounds_tail(n, group, producer_blocks)};
  }
  // Fewer than 16 images per SM (1200 images, end_to_end()'s chunks of n / 16): conv1 (on the planes) and conv3
  // (on the FP32 units) then take 2 images a round, not 4, so that their last round leaves fewer SMs idle.
  // Measured on an H200 at 1200 images with one part: conv1 31-38 us, conv3 28 us per kernel; forward 0.116 ms
  // against 0.125 with 4-image rounds in two parts; at 50000 images end to end 4.07-4.11 ms against 4.30
  // (forward 3.69). Still so for the FP32 conv3, which starts when conv2 has ended (no hand-off): 4-image
  // rounds 5-12 % slower at 600-1200 images (H100, results/ab/h100-conv3-four-images-fp32/).
  bool small(std::size_t n) const { return n < std::size_t(16) * std::size_t(sms_); }

  // The three kernels on n images, with the next slot's buffers, on stream s.
  void run_part(const std::uint8_t* images, float* probs, std::size_t n, cudaStream_t s) {
    Slot& slot = slots_[next_slot_];
    next_slot_ = (next_slot_ + 1) % kSlots;
    check(cudaStreamWaitEvent(s, slot.done, 0), "cudaStreamWaitEvent");
    const Handoff none{};
    Handoff h12;  // conv1 -> conv2 (conv2's layout says whether it takes a hand-off: Layer::kHandoff)
    if constexpr (kConv1Path == Conv1On::kFp32Winograd) {
      launch<1, Conv1>(images, u1_, slot.act2, n, none, none, s);
    } else if constexpr (kConv1Path == Conv1On::kTensorPlanes) {
      if (small(n)) conv1_mma::launch<2>(images, fragments1_, slot.act2, n, sms_, s);
      else conv1_mma::launch<4>(images, fragments1_, slot.act2, n, sms_, s);
    } else {
      const int blocks1 = persistent_blocks(n, conv1_pixels::kImages, conv1_pixels::kBlocksPerSm * sms_);
      h12 = handoff(slot, 0, n, conv1_pixels::kImages, blocks1);
      conv1_pixels::launch(images, fragments1_, bias1_, slot.act2, n, blocks1, h12, s);
    }
    const Handoff h23 = Conv2L::kHandoff ? handoff(slot, 1, n, Conv2L::kImages, blocks<Conv2L>(n)) : none;
    launch<2, Conv2L>(slot.act2, u2_, slot.act3, n, h12, h23, s);
    if (!kEwMma && small(n)) launch<3, Conv3Small>(slot.act3, u3_, probs, n, h23, none, s);
    else launch<3, Conv3L>(slot.act3, u3_, probs, n, h23, none, s);
    check(cudaEventRecord(slot.done, s), "cudaEventRecord");
  }

  const std::uint32_t* fragments1_ = nullptr;  // conv1's split weights in fragment order (on tensor cores)
  conv1_pixels::Bias bias1_{};                   // conv1's bias as a kernel parameter (kTensorPixels)
  const float *u1_ = nullptr, *wfc_ = nullptr, *bfc_ = nullptr;
  const void *u2_ = nullptr, *u3_ = nullptr;  // U, or its tensor-core fragments (kEwMma)
  int sms_ = 1;
  std::array<Slot, kSlots> slots_{};
  int next_slot_ = 0;
  cudaEvent_t fork_ = nullptr;
  std::array<Lane, kLanes> lanes_{};
};

const VariantRegistration kWinograd{"cuda", 7, open_session<CudaWinogradSession<Conv1On::kFp32Winograd, false, 2>>,
    {"winograd", "Winograd F(4x4,5x5) on the FP32 units: a persistent kernel per layer, V and M staged in shared "
                 "memory, U in registers; 6.25x fewer multiplies than the direct convolution", false,
     {"fp32_fma", wg::kExecutedFlopPerImage}}};

// Executed: conv1's direct FLOP twice (2 passes) on the FP16 tensor cores; conv2, conv3 (Winograd) and the FC
// layer on the FP32 units.
const VariantRegistration kWinogradConv1Mma{"cuda", 8, open_session<CudaWinogradSession<Conv1On::kTensorPlanes, false, 2>>,
    {"winograd_conv1_mma", "cuda:winograd with conv1 on the tensor cores as fused_fp16x3 computes it (direct, "
                           "mma.sync, 2 FP16 passes: the pixels are exact), conv2/conv3 Winograd on the FP32 units",
     false,
     {"fp32_fma", wg::executed_flop(kConv2) + wg::executed_flop(kConv3) + kFc.flops(),
      {{"fp16_tensor", 2 * kConv1.flops()}}}}};

// Executed: as winograd_conv1_mma, with conv2's and conv3's element-wise stages on the FP16 tensor cores
// (MmaElementwise: 3 passes over padded channels and filters).
const VariantRegistration kWinogradMma{"cuda", 9, open_session<CudaWinogradSession<Conv1On::kTensorPixels, true, 2>>,
    {"winograd_mma", "cuda:winograd_conv1_mma with the Winograd element-wise stages on the tensor cores (3xFP16 "
                     "mma.sync, V split as it is loaded) and conv1's GEMM over packed pixels; transforms and the "
                     "FC layer on the FP32 units",
     false,
     {"fp32_fma", wg::transform_flop(kConv2) + wg::transform_flop(kConv3) + kFc.flops(),
      {{"fp16_tensor", 2 * kConv1.flops() + MmaElementwise<Conv2Mma>::executed_flop_per_image() +
                           MmaElementwise<Conv3Mma>::executed_flop_per_image()}}}}};

}  // namespace
}  // namespace cnn::cuda
