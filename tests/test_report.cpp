// The numbers a report derives from a run's record (suite/report.cpp): what the report tools, the portability
// verdict and the regression gate read, so each formula is checked with values whose answer is known.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/network_spec.hpp"
#include "suite/report.hpp"
#include "tests/test_support.hpp"

namespace cnn {
namespace {

// The report's forward time and each rank's: the middle sample, the mean of the two middle ones for an even count.
TEST(Report, MedianIsTheMiddleSampleInAnyOrder) {
  EXPECT_EQ(median({}), 0.0);
  EXPECT_EQ(median({3.0}), 3.0);
  EXPECT_EQ(median({9.0, 1.0, 5.0}), 5.0);
  EXPECT_EQ(median({8.0, 2.0, 4.0, 100.0}), 6.0);
}

TEST(Report, TimesAndRatesComeFromTheMedianSample) {
  const auto j = run_to_json(test::a_timed_run());
  EXPECT_EQ(j["forward_ms"]["min"], 10.0);
  EXPECT_EQ(j["forward_ms"]["median"], 20.0);
  EXPECT_EQ(j["forward_ms"]["max"], 40.0);
  EXPECT_DOUBLE_EQ(j["images_per_s"].get<double>(), 50000.0);
  EXPECT_DOUBLE_EQ(j["gflop_per_s"].get<double>(), 50000.0 * kFlopsPerImage / 1e9);
}

// The useful rate counts the direct convolution's FLOP; the executed one what the variant runs, on every unit.
TEST(Report, ExecutedFlopAddsEveryUnitsPart) {
  RunRecord r = test::a_timed_run();
  const auto direct = run_to_json(r)["arithmetic"];
  EXPECT_EQ(direct["unit"], "fp32_fma");
  EXPECT_DOUBLE_EQ(direct["executed_flop_per_image"].get<double>(), kFlopsPerImage);

  r.arithmetic = {"fp16_tensor", 3e6, {{"fp32_fma", 1e6}}};
  const auto j = run_to_json(r);
  const auto& a = j["arithmetic"];
  EXPECT_EQ(a["unit"], "fp16_tensor");
  EXPECT_DOUBLE_EQ(a["executed_flop_per_image"].get<double>(), 4e6);
  EXPECT_DOUBLE_EQ(a["executed_gflop_per_s"].get<double>(), 50000.0 * 4e6 / 1e9);
  ASSERT_EQ(a["parts"].size(), 2u);
  EXPECT_EQ(a["parts"][0]["unit"], "fp16_tensor");
  EXPECT_DOUBLE_EQ(a["parts"][0]["executed_flop_per_image"].get<double>(), 3e6);
  EXPECT_EQ(a["parts"][1]["unit"], "fp32_fma");
  EXPECT_DOUBLE_EQ(a["parts"][1]["executed_flop_per_image"].get<double>(), 1e6);
  EXPECT_DOUBLE_EQ(j["gflop_per_s"].get<double>(), 50000.0 * kFlopsPerImage / 1e9);  // useful FLOP unchanged
}

TEST(Report, EnergyIsTheMedianWindowAndItsJoulesPerPass) {
  RunRecord r = test::a_timed_run();
  r.energy_images_per_j = {400.0, 100.0, 250.0};
  r.energy_source = "rapl";
  const auto e = run_to_json(r)["energy"];
  EXPECT_EQ(e["images_per_j"], 250.0);
  EXPECT_EQ(e["images_per_j_min"], 100.0);
  EXPECT_EQ(e["images_per_j_max"], 400.0);
  EXPECT_DOUBLE_EQ(e["joules_per_pass"].get<double>(), 1000.0 / 250.0);
}

// meta.threads is what ran: the most any run used, whatever their order.
TEST(Report, MetaThreadsIsTheMostAnyRunUsedAndTheFirstGpuFactsStay) {
  RunRecord one = test::a_timed_run(), many = one, gpu = one, other_gpu = one;
  one.threads = 1;
  many.threads = 8;
  gpu.device_info = {{"gpu_name", "first"}, {"driver_version", "1"}, {"host_only", "x"}};
  other_gpu.device_info = {{"gpu_name", "second"}};
  const auto m = make_report(ReportMeta{}, {many, one, gpu, other_gpu})["meta"];
  EXPECT_EQ(m["threads"], 8);
  EXPECT_EQ(m["gpu"]["gpu_name"], "first");
  EXPECT_EQ(m["gpu"]["driver_version"], "1");
  EXPECT_FALSE(m["gpu"].contains("host_only"));
}

}  // namespace
}  // namespace cnn
