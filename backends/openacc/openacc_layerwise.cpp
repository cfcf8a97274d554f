// openacc:naive and openacc:resident: the thesis' layer-by-layer OpenACC port, one compute region per layer.
// Both run the same code; every layer is wrapped in a data region with copyin/copyout clauses. OpenACC
// copies only what is not already present, so:
//  - naive: nothing is resident, so every layer call copies its weights and input to the GPU, allocates
//    its output there and copies it back (the thesis' first step);
//  - data: weights, images, activations and probabilities were put on the device once (enter data), so
//    the same clauses find everything present and nothing moves inside forward().
#include "common/kernels/offload/offload_variants.hpp"
#include "backends/openacc/openacc_kernels.hpp"
#include "backends/openacc/openacc_session.hpp"
#include "common/registry.hpp"

namespace cnn::openacc {
namespace {

// The layer calls of offload::LayerwiseSession, each inside a data region.
struct DataRegionPerLayer {
  template <typename In>
  void conv(const In* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) const {
    const std::size_t in_len = std::size_t(n) * s.in_channels * s.in_side * s.in_side;
    const std::size_t out_len = std::size_t(n) * s.filters * s.out_side() * s.out_side();
    const std::size_t w_len = s.weight_count();
    const int F = s.filters;
#pragma acc data copyin(in[0:in_len], w[0:w_len], b[0:F]) copyout(out[0:out_len])
    kLayerRegions.conv(in, n, s, w, b, out);
  }

  void relu(float* a, std::size_t count) const {
#pragma acc data copy(a[0:count])
    kLayerRegions.relu(a, count);
  }

  void pool(const float* in, int n, const ConvSpec& s, float* out) const {
    const std::size_t in_len = std::size_t(n) * s.filters * s.out_side() * s.out_side();
    const std::size_t out_len = std::size_t(n) * s.filters * s.pooled_side() * s.pooled_side();
#pragma acc data copyin(in[0:in_len]) copyout(out[0:out_len])
    kLayerRegions.pool(in, n, s, out);
  }

  void fc(const float* in, int n, const float* w, const float* b, float* out) const {
    const std::size_t in_len = std::size_t(n) * kFc.inputs(), out_len = std::size_t(n) * kClasses;
    constexpr std::size_t w_len = std::size_t(kFc.inputs()) * kClasses;
#pragma acc data copyin(in[0:in_len], w[0:w_len], b[0:kClasses]) copyout(out[0:out_len])
    kLayerRegions.fc(in, n, w, b, out);
  }

  void softmax(float* a, int n) const {
    const std::size_t len = std::size_t(n) * kClasses;
#pragma acc data copy(a[0:len])
    kLayerRegions.softmax(a, n);
  }
};

using OpenAccLayerwiseSession = offload::LayerwiseSession<kDirectives, DataRegionPerLayer>;

std::unique_ptr<Session> open_naive(const Network& net, const RunConfig& config) {
  return std::make_unique<OpenAccLayerwiseSession>(net, config, false);
}

const VariantRegistration kNaive{"openacc", 1, open_naive,
    {"naive", "the thesis' first port: a parallel loop per layer, weights and activations copied each call", true}};

std::unique_ptr<Session> open_data(const Network& net, const RunConfig& config) {
  return std::make_unique<OpenAccLayerwiseSession>(net, config, true);
}

const VariantRegistration kData{"openacc", 2, open_data,
    {"resident", "the same loops, with weights, images and activations resident on the device (present)", true}};

}  // namespace
}  // namespace cnn::openacc
