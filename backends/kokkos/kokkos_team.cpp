// kokkos:team: hierarchical parallelism, the Kokkos analogue of a fused kernel. One team per image; the
// image and every activation live in the team's scratch memory (shared memory on a GPU), and each
// conv+ReLU+pool is one pass: a thread computes the four conv outputs of a pooling window and keeps the
// largest. Only the pixels are read from and the ten probabilities written to global memory.
#include "backends/kokkos/kokkos_session.hpp"
#include "common/registry.hpp"

namespace cnn::kokkos {
namespace {

using Team = Kokkos::TeamPolicy<Space>;
using Member = Team::member_type;
using Scratch = Kokkos::View<float*, Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;

constexpr int kPooled1 = Shape1::filters * Shape1::pooled * Shape1::pooled;
constexpr int kPooled2 = Shape2::filters * Shape2::pooled * Shape2::pooled;
constexpr int kPooled3 = kFcInputs;
constexpr int kScratchFloats = kImageBytes + kPooled1 + kPooled2 + kPooled3 + kClasses;

// max(0, conv) over each 2x2 window, one window per thread: ReLU commutes with max.
template <class Sh>
KOKKOS_INLINE_FUNCTION void conv_relu_pool(const Member& team, const float* in, const float* w, const float* b,
                                           float* out) {
  constexpr int p = Sh::pooled;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, Sh::filters * p * p), [&](int i) {
    const int f = i / (p * p), y = 2 * ((i / p) % p), x = 2 * (i % p);
    const float m = max4(conv_at<Sh>(in, w, b, f, y, x), conv_at<Sh>(in, w, b, f, y, x + 1),
                         conv_at<Sh>(in, w, b, f, y + 1, x), conv_at<Sh>(in, w, b, f, y + 1, x + 1));
    out[i] = max2(m, 0.0f);
  });
  team.team_barrier();
}

class KokkosTeamSession final : public KokkosSession {
 public:
  // One launch: teams are independent.
  KokkosTeamSession(const Network& net, const RunConfig& config) : KokkosSession(net, config, kAllImages) {}

  double forward(LayerTimes&) override {
    const StopWatch t0;
    const std::uint8_t* px = pixels_.data();
    float* probs = probs_.data();
    const float *w1 = w_[0].data(), *w2 = w_[1].data(), *w3 = w_[2].data();
    const float *b1 = b_[0].data(), *b2 = b_[1].data(), *b3 = b_[2].data();
    const float *fw = fc_w_.data(), *fb = fc_b_.data();
    const std::size_t bytes = Scratch::shmem_size(kScratchFloats);
    for (std::size_t first = 0; first < n_; first += batch()) {
      const int m = int(std::min(batch(), n_ - first));
      Kokkos::parallel_for("team_forward", policy(m).set_scratch_size(0, Kokkos::PerTeam(bytes)),
                           KOKKOS_LAMBDA(const Member& team) {
        const long img = long(first) + team.league_rank();
        Scratch all(team.team_scratch(0), kScratchFloats);
        float* in = all.data();
        float* p1 = in + kImageBytes;
        float* p2 = p1 + kPooled1;
        float* p3 = p2 + kPooled2;
        float* logits = p3 + kPooled3;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kImageBytes), [&](int i) {
          in[i] = normalise_pixel_fp32(px[img * kImageBytes + i]);
        });
        team.team_barrier();
        conv_relu_pool<Shape1>(team, in, w1, b1, p1);
        conv_relu_pool<Shape2>(team, p1, w2, b2, p2);
        conv_relu_pool<Shape3>(team, p2, w3, b3, p3);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kClasses),
                             [&](int o) { logits[o] = fc_at(p3, fw, fb, o); });
        team.team_barrier();
        Kokkos::single(Kokkos::PerTeam(team), [&] { softmax_into(logits, probs + img * kClasses); });
      });
    }
    Kokkos::fence();
    return t0.ms();
  }

 private:
  // A GPU gets a block of threads per image; a host space runs a team per thread (team size 1).
  static Team policy(int images) {
    if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, Space::memory_space>::accessible) return Team(images, 1);
    return Team(images, 128);
  }
};

const VariantRegistration kTeam{"kokkos", 2, open_session<KokkosTeamSession>,
    {"team", "TeamPolicy, a team per image, activations in team scratch, conv+ReLU+pool fused", false}};

}  // namespace
}  // namespace cnn::kokkos
