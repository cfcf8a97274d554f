// The Winograd layers of cuda:winograd and its tensor-core variants, as types: a layer's work split and shared
// memory per round (Layer, on wg::GpuRoundLayout), and its element-wise stage M = V U on the FP32 units
// (FmaElementwise) or on the tensor cores in 3xFP16 (MmaElementwise). cuda_winograd.cu says how a layer's kernel
// runs them, and picks each layer's parameters.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>
#include <vector>

#include "backends/cuda/cuda_fp16x3.cuh"
#include "common/kernels/cpu/winograd_f4x5.hpp"
#include "common/network_spec.hpp"

namespace cnn::cuda {
namespace {

namespace wg = cnn::winograd;

constexpr int kE = wg::kElems;  // Winograd positions of a tile

// How a round's input reaches the padded planes: loaded one round ahead into registers (kRegisters), copied
// asynchronously one round ahead into the planes once they are free (kAsync), or loaded at the round's start
// (kDirect).
enum InputMode { kRegisters, kAsync, kDirect };

// A round's input as the words a thread loads: conv1 reads 4 uint8 pixels per 32-bit word, conv2 and conv3
// read float4s of the previous kernel's pooled output.
template <int kLayer, int kThreads, int kImages, int C, int IS>
struct InputWords {
  using Word = std::conditional_t<kLayer == 1, std::uint32_t, float4>;
  static constexpr int kPerImage = kLayer == 1 ? kImageBytes / 4 : C * IS * IS / 4;
  static constexpr int kPerThread = (kImages * kPerImage + kThreads - 1) / kThreads;
};

template <class Lay, int kFg>
struct FmaElementwise;
template <class Lay>
struct MmaElementwise;
// Where a layer's element-wise stage runs (FmaElementwise, MmaElementwise below).
template <int kFiltersPerThread>
struct OnFp32Units {
  static constexpr bool kTensorCores = false;
  template <class Lay>
  using Stage = FmaElementwise<Lay, kFiltersPerThread>;
};
struct OnTensorCores {
  static constexpr bool kTensorCores = true;
  template <class Lay>
  using Stage = MmaElementwise<Lay>;
};

// One layer's work split and shared memory: the round's input planes, V and M (wg::GpuRoundLayout, which says
// why their paddings), then what conv3 keeps for the FC (kPooledFloats). kImages: images per round; Ew: where the
// element-wise stage runs; kChunk: tiles per element-wise chunk (M holds one chunk); kOverlap: the next round's
// input transform shares a pass with this round's output stage (winograd_layer_kernel says when that is
// possible).
// With the element-wise stage on the tensor cores the input transform loads its window rows as 16-byte words
// (GpuRoundLayout's kRowQuadLoads): on the FP32 units, whose U takes most registers, the 64 values loaded at
// once spill (conv2: 48 bytes).
template <const ConvSpec& L, int kBlockThreads, int kImagesPerRound, class Ew, int kTilesPerChunk,
          bool kPooledHere, InputMode kInputMode, bool kOverlap = false>
struct Layer : wg::GpuRoundLayout<L.in_channels, L.in_side, L.padded_side(), kImagesPerRound, Ew::kTensorCores> {
  using Round = wg::GpuRoundLayout<L.in_channels, L.in_side, L.padded_side(), kImagesPerRound, Ew::kTensorCores>;
  using Round::C, Round::IS, Round::kImages, Round::kTiles, Round::kMs, Round::kOffM;
  static constexpr InputMode kInput = kInputMode;
  static constexpr bool kOverlapped = kOverlap;
  // The tensor-core layers (cuda:winograd_mma's) take and hand on their images by rounds (Handoff); the FP32
  // layers wait for the whole previous kernel: cuda:winograd was 4-6 % slower at 1200 images with the hand-off
  // (results/h200/winograd-mma/handoff/). conv2 and conv3 alike, so that conv2 hands on only where conv3 takes.
  static constexpr bool kHandoff = Ew::kTensorCores;
  static constexpr int kThreads = kBlockThreads;
  static constexpr int kChunk = kTilesPerChunk;
  static constexpr int F = L.filters;
  static constexpr int kPooled = L.pooled_side();
  using Elementwise = typename Ew::template Stage<Layer>;
  template <int kLayer>
  using Input = InputWords<kLayer, kThreads, kImages, C, IS>;
  // M's filter rows: kFs floats apart. On the tensor cores a lane stores 4 positions of one (filter, tile) as a
  // float4, the 8 lanes of a quarter-warp 4 filters (2 apart) and 2 tiles: 4 floats of padding per filter put
  // them on 32 different banks.
  static constexpr int kFs = kChunk * kMs + (Ew::kTensorCores ? 4 : 0);
  static constexpr int kOffPooled = kOffM + F * kFs;
  // conv3: its pooled outputs for the FC; with kOverlap, the FC's partial logits of two rounds instead (a warp's
  // 32 output items a part, of each image and class).
  static constexpr int kPooledFloats =
      !kPooledHere ? 0 : kOverlap ? 2 * (kChunk * F / 32) * kImages * kClasses : kImages * F * kPooled * kPooled;
  static constexpr std::size_t kSharedBytes = std::size_t(kOffPooled + kPooledFloats) * sizeof(float);
  static_assert(kTiles % kChunk == 0, "whole chunks");
  static_assert(kSharedBytes <= 227 * 1024, "fits one SM's shared memory");
  static_assert(L.kernel == kKernel && L.pad == 2, "5x5, pad 2: the output side is the input side");
};

// The element-wise stage on the FP32 units: a thread per (Winograd position p, filter group g, tile subset s),
// its U[p][channels][g's kFg filters] in registers for the kernel; M[g kFg + f][tile][p] over its tiles of a
// chunk.
template <class Lay, int kFg>
struct FmaElementwise {
  static constexpr int C = Lay::C, F = Lay::F;
  static constexpr int kGroups = F / kFg;                          // filter groups
  static constexpr int kSubsets = Lay::kThreads / (kE * kGroups);  // tile subsets of a chunk
  static constexpr int kUnroll = 2;  // tiles unrolled by: the next tile's V loads issued during this one's FMAs
  static_assert(F % kFg == 0 && Lay::kThreads % (kE * kGroups) == 0 && Lay::kChunk % kSubsets == 0,
                "even work split");
  static_assert(kFg % 2 == 0, "U loaded as float2");
  static constexpr float kMScale = 1.0f;  // M as it is: the output stage scales nothing back
  int p, g, s;
  float uw[C][kFg];

