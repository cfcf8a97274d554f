// The CUDA backend's own layouts, checked on the host (CI has no GPU; the every-variant tests run the kernels
// where there is one): which weight each tensor-core fragment position holds must match what the kernel loads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "backends/cuda/cuda_conv1_pixels.cuh"

namespace cnn::cuda::conv1_pixels {
namespace {

// A lane t loads the 4 consecutive values 4t .. 4t + 3 of a window row as one 64-bit word: its low half is
// the m16n8k16 B register of K positions 2t, 2t + 1, its high half that of 2t + 8, 2t + 9.
TEST(CudaConv1Pixels, LaneKPositionsAreItsFourConsecutiveValues) {
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(row_value(2 * t), 4 * t);
    EXPECT_EQ(row_value(2 * t + 1), 4 * t + 1);
    EXPECT_EQ(row_value(2 * t + 8), 4 * t + 2);
    EXPECT_EQ(row_value(2 * t + 9), 4 * t + 3);
  }
}

// Over a filter's 5 K steps every (channel, tap) weight appears exactly once, and the 16th value of each
// step (the pixel after the window row) has weight 0.
TEST(CudaConv1Pixels, EveryWeightOnceAndOneZeroPerStep) {
  constexpr int kPerFilter = kC * kTaps;
  std::vector<float> w(std::size_t(kConv1.filters) * kPerFilter);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = float(i + 1);  // distinct, none zero
  for (int f = 0; f < kConv1.filters; ++f) {
    std::map<float, int> seen;
    for (int s = 0; s < kSteps; ++s) {
      int zeros = 0;
      for (int kappa = 0; kappa < 16; ++kappa) {
        const float v = weight_at(w, s, kappa, f);
        if (v == 0.0f) ++zeros;
        else ++seen[v];
      }
      EXPECT_EQ(zeros, 1) << "filter " << f << ", step " << s;
    }
    ASSERT_EQ(seen.size(), std::size_t(kPerFilter)) << "filter " << f;
    for (const auto& [v, n] : seen) {
      EXPECT_EQ(n, 1) << "weight " << v << " of filter " << f;
      EXPECT_GT(v, float(f * kPerFilter)) << "another filter's weight";
      EXPECT_LE(v, float((f + 1) * kPerFilter));
    }
  }
  // Value (kx, channel) of window row s is weight (channel, tap 5 s + kx): the copy's pixels keep their 3
  // channels together.
  EXPECT_EQ(weight_at(w, 2, 0, 0), w[0 * kTaps + 2 * kK + 0]);  // K 0: value 0 = kx 0, channel 0
  EXPECT_EQ(weight_at(w, 2, 1, 0), w[1 * kTaps + 2 * kK + 0]);  // K 1: value 1 = kx 0, channel 1
  EXPECT_EQ(weight_at(w, 2, 8, 0), w[2 * kTaps + 2 * kK + 0]);  // K 8: value 2 = kx 0, channel 2
  EXPECT_EQ(weight_at(w, 2, 9, 0), w[0 * kTaps + 2 * kK + 1]);  // K 9: value 3 = kx 1, channel 0
  EXPECT_EQ(fragments(w).size(), std::size_t(kFragments) * 4);
}

// Register i of lane (g, t) in a step's hi and lo fragments: filter g + 8 (i % 2), K positions
// 2t + 8 (i / 2) and the next, low half first; hi + lo is the weight to 22 bits, or to 2^-25 where lo falls
// below FP16's normal range.
TEST(CudaConv1Pixels, FragmentsHoldTheLaneFiltersWeights) {
  std::vector<float> w(std::size_t(kConv1.filters) * kC * kTaps);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * float(int(i % 97) - 48) + 1e-5f * float(i % 7);
  const std::vector<std::uint32_t> words = fragments(w);
  ASSERT_EQ(words.size(), std::size_t(kFragments) * 4);
  const auto half_at = [&](int s, int part, int lane, int i, int h) {
    const std::uint32_t v = words[((std::size_t(s) * 2 + part) * 32 + lane) * 4 + i];
    __half_raw r;
    r.x = static_cast<unsigned short>(h == 0 ? v & 0xffffu : v >> 16);
    return __half2float(__half(r));
  };
  for (int s = 0; s < kSteps; ++s)
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < 4; ++i)
        for (int h = 0; h < 2; ++h) {
          const int f = lane / 4 + 8 * (i % 2), kappa = 2 * (lane % 4) + 8 * (i / 2) + h;
          const float want = weight_at(w, s, kappa, f);
          const float got = half_at(s, 0, lane, i, h) + half_at(s, 1, lane, i, h);
          EXPECT_NEAR(got, want, 0x1p-22f * std::abs(want) + 0x1p-25f) << "step " << s << ", lane " << lane << ", reg " << i;
          EXPECT_NE(half_at(s, 0, lane, i, h) == 0.0f, want != 0.0f) << "hi part of a weight, or of the zero";
        }
}

