// Portable SIMD helpers of the optimised CPU kernels (fast_forward.cpp, winograd_forward.cpp): GCC/Clang
// vector extensions, so the compiler emits AVX-512 (or whatever -march allows; plain x86-64 splits the
// 64-byte vectors) without intrinsics. Internal to cpu_kernels: always inlined, no ABI is crossed.
#pragma once

#include <cstring>

namespace cnn::simd {

template <int W>
struct Vec;
template <>
struct Vec<16> {
  typedef float type __attribute__((vector_size(64)));
};
template <>
struct Vec<8> {
  typedef float type __attribute__((vector_size(32)));
};
template <>
struct Vec<4> {
  typedef float type __attribute__((vector_size(16)));
};

template <int W>
inline typename Vec<W>::type load(const float* p) {
  typename Vec<W>::type v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <int W>
inline void store(float* p, typename Vec<W>::type v) {
  std::memcpy(p, &v, sizeof v);
}

template <class V>
inline V vmax(V a, V b) {
  return a > b ? a : b;
}

// s in every lane. (V{} + s would cost an extra scalar add: 0 + s is not s for s = -0, so GCC keeps it;
// s - 0 is always s and folds away.)
inline Vec<16>::type splat(float s) { return s - Vec<16>::type{}; }

}  // namespace cnn::simd
