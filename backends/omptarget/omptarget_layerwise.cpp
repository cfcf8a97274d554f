// omptarget:naive and omptarget:resident: the thesis' layer-by-layer port in OpenMP target offload, one
// `target teams distribute parallel for` per layer. Both run the same code; each region maps its arrays
// (map(to:) in, map(from:) out). A map copies only what is not already present, so:
//  - layers: nothing is resident, so every layer call copies its weights and input to the GPU, allocates
//    its output there and copies it back (openacc:naive's step);
//  - resident: weights, images, activations and probabilities were mapped once (`target enter data`),
//    so the same maps find everything present and nothing moves inside forward() (openacc:resident's step).
#include "common/kernels/offload/offload_variants.hpp"
#include "backends/omptarget/omptarget_kernels.hpp"
#include "backends/omptarget/omptarget_offload.hpp"
#include "backends/omptarget/omptarget_session.hpp"

namespace cnn::omptarget {
namespace {

// The regions map their arrays themselves: kLayerRegions is the session's table of layer calls as it is.
using LayersSession = offload::LayerwiseSession<kDirectives, offload::LayerRegions>;

}  // namespace

std::unique_ptr<Session> open_naive(const Network& net, const RunConfig& config) {
  return std::make_unique<LayersSession>(net, config, false, kLayerRegions);
}

std::unique_ptr<Session> open_resident(const Network& net, const RunConfig& config) {
  return std::make_unique<LayersSession>(net, config, true, kLayerRegions);
}

}  // namespace cnn::omptarget
