// omptarget:fused, openacc:flat's step in OpenMP: everything resident (as in omptarget:resident), and
// the 11 layers become 4 target regions per chunk: conv+ReLU+pool three times (conv outputs never reach
// memory; each iteration computes the four conv outputs under one pooled pixel for 4 filters from a
// register patch) and FC+softmax. One `teams distribute parallel for simd` loop collapsed over (image,
// filter group, y, x): the OpenMP spelling of OpenACC's `gang worker vector`.
#include "backends/omptarget/omptarget_kernels.hpp"
#include "backends/omptarget/omptarget_session.hpp"
#include "backends/omptarget/omptarget_offload.hpp"
#include "common/timer.hpp"

namespace cnn::omptarget {
namespace {

// Images per chunk: 16384 keeps pool1's output at 256 MiB and 50000 images in four chunks (as openacc:flat).
constexpr std::size_t kFusedChunk = 16384;

class FusedSession final : public TargetSession {
 public:
  FusedSession(const Network& net, const RunConfig& config)
      : TargetSession(net, config, true), chunk_(chunk_images(config, kFusedChunk)) {
    for (int l = 0; l < 3; ++l) {
      const ConvSpec& s = kConvs[l];
      pool_out_[l].reset(chunk_ * s.filters * s.pooled_side() * s.pooled_side(), true);
    }
  }

  double forward(LayerTimes&) override {
    StopWatch total;
    for (std::size_t first = 0; first < n_; first += chunk_) {
      const int n = int(std::min(chunk_, n_ - first));
      float* p1 = pool_out_[0].data();
      float* p2 = pool_out_[1].data();
      float* p3 = pool_out_[2].data();
      conv_relu_pool(images_ + first * kImageBytes, n, kConv1, weights_.w[0].data(), weights_.b[0].data(), p1);
      conv_relu_pool(p1, n, kConv2, weights_.w[1].data(), weights_.b[1].data(), p2);
      conv_relu_pool(p2, n, kConv3, weights_.w[2].data(), weights_.b[2].data(), p3);
      fc_softmax(p3, n, weights_.fc_w.data(), weights_.fc_b.data(), probs_.data() + first * kClasses);
      report_progress(first + std::size_t(n));
    }
    return total.ms();
  }

  std::size_t batch() const override { return chunk_; }

 private:
  std::size_t activation_device_bytes() const override {
    return pool_out_[0].device_bytes() + pool_out_[1].device_bytes() + pool_out_[2].device_bytes();
  }

  std::size_t chunk_;
  Mirror<float> pool_out_[3];
};

}  // namespace

std::unique_ptr<Session> open_fused(const Network& net, const RunConfig& config) {
  return std::make_unique<FusedSession>(net, config);
}

}  // namespace cnn::omptarget
