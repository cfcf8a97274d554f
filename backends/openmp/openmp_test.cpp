// The OpenMP backend's own behaviour, beyond the every-variant test (tests/test_backends.cpp): the flags,
// threads and batch its runs record.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"

namespace cnn::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The report records the flags each backend folder was compiled with (tests/test_cli.cpp): here -fopenmp.
TEST(OpenMp, TheReportRecordsItsOpenMpFlag) {
  TempDir dir;
  const CliResult r = run_suite(baseline_run(2, dir / "r.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json flags = read_json(dir / "r.json")["meta"]["compiler"]["backend_flags"];
  ASSERT_TRUE(flags.contains("openmp")) << flags.dump();
  EXPECT_NE(flags["openmp"].get<std::string>().find("-fopenmp"), std::string::npos) << flags["openmp"];
}

// The report's batch is the images per kernel launch or parallel loop that ran, the same whether stderr is
// a terminal (progress shown) or not: openmp:image_parallel and openmp:winograd capped it at 4096 only for
// a terminal, so one command ran other loops and reported another batch interactively than in CI.
TEST(OpenMp, TheBatchIsWhatRanWithOrWithoutATerminal) {
  TempDir dir;
  std::string records;  // 50 distinct images, cycled: the FP64 reference of 4100 would take most of the time
  for (std::size_t i = 0; i < 50; ++i) {
    records.push_back(char(training_images().labels[i]));
    records.append(reinterpret_cast<const char*>(training_images().image(i)), kImageBytes);
  }
  write_bytes(dir / "fifty.bin", records);
  std::map<std::string, std::map<std::string, json>> batches;  // variant -> "terminal" / "file" -> batch
  for (const std::string stderr_is : {"terminal", "file"}) {
    const fs::path report = dir / (stderr_is + ".json");
    Launch how;
    how.stderr_on_terminal = stderr_is == "terminal";
    how.stdout_path = "/dev/null";
    const CliResult r = run_suite({"--backend", "openmp:image_parallel,openmp:winograd", "--images", "4100", "--repeat",
                                   "1", "--warmup", "0", "--data", (dir / "fifty.bin").string(), "--output", report.string()},
                                  how);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    if (how.stderr_on_terminal) {
      EXPECT_NE(r.err.find("openmp:winograd: 4100 / 4100 images"), std::string::npos) << r.err;
    }
    const json j = read_json(report);
    for (const auto& run : j["runs"])
      batches[run["backend"].get<std::string>() + ":" + run["variant"].get<std::string>()][stderr_is] = run["batch"];
  }
  ASSERT_EQ(batches.size(), 2u);
  for (auto& [variant, b] : batches) {
    EXPECT_EQ(b["terminal"], b["file"]) << variant;
    EXPECT_EQ(b["file"], 4100) << variant << ": every image in one parallel loop";
  }
}

// The report records the threads that ran: OMP_THREAD_LIMIT wins over --threads.
TEST(OpenMp, TheReportRecordsTheThreadsThatRan) {
  TempDir dir;
  const CliResult r = run_suite_with_env({"--backend", "openmp," + kBaseline, "--images", "3", "--repeat", "1",
                                          "--warmup", "0", "--threads", "8", "--quiet", "--output",
                                          (dir / "r.json").string()},
                                         {"OMP_THREAD_LIMIT=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = read_json(dir / "r.json");
  for (const auto& run : j["runs"]) EXPECT_EQ(run["threads"], 1) << run["backend"] << ":" << run["variant"];
  EXPECT_EQ(j["meta"]["threads"], 1) << "the most any run used";
  EXPECT_EQ(j["meta"]["threads_requested"], 8);
}

}  // namespace
}  // namespace cnn::test
