// libFuzzer target: the ConvNetJS weight parsers must either produce a layer of exactly the network's
// shape with finite values, or throw InputError. The first byte picks the layer.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/errors.hpp"
#include "common/network.hpp"

namespace {
template <typename Layer>
void check(const Layer& l, std::size_t weights, std::size_t biases) {
  if (l.weights64.size() != weights || l.bias64.size() != biases || l.weights.size() != weights) std::abort();
  for (double v : l.weights64)
    if (!std::isfinite(v)) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    switch (data[0] % 4) {
      case 0: check(cnn::parse_conv_weights(text, cnn::kConv1, "fuzz"), cnn::kConv1.weight_count(), 16); break;
      case 1: check(cnn::parse_conv_weights(text, cnn::kConv2, "fuzz"), cnn::kConv2.weight_count(), 20); break;
      case 2: check(cnn::parse_conv_weights(text, cnn::kConv3, "fuzz"), cnn::kConv3.weight_count(), 20); break;
      default: check(cnn::parse_fc_weights(text, cnn::kFc, "fuzz"), 3200, 10); break;
    }
  } catch (const cnn::InputError&) {
  }
  return 0;
}
