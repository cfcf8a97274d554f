// kokkos:tiled: kokkos:team's structure (a team per image, every activation in team scratch, conv+ReLU+pool
// fused, one launch) with the kernels of the hand-written backends, still one Kokkos source for every space:
// - activations are stored with their zero padding, so the 5x5 loops have no bounds checks; conv3's input
//   reuses conv1's space (dead by then);
// - weights are repacked once, at session start, into the layout the inner loops want: filter-fastest
//   [c][ky][kx][f] on a host space, per channel [ky][kx][group][filters of the group] on a GPU;
// - the work tiling is picked at compile time from the space (kHostTiling):
//   host: team size 1; blocks of two conv rows x 16 x (8 or 10) filters are accumulated in local arrays
//     with constant trip counts, which GCC keeps in vector registers and vectorises (one zmm per row and
//     filter, each weight loaded once for two FMAs), and pooled straight from them; conv3 (8x8) keeps its
//     whole output (two rows per zmm) x 5 filters, read from a kx-expanded copy of its input -- the blocks
//     of cpu_kernels/fast_forward.cpp, there written with vector extensions; all-padding taps are skipped;
//   GPU: 256 threads per image; a thread computes the 2x2 conv outputs under one pooled output for a group
//     of filters with the 6x6 input patch of a channel in registers (like cuda:fused); the weights are
//     staged in scratch (shared memory) a few channels at a time -- 45 KB of scratch in all, under CUDA's
//     48 KB per block -- and the threads of a warp share the filter group, so each weight load is a
//     broadcast (128-bit loads of 4 filters' weights of one tap; conv3's 2 filters: one 64-bit load).
#include <algorithm>
#include <type_traits>
#include <vector>

#include "backends/kokkos/kokkos_session.hpp"
#include "common/registry.hpp"
#include "common/flush_denormals.hpp"

#if defined(__CUDA_ARCH__)
#define CNN_TILED_UNROLL(n) _Pragma(#n)
#else
#define CNN_TILED_UNROLL(n)
#endif
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDA_ARCH__) && !defined(__NVCC__)
#define CNN_TILED_GCC_UNROLL(n) _Pragma(#n)
#else
#define CNN_TILED_GCC_UNROLL(n)
#endif
// The host blocks stay functions of their own. On Kokkos' Serial space the team loop is inlined into the
// whole forward pass, and there GCC 12 inlined the blocks too and left their tiles scalar (1358 ms at 1200
// images instead of 47 ms); on OpenMP it keeps them out of line by itself.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__NVCC__)
#define CNN_TILED_HOST_BLOCK __attribute__((noinline))
#else
#define CNN_TILED_HOST_BLOCK
#endif

