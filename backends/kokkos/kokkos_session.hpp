// What the Kokkos variants share: Kokkos start-up, the weights and images as Views in the default
// execution space's memory, the probabilities, and the conv tap loop the variants call.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/backend.hpp"
#include "common/fp32_math.hpp"
#include "common/registry.hpp"
#include "common/timer.hpp"

namespace cnn::kokkos {

using Space = Kokkos::DefaultExecutionSpace;
using Floats = Kokkos::View<float*, Space::memory_space>;
using Bytes = Kokkos::View<std::uint8_t*, Space::memory_space>;

// Kokkos::initialize on first use (with the first run's thread count), Kokkos::finalize at exit.
void ensure_initialised(int threads);
std::string space_name();
Availability availability();  // the space, and whether it can run here (a Cuda space needs a GPU)
// Whether the default space runs on the host (Serial, OpenMP) rather than a GPU.
inline constexpr bool kHostSpace = Kokkos::SpaceAccessibility<Kokkos::HostSpace, Space::memory_space>::accessible;

// Loop pragmas for one compiler only, e.g. CNN_KOKKOS_DEVICE_UNROLL(unroll 2), CNN_KOKKOS_HOST_UNROLL(GCC unroll 4):
// device loops whose indices address local arrays are unrolled so that the arrays live in registers; host
// loops are unrolled, or kept rolled for GCC's vectoriser, where that pays.
#if defined(__CUDA_ARCH__)
#define CNN_KOKKOS_DEVICE_UNROLL(n) _Pragma(#n)
#else
#define CNN_KOKKOS_DEVICE_UNROLL(n)
#endif
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDA_ARCH__) && !defined(__NVCC__)
#define CNN_KOKKOS_HOST_UNROLL(n) _Pragma(#n)
#else
#define CNN_KOKKOS_HOST_UNROLL(n)
#endif

// Host blocks of the tiled variants stay functions of their own. On Kokkos' Serial space the team loop is
// inlined into the whole forward pass, and there GCC 12 inlined the blocks too and left their register tiles
// scalar (README.md); on OpenMP it keeps them out of line by itself.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__NVCC__) && !defined(__CUDA_ARCH__)
#define CNN_KOKKOS_HOST_BLOCK __attribute__((noinline))
#else
#define CNN_KOKKOS_HOST_BLOCK
#endif

// Whether a tiled variant compiles its host tiling (the space's kind), except in the test builds that define
// CNN_KOKKOS_DEVICE_TILING_ON_HOST (tests/CMakeLists.txt): they run the GPU tiling on a host space with team
// size 1, so that CI validates its indexing without a GPU. `static`: the two builds of a file differ in it
// and are linked into one test program.
#ifdef CNN_KOKKOS_DEVICE_TILING_ON_HOST
static constexpr bool kHostTiling = false;
#else
static constexpr bool kHostTiling = kHostSpace;
#endif

// Conv layer L's sizes (common/network_spec.hpp) as template arguments, so device code sees plain
// compile-time constants.
template <int L, int C, int S, int F, int K, int P>
struct ConvShape {
  static constexpr int layer = L, channels = C, side = S, filters = F, kernel = K, pad = P;
  static constexpr int pooled = S / 2, padded = S + 2 * P;
};
template <int L>
using ShapeOf = ConvShape<L, kConvs[L].in_channels, kConvs[L].in_side, kConvs[L].filters, kConvs[L].kernel,
                          kConvs[L].pad>;
using Shape1 = ShapeOf<0>;
using Shape2 = ShapeOf<1>;
using Shape3 = ShapeOf<2>;
static_assert(Shape1::padded == kConv1.padded_side() && Shape3::padded == kConv3.padded_side());
static_assert(Shape1::side == 2 * Shape2::side && Shape2::side == 2 * Shape3::side);
static_assert(Shape3::filters * Shape3::pooled * Shape3::pooled == kFc.inputs());

// Device code may call no host constexpr function (nvcc without --expt-relaxed-constexpr miscompiles it
// silently), so the spec's values that device code needs are plain constants here.
inline constexpr int kFcInputs = kFc.inputs();


// One conv output (before ReLU): canonical weights w[((f*C + c)*K + y)*K + x], input planar c, y, x.
template <class Sh>
KOKKOS_INLINE_FUNCTION float conv_at(const float* in, const float* w, const float* b, int f, int y, int x) {
  float acc = b[f];
  for (int c = 0; c < Sh::channels; ++c)
    for (int ky = 0; ky < Sh::kernel; ++ky) {
      const int iy = y + ky - Sh::pad;
      if (iy < 0 || iy >= Sh::side) continue;
      for (int kx = 0; kx < Sh::kernel; ++kx) {
        const int ix = x + kx - Sh::pad;
        if (ix < 0 || ix >= Sh::side) continue;
        acc += w[((f * Sh::channels + c) * Sh::kernel + ky) * Sh::kernel + kx] * in[(c * Sh::side + iy) * Sh::side + ix];
      }
    }
  return acc;
}

