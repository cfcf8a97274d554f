// kokkos:winograd_layers: issue 28's one-source Kokkos Winograd for the GPU. cuda:winograd's algorithm
// (backends/cuda/cuda_winograd.cu: F(4x4, 5x5), one kernel per conv layer, the pooled activations between
// layers in device memory) written once in Kokkos, with no path for one space: per layer a TeamPolicy whose
// teams take rounds of images in turn (as many teams as the space runs at once), and per round:
//   input planes (padded, zero borders) <- the round's images;  V[tile][position][channel] = BT d B;
//   per chunk of tiles: M[filter][tile][position] = sum over channels of V U (the element-wise stage),
//   then Y = AT M A, 2x2 max pool, bias, ReLU, out;  conv3 also the FC and softmax.
// The element-wise stage is split into roles (position, filter group, tile subset). A role keeps its U
// (C x filters-per-group floats) in the local array `held_u` and reloads it only when the role it runs
// changes: on a GPU every role is one thread of the team (team size = roles), so U is loaded once per team and
// lives in registers, the hand-written kernel's main saving over kokkos:winograd (which reads U from L2 for
// every tile); a host team (one thread) runs every role in turn and reloads each role's U, which L1 holds.
// What differs per space is only what Kokkos lets a space choose: the team size (GPU: one thread per role;
// host: 1), launch bounds, and the teams per unit of concurrency (a GPU SM holds 2048 threads; a host thread
// one team). The scratch of a team (up to 222 KB: a round's V and a chunk's M) needs Kokkos' opt-in above 48 KB
// (build-kokkos.sh patches Kokkos 3.4.1 as Kokkos does since kokkos/kokkos#9012). Bank-conflict paddings:
// cuda:winograd's, in wg::GpuRoundLayout (winograd_f4x5.hpp), whose comments say why.
#include "backends/kokkos/kokkos_session.hpp"
#include "backends/kokkos/kokkos_winograd_session.hpp"
#include "common/kernels/cpu/winograd_f4x5.hpp"
#include "common/registry.hpp"

