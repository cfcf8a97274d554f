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

// Loops over the kClasses logits fully unrolled: a caller's logits array then stays in registers. GCC's
// nvptx offload leaves a 10-trip loop with a call (expf) rolled, which puts the array in local memory and
// cost the OpenACC fused variants 40-55 us per pass at 1200 images on an H100 (results/ab/h100-99e3c8b).
#if defined(__CUDACC__)
#define CNN_UNROLL_CLASSES _Pragma("unroll")
#elif defined(__GNUC__)
#define CNN_UNROLL_CLASSES _Pragma("GCC unroll 10")
#else
#define CNN_UNROLL_CLASSES
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
  CNN_UNROLL_CLASSES
  for (int o = 1; o < kClasses; ++o) top = z[o] > top ? z[o] : top;
  float sum = 0.0f;
  CNN_UNROLL_CLASSES
  for (int o = 0; o < kClasses; ++o) sum += (z[o] = expf(z[o] - top));
  CNN_UNROLL_CLASSES
  for (int o = 0; o < kClasses; ++o) z[o] /= sum;
}

}  // namespace cnn
