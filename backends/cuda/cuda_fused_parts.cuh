// Device pieces the fused kernels share (cuda:fused, cuda:fused_persistent): both compute a pooled output from
// the 2x2 conv outputs under it, reading the 6x6 input window of one channel into registers.
#pragma once

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

}  // namespace cnn::cuda
