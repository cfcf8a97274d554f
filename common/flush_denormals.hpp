// FlushDenormals: while an object lives, denormal inputs and results count as zero on this thread (x86
// MXCSR FTZ + DAZ); the caller's mode comes back when it dies. The optimised CPU kernels hold one per image:
// some images drive activations below 1e-38, and on Intel cores every FMA touching such a value takes a
// microcode assist (~100 cycles). Their share of any sum is below 1e-38, so no result changes that
// validation or top-1 can see. Elsewhere (other CPUs, GPU code, which may include this from host/device
// functions) it does nothing.
#pragma once

#if defined(__SSE__) && !defined(__CUDA_ARCH__)
#include <xmmintrin.h>
#define CNN_FLUSH_DENORMALS 1
#endif
#if defined(__CUDACC__)
#define CNN_HOST_DEVICE __host__ __device__
#else
#define CNN_HOST_DEVICE
#endif

namespace cnn {

class FlushDenormals {
 public:
#ifdef CNN_FLUSH_DENORMALS
  CNN_HOST_DEVICE FlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040u); }
  CNN_HOST_DEVICE ~FlushDenormals() { _mm_setcsr(saved_); }
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;

 private:
  unsigned saved_;
#else
  CNN_HOST_DEVICE FlushDenormals() {}  // user-provided: `const FlushDenormals f;` stays valid
#endif
};

}  // namespace cnn
