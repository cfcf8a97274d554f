// conv1 + bias + ReLU + 2x2 pool as a direct implicit GEMM on the tensor cores over packed pixels, not planes
// (conv1_mma's layout in cuda_winograd.cu): a padded image row is its pixels' 3 channels one after the other,
// each pixel - 127.5 (exact in FP16), so one window row (5 taps x 3 channels = 15 values) is contiguous and a
// K step of 16 is one window row plus a value of weight 0: K = 5 steps of 16 for 75 taps x channels.
// Pixels padded to 4 channels would need no copies but take K to 104 and the tensor pipe with it
// (backends/cuda/README.md has both measured); this keeps K at 80.
// The GEMM is C (16 filters x pixels) = W (filters x K) X (K x pixels): the filters are the m16 rows (operand
// A, a lane's filters g and g + 8 fixed for the kernel, their split weights in registers), the pixels the n8
// columns (operand B). A lane's two B registers hold K positions 2t, 2t + 1 and 2t + 8, 2t + 9 of its pixel g,
// laid out as 4 consecutive values of the window row: one 64-bit load straight into the mma's register pair.
// (With the pixels as the m16 rows, the same load filled A registers 0 and 2 of 4, and the moves that put
// them in place were 43 % of the kernel's instructions: H200, ncu per-instruction counts.)
// A 64-bit load must be 8-byte aligned, and a pixel is 6 bytes: the block keeps 4 copies of each image, copy c
// shifted so that windows at columns x = c modulo 4 start aligned; pixel x reads copy x modulo 4.
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
// A row's stride: 32 modulo 64 halves (64 modulo 128 bytes), not its 120 values, so that
// the two rows of a half warp's stores fall on different banks (store_quad).
constexpr int kRowHalves = 160;
static_assert(kRowPixels >= kRows + 1 && kRowHalves >= kRowPixels * kC && kRowHalves % 64 == 32,
              "room for the 16th value; rows keep alignment and the stores' banks");
constexpr int kCopies = 4;
// A copy: its shift, then the rows; copies 12 modulo 64 halves apart, so that a half warp's loads (pixels
// x0 .. x0 + 3 from copies 0 .. 3, K quarters t) fall on 4 different groups of 8 banks (cuda_test.cu).
constexpr int kCopyHalves = (kRows * kRowHalves + kCopies - 1 + 51) / 64 * 64 + 12;
constexpr int kImageHalves = kCopies * kCopyHalves;
static_assert(kCopyHalves >= kRows * kRowHalves + kCopies - 1 && kCopyHalves % 64 == 12, "copies apart, banks");
static_assert(kC * kK + 1 == 16 && kConv1.filters == 16, "a window row and a zero per K step; one m16 tile");
constexpr int kSteps = kK;
constexpr int kFragments = kSteps * 2 * 32;  // uint4 per (step, hi / lo, lane): A registers 0..3
constexpr int kImages = 2;                    // per block and round: 4 copies of an image take 34 KB
constexpr int kWarps = 8, kThreads = 32 * kWarps, kBlocksPerSm = 2;
constexpr int kPooledSide = kConv1.pooled_side(), kPooled = kConv1.filters * kPooledSide * kPooledSide;
constexpr int kGroups = kSide / 8;  // n-tiles of 8 pixels per conv row
constexpr std::size_t kSharedBytes = std::size_t(kImages) * kImageHalves * 2;
static_assert(kSharedBytes * kBlocksPerSm <= 227 * 1024, "kBlocksPerSm blocks per SM");

struct Bias {
  float f[kConv1.filters];
};

// The window row's value (kx, channel) at m16n8k16 K position kappa: a lane t loads the 4 values 4t .. 4t + 3
// as registers b0 (K 2t, 2t + 1) and b1 (K 2t + 8, 2t + 9).
constexpr int row_value(int kappa) { return kappa < 8 ? 4 * (kappa / 2) + kappa % 2 : 4 * (kappa / 2 - 4) + 2 + kappa % 2; }

// The weight at K position kappa of step s (window row ky = s), filter f; 0 for the 16th value.
inline float weight_at(const std::vector<float>& w, int s, int kappa, int f) {
  const int v = row_value(kappa);
  if (v >= kC * kK) return 0.0f;
  return w[(std::size_t(f) * kC + v % kC) * kTaps + s * kK + v / kC];
}

