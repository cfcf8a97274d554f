// The checks that OpenMP's threads fit the limits they meet when libgomp starts them (suite/thread_stacks.hpp):
// libgomp maps a stack for each thread at the first parallel region, and a mapping that fails ends the
// process with libgomp's own two lines.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "suite/thread_stacks.hpp"
#include "tests/test_support.hpp"

namespace cnn::test {
namespace {
namespace fs = std::filesystem;
constexpr std::size_t kMiB = std::size_t(1) << 20;

// The baseline on 20 images, its report to `report`, under the tests' 256 MiB address-space limit, with `env`
// added to the environment and `more` arguments.
CliResult run_in_small_address_space(const fs::path& report, std::vector<std::string> env,
                                     const std::vector<std::string>& more = {}) {
  Launch how = within_small_address_space();
  how.env = std::move(env);
  std::vector<std::string> args = baseline_run(20, report);
  args.insert(args.end(), more.begin(), more.end());
  return run_suite(args, how);
}

// Each OpenMP thread maps a stack (8 MiB by default): when the address-space limit cannot hold them, libgomp
// said "Thread creation failed" and ended the process at the first parallel region, after the inputs were
// read. The suite refuses such a run first, naming what would fit; with OMP_STACKSIZE set, the test does
// not depend on the RLIMIT_STACK it inherits. Under a 256 MiB limit a run needs about 65 MiB besides.
TEST(CliBinary, ThreadStacksBeyondTheAddressSpaceLimitAreRefused) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space";
#endif
  TempDir dir;
  const auto run = [&](std::vector<std::string> env, const std::vector<std::string>& more = {}) {
    return run_in_small_address_space(dir / "r.json", std::move(env), more);
  };
  const std::vector<std::pair<CliResult, std::string>> refused = {
      {run({"OMP_NUM_THREADS=128", "OMP_STACKSIZE=8M"}), "cannot hold 128 threads' stacks of 8 MiB; use --threads "},
      {run({"OMP_NUM_THREADS=2", "OMP_STACKSIZE=8M"}, {"--threads", "128"}), "cannot hold 128 threads' stacks"},
      {run({"OMP_NUM_THREADS=128", "GOMP_STACKSIZE=8192"}), "128 threads' stacks of 8 MiB"},  // K by default
  };
  for (const auto& [r, fragment] : refused) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    expect_one_error_line(r.err, "the address-space limit (ulimit -v 262144: 256 MiB, ");
    EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "r.json"));
  }
  // The same limit holds 2 threads of 8 MiB, or 64 of 1 MiB (refused if "1m" were read as anything else).
  for (const auto& [threads, stack] : {std::pair{"OMP_NUM_THREADS=2", "OMP_STACKSIZE=8M"},
                                       std::pair{"OMP_NUM_THREADS=64", "OMP_STACKSIZE=1m"}}) {
    const CliResult r = run({threads, stack});
    EXPECT_EQ(r.exit_code, 0) << threads << " " << stack << ": " << r.err;
  }
}

// A thread stack larger than memory and swap, which Linux's default overcommit refuses to map: libgomp ended the
// process with its own two lines, exit 1.
TEST(CliBinary, AThreadStackBeyondMemoryIsRefused) {
  TempDir dir;
  const std::vector<std::string> args = baseline_run(20, dir / "r.json");
  CliResult r = run_suite_with_env(args, {"OMP_NUM_THREADS=2", "OMP_STACKSIZE=100000G"});
  std::ifstream mode("/proc/sys/vm/overcommit_memory");
  int m = -1;
  if (!(mode >> m) || m != 0) GTEST_SKIP() << "Linux does not overcommit heuristically here";
  EXPECT_EQ(r.exit_code, 2) << r.err;
  expect_one_error_line(r.err, "a thread stack of 102400000 MiB (OMP_STACKSIZE or GOMP_STACKSIZE) is more than");
  // One MiB more than memory and swap together is refused as well.
  std::ifstream info("/proc/meminfo");
  std::string key, unit;
  std::size_t kib = 0, total_kib = 0;
  while (info >> key >> kib >> unit)
    if (key == "MemTotal:" || key == "SwapTotal:") total_kib += kib;
  const std::string stack = std::to_string(total_kib / 1024 + 1) + "M";
  r = run_suite_with_env(args, {"OMP_NUM_THREADS=2", "OMP_STACKSIZE=" + stack});
  EXPECT_EQ(r.exit_code, 2) << stack << ": " << r.err;
  expect_one_error_line(r.err, " MiB (OMP_STACKSIZE or GOMP_STACKSIZE) is more than this machine's memory and swap (");
}

