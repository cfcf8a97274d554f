// openacc:gangs and openacc:flat: the optimised steps. Everything stays resident (as in openacc:data),
// and the 11 layers become 4 compute regions per chunk: conv+ReLU+pool three times (the conv outputs never
// reach memory, each iteration computes the four conv outputs under one pooled pixel from a register
// patch) and FC+softmax. They differ in how the loops map onto the GPU (see Mapping): gangs gives each
// image a gang and each (filter, pixel) a lane; flat collapses everything into one loop and lets each
// iteration reuse its input patch for kFilterGroup filters.
#include "backends/openacc/openacc_kernels.hpp"
#include "backends/openacc/openacc_session.hpp"
#include "common/registry.hpp"
#include "common/timer.hpp"

namespace cnn::openacc {
namespace {

// Images per chunk: 16384 keeps pool1's output at 256 MiB and 50000 images in four chunks.
constexpr std::size_t kFusedChunk = 16384;

class OpenAccFusedSession final : public OpenAccSession {
 public:
  OpenAccFusedSession(const Network& net, const RunConfig& config, Mapping mapping)
      : OpenAccSession(net, config, true), mapping_(mapping), chunk_(resolve_batch(config, kFusedChunk)) {
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
      conv_relu_pool(images_ + first * kImageBytes, n, kConv1, weights_.w[0].data(), weights_.b[0].data(), p1,
                     mapping_);
      conv_relu_pool(p1, n, kConv2, weights_.w[1].data(), weights_.b[1].data(), p2, mapping_);
      conv_relu_pool(p2, n, kConv3, weights_.w[2].data(), weights_.b[2].data(), p3, mapping_);
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

  Mapping mapping_;
  std::size_t chunk_;
  Mirror<float> pool_out_[3];
};

std::unique_ptr<Session> open_gangs(const Network& net, const RunConfig& config) {
  return std::make_unique<OpenAccFusedSession>(net, config, Mapping::gang_images);
}

const VariantRegistration kGangs{"openacc", 3, open_gangs,
    {"gangs", "conv+ReLU+pool and FC+softmax fused; a gang per image, worker x vector over filters x pixels", false}};

std::unique_ptr<Session> open_flat(const Network& net, const RunConfig& config) {
  return std::make_unique<OpenAccFusedSession>(net, config, Mapping::flat);
}

const VariantRegistration kFlat{"openacc", 4, open_flat,
    {"flat", "the fused regions as one gang-worker-vector loop over images x filter groups x pixels, 4 filters "
             "each", false}};

}  // namespace
}  // namespace cnn::openacc
