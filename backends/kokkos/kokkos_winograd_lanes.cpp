// kokkos:winograd_lanes: kokkos:winograd's host algorithm as the one code path of every space, with per-space
// parameters only (issue 28's one-source question, an experiment beside kokkos:winograd). Winograd F(4x4, 5x5)
// as in kokkos_winograd.cpp (U = G g GT at session start, V = BT d B, M = sum_c U V, Y = AT M A + bias, ReLU,
// 2x2 pool), on kVL images per team that are the team's vector lanes (ThreadVectorRange): activations
// image-interleaved [c][y][x][lane] with their zero padding, V[t][e][c][lane], M[t][e][f][lane], so that every
// vector-range body is one image's scalar code and its loads and stores of [..][lane] are contiguous across
// the lanes -- 16-wide vectors where GCC vectorises the lane loop on a host (its body unrolled straight-line),
// coalesced 128-byte accesses where the lanes are a warp's threads on a GPU. Team threads (TeamThreadRange) share
// out each stage's independent items: (channel, tile) of the input transform, (element, tile) of the
// element-wise stage, (filter, tile) of the output transform, (filter group, tile) of conv1's fused stage,
// classes of the FC; a team barrier between stages. What the space chooses:
// - kVL, lanes = images per team: 16 on a host (one zmm of floats), 32 on a GPU (a warp);
// - kTS, team threads: 1 on a host, 8 on a GPU (8 warps, 256 threads);
// - kLevel, scratch level: 0 on a host; 1 (global memory) on a GPU, where a team's planes (1.3 MB at 32 lanes,
//   2 MB with V and M) are far beyond the 48 KB of shared memory;
// - kTC, tiles per step: 1 on a host (V and M of one tile stay in L1/L2), 2 on a GPU (more items per barrier);
// - kFP1, conv1 filters per item of its fused stage: 4 on a host (each V load feeds 4 FMAs), 1 on a GPU (its
//   AT M columns, 32 floats a filter, stay in registers).
// The test build (CNN_KOKKOS_DEVICE_TILING_ON_HOST) runs the GPU's values on a host space (team size 1 there).
#include "common/kernels/cpu/winograd_f4x5.hpp"
#include "backends/kokkos/kokkos_session.hpp"
#include "backends/kokkos/kokkos_winograd_session.hpp"
#include "common/flush_denormals.hpp"
#include "common/registry.hpp"

namespace cnn::kokkos {
namespace {  // private to kokkos_winograd_lanes.cpp (and its test build, tests/CMakeLists.txt)

constexpr int kVL = kHostTiling ? 16 : 32;
constexpr int kTS = kHostSpace ? 1 : 8;
constexpr int kLevel = kHostSpace ? 0 : 1;
constexpr int kTC = kHostTiling ? 1 : 2;
constexpr int kFP1 = kHostTiling ? 4 : 1;
constexpr int kE = winograd::kElems;

// Loops whose bodies must become straight-line code: on a host so that GCC vectorises the enclosing lane loop
// (a loop left inside it keeps it scalar), on a GPU so that the lane's arrays live in registers.
#define CNN_LANES_UNROLL CNN_KOKKOS_HOST_UNROLL(GCC unroll 64) CNN_KOKKOS_DEVICE_UNROLL(unroll)

// The vector-range bodies inlined into Kokkos' lane loop, which GCC vectorises only then (its inliner leaves the
// large unrolled bodies out of line, a call per lane).
#if defined(__GNUC__) && !defined(__clang__) && !defined(__NVCC__) && !defined(__CUDA_ARCH__)
#define CNN_LANES_INLINE __attribute__((always_inline))
#else
#define CNN_LANES_INLINE
#endif

// Floats between elements e of V[t][e][c][lane]: one lane vector more than the C channels, so that the 64
// stores of a (channel, tile) do not fall into a few L1 sets (1 KB apart at C = 16, 16 lanes).
template <class Sh>
constexpr int kVe = (Sh::channels + 1) * kVL;
template <class Sh>
constexpr int kVTile = kE * kVe<Sh>;  // floats of one tile's V
template <class Sh>
constexpr int kMTile = kE * Sh::filters * kVL;  // of one tile's M

// Zeroes the border (width pad) of C interleaved padded planes of side P.
template <int C, int P, int pad, class Member>
CNN_KOKKOS_HOST_BLOCK KOKKOS_INLINE_FUNCTION void zero_border(const Member& team, float* planes) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, C * P), [&](int r) {
    float* row = planes + r * P * kVL;
    const int y = r % P;
    if (y < pad || y >= P - pad) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, P * kVL), [=](int k) CNN_LANES_INLINE { row[k] = 0.0f; });
    } else {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, pad * kVL), [=](int k) CNN_LANES_INLINE {
        row[k] = 0.0f;
        row[(P - pad) * kVL + k] = 0.0f;
      });
    }
  });
}

