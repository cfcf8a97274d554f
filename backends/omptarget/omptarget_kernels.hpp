// The OpenMP target regions. Each maps the arrays it touches (map(to:) inputs, map(from:) outputs): when
// the caller has made them resident (`target enter data`) the map finds them present and copies nothing
// (omptarget:resident, omptarget:flat); otherwise every call copies (omptarget:naive). On the host
// fallback the maps are no-ops. Loop bodies are the shared device functions of
// common/kernels/offload/patch_conv.hpp (also used by openacc); layouts are the canonical ones.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/kernels/offload/layer_regions.hpp"
#include "common/network_spec.hpp"

namespace cnn::omptarget {

// The layer-wise regions (offload::LayerRegions), one `target teams distribute parallel for` per thesis layer
// over every output value.
extern const offload::LayerRegions kLayerRegions;

// Fused: conv + ReLU + 2x2 max pool in one region, each iteration computing the four conv outputs under
// one pooled pixel for all of the layer's filters from a 6x6 input patch read a row at a time (openacc:flat's
// step, which takes 4 filters per iteration); FC + softmax in one region, an image per iteration.
// `parallel for simd` over one flat loop: GCC maps OpenMP threads to warps and only (uncollapsed) simd
// loops to the 32 lanes of a warp.
void conv_relu_pool(const std::uint8_t* in, int n, const ConvSpec& s, const float* w, const float* b, float* out);
void conv_relu_pool(const float* in, int n, const ConvSpec& s, const float* w, const float* b, float* out);
void fc_softmax(const float* in, int n, const float* w, const float* b, float* probs);

}  // namespace cnn::omptarget
