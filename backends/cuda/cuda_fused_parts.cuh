// Device pieces the fused kernels share (cuda:fused, cuda:fused_persistent, cuda:fused_tf32x3,
// cuda:fused_fp16x3): the CUDA-core ones compute a pooled output from the 2x2 conv outputs under it, reading
// the 6x6 input window of one channel into registers; all of them zero stored padding and end with the same
// FC + softmax.
#pragma once

#include <algorithm>
#include <cstddef>

#include "common/kernels/cuda/cuda_kernels.cuh"

namespace cnn::cuda {

// The 6x6 window whose top-left corner is at `src` in planes of row stride P.
template <int P>
__device__ __forceinline__ void load_patch(const float* src, float (&patch)[6][6]) {
#pragma unroll
  for (int r = 0; r < 6; ++r)
#pragma unroll
    for (int q = 0; q < 6; ++q) patch[r][q] = src[r * P + q];
}

// The same with 8-byte loads (half the load instructions); src must be 8-byte aligned and P even. A warp's
// 64-bit loads are served per half-warp, so 16 lanes reading 16 different pairs of banks never conflict.
template <int P>
__device__ __forceinline__ void load_patch2(const float* src, float (&patch)[6][6]) {
  static_assert(P % 2 == 0, "rows stay 8-byte aligned");
#pragma unroll
  for (int r = 0; r < 6; ++r)
#pragma unroll
    for (int q = 0; q < 6; q += 2) {
      const float2 v = *reinterpret_cast<const float2*>(src + r * P + q);
      patch[r][q] = v.x;
      patch[r][q + 1] = v.y;
    }
}

// The four conv outputs of a pooling window += weight * the input under each, for tap (ky, kx).
// Called from fully unrolled loops, so the patch indices are constants and the patch stays in registers.
__device__ __forceinline__ void fma_2x2(float (&acc)[4], float w, const float (&patch)[6][6], int ky, int kx) {
  acc[0] += w * patch[ky][kx];
  acc[1] += w * patch[ky][kx + 1];
  acc[2] += w * patch[ky + 1][kx];
  acc[3] += w * patch[ky + 1][kx + 1];
}

// One channel's kTaps (5x5) taps into the 2x2 outputs of NF filters: tap_weights(tap, w) fills w[0..NF) with the
// weights of that tap (the layouts differ per layer and kernel).
template <int NF, typename TapWeights>
__device__ __forceinline__ void accumulate_taps(float (&acc)[NF][4], const float (&patch)[6][6], TapWeights tap_weights) {
#pragma unroll
  for (int tap = 0; tap < kTaps; ++tap) {
    float w[NF];
    tap_weights(tap, w);
#pragma unroll
    for (int f = 0; f < NF; ++f) fma_2x2(acc[f], w[f], patch, tap / kKernel, tap % kKernel);
  }
}

// max of the 2x2 outputs, + bias (the same for all four), then ReLU.
__device__ __forceinline__ float pool_relu(const float (&a)[4], float bias) {
  return fmaxf(fmaxf(fmaxf(a[0], a[1]), fmaxf(a[2], a[3])) + bias, 0.0f);
}

// The pixels of images [first, first + n) (uint8, planar), 4 to a 32-bit word: word t + k * kThreads of
// them into words[k], for thread t. Fused kernels load a group of images this way one group ahead, so that the DRAM
// latency hides behind the previous group's last layers.
template <int kThreads, int kWords>
__device__ __forceinline__ void fetch_pixel_words(const std::uint8_t* __restrict__ images, int first, int n,
                                                  std::uint32_t (&words)[kWords]) {
  const std::uint32_t* src = reinterpret_cast<const std::uint32_t*>(images + std::size_t(first) * kImageBytes);
  const int count = n * (kImageBytes / 4);
#pragma unroll
  for (int k = 0; k < kWords; ++k)
    if (int(threadIdx.x) + k * kThreads < count) words[k] = __ldg(src + threadIdx.x + k * kThreads);
}

// Position j of the 2-wide border of a padded plane of side P stored with row stride S (8P - 16 positions),
// as an offset in the plane.
template <int P, int S = P>
__device__ __forceinline__ int border_at(int j) {
  if (j < 4 * P) {
    const int r = j / P;
    return (r < 2 ? r : P - 4 + r) * S + j % P;
  }
  const int k = j - 4 * P, col = k % 4;
  return (2 + k / 4) * S + (col < 2 ? col : P - 4 + col);
}
template <int P>
constexpr int kBorder = 8 * P - 16;

// The softmax of the 10 logits every lane of a warp holds: lane k writes probability k to out[k].
__device__ __forceinline__ void softmax_to_lanes(float (&z)[kClasses], float* __restrict__ out, int lane) {
  softmax_fp32(z);
  if (lane < kClasses) {
    float mine = z[0];
#pragma unroll
    for (int k = 1; k < kClasses; ++k) mine = lane == k ? z[k] : mine;  // z[lane] without local memory
    out[lane] = mine;
  }
}

// FC + softmax of one image by one warp: lanes split the kFc.inputs() pooled values, a butterfly gives every
// lane all 10 logits, lane k writes probability k to out[k].
__device__ __forceinline__ void fc_softmax_warp(const float* pooled, const float* __restrict__ wfc,
                                                const float* __restrict__ bfc, float* __restrict__ out, int lane) {
  float z[kClasses];
#pragma unroll
  for (int o = 0; o < kClasses; ++o) {
    float a = 0;
#pragma unroll
    for (int i = lane; i < kFc.inputs(); i += 32) a += __ldg(wfc + o * kFc.inputs() + i) * pooled[i];
#pragma unroll
    for (int off = 16; off > 0; off /= 2) a += __shfl_xor_sync(0xffffffffu, a, off);
    z[o] = a + __ldg(bfc + o);
  }
  softmax_to_lanes(z, out, lane);
}

// Groups of `group` images in n images, the last one possibly short.
inline std::size_t image_groups(std::size_t n, int group) { return (n + std::size_t(group) - 1) / std::size_t(group); }

// Blocks of a persistent kernel (one per SM) over `n` images taken `group` at a time: one per SM, no more
// than there are groups. (SM count read once: cudaDevAttrMultiProcessorCount.)
inline int persistent_blocks(std::size_t n, int group, int sms) {
  return int(std::min<std::size_t>(image_groups(n, group), std::size_t(std::max(1, sms))));
}

// The first image that `blocks` persistent blocks taking n images `group` at a time write in a last round:
// the last `blocks` groups are the blocks' last rounds (Handoff::tail).
inline int last_rounds_tail(std::size_t n, int group, int blocks) {
  const std::size_t groups = image_groups(n, group);
  return int(groups > std::size_t(blocks) ? (groups - std::size_t(blocks)) * std::size_t(group) : 0);
}

// A persistent block over rounds of `group` images (the first at blockIdx.x group, then gridDim.x group apart):
// whether the round at `first` is its last, and whether it is one of its last two. The next kernel on the stream
// is allowed to launch in the second to last (allow_next_kernel): its blocks are then resident, awaiting the
// hand-off (Handoff), when this kernel's first blocks exit, and take their SMs at once.
__device__ __forceinline__ bool last_round(int first, int count, int group) {
  return first + int(gridDim.x) * group >= count;
}
__device__ __forceinline__ bool last_two_rounds(int first, int count, int group) {
  return first + 2 * int(gridDim.x) * group >= count;
}

}  // namespace cnn::cuda