// in1[c][y][x][lane] := the lane's image, normalised, interior of the padded planes; a team thread per row.
template <int P, int pad, class Member>
CNN_KOKKOS_HOST_BLOCK KOKKOS_INLINE_FUNCTION
void load_images(const Member& team, const std::uint8_t* __restrict__ pixels, long img0, int real,
                 float* __restrict__ in1) {
  constexpr int S = kImageSide;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kImageChannels * S), [&](int r) {
    const int c = r / S, y = r % S;
    float* dst = in1 + ((c * P + y + pad) * P + pad) * kVL;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kVL), [=](int ln) CNN_LANES_INLINE {
      const std::uint8_t* row = pixels + (img0 + (ln < real ? ln : real - 1)) * kImageBytes + (c * S + y) * S;
      CNN_LANES_UNROLL
      for (int x = 0; x < S; ++x) dst[x * kVL + ln] = normalise_pixel_fp32(row[x]);
    });
  });
}

// Column j of BT d (OUT = 8) or of AT M (OUT = 4) for the lane, its 8 samples x[k] = src[k * stride], into
// r[.][j].
template <int OUT>
KOKKOS_INLINE_FUNCTION void column_transform(const float* __restrict__ src, int stride, float (&r)[OUT][8], int j) {
  float x[8], o[OUT];
  CNN_LANES_UNROLL
  for (int k = 0; k < 8; ++k) x[k] = src[k * stride];
  if constexpr (OUT == 8) winograd::bt_apply(x, o);
  else winograd::at_apply(x, o);
  CNN_LANES_UNROLL
  for (int k = 0; k < OUT; ++k) r[k][j] = o[k];
}

// V of tiles t0 .. t0 + n - 1, every channel: a team thread per (channel, tile), the lane's 8x8 window in
// registers, columns (BT d) then rows (x B).
template <class Sh, class Member>
CNN_KOKKOS_HOST_BLOCK KOKKOS_INLINE_FUNCTION
void input_transform(const Member& team, const float* __restrict__ in, float* __restrict__ v, int t0, int n) {
  constexpr int C = Sh::channels, IN = Sh::padded, TS = Sh::side / 4;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, C * n), [&](int i) {
    const int c = i % C, t = i / C, ty = (t0 + t) / TS, tx = (t0 + t) % TS;
    const float* src = in + ((c * IN + 4 * ty) * IN + 4 * tx) * kVL;
    float* dst = v + t * kVTile<Sh> + c * kVL;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kVL), [=](int ln) CNN_LANES_INLINE {
      float x[8][8];
      CNN_LANES_UNROLL
      for (int j = 0; j < 8; ++j) column_transform(src + j * kVL + ln, IN * kVL, x, j);
      CNN_LANES_UNROLL
      for (int k = 0; k < 8; ++k) {
        float r[8];
        winograd::bt_apply(x[k], r);
        CNN_LANES_UNROLL
        for (int l = 0; l < 8; ++l) dst[(k * 8 + l) * kVe<Sh> + ln] = r[l];
      }
    });
  });
}

// M[t][e][f][lane] = sum_c U[e][c][f] V[t][e][c][lane]: a team thread per (element, tile), all F filters'
// accumulators in the lane's registers, so that each V load feeds F FMAs (U: one broadcast each).
template <class Sh, class Member>
CNN_KOKKOS_HOST_BLOCK KOKKOS_INLINE_FUNCTION
void elementwise(const Member& team, const float* __restrict__ v, const float* __restrict__ u,
                 float* __restrict__ m, int n) {
  constexpr int C = Sh::channels, F = Sh::filters;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kE * n), [&](int i) {
    const int e = i % kE, t = i / kE;
    const float* vt = v + t * kVTile<Sh> + e * kVe<Sh>;
    const float* ue = u + e * C * F;
    float* mt = m + t * kMTile<Sh> + e * F * kVL;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kVL), [=](int ln) CNN_LANES_INLINE {
      float acc[F];
      CNN_LANES_UNROLL
      for (int f = 0; f < F; ++f) acc[f] = 0.0f;
      CNN_LANES_UNROLL
      for (int c = 0; c < C; ++c) {
        const float x = vt[c * kVL + ln];
        CNN_LANES_UNROLL
        for (int f = 0; f < F; ++f) acc[f] += ue[c * F + f] * x;
      }
      CNN_LANES_UNROLL
      for (int f = 0; f < F; ++f) mt[f * kVL + ln] = acc[f];
    });
  });
}