namespace cnn::kokkos {
namespace {

constexpr bool kHostSpace = Kokkos::SpaceAccessibility<Kokkos::HostSpace, Space::memory_space>::accessible;
// CNN_KOKKOS_TILED_DEVICE_TILING (testing only) runs the GPU tiling on a host space, with team size 1.
#ifdef CNN_KOKKOS_TILED_DEVICE_TILING
constexpr bool kHostTiling = false;
#else
constexpr bool kHostTiling = kHostSpace;
#endif
constexpr int kTeamSize = kHostSpace ? 1 : 256;
constexpr int kTaps = 25;

// Tiling of one conv layer. Filters are split into groups of NF = 4 NQ + R (a GPU thread's filters; all of
// them on a host, where the packed layout is [c][ky][kx][f]).
template <class Sh, bool kHost>
struct Tiling;
template <class Sh>
struct Tiling<Sh, true> {
  static constexpr int NF = Sh::filters, NQ = NF / 4, R = 0;  // packing only; blocks: kHostFB
  static_assert(NF % 4 == 0);
};
template <class Sh>
struct Tiling<Sh, false> {
  // conv1: 2 groups of 8 (512 items: two per thread); conv2: 4 of 5 (256); conv3: 10 of 2 (160).
  static constexpr int NF = Sh::filters == 16 ? 8 : Sh::side == 16 ? 5 : 2;
  static constexpr int NQ = NF / 4, R = NF % 4;
};
template <class Sh>
using TilingOf = Tiling<Sh, kHostTiling>;
template <class Sh>
constexpr int kGroups = Sh::filters / TilingOf<Sh>::NF;
template <class Sh>
constexpr int kChannelFloats = kTaps * Sh::filters;  // packed weights of one channel

// Constants, not constexpr functions: device code may call no host function (kokkos_session.hpp).
template <class Sh>
constexpr int kPaddedSide = Sh::side + 2 * Sh::pad;
template <class Sh>
constexpr int kPaddedFloats = Sh::channels * kPaddedSide<Sh> * kPaddedSide<Sh>;
// conv3's kx-expanded input on a host (conv_pool_8x8_host).
template <class Sh>
constexpr int kExpandedFloats = Sh::channels * Sh::kernel * kPaddedSide<Sh> * Sh::side;

// Scratch of one team, in floats: [wbuf (GPU only)][in1: padded image][in2: padded pool1][e3 (host only)].
// in3 (padded pool2) lies at the end of in1's space (in1 is dead by then), so that on a GPU the weight buffer
// grows into the rest of it for conv2 and conv3. After conv2, in2's space holds pool3 (the FC's input), the
// FC's partial sums (GPU) and the logits.
constexpr int kIn1 = kPaddedFloats<Shape1>, kIn2 = kPaddedFloats<Shape2>, kIn3 = kPaddedFloats<Shape3>;
constexpr int kWBuf1 = kHostTiling ? 0 : kChannelFloats<Shape1> * Shape1::channels;  // conv1's, all of them
constexpr int kWBuf = kWBuf1 + kIn1 - kIn3;                                            // conv2's and conv3's
constexpr int kE3 = kHostTiling ? kExpandedFloats<Shape3> : 0;
constexpr int kScratchFloats = kWBuf1 + kIn1 + kIn2 + kE3;
constexpr int kPartialAt = kFcInputs, kLogitsAt = kPartialAt + kClasses * 32;
static_assert(kIn3 <= kIn1, "in3 inside in1's space");
static_assert(kLogitsAt + kClasses <= kIn2, "pool3, FC partial sums (32 per class) and logits inside in2's space");
static_assert(kWBuf1 % 4 == 0 && kIn1 % 4 == 0 && (kIn1 - kIn3) % 4 == 0, "16-byte aligned buffers");
// Channels per weight chunk on a GPU (conv1: all 3; conv2 and conv3: 4).
template <class Sh>
constexpr int kChunk =
    kHostTiling ? Sh::channels
                : std::min(Sh::channels, (std::is_same_v<Sh, Shape1> ? kWBuf1 : kWBuf) / kChannelFloats<Sh>);
static_assert(kChunk<Shape1> == Shape1::channels && kChunk<Shape2> >= 1 && kChunk<Shape3> >= 1);
static_assert(kChannelFloats<Shape1> % 4 == 0 && kChannelFloats<Shape2> % 4 == 0 && kChannelFloats<Shape3> % 4 == 0,
              "every channel's weights start 16-byte aligned");

// Weights [f][c][ky][kx] -> per channel c: [tap][group][4 NQ] (filters j < 4 NQ of each group, as quads), then
// [tap][group][R] (the R others). Host: [c][ky][kx][f].
template <class Sh>
Floats pack(const std::vector<float>& canonical) {
  using T = TilingOf<Sh>;
  constexpr int C = Sh::channels, G = kGroups<Sh>;
  std::vector<float> packed(std::size_t(C) * kChannelFloats<Sh>, 0.0f);
  for (int f = 0; f < Sh::filters; ++f)
    for (int c = 0; c < C; ++c)
      for (int tap = 0; tap < kTaps; ++tap) {
        const int g = f / T::NF, j = f % T::NF;
        const int at = j < 4 * T::NQ ? (tap * G + g) * 4 * T::NQ + j
                                     : kTaps * G * 4 * T::NQ + (tap * G + g) * T::R + j - 4 * T::NQ;
        packed[std::size_t(c) * kChannelFloats<Sh> + at] = canonical[(std::size_t(f) * C + c) * kTaps + tap];
      }
  return to_view(packed, "tiled_w");
}

// in1 := the image, normalised, in planes padded by `pad` (side P).
template <int P, int pad, class Member>
KOKKOS_INLINE_FUNCTION void load_image(const Member& team, const std::uint8_t* image, float* in1) {
  constexpr int side = kImageSide, C = kImageChannels;
  if constexpr (kHostTiling) {  // row by row: vectorisable loops without index arithmetic
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, C * P), [&](int r) {
      float* dst = in1 + r * P;
      const int c = r / P, y = r % P - pad;
      if (y < 0 || y >= side) {
        for (int x = 0; x < P; ++x) dst[x] = 0.0f;
      } else {
        const std::uint8_t* src = image + (c * side + y) * side;
        for (int x = 0; x < pad; ++x) dst[x] = dst[P - 1 - x] = 0.0f;
        for (int x = 0; x < side; ++x) dst[pad + x] = to_input(src[x]);
      }
    });
  } else {  // float by float: neighbouring threads, neighbouring addresses
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, C * P * P), [&](int i) {
      const int c = i / (P * P), y = (i / P) % P - pad, x = i % P - pad;
      in1[i] = (y >= 0 && y < side && x >= 0 && x < side) ? to_input(image[(c * side + y) * side + x]) : 0.0f;
    });
  }
}

