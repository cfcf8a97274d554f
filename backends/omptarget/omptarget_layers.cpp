// omptarget:layers and omptarget:resident: the thesis' layer-by-layer port in OpenMP target offload, one
// `target teams distribute parallel for` per layer. Both run the same code; each region maps its arrays
// (map(to:) in, map(from:) out). A map copies only what is not already present, so:
//  - layers: nothing is resident, so every layer call copies its weights and input to the GPU, allocates
//    its output there and copies it back (openacc:naive's step);
//  - resident: weights, images, activations and probabilities were mapped once (`target enter data`),
//    so the same maps find everything present and nothing moves inside forward() (openacc:data's step).
#include "backends/omptarget/omptarget_kernels.hpp"
#include "backends/omptarget/omptarget_session.hpp"
#include "backends/omptarget/omptarget_offload.hpp"
#include "common/timer.hpp"

namespace cnn::omptarget {
namespace {

constexpr std::size_t kLayersChunk = 1024;  // images per round of 11 layer calls
constexpr std::size_t kResidentChunk = 4096;

class LayersSession final : public TargetSession {
 public:
  LayersSession(const Network& net, const RunConfig& config, bool resident)
      : TargetSession(net, config, resident),
        chunk_(chunk_images(config, resident ? kResidentChunk : kLayersChunk)) {
    for (int l = 0; l < 3; ++l) {
      const ConvSpec& s = kConvs[l];
      conv_out_[l].reset(chunk_ * s.filters * s.out_side() * s.out_side(), resident_);
      pool_out_[l].reset(chunk_ * s.filters * s.pooled_side() * s.pooled_side(), resident_);
    }
  }

  double forward(LayerTimes& layers) override {
    double t[kLayers.size()] = {};
    StopWatch total, sw;
    auto timed = [&](int layer, auto&& step) {
      sw.restart();
      step();
      t[layer] += sw.ms();
    };
    for (std::size_t first = 0; first < n_; first += chunk_) {
      const int n = int(std::min(chunk_, n_ - first));
      const std::uint8_t* pixels = images_ + first * kImageBytes;
      float* probs = probs_.data() + first * kClasses;
      for (int l = 0; l < 3; ++l) {
        const ConvSpec& s = kConvs[l];
        float* c = conv_out_[l].data();
        if (l == 0)
          timed(0, [&] { conv_layer(pixels, n, s, weights_.w[0].data(), weights_.b[0].data(), c); });
        else
          timed(3 * l, [&] { conv_layer(pool_out_[l - 1].data(), n, s, weights_.w[l].data(), weights_.b[l].data(), c); });
        timed(3 * l + 1, [&] { relu_layer(c, std::size_t(n) * s.filters * s.out_side() * s.out_side()); });
        timed(3 * l + 2, [&] { pool_layer(c, n, s, pool_out_[l].data()); });
      }
      timed(9, [&] { fc_layer(pool_out_[2].data(), n, weights_.fc_w.data(), weights_.fc_b.data(), probs); });
      timed(10, [&] { softmax_layer(probs, n); });
      report_progress(first + std::size_t(n));
    }
    for (std::size_t l = 0; l < kLayers.size(); ++l) layers.emplace_back(std::string(kLayers[l].name), t[l]);
    return total.ms();
  }

  std::size_t batch() const override { return chunk_; }

 private:
  std::size_t activation_device_bytes() const override {
    std::size_t bytes = 0;
    for (int l = 0; l < 3; ++l) bytes += conv_out_[l].device_bytes() + pool_out_[l].device_bytes();
    return bytes;
  }

  std::size_t chunk_;
  Mirror<float> conv_out_[3], pool_out_[3];
};

}  // namespace

std::unique_ptr<Session> open_layers(const Network& net, const RunConfig& config) {
  return std::make_unique<LayersSession>(net, config, false);
}

std::unique_ptr<Session> open_resident(const Network& net, const RunConfig& config) {
  return std::make_unique<LayersSession>(net, config, true);
}

}  // namespace cnn::omptarget
