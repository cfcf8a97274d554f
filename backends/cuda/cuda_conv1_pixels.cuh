// conv1 + bias + ReLU + 2x2 pool as a direct implicit GEMM on the tensor cores over packed pixels, not planes
// (conv1_mma's layout in cuda_winograd.cu): a padded image row is its pixels' 3 channels one after the other,
// each pixel - 127.5 (exact in FP16), so one window row (5 taps x 3 channels = 15 values) is contiguous and a
// K step of 16 is one window row plus a value of weight 0: K = 5 steps of 16 for 75 taps x channels, and
// a lane's four K positions of an m16n8k16 row (2t, 2t + 1 and 2t + 8, 2t + 9) are 4 consecutive values,
// one 64-bit load, instead of eight 32-bit gathers of split words and four byte permutes (which kept
// conv1_mma's load pipe busier than its tensor pipe). Pixels padded to 4 channels would need no copies but
// take K to 104 and the tensor pipe with it (backends/cuda/README.md has both measured); this keeps K at 80.
// A 64-bit load must be 8-byte aligned, and a pixel is 6 bytes: the block keeps 4 copies of each image, copy c
// shifted so that windows at columns x = c modulo 4 start aligned. m-tile c's rows g are conv pixels
// (2 py, 4 g + c) and rows g + 8 the row below, so m-tile c reads copy c only. A half warp's 16 loads
// (g = 0..3 or 4..7, t = 0..3) span 26 consecutive 32-bit words: no two different words in one bank.
// Weights split hi/lo: 2 passes give FP32 accuracy, as in conv1_mma.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <vector>

#include "backends/cuda/cuda_fp16x3.cuh"
#include "backends/cuda/cuda_fused_parts.cuh"
#include "common/kernels/cuda/cuda_kernels.cuh"

