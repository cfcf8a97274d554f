// Device-side pieces the CUDA variants share.
#pragma once

#include <cstdint>

#include "common/network_spec.hpp"

namespace cnn::cuda {

// x = pixel / 255 - 0.5, written as a multiply (a division per pixel costs measurably on the GPU).
__device__ __forceinline__ float normalise(std::uint8_t p) { return float(p) * (1.0f / 255.0f) - 0.5f; }

// n pixels to floats, one thread each: the input step of the layer-wise variants and of cudnn.
static __global__ void normalise_kernel(const std::uint8_t* in, float* out, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = normalise(in[i]);
}

// Softmax of 10 logits in place (one thread).
__device__ __forceinline__ void softmax10(float* z) {
  float m = z[0];
#pragma unroll
  for (int k = 1; k < kClasses; ++k) m = fmaxf(m, z[k]);
  float sum = 0;
#pragma unroll
  for (int k = 0; k < kClasses; ++k) sum += (z[k] = __expf(z[k] - m));
  const float inv = 1.0f / sum;
#pragma unroll
  for (int k = 0; k < kClasses; ++k) z[k] *= inv;
}

inline unsigned blocks_for(std::size_t threads, unsigned per_block) {
  return unsigned((threads + per_block - 1) / per_block);
}

}  // namespace cnn::cuda
