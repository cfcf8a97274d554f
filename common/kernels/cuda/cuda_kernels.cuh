// Device-side pieces the CUDA variants share.
#pragma once

#include <cstdint>

#include "common/fp32_math.hpp"
#include "common/network_spec.hpp"

namespace cnn::cuda {

// n pixels to floats, one thread each: the input step of the layer-wise variants and of the vendor library's.
static __global__ void normalise_kernel(const std::uint8_t* in, float* out, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = normalise_pixel_fp32(in[i]);
}

inline unsigned blocks_for(std::size_t threads, unsigned per_block) {
  return unsigned((threads + per_block - 1) / per_block);
}

}  // namespace cnn::cuda