  __device__ __forceinline__ explicit FmaElementwise(const void* u) {
    const int t = threadIdx.x;
    p = t % kE, g = t / kE % kGroups, s = t / (kE * kGroups);
#pragma unroll
    for (int c = 0; c < C; ++c)
#pragma unroll
      for (int f = 0; f < kFg; f += 2) {  // float2: a group of 10 filters starts 8-byte aligned
        const float2 q = __ldg(static_cast<const float2*>(u) + ((p * C + c) * F + g * kFg + f) / 2);
        uw[c][f] = q.x, uw[c][f + 1] = q.y;
      }
  }
  __device__ __forceinline__ void operator()(const float* vbuf, float* mbuf, int chunk) const {
#pragma unroll kUnroll
    for (int k = 0; k < Lay::kChunk / kSubsets; ++k) {  // compile-time trip count: loads hoisted when unrolled
      const int lt = s + k * kSubsets;
      const float* v = vbuf + Lay::v_tile(chunk * Lay::kChunk + lt) + p * Lay::kPs;
      float acc[kFg] = {};
#pragma unroll
      for (int c0 = 0; c0 < C; c0 += 4) {
        const float4 x4 = *reinterpret_cast<const float4*>(v + c0);
        const float x[4] = {x4.x, x4.y, x4.z, x4.w};
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (c0 + j < C)
#pragma unroll
            for (int f = 0; f < kFg; ++f) acc[f] += x[j] * uw[c0 + j][f];
      }
      float* m = mbuf + g * kFg * Lay::kFs + lt * Lay::kMs + p;
#pragma unroll
      for (int f = 0; f < kFg; ++f) m[f * Lay::kFs] = acc[f];
    }
  }
};

// The element-wise stage on the tensor cores in 3xFP16 (cuda_fp16x3.cuh): per Winograd position p,
// M[p] (tiles x filters) = V[p] (tiles x channels) U[p] (channels x filters) in m16n8k16 tiles (a last K step
// of 8 where the channels leave one: conv3's 20), filters padded to n-tiles of 8 with zeros. A warp owns
// kPositions consecutive positions and their U fragments in registers for the kernel (weights()); V is
// split into FP16 hi and lo as it is loaded. On the FP32 units this stage was two thirds of the layer's
// arithmetic.
// U is split scaled by kUScale, and M stays scaled by it (kMScale): U's lo parts (2^-11 of U, |U| <= 0.67)
// would otherwise fall below FP16's normal range (6.1e-5) and keep only an absolute 2^-24 (numpy emulation
// of conv2 and conv3, 300 unseen images: max |p - p_fp64| 3.8e-5 unscaled, 4.6e-6 with 2^10; FP32 2.0e-6).
// The output stage scales its 4 pooled values back (exact, a power of two, and the transform is linear), not
// the element-wise stage its 64 M values per (tile, filter).
constexpr float kUScale = 1024.0f;
template <class Lay>
struct MmaElementwise {
  static constexpr int C = Lay::C, F = Lay::F, kWarps = Lay::kThreads / 32;
  static constexpr int kSteps = C / 16, kTail = C % 16 != 0;  // K steps of 16, and of 8 after them
  static constexpr float kMScale = kUScale;
  static constexpr int kNTiles = (F + 7) / 8, kPositions = kE / kWarps;
  static_assert(kE % kWarps == 0 && kPositions % 4 == 0, "whole float4s of positions per warp");
  static_assert(Lay::kChunk % 16 == 0 && C % 2 == 0 && C % 16 <= 8, "m16 tiles, channel pairs, one tail");
  // 3 passes over the padded channels and filters, for the report.
  static constexpr double executed_flop_per_image() {
    return 3 * Lay::T * 2.0 * kE * (16 * kSteps + 8 * kTail) * (8 * kNTiles);
  }
  int p0, g, t;
  uint4 b[kPositions][kSteps][kNTiles];  // b0 hi, b1 hi, b0 lo, b1 lo (Fp16x3::append_fragment)
  uint2 b8[kTail ? kPositions : 1][kNTiles];  // the tail's b0 hi, b0 lo

