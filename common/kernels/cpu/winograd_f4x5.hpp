// Winograd F(4x4, 5x5): a 4x4 output tile of a 5x5 correlation from an 8x8 input tile with 64 multiplies
// per channel pair instead of 400:  Y = AT [ (G g GT) (.) (BT d B) ] A  ((.) element-wise).
// Toom-Cook on the points 0, 1, -1, 2, -2, 1/2, -1/2 and infinity: for the polynomial product s = g h
// (g of degree 4, h of degree 3), evaluating at the points gives s(a) = g(a) h(a); correlation is the
// transpose of that product (transposition principle), so
//   AT[i][j] = a_j^i (row i: the power; infinity column: the top power only),
//   G[j][k]  = a_j^k / prod_{l != j} (a_j - a_l)   (the Lagrange denominators sit with the weights,
//              which are transformed once, in FP64),
//   BT[j][.] = the coefficients of prod_{l != j} (x - a_l), and for infinity those of prod_l (x - a_l).
// Every entry of AT and BT is a small dyadic fraction, exact in FP32; bt_apply and at_apply below apply them
// as hand-paired adds, and tests/test_winograd.cpp checks both against these tables. Points +-3
// (F(6x6,5x5)) lose the 1e-4 validation tolerance in FP32; these keep it (max |p - p_fp64| ~1e-5).
#pragma once

#include "common/fp32_math.hpp"  // CNN_FP32_INLINE: the transforms also run in CUDA device code (Kokkos)
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

// U = G g GT at element (k, l) for one kKernel x kKernel filter plane g (row-major), in FP64: the weights are
// transformed once per session and stored as float.
inline double transformed_weight(const double* g, int k, int l) {
  double sum = 0;
  for (int a = 0; a < kKernel; ++a)
    for (int b = 0; b < kKernel; ++b) sum += kG[k][a] * g[a * kKernel + b] * kG[l][b];
  return sum;
}

// BT x in two halves, rows kBtHalf[G][0..3] of BT x each, for one column x[0..kIn) of floats or SIMD vectors
// of floats: kBT's rows with the points +-a paired (even and odd powers shared), 24 adds/FMAs instead of its 44
// non-zeros. The odd parts of the points +-1/2 and +-2 carry a factor 1/2 out (0.5 x1 - 2.5 x3 + 2 x5 =
// (x1 - 5 x3 + 4 x5) / 2), which the two FMAs that add them to the even parts apply: no multiply of their own.
// Each half reads all 8 inputs and shares nothing with the other, so a caller short of registers (a host input
// transform of 16-image lanes) can hold half of a window's rows at a time.
inline constexpr int kBtHalf[2][4] = {{0, 7, 1, 2}, {3, 4, 5, 6}};
template <int G, class T>
CNN_FP32_INLINE void bt_half(const T (&x)[kIn], T (&r)[4]) {
  if constexpr (G == 0) {
    r[0] = (x[6] - x[0]) + 5.25f * (x[2] - x[4]);
    r[1] = (x[7] - x[1]) + 5.25f * (x[3] - x[5]);
    const T e1 = (x[2] + x[6]) - 4.25f * x[4], o1 = (x[1] + x[5]) - 4.25f * x[3];
    r[2] = e1 + o1;
    r[3] = e1 - o1;
  } else {
    const T e2 = (x[6] + 0.25f * x[2]) - 1.25f * x[4], o2 = (x[1] - 5.0f * x[3]) + 4.0f * x[5];  // 2 x odd part
    r[0] = e2 + 0.5f * o2;
    r[1] = e2 - 0.5f * o2;
    const T e3 = (x[6] + 4.0f * x[2]) - 5.0f * x[4], o3 = (x[5] - 5.0f * x[3]) + 4.0f * x[1];  // 2 x odd part
    r[2] = e3 + 0.5f * o3;
    r[3] = e3 - 0.5f * o3;
  }
}

// BT x for one column x[0..kIn): both halves.
template <class T>
CNN_FP32_INLINE void bt_apply(const T (&x)[kIn], T (&r)[kIn]) {
  T h0[4], h1[4];
  bt_half<0>(x, h0);
  bt_half<1>(x, h1);
  r[0] = h0[0], r[7] = h0[1], r[1] = h0[2], r[2] = h0[3];
  r[3] = h1[0], r[4] = h1[1], r[5] = h1[2], r[6] = h1[3];
}

