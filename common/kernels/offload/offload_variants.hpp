// The two kinds of session the directive-based backends (OpenACC, OpenMP offload) run, written once over each
// backend's own compute regions:
//  - LayerwiseSession: the thesis' layer-by-layer port, 11 layer calls per chunk of images, each timed
//    (the naive and resident variants);
//  - FusedSession: conv+ReLU+pool three times and FC+softmax, 4 calls per chunk, everything resident
//    (the fused variants: gangs, flat).
// `Kernels` is a small object of the backend's that makes the calls with its directives:
//   layer-wise: conv(in, n, spec, w, b, out) for uint8 pixels and float activations, relu(a, count),
//               pool(in, n, spec, out), fc(in, n, w, b, out), softmax(a, n): the backend's
//               offload::LayerRegions table (layer_regions.hpp), or an object that wraps its calls
//   fused:      conv_relu_pool(in, n, spec, w, b, out) for uint8 and float inputs, fc_softmax(in, n, w, b, probs)
// Header-only and free of pragmas, templates over the backend's DataDirectives: see offload_session.hpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/kernels/offload/offload_session.hpp"
#include "common/timer.hpp"

namespace cnn::offload {

// Preferred images per chunk (--batch overrides): per round of 11 layer calls when every call copies
// (naive, layers) and when everything is resident (data, resident); for the fused steps, 65536 keeps
// pool1's output at 1 GiB and 50000 images in one chunk: every OpenMP target region costs GCC 12's
// libgomp a fixed ~0.75 ms on the H200 (the chunk sweep in the OpenMP offload backend's README), so fewer, larger
// launches; OpenACC's launches are cheaper, and flat gains a little too.
inline constexpr std::size_t kCopyingChunk = 1024;
inline constexpr std::size_t kResidentChunk = 4096;
inline constexpr std::size_t kFusedChunk = 65536;

template <const DataDirectives& D, typename Kernels>
class LayerwiseSession final : public OffloadSession<D> {
  using Base = OffloadSession<D>;

 public:
  LayerwiseSession(const Network& net, const RunConfig& config, bool resident, Kernels kernels = {})
      : Base(net, config, resident),
        kernels_(kernels),
        chunk_(resolve_batch(config, resident ? kResidentChunk : kCopyingChunk)) {
    for (int l = 0; l < 3; ++l) {
      const ConvSpec& s = kConvs[l];
      conv_out_[l].reset(chunk_ * s.filters * s.out_side() * s.out_side(), resident);
      pool_out_[l].reset(chunk_ * s.filters * s.pooled_side() * s.pooled_side(), resident);
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
    const auto& w = this->weights_;
    for (std::size_t first = 0; first < this->n_; first += chunk_) {
      const int n = int(std::min(chunk_, this->n_ - first));
      const std::uint8_t* pixels = this->images_ + first * kImageBytes;
      float* probs = this->probs_.data() + first * kClasses;
      for (int l = 0; l < 3; ++l) {
        const ConvSpec& s = kConvs[l];
        float* c = conv_out_[l].data();
        if (l == 0)
          timed(0, [&] { kernels_.conv(pixels, n, s, w.w[0].data(), w.b[0].data(), c); });
        else
          timed(3 * l, [&] { kernels_.conv(pool_out_[l - 1].data(), n, s, w.w[l].data(), w.b[l].data(), c); });
        timed(3 * l + 1, [&] { kernels_.relu(c, std::size_t(n) * s.filters * s.out_side() * s.out_side()); });
        timed(3 * l + 2, [&] { kernels_.pool(c, n, s, pool_out_[l].data()); });
      }
      timed(9, [&] { kernels_.fc(pool_out_[2].data(), n, w.fc_w.data(), w.fc_b.data(), probs); });
      timed(10, [&] { kernels_.softmax(probs, n); });
      this->report_progress(first + std::size_t(n));
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
  // Not resident (naive): each layer call maps its input, weights and output for the call alone (the
  // backends' data clauses cover exactly these arrays), so the device holds one call's copies at a time, and the
  // largest call over the first, fullest chunk is the peak.
  std::size_t largest_call_device_bytes() const override {
    const std::size_t n = std::min(chunk_, this->n_);
    const auto chunk_bytes = [&](const Mirror<float, D>& a) { return a.bytes() / chunk_ * n; };  // sized per chunk
    const auto& w = this->weights_;
    std::size_t peak = 0;
    for (int l = 0; l < 3; ++l) {
      const std::size_t in = l == 0 ? n * kImageBytes : chunk_bytes(pool_out_[l - 1]);
      const std::size_t conv = chunk_bytes(conv_out_[l]);
      peak = std::max({peak, in + w.w[l].bytes() + w.b[l].bytes() + conv, conv + chunk_bytes(pool_out_[l])});
    }
    const std::size_t probs = n * kClasses * sizeof(float);
    return std::max(peak, chunk_bytes(pool_out_[2]) + w.fc_w.bytes() + w.fc_b.bytes() + probs);
  }

  Kernels kernels_;
  std::size_t chunk_;
  Mirror<float, D> conv_out_[3], pool_out_[3];
};

template <const DataDirectives& D, typename Kernels>
class FusedSession final : public OffloadSession<D> {
  using Base = OffloadSession<D>;

 public:
  FusedSession(const Network& net, const RunConfig& config, Kernels kernels = {})
      : Base(net, config, true), kernels_(kernels), chunk_(resolve_batch(config, kFusedChunk)) {
    for (int l = 0; l < 3; ++l) {
      const ConvSpec& s = kConvs[l];
      pool_out_[l].reset(chunk_ * s.filters * s.pooled_side() * s.pooled_side(), true);
    }
  }

  double forward(LayerTimes&) override {
    StopWatch total;
    const auto& w = this->weights_;
    for (std::size_t first = 0; first < this->n_; first += chunk_) {
      const int n = int(std::min(chunk_, this->n_ - first));
      float* p1 = pool_out_[0].data();
      float* p2 = pool_out_[1].data();
      float* p3 = pool_out_[2].data();
      kernels_.conv_relu_pool(this->images_ + first * kImageBytes, n, kConv1, w.w[0].data(), w.b[0].data(), p1);
      kernels_.conv_relu_pool(p1, n, kConv2, w.w[1].data(), w.b[1].data(), p2);
      kernels_.conv_relu_pool(p2, n, kConv3, w.w[2].data(), w.b[2].data(), p3);
      kernels_.fc_softmax(p3, n, w.fc_w.data(), w.fc_b.data(), this->probs_.data() + first * kClasses);
      this->report_progress(first + std::size_t(n));
    }
    return total.ms();
  }

  std::size_t batch() const override { return chunk_; }

 private:
  std::size_t activation_device_bytes() const override {
    return pool_out_[0].device_bytes() + pool_out_[1].device_bytes() + pool_out_[2].device_bytes();
  }

  Kernels kernels_;
  std::size_t chunk_;
  Mirror<float, D> pool_out_[3];
};

}  // namespace cnn::offload
