// CIFAR-10 images in the official binary format: records of 1 label byte + 3072 pixel bytes (planar R, G, B).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/network_spec.hpp"

namespace cnn {

inline constexpr std::size_t kRecordBytes = 1 + kImageBytes;
// A larger file is not a CIFAR-10 batch (official: 10000 records, 30 MiB); refusing it up front avoids
// reading gigabytes of the wrong file into memory.
inline constexpr std::uintmax_t kMaxBatchFileBytes = std::uintmax_t(1) << 30;

struct Dataset {
  std::vector<std::uint8_t> pixels;  // size() * kImageBytes, image after image
  std::vector<std::uint8_t> labels;
  std::vector<std::string> sources;  // the files read, in order

  std::size_t size() const { return labels.size(); }
  const std::uint8_t* image(std::size_t i) const { return pixels.data() + i * kImageBytes; }
};

// Each path is a batch file or a directory; a directory contributes its data_batch_*.bin files in name
// order (the 50000-image training set), or, if it has none, every *.bin file in it.
// Throws InputError naming the file for anything missing, empty, truncated or with a label > 9.
Dataset load_cifar10(const std::vector<std::filesystem::path>& paths);

// Parses one file's bytes (also the fuzzing entry point). `name` is used in error messages.
void parse_cifar10(const std::uint8_t* bytes, std::size_t size, const std::string& name, Dataset& into);

// The first n images, cycling through the data set when n > size(): image i is image i % size().
std::vector<std::uint8_t> cycled_pixels(const Dataset& data, std::size_t n);

}  // namespace cnn
