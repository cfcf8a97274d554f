// Winograd F(4x4, 5x5): a 4x4 output tile of a 5x5 correlation from an 8x8 input tile with 64 multiplies
// per channel pair instead of 400:  Y = AT [ (G g GT) (.) (BT d B) ] A  ((.) element-wise).
// Toom-Cook on the points 0, 1, -1, 2, -2, 1/2, -1/2 and infinity: for the polynomial product s = g h
// (g of degree 4, h of degree 3), evaluating at the points gives s(a) = g(a) h(a); correlation is the
// transpose of that product (transposition principle), so
//   AT[i][j] = a_j^i (row i: the power; infinity column: the top power only),
//   G[j][k]  = a_j^k / prod_{l != j} (a_j - a_l)   (the Lagrange denominators sit with the weights,
//              which are transformed once, in FP64),
//   BT[j][.] = the coefficients of prod_{l != j} (x - a_l), and for infinity those of prod_l (x - a_l).
// Every entry of AT and BT is a small dyadic fraction, exact in FP32. winograd_forward.cpp applies AT and BT
// as hand-paired adds (bt_apply, at_apply); the tests check these tables and every variant, those. Points +-3 (F(6x6,5x5)) lose the
// 1e-4 validation tolerance in FP32; these keep it (max |p - p_fp64| ~1e-5).
#pragma once

#include "common/network_spec.hpp"

namespace cnn::winograd {

inline constexpr int kOut = 4;    // output tile side
inline constexpr int kIn = 8;     // input tile side: kOut + kKernel - 1 (kKernel: the spec's kernel side, 5)
inline constexpr int kElems = 64;  // transformed tile: kIn x kIn

inline constexpr double kAT[kOut][kIn] = {
    {1, 1, 1, 1, 1, 1, 1, 0},
    {0, 1, -1, 2, -2, 0.5, -0.5, 0},
    {0, 1, 1, 4, 4, 0.25, 0.25, 0},
    {0, 1, -1, 8, -8, 0.125, -0.125, 1},
};

inline constexpr double kG[kIn][kKernel] = {
    {-1, 0, 0, 0, 0},
    {-2. / 9, -2. / 9, -2. / 9, -2. / 9, -2. / 9},
    {-2. / 9, 2. / 9, -2. / 9, 2. / 9, -2. / 9},
    {1. / 90, 1. / 45, 2. / 45, 4. / 45, 8. / 45},
    {1. / 90, -1. / 45, 2. / 45, -4. / 45, 8. / 45},
    {32. / 45, 16. / 45, 8. / 45, 4. / 45, 2. / 45},
    {32. / 45, -16. / 45, 8. / 45, -4. / 45, 2. / 45},
    {0, 0, 0, 0, 1},
};

inline constexpr double kBT[kIn][kIn] = {
    {-1, 0, 5.25, 0, -5.25, 0, 1, 0},
    {0, 1, 1, -4.25, -4.25, 1, 1, 0},
    {0, -1, 1, 4.25, -4.25, -1, 1, 0},
    {0, 0.5, 0.25, -2.5, -1.25, 2, 1, 0},
    {0, -0.5, 0.25, 2.5, -1.25, -2, 1, 0},
    {0, 2, 4, -2.5, -5, 0.5, 1, 0},
    {0, -2, 4, 2.5, -5, -0.5, 1, 0},
    {0, -1, 0, 5.25, 0, -5.25, 0, 1},
};

// The FLOP a Winograd forward pass executes per image, for the report's efficiency columns: per tile, the
// element-wise stage (64 multiply-adds per channel pair), the input transform BT d B per input channel and
// the output transform AT M A per filter, plus the FC layer. A transform applies BT (AT) to the 8 columns,
// then to the 8 (4) rows; with the +-a points paired, BT costs 26 adds or FMAs per 8 values and AT 16
// (winograd_forward.cpp's bt_apply and at_apply). Each add or FMA counts as one FMA slot, 2 FLOP, as the FMA
// peak counts them: the efficiency is the share of the FMA units' slots used.
inline constexpr int kBtOps = 26, kAtOps = 16;
constexpr double executed_flop(const ConvSpec& c) {
  const double tiles = double(c.out_side() / kOut) * (c.out_side() / kOut);
  const double input = 2.0 * (kIn + kIn) * kBtOps;
  const double output = 2.0 * (kIn + kOut) * kAtOps;
  const double elementwise = 2.0 * kElems * c.in_channels * c.filters;
  return tiles * (elementwise + input * c.in_channels + output * c.filters);
}
inline constexpr double kExecutedFlopPerImage =
    executed_flop(kConv1) + executed_flop(kConv2) + executed_flop(kConv3) + kFc.flops();
static_assert(kIn == kOut + kKernel - 1 && kKernel == 5);
static_assert(kConv1.out_side() % kOut == 0 && kConv2.out_side() % kOut == 0 && kConv3.out_side() % kOut == 0);

}  // namespace cnn::winograd
