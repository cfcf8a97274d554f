// kokkos:register_tiles' GPU tiling (kokkos_register_tiles.cpp says what and why). Included by
// kokkos_register_tiles.cpp only.
#pragma once

#include "backends/kokkos/kokkos_tiles_layout.hpp"

namespace cnn::kokkos {
namespace {  // private to kokkos_register_tiles.cpp (and its test build, tests/CMakeLists.txt)

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
  CNN_KOKKOS_DEVICE_UNROLL(unroll 1)
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

}  // namespace
}  // namespace cnn::kokkos
