// omptarget:flat, openacc:flat's step in OpenMP: everything resident (as in omptarget:resident), and
// the 11 layers become 4 target regions per chunk: conv+ReLU+pool three times (conv outputs never reach
// memory; each iteration computes the four conv outputs under one pooled pixel for all of the layer's
// filters) and FC+softmax. One `teams distribute parallel for simd` loop over (image, y, x), flattened by
// hand: the OpenMP spelling of OpenACC's `gang worker vector` (omptarget_kernels.cpp).
#include "common/kernels/offload/offload_variants.hpp"
#include "backends/omptarget/omptarget_kernels.hpp"
#include "backends/omptarget/omptarget_offload.hpp"
#include "backends/omptarget/omptarget_session.hpp"

namespace cnn::omptarget {
namespace {

// The fused calls of offload::FusedSession.
struct FusedRegions {
  void conv_relu_pool(const auto&... a) const { omptarget::conv_relu_pool(a...); }
  void fc_softmax(const auto&... a) const { omptarget::fc_softmax(a...); }
};

}  // namespace

std::unique_ptr<Session> open_flat(const Network& net, const RunConfig& config) {
  return std::make_unique<offload::FusedSession<kDirectives, FusedRegions>>(net, config);
}

}  // namespace cnn::omptarget
