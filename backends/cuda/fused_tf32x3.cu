// cuda:fused_tf32x3, cuda:fused_batch's structure (the whole network in one kernel, one block per SM on kB
// images at a time, every weight and activation in shared memory, uint8 in, 10 probabilities out) with the
// three convolutions on the tensor cores instead of the FP32 CUDA cores. What it changes, and why:
// - Each conv is an implicit GEMM per image: M = conv output pixels (16 per mma.sync m16n8k8 tile), N =
//   filters (8 per tile: 16 exactly, 20 padded to 24), K = channels x 25 taps (8 per step), TF32 inputs.
// - FP32 accuracy from TF32 ("3xTF32"): an operand x = big + small, big = x rounded to TF32 and small = x -
//   big (exact in FP32); a * b = a_small * b_big + a_big * b_small + a_big * b_big (small terms first, FP32
//   accumulation); only a_small * b_small (about 2^-22 relative) is left out. conv1's activation operand is
//   the raw pixel - 127.5, exact in TF32 (at most 8 significant bits), so conv1 takes 2 passes and its 1/255
//   scale is applied after the sum. Weights are laid out once, on the host, in fragment order.
// - The im2col gathers hit 32 different banks: conv1's K runs in the natural (channel, ky, kx) order with row
//   and plane strides of 1 modulo 4, so any 4 consecutive k fall in 4 different banks modulo 4, and an
//   m-tile's 8 rows are pixels 4 apart; conv2/conv3's K steps take 4 consecutive channels of two
//   (channel group, tap) units, with planes 8 modulo 32 banks apart, and an m-tile's 8 rows are 8 adjacent
//   pixels. Each thread's offset of each K step comes from a small table in shared memory.
// - Pooling happens in registers: an m-tile's rows g and g + 8 are the two rows of a pooling window, its
//   columns either a second m-tile of the same thread (conv1) or the neighbouring lane (a shuffle).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "backends/cuda/device_session.hpp"
#include "backends/cuda/fused_parts.cuh"
#include "backends/cuda/kernels_common.cuh"
#include "backends/cuda/variants.hpp"

namespace cnn::cuda {
namespace {

constexpr int kB = 3;  // images per batch: what the shared memory holds beside the weight fragments
constexpr int kWarps = 12, kThreads = 32 * kWarps;
constexpr int kTaps = 25;
constexpr int kMmaM = 16, kMmaN = 8, kMmaK = 8;

// Smallest value >= n that is r modulo m.
constexpr int at_least_with_residue(int n, int r, int m) { return n + ((r - n) % m + m) % m; }

// Where K step k's weight sits: input channel and tap; channel < 0 for the padding at the end of K.
struct KSlot {
  int channel, tap;
};

// One convolution as an implicit GEMM over padded input planes of side P, row stride S, plane stride Q.
// kGrouped: K steps of two (group of 4 channels, tap) units (conv2, conv3); otherwise the natural order.
template <const ConvSpec& L, int S, int Q, bool kGrouped>
struct ConvGemm {
  static constexpr int C = L.in_channels, F = L.filters, P = L.in_side + 2 * L.pad;
  static constexpr int kUnits = C / 4 * kTaps;
  static constexpr int kSteps = kGrouped ? (kUnits + 1) / 2 : (C * kTaps + kMmaK - 1) / kMmaK;
  static constexpr int kNTiles = (F + kMmaN - 1) / kMmaN;
  static constexpr int kFragFloats = kSteps * kNTiles * 32 * 2;  // [step][n-tile][lane] float2
  static constexpr int kOffsets = kSteps * 4;                    // [step][lane % 4] int2
  static constexpr int kPlane = Q, kPlanes = C * Q;
  static_assert(L.kernel == 5 && S >= P && Q >= P * S, "5x5 windows inside the padded planes");
  static_assert(!kGrouped || C % 4 == 0, "channel groups of 4");

