// The run record and the JSON report (schema in README.md, "The report"). Scripts and CI charts read it:
// bump kSchemaVersion on any incompatible change.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/backend.hpp"
#include "suite/system_info.hpp"
#include "suite/validation.hpp"

namespace cnn {

inline constexpr int kSchemaVersion = 1;

struct RunRecord {
  std::string backend, variant, device;
  Arithmetic arithmetic;  // the variant's: the unit it runs on, the FLOP it executes
  std::size_t images = 0, distinct_images = 0, batch = 0;
  int threads = 1;
  std::vector<std::pair<std::string, double>> phases_ms;  // load, setup, h2d, forward, d2h, total, ...
  LayerTimes layers_ms;                                   // mean over the timed repeats
  std::vector<double> forward_samples_ms;
  double accuracy = 0;
  Validation validation;
  std::vector<std::pair<std::string, std::string>> device_info;
  std::size_t peak_host_memory_bytes = 0, peak_device_memory_bytes = 0;
  MachineLoad load_start, load_end;  // how busy the machine was around the run
  // Images per joule of each energy window (`energy_passes` passes, about energy_window_ms of work), from
  // `energy_source`; empty, with energy_why_not saying why, where there is no counter or it did not move.
  std::vector<double> energy_images_per_j;
  std::size_t energy_passes = 0;
  double energy_window_ms = 0;
  std::string energy_source, energy_why_not;
  // Under MPI (suite/ranks.hpp): the ranks' own times and validations; null in a single process.
  nlohmann::ordered_json mpi;

  double forward_median_ms() const;
  double forward_min_ms() const;  // 0 without samples
  double forward_max_ms() const;
  double images_per_s() const;
  std::string device_fact(const std::string& key) const;  // device_info's value for key, "" where it has none
};

// The middle value (the mean of the two middle ones for an even count); 0 for none.
double median(std::vector<double> v);

struct ReportMeta {
  int threads_requested = 0;  // --threads (0: the default, all logical cores)
  std::string label;          // --label: the user's name for this machine (empty: none)
  std::vector<std::string> command_line;
  std::vector<std::string> data_sources;
  std::string weights;
  double reference_ms = 0;  // the FP64 reference over the distinct images
  nlohmann::ordered_json mpi;  // ranks, mode and binding under MPI; null in a single process
};

// ordered_json: keys keep the order written here (layers_ms in network order, not alphabetical).
nlohmann::ordered_json make_report(const ReportMeta& meta, const std::vector<RunRecord>& runs);
nlohmann::ordered_json run_to_json(const RunRecord& r);

}  // namespace cnn
