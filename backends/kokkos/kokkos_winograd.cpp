// kokkos:winograd: the Winograd F(4x4, 5x5) forward pass of serial:winograd / openmp:winograd
// (common/kernels/cpu/winograd_f4x5.hpp, winograd_forward.hpp) as one Kokkos source for every space. Per conv
// layer: transformed weights U = G g GT (computed once at session start in FP64, stored as float, U[e][c][f]);
// input transform V = BT d B of every 8x8 input tile; element-wise stage M[f][e] = sum_c U[e][c][f] V[c][e]
// (64 small GEMMs over the channels); output transform Y = AT M A, bias, ReLU and the 2x2 max pool fused (a
// 4x4 output tile is 2x2 pooled outputs). The transforms (bt_apply, at_apply) are shared by both work tilings,
// picked at compile time from the space (kHostTiling), as in kokkos:register_tiles:
// - host (team size 1, one team per thread, each taking blocks of kLanes = 16 images from a shared counter): a
//   block's activations stored image-interleaved, [c][y][x][image], unpadded (the window rows and columns in the
//   padding are compile-time cases of the input transform), so every step works on contiguous arrays of 16
//   floats (one per image) that GCC vectorises into 16-wide vector operations with no gathers or shuffles: a
//   tile's V[e][c][16] is built from plain row loads. Tile by tile: conv1 (3 channels) computes the element-wise
//   sums where the output transform needs them (column by column of M, 4 filters' accumulators in registers;
//   stored, M would cost more than its short sums); conv2 and conv3 store the tile's M[e][f][16], all 20
//   filters' accumulators in registers so that each V load feeds 20 FMAs (one broadcast of U each), as
//   winograd_forward.cpp does;
// - GPU (128 threads, one image per team): activations unpadded in scratch (shared memory; conv1 reads the
//   pixels from global memory), tiles in chunks: threads over (channel, tile) transform the chunk's input
//   tiles into V[c][tile][e] in scratch, then threads over (filters, tile) each compute the 64 sums of one
//   tile for 1 or 2 filters -- M is never stored -- row by row of M (U stored [k][c][f][l] for it: a row's 8
//   weights and 8 V values are two 128-bit loads each), each row k of q = M A folded at once into the 16
//   accumulators of Y = AT M A (not q's 32: the registers this frees let conv1 give a thread 2 filters, so that
//   each V load feeds 2 filters' FMAs -- the stage is bound by its loads -- and its 32-tile chunks take two
//   full rounds of 128 threads instead of four), then pool and ReLU in registers. conv2 and conv3 keep one
//   filter per thread: 2 would leave half the team idle (6-tile chunks: 60 items; conv3: 40). 46.8 KB of
//   scratch (under CUDA's 48 KB per block), which also rules out two images per team for conv3 (its V alone
//   would take 42.5 KB).
#include "common/kernels/cpu/winograd_f4x5.hpp"
#include "backends/kokkos/kokkos_session.hpp"
#include "backends/kokkos/kokkos_winograd_session.hpp"
#include "common/flush_denormals.hpp"
#include "common/registry.hpp"

#include <type_traits>

