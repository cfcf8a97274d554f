// The kokkos backend's own behaviour, beyond the every-variant test (tests/test_backends.cpp).
#include <gtest/gtest.h>

#include <string>

#include "tests/test_support.hpp"

namespace cnn::test {
namespace {

namespace fs = std::filesystem;

// A KOKKOS_NUM_THREADS that is not a number is refused before any run, in one line that names it.
TEST(Kokkos, ABadEnvironmentIsRefusedBeforeAnyRun) {
  TempDir dir;
  CliResult r = run_suite_with_env({"--backend", kBaseline + ",kokkos", "--images", "3", "--quiet", "--output",
                                    (dir / "r.json").string()},
                                   {"KOKKOS_NUM_THREADS=abc"});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.err, "suite: error: --backend 'kokkos': cannot run here: KOKKOS_NUM_THREADS='abc' is not a "
                   "non-negative integer\n");
  EXPECT_FALSE(fs::exists(dir / "r.json")) << "refused before the baseline ran";
  r = run_suite_with_env({"--backend", "all", "--images", "3", "--output", (dir / "r.json").string()},
                         {"KOKKOS_NUM_THREADS=abc"});
  EXPECT_NE(r.err.find("suite: note: skipping kokkos: KOKKOS_NUM_THREADS='abc'"), std::string::npos) << r.err;
}

// More threads than Kokkos::OpenMP keeps data for crashed the process (SIGSEGV, heap corruption), and a
// KOKKOS_NUM_THREADS other than the run's thread count stopped it with Kokkos' several lines, exit 1.
TEST(Kokkos, ThreadCountsKokkosCannotTakeAreOneLine) {
  TempDir dir;
  const std::vector<std::string> args{"--backend", "kokkos:naive", "--images", "3", "--repeat", "1", "--warmup", "0",
                                      "--quiet", "--output", (dir / "r.json").string()};
  std::vector<std::string> two = args;
  two.insert(two.end(), {"--threads", "2"});
  CliResult r = run_suite_with_env(two, {"KOKKOS_NUM_THREADS=3"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "suite: error: KOKKOS_NUM_THREADS=3 differs from this run's 2 threads (--threads, OMP_NUM_THREADS "
                   "or every logical core), which Kokkos refuses: unset it\n");
  r = run_suite_with_env(two, {"KOKKOS_NUM_THREADS=2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run_suite_with_env(args, {"OMP_NUM_THREADS=3"});  // more threads than this machine's cores: no warning
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::vector<std::string> many = args;
  many.insert(many.end(), {"--threads", "513"});
  r = run_suite(many);
  if (r.err.find("Kokkos::OpenMP") == std::string::npos && r.exit_code == 0) GTEST_SKIP() << "not the OpenMP space";
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "suite: error: 513 threads: Kokkos::OpenMP runs at most 512 (--threads, OMP_NUM_THREADS or "
                   "KOKKOS_NUM_THREADS)\n");
  r = run_suite_with_env(args, {"OMP_NUM_THREADS=600"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

}  // namespace
}  // namespace cnn::test