// Zeroes the border (width `pad`) of C padded planes of side P; the interior is left alone.
template <int C, int P, int pad, class Member>
KOKKOS_INLINE_FUNCTION void zero_border(const Member& team, float* planes) {
  if constexpr (kHostTiling) {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, C * P), [&](int r) {
      float* row = planes + r * P;
      const int y = r % P;
      if (y < pad || y >= P - pad) {
        for (int x = 0; x < P; ++x) row[x] = 0.0f;
      } else {
        for (int x = 0; x < pad; ++x) row[x] = row[P - 1 - x] = 0.0f;
      }
    });
  } else {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, C * P * P), [&](int i) {
      const int y = (i / P) % P, x = i % P;
      if (y < pad || y >= P - pad || x < pad || x >= P - pad) planes[i] = 0.0f;
    });
  }
}

// ---- host tiling ----------------------------------------------------------------------------------------

// Filters per register block: two conv rows x 16 x FB accumulators (conv1: 8 of 16, conv2: 10 of 20; 16-20
// vector registers); conv3: its whole 8x8 output (4 vectors of two rows) x 5 filters.
template <class Sh>
constexpr int kHostFB = Sh::filters == 16 ? 8 : Sh::side == 16 ? 10 : 5;

// Pooled row py of filters f0 .. f0 + FB - 1, columns x0 .. x0 + 15: conv rows 2py and 2py + 1, then bias,
// max, ReLU into `out` (planes of side OP, interior offset `opad`). Each weight is loaded once for two
// 16-wide FMAs (the rows), so the loop is FMA-bound, not load-bound; taps whose two input rows are both
// padding are skipped.
template <class Sh, int OP, int opad>
CNN_TILED_HOST_BLOCK KOKKOS_INLINE_FUNCTION void conv_pool_row_host(const float* in, const float* w, const float* b,
                                                                    float* out, int py, int x0, int f0) {
  constexpr int C = Sh::channels, F = Sh::filters, K = Sh::kernel, IN = kPaddedSide<Sh>, FB = kHostFB<Sh>, W = 16;
  static_assert(Sh::side % W == 0 && F % FB == 0);
  const int y = 2 * py;
  const int ky_lo = y >= Sh::pad - 1 ? 0 : Sh::pad - 1 - y, ky_hi = IN - Sh::pad - y < K ? IN - Sh::pad - y : K;
  float top[FB][W], bottom[FB][W];
  CNN_TILED_GCC_UNROLL(GCC unroll 32)
  for (int f = 0; f < FB; ++f) {
    CNN_TILED_GCC_UNROLL(GCC unroll 1)  // see below
    for (int x = 0; x < W; ++x) top[f][x] = bottom[f][x] = 0.0f;
  }
  for (int c = 0; c < C; ++c)
    for (int ky = ky_lo; ky < ky_hi; ++ky) {
      const float* rt = in + (c * IN + y + ky) * IN + x0;
      const float* rb = rt + IN;
      const float* wrow = w + (c * K + ky) * K * F + f0;
      CNN_TILED_GCC_UNROLL(GCC unroll 5)
      for (int kx = 0; kx < K; ++kx) {
        CNN_TILED_GCC_UNROLL(GCC unroll 32)
        for (int f = 0; f < FB; ++f) {
          const float wt = wrow[kx * F + f];
          // Not unrolled, so that the vectoriser, not the early complete unroller, sees it: 16-wide FMAs.
          CNN_TILED_GCC_UNROLL(GCC unroll 1)
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
  CNN_TILED_GCC_UNROLL(GCC unroll 32)
  for (int f = 0; f < FB; ++f) {
    const float wt = wp[f];
    CNN_TILED_GCC_UNROLL(GCC unroll 4)
    for (int j = J0; j < J1; ++j) {
      CNN_TILED_GCC_UNROLL(GCC unroll 1)
      for (int x = 0; x < 16; ++x) acc[j][f][x] += wt * rows[16 * j + x];
    }
  }
}

// conv3 + bias + ReLU + pool for filters f0 .. f0 + FB - 1 from the expanded input: the whole 8x8 output of
// each filter in four vectors, then the 4x4 pooled planes (side OP, interior at opad).
template <class Sh, int OP, int opad>
CNN_TILED_HOST_BLOCK KOKKOS_INLINE_FUNCTION void conv_pool_8x8_host(const float* e, const float* w, const float* b,
                                                                    float* out, int f0) {
  constexpr int C = Sh::channels, F = Sh::filters, K = Sh::kernel, IN = kPaddedSide<Sh>, S = Sh::side;
  constexpr int FB = kHostFB<Sh>;
  static_assert(S == 8 && K == 5 && Sh::pad == 2 && F % FB == 0);
  float acc[4][FB][16];
  for (int j = 0; j < 4; ++j)
    CNN_TILED_GCC_UNROLL(GCC unroll 32)
    for (int f = 0; f < FB; ++f) {
      CNN_TILED_GCC_UNROLL(GCC unroll 1)
      for (int x = 0; x < 16; ++x) acc[j][f][x] = 0.0f;
    }
  for (int c = 0; c < C; ++c) {
    const float* wc = w + c * K * K * F + f0;
    CNN_TILED_GCC_UNROLL(GCC unroll 5)
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

// ---- GPU tiling -----------------------------------------------------------------------------------------

// Two or four floats loaded as one (a 64- or 128-bit shared-memory load on a GPU).
struct alignas(8) Pair {
  float v[2];
};
struct alignas(16) Quad {
  float v[4];
};

// The NF = 4 NQ + R weights of one tap of a group: NQ quads from q (16-byte aligned), R from r (R = 2: 8-byte
// aligned, one pair).
template <int NQ, int R>
KOKKOS_INLINE_FUNCTION void load_tap(const float* q, const float* r, float (&wt)[4 * NQ + R]) {
  for (int k = 0; k < NQ; ++k) {
    const Quad v = reinterpret_cast<const Quad*>(q)[k];
    for (int l = 0; l < 4; ++l) wt[4 * k + l] = v.v[l];
  }
  if constexpr (R == 2) {
    const Pair v = *reinterpret_cast<const Pair*>(r);
    wt[4 * NQ] = v.v[0];
    wt[4 * NQ + 1] = v.v[1];
  } else {
    for (int l = 0; l < R; ++l) wt[4 * NQ + l] = r[l];
  }
}

// Adds channels c0 .. c0 + n - 1 to the 2x2 conv outputs of item (group g, pooled py, px): the 6x6 input
// patch of a channel in registers, weights from `wbuf` (channels c0.. in pack's layout, in scratch; a warp
// shares g, so every weight load is a broadcast).
template <class Sh>
KOKKOS_INLINE_FUNCTION void conv_2x2_device(const float* in, const float* wbuf, int c0, int n, int g, int py, int px,
                                            float (&acc)[Tiling<Sh, false>::NF][4]) {
  using T = Tiling<Sh, false>;
  constexpr int P = kPaddedSide<Sh>, NF = T::NF, NQ = T::NQ, R = T::R, G = Sh::filters / NF;
  CNN_TILED_UNROLL(unroll 1)
  for (int cl = 0; cl < n; ++cl) {
    float patch[6][6];
    const float* src = in + ((c0 + cl) * P + 2 * py) * P + 2 * px;
    for (int r = 0; r < 6; ++r)
      for (int s = 0; s < 6; ++s) patch[r][s] = src[r * P + s];
    const float* wq = wbuf + cl * kChannelFloats<Sh> + g * 4 * NQ;
    const float* wr = wbuf + cl * kChannelFloats<Sh> + kTaps * G * 4 * NQ + g * R;
    for (int ky = 0; ky < 5; ++ky)
      for (int kx = 0; kx < 5; ++kx) {
        float wt[NF];
        load_tap<NQ, R>(wq + (ky * 5 + kx) * G * 4 * NQ, wr + (ky * 5 + kx) * G * R, wt);
        for (int f = 0; f < NF; ++f) {
          acc[f][0] += wt[f] * patch[ky][kx];
          acc[f][1] += wt[f] * patch[ky][kx + 1];
          acc[f][2] += wt[f] * patch[ky + 1][kx];
          acc[f][3] += wt[f] * patch[ky + 1][kx + 1];
        }
      }
  }
}

// The layer over the team: item i = (group i / p^2, pooled output i % p^2), one per thread at a time (a warp
// shares the group). The weights pass through `wbuf` in chunks of kChunk channels, each staged by the whole
// team between barriers, so every thread takes part in every round, items or not.
template <class Sh, int OP, int opad, class Member>
KOKKOS_INLINE_FUNCTION void conv_relu_pool_device(const Member& team, const float* in, const float* w,
                                                  const float* b, float* out, float* wbuf) {
  using T = Tiling<Sh, false>;
  constexpr int p = Sh::pooled, NF = T::NF, G = Sh::filters / NF, items = p * p * G, CH = kChunk<Sh>;
  constexpr int chunks = (Sh::channels + CH - 1) / CH;
  const int threads = team.team_size();
  for (int first = 0; first < items; first += threads) {
    const int i = first + team.team_rank();
    const int g = i / (p * p), q = i % (p * p), py = q / p, px = q % p;
    float acc[NF][4];
    for (int f = 0; f < NF; ++f)
      for (int k = 0; k < 4; ++k) acc[f][k] = 0.0f;
    for (int chunk = 0; chunk < chunks; ++chunk) {
      const int c0 = chunk * CH, n = Sh::channels - c0 < CH ? Sh::channels - c0 : CH;
      if (chunks > 1 || first > 0) team.team_barrier();  // everyone is done with the previous chunk
      if (chunks > 1 || first == 0) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n * kChannelFloats<Sh>),
                             [&](int k) { wbuf[k] = w[c0 * kChannelFloats<Sh> + k]; });
        team.team_barrier();
      }
      if (i < items) conv_2x2_device<Sh>(in, wbuf, c0, n, g, py, px, acc);
    }
    if (i < items)
      for (int f = 0; f < NF; ++f) {
        const int fo = g * NF + f;
        out[(fo * OP + py + opad) * OP + px + opad] =
            max2(max4(acc[f][0], acc[f][1], acc[f][2], acc[f][3]) + b[fo], 0.0f);
      }
  }
}

// ---- both -----------------------------------------------------------------------------------------------

// conv + bias + ReLU + 2x2 max pool of one layer, over the team, into planes of side OP (interior at opad).
// ebuf: conv3's kx-expanded input on a host (kExpandedFloats), unused on a GPU.
template <class Sh, int OP, int opad, class Member>
KOKKOS_INLINE_FUNCTION void conv_relu_pool(const Member& team, const float* in, const float* w, const float* b,
                                           float* out, float* wbuf, float* ebuf) {
  if constexpr (kHostTiling && Sh::side == 8) {
    expand_kx<Sh>(team, in, ebuf);
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, Sh::filters / kHostFB<Sh>),
                         [&](int g) { conv_pool_8x8_host<Sh, OP, opad>(ebuf, w, b, out, g * kHostFB<Sh>); });
  } else if constexpr (kHostTiling) {
    constexpr int XB = Sh::side / 16, FG = Sh::filters / kHostFB<Sh>;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, Sh::pooled * XB * FG), [&](int i) {
      const int py = i / (XB * FG), x0 = (i / FG) % XB * 16, f0 = i % FG * kHostFB<Sh>;
      conv_pool_row_host<Sh, OP, opad>(in, w, b, out, py, x0, f0);
    });
  } else {
    conv_relu_pool_device<Sh, OP, opad>(team, in, w, b, out, wbuf);
  }
}

