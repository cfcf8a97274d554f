#include "common/network.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "common/errors.hpp"
#include "common/text.hpp"

namespace cnn {
namespace fs = std::filesystem;

std::string read_text_file(const fs::path& file, std::size_t max_bytes) {
  const std::string name = display(file);
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    throw InputError(name + (errno == ENOENT ? ": no such file" : ": cannot read (" + std::string(std::strerror(errno)) + ")"));
  }
  if (!S_ISREG(st.st_mode)) throw InputError(name + ": not a regular file");
  const auto too_big = [&](std::uintmax_t size) {
    return InputError(name + ": " + std::to_string(size) + " bytes, more than the " + std::to_string(max_bytes >> 10) +
                      " KiB limit for a weight file");
  };
  if (std::uintmax_t(st.st_size) > max_bytes) throw too_big(std::uintmax_t(st.st_size));
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(name + ": cannot open for reading");
  // One byte past the limit tells a file that grew since stat() from one that fits.
  std::string text(max_bytes + 1, '\0');
  in.read(text.data(), std::streamsize(text.size()));
  text.resize(std::size_t(in.gcount()));
  if (text.size() > max_bytes) throw too_big(text.size());
  return text;
}

std::vector<double> parse_numbers(std::string_view text, const std::string& name) {
  std::vector<double> values;
  std::string token;
  // A UTF-8 byte-order mark (an editor's) is no part of the first number: it read "value 1 '5' is not a number".
  std::size_t i = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  auto is_space = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; };
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    if (i == text.size()) break;
    std::size_t j = i;
    while (j < text.size() && !is_space(text[j])) ++j;
    token.assign(text.substr(i, j - i));
    char* end = nullptr;
    const double v = std::strtod(token.c_str(), &end);
    const std::string where = name + ": value " + std::to_string(values.size() + 1);
    if (end != token.c_str() + token.size() || token.empty()) {
      throw InputError(where + " '" + display(token.substr(0, 32)) + "' is not a number");
    }
    if (!std::isfinite(v)) {
      throw InputError(where + " '" + display(token.substr(0, 32)) + "' is not finite");
    }
    if (std::fabs(v) > FLT_MAX) {  // finite in FP64, but Inf once the backends convert it to float
      throw InputError(where + " '" + display(token.substr(0, 32)) + "' is outside the float32 range");
    }
    values.push_back(v);
    i = j;
  }
  return values;
}

namespace {

int header_int(const std::vector<double>& v, std::size_t i, const std::string& name) {
  if (i >= v.size()) throw InputError(name + ": header is incomplete");
  if (v[i] != std::floor(v[i]) || v[i] < 1 || v[i] > 1e6) {
    throw InputError(name + ": header field " + std::to_string(i + 1) + " is not a positive integer");
  }
  return static_cast<int>(v[i]);
}

void check_count(std::size_t got, std::size_t want, const std::string& name) {
  if (got != want) {
    throw InputError(name + ": expected " + std::to_string(want) + " values after the header, found " +
                     std::to_string(got));
  }
}

template <typename Layer>
void fill_float(Layer& layer) {
  layer.weights.assign(layer.weights64.begin(), layer.weights64.end());
  layer.bias.assign(layer.bias64.begin(), layer.bias64.end());
}

}  // namespace

ConvLayer parse_conv_weights(std::string_view text, const ConvSpec& spec, const std::string& name) {
  const auto v = parse_numbers(text, name);
  if (v.empty()) throw InputError(name + ": empty file, expected a ConvNetJS conv weight file");
  const int fw = header_int(v, 0, name), fh = header_int(v, 1, name);
  const int depth = header_int(v, 2, name), filters = header_int(v, 3, name);
  if (fw != spec.kernel || fh != spec.kernel || depth != spec.in_channels || filters != spec.filters) {
    throw InputError(name + ": header '" + std::to_string(fw) + " " + std::to_string(fh) + " " +
                     std::to_string(depth) + " " + std::to_string(filters) + "' does not match the network (" +
                     std::to_string(spec.kernel) + " " + std::to_string(spec.kernel) + " " +
                     std::to_string(spec.in_channels) + " " + std::to_string(spec.filters) + ")");
  }
  const std::size_t n = spec.weight_count();
  check_count(v.size() - 4, n + spec.filters, name);
  ConvLayer layer{spec, std::vector<double>(n), {}, {}, {}};
  const int K = spec.kernel, C = spec.in_channels;
  std::size_t src = 4;
  for (int f = 0; f < spec.filters; ++f)
    for (int x = 0; x < K; ++x)
      for (int y = 0; y < K; ++y)
        for (int c = 0; c < C; ++c) layer.weights64[((std::size_t(f) * C + c) * K + y) * K + x] = v[src++];
  layer.bias64.assign(v.begin() + src, v.end());
  fill_float(layer);
  return layer;
}

FcLayer parse_fc_weights(std::string_view text, const FcSpec& spec, const std::string& name) {
  const auto v = parse_numbers(text, name);
  if (v.empty()) throw InputError(name + ": empty file, expected a ConvNetJS FC weight file");
  const int nin = header_int(v, 0, name), nout = header_int(v, 1, name);
  if (nin != spec.inputs() || nout != spec.outputs) {
    throw InputError(name + ": header '" + std::to_string(nin) + " " + std::to_string(nout) +
                     "' does not match the network (" + std::to_string(spec.inputs()) + " " +
                     std::to_string(spec.outputs) + ")");
  }
  const std::size_t n = std::size_t(nin) * nout;
  check_count(v.size() - 2, n + nout, name);
  FcLayer layer{spec, std::vector<double>(n), {}, {}, {}};
  const int S = spec.in_side, C = spec.in_channels;
  std::size_t src = 2;
  for (int o = 0; o < nout; ++o)
    for (int y = 0; y < S; ++y)
      for (int x = 0; x < S; ++x)
        for (int c = 0; c < C; ++c) layer.weights64[std::size_t(o) * nin + (c * S + y) * S + x] = v[src++];
  layer.bias64.assign(v.begin() + src, v.end());
  fill_float(layer);
  return layer;
}

Network load_network(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(display(dir) + ": weight folder not found");
  auto conv = [&](const ConvSpec& s) {
    const fs::path f = dir / s.weight_file;
    return parse_conv_weights(read_text_file(f), s, display(f));
  };
  Network net{conv(kConv1), conv(kConv2), conv(kConv3), {}, display(dir)};
  const fs::path fc = dir / kFc.weight_file;
  net.fc = parse_fc_weights(read_text_file(fc), kFc, display(fc));
  return net;
}

}  // namespace cnn

namespace cnn {
std::vector<fs::path> weight_files(const fs::path& dir) {
  return {dir / kConv1.weight_file, dir / kConv2.weight_file, dir / kConv3.weight_file, dir / kFc.weight_file};
}
}  // namespace cnn
