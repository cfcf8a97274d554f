#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/errors.hpp"

namespace cnn {
namespace fs = std::filesystem;

namespace {
// The one temporary file in flight, so that a signal handler can unlink it (async-signal-safe: a fixed
// buffer and unlink only).
char g_pending[4096];
std::atomic<bool> g_has_pending{false};

[[noreturn]] void fail(const fs::path& path, const std::string& what) {
  throw SuiteError(kExitOther, path.string() + ": " + what);
}
}  // namespace

void remove_pending_temporaries() {
  if (g_has_pending.exchange(false)) ::unlink(g_pending);
}

void write_file_atomically(const fs::path& path, const std::string& content) {
  if (path == "/dev/stdout" || path == "-") {
    if (std::fwrite(content.data(), 1, content.size(), stdout) != content.size() || std::fflush(stdout) != 0)
      fail(path, "cannot write to standard output");
    return;
  }
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail(path, "directory '" + dir.string() + "' does not exist");
  if (fs::is_directory(path, ec)) fail(path, "is a directory");

  const bool special = fs::exists(path, ec) && !fs::is_regular_file(path, ec);  // /dev/null, /dev/full
  const std::string tmp = special ? path.string() : path.string() + ".tmp." + std::to_string(::getpid());
  if (!special && tmp.size() < sizeof g_pending) {
    std::memcpy(g_pending, tmp.c_str(), tmp.size() + 1);
    g_has_pending = true;
  }
  const int fd = ::open(tmp.c_str(), special ? O_WRONLY : (O_WRONLY | O_CREAT | O_TRUNC), 0644);
  if (fd < 0) {
    g_has_pending = false;
    fail(path, std::string("cannot create: ") + std::strerror(errno));
  }
  std::size_t done = 0;
  int err = 0;
  while (done < content.size()) {
    const ssize_t w = ::write(fd, content.data() + done, content.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    done += std::size_t(w);
  }
  if (!err && !special && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && !err) err = errno;
  if (!err && !special && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err) {
    if (!special) ::unlink(tmp.c_str());
    g_has_pending = false;
    fail(path, std::string("cannot write: ") + std::strerror(err));
  }
  g_has_pending = false;
}

void write_npy(const fs::path& path, const float* data, std::size_t rows, std::size_t cols) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                       std::to_string(cols) + "), }";
  // magic(6) + version(2) + header length(2) + header, padded with spaces to a multiple of 64, ending '\n'.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(char(header.size() & 0xff));
  out.push_back(char(header.size() >> 8));
  out += header;
  out.append(reinterpret_cast<const char*>(data), rows * cols * sizeof(float));  // x86/ARM: little-endian
  write_file_atomically(path, out);
}

}  // namespace cnn
