// The thesis' layer-by-layer compute regions, one per layer over `n` images, as a table of functions: each
// directive-based backend (GCC offload: OpenACC, OpenMP target) writes them with its own directives and
// exports one table, which offload::LayerwiseSession (offload_variants.hpp) calls through. One declaration
// of the set for both backends; the loops themselves differ only in their directives.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/network_spec.hpp"

namespace cnn::offload {

struct LayerRegions {
  using ConvPixels = void (*)(const std::uint8_t* in, int n, const ConvSpec& s, const float* w, const float* b,
                              float* out);
  using ConvActivations = void (*)(const float* in, int n, const ConvSpec& s, const float* w, const float* b,
                                   float* out);
  ConvPixels conv_pixels;                // conv1 on uint8 pixels, normalising on the fly
  ConvActivations conv_activations;      // conv2, conv3 on float activations
  void (*relu)(float* a, std::size_t count);
  void (*pool)(const float* in, int n, const ConvSpec& s, float* out);
  void (*fc)(const float* in, int n, const float* w, const float* b, float* out);
  void (*softmax)(float* a, int n);

  void conv(const std::uint8_t* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) const {
    conv_pixels(in, n, s, w, b, out);
  }
  void conv(const float* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) const {
    conv_activations(in, n, s, w, b, out);
  }
};

}  // namespace cnn::offload