// AT x: kAT's rows on sums and differences of the +-a pairs, 16 adds/FMAs instead of 22.
template <class T>
CNN_FP32_INLINE void at_apply(const T (&x)[kIn], T (&y)[kOut]) {
  const T s1 = x[1] + x[2], d1 = x[1] - x[2], s2 = x[3] + x[4], d2 = x[3] - x[4], s3 = x[5] + x[6],
          d3 = x[5] - x[6];
  y[0] = x[0] + s1 + s2 + s3;
  y[1] = d1 + 2.0f * d2 + 0.5f * d3;
  y[2] = s1 + 4.0f * s2 + 0.25f * s3;
  y[3] = (d1 + x[7]) + 8.0f * d2 + 0.125f * d3;
}

// Loops over a tile's rows and columns fully unrolled, so that its arrays stay in registers on a GPU.
#if defined(__CUDACC__)
#define CNN_WINOGRAD_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define CNN_WINOGRAD_UNROLL _Pragma("GCC unroll 8")
#else
#define CNN_WINOGRAD_UNROLL
#endif

// Four floats loaded as one 16-byte word (a GPU's 128-bit load) from a 16-byte aligned address.
struct alignas(16) FloatQuad {
  float v[4];
};

// The 8x8 block at src (row stride S) into registers, row-major: w[8 i + j] = src[i S + j]; with kRowQuads each
// row as two FloatQuads (src and S must keep every row 16-byte aligned), else value by value.
template <int S, bool kRowQuads>
CNN_FP32_INLINE void load_block(const float* src, float (&w)[kElems]) {
  static_assert(!kRowQuads || S % 4 == 0, "rows 16-byte aligned");
  CNN_WINOGRAD_UNROLL
  for (int i = 0; i < kIn; ++i) {
    if constexpr (kRowQuads) {
      const FloatQuad a = reinterpret_cast<const FloatQuad*>(src + i * S)[0];
      const FloatQuad b = reinterpret_cast<const FloatQuad*>(src + i * S)[1];
      CNN_WINOGRAD_UNROLL
      for (int j = 0; j < 4; ++j) w[i * kIn + j] = a.v[j], w[i * kIn + j + 4] = b.v[j];
    } else {
      CNN_WINOGRAD_UNROLL
      for (int j = 0; j < kIn; ++j) w[i * kIn + j] = src[i * S + j];
    }
  }
}

// BT (OUT = kIn rows) or AT (OUT = kOut) applied to the 8 columns of the 8x8 block w (row-major):
// x[k][j] = (BT w)[k][j] or (AT w)[k][j].
template <int OUT>
CNN_FP32_INLINE void transform_columns(const float* w, float (&x)[OUT][kIn]) {
  CNN_WINOGRAD_UNROLL
  for (int j = 0; j < kIn; ++j) {
    float col[kIn], r[OUT];
    CNN_WINOGRAD_UNROLL
    for (int i = 0; i < kIn; ++i) col[i] = w[i * kIn + j];
    if constexpr (OUT == kIn) bt_apply(col, r);
    else at_apply(col, r);
    CNN_WINOGRAD_UNROLL
    for (int k = 0; k < OUT; ++k) x[k][j] = r[k];
  }
}

// V = BT d B of one channel's 8x8 window at src (row stride S), stored row-major DS floats apart:
// dst[(8 k + l) DS] = V[k][l]. The per-thread transform of the GPU kernels; the CPU kernels transform many tiles
// at once with bt_apply on vectors. kRowQuads: load_block's.
template <int S, int DS, bool kRowQuads = false>
CNN_FP32_INLINE void tile_input_transform(const float* src, float* dst) {
  float w[kElems], x[kIn][kIn];
  load_block<S, kRowQuads>(src, w);
  transform_columns<kIn>(w, x);
  CNN_WINOGRAD_UNROLL
  for (int k = 0; k < kIn; ++k) {
    float r[kIn];
    bt_apply(x[k], r);
    CNN_WINOGRAD_UNROLL
    for (int l = 0; l < kIn; ++l) dst[(k * kIn + l) * DS] = r[l];
  }
}

