#include "suite/thread_stacks.hpp"

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <string>

#include "common/errors.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace cnn {
namespace {

constexpr std::size_t kMiB = std::size_t(1) << 20;
// What the process allocates between the check and the threads' start (libgomp's team, a few KiB a thread).
// The stacks are the rest: without a margin, under `ulimit -v 262144`, 24 threads of 8 MiB ran and 25 failed
// in libgomp, as computed.
constexpr std::size_t kMargin = 4 * kMiB;

std::size_t page_size() {
  const long page = ::sysconf(_SC_PAGESIZE);
  return page > 0 ? std::size_t(page) : 4096;
}

// What a new thread gets without a stack size of its own: glibc's default, from RLIMIT_STACK at start-up.
std::size_t glibc_default_stack() {
  pthread_attr_t attr;
  std::size_t size = 0;
  if (::pthread_getattr_default_np(&attr) == 0) {
    ::pthread_attr_getstacksize(&attr, &size);
    ::pthread_attr_destroy(&attr);
  }
  return size > 0 ? size : 8 * kMiB;
}

// RAM plus swap (bytes) where Linux overcommits heuristically (vm.overcommit_memory 0, its default), which
// refuses any one mapping larger than that; 0 elsewhere or where /proc cannot be read.
std::size_t heuristic_overcommit_ceiling() {
  std::ifstream mode("/proc/sys/vm/overcommit_memory");
  int m = -1;
  if (!(mode >> m) || m != 0) return 0;
  std::ifstream info("/proc/meminfo");
  std::string key;
  std::size_t kib = 0, total = 0;
  std::string unit;
  while (info >> key >> kib >> unit)
    if (key == "MemTotal:" || key == "SwapTotal:") total += kib * 1024;
  return total;
}

}  // namespace

std::size_t address_space_in_use() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  return statm >> pages ? pages * page_size() : 0;
}

std::string size_text(std::size_t bytes) {
  if (bytes % kMiB == 0 || bytes >= 64 * kMiB) return std::to_string(bytes / kMiB) + " MiB";
  if (bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KiB";
  return std::to_string(bytes) + " bytes";
}

std::size_t threads_that_fit(std::size_t limit, std::size_t mapped, std::size_t stack, std::size_t page) {
  // Rounded to pages, plus the guard page; a stack near the limit (OMP_STACKSIZE=-1B wraps) counts as all of it.
  const std::size_t per_thread = stack >= limit - std::min(limit, 2 * page)
                                     ? std::max<std::size_t>(limit, 1)
                                     : (stack + page - 1) / page * page + page;
  const std::size_t room = limit > mapped + kMargin ? limit - mapped - kMargin : 0;
  return 1 + room / per_thread;  // the first thread runs on the process's own stack
}

int openmp_team_size(int requested) {
#ifdef _OPENMP
  const int wanted = requested > 0 ? requested : omp_get_max_threads();
  return std::max(1, std::min(wanted, omp_get_thread_limit()));
#else
  (void)requested;
  return 1;
#endif
}

std::optional<std::size_t> parse_openmp_stacksize(const char* value) {
  const char* p = value;
  while (std::isspace(static_cast<unsigned char>(*p))) ++p;
  if (*p == '\0') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const unsigned long number = std::strtoul(p, &end, 10);  // as libgomp: "-1" wraps, and is then too large
  if (errno != 0) return std::nullopt;
  while (std::isspace(static_cast<unsigned char>(*end))) ++end;
  unsigned shift = 10;
  if (*end != '\0') {
    switch (std::tolower(static_cast<unsigned char>(*end))) {
      case 'b': shift = 0; break;
      case 'k': shift = 10; break;
      case 'm': shift = 20; break;
      case 'g': shift = 30; break;
      default: return std::nullopt;
    }
    ++end;
    while (std::isspace(static_cast<unsigned char>(*end))) ++end;
    if (*end != '\0') return std::nullopt;
  }
  if (((number << shift) >> shift) != number) return std::nullopt;
  return std::size_t(number) << shift;
}

std::size_t openmp_thread_stack_size() {
  // libgomp reads OMP_STACKSIZE, and GOMP_STACKSIZE only when that is absent or invalid; a size below
  // glibc's minimum is refused by pthread_attr_setstacksize, and the default stays.
  std::optional<std::size_t> chosen;
  for (const char* name : {"OMP_STACKSIZE", "GOMP_STACKSIZE"}) {
    const char* value = std::getenv(name);
    if (value && (chosen = parse_openmp_stacksize(value))) break;
  }
  return chosen && *chosen >= std::size_t(PTHREAD_STACK_MIN) ? *chosen : glibc_default_stack();
}

void require_room_for_thread_stacks(int threads) {
  if (threads <= 1) return;
  struct rlimit limit {};
  // Threads count against the user's process limit (`ulimit -u`), which root is not held to.
  if (::geteuid() != 0 && ::getrlimit(RLIMIT_NPROC, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      std::size_t(threads) > limit.rlim_cur) {
    throw UsageError("the process limit (ulimit -u " + std::to_string(limit.rlim_cur) + ") cannot hold " +
                     std::to_string(threads) + " threads; use --threads " + std::to_string(limit.rlim_cur / 2) +
                     " or fewer, or a higher ulimit -u");
  }
  const std::size_t stack = openmp_thread_stack_size();
  if (const std::size_t ceiling = heuristic_overcommit_ceiling(); ceiling > 0 && stack > ceiling) {
    throw UsageError("a thread stack of " + size_text(stack) + " (OMP_STACKSIZE or GOMP_STACKSIZE) is more than this "
                     "machine's memory and swap (" + size_text(ceiling) + "), which Linux refuses to map; use a "
                     "smaller one");
  }
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
  const std::size_t cap = limit.rlim_cur, used = address_space_in_use();
  const std::size_t fit = threads_that_fit(cap, used, stack, page_size());
  if (fit >= std::size_t(threads)) return;
  throw UsageError("the address-space limit (ulimit -v " + std::to_string(cap / 1024) + ": " + size_text(cap) +
                   ", " + size_text(used) + " of it in use) cannot hold " + std::to_string(threads) +
                   " threads' stacks of " + size_text(stack) + "; use --threads " + std::to_string(fit) +
                   " or fewer, a smaller OMP_STACKSIZE, or a higher ulimit -v");
}

}  // namespace cnn