// logits = FC(pooled). Host: 16 running sums per class (one vector FMA per 16 inputs); GPU: 32 partial sums
// per class over the team (neighbouring threads read neighbouring weights), then their sums.
template <class Member>
KOKKOS_INLINE_FUNCTION void fc(const Member& team, const float* pooled, const float* fw, const float* fb,
                               float* partial, float* logits) {
  if constexpr (kHostTiling) {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kClasses), [&](int o) {
      float part[16] = {};
      for (int k = 0; k < kFcInputs; k += 16) {
        CNN_TILED_GCC_UNROLL(GCC unroll 1)
        for (int l = 0; l < 16; ++l) part[l] += fw[o * kFcInputs + k + l] * pooled[k + l];
      }
      float acc = fb[o];
      for (int l = 0; l < 16; ++l) acc += part[l];
      logits[o] = acc;
    });
  } else {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kClasses * 32), [&](int i) {
      const int o = i / 32, lane = i % 32;
      float acc = 0.0f;
      for (int k = lane; k < kFcInputs; k += 32) acc += fw[o * kFcInputs + k] * pooled[k];
      partial[i] = acc;
    });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kClasses), [&](int o) {
      float acc = fb[o];
      for (int k = 0; k < 32; ++k) acc += partial[o * 32 + k];
      logits[o] = acc;
    });
  }
}