  __host__ __device__ static constexpr KSlot slot(int k) {
    if constexpr (kGrouped) {
      const int unit = 2 * (k / kMmaK) + k % kMmaK / 4;
      return unit < kUnits ? KSlot{4 * (unit / kTaps) + k % 4, unit % kTaps} : KSlot{-1, 0};
    } else {
      return k < C * kTaps ? KSlot{k / kTaps, k % kTaps} : KSlot{-1, 0};
    }
  }
  // Offset of K index k from a window's top-left corner. The padding (weight 0) reads a finite value in the
  // window at the offset that keeps the bank pattern: tap k % 4 of the first row (natural order) or the
  // first tap of channel k % 4 (grouped).
  __host__ __device__ static constexpr int offset(int k) {
    const KSlot s = slot(k);
    if (s.channel < 0) return kGrouped ? k % 4 * Q : k % 4;
    return s.channel * Q + s.tap / 5 * S + s.tap % 5;
  }
};

constexpr int kP1 = kConv1.in_side + 2 * kConv1.pad, kP2 = kConv2.in_side + 2 * kConv2.pad;
constexpr int kP3 = kConv3.in_side + 2 * kConv3.pad;
constexpr int kS1 = at_least_with_residue(kP1, 1, 4);
using Conv1 = ConvGemm<kConv1, kS1, at_least_with_residue(kP1 * kS1, 1, 4), false>;
using Conv2 = ConvGemm<kConv2, kP2, at_least_with_residue(kP2 * kP2, 8, 32), true>;
using Conv3 = ConvGemm<kConv3, kP3, at_least_with_residue(kP3 * kP3, 8, 32), true>;
// conv1 (see the header): offset(k) = k modulo 4, and 8 pixels 4 apart cover the 8 multiples of 4.
static_assert(kS1 % 4 == 1 && Conv1::kPlane % 4 == 1, "conv1 strides 1 mod 4");
// conv2/conv3: 4 channels 8 banks apart, 8 adjacent pixels.
static_assert(Conv2::kPlane % 32 == 8 && Conv3::kPlane % 32 == 8, "conv2/conv3 planes 8 banks apart");

// The m-tiles of each layer (rows g: conv row 2 py, rows g + 8: conv row 2 py + 1).
constexpr int kOut1 = kConv1.out_side(), kOut2 = kConv2.out_side(), kOut3 = kConv3.out_side();
static_assert(kOut1 == 4 * kMmaM / 2 && kOut2 == 2 * kMmaM / 2 && kOut3 == kMmaM / 2,
              "conv1: 4 m-tiles of pixels 4 apart per pooled row; conv2: 2 of 8 adjacent pixels; conv3: 1");
constexpr int kMt1 = 4, kMt2 = 4, kMt3 = 1;  // m-tiles per warp item
// Each m-tile's rows g and g + 8 relative to the warp item's first window (see the layer loops).
struct Rows1 {  // m-tile c: conv pixels (2py, 4g + c) and the row below
  static constexpr int lo(int c) { return c; }
  static constexpr int hi(int c) { return kS1 + c; }
};
struct Rows2 {  // m-tile m: pooled row 2 pair + m / 2, pixels 8 (m % 2) + g
  static constexpr int lo(int m) { return 2 * (m / 2) * kP2 + kMmaM / 2 * (m % 2); }
  static constexpr int hi(int m) { return lo(m) + kP2; }
};
struct Rows3 {  // the pooled row py's 8 + 8 pixels
  static constexpr int lo(int) { return 0; }
  static constexpr int hi(int) { return kP3; }
};
constexpr int kItems1 = kConv1.pooled_side();                 // per image: a pooled row
constexpr int kItems2 = kConv2.pooled_side() * 2 / kMt2;      // two pooled rows
constexpr int kItems3 = kConv3.pooled_side();                 // a pooled row
static_assert(kB * kItems1 % kWarps == 0 && kB * kItems2 % kWarps == 0 && kB * kItems3 % kWarps == 0,
              "every warp gets the same work per layer");

// Shared memory, in floats: weight fragments, K-offset tables, then per image conv1's input (conv3's
// aliases it), conv2's input, the pooled conv3 output.
constexpr int kOffFrag2 = Conv1::kFragFloats, kOffFrag3 = kOffFrag2 + Conv2::kFragFloats;
constexpr int kFragFloats = kOffFrag3 + Conv3::kFragFloats;
constexpr int kOffOffsets = kFragFloats;
constexpr int kOffsetInts = 2 * (Conv1::kOffsets + Conv2::kOffsets + Conv3::kOffsets);
constexpr int kOffImages = kOffOffsets + kOffsetInts;
constexpr int kIn1 = (Conv1::kPlanes + 1) / 2 * 2;
constexpr int kIn2 = Conv2::kPlanes, kPooled = kFc.inputs();
constexpr int kImage = kIn1 + kIn2 + kPooled;
constexpr std::size_t kSharedBytes = std::size_t(kOffImages + kB * kImage) * sizeof(float);
static_assert(Conv3::kPlanes <= kIn1, "conv3's input aliases conv1's");
static_assert(kFragFloats % 4 == 0 && kOffsetInts % 4 == 0, "fragments staged as float4, tables as int2");
static_assert(kSharedBytes <= 227 * 1024, "fits one SM's shared memory");
constexpr int kPixelWords = (kB * kImageBytes / 4 + kThreads - 1) / kThreads;

__constant__ float c_b1[kConv1.filters];
__constant__ float c_b2[kConv2.filters];
__constant__ float c_b3[kConv3.filters];

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

// acc[m][n] += the MT x NT tiles of one implicit GEMM. m-tile m's rows g and g + 8 (g = lane / 4) are the
// windows whose top-left corners are at in + Rows::lo(m) and in + Rows::hi(m) (compile-time offsets from
// the lane's first window, so the loads take immediate offsets); offsets[s * 4 + lane % 4] holds the
// offsets of K indices 8s + lane % 4 and 8s + lane % 4 + 4; frag[(s * NT + n) * 32 + lane] the matching
// weights of filters 8n + g. kSplitA: the activations need the big/small split (3 passes), else they are
// exact in TF32 (2 passes).
template <int MT, int NT, bool kSplitA, class Rows>
__device__ __forceinline__ void mma_conv(const float* in, const int2* offsets, const float2* frag, int steps, int lane,
                                         float (&acc)[MT][NT][4]) {
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
      const float* x = in + o.x;
      const float* y = in + o.y;
      const float a[4] = {x[Rows::lo(m)], x[Rows::hi(m)], y[Rows::lo(m)], y[Rows::hi(m)]};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        if constexpr (kSplitA)
          split_tf32(a[i], ab[m][i], as[m][i]);
        else
          ab[m][i] = __float_as_uint(a[i]);
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

template <class G>
__device__ void stage_offsets(int2* dst) {
  for (int i = threadIdx.x; i < G::kOffsets; i += kThreads) {
    const int k = i / 4 * kMmaK + i % 4;
    dst[i] = make_int2(G::offset(k), G::offset(k + 4));
  }
}

// The max over a pooling window's two rows (accumulators e and 2 + e), then over the neighbouring column
// (lane ^ 4: pixel g ^ 1), + bias, ReLU.
__device__ __forceinline__ float pool_rows_then_lanes(const float (&c)[4], int e, float bias) {
  float v = fmaxf(c[e], c[2 + e]);
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 4));
  return fmaxf(v + bias, 0.0f);
}

__global__ void __launch_bounds__(kThreads, 1)
    fused_tf32x3_kernel(const std::uint8_t* __restrict__ images, const float* __restrict__ fragments,
                        const float* __restrict__ wfc, const float* __restrict__ bfc, float* __restrict__ probs,
                        int count) {
  extern __shared__ __align__(16) float smem[];
  const float2* frag1 = reinterpret_cast<const float2*>(smem);
  const float2* frag2 = reinterpret_cast<const float2*>(smem + kOffFrag2);
  const float2* frag3 = reinterpret_cast<const float2*>(smem + kOffFrag3);
  int2* off1 = reinterpret_cast<int2*>(smem + kOffOffsets);
  int2* off2 = off1 + Conv1::kOffsets;
  int2* off3 = off2 + Conv2::kOffsets;
  float* img_base = smem + kOffImages;
  const int t = threadIdx.x, warp = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;

  std::uint32_t pixels[kPixelWords];  // the batch's pixels, loaded one batch ahead
  const auto fetch = [&](int first) { fetch_pixel_words<kThreads>(images, first, min(kB, count - first), pixels); };
  if (blockIdx.x * kB < count) fetch(blockIdx.x * kB);
  for (int i = t; i < kFragFloats / 4; i += kThreads)
    reinterpret_cast<float4*>(smem)[i] = __ldg(reinterpret_cast<const float4*>(fragments) + i);
  stage_offsets<Conv1>(off1);
  stage_offsets<Conv2>(off2);
  stage_offsets<Conv3>(off3);
  // conv2's input: only interiors are written below, so its padding stays zero.
  for (int i = t; i < kB * kIn2; i += kThreads) img_base[i / kIn2 * kImage + kIn1 + i % kIn2] = 0.0f;

  for (int first = blockIdx.x * kB; first < count; first += gridDim.x * kB) {
    const int valid = min(kB, count - first);
    __syncthreads();  // staged / the previous batch is done with conv1's input

    // Pixels - 127.5 (exact in TF32) -> conv1's padded input; then its border (conv3 wrote over it).
#pragma unroll
    for (int k = 0; k < kPixelWords; ++k) {
      const int i = t + k * kThreads;
      if (i >= valid * (kImageBytes / 4)) break;
      const int b = i / (kImageBytes / 4), p = 4 * (i % (kImageBytes / 4));
      const int c = p / (kImageSide * kImageSide), y = p / kImageSide % kImageSide, x = p % kImageSide;
      float* dst = img_base + b * kImage + c * Conv1::kPlane + (y + 2) * kS1 + x + 2;
#pragma unroll
      for (int j = 0; j < 4; ++j) dst[j] = float((pixels[k] >> (8 * j)) & 0xffu) - 127.5f;
    }
    for (int i = t; i < valid * Conv1::C * kBorder<kP1>; i += kThreads) {
      const int b = i / (Conv1::C * kBorder<kP1>), c = i / kBorder<kP1> % Conv1::C;
      img_base[b * kImage + c * Conv1::kPlane + border_at<kP1, kS1>(i % kBorder<kP1>)] = 0.0f;
    }
    __syncthreads();

    // conv1 + ReLU + pool. Warp item (image, pooled row py): m-tile c's rows g are conv pixels
    // (2py, 4g + c), rows g + 8 the row below, so window (py, 2g + h) is in m-tiles 2h and 2h + 1.
    for (int item = warp; item < valid * kItems1; item += kWarps) {
      const int b = item / kItems1, py = item % kItems1;
      float acc[kMt1][Conv1::kNTiles][4] = {};
      mma_conv<kMt1, Conv1::kNTiles, false, Rows1>(img_base + b * kImage + 2 * py * kS1 + 4 * g, off1, frag1,
                                                   Conv1::kSteps, lane, acc);
      float* out = img_base + b * kImage + kIn1;
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int n = 0; n < Conv1::kNTiles; ++n)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int f = kMmaN * n + 2 * q + e;
            const float v = fmaxf(fmaxf(acc[2 * h][n][e], acc[2 * h][n][2 + e]),
                                  fmaxf(acc[2 * h + 1][n][e], acc[2 * h + 1][n][2 + e]));
            out[f * Conv2::kPlane + (py + 2) * kP2 + 2 * g + h + 2] =
                fmaxf(v * (1.0f / 255.0f) + c_b1[f], 0.0f);
          }
    }
    __syncthreads();