// Pooled output (a, b) of the lane's 4x4 output tile y: max of its 2x2, + bias, ReLU.
KOKKOS_INLINE_FUNCTION float pooled(const float (&y)[4][4], int a, int b, float bias) {
  const float m = max4(y[2 * a][2 * b], y[2 * a][2 * b + 1], y[2 * a + 1][2 * b], y[2 * a + 1][2 * b + 1]);
  return max2(m + bias, 0.0f);
}

// Y = p A of the lane's p = AT M (4 x 8), pooled into the planes `out` (side OP, interior at opad), filter f.
template <int OP, int opad>
KOKKOS_INLINE_FUNCTION
void finish_output(const float (&p)[4][8], float bias, float* __restrict__ out, int f, int ty, int tx, int ln) {
  float y[4][4];
  CNN_LANES_UNROLL
  for (int i = 0; i < 4; ++i) winograd::at_apply(p[i], y[i]);
  CNN_LANES_UNROLL
  for (int a = 0; a < 2; ++a) {
    CNN_LANES_UNROLL
    for (int b = 0; b < 2; ++b)
      out[((f * OP + opad + 2 * ty + a) * OP + opad + 2 * tx + b) * kVL + ln] = pooled(y, a, b, bias);
  }
}

// Output transform of tiles t0 .. t0 + n - 1 from the stored M: a team thread per (filter, tile).
template <class Sh, int OP, int opad, class Member>
CNN_KOKKOS_HOST_BLOCK KOKKOS_INLINE_FUNCTION
void output_transform(const Member& team, const float* __restrict__ m, const float* __restrict__ bias,
                      float* __restrict__ out, int t0, int n) {
  constexpr int F = Sh::filters, TS = Sh::side / 4;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, F * n), [&](int i) {
    const int f = i % F, t = i / F, ty = (t0 + t) / TS, tx = (t0 + t) % TS;
    const float* mt = m + t * kMTile<Sh> + f * kVL;
    const float b = bias[f];
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kVL), [=](int ln) CNN_LANES_INLINE {
      float p[4][8];
      CNN_LANES_UNROLL
      for (int l = 0; l < 8; ++l) column_transform(mt + l * F * kVL + ln, 8 * F * kVL, p, l);
      finish_output<OP, opad>(p, b, out, f, ty, tx, ln);
    });
  });
}

// acc[q] (+)= sum_c U[e][c][f0 + q] V[e][c][lane] of the lane (First: acc := the sum).
template <class Sh, int FP, bool First>
KOKKOS_INLINE_FUNCTION
void madd(const float* __restrict__ vt, const float* __restrict__ u, int e, int f0, int ln, float (&acc)[FP]) {
  constexpr int C = Sh::channels, F = Sh::filters;
  CNN_LANES_UNROLL
  for (int c = 0; c < C; ++c) {
    const float x = vt[e * kVe<Sh> + c * kVL + ln];
    CNN_LANES_UNROLL
    for (int q = 0; q < FP; ++q) {
      const float w = u[(e * C + c) * F + f0 + q];
      acc[q] = First && c == 0 ? w * x : acc[q] + w * x;
    }
  }
}