// The split weights as m16n8k16 A fragments, [step][hi, lo][lane] x 4 words: register i of lane (g, t) holds
// filter g + 8 (i % 2) at K positions 2t + 8 (i / 2) and the one after it (low half first).
inline std::vector<std::uint32_t> fragments(const std::vector<float>& w) {
  std::vector<std::uint32_t> out;
  out.reserve(std::size_t(kFragments) * 4);
  for (int s = 0; s < kSteps; ++s)
    for (int part = 0; part < 2; ++part)  // hi, then lo
      for (int lane = 0; lane < 32; ++lane)
        for (int i = 0; i < 4; ++i) {
          const int f = lane / 4 + 8 * (i % 2), kappa = 2 * (lane % 4) + 8 * (i / 2);
          const uint2 pair = split_f16_pair(weight_at(w, s, kappa, f), weight_at(w, s, kappa + 1, f));
          out.push_back(part == 0 ? pair.x : pair.y);
        }
  return out;
}

// Where padded pixel (y, x)'s first channel sits in copy c of an image (copy c starts c values in, so that
// pixels x = c modulo 4 are 8-byte aligned: 3 x + c = 0 modulo 4).
__host__ __device__ constexpr int at(int c, int y, int x) { return c * kCopyHalves + c + y * kRowHalves + x * kC; }
// Where lane (g, t) reads K quarter t of its pixel x = 8 j + g (n-tile j, copy x modulo 4 = g modulo 4) in
// padded row y: half lane_start(lane) + 3 * 8 j + y * kRowHalves of the image.
__host__ __device__ constexpr int lane_start(int lane) { return at(lane / 4 % 4, 0, lane / 4) + 4 * (lane % 4); }
static_assert(at(1, 0, 1) % 4 == 0 && at(2, 0, 2) % 4 == 0 && at(3, 1, 3) % 4 == 0 && kRowHalves % 4 == 0,
              "pixel x's windows aligned in copy x modulo 4");

__device__ __forceinline__ std::uint32_t pack(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const std::uint32_t*>(&h);
}

// Where a thread's 4 pixels (x a multiple of 4) start in copy c, modulo 8 bytes (4 halves): the same in every
// row, as rows are 8-byte multiples apart.
constexpr int quad_alignment(int c) { return at(c, kPad, kPad) % 4; }
static_assert(quad_alignment(0) == at(0, kPad + 1, kPad + 4) % 4 && quad_alignment(3) == at(3, kPad, kPad + 28) % 4,
              "one alignment per copy");

// A thread's 12 values (4 pixels) from `dst` on, kAlign halves past an 8-byte boundary: 64-bit stores where
// aligned, 16- and 32-bit ones at the ends. Threads' pixels are 24 bytes apart, an odd number of 8-byte words,
// and a half warp's two rows 64 modulo 128 bytes apart: its 64-bit stores fall on 16 different words of 8
// bytes. (As 6 32-bit words a thread, each store was a 2-way bank conflict: 63 % of the staging's wavefronts.)
template <int kAlign>
__device__ __forceinline__ void store_quad(__half* dst, const float (&v)[4 * kC]) {
  constexpr int kN = 4 * kC;
  constexpr int kHead = kAlign % 2;                        // a 16-bit store to reach a 32-bit boundary
  constexpr int kPair = (kAlign + kHead) % 4 == 2 ? 2 : 0;  // a 32-bit store to reach a 64-bit one
  constexpr int kFirst = kHead + kPair, kQuads = (kN - kFirst) / 4, kRest = kN - kFirst - 4 * kQuads;
  if constexpr (kHead) dst[0] = __float2half_rn(v[0]);
  if constexpr (kPair) *reinterpret_cast<std::uint32_t*>(dst + kHead) = pack(v[kHead], v[kHead + 1]);
#pragma unroll
  for (int k = 0; k < kQuads; ++k) {
    const int i = kFirst + 4 * k;
    *reinterpret_cast<uint2*>(dst + i) = make_uint2(pack(v[i], v[i + 1]), pack(v[i + 2], v[i + 3]));
  }
  constexpr int kTail = kN - kRest;
  if constexpr (kRest >= 2) *reinterpret_cast<std::uint32_t*>(dst + kTail) = pack(v[kTail], v[kTail + 1]);
  if constexpr (kRest % 2) dst[kN - 1] = __float2half_rn(v[kN - 1]);
}