    // conv2 + ReLU + pool. Warp item (image, pair of pooled rows): m-tile m = (row r, half x) has rows g at
    // conv pixels (2py, 8x + g), py = 2 pair + r. Then conv3's input border (conv1's input is dead).
    for (int item = warp; item < valid * kItems2; item += kWarps) {
      const int b = item / kItems2, pair = item % kItems2;
      float acc[kMt2][Conv2::kNTiles][4] = {};
      mma_conv<kMt2, Conv2::kNTiles, true, Rows2>(img_base + b * kImage + kIn1 + 4 * pair * kP2 + g, off2, frag2,
                                                  Conv2::kSteps, lane, acc);
      float* out = img_base + b * kImage;  // conv3's input
#pragma unroll
      for (int m = 0; m < kMt2; ++m)
#pragma unroll
        for (int n = 0; n < Conv2::kNTiles; ++n)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int f = kMmaN * n + 2 * q + e, py = 2 * pair + m / 2, px = (kMmaM / 2 * (m % 2) + g) / 2;
            const float v = pool_rows_then_lanes(acc[m][n], e, f < Conv2::F ? c_b2[f] : 0.0f);
            if (g % 2 == 0 && f < Conv2::F) out[f * Conv3::kPlane + (py + 2) * kP3 + px + 2] = v;
          }
    }
    for (int i = t; i < valid * Conv3::C * kBorder<kP3>; i += kThreads) {
      const int b = i / (Conv3::C * kBorder<kP3>), c = i / kBorder<kP3> % Conv3::C;
      img_base[b * kImage + c * Conv3::kPlane + border_at<kP3>(i % kBorder<kP3>)] = 0.0f;
    }
    __syncthreads();

    if (first + gridDim.x * kB < count) fetch(first + gridDim.x * kB);

    // conv3 + ReLU + pool. Warp item (image, pooled row py): rows g are conv pixels (2py, g).
    for (int item = warp; item < valid * kItems3; item += kWarps) {
      const int b = item / kItems3, py = item % kItems3;
      float acc[kMt3][Conv3::kNTiles][4] = {};
      mma_conv<kMt3, Conv3::kNTiles, true, Rows3>(img_base + b * kImage + 2 * py * kP3 + g, off3, frag3, Conv3::kSteps,
                                                  lane, acc);
      float* pooled = img_base + b * kImage + kIn1 + kIn2;
      constexpr int kSide3 = kConv3.pooled_side();
#pragma unroll
      for (int n = 0; n < Conv3::kNTiles; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int f = kMmaN * n + 2 * q + e;
          const float v = pool_rows_then_lanes(acc[0][n], e, f < Conv3::F ? c_b3[f] : 0.0f);
          if (g % 2 == 0 && f < Conv3::F) pooled[(f * kSide3 + py) * kSide3 + g / 2] = v;
        }
    }
    __syncthreads();

    // FC + softmax: warp b takes image b.
    if (warp < valid)
      fc_softmax_warp(img_base + warp * kImage + kIn1 + kIn2, wfc, bfc, probs + std::size_t(first + warp) * kClasses,
                      lane);
  }
}