// conv1 (3 channels): the element-wise sums computed where the column pass p = AT M needs them, folded in pair
// by pair of M's rows (the points +-a of at_apply), M never stored; a team thread per (FP filters, tile).
template <class Sh, int OP, int opad, class Member>
CNN_KOKKOS_HOST_BLOCK KOKKOS_INLINE_FUNCTION
void elementwise_output(const Member& team, const float* __restrict__ v, const float* __restrict__ u,
                        const float* __restrict__ bias, float* __restrict__ out, int t0, int n) {
  constexpr int F = Sh::filters, TS = Sh::side / 4, FP = kFP1;
  static_assert(F % FP == 0);
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, F / FP * n), [&](int i) {
    const int f0 = i % (F / FP) * FP, t = i / (F / FP), ty = (t0 + t) / TS, tx = (t0 + t) % TS;
    const float* vt = v + t * kVTile<Sh>;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kVL), [=](int ln) CNN_LANES_INLINE {
      float p[FP][4][8];
      CNN_LANES_UNROLL
      for (int l = 0; l < 8; ++l) {
        float y[4][FP];
        CNN_LANES_UNROLL
        for (int pair = 0; pair < 3; ++pair) {
          float m0[FP], m1[FP];
          madd<Sh, FP, true>(vt, u, (2 * pair + 1) * 8 + l, f0, ln, m0);
          madd<Sh, FP, true>(vt, u, (2 * pair + 2) * 8 + l, f0, ln, m1);
          // The pair's points +-a (a = 1, 2, 1/2: winograd::kAT's columns 2 pair + 1, 2 pair + 2).
          const float a = pair == 0 ? 1.0f : pair == 1 ? 2.0f : 0.5f, power[4] = {1.0f, a, a * a, a * a * a};
          CNN_LANES_UNROLL
          for (int q = 0; q < FP; ++q) {
            const float sum = m0[q] + m1[q], diff = m0[q] - m1[q];
            CNN_LANES_UNROLL
            for (int i = 0; i < 4; ++i) {  // a^i times the sum (i even) or the difference (i odd)
              const float t = power[i] * (i % 2 == 0 ? sum : diff);
              y[i][q] = pair == 0 ? t : y[i][q] + t;
            }
          }
        }
        madd<Sh, FP, false>(vt, u, l, f0, ln, y[0]);
        madd<Sh, FP, false>(vt, u, 7 * 8 + l, f0, ln, y[3]);
        CNN_LANES_UNROLL
        for (int i2 = 0; i2 < 4; ++i2) {
          CNN_LANES_UNROLL
          for (int q = 0; q < FP; ++q) p[q][i2][l] = y[i2][q];
        }
      }
      CNN_LANES_UNROLL
      for (int q = 0; q < FP; ++q) finish_output<OP, opad>(p[q], bias[f0 + q], out, f0 + q, ty, tx, ln);
    });
  });
}

// One conv layer + ReLU + pool on the team's images, kTC tiles per step, a barrier after each stage.
template <class Sh, int OP, int opad, class Member>
KOKKOS_INLINE_FUNCTION
void conv_relu_pool(const Member& team, const float* in, const float* u, const float* bias, float* out, float* v,
                    float* m) {
  constexpr int T = (Sh::side / 4) * (Sh::side / 4);
  static_assert(Sh::side % 4 == 0 && Sh::kernel == 5 && Sh::pad == 2);
  for (int t0 = 0; t0 < T; t0 += kTC) {
    const int n = T - t0 < kTC ? T - t0 : kTC;
    input_transform<Sh>(team, in, v, t0, n);
    team.team_barrier();
    if constexpr (Sh::channels < 8) {  // conv1: too few channels to pay for storing M
      elementwise_output<Sh, OP, opad>(team, v, u, bias, out, t0, n);
    } else {
      elementwise<Sh>(team, v, u, m, n);
      team.team_barrier();
      output_transform<Sh, OP, opad>(team, m, bias, out, t0, n);
    }
    team.team_barrier();  // V and M are rewritten by the next step; the planes are complete after the last
  }
}

// logits[o][lane] = FC(pooled[k][lane]) (k in pool3's flatten order), a team thread per class; then the
// softmax of each real lane.
template <class Member>
CNN_KOKKOS_HOST_BLOCK KOKKOS_INLINE_FUNCTION
void fc_softmax(const Member& team, const float* __restrict__ pooled, const float* __restrict__ fw,
                const float* __restrict__ fb, float* __restrict__ logits, float* __restrict__ probs, int real) {
  constexpr int kStep = 32;  // inputs per unrolled step
  static_assert(kFcInputs % kStep == 0);
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kClasses), [&](int o) {
    const float b = fb[o];
    // The bias first, in a pass of its own: a select between it and the running sum kept GCC from vectorising.
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kVL),
                         [=](int ln) CNN_LANES_INLINE { logits[o * kVL + ln] = b; });
    for (int k0 = 0; k0 < kFcInputs; k0 += kStep) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kVL), [=](int ln) CNN_LANES_INLINE {
        float acc = logits[o * kVL + ln];
        CNN_LANES_UNROLL
        for (int k = 0; k < kStep; ++k) acc += fw[o * kFcInputs + k0 + k] * pooled[(k0 + k) * kVL + ln];
        logits[o * kVL + ln] = acc;
      });
    }
  });
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 1), [&](int) {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kVL), [=](int ln) CNN_LANES_INLINE {
      if (ln < real) {
        float z[kClasses];
        for (int o = 0; o < kClasses; ++o) z[o] = logits[o * kVL + ln];
        softmax_into(z, probs + ln * kClasses);
      }
    });
  });
}

