// kokkos:register_tiles' layout: the tiling switch (host or GPU, from the space), the scratch layout of a team,
// the weight packing, and the image load and border zeroing both tilings share. Included by
// kokkos_register_tiles.cpp only.
#pragma once

#include <algorithm>
#include <type_traits>
#include <vector>

#include "backends/kokkos/kokkos_session.hpp"

namespace cnn::kokkos {
namespace {  // private to kokkos_register_tiles.cpp (and its test build, tests/CMakeLists.txt)

constexpr int kTeamSize = kHostSpace ? 1 : 256;

// Tiling of one conv layer. Filters are split into groups of NF = 4 NQ + R (a GPU thread's filters; all of
// them on a host, where the packed layout is [c][ky][kx][f]).
template <class Sh, bool kHost>
struct Tiling;
template <class Sh>
struct Tiling<Sh, true> {
  static constexpr int NF = Sh::filters, NQ = NF / 4, R = 0;  // packing only; blocks: kHostFB
  static_assert(NF % 4 == 0);
};
// A GPU thread's filters per conv layer: conv1 2 groups of 8 (512 items: two per thread), conv2 4 of 5 (256),
// conv3 10 of 2 (160).
constexpr int kDeviceGroupFilters[3] = {8, 5, 2};
template <class Sh>
struct Tiling<Sh, false> {
  static constexpr int NF = kDeviceGroupFilters[Sh::layer];
  static constexpr int NQ = NF / 4, R = NF % 4;
  static_assert(Sh::filters % NF == 0);
};
template <class Sh>
using TilingOf = Tiling<Sh, kHostTiling>;
template <class Sh>
constexpr int kGroups = Sh::filters / TilingOf<Sh>::NF;
template <class Sh>
constexpr int kChannelFloats = kTaps * Sh::filters;  // packed weights of one channel

// Constants, not constexpr functions: device code may call no host function (kokkos_session.hpp).
template <class Sh>
constexpr int kPaddedSide = Sh::padded;
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
  return to_view(packed, "register_tiles_w");
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
        for (int x = 0; x < side; ++x) dst[pad + x] = normalise_pixel_fp32(src[x]);
      }
    });
  } else {  // float by float: neighbouring threads, neighbouring addresses
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, C * P * P), [&](int i) {
      const int c = i / (P * P), y = (i / P) % P - pad, x = i % P - pad;
      const bool inside = y >= 0 && y < side && x >= 0 && x < side;
      in1[i] = inside ? normalise_pixel_fp32(image[(c * side + y) * side + x]) : 0.0f;
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

}  // namespace
}  // namespace cnn::kokkos