// Canonical weights [f][c][tap] -> G's fragments: for K step s, n-tile n, lane: the weights of filter
// 8n + lane / 4 at K indices 8s + lane % 4 and 8s + lane % 4 + 4 (0 for padded filters and K).
template <class G>
void append_fragments(std::vector<float>& out, const std::vector<float>& w) {
  for (int s = 0; s < G::kSteps; ++s)
    for (int n = 0; n < G::kNTiles; ++n)
      for (int lane = 0; lane < 32; ++lane)
        for (int e = 0; e < 2; ++e) {
          const int f = kMmaN * n + lane / 4;
          const KSlot slot = G::slot(s * kMmaK + lane % 4 + 4 * e);
          out.push_back(f < G::F && slot.channel >= 0 ? w[(std::size_t(f) * G::C + slot.channel) * kTaps + slot.tap]
                                                      : 0.0f);
        }
}

class FusedTf32x3Session final : public DeviceSession {
 public:
  FusedTf32x3Session(const Network& net, const RunConfig& config)
      : DeviceSession("cuda:fused_tf32x3", config, 1 << 20) {
    check(cudaMemcpyToSymbol(c_b1, net.conv1.bias.data(), sizeof(c_b1)), "conv1 bias");
    check(cudaMemcpyToSymbol(c_b2, net.conv2.bias.data(), sizeof(c_b2)), "conv2 bias");
    check(cudaMemcpyToSymbol(c_b3, net.conv3.bias.data(), sizeof(c_b3)), "conv3 bias");
    std::vector<float> fragments;
    fragments.reserve(kFragFloats);
    append_fragments<Conv1>(fragments, net.conv1.weights);
    append_fragments<Conv2>(fragments, net.conv2.weights);
    append_fragments<Conv3>(fragments, net.conv3.weights);
    fragments_ = to_device(fragments);
    wfc_ = to_device(net.fc.weights);
    bfc_ = to_device(net.fc.bias);
    check(cudaFuncSetAttribute(fused_tf32x3_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSharedBytes)),
          "shared memory size");
    check(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, 0), "SM count");
  }

 protected:
  void run(const std::uint8_t* images, float* probs, std::size_t n, cudaStream_t s, LayerEvents*) override {
    const std::size_t batches = (n + kB - 1) / kB;
    const int blocks = int(std::min<std::size_t>(batches, std::size_t(std::max(1, sms_))));
    fused_tf32x3_kernel<<<blocks, kThreads, kSharedBytes, s>>>(images, fragments_, wfc_, bfc_, probs, int(n));
  }

 private:
  const float *fragments_, *wfc_, *bfc_;
  int sms_ = 1;
};

}  // namespace

std::unique_ptr<Session> open_fused_tf32x3(const Network& net, const RunConfig& config) {
  return std::make_unique<FusedTf32x3Session>(net, config);
}

}  // namespace cnn::cuda
