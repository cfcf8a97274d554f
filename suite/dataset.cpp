#include "suite/dataset.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <set>
#include <utility>

#include "common/errors.hpp"
#include "common/text.hpp"

namespace cnn {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void input_error(const fs::path& p, const std::string& what) {
  throw InputError(display(p) + ": " + what);
}

// "data_batch_2" < "data_batch_10": runs of digits compare as numbers.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      const std::string_view da = std::string_view(a).substr(i, ie - i), db = std::string_view(b).substr(j, je - j);
      const auto strip = [](std::string_view d) { return d.substr(std::min(d.find_first_not_of('0'), d.size())); };
      const std::string_view na = strip(da), nb = strip(db);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie, j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i, ++j;
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return a < b;  // equal as numbers ("01", "1"): the names' own order, never the directory's
}

std::vector<fs::path> batch_files_in(const fs::path& dir) {
  std::vector<fs::path> batches, any_bin;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;  // a dangling link or a symlink loop is not a batch file: skip it
    if (!it->is_regular_file(type_ec) || it->path().extension() != ".bin") continue;
    any_bin.push_back(it->path());
    if (it->path().filename().string().rfind("data_batch_", 0) == 0) batches.push_back(it->path());
  }
  if (ec) input_error(dir, "cannot read this directory (" + ec.message() + ")");
  std::vector<fs::path>& chosen = batches.empty() ? any_bin : batches;
  std::sort(chosen.begin(), chosen.end(),
            [](const fs::path& a, const fs::path& b) { return natural_less(a.filename().string(), b.filename().string()); });
  if (chosen.empty()) input_error(dir, "no CIFAR-10 .bin files in this directory");
  return chosen;
}

// Reads bytes [0, want) of a file that stat() said holds `size` bytes; a file that shrank (or that grows:
// nothing past `want` is read) cannot make the read unbounded.
std::vector<std::uint8_t> read_prefix(const fs::path& file, std::size_t want) {
  std::ifstream in(file, std::ios::binary);
  if (!in) input_error(file, std::string("cannot open for reading (") + std::strerror(errno) + ")");
  std::vector<std::uint8_t> bytes(want);
  in.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(want));
  if (std::size_t(in.gcount()) != want) {
    input_error(file, "changed while being read (expected " + std::to_string(want) + " bytes, read " +
                          std::to_string(in.gcount()) + ")");
  }
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

std::vector<fs::path> cifar10_files(const std::vector<fs::path>& paths) {
  if (paths.empty()) throw InputError("no CIFAR-10 data given");
  std::vector<fs::path> files;
  std::set<std::pair<dev_t, ino_t>> seen;
  for (const fs::path& p : paths) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) {
      if (errno == ENOENT) input_error(p, "no such file");
      input_error(p, std::string("cannot read (") + std::strerror(errno) + ")");
    }
    const std::vector<fs::path> found = S_ISDIR(st.st_mode) ? batch_files_in(p) : std::vector<fs::path>{p};
    for (const fs::path& f : found) {
      struct stat fst {};
      if (::stat(f.c_str(), &fst) == 0 && !seen.insert({fst.st_dev, fst.st_ino}).second) continue;
      files.push_back(f);
    }
  }
  return files;
}

Dataset load_cifar10(const std::vector<fs::path>& paths, std::size_t max_images) {
  Dataset data;
  for (const fs::path& f : cifar10_files(paths)) {
    if (max_images > 0 && data.size() >= max_images) break;
    struct stat st {};
    if (::stat(f.c_str(), &st) != 0) input_error(f, "no such file");
    if (!S_ISREG(st.st_mode)) input_error(f, "not a regular file");
    const auto size = std::uintmax_t(st.st_size);
    if (size > kMaxBatchFileBytes) {
      input_error(f, std::to_string(size) + " bytes, more than the " + std::to_string(kMaxBatchFileBytes >> 20) +
                         " MiB limit for one CIFAR-10 batch file (the official ones are 30 MiB)");
    }
    if (size == 0 || size % kRecordBytes != 0) {
      parse_cifar10(nullptr, std::size_t(size), display(f), data);  // throws its empty/truncated message unread
    }
    std::size_t records = std::size_t(size) / kRecordBytes;
    if (max_images > 0) records = std::min(records, max_images - data.size());
    const auto bytes = read_prefix(f, records * kRecordBytes);
    parse_cifar10(bytes.data(), bytes.size(), display(f), data);
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
