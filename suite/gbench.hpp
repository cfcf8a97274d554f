// `suite --format gbench`: the report in Google Benchmark's JSON layout, so that tools written for
// Google Benchmark read it unchanged: its tools/compare.py, github-action-benchmark (tool 'googlecpp')
// and Bencher (adapter 'cpp_google').
//
// One benchmark entry per run (backend:variant at one image count), named
// `backend:variant/images:N`, run_type "iteration", repetitions 1:
//   iterations  the number of timed forward passes (the report's forward_ms.samples)
//   real_time   their MEDIAN in milliseconds (time_unit "ms"); Google Benchmark's own real_time is a
//               mean, but the suite's headline number is the median, and one entry per run keeps the
//               names unique, which github-action-benchmark and Bencher need (they key on the name)
//   cpu_time    equal to real_time: the suite measures wall (or device) time only
//   label       the run's device
//   counters    images_per_s, gflop_per_s, accuracy, validation_passed (1/0), max_abs_prob_diff,
//               forward_min_ms, forward_max_ms, images, batch and each phase as <phase>_ms
// The context holds what Google Benchmark's own context holds (machine facts read here, now) plus,
// as its custom-context strings do, the report's suite_version, git_commit, cpu_model and gpu_name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/report.hpp"

namespace cnn {

struct GbenchCache {
  std::string type;  // "Data", "Instruction", "Unified"
  std::int64_t level = 0, size = 0, num_sharing = 0;
};

// The machine facts of Google Benchmark's context block.
struct GbenchMachine {
  std::string date;  // local time, ISO 8601 with offset, e.g. 2026-11-22T11:43:58+00:00
  std::string host_name, executable;
  std::int64_t num_cpus = 1, mhz_per_cpu = 0;
  bool cpu_scaling_enabled = false;
  std::vector<GbenchCache> caches;
  std::vector<double> load_avg;
  std::string library_build_type;  // "release" or "debug"
};

// Reads them from this machine (/sys, /proc) and this process.
GbenchMachine this_machine();

// The runs of a report in Google Benchmark's layout, keys in its order (built from the run records
// themselves, not from the report's JSON).
nlohmann::ordered_json to_gbench(const std::vector<RunRecord>& runs, const GbenchMachine& machine);

}  // namespace cnn
