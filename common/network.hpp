// Trained weights in one canonical in-memory form. Backends never read files: any re-layout they want
// happens in their session setup (timed as setup, not as forward).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/network_spec.hpp"

namespace cnn {

struct ConvLayer {
  ConvSpec spec;
  std::vector<double> weights64, bias64;  // as parsed, for the FP64 reference
  std::vector<float> weights, bias;       // weights[((f * C + c) * K + y) * K + x]

  float w(int f, int c, int y, int x) const {
    return weights[((std::size_t(f) * spec.in_channels + c) * spec.kernel + y) * spec.kernel + x];
  }
};

struct FcLayer {
  FcSpec spec;
  std::vector<double> weights64, bias64;
  std::vector<float> weights, bias;  // weights[o * 320 + (c * 4 + y) * 4 + x]: the flatten order of pool3
};

struct Network {
  ConvLayer conv1, conv2, conv3;
  FcLayer fc;
  std::string source;  // the weight folder

  const ConvLayer& conv(int i) const { return i == 0 ? conv1 : i == 1 ? conv2 : conv3; }
};

// Reads the four ConvNetJS weight files of `dir` (names in network_spec.hpp).
// Throws InputError naming the file on anything missing or malformed.
Network load_network(const std::filesystem::path& dir);

// Text parsers (also the fuzzing entry points). Conv files: header `fw fh depth nfilters`, then the
// weights ordered filter, kernel-x, kernel-y, channel (channel fastest), then the biases. FC file:
// header `nin nout`, then the weights ordered output, y, x, channel, then the biases.
ConvLayer parse_conv_weights(std::string_view text, const ConvSpec& spec, const std::string& name);
FcLayer parse_fc_weights(std::string_view text, const FcSpec& spec, const std::string& name);

// Whitespace-separated numbers; throws InputError for non-numbers, NaN or Inf (used by tests too).
std::vector<double> parse_numbers(std::string_view text, const std::string& name);

// The largest weight file is under 256 KiB; a file beyond this limit is not one (and is not read).
inline constexpr std::size_t kMaxWeightFileBytes = std::size_t(16) << 20;

// The whole file, which must be a regular file of at most max_bytes (checked against what was read,
// not only against stat(): a file growing while read is caught too). Throws InputError naming it.
std::string read_text_file(const std::filesystem::path& file, std::size_t max_bytes = kMaxWeightFileBytes);

// The four files load_network(dir) reads, in network order.
std::vector<std::filesystem::path> weight_files(const std::filesystem::path& dir);

}  // namespace cnn