__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    conv1_pixels_kernel(const std::uint8_t* __restrict__ images, const uint4* __restrict__ weights, Bias bias,
                        float* __restrict__ output, int count, Handoff to) {
  extern __shared__ __align__(16) uint4 shared[];
  __half* pixels = reinterpret_cast<__half*>(shared);
  const int t = threadIdx.x, warp = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;
  // This lane's A fragments (filters g, g + 8) for the kernel, and those filters' biases.
  std::uint32_t whi[kSteps][4], wlo[kSteps][4];
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    const uint4 h = __ldg(weights + (2 * s) * 32 + lane), l = __ldg(weights + (2 * s + 1) * 32 + lane);
    whi[s][0] = h.x, whi[s][1] = h.y, whi[s][2] = h.z, whi[s][3] = h.w;
    wlo[s][0] = l.x, wlo[s][1] = l.y, wlo[s][2] = l.z, wlo[s][3] = l.w;
  }
  const float bias_g = bias.f[g], bias_g8 = bias.f[g + 8];
  // Only interiors are written below: the padding stays zero.
  for (int i = t; i < kImages * kImageHalves / 2; i += kThreads) reinterpret_cast<std::uint32_t*>(pixels)[i] = 0u;

  for (int first = blockIdx.x * kImages; first < count; first += gridDim.x * kImages) {
    const int valid = min(kImages, count - first);
    if (last_two_rounds(first, count, kImages)) allow_next_kernel();
    __syncthreads();  // zeroed / the previous round is done with the pixels and has written its images
    if (t == 0 && last_round(first, count, kImages)) to.begin_last_round();
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
      static_assert(kCopies == 4, "a store_quad per copy");
      store_quad<quad_alignment(0)>(image + at(0, y + kPad, x + kPad), v);
      store_quad<quad_alignment(1)>(image + at(1, y + kPad, x + kPad), v);
      store_quad<quad_alignment(2)>(image + at(2, y + kPad, x + kPad), v);
      store_quad<quad_alignment(3)>(image + at(3, y + kPad, x + kPad), v);
    }
    __syncthreads();

    for (int item = warp; item < valid * kPooledSide; item += kWarps) {  // a pooled row of an image
      const int b = item / kPooledSide, py = item % kPooledSide;
      const __half* rows = pixels + b * kImageHalves + lane_start(lane) + 2 * py * kRowHalves;
      float acc[2][kGroups][4] = {};  // conv rows 2 py + r, n-tiles j (pixels 8 j .. 8 j + 7)
      // Padded row 2 py + d is window row d of conv row 2 py and window row d - 1 of conv row 2 py + 1: each
      // loaded B fragment serves both.
#pragma unroll
      for (int d = 0; d <= kSteps; ++d)
#pragma unroll
        for (int j = 0; j < kGroups; ++j) {
          const uint2 x = *reinterpret_cast<const uint2*>(rows + d * kRowHalves + 3 * 8 * j);
          if (d < kSteps) {
            mma_f16(acc[0][j], wlo[d], x.x, x.y);  // lo first: small terms first
            mma_f16(acc[0][j], whi[d], x.x, x.y);
          }
          if (d > 0) {
            mma_f16(acc[1][j], wlo[d - 1], x.x, x.y);
            mma_f16(acc[1][j], whi[d - 1], x.x, x.y);
          }
        }
      // C: (filter g, pixels 2t, 2t + 1 of n-tile j), (filter g + 8, the same): a lane holds whole pooling
      // windows (pooled column 4 j + t). The max before the 1/255 scale, the bias and ReLU (all monotonic).
      float* out = output + (std::size_t(first) + b) * kPooled + py * kPooledSide + q;
#pragma unroll
      for (int j = 0; j < kGroups; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const float v = fmaxf(fmaxf(acc[0][j][2 * h], acc[0][j][2 * h + 1]), fmaxf(acc[1][j][2 * h], acc[1][j][2 * h + 1]));
          out[(g + 8 * h) * kPooledSide * kPooledSide + 4 * j] = fmaxf(v * (1.0f / 255.0f) + (h ? bias_g8 : bias_g), 0.0f);
        }
    }
  }
}

inline void launch(const std::uint8_t* images, const std::uint32_t* weights, const Bias& bias, float* output,
                   std::size_t n, int blocks, const Handoff& to, cudaStream_t s) {
  conv1_pixels_kernel<<<blocks, kThreads, kSharedBytes, s>>>(images, reinterpret_cast<const uint4*>(weights), bias,
                                                             output, int(n), to);
}

}  // namespace
}  // namespace cnn::cuda::conv1_pixels
