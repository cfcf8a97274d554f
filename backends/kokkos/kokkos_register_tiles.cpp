// kokkos:register_tiles: kokkos:team's structure (a team per image, every activation in team scratch, conv+ReLU+pool
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
//     of common/kernels/cpu/fast_forward.cpp, there written with vector extensions; all-padding taps are skipped;
//   GPU: 256 threads per image; a thread computes the 2x2 conv outputs under one pooled output for a group
//     of filters with the 6x6 input patch of a channel in registers (like cuda:fused); the weights are
//     staged in scratch (shared memory) a few channels at a time -- 45 KB of scratch in all, under CUDA's
//     48 KB per block -- and the threads of a warp share the filter group, so each weight load is a
//     broadcast (128-bit loads of 4 filters' weights of one tap; conv3's 2 filters: one 64-bit load).
#include "backends/kokkos/kokkos_tiles_device.hpp"
#include "backends/kokkos/kokkos_tiles_host.hpp"
#include "backends/kokkos/kokkos_tiles_layout.hpp"
#include "common/flush_denormals.hpp"
#include "common/registry.hpp"

namespace cnn::kokkos {
namespace {

// conv + bias + ReLU + 2x2 max pool of one layer, over the team, into planes of side OP (interior at opad).
// ebuf: conv3's kx-expanded input on a host (kExpandedFloats), unused on a GPU.
template <class Sh, int OP, int opad, class Member>
KOKKOS_INLINE_FUNCTION void conv_relu_pool(const Member& team, const float* in, const float* w, const float* b,
                                           float* out, float* wbuf, float* ebuf) {
  if constexpr (kHostTiling && Sh::layer == 2) {  // conv3: the whole 8x8 output per block
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
        CNN_KOKKOS_HOST_UNROLL(GCC unroll 1)
        for (int l = 0; l < 16; ++l) part[l] += fw[o * kFcInputs + k + l] * pooled[k + l];
      }
      float acc = fb[o];
      for (int l = 0; l < 16; ++l) acc += part[l];
      logits[o] = acc;
    });
  } else {
    fc_team(team, pooled, fw, fb, partial, logits);
  }
}

using Team = TiledTeamPolicy<kTeamSize, 3>;
using Member = Team::member_type;

class KokkosRegisterTilesSession final : public KokkosSession {
 public:
  KokkosRegisterTilesSession(const Network& net, const RunConfig& config)
      : KokkosSession(net, config, kAllImages),  // one launch: teams are independent
        w1_(pack<Shape1>(net.conv(0).weights)),
        w2_(pack<Shape2>(net.conv(1).weights)),
        w3_(pack<Shape3>(net.conv(2).weights)) {}

  double forward(LayerTimes&) override {
    return forward_in_chunks([this](long first, long m) { run(first, int(m)); });
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
    Kokkos::parallel_for("register_tiles_forward", Team(m, kTeamSize).set_scratch_size(0, Kokkos::PerTeam(bytes)),
                         KOKKOS_LAMBDA(const Member& team) {
      const long img = first + team.league_rank();
      const FlushDenormals ftz;  // host spaces, as openmp:image_parallel (common/flush_denormals.hpp); no-op on a GPU
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
      Kokkos::single(Kokkos::PerTeam(team), [&] { softmax_into(logits, probs + img * kClasses); });
    });
  }

 private:
  Floats w1_, w2_, w3_;
};

const VariantRegistration kRegisterTiles = tiled_variant<KokkosRegisterTilesSession>(3, "register_tiles",
    "team per image, padded scratch, repacked weights, register tiles chosen per space");

}  // namespace
}  // namespace cnn::kokkos
