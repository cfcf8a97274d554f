#include "suite/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/errors.hpp"
#include "common/text.hpp"

namespace cnn {
namespace fs = std::filesystem;

namespace {
// The one temporary file in flight, so that a signal handler can unlink it (async-signal-safe: a fixed
// buffer and unlink only). mkstemp writes its name straight into this buffer.
char g_pending[4096];
std::atomic<bool> g_has_pending{false};

[[noreturn]] void fail(const fs::path& path, const std::string& what) {
  throw SuiteError(kExitOther, display(path) + ": " + what);
}

// A short name that does not depend on the target's: a 250-character report name still leaves room.
std::string temporary_template(const fs::path& dir) { return (dir / ".suite-XXXXXX.tmp").string(); }

// Creates the temporary file in g_pending; returns its descriptor or -1 with errno set.
int create_pending(const fs::path& dir) {
  const std::string tmpl = temporary_template(dir);
  if (tmpl.size() >= sizeof g_pending) {
    errno = ENAMETOOLONG;
    return -1;
  }
  std::memcpy(g_pending, tmpl.c_str(), tmpl.size() + 1);
  g_has_pending = true;  // before mkstemp: a signal in between unlinks a name that does not exist yet
  const int fd = ::mkstemps(g_pending, 4);
  if (fd < 0) g_has_pending = false;
  return fd;
}

void drop_pending() {
  ::unlink(g_pending);
  g_has_pending = false;
}

int write_all(int fd, const std::string& content) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t w = ::write(fd, content.data() + done, content.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += std::size_t(w);
  }
  return 0;
}

// Links the finished temporary file to `path`, or to "<stem>-N<ext>" when that exists: never replaces.
fs::path link_without_clobbering(const fs::path& path) {
  for (int n = 1; n < 10000; ++n) {
    const fs::path candidate =
        n == 1 ? path
               : path.parent_path() / (path.stem().string() + "-" + std::to_string(n) + path.extension().string());
    if (::link(g_pending, candidate.c_str()) == 0) return candidate;
    if (errno != EEXIST) fail(path, std::string("cannot write: ") + std::strerror(errno));
  }
  fail(path, "cannot write: 10000 files of this name exist already");
}

}  // namespace

bool is_standard_output(const fs::path& path) { return path == "-" || path == "/dev/stdout"; }

fs::path directory_of(const fs::path& path) { return path.has_parent_path() ? path.parent_path() : fs::path("."); }

void remove_pending_temporaries() {
  if (g_has_pending.exchange(false)) ::unlink(g_pending);
}

int probe_temporary_in(const fs::path& dir) {
  const int fd = create_pending(dir);
  if (fd < 0) return errno;
  ::close(fd);
  drop_pending();
  return 0;
}

fs::path write_file_atomically(const fs::path& path, const std::string& content, Publish mode) {
  if (is_standard_output(path)) {
    if (std::fwrite(content.data(), 1, content.size(), stdout) != content.size() || std::fflush(stdout) != 0)
      fail(path, std::string("cannot write to standard output: ") + std::strerror(errno));
    return path;
  }
  const fs::path dir = directory_of(path);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail(path, "directory '" + display(dir) + "' does not exist");
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) fail(path, "is a directory");

  if (fs::is_character_file(st)) {  // /dev/null, /dev/full: nothing to replace, write in place
    const int fd = ::open(path.c_str(), O_WRONLY);
    if (fd < 0) fail(path, std::string("cannot open: ") + std::strerror(errno));
    int err = write_all(fd, content);
    if (::close(fd) != 0 && !err) err = errno;
    if (err) fail(path, std::string("cannot write: ") + std::strerror(err));
    return path;
  }

  const int fd = create_pending(dir);
  if (fd < 0) fail(path, std::string("cannot create a temporary file in '") + display(dir) + "': " + std::strerror(errno));
  int err = write_all(fd, content);
  if (!err && ::fchmod(fd, 0644) != 0) err = errno;  // mkstemp makes 0600; reports are for everyone to read
  if (!err && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && !err) err = errno;
  if (err) {
    drop_pending();
    fail(path, std::string("cannot write: ") + std::strerror(err));
  }
  fs::path written = path;
  if (mode == Publish::no_clobber) {
    try {
      written = link_without_clobbering(path);
    } catch (...) {
      drop_pending();
      throw;
    }
    drop_pending();
  } else if (::rename(g_pending, path.c_str()) != 0) {
    err = errno;
    drop_pending();
    fail(path, std::string("cannot write: ") + std::strerror(err));
  }
  g_has_pending = false;
  return written;
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
