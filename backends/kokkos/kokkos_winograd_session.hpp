// What the Kokkos Winograd variants (kokkos_winograd.cpp, kokkos_winograd_lanes.cpp, kokkos_winograd_layers.cpp) share: the
// weights U = G g GT of each conv layer, what a team reads and writes (WinogradArgs), and the session around a
// launch (WinogradSession, which calls the variant's run(first, count) once per chunk of images).
#pragma once

#include "backends/kokkos/kokkos_session.hpp"
#include "common/kernels/cpu/winograd_f4x5.hpp"

#include <cstdint>
#include <vector>

namespace cnn::kokkos {

// U of conv layer `layer`, (G g GT)[k][l] in FP64 stored as float: U[e][c][f] (e = 8 k + l), or with
// rows_apart U[k][c][f][l] (one row k of a filter's 64 values contiguous: kokkos:winograd's GPU path).
inline Floats winograd_weights(const ConvLayer& layer, bool rows_apart) {
  const int C = layer.spec.in_channels, F = layer.spec.filters;
  std::vector<float> u(std::size_t(winograd::kElems) * C * F);
  for (int f = 0; f < F; ++f)
    for (int c = 0; c < C; ++c) {
      const double* g = layer.weights64.data() + (std::size_t(f) * C + c) * kTaps;  // [ky][kx]
      for (int k = 0; k < winograd::kIn; ++k)
        for (int l = 0; l < winograd::kIn; ++l) {
          const std::size_t at = rows_apart ? ((std::size_t(k) * C + c) * F + f) * winograd::kIn + l
                                            : (std::size_t(k * winograd::kIn + l) * C + c) * F + f;
          u[at] = float(winograd::transformed_weight(g, k, l));
        }
    }
  return to_view(u, "winograd_u");
}

// What a team reads and writes.
struct WinogradArgs {
  const std::uint8_t* pixels;
  float* probs;
  const float *u[3], *b[3], *fw, *fb;
  long first, m;  // the launch's images
};

// A Winograd session: U of the three conv layers at start-up, then V::run(first, count) for each chunk of
// images (by default one chunk of all images: teams are independent).
template <class V>
class WinogradSession : public KokkosSession {
 public:
  WinogradSession(const Network& net, const RunConfig& config, bool rows_apart,
                  std::size_t preferred_batch = kAllImages)
      : KokkosSession(net, config, preferred_batch) {
    for (int l = 0; l < 3; ++l) u_[l] = winograd_weights(net.conv(l), rows_apart);
  }

  double forward(LayerTimes&) override {
    return forward_in_chunks([this](long first, long m) { static_cast<V*>(this)->run(first, m); });
  }

 protected:
  WinogradArgs args(long first, long m) const {
    return {pixels_.data(), probs_.data(), {u_[0].data(), u_[1].data(), u_[2].data()},
            {b_[0].data(), b_[1].data(), b_[2].data()}, fc_w_.data(), fc_b_.data(), first, m};
  }

 private:
  Floats u_[3];  // transformed weights per conv layer
};

}  // namespace cnn::kokkos
