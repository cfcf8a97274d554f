#include "common/kernels/cpu/winograd_forward.hpp"

#include <algorithm>
#include <utility>
#if defined(__AVX512BW__)
#include <immintrin.h>  // lower_rows: vpalignr, which GCC does not derive from a shuffle pattern
#endif

#include "common/kernels/cpu/simd.hpp"
#include "common/kernels/cpu/winograd_f4x5.hpp"
#include "common/flush_denormals.hpp"

namespace cnn::winograd {
namespace {

using V16 = simd::Vec<16>::type;
using simd::load;
using simd::splat;
using simd::store;
using simd::vmax;

// load<16> for the lambdas below (clang 14 rejects the explicit template argument inside them).
inline V16 load_v16(const float* p) { return load<16>(p); }

// Images per pass through conv3: its 4 tiles per image take the whole group to fill a vector.
constexpr int kImageGroup3 = kImageGroup;
constexpr int kConv1Filters = 4;  // filters per pass of conv1's fused steps 2 + 3
constexpr int kConv1Lanes = 1;    // lane vectors per pass of conv1's fused steps 2 + 3
static_assert(kImageGroup % kImageGroup2 == 0);

// Distance between the [64][L] blocks of V (one per channel) and of M (one per filter): one vector more
// than the block, so that the GEMM's loads from all channels (and its stores to all filters) do not map to
// the same L1 sets, as 4 KB or 8 KB apart they would.
constexpr std::size_t block_stride(int L) { return std::size_t(kElems) * L + 16; }

// V[lv][c][e][16]: transformed input of lane vector lv, channel c, element e. Each (lane vector, channel)
// block is contiguous (the input transform's 64 stores fill 4 KB in order), blocks block_stride(16) apart.
template <int C>
constexpr std::size_t v_offset(int c, int e, int lv) {
  return (std::size_t(lv) * C + c) * block_stride(16) + std::size_t(e) * 16;
}

// Sizes of one Winograd layer run on G images.
template <const ConvSpec& S, int G>
struct Geometry {
  static constexpr int C = S.in_channels, F = S.filters, OUT = S.out_side(), IN = fast::kPaddedSide<S>;
  static constexpr int TS = OUT / kOut, T = TS * TS, L = G * T, NV = L / 16;
  static_assert(S.kernel == kKernel && OUT % kOut == 0 && L % 16 == 0, "5x5 kernel, whole tiles, whole vectors");
  static_assert(kOut * (TS - 1) + kIn <= IN, "every tile's window lies inside the padded plane");
  static_assert(TS == 2 || TS == 4 || TS == 8, "tile rows of 2, 4 or 8 tiles");
};

// Which tile each lane holds. Lane u * 4 + q of lane vector lv: four "quads" q of four tiles u (quad q: the
// tiles that one vector load per window row gathers), so that gathering is a 4x4 transpose inside each
// 128-bit lane (transpose_quads). The quad is a tile row (TS = 4), an image (TS = 2: u = its 2x2 tiles) or
// half a tile row (TS = 8, two tile rows per vector).
struct Tile {
  int image, ty, tx;
};
template <int TS>
constexpr Tile tile_of(int lv, int q, int u) {
  if constexpr (TS == 4) return {lv, q, u};
  if constexpr (TS == 2) return {4 * lv + q, u / 2, u % 2};
  return {lv / 4, 2 * (lv % 4) + q / 2, 4 * (q % 2) + u};
}

// Shuffle indices of transpose_quads, all inside 128-bit lanes (unpcklps, unpckhps, shufps: 4 per cycle on
// Zen 5, against 2 for the two-source cross-lane vpermt2ps that the 16-lane transpose took, and those
// compete with the FMA and add pipes). Stage 1 interleaves elements J, J + 1 of each 128-bit lane of a
// and b; stage 2 joins the pairs J2, J2 + 1 of a and of b.
template <int J>
struct QuadStage1 {
  static constexpr int idx(int lane) { return (lane % 2) * 16 + (lane / 4) * 4 + J + lane % 4 / 2; }
};
template <int J2>
struct QuadStage2 {
  static constexpr int idx(int lane) { return (lane % 4 / 2) * 16 + (lane / 4) * 4 + J2 + lane % 2; }
};
template <class P, std::size_t... I>
inline V16 shuffle2(V16 a, V16 b, std::index_sequence<I...>) {
  return __builtin_shufflevector(a, b, P::idx(int(I))...);
}
template <class P>
inline V16 shuffle2(V16 a, V16 b) {
  return shuffle2<P>(a, b, std::make_index_sequence<16>{});
}

// q[k][u * 4 + j] (four tiles u, four window columns j each) -> d[j][u * 4 + k]: 8 in-lane shuffles.
inline void transpose_quads(const V16 (&q)[4], V16* d) {
  const V16 t0 = shuffle2<QuadStage1<0>>(q[0], q[1]), t1 = shuffle2<QuadStage1<0>>(q[2], q[3]);
  const V16 t2 = shuffle2<QuadStage1<2>>(q[0], q[1]), t3 = shuffle2<QuadStage1<2>>(q[2], q[3]);
  d[0] = shuffle2<QuadStage2<0>>(t0, t1);
  d[1] = shuffle2<QuadStage2<2>>(t0, t1);
  d[2] = shuffle2<QuadStage2<0>>(t2, t3);
  d[3] = shuffle2<QuadStage2<2>>(t2, t3);
}

// Output side: quads 2H, 2H + 1 (tiles u = 0..3 of each, lane u * 4 + quad) of two vectors interleaved:
// a[tile], b[tile], a[next tile], ... In two steps: unpcklps (H = 0) / unpckhps (H = 1) pair them up
// inside 128-bit lanes, then a one-source permute (vpermd) puts quad 2H's pairs before 2H + 1's. The
// two-source permute (vpermt2ps) that does it in one costs more on Zen 5: it takes FMA-pipe slots, while
// the unpacks issue 4 per cycle beside the FMAs.
template <int H>
struct PoolPairs {
  static constexpr int idx(int n) { return (n / 4) * 4 + 2 * H + n % 4 / 2 + (n % 2) * 16; }
};
struct PoolPairOrder {
  static constexpr int idx(int n) { return (n / 2 % 4) * 4 + (n / 8) * 2 + n % 2; }
};
template <int H>
inline V16 pool_interleave(V16 a, V16 b) {
  const V16 pairs = shuffle2<PoolPairs<H>>(a, b);
  return shuffle2<PoolPairOrder>(pairs, pairs);
}

// TS = 2's pooled outputs of one image: position (2 ty + a) * 4 + 2 tx + c of its 4x4 <- lane
// (2 ty + tx) * 4 + 2a + c after finish_output's transpose.
struct PooledRowOrder {
  static constexpr int idx(int pos) { return (pos / 8 * 2 + pos % 4 / 2) * 4 + pos / 4 % 2 * 2 + pos % 2; }
};

// Quad k of lane vector lv for window row i and window columns j0 .. j0 + 3 of channel c: its four tiles'
// four columns, q[u * 4 + j].
template <const ConvSpec& S, int G>
inline V16 load_quad(const float* const (&planes)[G], int c, int lv, int k, int i, int j0) {
  using Ge = Geometry<S, G>;
  constexpr int IN = Ge::IN;
  const Tile t = tile_of<Ge::TS>(lv, k, 0);
  const float* row = planes[t.image] + (std::size_t(c) * IN + kOut * t.ty + i) * IN + kOut * t.tx + j0;
  if constexpr (Ge::TS == 2) {  // two tile rows of 8 columns each
    const simd::Vec<8>::type top = load<8>(row), bottom = load<8>(row + kOut * IN);
    return __builtin_shufflevector(top, bottom, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  } else {
    return load<16>(row);
  }
}

// One load per V vector, not one per FMA that uses it: without this GCC folds the load into every FMA as a
// memory operand, two loads per FMA with the U broadcast. Only where a 64-byte vector is one register
// (AVX-512); elsewhere GCC splits the vector and the constraint could not be met.
inline void keep_in_register([[maybe_unused]] V16& x) {
#if defined(__AVX512F__)
  asm("" : "+v"(x));
#endif
}

// Column j of a block of R rows of vectors: out[i] = x[i][j].
template <int R, int N>
inline void column_of(const V16 (&x)[R][N], int j, V16 (&out)[R]) {
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) out[i] = x[i][j];
}

// One gathered window row of every lane, row-transformed: load_row(k, j0) gives quad k's 16 floats of window
// columns j0 .. j0 + 3 (four tiles' four columns), transposed inside 128-bit lanes into d[0 .. 7], x = d B.
template <class LoadRow>
inline void gathered_row_pass(LoadRow load_row, V16 (&x)[kIn]) {
  V16 row[kIn];
#pragma GCC unroll 2
  for (int j0 = 0; j0 < kIn; j0 += 4) {
    V16 q[4];
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      q[k] = load_row(k, j0);
      keep_in_register(q[k]);
    }
    transpose_quads(q, row + j0);
  }
  bt_apply(row, x);
}

// Window rows 4 .. 7 of a tile are rows 0 .. 3 of the tile below it, which sits in another lane of the same
// vector, except below the vector's last tile row: there they are plane rows the vector's own windows do not
// start on, gathered and row-transformed apart (extra_row_passes, kExtraRows row passes into xe), and
// lower_rows builds x[4 .. 7] of one column from x[0 .. 3] and xe with lane shuffles:
// - TS = 4 (conv2, one image, lane u * 4 + q: tile row q, column u): the lane to the right, and tile row 3's
//   plane rows 16 .. 19 (xe[0], quad i: row 16 + i) in lane 3 of each 128-bit lane (one vpermt2ps);
// - TS = 8 (conv1, lane u * 4 + q: quads 0, 1 the halves of a tile row, 2, 3 of the next): two lanes to the
//   right, and the two halves of the 4 plane rows below the second tile row (xe[h], quad i: row + i), in
//   lanes 2 and 3 (in-lane shuffles only);
// - TS = 2 (conv3, quads are images, u = 2 ty + tx): eight lanes to the right, and plane rows 8 .. 11
//   (xe[h], quads rows 8 + 2h and 9 + 2h of both tile columns) in the upper eight (256-bit halves).
template <int TS>
inline constexpr int kExtraRows = TS == 4 ? 1 : 2;

template <const ConvSpec& S, int G>
inline void extra_row_passes(const float* const (&planes)[G], int c, int lv,
                             V16 (&xe)[kExtraRows<Geometry<S, G>::TS>][kIn]) {
  using Ge = Geometry<S, G>;
  constexpr int IN = Ge::IN;
  if constexpr (Ge::TS == 4) {
    const float* below = planes[tile_of<4>(lv, 0, 0).image] + (std::size_t(c) * IN + kOut * Ge::TS) * IN;
    gathered_row_pass([&](int k, int j0) { return load_v16(below + std::size_t(k) * IN + j0); }, xe[0]);
  } else if constexpr (Ge::TS == 8) {
    const float* below = planes[tile_of<8>(lv, 0, 0).image] +
                         (std::size_t(c) * IN + kOut * tile_of<8>(lv, 0, 0).ty + 2 * kOut) * IN;
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h)
      gathered_row_pass([&](int k, int j0) { return load_v16(below + std::size_t(k) * IN + 4 * kOut * h + j0); },
                        xe[h]);
  } else {
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h)
      gathered_row_pass(
          [&](int k, int j0) {
            const float* row =
                planes[tile_of<2>(lv, k, 0).image] + (std::size_t(c) * IN + 2 * kOut + 2 * h) * IN + j0;
            const simd::Vec<8>::type top = load<8>(row), bottom = load<8>(row + IN);
            return __builtin_shufflevector(top, bottom, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
          },
          xe[h]);
  }
}

