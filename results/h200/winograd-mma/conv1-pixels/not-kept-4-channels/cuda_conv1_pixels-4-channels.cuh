// conv1 + bias + ReLU + 2x2 pool as a direct implicit GEMM on the tensor cores, with the input stored as
// pixels, not planes: each padded pixel is 8 bytes, its 3 channels' pixel - 127.5 (exact in FP16) and a zero
// channel. A K step of 16 is 4 taps x 4 channels, one tap per lane % 4, so a lane's A operand of one row is
// a single 64-bit load (channels 0, 1 and 2, 3 of its tap: the m16n8k16 K positions 2t, 2t + 1 and
// 2t + 8, 2t + 9) instead of eight 32-bit gathers of split words and four byte permutes (conv1_mma's planar
// layout, whose shared-memory instructions set its pace). The price is K = 25 taps x 4 channels: 6 steps of
// 16 and an m16n8k8 tail (tap 24) against 5 steps for K = 75 in the natural order. Weights split hi/lo:
// 2 passes give FP32 accuracy, as in conv1_mma.
// Rows: m-tile c's rows g are conv pixels (2 py, 4 g + c), rows g + 8 the row below, so the 16 lanes of a
// half warp (g = 0..3 or 4..7, t = 0..3) load pixels 4 g + tap offset apart; with the padded row stride
// 1 modulo 4 pixels, 4 consecutive taps differ modulo 4, so the 16 loads hit 16 different bank pairs.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <vector>

#include "backends/cuda/cuda_fp16x3.cuh"
#include "backends/cuda/cuda_fused_parts.cuh"
#include "common/kernels/cuda/cuda_kernels.cuh"