// 4 floats at a 16-byte aligned address, for the Kokkos GPU paths (kokkos:winograd, kokkos:winograd_layers).
struct alignas(16) Quad {
  float w[4];
};
// One 128-bit load (store) on the device; plain float loads (stores) on a host.
KOKKOS_INLINE_FUNCTION void load4(const float* p, float* r) {
#if defined(__CUDA_ARCH__)
  const Quad q = *reinterpret_cast<const Quad*>(p);
  r[0] = q.w[0];
  r[1] = q.w[1];
  r[2] = q.w[2];
  r[3] = q.w[3];
#else
  for (int i = 0; i < 4; ++i) r[i] = p[i];
#endif
}
KOKKOS_INLINE_FUNCTION void store4(float* p, const float* r) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<Quad*>(p) = Quad{{r[0], r[1], r[2], r[3]}};
#else
  for (int i = 0; i < 4; ++i) p[i] = r[i];
#endif
}

KOKKOS_INLINE_FUNCTION float max2(float a, float b) { return a > b ? a : b; }
KOKKOS_INLINE_FUNCTION float max4(float a, float b, float c, float d) { return max2(max2(a, b), max2(c, d)); }

// Softmax of the 10 logits (overwritten) into probs (one thread).
KOKKOS_INLINE_FUNCTION void softmax_into(float* logits, float* probs) {
  softmax_fp32(logits);
  for (int o = 0; o < kClasses; ++o) probs[o] = logits[o];
}

// FC output o of one image: weights w[o*320 + flat], flat = pool3's channel-major order.
KOKKOS_INLINE_FUNCTION float fc_at(const float* in, const float* w, const float* b, int o) {
  float acc = b[o];
  for (int i = 0; i < kFcInputs; ++i) acc += w[o * kFcInputs + i] * in[i];
  return acc;
}

// The registration of a tiled variant S: as kokkos:<name>, or, in the test builds that run the GPU tiling on
// a host space (CNN_KOKKOS_DEVICE_TILING_ON_HOST), as the test-only kokkos:<name>_gpu_path. In an unnamed
// namespace: the two builds of a file define it differently and are linked into one test program.
namespace {
template <class S>
VariantRegistration tiled_variant(int order, const std::string& name, const std::string& what,
                                  Arithmetic arithmetic = {}) {
#ifndef CNN_KOKKOS_DEVICE_TILING_ON_HOST
  return {"kokkos", order, open_session<S>, {name, what, false, arithmetic}};
#else
  return {"kokkos", order + 1, open_session<S>,
          {name + "_gpu_path", name + " with the GPU tiling on a host space (tests only)", false, arithmetic}};
#endif
}
}  // namespace

// The team policy of the tiled variants: the given schedule of the teams on a host, launch bounds (threads
// per team, blocks per SM) on a GPU.
template <int Threads, int MinBlocks, class HostSchedule = Kokkos::Schedule<Kokkos::Static>>
using TiledTeamPolicy = std::conditional_t<kHostSpace, Kokkos::TeamPolicy<Space, HostSchedule>,
                                           Kokkos::TeamPolicy<Space, Kokkos::LaunchBounds<Threads, MinBlocks>>>;

// logits = FC(pooled) by a team on a GPU: 32 partial sums per class over the team's threads (neighbouring
// threads read neighbouring weights), then their sums; `partial` holds kClasses * 32 floats.
template <class Member>
KOKKOS_INLINE_FUNCTION void fc_team(const Member& team, const float* pooled, const float* fw, const float* fb,
                                    float* partial, float* logits) {
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

class KokkosSession : public Session {
 public:
  // preferred_batch: the images per launch when --batch is not given (resolve_batch).
  KokkosSession(const Network& net, const RunConfig& config, std::size_t preferred_batch);
  double upload(const std::uint8_t* pixels, std::size_t n) override;
  double download(float* probs) override;
  bool on_device() const override;
  int threads() const override { return Space().concurrency(); }
  std::size_t batch() const override { return batch_; }
  std::vector<std::pair<std::string, std::string>> device_info() const override;
  std::size_t device_memory_bytes() const override;

 protected:
  // A forward() that launches run(first image, count) for every chunk of batch() images and fences once.
  template <class Run>
  double forward_in_chunks(Run&& run) {
    const StopWatch t0;
    for (std::size_t first = 0; first < n_; first += batch_) run(long(first), long(std::min(batch_, n_ - first)));
    Kokkos::fence();
    return t0.ms();
  }
  std::size_t batch_;
  std::size_t n_ = 0;
  Bytes pixels_;
  Floats probs_;
  Floats w_[3], b_[3], fc_w_, fc_b_;
};

Floats to_view(const std::vector<float>& host, const char* label);

}  // namespace cnn::kokkos
