// The 3xFP16 arithmetic of the tensor-core variants that use FP16 tiles (cuda:fused_fp16x3's whole network,
// cuda:winograd_conv1_mma's conv1): an operand x = hi + lo, hi = x rounded to FP16 and lo = x - hi rounded to
// FP16 (22 significant bits together); a * b = a_lo * b_hi + a_hi * b_lo + a_hi * b_hi (small terms first,
// FP32 accumulation), leaving out a_lo * b_lo (about 2^-22 relative). It is the Arith policy of
// cuda_fused_mma.cuh's implicit GEMMs.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <vector>

namespace cnn::cuda {
namespace {

// c += a * b, one m16n8k16 FP16 tile with FP32 accumulators.
__device__ __forceinline__ void mma_f16(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                        std::uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// c += a * b, one m16n8k8 FP16 tile (a K tail of 8): a holds rows g and g + 8 at K 2t, 2t + 1.
__device__ __forceinline__ void mma_f16_k8(float (&c)[4], const std::uint32_t (&a)[2], std::uint32_t b0) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(b0));
}

// hi in the low 16 bits, lo in the high 16 bits.
__host__ __device__ inline std::uint32_t split_f16(float x) {
  const __half hi = __float2half_rn(x);
  const __half lo = __float2half_rn(x - __half2float(hi));
  return std::uint32_t(__half_raw(hi).x) | std::uint32_t(__half_raw(lo).x) << 16;
}

// Two values x, y split as above, as the two registers an mma operand takes: x's and y's hi (x's in the low
// half), then x's and y's lo.
__host__ __device__ inline uint2 split_f16_pair(float x, float y) {
  const std::uint32_t a = split_f16(x), b = split_f16(y);
  return {(a & 0xffffu) | b << 16, a >> 16 | (b & 0xffff0000u)};
}

// The Arith policy of fused_mma.cuh. K step of 16: an m16n8k16 lane holds K positions 2t, 2t + 1, 2t + 8,
// 2t + 9 (t = lane % 4), as the low and high halves of two registers; position kappa is in group
// 2 (kappa / 8) + kappa % 2, so each of a lane's four K positions has its own offset.
struct Fp16x3 {
  static constexpr const char* kLabel = "cuda:fused_fp16x3";
  static constexpr int kStepK = 16, kGroups = 4, kFragWords = 4;
  using Frag = uint4;    // b0 hi, b1 hi, b0 lo, b1 lo
  using Offsets = int4;  // a lane's offsets of K positions 2t, 2t + 1, 2t + 8, 2t + 9
  __host__ __device__ static constexpr int group(int kappa) { return 2 * (kappa / 8) + kappa % 2; }
  __host__ __device__ static constexpr int lane4(int kappa) { return kappa % 8 / 2; }
  __device__ static std::uint32_t store(float v) { return split_f16(v); }
  template <class Weight>
  static void append_fragment(std::vector<std::uint32_t>& out, int lane, Weight weight) {
    const int t = lane % 4;
    const uint2 b0 = split_f16_pair(weight(2 * t), weight(2 * t + 1));
    const uint2 b1 = split_f16_pair(weight(2 * t + 8), weight(2 * t + 9));
    out.insert(out.end(), {b0.x, b1.x, b0.y, b1.y});  // b0 hi, b1 hi, b0 lo, b1 lo
  }

  // As Tf32x3::mma_conv (see fused_tf32x3.cu), with K steps of 16 and activations stored split: a register
  // of A packs the his (or the los) of two K positions.
  template <int MT, int NT, bool kSplitA, class Rows>
  __device__ static __forceinline__ void mma_conv(const std::uint32_t* in, const int4* offsets, const uint4* frag,
                                                  int steps, int lane, float (&acc)[MT][NT][4]) {
#pragma unroll 2
    for (int s = 0; s < steps; ++s) {
      const int4 o = offsets[s * 4 + lane % 4];
      uint4 b[NT];
#pragma unroll
      for (int n = 0; n < NT; ++n) b[n] = frag[(s * NT + n) * 32 + lane];
      std::uint32_t ah[MT][4], al[MT][4];
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        const std::uint32_t *p0 = in + o.x, *p1 = in + o.y, *p8 = in + o.z, *p9 = in + o.w;
        const std::uint32_t w[4][2] = {{p0[Rows::lo(m)], p1[Rows::lo(m)]},
                                       {p0[Rows::hi(m)], p1[Rows::hi(m)]},
                                       {p8[Rows::lo(m)], p9[Rows::lo(m)]},
                                       {p8[Rows::hi(m)], p9[Rows::hi(m)]}};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          ah[m][i] = __byte_perm(w[i][0], w[i][1], 0x5410);
          al[m][i] = __byte_perm(w[i][0], w[i][1], 0x7632);
        }
      }
      if constexpr (kSplitA) {
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
          for (int n = 0; n < NT; ++n) mma_f16(acc[m][n], al[m], b[n].x, b[n].y);
      }
#pragma unroll
      for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int n = 0; n < NT; ++n) mma_f16(acc[m][n], ah[m], b[n].z, b[n].w);
#pragma unroll
      for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int n = 0; n < NT; ++n) mma_f16(acc[m][n], ah[m], b[n].x, b[n].y);
    }
  }
};

}  // namespace
}  // namespace cnn::cuda