// Y = AT M A of one tile's 64 values m (row-major), then the 2x2 max pools of Y: pooled[a][b] (bias and ReLU
// are the caller's). The GPU kernels' per-thread output stage, as tile_input_transform.
CNN_FP32_INLINE void tile_output_pool(const float (&m)[kElems], float (&pooled)[2][2]) {
  float z[kOut][kIn];
  transform_columns<kOut>(m, z);
  float y[kOut][kOut];
  CNN_WINOGRAD_UNROLL
  for (int a = 0; a < kOut; ++a) at_apply(z[a], y[a]);
  CNN_WINOGRAD_UNROLL
  for (int a = 0; a < 2; ++a)
    CNN_WINOGRAD_UNROLL
    for (int b = 0; b < 2; ++b)
      pooled[a][b] = fmaxf(fmaxf(y[2 * a][2 * b], y[2 * a][2 * b + 1]), fmaxf(y[2 * a + 1][2 * b], y[2 * a + 1][2 * b + 1]));
}

// The shared memory of one round of images in the GPU Winograd kernels (a block's, or a team's scratch), in
// floats: the round's zero-padded input planes, then V[tile][position][channel] of its tiles, then
// M[filter][tile][position] of one chunk of tiles (its size, chunk x filters x kMs, and what follows it are
// the kernel's). The paddings spread a warp's accesses over different banks. kSide: the input side, which
// the output keeps (5x5, pad 2); kPaddedSide: with the zero border.
template <int kChannels, int kSide, int kPaddedSide, int kImagesPerRound, bool kRowQuadLoads = false>
struct GpuRoundLayout {
  static constexpr int C = kChannels, IS = kSide, P = kPaddedSide, kImages = kImagesPerRound;
  static constexpr int TS = IS / kOut, T = TS * TS, kTiles = kImages * T;  // tiles: side, per image, per round
  // Input planes P x P, kPlane apart, so that the input transform's lanes, consecutive channels of one or two
  // tiles, read different banks: 1 modulo 32 where they load a window value by value; 4 modulo 32 where they
  // load its rows as 16-byte words (kRowQuads of tile_input_transform: the 8 lanes of a quarter-warp then
  // read 8 different 4-bank groups).
  static constexpr bool kRowQuads = kRowQuadLoads;
  static constexpr int kPlaneMod = kRowQuads ? 4 : 1;
  static constexpr int kPlane = P * P + (32 + kPlaneMod - P * P % 32) % 32, kPlanesFloats = kImages * C * kPlane;
  // Tile order within an image: where a quarter warp's lanes hold channels of two tiles (conv2's and conv3's
  // lanes, the last of one tile's channels and the first of the next; conv3's last 4 channels of two tiles where
  // kSpreadTiles), the two lie one tile row apart (4 P floats: 16 banks) instead of 4 floats apart.
  static constexpr bool kColumnMajor = C >= 16;
  // V: a position's channels padded to kPs floats, an odd multiple of 4, so that the 8 lanes of a quarter-warp
  // reading 8 consecutive positions as float4 hit 32 different banks. A tile's V is followed by its channel
  // count rounded up to 4 floats of padding: the input transform's lanes (consecutive channels, then the next
  // tile) write to different banks.
  static constexpr int kC4 = (C + 3) / 4 * 4;
  static constexpr int kPs = kC4 / 4 % 2 == 1 ? kC4 : kC4 + 4;
  // With 16 or 20 channels on the tensor cores (kRowQuads) V's tiles are spread (kSpreadTiles) for two stages:
  // - the element-wise stage's A loads: a half warp loads 4 tiles g of one group of 4 x 4 channel pairs t, 8
  //   bytes each. Tiles 24 modulo 32 floats apart put them on 16 different 8-byte words (12 g + t modulo 16); at
  //   16 (conv2) or 20 (conv3) modulo 32 two lanes shared a word.
  // - the input transform's stores: a warp takes 4 tiles of a group x 8 channels (24 j + c modulo 32: 32 banks),
  //   and the channels past the last whole 8 (conv3's 16 .. 19) as 8 tiles x 4 channels, which kGroupPad floats
  //   more between groups of 4 tiles put on 32 banks too (input_item).
  static constexpr bool kSpreadTiles = kRowQuadLoads && C >= 16 && C % 4 == 0;
  static constexpr int kVTileDense = kElems * kPs + kC4;
  static constexpr int kVTile = kSpreadTiles ? kVTileDense + (24 + 32 - kVTileDense % 32) % 32 : kVTileDense;
  static constexpr int kGroupPad = kSpreadTiles ? 4 : 0;
  // Where tile `tile`'s V starts, in floats from V's start.
  CNN_FP32_INLINE static constexpr int v_tile(int tile) { return tile * kVTile + tile / 4 * kGroupPad; }
  // The (tile, channel) that input transform item i of a round with `tiles` tiles computes: consecutive
  // channels of one tile, then the next tile; where kSpreadTiles, 32 items = 4 tiles x 8 channels, the last
  // C % 8 channels of every tile after all of those, 32 items = 8 tiles x 4 channels.
  CNN_FP32_INLINE static constexpr void input_item(int i, int tiles, int& tile, int& c) {
    if constexpr (!kSpreadTiles) {
      tile = i / C, c = i % C;
    } else {
      constexpr int kEights = C / 8;
      const int lane = i % 32, warp = i / 32;
      if (i < tiles * 8 * kEights) {
        tile = warp / kEights * 4 + lane / 8, c = warp % kEights * 8 + lane % 8;
      } else {
        const int j = i - tiles * 8 * kEights;
        tile = j / 4, c = 8 * kEights + j % 4;
      }
    }
  }
  // M in rows of 68: the output stage's lanes (consecutive tiles) read their rows as float4 in different
  // banks; the element-wise stage's lanes (consecutive positions) write one row.
  static constexpr int kMs = kElems + 4;
  // V after the planes (float4-aligned), M after the round's V.
  static constexpr int kOffV = (kPlanesFloats + 3) / 4 * 4, kOffM = kOffV + v_tile(kTiles);
  // Tile `tile` of the round: image b, tile row ty, tile column tx.
  CNN_FP32_INLINE static void tile_at(int tile, int& b, int& ty, int& tx) {
    b = tile / T;
    const int k = tile % T;
    ty = kColumnMajor ? k % TS : k / TS;
    tx = kColumnMajor ? k / TS : k % TS;
  }
  // Where the input window of tile `tile`, channel c (its 8 x 8 values from the top left) starts in the planes.
  CNN_FP32_INLINE static int window_at(int tile, int c) {
    int b, ty, tx;
    tile_at(tile, b, ty, tx);
    return (b * C + c) * kPlane + kOut * ty * P + kOut * tx;
  }
  static_assert(IS % kOut == 0, "whole tiles");
  static_assert(kPs >= C && kPs % 8 == 4 && kPlane % 32 == kPlaneMod && kVTile % 4 == 0 && kOffM % 4 == 0,
                "bank spreads, float4 rows");
  static_assert(!kRowQuads || P % 4 == 0, "window rows 16-byte aligned");
  static_assert(!kSpreadTiles || (T % 4 == 0 && kVTile % 32 == 24), "whole groups of 4 tiles, A loads' banks");
};