// Team scratch, floats: [in1 (in3 at its start once conv1 is done)][in2 (pool3 and the logits at its start
// after conv2)][V][M].
constexpr int kIn1 = Shape1::channels * Shape1::padded * Shape1::padded * kVL;
constexpr int kIn2 = Shape2::channels * Shape2::padded * Shape2::padded * kVL;
constexpr int kIn3 = Shape3::channels * Shape3::padded * Shape3::padded * kVL;
constexpr int kV = kTC * kVTile<Shape3>;  // the most channels
constexpr int kM = kTC * kMTile<Shape3>;  // the most filters
constexpr int kScratchFloats = kIn1 + kIn2 + kV + kM;
static_assert(kIn3 <= kIn1 && (kFcInputs + kClasses) * kVL <= kIn2 && Shape2::channels <= Shape3::channels &&
              Shape1::channels <= Shape3::channels && Shape2::filters <= Shape3::filters &&
              Shape1::filters <= Shape3::filters);

// The team's kVL images (lanes past the last image repeat it).
template <class Member>
KOKKOS_INLINE_FUNCTION void forward_team(const Member& team, const WinogradArgs& a, float* s) {
  const FlushDenormals ftz;  // as openmp:winograd (common/flush_denormals.hpp); nothing on a GPU
  (void)ftz;
  const long img0 = a.first + long(team.league_rank()) * kVL;
  const int real = int(a.first + a.m - img0 < kVL ? a.first + a.m - img0 : kVL);
  float* in1 = s;
  float* in3 = s;
  float* in2 = s + kIn1;
  float* v = in2 + kIn2;
  float* m = v + kV;
  zero_border<Shape1::channels, Shape1::padded, Shape1::pad>(team, in1);
  zero_border<Shape2::channels, Shape2::padded, Shape2::pad>(team, in2);
  load_images<Shape1::padded, Shape1::pad>(team, a.pixels, img0, real, in1);
  team.team_barrier();
  conv_relu_pool<Shape1, Shape2::padded, Shape2::pad>(team, in1, a.u[0], a.b[0], in2, v, m);
  zero_border<Shape3::channels, Shape3::padded, Shape3::pad>(team, in3);  // in1 is dead
  team.team_barrier();
  conv_relu_pool<Shape2, Shape3::padded, Shape3::pad>(team, in2, a.u[1], a.b[1], in3, v, m);
  conv_relu_pool<Shape3, Shape3::pooled, 0>(team, in3, a.u[2], a.b[2], in2, v, m);  // pool3 into in2's space
  fc_softmax(team, in2, a.fw, a.fb, in2 + kFcInputs * kVL, a.probs + img0 * kClasses, real);
}

using Team = TiledTeamPolicy<kTS * kVL, 1, Kokkos::Schedule<Kokkos::Dynamic>>;
using Member = Team::member_type;

class KokkosWinogradLanesSession final : public WinogradSession<KokkosWinogradLanesSession> {
 public:
  KokkosWinogradLanesSession(const Network& net, const RunConfig& config) : WinogradSession(net, config, false) {}

  // Public: nvcc refuses device lambdas inside private member functions.
  void run(long first, long m) {
    const WinogradArgs args = this->args(first, m);
    const std::size_t bytes = kScratchFloats * sizeof(float) + 64;  // 64: alignment
    const int teams = int((m + kVL - 1) / kVL);
    Kokkos::parallel_for("winograd_lanes_forward",
                         Team(teams, kTS, kVL).set_scratch_size(kLevel, Kokkos::PerTeam(bytes)),
                         KOKKOS_LAMBDA(const Member& team) {
      // int(kLevel): a temporary; team_scratch takes a reference, which device code cannot bind to the constant
      float* s =
          static_cast<float*>(team.team_scratch(int(kLevel)).get_shmem_aligned(kScratchFloats * sizeof(float), 64));
      forward_team(team, args, s);
    });
  }
};

const VariantRegistration kWinogradLanes = tiled_variant<KokkosWinogradLanesSession>(7, "winograd_lanes",
    "Winograd F(4x4,5x5), one code path: images in the vector lanes (16 per host team, 32 per GPU team of 8 "
    "warps), activations image-interleaved in team scratch", {"fp32_fma", winograd::kExecutedFlopPerImage});

}  // namespace
}  // namespace cnn::kokkos
