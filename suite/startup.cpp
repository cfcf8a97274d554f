#include "suite/startup.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "suite/cli.hpp"

namespace cnn {
namespace {

bool g_stdout_closed = false;  // constant-initialised, so no constructor resets what preinit set

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

enum class Count { ok, malformed, too_many };

// One decimal item between `p` and `end`, spaces around it allowed; saturates past the limit.
Count check_item(const char* p, const char* end) {
  while (p < end && is_space(*p)) ++p;
  while (end > p && is_space(end[-1])) --end;
  if (p == end) return Count::malformed;
  long value = 0;
  for (; p < end; ++p) {
    if (!is_digit(*p)) return Count::malformed;
    value = value > kMaxThreads ? value : value * 10 + (*p - '0');
  }
  return value == 0 ? Count::malformed : value > kMaxThreads ? Count::too_many : Count::ok;
}

// libgomp's syntax: positive integers separated by commas, one per nesting level.
Count check_list(const char* value) {
  Count worst = Count::ok;
  for (const char* p = value;;) {
    const char* comma = std::strchr(p, ',');
    const char* end = comma ? comma : p + std::strlen(p);
    const Count c = check_item(p, end);
    if (c == Count::malformed) return c;
    if (c == Count::too_many) worst = c;
    if (!comma) return worst;
    p = comma + 1;
  }
}

// `value` quoted, control bytes and non-ASCII escaped as \xNN (one line whatever the bytes), cut at 60.
void quote(const char* value, char* out, std::size_t size) {
  std::size_t o = 0;
  for (const char* p = value; *p && o + 8 < size; ++p) {
    if (p - value == 60) {
      std::memcpy(out + o, "...", 3);
      o += 3;
      break;
    }
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c < 0x20 || c >= 0x7f) o += std::size_t(std::snprintf(out + o, size - o, "\\x%02X", c));
    else out[o++] = char(c);
  }
  out[o] = '\0';
}

bool named(const char* entry, const char* name, const char** value) {
  const std::size_t n = std::strlen(name);
  if (std::strncmp(entry, name, n) != 0) return false;
  const char* eq = std::strchr(entry + n, '=');
  // OMP_NUM_THREADS itself, or a suffixed form such as OMP_NUM_THREADS_DEV_1
  if (!eq || !(eq == entry + n || (entry[n] == '_' && std::strcmp(name, "OMP_NUM_THREADS") == 0))) return false;
  *value = eq + 1;
  return true;
}

}  // namespace

void reopen_closed_standard_streams() noexcept {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1) continue;
    if (fd == STDOUT_FILENO) g_stdout_closed = true;
    const int null = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);  // the lowest free number: fd
    if (null >= 0 && null != fd) {
      ::dup2(null, fd);
      ::close(null);
    }
  }
}

bool stdout_closed_at_start() { return g_stdout_closed; }

bool thread_environment_error(const char* const* envp, char* message, std::size_t size) noexcept {
  for (const char* const* e = envp; e && *e; ++e) {
    const char* value = nullptr;
    Count c = Count::ok;
    if (named(*e, "OMP_NUM_THREADS", &value)) c = check_list(value);
    else if (named(*e, "KOKKOS_NUM_THREADS", &value) && check_item(value, value + std::strlen(value)) == Count::too_many)
      c = Count::too_many;  // not a number: the Kokkos backend's own check says so
    if (c == Count::ok) continue;
    char quoted[256];
    quote(value, quoted, sizeof quoted);
    const int name_length = int(value - 1 - *e);
    if (c == Count::too_many)
      std::snprintf(message, size, "suite: error: %.*s='%s': more than %d threads (the limit of --threads)\n",
                    name_length, *e, quoted, kMaxThreads);
    else
      std::snprintf(message, size, "suite: error: %.*s='%s': not a positive thread count or comma-separated list of them\n",
                    name_length, *e, quoted);
    return true;
  }
  return false;
}

}  // namespace cnn
