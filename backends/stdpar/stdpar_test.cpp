// The stdpar backend's own behaviour, beyond the every-variant test (tests/test_backends.cpp): its thread
// pool beside bound OpenMP, and the batch its runs record.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"

namespace cnn::test {
namespace {

using nlohmann::json;

// Bound OpenMP (the suite binds it: suite/main.cpp) must not shrink the TBB pool: libgomp binds the thread that starts it to
// one core and TBB's workers inherit that mask. On the 16-core Xeon stdpar ran on one core, 12x slower.
TEST(Stdpar, KeepsEveryCoreUnderBoundOpenMp) {
  if (!backend_built("openmp")) GTEST_SKIP() << "openmp not built";
  const int cores = int(std::thread::hardware_concurrency());
  if (cores < 2) GTEST_SKIP() << "one core: nothing to lose";
  TempDir dir;
  Launch bound;
  bound.env = {"OMP_PROC_BIND=spread", "OMP_PLACES=threads"};
  ASSERT_EQ(run_suite({"--backend", "openmp:winograd,stdpar:image_blocks", "--images", "16", "--quiet",
                       "--output", (dir / "r.json").string()}, bound).exit_code, 0);
  const json r = read_json(dir / "r.json");
  ASSERT_EQ(r["meta"]["openmp_proc_bind"], "spread");
  EXPECT_EQ(r["runs"][1]["threads"].get<int>(), cores);
  EXPECT_NE(r["runs"][1]["device"].get<std::string>().find(std::to_string(cores) + " cores"), std::string::npos);
}

// --batch is honoured where a variant has parallel loops (serial's test: one that ignores it reports what ran).
TEST(Stdpar, TheReportedBatchIsTheImagesPerLoopThatRan) {
  TempDir dir;
  const CliResult r = run_suite({"--backend", "stdpar", "--images", "40", "--batch", "8", "--repeat", "1", "--warmup",
                                 "0", "--quiet", "--output", (dir / "r.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, json> batch;
  const json report = read_json(dir / "r.json");
  for (const auto& run : report["runs"])
    batch[run["backend"].get<std::string>() + ":" + run["variant"].get<std::string>()] = run["batch"];
  EXPECT_EQ(batch["stdpar:layers"], 8);
  EXPECT_EQ(batch["stdpar:image_blocks"], 8);
}

}  // namespace
}  // namespace cnn::test