namespace cnn::kokkos {
namespace {  // private to kokkos_winograd.cpp (and its test build, tests/CMakeLists.txt)

constexpr int kLanes = kHostTiling ? 16 : 1;  // images per team
constexpr int kTeamSize = kHostSpace ? 1 : 128;
constexpr int kE = winograd::kElems;  // elements of a transformed tile

// A transform of winograd_f4x5.hpp on N lanes of strided columns: BT (OUT = kIn outputs) or AT (OUT = kOut),
// r[k * RS + l] = sum_i M[k][i] x[i * XS + l] for k < OUT, l < N.
template <int OUT, int N, int XS, int RS>
KOKKOS_INLINE_FUNCTION void transform_lanes(const float* __restrict__ x, float* __restrict__ r) {
  static_assert(OUT == winograd::kIn || OUT == winograd::kOut);
  CNN_KOKKOS_HOST_UNROLL(GCC unroll 1)  // one 16-wide vector iteration on a host; unrolled with 1 lane
  for (int l = 0; l < N; ++l) {
    float in[winograd::kIn], out[OUT];
    CNN_KOKKOS_HOST_UNROLL(GCC unroll 8)
    for (int i = 0; i < winograd::kIn; ++i) in[i] = x[i * XS + l];
    if constexpr (OUT == winograd::kIn) winograd::bt_apply(in, out);
    else winograd::at_apply(in, out);
    CNN_KOKKOS_HOST_UNROLL(GCC unroll 8)
    for (int k = 0; k < OUT; ++k) r[k * RS + l] = out[k];
  }
}
template <int N, int XS, int RS>
KOKKOS_INLINE_FUNCTION void bt_apply(const float* __restrict__ x, float* __restrict__ r) {
  transform_lanes<winograd::kIn, N, XS, RS>(x, r);
}
template <int N, int XS, int YS>
KOKKOS_INLINE_FUNCTION void at_apply(const float* __restrict__ x, float* __restrict__ y) {
  transform_lanes<winograd::kOut, N, XS, YS>(x, y);
}

// AT[i][k] (winograd::kAT as float, computed so that device code needs no table): the k-th point to the i-th
// power, points 0, 1, -1, 2, -2, 1/2, -1/2 and infinity (k = 7: 1 in the last row only).
KOKKOS_INLINE_FUNCTION constexpr float at_coefficient(int i, int k) {
  if (k == 7) return i == 3 ? 1.0f : 0.0f;
  const float p = k == 0 ? 0.0f : k == 1 ? 1.0f : k == 2 ? -1.0f : k == 3 ? 2.0f : k == 4 ? -2.0f : k == 5 ? 0.5f : -0.5f;
  float r = 1.0f;
  for (int e = 0; e < i; ++e) r *= p;
  return r;
}

constexpr bool at_coefficients_match() {
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 8; ++k)
      if (at_coefficient(i, k) != float(winograd::kAT[i][k])) return false;
  return true;
}
static_assert(at_coefficients_match());

// Pooled output (a, b) of a 4x4 output tile y[i * 4 + j][lane] on N lanes: max of its 2x2, + bias, ReLU.
template <int N>
KOKKOS_INLINE_FUNCTION void pool_store(const float* __restrict__ y, int a, int b, float bias, float* __restrict__ out) {
  CNN_KOKKOS_HOST_UNROLL(GCC unroll 1)
  for (int l = 0; l < N; ++l) {
    const float m = max4(y[((2 * a) * 4 + 2 * b) * N + l], y[((2 * a) * 4 + 2 * b + 1) * N + l],
                         y[((2 * a + 1) * 4 + 2 * b) * N + l], y[((2 * a + 1) * 4 + 2 * b + 1) * N + l]);
    out[l] = max2(m + bias, 0.0f);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Host path: kLanes images per team, activations [c][y][x][lane] with their zero padding.

constexpr int kL = 16;  // host lanes (kLanes on a host space; fixed here so the host blocks compile anywhere)
// Filters per pass of the fused element-wise + output stage (conv1; accumulators in registers: FP vectors).
template <class Sh>
constexpr int kHostFP = 4;

// Floats between consecutive elements e of V[e][c][lane]: one vector more than the C channels where C is even, so
// that the input transform's 64 stores of a channel (and the element-wise stage's reads) do not fall into a few L1
// sets, as 1 KB apart (conv2, C = 16) they would; C itself where it is odd (conv1: 3 x 64 bytes apart already spread
// over the sets, and V of a tile is 12 KB instead of 16 KB of L1).
template <class Sh>
constexpr int kHostVe = (Sh::channels % 2 == 0 ? Sh::channels + 1 : Sh::channels) * kL;

// The window rows of a tile that lie in the zero padding around an unpadded plane: the first tile row's top
// Sh::pad rows, the last's bottom ones (a compile-time case, so that those loads and their arithmetic fold away
// inside the vectorised lane loop).
enum WindowRows { kRowsInside, kRowsTop, kRowsBottom };
// Likewise the tile's column in the tile row: the first (its left Sh::pad window columns in the padding), the last
// (its right ones), or one inside.
enum TileColumn { kColumnInside, kColumnLeft, kColumnRight };

// Rows winograd::kBtHalf[G] of V[e][c][lane] (e = 8 k + l) of one channel: the column pass (x = BT d) of the 8 window
// columns for those 4 rows only, then their row passes (V = x B). 32 live vectors rather than the whole x (64,
// half of them spilled and reloaded); the window is read twice (from L1 the second time). The planes are
// unpadded (side S): window sample (i, j) is in[base + (i S + j) kL + lane] inside the plane, zero outside it:
// the rows of case R, and the first (left) or last (right) Sh::pad columns, whose column pass is zero.
// Both cases compile-time: with run-time ones GCC keeps x in memory (the branches join with x half written).
template <class Sh, int G, WindowRows R, TileColumn T>
KOKKOS_INLINE_FUNCTION void input_half_host(const float* __restrict__ in, long base, float* __restrict__ v) {
  constexpr int S = Sh::side, P = Sh::pad;
  constexpr bool left = T == kColumnLeft, right = T == kColumnRight;
  float x[4][8][kL];  // x[k][j][lane] = (BT d)[winograd::kBtHalf[G][k]][j]
  CNN_KOKKOS_HOST_UNROLL(GCC unroll 8)
  for (int j = 0; j < 8; ++j) {
    if ((left && j < P) || (right && j >= 8 - P)) {
      CNN_KOKKOS_HOST_UNROLL(GCC unroll 4)
      for (int k = 0; k < 4; ++k) {
        CNN_KOKKOS_HOST_UNROLL(GCC unroll 1)
        for (int ln = 0; ln < kL; ++ln) x[k][j][ln] = 0.0f;
      }
      continue;
    }
    CNN_KOKKOS_HOST_UNROLL(GCC unroll 1)  // one 16-wide vector iteration
    for (int ln = 0; ln < kL; ++ln) {
      float d[winograd::kIn], out[4];
      CNN_KOKKOS_HOST_UNROLL(GCC unroll 8)
      for (int i = 0; i < winograd::kIn; ++i)
        d[i] = (R == kRowsTop && i < P) || (R == kRowsBottom && i >= 8 - P) ? 0.0f
                                                                            : in[base + (long(i) * S + j) * kL + ln];
      winograd::bt_half<G>(d, out);
      CNN_KOKKOS_HOST_UNROLL(GCC unroll 4)
      for (int k = 0; k < 4; ++k) x[k][j][ln] = out[k];
    }
  }
  CNN_KOKKOS_HOST_UNROLL(GCC unroll 4)
  for (int k = 0; k < 4; ++k) bt_apply<kL, kL, kHostVe<Sh>>(&x[k][0][0], v + winograd::kBtHalf[G][k] * 8 * kHostVe<Sh>);
}

template <class Sh, WindowRows R, TileColumn T>
CNN_KOKKOS_HOST_BLOCK KOKKOS_INLINE_FUNCTION void input_channels_host(const float* in, float* v, int ty, int tx) {
  constexpr int C = Sh::channels, S = Sh::side, P = Sh::pad;
  for (int c = 0; c < C; ++c) {
    const long base = ((long(c) * S + 4 * ty - P) * S + 4 * tx - P) * kL;
    input_half_host<Sh, 0, R, T>(in, base, v + c * kL);
    input_half_host<Sh, 1, R, T>(in, base, v + c * kL);
  }
}
template <class Sh, WindowRows R>
KOKKOS_INLINE_FUNCTION void input_row_case_host(const float* in, float* v, int ty, int tx) {
  constexpr int TS = Sh::side / 4;
  if (tx == 0) input_channels_host<Sh, R, kColumnLeft>(in, v, ty, tx);
  else if (tx == TS - 1) input_channels_host<Sh, R, kColumnRight>(in, v, ty, tx);
  else if constexpr (TS > 2) input_channels_host<Sh, R, kColumnInside>(in, v, ty, tx);
}

// V[e][c][lane] of tile (ty, tx), every channel, from unpadded planes of side S: columns of the window first
// (x = BT d), then rows (V = x B), in two halves of x's rows (input_half_host).
template <class Sh>
KOKKOS_INLINE_FUNCTION void input_transform_host(const float* in, float* v, int ty, int tx) {
  constexpr int TS = Sh::side / 4;
  static_assert(TS >= 2 && Sh::pad <= 4, "a window reaches into one border at most");
  if (ty == 0) input_row_case_host<Sh, kRowsTop>(in, v, ty, tx);
  else if (ty == TS - 1) input_row_case_host<Sh, kRowsBottom>(in, v, ty, tx);
  else if constexpr (TS > 2) input_row_case_host<Sh, kRowsInside>(in, v, ty, tx);
}

// acc[q][lane] (+)= sum_c U[e][c][f0 + q] V[e][c][lane] for FP filters, each V load feeding FP FMAs (one
// broadcast of U each; accumulators in registers). First: acc := the sum, for conv1, whose 3 channels the loop
// unrolls completely, so that the first product initialises the accumulators instead of a zeroing pass.
template <class Sh, int FP, bool First>
KOKKOS_INLINE_FUNCTION void madd_host(const float* __restrict__ v, const float* __restrict__ u, int e, int f0,
                                      float (&acc)[FP][kL]) {
  constexpr int C = Sh::channels, F = Sh::filters;
  static_assert(!First || C <= 8, "First needs the channel loop unrolled completely");
  CNN_KOKKOS_HOST_UNROLL(GCC unroll 8)
  for (int c = 0; c < C; ++c) {
    const float* vc = v + e * kHostVe<Sh> + c * kL;
    const float* uc = u + (e * C + c) * F + f0;
    CNN_KOKKOS_HOST_UNROLL(GCC unroll 32)
    for (int q = 0; q < FP; ++q) {
      const float w = uc[q];
      CNN_KOKKOS_HOST_UNROLL(GCC unroll 1)  // the vectoriser's: one 16-wide FMA
      for (int ln = 0; ln < kL; ++ln) acc[q][ln] = First && c == 0 ? w * vc[ln] : acc[q][ln] + w * vc[ln];
    }
  }
}

// Element e of M for filters f0 .. f0 + FB - 1: out[q][lane] = sum_c U[e][c][f0 + q] V[e][c][lane].
template <class Sh, int FB>
KOKKOS_INLINE_FUNCTION void elementwise_sums(const float* __restrict__ v, const float* __restrict__ u, int e, int f0,
                                             float* __restrict__ out) {
  float acc[FB][kL];
  CNN_KOKKOS_HOST_UNROLL(GCC unroll 32)
  for (int q = 0; q < FB; ++q) {
    CNN_KOKKOS_HOST_UNROLL(GCC unroll 1)
    for (int ln = 0; ln < kL; ++ln) acc[q][ln] = 0.0f;
  }
  madd_host<Sh, FB, false>(v, u, e, f0, acc);
  CNN_KOKKOS_HOST_UNROLL(GCC unroll 32)
  for (int q = 0; q < FB; ++q) {
    CNN_KOKKOS_HOST_UNROLL(GCC unroll 1)
    for (int ln = 0; ln < kL; ++ln) out[q * kL + ln] = acc[q][ln];
  }
}

// Column l of (AT M) for FP filters, y[i][q][lane], M's sums computed where the column pass needs them: rows
// 2 pair + 1 and 2 pair + 2 of M hold the points +-a (at_apply's pairing), so output row i takes a^i times
// their sum (i even) or difference (i odd); folded in pair by pair, 4 accumulators per filter stay live rather
// than the column's 8 sums, and M is never stored. Rows 0 and 7 feed their one output row directly.
template <class Sh, int FP>
KOKKOS_INLINE_FUNCTION void column_sums_host(const float* __restrict__ v, const float* __restrict__ u, int l, int f0,
                                             float (&y)[winograd::kOut][FP][kL]) {
  CNN_KOKKOS_HOST_UNROLL(GCC unroll 3)
  for (int pair = 0; pair < 3; ++pair) {
    float m0[FP][kL], m1[FP][kL];
    madd_host<Sh, FP, true>(v, u, (2 * pair + 1) * 8 + l, f0, m0);
    madd_host<Sh, FP, true>(v, u, (2 * pair + 2) * 8 + l, f0, m1);
    const float a = at_coefficient(1, 2 * pair + 1), power[4] = {1.0f, a, a * a, a * a * a};
    CNN_KOKKOS_HOST_UNROLL(GCC unroll 8)
    for (int q = 0; q < FP; ++q) {
      CNN_KOKKOS_HOST_UNROLL(GCC unroll 1)
      for (int ln = 0; ln < kL; ++ln) {
        const float sum = m0[q][ln] + m1[q][ln], diff = m0[q][ln] - m1[q][ln];
        CNN_KOKKOS_HOST_UNROLL(GCC unroll 4)
        for (int i = 0; i < 4; ++i) {  // a^i times the sum (i even) or the difference (i odd)
          const float t = power[i] * (i % 2 == 0 ? sum : diff);
          y[i][q][ln] = pair == 0 ? t : y[i][q][ln] + t;
        }
      }
    }
  }
  madd_host<Sh, FP, false>(v, u, l, f0, y[0]);
  madd_host<Sh, FP, false>(v, u, 7 * 8 + l, f0, y[3]);
}

// Filters f0 .. f0 + FP - 1 of tile (ty, tx): p = AT M column by column (column_sums_host), then Y = p A, pool,
// bias, ReLU into the planes `out` (side OP, interior at opad; the host path's planes are unpadded, opad 0).
template <class Sh, int OP, int opad>
CNN_KOKKOS_HOST_BLOCK KOKKOS_INLINE_FUNCTION void elementwise_output_host(const float* v, const float* u, const float* bias,
                                                                          float* out, int ty, int tx, int f0) {
  constexpr int FP = kHostFP<Sh>;
  float p[FP][4][8][kL];  // p[q][i][l][lane] = (AT M)[i][l]
  for (int l = 0; l < 8; ++l) {
    float y[winograd::kOut][FP][kL];
    column_sums_host<Sh, FP>(v, u, l, f0, y);
    CNN_KOKKOS_HOST_UNROLL(GCC unroll 4)
    for (int i = 0; i < winograd::kOut; ++i) {
      CNN_KOKKOS_HOST_UNROLL(GCC unroll 8)
      for (int q = 0; q < FP; ++q) {
        CNN_KOKKOS_HOST_UNROLL(GCC unroll 1)
        for (int ln = 0; ln < kL; ++ln) p[q][i][l][ln] = y[i][q][ln];
      }
    }
  }
  for (int q = 0; q < FP; ++q) {
    float y[4][4][kL];
    CNN_KOKKOS_HOST_UNROLL(GCC unroll 4)
    for (int i = 0; i < 4; ++i) at_apply<kL, kL, kL>(&p[q][i][0][0], &y[i][0][0]);
    const int f = f0 + q;
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b)
        pool_store<kL>(&y[0][0][0], a, b, bias[f], out + ((f * OP + opad + 2 * ty + a) * OP + opad + 2 * tx + b) * kL);
  }
}

// The element-wise stage of one tile on its own, for many channels: M[e][f][lane], FB filters at a time; the
// stores are contiguous.
template <class Sh, int FB>
CNN_KOKKOS_HOST_BLOCK KOKKOS_INLINE_FUNCTION void elementwise_host(const float* __restrict__ v, const float* __restrict__ u,
                                                                   float* __restrict__ m) {
  constexpr int F = Sh::filters;
  static_assert(F % FB == 0);
  for (int e = 0; e < kE; ++e)
    for (int f0 = 0; f0 < F; f0 += FB) elementwise_sums<Sh, FB>(v, u, e, f0, m + (e * F + f0) * kL);
}

// Output transform of one tile from the stored M: p = AT M column by column, Y = p A, pool, bias, ReLU.
template <class Sh, int OP, int opad>
CNN_KOKKOS_HOST_BLOCK KOKKOS_INLINE_FUNCTION void output_host(const float* m, const float* bias, float* out, int ty,
                                                              int tx) {
  for (int f = 0; f < Sh::filters; ++f) {
    float p[4][8][kL];
    CNN_KOKKOS_HOST_UNROLL(GCC unroll 8)
    for (int l = 0; l < 8; ++l) at_apply<kL, 8 * Sh::filters * kL, 8 * kL>(m + (l * Sh::filters + f) * kL, &p[0][l][0]);
    float y[4][4][kL];
    CNN_KOKKOS_HOST_UNROLL(GCC unroll 4)
    for (int i = 0; i < 4; ++i) at_apply<kL, kL, kL>(&p[i][0][0], &y[i][0][0]);
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b)
        pool_store<kL>(&y[0][0][0], a, b, bias[f], out + ((f * OP + opad + 2 * ty + a) * OP + opad + 2 * tx + b) * kL);
  }
}

// One conv layer + ReLU + pool on the team's kL images. Few channels (conv1): element-wise sums fused into the
// output transform; many: M stored per tile (80 KB), each V load feeding all the filters' FMAs.
template <class Sh>
constexpr bool kHostFused = Sh::channels < 8;
template <class Sh>
constexpr int kHostFB = Sh::filters;  // filters per register block of elementwise_host (16 or 20 vectors)

template <class Sh, int OP, int opad>
KOKKOS_INLINE_FUNCTION void conv_relu_pool_host(const float* in, const float* u, const float* bias, float* out,
                                                float* v, float* m) {
  constexpr int TS = Sh::side / 4;
  static_assert(Sh::side % 4 == 0 && Sh::kernel == 5 && Sh::pad == 2);
  static_assert(kHostFused<Sh> ? Sh::filters % kHostFP<Sh> == 0 : Sh::filters <= 20, "whole passes; 20 accumulators");
  for (int ty = 0; ty < TS; ++ty)
    for (int tx = 0; tx < TS; ++tx) {
      input_transform_host<Sh>(in, v, ty, tx);
      if constexpr (kHostFused<Sh>) {
        for (int f0 = 0; f0 < Sh::filters; f0 += kHostFP<Sh>)
          elementwise_output_host<Sh, OP, opad>(v, u, bias, out, ty, tx, f0);
      } else {
        elementwise_host<Sh, kHostFB<Sh>>(v, u, m);
        output_host<Sh, OP, opad>(m, bias, out, ty, tx);
      }
    }
}

// in1[c][y][x][lane] := image `lane`, normalised, at the interior (offset pad) of planes of side P (the host
// path's are unpadded: pad 0). Row by row: each image's row
// converted on its own (contiguous bytes: vector conversions), then the 16 rows interleaved, x by x (a store
// group of 16 that GCC builds with vector permutes), rather than one byte load and conversion per lane.
template <int P, int pad>
CNN_KOKKOS_HOST_BLOCK KOKKOS_INLINE_FUNCTION void load_images_host(const std::uint8_t* const (&src)[kL], float* in1) {
  constexpr int S = kImageSide;
  for (int c = 0; c < kImageChannels; ++c)
    for (int y = 0; y < S; ++y) {
      float rows[kL][S];
      CNN_KOKKOS_HOST_UNROLL(GCC unroll 16)
      for (int l = 0; l < kL; ++l) {
        const std::uint8_t* row = src[l] + (c * S + y) * S;
        CNN_KOKKOS_HOST_UNROLL(GCC unroll 1)
        for (int x = 0; x < S; ++x) rows[l][x] = normalise_pixel_fp32(row[x]);
      }
      float* dst = in1 + ((c * P + y + pad) * P + pad) * kL;
      CNN_KOKKOS_HOST_UNROLL(GCC unroll 1)
      for (int x = 0; x < S; ++x) {
        CNN_KOKKOS_HOST_UNROLL(GCC unroll 16)
        for (int l = 0; l < kL; ++l) dst[x * kL + l] = rows[l][x];
      }
    }
}

// FC (pooled[k][lane], k in pool3's flatten order) and softmax of each real lane. A template, as every host
// block: a CUDA build instantiates none of them.
template <int L>
CNN_KOKKOS_HOST_BLOCK KOKKOS_INLINE_FUNCTION void fc_softmax_host(const float* pooled, const float* fw, const float* fb,
                                                                  float* probs, int real) {
  // All classes at once: each pooled vector is loaded once for its 10 FMAs (10 accumulators in registers).
  float logits[kClasses][L];
  CNN_KOKKOS_HOST_UNROLL(GCC unroll 10)
  for (int o = 0; o < kClasses; ++o) {
    CNN_KOKKOS_HOST_UNROLL(GCC unroll 1)
    for (int l = 0; l < L; ++l) logits[o][l] = fb[o];
  }
  for (int k = 0; k < kFcInputs; ++k) {
    CNN_KOKKOS_HOST_UNROLL(GCC unroll 10)
    for (int o = 0; o < kClasses; ++o) {
      const float w = fw[o * kFcInputs + k];
      CNN_KOKKOS_HOST_UNROLL(GCC unroll 1)
      for (int l = 0; l < L; ++l) logits[o][l] += w * pooled[k * L + l];
    }
  }
  for (int l = 0; l < real; ++l) {
    float z[kClasses];
    for (int o = 0; o < kClasses; ++o) z[o] = logits[o][l];
    softmax_into(z, probs + l * kClasses);
  }
}

// Host scratch, floats: [in1 (in3 at its start once conv1 is done)][in2 (pool3 at its start after conv2)][V][M].
constexpr int kHostIn1 = Shape1::channels * Shape1::side * Shape1::side * kL;  // unpadded planes
constexpr int kHostIn2 = Shape2::channels * Shape2::side * Shape2::side * kL;
constexpr int kHostIn3 = Shape3::channels * Shape3::side * Shape3::side * kL;
constexpr int kHostV = kE * kHostVe<Shape3>;  // the largest C
constexpr int kHostM = kE * Shape3::filters * kL;  // the most filters
constexpr int kHostScratch = kHostIn1 + kHostIn2 + kHostV + kHostM;
static_assert(!kHostTiling || kLanes == kL);
static_assert(kHostIn3 <= kHostIn1 && kFcInputs * kL <= kHostIn2 && Shape2::channels <= Shape3::channels &&
              Shape1::channels <= Shape3::channels);

// ---------------------------------------------------------------------------------------------------------
// GPU path: one image per team, activations unpadded planes in scratch, tiles in chunks of kChunk.

// Tiles per chunk (V[c][e][tile] of a chunk fills kDevV floats at most): conv1 32 of 64, conv2 6 of 16, conv3 4 of 4.
constexpr int kDeviceChunk[3] = {32, 6, 4};
template <class Sh>
constexpr int kChunk = kDeviceChunk[Sh::layer];
// Filters per thread of the element-wise + output stage: conv1 2 (each V load feeds 2 filters' FMAs, 256 items of
// a 32-tile chunk: two full rounds of the team), conv2 and conv3 1 (2 would leave half the threads idle).
constexpr int kDeviceFilters[3] = {2, 1, 1};
// Device layouts, so that the element-wise stage loads 4 floats per instruction: V[c][t][e] and U[k][c][f][l]
// (e = 8 k + l: one row k of M takes 8 contiguous floats of V and of U per channel and filter).
// A (channel, tile)'s 64 floats of V are kVStride apart: 4 floats of padding put the 16-byte loads of 8
// consecutive tiles on distinct banks.
constexpr int kVStride = kE + 4;
// The input planes of layer Sh in scratch: unpadded rows, but planes kPlaneGap floats longer than side x side, so
// that the input transform's loads -- threads over (channel, tile), channels a plane apart -- spread over the
// banks instead of meeting in one: a plane of 256 or 64 floats is a multiple of the 32 banks (9.6- and 10-way
// conflicts on average); gaps of 3 and 1 leave 2.2- and 2-way (counted over every load of the chunked
// (channel, tile) order of conv_relu_pool_device). Larger gaps that do better for conv3 do not fit the 48 KB.
// conv1 reads the pixels from global memory; pool3's planes stay dense (the FC's order).
template <class Sh>
constexpr int kPlaneGap = Sh::layer == 1 ? 3 : Sh::layer == 2 ? 1 : 0;
template <class Sh>
constexpr int kPlaneStride = Sh::side * Sh::side + kPlaneGap<Sh>;
constexpr int kDevIn2 = Shape2::channels * kPlaneStride<Shape2>;  // pool1's output
constexpr int kDevIn3 = Shape3::channels * kPlaneStride<Shape3>;  // pool2's
constexpr int kDevV = 6528;  // conv1 3 x 32 and conv2 16 x 6 (channel, tile)s of kVStride floats
constexpr int kDevScratch = kDevIn2 + kDevIn3 + kDevV;  // floats: [in2 (pool3, FC partial sums, logits)][in3][V]
constexpr int kPartialAt = kFcInputs, kLogitsAt = kPartialAt + kClasses * 32;
static_assert(Shape1::channels * kVStride * kDeviceChunk[0] <= kDevV &&
              Shape2::channels * kVStride * kDeviceChunk[1] <= kDevV &&
              Shape3::channels * kVStride * kDeviceChunk[2] <= kDevV && (kDevIn2 + kDevIn3) % 4 == 0);
// A CUDA block's shared memory: the scratch, its 64 bytes of alignment slack, Kokkos' own 8 (team size + 2) bytes
// (ParallelFor<TeamPolicy, Cuda>) and its 16 bytes of static shared memory (ptxas -v), at most 48 KB. Past it,
// Kokkos 3.4 reports nothing and the kernel does not run (seen with the scratch at 48 KB without those 16 bytes:
// the suite's validation failed).
static_assert(kLogitsAt + kClasses <= kDevIn2 && kDevScratch * 4 + 64 + 8 * (128 + 2) + 16 <= 48 * 1024);

// Input sample (c, y, x) of layer Sh (zero outside the plane): conv1 from the image's pixels, else from the
// previous layer's unpadded planes.
template <class Sh>
struct DeviceInput {
  const float* planes;
  const std::uint8_t* pixels;
  KOKKOS_INLINE_FUNCTION float operator()(int c, int y, int x) const {
    if (y < 0 || y >= Sh::side || x < 0 || x >= Sh::side) return 0.0f;
    const int at = c * kPlaneStride<Sh> + y * Sh::side + x;
    if constexpr (Sh::layer == 0) return normalise_pixel_fp32(pixels[at]);
    else return planes[at];
  }
};

// Conv + bias + ReLU + pool of one layer over the team, into planes `out` of side Sh::pooled, OP floats apart.
template <class Sh, int OP, class Member>
KOKKOS_INLINE_FUNCTION void conv_relu_pool_device(const Member& team, DeviceInput<Sh> in, const float* u,
                                                  const float* bias, float* out, float* v) {
  constexpr int C = Sh::channels, F = Sh::filters, TS = Sh::side / 4, T = TS * TS, TC = kChunk<Sh>;
  constexpr int OS = Sh::pooled, NF = kDeviceFilters[Sh::layer];
  static_assert(F % NF == 0);
  for (int t0 = 0; t0 < T; t0 += TC) {
    const int n = T - t0 < TC ? T - t0 : TC;
    // V[c][t][e] of the chunk: a thread per (channel, tile), its 8x8 window in registers, row by row of V stored
    // as quads.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, C * n), [&](int i) {
      const int c = i / n, t = i % n, ty = (t0 + t) / TS, tx = (t0 + t) % TS;
      float d[8][8], x[8][8];
      CNN_KOKKOS_DEVICE_UNROLL(unroll)
      for (int r = 0; r < 8; ++r) {
        CNN_KOKKOS_DEVICE_UNROLL(unroll)
        for (int s = 0; s < 8; ++s) d[r][s] = in(c, 4 * ty + r - Sh::pad, 4 * tx + s - Sh::pad);
      }
      CNN_KOKKOS_DEVICE_UNROLL(unroll)
      for (int j = 0; j < 8; ++j) bt_apply<1, 8, 8>(&d[0][j], &x[0][j]);
      float* dst = v + (c * TC + t) * kVStride;
      CNN_KOKKOS_DEVICE_UNROLL(unroll)
      for (int k = 0; k < 8; ++k) {
        float w[8];
        bt_apply<1, 1, 1>(&x[k][0], w);
        store4(dst + 8 * k, w);
        store4(dst + 8 * k + 4, w + 4);
      }
    });
    team.team_barrier();
    // A thread per (NF filters, tile): the 64 sums over channels, row by row of M; each row k, q = (M A)[k], is
    // folded straight into Y = AT M A (y += AT[:, k] q), so that a filter holds 16 accumulators, not q's 32.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, F / NF * n), [&](int i) {
      const int f0 = i / n * NF, t = i % n, ty = (t0 + t) / TS, tx = (t0 + t) % TS;
      float y[NF][4][4];
      CNN_KOKKOS_DEVICE_UNROLL(unroll)
      for (int h = 0; h < NF; ++h) {
        CNN_KOKKOS_DEVICE_UNROLL(unroll)
        for (int r = 0; r < 4; ++r) {
          CNN_KOKKOS_DEVICE_UNROLL(unroll)
          for (int j = 0; j < 4; ++j) y[h][r][j] = 0.0f;
        }
      }
      const float* vt = v + t * kVStride;
      CNN_KOKKOS_DEVICE_UNROLL(unroll)
      for (int k = 0; k < 8; ++k) {
        // Row k: m[h][l] = sum_c U[k][c][f0 + h][l] V[c][t][8 k + l], 4 floats per load; each V load feeds the NF
        // filters.
        float m[NF][8];
        CNN_KOKKOS_DEVICE_UNROLL(unroll)
        for (int h = 0; h < NF; ++h) {
          CNN_KOKKOS_DEVICE_UNROLL(unroll)
          for (int l = 0; l < 8; ++l) m[h][l] = 0.0f;
        }
        // Channels per unrolled step: the loads of U (80-100 KB a layer: from L2, L1 holds little beside the
        // shared memory) are what the stage waits on, so each step issues them all before its FMAs. One filter:
        // 4 channels' 16 loads in flight; two filters (conv1, C = 3): 2, more spills.
        constexpr int kUnrollC = NF == 1 ? 4 : 2;
        CNN_KOKKOS_DEVICE_UNROLL(unroll kUnrollC)
        for (int c = 0; c < C; ++c) {
          float x[8];
          load4(vt + c * TC * kVStride + 8 * k, x);
          load4(vt + c * TC * kVStride + 8 * k + 4, x + 4);
          CNN_KOKKOS_DEVICE_UNROLL(unroll)
          for (int h = 0; h < NF; ++h) {
            float w[8];
            const float* uh = u + ((k * C + c) * F + f0 + h) * 8;
            load4(uh, w);
            load4(uh + 4, w + 4);
            CNN_KOKKOS_DEVICE_UNROLL(unroll)
            for (int l = 0; l < 8; ++l) m[h][l] += w[l] * x[l];
          }
        }
        CNN_KOKKOS_DEVICE_UNROLL(unroll)
        for (int h = 0; h < NF; ++h) {
          float q[4];
          at_apply<1, 1, 1>(m[h], q);
          CNN_KOKKOS_DEVICE_UNROLL(unroll)
          for (int r = 0; r < 4; ++r) {
            const float a = at_coefficient(r, k);  // a constant once unrolled; the zeros drop out
            if (a != 0.0f) {
              CNN_KOKKOS_DEVICE_UNROLL(unroll)
              for (int j = 0; j < 4; ++j) y[h][r][j] += a * q[j];
            }
          }
        }
      }
      for (int h = 0; h < NF; ++h) {
        const int f = f0 + h;
        for (int a = 0; a < 2; ++a)
          for (int b = 0; b < 2; ++b)
            pool_store<1>(&y[h][0][0], a, b, bias[f], out + f * OP + (2 * ty + a) * OS + 2 * tx + b);
      }
    });
    team.team_barrier();  // V is read before the next chunk overwrites it; the planes are complete after the last
  }
}