template <int I>
struct LowerRows4 {  // TS = 4: x[I + 4] from x[I] (lanes a) and xe[0] (lanes b)
  static constexpr int idx(int n) { return n % 4 < 3 ? n + 1 : 16 + n - 3 + I; }
};
template <int H>
struct HalvesOfRows {  // TS = 8: rows 2H, 2H + 1 of both halves, (a[2H], a[2H + 1], b[2H], b[2H + 1]) per 128-bit lane
  static constexpr int idx(int n) { return (n / 4) * 4 + 2 * H + n % 2 + (n % 4 / 2) * 16; }
};
template <int I>
struct LowerRows8 {  // TS = 8: x[I + 4] from x[I] (lanes a) and HalvesOfRows<I / 2> (lanes b)
  static constexpr int idx(int n) { return n % 4 < 2 ? n + 2 : 16 + (n / 4) * 4 + I % 2 + 2 * (n % 4 - 2); }
};
template <int I>
struct LowerRows2 {  // TS = 2: x[I + 4] from x[I] (lanes a) and xe[I / 2] (lanes b)
  static constexpr int idx(int n) { return n < 8 ? n + 8 : 16 + n - (I % 2 == 0 ? 8 : 0); }
};

template <int TS>
inline void lower_rows(const V16 (&x)[kOut][kIn], const V16 (&xe)[kExtraRows<TS>][kIn], int l, V16 (&col)[kIn]) {
  if constexpr (TS == 4) {
#if defined(__AVX512BW__)
    // (x[I][1 .. 3], xe[I]) in each 128-bit lane: vpalignr, in-lane, instead of the vpermt2ps GCC makes of
    // LowerRows4 (8 % off this step: the two-source permutes take FMA-pipe slots).
    const __m512i e = __m512i(xe[0][l]);
    col[4] = V16(_mm512_alignr_epi8(e, __m512i(x[0][l]), 4));
    col[5] = V16(_mm512_alignr_epi8(_mm512_bsrli_epi128(e, 4), __m512i(x[1][l]), 4));
    col[6] = V16(_mm512_alignr_epi8(_mm512_bsrli_epi128(e, 8), __m512i(x[2][l]), 4));
    col[7] = V16(_mm512_alignr_epi8(_mm512_bsrli_epi128(e, 12), __m512i(x[3][l]), 4));
#else
    col[4] = shuffle2<LowerRows4<0>>(x[0][l], xe[0][l]);
    col[5] = shuffle2<LowerRows4<1>>(x[1][l], xe[0][l]);
    col[6] = shuffle2<LowerRows4<2>>(x[2][l], xe[0][l]);
    col[7] = shuffle2<LowerRows4<3>>(x[3][l], xe[0][l]);
#endif
  } else if constexpr (TS == 8) {
    const V16 e01 = shuffle2<HalvesOfRows<0>>(xe[0][l], xe[1][l]), e23 = shuffle2<HalvesOfRows<1>>(xe[0][l], xe[1][l]);
    col[4] = shuffle2<LowerRows8<0>>(x[0][l], e01);
    col[5] = shuffle2<LowerRows8<1>>(x[1][l], e01);
    col[6] = shuffle2<LowerRows8<2>>(x[2][l], e23);
    col[7] = shuffle2<LowerRows8<3>>(x[3][l], e23);
  } else {
    col[4] = shuffle2<LowerRows2<0>>(x[0][l], xe[0][l]);
    col[5] = shuffle2<LowerRows2<1>>(x[1][l], xe[0][l]);
    col[6] = shuffle2<LowerRows2<2>>(x[2][l], xe[1][l]);
    col[7] = shuffle2<LowerRows2<3>>(x[3][l], xe[1][l]);
  }
}

