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

// Programmatic dependent launch (sm_90; launch_after_previous in cuda_support.hpp launches such a kernel).
// allow_next_kernel: this block has come far enough that the next kernel on the stream may take the SMs that
// blocks of this one leave (it starts once every block has called it or exited). wait_for_previous_kernel:
// returns once the kernel before this one has finished and its writes are visible; a no-op when this kernel was
// launched the ordinary way.
__device__ __forceinline__ void allow_next_kernel() { asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory"); }
__device__ __forceinline__ void wait_for_previous_kernel() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }

inline unsigned blocks_for(std::size_t threads, unsigned per_block) {
  return unsigned((threads + per_block - 1) / per_block);
}

}  // namespace cnn::cuda