// ---------------------------------------------------------------------------------------------------------

constexpr int kScratchFloats = kHostTiling ? kHostScratch : kDevScratch;

// Block `block`'s kL images (lanes past the last image repeat it) through the host path.
template <class Member>
KOKKOS_INLINE_FUNCTION void forward_host(const Member&, long block, const WinogradArgs& a, float* s) {
  const FlushDenormals ftz;  // as openmp:winograd (common/flush_denormals.hpp)
  (void)ftz;
  const long img0 = a.first + block * kL;
  const int real = int(a.first + a.m - img0 < kL ? a.first + a.m - img0 : kL);
  const std::uint8_t* src[kL];
  for (int l = 0; l < kL; ++l) src[l] = a.pixels + (img0 + (l < real ? l : real - 1)) * kImageBytes;
  float* in1 = s;
  float* in3 = s;
  float* in2 = s + kHostIn1;
  float* v = in2 + kHostIn2;
  float* mb = v + kHostV;
  load_images_host<Shape1::side, 0>(src, in1);
  conv_relu_pool_host<Shape1, Shape2::side, 0>(in1, a.u[0], a.b[0], in2, v, mb);
  conv_relu_pool_host<Shape2, Shape3::side, 0>(in2, a.u[1], a.b[1], in3, v, mb);  // in1 is dead
  conv_relu_pool_host<Shape3, Shape3::pooled, 0>(in3, a.u[2], a.b[2], in2, v, mb);  // pool3 into in2's space
  fc_softmax_host<kL>(in2, a.fw, a.fb, a.probs + img0 * kClasses, real);
}