// Step 1. For each channel and lane vector: gather every lane's 8x8 window d from the padded planes
// (vector loads and transposes, no scalar moves), then V = BT d B = BT (d B): each window row is
// transformed (x = d B) as soon as it is gathered, then the columns (V = BT x). Only window rows 0 .. 3 are
// gathered for every lane, rows 4 .. 7 are shuffles of those and of 1-2 extra row passes (lower_rows): 5-6
// row passes instead of 8, and 40-48 live vectors instead of 64 (whose spills bound this step); the same
// operations per value, so bit-identical. Each (lane vector, channel) transform writes one contiguous block
// (v_offset). Lane vectors lv_first .. lv_last - 1 only: conv1 runs one at a time.
template <const ConvSpec& S, int G>
void input_transform(const float* const (&planes)[G], float* v, int lv_first = 0,
                     int lv_last = Geometry<S, G>::NV) {
  using Ge = Geometry<S, G>;
  constexpr int C = Ge::C;
  for (int lv = lv_first; lv < lv_last; ++lv)
    for (int c = 0; c < C; ++c) {
      V16 xe[kExtraRows<Ge::TS>][kIn];
      extra_row_passes<S, G>(planes, c, lv, xe);
      V16 x[kOut][kIn];  // x[i][l] = (d B)[i][l], window rows 0 .. 3
#pragma GCC unroll 4
      for (int i = 0; i < kOut; ++i)
        gathered_row_pass([&](int k, int j0) { return load_quad<S, G>(planes, c, lv, k, i, j0); }, x[i]);
#pragma GCC unroll 8
      for (int l = 0; l < kIn; ++l) {
        V16 col[kIn], r[kIn];
#pragma GCC unroll 4
        for (int i = 0; i < kOut; ++i) col[i] = x[i][l];
        lower_rows<Ge::TS>(x, xe, l, col);
        bt_apply(col, r);
#pragma GCC unroll 8
        for (int k = 0; k < kIn; ++k) store<16>(v + v_offset<C>(c, k * kIn + l, lv), r[k]);
      }
    }
}