namespace cnn::kokkos {
namespace {  // private to kokkos_winograd_layers.cpp

namespace wg = cnn::winograd;
constexpr int kE = wg::kElems;          // Winograd positions of a tile
constexpr int kGpuSmThreads = 2048;     // threads a GPU SM holds: Space().concurrency() / this = SMs
constexpr int kFcParts = 32;            // partial sums per (image, class) of conv3's FC
static_assert(kFcInputs % kFcParts == 0);

// One layer's work split and scratch (in floats): the round's planes, V and M laid out by wg::GpuRoundLayout,
// then the bias. kRoleThreads: the element-wise roles (position, filter group, tile subset) = the team size on
// a GPU.
template <class Sh, int kRoleThreads, int kImagesPerRound, int kFiltersPerRole, int kTilesPerChunk>
struct Plan : wg::GpuRoundLayout<Sh::channels, Sh::side, Sh::padded, kImagesPerRound> {
  using Round = wg::GpuRoundLayout<Sh::channels, Sh::side, Sh::padded, kImagesPerRound>;
  using Round::C, Round::IS, Round::kImages, Round::kTiles, Round::kMs, Round::kOffV, Round::kOffM;
  static constexpr int kLayer = Sh::layer;
  static constexpr int kThreads = kHostSpace ? 1 : kRoleThreads;
  static constexpr int kFg = kFiltersPerRole, kChunk = kTilesPerChunk;
  static constexpr int F = Sh::filters, kPooled = Sh::pooled;
  static constexpr int kInputFloats = C * IS * IS;  // one image's input
  static constexpr int kGroups = F / kFg, kPairs = kE * kGroups;  // (position, filter group) pairs, each one U
  static constexpr int kSubsets = kRoleThreads / kPairs, kRoles = kPairs * kSubsets;
  static constexpr bool kLast = kLayer == 2;  // conv3: FC and softmax in the same team
  static constexpr int kOffBias = kOffM + kChunk * F * kMs;
  static constexpr int kFloats = kOffBias + F;
  // conv3: its pooled outputs and the FC's partial sums in V's space (free once the round's one chunk has
  // passed the element-wise stage).
  static constexpr int kOffPooled = kOffV, kOffPartial = kOffPooled + kImages * kFcInputs;
  static constexpr int kOffLogits = kOffPartial + kImages * kClasses * kFcParts;
  static_assert(!kLast || (kChunk == kTiles && kOffLogits + kImages * kClasses <= kOffM));
  static constexpr std::size_t kBytes = kFloats * sizeof(float) + 64;  // 64: alignment
  static_assert(F % kFg == 0 && kRoleThreads % kPairs == 0 && kChunk % kSubsets == 0 && kTiles % kChunk == 0);
  static_assert(kInputFloats % 4 == 0 && Sh::kernel == 5 && Sh::pad == 2);
  // A CUDA block's shared memory: the scratch, Kokkos' 8 (team size + 2) bytes and 16 of static shared memory.
  static_assert(kBytes + 8 * (kRoleThreads + 2) + 16 <= 227 * 1024, "one Hopper SM's shared memory");
};

// Roles, images per round, filters per role, tiles per chunk: cuda:winograd's choices (its comments say why).
using Conv1 = Plan<Shape1, 512, 1, 16, 32>;
using Conv2 = Plan<Shape2, 256, 1, 10, 16>;
using Conv3 = Plan<Shape3, 320, 4, 4, 16>;

// Two pooled outputs stored at once (64 bits; load4/store4 in kokkos_session.hpp do 128).
struct alignas(8) Pair {
  float w[2];
};

// 4 inputs loaded at once: 4 pixels (32 bits) or 4 floats (128 bits).
template <class In>
struct alignas(4 * sizeof(In)) Word {
  In v[4];
};

KOKKOS_INLINE_FUNCTION float to_input(std::uint8_t pixel) { return normalise_pixel_fp32(pixel); }
KOKKOS_INLINE_FUNCTION float to_input(float activation) { return activation; }

// What one layer's teams read and write. input: conv1 the images (uint8), else the previous layer's pooled
// output [image][channel][y][x]; out: conv1/conv2 the pooled output, conv3 the probabilities.
template <class In>
struct LayerArgs {
  const In* input;
  const float *u, *bias, *fw, *fb;
  float* out;
  int count;  // images
};

// The team's rounds of one layer; s: the team's scratch (L::kFloats).
template <class L, class In, class Member>
KOKKOS_INLINE_FUNCTION void layer_rounds(const Member& team, const LayerArgs<In>& a, float* s) {
  constexpr int C = L::C, F = L::F, P = L::P, IS = L::IS, T = L::T, kFg = L::kFg, kChunk = L::kChunk;
  constexpr int kPs = L::kPs, kMs = L::kMs, kPooled = L::kPooled, kPerImage = L::kInputFloats;
  float* in = s;
  float* vbuf = s + L::kOffV;
  float* mbuf = s + L::kOffM;
  float* pooled = s + L::kOffPooled;
  float* partial = s + L::kOffPartial;
  float* logits = s + L::kOffLogits;
  // The biases in scratch: read by every output item (from global memory, an L2 trip where the streamed
  // input has evicted them from the L1 that the scratch leaves).
  float* bias = s + L::kOffBias;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, F), [&](int f) { bias[f] = a.bias[f]; });
  // The padding of the input planes: only interiors are written below.
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, L::kPlanesFloats), [&](int i) { in[i] = 0.0f; });
  float held_u[C][kFg];  // U of the (position, filter group) pair last run by this thread
  int held = -1;
  float held_fw[L::kLast ? kFcInputs / kFcParts : 1];  // conv3: the FC weights of the item last run
  int held_fc = -1;
  const int rounds = (a.count + L::kImages - 1) / L::kImages;
  // A round's input is fetched into `pending` (registers on a GPU) one round ahead, so that its latency hides
  // behind this round's stages: loaded when needed, the loads of a round waited on one another's latency
  // (H200: conv2 1.37 ms per 16384 images, against 0.26 ms of arithmetic).
  // Words of 4 inputs (4 pixels: 32 bits; 4 floats: 128 bits), 4 consecutive x of one row.
  constexpr int kWords = kPerImage / 4, kPerThread = (L::kImages * kWords + L::kThreads - 1) / L::kThreads;
  Word<In> pending[kPerThread];
  const Word<In>* words = reinterpret_cast<const Word<In>*>(a.input);
  const auto images_of = [&](int round) {  // the round's images: kImages, fewer in the last round
    return a.count - round * L::kImages < L::kImages ? a.count - round * L::kImages : L::kImages;
  };
  const auto fetch = [&](int round) {
    const int first = round * L::kImages, n = images_of(round) * kWords;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, L::kThreads), [&](int t) {
      CNN_KOKKOS_DEVICE_UNROLL(unroll)
      for (int k = 0; k < kPerThread; ++k)
        if (t + k * L::kThreads < n) pending[k] = words[std::size_t(first) * kWords + t + k * L::kThreads];
    });
  };
  const auto stage = [&](int valid) {  // the fetched words into the planes' interiors
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, L::kThreads), [&](int t) {
      CNN_KOKKOS_DEVICE_UNROLL(unroll)
      for (int k = 0; k < kPerThread; ++k) {
        const int q = 4 * (t + k * L::kThreads), bc = q / (IS * IS), y = q / IS % IS, x = q % IS;  // (image, channel), row, column
        if (q < valid * kPerImage) {
          float* dst = in + bc * L::kPlane + (y + 2) * P + x + 2;
          for (int j = 0; j < 4; ++j) dst[j] = to_input(pending[k].v[j]);
        }
      }
    });
  };
  if (team.league_rank() < rounds) fetch(team.league_rank());
  team.team_barrier();  // the planes' borders zeroed before any interior is staged
  for (int round = team.league_rank(); round < rounds; round += team.league_size()) {
    const int first = round * L::kImages;
    const int valid = images_of(round), tiles = valid * T;
    // No barrier first: the planes have been free since the previous round's input transform (a barrier ago),
    // and the staging touches nothing else; the barrier below also ends the previous round's output stage and FC.
    stage(valid);
    if (round + team.league_size() < rounds) fetch(round + team.league_size());
    team.team_barrier();
    // Input transform: a thread per (tile, channel), consecutive channels on consecutive threads.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tiles * C), [&](int i) {
      int tile, c;
      L::input_item(i, tiles, tile, c);
      wg::tile_input_transform<P, kPs>(in + L::window_at(tile, c), vbuf + L::v_tile(tile) + c);
    });
    for (int chunk = 0; chunk * kChunk < tiles; ++chunk) {
      team.team_barrier();  // V is complete / the previous chunk's output stage is done with M
      // Element-wise: role r = (position p, filter group g, tile subset) computes M[g kFg + f][tile][p] for its
      // tiles of the chunk. Tiles past the round's images hold stale V; their M is never read.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, L::kRoles), [&](int r) {
        const int p = r % kE, g = r / kE % L::kGroups, subset = r / L::kPairs;
        if (held != r % L::kPairs) {
          held = r % L::kPairs;
          CNN_KOKKOS_DEVICE_UNROLL(unroll)
          for (int c = 0; c < C; ++c) {
            CNN_KOKKOS_DEVICE_UNROLL(unroll)
            for (int f = 0; f < kFg; ++f) held_u[c][f] = a.u[(p * C + c) * F + g * kFg + f];
          }
        }
        CNN_KOKKOS_DEVICE_UNROLL(unroll 2)
        for (int k = 0; k < kChunk / L::kSubsets; ++k) {
          const int lt = subset + k * L::kSubsets;
          const float* v = vbuf + L::v_tile(chunk * kChunk + lt) + p * kPs;
          float acc[kFg] = {};
          CNN_KOKKOS_DEVICE_UNROLL(unroll)
          for (int c0 = 0; c0 < C; c0 += 4) {
            float x[4];
            load4(v + c0, x);
            CNN_KOKKOS_DEVICE_UNROLL(unroll)
            for (int j = 0; j < 4; ++j)
              if (c0 + j < C)
                CNN_KOKKOS_DEVICE_UNROLL(unroll)
                for (int f = 0; f < kFg; ++f) acc[f] += x[j] * held_u[c0 + j][f];
          }
          float* m = mbuf + (g * kFg * kChunk + lt) * kMs + p;
          CNN_KOKKOS_DEVICE_UNROLL(unroll)
          for (int f = 0; f < kFg; ++f) m[f * kChunk * kMs] = acc[f];
        }
      });
      team.team_barrier();
      // Output: a thread per (tile, filter) of the chunk, consecutive tiles of one filter on consecutive threads.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kChunk * F), [&](int i) {
        const int lt = i % kChunk, f = i / kChunk, tile = chunk * kChunk + lt;
        if (tile >= tiles) return;
        float m[kE];
        CNN_KOKKOS_DEVICE_UNROLL(unroll)
        for (int e = 0; e < kE; e += 4) load4(mbuf + i * kMs + e, m + e);
        float pool[2][2];
        wg::tile_output_pool(m, pool);
        int b, ty, tx;
        L::tile_at(tile, b, ty, tx);
        float* dst = L::kLast ? pooled + b * kFcInputs : a.out + (std::size_t(first) + b) * F * kPooled * kPooled;
        const float bf = bias[f];
        for (int r = 0; r < 2; ++r)  // a pair of pooled outputs per store
          *reinterpret_cast<Pair*>(dst + (f * kPooled + 2 * ty + r) * kPooled + 2 * tx) =
              Pair{{max2(pool[r][0] + bf, 0.0f), max2(pool[r][1] + bf, 0.0f)}};
      });
    }
    if constexpr (L::kLast) {
      team.team_barrier();
      // FC: kFcParts partial sums per (image, class), then their sums, then the softmax per image. An item's
      // weights (class o, part) are held as U is: on a GPU a thread's items differ in the image only, so it
      // loads its weights once.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, valid * kClasses * kFcParts), [&](int i) {
        const int part = i % kFcParts, o = i / kFcParts % kClasses, b = i / (kFcParts * kClasses);
        if (held_fc != i % (kClasses * kFcParts)) {
          held_fc = i % (kClasses * kFcParts);
          CNN_KOKKOS_DEVICE_UNROLL(unroll)
          for (int j = 0; j < kFcInputs / kFcParts; ++j) held_fw[j] = a.fw[o * kFcInputs + part + j * kFcParts];
        }
        float acc = 0.0f;
        CNN_KOKKOS_DEVICE_UNROLL(unroll)
        for (int j = 0; j < kFcInputs / kFcParts; ++j) acc += held_fw[j] * pooled[b * kFcInputs + part + j * kFcParts];
        partial[i] = acc;
      });
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, valid * kClasses), [&](int i) {
        float sum = a.fb[i % kClasses];
        for (int part = 0; part < kFcParts; ++part) sum += partial[i * kFcParts + part];
        logits[i] = sum;
      });
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, valid), [&](int b) {
        softmax_into(logits + b * kClasses, a.out + (std::size_t(first) + b) * kClasses);
      });
    }
  }
}