// The team's image through the GPU path.
template <class Member>
KOKKOS_INLINE_FUNCTION void forward_device(const Member& team, const WinogradArgs& a, float* s) {
  const long img = a.first + team.league_rank();
  float* in2 = s;
  float* in3 = s + kDevIn2;
  float* v = in3 + kDevIn3;
  float* pooled = s;  // in2 is dead once conv3 runs
  const DeviceInput<Shape1> image{nullptr, a.pixels + img * kImageBytes};
  conv_relu_pool_device<Shape1, kPlaneStride<Shape2>>(team, image, a.u[0], a.b[0], in2, v);
  conv_relu_pool_device<Shape2, kPlaneStride<Shape3>>(team, DeviceInput<Shape2>{in2, nullptr}, a.u[1], a.b[1], in3, v);
  constexpr int dense = Shape3::pooled * Shape3::pooled;
  conv_relu_pool_device<Shape3, dense>(team, DeviceInput<Shape3>{in3, nullptr}, a.u[2], a.b[2], pooled, v);
  fc_team(team, pooled, a.fw, a.fb, s + kPartialAt, s + kLogitsAt);
  team.team_barrier();
  float* probs = a.probs + img * kClasses;
  Kokkos::single(Kokkos::PerTeam(team), [&] { softmax_into(s + kLogitsAt, probs); });
}


