// The FP32 pieces every backend computes the same way, written once and callable from host code, CUDA
// device code (nvcc, also Kokkos' nvcc_wrapper) and OpenACC compute regions (GCC marks them `acc routine`).
// Forced inline: GCC's nvptx offload otherwise emits them as PTX calls, which keeps the caller's arrays out
// of registers.
#pragma once

#include <math.h>  // expf: the C name, which GCC's nvptx offload compiler finds in its own libm

#include <cstdint>

#include "common/network_spec.hpp"

#if defined(__CUDACC__)
#define CNN_FP32_INLINE __host__ __device__ __forceinline__
#elif defined(__GNUC__)
#define CNN_FP32_INLINE [[gnu::always_inline]] inline
#else
#define CNN_FP32_INLINE inline
#endif

namespace cnn {

// normalise_pixel<float> (common/network_spec.hpp) with the division by 255 as a multiplication: at most
// 1 ulp apart, and an IEEE division per pixel costs a GPU about as much as the conv's multiply-adds on it.
#ifdef _OPENACC
#pragma acc routine seq
#endif
CNN_FP32_INLINE float normalise_pixel_fp32(std::uint8_t p) { return float(p) * (1.0f / 255.0f) - 0.5f; }

// Softmax of the kClasses logits in z, in place (one thread): the largest logit subtracted before expf.
#ifdef _OPENACC
#pragma acc routine seq
#endif
CNN_FP32_INLINE void softmax_fp32(float* z) {
  float top = z[0];
  for (int o = 1; o < kClasses; ++o) top = z[o] > top ? z[o] : top;
  float sum = 0.0f;
  for (int o = 0; o < kClasses; ++o) sum += (z[o] = expf(z[o] - top));
  for (int o = 0; o < kClasses; ++o) z[o] /= sum;
}

}  // namespace cnn
