// cuda:fused_tf32x3: the tensor-core skeleton of fused_mma.cuh (cuda:fused_persistent's one-block-per-SM fused
// network, each convolution an implicit GEMM on mma.sync) with TF32 tiles, m16n8k8, and FP32 accuracy
// from "3xTF32": an operand x = big + small, big = x rounded to TF32 and small = x - big (exact in FP32);
// a * b = a_small * b_big + a_big * b_small + a_big * b_big (small terms first, FP32 accumulation), leaving
// out only a_small * b_small (about 2^-22 relative). conv1's pixels are exact in TF32: 2 passes there.
// Activations are stored as FP32 and split as they are gathered; the weights are stored as FP32 in fragment
// order and split per K step (both halves would not fit in shared memory beside 3 images).
#include <cstring>

#include "backends/cuda/cuda_fused_mma.cuh"
#include "common/registry.hpp"

namespace cnn::cuda {
namespace {

// x = big + small: big = x rounded to TF32 (to nearest, ties away: integer ops, as cvt.rna.tf32.f32 is not
// one instruction), small = x - big, exact in FP32 (the tensor cores read its top 19 bits).
__device__ __forceinline__ void split_tf32(float x, std::uint32_t& big, std::uint32_t& small) {
  big = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
  small = __float_as_uint(x - __uint_as_float(big));
}

// c += a * b, one m16n8k8 TF32 tile with FP32 accumulators.
__device__ __forceinline__ void mma_tf32(float (&c)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// The Arith policy of fused_mma.cuh. K step of 8: position kappa = 4 group + lane % 4 (the m16n8k8 A and B
// fragments hold K positions lane % 4 and lane % 4 + 4).
struct Tf32x3 {
  static constexpr const char* kLabel = "cuda:fused_tf32x3";
  static constexpr int kStepK = 8, kGroups = 2, kFragWords = 2;
  using Frag = float2;   // a lane's weights of K positions lane % 4 and lane % 4 + 4
  using Offsets = int2;  // a lane's offsets of the same
  __host__ __device__ static constexpr int group(int kappa) { return kappa / 4; }
  __host__ __device__ static constexpr int lane4(int kappa) { return kappa % 4; }
  __device__ static std::uint32_t store(float v) { return __float_as_uint(v); }
  template <class Weight>
  static void append_fragment(std::vector<std::uint32_t>& out, int lane, Weight weight) {
    for (int e = 0; e < 2; ++e) {
      const float w = weight(lane % 4 + 4 * e);
      std::uint32_t bits;
      std::memcpy(&bits, &w, sizeof bits);
      out.push_back(bits);
    }
  }

  // acc[m][n] += the MT x NT tiles of one implicit GEMM. m-tile m's rows g and g + 8 (g = lane / 4) are the
  // windows whose top-left corners are at in + Rows::lo(m) and in + Rows::hi(m) (compile-time offsets from
  // the lane's first window, so the loads take immediate offsets); offsets[s * 4 + lane % 4] holds the
  // lane's offsets of step s, frag[(s * NT + n) * 32 + lane] its weights of filter 8n + g. kSplitA: the
  // activations need the big/small split (3 passes), else they are exact in TF32 (2 passes).
  template <int MT, int NT, bool kSplitA, class Rows>
  __device__ static __forceinline__ void mma_conv(const std::uint32_t* in, const int2* offsets, const float2* frag,
                                                  int steps, int lane, float (&acc)[MT][NT][4]) {
#pragma unroll 2
    for (int s = 0; s < steps; ++s) {
      const int2 o = offsets[s * 4 + lane % 4];
      std::uint32_t bb[NT][2], bs[NT][2];
#pragma unroll
      for (int n = 0; n < NT; ++n) {
        const float2 w = frag[(s * NT + n) * 32 + lane];
        split_tf32(w.x, bb[n][0], bs[n][0]);
        split_tf32(w.y, bb[n][1], bs[n][1]);
      }
      std::uint32_t ab[MT][4], as[MT][4];
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        const std::uint32_t* x = in + o.x;
        const std::uint32_t* y = in + o.y;
        const std::uint32_t a[4] = {x[Rows::lo(m)], x[Rows::hi(m)], y[Rows::lo(m)], y[Rows::hi(m)]};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          if constexpr (kSplitA)
            split_tf32(__uint_as_float(a[i]), ab[m][i], as[m][i]);
          else
            ab[m][i] = a[i];
        }
      }
      if constexpr (kSplitA) {
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
          for (int n = 0; n < NT; ++n) mma_tf32(acc[m][n], as[m], bb[n]);
      }
#pragma unroll
      for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int n = 0; n < NT; ++n) mma_tf32(acc[m][n], ab[m], bs[n]);
#pragma unroll
      for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int n = 0; n < NT; ++n) mma_tf32(acc[m][n], ab[m], bb[n]);
    }
  }
};

const VariantRegistration kTf32x3{"cuda", 5, open_session<fused_mma::FusedMmaSession<Tf32x3>>,
    {"fused_tf32x3", "the whole network in one kernel like fused_persistent, the convolutions as implicit GEMMs on "
                           "the tensor cores (mma.sync TF32, 3 passes of big/small halves: FP32 accuracy)", false,
     {"tf32_tensor", fused_mma::kThreePassFlopPerImage}}};

}  // namespace
}  // namespace cnn::cuda
