// What both Kokkos variants share: Kokkos start-up, the weights and images as Views in the default
// execution space's memory, the probabilities, and the conv tap loop both variants call.
#pragma once

#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/backend.hpp"

namespace cnn::kokkos {

using Space = Kokkos::DefaultExecutionSpace;
using Floats = Kokkos::View<float*, Space::memory_space>;
using Bytes = Kokkos::View<std::uint8_t*, Space::memory_space>;

// Kokkos::initialize on first use (with the first run's thread count), Kokkos::finalize at exit.
void ensure_initialised(int threads);
std::string space_name();
Availability availability();  // the space, and whether it can run here (a Cuda space needs a GPU)

// Sizes as template arguments, so device code sees plain compile-time constants.
template <int C, int S, int F, int K, int P>
struct ConvShape {
  static constexpr int channels = C, side = S, filters = F, kernel = K, pad = P, pooled = S / 2;
};
template <const ConvSpec& s>
using ShapeOf = ConvShape<s.in_channels, s.in_side, s.filters, s.kernel, s.pad>;
using Shape1 = ShapeOf<kConv1>;
using Shape2 = ShapeOf<kConv2>;
using Shape3 = ShapeOf<kConv3>;
static_assert(Shape1::side == 2 * Shape2::side && Shape2::side == 2 * Shape3::side);
static_assert(Shape3::filters * Shape3::pooled * Shape3::pooled == kFc.inputs());

// Device code may call no host constexpr function (nvcc without --expt-relaxed-constexpr miscompiles it
// silently), so the spec's values that device code needs are plain constants here.
inline constexpr int kFcInputs = kFc.inputs();

// normalise_pixel<float>, callable on a device.
KOKKOS_INLINE_FUNCTION float to_input(std::uint8_t p) { return float(p) / 255.0f - 0.5f; }

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

KOKKOS_INLINE_FUNCTION float max2(float a, float b) { return a > b ? a : b; }
KOKKOS_INLINE_FUNCTION float max4(float a, float b, float c, float d) { return max2(max2(a, b), max2(c, d)); }

// Softmax of the 10 logits (overwritten) into probs (one thread).
KOKKOS_INLINE_FUNCTION void softmax10(float* logits, float* probs) {
  float top = logits[0];
  for (int o = 1; o < kClasses; ++o) top = max2(top, logits[o]);
  float sum = 0;
  for (int o = 0; o < kClasses; ++o) sum += (logits[o] = Kokkos::Experimental::exp(logits[o] - top));
  for (int o = 0; o < kClasses; ++o) probs[o] = logits[o] / sum;
}

// FC output o of one image: weights w[o*320 + flat], flat = pool3's channel-major order.
KOKKOS_INLINE_FUNCTION float fc_at(const float* in, const float* w, const float* b, int o) {
  float acc = b[o];
  for (int i = 0; i < kFcInputs; ++i) acc += w[o * kFcInputs + i] * in[i];
  return acc;
}

class KokkosSession : public Session {
 public:
  KokkosSession(const Network& net, const RunConfig& config);
  double upload(const std::uint8_t* pixels, std::size_t n) override;
  double download(float* probs) override;
  bool on_device() const override;
  int threads() const override { return Space().concurrency(); }
  std::vector<std::pair<std::string, std::string>> device_info() const override;

 protected:
  static double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  std::size_t requested_batch_;
  std::size_t n_ = 0;
  Bytes pixels_;
  Floats probs_;
  Floats w_[3], b_[3], fc_w_, fc_b_;
};

Floats to_view(const std::vector<float>& host, const char* label);

}  // namespace cnn::kokkos
