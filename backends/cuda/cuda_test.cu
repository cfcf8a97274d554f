// The CUDA backend's own layouts, checked on the host (CI has no GPU; the every-variant tests run the kernels
// where there is one): which weight each tensor-core fragment position holds must match what the kernel loads.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "backends/cuda/cuda_conv1_pixels.cuh"

namespace cnn::cuda::conv1_pixels {
namespace {

// A lane t loads the 4 consecutive values 4t .. 4t + 3 of a window row as one 64-bit word: its low half is
// the m16n8k16 A register of K positions 2t, 2t + 1, its high half that of 2t + 8, 2t + 9.
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

// m-tile c (conv columns 4 g + c) reads copy c with 64-bit loads: every window row it starts must be 8-byte
// aligned, and the 16th value must stay inside the copy's padded row.
TEST(CudaConv1Pixels, WindowsAlignedInTheirCopy) {
  for (int c = 0; c < kCopies; ++c)
    for (int y = 0; y + kK <= kRows; ++y)
      for (int g = 0; g < 8; ++g) {
        const int x = 4 * g + c;
        EXPECT_EQ(at(c, y, x) % 4, 0) << "copy " << c << ", row " << y << ", column " << x;
        EXPECT_LT(x + kK, kRowPixels) << "the 16th value past the padded row";
      }
  EXPECT_LE(at(kCopies - 1, kRows - 1, kRowPixels - 1) + kC, kImageHalves);
}

}  // namespace
}  // namespace cnn::cuda::conv1_pixels