// The FLOP a Winograd forward pass executes per image, for the report's efficiency columns: per tile, the
// element-wise stage (64 multiply-adds per channel pair), the input transform BT d B per input channel and
// the output transform AT M A per filter, plus the FC layer. A transform applies BT (AT) to the 8 columns,
// then to the 8 (4) rows; with the +-a points paired, BT costs 24 adds or FMAs per 8 values and AT 16
// (bt_apply and at_apply above; tests/test_winograd.cpp counts them). Each add or FMA counts as one FMA slot, 2 FLOP, as the FMA
// peak counts them: the efficiency is the share of the FMA units' slots used.
inline constexpr int kBtOps = 24, kAtOps = 16;
constexpr double tiles_per_image(const ConvSpec& c) { return double(c.out_side() / kOut) * (c.out_side() / kOut); }
// The transforms alone: a variant that runs the element-wise stage elsewhere (tensor cores) counts that apart.
constexpr double transform_flop(const ConvSpec& c) {
  const double input = 2.0 * (kIn + kIn) * kBtOps;
  const double output = 2.0 * (kIn + kOut) * kAtOps;
  return tiles_per_image(c) * (input * c.in_channels + output * c.filters);
}
constexpr double executed_flop(const ConvSpec& c) {
  return tiles_per_image(c) * 2.0 * kElems * c.in_channels * c.filters + transform_flop(c);
}
inline constexpr double kExecutedFlopPerImage =
    executed_flop(kConv1) + executed_flop(kConv2) + executed_flop(kConv3) + kFc.flops();
static_assert(kIn == kOut + kKernel - 1 && kKernel == 5);
static_assert(kConv1.out_side() % kOut == 0 && kConv2.out_side() % kOut == 0 && kConv3.out_side() % kOut == 0);

}  // namespace cnn::winograd
