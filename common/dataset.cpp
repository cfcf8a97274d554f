#include "common/dataset.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include "common/errors.hpp"

namespace cnn {
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> batch_files_in(const fs::path& dir) {
  std::vector<fs::path> batches, any_bin;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".bin") continue;
    any_bin.push_back(entry.path());
    if (name.rfind("data_batch_", 0) == 0) batches.push_back(entry.path());
  }
  std::vector<fs::path>& chosen = batches.empty() ? any_bin : batches;
  std::sort(chosen.begin(), chosen.end());
  if (chosen.empty()) throw InputError(dir.string() + ": no CIFAR-10 .bin files in this directory");
  return chosen;
}

std::vector<std::uint8_t> read_file(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) throw InputError(file.string() + ": no such file");
  if (!fs::is_regular_file(file, ec)) throw InputError(file.string() + ": not a regular file");
  const auto size = fs::file_size(file, ec);
  if (!ec && size > kMaxBatchFileBytes) {
    throw InputError(file.string() + ": " + std::to_string(size) + " bytes, more than the " +
                     std::to_string(kMaxBatchFileBytes >> 20) + " MiB limit for one CIFAR-10 batch file " +
                     "(the official ones are 30 MiB)");
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string() + ": cannot open for reading");
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError(file.string() + ": read error");
  return bytes;
}

}  // namespace

void parse_cifar10(const std::uint8_t* bytes, std::size_t size, const std::string& name, Dataset& into) {
  if (size == 0) throw InputError(name + ": empty file, expected CIFAR-10 records of 3073 bytes");
  if (size % kRecordBytes != 0) {
    throw InputError(name + ": size " + std::to_string(size) + " is not a multiple of the 3073-byte " +
                     "CIFAR-10 record (truncated or not a CIFAR-10 batch file)");
  }
  const std::size_t n = size / kRecordBytes;
  const std::size_t first = into.size();
  into.labels.reserve(first + n);
  into.pixels.resize((first + n) * kImageBytes);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t* rec = bytes + i * kRecordBytes;
    if (rec[0] >= kClasses) {
      into.pixels.resize(first * kImageBytes);
      into.labels.resize(first);
      throw InputError(name + ": record " + std::to_string(i) + " has label " + std::to_string(rec[0]) +
                       ", CIFAR-10 labels are 0..9");
    }
    into.labels.push_back(rec[0]);
    std::memcpy(into.pixels.data() + (first + i) * kImageBytes, rec + 1, kImageBytes);
  }
  into.sources.push_back(name);
}

Dataset load_cifar10(const std::vector<fs::path>& paths) {
  if (paths.empty()) throw InputError("no CIFAR-10 data given");
  std::vector<fs::path> files;
  for (const fs::path& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (auto& f : batch_files_in(p)) files.push_back(f);
    } else {
      files.push_back(p);
    }
  }
  Dataset data;
  for (const fs::path& f : files) {
    const auto bytes = read_file(f);
    parse_cifar10(bytes.data(), bytes.size(), f.string(), data);
  }
  return data;
}

std::vector<std::uint8_t> cycled_pixels(const Dataset& data, std::size_t n) {
  std::vector<std::uint8_t> out(n * kImageBytes);
  const std::size_t d = data.size();
  for (std::size_t done = 0; done < n;) {
    const std::size_t chunk = std::min(d, n - done);
    std::memcpy(out.data() + done * kImageBytes, data.pixels.data(), chunk * kImageBytes);
    done += chunk;
  }
  return out;
}

}  // namespace cnn