class KokkosWinogradLayersSession final : public WinogradSession<KokkosWinogradLayersSession> {
 public:
  // Chunks of up to 65536 images (the activations between layers take 21.5 KB an image, 1.4 GB): each chunk
  // costs its kernels' tails, and cuda:winograd's kernels gained 4 % at 50000 images from one chunk
  // (results/ab/h200-chunk-size/; here: results/ab/h200-kokkos-chunk-size/).
  KokkosWinogradLayersSession(const Network& net, const RunConfig& config)
      : WinogradSession(net, config, /*rows_apart=*/false, 65536) {}

  double upload(const std::uint8_t* pixels, std::size_t n) override {
    const std::size_t chunk = std::min(batch_, n);
    if (act1_.extent(0) < chunk * Conv2::kInputFloats) {
      act1_ = Floats("winograd_layers_pool1", chunk * Conv2::kInputFloats);
      act2_ = Floats("winograd_layers_pool2", chunk * Conv3::kInputFloats);
    }
    return KokkosSession::upload(pixels, n);
  }

  // Public: nvcc refuses device lambdas inside private member functions.
  void run(long first, long m) {
    const WinogradArgs w = args(first, m);
    const int count = int(m);
    layer<Conv1>(LayerArgs<std::uint8_t>{w.pixels + first * kImageBytes, w.u[0], w.b[0], nullptr, nullptr,
                                         act1_.data(), count});
    layer<Conv2>(LayerArgs<float>{act1_.data(), w.u[1], w.b[1], nullptr, nullptr, act2_.data(), count});
    layer<Conv3>(LayerArgs<float>{act2_.data(), w.u[2], w.b[2], w.fw, w.fb, w.probs + first * kClasses, count});
  }

