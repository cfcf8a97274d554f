// kokkos:register_tiles' host tiling (kokkos_register_tiles.cpp says what and why). Included by
// kokkos_register_tiles.cpp only.
#pragma once

#include "backends/kokkos/kokkos_tiles_layout.hpp"

namespace cnn::kokkos {
namespace {  // private to kokkos_register_tiles.cpp (and its test build, tests/CMakeLists.txt)

// Filters per register block: two conv rows x 16 x FB accumulators (conv1: 8 of 16, conv2: 10 of 20; 16-20
// vector registers); conv3: its whole 8x8 output (4 vectors of two rows) x 5 filters.
constexpr int kHostBlockFilters[3] = {8, 10, 5};
template <class Sh>
constexpr int kHostFB = kHostBlockFilters[Sh::layer];

// Pooled row py of filters f0 .. f0 + FB - 1, columns x0 .. x0 + 15: conv rows 2py and 2py + 1, then bias,
// max, ReLU into `out` (planes of side OP, interior offset `opad`). Each weight is loaded once for two
// 16-wide FMAs (the rows), so the loop is FMA-bound, not load-bound; taps whose two input rows are both
// padding are skipped.
template <class Sh, int OP, int opad>
CNN_KOKKOS_HOST_BLOCK KOKKOS_INLINE_FUNCTION void conv_pool_row_host(const float* in, const float* w, const float* b,
                                                                     float* out, int py, int x0, int f0) {
  constexpr int C = Sh::channels, F = Sh::filters, K = Sh::kernel, IN = kPaddedSide<Sh>, FB = kHostFB<Sh>, W = 16;
  static_assert(Sh::side % W == 0 && F % FB == 0);
  const int y = 2 * py;
  const int ky_lo = y >= Sh::pad - 1 ? 0 : Sh::pad - 1 - y, ky_hi = IN - Sh::pad - y < K ? IN - Sh::pad - y : K;
  float top[FB][W], bottom[FB][W];
  CNN_KOKKOS_HOST_UNROLL(GCC unroll 32)
  for (int f = 0; f < FB; ++f) {
    CNN_KOKKOS_HOST_UNROLL(GCC unroll 1)  // see below
    for (int x = 0; x < W; ++x) top[f][x] = bottom[f][x] = 0.0f;
  }
  for (int c = 0; c < C; ++c)
    for (int ky = ky_lo; ky < ky_hi; ++ky) {
      const float* rt = in + (c * IN + y + ky) * IN + x0;
      const float* rb = rt + IN;
      const float* wrow = w + (c * K + ky) * K * F + f0;
      CNN_KOKKOS_HOST_UNROLL(GCC unroll 5)
      for (int kx = 0; kx < K; ++kx) {
        CNN_KOKKOS_HOST_UNROLL(GCC unroll 32)
        for (int f = 0; f < FB; ++f) {
          const float wt = wrow[kx * F + f];
          // Not unrolled, so that the vectoriser, not the early complete unroller, sees it: 16-wide FMAs.
          CNN_KOKKOS_HOST_UNROLL(GCC unroll 1)
          for (int x = 0; x < W; ++x) {
            top[f][x] += wt * rt[kx + x];
            bottom[f][x] += wt * rb[kx + x];
          }
        }
      }
    }
  for (int f = 0; f < FB; ++f) {
    float* o = out + ((f0 + f) * OP + py + opad) * OP + x0 / 2 + opad;
    for (int j = 0; j < W / 2; ++j) {
      const float m = max4(top[f][2 * j], top[f][2 * j + 1], bottom[f][2 * j], bottom[f][2 * j + 1]);
      o[j] = max2(m + b[f0 + f], 0.0f);
    }
  }
}

// conv3's 8-pixel rows: a 16-wide vector holds two rows. Its input is first copied into a kx-expanded
// layout, e[c][kx][r][x] = in[c][r][x + kx] (r over the padded rows), where rows r, r + 1 of one tap are 16
// contiguous floats: a plain load, no shuffle.
template <class Sh, class Member>
KOKKOS_INLINE_FUNCTION void expand_kx(const Member& team, const float* in, float* e) {
  constexpr int K = Sh::kernel, IN = kPaddedSide<Sh>, S = Sh::side;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, Sh::channels * K), [&](int ck) {
    const int c = ck / K, kx = ck % K;
    for (int r = 0; r < IN; ++r)
      for (int x = 0; x < S; ++x) e[(ck * IN + r) * S + x] = in[(c * IN + r) * IN + x + kx];
  });
}

