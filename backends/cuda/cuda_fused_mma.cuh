// The skeleton of the tensor-core fused variants (cuda:fused_tf32x3, cuda:fused_fp16x3): cuda:fused_persistent's
// structure (the whole network in one kernel, one block per SM on kImageGroup images at a time, every weight and
// activation in shared memory, uint8 in, 10 probabilities out) with each convolution as an implicit GEMM
// per image on mma.sync: M = conv output pixels (16 per tile), N = filters (8 per tile: 16 exactly, 20
// padded to 24), K = channels x 25 taps. An Arith policy (each variant's .cu file) says how FP32 accuracy
// is kept: how activations are stored, how weights are laid out in fragment order, and how one K step of
// tiles is multiplied. Pieces common to both:
// - conv1's activation operand is the raw pixel - 127.5, exact in TF32 and FP16 (at most 8 significant
//   bits), so conv1 needs no split of that operand; its 1/255 scale is applied after the sum.
// - The im2col gathers hit 32 different banks. A K step is cut into groups of 4 K indices, lane % 4 taking
//   one index of each group. conv1's K runs in the natural (channel, ky, kx) order with row and plane
//   strides of 1 modulo 4, so the 4 indices of a group fall in 4 different banks modulo 4, and an m-tile's 8
//   rows are pixels 4 apart. conv2/conv3's groups are 4 consecutive channels at one tap (a "unit"), planes
//   8 modulo 32 banks apart, and an m-tile's 8 rows are 8 adjacent pixels. Each lane's offsets of each K
//   step come from a small table in shared memory.
// - Pooling happens in registers: an m-tile's rows g and g + 8 are the two rows of a pooling window, its
//   columns either a second m-tile of the same thread (conv1) or the neighbouring lane (a shuffle).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/kernels/cuda/cuda_device_session.hpp"
#include "backends/cuda/cuda_fused_parts.cuh"
#include "common/kernels/cuda/cuda_kernels.cuh"

// Everything here has internal linkage (an anonymous namespace): each variant's translation unit gets its
// own kernel and its own bias constants.
namespace cnn::cuda::fused_mma {
namespace {

// Executed FLOP per image of a 3-pass variant: three tensor-core products per multiply-add of the
// convolutions (the padding of K and of 20 filters to 24 not counted), the FC layer on the FP32 units.
constexpr double kThreePassFlopPerImage = 3 * (kFlopsPerImage - kFc.flops()) + kFc.flops();

constexpr int kImageGroup = 3;  // images per group: what the shared memory holds beside the weight fragments
constexpr int kWarps = 12, kThreads = 32 * kWarps;
constexpr int kMmaM = 16, kMmaN = 8;

// Smallest value >= n that is r modulo m.
constexpr int at_least_with_residue(int n, int r, int m) { return n + ((r - n) % m + m) % m; }

// Where a K index's weight sits: input channel and tap; channel < 0 for the padding at the end of K.
struct KSlot {
  int channel, tap;
};

// One convolution as an implicit GEMM over padded input planes of side P, row stride S, plane stride Q, in
// K steps of A::kStepK = 4 x A::kGroups. Index kappa of a step (the MMA's K position) belongs to group
// A::group(kappa) and lane % 4 == A::lane4(kappa). kGrouped: group j of step s is unit kGroups s + j, 4
// channels at one tap (conv2, conv3); otherwise the natural order, K index kStepK s + 4 group + lane4.
template <class A, const ConvSpec& L, int S, int Q, bool kGrouped>
struct ConvGemm {
  static constexpr int C = L.in_channels, F = L.filters, P = L.in_side + 2 * L.pad;
  static constexpr int kUnits = C / 4 * kTaps;
  static constexpr int kSteps =
      kGrouped ? (kUnits + A::kGroups - 1) / A::kGroups : (C * kTaps + A::kStepK - 1) / A::kStepK;
  static constexpr int kNTiles = (F + kMmaN - 1) / kMmaN;
  static constexpr int kFragWords = kSteps * kNTiles * 32 * A::kFragWords;  // [step][n-tile][lane]
  static constexpr int kOffsets = kSteps * 4;                              // [step][lane % 4]
  static constexpr int kPlane = Q, kPlanes = C * Q;
  static_assert(L.kernel == 5 && S >= P && Q >= P * S, "5x5 windows inside the padded planes");
  static_assert(!kGrouped || C % 4 == 0, "channel groups of 4");

