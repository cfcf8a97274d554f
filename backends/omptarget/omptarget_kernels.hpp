// The OpenMP target regions. Each maps the arrays it touches (map(to:) inputs, map(from:) outputs): when
// the caller has made them resident (`target enter data`) the map finds them present and copies nothing
// (omptarget:resident, omptarget:flat); otherwise every call copies (omptarget:naive). On the host
// fallback the maps are no-ops. Loop bodies are the shared device functions of
// common/kernels/offload/patch_conv.hpp (also used by openacc); layouts are the canonical ones.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/network_spec.hpp"

namespace cnn::omptarget {

// One region per thesis layer over `n` images, `target teams distribute parallel for` over every output
// value. Conv reads uint8 pixels (conv1, normalising on the fly) or floats.
void conv_layer(const std::uint8_t* in, int n, const ConvSpec& s, const float* w, const float* b, float* out);
void conv_layer(const float* in, int n, const ConvSpec& s, const float* w, const float* b, float* out);
void relu_layer(float* a, std::size_t count);
void pool_layer(const float* in, int n, const ConvSpec& s, float* out);
void fc_layer(const float* in, int n, const float* w, const float* b, float* out);
void softmax_layer(float* a, int n);

// Fused: conv + ReLU + 2x2 max pool in one region, each iteration computing the four conv outputs under
// one pooled pixel for all of the layer's filters from a 6x6 input patch read a row at a time (openacc:flat's
// step, which takes 4 filters per iteration); FC + softmax in one region, an image per iteration.
// `parallel for simd` over one flat loop: GCC maps OpenMP threads to warps and only (uncollapsed) simd
// loops to the 32 lanes of a warp.
void conv_relu_pool(const std::uint8_t* in, int n, const ConvSpec& s, const float* w, const float* b, float* out);
void conv_relu_pool(const float* in, int n, const ConvSpec& s, const float* w, const float* b, float* out);
void fc_softmax(const float* in, int n, const float* w, const float* b, float* probs);

}  // namespace cnn::omptarget