// OMP_STACKSIZE as libgomp reads it: kilobytes unless a unit says otherwise.
TEST(ThreadStacks, SizesAreReadAsLibgompReadsThem) {
  EXPECT_EQ(parse_openmp_stacksize("8M"), std::optional<std::size_t>(8u << 20));
  EXPECT_EQ(parse_openmp_stacksize(" 512 "), std::optional<std::size_t>(512u << 10));
  EXPECT_EQ(parse_openmp_stacksize("2 g "), std::optional<std::size_t>(std::size_t(2) << 30));
  EXPECT_EQ(parse_openmp_stacksize("65536b"), std::optional<std::size_t>(65536));
  EXPECT_EQ(parse_openmp_stacksize("16k"), std::optional<std::size_t>(16u << 10));
  for (const char* bad : {"", " ", "8MB", "abc", "8X", "-1", "99999999999999999999"})
    EXPECT_EQ(parse_openmp_stacksize(bad), std::nullopt) << bad;
  // Out of range for strtoul: refused in bytes too, where no shift would overflow.
  EXPECT_EQ(parse_openmp_stacksize("99999999999999999999b"), std::nullopt);
}

// The count the refusal suggests is the count that fits: that many threads run under the same limit, and one
// more is refused in its turn (a count one too large ended in libgomp's abort, one too small wasted a thread).
TEST(CliBinary, TheSuggestedThreadCountRunsAndOneMoreIsRefused) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space";
#endif
  TempDir dir;
  const auto run = [&](std::size_t threads) {
    return run_in_small_address_space(dir / "r.json", {"OMP_STACKSIZE=8M"}, {"--threads", std::to_string(threads)});
  };
  const CliResult refused = run(128);
  ASSERT_EQ(refused.exit_code, 2) << refused.err;
  const std::string before = "; use --threads ", after = " or fewer, a smaller OMP_STACKSIZE, or a higher ulimit -v\n";
  const std::size_t from = refused.err.find(before) + before.size(), to = refused.err.find(after);
  ASSERT_TRUE(from >= before.size() && to != std::string::npos && to > from) << refused.err;
  EXPECT_EQ(to + after.size(), refused.err.size()) << refused.err;
  const std::size_t fit = std::stoul(refused.err.substr(from, to - from));
  ASSERT_GE(fit, 2u) << refused.err;
  EXPECT_EQ(run(fit).exit_code, 0) << fit << " threads";
  const CliResult more = run(fit + 1);
  EXPECT_EQ(more.exit_code, 2) << more.err;
  EXPECT_NE(more.err.find("cannot hold " + std::to_string(fit + 1) + " threads' stacks of 8 MiB; use --threads " +
                          std::to_string(fit) + " or fewer"),
            std::string::npos)
      << more.err;
}

