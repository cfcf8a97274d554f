// `suite --format gbench` must read, to every tool written for Google Benchmark, like Google Benchmark's
// own JSON. The reference is the library itself: a trivial benchmark goes through benchmark::JSONReporter
// and every key it writes, in the context, in each cache entry and in each benchmark entry, must be in
// ours with the same JSON type. Then the fields that compare.py, github-action-benchmark and Bencher
// read are checked for their values.
#include <gtest/gtest.h>

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "suite/gbench.hpp"
#include "suite/report.hpp"
#include "tests/test_support.hpp"

namespace cnn::test {
namespace {
using nlohmann::json;

void BM_Trivial(benchmark::State& state) {
  int x = 0;
  for (auto _ : state) benchmark::DoNotOptimize(x += 1);
  state.counters["images_per_s"] = 1.0;  // one of our counters, so its type (double) is checked too
}
BENCHMARK(BM_Trivial)->Iterations(10);

// Google Benchmark's JSON for BM_Trivial, written by the library's own reporter.
json library_json() {
  static const json result = [] {
    char arg0[] = "test_gbench";
    char filter[] = "--benchmark_filter=BM_Trivial";
    char* argv[] = {arg0, filter, nullptr};
    int argc = 2;
    benchmark::Initialize(&argc, argv);
    std::ostringstream out, err;
    benchmark::JSONReporter reporter;
    reporter.SetOutputStream(&out);
    reporter.SetErrorStream(&err);
    benchmark::RunSpecifiedBenchmarks(&reporter);
    return json::parse(out.str());
  }();
  return result;
}

// JSON types, with integers of either sign as one type (the parser reads 3 as unsigned, -3 as signed).
std::string type_of(const json& j) {
  if (j.is_number_integer()) return "integer";
  return j.type_name();
}

// Every key of `theirs` is in `ours` with the same type.
void expect_same_keys(const json& theirs, const json& ours, const std::string& where) {
  ASSERT_TRUE(ours.is_object()) << where;
  for (const auto& [key, value] : theirs.items()) {
    ASSERT_TRUE(ours.contains(key)) << where << " lacks \"" << key << "\"";
    if (key == "load_avg") {  // written with operator<<: 1 or 0.5, so integer or float
      EXPECT_TRUE(ours[key].is_array()) << where << "." << key;
      continue;
    }
    EXPECT_EQ(type_of(ours[key]), type_of(value)) << where << "." << key << ": ours " << ours[key].dump()
                                                  << ", Google Benchmark's " << value.dump();
  }
}

std::vector<RunRecord> sample_runs() {
  RunRecord a;
  a.backend = "cpu";
  a.variant = "naive";
  a.device = "CPU, 1 thread";
  a.images = 50;
  a.distinct_images = 50;
  a.batch = 1;
  a.phases_ms = {{"load", 50.0}, {"setup", 0.1}, {"forward", 200.0}, {"total", 200.1}};
  a.forward_samples_ms = {210.0, 200.0, 190.0};
  a.accuracy = 0.8;
  a.validation.compared = 50;
  a.validation.passed = true;
  RunRecord b = a;
  b.images = 200;
  b.forward_samples_ms = {800.0, 790.0};
  RunRecord c = a;
  c.backend = "gpu";
  c.variant = "fast";
  c.validation.passed = false;
  return {a, b, c};
}

TEST(Gbench, ContextHasEveryKeyOfGoogleBenchmarksOwnWithTheSameType) {
  const json theirs = library_json();
  const json ours = to_gbench(sample_runs(), this_machine());
  ASSERT_TRUE(theirs.contains("context"));
  expect_same_keys(theirs["context"], ours["context"], "context");
  // Caches: same keys in each entry (this machine may list none; then there is nothing to compare).
  if (!theirs["context"]["caches"].empty() && !ours["context"]["caches"].empty())
    expect_same_keys(theirs["context"]["caches"][0], ours["context"]["caches"][0], "context.caches[0]");
  EXPECT_EQ(ours["context"]["caches"].size(), theirs["context"]["caches"].size());
}

TEST(Gbench, EachBenchmarkHasEveryKeyOfGoogleBenchmarksOwnWithTheSameType) {
  const json theirs = library_json();
  const json ours = to_gbench(sample_runs(), this_machine());
  ASSERT_EQ(theirs["benchmarks"].size(), 1u);
  const json& reference = theirs["benchmarks"][0];
  ASSERT_EQ(reference["run_type"], "iteration");
  ASSERT_EQ(ours["benchmarks"].size(), 3u);
  for (const json& b : ours["benchmarks"]) expect_same_keys(reference, b, b.value("name", "?"));
}

TEST(Gbench, NamesValuesAndIndicesAreWhatTheToolsRead) {
  const json ours = to_gbench(sample_runs(), this_machine());
  const json& bs = ours["benchmarks"];
  EXPECT_EQ(bs[0]["name"], "cpu:naive/images:50");
  EXPECT_EQ(bs[1]["name"], "cpu:naive/images:200");
  EXPECT_EQ(bs[2]["name"], "gpu:fast/images:50");
  EXPECT_EQ(bs[0]["run_name"], bs[0]["name"]);
  // family: backend:variant; instance: image count within it (compare.py sorts by these)
  EXPECT_EQ(bs[0]["family_index"], 0);
  EXPECT_EQ(bs[1]["family_index"], 0);
  EXPECT_EQ(bs[2]["family_index"], 1);
  EXPECT_EQ(bs[0]["per_family_instance_index"], 0);
  EXPECT_EQ(bs[1]["per_family_instance_index"], 1);
  EXPECT_EQ(bs[2]["per_family_instance_index"], 0);
  // real_time: the median of the samples, in ms; iterations: the number of samples
  EXPECT_EQ(bs[0]["time_unit"], "ms");
  EXPECT_DOUBLE_EQ(bs[0]["real_time"].get<double>(), 200.0);
  EXPECT_DOUBLE_EQ(bs[0]["cpu_time"].get<double>(), 200.0);
  EXPECT_EQ(bs[0]["iterations"], 3);
  EXPECT_DOUBLE_EQ(bs[1]["real_time"].get<double>(), 795.0);
  EXPECT_DOUBLE_EQ(bs[0]["images_per_s"].get<double>(), 250.0);
  EXPECT_DOUBLE_EQ(bs[0]["validation_passed"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(bs[2]["validation_passed"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(bs[0]["forward_ms"].get<double>(), 200.0);
  EXPECT_EQ(bs[0]["label"], "CPU, 1 thread");
  // Names are unique: github-action-benchmark and Bencher key their series on them.
  EXPECT_NE(bs[0]["name"], bs[1]["name"]);
  // Bencher's cpp_google adapter requires context.caches to be an array.
  EXPECT_TRUE(ours["context"]["caches"].is_array());
}

// The fastest and slowest pass, a difference that is no number (JSON has no Infinity: -1), the GPU's name.
TEST(Gbench, ExtremesAnInfiniteDifferenceAndTheGpuAreWhatTheRunsSay) {
  std::vector<RunRecord> runs = sample_runs();
  runs[1].validation.max_abs_prob_diff = 2e-6;
  runs[2].validation.max_abs_prob_diff = std::numeric_limits<double>::infinity();
  json ours = to_gbench(runs, GbenchMachine{});
  const json& bs = ours["benchmarks"];
  EXPECT_DOUBLE_EQ(bs[0]["forward_min_ms"].get<double>(), 190.0);
  EXPECT_DOUBLE_EQ(bs[0]["forward_max_ms"].get<double>(), 210.0);
  EXPECT_DOUBLE_EQ(bs[1]["max_abs_prob_diff"].get<double>(), 2e-6);
  EXPECT_DOUBLE_EQ(bs[2]["max_abs_prob_diff"].get<double>(), -1.0);
  EXPECT_FALSE(ours["context"].contains("gpu_name"));
  runs[2].device_info = {{"gpu_compute_capability", "9.0"}, {"gpu_name", "NVIDIA H200"}};
  ours = to_gbench(runs, GbenchMachine{});
  EXPECT_EQ(ours["context"]["gpu_name"], "NVIDIA H200");
}

// The context as Google Benchmark fills it on this machine: the time zone's offset with its sign, frequency
// scaling only where a governor other than "performance" is set, cache sizes in bytes.
TEST(Gbench, TheMachineIsReadAsGoogleBenchmarkReadsIt) {
  GbenchMachine m;
  {
    const WithoutEnvironment saved({"TZ"});
    ::setenv("TZ", "UTC+5", 1);  // POSIX: five hours west of UTC
    ::tzset();
    m = this_machine();
  }
  ::tzset();
  EXPECT_EQ(m.date.substr(m.date.size() - 6), "-05:00") << m.date;
  std::ifstream governor_file("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  std::string governor;
  std::getline(governor_file, governor);
  EXPECT_EQ(m.cpu_scaling_enabled, !governor.empty() && governor != "performance") << governor;
  for (std::size_t i = 0; i < m.caches.size(); ++i) {
    std::ifstream size_file("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
    std::string size;  // "48K", "2048K", "32M"
    std::getline(size_file, size);
    const std::int64_t unit = size.back() == 'K' ? 1024 : size.back() == 'M' ? 1024 * 1024 : 1;
    EXPECT_EQ(m.caches[i].size, std::stoll(size) * unit) << size;
  }
}

TEST(Gbench, SuiteBinaryPrintsItOnStdout) {
  TempDir dir;
  const CliResult r = run_suite({"--backend", kBaseline, "--images", "3", "--repeat", "1", "--warmup", "0",
                                 "--format", "gbench", "--output", (dir / "r.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  ASSERT_EQ(out["benchmarks"].size(), 1u);
  EXPECT_EQ(out["benchmarks"][0]["name"], kBaseline + "/images:3");
  EXPECT_EQ(out["benchmarks"][0]["iterations"], 1);
  expect_same_keys(library_json()["context"], out["context"], "suite's context");
}

}  // namespace
}  // namespace cnn::test