// Step 2. Per element e: M[.][e] (F x L) = U[e] (F x C, stored [c][f]) times V[.][e] (C x L); M[f][e][lane]. Register block:
// LB lane vectors x FB filters (LB * FB accumulators); per channel LB vector loads and FB broadcasts feed
// LB * FB FMAs.
template <int C, int F, int L, int LB, int FB>
void elementwise(const float* u, const float* v, float* m) {
  static_assert(L % (16 * LB) == 0 && F % FB == 0, "whole blocks");
  for (int e = 0; e < kElems; ++e) {
    const float* ue = u + std::size_t(e) * C * F;
    float* me = m + std::size_t(e) * L;
    for (int l0 = 0; l0 < L; l0 += 16 * LB)
      for (int f0 = 0; f0 < F; f0 += FB) {
        V16 acc[LB][FB] = {};
        for (int c = 0; c < C; ++c) {
          V16 x[LB];
#pragma GCC unroll 4
          for (int b = 0; b < LB; ++b) x[b] = load<16>(v + v_offset<C>(c, e, l0 / 16 + b));
#pragma GCC unroll 32
          for (int f = 0; f < FB; ++f) {
            const V16 w = splat(ue[c * F + f0 + f]);
#pragma GCC unroll 4
            for (int b = 0; b < LB; ++b) acc[b][f] += w * x[b];
          }
        }
#pragma GCC unroll 32
        for (int f = 0; f < FB; ++f)
#pragma GCC unroll 4
          for (int b = 0; b < LB; ++b) store<16>(me + (f0 + f) * block_stride(L) + l0 + 16 * b, acc[b][f]);
      }
  }
}