namespace cnn::cuda::conv1_pixels {
namespace {

constexpr int kSide = kConv1.in_side, kPad = kConv1.pad, kRows = kSide + 2 * kPad;
constexpr int kRowStride = kRows + 1;  // pixels; 1 modulo 4 (see above)
static_assert(kRowStride % 4 == 1, "consecutive taps in different bank pairs");
constexpr int kPixels = kRows * kRowStride;        // per image, 8 bytes each
constexpr int kSteps = kTaps / 4, kTailTap = kTaps - 1;  // 6 K steps of 4 taps, then tap 24 as a K-8 tail
static_assert(kConv1.in_channels == 3 && kTaps == 4 * kSteps + 1 && kConv1.filters == 16,
              "3 channels and a zero in 64 bits, 25 taps, 2 n-tiles");
constexpr int kNTiles = 2, kFragments = (kSteps + 1) * kNTiles * 32;  // uint4 each: b0 hi, b1 hi, b0 lo, b1 lo
constexpr int kWarps = 8, kThreads = 32 * kWarps, kBlocksPerSm = 2;
constexpr int kPooledSide = kConv1.pooled_side(), kPooled = kConv1.filters * kPooledSide * kPooledSide;
template <int kImages>
constexpr std::size_t kSharedBytes = std::size_t(kFragments) * 16 + std::size_t(kImages) * kPixels * 8;
static_assert(kSharedBytes<4> * kBlocksPerSm <= 227 * 1024, "kBlocksPerSm blocks per SM");

struct Bias {
  float f[kConv1.filters];
};

// The weight at m16n8k16 K position kappa of step s (tail: the m16n8k8 of tap 24, channels at kappa 0..3),
// filter f; 0 for the zero channel and the tail's padding.
inline float weight_at(const std::vector<float>& w, int s, int kappa, int f) {
  const int tap = s < kSteps ? 4 * s + kappa % 8 / 2 : kTailTap;
  const int c = s < kSteps ? 2 * (kappa / 8) + kappa % 2 : kappa;
  if (c >= kConv1.in_channels || (s == kSteps && kappa >= 4)) return 0.0f;
  return w[(std::size_t(f) * kConv1.in_channels + c) * kTaps + tap];
}

// The split weights in fragment order [step][n-tile][lane].
inline std::vector<std::uint32_t> fragments(const std::vector<float>& w) {
  std::vector<std::uint32_t> out;
  out.reserve(std::size_t(kFragments) * 4);
  for (int s = 0; s <= kSteps; ++s)
    for (int n = 0; n < kNTiles; ++n)
      for (int lane = 0; lane < 32; ++lane)
        Fp16x3::append_fragment(out, lane, [&](int kappa) { return weight_at(w, s, kappa, 8 * n + lane / 4); });
  return out;
}

// Where a tap's pixel is from a window's top-left one.
__device__ __forceinline__ int tap_offset(int tap) { return tap / kConv1.kernel * kRowStride + tap % kConv1.kernel; }

template <int kImages>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    conv1_pixels_kernel(const std::uint8_t* __restrict__ images, const uint4* __restrict__ weights, Bias bias,
                        float* __restrict__ output, int count) {
  extern __shared__ __align__(16) uint4 shared[];
  const uint4* frag = shared;
  uint2* pixels = reinterpret_cast<uint2*>(shared + kFragments);
  const int t = threadIdx.x, warp = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;
  for (int i = t; i < kFragments; i += kThreads) shared[i] = __ldg(weights + i);
  // Only interiors are written below: the padding stays zero.
  for (int i = t; i < kImages * kPixels; i += kThreads) pixels[i] = make_uint2(0u, 0u);
  int offset[kSteps];
#pragma unroll
  for (int s = 0; s < kSteps; ++s) offset[s] = tap_offset(4 * s + q);
  // The tail's lanes q = 0, 1 read channels 0, 1 and 2, 3 of tap 24; q = 2, 3 the same words (weights 0).
  const int tail = 2 * tap_offset(kTailTap) + q % 2;

  for (int first = blockIdx.x * kImages; first < count; first += gridDim.x * kImages) {
    const int valid = min(kImages, count - first);
    if (first + gridDim.x * kImages >= count) allow_next_kernel();  // this block's last round
    __syncthreads();  // staged / the previous round is done with the pixels
    // A thread per 4 pixels of a row: a word of each channel plane in, 4 pixels out.
    constexpr int kQuads = kSide * kSide / 4;
    const auto* src = reinterpret_cast<const std::uint32_t*>(images + std::size_t(first) * kImageBytes);
    for (int i = t; i < valid * kQuads; i += kThreads) {
      const int b = i / kQuads, p = 4 * (i % kQuads), y = p / kSide, x = p % kSide;
      const std::uint32_t* words = src + b * (kImageBytes / 4) + p / 4;
      const std::uint32_t c0 = __ldg(words), c1 = __ldg(words + kQuads), c2 = __ldg(words + 2 * kQuads);
      uint2* dst = pixels + b * kPixels + (y + kPad) * kRowStride + x + kPad;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const auto v = [&](std::uint32_t word) { return float(word >> (8 * j) & 0xffu) - 127.5f; };
        const __half2 lo = __floats2half2_rn(v(c0), v(c1)), hi = __floats2half2_rn(v(c2), 0.0f);
        dst[j] = make_uint2(*reinterpret_cast<const std::uint32_t*>(&lo), *reinterpret_cast<const std::uint32_t*>(&hi));
      }
    }
    __syncthreads();

    for (int item = warp; item < valid * kPooledSide; item += kWarps) {  // a pooled row of an image
      const int b = item / kPooledSide, py = item % kPooledSide;
      const uint2* window = pixels + b * kPixels + 2 * py * kRowStride + 4 * g;  // m-tile 0's row g
      float acc[4][kNTiles][4] = {};
#pragma unroll
      for (int s = 0; s < kSteps; ++s) {
        const uint4 b0 = frag[(s * kNTiles) * 32 + lane], b1 = frag[(s * kNTiles + 1) * 32 + lane];
#pragma unroll
        for (int m = 0; m < 4; ++m) {
          const uint2 r0 = window[offset[s] + m], r8 = window[offset[s] + m + kRowStride];
          const std::uint32_t a[4] = {r0.x, r8.x, r0.y, r8.y};
          mma_f16(acc[m][0], a, b0.z, b0.w);  // lo first: small terms first
          mma_f16(acc[m][1], a, b1.z, b1.w);
          mma_f16(acc[m][0], a, b0.x, b0.y);
          mma_f16(acc[m][1], a, b1.x, b1.y);
        }
      }
      {
        const uint4 b0 = frag[(kSteps * kNTiles) * 32 + lane], b1 = frag[(kSteps * kNTiles + 1) * 32 + lane];
        const auto* words = reinterpret_cast<const std::uint32_t*>(window);
#pragma unroll
        for (int m = 0; m < 4; ++m) {
          const std::uint32_t a[2] = {words[2 * m + tail], words[2 * (m + kRowStride) + tail]};
          mma_f16_k8(acc[m][0], a, b0.z);
          mma_f16_k8(acc[m][1], a, b1.z);
          mma_f16_k8(acc[m][0], a, b0.x);
          mma_f16_k8(acc[m][1], a, b1.x);
        }
      }
      // Window (py, 2 g + h) is m-tiles 2h and 2h + 1, rows g and g + 8; accumulator e of n-tile n is filter
      // 8 n + 2 q + e. The max before the 1/255 scale, the bias and ReLU (all monotonic).
      float* out = output + (std::size_t(first) + b) * kPooled + py * kPooledSide + 2 * g;
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int n = 0; n < kNTiles; ++n)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int f = 8 * n + 2 * q + e;
            const float v = fmaxf(fmaxf(acc[2 * h][n][e], acc[2 * h][n][2 + e]),
                                  fmaxf(acc[2 * h + 1][n][e], acc[2 * h + 1][n][2 + e]));
            out[f * kPooledSide * kPooledSide + h] = fmaxf(v * (1.0f / 255.0f) + bias.f[f], 0.0f);
          }
    }
  }
}

template <int kImages>
void launch(const std::uint8_t* images, const std::uint32_t* weights, const Bias& bias, float* output, std::size_t n,
            int sms, cudaStream_t s) {
  const int blocks = persistent_blocks(n, kImages, kBlocksPerSm * sms);
  conv1_pixels_kernel<kImages><<<blocks, kThreads, kSharedBytes<kImages>, s>>>(
      images, reinterpret_cast<const uint4*>(weights), bias, output, int(n));
}

}  // namespace
}  // namespace cnn::cuda::conv1_pixels
