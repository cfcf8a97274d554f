// The text the suite prints: the per-run table, the summary and --format csv (suite/table.cpp), and --list
// (suite/backend_list.cpp). People read the tables at a glance, scripts parse the CSV and the list's JSON
// (scripts/backends picks the backends of every shell script by it), so each item is checked where it is shown.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "common/errors.hpp"
#include "common/variant_table.hpp"
#include "suite/backend_list.hpp"
#include "suite/table.hpp"
#include "tests/test_support.hpp"

namespace cnn {
namespace {

// 20 ms a pass for 1000 images: 50000 images/s, 392 GFLOP/s at the network's 7.84 MFLOP per image.
RunRecord a_run() {
  RunRecord r = test::a_timed_run();
  r.device = "CPU";
  r.distinct_images = 800;
  r.batch = 500;
  r.layers_ms = {{"conv1", 3.0}, {"relu1", 1.0}, {"pool1", 1.0}, {"conv2", 5.0}};  // shares of 10 ms
  r.phases_ms = {{"load", 1.5}, {"forward", 20.0}};
  r.accuracy = 0.7825;
  r.validation.max_abs_prob_diff = 9.4e-6;
  r.validation.tolerance = 1e-4;
  r.validation.near_ties = 1;
  r.validation.passed = true;
  return r;
}

RunRecord a_failed_run() {
  RunRecord r = a_run();
  r.backend = "other";
  r.threads = 1;
  r.validation.top1_mismatches = 2;
  r.validation.passed = false;
  return r;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Table, ARunsTableShowsEachLayersShareTheTotalsByKindAndTheRates) {
  const std::string t = format_run_table(a_run());
  EXPECT_TRUE(has(t, "== model:step  1000 images (800 distinct), batch 500, 2 threads, CPU\n")) << t;
  EXPECT_TRUE(has(t, "3.000   30.0%\n") && has(t, "1.000   10.0%\n") && has(t, "5.000   50.0%\n")) << t;
  EXPECT_TRUE(has(t, "totals:  conv 8.000  relu 1.000  pool 1.000  fc 0.000  softmax 0.000 ms\n")) << t;
  EXPECT_TRUE(has(t, "phases ms:  load 1.500  forward 20.000\n")) << t;
  EXPECT_TRUE(has(t, "forward 20.000 ms (median of 3), 50000 images/s, 392.00 GFLOP/s\n")) << t;
  EXPECT_TRUE(has(t, "accuracy 78.25 %   validation passed (max |p - p_fp64| 9.4e-06, tolerance 1e-04, "
                     "0 top-1 mismatches, 1 near ties)\n"))
      << t;
}

TEST(Table, AFailedOneThreadRunSaysSo) {
  const std::string t = format_run_table(a_failed_run());
  EXPECT_TRUE(has(t, ", 1 thread, CPU\n")) << t;
  EXPECT_TRUE(has(t, "validation FAILED (max |p - p_fp64| 9.4e-06, tolerance 1e-04, 2 top-1 mismatches")) << t;
}

TEST(Table, TheSummaryHasALinePerRunWithItsVerdict) {
  const std::string s = format_summary({a_run(), a_failed_run()});
  EXPECT_TRUE(has(s, "\nmodel:step                 1000       20.000        50000    392.00    78.25%  passed\n")) << s;
  EXPECT_TRUE(has(s, "\nother:step                 1000       20.000        50000    392.00    78.25%  FAILED\n")) << s;
}

TEST(Table, CsvIsOneHeaderAndALinePerRun) {
  EXPECT_EQ(format_csv({a_run(), a_failed_run()}),
            "backend,variant,images,distinct_images,batch,threads,forward_ms_median,images_per_s,gflop_per_s,accuracy,"
            "max_abs_prob_diff,top1_mismatches,validation_passed\n"
            "model,step,1000,800,500,2,20.000000,50000.000,392.0000,0.782500,9.400e-06,0,true\n"
            "other,step,1000,800,500,1,20.000000,50000.000,392.0000,0.782500,9.400e-06,2,false\n");
}

// A backend of two variants that runs here, one that does not, and one this build left out.
const std::vector<RegistryEntry>& a_registry() {
  static const std::vector<RegistryEntry> r = {
      {"here",
       [] {
         return std::make_unique<VariantTable>(
             "here", [] { return Availability{true, "", "CPU"}; },
             std::vector<VariantEntry>{{{"first", "the first step", true}, nullptr},
                                       {{"second_and_longer_than_the_header", "the next step", false}, nullptr}});
       },
       "", "cpu"},
      {"away",
       [] {
         return std::make_unique<VariantTable>(
             "away", [] { return Availability{false, "no device (test)", ""}; },
             std::vector<VariantEntry>{{{"only", "its one step", false}, nullptr}});
       },
       "", "gpu"},
      {"absent", nullptr, "not built: no toolchain (test)", "portable"}};
  return r;
}

TEST(BackendList, TheTableSaysPerVariantWhetherItIsBuiltAndRunsHere) {
  const std::string name_column(std::string("here:second_and_longer_than_the_header").size() + 1, ' ');
  const auto row = [&](const std::string& name) { return name + name_column.substr(name.size()); };
  EXPECT_EQ(backend_list(a_registry(), Format::table),
            row("backend:variant") + "built  runnable here\n" +
            row("here:first") + "yes    yes (CPU)\n       the first step\n" +
            row("here:second_and_longer_than_the_header") + "yes    yes (CPU)\n       the next step\n" +
            row("away:only") + "yes    no: no device (test)\n       its one step\n" +
            row("absent") + "no     no: not built: no toolchain (test)\n");
}

TEST(BackendList, TheJsonSaysTheSameForScripts) {
  const auto doc = nlohmann::json::parse(backend_list(a_registry(), Format::json));
  EXPECT_EQ(doc, nlohmann::json::parse(R"j({"backends": [
      {"name": "here", "kind": "cpu", "built": true, "runnable": true, "device": "CPU", "variants": [
        {"name": "first", "description": "the first step", "layerwise": true},
        {"name": "second_and_longer_than_the_header", "description": "the next step", "layerwise": false}]},
      {"name": "away", "kind": "gpu", "built": true, "runnable": false, "reason": "no device (test)", "variants": [
        {"name": "only", "description": "its one step", "layerwise": false}]},
      {"name": "absent", "kind": "portable", "built": false, "runnable": false,
       "reason": "not built: no toolchain (test)", "variants": []}]})j"));
  EXPECT_THROW(backend_list(a_registry(), Format::csv), UsageError);
}

}  // namespace
}  // namespace cnn