  __device__ __forceinline__ explicit MmaElementwise(const void* u) {
    const int lane = threadIdx.x % 32;
    p0 = threadIdx.x / 32 * kPositions, g = lane / 4, t = lane % 4;
    const uint4* frag = static_cast<const uint4*>(u);
#pragma unroll
    for (int q = 0; q < kPositions; ++q)
#pragma unroll
      for (int k = 0; k < kSteps + kTail; ++k)
#pragma unroll
        for (int n = 0; n < kNTiles; ++n) {
          const uint4 w = __ldg(frag + (((p0 + q) * (kSteps + kTail) + k) * kNTiles + n) * 32 + lane);
          if (k < kSteps) b[q][k][n] = w;
          else b8[q][n] = {w.x, w.z};
        }
  }
  // U as the B fragments the constructor loads, scaled by kUScale: per (position, K step, n-tile, lane) the 4
  // words of Fp16x3::append_fragment (a tail step's b1 words are zero). u: U[position][channel][filter]
  // (transformed_weights).
  static std::vector<std::uint32_t> weights(const std::vector<float>& u) {
    std::vector<std::uint32_t> out;
    for (int p = 0; p < kE; ++p)
      for (int k = 0; k < kSteps + kTail; ++k)
        for (int n = 0; n < kNTiles; ++n)
          for (int lane = 0; lane < 32; ++lane)
            Fp16x3::append_fragment(out, lane, [&](int kappa) {
              const int c = 16 * k + kappa, f = 8 * n + lane / 4;
              return c < C && f < F ? u[(std::size_t(p) * C + c) * F + f] * kUScale : 0.0f;
            });
    return out;
  }
  // Channels c, c + 1 of one V row as FP16 hi and lo pairs (zero past the channels).
  __device__ __forceinline__ static void split_pair(const float* row, int c, std::uint32_t& hi, std::uint32_t& lo) {
    const float2 x = c < C ? *reinterpret_cast<const float2*>(row + c) : float2{0.0f, 0.0f};
    const __half2 h = __floats2half2_rn(x.x, x.y);
    const float2 back = __half22float2(h);
    const __half2 l = __floats2half2_rn(x.x - back.x, x.y - back.y);
    hi = reinterpret_cast<const std::uint32_t&>(h), lo = reinterpret_cast<const std::uint32_t&>(l);
  }
  __device__ __forceinline__ void operator()(const float* vbuf, float* mbuf, int chunk) const {
#pragma unroll 1
    for (int mt = 0; mt < Lay::kChunk / 16; ++mt) {
      const int lt = mt * 16 + g;  // tiles lt and lt + 8 of the chunk
      const float* rows = vbuf + Lay::v_tile(chunk * Lay::kChunk + lt);
#pragma unroll
      for (int q0 = 0; q0 < kPositions; q0 += 4) {
        float acc[4][kNTiles][4] = {};
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const float* v0 = rows + (p0 + q0 + q) * Lay::kPs;
          const float* v8 = v0 + (Lay::v_tile(8) - Lay::v_tile(0));  // tile lt + 8: 8 tiles, 2 groups on
          // Small terms first, as Fp16x3::mma_conv.
#pragma unroll
          for (int k = 0; k < kSteps; ++k) {
            std::uint32_t ah[4], al[4];  // m16n8k16 A: (row g, K 2t), (g + 8, 2t), (g, 2t + 8), (g + 8, 2t + 8)
            split_pair(v0, 16 * k + 2 * t, ah[0], al[0]);
            split_pair(v8, 16 * k + 2 * t, ah[1], al[1]);
            split_pair(v0, 16 * k + 2 * t + 8, ah[2], al[2]);
            split_pair(v8, 16 * k + 2 * t + 8, ah[3], al[3]);
#pragma unroll
            for (int n = 0; n < kNTiles; ++n) {
              const uint4 w = b[q0 + q][k][n];
              mma_f16(acc[q][n], al, w.x, w.y);
              mma_f16(acc[q][n], ah, w.z, w.w);
              mma_f16(acc[q][n], ah, w.x, w.y);
            }
          }
          if constexpr (kTail) {
            std::uint32_t ah[2], al[2];  // m16n8k8 A: (row g, K 2t), (g + 8, 2t)
            split_pair(v0, 16 * kSteps + 2 * t, ah[0], al[0]);
            split_pair(v8, 16 * kSteps + 2 * t, ah[1], al[1]);
#pragma unroll
            for (int n = 0; n < kNTiles; ++n) {
              const uint2 w = b8[q0 + q][n];
              mma_f16_k8(acc[q][n], al, w.x);
              mma_f16_k8(acc[q][n], ah, w.y);
              mma_f16_k8(acc[q][n], ah, w.x);
            }
          }
        }
        // C fragment: (row g, filters 2t, 2t + 1), (row g + 8, the same): 4 positions of one (filter, tile) a
        // float4.
#pragma unroll
        for (int n = 0; n < kNTiles; ++n)
#pragma unroll
          for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int j = 0; j < 2; ++j) {
              const int f = 8 * n + 2 * t + j, i = 2 * h + j;
              if (f < F)
                *reinterpret_cast<float4*>(mbuf + f * Lay::kFs + (lt + 8 * h) * Lay::kMs + p0 + q0) =
                    float4{acc[0][n][i], acc[1][n][i], acc[2][n][i], acc[3][n][i]};
            }
      }
    }
  }
};

}  // namespace
}  // namespace cnn::cuda