// One tap for the 8x8 block: vector j (output rows 2j, 2j + 1) reads the 16 floats at rows + 16 j. Only
// J0 .. J1 - 1: at ky = 0 vector 0 reads the two top padding rows, at ky = 4 vector 3 the bottom ones.
template <int FB, int J0, int J1>
KOKKOS_INLINE_FUNCTION void tap_8x8(float (&acc)[4][FB][16], const float* rows, const float* wp) {
  CNN_KOKKOS_HOST_UNROLL(GCC unroll 32)
  for (int f = 0; f < FB; ++f) {
    const float wt = wp[f];
    CNN_KOKKOS_HOST_UNROLL(GCC unroll 4)
    for (int j = J0; j < J1; ++j) {
      CNN_KOKKOS_HOST_UNROLL(GCC unroll 1)
      for (int x = 0; x < 16; ++x) acc[j][f][x] += wt * rows[16 * j + x];
    }
  }
}

// conv3 + bias + ReLU + pool for filters f0 .. f0 + FB - 1 from the expanded input: the whole 8x8 output of
// each filter in four vectors, then the 4x4 pooled planes (side OP, interior at opad).
template <class Sh, int OP, int opad>
CNN_KOKKOS_HOST_BLOCK KOKKOS_INLINE_FUNCTION void conv_pool_8x8_host(const float* e, const float* w, const float* b,
                                                                     float* out, int f0) {
  constexpr int C = Sh::channels, F = Sh::filters, K = Sh::kernel, IN = kPaddedSide<Sh>, S = Sh::side;
  constexpr int FB = kHostFB<Sh>;
  static_assert(S == 8 && K == 5 && Sh::pad == 2 && F % FB == 0);
  float acc[4][FB][16];
  for (int j = 0; j < 4; ++j)
    CNN_KOKKOS_HOST_UNROLL(GCC unroll 32)
    for (int f = 0; f < FB; ++f) {
      CNN_KOKKOS_HOST_UNROLL(GCC unroll 1)
      for (int x = 0; x < 16; ++x) acc[j][f][x] = 0.0f;
    }
  for (int c = 0; c < C; ++c) {
    const float* wc = w + c * K * K * F + f0;
    CNN_KOKKOS_HOST_UNROLL(GCC unroll 5)
    for (int kx = 0; kx < K; ++kx) {
      const float* col = e + (c * K + kx) * IN * S;
      tap_8x8<FB, 1, 4>(acc, col + 0 * S, wc + (0 * K + kx) * F);
      tap_8x8<FB, 0, 4>(acc, col + 1 * S, wc + (1 * K + kx) * F);
      tap_8x8<FB, 0, 4>(acc, col + 2 * S, wc + (2 * K + kx) * F);
      tap_8x8<FB, 0, 4>(acc, col + 3 * S, wc + (3 * K + kx) * F);
      tap_8x8<FB, 0, 3>(acc, col + 4 * S, wc + (4 * K + kx) * F);
    }
  }
  for (int f = 0; f < FB; ++f)
    for (int j = 0; j < 4; ++j)  // pooled row j: conv rows 2j (lanes 0..7) and 2j + 1 (lanes 8..15)
      for (int px = 0; px < 4; ++px) {
        const float* v = acc[j][f];
        const float m = max4(v[2 * px], v[2 * px + 1], v[S + 2 * px], v[S + 2 * px + 1]);
        out[((f0 + f) * OP + j + opad) * OP + px + opad] = max2(m + b[f0 + f], 0.0f);
      }
}

}  // namespace
}  // namespace cnn::kokkos