template <const ConvSpec& S, int G>
void elementwise_layer(const WinogradConv& w, const float* v, float* m) {
  using Ge = Geometry<S, G>;
  constexpr int LB = Ge::NV % 2 == 0 ? 2 : 1;  // two lane vectors when there are, else all filters
  constexpr int FB = LB == 2 ? Ge::F / 2 : Ge::F;
  elementwise<Ge::C, Ge::F, Ge::L, LB, FB>(w.u.data(), v, m);
}

// Step 3, after the column pass: Y = p A (4x4, p = AT M of filter f and lane vector lv), then the 2x2 max
// pool, bias (max(a + b, c + b) == max(a, c) + b) and ReLU, and each lane's 2x2 pooled values go to its
// image's output planes (side OUT / 2 + 2 opad, interior at opad).
template <const ConvSpec& S, int G>
inline void finish_output(const V16 (&p)[kOut][kIn], float bias, float* const (&outs)[G], int opad, int f, int lv) {
  using Ge = Geometry<S, G>;
  constexpr int TS = Ge::TS;
  const int op = Ge::OUT / 2 + 2 * opad;
  V16 y[kOut][kOut];
#pragma GCC unroll 4
  for (int i = 0; i < kOut; ++i) at_apply(p[i], y[i]);
  const V16 b = splat(bias);
  V16 pooled[2][2];  // [row parity a][column parity c]: pooled (2 ty + a, 2 tx + c) of each lane's tile
#pragma GCC unroll 2
  for (int a = 0; a < 2; ++a)
#pragma GCC unroll 2
    for (int c = 0; c < 2; ++c)
      pooled[a][c] = vmax(vmax(vmax(y[2 * a][2 * c], y[2 * a][2 * c + 1]),
                               vmax(y[2 * a + 1][2 * c], y[2 * a + 1][2 * c + 1])) + b,
                          V16{});
  if constexpr (TS == 4 || TS == 8) {
#pragma GCC unroll 2
    for (int a = 0; a < 2; ++a)
      // Quads 2h, 2h + 1 interleaved by column parity are 16 consecutive pooled values: two rows of 8
      // (TS = 4: quads are tile rows) or one row of 16 (TS = 8: quads are half rows).
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const V16 rows = h == 0 ? pool_interleave<0>(pooled[a][0], pooled[a][1])
                                : pool_interleave<1>(pooled[a][0], pooled[a][1]);
        const Tile t = tile_of<TS>(lv, 2 * h, 0);
        float* out = outs[t.image] + (std::size_t(f) * op + 2 * t.ty + a + opad) * op + opad;
        if constexpr (TS == 8) {
          store<16>(out, rows);
        } else {
          store<8>(out, __builtin_shufflevector(rows, rows, 0, 1, 2, 3, 4, 5, 6, 7));
          store<8>(out + 2 * op, __builtin_shufflevector(rows, rows, 8, 9, 10, 11, 12, 13, 14, 15));
        }
      }
  } else {
    // TS = 2 (quads are images): an image's 16 pooled values of filter f are lane u * 4 + q of the four
    // pooled[a][c]; the in-lane transpose gathers them into one vector per image (lane u * 4 + 2a + c), a
    // permute puts them in row order, stored as 4 rows of 4 (scalar stores cost 64 per filter).
    const V16 parities[4] = {pooled[0][0], pooled[0][1], pooled[1][0], pooled[1][1]};
    V16 images[4];
    transpose_quads(parities, images);
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) {
      const V16 rows = shuffle2<PooledRowOrder>(images[q], images[q]);
      float* out = outs[tile_of<TS>(lv, q, 0).image] + (std::size_t(f) * op + opad) * op + opad;
#pragma GCC unroll 4
      for (int r = 0; r < 4; ++r)
        store<4>(out + r * op, simd::Vec<4>::type{rows[4 * r], rows[4 * r + 1], rows[4 * r + 2], rows[4 * r + 3]});
    }
  }
}