  // Group j (0 .. kGroups) of step s, lane4 t.
  __host__ __device__ static constexpr KSlot slot(int s, int j, int t) {
    if constexpr (kGrouped) {
      const int unit = A::kGroups * s + j;
      return unit < kUnits ? KSlot{4 * (unit / kTaps) + t, unit % kTaps} : KSlot{-1, 0};
    } else {
      const int k = A::kStepK * s + 4 * j + t;
      return k < C * kTaps ? KSlot{k / kTaps, k % kTaps} : KSlot{-1, 0};
    }
  }
  // Offset from a window's top-left corner. The padding (weight 0) reads a finite value in the window at
  // the offset that keeps the bank pattern: tap t of the first row (natural) or channel t's first tap.
  __host__ __device__ static constexpr int offset(int s, int j, int t) {
    const KSlot k = slot(s, j, t);
    if (k.channel < 0) return kGrouped ? t * Q : t;
    return k.channel * Q + k.tap / 5 * S + k.tap % 5;
  }
};

template <class A>
struct Layout {
  static constexpr int kP1 = kConv1.in_side + 2 * kConv1.pad, kP2 = kConv2.in_side + 2 * kConv2.pad;
  static constexpr int kP3 = kConv3.in_side + 2 * kConv3.pad;
  static constexpr int kS1 = at_least_with_residue(kP1, 1, 4);
  using Conv1 = ConvGemm<A, kConv1, kS1, at_least_with_residue(kP1 * kS1, 1, 4), false>;
  using Conv2 = ConvGemm<A, kConv2, kP2, at_least_with_residue(kP2 * kP2, 8, 32), true>;
  using Conv3 = ConvGemm<A, kConv3, kP3, at_least_with_residue(kP3 * kP3, 8, 32), true>;
  static_assert(kS1 % 4 == 1 && Conv1::kPlane % 4 == 1, "conv1: strides 1 mod 4");
  static_assert(Conv2::kPlane % 32 == 8 && Conv3::kPlane % 32 == 8, "conv2/conv3: planes 8 banks apart");

  // The m-tiles of each layer (rows g: conv row 2 py, rows g + 8: conv row 2 py + 1).
  static_assert(kConv1.out_side() == 4 * kMmaM / 2 && kConv2.out_side() == 2 * kMmaM / 2 &&
                    kConv3.out_side() == kMmaM / 2,
                "conv1: 4 m-tiles of pixels 4 apart per pooled row; conv2: 2 of 8 adjacent pixels; conv3: 1");
  static constexpr int kMt1 = 4, kMt2 = 4, kMt3 = 1;  // m-tiles per warp item
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
  static constexpr int kItems1 = kConv1.pooled_side();             // per image: a pooled row
  static constexpr int kItems2 = kConv2.pooled_side() * 2 / kMt2;  // two pooled rows
  static constexpr int kItems3 = kConv3.pooled_side();             // a pooled row
  static_assert(kImageGroup * kItems1 % kWarps == 0 && kImageGroup * kItems2 % kWarps == 0 &&
                    kImageGroup * kItems3 % kWarps == 0,
                "every warp gets the same work per layer");

  // Shared memory, in 32-bit words: weight fragments, K-offset tables, then per image conv1's input
  // (conv3's aliases it), conv2's input, the pooled conv3 output (floats).
  static constexpr int kOffFrag2 = Conv1::kFragWords, kOffFrag3 = kOffFrag2 + Conv2::kFragWords;
  static constexpr int kFragWords = kOffFrag3 + Conv3::kFragWords;
  static constexpr int kOffOffsets = kFragWords;
  static constexpr int kOffsetWords = A::kGroups * (Conv1::kOffsets + Conv2::kOffsets + Conv3::kOffsets);
  static constexpr int kOffImages = kOffOffsets + kOffsetWords;
  static constexpr int kIn1 = (Conv1::kPlanes + 1) / 2 * 2;
  static constexpr int kIn2 = Conv2::kPlanes, kPooled = kFc.inputs();
  static constexpr int kImage = kIn1 + kIn2 + kPooled;
  static constexpr std::size_t kSharedBytes = std::size_t(kOffImages + kImageGroup * kImage) * 4;
  static_assert(Conv3::kPlanes <= kIn1, "conv3's input aliases conv1's");
  static_assert(kFragWords % 4 == 0 && kOffsetWords % 4 == 0, "fragments staged as 16 bytes, tables aligned");
  static_assert(kSharedBytes <= 227 * 1024, "fits one SM's shared memory");
  static constexpr int kPixelWords = (kImageGroup * kImageBytes / 4 + kThreads - 1) / kThreads;
};

// G's K-offset table into dst, by a block of kBlockThreads threads.
template <class G, int kBlockThreads = kThreads, class Offsets>
__device__ void stage_offsets(Offsets* dst) {
  constexpr int kGroups = int(sizeof(Offsets) / sizeof(int));
  for (int i = threadIdx.x; i < G::kOffsets; i += kBlockThreads) {
    int* o = reinterpret_cast<int*>(dst + i);
    for (int j = 0; j < kGroups; ++j) o[j] = G::offset(i / 4, j, i % 4);
  }
}

// The max over a pooling window's two rows (accumulators e and 2 + e), then over the neighbouring column
// (lane ^ 4: pixel g ^ 1), + bias, ReLU.
__device__ __forceinline__ float pool_rows_then_lanes(const float (&c)[4], int e, float bias) {
  float v = fmaxf(c[e], c[2 + e]);
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 4));
  return fmaxf(v + bias, 0.0f);
}