using Team = std::conditional_t<kHostSpace, Kokkos::TeamPolicy<Space>,
                                Kokkos::TeamPolicy<Space, Kokkos::LaunchBounds<kTeamSize, 3>>>;
using Member = Team::member_type;

class TiledSession final : public KokkosSession {
 public:
  TiledSession(const Network& net, const RunConfig& config)
      : KokkosSession(net, config),
        w1_(pack<Shape1>(net.conv(0).weights)),
        w2_(pack<Shape2>(net.conv(1).weights)),
        w3_(pack<Shape3>(net.conv(2).weights)) {}

  double forward(LayerTimes&) override {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t first = 0; first < n_; first += batch()) run(long(first), int(std::min(batch(), n_ - first)));
    Kokkos::fence();
    return ms_since(t0);
  }

  std::size_t batch() const override {
    if (requested_batch_ > 0) return requested_batch_;
    return n_ > 0 ? n_ : 1;  // one launch: teams are independent
  }

  // Public: nvcc refuses device lambdas inside private member functions.
  void run(long first, int m) {
    constexpr int P1 = kPaddedSide<Shape1>, P2 = kPaddedSide<Shape2>, P3 = kPaddedSide<Shape3>;
    constexpr int pad1 = Shape1::pad, pad2 = Shape2::pad, pad3 = Shape3::pad;
    const std::uint8_t* px = pixels_.data();
    float* probs = probs_.data();
    const float *w1 = w1_.data(), *w2 = w2_.data(), *w3 = w3_.data();
    const float *b1 = b_[0].data(), *b2 = b_[1].data(), *b3 = b_[2].data();
    const float *fw = fc_w_.data(), *fb = fc_b_.data();
    const std::size_t bytes = kScratchFloats * sizeof(float) + 16;  // 16: alignment
    Kokkos::parallel_for("tiled_forward", Team(m, kTeamSize).set_scratch_size(0, Kokkos::PerTeam(bytes)),
                         KOKKOS_LAMBDA(const Member& team) {
      const long img = first + team.league_rank();
      const FlushDenormals ftz;  // host spaces, as openmp:batch (common/flush_denormals.hpp); no-op on a GPU
      (void)ftz;
      float* wbuf = static_cast<float*>(team.team_scratch(0).get_shmem_aligned(kScratchFloats * sizeof(float), 16));
      float* in1 = wbuf + kWBuf1;
      float* in3 = in1 + (kIn1 - kIn3);
      float* in2 = in1 + kIn1;
      float* pooled = in2;  // in2 is dead once conv3 runs
      float* logits = in2 + kLogitsAt;
      float* e3 = in2 + kIn2;
      load_image<P1, pad1>(team, px + img * kImageBytes, in1);
      zero_border<Shape2::channels, P2, pad2>(team, in2);
      team.team_barrier();
      conv_relu_pool<Shape1, P2, pad2>(team, in1, w1, b1, in2, wbuf, e3);
      team.team_barrier();
      zero_border<Shape3::channels, P3, pad3>(team, in3);  // in1 is dead; disjoint from conv2's writes and wbuf
      conv_relu_pool<Shape2, P3, pad3>(team, in2, w2, b2, in3, wbuf, e3);
      team.team_barrier();
      conv_relu_pool<Shape3, Shape3::pooled, 0>(team, in3, w3, b3, pooled, wbuf, e3);
      team.team_barrier();
      fc(team, pooled, fw, fb, in2 + kPartialAt, logits);
      team.team_barrier();
      Kokkos::single(Kokkos::PerTeam(team), [&] { softmax10(logits, probs + img * kClasses); });
    });
  }

 private:
  Floats w1_, w2_, w3_;
};

const VariantRegistration kTiled{
    "kokkos", 3,
    {"tiled", "team per image, padded scratch, repacked weights, register tiles chosen per space", false},
    open_session<TiledSession>};

}  // namespace
}  // namespace cnn::kokkos