// Step 3 for FP filters at a time: element(f, lv, e, out) gives M[f + q][e] of lane vector lv in out[q];
// the column pass p = AT M, then finish_output.
template <const ConvSpec& S, int G, int FP, class Element>
void output_transform_of(Element element, const std::vector<float>& bias, float* const (&outs)[G], int opad) {
  using Ge = Geometry<S, G>;
  static_assert(Ge::F % FP == 0, "whole filter blocks");
  for (int f = 0; f < Ge::F; f += FP)
    for (int lv = 0; lv < Ge::NV; ++lv) {
      V16 p[FP][kOut][kIn];  // p[q][i][l] = (AT M)[i][l] of filter f + q
#pragma GCC unroll 8
      for (int l = 0; l < kIn; ++l) {
        V16 col[kIn][FP];
#pragma GCC unroll 8
        for (int k = 0; k < kIn; ++k) element(f, lv, k * kIn + l, col[k]);
#pragma GCC unroll 4
        for (int q = 0; q < FP; ++q) {
          V16 x[kIn], r[kOut];
          column_of(col, q, x);
          at_apply(x, r);
#pragma GCC unroll 4
          for (int i = 0; i < kOut; ++i) p[q][i][l] = r[i];
        }
      }
#pragma GCC unroll 4
      for (int q = 0; q < FP; ++q) finish_output<S, G>(p[q], bias[std::size_t(f + q)], outs, opad, f + q, lv);
    }
}

// Step 3 on M as step 2 stored it, kOutFilters filters per pass: their column passes are independent
// chains that overlap, and M (out of L1) streams from that many filter blocks at once.
constexpr int kOutFilters = 4;
template <const ConvSpec& S, int G>
void output_transform(const float* m, const std::vector<float>& bias, float* const (&outs)[G], int opad) {
  constexpr int L = Geometry<S, G>::L;
  output_transform_of<S, G, kOutFilters>(
      [m](int f, int lv, int e, V16(&out)[kOutFilters]) {
#pragma GCC unroll 4
        for (int q = 0; q < kOutFilters; ++q) out[q] = load_v16(m + (f + q) * block_stride(L) + e * L + 16 * lv);
      },
      bias, outs, opad);
}

// Steps 2 and 3 fused for one window column l of FP filters f .. f + FP - 1 x LB lane vectors lv ..:
// y[i][q][b] = (AT M)[i][l], each element's sum over channels M[k][l] = sum_c U[e][c][f + q] V[c][e] computed
// where the column pass needs it, so M is never stored. Each U broadcast feeds LB FMAs and each V load FP.
// The column pass is accumulated pair by pair of window rows (at_apply's +-a pairs) as the sums come, so
// that only 4 accumulators per (filter, lane vector) are live rather than the column's 8 sums; rows 0 and 7
// feed their one output row directly.
template <const ConvSpec& S, int G, int FP, int LB>
inline void column_sums(const float* u, const float* v, int f, int lv, int l, V16 (&y)[kOut][FP][LB]) {
  using Ge = Geometry<S, G>;
  constexpr int C = Ge::C, F = Ge::F;
  // acc[q][b] (+)= sum over channels of U x V at element (k, l)
  const auto madd = [&](int k, V16(&acc)[FP][LB], bool first) {
    const int e = k * kIn + l;
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      V16 x[LB];
#pragma GCC unroll 4
      for (int b = 0; b < LB; ++b) {
        x[b] = load_v16(v + v_offset<C>(c, e, lv + b));
        keep_in_register(x[b]);
      }
      const float* uc = u + (std::size_t(e) * C + c) * F + f;
#pragma GCC unroll 8
      for (int q = 0; q < FP; ++q) {
        const V16 w = splat(uc[q]);
#pragma GCC unroll 4
        for (int b = 0; b < LB; ++b)
          acc[q][b] = first && c == 0 ? w * x[b] : acc[q][b] + w * x[b];
      }
    }
  };
  // Pair `pair` holds the points +-a in columns 2 pair + 1 and 2 pair + 2 of AT: output row i takes a^i
  // times their sum (i even) or difference (i odd), a^i = kAT[i][2 pair + 1] (at_apply's pairing).
  constexpr auto power = [](int pair, int i) { return float(kAT[i][2 * pair + 1]); };
#pragma GCC unroll 3
  for (int pair = 0; pair < 3; ++pair) {
    V16 m0[FP][LB], m1[FP][LB];
    madd(2 * pair + 1, m0, true);
    madd(2 * pair + 2, m1, true);
#pragma GCC unroll 8
    for (int q = 0; q < FP; ++q)
#pragma GCC unroll 4
      for (int b = 0; b < LB; ++b) {
        const V16 sum = m0[q][b] + m1[q][b], diff = m0[q][b] - m1[q][b];
        if (pair == 0) {
          y[0][q][b] = sum, y[1][q][b] = diff, y[2][q][b] = sum, y[3][q][b] = diff;
        } else {
          y[0][q][b] += sum;
          y[1][q][b] += power(pair, 1) * diff;
          y[2][q][b] += power(pair, 2) * sum;
          y[3][q][b] += power(pair, 3) * diff;
        }
      }
  }
  madd(0, y[0], false);
  madd(kIn - 1, y[3], false);
}