// Lane (g, t) reads pixel x = 8 j + g of n-tile j from copy x modulo 4, where its windows are 8-byte aligned,
// and the 16th value stays inside the copy's padded row.
TEST(CudaConv1Pixels, WindowsAlignedInTheirCopy) {
  for (int lane = 0; lane < 32; ++lane)
    for (int j = 0; j < kGroups; ++j)
      for (int y = 0; y + kK <= kRows; ++y) {
        const int x = 8 * j + lane / 4, start = lane_start(lane) + 3 * 8 * j + y * kRowHalves;
        EXPECT_EQ(start, at(x % 4, y, x) + 4 * (lane % 4)) << "lane " << lane << ", n-tile " << j;
        EXPECT_EQ(start % 4, 0) << "lane " << lane << ", n-tile " << j << ", row " << y;
        EXPECT_LT(x + kK, kRowPixels) << "the 16th value past the padded row";
      }
  EXPECT_LE(at(kCopies - 1, kRows - 1, kRowPixels - 1) + kC, kImageHalves);
  EXPECT_LT(at(0, kRows - 1, kRowPixels - 1) + kC, at(1, 0, 0)) << "copies overlap";
}

// The 16 lanes of a half warp load 64-bit words (2 banks each) of 32 different banks: no conflict.
TEST(CudaConv1Pixels, HalfWarpLoadsHitDifferentBanks) {
  for (int half = 0; half < 2; ++half)
    for (int j = 0; j < kGroups; ++j) {
      std::vector<int> banks;
      for (int lane = 16 * half; lane < 16 * half + 16; ++lane) {
        const int word = (lane_start(lane) + 3 * 8 * j) / 2;
        banks.push_back(word % 32);
        banks.push_back((word + 1) % 32);
      }
      std::sort(banks.begin(), banks.end());
      EXPECT_EQ(std::unique(banks.begin(), banks.end()), banks.end()) << "half warp " << half << ", n-tile " << j;
    }
}

// Staging: thread i of a warp stores 4 pixels (quad i % 256 of an image) into each copy with 64-bit stores
// from its first 8-byte boundary on; a half warp's stores (two rows of 8 quads) fall on 16 different 8-byte
// words modulo 128 bytes.
TEST(CudaConv1Pixels, HalfWarpStagingStoresHitDifferentBanks) {
  for (int warp = 0; warp < kThreads / 32; ++warp)
    for (int c = 0; c < kCopies; ++c)
      for (int half = 0; half < 2; ++half)
        for (int k = 0; k < 2; ++k) {  // the 64-bit stores every copy has
          std::vector<int> slots;
          for (int lane = 16 * half; lane < 16 * half + 16; ++lane) {
            const int p = 4 * ((32 * warp + lane) % (kSide * kSide / 4)), y = p / kSide, x = p % kSide;
            const int start = at(c, y + kPad, x + kPad), aligned = (start + 3) / 4 * 4;
            EXPECT_EQ(start % 4, quad_alignment(c)) << "copy " << c << ", lane " << lane;
            slots.push_back((aligned + 4 * k) / 4 % 16);
          }
          std::sort(slots.begin(), slots.end());
          EXPECT_EQ(std::unique(slots.begin(), slots.end()), slots.end())
              << "warp " << warp << ", copy " << c << ", half " << half << ", store " << k;
        }
}

}  // namespace
}  // namespace cnn::cuda::conv1_pixels

namespace cnn::cuda {
namespace {

// The hand-off between the Winograd kernels lets the next kernel read every image below the tail once all
// blocks of the previous one have begun their last round: each such image must be written in an earlier
// round of its block, and each image from the tail on in a last round (persistent blocks, `group` images a
// round, the first at b group, then blocks x group apart).
TEST(CudaHandoff, TailIsWhereTheLastRoundsBegin) {
  for (const std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(264), std::size_t(265), std::size_t(1200),
                              std::size_t(8191)})
    for (const int group : {1, 2, 4})
      for (const int capacity : {132, 264}) {
        const int blocks = persistent_blocks(n, group, capacity), tail = last_rounds_tail(n, group, blocks);
        for (int b = 0; b < blocks; ++b)
          for (std::size_t first = std::size_t(b) * group; first < n; first += std::size_t(blocks) * group) {
            const bool last = first + std::size_t(blocks) * group >= n;
            for (std::size_t i = first; i < std::min(n, first + group); ++i)
              EXPECT_EQ(int(i) >= tail, last) << "n " << n << " group " << group << " blocks " << blocks
                                              << " image " << i;
          }
      }
}

}  // namespace
}  // namespace cnn::cuda