// The team that is checked is the team libgomp starts: --threads 1 is one thread whatever OMP_NUM_THREADS says,
// and OMP_THREAD_LIMIT caps --threads; neither run needs room for a second stack.
TEST(CliBinary, TheCheckedTeamIsTheThreadsAskedForUpToTheThreadLimit) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space";
#endif
  TempDir dir;
  CliResult r = run_in_small_address_space(dir / "r.json", {"OMP_NUM_THREADS=128", "OMP_STACKSIZE=64M"},
                                           {"--threads", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run_in_small_address_space(dir / "r.json", {"OMP_THREAD_LIMIT=1", "OMP_STACKSIZE=64M"}, {"--threads", "128"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run_in_small_address_space(dir / "r.json", {"OMP_STACKSIZE=64M"}, {"--threads", "128"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

// Without OMP_STACKSIZE and GOMP_STACKSIZE libgomp's threads get glibc's default stack, which follows
// RLIMIT_STACK (`ulimit -s`): the check counts that size, not a fixed 8 MiB.
TEST(CliBinary, WithoutAStackSizeTheThreadsGetTheStackLimitsSize) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space";
#endif
  TempDir dir;
  Launch how = within_small_address_space();
  how.env = {"OMP_NUM_THREADS=128", "OMP_STACKSIZE", "GOMP_STACKSIZE"};
  how.stack_limit = 24L << 20;
  const CliResult r = run_suite(baseline_run(20, dir / "r.json"), how);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  expect_one_error_line(r.err, "cannot hold 128 threads' stacks of 24 MiB; ");
}

// GOMP_STACKSIZE counts only where OMP_STACKSIZE is absent or invalid, as libgomp reads them; a size below
// glibc's minimum is refused by pthread_attr_setstacksize, so the default stays.
TEST(ThreadStacks, TheStackSizeIsTheOneLibgompChooses) {
  const WithoutEnvironment none({"OMP_STACKSIZE", "GOMP_STACKSIZE"});
  const std::size_t glibc_default = openmp_thread_stack_size();
  ::setenv("GOMP_STACKSIZE", "3M", 1);
  EXPECT_EQ(openmp_thread_stack_size(), 3 * kMiB);
  ::setenv("OMP_STACKSIZE", "5M", 1);
  EXPECT_EQ(openmp_thread_stack_size(), 5 * kMiB);
  ::setenv("OMP_STACKSIZE", "5X", 1);
  EXPECT_EQ(openmp_thread_stack_size(), 3 * kMiB);
  ::unsetenv("GOMP_STACKSIZE");
  ::setenv("OMP_STACKSIZE", "1k", 1);
  EXPECT_EQ(openmp_thread_stack_size(), glibc_default);
  ::setenv("OMP_STACKSIZE", "64k", 1);
  EXPECT_EQ(openmp_thread_stack_size(), 64 * 1024u);
}

// The arithmetic of the address-space check: whole pages and a guard page per stack, a margin of 4 MiB for the
// run's first allocations, and the first thread on the process's own stack.
TEST(ThreadStacks, ThreadsThatFitCountPagesGuardsTheMarginAndTheFirstThread) {
  const std::size_t page = 4096;
  // 256 MiB less 100 mapped and the margin: 152 MiB, which holds 18 stacks of 8 MiB and a page (19 without
  // the guard pages, or without the margin).
  EXPECT_EQ(threads_that_fit(256 * kMiB, 100 * kMiB, 8 * kMiB, page), 19u);
  // A stack of one byte maps a page and its guard page.
  EXPECT_EQ(threads_that_fit(256 * kMiB, 100 * kMiB, 1, page), 1 + 152 * kMiB / (2 * page));
  // No room, or more mapped than the limit: the first thread only.
  EXPECT_EQ(threads_that_fit(256 * kMiB, 253 * kMiB, 8 * kMiB, page), 1u);
  EXPECT_EQ(threads_that_fit(256 * kMiB, 300 * kMiB, 8 * kMiB, page), 1u);
  // The largest size (OMP_STACKSIZE=-1B wraps to it) is all of the limit, not what its rounding wraps to.
  EXPECT_EQ(threads_that_fit(256 * kMiB, 100 * kMiB, SIZE_MAX, page), 1u);
}

// What the check compares with the limit is VmSize, what the kernel compares with it.
TEST(ThreadStacks, TheAddressSpaceInUseIsVmSize) {
  std::ifstream status("/proc/self/status");
  std::string line;
  std::size_t vm_kib = 0;
  while (std::getline(status, line))
    if (line.rfind("VmSize:", 0) == 0) vm_kib = std::stoul(line.substr(7));
  const std::size_t in_use = address_space_in_use();
  ASSERT_GT(vm_kib, 0u) << "no VmSize in /proc/self/status";
  EXPECT_NEAR(double(in_use), double(vm_kib) * 1024, double(4 * kMiB));
}

TEST(ThreadStacks, SizesAreWrittenInWholeUnits) {
  EXPECT_EQ(size_text(8 * kMiB), "8 MiB");
  EXPECT_EQ(size_text(1536 * 1024), "1536 KiB");
  EXPECT_EQ(size_text(1000), "1000 bytes");
  EXPECT_EQ(size_text(63 * kMiB + 1024), "64513 KiB");
  EXPECT_EQ(size_text(64 * kMiB + 1), "64 MiB");  // from 64 MiB on in MiB, rounded down
}

}  // namespace
}  // namespace cnn::test