// Steps 2 and 3 fused, for few input channels (conv1: 3): with so short a sum over channels, storing M (4x
// V, out of L1) cost more than the multiplies. A pass covers FP filters x LB lane vectors, all 8 columns.
template <const ConvSpec& S, int G, int FP, int LB>
void elementwise_output_transform(const WinogradConv& w, const float* v, float* const (&outs)[G], int opad,
                                  int lv_first = 0, int lv_last = Geometry<S, G>::NV) {
  using Ge = Geometry<S, G>;
  static_assert(Ge::F % FP == 0 && Ge::NV % LB == 0, "whole blocks");
  for (int f = 0; f < Ge::F; f += FP)
    for (int lv = lv_first; lv < lv_last; lv += LB) {
      V16 p[FP][LB][kOut][kIn];  // p[q][b][i][l] = (AT M)[i][l] of filter f + q, lane vector lv + b
      for (int l = 0; l < kIn; ++l) {
        V16 y[kOut][FP][LB];
        column_sums<S, G, FP, LB>(w.u.data(), v, f, lv, l, y);
#pragma GCC unroll 4
        for (int i = 0; i < kOut; ++i)
#pragma GCC unroll 4
          for (int q = 0; q < FP; ++q)
#pragma GCC unroll 4
            for (int b = 0; b < LB; ++b) p[q][b][i][l] = y[i][q][b];
      }
#pragma GCC unroll 4
      for (int q = 0; q < FP; ++q)
#pragma GCC unroll 4
        for (int b = 0; b < LB; ++b)
          finish_output<S, G>(p[q][b], w.bias[std::size_t(f + q)], outs, opad, f + q, lv + b);
    }
}

template <const ConvSpec& S, int G>
constexpr std::size_t v_floats() {  // v_offset's layout
  return std::size_t(Geometry<S, G>::NV) * S.in_channels * block_stride(16);
}
template <const ConvSpec& S, int G>
constexpr std::size_t m_floats() {  // M[f][e][lanes], filters block_stride apart
  return std::size_t(S.filters) * block_stride(Geometry<S, G>::L);
}

// conv1 of image g, in1 -> in2, lane vectors lv_first .. lv_last - 1 (16 tiles each).
void input1(Scratch& s, int g, int lv_first, int lv_last) {
  const float* in[1] = {s.image[std::size_t(g)].in1.data()};
  input_transform<kConv1, 1>(in, s.v.data(), lv_first, lv_last);
}
void elementwise_output1(const PackedNetwork& n, Scratch& s, int g, int lv_first, int lv_last) {
  float* out[1] = {s.image[std::size_t(g)].in2.data()};
  elementwise_output_transform<kConv1, 1, kConv1Filters, kConv1Lanes>(n.conv1, s.v.data(), out, kConv2.pad,
                                                                       lv_first, lv_last);
}
// All three steps, one lane vector at a time: its V (3 channels, 12 KB) is read by the fused step while
// still in L1, rather than all of conv1's V (48 KB) written first.
void conv1_image(const PackedNetwork& n, Scratch& s, int g) {
  for (int lv = 0; lv < Geometry<kConv1, 1>::NV; ++lv) {
    input1(s, g, lv, lv + 1);
    elementwise_output1(n, s, g, lv, lv + 1);
  }
}

// The pixels of an image into the caches ahead of load_image, which otherwise waits on each line's miss.
void prefetch_image(const std::uint8_t* pixels) {
  for (std::size_t b = 0; b < kImageBytes; b += 64) __builtin_prefetch(pixels + b);
}

// The sub-group first .. first + kImageGroup2 - 1 of conv2's steps.
void input2(Scratch& s, int first) {
  const float* in[kImageGroup2];
  for (int g = 0; g < kImageGroup2; ++g) in[g] = s.image[std::size_t(first + g)].in2.data();
  input_transform<kConv2, kImageGroup2>(in, s.v.data());
}
void output2(const PackedNetwork& n, Scratch& s, int first) {
  float* out[kImageGroup2];
  for (int g = 0; g < kImageGroup2; ++g) out[g] = s.image[std::size_t(first + g)].in3.data();
  output_transform<kConv2, kImageGroup2>(s.m.data(), n.conv2.bias, out, kConv3.pad);
}

}  // namespace