  template <class L, class In>
  void layer(const LayerArgs<In>& a) {
    using Team = TiledTeamPolicy<L::kThreads, 1>;
    const int rounds = (a.count + L::kImages - 1) / L::kImages;
    const int resident = kHostSpace ? Space().concurrency() : Space().concurrency() / kGpuSmThreads;
    const int teams = std::max(1, std::min(rounds, resident));
    Kokkos::parallel_for("winograd_layer", Team(teams, L::kThreads).set_scratch_size(0, Kokkos::PerTeam(L::kBytes)),
                         KOKKOS_LAMBDA(const typename Team::member_type& team) {
      float* s = static_cast<float*>(team.team_scratch(0).get_shmem_aligned(L::kFloats * sizeof(float), 64));
      layer_rounds<L>(team, a, s);
    });
  }

 private:
  Floats act1_, act2_;  // pool1 and pool2 of a chunk
};

const VariantRegistration kWinogradLayers{"kokkos", 9, open_session<KokkosWinogradLayersSession>,
    {"winograd_layers",
     "Winograd F(4x4,5x5) as cuda:winograd computes it, one Kokkos source: a kernel per layer, teams over rounds "
     "of images, each element-wise role's U kept in registers (GPU) or reloaded per role (host)",
     false, {"fp32_fma", winograd::kExecutedFlopPerImage}}};

}  // namespace
}  // namespace cnn::kokkos
