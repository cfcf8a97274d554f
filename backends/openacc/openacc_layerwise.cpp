// openacc:naive and openacc:data: the thesis' layer-by-layer OpenACC port, one compute region per layer.
// Both run the same code; every layer is wrapped in a data region with copyin/copyout clauses. OpenACC
// copies only what is not already present, so:
//  - naive: nothing is resident, so every layer call copies its weights and input to the GPU, allocates
//    its output there and copies it back (the thesis' first step);
//  - data: weights, images, activations and probabilities were put on the device once (enter data), so
//    the same clauses find everything present and nothing moves inside forward().
#include "backends/openacc/openacc_kernels.hpp"
#include "backends/openacc/openacc_session.hpp"
#include "common/registry.hpp"
#include "common/timer.hpp"

namespace cnn::openacc {
namespace {

constexpr std::size_t kNaiveChunk = 1024;  // images per round of 11 layer calls
constexpr std::size_t kDataChunk = 4096;

template <typename In>
void conv_step(const In* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) {
  const std::size_t in_len = std::size_t(n) * s.in_channels * s.in_side * s.in_side;
  const std::size_t out_len = std::size_t(n) * s.filters * s.out_side() * s.out_side();
  const std::size_t w_len = s.weight_count();
  const int F = s.filters;
#pragma acc data copyin(in[0:in_len], w[0:w_len], b[0:F]) copyout(out[0:out_len])
  conv_layer(in, n, s, w, b, out);
}

void relu_step(float* a, std::size_t count) {
#pragma acc data copy(a[0:count])
  relu_layer(a, count);
}

void pool_step(const float* in, int n, const ConvSpec& s, float* out) {
  const std::size_t in_len = std::size_t(n) * s.filters * s.out_side() * s.out_side();
  const std::size_t out_len = std::size_t(n) * s.filters * s.pooled_side() * s.pooled_side();
#pragma acc data copyin(in[0:in_len]) copyout(out[0:out_len])
  pool_layer(in, n, s, out);
}

void fc_step(const float* in, int n, const float* w, const float* b, float* out) {
  const std::size_t in_len = std::size_t(n) * kFc.inputs(), out_len = std::size_t(n) * kClasses;
  constexpr std::size_t w_len = std::size_t(kFc.inputs()) * kClasses;
#pragma acc data copyin(in[0:in_len], w[0:w_len], b[0:kClasses]) copyout(out[0:out_len])
  fc_layer(in, n, w, b, out);
}

void softmax_step(float* a, int n) {
  const std::size_t len = std::size_t(n) * kClasses;
#pragma acc data copy(a[0:len])
  softmax_layer(a, n);
}

class OpenAccLayerwiseSession final : public OpenAccSession {
 public:
  OpenAccLayerwiseSession(const Network& net, const RunConfig& config, bool resident)
      : OpenAccSession(net, config, resident), chunk_(resolve_batch(config, resident ? kDataChunk : kNaiveChunk)) {
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
        float* p = pool_out_[l].data();
        if (l == 0)
          timed(0, [&] { conv_step(pixels, n, s, weights_.w[0].data(), weights_.b[0].data(), c); });
        else
          timed(3 * l, [&] {
            conv_step(pool_out_[l - 1].data(), n, s, weights_.w[l].data(), weights_.b[l].data(), c);
          });
        timed(3 * l + 1, [&] { relu_step(c, std::size_t(n) * s.filters * s.out_side() * s.out_side()); });
        timed(3 * l + 2, [&] { pool_step(c, n, s, p); });
      }
      timed(9, [&] { fc_step(pool_out_[2].data(), n, weights_.fc_w.data(), weights_.fc_b.data(), probs); });
      timed(10, [&] { softmax_step(probs, n); });
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

std::unique_ptr<Session> open_naive(const Network& net, const RunConfig& config) {
  return std::make_unique<OpenAccLayerwiseSession>(net, config, false);
}

const VariantRegistration kNaive{"openacc", 1, open_naive,
    {"naive", "the thesis' first port: a parallel loop per layer, weights and activations copied each call", true}};

std::unique_ptr<Session> open_data(const Network& net, const RunConfig& config) {
  return std::make_unique<OpenAccLayerwiseSession>(net, config, true);
}

const VariantRegistration kData{"openacc", 2, open_data,
    {"data", "the same loops, with weights, images and activations resident on the device (present)", true}};

}  // namespace
}  // namespace cnn::openacc
