// The Winograd F(4x4, 5x5) matrices (common/kernels/cpu/winograd_f4x5.hpp): a typo in one entry would
// still let some images classify right, so the identity is checked here on its own, in FP64, in 1D and 2D,
// and so are the hand-paired transforms the variants run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/kernels/cpu/winograd_f4x5.hpp"

namespace cnn::test {
namespace {

using namespace cnn::winograd;

// A deterministic, irregular value in [-1, 1].
double value(int seed) { return std::sin(1.7 * seed + 0.3 * seed * seed); }

TEST(Winograd, OneDimensionalIdentityIsCorrelation) {
  for (int trial = 0; trial < 20; ++trial) {
    double g[kKernel], d[kIn], gg[kIn], dd[kIn];
    for (int k = 0; k < kKernel; ++k) g[k] = value(100 * trial + k);
    for (int i = 0; i < kIn; ++i) d[i] = value(100 * trial + 50 + i);
    for (int j = 0; j < kIn; ++j) {
      gg[j] = dd[j] = 0;
      for (int k = 0; k < kKernel; ++k) gg[j] += kG[j][k] * g[k];
      for (int i = 0; i < kIn; ++i) dd[j] += kBT[j][i] * d[i];
    }
    for (int i = 0; i < kOut; ++i) {
      double y = 0, direct = 0;
      for (int j = 0; j < kIn; ++j) y += kAT[i][j] * gg[j] * dd[j];
      for (int k = 0; k < kKernel; ++k) direct += g[k] * d[i + k];
      EXPECT_NEAR(y, direct, 1e-12) << "trial " << trial << " output " << i;
    }
  }
}

TEST(Winograd, TwoDimensionalTileIsTheConvolution) {
  double g[kKernel][kKernel], d[kIn][kIn];
  for (int a = 0; a < kKernel; ++a)
    for (int b = 0; b < kKernel; ++b) g[a][b] = value(a * kKernel + b);
  for (int i = 0; i < kIn; ++i)
    for (int j = 0; j < kIn; ++j) d[i][j] = value(1000 + i * kIn + j);
  double u[kIn][kIn] = {}, v[kIn][kIn] = {};  // G g GT, BT d B
  for (int k = 0; k < kIn; ++k)
    for (int l = 0; l < kIn; ++l) {
      u[k][l] = transformed_weight(&g[0][0], k, l);
      for (int i = 0; i < kIn; ++i)
        for (int j = 0; j < kIn; ++j) v[k][l] += kBT[k][i] * d[i][j] * kBT[l][j];
    }
  for (int y = 0; y < kOut; ++y)
    for (int x = 0; x < kOut; ++x) {
      double wino = 0, direct = 0;
      for (int k = 0; k < kIn; ++k)
        for (int l = 0; l < kIn; ++l) wino += kAT[y][k] * u[k][l] * v[k][l] * kAT[x][l];
      for (int a = 0; a < kKernel; ++a)
        for (int b = 0; b < kKernel; ++b) direct += g[a][b] * d[y + a][x + b];
      EXPECT_NEAR(wino, direct, 1e-11) << "output (" << y << ", " << x << ")";
    }
}

// The hand-paired transforms every Winograd variant runs are the tables' products, entry by entry.
TEST(Winograd, PairedTransformsApplyTheTables) {
  for (int trial = 0; trial < 8; ++trial) {
    double x[kIn], r[kIn], y[kOut];
    for (int i = 0; i < kIn; ++i) x[i] = value(300 * trial + i);
    bt_apply(x, r);
    at_apply(x, y);
    for (int k = 0; k < kIn; ++k) {
      double want = 0;
      for (int i = 0; i < kIn; ++i) want += kBT[k][i] * x[i];
      EXPECT_NEAR(r[k], want, 1e-12) << "BT row " << k;
    }
    for (int k = 0; k < kOut; ++k) {
      double want = 0;
      for (int i = 0; i < kIn; ++i) want += kAT[k][i] * x[i];
      EXPECT_NEAR(y[k], want, 1e-12) << "AT row " << k;
    }
  }
}

// The GPU kernels' per-thread input transform, with its window loaded value by value or as 16-byte rows (the
// layouts of GpuRoundLayout), stores BT d B at its stride; a window 12 floats a row, inside a larger plane.
TEST(Winograd, TileInputTransformIsBTdBEitherWay) {
  constexpr int S = 12, DS = 3;
  alignas(16) float plane[kIn * S + 4];
  for (int i = 0; i < kIn * S + 4; ++i) plane[i] = float(value(7000 + i));
  float by_value[kElems * DS] = {}, by_rows[kElems * DS] = {};
  tile_input_transform<S, DS>(plane + 4, by_value);
  tile_input_transform<S, DS, true>(plane + 4, by_rows);
  for (int k = 0; k < kIn; ++k)
    for (int l = 0; l < kIn; ++l) {
      double want = 0;
      for (int i = 0; i < kIn; ++i)
        for (int j = 0; j < kIn; ++j) want += kBT[k][i] * double(plane[4 + i * S + j]) * kBT[l][j];
      const int at = (k * kIn + l) * DS;
      EXPECT_NEAR(by_value[at], want, 1e-4 * (1 + std::abs(want))) << "V[" << k << "][" << l << "]";
      EXPECT_EQ(by_rows[at], by_value[at]) << "V[" << k << "][" << l << "]: the 16-byte rows load another window";
    }
}

// The tensor-core rounds (conv2: 16 channels, one image; conv3: 20 channels, four; row-quad loads), for every
// image count a round may hold:
// - the element-wise stage's half warps (tiles g = 0..3 or 4..7 of a 16-tile m-tile and the same 8 tiles on,
//   channel pairs t = 0..3, 8 bytes each) load 16 different 8-byte words;
// - a warp of the input transform (32 consecutive items) loads its window rows as 16-byte words from 8
//   different 4-bank groups per quarter warp, and stores V to 32 different banks;
// - the transform computes every (tile, channel) of the round once.
template <class Round>
void expect_spread_tiles_off_the_same_banks() {
  static_assert(Round::kSpreadTiles && Round::kRowQuads);
  constexpr int C = Round::C;
  for (int mt = 0; mt < Round::kTiles / 16; ++mt)
    for (int p = 0; p < kElems; ++p)
      for (int row : {0, 8})
        for (int pair0 = 0; pair0 < C; pair0 += 8)  // the channel pairs of one A register: 2 t + pair0
          for (int half = 0; half < 2; ++half) {
            bool word[16] = {};
            for (int lane = 16 * half; lane < 16 * half + 16; ++lane) {
              const int g = lane / 4, t = lane % 4, c = pair0 + 2 * t;
              if (c >= C) continue;  // zero, not loaded
              const int at = Round::v_tile(16 * mt + g + row) + p * Round::kPs + c;
              EXPECT_FALSE(word[at / 2 % 16]) << C << " channels, m-tile " << mt << ", position " << p << ", lane "
                                              << lane;
              word[at / 2 % 16] = true;
            }
          }
  for (int tiles = 4; tiles <= Round::kTiles; tiles += 4) {
    std::vector<int> seen(std::size_t(Round::kTiles) * C);
    for (int first = 0; first < tiles * C; first += 32) {
      bool bank[32] = {}, group[4][8] = {};
      for (int i = first; i < std::min(first + 32, tiles * C); ++i) {
        int tile, c;
        Round::input_item(i, tiles, tile, c);
        ASSERT_TRUE(tile >= 0 && tile < tiles && c >= 0 && c < C) << "item " << i << " of " << tiles << " tiles";
        ++seen[std::size_t(tile) * C + c];
        const int at = Round::v_tile(tile) + c;
        EXPECT_FALSE(bank[at % 32]) << C << " channels, " << tiles << " tiles, item " << i;
        bank[at % 32] = true;
        bool& quad = group[(i - first) / 8][Round::window_at(tile, c) / 4 % 8];
        EXPECT_FALSE(quad) << C << " channels, " << tiles << " tiles, item " << i << ": window rows";
        quad = true;
      }
    }
    for (int k = 0; k < tiles * C; ++k) EXPECT_EQ(seen[k], 1) << "tile " << k / C << ", channel " << k % C;
  }
}

TEST(Winograd, GpuRoundSpreadTilesKeepEveryStageOffTheSameBanks) {
  expect_spread_tiles_off_the_same_banks<GpuRoundLayout<16, 16, 20, 1, true>>();
  expect_spread_tiles_off_the_same_banks<GpuRoundLayout<20, 8, 12, 4, true>>();
  static_assert(!GpuRoundLayout<20, 8, 12, 4>::kSpreadTiles && !GpuRoundLayout<3, 32, 36, 1, true>::kSpreadTiles,
                "the FP32 layouts and a 3-channel one keep theirs");
}

// A value that counts the FMA slots the transforms spend: an add or subtract is one, a product c x is none until
// an add takes it (one FMA), and a product on its own or beside another product is a multiply of its own.
int g_slots = 0;
struct Slot {
  double v = 0;
};
struct Product {
  double v;
};
Slot operator+(Slot a, Slot b) { return ++g_slots, Slot{a.v + b.v}; }
Slot operator-(Slot a, Slot b) { return ++g_slots, Slot{a.v - b.v}; }
Product operator*(float c, Slot x) { return {c * x.v}; }
Slot operator+(Slot a, Product b) { return ++g_slots, Slot{a.v + b.v}; }
Slot operator-(Slot a, Product b) { return ++g_slots, Slot{a.v - b.v}; }
Slot operator+(Product a, Slot b) { return ++g_slots, Slot{a.v + b.v}; }
Slot operator-(Product a, Slot b) { return ++g_slots, Slot{a.v - b.v}; }
Slot operator+(Product a, Product b) { return g_slots += 2, Slot{a.v + b.v}; }
Slot operator-(Product a, Product b) { return g_slots += 2, Slot{a.v - b.v}; }

// kBtOps and kAtOps, which the report's executed FLOP counts, are what bt_apply and at_apply spend: a change to
// either transform that leaves them as they were fails here.
TEST(Winograd, TransformSlotCountsAreTheTransforms) {
  Slot x[kIn], r[kIn], y[kOut];
  for (int i = 0; i < kIn; ++i) x[i].v = value(i);
  g_slots = 0;
  bt_apply(x, r);
  EXPECT_EQ(g_slots, kBtOps);
  g_slots = 0;
  at_apply(x, y);
  EXPECT_EQ(g_slots, kAtOps);
  for (int k = 0; k < kIn; ++k) {  // and the values are still BT x
    double want = 0;
    for (int i = 0; i < kIn; ++i) want += kBT[k][i] * x[i].v;
    EXPECT_NEAR(r[k].v, want, 1e-12) << "BT row " << k;
  }
}

// The report's executed FLOP (item 4 of issue 28): a variant that runs the element-wise stage on the tensor
// cores counts transform_flop() on the FP32 units, so executed_flop() must be exactly the transforms plus
// 2 x 64 x channels x filters per tile; and that stage is two thirds of conv2's and conv3's arithmetic (the
// reason a tensor-core variant moves it).
TEST(Winograd, ExecutedFlopIsTransformsPlusElementwise) {
  for (const ConvSpec* c : {&kConv1, &kConv2, &kConv3}) {
    const double tiles = double(c->out_side() / kOut) * (c->out_side() / kOut);
    const double elementwise = tiles * 2.0 * kElems * c->in_channels * c->filters;
    EXPECT_DOUBLE_EQ(tiles_per_image(*c), tiles);
    EXPECT_DOUBLE_EQ(executed_flop(*c) - transform_flop(*c), elementwise) << c->in_channels << " channels";
    EXPECT_GT(transform_flop(*c), 0.0);
  }
  EXPECT_DOUBLE_EQ(tiles_per_image(kConv2), 16.0);
  for (const ConvSpec* c : {&kConv2, &kConv3}) {
    const double share = 1.0 - transform_flop(*c) / executed_flop(*c);
    EXPECT_GT(share, 0.6);
    EXPECT_LT(share, 0.7);
  }
}

}  // namespace
}  // namespace cnn::test
