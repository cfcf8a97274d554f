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

// The files that these paths name, without reading them: a path is a batch file or a directory, and a
// directory contributes its data_batch_*.bin files in natural order (data_batch_2 before data_batch_10),
// or, if it has none, every *.bin file in it. A file named twice (the same device and inode, also through
// a link) counts once. Throws InputError for a missing path, a directory that cannot be read or holds no
// .bin file.
std::vector<std::filesystem::path> cifar10_files(const std::vector<std::filesystem::path>& paths);

// Loads the images of cifar10_files(paths), reading no more than `max_images` records (0: all): a run
// never reads more than it needs, whatever the files' sizes. Throws InputError naming the file for
// anything missing, empty, truncated, over kMaxBatchFileBytes, changed while read, or with a label > 9.
Dataset load_cifar10(const std::vector<std::filesystem::path>& paths, std::size_t max_images = 0);

// Parses one file's bytes (also the fuzzing entry point). `name` is used in error messages.
void parse_cifar10(const std::uint8_t* bytes, std::size_t size, const std::string& name, Dataset& into);

// The first n images, cycling through the data set when n > size(): image i is image i % size().
std::vector<std::uint8_t> cycled_pixels(const Dataset& data, std::size_t n);

}  // namespace cnn
