// openacc:gangs and openacc:flat: the optimised steps. Everything stays resident (as in openacc:resident),
// and the 11 layers become 4 compute regions per chunk: conv+ReLU+pool three times (the conv outputs never
// reach memory, each iteration computes the four conv outputs under one pooled pixel from a register
// patch) and FC+softmax. They differ in how the loops map onto the GPU (see Mapping): gangs gives each
// image a gang and each (filter, pixel) a lane; flat collapses everything into one loop and lets each
// iteration reuse its input patch for kFilterGroup filters.
#include "common/kernels/offload/offload_variants.hpp"
#include "backends/openacc/openacc_kernels.hpp"
#include "backends/openacc/openacc_session.hpp"
#include "common/registry.hpp"

namespace cnn::openacc {
namespace {

// The fused calls of offload::FusedSession, with the variant's loop mapping.
struct MappedRegions {
  Mapping mapping;
  template <typename In>
  void conv_relu_pool(const In* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) const {
    openacc::conv_relu_pool(in, n, s, w, b, out, mapping);
  }
  void fc_softmax(const float* in, int n, const float* w, const float* b, float* probs) const {
    openacc::fc_softmax(in, n, w, b, probs);
  }
};

using OpenAccFusedSession = offload::FusedSession<kDirectives, MappedRegions>;

std::unique_ptr<Session> open_gangs(const Network& net, const RunConfig& config) {
  return std::make_unique<OpenAccFusedSession>(net, config, MappedRegions{Mapping::gang_images});
}

const VariantRegistration kGangs{"openacc", 3, open_gangs,
    {"gangs", "conv+ReLU+pool and FC+softmax fused; a gang per image, worker x vector over filters x pixels", false}};

std::unique_ptr<Session> open_flat(const Network& net, const RunConfig& config) {
  return std::make_unique<OpenAccFusedSession>(net, config, MappedRegions{Mapping::flat});
}

const VariantRegistration kFlat{"openacc", 4, open_flat,
    {"flat", "the fused regions as one gang-worker-vector loop over images x filter groups x pixels, 4 filters "
             "each", false}};

}  // namespace
}  // namespace cnn::openacc
