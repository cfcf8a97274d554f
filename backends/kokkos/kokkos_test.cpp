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

}  // namespace
}  // namespace cnn::test