// Host: one team per thread (a static schedule), each taking 16-image blocks from a shared counter until none is
// left, as openmp:winograd's threads take theirs (schedule(dynamic)). Kokkos' own dynamic schedule starts with a
// rendezvous of all threads (HostThreadTeamData::pool_rendezvous, so that work stealing sees every partition): on a
// busy machine a thread that is not running holds the others there, while an OpenMP loop's first thread starts at
// once. The GPU path: one team per image.
using Team = TiledTeamPolicy<kTeamSize, 4,
                             std::conditional_t<kHostTiling, Kokkos::Schedule<Kokkos::Static>, Kokkos::Schedule<Kokkos::Dynamic>>>;
using Member = Team::member_type;

class KokkosWinogradSession final : public WinogradSession<KokkosWinogradSession> {
 public:
  // The GPU path reads U as [k][c][f][l] (rows apart), the host path as [e][c][f].
  KokkosWinogradSession(const Network& net, const RunConfig& config)
      : WinogradSession(net, config, !kHostTiling), next_("winograd_next_block") {}

  // Public: nvcc refuses device lambdas inside private member functions.
  void run(long first, long m) {
    const WinogradArgs args = this->args(first, m);
    const std::size_t bytes = kScratchFloats * sizeof(float) + 64;  // 64: alignment
    const int blocks = int((m + kLanes - 1) / kLanes);  // the host's 16-image blocks; the GPU's images
    int teams = blocks;
    if constexpr (kHostTiling) {
      const int workers = Space().concurrency();
      teams = workers < blocks ? workers : blocks;
      Kokkos::deep_copy(next_, 0);
    }
    const Kokkos::View<int, Space::memory_space> next = next_;
    Kokkos::parallel_for("winograd_forward", Team(teams, kTeamSize).set_scratch_size(0, Kokkos::PerTeam(bytes)),
                         KOKKOS_LAMBDA(const Member& team) {
      const WinogradArgs& a = args;  // captured here: nvcc refuses a first capture inside `if constexpr`
      const Kokkos::View<int, Space::memory_space>& counter = next;
      const int n = blocks;
      float* s = static_cast<float*>(team.team_scratch(0).get_shmem_aligned(kScratchFloats * sizeof(float), 64));
      if constexpr (kHostTiling) {
        for (int b = Kokkos::atomic_fetch_add(&counter(), 1); b < n; b = Kokkos::atomic_fetch_add(&counter(), 1))
          forward_host(team, b, a, s);
      } else {
        forward_device(team, a, s);
      }
    });
  }

 private:
  Kokkos::View<int, Space::memory_space> next_;  // the host path's next block
};

const VariantRegistration kWinograd = tiled_variant<KokkosWinogradSession>(5, "winograd",
    "Winograd F(4x4,5x5): transforms + element-wise GEMMs over channels, pool fused; 16 images per host team, one "
    "per GPU team", {"fp32_fma", winograd::kExecutedFlopPerImage});

}  // namespace
}  // namespace cnn::kokkos