WinogradConv::WinogradConv(const ConvLayer& layer) : bias(layer.bias) {
  const ConvSpec& s = layer.spec;
  const int C = s.in_channels, F = s.filters;
  u.resize(std::size_t(kElems) * C * F);
  for (int f = 0; f < F; ++f)
    for (int c = 0; c < C; ++c) {
      const double* g = layer.weights64.data() + (std::size_t(f) * C + c) * kKernel * kKernel;  // [ky][kx]
      for (int k = 0; k < kIn; ++k)
        for (int l = 0; l < kIn; ++l) {
          u[(std::size_t(k * kIn + l) * C + c) * F + f] = float(transformed_weight(g, k, l));
        }
    }
}

PackedNetwork::PackedNetwork(const Network& net)
    : direct(net), conv1(net.conv1), conv2(net.conv2), conv3(net.conv3) {}

Scratch::Scratch()
    : v(std::max({v_floats<kConv1, 1>(), v_floats<kConv2, kImageGroup2>(), v_floats<kConv3, kImageGroup3>()})),
      m(std::max(m_floats<kConv2, kImageGroup2>(), m_floats<kConv3, kImageGroup3>())) {}

void input_transform1(const PackedNetwork&, Scratch& s) { input1(s, 0, 0, Geometry<kConv1, 1>::NV); }
void elementwise_output_transform1(const PackedNetwork& n, Scratch& s) {
  elementwise_output1(n, s, 0, 0, Geometry<kConv1, 1>::NV);
}
void conv_relu_pool1(const PackedNetwork& n, Scratch& s) {
  for (int g = 0; g < kImageGroup; ++g) conv1_image(n, s, g);
}

void input_transform2(const PackedNetwork&, Scratch& s) { input2(s, 0); }
void elementwise2(const PackedNetwork& n, Scratch& s) {
  elementwise_layer<kConv2, kImageGroup2>(n.conv2, s.v.data(), s.m.data());
}
void output_transform2(const PackedNetwork& n, Scratch& s) { output2(n, s, 0); }
void conv_relu_pool2(const PackedNetwork& n, Scratch& s) {
  for (int first = 0; first < kImageGroup; first += kImageGroup2) {
    input2(s, first);
    elementwise2(n, s);
    output2(n, s, first);
  }
}

void input_transform3(const PackedNetwork&, Scratch& s) {
  const float* in[kImageGroup3];
  for (int g = 0; g < kImageGroup3; ++g) in[g] = s.image[std::size_t(g)].in3.data();
  input_transform<kConv3, kImageGroup3>(in, s.v.data());
}
void elementwise3(const PackedNetwork& n, Scratch& s) {
  elementwise_layer<kConv3, kImageGroup3>(n.conv3, s.v.data(), s.m.data());
}
void output_transform3(const PackedNetwork& n, Scratch& s) {
  float* out[kImageGroup3];
  for (int g = 0; g < kImageGroup3; ++g) out[g] = s.image[std::size_t(g)].pooled.data();
  output_transform<kConv3, kImageGroup3>(s.m.data(), n.conv3.bias, out, 0);
}
void conv_relu_pool3(const PackedNetwork& n, Scratch& s) {
  input_transform3(n, s);
  elementwise3(n, s);
  output_transform3(n, s);
}

void forward_group(const PackedNetwork& n, const std::uint8_t* const (&pixels)[kImageGroup], Scratch& s,
                   float* const (&probs)[kImageGroup]) {
  const FlushDenormals ftz;  // common/flush_denormals.hpp says why
  for (int g = 1; g < kImageGroup; ++g) prefetch_image(pixels[g]);  // they arrive while image 0 runs conv1
  for (int g = 0; g < kImageGroup; ++g) {
    fast::load_image(pixels[g], s.image[std::size_t(g)]);
    conv1_image(n, s, g);
  }
  conv_relu_pool2(n, s);
  conv_relu_pool3(n, s);
  for (int g = 0; g < kImageGroup; ++g) fast::fc_softmax(n.direct, s.image[std::size_t(g)], probs[g]);
}

void forward_images(const PackedNetwork& net, const std::uint8_t* pixels, std::size_t n, Scratch& s,
                    float* probs) {
  float spare[kImageGroup][kClasses];
  for (std::size_t first = 0; first < n; first += kImageGroup) {
    const std::uint8_t* px[kImageGroup];
    float* out[kImageGroup];
    for (std::size_t g = 0; g < std::size_t(kImageGroup); ++g) {
      const bool real = first + g < n;
      px[g] = pixels + (real ? first + g : n - 1) * kImageBytes;
      out[g] = real ? probs + (first + g) * kClasses : spare[g];
    }
    if (first + kImageGroup < n) prefetch_image(pixels + (first + kImageGroup) * kImageBytes);  // next group's first
    forward_group(net, px, s, out);
  }
}

}  // namespace cnn::winograd