// Word i of a set of images' pixels (4 uint8, planar) as A stores them, pixel - 127.5 (exact), into the
// interiors of conv1's padded planes, the images image_words apart from planes.
template <class A>
__device__ __forceinline__ void store_pixel_word(std::uint32_t word, int i, std::uint32_t* planes, int image_words) {
  using Lay = Layout<A>;
  const int b = i / (kImageBytes / 4), p = 4 * (i % (kImageBytes / 4));
  const int c = p / (kImageSide * kImageSide), y = p / kImageSide % kImageSide, x = p % kImageSide;
  std::uint32_t* dst = planes + b * image_words + c * Lay::Conv1::kPlane + (y + 2) * Lay::kS1 + x + 2;
#pragma unroll
  for (int j = 0; j < 4; ++j) dst[j] = A::store(float((word >> (8 * j)) & 0xffu) - 127.5f);
}

// conv1 of one pooled row py of an image whose padded planes start at `planes` (a warp item): the implicit
// GEMM, then store(f, h, v) for each of the lane's pooling windows, v being the window's maximum for filter f
// at pooled column 2g + h (g = lane / 4), before the 1/255 scale, the bias and ReLU. m-tile c's rows g are
// conv pixels (2py, 4g + c), rows g + 8 the row below, so window (py, 2g + h) is in m-tiles 2h and 2h + 1.
template <class A, class Store>
__device__ __forceinline__ void conv1_pooled_row(const std::uint32_t* planes, int py, const typename A::Offsets* offsets,
                                                 const typename A::Frag* frag, int lane, Store store) {
  using Lay = Layout<A>;
  using G = typename Lay::Conv1;
  const int g = lane / 4, q = lane % 4;
  float acc[Lay::kMt1][G::kNTiles][4] = {};
  A::template mma_conv<Lay::kMt1, G::kNTiles, false, typename Lay::Rows1>(planes + 2 * py * Lay::kS1 + 4 * g, offsets,
                                                                         frag, G::kSteps, lane, acc);
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int n = 0; n < G::kNTiles; ++n)
#pragma unroll
      for (int e = 0; e < 2; ++e)
        store(kMmaN * n + 2 * q + e, h, fmaxf(fmaxf(acc[2 * h][n][e], acc[2 * h][n][2 + e]),
                                              fmaxf(acc[2 * h + 1][n][e], acc[2 * h + 1][n][2 + e])));
}

__constant__ float c_b1[kConv1.filters];
__constant__ float c_b2[kConv2.filters];
__constant__ float c_b3[kConv3.filters];