namespace cnn::cuda::conv1_pixels {
namespace {

constexpr int kC = kConv1.in_channels, kK = kConv1.kernel, kSide = kConv1.in_side, kPad = kConv1.pad;
constexpr int kRows = kSide + 2 * kPad;
constexpr int kRowPixels = 40;  // >= 37: the K step's 16th value (weight 0) reads one pixel past the window
constexpr int kRowHalves = kRowPixels * kC;
static_assert(kRowPixels >= kRows + 1 && kRowPixels % 4 == 0, "room for the 16th value; rows keep alignment");
constexpr int kCopies = 4;
constexpr int kCopyHalves = (kRows * kRowHalves + kCopies + 7) / 8 * 8;  // a copy: its shift, then the rows
constexpr int kImageHalves = kCopies * kCopyHalves;
static_assert(kC * kK + 1 == 16 && kConv1.filters == 16, "a window row and a zero per K step; 2 n-tiles");
constexpr int kSteps = kK, kNTiles = 2, kFragments = kSteps * kNTiles * 32;  // uint4: b0 hi, b1 hi, b0 lo, b1 lo
constexpr int kImages = 2;  // per block and round: 4 copies of an image take 34 KB
constexpr int kWarps = 8, kThreads = 32 * kWarps, kBlocksPerSm = 2;
constexpr int kPooledSide = kConv1.pooled_side(), kPooled = kConv1.filters * kPooledSide * kPooledSide;
constexpr std::size_t kSharedBytes = std::size_t(kFragments) * 16 + std::size_t(kImages) * kImageHalves * 2;
static_assert(kSharedBytes * kBlocksPerSm <= 227 * 1024, "kBlocksPerSm blocks per SM");

struct Bias {
  float f[kConv1.filters];
};

// The window row's value (kx, channel) at m16n8k16 K position kappa: a lane t loads the 4 values 4t .. 4t + 3
// as registers a0 (K 2t, 2t + 1) and a2 (K 2t + 8, 2t + 9).
constexpr int row_value(int kappa) { return kappa < 8 ? 4 * (kappa / 2) + kappa % 2 : 4 * (kappa / 2 - 4) + 2 + kappa % 2; }

// The weight at K position kappa of step s (window row ky = s), filter f; 0 for the 16th value.
inline float weight_at(const std::vector<float>& w, int s, int kappa, int f) {
  const int v = row_value(kappa);
  if (v >= kC * kK) return 0.0f;
  return w[(std::size_t(f) * kC + v % kC) * kTaps + s * kK + v / kC];
}

// The split weights in fragment order [step][n-tile][lane].
inline std::vector<std::uint32_t> fragments(const std::vector<float>& w) {
  std::vector<std::uint32_t> out;
  out.reserve(std::size_t(kFragments) * 4);
  for (int s = 0; s < kSteps; ++s)
    for (int n = 0; n < kNTiles; ++n)
      for (int lane = 0; lane < 32; ++lane)
        Fp16x3::append_fragment(out, lane, [&](int kappa) { return weight_at(w, s, kappa, 8 * n + lane / 4); });
  return out;
}

// Where padded pixel (y, x)'s first channel sits in copy c of an image (copy c starts c values in, so that
// pixels x = c modulo 4 are 8-byte aligned: 3 x + c = 0 modulo 4).
__host__ __device__ constexpr int at(int c, int y, int x) { return c * kCopyHalves + c + y * kRowHalves + x * kC; }
static_assert(at(1, 0, 1) % 4 == 0 && at(2, 0, 2) % 4 == 0 && at(3, 1, 3) % 4 == 0 && kRowHalves % 4 == 0,
              "windows of m-tile c aligned in copy c");

__device__ __forceinline__ std::uint32_t pack(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const std::uint32_t*>(&h);
}

__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    conv1_pixels_kernel(const std::uint8_t* __restrict__ images, const uint4* __restrict__ weights, Bias bias,
                        float* __restrict__ output, int count) {
  extern __shared__ __align__(16) uint4 shared[];
  const uint4* frag = shared;
  __half* pixels = reinterpret_cast<__half*>(shared + kFragments);
  const int t = threadIdx.x, warp = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;
  for (int i = t; i < kFragments; i += kThreads) shared[i] = __ldg(weights + i);
  // Only interiors are written below: the padding stays zero.
  for (int i = t; i < kImages * kImageHalves / 2; i += kThreads) reinterpret_cast<std::uint32_t*>(pixels)[i] = 0u;

  for (int first = blockIdx.x * kImages; first < count; first += gridDim.x * kImages) {
    const int valid = min(kImages, count - first);
    if (first + gridDim.x * kImages >= count) allow_next_kernel();  // this block's last round
    __syncthreads();  // staged / the previous round is done with the pixels
    // A thread per 4 pixels of a row: a word of each channel plane in, their 12 values into each copy.
    constexpr int kQuads = kSide * kSide / 4;
    const auto* src = reinterpret_cast<const std::uint32_t*>(images + std::size_t(first) * kImageBytes);
    for (int i = t; i < valid * kQuads; i += kThreads) {
      const int b = i / kQuads, p = 4 * (i % kQuads), y = p / kSide, x = p % kSide;
      const std::uint32_t* words = src + b * (kImageBytes / 4) + p / 4;
      const std::uint32_t planes[kC] = {__ldg(words), __ldg(words + kQuads), __ldg(words + 2 * kQuads)};
      float v[4 * kC];
#pragma unroll
      for (int j = 0; j < 4 * kC; ++j) v[j] = float(planes[j % kC] >> (8 * (j / kC)) & 0xffu) - 127.5f;
      __half* image = pixels + b * kImageHalves;
#pragma unroll
      for (int c = 0; c < kCopies; ++c) {
        __half* dst = image + at(c, y + kPad, x + kPad);  // even for c = 0, 2 (x + 2 = 2 modulo 4), odd else
        if (c % 2 == 0) {
#pragma unroll
          for (int j = 0; j < 4 * kC; j += 2) reinterpret_cast<std::uint32_t*>(dst)[j / 2] = pack(v[j], v[j + 1]);
        } else {
          dst[0] = __float2half_rn(v[0]);
#pragma unroll
          for (int j = 1; j < 4 * kC - 1; j += 2) reinterpret_cast<std::uint32_t*>(dst + 1)[j / 2] = pack(v[j], v[j + 1]);
          dst[4 * kC - 1] = __float2half_rn(v[4 * kC - 1]);
        }
      }
    }
    __syncthreads();

    for (int item = warp; item < valid * kPooledSide; item += kWarps) {  // a pooled row of an image
      const int b = item / kPooledSide, py = item % kPooledSide;
      const __half* image = pixels + b * kImageHalves;
      float acc[4][kNTiles][4] = {};
#pragma unroll
      for (int s = 0; s < kSteps; ++s) {
        const uint4 b0 = frag[(s * kNTiles) * 32 + lane], b1 = frag[(s * kNTiles + 1) * 32 + lane];
#pragma unroll
        for (int m = 0; m < 4; ++m) {
          const __half* row = image + at(m, 2 * py + s, 4 * g + m) + 4 * q;  // m-tile m's row g, window row s
          const uint2 r0 = *reinterpret_cast<const uint2*>(row), r8 = *reinterpret_cast<const uint2*>(row + kRowHalves);
          const std::uint32_t a[4] = {r0.x, r8.x, r0.y, r8.y};
          mma_f16(acc[m][0], a, b0.z, b0.w);  // lo first: small terms first
          mma_f16(acc[m][1], a, b1.z, b1.w);
          mma_f16(acc[m][0], a, b0.x, b0.y);
          mma_f16(acc[m][1], a, b1.x, b1.y);
        }
      }
      // The max before the 1/255 scale, the bias and ReLU (all monotonic).
      float* out = output + (std::size_t(first) + b) * kPooled + py * kPooledSide + 2 * g;
      conv1_pool_windows(acc, q, [&](int f, int h, float v) {
        out[f * kPooledSide * kPooledSide + h] = fmaxf(v * (1.0f / 255.0f) + bias.f[f], 0.0f);
      });
    }
  }
}

inline void launch(const std::uint8_t* images, const std::uint32_t* weights, const Bias& bias, float* output,
                   std::size_t n, int sms, cudaStream_t s) {
  const int blocks = persistent_blocks(n, kImages, kBlocksPerSm * sms);
  conv1_pixels_kernel<<<blocks, kThreads, kSharedBytes, s>>>(images, reinterpret_cast<const uint4*>(weights), bias,
                                                             output, int(n));
}

}  // namespace
}  // namespace cnn::cuda::conv1_pixels
