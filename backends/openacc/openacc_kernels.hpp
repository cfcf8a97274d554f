// The OpenACC compute regions. Every array they touch must already be present on the device: the
// callers' data regions decide whether that means a copy per call (openacc:naive) or buffers resident
// for the whole session (openacc:resident, openacc:flat). On the host fallback `present` is a no-op.
//
// Layouts are the canonical ones (common/network.hpp): images uint8 planar, activations per image
// channel-major (c, y, x), conv weights (f, c, ky, kx), FC weights (o, c*16 + y*4 + x).
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/kernels/offload/layer_regions.hpp"
#include "common/network_spec.hpp"

namespace cnn::openacc {

// The layer-wise regions (offload::LayerRegions), one step per thesis layer: each output value is one
// iteration of a gang-worker-vector loop over (image, filter, y, x).
extern const offload::LayerRegions kLayerRegions;

// Fused steps: conv + ReLU + 2x2 max-pool in one region, each iteration computing the four conv outputs
// under one pooled pixel from a 6x6 input patch held in registers; FC + softmax in one region, an image
// per iteration. The flat mapping computes kFilterGroup filters per iteration from the same patch (the
// choice is measured in backends/openacc/README.md); the gang mapping one.
inline constexpr int kFilterGroup = 4;
enum class Mapping {
  flat,         // gang worker vector over the collapsed (image, filter group, y, x) space
  gang_images,  // a gang per image, workers x vector lanes over (filter, y, x)
};
void conv_relu_pool(const std::uint8_t* in, int n, const ConvSpec& s, const float* w, const float* b, float* out,
                    Mapping m);
void conv_relu_pool(const float* in, int n, const ConvSpec& s, const float* w, const float* b, float* out,
                    Mapping m);
void fc_softmax(const float* in, int n, const float* w, const float* b, float* probs);

}  // namespace cnn::openacc