template <class A>
__global__ void __launch_bounds__(kThreads, 1)
    fused_mma_kernel(const std::uint8_t* __restrict__ images, const std::uint32_t* __restrict__ fragments,
                     const float* __restrict__ wfc, const float* __restrict__ bfc, float* __restrict__ probs,
                     int count) {
  using Lay = Layout<A>;
  using Conv1 = typename Lay::Conv1;
  using Conv2 = typename Lay::Conv2;
  using Conv3 = typename Lay::Conv3;
  using Frag = typename A::Frag;
  using Offsets = typename A::Offsets;
  constexpr int kP2 = Lay::kP2, kP3 = Lay::kP3, kS1 = Lay::kS1, kP1 = Lay::kP1;
  constexpr int kIn1 = Lay::kIn1, kIn2 = Lay::kIn2, kImage = Lay::kImage;
  extern __shared__ __align__(16) std::uint32_t words[];
  const Frag* frag1 = reinterpret_cast<const Frag*>(words);
  const Frag* frag2 = reinterpret_cast<const Frag*>(words + Lay::kOffFrag2);
  const Frag* frag3 = reinterpret_cast<const Frag*>(words + Lay::kOffFrag3);
  Offsets* off1 = reinterpret_cast<Offsets*>(words + Lay::kOffOffsets);
  Offsets* off2 = off1 + Conv1::kOffsets;
  Offsets* off3 = off2 + Conv2::kOffsets;
  std::uint32_t* img_base = words + Lay::kOffImages;
  const int t = threadIdx.x, warp = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;

  std::uint32_t pixels[Lay::kPixelWords];  // the group's pixels, loaded one group ahead
  const auto fetch = [&](int first) {
    fetch_pixel_words<kThreads>(images, first, min(kImageGroup, count - first), pixels);
  };
  if (blockIdx.x * kImageGroup < count) fetch(blockIdx.x * kImageGroup);
  for (int i = t; i < Lay::kFragWords / 4; i += kThreads)
    reinterpret_cast<uint4*>(words)[i] = __ldg(reinterpret_cast<const uint4*>(fragments) + i);
  stage_offsets<Conv1>(off1);
  stage_offsets<Conv2>(off2);
  stage_offsets<Conv3>(off3);
  // conv2's input: only interiors are written below, so its padding stays zero.
  for (int i = t; i < kImageGroup * kIn2; i += kThreads) img_base[i / kIn2 * kImage + kIn1 + i % kIn2] = 0u;

  for (int first = blockIdx.x * kImageGroup; first < count; first += gridDim.x * kImageGroup) {
    const int valid = min(kImageGroup, count - first);
    __syncthreads();  // staged / the previous group is done with conv1's input

    // Pixels - 127.5 (exact) -> conv1's padded input; then its border (conv3 wrote over it).
#pragma unroll
    for (int k = 0; k < Lay::kPixelWords; ++k) {
      const int i = t + k * kThreads;
      if (i >= valid * (kImageBytes / 4)) break;
      store_pixel_word<A>(pixels[k], i, img_base, kImage);
    }
    for (int i = t; i < valid * Conv1::C * kBorder<kP1>; i += kThreads) {
      const int b = i / (Conv1::C * kBorder<kP1>), c = i / kBorder<kP1> % Conv1::C;
      img_base[b * kImage + c * Conv1::kPlane + border_at<kP1, kS1>(i % kBorder<kP1>)] = 0u;
    }
    __syncthreads();

    // conv1 + ReLU + pool. Warp item (image, pooled row py).
    for (int item = warp; item < valid * Lay::kItems1; item += kWarps) {
      const int b = item / Lay::kItems1, py = item % Lay::kItems1;
      std::uint32_t* out = img_base + b * kImage + kIn1;
      conv1_pooled_row<A>(img_base + b * kImage, py, off1, frag1, lane, [&](int f, int h, float v) {
        out[f * Conv2::kPlane + (py + 2) * kP2 + 2 * g + h + 2] = A::store(fmaxf(v * (1.0f / 255.0f) + c_b1[f], 0.0f));
      });
    }
    __syncthreads();

    // conv2 + ReLU + pool. Warp item (image, pair of pooled rows): m-tile m = (row r, half x) has rows g at
    // conv pixels (2py, 8x + g), py = 2 pair + r. Then conv3's input border (conv1's input is dead).
    for (int item = warp; item < valid * Lay::kItems2; item += kWarps) {
      const int b = item / Lay::kItems2, pair = item % Lay::kItems2;
      float acc[Lay::kMt2][Conv2::kNTiles][4] = {};
      A::template mma_conv<Lay::kMt2, Conv2::kNTiles, true, typename Lay::Rows2>(
          img_base + b * kImage + kIn1 + 4 * pair * kP2 + g, off2, frag2, Conv2::kSteps, lane, acc);
      std::uint32_t* out = img_base + b * kImage;  // conv3's input
#pragma unroll
      for (int m = 0; m < Lay::kMt2; ++m)
#pragma unroll
        for (int n = 0; n < Conv2::kNTiles; ++n)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int f = kMmaN * n + 2 * q + e, py = 2 * pair + m / 2, px = (kMmaM / 2 * (m % 2) + g) / 2;
            const float v = pool_rows_then_lanes(acc[m][n], e, f < Conv2::F ? c_b2[f] : 0.0f);
            if (g % 2 == 0 && f < Conv2::F) out[f * Conv3::kPlane + (py + 2) * kP3 + px + 2] = A::store(v);
          }
    }
    for (int i = t; i < valid * Conv3::C * kBorder<kP3>; i += kThreads) {
      const int b = i / (Conv3::C * kBorder<kP3>), c = i / kBorder<kP3> % Conv3::C;
      img_base[b * kImage + c * Conv3::kPlane + border_at<kP3>(i % kBorder<kP3>)] = 0u;
    }
    __syncthreads();

    if (first + gridDim.x * kImageGroup < count) fetch(first + gridDim.x * kImageGroup);

    // conv3 + ReLU + pool. Warp item (image, pooled row py): rows g are conv pixels (2py, g).
    for (int item = warp; item < valid * Lay::kItems3; item += kWarps) {
      const int b = item / Lay::kItems3, py = item % Lay::kItems3;
      float acc[Lay::kMt3][Conv3::kNTiles][4] = {};
      A::template mma_conv<Lay::kMt3, Conv3::kNTiles, true, typename Lay::Rows3>(
          img_base + b * kImage + 2 * py * kP3 + g, off3, frag3, Conv3::kSteps, lane, acc);
      float* pooled = reinterpret_cast<float*>(img_base + b * kImage + kIn1 + kIn2);
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
      fc_softmax_warp(reinterpret_cast<const float*>(img_base + warp * kImage + kIn1 + kIn2), wfc, bfc,
                      probs + std::size_t(first + warp) * kClasses, lane);
  }
}

// Canonical weights [f][c][tap] -> G's fragments, for K step s, n-tile n, lane: A::fragment(weight) with
// weight(kappa) the weight of filter 8n + lane / 4 at the step's K position kappa (0 for padded filters and
// K).
template <class A, class G>
void append_fragments(std::vector<std::uint32_t>& out, const std::vector<float>& w) {
  for (int s = 0; s < G::kSteps; ++s)
    for (int n = 0; n < G::kNTiles; ++n)
      for (int lane = 0; lane < 32; ++lane) {
        const int f = kMmaN * n + lane / 4;
        A::append_fragment(out, lane, [&](int kappa) {
          const KSlot k = G::slot(s, A::group(kappa), A::lane4(kappa));
          return f < G::F && k.channel >= 0 ? w[(std::size_t(f) * G::C + k.channel) * kTaps + k.tap] : 0.0f;
        });
      }
}

template <class A>
class FusedMmaSession final : public DeviceSession {
 public:
  // A::kLabel: the variant's name in error messages.
  FusedMmaSession(const Network& net, const RunConfig& config) : DeviceSession(A::kLabel, config, 1 << 20) {
    using Lay = Layout<A>;
    check(cudaMemcpyToSymbol(c_b1, net.conv1.bias.data(), sizeof(c_b1)), "conv1 bias");
    check(cudaMemcpyToSymbol(c_b2, net.conv2.bias.data(), sizeof(c_b2)), "conv2 bias");
    check(cudaMemcpyToSymbol(c_b3, net.conv3.bias.data(), sizeof(c_b3)), "conv3 bias");
    std::vector<std::uint32_t> fragments;
    fragments.reserve(Lay::kFragWords);
    append_fragments<A, typename Lay::Conv1>(fragments, net.conv1.weights);
    append_fragments<A, typename Lay::Conv2>(fragments, net.conv2.weights);
    append_fragments<A, typename Lay::Conv3>(fragments, net.conv3.weights);
    fragments_ = to_device(fragments);
    wfc_ = to_device(net.fc.weights);
    bfc_ = to_device(net.fc.bias);
    allow_shared_memory(fused_mma_kernel<A>, Lay::kSharedBytes);
    check(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, 0), "SM count");
  }

 protected:
  void run(const std::uint8_t* images, float* probs, std::size_t n, cudaStream_t s, LayerEvents*) override {
    const int blocks = persistent_blocks(n, kImageGroup, sms_);
    fused_mma_kernel<A><<<blocks, kThreads, Layout<A>::kSharedBytes, s>>>(images, fragments_, wfc_, bfc_, probs,
                                                                          int(n));
  }

 private:
  const std::uint32_t* fragments_ = nullptr;
  const float *wfc_ = nullptr, *bfc_ = nullptr;
  int sms_ = 1;
};

}  // namespace
}  // namespace cnn::cuda::fused_mma
